//! Building a simulated world from a scenario: the model (a robot of the manifest and/or
//! built-in free-flying bodies), the collision objects with the pairs allowed to touch,
//! the initial state, the PD targets and the bodies external forces act on.
//!
//! Contact geometry (design.md §6):
//! - a box body carries 8 spheres at its corners (radius `corner_radius`, centres inset so
//!   that they touch the box's faces); they touch the ground and the bodies listed before
//!   it (a stack is listed bottom first), so each contact is found once;
//! - a sphere body touches the ground, the bodies listed before it and the robot's links;
//! - the fixed shapes of `world.fixed` (walls, a table top) are on the world, and touch
//!   what the ground touches of the built-in bodies: box corners and sphere bodies;
//! - a robot touches the ground through its contact spheres, the collision geometry of its
//!   links, or both (`world.robot_collision`); the geometry touches the ground through the
//!   points it rests on ([`crate::collision::ground_points`]: a box's corners, a capsule's
//!   end balls, a mesh hull's vertices), each its own object so that a face carries a
//!   contact at each corner; free bodies touch the links' geometry (convex hulls of the
//!   meshes);
//! - with `world.self_collision`, the robot's link geometries touch each other, except on
//!   one body, on a parent and its child, and on link pairs the SRDF disables
//!   ([`Model::self_collision_allowed`]).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use nalgebra::{DVector, Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3, Vector6};

use super::controllers::{offset_target, GravityFeedforward, GravityWorkspace, SupportPoint};
use super::locomotion::{TrotController, TrotState};
use super::scenario::{
    Actuation, ExternalForce, GravityCompensation, Pose, RobotRoot, RobotSource, Scenario,
    ScenarioError, ShapeSpec, TerrainFormula,
};
use crate::collision::{
    ground_points, shape_from_geometry, Core, HeightField, HeightFieldError, PairFilter, PairSet,
    Shape,
};
use crate::dynamics::{self, Data, DynamicsError, MassLtdl};
use crate::model::{robots, FreeBodiesBuilder, GeometryShape, JointKind, Model, RootJoint};

/// What a collision object is, for the pair rules of the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The ground halfspace `z ≤ 0`.
    Ground,
    /// A contact sphere of the robot.
    RobotSphere,
    /// A link geometry of the robot.
    RobotLink,
    /// A point through which a link geometry of the robot rests on the ground.
    RobotGroundPoint,
    /// A corner sphere of built-in body `k`.
    Corner(usize),
    /// The shape of built-in body `k` (box or sphere).
    Body(usize),
    /// Fixed shape `k` of `world.fixed` (a wall, a table top).
    Fixed(usize),
}

/// A collision geometry fixed on a joint's body.
#[derive(Debug, Clone)]
pub struct WorldObject {
    /// Its name (`cube/corner3`, `FL_FOOT/sphere`, `ground`).
    pub name: String,
    /// The joint carrying it (0 = world).
    pub joint: usize,
    /// Placement in the joint frame.
    pub placement: Isometry3<f64>,
    /// The shape.
    pub shape: Shape,
    /// Its role in the pair rules.
    pub role: Role,
}

/// How far (m) below the ground a body's origin must end for the run to warn about it: a
/// body resting on the ground keeps its origin above it, or within a link's half size.
pub const BELOW_GROUND_WARNING_DEPTH: f64 = 0.05;

/// A PD controller towards a configuration (see [`Actuation::Pd`]).
#[derive(Debug, Clone)]
pub struct PdController {
    /// Target configuration (`nq`).
    pub target: DVector<f64>,
    /// Proportional gain.
    pub kp: f64,
    /// Derivative gain.
    pub kd: f64,
    /// Gains scaled by the apparent inertias `1 / (M⁻¹)_jj`.
    pub inertia_scaled: bool,
    /// The gravity feed-forward added to the PD, if any.
    pub gravity: Option<GravityFeedforward>,
}

