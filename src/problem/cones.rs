//! Friction cones and their projections (design.md §2).
//!
//! - Ice-cream (Coulomb) cone `K_μ = {λ : ‖λ_T‖₂ ≤ μ λ_N}`, its dual `K*_μ = K_{1/μ}`.
//! - Pyramid cone (LCP, 4 facets) `P_μ = {λ : ‖λ_T‖_∞ ≤ μ λ_N}`, its dual
//!   `P*_μ = {c : μ ‖c_T‖₁ ≤ c_N}`.
//! - De Saxcé correction `Γ(c, μ) = (0, 0, μ ‖c_T‖₂)` (paper eq. 13).
//!
//! Vectors are ordered `[t1, t2, n]`. Every projection is the Euclidean one.

use nalgebra::{Vector2, Vector3};

/// The kind of friction cone a contact model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConeKind {
    /// The second-order (Coulomb) cone `K_μ`.
    IceCream,
    /// The 4-facet pyramid of the LCP models.
    Pyramid,
}

/// Euclidean projection onto `K_μ = {‖x_T‖ ≤ μ x_N}`.
pub fn project_ice_cream(mu: f64, x: &Vector3<f64>) -> Vector3<f64> {
    let t = x.xy().norm();
    let n = x.z;
    if t <= mu * n {
        return *x;
    }
    if mu * t <= -n {
        return Vector3::zeros();
    }
    // Projection onto the boundary ray through (μ x_T/‖x_T‖, 1).
    let s = (mu * t + n) / (mu * mu + 1.0);
    let dir = x.xy() / t;
    Vector3::new(mu * s * dir.x, mu * s * dir.y, s)
}

/// Euclidean projection onto the dual cone `K*_μ = K_{1/μ}` (the half-space `c_N ≥ 0`
/// when `μ = 0`).
pub fn project_dual_ice_cream(mu: f64, x: &Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        return Vector3::new(x.x, x.y, x.z.max(0.0));
    }
    project_ice_cream(1.0 / mu, x)
}

/// Distance from `x` to `K_μ`.
pub fn distance_ice_cream(mu: f64, x: &Vector3<f64>) -> f64 {
    (x - project_ice_cream(mu, x)).norm()
}

/// Distance from `x` to `K*_μ`.
pub fn distance_dual_ice_cream(mu: f64, x: &Vector3<f64>) -> f64 {
    (x - project_dual_ice_cream(mu, x)).norm()
}

/// De Saxcé correction `Γ(c, μ) = (0, 0, μ ‖c_T‖₂)` (eq. 13).
pub fn de_saxce_correction(mu: f64, c: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(0.0, 0.0, mu * c.xy().norm())
}

/// Projection of the tangential part onto the disk of radius `μ λ_N` with `λ_N` clamped
/// to be non-negative: the "horizontal" projection of NCP-PGS (Alg. 5).
pub fn project_horizontal(mu: f64, x: &Vector3<f64>) -> Vector3<f64> {
    let n = x.z.max(0.0);
    let t = project_disk(mu * n, &x.xy());
    Vector3::new(t.x, t.y, n)
}

/// Projection of a 2-vector onto the disk of the given radius.
pub fn project_disk(radius: f64, t: &Vector2<f64>) -> Vector2<f64> {
    let norm = t.norm();
    if norm <= radius {
        *t
    } else if norm > 0.0 {
        t * (radius / norm)
    } else {
        Vector2::zeros()
    }
}

/// Euclidean projection onto the pyramid `{‖x_T‖_∞ ≤ μ x_N}`.
pub fn project_pyramid(mu: f64, x: &Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        return Vector3::new(0.0, 0.0, x.z.max(0.0));
    }
    let edges = [
        Vector3::new(mu, mu, 1.0),
        Vector3::new(-mu, mu, 1.0),
        Vector3::new(-mu, -mu, 1.0),
        Vector3::new(mu, -mu, 1.0),
    ];
    project_polyhedral_cone(&edges, x)
}

