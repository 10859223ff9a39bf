//! The GJK simplex and the projection of the origin onto its convex hull (the
//! fully-corrective step, GJK++ Alg. 4 line 2 / Alg. 6 line 9-11).
//!
//! The projection is robust rather than clever: it computes the barycentric coordinates of
//! the origin's projection on the full simplex and, when the origin's projection falls
//! outside, recurses on the faces seen from the origin. Degenerate simplices (duplicated,
//! collinear or coplanar support points) are detected with relative thresholds and fall
//! back to their faces, so no degenerate simplex can make GJK fail.

use nalgebra::Vector3;

/// A point of the Minkowski difference `D = A − B` with the two support points it came
/// from (all in the frame of shape A).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SupportPoint {
    /// `w = a − b ∈ D`.
    pub w: Vector3<f64>,
    /// Support point on A.
    pub a: Vector3<f64>,
    /// Support point on B.
    pub b: Vector3<f64>,
}

/// Up to four support points with the barycentric weights of the current iterate
/// `x = Σ λᵢ wᵢ`.
#[derive(Debug, Clone, Copy)]
pub struct Simplex {
    points: [SupportPoint; 4],
    weights: [f64; 4],
    len: usize,
}

impl Default for Simplex {
    fn default() -> Self {
        let zero = SupportPoint {
            w: Vector3::zeros(),
            a: Vector3::zeros(),
            b: Vector3::zeros(),
        };
        Self {
            points: [zero; 4],
            weights: [0.0; 4],
            len: 0,
        }
    }
}

/// Result of projecting the origin on a sub-simplex: indices, weights, squared norm.
#[derive(Clone, Copy)]
struct Projection {
    indices: [usize; 4],
    weights: [f64; 4],
    len: usize,
    norm2: f64,
}

/// Relative threshold below which a segment / triangle / tetrahedron is degenerate.
const DEGENERACY: f64 = 1e-12;

impl Simplex {
    /// Number of support points kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the simplex has no point.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The support points.
    pub fn points(&self) -> &[SupportPoint] {
        &self.points[..self.len]
    }

    /// Empties the simplex.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// True when `w` is already a vertex of the simplex.
    pub fn contains(&self, w: &Vector3<f64>) -> bool {
        self.points().iter().any(|p| p.w == *w)
    }

    /// Appends a point (the caller keeps at most 4: the projection reduces the set).
    pub fn push(&mut self, p: SupportPoint) {
        if self.len < 4 {
            self.points[self.len] = p;
            self.weights[self.len] = 0.0;
            self.len += 1;
        }
    }

    /// The iterate `x = Σ λᵢ wᵢ`.
    pub fn point(&self) -> Vector3<f64> {
        self.points()
            .iter()
            .zip(self.weights.iter())
            .map(|(p, l)| p.w * *l)
            .sum()
    }

    /// The witness points `(Σ λᵢ aᵢ, Σ λᵢ bᵢ)`.
    pub fn witnesses(&self) -> (Vector3<f64>, Vector3<f64>) {
        let mut a = Vector3::zeros();
        let mut b = Vector3::zeros();
        for (p, l) in self.points().iter().zip(self.weights.iter()) {
            a += p.a * *l;
            b += p.b * *l;
        }
        (a, b)
    }

    /// Projects the origin on the hull of the points, keeps only the points needed to
    /// express the projection (Alg. 4 line 2) and returns it. When the origin is inside a
    /// full tetrahedron, all four points are kept and the zero vector is returned.
    pub fn project_origin(&mut self) -> Vector3<f64> {
        let w: [Vector3<f64>; 4] = [
            self.points[0].w,
            self.points[1].w,
            self.points[2].w,
            self.points[3].w,
        ];
        let proj = match self.len {
            0 => return Vector3::zeros(),
            1 => point_projection(&w, 0),
            2 => segment_projection(&w, 0, 1),
            3 => triangle_projection(&w, 0, 1, 2),
            _ => tetrahedron_projection(&w),
        };
        let old = self.points;
        for k in 0..proj.len {
            self.points[k] = old[proj.indices[k]];
            self.weights[k] = proj.weights[k];
        }
        self.len = proj.len;
        self.point()
    }
}

fn point_projection(w: &[Vector3<f64>; 4], i: usize) -> Projection {
    Projection {
        indices: [i, 0, 0, 0],
        weights: [1.0, 0.0, 0.0, 0.0],
        len: 1,
        norm2: w[i].norm_squared(),
    }
}

fn closer(p: Projection, q: Projection) -> Projection {
    if q.norm2 < p.norm2 {
        q
    } else {
        p
    }
}

/// Origin onto segment `[wᵢ, wⱼ]`: `t = −⟨wᵢ, wⱼ − wᵢ⟩ / ‖wⱼ − wᵢ‖²` clamped to [0, 1].
fn segment_projection(w: &[Vector3<f64>; 4], i: usize, j: usize) -> Projection {
    let edge = w[j] - w[i];
    let len2 = edge.norm_squared();
    let scale = w[i].norm_squared().max(w[j].norm_squared());
    if len2 <= DEGENERACY * DEGENERACY * scale {
        return closer(point_projection(w, i), point_projection(w, j));
    }
    let t = -w[i].dot(&edge) / len2;
    if t <= 0.0 {
        point_projection(w, i)
    } else if t >= 1.0 {
        point_projection(w, j)
    } else {
        let x = w[i] + edge * t;
        Projection {
            indices: [i, j, 0, 0],
            weights: [1.0 - t, t, 0.0, 0.0],
            len: 2,
            norm2: x.norm_squared(),
        }
    }
}

