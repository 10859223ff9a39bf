//! Derivatives against what they differentiate (docs/derivatives.md, "Speed").
//!
//! `step/<robot>/{step,step+derivatives}`: one step of Solo-12 and Talos standing under PD
//! (ncp-admm at its defaults, warm-started, after 200 untimed steps) from the same state,
//! without and with `A = ∂(q⁺, v⁺)/∂(q, v)` and `B = ∂(q⁺, v⁺)/∂τ`; the derivatives' own
//! time is the difference (`contactbench bench-step --derivatives` times it alone).
//!
//! `solve/<problem>/{solve,derivative,jacobian_g}`: ncp-admm's cold solve of the solver
//! benchmarks' problems (`common::problems`, at the relative criterion 1e-6), the
//! derivative of its answer (modes, linearization, factor) with one Jacobian-vector
//! product along `g`, and with the full Jacobian `∂λ/∂g`.

// The problems' `previous` (a warm start for the solver benches) is not used here.
#[allow(dead_code)]
mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use contactbench::derivatives::{differentiate, DerivativeSettings, ProblemDirection};
use contactbench::simulation::runner::simulator;
use contactbench::simulation::{Scenario, Simulator};
use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::DVector;
use serde_json::Map;

/// Untimed steps before timing.
const SETTLE: usize = 200;

fn settled(file: &str) -> Simulator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let overrides = ["external_forces=[]".to_string()];
    let scenario = Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec = SolverSpec::new(SolverId::NcpAdmm);
    let mut sim = simulator(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..SETTLE {
        sim.advance().unwrap_or_else(|e| panic!("{e}"));
    }
    sim
}

fn bench_step_derivatives(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    for (name, file) in [
        ("solo12", "solo_standing.yaml"),
        ("talos", "talos_push.yaml"),
    ] {
        let mut sim = settled(file);
        let (q, v) = (sim.state().0.clone(), sim.state().1.clone());
        group.bench_function(format!("{name}/step"), |b| {
            b.iter(|| {
                sim.set_state(&q, &v).unwrap_or_else(|e| panic!("{e}"));
                black_box(sim.advance().unwrap_or_else(|e| panic!("{e}")))
            })
        });
        sim.set_state(&q, &v).unwrap_or_else(|e| panic!("{e}"));
        group.bench_function(format!("{name}/step+derivatives"), |b| {
            b.iter(|| black_box(sim.step_derivatives().unwrap_or_else(|e| panic!("{e}"))))
        });
    }
    group.finish();
}

fn bench_solve_derivatives(c: &mut Criterion) {
    let problems = common::problems().unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("solve");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    let settings = SolverSettings::default();
    let derivative_settings = DerivativeSettings::default();
    for bench in &problems {
        let mut solver = SolverId::NcpAdmm
            .build(settings.clone(), &Map::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let problem = &bench.problem;
        let model = solver.model();
        solver.reset();
        let report = solver
            .solve(problem, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let lambda = report.lambda.clone();
        let derivative = differentiate(problem, model, &lambda, &derivative_settings)
            .unwrap_or_else(|e| panic!("{}: {e}", bench.name));
        eprintln!(
            "{}: {} contacts, {} iterations, modes {:?}, {:?} of rank {:?}",
            bench.name,
            problem.num_contacts(),
            report.iterations,
            derivative
                .modes()
                .iter()
                .map(|m| m.mode.as_str())
                .collect::<Vec<_>>(),
            derivative.method(),
            derivative.rank()
        );
        group.bench_function(format!("{}/solve", bench.name), |b| {
            b.iter(|| {
                solver.reset();
                black_box(
                    solver
                        .solve(problem, None)
                        .unwrap_or_else(|e| panic!("{e}")),
                )
            })
        });
        let direction = ProblemDirection {
            free_velocity: Some(DVector::from_fn(problem.dim(), |i, _| {
                1.0 + i as f64 * 1e-2
            })),
            ..ProblemDirection::default()
        };
        group.bench_function(format!("{}/derivative", bench.name), |b| {
            b.iter(|| {
                let d = differentiate(problem, model, &lambda, &derivative_settings)
                    .unwrap_or_else(|e| panic!("{e}"));
                black_box(d.jvp(&direction).unwrap_or_else(|e| panic!("{e}")))
            })
        });
        group.bench_function(format!("{}/jacobian_g", bench.name), |b| {
            b.iter(|| {
                let d = differentiate(problem, model, &lambda, &derivative_settings)
                    .unwrap_or_else(|e| panic!("{e}"));
                black_box(d.jacobian_free_velocity().unwrap_or_else(|e| panic!("{e}")))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_step_derivatives, bench_solve_derivatives);
criterion_main!(benches);