/// Euclidean projection onto the dual pyramid `{μ ‖c_T‖₁ ≤ c_N}` (the half-space
/// `c_N ≥ 0` when `μ = 0`).
pub fn project_dual_pyramid(mu: f64, x: &Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        return Vector3::new(x.x, x.y, x.z.max(0.0));
    }
    let edges = [
        Vector3::new(1.0, 0.0, mu),
        Vector3::new(0.0, 1.0, mu),
        Vector3::new(-1.0, 0.0, mu),
        Vector3::new(0.0, -1.0, mu),
    ];
    project_polyhedral_cone(&edges, x)
}

/// Euclidean projection onto the relaxed cone `{‖x_T‖ ≤ μ x_N + δ}` (`δ ≥ 0`): `K_μ`
/// shifted by `δ/μ` against the normal; the cylinder `‖x_T‖ ≤ δ` when `μ = 0`.
pub fn project_relaxed_ice_cream(mu: f64, delta: f64, x: &Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        let t = project_disk(delta, &x.xy());
        return Vector3::new(t.x, t.y, x.z);
    }
    let shift = Vector3::new(0.0, 0.0, delta / mu);
    project_ice_cream(mu, &(x + shift)) - shift
}

/// Euclidean projection onto the relaxed pyramid `{‖x_T‖_∞ ≤ μ x_N + δ}` (`δ ≥ 0`): the
/// pyramid shifted by `δ/μ` against the normal; the prism `‖x_T‖_∞ ≤ δ` when `μ = 0`.
pub fn project_relaxed_pyramid(mu: f64, delta: f64, x: &Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        return Vector3::new(x.x.clamp(-delta, delta), x.y.clamp(-delta, delta), x.z);
    }
    let shift = Vector3::new(0.0, 0.0, delta / mu);
    project_pyramid(mu, &(x + shift)) - shift
}

/// Distance from `x` to the pyramid.
pub fn distance_pyramid(mu: f64, x: &Vector3<f64>) -> f64 {
    (x - project_pyramid(mu, x)).norm()
}

/// Distance from `x` to the dual pyramid.
pub fn distance_dual_pyramid(mu: f64, x: &Vector3<f64>) -> f64 {
    (x - project_dual_pyramid(mu, x)).norm()
}

/// Pyramid counterpart of the de Saxcé correction, `(0, 0, μ ‖c_T‖₁)`: the normal velocity
/// the LCP's facet multipliers add to a sliding contact.
pub fn pyramid_correction(mu: f64, c: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(0.0, 0.0, mu * (c.x.abs() + c.y.abs()))
}

