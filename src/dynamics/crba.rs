//! Composite rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass
//! matrix `M(q)`, computed in the world frame as Pinocchio does: composite inertias are
//! 6×6 matrices summed in world coordinates and `M[j, i] = S_jᵀ Y_i S_i` needs no transform per ancestor.

use nalgebra::{DMatrix, DVector, Matrix6, Vector6};

use super::kinematics::update_placements;
use super::spatial::Se3;
use super::{check_configuration, check_data, Data, DynamicsError};
use crate::model::{Inertia, JointKind, Model};

/// The mass matrix `M(q)` (nv × nv, symmetric, both triangles) into `data.mass_matrix`.
pub fn crba<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
) -> Result<&'d DMatrix<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let o_m_i = &data.o_m_i[i];
        data.ycrb[i] = transform_inertia(&model.inertias[i], o_m_i).matrix();
        world_motion_subspace(&joint.kind, o_m_i, &mut data.s_world[i]);
    }
    for i in (1..model.njoints()).rev() {
        let joint = &model.joints[i];
        let yi = &data.ycrb[i];
        for k in 0..joint.nv() {
            // F = Y_i S_i (Featherstone eq. 6.12), projected on every ancestor's S_j.
            let col = joint.idx_v + k;
            let f: Vector6<f64> = yi * data.s_world[i].column(k);
            let mut j = i;
            loop {
                let jt = &model.joints[j];
                for r in 0..jt.nv() {
                    let x = data.s_world[j].column(r).dot(&f);
                    data.mass_matrix[(jt.idx_v + r, col)] = x;
                    data.mass_matrix[(col, jt.idx_v + r)] = x;
                }
                if jt.parent == 0 {
                    break;
                }
                j = jt.parent;
            }
        }
        let p = joint.parent;
        if p > 0 {
            // Y_parent += Y_i (Featherstone eq. 6.11; both in world coordinates).
            let yi = data.ycrb[i];
            data.ycrb[p] += yi;
        }
    }
    Ok(&data.mass_matrix)
}

/// Writes the joint's motion subspace in world coordinates, `o_X_i S`, into the first nv
/// columns of `s` (the others are never read).
#[inline]
fn world_motion_subspace(kind: &JointKind, o_m_i: &Se3, s: &mut Matrix6<f64>) {
    match kind.motion_subspace() {
        Some(local) => s.set_column(0, &o_m_i.act_motion(&local)),
        None if *kind == JointKind::FreeFlyer => {
            for k in 0..6 {
                let mut e = Vector6::zeros();
                e[k] = 1.0;
                s.set_column(k, &o_m_i.act_motion(&e));
            }
        }
        None => {}
    }
}

/// The inertia `y` (in frame B) expressed in frame A given `a_M_b`: `c_A = R c_B + p`,
/// `I_A = R I_B Rᵀ`.
#[inline]
pub(crate) fn transform_inertia(y: &Inertia, a_m_b: &Se3) -> Inertia {
    Inertia {
        mass: y.mass,
        com: a_m_b.act_point(&y.com),
        rotational: a_m_b.rot * y.rotational * a_m_b.rot.transpose(),
    }
}
