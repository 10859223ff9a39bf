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
//! (GJK++ §IV-E) for as long as it keeps reaching the narrow phase: the state between
//! calls follows the pairs whose boxes overlap, not the allowed pairs (a pile allows every
//! corner against every box below it, about `4 bodies²` pairs, of which a few per body
//! touch). A pair whose boxes separate forgets its warm start and starts cold when they
//! meet again.

use std::collections::HashMap;
use std::ops::Range;

use nalgebra::{Isometry3, Vector3};
use serde::{Deserialize, Serialize};

use super::broadphase::{world_aabb, world_plane, Aabb, BuildPairHasher, PairFilter};
use super::contact::{contact_unfiltered, ContactSettings};
use super::error::CollisionError;
use super::scene::PairContact;
use super::shape::{Core, Shape};

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
    /// Last GJK separation vector (warm start) of the pairs that reached the narrow phase
    /// at the last call, by increasing pair index.
    warm_starts: Vec<(usize, Vector3<f64>)>,
    /// The warm starts the current call writes (swapped into `warm_starts` at its end).
    next_warm_starts: Vec<(usize, Vector3<f64>)>,
    contacts: Vec<PairContact>,
    contact_pairs: Vec<usize>,
    outcomes: DetectionOutcomes,
    /// The sweep and prune's index of the pairs of two bounded objects, when there are
    /// more than [`SWEEP_ABOVE`] of them (`None`: the pair-by-pair loop).
    sweep: Option<Sweep>,
}

/// Bounded pairs above which [`ContactDetector::detect`] sweeps and prunes.
const SWEEP_ABOVE: usize = 64;

/// What the sweep and prune keeps between calls. The bounded objects are gathered by
/// owner (a body's shape and its corner spheres are one group); the sweep runs over the
/// groups' boxes, and only the pairs of two overlapping groups are compared object by
/// object. The groups' order along the sweep axis is kept from call to call: bodies move
/// little in a step, so it is re-sorted by insertion in `O(groups + swaps)`.
#[derive(Debug, Clone, Default)]
struct Sweep {
    /// The objects of each group, `members[offsets[g]..offsets[g + 1]]`.
    members: Vec<usize>,
    offsets: Vec<usize>,
    /// The allowed pairs between groups `g < h`, as a range of `between_pairs`.
    between: HashMap<(usize, usize), Range<usize>, BuildPairHasher>,
    between_pairs: Vec<usize>,
    /// The allowed pairs of two objects of one group (compared box to box at each call).
    within: Vec<usize>,
    /// The pairs with a halfspace or a height field.
    unbounded: Vec<usize>,
    /// Each group's box at the current call, grown by half the margin.
    boxes: Vec<Aabb>,
    /// The groups, sorted by their boxes' lower bound along `axis`.
    order: Vec<usize>,
    axis: usize,
    /// The groups whose interval along the axis is still open.
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
        let pairs = accepted_pairs(&objects, filter);
        let mut in_pairs: Vec<usize> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        in_pairs.sort_unstable();
        in_pairs.dedup();
        let owners: Vec<usize> = objects.iter().map(|(_, owner)| *owner).collect();
        let shapes: Vec<Shape> = objects.into_iter().map(|(s, _)| s).collect();
        let local_boxes: Vec<Option<Aabb>> = shapes
            .iter()
            .map(|s| world_aabb(s, &Isometry3::identity()))
            .collect();
        let sweep = build_sweep(&pairs, &local_boxes, &owners);
        Self {
            sweep,
            warm_starts: Vec::new(),
            next_warm_starts: Vec::new(),
            world_boxes: vec![None; shapes.len()],
            contacts: Vec::new(),
            contact_pairs: Vec::new(),
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
        self.warm_starts.clear();
    }

