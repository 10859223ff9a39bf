//! Convex shapes: a core with a closed-form support function, inflated by a radius
//! ("swept sphere"), so that spheres (point core) and capsules (segment core) are exact.

use std::sync::Arc;

use nalgebra::Vector3;

use super::error::CollisionError;
use super::heightfield::HeightField;
use super::mesh::ConvexHull;
use super::support::SupportMap;

/// The core of a shape, centred on its frame's origin; axial shapes are along z.
#[derive(Debug, Clone)]
pub enum Core {
    /// A single point (the core of a sphere).
    Point,
    /// The segment from `(0, 0, -half_length)` to `(0, 0, half_length)` (core of a capsule).
    Segment {
        /// Half length along z (m).
        half_length: f64,
    },
    /// A box with the given half extents (m).
    Cuboid {
        /// Half extents along x, y, z (m).
        half_extents: Vector3<f64>,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Half length along z (m).
        half_length: f64,
    },
    /// A cone along z, apex at `+half_length`, base disk of `radius` at `-half_length`.
    Cone {
        /// Base radius (m).
        radius: f64,
        /// Half height along z (m).
        half_length: f64,
    },
    /// An axis-aligned ellipsoid with the given semi-axes (m).
    Ellipsoid {
        /// Semi-axes along x, y, z (m).
        radii: Vector3<f64>,
    },
    /// The convex hull of a point set (e.g. an STL mesh's vertices).
    Hull(Arc<ConvexHull>),
    /// The halfspace `{p : ⟨normal, p⟩ ≤ offset}`: the ground. Unbounded, so not a support
    /// map; pairs with a halfspace are handled directly (deepest support point).
    Halfspace {
        /// Unit outward normal (local frame).
        normal: Vector3<f64>,
        /// Offset along the normal (m).
        offset: f64,
    },
    /// A height field (terrain): not convex and not a support map; pairs with it are
    /// handled directly (closest triangle point, [`super::heightfield`]).
    HeightField(Arc<HeightField>),
}

/// A convex shape: a [`Core`] inflated by `radius` (the Minkowski sum with a ball).
#[derive(Debug, Clone)]
pub struct Shape {
    /// The core geometry.
    pub core: Core,
    /// Inflation radius added in every direction (m, ≥ 0).
    pub radius: f64,
}

fn check_length(field: &'static str, value: f64) -> Result<f64, CollisionError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(CollisionError::InvalidParameter { field, value })
    }
}

fn check_vector(fields: [&'static str; 3], v: &Vector3<f64>) -> Result<(), CollisionError> {
    for (field, value) in fields.iter().zip(v.iter()) {
        check_length(field, *value)?;
    }
    Ok(())
}

impl Shape {
    /// A sphere of the given radius (m).
    pub fn sphere(radius: f64) -> Result<Self, CollisionError> {
        Ok(Self {
            core: Core::Point,
            radius: check_length("radius", radius)?,
        })
    }

    /// A box with the given half extents (m).
    pub fn cuboid(half_extents: Vector3<f64>) -> Result<Self, CollisionError> {
        check_vector(
            ["half_extents.x", "half_extents.y", "half_extents.z"],
            &half_extents,
        )?;
        Ok(Self {
            core: Core::Cuboid { half_extents },
            radius: 0.0,
        })
    }

    /// A capsule along z: a segment of half length `half_length` inflated by `radius` (m).
    pub fn capsule(radius: f64, half_length: f64) -> Result<Self, CollisionError> {
        Ok(Self {
            core: Core::Segment {
                half_length: check_length("half_length", half_length)?,
            },
            radius: check_length("radius", radius)?,
        })
    }

    /// A cylinder along z (m).
    pub fn cylinder(radius: f64, half_length: f64) -> Result<Self, CollisionError> {
        Ok(Self {
            core: Core::Cylinder {
                radius: check_length("radius", radius)?,
                half_length: check_length("half_length", half_length)?,
            },
            radius: 0.0,
        })
    }

    /// A cone along z, apex at `+half_length`, base of `radius` at `-half_length` (m).
    pub fn cone(radius: f64, half_length: f64) -> Result<Self, CollisionError> {
        Ok(Self {
            core: Core::Cone {
                radius: check_length("radius", radius)?,
                half_length: check_length("half_length", half_length)?,
            },
            radius: 0.0,
        })
    }

    /// An axis-aligned ellipsoid with semi-axes `radii` (m).
    pub fn ellipsoid(radii: Vector3<f64>) -> Result<Self, CollisionError> {
        check_vector(["radii.x", "radii.y", "radii.z"], &radii)?;
        Ok(Self {
            core: Core::Ellipsoid { radii },
            radius: 0.0,
        })
    }

    /// The convex hull of a mesh or point set.
    pub fn convex_hull(hull: Arc<ConvexHull>) -> Self {
        Self {
            core: Core::Hull(hull),
            radius: 0.0,
        }
    }

    /// The halfspace `{p : ⟨normal, p⟩ ≤ offset}` (normal normalized here).
    pub fn halfspace(normal: Vector3<f64>, offset: f64) -> Result<Self, CollisionError> {
        let norm = normal.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(CollisionError::InvalidNormal(normal.x, normal.y, normal.z));
        }
        if !offset.is_finite() {
            return Err(CollisionError::InvalidParameter {
                field: "offset",
                value: offset,
            });
        }
        Ok(Self {
            core: Core::Halfspace {
                normal: normal / norm,
                offset,
            },
            radius: 0.0,
        })
    }

    /// A height field (terrain) in its frame.
    pub fn heightfield(field: Arc<HeightField>) -> Self {
        Self {
            core: Core::HeightField(field),
            radius: 0.0,
        }
    }

    /// This shape inflated by `extra` more metres (swept sphere).
    pub fn inflated(mut self, extra: f64) -> Result<Self, CollisionError> {
        self.radius += check_length("inflation", extra)?;
        Ok(self)
    }

    /// True for the halfspace, which has no support function.
    pub fn is_halfspace(&self) -> bool {
        matches!(self.core, Core::Halfspace { .. })
    }

    /// True for the ground shapes without a bounding box: a halfspace or a height field
    /// (pairs with them skip the box test; a height field culls its own cells).
    pub fn is_terrain(&self) -> bool {
        matches!(self.core, Core::Halfspace { .. } | Core::HeightField(_))
    }

    /// True when the core is strictly convex (GJK++ §III-B: normalization matters only
    /// for non-strictly convex shapes).
    pub fn is_strictly_convex(&self) -> bool {
        matches!(self.core, Core::Ellipsoid { .. }) || self.radius > 0.0
    }
}

