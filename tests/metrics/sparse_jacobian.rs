//! The internal-force metrics read a large problem's contact Jacobian by its sparse rows
//! (no `3n × nv` matrix): on piles they give what the dense `J` gives, for the solver's
//! answer and for forces twisted to carry internal forces of the size of the weights.

use contactbench::metrics::forces::{internal_force_split, internal_forces};
use contactbench::problem::{ContactJacobian, ContactModel, ContactProblem};
use contactbench::simulation::{Scenario, Simulator, World};
use contactbench::solvers::SolverSpec;
use nalgebra::DVector;

/// The problem and answer of the third recorded step of a shipped scenario.
fn third_step(scenario: &str, set: &str) -> (ContactProblem, DVector<f64>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(scenario);
    let scenario = Scenario::load(&path, &[set.to_string()]).unwrap_or_else(|e| panic!("{e}"));
    let world = World::build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ncp-admm:eps_rel=1e-6"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let solver = spec.build().unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(
        world,
        solver,
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    );
    for _ in 0..3 {
        sim.step().unwrap_or_else(|e| panic!("{e}"));
    }
    let Some((problem, lambda, _)) = sim.last_solution() else {
        panic!("contacts at the third step");
    };
    (problem.clone(), lambda.clone())
}

/// `λ` with each contact's tangential force turned to a tenth of its normal force, in a
/// direction of its own: inside every cone of friction at least 0.1, and far from the
/// least internal force a resting pile's answer carries.
fn twisted(lambda: &DVector<f64>) -> DVector<f64> {
    let mut out = lambda.clone();
    for (i, contact) in out.as_mut_slice().chunks_exact_mut(3).enumerate() {
        let radius = 0.1 * contact[2];
        contact[0] = radius * (i as f64).cos();
        contact[1] = radius * (i as f64).sin();
    }
    out
}

#[test]
fn piles_give_the_same_internal_forces_from_the_sparse_and_the_dense_jacobian() {
    for (scenario, set, components) in [
        (
            "pile_columns.yaml",
            "world.generate.columns={nx: 3, ny: 3, height: 3}",
            9,
        ),
        ("pile_pyramid.yaml", "world.generate.pyramid={base: 3}", 1),
    ] {
        let (sparse, answer) = third_step(scenario, set);
        let Some(ContactJacobian::Sparse(rows)) = sparse.contact_jacobian() else {
            panic!("{scenario}: a pile's problem carries J by sparse rows");
        };
        assert!(sparse.jacobian().is_none(), "{scenario}: no dense J formed");
        let j = ContactJacobian::Sparse(rows.clone());
        let dense = sparse
            .clone()
            .with_jacobian(j.to_dense())
            .unwrap_or_else(|e| panic!("{e}"));
        let Some(dense_j) = dense.contact_jacobian() else {
            panic!("attached");
        };
        let groups = j.coupled_components();
        assert_eq!(groups.len(), components, "{scenario}");
        assert_eq!(groups, dense_j.coupled_components(), "{scenario}");
        for contacts in &groups {
            assert_eq!(j.component(contacts), dense_j.component(contacts));
        }
        for (forces, lambda) in [("answer", answer.clone()), ("twisted", twisted(&answer))] {
            let scale = lambda.amax();
            let total = (
                internal_forces(&sparse, &lambda),
                internal_forces(&dense, &lambda),
            );
            let (Some(a), Some(b)) = total else {
                panic!("{scenario}: totals {total:?}");
            };
            let split = (
                internal_force_split(&sparse, &lambda, ContactModel::Ncp),
                internal_force_split(&dense, &lambda, ContactModel::Ncp),
            );
            let (Some(sa), Some(sb)) = split else {
                panic!("{scenario}: splits {split:?}");
            };
            let gap = [
                a - b,
                sa.total - sb.total,
                sa.required - sb.required,
                sa.spurious - sb.spurious,
            ]
            .iter()
            .fold(0.0_f64, |m, x| m.max(x.abs()))
                / scale;
            println!("{scenario}, {forces}: total {a:e}, split {sa:?}, gap {gap:e} of ‖λ‖∞");
            assert!(gap <= 1e-13, "{scenario}, {forces}: gap {gap:e} of ‖λ‖∞");
            if forces == "twisted" {
                assert!(a >= 0.01 * scale, "{scenario}: twisted total {a:e}");
            }
        }
    }
}
