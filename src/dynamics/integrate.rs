//! Configuration-space integration and difference on the Lie group of the joints: vector
//! spaces for revolute and prismatic joints, SO(2) for continuous joints, SE(3) for the free
//! flyer (its twist in the body frame), with the exponential and logarithm maps
//! (Sola et al., "A micro Lie theory", eqs. 174-176; Murray-Li-Sastry eq. 2.36).

use nalgebra::{DVector, Matrix3, Quaternion, UnitQuaternion, Vector3};

use super::{check_configuration, check_velocity, DynamicsError};
use crate::model::{JointKind, Model};

/// `q ⊕ v dt`: the configuration reached from `q` (dimension nq) by moving at the constant
/// velocity `v` (dimension nv) for `dt` seconds. Free-flyer quaternions stay unit.
pub fn integrate(
    model: &Model,
    q: &DVector<f64>,
    v: &DVector<f64>,
    dt: f64,
) -> Result<DVector<f64>, DynamicsError> {
    let mut out = q.clone();
    integrate_into(model, q, v, dt, &mut out)?;
    Ok(out)
}

/// [`integrate`] into a caller-owned vector of dimension nq (no allocation).
pub fn integrate_into(
    model: &Model,
    q: &DVector<f64>,
    v: &DVector<f64>,
    dt: f64,
    out: &mut DVector<f64>,
) -> Result<(), DynamicsError> {
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    check_output(out, "q_next", "nq", model.nq())?;
    out.copy_from(q);
    for joint in &model.joints {
        let (iq, iv) = (joint.idx_q, joint.idx_v);
        match joint.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => {
                out[iq] = q[iq] + v[iv] * dt
            }
            JointKind::RevoluteUnbounded { .. } => {
                let (c, s) = (q[iq], q[iq + 1]);
                let (dc, ds) = ((v[iv] * dt).cos(), (v[iv] * dt).sin());
                let (nc, ns) = (c * dc - s * ds, s * dc + c * ds);
                let n = nc.hypot(ns);
                out[iq] = nc / n;
                out[iq + 1] = ns / n;
            }
            JointKind::FreeFlyer => {
                let p = Vector3::new(q[iq], q[iq + 1], q[iq + 2]);
                let rot = quaternion(q, iq + 3);
                let lin = Vector3::new(v[iv], v[iv + 1], v[iv + 2]) * dt;
                let ang = Vector3::new(v[iv + 3], v[iv + 4], v[iv + 5]) * dt;
                // M ⊕ ξ = M exp6(ξ): p' = p + R V(ω) v, R' = R exp3(ω).
                let p_new = p + rot * (left_jacobian_so3(&ang) * lin);
                let r_new = rot * UnitQuaternion::from_scaled_axis(ang);
                let r_new = UnitQuaternion::new_normalize(r_new.into_inner());
                out.rows_mut(iq, 3).copy_from(&p_new);
                out.rows_mut(iq + 3, 4)
                    .copy_from(&r_new.as_vector().clone_owned());
            }
        }
    }
    Ok(())
}

/// `q1 ⊖ q0`: the velocity (dimension nv) that takes `q0` to `q1` in one second, so that
/// `integrate(q0, difference(q0, q1), 1) = q1`.
pub fn difference(
    model: &Model,
    q0: &DVector<f64>,
    q1: &DVector<f64>,
) -> Result<DVector<f64>, DynamicsError> {
    let mut out = DVector::zeros(model.nv());
    difference_into(model, q0, q1, &mut out)?;
    Ok(out)
}

/// [`difference`] into a caller-owned vector of dimension nv (no allocation).
pub fn difference_into(
    model: &Model,
    q0: &DVector<f64>,
    q1: &DVector<f64>,
    out: &mut DVector<f64>,
) -> Result<(), DynamicsError> {
    check_configuration(model, q0)?;
    check_configuration(model, q1)?;
    check_output(out, "difference", "nv", model.nv())?;
    for joint in &model.joints {
        let (iq, iv) = (joint.idx_q, joint.idx_v);
        match joint.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => out[iv] = q1[iq] - q0[iq],
            JointKind::RevoluteUnbounded { .. } => {
                let (c0, s0, c1, s1) = (q0[iq], q0[iq + 1], q1[iq], q1[iq + 1]);
                out[iv] = (c0 * s1 - s0 * c1).atan2(c0 * c1 + s0 * s1);
            }
            JointKind::FreeFlyer => {
                let r0 = quaternion(q0, iq + 3);
                let r1 = quaternion(q1, iq + 3);
                let dp = Vector3::new(
                    q1[iq] - q0[iq],
                    q1[iq + 1] - q0[iq + 1],
                    q1[iq + 2] - q0[iq + 2],
                );
                // ξ = log6(M0⁻¹ M1): ω = log3(R0ᵀ R1), v = V(ω)⁻¹ R0ᵀ (p1 − p0).
                let ang = log3(&(r0.inverse() * r1));
                let lin = left_jacobian_so3_inverse(&ang) * (r0.inverse() * dp);
                out.rows_mut(iv, 3).copy_from(&lin);
                out.rows_mut(iv + 3, 3).copy_from(&ang);
            }
        }
    }
    Ok(())
}

