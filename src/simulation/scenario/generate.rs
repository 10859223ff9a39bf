//! Generated worlds: bodies laid out from a few parameters (`world.generate`), so that
//! the count of bodies is one field that `--set` can sweep
//! (`--set world.generate.columns.nx=4`, `--set world.generate.clutter.count=30`). The
//! generated bodies are appended to `world.bodies`, bottom layer first (a box's corners
//! touch the bodies listed before it), with their initial states, and the walls or table
//! they need to `world.fixed`, before the scenario's other checks run.
//!
//! ```yaml
//! world:
//!   generate:
//!     columns: {nx: 3, ny: 3, height: 3, size: 0.1, gap: 0.02, mass: 1.0}
//!   friction: 0.4
//! ```
//!
//! Every generated box of a pile rests on the ground or on the boxes below it at the start
//! (the distance between touching faces is 0). Each box carries contacts at its corners:
//! with `corner_radius > 0` the corner spheres' lowest points lie `corner_radius` inside
//! the face below them, so that a box stacked on a box of the same size touches its top
//! face, not its edges. Poured balls start apart on a jittered lattice above the box's
//! floor; a cluttered table's objects rest on its top, their footprints apart. Both are
//! deterministic for their `seed`.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::check::{too_many_bodies_message, LENGTH_RANGE, MASS_RANGE, MAX_BODIES};
use super::{
    BodySpec, BodyState, Clutter, FixedSpec, Generated, Scenario, ShapeSpec, SpheresInBox,
};

/// Largest count along one side of a generated layout.
const MAX_SIDE: usize = 100;

/// Pitch of the poured balls' lattice, in radii: with the jitter of [`JITTER`] radii on
/// each axis, at least `0.1 r` lies between two balls and `0.05 r` between a ball and a
/// wall.
const LATTICE_PITCH: f64 = 2.5;
/// Largest jitter of a poured ball on each axis, in radii.
const JITTER: f64 = 0.2;
/// Height of the lowest layer of poured balls' centres above the floor, in radii.
const FIRST_LAYER: f64 = 1.5;

/// Thickness of the table top (m).
const TABLE_THICKNESS: f64 = 0.04;
/// Tries at placing one object of a cluttered table before the layout is refused.
const PLACEMENT_TRIES: usize = 1000;
/// Clearance between two objects' footprints on the table, in object sizes.
const CLEARANCE: f64 = 0.01;

/// A body of a generated layout: its name, shape, mass, corner radius (boxes) and pose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub(crate) name: String,
    pub(crate) shape: ShapeSpec,
    pub(crate) mass: f64,
    pub(crate) corner_radius: f64,
    pub(crate) centre: [f64; 3],
    pub(crate) orientation: [f64; 4],
}

/// What a generated world adds: its bodies (bottom first) and its fixed shapes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    pub(crate) bodies: Vec<Placed>,
    pub(crate) fixed: Vec<FixedSpec>,
}

/// The common parameters of a layout of cubes.
struct CubeSpec {
    size: f64,
    gap: f64,
    mass: f64,
    corner_radius: f64,
}

/// A `(field, message)` error of a generated layout's parameters.
type FieldError = (String, String);

const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

impl Generated {
    /// The number of bodies it generates.
    pub fn count(&self) -> usize {
        match self {
            Generated::Columns(c) => c.nx * c.ny * c.height,
            Generated::Pyramid(p) => (1..=p.base).map(|n| n * n).sum(),
            Generated::SpheresInBox(s) => s.count,
            Generated::Clutter(c) => c.count,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Generated::Columns(_) => "columns",
            Generated::Pyramid(_) => "pyramid",
            Generated::SpheresInBox(_) => "spheres_in_box",
            Generated::Clutter(_) => "clutter",
        }
    }

    fn field(&self, name: &str) -> String {
        format!("world.generate.{}.{name}", self.kind())
    }

