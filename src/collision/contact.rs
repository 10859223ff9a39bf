//! Narrow phase for one pair of placed shapes: GJK for separated cores, EPA when they
//! overlap, the halfspace and a box against a sphere in closed form; inflation radii
//! added at the end.
//!
//! Conventions (design.md §2): the normal points from A to B, `distance < 0` means
//! penetration, `point_b − point_a = distance · normal`, and the contact frame is the
//! rotation whose third column is the normal.

use nalgebra::{Isometry3, Matrix3, Rotation3, Vector3};

use super::epa::{epa, EpaResult, EpaSettings};
use super::error::CollisionError;
use super::gjk::{gjk, gjk_from_simplex, GjkQuery, GjkResult, GjkSettings, MinkowskiDifference};
use super::heightfield::{HeightField, LocalContact};
use super::shape::{Core, Shape};
use super::simplex::Simplex;
use super::support::SupportMap;

/// Settings of the narrow phase.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ContactSettings {
    /// Security margin (m, ≥ 0, default 0): pairs closer than this are reported as
    /// contacts with their (positive) distance.
    pub margin: f64,
    /// GJK settings (its `query` is set by [`contact`]).
    pub gjk: GjkSettings,
    /// EPA settings.
    pub epa: EpaSettings,
}

/// The geometry of a pair: signed distance, normal and witness points (world frame).
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    /// Point of A closest to (or deepest in) B (world frame, m).
    pub point_a: Vector3<f64>,
    /// Point of B closest to (or deepest in) A (world frame, m).
    pub point_b: Vector3<f64>,
    /// Unit normal from A to B (world frame).
    pub normal: Vector3<f64>,
    /// Signed distance (m): > 0 separated, < 0 penetrating.
    pub distance: f64,
    /// Contact frame: rotation from the contact frame to the world, third column the
    /// normal, first two the tangents (order `[t1, t2, n]`).
    pub frame: Rotation3<f64>,
    /// False when GJK or EPA hit its iteration cap (the best estimate is returned).
    pub converged: bool,
    /// GJK iterations.
    pub gjk_iterations: usize,
    /// EPA iterations (0 when EPA did not run; the cap when EPA hit it, so that a
    /// non-converged contact with `epa_iterations > 0` is an EPA failure, otherwise GJK's).
    pub epa_iterations: usize,
    /// Final GJK separation vector `a − b` of the cores in A's frame; pass it back as the
    /// warm start of the next query of this pair.
    pub warm_start: Vector3<f64>,
}

impl Contact {
    /// Mid-point of the two witness points (world frame): where the contact force acts.
    pub fn point(&self) -> Vector3<f64> {
        (self.point_a + self.point_b) * 0.5
    }
}

