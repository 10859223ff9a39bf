//! A scenario's simulated world as plain data, for rebuilding the same system in another
//! simulator (`contactbench bench-step SCENARIO --describe`, read by
//! `tools/mujoco_step.py`): the robot's URDF, every joint, the initial state after the
//! scenario's offsets and ground placement, the contact spheres and built-in bodies, the
//! PD gains (with the inertia scaling at the initial state) and `M(q0)` to check the
//! rebuilt model against.

use std::path::PathBuf;

use nalgebra::UnitQuaternion;
use serde::Serialize;

use super::scenario::{RobotSource, Scenario, ScenarioError};
use super::world::{Role, World};
use crate::collision::Core;
use crate::dynamics::{self, Data, DynamicsError, MassLtdl};
use crate::model::{robots, JointKind, ModelError};

/// The world of a scenario (module docs). Lengths in m, masses in kg, quaternions
/// `[x, y, z, w]`, placements in the frame of the named joint.
#[derive(Debug, Clone, Serialize)]
pub struct WorldDescription {
    /// Scenario name.
    pub scenario: String,
    /// Time step (s).
    pub dt: f64,
    /// Friction coefficient of every contact.
    pub friction: f64,
    /// The robot's URDF, when there is a robot.
    pub urdf: Option<PathBuf>,
    /// Every joint but the world, in order.
    pub joints: Vec<JointDescription>,
    /// Initial configuration (`nq`, free flyers `[x y z qx qy qz qw]`).
    pub q0: Vec<f64>,
    /// Initial velocity (`nv`, free-flyer twists in the body frame).
    pub v0: Vec<f64>,
    /// Spheres that touch the ground (the only pairs with the ground besides bodies').
    pub ground_spheres: Vec<SphereDescription>,
    /// Pairs of objects that may touch other than sphere-ground pairs (another simulator
    /// rebuilding only `ground_spheres` misses these).
    pub other_pairs: usize,
    /// Built-in bodies (their contact spheres are in `ground_spheres`).
    pub bodies: Vec<BodyDescription>,
    /// The PD controller, when actuated.
    pub pd: Option<PdDescription>,
    /// `M(q0)` (nv × nv, rows).
    pub mass_matrix: Vec<Vec<f64>>,
}

/// One joint.
#[derive(Debug, Clone, Serialize)]
pub struct JointDescription {
    /// Name.
    pub name: String,
    /// `free_flyer`, `revolute`, `revolute_unbounded` or `prismatic`.
    pub kind: &'static str,
    /// First configuration index.
    pub idx_q: usize,
    /// First velocity index.
    pub idx_v: usize,
    /// The parent joint's name (`universe` for the world).
    pub parent: String,
}

/// A contact sphere.
#[derive(Debug, Clone, Serialize)]
pub struct SphereDescription {
    /// Name of the collision object.
    pub name: String,
    /// The joint carrying it.
    pub joint: String,
    /// Centre in the joint frame (m).
    pub position: [f64; 3],
    /// Radius (m; 0 for a point).
    pub radius: f64,
}

/// A built-in free body.
#[derive(Debug, Clone, Serialize)]
pub struct BodyDescription {
    /// Name.
    pub name: String,
    /// Its free-flyer joint.
    pub joint: String,
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in the joint frame (m).
    pub com: [f64; 3],
    /// Rotational inertia at the centre of mass, joint frame (kg·m², rows).
    pub inertia: [[f64; 3]; 3],
    /// Box half extents (m), for a box.
    pub half_extents: Option<[f64; 3]>,
    /// Radius (m), for a sphere.
    pub radius: Option<f64>,
    /// Orientation of the body geometry in the joint frame.
    pub orientation: [f64; 4],
}

/// The PD controller of [`super::world::PdController`].
#[derive(Debug, Clone, Serialize)]
pub struct PdDescription {
    /// Proportional gain.
    pub kp: f64,
    /// Derivative gain.
    pub kd: f64,
    /// Gains scaled by `1 / (M⁻¹)_jj` at the current state.
    pub inertia_scaled: bool,
    /// Target configuration (`nq`).
    pub target: Vec<f64>,
    /// The actuated joints with their scale at `q0` (1 when not inertia-scaled).
    pub actuated: Vec<ActuatedJoint>,
}

/// An actuated joint.
#[derive(Debug, Clone, Serialize)]
pub struct ActuatedJoint {
    /// Joint name.
    pub joint: String,
    /// Its velocity index.
    pub idx_v: usize,
    /// Gain scale at `q0`.
    pub scale: f64,
}

