//! Rigid-body algorithms on a [`crate::model::Model`]: kinematics, CRBA, RNEA, ABA, Jacobians,
//! energy and Lie-group integration.
//!
//! As in Pinocchio, the model is never modified; every result and scratch buffer lives in
//! a [`Data`] built once per model (rebuild it if the model changes), so that the algorithms
//! do not allocate. Every algorithm is a free function `algorithm(&model, &mut data, q, ...)`
//! that checks its inputs' sizes and returns a typed error ("v: expected nv = 18, got 12").
//! Spatial quantities are `[linear; angular]`, joint velocities and forces in the joint's
//! local frame, gravity `(0, 0, −9.81)` m/s².

pub mod aba;
pub mod all_terms;
pub mod cholesky;
pub mod crba;
pub mod derivatives;
pub mod energy;
pub mod integrate;
pub mod jacobian;
pub mod kinematics;
pub mod lie_derivatives;
pub mod ltdl;
pub mod rnea;
pub mod spatial;

use nalgebra::{DMatrix, DVector, Isometry3, Matrix6, Vector3, Vector6};
use thiserror::Error;

use crate::model::{JointKind, Model, ModelError};

pub use aba::aba;
pub use all_terms::{factorized_mass_and_bias, mass_matrix_and_bias};
pub use cholesky::MassCholesky;
pub use crba::crba;
pub use energy::{kinetic_energy, mechanical_energy, potential_energy};
pub use integrate::{difference, difference_into, integrate, integrate_into};
pub use jacobian::{
    add_point_force, add_point_jacobian_rows, frame_jacobian, point_jacobian_world,
    point_jacobian_world_into,
};
pub use kinematics::forward_kinematics;
pub use ltdl::MassLtdl;
pub use rnea::{generalized_gravity, nonlinear_effects, rnea};
pub use spatial::Se3;

