//! The global solvers (ADMM, interior point, staggered projections, lcp-qp, Newton) on
//! random problems, the 4-contact cube, the heavy-on-light stack, warm-started sequences
//! and bad input.

use contactbench::metrics::internal_forces;
use contactbench::metrics::model_criteria;
use contactbench::problem::generators::{cube_on_plane, cube_stack, random_problem};
use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::solvers::ncp_admm::NcpAdmmSolver;
use contactbench::solvers::{
    ContactSolver, SolveReport, SolveStatus, SolverId, SolverSettings, SolverSpec,
};
use nalgebra::{DMatrix, DVector};
use serde_json::Map;

const MINE: [SolverId; 7] = [
    SolverId::LcpQp,
    SolverId::LcpStagproj,
    SolverId::CcpAdmm,
    SolverId::CcpNewton,
    SolverId::CcpIpm,
    SolverId::NcpStagproj,
    SolverId::NcpAdmm,
];

/// The relative criterion (the default) at `eps_rel`, no stall test.
fn settings(eps_rel: f64, max_iter: usize) -> SolverSettings {
    SolverSettings {
        eps_rel,
        eps_step: 0.0,
        max_iter,
        ..SolverSettings::default()
    }
}

fn build(id: SolverId, settings: SolverSettings) -> Box<dyn ContactSolver> {
    let Ok(solver) = id.build(settings, &Map::new()) else {
        panic!("{id} builds");
    };
    solver
}

fn solve(id: SolverId, s: SolverSettings, p: &ContactProblem) -> SolveReport {
    let Ok(report) = build(id, s).solve(p, None) else {
        panic!("{id} solves");
    };
    report
}

fn random(seed: u64, contacts: usize, nv: usize) -> ContactProblem {
    let Ok(p) = random_problem(seed, contacts, nv) else {
        panic!("valid random problem");
    };
    p
}

/// The model's own relative criterion, as the metrics module computes it.
fn own_residual(model: ContactModel, p: &ContactProblem, r: &SolveReport) -> f64 {
    model_criteria(model, p, &r.lambda, &r.velocity).relative
}

#[test]
fn random_problems_converge_or_say_so() {
    let eps = 1e-8;
    for (contacts, nv) in [(4, 12), (10, 12)] {
        for seed in 0..5 {
            let p = random(seed, contacts, nv);
            for id in MINE {
                // Staggered projections are slow on rank-deficient random problems.
                let cap = if contacts > 4
                    && matches!(id, SolverId::LcpStagproj | SolverId::NcpStagproj)
                {
                    100
                } else {
                    1000
                };
                let solver = build(id, settings(eps, cap));
                let model = solver.model();
                let r = solve(id, settings(eps, cap), &p);
                println!(
                    "{contacts}x{nv} seed {seed} {id}: {} in {} it, residual {:.2e}",
                    r.status, r.iterations, r.residual
                );
                assert!(r.lambda.iter().all(|v| v.is_finite()), "{id}");
                assert_eq!(
                    r.status.is_converged(),
                    r.residual <= eps,
                    "{id} seed {seed}"
                );
                // ccp-newton's residual is that of its soft problem; the others' is the
                // metrics' own residual of the returned answer.
                if id != SolverId::CcpNewton {
                    let recomputed = own_residual(model, &p, &r);
                    assert!(
                        (recomputed - r.residual).abs() <= 1e-6 * (1.0 + r.residual),
                        "{id}"
                    );
                }
                if contacts == 4 {
                    // G is definite: every solver reaches its tolerance.
                    assert!(r.status.is_converged(), "{id} seed {seed}: {}", r.status);
                }
            }
        }
    }
}

#[test]
fn problems_without_a_ccp_solution_are_not_reported_converged() {
    // 10 contacts on 12 dofs, seed 1: clarabel certifies the CCP unbounded below.
    let p = random(1, 10, 12);
    let r = solve(SolverId::CcpIpm, settings(1e-8, 200), &p);
    assert_eq!(r.status, SolveStatus::Infeasible);
    for id in [SolverId::CcpAdmm, SolverId::NcpAdmm, SolverId::LcpQp] {
        let r = solve(id, settings(1e-8, 300), &p);
        assert!(!r.status.is_converged(), "{id}: {}", r.status);
    }
}

/// `‖a − b‖∞ / max(1, ‖b‖∞)`.
fn relative_gap(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).amax() / b.amax().max(1.0)
}

#[test]
fn ccp_admm_and_ccp_ipm_agree_on_the_ccp_solution() {
    let mut worst: f64 = 0.0;
    let mut problems: Vec<ContactProblem> = (0..5).map(|seed| random(seed, 4, 12)).collect();
    // Rank-deficient G made definite by a compliance R.
    let base = random(1, 10, 12);
    let Ok(compliant) = ContactProblem::new(
        base.delassus().clone(),
        base.free_velocity().clone(),
        base.mu().clone(),
        Some(DVector::from_element(30, 1e-2)),
    ) else {
        panic!("valid compliant problem");
    };
    problems.push(compliant);
    for p in &problems {
        let admm = solve(SolverId::CcpAdmm, settings(1e-8, 5000), p);
        let ipm = solve(SolverId::CcpIpm, settings(1e-8, 200), p);
        assert!(admm.status.is_converged(), "{}", admm.status);
        assert!(ipm.status.is_converged(), "{}", ipm.status);
        let gap = relative_gap(&admm.lambda, &ipm.lambda);
        worst = worst.max(gap);
    }
    println!("ccp-admm vs ccp-ipm: worst relative gap {worst:.2e}");
    assert!(worst < 5e-6, "{worst:e}");
}

