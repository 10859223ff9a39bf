//! The robot model: kinematic tree, inertias, frames and collision geometry, from URDF/SRDF
//! or built-in bodies. Immutable once loaded (apart from attaching extra geometries).
//!
//! Conventions are Pinocchio's: joint 0 is the world ("universe"); every joint `i ≥ 1` has a
//! parent joint, a placement in its parent's frame, and the inertia of the body it moves
//! expressed in its own frame. A free-flyer joint has `q = [x y z qx qy qz qw]` (nq = 7) and
//! `v = [v_linear v_angular]` in the body frame (nv = 6); a continuous joint has
//! `q = [cos θ, sin θ]` (nq = 2, nv = 1); revolute and prismatic joints have nq = nv = 1.

pub mod bodies;
pub mod geometry;
pub mod inertia;
pub mod robots;
pub mod srdf;
pub mod text;
pub mod urdf;
pub mod user_robots;
mod xml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use nalgebra::{DVector, Isometry3, Unit, Vector3, Vector6};
use serde::Deserialize;
use thiserror::Error;

pub use bodies::FreeBodiesBuilder;
pub use geometry::{CollisionGeometry, GeometryShape};
pub use inertia::Inertia;
pub use text::{read_text, TextError};

/// Index of a frame in [`Model::frames`].
pub type FrameId = usize;

/// Standard gravity used by every model, world frame, m/s² (Pinocchio's default).
pub const GRAVITY: Vector3<f64> = Vector3::new(0.0, 0.0, -9.81);

/// Everything that can go wrong while building or querying a model. Each variant names the
/// file and the element at fault.
#[derive(Debug, Error)]
pub enum ModelError {
    /// A file could not be read, or is not UTF-8 text (with the byte position).
    #[error("{file}: {error}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What went wrong.
        error: TextError,
    },
    /// A URDF file is not valid XML or not a valid URDF document.
    #[error("{file}: malformed URDF: {message}")]
    MalformedUrdf {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A joint type that the model does not support (floating, planar, spherical...).
    #[error("{file}: joint '{joint}': unsupported joint type '{kind}' (supported: revolute, continuous, prismatic, fixed)")]
    UnsupportedJointType {
        /// The file.
        file: PathBuf,
        /// The joint.
        joint: String,
        /// Its type.
        kind: String,
    },
    /// A joint references a link that does not exist.
    #[error("{file}: joint '{joint}': unknown link '{link}'")]
    UnknownLink {
        /// The file.
        file: PathBuf,
        /// The joint.
        joint: String,
        /// The missing link.
        link: String,
    },
    /// The links do not form a tree (a loop, a link with two parents, no root, several roots).
    #[error("{file}: the links do not form a tree: {message}")]
    NotATree {
        /// The file.
        file: PathBuf,
        /// What is wrong, naming the links or joints.
        message: String,
    },
    /// A body's inertial parameters are not physical.
    #[error("{file}: link '{link}': invalid inertia: {message}")]
    InvalidInertia {
        /// The file (or the built-in body's model name).
        file: PathBuf,
        /// The link or body.
        link: String,
        /// What is wrong.
        message: String,
    },
    /// A joint's axis, a link's inertial fields or a geometry's size is not usable.
    #[error("{file}: {element}: {message}")]
    InvalidElement {
        /// The file.
        file: PathBuf,
        /// The element, with its kind (`joint 'knee'`, `link 'thigh'`, `body 'cube'`).
        element: String,
        /// What is wrong.
        message: String,
    },
    /// A mesh referenced by a collision geometry does not exist on disk.
    #[error("{file}: link '{link}': mesh '{uri}' not found (looked for {looked_for})")]
    MissingMesh {
        /// The URDF file.
        file: PathBuf,
        /// The link carrying the geometry.
        link: String,
        /// The mesh URI as written in the URDF.
        uri: String,
        /// The path(s) tried.
        looked_for: String,
    },
    /// An SRDF file is malformed or names an unknown joint.
    #[error("{file}: {message}")]
    Srdf {
        /// The file.
        file: PathBuf,
        /// What is wrong, naming the element.
        message: String,
    },
    /// A frame name that the model does not have.
    #[error("model '{model}': unknown frame '{name}'")]
    UnknownFrame {
        /// The model.
        model: String,
        /// The name asked for.
        name: String,
    },
    /// A joint name that the model does not have.
    #[error("model '{model}': unknown joint '{name}'")]
    UnknownJoint {
        /// The model.
        model: String,
        /// The name asked for.
        name: String,
    },
    /// A joint index out of range.
    #[error("model '{model}': joint index {index} out of range (the model has {njoints} joints including the world)")]
    JointIndex {
        /// The model.
        model: String,
        /// The index.
        index: usize,
        /// Number of joints, world included.
        njoints: usize,
    },
    /// A reference configuration name that the model does not have.
    #[error("model '{model}': unknown reference configuration '{name}' (known: {known})")]
    UnknownConfiguration {
        /// The model.
        model: String,
        /// The name asked for.
        name: String,
        /// The known names.
        known: String,
    },
    /// A robot name that the manifest does not have.
    #[error("unknown robot '{name}' (known: {known})")]
    UnknownRobot {
        /// The name asked for.
        name: String,
        /// The known names.
        known: String,
    },
    /// A user's robot manifest (`$CONTACTBENCH_ROBOTS`) is malformed, repeats a name or
    /// shadows a built-in robot.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    RobotManifest {
        /// The user's manifest.
        file: PathBuf,
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The field, as a path (`robots[1].name`; `.` for the document).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A robot of a user's manifest could not be loaded; the source says why (its URDF,
    /// SRDF or a mesh).
    #[error(transparent)]
    UserRobot(Box<UserRobotError>),
    /// Fetching the robot package failed (no python3/pip, no network, bad checksum...).
    #[error("fetching robots: {0}")]
    Fetch(String),
}