/// Why an algorithm refused its inputs.
#[derive(Debug, Error)]
pub enum DynamicsError {
    /// A vector of the wrong length.
    #[error("{name}: expected {dim} = {expected}, got {got}")]
    WrongSize {
        /// The argument (`q`, `v`, `a`, `tau`, `fext`).
        name: &'static str,
        /// The dimension it should have (`nq`, `nv`, `njoints`).
        dim: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A non-finite entry.
    #[error("{name}[{index}] is not finite ({value})")]
    NotFinite {
        /// The argument.
        name: &'static str,
        /// The index.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A free-flyer quaternion far from unit norm.
    #[error("q: joint '{joint}': quaternion [qx qy qz qw] has norm {norm}, expected 1")]
    NotUnitQuaternion {
        /// The joint.
        joint: String,
        /// The norm.
        norm: f64,
    },
    /// The data was built for another model.
    #[error("data was built for a model with {data} joints, this model has {model}")]
    DataMismatch {
        /// Joints in the data.
        data: usize,
        /// Joints in the model.
        model: usize,
    },
    /// A matrix that should be positive definite is not (a massless chain?).
    #[error("{0} is not positive definite")]
    NotPositiveDefinite(&'static str),
    /// An unknown frame or joint.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Results and scratch buffers of the algorithms for one model.
#[derive(Debug, Clone)]
pub struct Data {
    /// World placement of every joint frame (index 0 = world), from [`forward_kinematics`].
    pub omi: Vec<Isometry3<f64>>,
    /// World placement of every frame of [`Model::frames`], from [`forward_kinematics`].
    pub omf: Vec<Isometry3<f64>>,
    /// Joint-space mass matrix `M(q)`, nv × nv, both triangles, from [`crba()`]; empty
    /// (0 × 0) until the first call that forms it. The simulator never does: it works on
    /// the tree-sparse factor [`MassLtdl`] (one 6 × 6 block per free body), so that a
    /// world of free bodies holds no `nv²` matrix.
    pub mass_matrix: DMatrix<f64>,
    /// Joint torques from [`rnea()`] (dimension nv).
    pub tau: DVector<f64>,
    /// Nonlinear effects `C(q, v) v + g(q)` from [`nonlinear_effects`] (dimension nv).
    pub nle: DVector<f64>,
    /// Generalized gravity `g(q)` from [`generalized_gravity`] (dimension nv).
    pub gravity: DVector<f64>,
    /// Joint accelerations from [`aba()`] (dimension nv).
    pub ddq: DVector<f64>,
    /// Placement of each joint frame in its parent's frame (`liMi`).
    pub(crate) li_m_i: Vec<Se3>,
    /// World placement of each joint frame (`oMi`), refreshed by [`forward_kinematics`],
    /// [`crba()`] and [`potential_energy`]; the Jacobians read it.
    pub(crate) o_m_i: Vec<Se3>,
    /// Joint placements of the model (constant).
    pub(crate) joint_placements: Vec<Se3>,
    /// Frame placements of the model (constant).
    pub(crate) frame_placements: Vec<Se3>,
    /// Spatial velocity of each body, local frame.
    pub(crate) vel: Vec<Vector6<f64>>,
    /// Spatial acceleration of each body (gravity included), local frame.
    pub(crate) acc: Vec<Vector6<f64>>,
    /// Spatial force of each body, local frame.
    pub(crate) force: Vec<Vector6<f64>>,
    /// Composite rigid-body inertias, world coordinates (CRBA).
    pub(crate) ycrb: Vec<crba::WorldInertia>,
    /// Motion subspaces of one-dof joints in world coordinates (CRBA).
    pub(crate) s_world: Vec<Vector6<f64>>,
    /// Spatial inertia matrices of the bodies, local frames (constant).
    pub(crate) body_matrices: Vec<Matrix6<f64>>,
    /// Articulated-body inertias (ABA).
    pub(crate) ia: Vec<Matrix6<f64>>,
    /// Articulated bias forces (ABA).
    pub(crate) pa: Vec<Vector6<f64>>,
    /// Velocity-product accelerations `v × S q̇` (ABA).
    pub(crate) bias: Vec<Vector6<f64>>,
    /// `U = IA S` of one-dof joints (ABA).
    pub(crate) u_vec: Vec<Vector6<f64>>,
    /// `D⁻¹ = (Sᵀ IA S)⁻¹` of one-dof joints (ABA).
    pub(crate) d_inv: Vec<f64>,
    /// `u = τ − Sᵀ pA` (ABA; six entries for a free flyer, the first for one-dof joints).
    pub(crate) u_tau: Vec<Vector6<f64>>,
}

impl Data {
    /// Buffers for a model.
    pub fn new(model: &Model) -> Data {
        let n = model.njoints();
        let nv = model.nv();
        Data {
            omi: vec![Isometry3::identity(); n],
            omf: vec![Isometry3::identity(); model.frames.len()],
            mass_matrix: DMatrix::zeros(0, 0),
            tau: DVector::zeros(nv),
            nle: DVector::zeros(nv),
            gravity: DVector::zeros(nv),
            ddq: DVector::zeros(nv),
            li_m_i: vec![Se3::identity(); n],
            o_m_i: vec![Se3::identity(); n],
            joint_placements: model
                .joints
                .iter()
                .map(|j| Se3::from_isometry(&j.placement))
                .collect(),
            frame_placements: model
                .frames
                .iter()
                .map(|f| Se3::from_isometry(&f.placement))
                .collect(),
            vel: vec![Vector6::zeros(); n],
            acc: vec![Vector6::zeros(); n],
            force: vec![Vector6::zeros(); n],
            ycrb: vec![crba::WorldInertia::zero(); n],
            s_world: vec![Vector6::zeros(); n],
            body_matrices: model.inertias.iter().map(|i| i.matrix()).collect(),
            ia: vec![Matrix6::zeros(); n],
            pa: vec![Vector6::zeros(); n],
            bias: vec![Vector6::zeros(); n],
            u_vec: vec![Vector6::zeros(); n],
            d_inv: vec![0.0; n],
            u_tau: vec![Vector6::zeros(); n],
        }
    }

    /// World placement `oMi` of joint `joint`'s frame as last refreshed by
    /// [`forward_kinematics`], [`crba()`] or [`mass_matrix_and_bias`] (panics if out of range).
    pub fn joint_placement(&self, joint: usize) -> &Se3 {
        &self.o_m_i[joint]
    }

    /// World position of joint `joint`'s origin (see [`Data::joint_placement`]).
    pub fn joint_position(&self, joint: usize) -> Vector3<f64> {
        self.o_m_i[joint].trans
    }

    /// World placement of a frame (after [`forward_kinematics`]).
    pub fn frame_placement(&self, frame: usize) -> Option<&Isometry3<f64>> {
        self.omf.get(frame)
    }
}

/// Checks that `data` was built for `model`.
pub(crate) fn check_data(model: &Model, data: &Data) -> Result<(), DynamicsError> {
    if data.li_m_i.len() != model.njoints() || data.omf.len() != model.frames.len() {
        return Err(DynamicsError::DataMismatch {
            data: data.li_m_i.len(),
            model: model.njoints(),
        });
    }
    Ok(())
}

/// Checks a vector's length and finiteness.
pub(crate) fn check_vector(
    x: &DVector<f64>,
    name: &'static str,
    dim: &'static str,
    expected: usize,
) -> Result<(), DynamicsError> {
    if x.len() != expected {
        return Err(DynamicsError::WrongSize {
            name,
            dim,
            expected,
            got: x.len(),
        });
    }
    if let Some(index) = first_non_finite(x.as_slice()) {
        return Err(DynamicsError::NotFinite {
            name,
            index,
            value: x[index],
        });
    }
    Ok(())
}

/// The index of the first non-finite entry of `values`. A finite `x` has `0 · x = ±0` and
/// an infinite or NaN one `0 · x = NaN`, so the sum of `0 · x` over four lanes is zero
/// exactly when every entry is finite: a branch-free pass (vectorized) decides, and only
/// a failed check searches for the index. A simulator checks its state, `J` and `G` every step.
pub(crate) fn first_non_finite(values: &[f64]) -> Option<usize> {
    let mut lanes = [0.0_f64; 4];
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane += 0.0 * x;
        }
    }
    let all_finite = lanes.iter().chain(rest).all(|x| (0.0 * x) == 0.0);
    if all_finite {
        None
    } else {
        values.iter().position(|v| !v.is_finite())
    }
}

/// Checks a configuration: length nq, finite, unit free-flyer quaternions (to 1e-6).
pub(crate) fn check_configuration(model: &Model, q: &DVector<f64>) -> Result<(), DynamicsError> {
    check_vector(q, "q", "nq", model.nq())?;
    for joint in &model.joints {
        // `matches!`, not `==`: the derived comparison of the whole enum costs far more
        // per joint (this runs several times a step).
        if matches!(joint.kind, JointKind::FreeFlyer) {
            let norm = q.rows(joint.idx_q + 3, 4).norm();
            if (norm - 1.0).abs() > 1e-6 {
                return Err(DynamicsError::NotUnitQuaternion {
                    joint: joint.name.clone(),
                    norm,
                });
            }
        }
    }
    Ok(())
}

/// Checks a velocity-sized vector (v, a, tau).
pub(crate) fn check_velocity(
    model: &Model,
    x: &DVector<f64>,
    name: &'static str,
) -> Result<(), DynamicsError> {
    check_vector(x, name, "nv", model.nv())
}

/// Checks external forces: one per joint (world included), local joint frame.
pub(crate) fn check_fext(
    model: &Model,
    fext: Option<&[Vector6<f64>]>,
) -> Result<(), DynamicsError> {
    match fext {
        Some(f) if f.len() != model.njoints() => Err(DynamicsError::WrongSize {
            name: "fext",
            dim: "njoints",
            expected: model.njoints(),
            got: f.len(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::first_non_finite;

    #[test]
    fn the_first_non_finite_entry_is_found_in_the_lanes_and_the_remainder() {
        let finite: Vec<f64> = (0..11).map(|k| (k as f64 - 5.0) * 1e300).collect();
        assert_eq!(first_non_finite(&finite), None);
        assert_eq!(first_non_finite(&[]), None);
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for at in [0, 3, 6, 8, 10] {
                // A second bad entry after the first (none after the last).
                let mut values = finite.clone();
                values[10 - (10 - at) / 2] = bad;
                values[at] = bad;
                assert_eq!(first_non_finite(&values), Some(at), "{bad} at {at}");
            }
        }
    }
}
