//! EPA (expanding polytope algorithm, van den Bergen 2001) for the penetration depth and
//! normal of overlapping cores, started from GJK's final simplex.
//!
//! When `D = A − B` is flat (its points span a plane, a line or a point, e.g. two crossing
//! segments or coincident points), no tetrahedron can be built: the penetration depth of
//! the cores is then exactly 0 along any normal of that flat set, which is returned as
//! [`EpaResult::Flat`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nalgebra::Vector3;

use super::gjk::MinkowskiDifference;
use super::simplex::{Simplex, SupportPoint};

/// Settings of EPA.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpaSettings {
    /// Stop when the support in the closest face's normal is within this distance of the
    /// face (m, default 1e-9).
    pub tolerance: f64,
    /// Iteration cap (default 128).
    pub max_iterations: usize,
}

impl Default for EpaSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-9,
            max_iterations: 128,
        }
    }
}

/// The outcome of EPA, in the frame of shape A (cores only).
#[derive(Debug, Clone, PartialEq)]
pub enum EpaResult {
    /// Penetration of the cores: moving B by `depth · normal` separates them.
    Penetration {
        /// Penetration depth of the cores (m, ≥ 0).
        depth: f64,
        /// Unit normal from A to B.
        normal: Vector3<f64>,
        /// Deepest point of A's core inside B (`point_a − point_b = depth · normal`).
        point_a: Vector3<f64>,
        /// Deepest point of B's core inside A.
        point_b: Vector3<f64>,
        /// Iterations used.
        iterations: usize,
    },
    /// `D` is flat: the cores touch with zero depth along `normal` (a unit normal of the
    /// flat set), at the common point `point`.
    Flat {
        /// A unit normal of the flat Minkowski difference.
        normal: Vector3<f64>,
        /// A common point of both cores.
        point_a: Vector3<f64>,
        /// Same point seen from B (equal to `point_a` up to round-off).
        point_b: Vector3<f64>,
    },
    /// The iteration cap was hit; the best face found so far is returned.
    NotConverged {
        /// Iterations used (= the cap).
        iterations: usize,
        /// Depth of the best face (a lower bound of the true depth, m).
        depth: f64,
        /// Its unit normal from A to B.
        normal: Vector3<f64>,
        /// Witness on A.
        point_a: Vector3<f64>,
        /// Witness on B.
        point_b: Vector3<f64>,
    },
}

/// Support points a polytope is given room for up front (EPA typically converges within
/// a few tens of iterations, each adding one point and a net two faces): the buffers grow
/// past it only on long runs.
const POLYTOPE_CAPACITY: usize = 32;
/// Edges of the faces one new point sees, given room for up front.
const EDGES_CAPACITY: usize = 48;

struct Face {
    v: [usize; 3],
    normal: Vector3<f64>,
    distance: f64,
    alive: bool,
}

fn make_face(points: &[SupportPoint], v: [usize; 3]) -> Option<Face> {
    let [a, b, c] = v.map(|i| points[i].w);
    let normal = (b - a).cross(&(c - a)).try_normalize(1e-300)?;
    Some(Face {
        v,
        normal,
        distance: normal.dot(&a),
        alive: true,
    })
}

/// Any unit vector orthogonal to `u` (not necessarily unit `u`).
fn orthogonal(u: &Vector3<f64>) -> Vector3<f64> {
    let axis = if u.x.abs() < 0.57 {
        Vector3::x()
    } else if u.y.abs() < 0.57 {
        Vector3::y()
    } else {
        Vector3::z()
    };
    u.cross(&axis).try_normalize(0.0).unwrap_or_else(Vector3::z)
}

