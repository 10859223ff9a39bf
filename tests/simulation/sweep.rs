//! Sweeps: each cell is the integral consistency error against the solver's own reference
//! run. A stand-in runner whose trajectory is offset by the time step checks the plumbing:
//! `x(t) = t + Δt` gives an error of `(Δt − Δt_ref) · T` against the `Δt_ref` run.

use std::path::Path;

use contactbench::metrics::energy::MechanicalEnergy;
use contactbench::simulation::recorder::{Recorder, RunRecord, StepRecord};
use contactbench::simulation::sweep::{sweep, SweepKind, REFERENCE_DT};
use contactbench::simulation::{Scenario, SolverFactory};
use contactbench::solvers::{SolverId, SolverSpec};
use nalgebra::DVector;

fn scenario() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    Scenario::load(&path, &[]).expect("shipped scenario")
}

fn offset_run(
    scenario: &Scenario,
    spec: &dyn SolverFactory,
    recorder: &mut dyn Recorder,
) -> Result<Option<String>, String> {
    offset_record(scenario, spec)?
        .replay(recorder)
        .map_err(|e| e.to_string())
}

fn offset_record(scenario: &Scenario, spec: &dyn SolverFactory) -> Result<RunRecord, String> {
    if spec.name() == "lcp-pgs" {
        return Err("synthetic failure".into());
    }
    let dt = scenario.simulation.dt;
    let steps = (0..=scenario.num_steps())
        .map(|k| {
            let t = k as f64 * dt;
            StepRecord {
                step: k,
                time: t,
                q: DVector::zeros(1),
                v: DVector::zeros(1),
                base_position: [t + dt, 0.0, 0.0],
                contacts: Vec::new(),
                metrics: Default::default(),
                energy: MechanicalEnergy::default(),
                iterations: 0,
                status: "no contact".into(),
                solver_status: None,
                converged: true,
                collision_failures: 0,
                timings: Default::default(),
                task: None,
            }
        })
        .collect();
    Ok(RunRecord {
        scenario: scenario.name.clone(),
        solver: spec.name(),
        dt,
        steps,
        ..Default::default()
    })
}

#[test]
fn time_step_sweep_integrates_the_offset() {
    let s = scenario();
    let specs = [
        SolverSpec::new(SolverId::NcpAdmm),
        SolverSpec::new(SolverId::LcpPgs),
    ];
    let table = sweep(&s, &specs, SweepKind::TimeStep, &[1e-3, 1e-2], &offset_run);
    assert_eq!(table.rows.len(), 2);
    let duration = s.simulation.duration;
    for cell in &table.rows[0].cells {
        let expected = (cell.value - REFERENCE_DT) * duration;
        let got = cell.consistency_error.expect("number");
        assert!(
            (got - expected).abs() < 0.02 * expected,
            "{got} vs {expected}"
        );
    }
    assert!(table.rows[1].cells.iter().all(|c| c.failure.is_some()));
    let md = table.to_markdown();
    assert!(md.contains("| ncp-admm |"), "{md}");
    assert!(md.contains("failed"), "{md}");
}

#[test]
fn tolerance_sweep_against_identical_reference_is_zero() {
    let s = scenario();
    let specs = [SolverSpec::new(SolverId::NcpAdmm)];
    let table = sweep(&s, &specs, SweepKind::Tolerance, &[1e-2, 1e-6], &offset_run);
    for cell in &table.rows[0].cells {
        assert_eq!(cell.consistency_error, Some(0.0));
    }
}
