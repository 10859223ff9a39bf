//! Collision geometry attached to the bodies of a model.

use std::path::PathBuf;

use nalgebra::{Isometry3, Vector3};

/// The shape of a collision geometry, in its own frame (centred, axis along z for
/// cylinders and capsules, as in URDF).
#[derive(Debug, Clone, PartialEq)]
pub enum GeometryShape {
    /// A box with the given half extents.
    Box {
        /// Half extents along x, y, z.
        half_extents: Vector3<f64>,
    },
    /// A sphere.
    Sphere {
        /// Radius.
        radius: f64,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Half of the length along z.
        half_length: f64,
    },
    /// A capsule along z (segment of the given half length, inflated by the radius).
    Capsule {
        /// Radius.
        radius: f64,
        /// Half of the segment's length along z.
        half_length: f64,
    },
    /// A mesh file (STL, or OBJ by its extension), resolved to a path on disk, with a
    /// scale per axis.
    Mesh {
        /// Absolute path of the mesh file.
        path: PathBuf,
        /// Scale applied to the vertices.
        scale: Vector3<f64>,
    },
}

/// A collision geometry fixed on a joint's body.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionGeometry {
    /// Name (URDF link name with an index, or a scenario's name).
    pub name: String,
    /// The link carrying it (the URDF link, or the geometry's name for one added by
    /// name); an SRDF's `<disable_collisions>` names links.
    pub link: String,
    /// Index of the joint whose body carries it (0 is the world).
    pub parent_joint: usize,
    /// Placement of the geometry in the joint's frame.
    pub placement: Isometry3<f64>,
    /// The shape.
    pub shape: GeometryShape,
}
