//! The ADMM solvers keep ρ and the dual variable between warm-started solves. After a solve
//! that ended at its iteration cap (ρ pushed by the adaptive rule, `z` not a dual answer),
//! the next warm-started solve — on the same, a nearby or a differently scaled problem —
//! must not diverge or fail (reported as "diverged at iteration 1" on `cube_stack` with
//! `ncp-admm:stop=absolute,eps_abs=1e-12,max_iter=100`).

use contactbench::problem::generators::{cube_stack, random_problem};
use contactbench::problem::ContactProblem;
use contactbench::solvers::{Criterion, SolveStatus, SolverId, SolverSettings};
use serde_json::Map;

fn scaled(p: &ContactProblem, delassus: f64, velocity: f64) -> ContactProblem {
    ContactProblem::new(
        p.delassus() * delassus,
        p.free_velocity() * velocity,
        p.mu().clone(),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Stacks of mass ratio 1 to 1e8 and random 8-contact problems, each also with `G` or
/// `g` rescaled by 1e±6 (the next step's problem may differ by that much).
fn problems() -> Vec<(String, ContactProblem)> {
    let mut base = Vec::new();
    for ratio in [1.0, 1e6, 1e8] {
        let p = cube_stack(1e-3, ratio, 0.1, 0.9, 1e-3).unwrap_or_else(|e| panic!("{e}"));
        base.push((format!("stack {ratio:e}"), p));
    }
    for seed in 0..2 {
        let p = random_problem(seed, 8, 30).unwrap_or_else(|e| panic!("{e}"));
        base.push((format!("random {seed}"), p));
    }
    let mut all = Vec::new();
    for (name, p) in &base {
        for (a, b) in [(1.0, 1.0), (1e-6, 1.0), (1e6, 1.0), (1.0, 1e-6), (1.0, 1e6)] {
            all.push((format!("{name} G×{a:e} g×{b:e}"), scaled(p, a, b)));
        }
    }
    all
}

#[test]
fn a_warm_start_after_an_unconverged_solve_does_not_diverge() {
    let problems = problems();
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        for max_iter in [1, 100] {
            let settings = SolverSettings {
                stop: Criterion::Absolute,
                eps_abs: 1e-12,
                max_iter,
                ..SolverSettings::default()
            };
            for (first_name, first) in &problems {
                for (next_name, next) in problems.iter().filter(|(_, p)| p.dim() == first.dim()) {
                    let mut solver = id
                        .build(settings.clone(), &Map::new())
                        .unwrap_or_else(|e| panic!("{e}"));
                    let before = solver.solve(first, None).unwrap_or_else(|e| panic!("{e}"));
                    let after = solver
                        .solve(next, Some(&before.lambda))
                        .unwrap_or_else(|e| panic!("{e}"));
                    for report in [&before, &after] {
                        assert!(
                            matches!(
                                report.status,
                                SolveStatus::Converged | SolveStatus::MaxIterations
                            ),
                            "{id} max_iter {max_iter}: {first_name} then {next_name}: {}",
                            report.status
                        );
                    }
                }
            }
        }
    }
}

/// A cold solve does not depend on what the solver solved before: the power iteration
/// starts from the kept eigenvector only in a warm-started solve (like ρ and `z`), so a
/// corpus split over threads gives the same answers whatever each thread's solver saw.
#[test]
fn a_cold_solve_is_the_same_after_other_problems_of_its_size() {
    let settings = SolverSettings::default();
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        for seed in 0..3 {
            let target = random_problem(100 + seed, 8, 30).unwrap_or_else(|e| panic!("{e}"));
            let other = random_problem(200 + seed, 8, 30).unwrap_or_else(|e| panic!("{e}"));
            let fresh = id
                .build(settings.clone(), &Map::new())
                .unwrap_or_else(|e| panic!("{e}"))
                .solve(&target, None)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut used = id
                .build(settings.clone(), &Map::new())
                .unwrap_or_else(|e| panic!("{e}"));
            let warm = used.solve(&other, None).unwrap_or_else(|e| panic!("{e}"));
            // A warm-started solve of the other problem moves the kept eigenvector.
            used.solve(&other, Some(&(warm.lambda * 0.5)))
                .unwrap_or_else(|e| panic!("{e}"));
            let after = used.solve(&target, None).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(fresh.iterations, after.iterations, "{id} seed {seed}");
            assert_eq!(fresh.lambda, after.lambda, "{id} seed {seed}");
        }
    }
}
