//! The Hessian `∂²σ/∂u²` of a shape's support function `σ(u) = max_{p ∈ A} ⟨u, p⟩` at a
//! direction `u`, in the shape's frame: what the 1st-order estimators need (eq. 19).
//!
//! As in the paper, `u` is not normalized: the 1st-order estimators evaluate the Hessians
//! at the separation vector (`u = |x*| n`), and the noise of the smoothed estimators is
//! added to that `u` (eq. 26, 27), so that it weighs more, relative to `u`, as the shapes
//! come into contact. The support function of an inflated shape is `σ_core(u) + r ‖u‖`,
//! whose Hessian adds `r (I − ûûᵀ)/‖u‖`.

use nalgebra::{Matrix2, Matrix3, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::SmoothingError;
use crate::collision::benchmark::standard_normal;
use crate::collision::error::CollisionError;
use crate::collision::mesh::ConvexHull;
use crate::collision::shape::{Core, Shape};
use crate::collision::support::SupportMap;

/// How the Hessian is obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HessianMethod {
    /// Closed form where the support is twice differentiable, zero on polytopes (eq. 25).
    Exact,
    /// Gaussian smoothing of the support map, eq. (26), with the control variate `∇σ(u)`,
    /// symmetrized and projected on the plane orthogonal to `u` (a support function is
    /// positively homogeneous, so its Hessian is symmetric and `∂²σ(u) u = 0`): both only
    /// remove sampling noise.
    Gaussian {
        /// Samples `M`.
        samples: usize,
        /// Noise on the direction (m).
        noise: f64,
        /// Seed (each shape of a pair draws from its own stream).
        seed: u64,
    },
    /// Gumbel soft-max on the `rings`-neighbourhood of the support vertex, eq. (27)-(28).
    Gumbel {
        /// Neighbourhood depth `n_l`.
        rings: usize,
        /// Temperature on `⟨vᵢ, u⟩` (m²).
        noise: f64,
    },
}

/// The Hessian of `shape`'s support function at the non-zero direction `u` (shape frame).
/// `stream` separates the random draws of the two shapes of a pair.
pub fn support_hessian(
    shape: &Shape,
    u: &Vector3<f64>,
    method: &HessianMethod,
    stream: u64,
) -> Result<Matrix3<f64>, SmoothingError> {
    if shape.is_terrain() {
        return Err(CollisionError::UnsupportedShape {
            algorithm: "the 1st-order estimators",
            core: core_name(&shape.core),
        }
        .into());
    }
    let length = u.norm();
    let unit = u / length;
    let tangent = Matrix3::identity() - unit * unit.transpose();
    let radius_term = tangent * (shape.radius / length);
    match *method {
        HessianMethod::Exact => Ok(exact_core_hessian(&shape.core, &unit) / length + radius_term),
        HessianMethod::Gaussian {
            samples,
            noise,
            seed,
        } => Ok(tangent * gaussian_hessian(shape, u, samples, noise, seed, stream) * tangent),
        HessianMethod::Gumbel { rings, noise } => match &shape.core {
            Core::Hull(hull) => Ok(gumbel_hessian(hull, u, rings, noise) + radius_term),
            core => Err(SmoothingError::NotAMesh(core_name(core))),
        },
    }
}

/// The core's name in messages.
pub fn core_name(core: &Core) -> &'static str {
    match core {
        Core::Point => "sphere",
        Core::Segment { .. } => "capsule",
        Core::Cuboid { .. } => "box",
        Core::Cylinder { .. } => "cylinder",
        Core::Cone { .. } => "cone",
        Core::Ellipsoid { .. } => "ellipsoid",
        Core::Hull(_) => "convex hull",
        Core::Halfspace { .. } => "halfspace",
        Core::HeightField(_) => "height field",
    }
}

/// Closed forms: the ellipsoid `σ(u) = ‖Du‖` has `∂²σ = D²/‖Du‖ − D²u uᵀD²/‖Du‖³`; the rim
/// of a cylinder or cone, `σ = r ‖u_xy‖ + …`, has `r (I₂ − ûûᵀ)/‖u_xy‖` in its xy block;
/// points, segments, boxes, hulls, apexes and flat caps have a locally constant support.
fn exact_core_hessian(core: &Core, u: &Vector3<f64>) -> Matrix3<f64> {
    match core {
        Core::Ellipsoid { radii } => {
            let d2 = Matrix3::from_diagonal(&radii.component_mul(radii));
            let norm = radii.component_mul(u).norm();
            if norm > 0.0 {
                let g = d2 * u;
                d2 / norm - g * g.transpose() / norm.powi(3)
            } else {
                Matrix3::zeros()
            }
        }
        Core::Cylinder { radius, .. } => rim_hessian(*radius, u),
        Core::Cone {
            radius,
            half_length,
        } => {
            let apex = u.z * half_length >= -u.z * half_length + radius * u.xy().norm();
            if apex {
                Matrix3::zeros()
            } else {
                rim_hessian(*radius, u)
            }
        }
        _ => Matrix3::zeros(),
    }
}