/// Why a world could not be described.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The scenario's world could not be built.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The robot's files could not be located.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// `M(q0)` could not be computed or factorized.
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
}

/// The description of `scenario`'s world (module docs).
pub fn describe(scenario: &Scenario) -> Result<WorldDescription, ExportError> {
    let world = World::build(scenario)?;
    let model = &world.model;
    let urdf = match scenario.robot_source() {
        Some(RobotSource::Manifest(name)) => Some(robots::Catalogue::from_env()?.urdf(&name)?),
        Some(RobotSource::Urdf(robot)) => Some(robot.urdf),
        None => None,
    };
    let joint_name = |j: usize| model.joints[j].name.clone();
    let joints = model
        .joints
        .iter()
        .skip(1)
        .map(|j| JointDescription {
            name: j.name.clone(),
            kind: match j.kind {
                JointKind::FreeFlyer => "free_flyer",
                JointKind::Revolute { .. } => "revolute",
                JointKind::RevoluteUnbounded { .. } => "revolute_unbounded",
                JointKind::Prismatic { .. } => "prismatic",
                JointKind::Universe => "universe",
            },
            idx_q: j.idx_q,
            idx_v: j.idx_v,
            parent: joint_name(j.parent),
        })
        .collect();
    let ground = world.objects.iter().position(|o| o.role == Role::Ground);
    let mut ground_spheres = Vec::new();
    let mut other_pairs = 0;
    for (i, a) in world.objects.iter().enumerate() {
        for (j, b) in world.objects.iter().enumerate().skip(i + 1) {
            if !world.filter.accepts(i, j, a.joint, b.joint) {
                continue;
            }
            let other = if Some(i) == ground { b } else { a };
            let sphere = matches!(other.shape.core, Core::Point);
            if ground.is_some_and(|g| g == i || g == j) && sphere {
                ground_spheres.push(SphereDescription {
                    name: other.name.clone(),
                    joint: joint_name(other.joint),
                    position: other.placement.translation.vector.into(),
                    radius: other.shape.radius,
                });
            } else {
                other_pairs += 1;
            }
        }
    }
    let bodies = world
        .objects
        .iter()
        .filter(|o| matches!(o.role, Role::Body(_)))
        .map(|o| {
            let inertia = &model.inertias[o.joint];
            let r = &inertia.rotational;
            let (half_extents, radius) = match &o.shape.core {
                Core::Cuboid { half_extents } => (Some((*half_extents).into()), None),
                _ => (None, Some(o.shape.radius)),
            };
            BodyDescription {
                name: o.name.clone(),
                joint: joint_name(o.joint),
                mass: inertia.mass,
                com: inertia.com.into(),
                inertia: [0, 1, 2].map(|k| [r[(k, 0)], r[(k, 1)], r[(k, 2)]]),
                half_extents,
                radius,
                orientation: quaternion_xyzw(&o.placement.rotation),
            }
        })
        .collect();
    let mut data = Data::new(model);
    let mass_matrix = dynamics::crba(model, &mut data, &world.q0)?.clone();
    let mut factor = MassLtdl::new(model);
    factor.factorize(&mass_matrix)?;
    let mut inverse_diagonal = vec![0.0; model.nv()];
    factor.inverse_diagonal(&mut inverse_diagonal)?;
    let pd = world.pd.as_ref().map(|pd| PdDescription {
        kp: pd.kp,
        kd: pd.kd,
        inertia_scaled: pd.inertia_scaled,
        target: pd.target.iter().copied().collect(),
        actuated: world
            .actuated
            .iter()
            .map(|&iv| {
                let joint = model
                    .joints
                    .iter()
                    .position(|j| j.idx_v == iv && j.nv() > 0);
                ActuatedJoint {
                    joint: joint.map_or_else(String::new, joint_name),
                    idx_v: iv,
                    scale: if pd.inertia_scaled {
                        1.0 / inverse_diagonal[iv]
                    } else {
                        1.0
                    },
                }
            })
            .collect(),
    });
    Ok(WorldDescription {
        scenario: scenario.name.clone(),
        dt: scenario.simulation.dt,
        friction: world.friction,
        urdf,
        joints,
        q0: world.q0.iter().copied().collect(),
        v0: world.v0.iter().copied().collect(),
        ground_spheres,
        other_pairs,
        bodies,
        pd,
        mass_matrix: mass_matrix
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect(),
    })
}

fn quaternion_xyzw(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.i, q.j, q.k, q.w]
}
