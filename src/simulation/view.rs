//! A simulated trajectory as an animated glTF 2.0 binary file (`.glb`), for any glTF
//! viewer (Blender, the three.js editor, Babylon.js's sandbox, `<model-viewer>`): the
//! collision geometry of the robot's links and of the bodies (primitives tessellated,
//! meshes as their convex hulls), the ground, and per step each contact's point, normal
//! (5 cm arrow) and force (arrow of length proportional to `‖f‖`, the largest 0.3 m),
//! animated along the time line. The world is z-up, glTF y-up: a root node turns one into
//! the other. A contact slot is a node shown (scale 1) at the steps where the slot holds
//! a contact and hidden (scale 0) elsewhere.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use nalgebra::{Isometry3, Rotation3, UnitQuaternion, Vector3};
use serde_json::{json, Value};
use thiserror::Error;

use super::recorder::ContactRecord;
use super::step::{Simulator, StepError};
use super::world::{Role, World};
use crate::collision::{contact, contact_frame, ContactSettings, Core, HeightField, Shape};
use crate::dynamics::{self, Data, DynamicsError};

/// Segments of the circles of tessellated spheres, cylinders and capsules.
const SEGMENTS: usize = 16;
/// Length of a normal's arrow (m).
const NORMAL_LENGTH: f64 = 0.05;
/// Length of the largest force's arrow (m).
const LARGEST_FORCE_LENGTH: f64 = 0.3;
/// Most animation frames written (steps are subsampled evenly above it).
pub const MAX_FRAMES: usize = 2000;

/// Why a trajectory could not be exported.
#[derive(Debug, Error)]
pub enum ViewError {
    /// A step failed.
    #[error("step {step}: {source}")]
    Step {
        /// The step.
        step: usize,
        /// Why.
        source: StepError,
    },
    /// Kinematics failed.
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
    /// Writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// One animation frame: the time, the world pose of each shown object, the contacts.
struct Frame {
    time: f64,
    poses: Vec<Isometry3<f64>>,
    contacts: Vec<SceneContact>,
}

/// What was written.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewSummary {
    /// Animation frames.
    pub frames: usize,
    /// Objects shown (links, bodies, ground).
    pub objects: usize,
    /// Largest number of contacts in a frame (contact slots).
    pub contact_slots: usize,
    /// Bytes of the file.
    pub bytes: usize,
}

/// Runs `sim` for `steps` steps and writes its trajectory to `path` as a `.glb` file
/// (module docs); at most [`MAX_FRAMES`] frames, the steps evenly subsampled.
pub fn export_glb(
    mut sim: Simulator,
    steps: usize,
    dt: f64,
    path: &Path,
) -> Result<ViewSummary, ViewError> {
    let every = steps.div_ceil(MAX_FRAMES).max(1);
    let shown: Vec<usize> = shown_objects(sim.world());
    let mut data = Data::new(&sim.world().model);
    let mut frames = vec![frame_at(
        sim.world(),
        &mut data,
        sim.state().0,
        &shown,
        0.0,
        &[],
    )?];
    for k in 1..=steps {
        let q_start = sim.state().0.clone();
        let record = sim
            .step()
            .map_err(|source| ViewError::Step { step: k, source })?;
        if k.is_multiple_of(every) || k == steps {
            let contacts = frame_contacts(sim.world(), &mut data, &q_start, &record.contacts, dt)?;
            let q = sim.state().0.clone();
            frames.push(frame_at(
                sim.world(),
                &mut data,
                &q,
                &shown,
                record.time,
                &contacts,
            )?);
        }
    }
    let bytes = glb(sim.world(), &shown, &frames);
    write_file(path, &bytes)?;
    Ok(ViewSummary {
        frames: frames.len(),
        objects: shown.len(),
        contact_slots: frames.iter().map(|f| f.contacts.len()).max().unwrap_or(0),
        bytes: bytes.len(),
    })
}

/// What a drawn object is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneRole {
    /// The ground or the terrain.
    Ground,
    /// A link of the robot.
    Link,
    /// Built-in body `k`.
    Body(usize),
}

