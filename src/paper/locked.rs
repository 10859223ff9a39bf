//! A world whose robot has every joint locked at its initial configuration, as
//! ContactBench's `buildReducedModel` makes its Talos (`create_humanoid(reduced=True)`: a
//! rigid free-flying body) and its Allegro hand (`create_hand(reduced=True)`: everything,
//! its free-flyer base included, welded to the world).
//!
//! Every joint that is not a free flyer attached to the world is removed: its body is
//! welded to the nearest such free flyer above it (or to the world), at its placement at
//! the initial configuration; inertias merge (parallel-axis theorem), frames, collision
//! geometries and collision objects move with their bodies. Free bodies of the scenario
//! (a ball, a cube) are free flyers attached to the world and stay as they are.

use nalgebra::{DVector, Isometry3};

use crate::dynamics::{forward_kinematics, Data};
use crate::model::{Inertia, JointKind, Model};
use crate::simulation::World;

/// The joint each joint is welded to (itself for a kept free flyer, 0 for the world).
fn kept_root(model: &Model) -> Vec<usize> {
    let mut root = vec![0; model.njoints()];
    for (j, joint) in model.joints.iter().enumerate().skip(1) {
        root[j] = if joint.kind == JointKind::FreeFlyer && joint.parent == 0 {
            j
        } else {
            root[joint.parent]
        };
    }
    root
}

/// Why a world cannot be locked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("locking the joints of '{model}': {message}")]
pub struct LockError {
    /// The model.
    pub model: String,
    /// What failed.
    pub message: String,
}

/// `world` with its robot's joints locked at `world.q0` (module docs); no actuation.
pub fn lock_joints(world: &World) -> Result<World, LockError> {
    let old = &world.model;
    let fail = |message: String| LockError {
        model: old.name.clone(),
        message,
    };
    let mut data = Data::new(old);
    forward_kinematics(old, &mut data, &world.q0).map_err(|e| fail(e.to_string()))?;
    let root = kept_root(old);
    // The placement of each joint frame in the frame of the joint it is welded to.
    let in_root: Vec<Isometry3<f64>> = (0..old.njoints())
        .map(|j| data.omi[root[j]].inverse() * data.omi[j])
        .collect();

    let mut model = Model::empty(&format!("{} (joints locked)", old.name));
    model.gravity = old.gravity;
    model.notes.clone_from(&old.notes);
    // Old kept joint → new joint.
    let mut new_index = vec![0; old.njoints()];
    let mut q0 = Vec::new();
    let mut v0 = Vec::new();
    let inf = f64::INFINITY;
    for (j, joint) in old.joints.iter().enumerate().skip(1) {
        if root[j] != j {
            continue;
        }
        new_index[j] = model.add_joint(
            &joint.name,
            JointKind::FreeFlyer,
            0,
            joint.placement,
            [
                &[-inf, -inf, -inf, -1.0, -1.0, -1.0, -1.0],
                &[inf, inf, inf, 1.0, 1.0, 1.0, 1.0],
                &[inf; 6],
                &[inf; 6],
            ],
        );
        q0.extend(world.q0.rows(joint.idx_q, 7).iter());
        v0.extend(world.v0.rows(joint.idx_v, 6).iter());
    }
    let mut inertias = vec![Inertia::zero(); model.njoints()];
    for (j, inertia) in old.inertias.iter().enumerate() {
        let target = new_index[root[j]];
        inertias[target] = inertias[target].add(&inertia.transformed(&in_root[j]));
    }
    model.inertias = inertias;
    model.frames = old
        .frames
        .iter()
        .map(|f| {
            let mut frame = f.clone();
            frame.parent_joint = new_index[root[f.parent_joint]];
            frame.placement = in_root[f.parent_joint] * f.placement;
            frame
        })
        .collect();
    model.geometries = old
        .geometries
        .iter()
        .map(|g| {
            let mut geometry = g.clone();
            geometry.parent_joint = new_index[root[g.parent_joint]];
            geometry.placement = in_root[g.parent_joint] * g.placement;
            geometry
        })
        .collect();

    let mut locked = world.clone();
    for object in &mut locked.objects {
        object.placement = in_root[object.joint] * object.placement;
        object.joint = new_index[root[object.joint]];
    }
    locked.force_joints = world
        .force_joints
        .iter()
        .map(|j| new_index[root[*j]])
        .collect();
    locked.base_joint = new_index[root[world.base_joint]];
    locked.q0 = DVector::from_vec(q0);
    locked.v0 = DVector::from_vec(v0);
    locked.pd = None;
    locked.actuated = Vec::new();
    locked.model = model;
    Ok(locked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::Scenario;

    fn world(yaml: &str) -> World {
        let scenario =
            Scenario::from_yaml(yaml, std::path::Path::new("t.yaml"), &[]).expect("scenario");
        World::build(&scenario).expect("world")
    }

    #[test]
    fn free_bodies_are_kept_and_their_mass_is_unchanged() {
        let w = world(
            "name: t\nworld:\n  bodies:\n    - {name: cube, shape: {box: [0.2, 0.2, 0.2]}, mass: 2.0}\ninitial_state:\n  bodies:\n    cube: {position: [0.0, 0.0, 0.1]}\nsimulation: {dt: 1.0e-3, duration: 0.01}\nsolvers: [ncp-admm]\n",
        );
        let locked = lock_joints(&w).expect("locks");
        assert_eq!(locked.model.nv(), w.model.nv());
        assert_eq!(locked.q0, w.q0);
        assert!((locked.model.total_mass() - 2.0).abs() < 1e-12);
    }
}
