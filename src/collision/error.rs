//! Typed errors of the collision stage.

use std::path::PathBuf;

/// What can go wrong when building shapes or querying pairs.
#[derive(Debug, thiserror::Error)]
pub enum CollisionError {
    /// A shape parameter is negative or not finite.
    #[error("invalid shape parameter {field} = {value} (must be finite and >= 0)")]
    InvalidParameter {
        /// Name of the parameter (e.g. `radius`, `half_extents.y`).
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A halfspace normal is zero or not finite.
    #[error("invalid halfspace normal [{0}, {1}, {2}] (must be finite and non-zero)")]
    InvalidNormal(f64, f64, f64),
    /// A point cloud or mesh has no vertex.
    #[error("mesh {source_name} has no vertex")]
    EmptyMesh {
        /// File or description of the mesh.
        source_name: String,
    },
    /// A mesh vertex is not finite.
    #[error("mesh {source_name}: vertex {index} is not finite")]
    NonFiniteVertex {
        /// File or description of the mesh.
        source_name: String,
        /// Index of the vertex.
        index: usize,
    },
    /// A mesh's points span no volume (they are coplanar, collinear or a single point).
    #[error("mesh {source_name} is flat: its points span no volume")]
    FlatMesh {
        /// File or description of the mesh.
        source_name: String,
    },
    /// An algorithm cannot handle a shape (no projection, no conic description).
    #[error("{algorithm} does not handle a {core} shape")]
    UnsupportedShape {
        /// The algorithm (`NESMINO`, `the collision QP`).
        algorithm: &'static str,
        /// The shape's core (`cylinder`, `convex hull with an inflation radius`).
        core: &'static str,
    },
    /// The generic QP solver refused the collision QP or did not solve it.
    #[error("collision QP: {0}")]
    Qp(String),
    /// A mesh file could not be read or parsed.
    #[error("cannot read mesh file {path}: {source}")]
    MeshFile {
        /// The file.
        path: PathBuf,
        /// The underlying I/O or parse error.
        source: std::io::Error,
    },
    /// A pose contains NaN or infinite values.
    #[error("pose of {what} is not finite")]
    NonFinitePose {
        /// Which object (name or index).
        what: String,
    },
    /// The pair of shapes has no narrow phase (two halfspaces).
    #[error("unsupported pair: {0}")]
    UnsupportedPair(String),
    /// The poses given do not match the objects.
    #[error("expected {expected} object poses, got {got}")]
    PoseCount {
        /// Number of objects.
        expected: usize,
        /// Number of poses given.
        got: usize,
    },
    /// A filter names an object that does not exist.
    #[error("pair filter names object {index}, but the scene has {count} objects")]
    FilterIndex {
        /// The bad index.
        index: usize,
        /// Number of objects in the scene.
        count: usize,
    },
}
