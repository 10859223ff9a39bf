//! The robot models: the manifest's robots and built-in bodies, URDF/SRDF errors, a user's
//! own robots and manifests, and `contactbench model`.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod errors;
mod own_robot;
mod robots;
mod user_robots;