    /// Checks the parameters; the error is `(field, message)`.
    pub fn check(&self) -> Result<(), FieldError> {
        match self {
            Generated::Columns(_) | Generated::Pyramid(_) => self.check_cubes()?,
            Generated::SpheresInBox(s) => self.check_spheres_in_box(s)?,
            Generated::Clutter(c) => self.check_clutter(c)?,
        }
        let count = self.count();
        if count > MAX_BODIES {
            return Err(("world.generate".into(), too_many_bodies_message(count)));
        }
        Ok(())
    }

    fn check_cubes(&self) -> Result<(), FieldError> {
        let counts: Vec<(&str, usize)> = match self {
            Generated::Columns(c) => vec![("nx", c.nx), ("ny", c.ny), ("height", c.height)],
            Generated::Pyramid(p) => vec![("base", p.base)],
            _ => Vec::new(),
        };
        for (name, n) in counts {
            if !(1..=MAX_SIDE).contains(&n) {
                return Err((
                    self.field(name),
                    format!("{n}: must lie in [1, {MAX_SIDE}]"),
                ));
            }
        }
        let cube = self.cube();
        self.check_length("size", cube.size)?;
        self.check_mass(cube.mass)?;
        if !(cube.corner_radius >= 0.0 && cube.corner_radius < 0.5 * cube.size) {
            return Err((
                self.field("corner_radius"),
                format!(
                    "{:e}: must lie in [0, size/2) = [0, {:e}) m",
                    cube.corner_radius,
                    0.5 * cube.size
                ),
            ));
        }
        let gap_limit = match self {
            Generated::Pyramid(_) => cube.size - 2.0 * cube.corner_radius,
            _ => LENGTH_RANGE.1,
        };
        if !(cube.gap >= 0.0 && cube.gap < gap_limit) {
            return Err((
                self.field("gap"),
                format!("{:e}: must lie in [0, {gap_limit:e}) m", cube.gap),
            ));
        }
        Ok(())
    }

    fn check_spheres_in_box(&self, s: &SpheresInBox) -> Result<(), FieldError> {
        self.check_count(s.count)?;
        self.check_length("radius", s.radius)?;
        self.check_mass(s.mass)?;
        self.check_length("width", s.width)?;
        if s.width < LATTICE_PITCH * s.radius {
            return Err((
                self.field("width"),
                format!(
                    "{:e}: must be at least {LATTICE_PITCH} radius = {:e} m (one ball per \
                     layer on the lattice)",
                    s.width,
                    LATTICE_PITCH * s.radius
                ),
            ));
        }
        Ok(())
    }

    fn check_clutter(&self, c: &Clutter) -> Result<(), FieldError> {
        self.check_count(c.count)?;
        self.check_length("size", c.size)?;
        self.check_mass(c.mass)?;
        self.check_length("table_height", c.table_height)?;
        for side in c.table {
            self.check_length("table", side)?;
            if side < 2.0 * c.size {
                return Err((
                    self.field("table"),
                    format!(
                        "side {side:e}: must be at least twice the objects' size, {:e} m",
                        2.0 * c.size
                    ),
                ));
            }
        }
        Ok(())
    }

    fn check_count(&self, count: usize) -> Result<(), FieldError> {
        if !(1..=MAX_BODIES).contains(&count) {
            return Err((
                self.field("count"),
                format!("{count}: must lie in [1, {MAX_BODIES}]"),
            ));
        }
        Ok(())
    }

    fn check_length(&self, name: &str, value: f64) -> Result<(), FieldError> {
        let (lo, hi) = LENGTH_RANGE;
        if !(value >= lo && value <= hi) {
            return Err((
                self.field(name),
                format!("{value:e}: must lie in [{lo:e}, {hi:e}] m"),
            ));
        }
        Ok(())
    }

    fn check_mass(&self, mass: f64) -> Result<(), FieldError> {
        let (lo, hi) = MASS_RANGE;
        if !(mass >= lo && mass <= hi) {
            return Err((
                self.field("mass"),
                format!("{mass:e}: must lie in [{lo:e}, {hi:e}] kg"),
            ));
        }
        Ok(())
    }