/// Rotation whose third column is `normal` (unit), with tangents `t1 ⟂ n` and
/// `t2 = n × t1`, so that `[t1, t2, n]` is right-handed.
pub fn contact_frame(normal: &Vector3<f64>) -> Rotation3<f64> {
    let helper = if normal.x.abs() < 0.57 {
        Vector3::x()
    } else if normal.y.abs() < 0.57 {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = normal.cross(&helper).normalize();
    let t2 = normal.cross(&t1);
    Rotation3::from_matrix_unchecked(Matrix3::from_columns(&[t1, t2, *normal]))
}

fn check_pose(pose: &Isometry3<f64>, what: &str) -> Result<(), CollisionError> {
    let finite = pose.translation.vector.iter().all(|c| c.is_finite())
        && pose.rotation.coords.iter().all(|c| c.is_finite());
    if finite {
        Ok(())
    } else {
        Err(CollisionError::NonFinitePose {
            what: what.to_string(),
        })
    }
}

/// Centre of a shape's bounding box in its frame (the GJK initial guess, GJK++ §II).
pub fn local_centre(shape: &Shape) -> Vector3<f64> {
    match &shape.core {
        Core::Hull(hull) => hull.centre(),
        _ => Vector3::zeros(),
    }
}

/// Signed distance, normal and witnesses of the pair, whatever the distance
/// (`margin` is ignored). `warm_start` is a previous [`Contact::warm_start`].
pub fn signed_distance(
    a: &Shape,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    settings: &ContactSettings,
    warm_start: Option<&Vector3<f64>>,
) -> Result<Contact, CollisionError> {
    let mut gjk_settings = settings.gjk;
    gjk_settings.query = GjkQuery::Distance;
    query(
        a,
        pose_a,
        b,
        pose_b,
        &gjk_settings,
        &settings.epa,
        warm_start,
    )
    .map(|c| c.expect("a distance query always answers"))
}

/// [`signed_distance`] of B at `b_in_a` in A's frame, warm-started from an earlier query
/// of the pair at a nearby pose: GJK from `simplex` (that query's final simplex with its
/// points re-placed at this pose; empty: from its separation vector `warm_start`), and the
/// mesh supports' hill climbing from the vertices in `hints` (`usize::MAX`: cold). Both
/// receive this query's. The answer is a cold start's up to GJK's and EPA's tolerances,
/// the support of a direction being unique off ties.
pub fn signed_distance_hinted(
    a: &Shape,
    b: &Shape,
    b_in_a: &Isometry3<f64>,
    settings: &ContactSettings,
    warm_start: &Vector3<f64>,
    hints: &mut [usize; 2],
    simplex: &mut Simplex,
) -> Result<Contact, CollisionError> {
    let identity = Isometry3::identity();
    let support_maps = |s: &Shape| !matches!(s.core, Core::Halfspace { .. } | Core::HeightField(_));
    if !(support_maps(a) && support_maps(b)) {
        simplex.clear();
        return signed_distance(a, &identity, b, b_in_a, settings, Some(warm_start));
    }
    check_pose(b_in_a, "shape B")?;
    let mut gjk_settings = settings.gjk;
    gjk_settings.query = GjkQuery::Distance;
    let hinted = Hinted {
        warm_start: Some(warm_start),
        hints,
        simplex: Some(simplex),
    };
    Ok(support_map_contact(
        a,
        &identity,
        b,
        b_in_a,
        &gjk_settings,
        &settings.epa,
        hinted,
    )
    .expect("a distance query always answers"))
}

/// The contact of a pair when its signed distance is at most `settings.margin`, `None`
/// otherwise. Uses the boolean GJK early exit (Alg. 2) for pairs beyond the margin.
pub fn contact(
    a: &Shape,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    settings: &ContactSettings,
    warm_start: Option<&Vector3<f64>>,
) -> Result<Option<Contact>, CollisionError> {
    let found = contact_unfiltered(a, pose_a, b, pose_b, settings, warm_start)?;
    Ok(found.filter(|c| c.distance <= settings.margin.max(0.0)))
}

/// [`contact`] before the margin test: `None` only when GJK's separating plane proves the
/// pair farther than the margin; a query that hit its iteration cap is returned (with
/// `converged = false`) whatever its distance estimate, so that callers can count it.
pub(crate) fn contact_unfiltered(
    a: &Shape,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    settings: &ContactSettings,
    warm_start: Option<&Vector3<f64>>,
) -> Result<Option<Contact>, CollisionError> {
    let mut gjk_settings = settings.gjk;
    gjk_settings.query = GjkQuery::Collision {
        threshold: settings.margin.max(0.0) + a.radius + b.radius,
    };
    query(
        a,
        pose_a,
        b,
        pose_b,
        &gjk_settings,
        &settings.epa,
        warm_start,
    )
}

fn query(
    a: &Shape,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    gjk_settings: &GjkSettings,
    epa_settings: &EpaSettings,
    warm_start: Option<&Vector3<f64>>,
) -> Result<Option<Contact>, CollisionError> {
    check_pose(pose_a, "shape A")?;
    check_pose(pose_b, "shape B")?;
    match (&a.core, &b.core) {
        (Core::Halfspace { .. }, Core::Halfspace { .. }) => Err(CollisionError::UnsupportedPair(
            "halfspace against halfspace".to_string(),
        )),
        (Core::HeightField(field), _) => {
            heightfield_query(field, pose_a, b, pose_b, gjk_settings.query, a.radius)
        }
        (_, Core::HeightField(field)) => {
            heightfield_query(field, pose_b, a, pose_a, gjk_settings.query, b.radius)
                .map(|c| c.map(swapped))
        }
        (Core::Halfspace { normal, offset }, _) => Ok(Some(halfspace_contact(
            normal, *offset, a.radius, pose_a, b, pose_b,
        ))),
        (_, Core::Halfspace { normal, offset }) => {
            let c = halfspace_contact(normal, *offset, b.radius, pose_b, a, pose_a);
            Ok(Some(swapped(c)))
        }
        (Core::Cuboid { half_extents }, Core::Point) => Ok(box_point_contact(
            half_extents,
            a.radius,
            pose_a,
            b.radius,
            pose_b,
            gjk_settings.query,
        )),
        (Core::Point, Core::Cuboid { half_extents }) => Ok(box_point_contact(
            half_extents,
            b.radius,
            pose_b,
            a.radius,
            pose_a,
            gjk_settings.query,
        )
        .map(swapped)),
        _ => Ok(support_map_contact(
            a,
            pose_a,
            b,
            pose_b,
            gjk_settings,
            epa_settings,
            Hinted {
                warm_start,
                hints: &mut [usize::MAX; 2],
                simplex: None,
            },
        )),
    }
}

/// A height field (at `pose_f`, inflated by `field_radius`) against B: within the
/// collision threshold, or whatever the distance for a distance query (an error then when
/// B is outside the field's footprint, which has no distance).
fn heightfield_query(
    field: &HeightField,
    pose_f: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    query: GjkQuery,
    field_radius: f64,
) -> Result<Option<Contact>, CollisionError> {
    let reach = match query {
        GjkQuery::Collision { threshold } => threshold - field_radius,
        GjkQuery::Distance => f64::INFINITY,
    };
    let found = heightfield_contact(field, pose_f, b, pose_b, reach).map_err(|core| {
        CollisionError::UnsupportedPair(format!("height field against a {core}"))
    })?;
    match (found, query) {
        (None, GjkQuery::Distance) => Err(CollisionError::UnsupportedPair(
            "a shape outside the height field's footprint has no distance to it".to_string(),
        )),
        (found, _) => Ok(found.map(|mut c| {
            c.distance -= field_radius;
            c.point_a += c.normal * field_radius;
            c
        })),
    }
}

/// Exchanges the roles of A and B (normal reversed).
fn swapped(c: Contact) -> Contact {
    let normal = -c.normal;
    Contact {
        point_a: c.point_b,
        point_b: c.point_a,
        normal,
        frame: contact_frame(&normal),
        ..c
    }
}

/// Halfspace `H = {p : ⟨n, p⟩ ≤ offset}` (A) against a convex shape (B): the deepest point
/// of B is its support in direction `−n`; the signed distance is its height over the plane.
fn halfspace_contact(
    normal: &Vector3<f64>,
    offset: f64,
    plane_radius: f64,
    plane_pose: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
) -> Contact {
    let n = plane_pose.rotation * normal;
    let on_plane = plane_pose.transform_point(&(normal * offset).into()).coords;
    let dir_in_b = pose_b.rotation.inverse_transform_vector(&-n);
    let deepest = pose_b
        .transform_point(&b.local_support(&dir_in_b).into())
        .coords;
    let height = n.dot(&(deepest - on_plane));
    let distance = height - b.radius - plane_radius;
    let point_b = deepest - n * b.radius;
    Contact {
        point_a: point_b - n * distance,
        point_b,
        normal: n,
        distance,
        frame: contact_frame(&n),
        converged: true,
        gjk_iterations: 0,
        epa_iterations: 0,
        warm_start: Vector3::zeros(),
    }
}

/// Where a support-map query starts: GJK's initial guess (else the difference of the
/// bounding-box centres), the mesh hill-climbing vertices (in and out), and GJK's initial
/// simplex (in and out; empty: from the guess).
struct Hinted<'h> {
    warm_start: Option<&'h Vector3<f64>>,
    hints: &'h mut [usize; 2],
    simplex: Option<&'h mut Simplex>,
}