fn rim_hessian(radius: f64, u: &Vector3<f64>) -> Matrix3<f64> {
    let rho = u.xy().norm();
    let mut h = Matrix3::zeros();
    if rho > 0.0 {
        let unit = u.xy() / rho;
        let block = (Matrix2::identity() - unit * unit.transpose()) * (radius / rho);
        h.fixed_view_mut::<2, 2>(0, 0).copy_from(&block);
    }
    h
}

/// The support point of the inflated shape (core plus `r u/‖u‖`), hill-climbing from `hint`.
fn inflated_support(shape: &Shape, u: &Vector3<f64>, hint: &mut usize) -> Vector3<f64> {
    let core = shape.local_support_hinted(u, hint);
    match u.try_normalize(0.0) {
        Some(unit) => core + unit * shape.radius,
        None => core,
    }
}

/// Eq. (26) with `μ = N(0, I)`: `H ≈ (1/M) Σ (∇σ(u + ε zⱼ) − ∇σ(u)) zⱼᵀ / ε`,
/// symmetrized; the caller projects it, `P H P` with `P = I − ûûᵀ`. Without the
/// projection, the sampling noise of the entries along `u` is amplified by the large
/// tangential curvature that smoothing gives a flat face, and ends up in the derivative of
/// the distance.
fn gaussian_hessian(
    shape: &Shape,
    u: &Vector3<f64>,
    samples: usize,
    noise: f64,
    seed: u64,
    stream: u64,
) -> Matrix3<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    let mut hint = usize::MAX;
    let s0 = inflated_support(shape, u, &mut hint);
    let start = hint;
    let mut sum = Matrix3::zeros();
    for _ in 0..samples {
        let z = Vector3::from_fn(|_, _| standard_normal(&mut rng));
        hint = start;
        let s = inflated_support(shape, &(u + z * noise), &mut hint);
        sum += (s - s0) * z.transpose();
    }
    let h = sum / (samples as f64 * noise);
    (h + h.transpose()) * 0.5
}

/// The vertices within `rings` edges of vertex `start` (all of them for a hull without
/// adjacency), breadth first.
fn ring_vertices(hull: &ConvexHull, start: usize, rings: usize) -> Vec<usize> {
    let count = hull.vertices().len();
    if !hull.is_solid() {
        return (0..count).collect();
    }
    let mut seen = vec![false; count];
    seen[start] = true;
    let mut all = vec![start];
    let mut level = 0..1;
    for _ in 0..rings {
        for k in level.clone() {
            for &w in hull.neighbors(all[k]) {
                let w = w as usize;
                if !seen[w] {
                    seen[w] = true;
                    all.push(w);
                }
            }
        }
        if all.len() == level.end {
            break;
        }
        level = level.end..all.len();
    }
    all
}

/// Eq. (27)-(28): with `a = softmax(Vᵀu / ε)` over the neighbourhood,
/// `∂²σ ≈ V (diag(a) − a aᵀ) Vᵀ / ε`, the `a`-weighted covariance of the vertices over `ε`.
fn gumbel_hessian(hull: &ConvexHull, u: &Vector3<f64>, rings: usize, noise: f64) -> Matrix3<f64> {
    let mut hint = usize::MAX;
    hull.local_support_hinted(u, &mut hint);
    let vertices = hull.vertices();
    let ring = ring_vertices(hull, hint, rings);
    let top = ring
        .iter()
        .map(|&i| vertices[i].dot(u))
        .fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = ring
        .iter()
        .map(|&i| ((vertices[i].dot(u) - top) / noise).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mean = ring
        .iter()
        .zip(&weights)
        .fold(Vector3::zeros(), |m, (&i, w)| m + vertices[i] * (w / total));
    let covariance = ring
        .iter()
        .zip(&weights)
        .fold(Matrix3::zeros(), |c, (&i, w)| {
            let e = vertices[i] - mean;
            c + e * e.transpose() * (w / total)
        });
    covariance / noise
}