    fn cube(&self) -> CubeSpec {
        let (size, gap, mass, corner_radius) = match self {
            Generated::Columns(c) => (c.size, c.gap, c.mass, c.corner_radius),
            Generated::Pyramid(p) => (p.size, p.gap, p.mass, p.corner_radius),
            Generated::SpheresInBox(_) | Generated::Clutter(_) => (0.0, 0.0, 0.0, None),
        };
        CubeSpec {
            size,
            gap,
            mass,
            corner_radius: corner_radius.unwrap_or(size / 20.0),
        }
    }

    /// The bodies (bottom layer first) and fixed shapes of a checked layout; an error
    /// `(field, message)` when a cluttered table cannot hold its objects apart.
    pub(crate) fn layout(&self) -> Result<Layout, FieldError> {
        match self {
            Generated::Columns(_) | Generated::Pyramid(_) => Ok(Layout {
                bodies: self.cube_layout(),
                fixed: Vec::new(),
            }),
            Generated::SpheresInBox(s) => Ok(spheres_in_box(s)),
            Generated::Clutter(c) => clutter(c).map_err(|m| (self.field("count"), m)),
        }
    }

    /// The cubes' names and centres, bottom layer first.
    fn cube_layout(&self) -> Vec<Placed> {
        let cube = self.cube();
        let pitch = cube.size + cube.gap;
        let h = 0.5 * cube.size;
        let mut placed = Vec::with_capacity(self.count());
        let mut push = |name: String, centre: [f64; 3]| {
            placed.push(Placed {
                name,
                shape: ShapeSpec::Box([cube.size; 3]),
                mass: cube.mass,
                corner_radius: cube.corner_radius,
                centre,
                orientation: IDENTITY,
            });
        };
        match self {
            Generated::Columns(c) => {
                let x0 = -0.5 * (c.nx - 1) as f64 * pitch;
                let y0 = -0.5 * (c.ny - 1) as f64 * pitch;
                for k in 0..c.height {
                    for iy in 0..c.ny {
                        for ix in 0..c.nx {
                            push(
                                format!("cube_x{ix}_y{iy}_z{k}"),
                                [
                                    x0 + ix as f64 * pitch,
                                    y0 + iy as f64 * pitch,
                                    h + k as f64 * cube.size,
                                ],
                            );
                        }
                    }
                }
            }
            Generated::Pyramid(p) => {
                for k in 0..p.base {
                    let n = p.base - k;
                    let origin = -0.5 * (n - 1) as f64 * pitch;
                    for iy in 0..n {
                        for ix in 0..n {
                            push(
                                format!("cube_x{ix}_y{iy}_z{k}"),
                                [
                                    origin + ix as f64 * pitch,
                                    origin + iy as f64 * pitch,
                                    h + k as f64 * cube.size,
                                ],
                            );
                        }
                    }
                }
            }
            Generated::SpheresInBox(_) | Generated::Clutter(_) => {}
        }
        placed
    }
}

/// A number drawn uniformly in `[lo, hi]`.
fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}

/// The balls on a lattice of pitch `2.5 r`, `n × n` per layer (`n = ⌊width / pitch⌋`),
/// layers from `1.5 r` above the floor, each ball moved by up to `0.2 r` on each axis;
/// four walls `r` thick around the `width × width` floor, as high as the lattice.
fn spheres_in_box(s: &SpheresInBox) -> Layout {
    let r = s.radius;
    let pitch = LATTICE_PITCH * r;
    let per_side = ((s.width / pitch).floor() as usize).max(1);
    let per_layer = per_side * per_side;
    let layers = s.count.div_ceil(per_layer);
    let origin = -0.5 * (per_side - 1) as f64 * pitch;
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let bodies = (0..s.count)
        .map(|i| {
            let (k, cell) = (i / per_layer, i % per_layer);
            let lattice = [
                origin + (cell % per_side) as f64 * pitch,
                origin + (cell / per_side) as f64 * pitch,
                FIRST_LAYER * r + k as f64 * pitch,
            ];
            Placed {
                name: format!("ball_{i}"),
                shape: ShapeSpec::Sphere(r),
                mass: s.mass,
                corner_radius: 0.0,
                centre: lattice.map(|x| x + uniform(&mut rng, -JITTER * r, JITTER * r)),
                orientation: IDENTITY,
            }
        })
        .collect();
    let height = FIRST_LAYER * r + layers as f64 * pitch;
    Layout {
        bodies,
        fixed: box_walls(s.width, r, height),
    }
}

