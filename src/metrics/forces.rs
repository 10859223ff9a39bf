//! Internal forces (design.md §5, paper Fig. 11): the part of `λ` in `null(Jᵀ)`, forces
//! that change no velocity, split into what the contact model requires and what the
//! solver injected (docs/ruler.md).
//!
//! With `N` an orthonormal basis of `null(Jᵀ)`, the internal part of `λ` is `N Nᵀ λ` and
//! its norm `‖Nᵀ λ‖` is the **total** internal force. Every `λ' = λ + N z` has the same
//! generalized impulse `Jᵀ λ'`, hence (without compliance) the same contact velocity `c`.
//! Among those that are answers of the same contact model at that velocity, the one of
//! least internal force, `λ*`, solves the small SOCP
//!
//! ```text
//! min_z ½ ‖Nᵀλ + z‖²   s.t. per contact i:  λ'_i = λ_i + N_i z  in the model's cone (relaxed
//!                                           by λ_i's own violation),
//!                                           |⟨λ'_i, ĉ_i⟩| ≤ |⟨λ_i, ĉ_i⟩|  when ‖ĉ_i‖ > 1e-4 v_s,
//! ```
//!
//! `ĉ_i` the model's corrected velocity (NCP `c + Γ(c)`, CCP `c`, LCP the pyramid's, RaiSim
//! `(−‖c_T‖ λ_T/‖λ_T‖, c_N + μ‖c_T‖)`, the face of the cone its sliding law selects):
//! with `λ'_i` in the cone and `ĉ_i` in the dual cone, `⟨λ'_i, ĉ_i⟩ = 0` is the
//! complementarity face (zero force when separating, the friction ray when sliding); a
//! contact at rest (`‖ĉ_i‖ ≤ 1e-4 v_s`) may take any force of the cone. The **required**
//! internal force is `‖Nᵀλ*‖`, the **spurious** one `‖λ − λ*‖ = ‖z*‖`. An exact, least
//! internal force answer has spurious 0; a pushed cube at stiction has a required part
//! (unequal friction forces keep it from rotating).
//!
//! The SOCP is solved in units where `λ_s = ‖λ‖∞` and `v_s = ‖g‖∞` are 1. When every
//! contact of a component slides or separates on a second-order cone (the sliding cube),
//! it is solved on the friction rays by a small active-set projection
//! ([`super::faces`]); otherwise by clarabel (`problem/conic.rs`, about 0.3 ms for a
//! cube's 4 contacts). It runs at record time,
//! never inside a solver, and not at all when the total is at most `1e-9 ‖λ‖∞` (then
//! required is 0 and spurious the total). Clarabel often ends `AlmostSolved` (its reduced
//! tolerances, about 5e-5, met but not its tolerance 1e-10: the face constraints leave a
//! slab of width 1e-12 at a complementary contact), which is accepted: the split of
//! such a step is accurate to about 1e-4 `‖λ‖∞` (measured: docs/speed.md, "The
//! internal-force split's SOCP"); the total does not depend on it.
//!
//! Contacts that share no body (two columns of cubes) are uncoupled: `null(Jᵀ)` is the
//! direct sum of each coupled component's own, the SOCP separates into one per
//! component, and total, required and spurious are the root sums of squares of the
//! components' (a component whose total is negligible counts it spurious, as above, at
//! the whole problem's `‖λ‖∞`). A component whose null space has more than
//! [`MAX_SPLIT_DIMENSION`] dimensions and whose unconstrained minimizer is infeasible is
//! not sent to clarabel: the split of that step is left empty (the total stays).

use nalgebra::{DMatrix, DVector, Vector3};
use serde::{Deserialize, Serialize};

use crate::problem::conic::{ConicLimits, ConicProgram};
use crate::problem::{cones, ContactJacobian, ContactModel, ContactProblem};

