//! Solver defects that once occurred (a warm start taken on trust, a NaN called
//! converged, ...), each checked on the recorded problem that showed it (tests/data/regressions/README.md, tests/data/pinocchio/, tests/data/contactbench/).
//! The solvers run at their default settings: the relative criterion at `eps_rel = 1e-6`.

use crate::common::solvers as common;

use std::path::{Path, PathBuf};

use common::build;
use contactbench::problem::io::read_problem;
use contactbench::problem::ContactProblem;
use contactbench::simulation::runner::simulate;
use contactbench::simulation::Scenario;
use contactbench::solvers::{SolveReport, SolveStatus, SolverId, SolverSettings, SolverSpec};
use nalgebra::{DMatrix, DVector};

const EPS: f64 = 1e-6;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A problem file and its `lambda` entry.
fn problem(name: &str) -> (ContactProblem, Option<DVector<f64>>) {
    match read_problem(&data(name)) {
        Ok(f) => (f.problem, f.lambda),
        Err(e) => panic!("{e}"),
    }
}

fn solve(
    id: SolverId,
    settings: &SolverSettings,
    p: &ContactProblem,
    warm: Option<&DVector<f64>>,
) -> SolveReport {
    match build(id, settings).solve(p, warm) {
        Ok(r) => r,
        Err(e) => panic!("{id}: {e}"),
    }
}

/// ccp-ipm's answer at a tight tolerance (the CCP's velocity is unique).
fn ccp_reference(p: &ContactProblem) -> SolveReport {
    let tight = SolverSettings {
        eps_rel: 1e-10,
        ..SolverSettings::default()
    };
    let r = solve(SolverId::CcpIpm, &tight, p, None);
    assert!(r.status.is_converged(), "ccp-ipm reference: {}", r.status);
    r
}

/// ncp-admm's answer at a tight tolerance.
fn ncp_reference(p: &ContactProblem) -> SolveReport {
    let tight = SolverSettings {
        eps_rel: 1e-12,
        max_iter: 5000,
        ..SolverSettings::default()
    };
    let r = solve(SolverId::NcpAdmm, &tight, p, None);
    assert!(r.status.is_converged(), "ncp-admm reference: {}", r.status);
    r
}

#[test]
fn ccp_pgs_converged_means_the_ccp_velocities() {
    // Solo-12 standing, built by Pinocchio 4.1.0 (tools/pinocchio_problems.py). With the
    // absolute criterion at 1e-6, ccp-pgs stopped after 23 sweeps at CCP residual 5.5e-7
    // with tangential velocities 7.9e-6 m/s (8e-4 of v_s = 9.81e-3 m/s) where ccp-ipm's
    // are 6e-7 and exact ones 0.
    let (p, _) = problem("pinocchio/solo12_standing.json");
    let reference = ccp_reference(&p);
    let r = solve(SolverId::CcpPgs, &SolverSettings::default(), &p, None);
    assert!(r.status.is_converged(), "{}", r.status);
    let gap = (&r.velocity - &reference.velocity).amax();
    let tolerance = EPS * p.velocity_scale();
    println!(
        "ccp-pgs on Solo-12: {} sweeps, ‖c − c_ipm‖∞ = {gap:.2e} m/s, eps v_s = {tolerance:.2e}",
        r.iterations
    );
    // Measured 2.98e-8 m/s = 3.0 eps v_s: the criterion bounds each contact's velocity
    // along its force; with λ_T / λ_N = 0.6 of μ = 0.9, c may lean up to 79° off λ
    // (docs/ruler.md). The old stop was 800 times off.
    assert!(gap <= 4.0 * tolerance, "{gap:e} > 4 × {tolerance:e}");
}

#[test]
fn raisim_converged_means_no_contact_separates_while_it_pushes() {
    // ContactBench's sliding cube (tests/python/data/sliding_cube.npz, from its lam0): raisim
    // stopped with contact 0 pushing (λ_N = 2.3e-4 N·s) while separating at 6.2e-6 m/s
    // = 4.8e-6 v_s; before the relative criterion, ContactBench's own run reported
    // λ_N = 3.3e-4 with c_N = +1.9e-4.
    let (p, lam0) = problem("contactbench/sliding_cube_4c.json");
    let v_s = p.velocity_scale();
    for warm in [None, lam0.as_ref()] {
        let r = solve(SolverId::Raisim, &SolverSettings::default(), &p, warm);
        assert!(r.status.is_converged(), "{}", r.status);
        let lambda_s = r.lambda.amax();
        let worst = (0..p.num_contacts())
            .map(|i| {
                let (lambda_n, c_n) = (r.lambda[3 * i + 2], r.velocity[3 * i + 2]);
                // Separating (c_N > 0) while pushing (λ_N > 0): one of the two must vanish.
                (c_n.max(0.0) / v_s).min(lambda_n.max(0.0) / lambda_s)
            })
            .fold(0.0, f64::max);
        println!(
            "raisim on the sliding cube: {} sweeps, worst separation while pushing {worst:.2e}",
            r.iterations
        );
        // Measured 7.9e-7 (from λ = 0) and 5.2e-8 (from lam0).
        assert!(worst <= EPS, "{worst:e}");
    }
}

