//! Derivatives of the Lie-group integration `q⁺ = q ⊕ v Δt` ([`super::integrate`]) in the
//! tangent spaces (Sola et al., "A micro Lie theory", eqs. 179-180; Barfoot 2017, §7.1.5):
//! joint by joint, 1 for vector-space and SO(2) joints, and for the free flyer, with
//! `ξ = v Δt` and `M ⊕ ξ = M exp6(ξ)`,
//!
//! ```text
//! ∂(M ⊕ ξ)/∂M = Ad(exp6(ξ))⁻¹,     ∂(M ⊕ ξ)/∂ξ = J_r(ξ) = J_l(−ξ)
//! ```
//!
//! with the SE(3) left Jacobian `J_l(ρ, φ) = [[V(φ), Q(ρ, φ)], [0, V(φ)]]` (twist
//! `[ρ; φ]` = `[v; ω]`, `V` the SO(3) left Jacobian). Both are block diagonal: the
//! derivative of a step's integration costs a few 6×6 blocks.

use nalgebra::{DMatrix, DVector, Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};

use super::integrate::left_jacobian_so3;
use super::{check_configuration, check_velocity, DynamicsError};
use crate::model::{JointKind, Model};

/// `(∂q⁺/∂q, ∂q⁺/∂v)` of `q⁺ = q ⊕ v Δt` (`nv × nv` each, tangent spaces; the second
/// includes the factor `Δt`).
pub fn integrate_derivatives(
    model: &Model,
    q: &DVector<f64>,
    v: &DVector<f64>,
    dt: f64,
) -> Result<(DMatrix<f64>, DMatrix<f64>), DynamicsError> {
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    let nv = model.nv();
    let mut dq = DMatrix::identity(nv, nv);
    let mut dv = DMatrix::identity(nv, nv) * dt;
    for joint in &model.joints {
        if matches!(joint.kind, JointKind::FreeFlyer) {
            let iv = joint.idx_v;
            let (block_q, block_v) =
                free_flyer_integrate_derivatives(&v.fixed_rows::<6>(iv).into_owned(), dt);
            dq.fixed_view_mut::<6, 6>(iv, iv).copy_from(&block_q);
            dv.fixed_view_mut::<6, 6>(iv, iv).copy_from(&block_v);
        }
    }
    Ok((dq, dv))
}

/// A free flyer's 6×6 blocks of [`integrate_derivatives`] at its velocity `v` (a twist in
/// its body frame): `(Ad(exp6(ξ))⁻¹, J_r(ξ) Δt)` with `ξ = v Δt` (module docs).
pub fn free_flyer_integrate_derivatives(v: &Vector6<f64>, dt: f64) -> (Matrix6<f64>, Matrix6<f64>) {
    let xi = v * dt;
    let (rho, phi) = (
        xi.fixed_rows::<3>(0).into_owned(),
        xi.fixed_rows::<3>(3).into_owned(),
    );
    (
        inverse_adjoint_of_exp(&rho, &phi),
        se3_left_jacobian(&-rho, &-phi) * dt,
    )
}

/// `Ad(exp6(ξ))⁻¹ = Ad(exp6(−ξ))`: with `exp6(−ξ) = (R, p)`, `[[R, [p]× R], [0, R]]`.
fn inverse_adjoint_of_exp(rho: &Vector3<f64>, phi: &Vector3<f64>) -> Matrix6<f64> {
    let r = UnitQuaternion::from_scaled_axis(-phi)
        .to_rotation_matrix()
        .into_inner();
    let p = left_jacobian_so3(&-phi) * (-rho);
    let mut ad = Matrix6::zeros();
    ad.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
    ad.fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&(p.cross_matrix() * r));
    ad.fixed_view_mut::<3, 3>(3, 3).copy_from(&r);
    ad
}

/// `J_l(ρ, φ)` of SE(3) (Barfoot 2017, eq. 7.86), with the series of its coefficients
/// below `θ = 1e-2`.
fn se3_left_jacobian(rho: &Vector3<f64>, phi: &Vector3<f64>) -> Matrix6<f64> {
    let v = left_jacobian_so3(phi);
    let mut jl = Matrix6::zeros();
    jl.fixed_view_mut::<3, 3>(0, 0).copy_from(&v);
    jl.fixed_view_mut::<3, 3>(3, 3).copy_from(&v);
    jl.fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&q_block(rho, phi));
    jl
}

/// Barfoot's `Q(ρ, φ)`, the upper-right block of the SE(3) left Jacobian.
fn q_block(rho: &Vector3<f64>, phi: &Vector3<f64>) -> Matrix3<f64> {
    let t2 = phi.norm_squared();
    let t = t2.sqrt();
    let (c1, c2, c3) = if t < 1e-2 {
        (
            1.0 / 6.0 - t2 / 120.0,
            1.0 / 24.0 - t2 / 720.0,
            1.0 / 120.0 - t2 / 2520.0,
        )
    } else {
        let (s, c) = t.sin_cos();
        (
            (t - s) / (t2 * t),
            (t2 + 2.0 * c - 2.0) / (2.0 * t2 * t2),
            (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t),
        )
    };
    let (r, p) = (rho.cross_matrix(), phi.cross_matrix());
    let prp = p * r * p;
    r * 0.5
        + (p * r + r * p + prp) * c1
        + (p * p * r + r * p * p - prp * 3.0) * c2
        + (prp * p + p * prp) * c3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `exp6` through [`super::super::integrate`]'s formula, for the finite differences.
    fn exp6(rho: &Vector3<f64>, phi: &Vector3<f64>) -> (UnitQuaternion<f64>, Vector3<f64>) {
        (
            UnitQuaternion::from_scaled_axis(*phi),
            left_jacobian_so3(phi) * rho,
        )
    }

    #[test]
    fn the_se3_left_jacobian_matches_differences_of_the_exponential() {
        for scale in [1e-4, 0.3, 2.0] {
            let rho = Vector3::new(0.3, -0.2, 0.5) * scale;
            let phi = Vector3::new(-0.4, 0.1, 0.7) * scale;
            let (r0, p0) = exp6(&rho, &phi);
            let jl = se3_left_jacobian(&rho, &phi);
            let h = 1e-6;
            for k in 0..6 {
                let (mut dr, mut dp) = (rho, phi);
                if k < 3 {
                    dr[k] += h;
                } else {
                    dp[k - 3] += h;
                }
                let (r1, p1) = exp6(&dr, &dp);
                // exp(ξ + δ) = exp(J_l δ) exp(ξ): the left increment T1 T0⁻¹.
                let rot = (r1 * r0.inverse()).scaled_axis() / h;
                let lin = (p1 - (r1 * r0.inverse()) * p0) / h;
                let want = jl.column(k);
                let got = [lin.x, lin.y, lin.z, rot.x, rot.y, rot.z];
                for (a, b) in got.iter().zip(want.iter()) {
                    assert!(
                        (a - b).abs() < 1e-5,
                        "scale {scale}, column {k}: {got:?} vs {want}"
                    );
                }
            }
        }
    }
}
