//! The simulator's collision stage: contacts of a fixed list of candidate pairs, step
//! after step, without per-step allocation once its buffers have grown.
//!
//! A scene's pair rules are known before the first step (a robot's feet touch the ground,
//! its links touch free bodies, nothing else), so the broad phase visits only those pairs:
//! a pair with a halfspace goes straight to the narrow phase (the deepest support point,
//! as cheap as a bounding box); any other pair first compares world boxes, each obtained
//! from the shape's local box computed once (`c_w = R c + p`, `h_w = |R| h`, a box that
//! contains the exact one). Shapes are cloned once, at construction; per step the caller
//! updates the poses of [`ContactDetector::objects`] only.
//!
//! With many bounded pairs (a pile of boxes, whose corners may touch every box listed
//! before theirs) the boxes are not compared pair by pair: a sweep and prune along the
//! axis of largest spread finds the overlapping ones in `O(n log n + k)`, and only those
//! the rules allow go on, in the same order and to the same box test as the pair-by-pair
//! loop (the same contacts either way).
//!
//! Every narrow-phase outcome is kept: a GJK or EPA that hit its iteration cap is counted
//! in [`DetectionOutcomes`], whether or not its distance estimate falls within the margin,
//! and each pair keeps its last GJK separation vector as the warm start of its next query
//! (GJK++ §IV-E).

use std::collections::HashMap;

use nalgebra::{Isometry3, Vector3};
use serde::{Deserialize, Serialize};

use super::broadphase::{world_aabb, Aabb, BuildPairHasher, PairFilter};
use super::contact::{contact_unfiltered, ContactSettings};
use super::error::CollisionError;
use super::scene::PairContact;
use super::shape::Shape;

/// What the narrow phase did in one call of [`ContactDetector::detect`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectionOutcomes {
    /// Pairs that reached the narrow phase.
    pub narrow_phase: usize,
    /// Queries whose GJK hit its iteration cap (their contact, if within the margin, is
    /// GJK's last estimate).
    pub gjk_not_converged: usize,
    /// Queries whose EPA hit its iteration cap (the best face found is used).
    pub epa_not_converged: usize,
}

impl DetectionOutcomes {
    /// Queries that hit an iteration cap (GJK or EPA).
    pub fn not_converged(&self) -> usize {
        self.gjk_not_converged + self.epa_not_converged
    }
}

/// Contacts of a fixed list of pairs of shapes (module docs).
#[derive(Debug, Clone)]
pub struct ContactDetector {
    shapes: Vec<Shape>,
    pairs: Vec<(usize, usize)>,
    /// Objects that appear in some pair, increasing.
    objects: Vec<usize>,
    /// Each object's box in its own frame (`None` for a halfspace).
    local_boxes: Vec<Option<Aabb>>,
    /// World boxes of the current call (objects of bounded pairs only).
    world_boxes: Vec<Option<Aabb>>,
    /// Last GJK separation vector of each pair (warm start), if any.
    warm_starts: Vec<Option<Vector3<f64>>>,
    contacts: Vec<PairContact>,
    contact_pairs: Vec<usize>,
    outcomes: DetectionOutcomes,
    /// The sweep and prune's index of the pairs of two bounded objects, when there are
    /// more than [`SWEEP_ABOVE`] of them (`None`: the pair-by-pair loop).
    sweep: Option<Sweep>,
}

/// Bounded pairs above which [`ContactDetector::detect`] sweeps and prunes.
const SWEEP_ABOVE: usize = 64;

/// What the sweep and prune keeps between calls.
#[derive(Debug, Clone, Default)]
struct Sweep {
    /// The index in `pairs` of each allowed pair of bounded objects.
    bounded: HashMap<(usize, usize), usize, BuildPairHasher>,
    /// The pairs with a halfspace (always candidates).
    unbounded: Vec<usize>,
    /// The bounded objects, sorted along the sweep axis at each call.
    order: Vec<usize>,
    /// The objects whose interval along the axis is still open.
    active: Vec<usize>,
    /// The candidate pairs of the current call, increasing.
    candidates: Vec<usize>,
}

