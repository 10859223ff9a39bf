//! Controller targets: where a PD drives the joints.
//!
//! By default a PD holds the reference configuration (`initial_state.reference`, or the
//! neutral one). `actuation.pd.target_offsets` moves named joints of that target, so a
//! hand that starts open can close on an object (paper Fig. 16, the ball dropped into the
//! Allegro hand): the joints start at the reference and the PD drives them to the target.

use std::collections::BTreeMap;

use nalgebra::DVector;

use crate::model::Model;

/// A target offset that does not apply: the joint and why.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetError {
    /// The joint name as written.
    pub joint: String,
    /// What is wrong.
    pub message: String,
}

/// The PD target: `reference` with `offsets` (rad or m, by joint name) added to
/// one-coordinate joints.
pub fn offset_target(
    model: &Model,
    reference: &DVector<f64>,
    offsets: &BTreeMap<String, f64>,
) -> Result<DVector<f64>, TargetError> {
    let mut target = reference.clone();
    for (name, offset) in offsets {
        let fail = |message: String| TargetError {
            joint: name.clone(),
            message,
        };
        if !offset.is_finite() {
            return Err(fail(format!("{offset}: must be finite")));
        }
        let joint = model.joint_id(name).map_err(|e| fail(e.to_string()))?;
        let j = &model.joints[joint];
        if j.nq() != 1 {
            return Err(fail("offsets apply to one-coordinate joints only".into()));
        }
        target[j.idx_q] += offset;
    }
    Ok(target)
}
