//! What an SRDF file says of a model, as Pinocchio reads it:
//! - reference configurations (`<group_state name="..."><joint name value/>`), as
//!   `loadReferenceConfigurations`: each starts from the neutral configuration and
//!   overrides the joints it names;
//! - link pairs that never collide (`<disable_collisions link1 link2/>`), as
//!   `removeCollisionPairs`.
//!
//! Joints and links of the SRDF that the model does not have (a reduced model) are
//! skipped, as Pinocchio does.

use std::collections::HashMap;
use std::path::Path;

use nalgebra::DVector;

use super::{xml, JointKind, Model, ModelError};

/// Most configuration values all reference configurations may hold together (states
/// times `nq`: 64 MiB of `f64`); a robot's SRDF has a handful of states.
pub const MAX_REFERENCE_VALUES: usize = 1 << 23;

impl Model {
    /// Reads every `group_state` of an SRDF file into [`Model::reference_configurations`]
    /// and every `disable_collisions` into [`Model::disabled_collisions`].
    pub fn load_srdf(&mut self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        let file = path.as_ref();
        let err = |message: String| ModelError::Srdf {
            file: file.to_path_buf(),
            message,
        };
        let text = super::read_text(file, super::urdf::MAX_URDF_BYTES).map_err(|error| {
            ModelError::Io {
                file: file.to_path_buf(),
                error,
            }
        })?;
        let elements = xml::elements(&text).map_err(err)?;
        let states = elements
            .iter()
            .filter(|e| e.depth == 1 && e.name == "group_state")
            .count();
        if states.saturating_mul(self.nq().max(1)) > MAX_REFERENCE_VALUES {
            return Err(err(format!(
                "{states} <group_state> elements of {} values each: more than the \
                 {MAX_REFERENCE_VALUES} values reference configurations may hold",
                self.nq()
            )));
        }
        let joint_ids: HashMap<&str, usize> = self
            .joints
            .iter()
            .enumerate()
            .map(|(k, j)| (j.name.as_str(), k))
            .rev()
            .collect();
        let mut current: Option<(String, DVector<f64>)> = None;
        for e in &elements {
            if e.depth <= 1 {
                if let Some((name, q)) = current.take() {
                    self.reference_configurations.insert(name, q);
                }
            }
            if e.depth == 1 && e.name == "group_state" {
                let name = e
                    .attribute("name")
                    .ok_or_else(|| err("<group_state> without a name".to_string()))?;
                current = Some((name.to_string(), self.neutral_configuration()));
            } else if e.depth == 2 && e.name == "joint" {
                if let Some((state, q)) = current.as_mut() {
                    self.set_srdf_joint(&joint_ids, q, e, state).map_err(err)?;
                }
            }
        }
        if let Some((name, q)) = current.take() {
            self.reference_configurations.insert(name, q);
        }
        for e in elements
            .iter()
            .filter(|e| e.depth == 1 && e.name == "disable_collisions")
        {
            let pair = disabled_pair(e).map_err(err)?;
            self.disabled_collisions.insert(pair);
        }
        Ok(())
    }

    /// True when the bodies of joints `a` and `b` are tested against each other by
    /// self-collision: distinct bodies that are not parent and child (the joint between
    /// them holds them in contact), whose links the SRDF does not disable.
    pub fn self_collision_allowed(&self, a: usize, link_a: &str, b: usize, link_b: &str) -> bool {
        let adjacent = |i: usize, j: usize| j != 0 && self.joints[j].parent == i;
        a != b
            && !adjacent(a, b)
            && !adjacent(b, a)
            && !self
                .disabled_collisions
                .contains(&ordered_pair(link_a, link_b))
    }

    fn set_srdf_joint(
        &self,
        joint_ids: &HashMap<&str, usize>,
        q: &mut DVector<f64>,
        e: &xml::Element,
        state: &str,
    ) -> Result<(), String> {
        let name = e
            .attribute("name")
            .ok_or_else(|| format!("group_state '{state}': <joint> without a name"))?;
        let Some(&id) = joint_ids.get(name) else {
            return Ok(());
        };
        let joint = &self.joints[id];
        let text = e
            .attribute("value")
            .ok_or_else(|| format!("group_state '{state}': joint '{name}' without a value"))?;
        let values = text
            .split_whitespace()
            .map(str::parse::<f64>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                format!("group_state '{state}': joint '{name}': value '{text}' is not numbers")
            })?;
        let values = match (&joint.kind, values.as_slice()) {
            (JointKind::RevoluteUnbounded { .. }, [theta]) => vec![theta.cos(), theta.sin()],
            _ => values,
        };
        if values.len() != joint.nq() || values.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "group_state '{state}': joint '{name}': expected {} finite value(s), got '{text}'",
                joint.nq()
            ));
        }
        for (k, x) in values.into_iter().enumerate() {
            q[joint.idx_q + k] = x;
        }
        Ok(())
    }
}

/// The two names in order.
fn ordered_pair(a: &str, b: &str) -> (String, String) {
    match a <= b {
        true => (a.to_string(), b.to_string()),
        false => (b.to_string(), a.to_string()),
    }
}

/// The link pair of a `<disable_collisions link1=".." link2=".."/>` element.
fn disabled_pair(e: &xml::Element) -> Result<(String, String), String> {
    let link = |key: &str| {
        e.attribute(key)
            .ok_or_else(|| format!("line {}: <disable_collisions> without {key}", e.line))
    };
    Ok(ordered_pair(link("link1")?, link("link2")?))
}
