//! Problems for the solver benchmarks, built once outside the timed closures.
//!
//! [`problems`] is the one place that lists them: the robot problems (Solo-12 with 4
//! contacts, Talos with 8 foot contacts) are added here once the robot layer can build a
//! `ContactProblem` from a model.

use contactbench::problem::generators::{cube_on_plane, cube_stack, random_problem};
use contactbench::problem::{ContactProblem, ProblemError};
use nalgebra::DVector;

/// A benchmark problem and the problem of the "previous time step", whose solution is
/// the warm start.
pub struct BenchProblem {
    /// Id used in benchmark names.
    pub name: &'static str,
    /// The problem that is timed.
    pub problem: ContactProblem,
    /// A nearby problem (free velocity shifted), solved once to warm-start `problem`.
    pub previous: ContactProblem,
}

/// The benchmark problems:
/// - `random20`: 20 contacts, `G = J M⁻¹ Jᵀ` with `nv = 72` (seed 20);
/// - `cube`: a 1 kg cube at stiction on 4 corner contacts, pushed by 2 N, dt = 1 ms;
///   previous step pushed by 1.9 N;
/// - `cube-stack`: two 1 kg cubes stacked, 8 contacts, dt = 1 ms.
pub fn problems() -> Result<Vec<BenchProblem>, ProblemError> {
    let random = random_problem(20, 20, 72)?;
    Ok(vec![
        BenchProblem {
            name: "random20",
            previous: shifted(&random, 1e-3)?,
            problem: random,
        },
        BenchProblem {
            name: "cube",
            problem: cube_on_plane(1.0, 0.1, 0.5, 2.0, 1e-3)?,
            previous: cube_on_plane(1.0, 0.1, 0.5, 1.9, 1e-3)?,
        },
        BenchProblem {
            name: "cube-stack",
            problem: cube_stack(1.0, 1.0, 0.1, 0.5, 1e-3)?,
            previous: shifted(&cube_stack(1.0, 1.0, 0.1, 0.5, 1e-3)?, 1e-5)?,
        },
    ])
}

/// The same problem with its free velocity shifted by `delta` on every normal row.
fn shifted(p: &ContactProblem, delta: f64) -> Result<ContactProblem, ProblemError> {
    let shift = DVector::from_fn(p.dim(), |i, _| if i % 3 == 2 { delta } else { 0.0 });
    ContactProblem::new(
        p.delassus().clone(),
        p.free_velocity() + shift,
        p.mu().clone(),
        p.compliance().cloned(),
    )
}
