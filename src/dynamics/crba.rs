//! Composite rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass
//! matrix `M(q)`, computed in the world frame as Pinocchio does: composite inertias are
//! summed in world coordinates, and `M[j, i] = S_jᵀ Y_i S_i` needs no transform per
//! ancestor (a free flyer's `S_jᵀ F` is `F` expressed in its local frame).
//!
//! A composite inertia is kept as its ten parameters about the world origin, mass `m`,
//! first moment `h = m c` and rotational inertia `I_O = I_c + m ([c]×ᵀ [c]×)`, which add
//! up directly (eq. 6.11 without a 6×6 matrix) and act on a motion `[v; ω]` as
//! `Y [v; ω] = [m v − h × ω; h × v + I_O ω]`.
//!
//! The same pass also writes, instead of the dense matrix, only the entries that the LTDL
//! factorization reads (row `k`'s diagonal and its ancestors, nearest first) straight into
//! a [`MassLtdl`]'s compact rows ([`crate::dynamics::factorized_mass_and_bias`]).

use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};

use super::kinematics::update_placements;
use super::ltdl::MassLtdl;
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

/// [`crba()`] once `data.o_m_i` holds the placements at `q`; `data.mass_matrix` is made
/// nv × nv (zeros) at the first call. Only the entries of a dof and its ancestors are
/// written: the others stay zero.
pub(crate) fn crba_at_placements(model: &Model, data: &mut Data) {
    let nv = model.nv();
    let mut mass = std::mem::replace(&mut data.mass_matrix, DMatrix::zeros(0, 0));
    if mass.shape() != (nv, nv) {
        mass = DMatrix::zeros(nv, nv);
    }
    let m = mass.as_mut_slice();
    composite_pass(
        model,
        data,
        #[inline(always)]
        |data, i, col, f| {
            project_on_ancestors(model, data, i, f, col, nv, m);
        },
    );
    data.mass_matrix = mass;
}

/// [`crba_at_placements`] straight into `factor`'s storage, then factorized: only the
/// entries [`MassLtdl::factorize`] reads (`M[k][k]` and `M[k][a]` for the ancestors `a`
/// of `k`), the same values to the bit, without the dense matrix (`data.mass_matrix` is
/// left as it was). `factor` comes from [`MassLtdl::new`] on `model`.
pub(crate) fn crba_into_factor(
    model: &Model,
    data: &mut Data,
    factor: &mut MassLtdl,
) -> Result<(), DynamicsError> {
    composite_pass(
        model,
        data,
        #[inline(always)]
        |data, i, col, f| {
            project_into_row(model, data, i, f, col, factor);
        },
    );
    factor.eliminate()
}

/// The composite inertias from the leaves (Featherstone Table 6.2), handing each column
/// `col` of `M` to `column(data, i, col, F)` as the force `F = Y_i S_col` (world
/// coordinates) of joint `i`'s dof `col`.
#[inline(always)]
fn composite_pass(
    model: &Model,
    data: &mut Data,
    mut column: impl FnMut(&Data, usize, usize, &Vector6<f64>),
) {
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let o_m_i = &data.o_m_i[i];
        data.ycrb[i] = WorldInertia::of_body(&model.inertias[i], o_m_i);
        if let Some(local) = joint.kind.motion_subspace() {
            data.s_world[i] = o_m_i.act_motion(&local);
        }
    }
    for i in (1..model.njoints()).rev() {
        let joint = &model.joints[i];
        match joint.kind {
            JointKind::FreeFlyer => {
                for k in 0..6 {
                    let mut e = Vector6::zeros();
                    e[k] = 1.0;
                    let f = data.ycrb[i].mul_motion(&data.o_m_i[i].act_motion(&e));
                    column(data, i, joint.idx_v + k, &f);
                }
            }
            JointKind::Universe => {}
            _ => {
                // F = Y_i S_i (Featherstone eq. 6.12).
                let f = data.ycrb[i].mul_motion(&data.s_world[i]);
                column(data, i, joint.idx_v, &f);
            }
        }
        let p = joint.parent;
        if p > 0 {
            // Y_parent += Y_i (Featherstone eq. 6.11; both in world coordinates).
            let child = data.ycrb[i];
            data.ycrb[p].add(&child);
        }
    }
}