/// The world of a scenario, ready to simulate.
#[derive(Debug, Clone)]
pub struct World {
    /// The multibody model.
    pub model: Model,
    /// Collision objects.
    pub objects: Vec<WorldObject>,
    /// Which object pairs are tested.
    pub filter: PairFilter,
    /// Friction coefficient of every contact.
    pub friction: f64,
    /// Initial configuration (`nq`).
    pub q0: DVector<f64>,
    /// Initial velocity (`nv`).
    pub v0: DVector<f64>,
    /// The PD controller, when actuated.
    pub pd: Option<PdController>,
    /// The trot controller, when the scenario walks.
    pub trot: Option<TrotController>,
    /// Velocity indices driven by the PD (the robot's joints, not free flyers).
    pub actuated: Vec<usize>,
    /// The joint of each external force of the scenario, in order.
    pub force_joints: Vec<usize>,
    /// The joint whose origin is recorded as the base position (first free flyer; 0 if none).
    pub base_joint: usize,
}

/// The model with the scenario's built-in bodies added (to `base`, the robot, when there
/// is one), and the joint of each body.
fn body_model(
    scenario: &Scenario,
    base: Option<Model>,
) -> Result<(Model, Vec<usize>), ScenarioError> {
    let mut builder = match base {
        Some(model) => FreeBodiesBuilder::extend(model),
        None => FreeBodiesBuilder::new(&scenario.name),
    };
    let mut joints = Vec::new();
    for (i, body) in scenario.world.bodies.iter().enumerate() {
        let joint = match body.shape {
            ShapeSpec::Box(size) => builder.add_box(
                &body.name,
                body.mass,
                Vector3::new(size[0], size[1], size[2]) * 0.5,
            ),
            ShapeSpec::Sphere(radius) => builder.add_sphere(&body.name, body.mass, radius),
        }
        .map_err(|e| scenario.invalid(&format!("world.bodies[{i}]"), e.to_string()))?;
        joints.push(joint);
    }
    Ok((builder.build(), joints))
}

