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
//! Every narrow-phase outcome is kept: a GJK or EPA that hit its iteration cap is counted
//! in [`DetectionOutcomes`], whether or not its distance estimate falls within the margin,
//! and each pair keeps its last GJK separation vector as the warm start of its next query
//! (GJK++ §IV-E).

use nalgebra::{Isometry3, Vector3};
use serde::{Deserialize, Serialize};

use super::broadphase::{world_aabb, Aabb, PairFilter};
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
}

impl ContactDetector {
    /// A detector for the scene's objects, given as their shapes and owner ids (e.g. the
    /// joint carrying each), and the pairs `(a, b)`, `a < b`, that `filter` accepts
    /// (halfspace-halfspace pairs are left out: they have no narrow phase).
    pub fn new(objects: Vec<(Shape, usize)>, filter: &PairFilter) -> Self {
        let mut pairs = Vec::new();
        for (i, (si, oi)) in objects.iter().enumerate() {
            for (j, (sj, oj)) in objects.iter().enumerate().skip(i + 1) {
                if filter.accepts(i, j, *oi, *oj) && !(si.is_halfspace() && sj.is_halfspace()) {
                    pairs.push((i, j));
                }
            }
        }
        let mut in_pairs: Vec<usize> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        in_pairs.sort_unstable();
        in_pairs.dedup();
        let shapes: Vec<Shape> = objects.into_iter().map(|(s, _)| s).collect();
        let local_boxes = shapes
            .iter()
            .map(|s| world_aabb(s, &Isometry3::identity()))
            .collect();
        Self {
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
        for (p, &(i, j)) in self.pairs.iter().enumerate() {
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