/// Grows GJK's final simplex into a tetrahedron with volume, adding supports in
/// directions orthogonal to the current points; `Err(normal)` when `D` is flat.
fn enclose_origin(
    diff: &mut MinkowskiDifference<'_>,
    simplex: &Simplex,
) -> Result<Vec<SupportPoint>, Vector3<f64>> {
    let mut points: Vec<SupportPoint> = Vec::with_capacity(POLYTOPE_CAPACITY);
    points.extend_from_slice(simplex.points());
    if points.is_empty() {
        points.push(diff.support(&Vector3::x()));
    }
    let scale = points.iter().fold(0.0_f64, |m, p| m.max(p.w.norm()));
    let tiny = 1e-12 * scale.max(1e-12);
    // Segment: try the six axis directions for a second distinct point.
    if points.len() == 1 {
        let dirs = [
            Vector3::x(),
            -Vector3::x(),
            Vector3::y(),
            -Vector3::y(),
            Vector3::z(),
            -Vector3::z(),
        ];
        let p0 = points[0].w;
        match dirs
            .iter()
            .map(|d| diff.support(d))
            .find(|s| (s.w - p0).norm() > tiny)
        {
            Some(s) => points.push(s),
            None => return Err(Vector3::z()),
        }
    }
    if points.len() == 2 {
        let axis = points[1].w - points[0].w;
        let u = orthogonal(&axis);
        let v = axis.normalize().cross(&u);
        let found = [u, -u, v, -v]
            .iter()
            .map(|d| diff.support(d))
            .find(|s| (s.w - points[0].w).cross(&axis).norm() > tiny * axis.norm().max(tiny));
        match found {
            Some(s) => points.push(s),
            None => return Err(u),
        }
    }
    if points.len() == 3 {
        let n = (points[1].w - points[0].w)
            .cross(&(points[2].w - points[0].w))
            .try_normalize(0.0)
            .unwrap_or_else(|| orthogonal(&(points[1].w - points[0].w)));
        let found = [n, -n]
            .iter()
            .map(|d| diff.support(d))
            .find(|s| (s.w - points[0].w).dot(&n).abs() > tiny);
        match found {
            Some(s) => points.push(s),
            None => return Err(n),
        }
    }
    Ok(points)
}

/// Penetration of the cores by EPA from GJK's `simplex` (which encloses the origin, or
/// touches it, up to GJK's tolerance).
pub fn epa(
    diff: &mut MinkowskiDifference<'_>,
    simplex: &Simplex,
    settings: &EpaSettings,
) -> EpaResult {
    let mut points = match enclose_origin(diff, simplex) {
        Ok(points) => points,
        Err(normal) => {
            let (point_a, point_b) = simplex.witnesses();
            return EpaResult::Flat {
                normal,
                point_a,
                point_b,
            };
        }
    };
    let centre = points.iter().map(|p| p.w).sum::<Vector3<f64>>() / 4.0;
    let mut faces: Vec<Face> = Vec::with_capacity(2 * POLYTOPE_CAPACITY);
    for tri in [[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]] {
        let mut tri = tri;
        let Some(mut face) = make_face(&points, tri) else {
            continue;
        };
        if face.normal.dot(&(points[tri[0]].w - centre)) < 0.0 {
            tri.swap(1, 2);
            face = match make_face(&points, tri) {
                Some(f) => f,
                None => continue,
            };
        }
        faces.push(face);
    }
    let mut queue = BinaryHeap::with_capacity(2 * POLYTOPE_CAPACITY);
    queue.extend(
        faces
            .iter()
            .enumerate()
            .map(|(i, f)| Reverse((OrderedDistance(f.distance), i))),
    );
    let mut best = closest_face(&faces, &mut queue);
    // The visible faces' edges of one expansion, kept across expansions (one allocation).
    let mut edges: Vec<(usize, usize)> = Vec::with_capacity(EDGES_CAPACITY);
    for iteration in 1..=settings.max_iterations {
        let Some(fi) = best else {
            break;
        };
        let normal = faces[fi].normal;
        // Support maximizing ⟨n, w⟩ over D is S_D(−n).
        let s = diff.support(&-normal);
        let gain = s.w.dot(&normal) - faces[fi].distance;
        if gain <= settings.tolerance || points.iter().any(|p| p.w == s.w) {
            return penetration(face_witness(&points, &faces[fi]), iteration);
        }
        let witness = face_witness(&points, &faces[fi]);
        points.push(s);
        let apex = points.len() - 1;
        let first_new = faces.len();
        expand(&points, &mut faces, apex, settings.tolerance, &mut edges);
        for (i, f) in faces.iter().enumerate().skip(first_new) {
            queue.push(Reverse((OrderedDistance(f.distance), i)));
        }
        best = closest_face(&faces, &mut queue);
        if best.is_none() {
            return penetration(witness, iteration);
        }
    }
    match best {
        Some(fi) => {
            let w = face_witness(&points, &faces[fi]);
            EpaResult::NotConverged {
                iterations: settings.max_iterations,
                depth: w.depth,
                normal: w.normal,
                point_a: w.point_a,
                point_b: w.point_b,
            }
        }
        None => {
            let (point_a, point_b) = simplex.witnesses();
            EpaResult::Flat {
                normal: Vector3::z(),
                point_a,
                point_b,
            }
        }
    }
}

