//! Assembling the contact problem of one time step from a model's quantities
//! (design.md §1, paper eq. 2–4).
//!
//! Given the contact Jacobian `J` (`3n × nv`, rows `[t1, t2, n]` per contact, contact
//! frames), the Cholesky factor `M = L Lᵀ` and the free velocity `v_f`:
//!
//! - `G = J M⁻¹ Jᵀ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ Jᵀ)`, symmetric PSD by construction;
//! - `g = J v_f + b`, `b` zero on tangential rows and, on the normal row, with `φ` the
//!   signed distance: `φ / Δt` for `φ ≥ 0`, `K_b φ / Δt` for `φ < 0` (Baumgarte);
//! - restitution: a contact that was not pushing at the previous step and approaches at
//!   `c_N⁻ < −threshold` gets the target `b_N = e c_N⁻` instead of the gap and Baumgarte
//!   terms, so that it leaves at exactly `e |c_N⁻|`: the bounce starts where the contact
//!   is detected (inside the margin, or after at most one step of penetration), an error
//!   on the height of at most one step of travel, and no energy is added;
//! - compliance: `R = r I` (paper §II).

use nalgebra::{DMatrix, DVector};

use super::{ContactProblem, ProblemError};
use crate::dynamics::{DynamicsError, MassCholesky};
use crate::simulation::params::StepParameters;

/// What the bias `b` needs to know about one contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactState {
    /// Signed distance `φ` (m), negative when penetrating.
    pub signed_distance: f64,
    /// Normal velocity before the step, `c_N⁻ = (J v)_N` (m/s), negative when approaching.
    pub normal_velocity: f64,
    /// True when the contact carried no normal force at the previous step (or is new).
    pub was_inactive: bool,
    /// Friction coefficient `μ`.
    pub mu: f64,
}

/// A contact problem with the operator that maps its forces back to joint velocities.
#[derive(Debug, Clone)]
pub struct AssembledProblem {
    /// The problem `(G, g, μ, R)` with `J` attached.
    pub problem: ContactProblem,
    /// `M⁻¹ Jᵀ` (`nv × 3n`), so that `v⁺ = v_f + M⁻¹ Jᵀ λ`.
    pub minv_jt: DMatrix<f64>,
}

/// Free velocity `v_f = v + Δt M⁻¹ (τ + J_extᵀ f_ext − nle(q, v))` (paper eq. 2), given the
/// generalized force `f = τ + J_extᵀ f_ext − nle` (`nv`).
pub fn free_velocity(
    mass: &MassCholesky,
    v: &DVector<f64>,
    generalized_force: &DVector<f64>,
    dt: f64,
) -> Result<DVector<f64>, DynamicsError> {
    Ok(v + mass.solve(generalized_force)? * dt)
}

/// Normal bias `b_N` of one contact (design.md §1).
pub fn normal_bias(contact: &ContactState, params: &StepParameters) -> f64 {
    let phi = contact.signed_distance;
    if restitution_applies(contact, params) {
        params.restitution * contact.normal_velocity
    } else if phi >= 0.0 {
        phi / params.dt
    } else {
        params.baumgarte * phi / params.dt
    }
}

/// Restitution acts on a contact that was not pushing and approaches faster than the
/// threshold, when `e > 0`.
fn restitution_applies(contact: &ContactState, params: &StepParameters) -> bool {
    params.restitution > 0.0
        && contact.was_inactive
        && contact.normal_velocity < -params.restitution_threshold
}

/// Assembles `(G, g, μ, R)` and `M⁻¹Jᵀ` (module docs). `jacobian` is `3n × nv`,
/// `free_velocity` is `v_f` (`nv`), `contacts` has `n` entries.
pub fn assemble(
    jacobian: &DMatrix<f64>,
    mass: &MassCholesky,
    free_velocity: &DVector<f64>,
    contacts: &[ContactState],
    params: &StepParameters,
) -> Result<AssembledProblem, ProblemError> {
    let n = contacts.len();
    if mass.dim() != free_velocity.len() {
        return Err(ProblemError::Size {
            field: "M",
            expected: format!("{0}x{0}", free_velocity.len()),
            got: format!("{0}x{0}", mass.dim()),
        });
    }
    if jacobian.nrows() != 3 * n || jacobian.ncols() != free_velocity.len() {
        return Err(ProblemError::Size {
            field: "J",
            expected: format!("{}x{}", 3 * n, free_velocity.len()),
            got: format!("{}x{}", jacobian.nrows(), jacobian.ncols()),
        });
    }
    let (delassus, minv_jt) = delassus_and_minv_jt(jacobian, mass);
    let mut g = jacobian * free_velocity;
    for (i, contact) in contacts.iter().enumerate() {
        g[3 * i + 2] += normal_bias(contact, params);
    }
    let mu = DVector::from_iterator(n, contacts.iter().map(|c| c.mu));
    let compliance =
        (params.compliance > 0.0).then(|| DVector::from_element(3 * n, params.compliance));
    let problem = ContactProblem::from_assembly(delassus, g, mu, compliance)?
        .with_jacobian(jacobian.clone())?;
    Ok(AssembledProblem { problem, minv_jt })
}