/// Four walls of thickness `t` and height `height` on the ground around the square
/// `[−w/2, w/2]²`.
fn box_walls(w: f64, t: f64, height: f64) -> Vec<FixedSpec> {
    let offset = 0.5 * (w + t);
    let wall = |name: &str, size: [f64; 3], x: f64, y: f64| FixedSpec {
        name: name.into(),
        shape: ShapeSpec::Box(size),
        position: [x, y, 0.5 * height],
        orientation: IDENTITY,
    };
    vec![
        wall("wall_x_min", [t, w, height], -offset, 0.0),
        wall("wall_x_max", [t, w, height], offset, 0.0),
        wall("wall_y_min", [w + 2.0 * t, t, height], 0.0, -offset),
        wall("wall_y_max", [w + 2.0 * t, t, height], 0.0, offset),
    ]
}

/// An object of a cluttered table before it is placed: its shape and the radius of the
/// circle that holds its footprint.
struct Item {
    shape: ShapeSpec,
    footprint: f64,
    half_height: f64,
}

/// A box (each side in `[size/2, size]`) or a ball (diameter in `[size/2, size]`), one
/// chance in two.
fn draw_item(rng: &mut ChaCha8Rng, size: f64) -> Item {
    if rng.random::<bool>() {
        let sides = [(); 3].map(|_| uniform(rng, 0.5 * size, size));
        Item {
            shape: ShapeSpec::Box(sides),
            footprint: 0.5 * sides[0].hypot(sides[1]),
            half_height: 0.5 * sides[2],
        }
    } else {
        let radius = 0.5 * uniform(rng, 0.5 * size, size);
        Item {
            shape: ShapeSpec::Sphere(radius),
            footprint: radius,
            half_height: radius,
        }
    }
}

/// The table top (its upper face at `table_height`) and the objects resting on it: each
/// drawn by [`draw_item`], turned about z at random (boxes), and placed at a uniform
/// random point of the top where its footprint stays on the table and apart from the
/// footprints already placed; an error when [`PLACEMENT_TRIES`] points all fail.
fn clutter(c: &Clutter) -> Result<Layout, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let [lx, ly] = c.table;
    let top = c.table_height;
    let mut placed: Vec<([f64; 2], f64)> = Vec::with_capacity(c.count);
    let mut bodies = Vec::with_capacity(c.count);
    for i in 0..c.count {
        let item = draw_item(&mut rng, c.size);
        let yaw = uniform(&mut rng, 0.0, std::f64::consts::TAU);
        let (hx, hy) = (0.5 * lx - item.footprint, 0.5 * ly - item.footprint);
        let gap = CLEARANCE * c.size;
        let free = |p: [f64; 2], placed: &[([f64; 2], f64)]| {
            placed
                .iter()
                .all(|(q, f)| (p[0] - q[0]).hypot(p[1] - q[1]) >= f + item.footprint + gap)
        };
        let spot = (0..PLACEMENT_TRIES)
            .map(|_| [uniform(&mut rng, -hx, hx), uniform(&mut rng, -hy, hy)])
            .find(|p| free(*p, &placed))
            .ok_or_else(|| {
                format!(
                    "{}: object {i} found no free place on the {lx} × {ly} m table in \
                     {PLACEMENT_TRIES} tries (use fewer objects, a smaller size or a larger \
                     table)",
                    c.count
                )
            })?;
        placed.push((spot, item.footprint));
        let (kind, corner_radius) = match item.shape {
            ShapeSpec::Box(sides) => (
                "box",
                sides.iter().fold(f64::INFINITY, |a, b| a.min(*b)) / 20.0,
            ),
            ShapeSpec::Sphere(_) => ("ball", 0.0),
        };
        let half = 0.5 * yaw;
        bodies.push(Placed {
            name: format!("{kind}_{i}"),
            shape: item.shape,
            mass: c.mass,
            corner_radius,
            centre: [spot[0], spot[1], top + item.half_height],
            orientation: [0.0, 0.0, half.sin(), half.cos()],
        });
    }
    let table = FixedSpec {
        name: "table".into(),
        shape: ShapeSpec::Box([lx, ly, TABLE_THICKNESS]),
        position: [0.0, 0.0, top - 0.5 * TABLE_THICKNESS],
        orientation: IDENTITY,
    };
    Ok(Layout {
        bodies,
        fixed: vec![table],
    })
}