/// An object of a [`Scene`]: its triangles in world coordinates (m, z up).
#[derive(Debug, Clone)]
pub struct SceneObject {
    /// The object's name.
    pub name: String,
    /// What it is.
    pub role: SceneRole,
    /// Its triangles, world coordinates.
    pub triangles: Vec<[Vector3<f64>; 3]>,
}

/// A contact of a [`Scene`] (world axes).
#[derive(Debug, Clone, Copy)]
pub struct SceneContact {
    /// The contact point (m).
    pub point: Vector3<f64>,
    /// The unit normal.
    pub normal: Vector3<f64>,
    /// The force (N).
    pub force: Vector3<f64>,
}

/// The world at one step: the shown objects (as in the `.glb`) and the step's contacts.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Simulated time (s).
    pub time: f64,
    /// The objects.
    pub objects: Vec<SceneObject>,
    /// The contacts of the step that ended at `time`.
    pub contacts: Vec<SceneContact>,
}

/// Runs `sim` up to the step nearest `time` (at most `steps`) and returns the world there:
/// the configuration after that step and the contacts it solved (none at time 0).
pub fn scene_at(mut sim: Simulator, steps: usize, dt: f64, time: f64) -> Result<Scene, ViewError> {
    let last = ((time / dt).round().max(0.0) as usize).min(steps);
    let mut data = Data::new(&sim.world().model);
    let mut contacts = Vec::new();
    let mut now = 0.0;
    for k in 1..=last {
        let q_start = sim.state().0.clone();
        let record = sim
            .step()
            .map_err(|source| ViewError::Step { step: k, source })?;
        now = record.time;
        if k == last {
            contacts = frame_contacts(sim.world(), &mut data, &q_start, &record.contacts, dt)?;
        }
    }
    let world = sim.world();
    let shown = shown_objects(world);
    let frame = frame_at(world, &mut data, sim.state().0, &shown, now, &contacts)?;
    let objects = shown
        .iter()
        .zip(&frame.poses)
        .map(|(&i, pose)| {
            let object = &world.objects[i];
            let mesh = shape_mesh(&object.shape);
            let corner = |k: u32| {
                pose.transform_point(&mesh.positions[k as usize].into())
                    .coords
            };
            SceneObject {
                name: object.name.clone(),
                role: match object.role {
                    Role::Ground => SceneRole::Ground,
                    Role::Body(k) => SceneRole::Body(k),
                    _ => SceneRole::Link,
                },
                triangles: mesh
                    .triangles
                    .iter()
                    .map(|t| [corner(t[0]), corner(t[1]), corner(t[2])])
                    .collect(),
            }
        })
        .collect();
    Ok(Scene {
        time: now,
        objects,
        contacts: frame.contacts,
    })
}

/// The objects drawn: the ground, the fixed shapes, the robot's link geometry, the bodies.
pub(crate) fn shown_objects(world: &World) -> Vec<usize> {
    world
        .objects
        .iter()
        .enumerate()
        .filter(|(_, o)| {
            matches!(
                o.role,
                Role::Ground | Role::RobotLink | Role::Body(_) | Role::Fixed(_)
            )
        })
        .map(|(i, _)| i)
        .collect()
}

fn frame_at(
    world: &World,
    data: &mut Data,
    q: &nalgebra::DVector<f64>,
    shown: &[usize],
    time: f64,
    contacts: &[SceneContact],
) -> Result<Frame, ViewError> {
    dynamics::forward_kinematics(&world.model, data, q)?;
    let poses = shown
        .iter()
        .map(|&i| data.omi[world.objects[i].joint] * world.objects[i].placement)
        .collect();
    Ok(Frame {
        time,
        poses,
        contacts: contacts.to_vec(),
    })
}