/// `G = J M⁻¹ Jᵀ` as `Xᵀ X` with `X = L⁻¹ Jᵀ`, and `M⁻¹ Jᵀ = L⁻ᵀ X` (the factor of a
/// Cholesky decomposition has a positive diagonal, so the triangular solves are defined;
/// sizes are checked by [`assemble`]).
fn delassus_and_minv_jt(
    jacobian: &DMatrix<f64>,
    mass: &MassCholesky,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let l = mass.l();
    let x = l.solve_lower_triangular_unchecked(&jacobian.transpose());
    let delassus = x.transpose() * &x;
    let minv_jt = l.tr_solve_lower_triangular_unchecked(&x);
    (delassus, minv_jt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point_mass(m: f64) -> MassCholesky {
        MassCholesky::new(&(DMatrix::identity(3, 3) * m)).expect("SPD")
    }

    fn resting(phi: f64) -> ContactState {
        ContactState {
            signed_distance: phi,
            normal_velocity: 0.0,
            was_inactive: false,
            mu: 0.5,
        }
    }

    #[test]
    fn point_mass_delassus_is_inverse_mass() {
        let j = DMatrix::identity(3, 3);
        let vf = DVector::from_vec(vec![1.0, 0.0, -0.2]);
        let out = assemble(
            &j,
            &point_mass(2.0),
            &vf,
            &[resting(0.0)],
            &StepParameters::default(),
        )
        .expect("valid");
        assert!((out.problem.delassus() - DMatrix::identity(3, 3) * 0.5).amax() < 1e-14);
        assert!((out.problem.free_velocity() - &vf).amax() < 1e-14);
        assert!((out.minv_jt - DMatrix::identity(3, 3) * 0.5).amax() < 1e-14);
    }

    #[test]
    fn gap_and_baumgarte_bias() {
        let params = StepParameters {
            dt: 0.01,
            baumgarte: 0.5,
            ..Default::default()
        };
        assert!((normal_bias(&resting(1e-3), &params) - 0.1).abs() < 1e-12);
        assert!((normal_bias(&resting(-1e-3), &params) + 0.05).abs() < 1e-12);
    }

    #[test]
    fn restitution_only_on_inactive_approaching_contacts() {
        let params = StepParameters {
            restitution: 0.8,
            ..Default::default()
        };
        let approaching = ContactState {
            signed_distance: 5e-4,
            normal_velocity: -2.0,
            was_inactive: true,
            mu: 0.5,
        };
        assert!((normal_bias(&approaching, &params) + 1.6).abs() < 1e-12);
        let pushing = ContactState {
            was_inactive: false,
            ..approaching
        };
        assert!((normal_bias(&pushing, &params) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn compliance_is_diagonal() {
        let params = StepParameters {
            compliance: 1e-3,
            ..Default::default()
        };
        let j = DMatrix::identity(3, 3);
        let vf = DVector::zeros(3);
        let out = assemble(&j, &point_mass(1.0), &vf, &[resting(0.0)], &params).expect("valid");
        let r = out.problem.compliance().expect("compliance");
        assert!(r.iter().all(|x| (*x - 1e-3).abs() < 1e-15));
    }

    #[test]
    fn wrong_jacobian_size_is_refused() {
        let j = DMatrix::identity(6, 3);
        let vf = DVector::zeros(3);
        let err = assemble(
            &j,
            &point_mass(1.0),
            &vf,
            &[resting(0.0)],
            &StepParameters::default(),
        );
        assert!(matches!(err, Err(ProblemError::Size { field: "J", .. })));
    }
}