/// A face distance ordered by `f64::total_cmp`, for the priority queue.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedDistance(f64);

impl Eq for OrderedDistance {}

impl PartialOrd for OrderedDistance {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedDistance {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The live face closest to the origin (dead faces are dropped from the queue lazily);
/// the face stays in the queue until it dies.
fn closest_face(
    faces: &[Face],
    queue: &mut BinaryHeap<Reverse<(OrderedDistance, usize)>>,
) -> Option<usize> {
    while let Some(Reverse((_, i))) = queue.peek().copied() {
        if faces[i].alive {
            return Some(i);
        }
        queue.pop();
    }
    None
}

/// Removes the faces seen from the new point and fans the horizon to it (`edges`: a
/// scratch buffer, cleared here).
fn expand(
    points: &[SupportPoint],
    faces: &mut Vec<Face>,
    apex: usize,
    tolerance: f64,
    edges: &mut Vec<(usize, usize)>,
) {
    let p = points[apex].w;
    edges.clear();
    for face in faces.iter_mut().filter(|f| f.alive) {
        if face.normal.dot(&(p - points[face.v[0]].w)) > tolerance * 1e-3 {
            face.alive = false;
            for k in 0..3 {
                edges.push((face.v[k], face.v[(k + 1) % 3]));
            }
        }
    }
    // A horizon edge is one whose reverse belongs to no other visible face.
    for &(a, b) in edges.iter() {
        if !edges.contains(&(b, a)) {
            if let Some(face) = make_face(points, [a, b, apex]) {
                faces.push(face);
            }
        }
    }
}

/// Depth, normal and witnesses of one face of the polytope.
struct FaceWitness {
    depth: f64,
    normal: Vector3<f64>,
    point_a: Vector3<f64>,
    point_b: Vector3<f64>,
}

/// Depth, normal and witnesses from the face closest to the origin: the origin's
/// projection `distance · normal` in barycentric coordinates of the face.
fn face_witness(points: &[SupportPoint], face: &Face) -> FaceWitness {
    let [a, b, c] = face.v.map(|i| points[i]);
    let p = face.normal * face.distance;
    let n = (b.w - a.w).cross(&(c.w - a.w));
    let n2 = n.norm_squared();
    let (la, lb) = if n2 > 0.0 {
        (
            (b.w - p).cross(&(c.w - p)).dot(&n) / n2,
            (c.w - p).cross(&(a.w - p)).dot(&n) / n2,
        )
    } else {
        (1.0 / 3.0, 1.0 / 3.0)
    };
    let lc = 1.0 - la - lb;
    FaceWitness {
        depth: face.distance.max(0.0),
        normal: face.normal,
        point_a: a.a * la + b.a * lb + c.a * lc,
        point_b: a.b * la + b.b * lb + c.b * lc,
    }
}

fn penetration(w: FaceWitness, iterations: usize) -> EpaResult {
    EpaResult::Penetration {
        depth: w.depth,
        normal: w.normal,
        point_a: w.point_a,
        point_b: w.point_b,
        iterations,
    }
}