/// The step's contacts with their normal (the pair's contact recomputed at the step's
/// starting configuration, where it was detected) and force `f = R λ / dt`.
pub(crate) fn frame_contacts(
    world: &World,
    data: &mut Data,
    q_start: &nalgebra::DVector<f64>,
    solved: &[ContactRecord],
    dt: f64,
) -> Result<Vec<SceneContact>, DynamicsError> {
    dynamics::forward_kinematics(&world.model, data, q_start)?;
    let index: HashMap<&str, usize> = world
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();
    let settings = ContactSettings {
        margin: f64::MAX,
        ..Default::default()
    };
    let mut contacts = Vec::new();
    for c in solved {
        let point = Vector3::from(c.point);
        let pair = c
            .pair
            .split_once('|')
            .and_then(|(a, b)| Some((*index.get(a)?, *index.get(b)?)));
        let normal = pair
            .and_then(|(a, b)| {
                let (oa, ob) = (&world.objects[a], &world.objects[b]);
                let pose_a = data.omi[oa.joint] * oa.placement;
                let pose_b = data.omi[ob.joint] * ob.placement;
                contact(&oa.shape, &pose_a, &ob.shape, &pose_b, &settings, None)
                    .ok()
                    .flatten()
            })
            .map_or(Vector3::z(), |found| found.normal);
        let frame: Rotation3<f64> = contact_frame(&normal);
        let force = frame * Vector3::from(c.lambda) / dt;
        contacts.push(SceneContact {
            point,
            normal,
            force,
        });
    }
    Ok(contacts)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ViewError> {
    let io = |source| ViewError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = std::fs::File::create(path).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

/// A triangle mesh: positions and counter-clockwise triangles.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mesh {
    pub(crate) positions: Vec<Vector3<f64>>,
    pub(crate) triangles: Vec<[u32; 3]>,
}

/// A UV sphere of `radius` whose upper half is raised by `half_length` and lower half
/// lowered by it (a capsule; a sphere for 0), stretched by `radii` (an ellipsoid).
fn swept_sphere(radius: f64, half_length: f64, radii: Vector3<f64>) -> Mesh {
    let rings = SEGMENTS / 2;
    let mut mesh = Mesh::default();
    for i in 0..=rings {
        let theta = std::f64::consts::PI * i as f64 / rings as f64;
        for j in 0..SEGMENTS {
            let phi = std::f64::consts::TAU * j as f64 / SEGMENTS as f64;
            let unit = Vector3::new(
                theta.sin() * phi.cos(),
                theta.sin() * phi.sin(),
                theta.cos(),
            );
            let shift = if i < rings / 2 || (i == rings / 2 && rings % 2 == 1) {
                half_length
            } else {
                -half_length
            };
            let p = radii.component_mul(&unit) * radius;
            mesh.positions.push(p + Vector3::new(0.0, 0.0, shift));
        }
    }
    let n = SEGMENTS as u32;
    for i in 0..rings as u32 {
        for j in 0..n {
            let (a, b) = (i * n + j, i * n + (j + 1) % n);
            let (c, d) = (a + n, b + n);
            mesh.triangles.push([a, c, b]);
            mesh.triangles.push([b, c, d]);
        }
    }
    mesh
}

/// A prism (cylinder) or pyramid (cone, `top_radius` 0) along z, closed by its caps.
fn frustum(bottom_radius: f64, top_radius: f64, half_length: f64) -> Mesh {
    let mut mesh = Mesh::default();
    let n = SEGMENTS as u32;
    for (radius, z) in [(bottom_radius, -half_length), (top_radius, half_length)] {
        for j in 0..SEGMENTS {
            let phi = std::f64::consts::TAU * j as f64 / SEGMENTS as f64;
            mesh.positions
                .push(Vector3::new(radius * phi.cos(), radius * phi.sin(), z));
        }
    }
    mesh.positions.push(Vector3::new(0.0, 0.0, -half_length));
    mesh.positions.push(Vector3::new(0.0, 0.0, half_length));
    let (bottom, top) = (2 * n, 2 * n + 1);
    for j in 0..n {
        let k = (j + 1) % n;
        mesh.triangles.push([j, k, j + n]);
        mesh.triangles.push([k, k + n, j + n]);
        mesh.triangles.push([bottom, k, j]);
        mesh.triangles.push([top, j + n, k + n]);
    }
    mesh
}

fn cuboid(h: &Vector3<f64>) -> Mesh {
    let mut mesh = Mesh::default();
    for k in 0..8 {
        let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
        mesh.positions
            .push(Vector3::new(s(1) * h.x, s(2) * h.y, s(4) * h.z));
    }
    mesh.triangles = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    mesh
}

/// The triangles of a shape (the ground: a 4 m square at z = 0).
pub(crate) fn shape_mesh(shape: &Shape) -> Mesh {
    let r = shape.radius;
    match &shape.core {
        Core::Point => swept_sphere(r, 0.0, Vector3::repeat(1.0)),
        Core::Segment { half_length } => swept_sphere(r, *half_length, Vector3::repeat(1.0)),
        Core::Cuboid { half_extents } => cuboid(&(half_extents + Vector3::repeat(r))),
        Core::Cylinder {
            radius,
            half_length,
        } => frustum(radius + r, radius + r, half_length + r),
        Core::Cone {
            radius,
            half_length,
        } => frustum(radius + r, 0.0, half_length + r),
        Core::Ellipsoid { radii } => swept_sphere(1.0, 0.0, *radii),
        Core::Hull(hull) => Mesh {
            positions: hull.vertices().to_vec(),
            triangles: hull.faces().to_vec(),
        },
        Core::Halfspace { .. } => cuboid(&Vector3::new(2.0, 2.0, 0.0)),
        Core::HeightField(field) => terrain_mesh(field),
    }
}

/// Most samples per side of a height field's drawn mesh: a larger field is drawn at a
/// coarser stride (the collision stage still uses every sample).
const TERRAIN_SAMPLES_PER_SIDE: usize = 256;

/// The surface of a height field as a grid of triangles, at most
/// [`TERRAIN_SAMPLES_PER_SIDE`] samples per side.
fn terrain_mesh(field: &HeightField) -> Mesh {
    let (nx, ny) = field.counts();
    let stride = nx.max(ny).div_ceil(TERRAIN_SAMPLES_PER_SIDE).max(1);
    let [x0, y0, x1, y1] = field.footprint();
    let (mx, my) = ((nx - 1).div_ceil(stride) + 1, (ny - 1).div_ceil(stride) + 1);
    let step = field.spacing() * stride as f64;
    let mut positions = Vec::with_capacity(mx * my);
    for j in 0..my {
        for i in 0..mx {
            let x = (x0 + i as f64 * step).min(x1);
            let y = (y0 + j as f64 * step).min(y1);
            positions.push(Vector3::new(x, y, field.height_at(x, y).unwrap_or(0.0)));
        }
    }
    let mut triangles = Vec::with_capacity(2 * (mx - 1) * (my - 1));
    for j in 0..my - 1 {
        for i in 0..mx - 1 {
            let k = |a: usize, b: usize| ((j + b) * mx + i + a) as u32;
            triangles.push([k(0, 0), k(1, 0), k(1, 1)]);
            triangles.push([k(0, 0), k(1, 1), k(0, 1)]);
        }
    }
    Mesh {
        positions,
        triangles,
    }
}

/// Little-endian binary buffer with the glTF accessors and buffer views over it.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Buffer {
    /// Adds `values` (f32) as an accessor of `kind` (`SCALAR`, `VEC3`, `VEC4`), with its
    /// per-component min and max (glTF requires them on positions and times).
    fn floats(&mut self, values: &[f32], kind: &str, width: usize) -> usize {
        let offset = self.bytes.len();
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        let count = values.len() / width;
        let mut min = vec![f32::INFINITY; width];
        let mut max = vec![f32::NEG_INFINITY; width];
        for chunk in values.chunks(width) {
            for (k, v) in chunk.iter().enumerate() {
                min[k] = min[k].min(*v);
                max[k] = max[k].max(*v);
            }
        }
        self.view_and_accessor(offset, 5126, count, kind, Some((min, max)))
    }

    fn indices(&mut self, triangles: &[[u32; 3]]) -> usize {
        let offset = self.bytes.len();
        for i in triangles.iter().flatten() {
            self.bytes.extend_from_slice(&i.to_le_bytes());
        }
        self.view_and_accessor(offset, 5125, triangles.len() * 3, "SCALAR", None)
    }

    fn view_and_accessor(
        &mut self,
        offset: usize,
        component: u32,
        count: usize,
        kind: &str,
        bounds: Option<(Vec<f32>, Vec<f32>)>,
    ) -> usize {
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": self.bytes.len() - offset,
        }));
        let mut accessor = json!({
            "bufferView": self.views.len() - 1,
            "componentType": component,
            "count": count,
            "type": kind,
        });
        if let Some((min, max)) = bounds {
            accessor["min"] = json!(min);
            accessor["max"] = json!(max);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

fn flat3(points: impl Iterator<Item = Vector3<f64>>) -> Vec<f32> {
    points
        .flat_map(|p| [p.x as f32, p.y as f32, p.z as f32])
        .collect()
}

fn flat4(rotations: impl Iterator<Item = UnitQuaternion<f64>>) -> Vec<f32> {
    rotations
        .flat_map(|r| {
            let c = r.coords;
            [c.x as f32, c.y as f32, c.z as f32, c.w as f32]
        })
        .collect()
}

/// The rotation taking +z to `direction` (identity for a zero direction).
fn along(direction: &Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::z(), direction).unwrap_or_else(|| {
        if direction.z < 0.0 {
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
        } else {
            UnitQuaternion::identity()
        }
    })
}

