//! The contact problem: cones and their projections, problem files (FCLIB, npz, JSON)
//! and the validation of bad input.

#[path = "../common/mod.rs"]
mod common;

mod cones;
mod files;
mod validation;
