//! A PD with gravity feed-forward (`actuation.pd.gravity_compensation`): Talos stands on
//! its soles when the feed-forward shares its weight among them, and drifts without it.

use std::path::Path;

use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::{simulate, simulator};
use contactbench::simulation::Scenario;

fn scenario(overrides: &[&str]) -> Result<Scenario, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/talos_standing.yaml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::load(&path, &overrides).map_err(|e| e.to_string())
}

fn run(overrides: &[&str]) -> RunRecord {
    let scenario = scenario(overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec = scenario.solver_specs().remove(0);
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

/// The largest horizontal distance of the base from where it started, and the largest
/// fall of its height below the start (m), over the run.
fn base_excursion(record: &RunRecord) -> (f64, f64) {
    let start = record.steps[0].base_position;
    record.steps.iter().fold((0.0, 0.0), |(h, fall), s| {
        let p = s.base_position;
        let horizontal = (p[0] - start[0]).hypot(p[1] - start[1]);
        (f64::max(h, horizontal), f64::max(fall, start[2] - p[2]))
    })
}

#[test]
fn talos_stands_still_when_its_weight_is_fed_forward_through_its_soles() {
    let record = run(&["simulation.duration=1.0"]);
    let (horizontal, fall) = base_excursion(&record);
    println!("talos, contacts feed-forward, 1 s: base moved {horizontal:.2e} m, fell {fall:.2e} m");
    assert!(horizontal < 2e-3, "moved {horizontal} m");
    assert!(fall < 1e-3, "fell {fall} m");
}

#[test]
fn talos_drifts_off_its_soles_with_the_pd_alone() {
    let record = run(&[
        "simulation.duration=1.0",
        "actuation.pd.gravity_compensation=none",
    ]);
    let (horizontal, fall) = base_excursion(&record);
    println!("talos, PD alone, 1 s: base moved {horizontal:.2e} m, fell {fall:.2e} m");
    assert!(horizontal > 0.015, "moved {horizontal} m");
    assert!(fall > 0.015, "fell {fall} m");
}

#[test]
fn contact_gravity_compensation_without_contact_spheres_names_the_field() {
    let err = scenario(&["world.contact_spheres=[]"]).and_then(|s| {
        let spec = s.solver_specs().remove(0);
        simulator(&s, &spec).map(|_| ()).map_err(|e| e.to_string())
    });
    let message = err.expect_err("refused");
    assert!(
        message.contains("actuation.pd.gravity_compensation") && message.contains("found 0"),
        "{message}"
    );
}
