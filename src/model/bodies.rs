//! Built-in free-flying bodies (boxes and spheres), in the same [`Model`] type as robots:
//! each body is a free-flyer joint attached to the world, with its inertia, a `Body` frame
//! and its collision geometry. Several bodies can share one model (e.g. a heavy cube on a
//! light cube: nq = 14, nv = 12).

use std::path::PathBuf;

use nalgebra::{Isometry3, Vector3};

use super::{Frame, FrameKind, GeometryShape, Inertia, JointKind, Model, ModelError};

/// Builds a model made of free-flying boxes and spheres.
#[derive(Debug, Clone)]
pub struct FreeBodiesBuilder {
    model: Model,
}

impl FreeBodiesBuilder {
    /// An empty model with the given name.
    pub fn new(name: &str) -> FreeBodiesBuilder {
        FreeBodiesBuilder {
            model: Model::empty(name),
        }
    }

    /// Adds a solid box of the given mass (kg) and half extents (m), centred on its joint
    /// frame; returns its joint index.
    pub fn add_box(
        &mut self,
        name: &str,
        mass: f64,
        half_extents: Vector3<f64>,
    ) -> Result<usize, ModelError> {
        self.check(name, mass, half_extents.as_slice())?;
        let shape = GeometryShape::Box { half_extents };
        Ok(self.add_body(name, Inertia::solid_box(mass, half_extents), shape))
    }

    /// Adds a solid sphere of the given mass (kg) and radius (m), centred on its joint frame;
    /// returns its joint index.
    pub fn add_sphere(&mut self, name: &str, mass: f64, radius: f64) -> Result<usize, ModelError> {
        self.check(name, mass, &[radius])?;
        let shape = GeometryShape::Sphere { radius };
        Ok(self.add_body(name, Inertia::solid_sphere(mass, radius), shape))
    }

    /// Adds free bodies to an existing model (a ball beside a fixed-base robot hand); the
    /// new joints come after the model's own.
    pub fn extend(model: Model) -> FreeBodiesBuilder {
        FreeBodiesBuilder { model }
    }

    /// The finished model.
    pub fn build(self) -> Model {
        self.model
    }

    fn check(&self, name: &str, mass: f64, sizes: &[f64]) -> Result<(), ModelError> {
        let file = PathBuf::from(format!("<built-in model '{}'>", self.model.name));
        if !(mass.is_finite() && mass > 0.0) {
            return Err(ModelError::InvalidInertia {
                file,
                link: name.to_string(),
                message: format!("mass {mass} must be positive and finite"),
            });
        }
        if !sizes.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(ModelError::InvalidElement {
                file,
                element: format!("body '{name}'"),
                message: format!("sizes {sizes:?} must be positive and finite"),
            });
        }
        Ok(())
    }

    fn add_body(&mut self, name: &str, inertia: Inertia, shape: GeometryShape) -> usize {
        let inf = f64::INFINITY;
        let joint_name = format!("{name}_joint");
        let j = self.model.add_joint(
            &joint_name,
            JointKind::FreeFlyer,
            0,
            Isometry3::identity(),
            [
                &[-inf, -inf, -inf, -1.0, -1.0, -1.0, -1.0],
                &[inf, inf, inf, 1.0, 1.0, 1.0, 1.0],
                &[inf; 6],
                &[inf; 6],
            ],
        );
        self.model.inertias[j] = inertia;
        for (frame_name, kind) in [
            (joint_name.as_str(), FrameKind::Joint),
            (name, FrameKind::Body),
        ] {
            self.model.frames.push(Frame {
                name: frame_name.to_string(),
                parent_joint: j,
                placement: Isometry3::identity(),
                kind,
            });
        }
        self.model.geometries.push(super::CollisionGeometry {
            name: name.to_string(),
            link: name.to_string(),
            parent_joint: j,
            placement: Isometry3::identity(),
            shape,
        });
        j
    }
}
