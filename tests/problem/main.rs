//! The contact problem: cones and their projections, the Delassus operator against the
//! dense G, problem files (FCLIB, npz, JSON) and the validation of bad input.

#[path = "../common/mod.rs"]
mod common;

mod cones;
mod delassus;
mod files;
mod validation;