#[test]
fn ncp_admm_reaches_1e_8_on_well_conditioned_problems() {
    for (seed, contacts, nv) in [
        (0, 4, 12),
        (1, 4, 12),
        (2, 4, 12),
        (3, 4, 12),
        (4, 4, 12),
        (5, 20, 80),
    ] {
        let p = random(seed, contacts, nv);
        let r = solve(SolverId::NcpAdmm, settings(1e-8, 1000), &p);
        println!("ncp-admm {contacts}x{nv} seed {seed}: {} it", r.iterations);
        assert!(r.status.is_converged(), "seed {seed}: {}", r.status);
        assert!(model_criteria(ContactModel::Ncp, &p, &r.lambda, &r.velocity).relative <= 1e-8);
    }
}

#[test]
fn admm_leaves_no_internal_forces_on_the_cube_at_stiction() {
    // 1 kg cube pushed by 2 N < μ m g: it sticks; G has rank 6 for 12 force components.
    let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 2.0, 1e-3) else {
        panic!("valid cube problem");
    };
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        let r = solve(id, settings(1e-10, 1000), &p);
        assert!(r.status.is_converged(), "{id}");
        let Some(internal) = internal_forces(&p, &r.lambda) else {
            panic!("the cube carries J");
        };
        println!(
            "{id}: internal forces {internal:.2e}, |λ| {:.2e}",
            r.lambda.norm()
        );
        assert!(internal < 1e-9 * r.lambda.norm(), "{id}: {internal:e}");
        // Sticking: every contact velocity is zero.
        assert!(r.velocity.amax() < 1e-8, "{id}");
    }
}

#[test]
fn admm_converges_on_the_heavy_on_light_stack() {
    // Mass ratio 1e6 (paper Fig. 12: 1e3 kg on 1e-3 kg).
    let Ok(p) = cube_stack(1e-3, 1e6, 0.1, 0.5, 1e-3) else {
        panic!("valid stack problem");
    };
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        let r = solve(id, settings(1e-8, 1000), &p);
        println!("{id} on the 1e6 stack: {} in {} it", r.status, r.iterations);
        assert!(r.status.is_converged(), "{id}: {}", r.status);
        assert!(r.iterations < 1000);
        // The light cube carries the heavy one: ground normal forces sum to (m_l + m_h) g dt.
        let ground: f64 = (0..4).map(|i| r.lambda[3 * i + 2]).sum();
        let expected = (1e-3 + 1e3) * 9.81 * 1e-3;
        assert!(
            (ground - expected).abs() < 1e-6 * expected,
            "{ground} vs {expected}"
        );
    }
}

/// Free velocity of step `k` of a smooth sequence of nearby problems.
fn nearby_problem(base: &ContactProblem, k: usize) -> ContactProblem {
    let g = DVector::from_fn(base.dim(), |i, _| {
        base.free_velocity()[i] + 1e-3 * (k as f64) * ((i as f64) * 0.7).sin()
    });
    let Ok(p) = ContactProblem::new(base.delassus().clone(), g, base.mu().clone(), None) else {
        panic!("valid nearby problem");
    };
    p
}

#[test]
fn warm_start_cuts_ncp_admm_iterations() {
    // At the benchmark's tolerance; g moves by 1e-3 per step.
    let base = random(3, 4, 12);
    let mut cold = build(SolverId::NcpAdmm, settings(1e-6, 1000));
    let mut warm = build(SolverId::NcpAdmm, settings(1e-6, 1000));
    let (mut cold_total, mut warm_total) = (0, 0);
    let mut previous: Option<DVector<f64>> = None;
    for k in 0..20 {
        let p = nearby_problem(&base, k);
        let Ok(c) = cold.solve(&p, None) else {
            panic!("cold solve")
        };
        let Ok(w) = warm.solve(&p, previous.as_ref()) else {
            panic!("warm solve")
        };
        assert!(c.status.is_converged() && w.status.is_converged());
        cold_total += c.iterations;
        warm_total += w.iterations;
        previous = Some(w.lambda);
    }
    let ratio = warm_total as f64 / cold_total as f64;
    println!("ncp-admm over 20 nearby problems: cold {cold_total} it, warm {warm_total} it, ratio {ratio:.2}");
    assert!(ratio < 0.6, "{ratio}");
}

