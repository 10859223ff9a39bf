//! Derivatives of one step, `A = ∂(q⁺, v⁺)/∂(q, v)` and `B = ∂(q⁺, v⁺)/∂τ`, against central
//! differences of whole steps (collision detection re-run, the same solver at a tight
//! tolerance) on Solo-12 standing, Talos standing (8 sole points: redundant contacts;
//! without and with the PD's gravity feed-forward) and the sliding cube, away from mode switches: a resting contact's signed distance
//! converges to 0, where the Baumgarte bias changes gain (`1/Δt` above, `K_b/Δt` below),
//! so the state is pressed 0.2 mm into the ground first (the kink is then out of the
//! differences' reach), and the kink's flag is checked on the states at rest that reach it.
//!
//! The differences' width `h = 1e-5` (tangent of `q`, m/s of `v`, and the torque that
//! moves `v⁺` by about `h`): `q⁺` is read to its rounding (`2e-16 ‖q‖`) and moves by
//! `Δt h`, so the reference's `∂q⁺/∂τ` carries `~1e-7` of rounding at `h = 1e-5`
//! (measured 1.6e-6 at `h = 1e-6`, 1.8e-7 at `1e-5`, 1.8e-8 at `1e-4` on Solo-12: it falls
//! as `1/h`), while the truncation error of the `q` columns rises as `h²` above `1e-8`
//! from `h = 1e-4` (the contact Jacobian turns with `q`). Each tolerance is about three
//! times the largest block error measured at `h = 1e-5`.

use std::path::Path;

use contactbench::derivatives::{ContactMode, LinearMethod};
use contactbench::simulation::runner::simulator;
use contactbench::simulation::{Scenario, Simulator, StepDerivatives};
use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};

fn tight_simulator(file: &str, overrides: &[&str], settle: usize) -> Simulator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).expect("scenario");
    let mut spec = SolverSpec::new(SolverId::NcpAdmm);
    spec.settings = SolverSettings {
        eps_rel: 1e-12,
        max_iter: 200_000,
        eps_step: 0.0,
        ..SolverSettings::default()
    };
    let mut sim = simulator(&scenario, &spec).expect("simulator");
    for _ in 0..settle {
        sim.advance().expect("step");
    }
    sim
}

/// The largest error of each block of `A` (`[q, v] × [q, v]`) and `B` (`[q, v]`), relative
/// to the block's largest reference entry.
fn block_errors(got: &StepDerivatives, reference: &StepDerivatives) -> Vec<(String, f64)> {
    let nv = got.b.ncols();
    let mut out = Vec::new();
    let names = ["q", "v"];
    for (r, row) in names.iter().enumerate() {
        for (c, col) in names.iter().enumerate() {
            let g = got.a.view((r * nv, c * nv), (nv, nv));
            let e = reference.a.view((r * nv, c * nv), (nv, nv));
            out.push((format!("∂{row}⁺/∂{col}"), (g - e).amax() / e.amax()));
        }
        let g = got.b.view((r * nv, 0), (nv, nv));
        let e = reference.b.view((r * nv, 0), (nv, nv));
        out.push((format!("∂{row}⁺/∂τ"), (g - e).amax() / e.amax()));
    }
    out
}

/// Lowers the free-flying base by `depth` (m).
fn press(sim: &mut Simulator, depth: f64) {
    let (mut q, v) = (sim.state().0.clone(), sim.state().1.clone());
    q[2] -= depth;
    sim.set_state(&q, &v).expect("state");
}

/// The differences' width (module docs).
const WIDTH: f64 = 1e-5;

