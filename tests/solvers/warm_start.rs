//! Warm starting from the previous solution cuts iterations on a sequence of nearby
//! problems (paper §III "additional practical tricks", Fig. 16).

use crate::common::solvers as common;

use common::{build, settings};
use contactbench::problem::generators::{cube_on_plane, random_problem};
use contactbench::problem::ContactProblem;
use contactbench::solvers::{SolverId, SolverSettings};
use nalgebra::DVector;

const PER_CONTACT: [SolverId; 5] = [
    SolverId::LcpPgs,
    SolverId::CcpPgs,
    SolverId::NcpPgs,
    SolverId::Raisim,
    SolverId::RaisimCorrected,
];

/// A cube pushed by a slowly growing force (stiction): 20 steps of 0.1 N.
fn pushed_cube() -> Vec<ContactProblem> {
    (0..20)
        .map(
            |k| match cube_on_plane(1.0, 0.1, 0.5, 0.1 * f64::from(k), 1e-3) {
                Ok(p) => p,
                Err(err) => panic!("{err}"),
            },
        )
        .collect()
}

/// One random problem whose free velocity drifts by 1e-3 per step: 20 steps.
fn drifting_random() -> Vec<ContactProblem> {
    let base = match random_problem(11, 6, 36) {
        Ok(p) => p,
        Err(err) => panic!("{err}"),
    };
    (0..20)
        .map(|k| {
            let drift = DVector::from_fn(base.dim(), |i, _| {
                1e-3 * f64::from(k) * ((i % 5) as f64 - 2.0)
            });
            match ContactProblem::new(
                base.delassus().clone(),
                base.free_velocity() + drift,
                base.mu().clone(),
                None,
            ) {
                Ok(p) => p,
                Err(err) => panic!("{err}"),
            }
        })
        .collect()
}

/// Total iterations over the sequence, cold and warm (from the previous answer).
fn iterations(id: SolverId, sequence: &[ContactProblem]) -> (usize, usize) {
    // Stop on the relative criterion only (eps_step = 0), at the default tolerance.
    let mut solver = build(
        id,
        &SolverSettings {
            eps_step: 0.0,
            ..settings(1e-6, 2000)
        },
    );
    let (mut cold, mut warm) = (0, 0);
    let mut previous: Option<DVector<f64>> = None;
    for p in sequence {
        let c = match solver.solve(p, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        let w = match solver.solve(p, previous.as_ref()) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        assert!(
            c.status.is_converged() && w.status.is_converged(),
            "{id}: {} / {}",
            c.status,
            w.status
        );
        cold += c.iterations;
        warm += w.iterations;
        previous = Some(w.lambda);
    }
    (cold, warm)
}

#[test]
fn warm_start_cuts_iterations() {
    for (name, sequence) in [
        ("pushed cube", pushed_cube()),
        ("drifting random", drifting_random()),
    ] {
        for id in PER_CONTACT {
            let (cold, warm) = iterations(id, &sequence);
            let ratio = warm as f64 / cold as f64;
            println!("{name}: {id}: cold {cold}, warm {warm} iterations (ratio {ratio:.2})");
            assert!(ratio < 0.9, "{name}: {id}: warm/cold = {ratio:.2}");
        }
    }
}