impl ContactDetector {
    /// A detector for the scene's objects, given as their shapes and owner ids (e.g. the
    /// joint carrying each), and the pairs `(a, b)`, `a < b`, that `filter` accepts
    /// (pairs of two ground shapes, halfspaces or height fields, are left out: they have
    /// no narrow phase).
    pub fn new(objects: Vec<(Shape, usize)>, filter: &PairFilter) -> Self {
        let mut pairs = Vec::new();
        for (i, (si, oi)) in objects.iter().enumerate() {
            for (j, (sj, oj)) in objects.iter().enumerate().skip(i + 1) {
                if filter.accepts(i, j, *oi, *oj) && !(si.is_terrain() && sj.is_terrain()) {
                    pairs.push((i, j));
                }
            }
        }
        let mut in_pairs: Vec<usize> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        in_pairs.sort_unstable();
        in_pairs.dedup();
        let shapes: Vec<Shape> = objects.into_iter().map(|(s, _)| s).collect();
        let local_boxes: Vec<Option<Aabb>> = shapes
            .iter()
            .map(|s| world_aabb(s, &Isometry3::identity()))
            .collect();
        let sweep = build_sweep(&pairs, &local_boxes);
        Self {
            sweep,
            warm_starts: vec![None; pairs.len()],
            world_boxes: vec![None; shapes.len()],
            contacts: Vec::with_capacity(pairs.len()),
            contact_pairs: Vec::with_capacity(pairs.len()),
            shapes,
            pairs,
            objects: in_pairs,
            local_boxes,
            outcomes: DetectionOutcomes::default(),
        }
    }

    /// The candidate pairs `(a, b)`, `a < b`, increasing.
    pub fn pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    /// The objects that appear in some pair (increasing): the only poses
    /// [`ContactDetector::detect`] reads.
    pub fn objects(&self) -> &[usize] {
        &self.objects
    }

    /// The contacts of the last call, in increasing pair order.
    pub fn contacts(&self) -> &[PairContact] {
        &self.contacts
    }

    /// The index in [`ContactDetector::pairs`] of each contact of the last call.
    pub fn contact_pairs(&self) -> &[usize] {
        &self.contact_pairs
    }

    /// The narrow phase's outcomes in the last call.
    pub fn outcomes(&self) -> DetectionOutcomes {
        self.outcomes
    }

    /// Forgets every pair's warm start.
    pub fn clear_warm_starts(&mut self) {
        self.warm_starts.fill(None);
    }

    /// Finds the contacts ([`ContactDetector::contacts`]) whose signed distance is at most
    /// `settings.margin`, with `poses[k]`
    /// the world pose of object `k` (only the objects of [`ContactDetector::objects`] are
    /// read). A non-finite pose is an error naming the object's index.
    pub fn detect(
        &mut self,
        poses: &[Isometry3<f64>],
        settings: &ContactSettings,
    ) -> Result<(), CollisionError> {
        if poses.len() != self.shapes.len() {
            return Err(CollisionError::PoseCount {
                expected: self.shapes.len(),
                got: poses.len(),
            });
        }
        let margin = settings.margin.max(0.0);
        for &k in &self.objects {
            let pose = &poses[k];
            let finite = pose.translation.vector.iter().all(|c| c.is_finite())
                && pose.rotation.coords.iter().all(|c| c.is_finite());
            if !finite {
                return Err(CollisionError::NonFinitePose {
                    what: format!("object {k}"),
                });
            }
            self.world_boxes[k] = self.local_boxes[k].map(|b| placed_box(&b, pose));
        }
        self.contacts.clear();
        self.contact_pairs.clear();
        self.outcomes = DetectionOutcomes::default();
        let mut sweep = self.sweep.take();
        if let Some(sweep) = sweep.as_mut() {
            sweep.find_candidates(&self.world_boxes, margin);
        }
        let all_pairs = 0..self.pairs.len();
        let candidates: &mut dyn Iterator<Item = usize> = match &sweep {
            Some(sweep) => &mut sweep.candidates.iter().copied(),
            None => &mut all_pairs.into_iter(),
        };
        let result = self.narrow_phase(candidates, poses, settings, margin);
        self.sweep = sweep;
        result
    }

