//! The relative criterion's scales are local to what they judge (docs/ruler.md): a
//! contact's complementarity waiver and its cone tolerance come from its own impulse and
//! stiffness, its velocity scale from the contacts coupled with it through `G`. Nothing
//! elsewhere in the problem (a huge squeeze, a fast body) loosens the judgement of a
//! contact.

use contactbench::metrics::model_criteria;
use contactbench::problem::coupling::contact_groups;
use contactbench::problem::ContactModel;
use contactbench::problem::ContactProblem;
use contactbench::solvers::{SolverId, SolverSettings};
use nalgebra::{DMatrix, DVector};
use serde_json::Map;

/// A contact between point bodies of unit mass: the velocity of `body` relative to
/// `other` (`None`: the fixed world), along the frame `[t1, t2, n]` (unit vectors).
type Contact = (Option<usize>, usize, [f64; 3], [f64; 3], [f64; 3]);

/// `G = J Jᵀ`, `g = J v_free` of `contacts` between point bodies of unit mass.
fn point_bodies(contacts: &[Contact], v_free: &[f64], mu: f64) -> ContactProblem {
    let n = contacts.len();
    let mut j = DMatrix::<f64>::zeros(3 * n, v_free.len());
    for (i, (other, body, t1, t2, normal)) in contacts.iter().enumerate() {
        for (row, axis) in [t1, t2, normal].iter().enumerate() {
            for k in 0..3 {
                j[(3 * i + row, 3 * body + k)] += axis[k];
                if let Some(o) = other {
                    j[(3 * i + row, 3 * o + k)] -= axis[k];
                }
            }
        }
    }
    let g = &j * DVector::from_column_slice(v_free);
    let problem = ContactProblem::new(&j * j.transpose(), g, DVector::from_element(n, mu), None);
    problem.unwrap_or_else(|e| panic!("valid problem: {e}"))
}

const X: [f64; 3] = [1.0, 0.0, 0.0];
const Y: [f64; 3] = [0.0, 1.0, 0.0];
const Z: [f64; 3] = [0.0, 0.0, 1.0];
const MINUS_X: [f64; 3] = [-1.0, 0.0, 0.0];
const MINUS_Z: [f64; 3] = [0.0, 0.0, -1.0];

/// Body 0 held between two walls (normals ±x) by friction against its weight
/// (`v_free,z = −0.01`); body 1, elsewhere, falls on the floor (`g_N = −1`).
fn squeezed_and_elsewhere() -> ContactProblem {
    point_bodies(
        &[
            (None, 0, Y, Z, X),
            (None, 0, Y, MINUS_Z, MINUS_X),
            (None, 1, X, Y, Z),
        ],
        &[0.0, 0.0, -0.01, 0.0, 0.0, -1.0],
        0.5,
    )
}

/// The walls squeeze body 0 with 1e8 N·s and hold its weight exactly (`c = 0` there);
/// body 1's contact pushes with 11 N·s while it separates at 10 m/s.
fn squeezed_answer() -> DVector<f64> {
    DVector::from_vec(vec![0.0, 0.005, 1e8, 0.0, -0.005, 1e8, 0.0, 0.0, 11.0])
}

#[test]
fn an_internal_squeeze_elsewhere_does_not_waive_a_separating_contact() {
    let p = squeezed_and_elsewhere();
    assert_eq!(contact_groups(p.delassus()), vec![0, 0, 2]);
    let lambda = squeezed_answer();
    let c = p.velocity(&lambda);
    // The walls are exact: the squeeze is internal, the friction holds the weight.
    assert_eq!(c.rows(0, 6).amax(), 0.0);
    assert_eq!(c[8], 10.0);
    for model in [ContactModel::Ncp, ContactModel::Ccp] {
        // Contact 2 pushes (11 N·s, above its floor v / G_22 = 1 N·s) while separating at
        // 10 v: r = min(10, 1) = 1. Against the squeeze's 1e8 N·s it scored 1.1e-7.
        let r = model_criteria(model, &p, &lambda, &c).relative;
        assert!((r - 1.0).abs() <= 1e-12, "{model:?}: r = {r:e}");
    }
}

