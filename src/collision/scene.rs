//! A scene of world-placed shapes and its contacts: broad phase, filter, narrow phase.
//!
//! Placing a robot's geometry is the simulation layer's job:
//! `pose = data.omi[geometry.parent_joint] * geometry.placement`.

use std::collections::HashMap;

use nalgebra::{Isometry3, Vector3};

use super::broadphase::{candidate_pairs, world_aabb, world_plane, PairFilter};
use super::contact::{contact, Contact, ContactSettings};
use super::error::CollisionError;
use super::shape::Shape;

/// A shape placed in the world.
#[derive(Debug, Clone)]
pub struct CollisionObject {
    /// The shape (meshes share their hull).
    pub shape: Shape,
    /// Pose of the shape's frame in the world.
    pub pose: Isometry3<f64>,
    /// Owner id (e.g. the joint index of the body carrying it; 0 for the world).
    pub owner: usize,
    /// Name, for errors and reports.
    pub name: String,
}

/// A contact between objects `a < b` of the scene (normal from `a` to `b`).
#[derive(Debug, Clone, PartialEq)]
pub struct PairContact {
    /// Index of object A.
    pub a: usize,
    /// Index of object B.
    pub b: usize,
    /// The contact geometry.
    pub contact: Contact,
}

/// GJK warm starts kept between calls, per pair of object indices: the last separation
/// vector of each pair that reached the narrow phase (GJK++ §IV-E: warm-starting with the
/// previous time step).
#[derive(Debug, Clone, Default)]
pub struct WarmStartCache {
    directions: HashMap<(usize, usize), Vector3<f64>>,
}

impl WarmStartCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of pairs with a stored direction.
    pub fn len(&self) -> usize {
        self.directions.len()
    }

    /// True when no pair is stored.
    pub fn is_empty(&self) -> bool {
        self.directions.is_empty()
    }
}

/// Every contact of the scene whose signed distance is at most `settings.margin`, pairs
/// in increasing `(a, b)` order. Pairs pass the broad phase, then `filter`, then the
/// narrow phase. Non-finite poses are errors naming the object.
pub fn detect_contacts(
    objects: &[CollisionObject],
    filter: &PairFilter,
    settings: &ContactSettings,
) -> Result<Vec<PairContact>, CollisionError> {
    detect_contacts_warm(objects, filter, settings, &mut WarmStartCache::new())
}

/// [`detect_contacts`] warm-started from (and updating) `cache`: keep one cache per scene
/// across time steps, with stable object indices.
pub fn detect_contacts_warm(
    objects: &[CollisionObject],
    filter: &PairFilter,
    settings: &ContactSettings,
    cache: &mut WarmStartCache,
) -> Result<Vec<PairContact>, CollisionError> {
    filter.validate(objects.len())?;
    for o in objects {
        let finite = o.pose.translation.vector.iter().all(|c| c.is_finite())
            && o.pose.rotation.coords.iter().all(|c| c.is_finite());
        if !finite {
            return Err(CollisionError::NonFinitePose {
                what: o.name.clone(),
            });
        }
    }
    let boxes: Vec<_> = objects
        .iter()
        .map(|o| world_aabb(&o.shape, &o.pose))
        .collect();
    let planes: Vec<_> = objects
        .iter()
        .map(|o| world_plane(&o.shape, &o.pose))
        .collect();
    let mut contacts = Vec::new();
    for (i, j) in candidate_pairs(&boxes, &planes, settings.margin.max(0.0)) {
        let (oi, oj) = (&objects[i], &objects[j]);
        if !filter.accepts(i, j, oi.owner, oj.owner) {
            continue;
        }
        if oi.shape.is_terrain() && oj.shape.is_terrain() {
            continue;
        }
        let warm = cache.directions.get(&(i, j)).copied();
        let found = contact(
            &oi.shape,
            &oi.pose,
            &oj.shape,
            &oj.pose,
            settings,
            warm.as_ref(),
        )?;
        if let Some(c) = found {
            if c.gjk_iterations > 0 {
                cache.directions.insert((i, j), c.warm_start);
            }
            contacts.push(PairContact {
                a: i,
                b: j,
                contact: c,
            });
        }
    }
    Ok(contacts)
}