    /// The narrow phase of the candidate pairs (increasing), each after the box test.
    fn narrow_phase(
        &mut self,
        candidates: &mut dyn Iterator<Item = usize>,
        poses: &[Isometry3<f64>],
        settings: &ContactSettings,
        margin: f64,
    ) -> Result<(), CollisionError> {
        for p in candidates {
            let (i, j) = self.pairs[p];
            if let (Some(bi), Some(bj)) = (&self.world_boxes[i], &self.world_boxes[j]) {
                if !bi.loosened(margin).intersects(bj) {
                    continue;
                }
            }
            self.outcomes.narrow_phase += 1;
            let found = contact_unfiltered(
                &self.shapes[i],
                &poses[i],
                &self.shapes[j],
                &poses[j],
                settings,
                self.warm_starts[p].as_ref(),
            )?;
            let Some(c) = found else {
                continue;
            };
            if !c.converged {
                if c.epa_iterations > 0 {
                    self.outcomes.epa_not_converged += 1;
                } else {
                    self.outcomes.gjk_not_converged += 1;
                }
            }
            if c.gjk_iterations > 0 {
                self.warm_starts[p] = Some(c.warm_start);
            }
            if c.distance <= margin {
                self.contacts.push(PairContact {
                    a: i,
                    b: j,
                    contact: c,
                });
                self.contact_pairs.push(p);
            }
        }
        Ok(())
    }
}

/// The sweep's index when there are more than [`SWEEP_ABOVE`] bounded pairs.
fn build_sweep(pairs: &[(usize, usize)], local_boxes: &[Option<Aabb>]) -> Option<Sweep> {
    let mut sweep = Sweep::default();
    for (p, &(i, j)) in pairs.iter().enumerate() {
        if local_boxes[i].is_some() && local_boxes[j].is_some() {
            sweep.bounded.insert((i, j), p);
        } else {
            sweep.unbounded.push(p);
        }
    }
    if sweep.bounded.len() <= SWEEP_ABOVE {
        return None;
    }
    let mut objects: Vec<usize> = sweep.bounded.keys().flat_map(|&(i, j)| [i, j]).collect();
    objects.sort_unstable();
    objects.dedup();
    sweep.order = objects;
    Some(sweep)
}

impl Sweep {
    /// The pairs whose world boxes, grown by `margin`, overlap on every axis (a superset
    /// of those passing the narrow phase's box test), and the pairs with a halfspace:
    /// `candidates`, increasing.
    fn find_candidates(&mut self, boxes: &[Option<Aabb>], margin: f64) {
        let placed = |k: usize| boxes[k].map(|b| b.loosened(margin));
        let axis = sweep_axis(&self.order, boxes);
        let low = |k: usize| placed(k).map_or(f64::NEG_INFINITY, |b| b.min[axis]);
        self.order
            .sort_unstable_by(|&a, &b| low(a).total_cmp(&low(b)));
        self.candidates.clear();
        self.candidates.extend_from_slice(&self.unbounded);
        self.active.clear();
        for &k in &self.order {
            let Some(bk) = placed(k) else {
                continue;
            };
            self.active
                .retain(|&a| placed(a).is_some_and(|ba| ba.max[axis] >= bk.min[axis]));
            for &a in &self.active {
                let overlaps = placed(a).is_some_and(|ba| ba.intersects(&bk));
                if let (true, Some(&p)) = (overlaps, self.bounded.get(&(a.min(k), a.max(k)))) {
                    self.candidates.push(p);
                }
            }
            self.active.push(k);
        }
        self.candidates.sort_unstable();
    }
}

