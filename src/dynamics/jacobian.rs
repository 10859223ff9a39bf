//! World-aligned point Jacobians: the linear velocity, in world axes, of a point fixed on a
//! body, as a linear map of v (Featherstone 2008, §8.1; Pinocchio's `LOCAL_WORLD_ALIGNED`).

use nalgebra::{DMatrix, DVector, Matrix3, Matrix3xX, Vector3};

use super::{check_data, Data, DynamicsError};
use crate::model::{FrameId, JointKind, Model, ModelError};

/// The 3 × nv Jacobian of the point `point_world` (world coordinates, m) fixed on `joint`'s
/// body: `ṗ = J v`. Needs [`super::forward_kinematics`] at the current q.
pub fn point_jacobian_world(
    model: &Model,
    data: &Data,
    joint: usize,
    point_world: &Vector3<f64>,
) -> Result<Matrix3xX<f64>, DynamicsError> {
    let mut out = Matrix3xX::zeros(model.nv());
    point_jacobian_world_into(model, data, joint, point_world, &mut out)?;
    Ok(out)
}

/// [`point_jacobian_world`] into a caller-owned 3 × nv matrix (no allocation).
pub fn point_jacobian_world_into(
    model: &Model,
    data: &Data,
    joint: usize,
    point_world: &Vector3<f64>,
    out: &mut Matrix3xX<f64>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    model.check_joint(joint)?;
    if out.ncols() != model.nv() {
        return Err(DynamicsError::WrongSize {
            name: "jacobian columns",
            dim: "nv",
            expected: model.nv(),
            got: out.ncols(),
        });
    }
    out.fill(0.0);
    let mut j = joint;
    while j > 0 {
        let jt = &model.joints[j];
        let m = &data.o_m_i[j];
        let r = m.trans - point_world;
        match &jt.kind {
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                // ṗ = ω × (p − o) with ω = R a q̇.
                let a = m.rot * axis.into_inner();
                out.set_column(jt.idx_v, &a.cross(&(-r)));
            }
            JointKind::Prismatic { axis } => {
                out.set_column(jt.idx_v, &(m.rot * axis.into_inner()));
            }
            JointKind::FreeFlyer => {
                // ṗ = R v + (R ω) × (p − o): columns R and [o − p]× R.
                let rc = r.cross_matrix() * m.rot;
                for k in 0..3 {
                    out.set_column(jt.idx_v + k, &m.rot.column(k).into_owned());
                    out.set_column(jt.idx_v + 3 + k, &rc.column(k).into_owned());
                }
            }
            JointKind::Universe => {}
        }
        j = jt.parent;
    }
    Ok(())
}

/// `out[row..row + 3, :] += sign · Rᵀ J(point_world)`: the world-aligned point Jacobian
/// of [`point_jacobian_world`] for a point fixed on `joint`'s body, rotated into a frame
/// whose axes are the columns of `rotation` (a contact frame `[t1, t2, n]`) and written
/// straight into three rows of `out` (nv columns); only the columns of `joint`'s chain to
/// the root are touched. Nothing for the world (`joint = 0`). No allocation.
#[allow(clippy::too_many_arguments)]
pub fn add_point_jacobian_rows(
    model: &Model,
    data: &Data,
    joint: usize,
    point_world: &Vector3<f64>,
    rotation: &Matrix3<f64>,
    sign: f64,
    out: &mut DMatrix<f64>,
    row: usize,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    model.check_joint(joint)?;
    if out.ncols() != model.nv() || row + 3 > out.nrows() {
        return Err(DynamicsError::WrongSize {
            name: "jacobian rows",
            dim: "nv",
            expected: model.nv(),
            got: out.ncols(),
        });
    }
    let rt = rotation.transpose() * sign;
    let mut add_column = |col: usize, c: Vector3<f64>| {
        let rotated = rt * c;
        for k in 0..3 {
            out[(row + k, col)] += rotated[k];
        }
    };
    let mut j = joint;
    while j > 0 {
        let jt = &model.joints[j];
        let m = &data.o_m_i[j];
        let r = m.trans - point_world;
        match &jt.kind {
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                let a = m.rot * axis.into_inner();
                add_column(jt.idx_v, a.cross(&(-r)));
            }
            JointKind::Prismatic { axis } => add_column(jt.idx_v, m.rot * axis.into_inner()),
            JointKind::FreeFlyer => {
                let rc = r.cross_matrix() * m.rot;
                for k in 0..3 {
                    add_column(jt.idx_v + k, m.rot.column(k).into_owned());
                    add_column(jt.idx_v + 3 + k, rc.column(k).into_owned());
                }
            }
            JointKind::Universe => {}
        }
        j = jt.parent;
    }
    Ok(())
}

/// `out += J(point_world)ᵀ f`: the generalized force (nv) of a force `f` (N, world axes)
/// applied at a point fixed on `joint`'s body, with `J` the world-aligned point Jacobian of
/// [`point_jacobian_world`] (only `joint`'s chain is touched; nothing for the world).
pub fn add_point_force(
    model: &Model,
    data: &Data,
    joint: usize,
    point_world: &Vector3<f64>,
    force: &Vector3<f64>,
    out: &mut DVector<f64>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    model.check_joint(joint)?;
    if out.len() != model.nv() {
        return Err(DynamicsError::WrongSize {
            name: "generalized force",
            dim: "nv",
            expected: model.nv(),
            got: out.len(),
        });
    }
    let mut j = joint;
    while j > 0 {
        let jt = &model.joints[j];
        let m = &data.o_m_i[j];
        let r = m.trans - point_world;
        match &jt.kind {
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                let a = m.rot * axis.into_inner();
                out[jt.idx_v] += a.cross(&(-r)).dot(force);
            }
            JointKind::Prismatic { axis } => {
                out[jt.idx_v] += (m.rot * axis.into_inner()).dot(force);
            }
            JointKind::FreeFlyer => {
                // Columns R and [o − p]× R of the point Jacobian, transposed.
                let linear = m.rot.transpose() * force;
                let angular = (r.cross_matrix() * m.rot).transpose() * force;
                for k in 0..3 {
                    out[jt.idx_v + k] += linear[k];
                    out[jt.idx_v + 3 + k] += angular[k];
                }
            }
            JointKind::Universe => {}
        }
        j = jt.parent;
    }
    Ok(())
}

/// The 3 × nv world-aligned linear Jacobian of a frame's origin. Needs
/// [`super::forward_kinematics`] at the current q.
pub fn frame_jacobian(
    model: &Model,
    data: &Data,
    frame: FrameId,
) -> Result<Matrix3xX<f64>, DynamicsError> {
    let f = model
        .frames
        .get(frame)
        .ok_or_else(|| ModelError::UnknownFrame {
            model: model.name.clone(),
            name: format!("#{frame}"),
        })?;
    let point = data.o_m_i[f.parent_joint].act_point(&data.frame_placements[frame].trans);
    point_jacobian_world(model, data, f.parent_joint, &point)
}
