//! Composite rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass
//! matrix `M(q)`, computed in the world frame as Pinocchio does: composite inertias are
//! 6×6 matrices summed in world coordinates, and `M[j, i] = S_jᵀ Y_i S_i` needs no
//! transform per ancestor (a free flyer's `S_jᵀ F` is `F` expressed in its local frame).

use nalgebra::{DMatrix, DVector, Vector6};

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
    crba_at_placements(model, data);
    Ok(&data.mass_matrix)
}

/// [`crba()`] once `data.o_m_i` holds the placements at `q`.
pub(crate) fn crba_at_placements(model: &Model, data: &mut Data) {
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let o_m_i = &data.o_m_i[i];
        data.ycrb[i] = transform_inertia(&model.inertias[i], o_m_i).matrix();
        if let Some(local) = joint.kind.motion_subspace() {
            data.s_world[i] = o_m_i.act_motion(&local);
        }
    }
    let nv = model.nv();
    for i in (1..model.njoints()).rev() {
        let joint = &model.joints[i];
        match joint.kind {
            JointKind::FreeFlyer => {
                for k in 0..6 {
                    let mut e = Vector6::zeros();
                    e[k] = 1.0;
                    let f = data.ycrb[i] * data.o_m_i[i].act_motion(&e);
                    project_on_ancestors(model, data, i, &f, joint.idx_v + k, nv);
                }
            }
            JointKind::Universe => {}
            _ => {
                // F = Y_i S_i (Featherstone eq. 6.12).
                let f = data.ycrb[i] * data.s_world[i];
                project_on_ancestors(model, data, i, &f, joint.idx_v, nv);
            }
        }
        let p = joint.parent;
        if p > 0 {
            // Y_parent += Y_i (Featherstone eq. 6.11; both in world coordinates).
            let (ancestors, rest) = data.ycrb.split_at_mut(i);
            ancestors[p] += &rest[0];
        }
    }
}

/// `M[j, col] = M[col, j] = S_jᵀ F` for joint `i` and all its ancestors `j`.
#[inline]
fn project_on_ancestors(
    model: &Model,
    data: &mut Data,
    i: usize,
    f: &Vector6<f64>,
    col: usize,
    nv: usize,
) {
    let m = data.mass_matrix.as_mut_slice();
    let mut j = i;
    while j > 0 {
        let jt = &model.joints[j];
        let row = jt.idx_v;
        match jt.kind {
            JointKind::FreeFlyer => {
                let local = data.o_m_i[j].act_inv_force(f);
                for r in 0..6 {
                    m[col * nv + row + r] = local[r];
                    m[(row + r) * nv + col] = local[r];
                }
            }
            JointKind::Universe => {}
            _ => {
                let x = data.s_world[j].dot(f);
                m[col * nv + row] = x;
                m[row * nv + col] = x;
            }
        }
        j = jt.parent;
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