/// A box (A, half extents `h`, inflated by `radius_a`) against a point core (B, a sphere of
/// radius `radius_b`), in closed form in the box's frame: the closest point of the box
/// is the point clamped to `[−h, h]`; a point inside is pushed out through the nearest
/// face (the least `h_k − |p_k|`). The same geometry GJK and EPA converge to, without
/// iterating. `None` when the cores are farther apart than a collision query's threshold.
fn box_point_contact(
    h: &Vector3<f64>,
    radius_a: f64,
    pose_a: &Isometry3<f64>,
    radius_b: f64,
    pose_b: &Isometry3<f64>,
    query: GjkQuery,
) -> Option<Contact> {
    let p = pose_a
        .inverse_transform_point(&pose_b.translation.vector.into())
        .coords;
    let closest = p.zip_map(h, |x, hk| x.clamp(-hk, hk));
    let outside = p - closest;
    let core = if outside != Vector3::zeros() {
        let distance = outside.norm();
        if let GjkQuery::Collision { threshold } = query {
            if distance > threshold {
                return None;
            }
        }
        CoreGeometry {
            point_a: closest,
            point_b: p,
            normal: outside / distance,
            distance,
            converged: true,
            epa_iterations: 0,
        }
    } else {
        let depths = h - p.abs();
        let k = depths.imin();
        let side = if p[k] < 0.0 { -1.0 } else { 1.0 };
        let mut on_face = p;
        on_face[k] = side * h[k];
        CoreGeometry {
            point_a: on_face,
            point_b: p,
            normal: Vector3::ith(k, side),
            distance: -depths[k],
            converged: true,
            epa_iterations: 0,
        }
    };
    Some(inflated_contact(
        &core,
        pose_a,
        radius_a,
        radius_b,
        0,
        Vector3::zeros(),
    ))
}