/// A robot of a user's manifest that could not be loaded: its entry, and the cause as
/// the source (`{:#}` prints both).
#[derive(Debug, Error)]
#[error("{file}:{line}: robot '{name}'")]
pub struct UserRobotError {
    /// The user's manifest.
    pub file: PathBuf,
    /// Line (1-based) of the robot's entry.
    pub line: usize,
    /// The robot.
    pub name: String,
    /// What went wrong while loading it.
    #[source]
    pub source: ModelError,
}

/// The root of a URDF model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootJoint {
    /// The root link is welded to the world.
    Fixed,
    /// The root link moves freely (a free-flyer joint named `root_joint`).
    FreeFlyer,
}

/// Base of a robot in a robot manifest (the built-in one or a user's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootKind {
    /// Welded to the world.
    Fixed,
    /// Free-flyer root joint (`free_flyer` is accepted too, as in scenarios).
    #[serde(alias = "free_flyer")]
    FreeFlyer,
}

impl From<RootKind> for RootJoint {
    fn from(kind: RootKind) -> RootJoint {
        match kind {
            RootKind::Fixed => RootJoint::Fixed,
            RootKind::FreeFlyer => RootJoint::FreeFlyer,
        }
    }
}

/// The kind of a joint, with its axis in the joint's own frame.
#[derive(Debug, Clone, PartialEq)]
pub enum JointKind {
    /// The world (joint 0): nq = nv = 0.
    Universe,
    /// Six degrees of freedom: `q = [x y z qx qy qz qw]`, `v = [v ω]` in the body frame.
    FreeFlyer,
    /// Rotation by `q` (rad) about a unit axis: nq = nv = 1.
    Revolute {
        /// Unit axis in the joint frame.
        axis: Unit<Vector3<f64>>,
    },
    /// Unbounded rotation about a unit axis (URDF `continuous`): `q = [cos θ, sin θ]`,
    /// nq = 2, nv = 1 (Pinocchio's RevoluteUnbounded).
    RevoluteUnbounded {
        /// Unit axis in the joint frame.
        axis: Unit<Vector3<f64>>,
    },
    /// Translation by `q` (m) along a unit axis: nq = nv = 1.
    Prismatic {
        /// Unit axis in the joint frame.
        axis: Unit<Vector3<f64>>,
    },
}

impl JointKind {
    /// Dimension of the joint's configuration.
    pub fn nq(&self) -> usize {
        match self {
            JointKind::Universe => 0,
            JointKind::FreeFlyer => 7,
            JointKind::RevoluteUnbounded { .. } => 2,
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => 1,
        }
    }

    /// Dimension of the joint's velocity.
    pub fn nv(&self) -> usize {
        match self {
            JointKind::Universe => 0,
            JointKind::FreeFlyer => 6,
            _ => 1,
        }
    }

    /// Motion subspace `S` of a one-degree-of-freedom joint, `[linear; angular]` in the joint
    /// frame (`None` for the world and the free flyer, whose `S` is 0 or the identity).
    pub fn motion_subspace(&self) -> Option<Vector6<f64>> {
        match self {
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                Some(Vector6::new(0.0, 0.0, 0.0, axis.x, axis.y, axis.z))
            }
            JointKind::Prismatic { axis } => {
                Some(Vector6::new(axis.x, axis.y, axis.z, 0.0, 0.0, 0.0))
            }
            JointKind::Universe | JointKind::FreeFlyer => None,
        }
    }
}

