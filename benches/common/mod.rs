//! Problems for the solver benchmarks, built once outside the timed closures.
//!
//! [`problems`] is the one place that lists them. The robot problems come from the shipped
//! scenarios, simulated with ncp-admm up to a step where the robot stands on its feet.

use std::path::Path;

use contactbench::problem::generators::{cube_on_plane, cube_stack, random_problem};
use contactbench::problem::{ContactProblem, ProblemError};
use contactbench::simulation::{runner::simulator, Scenario};
use contactbench::solvers::SolverSpec;
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
/// - `cube-stack`: two 1 kg cubes stacked, 8 contacts, dt = 1 ms;
/// - `solo12`: Solo-12 standing (`scenarios/solo_standing.yaml`), 4 foot contacts, the
///   problem of step 200 (previous: step 199);
/// - `talos`: Talos standing (`scenarios/talos_push.yaml`), 8 sole-corner contacts, the
///   problem of step 150, before the push (previous: step 149).
pub fn problems() -> Result<Vec<BenchProblem>, String> {
    let random = random_problem(20, 20, 72).map_err(|e| e.to_string())?;
    let mut list = generated(random).map_err(|e| e.to_string())?;
    list.push(scenario_problem(
        "solo12",
        "scenarios/solo_standing.yaml",
        200,
    )?);
    list.push(scenario_problem("talos", "scenarios/talos_push.yaml", 150)?);
    Ok(list)
}

/// The generated problems (random and cubes).
fn generated(random: ContactProblem) -> Result<Vec<BenchProblem>, ProblemError> {
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

/// The problems of steps `step − 1` and `step` of a scenario simulated with ncp-admm
/// (`eps_abs = 1e-8`).
fn scenario_problem(name: &'static str, file: &str, step: usize) -> Result<BenchProblem, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let scenario = Scenario::load(&path, &[]).map_err(|e| e.to_string())?;
    let spec: SolverSpec = "ncp-admm:stop=absolute,eps_abs=1e-8,max_iter=1000"
        .parse()
        .map_err(|e: contactbench::solvers::SolverError| e.to_string())?;
    let mut sim = simulator(&scenario, &spec).map_err(|e| e.to_string())?;
    let mut previous = None;
    for k in 1..=step {
        sim.step().map_err(|e| format!("{file}, step {k}: {e}"))?;
        if k == step - 1 {
            previous = sim.last_solution().map(|(p, _, _)| p.clone());
        }
    }
    let problem = sim.last_solution().map(|(p, _, _)| p.clone());
    match (problem, previous) {
        (Some(problem), Some(previous)) => Ok(BenchProblem {
            name,
            problem,
            previous,
        }),
        _ => Err(format!("{file}: no contact at step {step}")),
    }
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