/// The world contact of core geometry computed in A's frame: each witness moved along the
/// normal by its shape's inflation radius.
fn inflated_contact(
    core: &CoreGeometry,
    pose_a: &Isometry3<f64>,
    radius_a: f64,
    radius_b: f64,
    gjk_iterations: usize,
    warm_start: Vector3<f64>,
) -> Contact {
    let n = core.normal;
    let point_a = pose_a
        .transform_point(&(core.point_a + n * radius_a).into())
        .coords;
    let point_b = pose_a
        .transform_point(&(core.point_b - n * radius_b).into())
        .coords;
    let normal = pose_a.rotation * n;
    Contact {
        point_a,
        point_b,
        normal,
        distance: core.distance - radius_a - radius_b,
        frame: contact_frame(&normal),
        converged: core.converged,
        gjk_iterations,
        epa_iterations: core.epa_iterations,
        warm_start,
    }
}

/// Core witnesses and signed core distance in A's frame, before inflation.
struct CoreGeometry {
    point_a: Vector3<f64>,
    point_b: Vector3<f64>,
    normal: Vector3<f64>,
    distance: f64,
    converged: bool,
    epa_iterations: usize,
}

fn support_map_contact(
    a: &Shape,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    gjk_settings: &GjkSettings,
    epa_settings: &EpaSettings,
    start: Hinted<'_>,
) -> Option<Contact> {
    let b_in_a = pose_a.inv_mul(pose_b);
    let centre_b = b_in_a.transform_point(&local_centre(b).into()).coords;
    let centre_difference = local_centre(a) - centre_b;
    let x0 = start.warm_start.copied().unwrap_or(centre_difference);
    let mut diff = MinkowskiDifference::new(a, b, b_in_a).with_hints(*start.hints);
    let mut simplex = start.simplex.as_deref().copied().unwrap_or_default();
    let result = match start.simplex {
        Some(_) => gjk_from_simplex(&mut diff, &x0, gjk_settings, &mut simplex),
        None => gjk(&mut diff, &x0, gjk_settings, &mut simplex),
    };
    let fallback_normal = (-centre_difference)
        .try_normalize(0.0)
        .unwrap_or_else(Vector3::z);
    let core = match result {
        GjkResult::SeparatingPlane { .. } => return None,
        GjkResult::Separated {
            distance,
            point_a,
            point_b,
            ..
        } => CoreGeometry {
            point_a,
            point_b,
            normal: (point_b - point_a)
                .try_normalize(0.0)
                .unwrap_or(fallback_normal),
            distance,
            converged: true,
            epa_iterations: 0,
        },
        GjkResult::NotConverged { .. } => {
            let (point_a, point_b) = simplex.witnesses();
            CoreGeometry {
                point_a,
                point_b,
                normal: (point_b - point_a)
                    .try_normalize(0.0)
                    .unwrap_or(fallback_normal),
                distance: (point_b - point_a).norm(),
                converged: false,
                epa_iterations: 0,
            }
        }
        GjkResult::Overlap { .. } => {
            penetration_geometry(epa(&mut diff, &simplex, epa_settings), &fallback_normal)
        }
    };
    *start.hints = diff.hints();
    if let Some(out) = start.simplex {
        *out = simplex;
    }
    Some(inflated_contact(
        &core,
        pose_a,
        a.radius,
        b.radius,
        result.iterations(),
        simplex.point(),
    ))
}