#[test]
fn ncp_admm_accepts_a_warm_start_only_under_its_stopping_test() {
    // scenarios/cube_push.yaml at step 200 (sticking), warm-started with step 199's answer
    // (the file's lambda). With the absolute criterion at 1e-8, ncp-admm returned the
    // warm start after 0 iterations on 135 of 390 sticking steps, here with tangential
    // velocities of 1e-5 m/s (1e-3 v_s): the cube crept 1.5 µm before it should slip.
    let (p, warm) = problem("regressions/cube_push_step200.json");
    let Some(warm) = warm else {
        panic!("the file holds the warm start");
    };
    let v_s = p.velocity_scale();
    let warm_velocity_error = p.velocity(&warm).rows(0, 12).amax();
    // The warm start is what made the cube creep.
    assert!(
        warm_velocity_error > 1e3 * EPS * v_s,
        "{warm_velocity_error:e}"
    );
    let reference = ncp_reference(&p);
    let r = solve(
        SolverId::NcpAdmm,
        &SolverSettings::default(),
        &p,
        Some(&warm),
    );
    assert!(r.status.is_converged(), "{}", r.status);
    assert!(r.iterations > 0);
    let gap = (&r.velocity - &reference.velocity).amax();
    println!(
        "ncp-admm warm-started on cube_push step 200: {} iterations, ‖c − c_ref‖∞ = {gap:.2e} m/s (warm start {warm_velocity_error:.2e})",
        r.iterations
    );
    // Measured 5 iterations and 2.9e-10 m/s.
    assert!(gap <= EPS * v_s, "{gap:e}");
}

#[test]
fn ccp_newton_warm_started_above_its_answer_converges() {
    // Warm starts 1.01, 1.5 and 2 times the answer map to a w whose λ(w) is 0; the step of
    // λ was then 0 and ccp-newton stopped "stalled" with λ = 0 (cube: 1.01 and 1.5;
    // Solo-12: 1.5).
    for name in [
        "regressions/cube_slide_step400.json",
        "pinocchio/solo12_standing.json",
    ] {
        let (p, _) = problem(name);
        let answer = solve(SolverId::CcpNewton, &SolverSettings::default(), &p, None);
        assert!(answer.status.is_converged(), "{name}: {}", answer.status);
        for factor in [1.01, 1.5, 2.0] {
            let warm = &answer.lambda * factor;
            let r = solve(
                SolverId::CcpNewton,
                &SolverSettings::default(),
                &p,
                Some(&warm),
            );
            assert!(r.status.is_converged(), "{name} ×{factor}: {}", r.status);
            let gap = (&r.lambda - &answer.lambda).amax() / answer.lambda.amax();
            println!("ccp-newton on {name} from {factor} × its answer: {} iterations, relative gap {gap:.1e}", r.iterations);
            // Measured at most 1e-9.
            assert!(gap < 1e-6, "{name} ×{factor}: {gap:e}");
        }
    }
}

#[test]
fn ccp_newton_no_longer_fails_steps_on_the_sliding_cube() {
    // `run scenarios/cube_slide.yaml --solver ccp-newton`: 203 of 500 steps stopped
    // "stalled" with λ = 0 and the resting cube chattered with |v_z| up to 5e-3 m/s.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    let scenario = Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ccp-newton".parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    let failed = record.steps.iter().filter(|s| !s.converged).count();
    let chatter = record
        .steps
        .iter()
        .filter(|s| s.time > 0.3)
        .map(|s| s.v[2].abs())
        .fold(0.0, f64::max);
    println!(
        "ccp-newton on cube_slide: {failed} failed steps, |v_z| ≤ {chatter:.2e} m/s after 0.3 s"
    );
    assert_eq!(failed, 0);
    // Measured 7.7e-8 m/s: R_soft = 1e-3 diag G softens the contact by about that.
    assert!(chatter < 1e-6, "{chatter:e}");
}

#[test]
fn a_nan_answer_is_a_numerical_error_never_converged() {
    // G = I, g = (1e308, 0, −1): ccp-newton answered λ = (NaN, NaN, inf), "converged after
    // 0 iterations (own residual 0)". ContactProblem::new refuses g; through the
    // simulator's door (sizes and finiteness only) no solver may call it converged.
    let Ok(p) = ContactProblem::from_assembly(
        DMatrix::identity(3, 3),
        DVector::from_vec(vec![1e308, 0.0, -1.0]),
        DVector::from_element(1, 0.5),
        None,
    ) else {
        panic!("finite data pass the simulator's door");
    };
    let newton = solve(SolverId::CcpNewton, &SolverSettings::default(), &p, None);
    assert!(
        matches!(
            newton.status,
            SolveStatus::NumericalError { iteration: 0, .. }
        ),
        "{}",
        newton.status
    );
    // The others either say why they did not converge, or converge on a finite answer
    // that the metrics confirm (the exact one slides: λ = (−0.5, 0, 1)).
    for id in SolverId::ALL {
        let r = solve(id, &SolverSettings::default(), &p, None);
        let recomputed =
            common::model_residual(build(id, &SolverSettings::default()).model(), &p, &r.lambda);
        println!("{id}: {} ({:.1e})", r.status, recomputed);
        if r.status.is_converged() && id != SolverId::CcpNewton {
            assert!(r.lambda.iter().all(|x| x.is_finite()), "{id}");
            assert!(recomputed <= EPS, "{id}: {recomputed:e}");
        }
        // Nothing is scored 0 that is not: a non-finite answer has a NaN residual.
        if !r.lambda.iter().all(|x| x.is_finite()) {
            assert!(r.residual.is_nan(), "{id}");
        }
    }
}