/// The glTF document and its binary buffer, packed as a `.glb`.
fn glb(world: &World, shown: &[usize], frames: &[Frame]) -> Vec<u8> {
    let mut buffer = Buffer::default();
    let mut meshes = Vec::new();
    let mut nodes = Vec::new();
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    let materials = json!([
        {"name": "link", "pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.72, 0.78, 1.0]}},
        {"name": "ground", "pbrMetallicRoughness": {"baseColorFactor": [0.45, 0.5, 0.45, 1.0]}},
        {"name": "point", "pbrMetallicRoughness": {"baseColorFactor": [0.9, 0.1, 0.1, 1.0]}},
        {"name": "normal", "pbrMetallicRoughness": {"baseColorFactor": [0.1, 0.3, 0.9, 1.0]}},
        {"name": "force", "pbrMetallicRoughness": {"baseColorFactor": [0.95, 0.6, 0.05, 1.0]}},
    ]);
    let mut add_mesh = |buffer: &mut Buffer, name: &str, mesh: &Mesh, material: usize| {
        let position = buffer.floats(&flat3(mesh.positions.iter().copied()), "VEC3", 3);
        let indices = buffer.indices(&mesh.triangles);
        meshes.push(json!({
            "name": name,
            "primitives": [{"attributes": {"POSITION": position}, "indices": indices, "material": material}],
        }));
        meshes.len() - 1
    };
    let times: Vec<f32> = frames.iter().map(|f| f.time as f32).collect();
    let time_accessor = buffer.floats(&times, "SCALAR", 1);
    let mut animate = |buffer: &mut Buffer, node: usize, path: &str, values: Vec<f32>| {
        let (kind, width) = if path == "rotation" {
            ("VEC4", 4)
        } else {
            ("VEC3", 3)
        };
        let output = buffer.floats(&values, kind, width);
        samplers.push(json!({"input": time_accessor, "output": output, "interpolation": "STEP"}));
        channels
            .push(json!({"sampler": samplers.len() - 1, "target": {"node": node, "path": path}}));
    };
    for (k, &i) in shown.iter().enumerate() {
        let object = &world.objects[i];
        let material = usize::from(object.role == Role::Ground);
        let mesh = add_mesh(
            &mut buffer,
            &object.name,
            &shape_mesh(&object.shape),
            material,
        );
        nodes.push(json!({"name": object.name, "mesh": mesh}));
        let node = nodes.len() - 1;
        let poses = frames.iter().map(|f| f.poses[k]);
        animate(
            &mut buffer,
            node,
            "translation",
            flat3(poses.clone().map(|p| p.translation.vector)),
        );
        animate(
            &mut buffer,
            node,
            "rotation",
            flat4(poses.map(|p| p.rotation)),
        );
    }
    let slots = frames.iter().map(|f| f.contacts.len()).max().unwrap_or(0);
    let largest_force = frames
        .iter()
        .flat_map(|f| f.contacts.iter().map(|c| c.force.norm()))
        .fold(0.0, f64::max);
    let force_scale = if largest_force > 0.0 {
        LARGEST_FORCE_LENGTH / largest_force
    } else {
        0.0
    };
    let point_mesh = add_mesh(
        &mut buffer,
        "contact point",
        &swept_sphere(0.008, 0.0, Vector3::repeat(1.0)),
        2,
    );
    let mut arrow = frustum(0.003, 0.003, 0.5);
    arrow.positions.iter_mut().for_each(|p| p.z += 0.5);
    let normal_mesh = add_mesh(&mut buffer, "contact normal", &arrow, 3);
    let force_mesh = add_mesh(&mut buffer, "contact force", &arrow, 4);
    for slot in 0..slots {
        let at = |f: &Frame| f.contacts.get(slot).copied();
        for (name, mesh) in [
            ("point", point_mesh),
            ("normal", normal_mesh),
            ("force", force_mesh),
        ] {
            nodes.push(json!({"name": format!("contact{slot}/{name}"), "mesh": mesh}));
            let node = nodes.len() - 1;
            let position = frames
                .iter()
                .map(|f| at(f).map_or(Vector3::zeros(), |c| c.point));
            animate(&mut buffer, node, "translation", flat3(position));
            let direction = |c: SceneContact| match name {
                "force" => c.force,
                _ => c.normal,
            };
            let rotation = frames
                .iter()
                .map(|f| at(f).map_or(UnitQuaternion::identity(), |c| along(&direction(c))));
            animate(&mut buffer, node, "rotation", flat4(rotation));
            let length = |c: SceneContact| match name {
                "force" => c.force.norm() * force_scale,
                "normal" => NORMAL_LENGTH,
                _ => 1.0,
            };
            let scale = frames.iter().map(|f| match at(f) {
                Some(c) if name == "point" => Vector3::repeat(length(c)),
                Some(c) => Vector3::new(1.0, 1.0, length(c)),
                None => Vector3::zeros(),
            });
            animate(&mut buffer, node, "scale", flat3(scale));
        }
    }
    let children: Vec<usize> = (0..nodes.len()).collect();
    let z_up = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -std::f64::consts::FRAC_PI_2);
    let c = z_up.coords;
    nodes.push(
        json!({"name": "world (z up)", "rotation": [c.x, c.y, c.z, c.w], "children": children}),
    );
    let root = nodes.len() - 1;
    while !buffer.bytes.len().is_multiple_of(4) {
        buffer.bytes.push(0);
    }
    let document = json!({
        "asset": {"version": "2.0", "generator": concat!("contactbench ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{"nodes": [root]}],
        "nodes": nodes,
        "meshes": meshes,
        "materials": materials,
        "animations": [{"name": "trajectory", "channels": channels, "samplers": samplers}],
        "buffers": [{"byteLength": buffer.bytes.len()}],
        "bufferViews": buffer.views,
        "accessors": buffer.accessors,
    });
    pack_glb(&document, &buffer.bytes)
}

/// The GLB container: a 12-byte header, the JSON chunk (padded with spaces) and the
/// binary chunk (padded with zeros), each chunk 4-byte aligned.
fn pack_glb(document: &Value, binary: &[u8]) -> Vec<u8> {
    let mut text = document.to_string().into_bytes();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let total = 12 + 8 + text.len() + 8 + binary.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(binary.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(binary);
    out
}
