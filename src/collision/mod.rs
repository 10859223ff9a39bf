//! Collision stage: shapes, support maps, GJK (vanilla, Polyak, Nesterov), EPA, broad
//! phase and contacts.
//!
//! - [`shape`]: convex shapes as a core plus an inflation radius (swept sphere).
//! - [`support`]: the [`SupportMap`] trait.
//! - [`mesh`]: STL reading and convex hulls with hill-climbing support.
//! - [`heightfield`]: terrain as a grid of heights (triangulated cells), its contacts
//!   with spheres and boxes.
//! - [`gjk`]: GJK as fully-corrective Frank-Wolfe, with Polyak / Nesterov momentum
//!   (GJK++, Alg. 4, 6, 7 and eq. 32).
//! - [`epa`]: penetration depth and normal.
//! - [`frank_wolfe`], [`nesmino`] (with [`projection`]), [`qp`]: the baselines GJK++ and
//!   "Collision Detection Accelerated" compare GJK with: Frank-Wolfe (Alg. 1), NESMINO
//!   (Qin & An) and the collision QP of eq. (2) solved by clarabel.
//! - [`ground_points`]: the points through which a shape rests on a plane (a robot
//!   link's geometry on the ground).
//! - [`contact`](mod@contact): one pair → [`Contact`] (normal from A to B, frame `[t1, t2, n]`).
//! - [`broadphase`]: bounding boxes, sweep-and-prune, pair filters.
//! - [`detector`]: the simulator's contacts of a fixed list of pairs, step after step.
//! - [`scene`]: world-placed [`CollisionObject`]s → the list of contacts.
//! - [`benchmark`]: seeded random pairs at controlled distances (GJK++ §IV protocol).
//! - [`smoothing`]: derivatives of a pair's witness points, normal and signed distance
//!   with respect to their relative pose, by randomized smoothing.

pub mod benchmark;
pub mod broadphase;
pub mod contact;
pub mod detector;
pub mod epa;
pub mod error;
pub mod frank_wolfe;
pub mod gjk;
pub mod ground_points;
pub mod heightfield;
pub mod mesh;
pub mod nesmino;
pub mod projection;
pub mod qp;
pub mod scene;
pub mod shape;
pub mod simplex;
pub mod smoothing;
pub mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

pub use broadphase::{Aabb, BuildPairHasher, PairFilter, PairHasher, PairSet};
pub use contact::{contact, contact_frame, signed_distance, Contact, ContactSettings};
pub use detector::{ContactDetector, DetectionOutcomes};
pub use epa::{EpaResult, EpaSettings};
pub use error::CollisionError;
pub use gjk::{GjkQuery, GjkResult, GjkSettings, GjkVariant, MomentumSchedule, SeparationStop};
pub use ground_points::{ground_points, GroundPoint};
pub use heightfield::{HeightField, HeightFieldError};
pub use mesh::ConvexHull;
pub use scene::{
    detect_contacts, detect_contacts_warm, CollisionObject, PairContact, WarmStartCache,
};
pub use shape::{Core, Shape};
pub use support::SupportMap;

use crate::model::GeometryShape;

type HullKey = (PathBuf, [u64; 3]);

/// Hulls already built, per (mesh file, scale): robots share meshes between links.
fn hull_cache() -> &'static Mutex<HashMap<HullKey, Arc<ConvexHull>>> {
    static CACHE: OnceLock<Mutex<HashMap<HullKey, Arc<ConvexHull>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The collision shape of a model geometry: primitives map one to one (capsule = segment
/// inflated by its radius); an STL mesh becomes the convex hull of its scaled vertices,
/// built once per (path, scale) and shared.
pub fn shape_from_geometry(geometry: &GeometryShape) -> Result<Shape, CollisionError> {
    match geometry {
        GeometryShape::Box { half_extents } => Shape::cuboid(*half_extents),
        GeometryShape::Sphere { radius } => Shape::sphere(*radius),
        GeometryShape::Cylinder {
            radius,
            half_length,
        } => Shape::cylinder(*radius, *half_length),
        GeometryShape::Capsule {
            radius,
            half_length,
        } => Shape::capsule(*radius, *half_length),
        GeometryShape::Mesh { path, scale } => {
            for (field, value) in ["scale.x", "scale.y", "scale.z"].iter().zip(scale.iter()) {
                if !value.is_finite() {
                    return Err(CollisionError::InvalidParameter {
                        field,
                        value: *value,
                    });
                }
            }
            let key = (path.clone(), [scale.x, scale.y, scale.z].map(f64::to_bits));
            if let Some(hull) = cached_hull(&key) {
                return Ok(Shape::convex_hull(hull));
            }
            let hull = Arc::new(ConvexHull::from_mesh_file(path, scale)?);
            if let Ok(mut cache) = hull_cache().lock() {
                cache.insert(key, hull.clone());
            }
            Ok(Shape::convex_hull(hull))
        }
    }
}

fn cached_hull(key: &HullKey) -> Option<Arc<ConvexHull>> {
    hull_cache().lock().ok()?.get(key).cloned()
}
