//! Composite rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass
//! matrix `M(q)`.

use nalgebra::{DMatrix, DVector, Vector6};

use super::kinematics::update_placements;
use super::spatial::Se3;
use super::{check_configuration, check_data, Data, DynamicsError};
use crate::model::{Inertia, Model};

/// The mass matrix `M(q)` (nv × nv, symmetric, both triangles) into `data.mass_matrix`.
pub fn crba<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &DVector<f64>,
) -> Result<&'d DMatrix<f64>, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    for (y, inertia) in data.ycrb.iter_mut().zip(&model.inertias) {
        *y = *inertia;
    }
    for i in (1..model.njoints()).rev() {
        let joint = &model.joints[i];
        let yi = data.ycrb[i];
        for k in 0..joint.nv() {
            // Column of F = Y_i S_i (Featherstone eq. 6.12), walked up to the root.
            let s = match joint.kind.motion_subspace() {
                Some(s) => s,
                None => unit(k),
            };
            let col = joint.idx_v + k;
            let mut f = yi.mul_motion(&s);
            let mut j = i;
            loop {
                let jt = &model.joints[j];
                write_block(&mut data.mass_matrix, jt, &f, col);
                if jt.parent == 0 {
                    break;
                }
                f = data.li_m_i[j].act_force(&f);
                j = jt.parent;
            }
        }
        let p = joint.parent;
        if p > 0 {
            // Y_parent += λ_X_i* Y_i (Featherstone eq. 6.11).
            let moved = transform_inertia(&yi, &data.li_m_i[i]);
            data.ycrb[p] = data.ycrb[p].add(&moved);
        }
    }
    Ok(&data.mass_matrix)
}

/// `M[j rows, col] = S_jᵀ F` and its symmetric entries.
#[inline]
fn write_block(m: &mut DMatrix<f64>, joint: &crate::model::Joint, f: &Vector6<f64>, col: usize) {
    match joint.kind.motion_subspace() {
        Some(s) => {
            let x = s.dot(f);
            m[(joint.idx_v, col)] = x;
            m[(col, joint.idx_v)] = x;
        }
        None => {
            for r in 0..joint.nv() {
                m[(joint.idx_v + r, col)] = f[r];
                m[(col, joint.idx_v + r)] = f[r];
            }
        }
    }
}

fn unit(k: usize) -> Vector6<f64> {
    let mut e = Vector6::zeros();
    e[k] = 1.0;
    e
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