/// A joint of the kinematic tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Name (URDF joint name, `root_joint` for a URDF free flyer, `universe` for joint 0).
    pub name: String,
    /// Kind and axis.
    pub kind: JointKind,
    /// Parent joint index (0 for joints attached to the world; 0 for the world itself).
    pub parent: usize,
    /// Placement of the joint frame in the parent joint's frame (at q = neutral).
    pub placement: Isometry3<f64>,
    /// First index of the joint in `q`.
    pub idx_q: usize,
    /// First index of the joint in `v`.
    pub idx_v: usize,
}

impl Joint {
    /// Dimension of the joint's configuration.
    pub fn nq(&self) -> usize {
        self.kind.nq()
    }
    /// Dimension of the joint's velocity.
    pub fn nv(&self) -> usize {
        self.kind.nv()
    }
}

/// What a frame stands for (as in Pinocchio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// The frame of a moving joint.
    Joint,
    /// The frame of a fixed joint (merged into its parent body).
    FixedJoint,
    /// The frame of a link.
    Body,
    /// A user-defined operational frame.
    Operational,
}

/// A named frame fixed on a joint's body.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Name (URDF link or joint name).
    pub name: String,
    /// Joint whose body carries the frame (0 = world).
    pub parent_joint: usize,
    /// Placement of the frame in the parent joint's frame.
    pub placement: Isometry3<f64>,
    /// What the frame stands for.
    pub kind: FrameKind,
}

/// Position and velocity limits of the model, as in Pinocchio.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Lower position limit, dimension nq (−∞ where unbounded).
    pub lower_position: DVector<f64>,
    /// Upper position limit, dimension nq (+∞ where unbounded).
    pub upper_position: DVector<f64>,
    /// Effort limit (N·m or N), dimension nv (+∞ where not given).
    pub effort: DVector<f64>,
    /// Velocity limit (rad/s or m/s), dimension nv (+∞ where not given).
    pub velocity: DVector<f64>,
}

/// A rigid multibody: kinematic tree, inertias, frames and collision geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Name of the model (URDF robot name or the builder's name).
    pub name: String,
    /// Joints in Pinocchio's order (depth first); index 0 is the world.
    pub joints: Vec<Joint>,
    /// Inertia of the body moved by each joint, in that joint's frame (index 0: everything
    /// welded to the world).
    pub inertias: Vec<Inertia>,
    /// Every frame (index 0: `universe`).
    pub frames: Vec<Frame>,
    /// Collision geometry (meshes resolved to absolute paths).
    pub geometries: Vec<CollisionGeometry>,
    /// Joint limits.
    pub limits: Limits,
    /// Gravity, world frame, m/s².
    pub gravity: Vector3<f64>,
    /// Named reference configurations (from an SRDF), each of dimension nq.
    pub reference_configurations: BTreeMap<String, DVector<f64>>,
    /// Pairs of links never tested against each other (an SRDF's
    /// `<disable_collisions link1 link2/>`), each stored in name order.
    pub disabled_collisions: BTreeSet<(String, String)>,
    /// What loading noticed without refusing (an inertia that violates the triangle
    /// inequality, as Allegro's `link_3.0` does by 20 %), each naming its link.
    pub notes: Vec<String>,
    nq: usize,
    nv: usize,
}

impl Model {
    /// An empty model (the world only) with the given name; joints are added with
    /// [`Model::add_joint`].
    pub(crate) fn empty(name: &str) -> Model {
        Model {
            name: name.to_string(),
            joints: vec![Joint {
                name: "universe".to_string(),
                kind: JointKind::Universe,
                parent: 0,
                placement: Isometry3::identity(),
                idx_q: 0,
                idx_v: 0,
            }],
            inertias: vec![Inertia::zero()],
            frames: vec![Frame {
                name: "universe".to_string(),
                parent_joint: 0,
                placement: Isometry3::identity(),
                kind: FrameKind::FixedJoint,
            }],
            geometries: Vec::new(),
            limits: Limits {
                lower_position: DVector::zeros(0),
                upper_position: DVector::zeros(0),
                effort: DVector::zeros(0),
                velocity: DVector::zeros(0),
            },
            gravity: GRAVITY,
            notes: Vec::new(),
            reference_configurations: BTreeMap::new(),
            disabled_collisions: BTreeSet::new(),
            nq: 0,
            nv: 0,
        }
    }

    /// Appends a joint (its parent must already exist) with a zero inertia and its limits
    /// (`lower`, `upper` per configuration coordinate; `effort`, `velocity` per velocity
    /// coordinate); returns its index.
    pub(crate) fn add_joint(
        &mut self,
        name: &str,
        kind: JointKind,
        parent: usize,
        placement: Isometry3<f64>,
        limits: [&[f64]; 4],
    ) -> usize {
        let (nq, nv) = (kind.nq(), kind.nv());
        self.joints.push(Joint {
            name: name.to_string(),
            kind,
            parent,
            placement,
            idx_q: self.nq,
            idx_v: self.nv,
        });
        self.inertias.push(Inertia::zero());
        let [lower, upper, effort, velocity] = limits;
        extend(&mut self.limits.lower_position, lower);
        extend(&mut self.limits.upper_position, upper);
        extend(&mut self.limits.effort, effort);
        extend(&mut self.limits.velocity, velocity);
        self.nq += nq;
        self.nv += nv;
        self.joints.len() - 1
    }