/// Checks the derivatives against the differences at the pressed state; `rests_at_kink`:
/// every contact of the state at rest is flagged on the kink.
fn check(name: &str, sim: &mut Simulator, rests_at_kink: bool, tolerance: f64) -> StepDerivatives {
    let at_rest = sim.step_derivatives().expect("derivatives at rest");
    println!("{name}: at rest, on the kink: {:?}", at_rest.gap_at_kink);
    if rests_at_kink {
        assert!(
            at_rest.gap_at_kink.iter().all(|&k| k),
            "{name}: resting contacts at the kink"
        );
    }
    press(sim, 2e-4);
    let (q, v) = (sim.state().0.clone(), sim.state().1.clone());
    let got = sim.step_derivatives().expect("derivatives");
    assert_eq!(
        (sim.state().0, sim.state().1),
        (&q, &v),
        "{name}: state kept"
    );
    let reference = sim.step_derivatives_fd(WIDTH).expect("finite differences");
    for (block, e) in block_errors(&got, &reference) {
        println!("{name}: {block}: relative error {e:.2e}");
        assert!(e <= tolerance, "{name}: {block}: relative error {e:.2e}");
    }
    assert!(got.a.iter().chain(got.b.iter()).all(|x| x.is_finite()));
    assert!(
        got.gap_at_kink.iter().all(|&k| !k),
        "{name}: pressed contacts off the kink"
    );
    got
}

#[test]
fn solo_standing_step_derivatives_match_finite_differences() {
    let mut sim = tight_simulator("scenarios/solo_standing.yaml", &[], 200);
    // Measured: 1.8e-7 (∂q⁺/∂τ), the others at most 1.2e-9.
    let d = check("solo12 standing", &mut sim, true, 5e-7);
    assert_eq!(d.modes.len(), 4);
    assert!(d
        .modes
        .iter()
        .all(|m| m.mode == ContactMode::Stick && !m.at_boundary()));
}

#[test]
fn talos_standing_step_derivatives_match_finite_differences() {
    // After 100 steps Talos's sole points are not within the flag's reach `τ v_s Δt`
    // (about 1e-12 m) of φ = 0: no kink flag at rest; pressed all the same, since the
    // differences' reach (1e-5) is far wider.
    let mut sim = tight_simulator("scenarios/talos_push.yaml", &["external_forces=[]"], 100);
    // Measured: 5.3e-9 (∂q⁺/∂τ), the others at most 1.8e-9.
    let d = check("talos standing", &mut sim, false, 2e-8);
    assert_eq!(d.modes.len(), 8);
    assert_eq!(d.method, LinearMethod::LeastNorm);
}

#[test]
fn talos_standing_with_its_weight_fed_forward_through_its_soles_matches_finite_differences() {
    // `gravity_compensation: contacts`: the PD adds g(q) − J_cᵀ λ(q), λ the least-norm sole
    // forces that carry the weight, differentiated through A(q) = the free-flyer rows of
    // J_cᵀ.
    let mut sim = tight_simulator("scenarios/talos_standing.yaml", &[], 100);
    // Measured: 7.6e-9 (∂q⁺/∂τ), the others at most 1.2e-9.
    let d = check(
        "talos standing, contacts feed-forward",
        &mut sim,
        false,
        2.5e-8,
    );
    assert_eq!(d.modes.len(), 8);
}

#[test]
fn talos_standing_with_gravity_fed_forward_at_the_joints_matches_finite_differences() {
    // `gravity_compensation: joints`: the PD adds g(q) on the actuated rows.
    let mut sim = tight_simulator(
        "scenarios/talos_standing.yaml",
        &["actuation.pd.gravity_compensation=joints"],
        100,
    );
    // Measured: 8.2e-9 (∂q⁺/∂τ), the others at most 1.4e-9.
    let d = check(
        "talos standing, joints feed-forward",
        &mut sim,
        false,
        2.5e-8,
    );
    assert_eq!(d.modes.len(), 8);
}

#[test]
fn sliding_cube_step_derivatives_match_finite_differences() {
    let mut sim = tight_simulator("scenarios/cube_slide.yaml", &[], 50);
    // Measured: 4.3e-9 (∂v⁺/∂q), the others at most 2.9e-9.
    let d = check("cube sliding", &mut sim, true, 2e-8);
    assert!(d.modes.iter().all(|m| m.mode == ContactMode::Slide));
}