#[test]
fn the_admm_solvers_refuse_the_squeezed_warm_start() {
    let p = squeezed_and_elsewhere();
    let warm = squeezed_answer();
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        let mut solver = id
            .build(SolverSettings::default(), &Map::new())
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let report = solver
            .solve(&p, Some(&warm))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(report.iterations > 0, "{id}: accepted after 0 iterations");
        // Whatever the status, the answer reported converged is judged contact by contact:
        // body 1 must rest on the floor, its force λ_N = 1 N·s.
        if report.status.is_converged() {
            assert!(
                (report.lambda[8] - 1.0).abs() <= 1e-5,
                "{id}: λ_N = {}",
                report.lambda[8]
            );
            assert!(
                report.velocity[8].abs() <= 1e-5,
                "{id}: c_N = {}",
                report.velocity[8]
            );
        }
        println!(
            "{id}: {} after {} iterations, r = {:.2e}, λ_N of body 1 = {:.6}",
            report.status, report.iterations, report.residual, report.lambda[8]
        );
    }
}

#[test]
fn a_fast_body_elsewhere_does_not_excuse_a_penetration() {
    // Body 0 flies at 1e6 m/s along its contact's tangent; body 1 falls on the floor at
    // 1 m/s and the answer leaves it penetrating at 0.1 m/s (λ_N = 0.9 instead of 1).
    let p = point_bodies(
        &[(None, 0, X, Y, Z), (None, 1, X, Y, Z)],
        &[1e6, 0.0, 0.0, 0.0, 0.0, -1.0],
        0.5,
    );
    let lambda = DVector::from_vec(vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.9]);
    let c = p.velocity(&lambda);
    assert!((c[5] + 0.1).abs() <= 1e-15);
    // Against the problem's largest free velocity the penetration was 1e-7 v_s.
    let r = model_criteria(ContactModel::Ncp, &p, &lambda, &c).relative;
    assert!((r - 0.1).abs() <= 1e-12, "r = {r:e}");
}

#[test]
fn coupled_contacts_share_the_velocity_scale_of_their_group() {
    // A point body on the floor with a second one on top of it, both falling at 1 m/s:
    // the contact between them has no free velocity of its own (g = 0) and is judged
    // against its group's 1 m/s.
    let p = point_bodies(
        &[(None, 0, X, Y, Z), (Some(0), 1, X, Y, Z)],
        &[0.0, 0.0, -1.0, 0.0, 0.0, -1.0],
        0.5,
    );
    assert_eq!(contact_groups(p.delassus()), vec![0, 0]);
    assert_eq!(p.free_velocity()[5], 0.0);
    assert_eq!(p.velocity_scale_of(1), 1.0);
    // Exact: the floor carries both bodies (2 N·s), the top contact one (1 N·s).
    let exact = DVector::from_vec(vec![0.0, 0.0, 2.0, 0.0, 0.0, 1.0]);
    let c = p.velocity(&exact);
    assert_eq!(c.amax(), 0.0);
    assert_eq!(
        model_criteria(ContactModel::Ncp, &p, &exact, &c).relative,
        0.0
    );
    // 1e-3 N·s short on both: the bottom body rests, the top one penetrates at 1e-3 m/s.
    let short = DVector::from_vec(vec![0.0, 0.0, 2.0 - 1e-3, 0.0, 0.0, 1.0 - 1e-3]);
    let c = p.velocity(&short);
    assert!(c[2].abs() <= 1e-15 && (c[5] + 1e-3).abs() <= 1e-15, "{c}");
    let r = model_criteria(ContactModel::Ncp, &p, &short, &c).relative;
    assert!((r - 1e-3).abs() <= 1e-12, "r = {r:e}");
}

#[test]
fn local_scales_keep_the_criterion_free_of_units() {
    let p = squeezed_and_elsewhere();
    let lambda = DVector::from_vec(vec![0.1, 0.004, 3.0, -0.2, -0.006, 2.0, 0.3, 0.1, 0.7]);
    let r = |p: &ContactProblem, lambda: &DVector<f64>| {
        model_criteria(ContactModel::Ncp, p, lambda, &p.velocity(lambda)).relative
    };
    let reference = r(&p, &lambda);
    let rebuilt = |g_scale: f64, v_scale: f64| {
        ContactProblem::new(
            p.delassus() * g_scale,
            p.free_velocity() * v_scale,
            p.mu().clone(),
            None,
        )
        .unwrap_or_else(|e| panic!("valid problem: {e}"))
    };
    // Impulses in mN·s: λ → 1e3 λ, G → G / 1e3.
    let impulses = r(&rebuilt(1e-3, 1.0), &(&lambda * 1e3));
    // Velocities in mm/s: g → 1e3 g, G → 1e3 G.
    let velocities = r(&rebuilt(1e3, 1e3), &lambda);
    for other in [impulses, velocities] {
        assert!(
            (other - reference).abs() <= 1e-12 * reference,
            "{other:e} vs {reference:e}"
        );
    }
}
