//! Controller targets (where a PD drives the joints) and the PD's gravity feed-forward.
//!
//! By default a PD holds the reference configuration (`initial_state.reference`, or the
//! neutral one). `actuation.pd.target_offsets` moves named joints of that target, so a
//! hand that starts open can close on an object (paper Fig. 16, the ball dropped into the
//! Allegro hand): the joints start at the reference and the PD drives them to the target.
//!
//! `actuation.pd.gravity_compensation` adds the torques that hold the robot still against
//! gravity ([`GravityFeedforward`]), so that the PD only corrects errors: `joints` adds
//! `g(q)` (exact for a fixed base), `contacts` shares a free-flying robot's weight among
//! its contact spheres first (a humanoid standing on its soles).

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DMatrixViewMut, DVector, Matrix3, Matrix6, Vector3, Vector6};

use crate::dynamics::derivatives::{
    point_force_derivative, point_velocity_derivative, world_twists, Anchor, DerivativeWorkspace,
};
use crate::dynamics::{self, Data, DynamicsError};
use crate::model::Model;

/// A target offset that does not apply: the joint and why.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetError {
    /// The joint name as written.
    pub joint: String,
    /// What is wrong.
    pub message: String,
}

/// The PD target: `reference` with `offsets` (rad or m, by joint name) added to
/// one-coordinate joints.
pub fn offset_target(
    model: &Model,
    reference: &DVector<f64>,
    offsets: &BTreeMap<String, f64>,
) -> Result<DVector<f64>, TargetError> {
    let mut target = reference.clone();
    for (name, offset) in offsets {
        let fail = |message: String| TargetError {
            joint: name.clone(),
            message,
        };
        if !offset.is_finite() {
            return Err(fail(format!("{offset}: must be finite")));
        }
        let joint = model.joint_id(name).map_err(|e| fail(e.to_string()))?;
        let j = &model.joints[joint];
        if j.nq() != 1 {
            return Err(fail("offsets apply to one-coordinate joints only".into()));
        }
        target[j.idx_q] += offset;
    }
    Ok(target)
}

/// A point through which a robot stands: the lowest point of a contact sphere, `radius`
/// below the world image of `centre` (in `joint`'s frame).
#[derive(Debug, Clone)]
pub struct SupportPoint {
    /// The joint carrying the sphere.
    pub joint: usize,
    /// The sphere's centre in the joint frame.
    pub centre: Vector3<f64>,
    /// The sphere's radius (m).
    pub radius: f64,
}

/// The gravity feed-forward of a PD (scenario `actuation.pd.gravity_compensation`).
#[derive(Debug, Clone)]
pub struct GravityFeedforward {
    /// `contacts`: the weight is carried by these points; empty for `joints`.
    pub support: Vec<SupportPoint>,
    /// The free-flyer's first velocity index, when the robot has one.
    pub base_rows: Option<usize>,
}

/// Buffers of [`GravityFeedforward::add_to`].
#[derive(Debug, Clone)]
pub struct GravityWorkspace {
    data: Data,
    /// `J_cᵀ` (nv × 3k): column `3i + a` is the generalized force of a unit force along
    /// world axis `a` at support point `i`.
    contact_transpose: DMatrix<f64>,
    column: DVector<f64>,
    /// The support forces `λ` (3k, world axes).
    lambda: DVector<f64>,
    /// `w = (A Aᵀ)⁻¹ g_b`.
    weights: Vector6<f64>,
    /// `(A Aᵀ)⁻¹`.
    gram_inverse: Matrix6<f64>,
    /// The derivative's: the base velocity `w` (nv) and its world twists.
    base_velocity: DVector<f64>,
    twists: Vec<Vector6<f64>>,
    /// `dg − T`, then `dτ_g` (nv × nv).
    total: DMatrix<f64>,
    /// `P` (3k × nv).
    p: DMatrix<f64>,
    /// `dg_b − T_b − A P` and `(A Aᵀ)⁻¹` times it (6 × nv).
    residual: DMatrix<f64>,
    solved: DMatrix<f64>,
    /// `dλ` (3k × nv).
    d_lambda: DMatrix<f64>,
}