/// Projection onto the pointed convex cone generated by four edges given in cyclic order.
///
/// The projection lies in the interior, on one facet, on one edge or at the apex: every
/// feasible candidate is computed and the nearest kept.
fn project_polyhedral_cone(edges: &[Vector3<f64>; 4], x: &Vector3<f64>) -> Vector3<f64> {
    let normals: [Vector3<f64>; 4] = std::array::from_fn(|k| edges[k].cross(&edges[(k + 1) % 4]));
    let inside = |p: &Vector3<f64>| {
        let scale = p.norm().max(1e-300);
        normals
            .iter()
            .all(|nk| nk.dot(p) >= -1e-12 * scale * nk.norm())
    };
    if inside(x) {
        return *x;
    }
    let mut best = Vector3::zeros();
    let mut best_dist = x.norm();
    let mut consider = |p: Vector3<f64>| {
        let d = (x - p).norm();
        if d < best_dist {
            best_dist = d;
            best = p;
        }
    };
    for (k, nk) in normals.iter().enumerate() {
        let p = x - nk * (nk.dot(x) / nk.norm_squared());
        // On the facet between edges k and k+1 iff p is a non-negative combination of them.
        let (a, b) = (edges[k], edges[(k + 1) % 4]);
        if a.cross(&p).dot(nk) >= 0.0 && p.cross(&b).dot(nk) >= 0.0 {
            consider(p);
        }
    }
    for e in edges {
        let t = e.dot(x) / e.norm_squared();
        if t > 0.0 {
            consider(e * t);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ice_cream_projection_cases() {
        let mu = 0.5;
        let inside = Vector3::new(0.1, 0.1, 1.0);
        assert_eq!(project_ice_cream(mu, &inside), inside);
        let polar = Vector3::new(0.1, 0.0, -1.0);
        assert_eq!(project_ice_cream(mu, &polar), Vector3::zeros());
        let outside = Vector3::new(2.0, 0.0, 1.0);
        let p = project_ice_cream(mu, &outside);
        assert!((p.xy().norm() - mu * p.z).abs() < 1e-12);
        // The residual is orthogonal to the projection (Moreau).
        assert!((outside - p).dot(&p).abs() < 1e-12);
    }

    #[test]
    fn relaxed_projections_are_shifted_cone_projections() {
        // Feasible, fixed on feasible points, and (Moreau, about the apex a = (0, 0, −δ/μ))
        // the residual is orthogonal to p − a; μ = 0 clamps the tangential part to δ.
        let (mu, delta) = (0.4, 0.3);
        let apex = Vector3::new(0.0, 0.0, -delta / mu);
        for x in [
            Vector3::new(2.0, -1.0, 0.5),
            Vector3::new(0.1, 0.2, -0.7),
            Vector3::new(-3.0, 0.5, -4.0),
        ] {
            let p = project_relaxed_ice_cream(mu, delta, &x);
            assert!(p.xy().norm() <= mu * p.z + delta + 1e-12, "{p:?}");
            assert!((x - p).dot(&(p - apex)).abs() < 1e-12, "{x:?} {p:?}");
            assert_eq!(project_relaxed_ice_cream(mu, delta, &p), p);
            let p = project_relaxed_pyramid(mu, delta, &x);
            assert!(
                p.x.abs().max(p.y.abs()) <= mu * p.z + delta + 1e-12,
                "{p:?}"
            );
            assert!((x - p).dot(&(p - apex)).abs() < 1e-12, "{x:?} {p:?}");
        }
        let x = Vector3::new(3.0, -4.0, 1.0);
        let p = project_relaxed_ice_cream(0.0, 0.5, &x);
        assert!((p - Vector3::new(0.3, -0.4, 1.0)).norm() < 1e-15);
        let p = project_relaxed_pyramid(0.0, 0.5, &x);
        assert_eq!(p, Vector3::new(0.5, -0.5, 1.0));
    }

    #[test]
    fn pyramid_projection_is_nearest_feasible_point() {
        let mu = 0.3;
        let x = Vector3::new(1.0, -0.2, 0.5);
        let p = project_pyramid(mu, &x);
        assert!(p.x.abs() <= mu * p.z + 1e-12 && p.y.abs() <= mu * p.z + 1e-12);
        assert!((x - p).dot(&p).abs() < 1e-12);
        // No point of a fine grid on the cone is nearer.
        let d = (x - p).norm();
        for i in 0..=20 {
            for j in 0..=20 {
                let z = 0.05 * f64::from(i);
                let s = -1.0 + 0.1 * f64::from(j);
                for q in [
                    Vector3::new(mu * z, s * mu * z, z),
                    Vector3::new(s * mu * z, mu * z, z),
                ] {
                    assert!((x - q).norm() >= d - 1e-12);
                }
            }
        }
    }

    #[test]
    fn dual_pyramid_contains_its_projection() {
        let mu = 0.7;
        let x = Vector3::new(0.4, 0.9, 0.1);
        let p = project_dual_pyramid(mu, &x);
        assert!(mu * (p.x.abs() + p.y.abs()) <= p.z + 1e-12);
        assert!((x - p).dot(&p).abs() < 1e-12);
    }
}
