//! The paper's findings on per-contact methods (§IV-A): internal forces on a cube at
//! stiction (Fig. 11) and failure on a heavy-on-light stack (Fig. 12).

use crate::common::solvers as common;

use common::{build, settings};
use contactbench::metrics::compute_metrics;
use contactbench::problem::generators::{cube_on_plane, cube_stack};
use contactbench::problem::ContactProblem;
use contactbench::solvers::SolverId;

/// The per-contact methods of the paper's Fig. 11 and 12.
const PER_CONTACT: [SolverId; 4] = [
    SolverId::LcpPgs,
    SolverId::CcpPgs,
    SolverId::NcpPgs,
    SolverId::Raisim,
];

fn valid(p: Result<ContactProblem, contactbench::problem::ProblemError>) -> ContactProblem {
    match p {
        Ok(p) => p,
        Err(err) => panic!("invalid generated problem: {err}"),
    }
}

#[test]
fn per_contact_methods_leave_internal_forces_at_stiction() {
    // 1 kg cube, μ = 0.5, pushed by 2 N < μ m g = 4.9 N: it sticks. The even split of the
    // weight has no internal force (tested with the generators); the four corner forces
    // are not unique (G has rank 6 for 12 unknowns).
    let p = valid(cube_on_plane(1.0, 0.1, 0.5, 2.0, 1e-3));
    for id in PER_CONTACT {
        let mut solver = build(id, &settings(1e-8, 1000));
        let report = match solver.solve(&p, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        assert!(report.status.is_converged(), "{id}: {}", report.status);
        let m = compute_metrics(&p, &report.lambda);
        let Some(internal) = m.internal_forces else {
            panic!("{id}: the cube problem carries J");
        };
        let relative = internal / report.lambda.norm();
        println!(
            "{id}: internal forces {internal:.3e} ({:.1} % of |lambda|)",
            100.0 * relative
        );
        assert!(
            relative > 0.05,
            "{id}: internal forces only {relative:.3e} of |lambda|"
        );
    }
}

#[test]
fn per_contact_methods_fail_on_a_heavy_cube_over_a_light_one() {
    // Fig. 12: 1e3 kg on 1e-3 kg (mass ratio 1e6). The same solvers converge on the
    // ratio-1 stack, so the failure is the conditioning's.
    let ill = valid(cube_stack(1e-3, 1e6, 0.1, 0.5, 1e-3));
    let even = valid(cube_stack(1.0, 1.0, 0.1, 0.5, 1e-3));
    for id in PER_CONTACT {
        let mut solver = build(id, &settings(1e-6, 1000));
        let report = match solver.solve(&ill, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        println!(
            "{id}: ratio 1e6: {} after {} iterations, residual {:.3e}",
            report.status, report.iterations, report.residual
        );
        assert!(
            !report.status.is_converged(),
            "{id} converged on the 1e6 stack"
        );
        assert!(report.residual > 1e-6, "{id}");
        let report = match solver.solve(&even, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        println!(
            "{id}: ratio 1: {} after {} iterations",
            report.status, report.iterations
        );
        assert!(
            report.status.is_converged(),
            "{id}: ratio 1: {}",
            report.status
        );
    }
}

#[test]
fn raisim_relaxation_decay_slows_convergence() {
    // Alg. 4 with ContactBench's defaults lets α decay from 1 to α_min = 0.1 (γ = 0.99):
    // on a 20-contact random problem it does not reach 1e-6 in 1000 sweeps, while the
    // same solver with α held at 1 (α_min = 1) does.
    let p = valid(contactbench::problem::generators::random_problem(
        20, 20, 72,
    ));
    let mut results = Vec::new();
    for spec in ["raisim:eps_rel=1e-6", "raisim:eps_rel=1e-6,alpha_min=1"] {
        let solver = spec
            .parse::<contactbench::solvers::SolverSpec>()
            .and_then(|s| s.build());
        let mut solver = match solver {
            Ok(solver) => solver,
            Err(err) => panic!("{spec}: {err}"),
        };
        let report = match solver.solve(&p, None) {
            Ok(r) => r,
            Err(err) => panic!("{spec}: {err}"),
        };
        println!(
            "{spec}: {} after {} sweeps",
            report.status, report.iterations
        );
        results.push(report);
    }
    assert!(!results[0].status.is_converged());
    assert!(results[1].status.is_converged(), "{}", results[1].status);
}