use super::components::with_components;
use super::faces::{least_internal_force_on_rays, ContactConstraint};
use super::null_space::{null_space_of_transpose, with_workspace, NullSpaceWorkspace};
/// A contact whose corrected velocity is at most this fraction of `v_s` is at rest.
const AT_REST: f64 = 1e-4;
/// A total internal force at most this fraction of `‖λ‖∞` is not split (an exact answer
/// of least internal force, as ADMM's, has 1e-16 here).
const NEGLIGIBLE: f64 = 1e-9;
/// Clarabel's tolerance on the dimensionless SOCP.
const SOCP_TOLERANCE: f64 = 1e-10;
/// Clarabel's iteration cap on the SOCP.
const SOCP_MAX_ITER: usize = 200;
/// Largest `dim null(Jᵀ)` of a coupled component whose SOCP goes to clarabel; a larger
/// one (a pile of a hundred touching cubes) leaves the split empty rather than spend
/// seconds on a step (module doc).
pub const MAX_SPLIT_DIMENSION: usize = 200;

/// The internal forces of an answer (N·s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InternalForces {
    /// `‖Nᵀλ‖`, the norm of the part of `λ` in `null(Jᵀ)`.
    pub total: f64,
    /// The least internal force among answers of the same model with the same `Jᵀλ`.
    pub required: f64,
    /// The distance from `λ` to that answer.
    pub spurious: f64,
}

/// Internal forces: the norm of the part of `λ` in `null(Jᵀ)`, forces that change no
/// velocity (design.md §5, paper Fig. 11). `None` when the problem carries no `J`; NaN
/// when `λ` is not finite.
pub fn internal_forces(problem: &ContactProblem, lambda: &DVector<f64>) -> Option<f64> {
    let jacobian = problem.contact_jacobian()?;
    if !lambda.iter().all(|x| x.is_finite()) {
        return Some(f64::NAN);
    }
    if jacobian.nrows() == 0 {
        return Some(0.0);
    }
    with_components(|components| {
        let count = components.find(jacobian);
        if let (ContactJacobian::Dense(jacobian), 1) = (jacobian, count) {
            return Some(with_workspace(|workspace, q| {
                workspace.factor(jacobian);
                workspace.project(lambda.as_slice(), q);
                norm(q)
            }));
        }
        // null(Jᵀ) is the direct sum of the components' null spaces: ‖Nᵀλ‖² adds up.
        let squares: f64 = (0..count)
            .map(|k| {
                components.load(jacobian, k, (lambda, lambda, |_| 0.0));
                with_workspace(|workspace, q| {
                    workspace.factor_columns(&components.block, components.rows);
                    workspace.project(&components.lambda, q);
                    norm(q).powi(2)
                })
            })
            .sum();
        Some(squares.sqrt())
    })
}

