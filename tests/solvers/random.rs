//! Random problems (`G = J M⁻¹ Jᵀ` from random `J` and SPD `M`, rank-deficient when
//! `3n > nv`): every solver reaches its tolerance (of the relative criterion, the default)
//! or says it did not; CCP solvers agree on the unique CCP solution; ncp-pgs reaches 1e-8
//! on well-conditioned problems.

use crate::common::solvers as common;

use common::{build, model_residual, settings};
use contactbench::problem::generators::random_problem;
use contactbench::problem::ContactProblem;
use contactbench::solvers::{SolveStatus, SolverId, SolverSettings};
use nalgebra::DVector;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const EPS: f64 = 1e-8;
const MAX_ITER: usize = 2000;

fn random(seed: u64, contacts: usize, nv: usize) -> ContactProblem {
    match random_problem(seed, contacts, nv) {
        Ok(p) => p,
        Err(err) => panic!("random problem {seed}: {err}"),
    }
}

/// `(contacts, nv)`: full rank (`3n ≤ nv`) and rank-deficient (`3n > nv`).
const SHAPES: [(usize, usize); 5] = [(3, 12), (5, 30), (8, 12), (4, 40), (10, 60)];

#[test]
fn every_solver_reports_its_status_honestly() {
    for (contacts, nv) in SHAPES {
        for seed in 0..4 {
            let p = random(seed, contacts, nv);
            for id in SolverId::ALL {
                let mut solver = build(id, &settings(EPS, MAX_ITER));
                let case = format!("{id} on n={contacts} nv={nv} seed={seed}");
                let r = match solver.solve(&p, None) {
                    Ok(r) => r,
                    Err(err) => panic!("{case}: {err}"),
                };
                match &r.status {
                    SolveStatus::Converged => {
                        assert!(r.residual <= EPS, "{case}: residual {}", r.residual);
                        if id != SolverId::CcpNewton {
                            let own = model_residual(solver.model(), &p, &r.lambda);
                            assert!(own <= 10.0 * EPS, "{case}: recomputed residual {own}");
                        }
                    }
                    SolveStatus::MaxIterations => {
                        assert_eq!(r.iterations, MAX_ITER, "{case}");
                        assert!(
                            r.residual > EPS,
                            "{case}: stopped at max_iter below eps_rel"
                        );
                    }
                    SolveStatus::Stalled { iteration } => {
                        assert!(*iteration <= MAX_ITER && r.residual > EPS, "{case}");
                    }
                    // A rank-deficient G may leave the QP unbounded below (no answer): a
                    // proof for ccp-ipm, the end of the method for the others.
                    SolveStatus::Infeasible => assert!(3 * contacts > nv, "{case}"),
                    SolveStatus::NumericalError { what, .. } if what.contains("unbounded") => {
                        assert!(3 * contacts > nv && id != SolverId::CcpIpm, "{case}")
                    }
                    other => panic!("{case}: {other}"),
                }
                assert!(r.lambda.iter().all(|x| x.is_finite()), "{case}");
                assert_eq!(
                    r.velocity,
                    p.velocity(&r.lambda),
                    "{case}: c = (G + R) λ + g"
                );
            }
        }
    }
}

#[test]
fn ccp_solvers_agree_on_the_unique_ccp_solution() {
    // Full-rank G: the QCQP (19) is strictly convex, its solution unique. ccp-pgs from a
    // cold start and from a random warm start, ccp-admm and ccp-ipm must all find it.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let tight = SolverSettings {
        eps_step: 0.0,
        ..settings(1e-10, 5000)
    };
    for seed in 0..4 {
        let p = random(seed, 4, 40);
        let mut pgs = build(SolverId::CcpPgs, &tight);
        let reference = match pgs.solve(&p, None) {
            Ok(r) if r.status.is_converged() => r.lambda,
            Ok(r) => panic!("ccp-pgs on seed {seed}: {}", r.status),
            Err(err) => panic!("{err}"),
        };
        let start = DVector::from_fn(p.dim(), |_, _| rng.random_range(-1.0..1.0));
        let mut answers = vec![("ccp-pgs (warm)", pgs.solve(&p, Some(&start)))];
        for id in [SolverId::CcpAdmm, SolverId::CcpIpm] {
            let mut other = build(id, &tight);
            answers.push((id.as_str(), other.solve(&p, None)));
        }
        for (name, answer) in answers {
            let lambda = match answer {
                Ok(r) if r.status.is_converged() => r.lambda,
                Ok(r) => panic!("{name} on seed {seed}: {}", r.status),
                Err(err) => panic!("{name}: {err}"),
            };
            let gap = (&lambda - &reference).amax();
            assert!(gap < 1e-6, "{name} vs ccp-pgs on seed {seed}: {gap:.3e}");
        }
    }
}

#[test]
fn ncp_pgs_reaches_1e_8_on_well_conditioned_problems() {
    // nv = 10 n: G = J M⁻¹ Jᵀ is full rank; eigenvalues measured in [0.47, 76].
    for seed in 0..4 {
        let p = random(seed, 4, 40);
        let mut solver = build(SolverId::NcpPgs, &settings(1e-8, 1000));
        let r = match solver.solve(&p, None) {
            Ok(r) => r,
            Err(err) => panic!("{err}"),
        };
        assert!(r.status.is_converged(), "seed {seed}: {}", r.status);
        let c = p.velocity(&r.lambda);
        let criterion = contactbench::metrics::relative_criterion(&p, &r.lambda, &c);
        assert!(criterion <= 1e-8, "seed {seed}: {criterion:.3e}");
    }
}

#[test]
fn history_holds_the_tested_criterion_of_every_iteration() {
    let p = random(0, 5, 30);
    for id in SolverId::ALL {
        let recording = SolverSettings {
            record_history: true,
            ..settings(1e-8, 500)
        };
        let mut solver = build(id, &recording);
        let r = match solver.solve(&p, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        let Some(history) = r.history else {
            panic!("{id}: no history recorded");
        };
        // clarabel does not expose its iterates: ccp-ipm records only its final residual.
        let expected_len = if id == SolverId::CcpIpm {
            1
        } else {
            r.iterations
        };
        assert_eq!(history.len(), expected_len, "{id}");
        assert_eq!(history.last().copied(), Some(r.residual), "{id}");
    }
}

#[test]
fn over_relaxation_keeps_the_answer() {
    // ncp-pgs with ω = 1.3 (eq. 22) reaches the same NCP criterion on a full-rank problem.
    let p = random(2, 4, 40);
    let relaxed = SolverSettings {
        over_relaxation: 1.3,
        ..settings(1e-8, 2000)
    };
    let mut solver = build(SolverId::NcpPgs, &relaxed);
    let r = match solver.solve(&p, None) {
        Ok(r) => r,
        Err(err) => panic!("{err}"),
    };
    assert!(r.status.is_converged(), "{}", r.status);
    let c = p.velocity(&r.lambda);
    assert!(contactbench::metrics::relative_criterion(&p, &r.lambda, &c) <= 1e-8);
}
