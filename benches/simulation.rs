//! Whole simulation steps (dynamics, collision, assembly, solve, integration) of Solo-12
//! and Talos standing under PD and of a sliding cube, with ncp-admm at its default
//! tolerance, warm-started from the previous step's forces (as in a simulation) or cold
//! (from zero, solver reset; paper Fig. 16). `advance`: the step alone; `recorded`: the
//! step and its record with every metric, as `contactbench run` takes it.
//!
//! Every timed stretch starts from a freshly built simulator after 200 untimed steps and
//! lasts at most 600 steps, so that the robots are timed standing (a long run drifts off).
//! `contactbench bench-step` prints the same figures with the per-stage split.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use contactbench::simulation::runner::simulator;
use contactbench::simulation::{Scenario, Simulator};
use contactbench::solvers::SolverSpec;
use criterion::{criterion_group, criterion_main, Criterion};

/// Untimed steps before a timed stretch.
const SETTLE: usize = 200;
/// Longest timed stretch (steps).
const STRETCH: u64 = 600;

fn scenario(file: &str, overrides: &[String]) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    match Scenario::load(&path, overrides) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn settled(scenario: &Scenario, spec: &SolverSpec, settle: usize) -> Simulator {
    let mut sim = match simulator(scenario, spec) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    for _ in 0..settle {
        if let Err(e) = sim.advance() {
            panic!("{e}");
        }
    }
    sim
}

/// Time of `iters` steps taken in stretches from a settled state.
fn timed_steps(
    scenario: &Scenario,
    spec: &SolverSpec,
    settle: usize,
    iters: u64,
    record: bool,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let mut sim = settled(scenario, spec, settle);
        let stretch = left.min(STRETCH);
        let start = Instant::now();
        for _ in 0..stretch {
            let taken = if record {
                sim.step().map(|r| r.contacts.len())
            } else {
                sim.advance().map(|s| s.contacts)
            };
            if let Err(e) = black_box(taken) {
                panic!("{e}");
            }
        }
        total += start.elapsed();
        left -= stretch;
    }
    total
}

fn bench_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    group.sample_size(20);
    let cases = [
        ("solo12", "solo_standing.yaml", SETTLE),
        ("talos", "talos_push.yaml", SETTLE),
        ("cube-slide", "cube_slide.yaml", 0),
    ];
    for (name, file, settle) in cases {
        for warm in [true, false] {
            let overrides = [
                "external_forces=[]".to_string(),
                format!("simulation.warm_start={warm}"),
            ];
            let scenario = scenario(file, &overrides);
            let spec: SolverSpec = match "ncp-admm".parse() {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            };
            let mode = if warm { "warm" } else { "cold" };
            for record in [false, true] {
                let what = if record { "recorded" } else { "advance" };
                group.bench_function(format!("{name}/ncp-admm/{mode}/{what}"), |b| {
                    b.iter_custom(|iters| timed_steps(&scenario, &spec, settle, iters, record))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_steps);
criterion_main!(benches);
