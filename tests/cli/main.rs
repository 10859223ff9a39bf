//! The command line and its output: every command's flags and JSON, bad input, and the
//! discipline that never loses a user's files.

mod consistency;
mod output_discipline;
mod output_fuzz;
mod robustness;
mod solve;
mod user_files;
