//! Recursive Newton-Euler algorithm (Featherstone 2008, Table 5.1): inverse dynamics
//! `τ = M(q) a + C(q, v) v + g(q) − Σ Jᵢᵀ fᵢ`, and its special cases.

use nalgebra::{DVector, Vector6};

use super::kinematics::update_local_placements;
use super::spatial::force_cross;
use super::{check_configuration, check_data, check_fext, check_velocity, Data, DynamicsError};
use crate::model::{JointKind, Model};

/// Inverse dynamics: the joint torques `τ` (dimension nv, into `data.tau`) that produce the
/// acceleration `a` at `(q, v)`, with optional external forces `fext` (one per joint, world
/// included, `[f; n]` in the joint's local frame, applied to its body).
pub fn rnea<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) -> Result<&'d DVector<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    check_velocity(model, a, "a")?;
    check_fext(model, fext)?;
    update_local_placements(model, data, q);
    rnea_passes(model, data, v.as_slice(), Some(a.as_slice()), fext, true);
    let mut tau = std::mem::replace(&mut data.tau, DVector::zeros(0));
    project_forces(model, data, &mut tau);
    data.tau = tau;
    Ok(&data.tau)
}

/// Nonlinear effects `C(q, v) v + g(q)` (dimension nv, into `data.nle`): RNEA with a = 0.
pub fn nonlinear_effects<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<&'d DVector<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    update_local_placements(model, data, q);
    rnea_passes(model, data, v.as_slice(), None, None, true);
    let mut nle = std::mem::replace(&mut data.nle, DVector::zeros(0));
    project_forces(model, data, &mut nle);
    data.nle = nle;
    Ok(&data.nle)
}

/// Generalized gravity `g(q)` (dimension nv, into `data.gravity`): RNEA with v = a = 0.
pub fn generalized_gravity<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
) -> Result<&'d DVector<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_local_placements(model, data, q);
    rnea_passes(model, data, &[], None, None, false);
    let mut g = std::mem::replace(&mut data.gravity, DVector::zeros(0));
    project_forces(model, data, &mut g);
    data.gravity = g;
    Ok(&data.gravity)
}

/// Forward pass (body velocities, accelerations with `a_0 = −g`, and forces
/// `f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i`) then backward accumulation of forces into
/// the parents. Empty `v` with `with_velocity = false` means v = 0; `a = None` means a = 0.
pub(crate) fn rnea_passes(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    a: Option<&[f64]>,
    fext: Option<&[Vector6<f64>]>,
    with_velocity: bool,
) {
    let g = model.gravity;
    data.vel[0] = Vector6::zeros();
    data.acc[0] = Vector6::new(-g.x, -g.y, -g.z, 0.0, 0.0, 0.0);
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let p = joint.parent;
        let x = &data.li_m_i[i];
        let mut vi = x.act_inv_motion(&data.vel[p]);
        let mut ai = x.act_inv_motion(&data.acc[p]);
        let iv = joint.idx_v;
        if with_velocity {
            let vj = joint_motion(&joint.kind, &v[iv..iv + joint.nv()]);
            vi += vj;
            ai += super::spatial::motion_cross(&vi, &vj);
        }
        if let Some(a) = a {
            ai += joint_motion(&joint.kind, &a[iv..iv + joint.nv()]);
        }
        let inertia = &model.inertias[i];
        let mut f = inertia.mul_motion(&ai);
        if with_velocity {
            f += force_cross(&vi, &inertia.mul_motion(&vi));
        }
        if let Some(fext) = fext {
            f -= fext[i];
        }
        data.vel[i] = vi;
        data.acc[i] = ai;
        data.force[i] = f;
    }
    for (i, joint) in model.joints.iter().enumerate().skip(1).rev() {
        let p = joint.parent;
        if p > 0 {
            let fp = data.li_m_i[i].act_force(&data.force[i]);
            data.force[p] += fp;
        }
    }
}

/// `τ_i = S_iᵀ f_i` for every joint.
pub(crate) fn project_forces(model: &Model, data: &Data, out: &mut DVector<f64>) {
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let f = &data.force[i];
        match joint.kind.motion_subspace() {
            Some(s) => out[joint.idx_v] = s.dot(f),
            None => {
                if matches!(joint.kind, JointKind::FreeFlyer) {
                    out.rows_mut(joint.idx_v, 6).copy_from(f);
                }
            }
        }
    }
}

/// The joint's spatial motion `S q̇` (local frame) for its velocity slice.
#[inline]
pub(crate) fn joint_motion(kind: &JointKind, v: &[f64]) -> Vector6<f64> {
    match kind.motion_subspace() {
        Some(s) => s * v[0],
        None if matches!(kind, JointKind::FreeFlyer) => Vector6::from_column_slice(v),
        None => Vector6::zeros(),
    }
}