/// `‖x‖∞`, as nalgebra's `amax` (a plain loop over the slice).
fn amax(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// The Euclidean norm of a slice, as nalgebra's `norm` computes it.
fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The corrected velocity `ĉ_i` of `model` whose orthogonality to `λ'_i` selects the
/// answers of contact `i` at velocity `c_i` (module doc).
fn complementarity_face(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
) -> Vector3<f64> {
    match model {
        ContactModel::Ncp => c + cones::de_saxce_correction(mu, c),
        ContactModel::Ccp => *c,
        ContactModel::Lcp => c + cones::pyramid_correction(mu, c),
        ContactModel::Raisim => {
            let slip = c.xy().norm();
            let direction = if lambda.xy().norm() > 0.0 {
                lambda.xy() / lambda.xy().norm()
            } else if slip > 0.0 {
                -c.xy() / slip
            } else {
                return Vector3::new(0.0, 0.0, c.z);
            };
            Vector3::new(-slip * direction.x, -slip * direction.y, c.z + mu * slip)
        }
    }
}

/// The split of the module doc for an answer `λ` of `model`. `None` when the problem
/// carries no `J`, when `λ` or `c` is not finite, or when clarabel does not solve the
/// SOCP.
pub fn internal_force_split(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_internal_forces(problem, lambda, model, Shortcut::WhenUnconstrained)
}

/// [`internal_force_split`] with clarabel on every SOCP, never the shortcut of its
/// unconstrained minimizer: the reference the shortcut is checked against
/// (tests/metrics/internal_forces.rs).
pub fn internal_force_split_by_socp(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_internal_forces(problem, lambda, model, Shortcut::Never)
}

/// [`internal_force_split`] without clarabel: `None` where the SOCP's answer is neither
/// the unconstrained minimizer nor found on the friction rays ([`super::faces`]). The
/// tests compare it with [`internal_force_split_by_socp`].
pub fn internal_force_split_on_rays(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_internal_forces(problem, lambda, model, Shortcut::WithoutClarabel)
}

/// An orthonormal basis (columns) of `null(Jᵀ)`, the directions of the forces that change
/// no velocity; empty when `J` has full row rank (Solo-12's four feet).
pub fn internal_force_directions(jacobian: &DMatrix<f64>) -> DMatrix<f64> {
    null_space_of_transpose(jacobian)
}

/// Whether the SOCP may be skipped when its unconstrained minimizer is feasible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortcut {
    /// Skip clarabel when `z = −q` satisfies every constraint, or when every contact
    /// slides or separates on a second-order cone (the SOCP on the friction rays,
    /// [`super::faces`]).
    WhenUnconstrained,
    /// Always solve the SOCP with clarabel ([`internal_force_split_by_socp`]).
    Never,
    /// As `WhenUnconstrained`, but no answer rather than clarabel's
    /// ([`internal_force_split_on_rays`]).
    WithoutClarabel,
}

/// [`internal_force_split`], with or without the shortcut.
fn split_internal_forces(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
    shortcut: Shortcut,
) -> Option<InternalForces> {
    split_at_velocity(problem, lambda, &problem.velocity(lambda), model, shortcut)
}

/// [`internal_force_split`] with `c = (G + R) λ + g` already computed (the other metrics
/// need it too).
pub(crate) fn internal_force_split_at(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_at_velocity(problem, lambda, c, model, Shortcut::WhenUnconstrained)
}

/// [`split_internal_forces`] at the velocity `c` of `λ`.
fn split_at_velocity(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    model: ContactModel,
    shortcut: Shortcut,
) -> Option<InternalForces> {
    let jacobian = problem.contact_jacobian()?;
    if !(lambda.iter().all(|x| x.is_finite()) && c.iter().all(|x| x.is_finite())) {
        return None;
    }
    let scales = Scales {
        impulse: amax(lambda.as_slice()),
        velocity: problem.velocity_scale().max(amax(c.as_slice())),
        at_rest: AT_REST * problem.velocity_scale(),
    };
    with_components(|components| {
        let count = components.find(jacobian);
        if let (ContactJacobian::Dense(jacobian), 0 | 1) = (jacobian, count) {
            components.mus.clear();
            components
                .mus
                .extend((0..problem.num_contacts()).map(|i| problem.mu_of(i)));
            let part = Part {
                lambda: lambda.as_slice(),
                c: c.as_slice(),
                mus: &components.mus,
            };
            return with_workspace(|workspace, q| {
                workspace.factor(jacobian);
                split_with(&part, &scales, model, shortcut, workspace, q)
            });
        }
        // One SOCP per component; the norms of the direct sum add up in squares.
        let mut squares = [0.0; 3];
        for k in 0..count {
            components.load(jacobian, k, (lambda, c, |i| problem.mu_of(i)));
            let part = Part {
                lambda: &components.lambda,
                c: &components.velocity,
                mus: &components.mus,
            };
            let split = with_workspace(|workspace, q| {
                workspace.factor_columns(&components.block, components.rows);
                split_with(&part, &scales, model, shortcut, workspace, q)
            })?;
            for (sum, x) in squares
                .iter_mut()
                .zip([split.total, split.required, split.spurious])
            {
                *sum += x * x;
            }
        }
        let [total, required, spurious] = squares.map(f64::sqrt);
        Some(InternalForces {
            total,
            required,
            spurious,
        })
    })
}

