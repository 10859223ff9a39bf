//! Solve time per solver, cold and warm, at `eps_abs = 1e-6`:
//! `solve/<solver>/<problem>/<cold|warm>`. Every timed solve starts from a reset solver
//! (no kept ρ or factorization: in a simulation `G` changes every step); "warm" starts
//! from the solution of the previous step's problem (see `common::problems`). Solvers that
//! fail to build are skipped with a message; iteration counts and statuses are printed
//! once per case, since criterion only records time.

mod common;

use std::hint::black_box;
use std::time::Duration;

use contactbench::solvers::{SolverId, SolverSettings};
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

criterion_group!(benches, bench_solvers);
criterion_main!(benches);