impl World {
    /// Builds the world of a scenario; unknown robots, frames, joints or bodies are errors
    /// that name the scenario's field and its line.
    pub fn build(scenario: &Scenario) -> Result<World, ScenarioError> {
        let robot = match scenario.robot_source() {
            Some(RobotSource::Manifest(name)) => {
                Some(robots::load_robot(&name).map_err(|e| scenario.robot_error(e))?)
            }
            Some(RobotSource::Urdf(urdf)) => Some(
                robots::load_urdf_robot(
                    &urdf.urdf,
                    match urdf.root {
                        RobotRoot::Fixed => RootJoint::Fixed,
                        RobotRoot::FreeFlyer => RootJoint::FreeFlyer,
                    },
                    &urdf.package_dirs,
                    urdf.srdf.as_deref(),
                )
                .map_err(|e| scenario.robot_error(e))?,
            ),
            None => None,
        };
        let robot = match (robot, &scenario.world.robot_pose) {
            (Some(model), Some(pose)) => Some(place_fixed_base(scenario, model, pose)?),
            (robot, _) => robot,
        };
        let has_robot = robot.is_some();
        let robot_joints = robot.as_ref().map_or(0, |m| m.njoints());
        let (model, body_joints) = body_model(scenario, robot)?;
        let mut objects = Vec::new();
        if scenario.world.ground {
            objects.push(WorldObject {
                name: "ground".into(),
                joint: 0,
                placement: Isometry3::identity(),
                shape: ground_shape(scenario)?,
                role: Role::Ground,
            });
        } else if scenario.world.terrain.is_some() {
            return Err(scenario.invalid(
                "world.terrain",
                "a terrain replaces the ground: it needs `ground: true`",
            ));
        }
        add_fixed_objects(scenario, &mut objects)?;
        if has_robot {
            add_robot_objects(scenario, &model, robot_joints, &mut objects)?;
        }
        add_body_objects(scenario, &model, &body_joints, &mut objects)?;
        let is_sphere: Vec<bool> = scenario
            .world
            .bodies
            .iter()
            .map(|b| matches!(b.shape, ShapeSpec::Sphere(_)))
            .collect();
        let mut allowed = allowed_pairs(&objects, &is_sphere);
        if scenario.world.self_collision {
            allowed.extend(self_collision_pairs(&model, &objects));
        }
        let filter = PairFilter {
            allowed: Some(allowed),
            ..Default::default()
        };
        let Start {
            q: q0,
            v: v0,
            reference,
        } = initial_state(scenario, &model, &body_joints, &objects)?;
        let actuated: Vec<usize> = model
            .joints
            .iter()
            .take(robot_joints)
            .filter(|j| !matches!(j.kind, JointKind::FreeFlyer | JointKind::Universe))
            .map(|j| j.idx_v)
            .collect();
        let pd = match &scenario.actuation {
            Actuation::None | Actuation::Trot(_) => None,
            Actuation::Pd {
                kp,
                kd,
                inertia_scaled,
                target_offsets,
                gravity_compensation,
            } => Some(PdController {
                target: offset_target(&model, &reference, target_offsets).map_err(|e| {
                    scenario.invalid(
                        &format!("actuation.pd.target_offsets.{}", e.joint),
                        e.message,
                    )
                })?,
                kp: *kp,
                kd: *kd,
                inertia_scaled: *inertia_scaled,
                gravity: gravity_feedforward(scenario, &model, &objects, *gravity_compensation)?,
            }),
        };
        let trot = match &scenario.actuation {
            Actuation::Trot(spec) => Some(
                TrotController::new(&model, (**spec).clone(), &q0)
                    .map_err(|e| scenario.invalid("actuation.trot", e))?
                    .with_terrain(terrain_field(&objects)),
            ),
            _ => None,
        };
        let force_joints = scenario
            .external_forces
            .iter()
            .enumerate()
            .map(|(i, f)| {
                model
                    .frame_id(&f.body)
                    .map(|id| model.frames[id].parent_joint)
                    .map_err(|e| {
                        scenario.invalid(&format!("external_forces[{i}].body"), e.to_string())
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let base_joint = model
            .joints
            .iter()
            .position(|j| j.kind == JointKind::FreeFlyer)
            .unwrap_or(0);
        Ok(World {
            model,
            objects,
            filter,
            friction: scenario.world.friction,
            q0,
            v0,
            pd,
            trot,
            actuated,
            force_joints,
            base_joint,
        })
    }

    /// The warning, if any, for the bodies whose origin is more than
    /// [`BELOW_GROUND_WARNING_DEPTH`] below the ground at `q`: how many, the lowest, and
    /// which of them have no collision object that touches the ground; none without a
    /// ground.
    pub fn below_ground_warning(&self, q: &DVector<f64>) -> Result<Option<String>, DynamicsError> {
        let Some(ground) = self.objects.iter().position(|o| o.role == Role::Ground) else {
            return Ok(None);
        };
        let touching: HashSet<usize> = self
            .filter
            .allowed
            .iter()
            .flatten()
            .filter_map(|&(a, b)| match (a == ground, b == ground) {
                (true, _) => Some(self.objects[b].joint),
                (_, true) => Some(self.objects[a].joint),
                _ => None,
            })
            .collect();
        let mut data = Data::new(&self.model);
        dynamics::forward_kinematics(&self.model, &mut data, q)?;
        let below: Vec<(usize, f64)> = (1..self.model.njoints())
            .map(|j| (j, data.omi[j].translation.vector.z))
            .filter(|(_, z)| *z < -BELOW_GROUND_WARNING_DEPTH)
            .collect();
        let Some(&(lowest, depth)) = below.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            return Ok(None);
        };
        let name = |j: usize| format!("'{}'", self.model.joints[j].name);
        let bare: Vec<String> = below
            .iter()
            .filter(|(j, _)| !touching.contains(j))
            .map(|(j, _)| name(*j))
            .collect();
        let why = match bare.len() {
            0 => "each has collision objects that touch the ground, which did not hold it"
                .to_string(),
            n => format!(
                "{n} of them have no collision object that touches the ground \
                 (see world.robot_collision): {}",
                bare.join(", ")
            ),
        };
        Ok(Some(format!(
            "{} bodies ended more than {BELOW_GROUND_WARNING_DEPTH} m below the ground, the \
             lowest the body of joint {} at {:.3} m; {why}",
            below.len(),
            name(lowest),
            -depth
        )))
    }

    /// Base position (m, world) at configuration `q`.
    pub fn base_position(&self, q: &DVector<f64>) -> [f64; 3] {
        if self.base_joint == 0 {
            return [0.0; 3];
        }
        let i = self.model.joints[self.base_joint].idx_q;
        [q[i], q[i + 1], q[i + 2]]
    }

    /// Names of the configuration coordinates.
    pub fn q_names(&self) -> Vec<String> {
        coordinate_names(&self.model, true)
    }

    /// Names of the velocity coordinates.
    pub fn v_names(&self) -> Vec<String> {
        coordinate_names(&self.model, false)
    }

    /// Buffers of [`World::actuation`], kept by the simulator.
    pub fn actuation_workspace(&self) -> ActuationWorkspace {
        let nv = self.model.nv();
        ActuationWorkspace {
            error: DVector::zeros(nv),
            inverse_diagonal: vec![0.0; nv],
            gravity: self
                .pd
                .as_ref()
                .and_then(|pd| pd.gravity.as_ref())
                .map(|g| g.workspace(&self.model)),
            trot: self.trot.as_ref().map(|t| t.state(nv)),
        }
    }

    /// Joint torques into `tau` (`nv`) at step `step` of `dt`: the trot's
    /// ([`TrotController::torques`], needing the joint placements of `data` at `q`), or the
    /// PD's `τ = K_p (q_ref ⊖ q) − K_d v` on the actuated joints, scaled by the apparent
    /// inertias `1 / (M⁻¹)_jj` when asked, read from the LTDL factor `mass` of `M(q)`
    /// without inverting `M` (no allocation), plus its gravity feed-forward when asked
    /// ([`GravityFeedforward::add_to`]).
    #[allow(clippy::too_many_arguments)]
    pub fn actuation(
        &self,
        step: usize,
        dt: f64,
        q: &DVector<f64>,
        v: &DVector<f64>,
        data: &Data,
        mass: &mut MassLtdl,
        work: &mut ActuationWorkspace,
        tau: &mut DVector<f64>,
    ) -> Result<(), DynamicsError> {
        tau.fill(0.0);
        if let (Some(trot), Some(state)) = (&self.trot, work.trot.as_mut()) {
            return trot.torques(step, dt, q, v, &self.model, data, state, tau);
        }
        let Some(pd) = &self.pd else {
            return Ok(());
        };
        dynamics::difference_into(&self.model, q, &pd.target, &mut work.error)?;
        if pd.inertia_scaled {
            mass.inverse_diagonal_on(&self.actuated, &mut work.inverse_diagonal)?;
        }
        for &i in &self.actuated {
            let scale = if pd.inertia_scaled {
                1.0 / work.inverse_diagonal[i]
            } else {
                1.0
            };
            tau[i] = scale * (pd.kp * work.error[i] - pd.kd * v[i]);
        }
        if let (Some(gravity), Some(gravity_work)) = (&pd.gravity, work.gravity.as_mut()) {
            gravity.add_to(&self.model, q, data, &self.actuated, gravity_work, tau)?;
        }
        Ok(())
    }

    /// `out += Σ_i J_iᵀ f_i`: the generalized force of the external forces `forces` at
    /// time `t` (world axes, N), each applied at the origin of its joint
    /// ([`World::force_joints`]); needs the joint placements of `data` at the current `q`.
    pub fn add_external_forces(
        &self,
        data: &Data,
        forces: &[ExternalForce],
        t: f64,
        out: &mut DVector<f64>,
    ) -> Result<(), DynamicsError> {
        for (f, &joint) in forces.iter().zip(&self.force_joints) {
            let origin = data.joint_position(joint);
            let force = Vector3::from(f.at(t));
            dynamics::add_point_force(&self.model, data, joint, &origin, &force, out)?;
        }
        Ok(())
    }
}

/// Buffers of the PD controller (see [`World::actuation_workspace`]).
#[derive(Debug, Clone)]
pub struct ActuationWorkspace {
    error: DVector<f64>,
    inverse_diagonal: Vec<f64>,
    gravity: Option<GravityWorkspace>,
    /// The trot's state, when the world walks.
    pub trot: Option<TrotState>,
}

/// The PD's gravity feed-forward: `contacts` stands a free-flying robot on its contact
/// spheres (at least three, not all in line at the start).
fn gravity_feedforward(
    scenario: &Scenario,
    model: &Model,
    objects: &[WorldObject],
    mode: GravityCompensation,
) -> Result<Option<GravityFeedforward>, ScenarioError> {
    let base_rows = model
        .joints
        .iter()
        .find(|j| j.kind == JointKind::FreeFlyer)
        .map(|j| j.idx_v);
    let support: Vec<SupportPoint> = match mode {
        GravityCompensation::None => return Ok(None),
        GravityCompensation::Joints => Vec::new(),
        GravityCompensation::Contacts => objects
            .iter()
            .filter(|o| o.role == Role::RobotSphere)
            .zip(&scenario.world.contact_spheres)
            .map(|(o, sphere)| SupportPoint {
                joint: o.joint,
                centre: o.placement.translation.vector,
                radius: sphere.radius,
            })
            .collect(),
    };
    let field = "actuation.pd.gravity_compensation";
    if mode == GravityCompensation::Contacts && base_rows.is_some() && support.len() < 3 {
        return Err(scenario.invalid(
            field,
            format!(
                "`contacts` shares the weight among the robot's contact spheres: it needs at \
                 least three (world.contact_spheres with a robot_collision that uses them), \
                 found {}",
                support.len()
            ),
        ));
    }
    Ok(Some(GravityFeedforward { support, base_rows }))
}

/// The ground: the terrain's height field when the scenario gives one, else the
/// halfspace `z ≤ 0`.
fn ground_shape(scenario: &Scenario) -> Result<Shape, ScenarioError> {
    let Some(terrain) = &scenario.world.terrain else {
        return Shape::halfspace(Vector3::z(), 0.0)
            .map_err(|e| scenario.invalid("world.ground", e.to_string()));
    };
    let spec = &terrain.heightfield;
    let base = scenario.source.parent().unwrap_or(Path::new(""));
    let prefix = "world.terrain.heightfield";
    let field = match (&spec.file, &spec.formula, &spec.roughness) {
        (Some(file), None, None) => {
            HeightField::from_file(&base.join(file), spec.spacing, spec.origin)
        }
        (None, Some(TerrainFormula::Contactbench), None) => {
            HeightField::contactbench(spec.size, spec.spacing)
        }
        (None, None, Some(r)) => {
            HeightField::roughness(spec.size, spec.spacing, r.amplitude, r.wavelength, r.seed)
        }
        _ => {
            return Err(
                scenario.invalid(prefix, "give exactly one of `file`, `formula`, `roughness`")
            )
        }
    }
    .map_err(|e| {
        let at = match &e {
            HeightFieldError::Parameter { field, .. } => match *field {
                "amplitude" | "wavelength" => format!("{prefix}.roughness.{field}"),
                "origin.x" | "origin.y" => format!("{prefix}.origin"),
                other => format!("{prefix}.{other}"),
            },
            HeightFieldError::NonFinite { .. }
            | HeightFieldError::Size { .. }
            | HeightFieldError::File { .. }
                if spec.file.is_some() =>
            {
                format!("{prefix}.file")
            }
            _ => prefix.to_string(),
        };
        scenario.invalid(&at, e.to_string())
    })?;
    Ok(Shape::heightfield(Arc::new(field)))
}

/// Moves a fixed-base robot's root (everything welded to the world) to `pose`.
fn place_fixed_base(
    scenario: &Scenario,
    mut model: Model,
    pose: &Pose,
) -> Result<Model, ScenarioError> {
    if model.has_free_flyer() {
        return Err(scenario.invalid(
            "world.robot_pose",
            "applies to fixed-base robots; move a free-flying base with initial_state.base_offset",
        ));
    }
    let o = pose.orientation;
    let rotation = UnitQuaternion::from_quaternion(Quaternion::new(o[3], o[0], o[1], o[2]));
    let root = Isometry3::from_parts(Translation3::from(Vector3::from(pose.position)), rotation);
    for joint in model.joints.iter_mut().skip(1).filter(|j| j.parent == 0) {
        joint.placement = root * joint.placement;
    }
    for frame in model
        .frames
        .iter_mut()
        .skip(1)
        .filter(|f| f.parent_joint == 0)
    {
        frame.placement = root * frame.placement;
    }
    for geometry in model.geometries.iter_mut().filter(|g| g.parent_joint == 0) {
        geometry.placement = root * geometry.placement;
    }
    Ok(model)
}

fn coordinate_names(model: &Model, configuration: bool) -> Vec<String> {
    let mut names = Vec::new();
    for joint in model.joints.iter().skip(1) {
        let suffixes: &[&str] = match (&joint.kind, configuration) {
            (JointKind::FreeFlyer, true) => &["x", "y", "z", "qx", "qy", "qz", "qw"],
            (JointKind::FreeFlyer, false) => &["vx", "vy", "vz", "wx", "wy", "wz"],
            (JointKind::RevoluteUnbounded { .. }, true) => &["cos", "sin"],
            _ => &[""],
        };
        for s in suffixes {
            names.push(if s.is_empty() {
                joint.name.clone()
            } else {
                format!("{}.{s}", joint.name)
            });
        }
    }
    names
}

fn add_robot_objects(
    scenario: &Scenario,
    model: &Model,
    robot_joints: usize,
    objects: &mut Vec<WorldObject>,
) -> Result<(), ScenarioError> {
    let mode = scenario.world.robot_collision_mode();
    let spheres = match mode.uses_spheres() {
        true => scenario.world.contact_spheres.as_slice(),
        false => &[],
    };
    for (i, sphere) in spheres.iter().enumerate() {
        let field = format!("world.contact_spheres[{i}]");
        let frame_id = model
            .frame_id(&sphere.frame)
            .map_err(|e| scenario.invalid(&format!("{field}.frame"), e.to_string()))?;
        let frame = &model.frames[frame_id];
        let offset = Translation3::from(Vector3::from(sphere.offset));
        objects.push(WorldObject {
            name: format!("{}/sphere{i}", sphere.frame),
            joint: frame.parent_joint,
            placement: frame.placement * offset,
            shape: Shape::sphere(sphere.radius)
                .map_err(|e| scenario.invalid(&format!("{field}.radius"), e.to_string()))?,
            role: Role::RobotSphere,
        });
    }
    for geometry in model
        .geometries
        .iter()
        .filter(|g| g.parent_joint < robot_joints)
    {
        let shape = shape_from_geometry(&geometry.shape)
            .map_err(|e| scenario.invalid("world.robot", format!("{}: {e}", geometry.name)))?;
        let moves = geometry.parent_joint != 0;
        if scenario.world.ground && moves && mode.uses_geometry() {
            for (k, point) in ground_points(&shape).into_iter().enumerate() {
                objects.push(WorldObject {
                    name: format!("{}/point{k}", geometry.name),
                    joint: geometry.parent_joint,
                    placement: geometry.placement * Translation3::from(point.centre),
                    shape: Shape::sphere(point.radius).map_err(|e| {
                        scenario.invalid("world.robot", format!("{}: {e}", geometry.name))
                    })?,
                    role: Role::RobotGroundPoint,
                });
            }
        }
        objects.push(WorldObject {
            name: geometry.name.clone(),
            joint: geometry.parent_joint,
            placement: geometry.placement,
            shape,
            role: Role::RobotLink,
        });
    }
    Ok(())
}

fn add_body_objects(
    scenario: &Scenario,
    model: &Model,
    body_joints: &[usize],
    objects: &mut Vec<WorldObject>,
) -> Result<(), ScenarioError> {
    for (k, (body, &joint)) in scenario.world.bodies.iter().zip(body_joints).enumerate() {
        let field = format!("world.bodies[{k}]");
        let geometry = model
            .geometries
            .iter()
            .find(|g| g.parent_joint == joint)
            .ok_or_else(|| scenario.invalid(&field, "the model has no geometry for this body"))?;
        let shape = shape_from_geometry(&geometry.shape)
            .map_err(|e| scenario.invalid(&field, e.to_string()))?;
        objects.push(WorldObject {
            name: body.name.clone(),
            joint,
            placement: geometry.placement,
            shape,
            role: Role::Body(k),
        });
        if let GeometryShape::Box { half_extents } = geometry.shape {
            let r = body.corner_radius;
            let inset = half_extents - Vector3::repeat(r);
            if inset.iter().any(|x| *x < 0.0) {
                return Err(scenario.invalid(
                    &format!("{field}.corner_radius"),
                    "larger than half the box's smallest side",
                ));
            }
            for (c, corner) in box_corners(&inset).into_iter().enumerate() {
                objects.push(WorldObject {
                    name: format!("{}/corner{c}", body.name),
                    joint,
                    placement: Isometry3::from(Translation3::from(corner)),
                    shape: Shape::sphere(r).map_err(|e| {
                        scenario.invalid(&format!("{field}.corner_radius"), e.to_string())
                    })?,
                    role: Role::Corner(k),
                });
            }
        }
    }
    Ok(())
}

/// The scenario's fixed shapes, on the world (joint 0).
fn add_fixed_objects(
    scenario: &Scenario,
    objects: &mut Vec<WorldObject>,
) -> Result<(), ScenarioError> {
    for (k, fixed) in scenario.world.fixed.iter().enumerate() {
        let field = format!("world.fixed[{k}].shape");
        let shape = match fixed.shape {
            ShapeSpec::Box(size) => Shape::cuboid(Vector3::from(size) * 0.5),
            ShapeSpec::Sphere(radius) => Shape::sphere(radius),
        }
        .map_err(|e| scenario.invalid(&field, e.to_string()))?;
        let [x, y, z, w] = fixed.orientation;
        let rotation = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z));
        objects.push(WorldObject {
            name: fixed.name.clone(),
            joint: 0,
            placement: Isometry3::from_parts(Translation3::from(fixed.position), rotation),
            shape,
            role: Role::Fixed(k),
        });
    }
    Ok(())
}

/// The 8 corners `(±h.x, ±h.y, ±h.z)`.
fn box_corners(h: &Vector3<f64>) -> Vec<Vector3<f64>> {
    let mut corners = Vec::with_capacity(8);
    for sz in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sx in [-1.0, 1.0] {
                corners.push(Vector3::new(sx * h.x, sy * h.y, sz * h.z));
            }
        }
    }
    corners
}