/// `sign(x)` with `sign(0) = +1`, so that supports of boxes are vertices.
fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn cylinder_support(radius: f64, half_length: f64, dir: &Vector3<f64>) -> Vector3<f64> {
    let radial = dir.xy().norm();
    let rim = if radial > 0.0 {
        dir.xy() * (radius / radial)
    } else {
        nalgebra::Vector2::zeros()
    };
    Vector3::new(rim.x, rim.y, sign(dir.z) * half_length)
}

fn cone_support(radius: f64, half_length: f64, dir: &Vector3<f64>) -> Vector3<f64> {
    let radial = dir.xy().norm();
    let apex_value = dir.z * half_length;
    let rim_value = -dir.z * half_length + radius * radial;
    if apex_value >= rim_value {
        Vector3::new(0.0, 0.0, half_length)
    } else {
        let rim = if radial > 0.0 {
            dir.xy() * (radius / radial)
        } else {
            nalgebra::Vector2::zeros()
        };
        Vector3::new(rim.x, rim.y, -half_length)
    }
}

/// Support of the ellipsoid `{p : ‖D⁻¹p‖ ≤ 1}`, `D = diag(radii)`: `D²d / ‖Dd‖`.
fn ellipsoid_support(radii: &Vector3<f64>, dir: &Vector3<f64>) -> Vector3<f64> {
    let scaled = radii.component_mul(dir);
    let norm = scaled.norm();
    if norm > 0.0 {
        radii.component_mul(&scaled) / norm
    } else {
        Vector3::zeros()
    }
}

impl SupportMap for Shape {
    /// Support of the core only (the inflation radius is added by the callers); a height
    /// field, not convex, answers its origin (callers handle it directly).
    fn local_support(&self, dir: &Vector3<f64>) -> Vector3<f64> {
        let mut hint = usize::MAX;
        self.local_support_hinted(dir, &mut hint)
    }

    fn local_support_hinted(&self, dir: &Vector3<f64>, hint: &mut usize) -> Vector3<f64> {
        match &self.core {
            Core::Point => Vector3::zeros(),
            Core::Segment { half_length } => Vector3::new(0.0, 0.0, sign(dir.z) * half_length),
            Core::Cuboid { half_extents } => Vector3::new(
                sign(dir.x) * half_extents.x,
                sign(dir.y) * half_extents.y,
                sign(dir.z) * half_extents.z,
            ),
            Core::Cylinder {
                radius,
                half_length,
            } => cylinder_support(*radius, *half_length, dir),
            Core::Cone {
                radius,
                half_length,
            } => cone_support(*radius, *half_length, dir),
            Core::Ellipsoid { radii } => ellipsoid_support(radii, dir),
            Core::Hull(hull) => hull.local_support_hinted(dir, hint),
            Core::Halfspace { normal, offset } => normal * *offset,
            Core::HeightField(_) => Vector3::zeros(),
        }
    }
}
