//! Whole simulation steps per second (dynamics, collision, assembly, solve, integration)
//! for Solo-12 and Talos standing under PD, with ncp-admm warm-started from the previous
//! step's forces (as in a simulation) and cold (from zero, solver reset; paper Fig. 16).

use std::path::Path;

use contactbench::simulation::runner::simulator;
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    for (name, file) in [
        ("solo12", "solo_standing.yaml"),
        ("talos", "talos_push.yaml"),
    ] {
        for warm in [true, false] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(file);
            let overrides = [
                "external_forces=[]".to_string(),
                format!("simulation.warm_start={warm}"),
            ];
            let scenario = match Scenario::load(&path, &overrides) {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            };
            let spec: SolverSpec = match "ncp-admm:stop=absolute,eps_abs=1e-6,max_iter=500".parse()
            {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            };
            let mut sim = match simulator(&scenario, &spec) {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            };
            // Settle first, so that the timed steps are steady stance.
            for _ in 0..200 {
                if let Err(e) = sim.step() {
                    panic!("{e}");
                }
            }
            let mode = if warm { "warm" } else { "cold" };
            group.bench_function(format!("{name}/ncp-admm/{mode}"), |b| {
                b.iter(|| sim.step().map(|s| s.contacts.len()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_steps);
criterion_main!(benches);