impl Scenario {
    /// Appends the bodies of `world.generate` to `world.bodies`, their states to
    /// `initial_state.bodies` and their fixed shapes to `world.fixed`; `world.generate`
    /// is then empty.
    pub(super) fn expand_generated(&mut self) -> Result<(), super::ScenarioError> {
        let Some(generated) = self.world.generate.take() else {
            return Ok(());
        };
        let layout = generated
            .check()
            .and_then(|()| generated.layout())
            .map_err(|(field, message)| self.invalid(&field, message))?;
        for placed in layout.bodies {
            self.world.bodies.push(BodySpec {
                name: placed.name.clone(),
                shape: placed.shape,
                mass: placed.mass,
                corner_radius: placed.corner_radius,
            });
            self.initial_state.bodies.insert(
                placed.name,
                BodyState {
                    position: placed.centre,
                    orientation: placed.orientation,
                    velocity: [0.0; 6],
                },
            );
        }
        self.world.fixed.extend(layout.fixed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::scenario::{Columns, Pyramid};

    fn columns(nx: usize, ny: usize, height: usize) -> Generated {
        Generated::Columns(Columns {
            nx,
            ny,
            height,
            size: 0.1,
            gap: 0.02,
            mass: 1.0,
            corner_radius: None,
        })
    }

    #[test]
    fn columns_stack_cubes_face_on_face_bottom_first() {
        let layout = columns(2, 1, 2).cube_layout();
        let z: Vec<f64> = layout.iter().map(|p| p.centre[2]).collect();
        assert_eq!(
            z,
            vec![0.05, 0.05, 0.15000000000000002, 0.15000000000000002]
        );
        assert!((layout[1].centre[0] - layout[0].centre[0] - 0.12).abs() < 1e-15);
        assert_eq!(layout[0].centre[0], -layout[1].centre[0]);
    }

    #[test]
    fn a_pyramid_counts_the_squares_of_its_layers() {
        let pyramid = Generated::Pyramid(Pyramid {
            base: 3,
            size: 0.1,
            gap: 0.0,
            mass: 1.0,
            corner_radius: None,
        });
        assert_eq!(pyramid.count(), 14);
        let layout = pyramid.cube_layout();
        assert_eq!(layout.len(), 14);
        let top = &layout[13];
        assert!(top.centre[0].abs() < 1e-15 && (top.centre[2] - 0.25).abs() < 1e-15);
    }

    #[test]
    fn too_many_generated_bodies_are_refused_with_the_memory_estimate() {
        let Err((field, message)) = columns(20, 20, 8).check() else {
            panic!("3200 bodies accepted");
        };
        assert_eq!(field, "world.generate");
        assert!(message.contains("at most 2985"), "{message}");
        assert!(columns(20, 20, 7).check().is_ok());
    }
}
