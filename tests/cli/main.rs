//! The command line and its output: every command's flags and JSON, bad input, and the
//! discipline that never loses a user's files.

mod bad_input;
mod consistency;
mod guidance;
mod output_discipline;
mod output_fuzz;
mod robustness;
mod solve;
mod solve_derivatives;
mod support;
mod user_files;
mod view_run;