#[test]
fn warm_start_at_the_solution_reuses_rho_and_the_factor() {
    let p = random(0, 4, 12);
    let Ok(mut solver) = NcpAdmmSolver::new(settings(1e-8, 1000), Default::default()) else {
        panic!("ncp-admm builds");
    };
    let Ok(first) = solver.solve(&p, None) else {
        panic!("solve")
    };
    let factorizations = solver.factorizations();
    let Ok(again) = solver.solve(&p, Some(&first.lambda)) else {
        panic!("solve")
    };
    assert!(again.status.is_converged());
    assert_eq!(again.iterations, 0);
    assert_eq!(solver.factorizations(), factorizations);
}

#[test]
fn empty_problem_gives_the_empty_answer() {
    let Ok(p) = ContactProblem::new(
        DMatrix::zeros(0, 0),
        DVector::zeros(0),
        DVector::zeros(0),
        None,
    ) else {
        panic!("zero contacts is a valid problem");
    };
    for id in MINE {
        let r = solve(id, settings(1e-8, 100), &p);
        assert_eq!(r.status, SolveStatus::Converged, "{id}");
        assert_eq!((r.iterations, r.lambda.len()), (0, 0), "{id}");
    }
}

#[test]
fn bad_warm_start_and_parameters_are_typed_errors() {
    let p = random(0, 4, 12);
    for id in MINE {
        let mut solver = build(id, settings(1e-8, 100));
        assert!(solver.solve(&p, Some(&DVector::zeros(5))).is_err(), "{id}");
        let nan = DVector::from_element(12, f64::NAN);
        assert!(solver.solve(&p, Some(&nan)).is_err(), "{id}");
    }
    for spec in [
        "ncp-admm:tau=2",
        "ccp-admm:rho=-1",
        "ncp-admm:mu_prox=0",
        "ccp-ipm:rho=1",
        "ccp-newton:alpha=0",
        "lcp-qp:qp_max_iter=0",
        "ncp-stagproj:unknown=1",
    ] {
        let built = spec.parse::<SolverSpec>().and_then(|s| s.build());
        assert!(built.is_err(), "{spec} should be refused");
    }
    let Ok(spec) = "ncp-admm:rho=1e-3,max_iter=50,rho_power=0.3".parse::<SolverSpec>() else {
        panic!("valid spec");
    };
    assert!(spec.build().is_ok());
}

#[test]
fn residual_history_is_recorded_when_asked() {
    let p = random(0, 4, 12);
    for id in MINE {
        let s = SolverSettings {
            record_history: true,
            ..settings(1e-6, 1000)
        };
        let r = solve(id, s, &p);
        let Some(history) = &r.history else {
            panic!("{id}: history asked for");
        };
        // ccp-ipm's iterates stay inside clarabel: only its final residual is known.
        let expected = if id == SolverId::CcpIpm {
            1
        } else {
            r.iterations
        };
        assert_eq!(history.len(), expected, "{id}");
        assert_eq!(history.last().copied(), Some(r.residual), "{id}");
    }
    let r = solve(SolverId::NcpAdmm, settings(1e-6, 1000), &p);
    assert!(r.history.is_none());
}

#[test]
fn over_relaxation_keeps_admm_converging() {
    let p = random(2, 4, 12);
    for alpha in [0.8, 1.0, 1.5] {
        let s = SolverSettings {
            over_relaxation: alpha,
            ..settings(1e-8, 2000)
        };
        let r = solve(SolverId::NcpAdmm, s, &p);
        println!(
            "ncp-admm over_relaxation {alpha}: {} in {} it",
            r.status, r.iterations
        );
        assert!(r.status.is_converged(), "alpha {alpha}: {}", r.status);
    }
}

#[test]
fn statuses_are_typed_and_serialized_with_a_status_tag() {
    let stalled = serde_json::to_value(SolveStatus::Stalled { iteration: 3 });
    assert_eq!(
        stalled.ok(),
        Some(serde_json::json!({"status": "stalled", "iteration": 3}))
    );
    let error = SolveStatus::NumericalError {
        iteration: 2,
        what: "non-finite forces".into(),
    };
    assert_eq!(
        serde_json::to_value(&error).ok(),
        Some(
            serde_json::json!({"status": "numerical_error", "iteration": 2, "what": "non-finite forces"})
        )
    );
    assert_eq!(
        error.to_string(),
        "numerical error at iteration 2: non-finite forces"
    );
    for status in [
        SolveStatus::MaxIterations,
        SolveStatus::MaxTime,
        SolveStatus::Diverged { iteration: 1 },
        SolveStatus::Infeasible,
        error,
    ] {
        assert!(!status.is_converged(), "{status}");
        let back: Result<SolveStatus, _> =
            serde_json::from_value(serde_json::to_value(&status).unwrap_or_default());
        assert_eq!(back.ok(), Some(status));
    }
}

#[test]
fn max_time_stops_every_solver_with_its_own_status() {
    // A wall-time cap far below one iteration: every solver on a problem it cannot solve
    // in one iteration stops with MaxTime, the one interior point included (clarabel's
    // own time limit).
    let p = random(3, 10, 60);
    let capped = SolverSettings {
        max_time: Some(1e-9),
        ..settings(1e-12, 1000)
    };
    for id in SolverId::ALL {
        let r = solve(id, capped.clone(), &p);
        assert_eq!(r.status, SolveStatus::MaxTime, "{id}");
    }
}