/// The contacts of one coupled component (or of the whole problem): their `λ`, `c` and
/// friction coefficients.
struct Part<'a> {
    lambda: &'a [f64],
    c: &'a [f64],
    mus: &'a [f64],
}

/// The 3-vector of contact `i` in a stacked slice.
fn triple(x: &[f64], i: usize) -> Vector3<f64> {
    Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2])
}

/// The whole problem's scales, shared by its components: `λ_s = ‖λ‖∞`, `v_s`, and the
/// speed below which a contact is at rest.
struct Scales {
    impulse: f64,
    velocity: f64,
    at_rest: f64,
}

/// [`split_internal_forces`] on the factorization of `J` in `workspace` (`q` scratch):
/// `Nᵀλ` and the shortcut's `N Nᵀλ` by the stored reflectors, `N` formed only for
/// clarabel.
fn split_with(
    part: &Part,
    scales: &Scales,
    model: ContactModel,
    shortcut: Shortcut,
    workspace: &mut NullSpaceWorkspace,
    q: &mut Vec<f64>,
) -> Option<InternalForces> {
    let (lambda, c) = (part.lambda, part.c);
    workspace.project(lambda, q);
    let impulse_scale = scales.impulse;
    let total = norm(q);
    if total <= NEGLIGIBLE * impulse_scale {
        // Nothing to split (no SOCP): both parts are at most 2 × total; counted spurious.
        let split = InternalForces {
            total,
            required: 0.0,
            spurious: total,
        };
        return Some(split);
    }
    let velocity_scale = scales.velocity;
    // Dimensionless: λ̃ = λ / λ_s, ĉ̃ = ĉ / v_s; z is in units of λ_s.
    let constraints: Vec<ContactConstraint> = (part.mus.iter().enumerate())
        .map(|(i, &mu)| {
            let face =
                complementarity_face(model, mu, &triple(lambda, i), &triple(c, i)) / velocity_scale;
            let sliding_or_separating = face.norm() * velocity_scale > scales.at_rest;
            ContactConstraint {
                model,
                mu,
                lambda: triple(lambda, i) / impulse_scale,
                face: sliding_or_separating.then_some(face),
            }
        })
        .collect();
    if shortcut != Shortcut::Never {
        // z = −q̃ (the answer of least norm with the same Jᵀλ): λ̃ − N Nᵀ λ̃, by reflectors.
        q.iter_mut().for_each(|x| *x /= -impulse_scale);
        let mut moved = std::mem::take(&mut workspace.lifted);
        moved.resize(lambda.len(), 0.0);
        workspace.lift(q, &mut moved);
        let feasible = constraints
            .iter()
            .zip(moved.as_chunks::<3>().0)
            .all(|(c, moved)| c.admits(&(c.lambda + Vector3::from(*moved))));
        workspace.lifted = moved;
        if feasible {
            let split = InternalForces {
                total,
                required: 0.0,
                spurious: norm(q) * impulse_scale,
            };
            return Some(split);
        }
    }
    if workspace.dimension() > MAX_SPLIT_DIMENSION {
        return None;
    }
    let null = workspace.basis();
    let q = null.tr_mul(&DVector::from_iterator(
        lambda.len(),
        lambda.iter().map(|x| x / impulse_scale),
    ));
    let on_rays = (shortcut != Shortcut::Never)
        .then(|| least_internal_force_on_rays(&constraints, &null, &q))
        .flatten();
    let z = match (on_rays, shortcut) {
        (Some(z), _) => z,
        (None, Shortcut::WithoutClarabel) => return None,
        (None, _) => least_internal_force_step(&constraints, &null, &q)?,
    };
    let split = InternalForces {
        total,
        required: (&q + &z).norm() * impulse_scale,
        spurious: z.norm() * impulse_scale,
    };
    Some(split)
}

