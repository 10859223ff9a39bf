//! Exact derivatives of two pairs with a closed-form geometry: the oracles the estimators
//! are compared with. Same frames and perturbation as the estimators (module
//! [`super`]): A's frame, `ξ = (v, ω)` in B's frame.

use nalgebra::{Isometry3, Matrix3, Matrix3x6, Vector3};

use super::{GeometryJacobians, PairGeometry};

/// `∂(R p + t)/∂ξ = R [I, −[p]ₓ]` for a point `p` fixed in B.
fn rigid_point_jacobian(rotation: &Matrix3<f64>, p: &Vector3<f64>) -> Matrix3x6<f64> {
    let mut j = Matrix3x6::zeros();
    j.fixed_columns_mut::<3>(0).copy_from(rotation);
    j.fixed_columns_mut::<3>(3)
        .copy_from(&(-rotation * p.cross_matrix()));
    j
}

/// Two spheres of radii `radius_a` (A, at the origin) and `radius_b` (B, at `b_in_a`):
/// `n = t/‖t‖`, `x₁ = r_A n`, `x₂ = t − r_B n`, `d = ‖t‖ − r_A − r_B`, separated or
/// penetrating; `None` for concentric spheres (no normal).
pub fn sphere_sphere(
    radius_a: f64,
    radius_b: f64,
    b_in_a: &Isometry3<f64>,
) -> Option<(PairGeometry, GeometryJacobians)> {
    let t = b_in_a.translation.vector;
    let c = t.norm();
    let n = t.try_normalize(0.0)?;
    let rotation = b_in_a.rotation.to_rotation_matrix().into_inner();
    let dt = rigid_point_jacobian(&rotation, &Vector3::zeros());
    let dn = (Matrix3::identity() - n * n.transpose()) * dt / c;
    let geometry = PairGeometry {
        point_a: n * radius_a,
        point_b: t - n * radius_b,
        normal: n,
        distance: c - radius_a - radius_b,
    };
    let jacobians = GeometryJacobians {
        point_a: dn * radius_a,
        point_b: dt - dn * radius_b,
        normal: dn,
        distance: n.transpose() * dt,
    };
    Some((geometry, jacobians))
}

/// A box of half extents `half_extents` (B) over the top face `z = top` of a slab (A)
/// whose face contains the box's lowest vertex's projection: the witness on B is that
/// vertex (moving rigidly), on A its projection on the face, the normal `+z` (constant),
/// `d` the vertex's height over the face. `None` when two vertices are lowest within
/// `1e-9` m (an edge or a face down: no unique witness).
pub fn box_on_slab(
    half_extents: &Vector3<f64>,
    top: f64,
    b_in_a: &Isometry3<f64>,
) -> Option<(PairGeometry, GeometryJacobians)> {
    let rotation = b_in_a.rotation.to_rotation_matrix().into_inner();
    let mut corners: Vec<(f64, Vector3<f64>)> = (0..8)
        .map(|k| {
            let p = Vector3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            )
            .component_mul(half_extents);
            ((b_in_a * nalgebra::Point3::from(p)).z, p)
        })
        .collect();
    corners.sort_by(|x, y| x.0.total_cmp(&y.0));
    if corners[1].0 - corners[0].0 < 1e-9 {
        return None;
    }
    let p = corners[0].1;
    let x2 = (b_in_a * nalgebra::Point3::from(p)).coords;
    let n = Vector3::z();
    let dx2 = rigid_point_jacobian(&rotation, &p);
    let flatten = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, 0.0));
    let geometry = PairGeometry {
        point_a: Vector3::new(x2.x, x2.y, top),
        point_b: x2,
        normal: n,
        distance: x2.z - top,
    };
    let jacobians = GeometryJacobians {
        point_a: flatten * dx2,
        point_b: dx2,
        normal: Matrix3x6::zeros(),
        distance: n.transpose() * dx2,
    };
    Some((geometry, jacobians))
}