/// Checks the length of an output vector.
fn check_output(
    out: &DVector<f64>,
    name: &'static str,
    dim: &'static str,
    expected: usize,
) -> Result<(), DynamicsError> {
    if out.len() == expected {
        Ok(())
    } else {
        Err(DynamicsError::WrongSize {
            name,
            dim,
            expected,
            got: out.len(),
        })
    }
}

/// The unit quaternion stored as `[qx qy qz qw]` from index `k` (normalized).
fn quaternion(q: &DVector<f64>, k: usize) -> UnitQuaternion<f64> {
    UnitQuaternion::new_normalize(Quaternion::new(q[k + 3], q[k], q[k + 1], q[k + 2]))
}

/// The rotation vector ω with `exp3(ω) = r`, ‖ω‖ ≤ π: `θ = 2 atan2(‖xyz‖, w)` with `w ≥ 0`
/// (accurate for small angles, unlike `2 acos(w)`).
fn log3(r: &UnitQuaternion<f64>) -> Vector3<f64> {
    let (w, xyz) = if r.w < 0.0 {
        (-r.w, -r.imag())
    } else {
        (r.w, r.imag())
    };
    let s = xyz.norm();
    if s < 1e-300 {
        return Vector3::zeros();
    }
    xyz * (2.0 * s.atan2(w) / s)
}

/// `V(ω) = I + (1 − cos θ)/θ² [ω]× + (θ − sin θ)/θ³ [ω]×²`, θ = ‖ω‖ (series near 0).
pub(super) fn left_jacobian_so3(w: &Vector3<f64>) -> Matrix3<f64> {
    let t2 = w.norm_squared();
    let t = t2.sqrt();
    let (a, b) = if t < 1e-3 {
        (
            0.5 - t2 / 24.0 + t2 * t2 / 720.0,
            1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0,
        )
    } else {
        // 1 − cos θ = 2 sin²(θ/2) avoids the cancellation.
        let h = (t / 2.0).sin();
        (2.0 * h * h / t2, (t - t.sin()) / (t2 * t))
    };
    let k = w.cross_matrix();
    Matrix3::identity() + k * a + k * k * b
}

/// `V(ω)⁻¹ = I − ½ [ω]× + (1/θ²)(1 − θ sin θ / (2 (1 − cos θ))) [ω]×²` (series near 0).
fn left_jacobian_so3_inverse(w: &Vector3<f64>) -> Matrix3<f64> {
    let t2 = w.norm_squared();
    let t = t2.sqrt();
    let c = if t < 1e-3 {
        1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    } else {
        // θ sin θ / (2 (1 − cos θ)) = (θ/2) cot(θ/2), without the cancellation of 1 − cos θ.
        let h = t / 2.0;
        (1.0 - h * h.cos() / h.sin()) / t2
    };
    let k = w.cross_matrix();
    Matrix3::identity() - k * 0.5 + k * k * c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log3_inverts_exp3_for_small_and_large_angles() {
        for t in [1e-12, 1e-7, 1e-3, 1.0, 3.1] {
            let w = Vector3::new(0.48, -0.6, 0.64) * t;
            let back = log3(&UnitQuaternion::from_scaled_axis(w));
            assert!(
                (back - w).norm() <= 1e-14 * t.max(1e-300) + 1e-300,
                "θ = {t}: {back}"
            );
        }
    }

    #[test]
    fn left_jacobian_and_its_inverse_across_the_series_threshold() {
        for t in [0.0, 1e-8, 1e-4, 9.99e-4, 1.001e-3, 1e-2, 1.0, 3.0] {
            let w = Vector3::new(0.6, -0.8, 0.0) * t;
            let product = left_jacobian_so3(&w) * left_jacobian_so3_inverse(&w);
            assert!(
                (product - Matrix3::identity()).amax() < 1e-14,
                "θ = {t}: {product}"
            );
        }
    }
}
