//! Articulated-body algorithm (Featherstone 2008, Table 7.1): forward dynamics
//! `q̈ = M(q)⁻¹ (τ + Σ Jᵢᵀ fᵢ − C(q, v) v − g(q))` in O(n).

use nalgebra::{DVector, Vector6};

use super::kinematics::update_local_placements;
use super::rnea::joint_motion;
use super::spatial::{force_cross, motion_cross};
use super::{check_configuration, check_data, check_fext, check_velocity, Data, DynamicsError};
use crate::model::{JointKind, Model};

/// Forward dynamics: joint accelerations (dimension nv, into `data.ddq`) at `(q, v)` under
/// torques `tau` and optional external forces `fext` (one per joint, world included,
/// `[f; n]` in the joint's local frame).
pub fn aba<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) -> Result<&'d DVector<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    check_velocity(model, tau, "tau")?;
    check_fext(model, fext)?;
    update_local_placements(model, data, q);
    velocities_and_bias(model, data, v.as_slice(), fext);
    articulated_inertias(model, data, tau.as_slice())?;
    accelerations(model, data)?;
    Ok(&data.ddq)
}

/// Pass 1: body velocities `v_i`, bias accelerations `c_i = v_i × S q̇`, rigid inertias
/// `IA_i = I_i` and bias forces `pA_i = v_i ×* I_i v_i − f_ext,i`.
fn velocities_and_bias(model: &Model, data: &mut Data, v: &[f64], fext: Option<&[Vector6<f64>]>) {
    data.vel[0] = Vector6::zeros();
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let vj = joint_motion(&joint.kind, &v[joint.idx_v..joint.idx_v + joint.nv()]);
        let vi = data.li_m_i[i].act_inv_motion(&data.vel[joint.parent]) + vj;
        let inertia = &model.inertias[i];
        data.vel[i] = vi;
        data.bias[i] = motion_cross(&vi, &vj);
        data.ia[i] = data.body_matrices[i];
        data.pa[i] = force_cross(&vi, &inertia.mul_motion(&vi));
        if let Some(fext) = fext {
            data.pa[i] -= fext[i];
        }
    }
}

/// Pass 2 (leaves to root): `U = IA S`, `D = Sᵀ U`, `u = τ − Sᵀ pA`, and the articulated
/// inertia `Ia = IA − U D⁻¹ Uᵀ` and bias `pa = pA + Ia c + U D⁻¹ u` added to the parent.
fn articulated_inertias(model: &Model, data: &mut Data, tau: &[f64]) -> Result<(), DynamicsError> {
    for i in (1..model.njoints()).rev() {
        let joint = &model.joints[i];
        let p = joint.parent;
        let iv = joint.idx_v;
        let (ia, pa) = match joint.kind.motion_subspace() {
            Some(s) => {
                let u_vec = data.ia[i] * s;
                let d = s.dot(&u_vec);
                if !(d > 0.0 && d.is_finite()) {
                    return Err(DynamicsError::NotPositiveDefinite(
                        "an articulated inertia (massless subtree?)",
                    ));
                }
                let d_inv = 1.0 / d;
                let u = tau[iv] - s.dot(&data.pa[i]);
                data.u_vec[i] = u_vec;
                data.d_inv[i] = d_inv;
                data.u_tau[i][0] = u;
                let ia = data.ia[i] - u_vec * u_vec.transpose() * d_inv;
                let pa = data.pa[i] + ia * data.bias[i] + u_vec * (u * d_inv);
                (ia, pa)
            }
            None => {
                // Free flyer (S = I): Ia = 0 and pa = τ, nothing else reaches the parent.
                let u = Vector6::from_column_slice(&tau[iv..iv + 6]) - data.pa[i];
                data.u_tau[i] = u;
                (
                    nalgebra::Matrix6::zeros(),
                    Vector6::from_column_slice(&tau[iv..iv + 6]),
                )
            }
        };
        if p > 0 {
            let x = &data.li_m_i[i];
            data.ia[p] += x.act_inertia_matrix(&ia);
            data.pa[p] += x.act_force(&pa);
        }
    }
    Ok(())
}

/// Pass 3 (root to leaves): `a' = λX_i a_λ + c_i`, `q̈_i = D⁻¹ (u − Uᵀ a')`,
/// `a_i = a' + S q̈_i`, from `a_0 = −g`.
fn accelerations(model: &Model, data: &mut Data) -> Result<(), DynamicsError> {
    let g = model.gravity;
    data.acc[0] = Vector6::new(-g.x, -g.y, -g.z, 0.0, 0.0, 0.0);
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let a_prime = data.li_m_i[i].act_inv_motion(&data.acc[joint.parent]) + data.bias[i];
        let iv = joint.idx_v;
        match joint.kind.motion_subspace() {
            Some(s) => {
                let qdd = (data.u_tau[i][0] - data.u_vec[i].dot(&a_prime)) * data.d_inv[i];
                data.ddq[iv] = qdd;
                data.acc[i] = a_prime + s * qdd;
            }
            None if matches!(joint.kind, JointKind::FreeFlyer) => {
                // a_i = IA⁻¹ u and q̈ = a_i − a'.
                let chol = data.ia[i]
                    .cholesky()
                    .ok_or(DynamicsError::NotPositiveDefinite(
                        "the articulated inertia of a free flyer",
                    ))?;
                let ai = chol.solve(&data.u_tau[i]);
                data.ddq.rows_mut(iv, 6).copy_from(&(ai - a_prime));
                data.acc[i] = ai;
            }
            None => data.acc[i] = a_prime,
        }
    }
    Ok(())
}
