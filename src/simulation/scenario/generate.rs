//! Generated worlds: bodies laid out from a few parameters (`world.generate`), so that
//! the count of bodies is one field that `--set` can sweep
//! (`--set world.generate.columns.nx=4`). The generated boxes are appended to
//! `world.bodies`, bottom layer first (a box's corners touch the bodies listed before
//! it), with their initial states, before the scenario's other checks run.
//!
//! ```yaml
//! world:
//!   generate:
//!     columns: {nx: 3, ny: 3, height: 3, size: 0.1, gap: 0.02, mass: 1.0}
//!   friction: 0.4
//! ```
//!
//! Every generated box rests on the ground or on the boxes below it at the start (the
//! distance between touching faces is 0). Each box carries contacts at its corners:
//! with `corner_radius > 0` the corner spheres' lowest points lie `corner_radius` inside
//! the face below them, so that a box stacked on a box of the same size touches its top
//! face, not its edges.

use super::check::{too_many_bodies_message, LENGTH_RANGE, MASS_RANGE, MAX_BODIES};
use super::{BodySpec, BodyState, Generated, Scenario, ShapeSpec};

/// Largest count along one side of a generated layout.
const MAX_SIDE: usize = 100;

/// A cube of a generated layout: its name, centre and size.
struct Placed {
    name: String,
    centre: [f64; 3],
}

/// The common parameters of a layout of cubes.
struct CubeSpec {
    size: f64,
    gap: f64,
    mass: f64,
    corner_radius: f64,
}

impl Generated {
    /// The number of bodies it generates.
    pub fn count(&self) -> usize {
        match self {
            Generated::Columns(c) => c.nx * c.ny * c.height,
            Generated::Pyramid(p) => (1..=p.base).map(|n| n * n).sum(),
        }
    }

    fn cube(&self) -> CubeSpec {
        let (size, gap, mass, corner_radius) = match self {
            Generated::Columns(c) => (c.size, c.gap, c.mass, c.corner_radius),
            Generated::Pyramid(p) => (p.size, p.gap, p.mass, p.corner_radius),
        };
        CubeSpec {
            size,
            gap,
            mass,
            corner_radius: corner_radius.unwrap_or(size / 20.0),
        }
    }

    fn field(&self, name: &str) -> String {
        let kind = match self {
            Generated::Columns(_) => "columns",
            Generated::Pyramid(_) => "pyramid",
        };
        format!("world.generate.{kind}.{name}")
    }

    /// Checks the parameters; the error is `(field, message)`.
    pub fn check(&self) -> Result<(), (String, String)> {
        let counts: Vec<(&str, usize)> = match self {
            Generated::Columns(c) => vec![("nx", c.nx), ("ny", c.ny), ("height", c.height)],
            Generated::Pyramid(p) => vec![("base", p.base)],
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
        let (l_lo, l_hi) = LENGTH_RANGE;
        if !(cube.size >= l_lo && cube.size <= l_hi) {
            return Err((
                self.field("size"),
                format!("{:e}: must lie in [{l_lo:e}, {l_hi:e}] m", cube.size),
            ));
        }
        let (m_lo, m_hi) = MASS_RANGE;
        if !(cube.mass >= m_lo && cube.mass <= m_hi) {
            return Err((
                self.field("mass"),
                format!("{:e}: must lie in [{m_lo:e}, {m_hi:e}] kg", cube.mass),
            ));
        }
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
            Generated::Columns(_) => l_hi,
            Generated::Pyramid(_) => cube.size - 2.0 * cube.corner_radius,
        };
        if !(cube.gap >= 0.0 && cube.gap < gap_limit) {
            return Err((
                self.field("gap"),
                format!("{:e}: must lie in [0, {gap_limit:e}) m", cube.gap),
            ));
        }
        let count = self.count();
        if count > MAX_BODIES {
            return Err(("world.generate".into(), too_many_bodies_message(count)));
        }
        Ok(())
    }

    /// The cubes' names and centres, bottom layer first.
    fn layout(&self) -> Vec<Placed> {
        let cube = self.cube();
        let pitch = cube.size + cube.gap;
        let h = 0.5 * cube.size;
        let mut placed = Vec::with_capacity(self.count());
        match self {
            Generated::Columns(c) => {
                let x0 = -0.5 * (c.nx - 1) as f64 * pitch;
                let y0 = -0.5 * (c.ny - 1) as f64 * pitch;
                for k in 0..c.height {
                    for iy in 0..c.ny {
                        for ix in 0..c.nx {
                            placed.push(Placed {
                                name: format!("cube_x{ix}_y{iy}_z{k}"),
                                centre: [
                                    x0 + ix as f64 * pitch,
                                    y0 + iy as f64 * pitch,
                                    h + k as f64 * cube.size,
                                ],
                            });
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
                            placed.push(Placed {
                                name: format!("cube_x{ix}_y{iy}_z{k}"),
                                centre: [
                                    origin + ix as f64 * pitch,
                                    origin + iy as f64 * pitch,
                                    h + k as f64 * cube.size,
                                ],
                            });
                        }
                    }
                }
            }
        }
        placed
    }
}

impl Scenario {
    /// Appends the bodies of `world.generate` to `world.bodies` and their states to
    /// `initial_state.bodies`; `world.generate` is then empty.
    pub(super) fn expand_generated(&mut self) -> Result<(), super::ScenarioError> {
        let Some(generated) = self.world.generate.take() else {
            return Ok(());
        };
        generated
            .check()
            .map_err(|(field, message)| self.invalid(&field, message))?;
        let cube = generated.cube();
        for placed in generated.layout() {
            self.world.bodies.push(BodySpec {
                name: placed.name.clone(),
                shape: ShapeSpec::Box([cube.size; 3]),
                mass: cube.mass,
                corner_radius: cube.corner_radius,
            });
            self.initial_state.bodies.insert(
                placed.name,
                BodyState {
                    position: placed.centre,
                    orientation: [0.0, 0.0, 0.0, 1.0],
                    velocity: [0.0; 6],
                },
            );
        }
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
        let layout = columns(2, 1, 2).layout();
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
        let layout = pyramid.layout();
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
