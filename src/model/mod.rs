//! The robot model: kinematic tree, inertias, frames and collision geometry, from URDF/SRDF
//! or built-in bodies. Immutable once loaded.

pub mod geometry;

pub use geometry::{CollisionGeometry, GeometryShape};