/// The axis along which the centres of the boxes of `objects` spread most.
fn sweep_axis(objects: &[usize], boxes: &[Option<Aabb>]) -> usize {
    let centres = || {
        objects
            .iter()
            .filter_map(|&k| boxes[k].map(|b| (b.min + b.max) * 0.5))
    };
    let count = centres().count().max(1) as f64;
    let mean = centres().sum::<Vector3<f64>>() / count;
    centres()
        .map(|c| (c - mean).component_mul(&(c - mean)))
        .sum::<Vector3<f64>>()
        .imax()
}

/// The world box of a local box `b` placed at `pose`: centre `R c + p`, half extents
/// `|R| h` (a box that contains the placed one).
fn placed_box(b: &Aabb, pose: &Isometry3<f64>) -> Aabb {
    let rotation = pose.rotation.to_rotation_matrix();
    let centre = pose.transform_point(&((b.min + b.max) * 0.5).into()).coords;
    let half = rotation.matrix().abs() * ((b.max - b.min) * 0.5);
    Aabb {
        min: centre - half,
        max: centre + half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    #[test]
    fn the_sweep_finds_the_contacts_of_the_pair_by_pair_loop() {
        // A 4 × 4 × 2 lattice of boxes and spheres 0.25 m apart, tilted and jittered so
        // that neighbours touch or nearly, on a ground plane; every pair allowed.
        let mut objects = Vec::new();
        let mut poses = Vec::new();
        let Ok(ground) = Shape::halfspace(Vector3::z(), 0.0) else {
            panic!("valid ground");
        };
        objects.push((ground, 0));
        poses.push(Isometry3::identity());
        for k in 0..32_usize {
            let (x, y, z) = ((k % 4) as f64, ((k / 4) % 4) as f64, (k / 16) as f64);
            let jitter = 0.01 * ((k * 7) % 5) as f64;
            let shape = if k % 3 == 0 {
                Shape::sphere(0.13)
            } else {
                Shape::cuboid(Vector3::new(0.12, 0.13, 0.12))
            };
            let Ok(shape) = shape else {
                panic!("valid shape");
            };
            objects.push((shape, k + 1));
            poses.push(Isometry3::from_parts(
                Translation3::new(0.25 * x + jitter, 0.25 * y, 0.12 + 0.25 * z - jitter),
                UnitQuaternion::from_euler_angles(0.1 * jitter, 0.0, 3.0 * jitter),
            ));
        }
        let mut swept = ContactDetector::new(objects, &PairFilter::default());
        assert!(swept.sweep.is_some());
        let mut looped = swept.clone();
        looped.sweep = None;
        let settings = ContactSettings {
            margin: 1e-2,
            ..Default::default()
        };
        for detector in [&mut swept, &mut looped] {
            let Ok(()) = detector.detect(&poses, &settings) else {
                panic!("finite poses");
            };
        }
        assert!(swept.contacts().len() > 40, "{}", swept.contacts().len());
        assert_eq!(swept.contact_pairs(), looped.contact_pairs());
        assert_eq!(swept.contacts(), looped.contacts());
        let candidates = swept.sweep.as_ref().map_or(0, |s| s.candidates.len());
        // 191 of the 528 pairs: the halfspace pairs and the lattice's neighbours.
        assert!(
            candidates <= 200 && swept.pairs().len() == 528,
            "{candidates}"
        );
    }

    #[test]
    fn placed_box_contains_the_exact_box() {
        let Ok(shape) = Shape::cuboid(Vector3::new(0.1, 0.2, 0.3)) else {
            panic!("valid cuboid");
        };
        let pose = Isometry3::from_parts(
            Translation3::new(1.0, -2.0, 0.5),
            UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1),
        );
        let Some(local) = world_aabb(&shape, &Isometry3::identity()) else {
            panic!("bounded");
        };
        let Some(exact) = world_aabb(&shape, &pose) else {
            panic!("bounded");
        };
        let placed = placed_box(&local, &pose);
        for k in 0..3 {
            assert!(placed.min[k] <= exact.min[k] + 1e-15);
            assert!(placed.max[k] >= exact.max[k] - 1e-15);
        }
        // For a box the transformed local box is exact.
        assert!((placed.min - exact.min).amax() < 1e-14);
        assert!((placed.max - exact.max).amax() < 1e-14);
    }
}