fn penetration_geometry(result: EpaResult, fallback_normal: &Vector3<f64>) -> CoreGeometry {
    match result {
        EpaResult::Penetration {
            depth,
            normal,
            point_a,
            point_b,
            iterations,
        } => CoreGeometry {
            point_a,
            point_b,
            normal,
            distance: -depth,
            converged: true,
            epa_iterations: iterations,
        },
        EpaResult::NotConverged {
            iterations,
            depth,
            normal,
            point_a,
            point_b,
        } => CoreGeometry {
            point_a,
            point_b,
            normal,
            distance: -depth,
            converged: false,
            epa_iterations: iterations,
        },
        EpaResult::Flat {
            normal,
            point_a,
            point_b,
        } => CoreGeometry {
            point_a,
            point_b,
            // Any normal of the flat set is exact; orient it from A towards B.
            normal: if normal.dot(fallback_normal) < 0.0 {
                -normal
            } else {
                normal
            },
            distance: 0.0,
            converged: true,
            epa_iterations: 0,
        },
    }
}

/// The contact of a height field (A, at `pose_a`) with a shape B: a sphere (point core)
/// or a box (its deepest corner); `reach` is the largest core distance of interest
/// (margin plus the radii; infinite for a distance query). `None` when B is farther or
/// outside the footprint; `Err` names a shape the height field does not handle.
fn heightfield_contact(
    field: &HeightField,
    pose_a: &Isometry3<f64>,
    b: &Shape,
    pose_b: &Isometry3<f64>,
    reach: f64,
) -> Result<Option<Contact>, &'static str> {
    let corners: Vec<Vector3<f64>> = match &b.core {
        Core::Point => vec![Vector3::zeros()],
        Core::Cuboid { half_extents } => (0..8)
            .map(|k| {
                let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
                half_extents.component_mul(&Vector3::new(s(1), s(2), s(4)))
            })
            .collect(),
        Core::Segment { .. } => return Err("capsule"),
        Core::Cylinder { .. } => return Err("cylinder"),
        Core::Cone { .. } => return Err("cone"),
        Core::Ellipsoid { .. } => return Err("ellipsoid"),
        Core::Hull(_) => return Err("convex hull"),
        Core::Halfspace { .. } => return Err("halfspace"),
        Core::HeightField(_) => return Err("height field"),
    };
    let mut deepest: Option<LocalContact> = None;
    for corner in &corners {
        let world = pose_b.transform_point(&(*corner).into());
        let local = pose_a.inverse_transform_point(&world).coords;
        let found = field.sphere_contact(&local, b.radius, reach);
        if let Some(c) = found {
            if deepest.is_none_or(|d| c.distance < d.distance) {
                deepest = Some(c);
            }
        }
    }
    Ok(deepest.map(|c| {
        let normal = pose_a.rotation * c.normal;
        let point_a = pose_a.transform_point(&c.surface_point.into()).coords;
        Contact {
            point_a,
            point_b: point_a + normal * c.distance,
            normal,
            distance: c.distance,
            frame: contact_frame(&normal),
            converged: true,
            gjk_iterations: 0,
            epa_iterations: 0,
            warm_start: Vector3::zeros(),
        }
    }))
}
