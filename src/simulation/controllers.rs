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

use crate::dynamics::derivatives::{point_force_derivative, Anchor, DerivativeWorkspace};
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
}

impl GravityFeedforward {
    /// Buffers for `model`.
    pub fn workspace(&self, model: &Model) -> GravityWorkspace {
        GravityWorkspace {
            data: Data::new(model),
            contact_transpose: DMatrix::zeros(model.nv(), 3 * self.support.len()),
            column: DVector::zeros(model.nv()),
            lambda: DVector::zeros(3 * self.support.len()),
            weights: Vector6::zeros(),
            gram_inverse: Matrix6::zeros(),
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
    /// of [`GravityFeedforward::add_to`], from `dg = ∂g/∂q` (RNEA's derivative at v = a = 0)
    /// and `ws` at `q` ([`crate::dynamics::derivatives::rnea_derivatives`]). By the chain
    /// rule through `λ = Aᵀ w`, `A A ᵀ w = g_b`, with `D_i = ∂(J_cᵀ e_i)/∂q` the derivative
    /// of column `i` of `J_cᵀ` at fixed force ([`point_force_derivative`]), `T = Σ λ_i D_i`
    /// and `P_i = wᵀ (D_i)_b`:
    /// `dλ = P + Aᵀ (A Aᵀ)⁻¹ (dg_b − T_b − A P)` and `dτ_g = dg − T − J_cᵀ dλ`.
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
        let nv = model.nv();
        let Some(base) = self.weight_bearing_base() else {
            for &i in actuated {
                let mut row = phi_q.row_mut(i);
                row += dg.row(i);
            }
            return Ok(());
        };
        let gravity_base: Vector6<f64> = gravity.fixed_rows::<6>(base).into_owned();
        self.support_forces(model, data_at_q, base, &gravity_base, work)?;
        let k = 3 * self.support.len();
        // T = ∂(J_cᵀ λ)/∂q at fixed λ, and P (k × nv).
        let mut total = dg.clone();
        let mut p = DMatrix::<f64>::zeros(k, nv);
        let mut column = DMatrix::<f64>::zeros(nv, nv);
        for (i, point) in self.support.iter().enumerate() {
            let (world, centre) = Self::support_position(point, data_at_q);
            let anchor = [Anchor {
                joint: point.joint,
                point: centre,
                weight: Matrix3::identity(),
            }];
            let force = Vector3::new(
                work.lambda[3 * i],
                work.lambda[3 * i + 1],
                work.lambda[3 * i + 2],
            );
            // total = dg − T.
            point_force_derivative(
                model,
                ws,
                point.joint,
                &world,
                &force,
                &anchor,
                -1.0,
                &mut total,
            );
            for axis in 0..3 {
                column.fill(0.0);
                let unit = Vector3::ith(axis, 1.0);
                point_force_derivative(
                    model,
                    ws,
                    point.joint,
                    &world,
                    &unit,
                    &anchor,
                    1.0,
                    &mut column,
                );
                let row = work.weights.transpose() * column.fixed_rows::<6>(base);
                p.row_mut(3 * i + axis).copy_from(&row);
            }
        }
        let a = work.contact_transpose.fixed_rows::<6>(base);
        // dλ = P + Aᵀ (A Aᵀ)⁻¹ (dg_b − T_b − A P).
        let residual = total.fixed_rows::<6>(base) - a * &p;
        let d_lambda = p + a.transpose() * (work.gram_inverse * residual);
        total -= &work.contact_transpose * d_lambda;
        for &i in actuated {
            let mut row = phi_q.row_mut(i);
            row += total.row(i);
        }
        Ok(())
    }
}