/// The pair rules of the module docs; `is_sphere[k]` tells whether body `k` is a sphere.
fn may_touch(a: Role, b: Role, is_sphere: &[bool]) -> bool {
    use Role::*;
    match (a, b) {
        (Ground, RobotSphere) | (Ground, RobotGroundPoint) | (Ground, Corner(_)) => true,
        (Ground, Body(k)) | (Fixed(_), Body(k)) => is_sphere[k],
        (Fixed(_), Corner(_)) => true,
        (Corner(k), Body(m)) => m < k,
        (Body(k), Body(m)) => m < k && is_sphere[k],
        (RobotLink, Body(_)) => true,
        _ => false,
    }
}

fn allowed_pairs(objects: &[WorldObject], is_sphere: &[bool]) -> PairSet {
    let mut pairs = PairSet::default();
    for i in 0..objects.len() {
        for j in (i + 1)..objects.len() {
            let (a, b) = (objects[i].role, objects[j].role);
            if may_touch(a, b, is_sphere) || may_touch(b, a, is_sphere) {
                pairs.insert((i, j));
            }
        }
    }
    pairs
}

/// The pairs of the robot's link geometries that collide with each other (module docs).
fn self_collision_pairs(model: &Model, objects: &[WorldObject]) -> Vec<(usize, usize)> {
    let links: Vec<(usize, &str)> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o.role == Role::RobotLink)
        .filter_map(|(i, o)| {
            let geometry = model.geometries.iter().find(|g| g.name == o.name)?;
            Some((i, geometry.link.as_str()))
        })
        .collect();
    let mut pairs = Vec::new();
    for (k, &(i, link_i)) in links.iter().enumerate() {
        for &(j, link_j) in &links[k + 1..] {
            let (a, b) = (objects[i].joint, objects[j].joint);
            if model.self_collision_allowed(a, link_i, b, link_j) {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// The initial state and the PD's target.
struct Start {
    q: DVector<f64>,
    v: DVector<f64>,
    reference: DVector<f64>,
}

/// Initial `q`, `v`: the robot's reference (or neutral) configuration with the offsets,
/// lowered onto the ground when asked; each body's pose and twist. Also returns the
/// reference configuration itself, the PD's target.
fn initial_state(
    scenario: &Scenario,
    model: &Model,
    body_joints: &[usize],
    objects: &[WorldObject],
) -> Result<Start, ScenarioError> {
    let init = &scenario.initial_state;
    let reference = match &init.reference {
        Some(name) => model
            .reference_configuration(name)
            .map_err(|e| scenario.invalid("initial_state.reference", e.to_string()))?,
        None => model.neutral_configuration(),
    };
    let mut q = reference.clone();
    let mut v = DVector::zeros(model.nv());
    let robot_base = model.has_free_flyer() && scenario.world.robot.is_some();
    if robot_base {
        for k in 0..3 {
            q[k] += init.base_offset[k];
        }
        for k in 0..6 {
            v[k] = init.base_velocity[k];
        }
    }
    for (name, offset) in &init.joint_offsets {
        let field = format!("initial_state.joint_offsets.{name}");
        let joint = model
            .joint_id(name)
            .map_err(|e| scenario.invalid(&field, e.to_string()))?;
        let j = &model.joints[joint];
        if j.nq() != 1 {
            return Err(scenario.invalid(&field, "offsets apply to one-coordinate joints only"));
        }
        q[j.idx_q] += offset;
    }
    for (body, &joint) in scenario.world.bodies.iter().zip(body_joints) {
        let (iq, iv) = (model.joints[joint].idx_q, model.joints[joint].idx_v);
        if let Some(state) = init.bodies.get(&body.name) {
            let o = state.orientation;
            let rot = UnitQuaternion::from_quaternion(Quaternion::new(o[3], o[0], o[1], o[2]));
            q.rows_mut(iq, 3).copy_from(&Vector3::from(state.position));
            q.rows_mut(iq + 3, 4)
                .copy_from(&rot.as_vector().clone_owned());
            v.rows_mut(iv, 6).copy_from(&Vector6::from(state.velocity));
        }
    }
    if init.on_ground && robot_base {
        let lowest = lowest_sphere_height(model, &q, objects)
            .map_err(|e| scenario.invalid("initial_state.on_ground", e.to_string()))?;
        if let Some(z) = lowest {
            q[2] -= z;
        }
    }
    Ok(Start { q, v, reference })
}

/// The terrain's height field, when the ground is one.
fn terrain_field(objects: &[WorldObject]) -> Option<Arc<HeightField>> {
    objects.iter().find_map(|o| match &o.shape.core {
        Core::HeightField(field) if o.role == Role::Ground => Some(field.clone()),
        _ => None,
    })
}

/// Height (m) of the lowest point of the robot's contact spheres and ground points at `q`
/// over the ground under each (the terrain's surface at the point's centre, `z = 0` without
/// terrain or outside its footprint).
fn lowest_sphere_height(
    model: &Model,
    q: &DVector<f64>,
    objects: &[WorldObject],
) -> Result<Option<f64>, DynamicsError> {
    let mut data = Data::new(model);
    dynamics::forward_kinematics(model, &mut data, q)?;
    let terrain = terrain_field(objects);
    Ok(objects
        .iter()
        .filter(|o| matches!(o.role, Role::RobotSphere | Role::RobotGroundPoint))
        .map(|o| {
            let centre = (data.omi[o.joint] * o.placement).translation.vector;
            let ground = terrain
                .as_ref()
                .and_then(|f| f.height_at(centre.x, centre.y))
                .unwrap_or(0.0);
            centre.z - o.shape.radius - ground
        })
        .reduce(f64::min))
}