    /// The pairs that keep a state (a warm start) between calls, increasing: those whose
    /// GJK ran at the last call (each reached the narrow phase, its boxes overlapping).
    pub fn pairs_with_state(&self) -> impl Iterator<Item = usize> + '_ {
        self.warm_starts.iter().map(|&(p, _)| p)
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
            sweep.find_candidates(&self.pairs, &self.shapes, poses, &self.world_boxes, margin);
        }
        let all_pairs = 0..self.pairs.len();
        let candidates: &mut dyn Iterator<Item = usize> = match &sweep {
            Some(sweep) => &mut sweep.candidates.iter().copied(),
            None => &mut all_pairs.into_iter(),
        };
        let result = self.narrow_phase(candidates, poses, settings, margin);
        self.sweep = sweep;
        std::mem::swap(&mut self.warm_starts, &mut self.next_warm_starts);
        result
    }

    /// The narrow phase of the candidate pairs (increasing), each after the box test; the
    /// warm starts of the pairs it reaches go to `next_warm_starts`.
    fn narrow_phase(
        &mut self,
        candidates: &mut dyn Iterator<Item = usize>,
        poses: &[Isometry3<f64>],
        settings: &ContactSettings,
        margin: f64,
    ) -> Result<(), CollisionError> {
        self.next_warm_starts.clear();
        let mut previous = self.warm_starts.iter().peekable();
        for p in candidates {
            let (i, j) = self.pairs[p];
            if let (Some(bi), Some(bj)) = (&self.world_boxes[i], &self.world_boxes[j]) {
                if !bi.loosened(margin).intersects(bj) {
                    continue;
                }
            }
            self.outcomes.narrow_phase += 1;
            // Both lists increase: the pair's last warm start, if any, is next in line.
            while previous.next_if(|&&(q, _)| q < p).is_some() {}
            let warm = previous.next_if(|&&(q, _)| q == p).map(|&(_, w)| w);
            let found = contact_unfiltered(
                &self.shapes[i],
                &poses[i],
                &self.shapes[j],
                &poses[j],
                settings,
                warm.as_ref(),
            )?;
            let Some(c) = found else {
                if let Some(w) = warm {
                    self.next_warm_starts.push((p, w));
                }
                continue;
            };
            if !c.converged {
                if c.epa_iterations > 0 {
                    self.outcomes.epa_not_converged += 1;
                } else {
                    self.outcomes.gjk_not_converged += 1;
                }
            }
            let kept = if c.gjk_iterations > 0 {
                Some(c.warm_start)
            } else {
                warm
            };
            if let Some(w) = kept {
                self.next_warm_starts.push((p, w));
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

/// The pairs `(a, b)`, `a < b`, increasing, that `filter` accepts and that are not two
/// ground shapes; with a list of allowed pairs, only those are visited (a pile's
/// objects are too many to try every pair).
fn accepted_pairs(objects: &[(Shape, usize)], filter: &PairFilter) -> Vec<(usize, usize)> {
    let accepted = |(i, j): (usize, usize)| {
        let ((si, oi), (sj, oj)) = (&objects[i], &objects[j]);
        filter.accepts(i, j, *oi, *oj) && !(si.is_terrain() && sj.is_terrain())
    };
    let n = objects.len();
    let mut pairs: Vec<(usize, usize)> = match &filter.allowed {
        Some(allowed) => allowed
            .iter()
            .map(|&(i, j)| (i.min(j), i.max(j)))
            .filter(|&(i, j)| j < n && accepted((i, j)))
            .collect(),
        None => (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&pair| accepted(pair))
            .collect(),
    };
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The sweep's groups and pair index when there are more than [`SWEEP_ABOVE`] bounded
/// pairs; `owners[k]` is object `k`'s owner.
fn build_sweep(
    pairs: &[(usize, usize)],
    local_boxes: &[Option<Aabb>],
    owners: &[usize],
) -> Option<Sweep> {
    let is_bounded =
        |&(i, j): &(usize, usize)| local_boxes[i].is_some() && local_boxes[j].is_some();
    if pairs.iter().filter(|p| is_bounded(p)).count() <= SWEEP_ABOVE {
        return None;
    }
    let mut sweep = Sweep::default();
    let mut group_of: HashMap<usize, usize, BuildPairHasher> = HashMap::default();
    let mut group_members: Vec<Vec<usize>> = Vec::new();
    let mut object_group = vec![usize::MAX; local_boxes.len()];
    for (p, pair) in pairs.iter().enumerate() {
        if !is_bounded(pair) {
            sweep.unbounded.push(p);
            continue;
        }
        let mut group = |k: usize| {
            if object_group[k] == usize::MAX {
                let next = group_of.len();
                let g = *group_of.entry(owners[k]).or_insert(next);
                if g == group_members.len() {
                    group_members.push(Vec::new());
                }
                group_members[g].push(k);
                object_group[k] = g;
            }
            object_group[k]
        };
        let (g, h) = (group(pair.0), group(pair.1));
        if g == h {
            sweep.within.push(p);
        } else {
            sweep.between_pairs.push(p);
        }
    }
    // By groups, then by pair (the key is recomputed rather than stored beside each pair:
    // a pile has about `4 bodies²` of them).
    let groups_of = |p: usize| {
        let (g, h) = (object_group[pairs[p].0], object_group[pairs[p].1]);
        (g.min(h), g.max(h))
    };
    sweep
        .between_pairs
        .sort_unstable_by_key(|&p| (groups_of(p), p));
    let mut start = 0;
    for chunk in sweep
        .between_pairs
        .chunk_by(|&a, &b| groups_of(a) == groups_of(b))
    {
        sweep
            .between
            .insert(groups_of(chunk[0]), start..start + chunk.len());
        start += chunk.len();
    }
    sweep.offsets.push(0);
    for members in &group_members {
        sweep.members.extend_from_slice(members);
        sweep.offsets.push(sweep.members.len());
    }
    sweep.order = (0..group_members.len()).collect();
    sweep.boxes = vec![
        Aabb {
            min: Vector3::zeros(),
            max: Vector3::zeros(),
        };
        group_members.len()
    ];
    sweep.axis = usize::MAX;
    Some(sweep)
}

impl Sweep {
    /// The pairs whose world boxes, grown by `margin`, overlap on every axis (those that
    /// pass the narrow phase's box test), and the pairs with a halfspace whose plane the
    /// other object's box reaches within `margin` (every other pair with a halfspace or a
    /// height field): `candidates`, increasing.
    fn find_candidates(
        &mut self,
        pairs: &[(usize, usize)],
        shapes: &[Shape],
        poses: &[Isometry3<f64>],
        boxes: &[Option<Aabb>],
        margin: f64,
    ) {
        self.place_groups(boxes, margin);
        self.sort_groups();
        self.candidates.clear();
        let overlap = |p: usize| {
            let (i, j) = pairs[p];
            matches!((&boxes[i], &boxes[j]), (Some(bi), Some(bj)) if bi.loosened(margin).intersects(bj))
        };
        self.candidates
            .extend(self.within.iter().copied().filter(|&p| overlap(p)));
        for &p in &self.unbounded {
            if reaches_plane(pairs[p], shapes, poses, boxes, margin) {
                self.candidates.push(p);
            }
        }
        let axis = self.axis;
        self.active.clear();
        for &g in &self.order {
            let bg = self.boxes[g];
            let boxes_of_groups = &self.boxes;
            self.active
                .retain(|&a| boxes_of_groups[a].max[axis] >= bg.min[axis]);
            for &a in &self.active {
                if !self.boxes[a].intersects(&bg) {
                    continue;
                }
                if let Some(range) = self.between.get(&(a.min(g), a.max(g))) {
                    let between = &self.between_pairs[range.clone()];
                    self.candidates
                        .extend(between.iter().copied().filter(|&p| overlap(p)));
                }
            }
            self.active.push(g);
        }
        self.candidates.sort_unstable();
    }

    /// Each group's box: the union of its objects' world boxes, grown by half the margin
    /// (two grown boxes overlap when one box grown by the whole margin meets the other).
    fn place_groups(&mut self, boxes: &[Option<Aabb>], margin: f64) {
        for (g, bound) in self.boxes.iter_mut().enumerate() {
            let members = &self.members[self.offsets[g]..self.offsets[g + 1]];
            let mut union = Aabb {
                min: Vector3::repeat(f64::INFINITY),
                max: Vector3::repeat(f64::NEG_INFINITY),
            };
            for b in members.iter().filter_map(|&k| boxes[k].as_ref()) {
                union.min = union.min.inf(&b.min);
                union.max = union.max.sup(&b.max);
            }
            *bound = union.loosened(0.5 * margin);
        }
    }

    /// Sorts the groups along the axis of largest spread: by insertion from the last
    /// call's order (nearly sorted), or afresh when the axis changed.
    fn sort_groups(&mut self) {
        let axis = sweep_axis(&self.boxes);
        let boxes = &self.boxes;
        let low = |g: usize| boxes[g].min[axis];
        if axis != self.axis {
            self.order
                .sort_unstable_by(|&a, &b| low(a).total_cmp(&low(b)));
            self.axis = axis;
            return;
        }
        for k in 1..self.order.len() {
            let g = self.order[k];
            let mut slot = k;
            while slot > 0 && low(self.order[slot - 1]) > low(g) {
                self.order[slot] = self.order[slot - 1];
                slot -= 1;
            }
            self.order[slot] = g;
        }
    }
}

/// For a pair with a halfspace: whether the other object's box reaches within `margin`
/// of the plane (its lowest corner along the normal); true for a height field.
fn reaches_plane(
    (i, j): (usize, usize),
    shapes: &[Shape],
    poses: &[Isometry3<f64>],
    boxes: &[Option<Aabb>],
    margin: f64,
) -> bool {
    let (plane, other) = if boxes[i].is_none() { (i, j) } else { (j, i) };
    let (Core::Halfspace { .. }, Some(b)) = (&shapes[plane].core, &boxes[other]) else {
        return true;
    };
    let Some((normal, offset)) = world_plane(&shapes[plane], &poses[plane]) else {
        return true;
    };
    let corner = Vector3::from_fn(|k, _| if normal[k] >= 0.0 { b.min[k] } else { b.max[k] });
    normal.dot(&corner) <= offset + margin
}

/// The axis along which the centres of `boxes` spread most.
fn sweep_axis(boxes: &[Aabb]) -> usize {
    let count = boxes.len().max(1) as f64;
    let centre = |b: &Aabb| (b.min + b.max) * 0.5;
    let mean = boxes.iter().map(centre).sum::<Vector3<f64>>() / count;
    boxes
        .iter()
        .map(|b| (centre(b) - mean).component_mul(&(centre(b) - mean)))
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
        let (swept, looped) = swept_and_looped(objects, &PairFilter::default(), &poses, 1e-2);
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

    /// The detector over `objects` run at `poses` twice: by its sweep and by the
    /// pair-by-pair loop.
    fn swept_and_looped(
        objects: Vec<(Shape, usize)>,
        filter: &PairFilter,
        poses: &[Isometry3<f64>],
        margin: f64,
    ) -> (ContactDetector, ContactDetector) {
        let mut swept = ContactDetector::new(objects, filter);
        assert!(swept.sweep.is_some());
        let mut looped = swept.clone();
        looped.sweep = None;
        let settings = ContactSettings {
            margin,
            ..Default::default()
        };
        for detector in [&mut swept, &mut looped] {
            let Ok(()) = detector.detect(poses, &settings) else {
                panic!("finite poses");
            };
        }
        (swept, looped)
    }

    #[test]
    fn the_grouped_sweep_finds_the_contacts_of_the_pair_by_pair_loop_on_a_pile() {
        // Columns of 3 × 3 × 3 tilted boxes, each with 8 corner spheres of the same owner
        // touching the ground and the boxes listed before it (the world's rules for a
        // pile), the boxes 1 mm into each other so that every corner below touches.
        let Ok(ground) = Shape::halfspace(Vector3::z(), 0.0) else {
            panic!("valid ground");
        };
        let mut objects = vec![(ground, 0)];
        let mut poses = vec![Isometry3::identity()];
        let mut bodies = Vec::new();
        let h = 0.05;
        for k in 0..27_usize {
            let (x, y, z) = ((k % 3) as f64, ((k / 3) % 3) as f64, (k / 9) as f64);
            let tilt = 0.02 * ((k * 5) % 3) as f64;
            let pose = Isometry3::from_parts(
                Translation3::new(0.12 * x, 0.12 * y, h + (2.0 * h - 1e-3) * z),
                UnitQuaternion::from_euler_angles(tilt, -tilt, 2.0 * tilt),
            );
            let Ok(cube) = Shape::cuboid(Vector3::repeat(h)) else {
                panic!("valid box");
            };
            bodies.push(objects.len());
            objects.push((cube, k + 1));
            poses.push(pose);
            for c in 0..8 {
                let sign = |bit: usize| if c & bit == 0 { -1.0 } else { 1.0 };
                let corner = Vector3::new(sign(1), sign(2), sign(4)) * (h - 0.005);
                let Ok(sphere) = Shape::sphere(0.005) else {
                    panic!("valid sphere");
                };
                objects.push((sphere, k + 1));
                poses.push(pose * Translation3::from(corner));
            }
        }
        let mut allowed = crate::collision::PairSet::default();
        for (i, (_, owner)) in objects.iter().enumerate().skip(1) {
            let is_corner = !bodies.contains(&i);
            if is_corner {
                allowed.insert((0, i));
                allowed.extend(
                    bodies
                        .iter()
                        .filter(|&&b| b < i && objects[b].1 != *owner)
                        .map(|&b| (b, i)),
                );
            }
        }
        let filter = PairFilter {
            allowed: Some(allowed),
            ..Default::default()
        };
        let (swept, looped) = swept_and_looped(objects, &filter, &poses, 1e-3);
        assert_eq!(swept.contact_pairs(), looped.contact_pairs());
        assert_eq!(swept.contacts(), looped.contacts());
        // Every contact, and few candidates: the pairs of neighbouring boxes only.
        let count = swept.contacts().len();
        assert!(count > 40, "{count} contacts");
        let candidates = swept.sweep.as_ref().map_or(0, |s| s.candidates.len());
        let pairs = swept.pairs().len();
        assert!(
            candidates * 10 <= pairs,
            "{candidates} candidates of {pairs} pairs"
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
