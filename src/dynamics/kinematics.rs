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

/// Fills `li_m_i` (joint in parent) for a checked `q`.
pub(crate) fn update_local_placements(model: &Model, data: &mut Data, q: &DVector<f64>) {
    let qs = q.as_slice();
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let qj = &qs[joint.idx_q..joint.idx_q + joint.nq()];
        let placement = &data.joint_placements[i];
        data.li_m_i[i] = match &joint.kind {
            JointKind::Revolute { axis } => {
                let (s, c) = qj[0].sin_cos();
                rotated(placement, axis, c, s)
            }
            JointKind::RevoluteUnbounded { axis } => rotated(placement, axis, qj[0], qj[1]),
            kind => placement.compose(&joint_transform(kind, qj)),
        };
    }
}

/// Fills `li_m_i` and `o_m_i` (joint in world) for a checked `q`.
pub(crate) fn update_placements(model: &Model, data: &mut Data, q: &DVector<f64>) {
    update_local_placements(model, data, q);
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        data.o_m_i[i] = data.o_m_i[joint.parent].compose(&data.li_m_i[i]);
    }
}

/// `placement ∘ R_axis(θ)` from cos θ and sin θ; for an axis along ±x, ±y or ±z only two
/// columns of the placement's rotation mix (12 products instead of a 3×3 product), as
/// Pinocchio's `JointModelRX/RY/RZ`.
#[inline]
fn rotated(placement: &Se3, axis: &Vector3<f64>, c: f64, s: f64) -> Se3 {
    let aligned = (0..3).find(|&k| axis[k].abs() == 1.0);
    let rot = match aligned {
        Some(k) => {
            let s = s * axis[k];
            let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
            let p = &placement.rot;
            let (c1, c2) = (p.column(k1), p.column(k2));
            let mut rot = *p;
            rot.set_column(k1, &(c1 * c + c2 * s));
            rot.set_column(k2, &(c2 * c - c1 * s));
            rot
        }
        None => placement.rot * axis_rotation(axis, c, s),
    };
    Se3 {
        rot,
        trans: placement.trans,
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

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Unit};

    #[test]
    fn rotation_about_aligned_and_unaligned_axes() {
        let placement = Se3 {
            rot: Rotation3::from_euler_angles(0.2, 0.7, -1.3).into_inner(),
            trans: Vector3::new(1.0, 2.0, 3.0),
        };
        let theta: f64 = 0.83;
        for axis in [
            Vector3::x(),
            -Vector3::x(),
            Vector3::y(),
            -Vector3::y(),
            Vector3::z(),
            -Vector3::z(),
            Vector3::new(1.0, -2.0, 0.5).normalize(),
        ] {
            let got = rotated(&placement, &axis, theta.cos(), theta.sin());
            let r = Rotation3::from_axis_angle(&Unit::new_normalize(axis), theta).into_inner();
            assert!((got.rot - placement.rot * r).amax() < 1e-15, "axis {axis}");
            assert_eq!(got.trans, placement.trans);
        }
    }
}
