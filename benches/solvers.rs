//! Solve time per solver, cold and warm, at `eps_abs = 1e-6`:
//! `solve/<solver>/<problem>/<cold|warm>`. Every timed solve starts from a reset solver
//! (no kept ρ or factorization: in a simulation `G` changes every step); "warm" starts
//! from the solution of the previous step's problem (see `common::problems`). Solvers that
//! fail to build are skipped with a message; iteration counts and statuses are printed
//! once per case, since criterion only records time.
//!
//! `per_iteration/ncp-admm/random<N>/cold`: ncp-admm cold on the random problems of
//! [`PER_ITERATION_PROBLEMS`] (20, 40, 80 contacts), at the absolute criterion 1e-6 as
//! `tools/pinocchio_solvers.py` runs Pinocchio's ADMM; the iterations and the answer's
//! criterion are printed, and time per iteration is the median over the iterations.
//! The same problems as files: `cargo run --release --example random_problem -- SEED N NV
//! FILE` with the (seed, contacts, nv) of the table.

mod common;

use std::hint::black_box;
use std::time::Duration;

use contactbench::problem::generators::random_problem;
use contactbench::solvers::admm::AdmmParams;
use contactbench::solvers::ncp_admm::NcpAdmmSolver;
use contactbench::solvers::{ContactSolver, SolverId, SolverSettings};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Map;

fn bench_solvers(c: &mut Criterion) {
    let problems = match common::problems() {
        Ok(p) => p,
        Err(err) => {
            eprintln!("cannot build the benchmark problems: {err}");
            return;
        }
    };
    // The absolute criterion at 1e-6, as measured in the README's table.
    let settings = SolverSettings {
        stop: contactbench::solvers::Criterion::Absolute,
        eps_abs: 1e-6,
        ..SolverSettings::default()
    };
    let mut group = c.benchmark_group("solve");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for id in SolverId::ALL {
        let mut solver = match id.build(settings.clone(), &Map::new()) {
            Ok(s) => s,
            Err(err) => {
                eprintln!("skipping {id}: {err}");
                continue;
            }
        };
        for bench in &problems {
            solver.reset();
            let warm = match solver.solve(&bench.previous, None) {
                Ok(r) => r.lambda,
                Err(err) => {
                    eprintln!("skipping {id} on {}: {err}", bench.name);
                    continue;
                }
            };
            for (mode, start) in [("cold", None), ("warm", Some(&warm))] {
                solver.reset();
                match solver.solve(&bench.problem, start) {
                    Ok(r) => eprintln!(
                        "{id}/{}/{mode}: {} after {} iterations",
                        bench.name, r.status, r.iterations
                    ),
                    Err(err) => {
                        eprintln!("skipping {id}/{}/{mode}: {err}", bench.name);
                        continue;
                    }
                }
                group.bench_function(format!("{id}/{}/{mode}", bench.name), |b| {
                    b.iter(|| {
                        solver.reset();
                        black_box(solver.solve(black_box(&bench.problem), start))
                    })
                });
            }
        }
    }
    group.finish();
}

/// (seed, contacts, nv) of the random problems timed per iteration against Pinocchio:
/// `nv = 3.6 n`, so that `G = J M⁻¹ Jᵀ` is definite, as for `random20`.
const PER_ITERATION_PROBLEMS: [(u64, usize, usize); 3] =
    [(20, 20, 72), (40, 40, 144), (80, 80, 288)];

fn bench_per_iteration(c: &mut Criterion) {
    let settings = SolverSettings {
        stop: contactbench::solvers::Criterion::Absolute,
        eps_abs: 1e-6,
        max_iter: 1000,
        ..SolverSettings::default()
    };
    let mut group = c.benchmark_group("per_iteration");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for (seed, contacts, nv) in PER_ITERATION_PROBLEMS {
        let problem = match random_problem(seed, contacts, nv) {
            Ok(p) => p,
            Err(err) => {
                eprintln!("cannot build random{contacts}: {err}");
                continue;
            }
        };
        let mut solver = match NcpAdmmSolver::new(settings.clone(), AdmmParams::default()) {
            Ok(s) => s,
            Err(err) => {
                eprintln!("cannot build ncp-admm: {err}");
                return;
            }
        };
        match solver.solve(&problem, None) {
            Ok(r) => eprintln!(
                "ncp-admm/random{contacts}/cold: {} after {} iterations, {} factorizations, \
                 ncp_criterion {:.2e}",
                r.status,
                r.iterations,
                solver.factorizations(),
                r.criteria.absolute
            ),
            Err(err) => {
                eprintln!("skipping ncp-admm/random{contacts}: {err}");
                continue;
            }
        }
        group.bench_function(format!("ncp-admm/random{contacts}/cold"), |b| {
            b.iter(|| {
                solver.reset();
                black_box(solver.solve(black_box(&problem), None))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_solvers, bench_per_iteration);
criterion_main!(benches);