/// `M[j, col] = M[col, j] = S_jᵀ F` for joint `i` and all its ancestors `j`, into the
/// column-major nv × nv `m`.
#[inline]
fn project_on_ancestors(
    model: &Model,
    data: &Data,
    i: usize,
    f: &Vector6<f64>,
    col: usize,
    nv: usize,
    m: &mut [f64],
) {
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

/// Row `col` of `M`'s lower triangle into `factor` ([`MassLtdl::row_mut`]): `M[col][col]`
/// and `S_aᵀ F` for the ancestor dofs `a` of `col`, nearest first (a free flyer's dofs
/// from its last to its first) — the values [`project_on_ancestors`] leaves in the lower
/// triangle (a free flyer's own column `col` holds its entries below `col`).
#[inline(always)]
fn project_into_row(
    model: &Model,
    data: &Data,
    i: usize,
    f: &Vector6<f64>,
    col: usize,
    factor: &mut MassLtdl,
) {
    let (diagonal, row) = factor.row_mut(col);
    let joint = &model.joints[i];
    let mut entries = row.iter_mut();
    if joint.kind == JointKind::FreeFlyer {
        let local = data.o_m_i[i].act_inv_force(f);
        let k = col - joint.idx_v;
        *diagonal = local[k];
        for (l, &x) in entries.by_ref().zip(local.iter().take(k).rev()) {
            *l = x;
        }
    } else {
        *diagonal = data.s_world[i].dot(f);
    }
    let mut j = joint.parent;
    while j > 0 {
        let jt = &model.joints[j];
        match jt.kind {
            JointKind::FreeFlyer => {
                let local = data.o_m_i[j].act_inv_force(f);
                for (l, &x) in entries.by_ref().zip(local.iter().rev()) {
                    *l = x;
                }
            }
            JointKind::Universe => {}
            _ => {
                if let Some(l) = entries.next() {
                    *l = data.s_world[j].dot(f);
                }
            }
        }
        j = jt.parent;
    }
}

/// A spatial inertia about the world origin (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WorldInertia {
    /// Mass `m`.
    mass: f64,
    /// First moment `h = m c`.
    first_moment: Vector3<f64>,
    /// Rotational inertia about the origin, `I_O`.
    rotational: Matrix3<f64>,
}

impl WorldInertia {
    /// No mass.
    pub(crate) fn zero() -> Self {
        Self {
            mass: 0.0,
            first_moment: Vector3::zeros(),
            rotational: Matrix3::zeros(),
        }
    }

    /// The body inertia `y` (in the joint frame) placed by `o_m_i`: `c = R c_B + p`,
    /// `I_O = R I_c Rᵀ + m (|c|² 1 − c cᵀ)`.
    #[inline(always)]
    fn of_body(y: &Inertia, o_m_i: &Se3) -> Self {
        let c = o_m_i.act_point(&y.com);
        let r = &o_m_i.rot;
        let shift = (Matrix3::identity() * c.norm_squared() - c * c.transpose()) * y.mass;
        Self {
            mass: y.mass,
            first_moment: c * y.mass,
            rotational: r * y.rotational * r.transpose() + shift,
        }
    }

    /// `self += other` (eq. 6.11).
    #[inline]
    fn add(&mut self, other: &Self) {
        self.mass += other.mass;
        self.first_moment += other.first_moment;
        self.rotational += other.rotational;
    }

    /// `Y [v; ω] = [m v − h × ω; h × v + I_O ω]`.
    #[inline]
    fn mul_motion(&self, s: &Vector6<f64>) -> Vector6<f64> {
        let v = Vector3::new(s[0], s[1], s[2]);
        let w = Vector3::new(s[3], s[4], s[5]);
        let h = &self.first_moment;
        let f = v * self.mass - h.cross(&w);
        let n = h.cross(&v) + self.rotational * w;
        Vector6::new(f.x, f.y, f.z, n.x, n.y, n.z)
    }
}
