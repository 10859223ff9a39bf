//! Every solver on the two forms of one pile's problem, the factorized operator
//! `J M⁻¹ Jᵀ` and its dense `G`: the same status and the same forces within 1e-10 relative
//! (measured: at most 1.3e-14), and the same criterion of an answer on both.

use crate::common::solvers::{build, criteria, settings};
use contactbench::problem::generators::box_pile;
use contactbench::problem::{ContactProblem, Delassus};
use contactbench::solvers::SolverId;

/// A pile of 2 columns of 2 cubes (16 contacts) and its dense copy.
fn pile_in_both_forms() -> (ContactProblem, ContactProblem) {
    let factorized = box_pile(2, 2, 0.05, 0.4, 1e-3).expect("pile");
    assert!(matches!(factorized.operator(), Delassus::Factorized(_)));
    let dense = ContactProblem::from_assembly(
        factorized.delassus().clone(),
        factorized.free_velocity().clone(),
        factorized.mu().clone(),
        None,
    )
    .expect("dense");
    (factorized, dense)
}

#[test]
fn every_solver_gives_the_same_answer_on_the_dense_and_the_factorized_pile() {
    let (factorized, dense) = pile_in_both_forms();
    for id in SolverId::ALL {
        let on = |p: &ContactProblem| {
            let mut solver = build(id, &settings(1e-8, 5000));
            solver.solve(p, None).expect("solve")
        };
        let (a, b) = (on(&factorized), on(&dense));
        assert_eq!(
            a.status.is_converged(),
            b.status.is_converged(),
            "{id}: {} against {}",
            a.status,
            b.status
        );
        let gap = (&a.lambda - &b.lambda).amax() / b.lambda.amax().max(f64::MIN_POSITIVE);
        println!(
            "{id}: {} in {} iterations, relative gap {gap:e}",
            a.status, a.iterations
        );
        assert!(gap < 1e-10, "{id}: relative gap {gap:e}");
        // The ruler measures the same criterion of one answer on both forms (round-off
        // relative to the criterion, or to the tolerance 1e-8 below it).
        let on_factorized = criteria(id.model(), &factorized, &a.lambda).relative;
        let on_dense = criteria(id.model(), &dense, &a.lambda).relative;
        assert!(
            (on_factorized - on_dense).abs() <= 1e-6 * on_dense.max(1e-8),
            "{id}: criterion {on_factorized:e} against {on_dense:e}"
        );
    }
}
