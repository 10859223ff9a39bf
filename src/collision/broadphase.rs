//! Broad phase: world bounding boxes of placed shapes and sweep-and-prune along the axis
//! of largest spread, so that the narrow phase sees only candidate pairs. Halfspaces have
//! no box: they are paired with every object whose box reaches below their plane.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use nalgebra::{Isometry3, Vector3};

use super::error::CollisionError;
use super::shape::{Core, Shape};
use super::support::SupportMap;

/// An axis-aligned box in the world frame (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vector3<f64>,
    /// Upper corner.
    pub max: Vector3<f64>,
}

impl Aabb {
    /// True when the boxes overlap (touching counts).
    pub fn intersects(&self, other: &Aabb) -> bool {
        (0..3).all(|i| self.min[i] <= other.max[i] && other.min[i] <= self.max[i])
    }

    /// The box grown by `margin` on every side.
    pub fn loosened(&self, margin: f64) -> Aabb {
        let m = Vector3::repeat(margin);
        Aabb {
            min: self.min - m,
            max: self.max + m,
        }
    }
}

/// The exact world bounding box of a bounded shape (support in ±x, ±y, ±z, plus the
/// inflation radius); `None` for a halfspace or a height field.
pub fn world_aabb(shape: &Shape, pose: &Isometry3<f64>) -> Option<Aabb> {
    if shape.is_terrain() {
        return None;
    }
    let mut min = Vector3::zeros();
    let mut max = Vector3::zeros();
    for i in 0..3 {
        let axis = Vector3::ith(i, 1.0);
        let local = pose.rotation.inverse_transform_vector(&axis);
        let hi = pose.transform_point(&shape.local_support(&local).into());
        let lo = pose.transform_point(&shape.local_support(&-local).into());
        max[i] = hi[i] + shape.radius;
        min[i] = lo[i] - shape.radius;
    }
    Some(Aabb { min, max })
}

/// A hasher for pairs of object indices: each `usize` word is mixed into the state by a
/// rotate, xor and multiply by an odd constant (the scheme of rustc's FxHasher). Pair
/// sets are built and probed `O(objects²)` times for a pile; std's default SipHash, which
/// resists adversarial keys a scene's own indices never are, cost a third of the time of
/// a 216-cube step.
#[derive(Debug, Clone, Copy, Default)]
pub struct PairHasher(u64);

/// Odd multiplier with well-spread bits (rustc's FxHasher constant for 64 bits).
const PAIR_HASH_MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl PairHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(PAIR_HASH_MULTIPLIER);
    }
}

impl Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`PairHasher`]s (no random state: the scene's indices are not adversarial).
pub type BuildPairHasher = BuildHasherDefault<PairHasher>;

/// A set of pairs of object indices with the [`PairHasher`].
pub type PairSet = HashSet<(usize, usize), BuildPairHasher>;

/// Which pairs of objects (by index in the scene) may collide.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairFilter {
    /// Skip pairs whose objects have the same owner (e.g. the same body). Default false.
    pub skip_same_owner: bool,
    /// When set, only these pairs are tested (unordered).
    pub allowed: Option<PairSet>,
    /// These pairs are never tested (unordered).
    pub excluded: PairSet,
}

fn ordered(i: usize, j: usize) -> (usize, usize) {
    (i.min(j), i.max(j))
}

impl PairFilter {
    /// Checks that every named object exists in a scene of `count` objects.
    pub fn validate(&self, count: usize) -> Result<(), CollisionError> {
        let all = self.allowed.iter().flatten().chain(self.excluded.iter());
        for &(i, j) in all {
            for index in [i, j] {
                if index >= count {
                    return Err(CollisionError::FilterIndex { index, count });
                }
            }
        }
        Ok(())
    }

    /// True when the pair `(i, j)` passes the filter (owners given for the same-owner
    /// rule).
    pub fn accepts(&self, i: usize, j: usize, owner_i: usize, owner_j: usize) -> bool {
        if i == j || (self.skip_same_owner && owner_i == owner_j) {
            return false;
        }
        let key = ordered(i, j);
        let excluded = !self.excluded.is_empty()
            && (self.excluded.contains(&key) || self.excluded.contains(&(key.1, key.0)));
        if excluded {
            return false;
        }
        match &self.allowed {
            Some(allowed) => allowed.contains(&key) || allowed.contains(&(key.1, key.0)),
            None => true,
        }
    }
}

/// Candidate pairs `(i, j)`, `i < j`, whose boxes (grown by `margin`) overlap, by
/// sweep-and-prune; `boxes[i] = None` marks a halfspace or a height field, tested against every box it may
/// reach. `planes[i]` is its world `(normal, offset)` (a height field's top plane).
pub fn candidate_pairs(
    boxes: &[Option<Aabb>],
    planes: &[Option<(Vector3<f64>, f64)>],
    margin: f64,
) -> Vec<(usize, usize)> {
    let bounded: Vec<(usize, Aabb)> = boxes
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i, b.loosened(margin * 0.5))))
        .collect();
    let axis = sweep_axis(&bounded);
    let mut order = bounded.clone();
    order.sort_by(|p, q| p.1.min[axis].total_cmp(&q.1.min[axis]));
    let mut pairs = Vec::new();
    let mut active: Vec<(usize, Aabb)> = Vec::new();
    for (i, bi) in order {
        active.retain(|(_, bj)| bj.max[axis] >= bi.min[axis]);
        for (j, bj) in &active {
            if bi.intersects(bj) {
                pairs.push(ordered(i, *j));
            }
        }
        active.push((i, bi));
    }
    for (h, plane) in planes.iter().enumerate() {
        let Some((normal, offset)) = plane else {
            continue;
        };
        for (i, b) in &bounded {
            if box_below_plane(b, normal, *offset, margin) {
                pairs.push(ordered(h, *i));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// True when the lowest corner of `b` along `normal` is within `margin` of the plane.
fn box_below_plane(b: &Aabb, normal: &Vector3<f64>, offset: f64, margin: f64) -> bool {
    let corner = Vector3::from_fn(|k, _| if normal[k] >= 0.0 { b.min[k] } else { b.max[k] });
    normal.dot(&corner) <= offset + margin
}

/// The axis along which box centres spread most (fewest overlaps to sweep).
fn sweep_axis(boxes: &[(usize, Aabb)]) -> usize {
    if boxes.is_empty() {
        return 0;
    }
    let n = boxes.len() as f64;
    let centres: Vec<Vector3<f64>> = boxes.iter().map(|(_, b)| (b.min + b.max) * 0.5).collect();
    let mean = centres.iter().sum::<Vector3<f64>>() / n;
    let var = centres
        .iter()
        .map(|c| (c - mean).component_mul(&(c - mean)))
        .sum::<Vector3<f64>>();
    var.imax()
}

/// World `(normal, offset)` of a halfspace shape placed at `pose`; for a height field,
/// the plane of its highest sample (every surface point lies below it).
pub fn world_plane(shape: &Shape, pose: &Isometry3<f64>) -> Option<(Vector3<f64>, f64)> {
    match &shape.core {
        Core::HeightField(field) => {
            let n = pose.rotation * Vector3::z();
            Some((n, n.dot(&pose.translation.vector) + field.height_range().1))
        }
        Core::Halfspace { normal, offset } => {
            let n = pose.rotation * normal;
            let p = pose.transform_point(&(normal * *offset).into()).coords;
            Some((n, n.dot(&p) + shape.radius))
        }
        _ => None,
    }
}