/// Origin onto triangle `(wᵢ, wⱼ, wₖ)`: barycentric coordinates of the projection on the
/// plane; when one is negative, the closest point is on an edge opposite a negative one.
fn triangle_projection(w: &[Vector3<f64>; 4], i: usize, j: usize, k: usize) -> Projection {
    let (a, b, c) = (w[i], w[j], w[k]);
    let n = (b - a).cross(&(c - a));
    let n2 = n.norm_squared();
    let longest = (b - a)
        .norm_squared()
        .max((c - a).norm_squared())
        .max((c - b).norm_squared());
    let edges = [(j, k), (k, i), (i, j)];
    if n2 <= DEGENERACY * longest * longest {
        return edges
            .iter()
            .map(|&(p, q)| segment_projection(w, p, q))
            .reduce(closer)
            .unwrap_or_else(|| point_projection(w, i));
    }
    // Barycentrics of the origin's projection p: λ_a = ⟨(b−p)×(c−p), n⟩/‖n‖², with p = 0
    // replaced by its projection (the cross products are invariant along n).
    let la = b.cross(&c).dot(&n) / n2;
    let lb = c.cross(&a).dot(&n) / n2;
    let lc = 1.0 - la - lb;
    let coords = [la, lb, lc];
    if coords.iter().all(|&l| l >= 0.0) {
        let x = a * la + b * lb + c * lc;
        return Projection {
            indices: [i, j, k, 0],
            weights: [la, lb, lc, 0.0],
            len: 3,
            norm2: x.norm_squared(),
        };
    }
    edges
        .iter()
        .zip(coords.iter())
        .filter(|(_, &l)| l < 0.0)
        .map(|(&(p, q), _)| segment_projection(w, p, q))
        .reduce(closer)
        .unwrap_or_else(|| point_projection(w, i))
}

/// Origin onto the tetrahedron `(w₀, w₁, w₂, w₃)`: barycentric coordinates of the origin
/// (Cramer's rule); inside when all are ≥ 0, otherwise the closest point is on a face
/// seen from the origin (negative coordinate of the opposite vertex).
fn tetrahedron_projection(w: &[Vector3<f64>; 4]) -> Projection {
    let faces = [(1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)];
    let e1 = w[1] - w[0];
    let e2 = w[2] - w[0];
    let e3 = w[3] - w[0];
    let det = e1.dot(&e2.cross(&e3));
    let longest = e1
        .norm_squared()
        .max(e2.norm_squared())
        .max(e3.norm_squared());
    if det.abs() <= DEGENERACY * longest * longest.sqrt() {
        return faces
            .iter()
            .map(|&(p, q, r)| triangle_projection(w, p, q, r))
            .reduce(closer)
            .unwrap_or_else(|| point_projection(w, 0));
    }
    let o = -w[0];
    let l1 = o.dot(&e2.cross(&e3)) / det;
    let l2 = e1.dot(&o.cross(&e3)) / det;
    let l3 = e1.dot(&e2.cross(&o)) / det;
    let l0 = 1.0 - l1 - l2 - l3;
    let coords = [l0, l1, l2, l3];
    if coords.iter().all(|&l| l >= 0.0) {
        return Projection {
            indices: [0, 1, 2, 3],
            weights: coords,
            len: 4,
            norm2: 0.0,
        };
    }
    faces
        .iter()
        .zip(coords.iter())
        .filter(|(_, &l)| l < 0.0)
        .map(|(&(p, q, r), _)| triangle_projection(w, p, q, r))
        .reduce(closer)
        .unwrap_or_else(|| point_projection(w, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(x: f64, y: f64, z: f64) -> SupportPoint {
        let w = Vector3::new(x, y, z);
        SupportPoint {
            w,
            a: w,
            b: Vector3::zeros(),
        }
    }

    #[test]
    fn triangle_above_origin_projects_inside() {
        let mut s = Simplex::default();
        for p in [sp(-1.0, -1.0, 1.0), sp(1.0, -1.0, 1.0), sp(0.0, 1.0, 1.0)] {
            s.push(p);
        }
        let x = s.project_origin();
        assert!((x - Vector3::new(0.0, 0.0, 1.0)).norm() < 1e-15);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn duplicated_and_coplanar_points_do_not_fail() {
        let mut s = Simplex::default();
        for p in [
            sp(1.0, 0.0, 2.0),
            sp(1.0, 0.0, 2.0),
            sp(2.0, 0.0, 2.0),
            sp(3.0, 0.0, 2.0),
        ] {
            s.push(p);
        }
        let x = s.project_origin();
        assert!((x - Vector3::new(1.0, 0.0, 2.0)).norm() < 1e-15);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn tetrahedron_containing_origin_keeps_four_points() {
        let mut s = Simplex::default();
        for p in [
            sp(1.0, 0.0, -1.0),
            sp(-1.0, 1.0, -1.0),
            sp(-1.0, -1.0, -1.0),
            sp(0.0, 0.0, 1.0),
        ] {
            s.push(p);
        }
        let x = s.project_origin();
        assert_eq!(x.norm(), 0.0);
        assert_eq!(s.len(), 4);
    }
}
