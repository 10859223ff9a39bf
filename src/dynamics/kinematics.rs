//! Forward kinematics: placement of every joint and frame (Featherstone 2008, §4.1).

use nalgebra::{DVector, Quaternion, UnitQuaternion, Vector3};

use super::spatial::{axis_rotation, Se3};
use super::{check_configuration, check_data, Data, DynamicsError};
use crate::model::{JointKind, Model};

/// The joint's own transform `j_M_c(q)` for its configuration slice.
#[inline]
pub(crate) fn joint_transform(kind: &JointKind, q: &[f64]) -> Se3 {
    match kind {
        JointKind::Universe => Se3::identity(),
        JointKind::FreeFlyer => {
            let quat = UnitQuaternion::new_unchecked(Quaternion::new(q[6], q[3], q[4], q[5]));
            Se3 {
                rot: quat.to_rotation_matrix().into_inner(),
                trans: Vector3::new(q[0], q[1], q[2]),
            }
        }
        JointKind::Revolute { axis } => {
            let (s, c) = q[0].sin_cos();
            Se3 {
                rot: axis_rotation(axis, c, s),
                trans: Vector3::zeros(),
            }
        }
        JointKind::RevoluteUnbounded { axis } => Se3 {
            rot: axis_rotation(axis, q[0], q[1]),
            trans: Vector3::zeros(),
        },
        JointKind::Prismatic { axis } => Se3 {
            rot: nalgebra::Matrix3::identity(),
            trans: axis.into_inner() * q[0],
        },
    }
}

/// Fills `li_m_i` (joint in parent) and `o_m_i` (joint in world) for a checked `q`.
pub(crate) fn update_placements(model: &Model, data: &mut Data, q: &DVector<f64>) {
    let qs = q.as_slice();
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let jmc = joint_transform(&joint.kind, &qs[joint.idx_q..joint.idx_q + joint.nq()]);
        data.li_m_i[i] = data.joint_placements[i].compose(&jmc);
        data.o_m_i[i] = data.o_m_i[joint.parent].compose(&data.li_m_i[i]);
    }
}

/// Forward kinematics: world placement of every joint (`data.omi`, index 0 = world) and
/// of every frame (`data.omf`) at configuration `q` (dimension nq).
pub fn forward_kinematics(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    for (omi, m) in data.omi.iter_mut().zip(&data.o_m_i) {
        *omi = m.to_isometry();
    }
    for (f, frame) in model.frames.iter().enumerate() {
        let omf = data.o_m_i[frame.parent_joint].compose(&data.frame_placements[f]);
        data.omf[f] = omf.to_isometry();
    }
    Ok(())
}
