//! What the test binaries share: the solver tests' settings and criteria, the
//! dynamics tests' golden files and random states, and parry3d as a collision oracle.
#![allow(dead_code)]

pub mod dynamics;
pub mod parry;
pub mod solvers;