impl GravityFeedforward {
    /// Buffers for `model`.
    pub fn workspace(&self, model: &Model) -> GravityWorkspace {
        let (nv, k) = (model.nv(), 3 * self.support.len());
        GravityWorkspace {
            data: Data::new(model),
            contact_transpose: DMatrix::zeros(nv, k),
            column: DVector::zeros(nv),
            lambda: DVector::zeros(k),
            weights: Vector6::zeros(),
            gram_inverse: Matrix6::zeros(),
            base_velocity: DVector::zeros(nv),
            twists: Vec::new(),
            total: DMatrix::zeros(nv, nv),
            p: DMatrix::zeros(k, nv),
            residual: DMatrix::zeros(6, nv),
            solved: DMatrix::zeros(6, nv),
            d_lambda: DMatrix::zeros(k, nv),
        }
    }

    /// `tau += g(q) − J_cᵀ λ` on the `actuated` rows, `g` the generalized gravity (RNEA
    /// with v = a = 0). With support points and a free-flyer, `λ` is the least-norm set of
    /// support forces that carries the robot's weight: the unactuated rows of the static
    /// balance `Sᵀ τ + J_cᵀ λ = g(q)` read `A λ = g_b` with `A` the free-flyer rows of
    /// `J_cᵀ`, so `λ = Aᵀ (A Aᵀ)⁻¹ g_b` and the joints supply the rest. Otherwise `λ = 0`
    /// (each joint holds what hangs from it, exact for a fixed base). `data_at_q` holds the
    /// joint placements at `q`.
    pub fn add_to(
        &self,
        model: &Model,
        q: &DVector<f64>,
        data_at_q: &Data,
        actuated: &[usize],
        work: &mut GravityWorkspace,
        tau: &mut DVector<f64>,
    ) -> Result<(), DynamicsError> {
        let gravity = dynamics::generalized_gravity(model, &mut work.data, q)?;
        for &i in actuated {
            tau[i] += gravity[i];
        }
        let Some(base) = self.weight_bearing_base() else {
            return Ok(());
        };
        let gravity_base: Vector6<f64> = gravity.fixed_rows::<6>(base).into_owned();
        self.support_forces(model, data_at_q, base, &gravity_base, work)?;
        work.column
            .gemv(1.0, &work.contact_transpose, &work.lambda, 0.0);
        for &i in actuated {
            tau[i] -= work.column[i];
        }
        Ok(())
    }

    /// The free-flyer's first velocity index when the weight is shared among support
    /// points.
    fn weight_bearing_base(&self) -> Option<usize> {
        self.base_rows.filter(|_| !self.support.is_empty())
    }

    /// A support point's world position (its sphere's lowest point) and the world position
    /// of the sphere's centre, which it moves with.
    fn support_position(point: &SupportPoint, data_at_q: &Data) -> (Vector3<f64>, Vector3<f64>) {
        let centre = data_at_q
            .joint_placement(point.joint)
            .act_point(&point.centre);
        (centre - Vector3::z() * point.radius, centre)
    }

    /// `J_cᵀ`, the weights `w = (A Aᵀ)⁻¹ g_b`, the forces `λ = Aᵀ w` and the factor of
    /// `A Aᵀ` into `work` (see [`GravityFeedforward::add_to`]).
    fn support_forces(
        &self,
        model: &Model,
        data_at_q: &Data,
        base: usize,
        gravity_base: &Vector6<f64>,
        work: &mut GravityWorkspace,
    ) -> Result<(), DynamicsError> {
        for (i, point) in self.support.iter().enumerate() {
            let (world, _) = Self::support_position(point, data_at_q);
            for axis in 0..3 {
                work.column.fill(0.0);
                let unit = Vector3::ith(axis, 1.0);
                dynamics::add_point_force(
                    model,
                    data_at_q,
                    point.joint,
                    &world,
                    &unit,
                    &mut work.column,
                )?;
                work.contact_transpose
                    .set_column(3 * i + axis, &work.column);
            }
        }
        let a = work.contact_transpose.fixed_rows::<6>(base);
        let gram: Matrix6<f64> = a * a.transpose();
        let factor = gram.cholesky().ok_or(DynamicsError::NotPositiveDefinite(
            "the support points' free-flyer rows A Aᵀ (fewer than three points not in line?)",
        ))?;
        work.weights = factor.solve(gravity_base);
        work.gram_inverse = factor.inverse();
        work.lambda.gemv_tr(1.0, &a, &work.weights, 0.0);
        Ok(())
    }