/// `z*` of the module doc's SOCP `min_z ½ ‖q + z‖²` under `constraints`, `q = Nᵀλ̃`,
/// by clarabel (the caller has tried the unconstrained minimizer `z = −q` first: when it
/// satisfies every constraint it is the minimizer, found without a solver). `None` when
/// clarabel does not solve it.
fn least_internal_force_step(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
) -> Option<DVector<f64>> {
    let k = null.ncols();
    let mut program = ConicProgram::default();
    for (i, constraint) in constraints.iter().enumerate() {
        let rows = null.rows(3 * i, 3);
        let (t1, t2, n) = (
            rows.row(0).transpose(),
            rows.row(1).transpose(),
            rows.row(2).transpose(),
        );
        add_cone(&mut program, constraint, (&t1, &t2, &n));
        if let Some(face) = constraint.face {
            // |⟨λ̃_i + N_i z, ĉ_i⟩| ≤ |⟨λ̃_i, ĉ_i⟩| (+ a floor that keeps an interior).
            let a = &t1 * face.x + &t2 * face.y + &n * face.z;
            let at_lambda = constraint.lambda.dot(&face);
            let bound = ContactConstraint::face_bound(&face, &constraint.lambda);
            program.nonnegative(&a, bound - at_lambda);
            program.nonnegative(&(-&a), bound + at_lambda);
        }
    }
    let limits = ConicLimits {
        tolerance: SOCP_TOLERANCE,
        max_iter: SOCP_MAX_ITER,
        time_limit: None,
    };
    let solution = program.solve(&DMatrix::identity(k, k), q, limits).ok()?;
    let solved = matches!(
        solution.status,
        clarabel::solver::SolverStatus::Solved | clarabel::solver::SolverStatus::AlmostSolved
    );
    (solved && solution.x.iter().all(|x| x.is_finite())).then_some(solution.x)
}

/// `λ̃_i + N_i z` in the cone of the contact's model, relaxed by `λ̃_i`'s own violation so
/// that `z = 0` is feasible. `rows` are the rows `(t1, t2, n)` of `N_i`, as columns.
fn add_cone(
    program: &mut ConicProgram,
    constraint: &ContactConstraint,
    (t1, t2, n): (&DVector<f64>, &DVector<f64>, &DVector<f64>),
) {
    let (mu, lambda) = (constraint.mu, &constraint.lambda);
    let delta = constraint.cone_relaxation();
    if constraint.model == ContactModel::Lcp {
        // μ λ'_N ∓ λ'_Tk + δ ≥ 0 and λ'_N + δ ≥ 0.
        for (t, lt) in [(t1, lambda.x), (t2, lambda.y)] {
            for sign in [1.0, -1.0] {
                let a = -(n * mu) + t * sign;
                program.nonnegative(&a, mu * lambda.z - sign * lt + delta);
            }
        }
        program.nonnegative(&(-n), lambda.z + delta);
    } else {
        // (μ λ'_N + δ, λ'_T) in the second-order cone.
        program.second_order(&[
            (-(n * mu), mu * lambda.z + delta),
            (-t1, lambda.x),
            (-t2, lambda.y),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::cube_on_plane;

    #[test]
    fn cube_weight_split_evenly_has_no_internal_forces() {
        let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3) else {
            panic!("valid cube problem");
        };
        let even = DVector::from_fn(12, |i, _| if i % 3 == 2 { 0.25 } else { 0.0 });
        let internal = internal_forces(&p, &even);
        assert!(internal.is_some_and(|f| f < 1e-12));
        // Pushing two diagonal corners and pulling the others changes no velocity.
        let twisted = DVector::from_fn(12, |i, _| match i {
            2 | 8 => 1.0,
            5 | 11 => -1.0,
            _ => 0.0,
        });
        let internal = internal_forces(&p, &twisted);
        assert!(internal.is_some_and(|f| (f - 2.0).abs() < 1e-9));
    }
}