    /// Dimension of the configuration vector q.
    pub fn nq(&self) -> usize {
        self.nq
    }

    /// Dimension of the velocity vector v.
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Number of joints, the world included.
    pub fn njoints(&self) -> usize {
        self.joints.len()
    }

    /// Total mass (kg): every body, including those welded to the world.
    pub fn total_mass(&self) -> f64 {
        self.inertias.iter().map(|i| i.mass).sum()
    }

    /// Whether joint 1 is a free flyer attached to the world.
    pub fn has_free_flyer(&self) -> bool {
        self.joints
            .get(1)
            .is_some_and(|j| j.kind == JointKind::FreeFlyer && j.parent == 0)
    }

    /// Names of the joints, the world first.
    pub fn joint_names(&self) -> Vec<&str> {
        self.joints.iter().map(|j| j.name.as_str()).collect()
    }

    /// Index of the joint with the given name.
    pub fn joint_id(&self, name: &str) -> Result<usize, ModelError> {
        self.joints
            .iter()
            .position(|j| j.name == name)
            .ok_or_else(|| ModelError::UnknownJoint {
                model: self.name.clone(),
                name: name.to_string(),
            })
    }

    /// Index of the first frame with the given name (as Pinocchio's `getFrameId`).
    pub fn frame_id(&self, name: &str) -> Result<FrameId, ModelError> {
        self.frames
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| ModelError::UnknownFrame {
                model: self.name.clone(),
                name: name.to_string(),
            })
    }

    /// Checks that a joint index exists.
    pub fn check_joint(&self, joint: usize) -> Result<(), ModelError> {
        if joint < self.joints.len() {
            Ok(())
        } else {
            Err(ModelError::JointIndex {
                model: self.name.clone(),
                index: joint,
                njoints: self.joints.len(),
            })
        }
    }

    /// Adds an operational frame on a joint's body, at a placement in the joint frame.
    pub fn add_frame(
        &mut self,
        name: &str,
        joint: usize,
        placement: Isometry3<f64>,
    ) -> Result<FrameId, ModelError> {
        self.check_joint(joint)?;
        self.frames.push(Frame {
            name: name.to_string(),
            parent_joint: joint,
            placement,
            kind: FrameKind::Operational,
        });
        Ok(self.frames.len() - 1)
    }

    /// Attaches an extra collision geometry to a joint's body, at a placement in the joint
    /// frame (e.g. small spheres at a cube's corners or at a robot's foot frames).
    pub fn add_geometry(
        &mut self,
        name: &str,
        joint: usize,
        placement: Isometry3<f64>,
        shape: GeometryShape,
    ) -> Result<usize, ModelError> {
        self.check_joint(joint)?;
        self.geometries.push(CollisionGeometry {
            name: name.to_string(),
            link: name.to_string(),
            parent_joint: joint,
            placement,
            shape,
        });
        Ok(self.geometries.len() - 1)
    }

    /// The neutral configuration: zero joint positions, identity free-flyer orientation,
    /// `[1, 0]` for continuous joints.
    pub fn neutral_configuration(&self) -> DVector<f64> {
        let mut q = DVector::zeros(self.nq);
        for joint in &self.joints {
            match joint.kind {
                JointKind::FreeFlyer => q[joint.idx_q + 6] = 1.0,
                JointKind::RevoluteUnbounded { .. } => q[joint.idx_q] = 1.0,
                _ => {}
            }
        }
        q
    }

    /// A named reference configuration (from the SRDF), dimension nq.
    pub fn reference_configuration(&self, name: &str) -> Result<DVector<f64>, ModelError> {
        self.reference_configurations
            .get(name)
            .cloned()
            .ok_or_else(|| ModelError::UnknownConfiguration {
                model: self.name.clone(),
                name: name.to_string(),
                known: self
                    .reference_configurations
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Whether `ancestor` is `joint` or one of its ancestors in the tree.
    pub fn is_ancestor(&self, ancestor: usize, joint: usize) -> bool {
        let mut j = joint;
        loop {
            if j == ancestor {
                return true;
            }
            if j == 0 {
                return false;
            }
            j = self.joints[j].parent;
        }
    }
}

/// Appends `values` to `v` in amortized constant time per value (a URDF of many joints
/// loads in linear time).
fn extend(v: &mut DVector<f64>, values: &[f64]) {
    v.extend(values.iter().copied());
}