    /// `phi_q += ∂τ_g/∂q` on the `actuated` rows, `τ_g = g(q) − J_cᵀ λ(q)` the feed-forward
    /// of [`GravityFeedforward::add_to`], from `dg = ∂g/∂q` and `ws` at `q`
    /// ([`crate::dynamics::derivatives::rnea_derivatives`]). By the chain rule through
    /// `λ = Aᵀ w`, `A Aᵀ w = g_b`, with `D_i = ∂(J_cᵀ e_i)/∂q` the derivative of column `i`
    /// of `J_cᵀ` at fixed force, `T = Σ λ_i D_i` ([`point_force_derivative`], one pass per
    /// support point) and `P_i = wᵀ (D_i)_b`:
    /// `dλ = P + Aᵀ (A Aᵀ)⁻¹ (dg_b − T_b − A P)` and `dτ_g = dg − T − J_cᵀ dλ`. Since
    /// `wᵀ (J_cᵀ f)_b = fᵀ J_c(p) ω` with `ω = Σ_b w_b S_b` the twist of the base velocity
    /// `w`, the three rows of `P` of a support point are the derivative of its velocity
    /// under `ω` ([`point_velocity_derivative`]).
    #[allow(clippy::too_many_arguments)]
    pub fn add_derivative_to(
        &self,
        model: &Model,
        data_at_q: &Data,
        ws: &DerivativeWorkspace,
        dg: &DMatrix<f64>,
        gravity: &DVector<f64>,
        actuated: &[usize],
        work: &mut GravityWorkspace,
        phi_q: &mut DMatrixViewMut<'_, f64>,
    ) -> Result<(), DynamicsError> {
        let Some(base) = self.weight_bearing_base() else {
            for &i in actuated {
                let mut row = phi_q.row_mut(i);
                row += dg.row(i);
            }
            return Ok(());
        };
        let gravity_base: Vector6<f64> = gravity.fixed_rows::<6>(base).into_owned();
        self.support_forces(model, data_at_q, base, &gravity_base, work)?;
        work.base_velocity.fill(0.0);
        work.base_velocity
            .fixed_rows_mut::<6>(base)
            .copy_from(&work.weights);
        world_twists(model, ws, &work.base_velocity, &mut work.twists)?;
        // total = dg − T, and P.
        work.total.copy_from(dg);
        work.p.fill(0.0);
        for (i, point) in self.support.iter().enumerate() {
            let (world, centre) = Self::support_position(point, data_at_q);
            let anchor = [Anchor {
                joint: point.joint,
                point: centre,
                weight: Matrix3::identity(),
            }];
            let force = work.lambda.fixed_rows::<3>(3 * i).into_owned();
            point_force_derivative(
                model,
                ws,
                point.joint,
                &world,
                &force,
                &anchor,
                -1.0,
                &mut work.total,
            );
            point_velocity_derivative(
                model,
                ws,
                &work.twists,
                point.joint,
                &world,
                &Matrix3::identity(),
                1.0,
                &anchor,
                &mut work.p,
                3 * i,
            );
        }
        let a = work.contact_transpose.rows(base, 6);
        // dλ = P + Aᵀ (A Aᵀ)⁻¹ (dg_b − T_b − A P).
        work.residual.copy_from(&work.total.rows(base, 6));
        work.residual.gemm(-1.0, &a, &work.p, 1.0);
        work.solved
            .gemm(1.0, &work.gram_inverse, &work.residual, 0.0);
        work.d_lambda.copy_from(&work.p);
        work.d_lambda.gemm_tr(1.0, &a, &work.solved, 1.0);
        work.total
            .gemm(-1.0, &work.contact_transpose, &work.d_lambda, 1.0);
        for &i in actuated {
            let mut row = phi_q.row_mut(i);
            row += work.total.row(i);
        }
        Ok(())
    }
}
