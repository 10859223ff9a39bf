//! Derivatives of one step (docs/derivatives.md, "Step derivatives"):
//! `A = ∂(q⁺, v⁺)/∂(q, v)` (`2nv × 2nv`, tangent spaces, ordered `[δq, δv]` as MuJoCo's
//! `A`; the free flyer's `δq` a twist in its body frame, as [`crate::dynamics::integrate`])
//! and `B = ∂(q⁺, v⁺)/∂τ` (`2nv × nv`) of a generalized force added to the step's, the
//! scenario's controller and external forces included.
//!
//! The step (module docs of [`super`]) is `M(q) a⁺ = τ_ctrl(q, v) + τ + J_extᵀ f_ext
//! + Jᵀ λ / Δt − nle(q, v)` with `a⁺ = (v⁺ − v) / Δt`, `λ` the solver's answer to
//! `(G, g, μ, R)`, and `q⁺ = q ⊕ v⁺ Δt`. At fixed `λ`, with `Φ = τ_ctrl + τ + J_extᵀ f_ext
//! + Jᵀ λ / Δt − RNEA(q, v, a⁺)`:
//!
//! ```text
//! V_λ = ∂v⁺/∂(q, v, τ)|_λ = [Δt M⁻¹ Φ_q,  I + Δt M⁻¹ Φ_v,  Δt M⁻¹]
//! ```
//!
//! (`RNEA`'s derivatives at `a⁺` carry those of `M(q)`; Carpentier & Mansard 2018). The
//! contact velocity `c = J v⁺ + b + R λ` then moves by `dg = J V_λ + ∂(J v⁺ + b)/∂(q, v)`
//! with `λ` fixed, which is exactly a change of the problem's `g`: `dλ` is the solve's
//! derivative along `dg` ([`crate::derivatives::SolutionDerivative::jvp_free_velocity`]),
//! `dv⁺ = V_λ + M⁻¹ Jᵀ dλ`, and `dq⁺ = ∂(q ⊕ ξ)/∂q dq + ∂(q ⊕ ξ)/∂ξ Δt dv⁺`.
//!
//! Collision geometry is held fixed: the contact frames do not turn, the core witness
//! points move with their bodies, and the contact point, their mid-point, with them; on a
//! halfspace the witness is the other body's witness projected on the plane. For a sphere
//! or a vertex on the ground (every contact of the robots' feet, the cubes' corners) that
//! is the exact derivative of the geometry; between two other shapes the normal's turn is
//! not differentiated. RaiSim's sliding law reads `G`'s diagonal block, whose derivative
//! with respect to `q` is not computed: a step with a RaiSim contact sliding is refused.

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use thiserror::Error;

use super::{Simulator, StepError, StepSummary};
use crate::collision::Core;
use crate::derivatives::{
    differentiate, ContactMode, DerivativeError, DerivativeSettings, LinearMethod, ModeReport,
};
use crate::dynamics::derivatives::{
    mass_quadratic_gradient, point_force_derivative, point_velocity_derivative, rnea_derivatives,
    world_twists, Anchor, DerivativeWorkspace,
};
use crate::dynamics::lie_derivatives::integrate_derivatives;
use crate::dynamics::{self, check_configuration, check_velocity, DynamicsError};
use crate::problem::build::restitution_applies;
use crate::problem::contact_vector;
use crate::problem::ContactModel;

/// The derivatives of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDerivatives {
    /// `∂(q⁺, v⁺)/∂(q, v)` (`2nv × 2nv`), rows and columns `[δq, δv]`.
    pub a: DMatrix<f64>,
    /// `∂(q⁺, v⁺)/∂τ` (`2nv × nv`) of a generalized force added on every dof.
    pub b: DMatrix<f64>,
    /// `∂λ/∂(q, v, τ)` of the step's contact impulses (`3n × 3nv`, columns `[δq, δv, δτ]`,
    /// rows in the contact frames); empty without contact, and in the differences'
    /// reference when a perturbed step has another number of contacts.
    pub d_lambda: DMatrix<f64>,
    /// Each contact's mode in the solve's derivative (flags at mode boundaries).
    pub modes: Vec<ModeReport>,
    /// How the solve's linearized system was solved (least-norm with redundant contacts).
    pub method: LinearMethod,
    /// Its `(rank, dimension)`.
    pub rank: (usize, usize),
    /// Per contact: its signed distance is within `τ v_s Δt` of 0 (`τ` the modes'
    /// tolerance, `v_s = ‖g‖∞`), where the bias `b_N` changes gain (`1/Δt` for `φ ≥ 0`,
    /// `K_b/Δt` below): the derivative is that of `φ`'s side. A resting contact converges
    /// there.
    pub gap_at_kink: Vec<bool>,
}

/// Why a step's derivatives could not be computed.
#[derive(Debug, Error)]
pub enum StepDerivativeError {
    /// The step itself failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// A dynamics derivative refused its input.
    #[error("step {step}: dynamics derivatives: {source}")]
    Dynamics {
        /// The step.
        step: usize,
        /// The error.
        source: DynamicsError,
    },
    /// The solve's answer has no derivative (not converged, not a solution, ...).
    #[error("step {step}: {source}")]
    Solve {
        /// The step.
        step: usize,
        /// The error.
        source: DerivativeError,
    },
    /// A contact of RaiSim's model slides (module docs).
    #[error(
        "step {step}: contact {contact} slides under RaiSim's model, whose sliding law reads \
         the diagonal block of G; its derivative with respect to q is not computed"
    )]
    RaisimSliding {
        /// The step.
        step: usize,
        /// The contact.
        contact: usize,
    },
    /// The PD's gravity feed-forward has no derivative here.
    #[error(
        "step {step}: the derivative of the PD's gravity feed-forward is not computed; \
         step derivatives need `actuation.pd.gravity_compensation: none`"
    )]
    GravityCompensation {
        /// The step.
        step: usize,
    },
}

/// A contact of the step as its derivative holds it (module docs).
struct HeldContact {
    joints: [usize; 2],
    point: Vector3<f64>,
    frame: Matrix3<f64>,
    anchors: [Anchor; 2],
    /// `∂b_N/∂φ` (`1/Δt` or `K_b/Δt`), or `None` when restitution sets `b_N = e c_N⁻`.
    gap_gain: Option<f64>,
    /// The signed distance `φ` (m).
    distance: f64,
}

impl Simulator {
    /// Sets the state `(q, v)` the next step starts from (checked: sizes, finite, unit
    /// quaternions). Time and the contacts' previous forces (warm starts, restitution) are
    /// kept.
    pub fn set_state(&mut self, q: &DVector<f64>, v: &DVector<f64>) -> Result<(), StepError> {
        let model = &self.world.model;
        let step = self.step;
        check_configuration(model, q)
            .and_then(|()| check_velocity(model, v, "v"))
            .map_err(|source| StepError::Dynamics { step, source })?;
        self.q.copy_from(q);
        self.v.copy_from(v);
        self.placements_at_q = false;
        Ok(())
    }

    /// A generalized force (`nv`, N or N·m; the free flyer's entries a wrench in its body
    /// frame) added to every following step, `None` for none.
    pub fn set_added_torque(&mut self, tau: Option<DVector<f64>>) -> Result<(), StepError> {
        if let Some(tau) = &tau {
            check_velocity(&self.world.model, tau, "tau").map_err(|source| {
                StepError::Dynamics {
                    step: self.step,
                    source,
                }
            })?;
        }
        self.added_torque = tau;
        Ok(())
    }

    /// The derivatives of the step from the current state, which stays as it is (time,
    /// state and the contacts' previous forces; the solver keeps what it learned, as after
    /// any solve).
    pub fn step_derivatives(&mut self) -> Result<StepDerivatives, StepDerivativeError> {
        let (q, v, step) = (self.q.clone(), self.v.clone(), self.step);
        let previous = self.previous.clone();
        let result = self
            .take_step(false)
            .map_err(StepDerivativeError::from)
            .and_then(|()| self.derivatives_of_last_step(&q, &v));
        self.q = q;
        self.v = v;
        self.step = step;
        self.previous = previous;
        self.placements_at_q = false;
        result
    }

    /// Takes a step (as [`Simulator::advance`]) and returns the derivatives of it.
    pub fn step_with_derivatives(
        &mut self,
    ) -> Result<(StepSummary, StepDerivatives), StepDerivativeError> {
        let (q, v) = (self.q.clone(), self.v.clone());
        let summary = self.advance()?;
        let derivatives = self.derivatives_of_last_step(&q, &v)?;
        Ok((summary, derivatives))
    }

    /// The reference of [`Simulator::step_derivatives`]: central differences of whole
    /// steps (collision detection, the solve and all) from the current state, which stays
    /// as it is. Each column moves one coordinate by `h`: `q ⊕ h e_k` (tangent), `v + h e_k`,
    /// and the added generalized force by `h / (Δt max_j (M⁻¹)_jj)` (which moves `v⁺` by
    /// about `h`); `δq⁺` is measured as `q⁺ ⊖ q⁺₀` of the unperturbed step. The solver
    /// should be tight: its error over `h` is the reference's.
    pub fn step_derivatives_fd(&mut self, h: f64) -> Result<StepDerivatives, StepDerivativeError> {
        let (q, v, step) = (self.q.clone(), self.v.clone(), self.step);
        let (previous, added) = (self.previous.clone(), self.added_torque.clone());
        let result = self.central_differences(&q, &v, h);
        self.q = q;
        self.v = v;
        self.step = step;
        self.previous = previous;
        self.added_torque = added;
        self.placements_at_q = false;
        result
    }

    /// [`Simulator::step_derivatives_fd`]'s columns.
    fn central_differences(
        &mut self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        h: f64,
    ) -> Result<StepDerivatives, StepDerivativeError> {
        let (step, previous) = (self.step, self.previous.clone());
        let base_torque = self
            .added_torque
            .clone()
            .unwrap_or_else(|| DVector::zeros(v.len()));
        let nv = v.len();
        let dynamics_error = |source| StepDerivativeError::Dynamics { step, source };
        // One step from (q, v, τ), the state put back after it.
        let step_from = |sim: &mut Self, q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>| {
            sim.q.copy_from(q);
            sim.v.copy_from(v);
            sim.step = step;
            sim.previous.clone_from(&previous);
            sim.placements_at_q = false;
            sim.added_torque = Some(tau.clone());
            sim.take_step(false)
                .map(|()| (sim.q.clone(), sim.v.clone(), sim.lambda.clone()))
        };
        let (q0, _, lambda0) = step_from(self, q, v, &base_torque)?;
        let mut inverse_diagonal = vec![0.0; nv];
        self.mass
            .inverse_diagonal(&mut inverse_diagonal)
            .map_err(dynamics_error)?;
        let largest = inverse_diagonal.iter().fold(0.0_f64, |m, x| m.max(*x));
        let torque_step = h / (self.params.dt * largest);
        let mut columns = DMatrix::zeros(2 * nv, 3 * nv);
        let mut d_lambda = DMatrix::zeros(lambda0.len(), 3 * nv);
        let mut same_contacts = !lambda0.is_empty();
        for column in 0..3 * nv {
            let k = column % nv;
            let mut ends = Vec::with_capacity(2);
            for sign in [1.0, -1.0] {
                let (mut qs, mut vs, mut taus) = (q.clone(), v.clone(), base_torque.clone());
                match column / nv {
                    0 => {
                        let mut e = DVector::zeros(nv);
                        e[k] = sign * h;
                        qs = dynamics::integrate(&self.world.model, q, &e, 1.0)
                            .map_err(dynamics_error)?;
                    }
                    1 => vs[k] += sign * h,
                    _ => taus[k] += sign * torque_step,
                }
                let (q1, v1, lambda1) = step_from(self, &qs, &vs, &taus)?;
                let dq =
                    dynamics::difference(&self.world.model, &q0, &q1).map_err(dynamics_error)?;
                same_contacts &= lambda1.len() == lambda0.len();
                ends.push((dq, v1, lambda1));
            }
            let width = if column < 2 * nv { h } else { torque_step };
            let scale = 1.0 / (2.0 * width);
            columns
                .view_mut((0, column), (nv, 1))
                .copy_from(&((&ends[0].0 - &ends[1].0) * scale));
            columns
                .view_mut((nv, column), (nv, 1))
                .copy_from(&((&ends[0].1 - &ends[1].1) * scale));
            if same_contacts {
                d_lambda.set_column(column, &((&ends[0].2 - &ends[1].2) * scale));
            }
        }
        if !same_contacts {
            d_lambda = DMatrix::zeros(0, 0);
        }
        Ok(StepDerivatives {
            a: columns.columns(0, 2 * nv).into_owned(),
            b: columns.columns(2 * nv, nv).into_owned(),
            d_lambda,
            modes: Vec::new(),
            method: LinearMethod::Empty,
            rank: (0, 0),
            gap_at_kink: Vec::new(),
        })
    }

    /// The derivatives of the step just taken from `(q, v)` (module docs): the dynamics,
    /// the contacts and the factor of `M` of the simulator are still those of that step.
    pub(crate) fn derivatives_of_last_step(
        &mut self,
        q: &DVector<f64>,
        v: &DVector<f64>,
    ) -> Result<StepDerivatives, StepDerivativeError> {
        let step = self.step;
        if self
            .world
            .pd
            .as_ref()
            .is_some_and(|pd| pd.gravity.is_some())
        {
            return Err(StepDerivativeError::GravityCompensation { step });
        }
        let dynamics_error = |source| StepDerivativeError::Dynamics { step, source };
        let (nv, dt) = (self.world.model.nv(), self.params.dt);
        let v_next = self.v.clone();
        let a_next = (&v_next - v) / dt;
        let mut ws = DerivativeWorkspace::new(&self.world.model);
        let rnea = rnea_derivatives(&self.world.model, &mut self.data, &mut ws, q, v, &a_next)
            .map_err(dynamics_error)?;
        // Φ_q, Φ_v (module docs).
        let mut phi_q = -rnea.dtau_dq;
        let mut phi_v = -rnea.dtau_dv;
        // M⁻¹, dense: B's block, M⁻¹ Jᵀ and the PD's inertia scaling read it.
        let mut inverse_mass = DMatrix::identity(nv, nv);
        self.solve_mass(&mut inverse_mass).map_err(dynamics_error)?;
        self.add_controller_derivatives(&ws, &inverse_mass, q, v, &mut phi_q, &mut phi_v)
            .map_err(dynamics_error)?;
        let model = &self.world.model;
        let t = (step - 1) as f64 * dt;
        for (force, &joint) in self.forces.iter().zip(&self.world.force_joints) {
            let origin = self.data.joint_position(joint);
            let f = Vector3::from(force.at(t));
            let anchor = [Anchor {
                joint,
                point: origin,
                weight: Matrix3::identity(),
            }];
            point_force_derivative(model, &ws, joint, &origin, &f, &anchor, 1.0, &mut phi_q);
        }
        let contacts = self.held_contacts();
        for (i, contact) in contacts.iter().enumerate() {
            let f = contact.frame * contact_vector(&self.lambda, i);
            for (joint, sign) in [(contact.joints[1], 1.0), (contact.joints[0], -1.0)] {
                let (point, anchors) = (&contact.point, &contact.anchors);
                let scale = sign / dt;
                point_force_derivative(model, &ws, joint, point, &f, anchors, scale, &mut phi_q);
            }
        }
        // V_λ = [Δt M⁻¹ Φ_q, I + Δt M⁻¹ Φ_v, Δt M⁻¹]: the first two blocks solved column by
        // column through the step's factor of M (sparse), not multiplied by a dense M⁻¹.
        let mut v_lambda = DMatrix::zeros(nv, 3 * nv);
        v_lambda.columns_mut(0, nv).copy_from(&phi_q);
        v_lambda.columns_mut(nv, nv).copy_from(&phi_v);
        v_lambda.columns_mut(2 * nv, nv).copy_from(&inverse_mass);
        v_lambda *= dt;
        for column in v_lambda.as_mut_slice()[..2 * nv * nv].chunks_mut(nv) {
            self.mass.solve_in_place(column).map_err(dynamics_error)?;
        }
        for k in 0..nv {
            v_lambda[(k, nv + k)] += 1.0;
        }
        let mut dv_next = v_lambda.clone();
        let response = if contacts.is_empty() {
            ContactResponse::default()
        } else {
            let jacobian = self.contact_jacobian(&contacts).map_err(dynamics_error)?;
            let supports = contact_supports(&jacobian);
            let dg = jacobian_product(&jacobian, &supports, &v_lambda);
            let response = self.contact_response(&ws, &contacts, &jacobian, dg, v, &v_next)?;
            let inverse_mass_jt = inverse_mass_jacobian_t(&inverse_mass, &jacobian, &supports);
            dv_next.gemm(1.0, &inverse_mass_jt, &response.d_lambda, 1.0);
            response
        };
        let (integrate_q, integrate_v) =
            integrate_derivatives(model, q, &v_next, dt).map_err(dynamics_error)?;
        let dq_next = next_configuration_change(model, &integrate_q, &integrate_v, &dv_next, dt);
        let mut a = DMatrix::zeros(2 * nv, 2 * nv);
        a.view_mut((0, 0), (nv, 2 * nv))
            .copy_from(&dq_next.columns(0, 2 * nv));
        a.view_mut((nv, 0), (nv, 2 * nv))
            .copy_from(&dv_next.columns(0, 2 * nv));
        let mut b = DMatrix::zeros(2 * nv, nv);
        b.view_mut((0, 0), (nv, nv))
            .copy_from(&dq_next.columns(2 * nv, nv));
        b.view_mut((nv, 0), (nv, nv))
            .copy_from(&dv_next.columns(2 * nv, nv));
        Ok(StepDerivatives {
            a,
            b,
            d_lambda: response.d_lambda,
            modes: response.modes,
            method: response.method,
            rank: response.rank,
            gap_at_kink: self.gaps_at_kink(&contacts),
        })
    }

    /// [`StepDerivatives::gap_at_kink`] of the step's contacts.
    fn gaps_at_kink(&self, contacts: &[HeldContact]) -> Vec<bool> {
        let scale = self.problem.as_ref().map_or(0.0, |p| p.velocity_scale());
        let reach = DerivativeSettings::default().mode_tolerance * scale * self.params.dt;
        contacts
            .iter()
            .map(|c| c.gap_gain.is_some() && c.distance.abs() <= reach)
            .collect()
    }

    /// `Φ_q += ∂τ_ctrl/∂q`, `Φ_v += ∂τ_ctrl/∂v` of the PD (scenario docs): `τ_j = s_j (K_p
    /// e_j − K_d v_j)`, `e = q_ref ⊖ q` (`∂e_j/∂q_j = −1`), `s_j = 1` or `1 / (M⁻¹)_jj`,
    /// whose gradient is `s_j² ∂(w_jᵀ M w_j)/∂q` with `w_j = M⁻¹ e_j`.
    fn add_controller_derivatives(
        &mut self,
        ws: &DerivativeWorkspace,
        inverse_mass: &DMatrix<f64>,
        q: &DVector<f64>,
        v: &DVector<f64>,
        phi_q: &mut DMatrix<f64>,
        phi_v: &mut DMatrix<f64>,
    ) -> Result<(), DynamicsError> {
        let Some(pd) = &self.world.pd else {
            return Ok(());
        };
        let model = &self.world.model;
        let nv = model.nv();
        let error = dynamics::difference(model, q, &pd.target)?;
        let mut inverse_diagonal = vec![1.0; nv];
        if pd.inertia_scaled {
            self.mass
                .inverse_diagonal_on(&self.world.actuated, &mut inverse_diagonal)?;
        }
        let (mut twists, mut momenta, mut gradient) = (Vec::new(), Vec::new(), DVector::zeros(nv));
        for &j in &self.world.actuated {
            let scale = 1.0 / inverse_diagonal[j];
            phi_q[(j, j)] -= scale * pd.kp;
            phi_v[(j, j)] -= scale * pd.kd;
            if pd.inertia_scaled {
                let w = inverse_mass.column(j).into_owned();
                mass_quadratic_gradient(model, ws, &w, &mut twists, &mut momenta, &mut gradient)?;
                let command = pd.kp * error[j] - pd.kd * v[j];
                let mut row = phi_q.row_mut(j);
                row += gradient.transpose() * (command * scale * scale);
            }
        }
        Ok(())
    }

    /// The step's contacts with their held geometry (module docs), in the problem's order.
    fn held_contacts(&self) -> Vec<HeldContact> {
        let half = Matrix3::identity() * 0.5;
        self.detector
            .contacts()
            .iter()
            .zip(&self.states)
            .map(|(pair, state)| {
                let (a, b) = (&self.world.objects[pair.a], &self.world.objects[pair.b]);
                let c = &pair.contact;
                let n = c.normal;
                let witness_a = c.point_a - n * a.shape.radius;
                let witness_b = c.point_b + n * b.shape.radius;
                let along = n * n.transpose() * 0.5;
                let across = Matrix3::identity() - along;
                let weights = match (&a.shape.core, &b.shape.core) {
                    (Core::Halfspace { .. }, _) => [along, across],
                    (_, Core::Halfspace { .. }) => [across, along],
                    _ => [half, half],
                };
                let gap_gain = (!restitution_applies(state, &self.params)).then(|| {
                    if c.distance >= 0.0 {
                        1.0 / self.params.dt
                    } else {
                        self.params.baumgarte / self.params.dt
                    }
                });
                HeldContact {
                    joints: [a.joint, b.joint],
                    point: c.point(),
                    frame: *c.frame.matrix(),
                    anchors: [
                        Anchor {
                            joint: a.joint,
                            point: witness_a,
                            weight: weights[0],
                        },
                        Anchor {
                            joint: b.joint,
                            point: witness_b,
                            weight: weights[1],
                        },
                    ],
                    gap_gain,
                    distance: c.distance,
                }
            })
            .collect()
    }

    /// `J` (`3n × nv`) of the held contacts at the step's `q`.
    fn contact_jacobian(&self, contacts: &[HeldContact]) -> Result<DMatrix<f64>, DynamicsError> {
        let model = &self.world.model;
        let mut jacobian = DMatrix::zeros(3 * contacts.len(), model.nv());
        for (i, c) in contacts.iter().enumerate() {
            for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                dynamics::add_point_jacobian_rows(
                    model,
                    &self.data,
                    joint,
                    &c.point,
                    &c.frame,
                    sign,
                    &mut jacobian,
                    3 * i,
                )?;
            }
        }
        Ok(jacobian)
    }

    /// `M⁻¹ x` for every column of `x`, through the step's factor.
    fn solve_mass(&self, x: &mut DMatrix<f64>) -> Result<(), DynamicsError> {
        let rows = x.nrows();
        for column in x.as_mut_slice().chunks_mut(rows) {
            self.mass.solve_in_place(column)?;
        }
        Ok(())
    }

    /// `dλ` (`3n × 3nv`) from `dg = J V_λ` given: `dg += ∂(J v⁺ + b)/∂(q, v)` at fixed `λ`
    /// (module docs), then the solve's derivative along it.
    fn contact_response(
        &self,
        ws: &DerivativeWorkspace,
        contacts: &[HeldContact],
        jacobian: &DMatrix<f64>,
        mut dg: DMatrix<f64>,
        v: &DVector<f64>,
        v_next: &DVector<f64>,
    ) -> Result<ContactResponse, StepDerivativeError> {
        let step = self.step;
        let model = &self.world.model;
        let nv = model.nv();
        let dynamics_error = |source| StepDerivativeError::Dynamics { step, source };
        let (mut after, mut before) = (Vec::new(), Vec::new());
        world_twists(model, ws, v_next, &mut after).map_err(dynamics_error)?;
        world_twists(model, ws, v, &mut before).map_err(dynamics_error)?;
        let mut velocity_q = DMatrix::zeros(3 * contacts.len(), nv);
        let mut scratch = DMatrix::zeros(3, nv);
        for (i, c) in contacts.iter().enumerate() {
            for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                let (point, frame, anchors) = (&c.point, &c.frame, &c.anchors);
                point_velocity_derivative(
                    model,
                    ws,
                    &after,
                    joint,
                    point,
                    frame,
                    sign,
                    anchors,
                    &mut velocity_q,
                    3 * i,
                );
            }
            let normal = 3 * i + 2;
            match c.gap_gain {
                // b_N = κ φ / Δt with ∂φ/∂q = J_N (module docs).
                Some(gain) => {
                    let mut row = velocity_q.row_mut(normal);
                    row += jacobian.row(normal) * gain;
                }
                // b_N = e c_N⁻ = e (J v)_N.
                None => {
                    let e = self.params.restitution;
                    scratch.fill(0.0);
                    for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                        let (point, frame, anchors) = (&c.point, &c.frame, &c.anchors);
                        point_velocity_derivative(
                            model,
                            ws,
                            &before,
                            joint,
                            point,
                            frame,
                            sign,
                            anchors,
                            &mut scratch,
                            0,
                        );
                    }
                    let mut row = velocity_q.row_mut(normal);
                    row += scratch.row(2) * e;
                    let mut row = dg.view_mut((normal, nv), (1, nv));
                    row += jacobian.row(normal) * e;
                }
            }
        }
        let mut first = dg.columns_mut(0, nv);
        first += &velocity_q;
        let Some(problem) = &self.problem else {
            return Ok(ContactResponse::default());
        };
        let model_of_solver = self.solver.model();
        let derivative = differentiate(
            problem,
            model_of_solver,
            &self.lambda,
            &DerivativeSettings::default(),
        )
        .map_err(|source| StepDerivativeError::Solve { step, source })?;
        if model_of_solver == ContactModel::Raisim {
            let sliding = derivative
                .modes()
                .iter()
                .zip(problem.mu().iter())
                .position(|(m, mu)| m.mode == ContactMode::Slide && *mu > 0.0);
            if let Some(contact) = sliding {
                return Err(StepDerivativeError::RaisimSliding { step, contact });
            }
        }
        if !self
            .outcome
            .status
            .as_ref()
            .is_some_and(|s| s.is_converged())
        {
            let status = self
                .outcome
                .status
                .as_ref()
                .map_or_else(|| "no solve".to_string(), |s| s.to_string());
            return Err(StepDerivativeError::Solve {
                step,
                source: DerivativeError::NotConverged { status },
            });
        }
        let d_lambda = derivative
            .jvp_free_velocity(&dg)
            .map_err(|source| StepDerivativeError::Solve { step, source })?;
        Ok(ContactResponse {
            d_lambda,
            modes: derivative.modes().to_vec(),
            method: derivative.method(),
            rank: derivative.rank(),
        })
    }
}

/// `dq⁺ = ∂(q ⊕ ξ)/∂q [I 0 0] + ∂(q ⊕ ξ)/∂ξ dv⁺` (columns `[q, v, τ]`), with both
/// integration derivatives the identity (times `Δt` for `ξ`) outside the free flyers'
/// 6×6 blocks ([`integrate_derivatives`]).
fn next_configuration_change(
    model: &crate::model::Model,
    integrate_q: &DMatrix<f64>,
    integrate_v: &DMatrix<f64>,
    dv_next: &DMatrix<f64>,
    dt: f64,
) -> DMatrix<f64> {
    let nv = model.nv();
    let mut dq_next = dv_next * dt;
    for k in 0..nv {
        dq_next[(k, k)] += 1.0;
    }
    for joint in &model.joints {
        if matches!(joint.kind, crate::model::JointKind::FreeFlyer) {
            let iv = joint.idx_v;
            let rows = integrate_v.view((iv, iv), (6, 6)) * dv_next.rows(iv, 6);
            dq_next.rows_mut(iv, 6).copy_from(&rows);
            let mut block = dq_next.view_mut((iv, iv), (6, 6));
            block += integrate_q.view((iv, iv), (6, 6));
        }
    }
    dq_next
}

/// Per contact, the dofs where its three rows of `J` are not all zero (its support: the
/// chains of its bodies), increasing.
fn contact_supports(jacobian: &DMatrix<f64>) -> Vec<Vec<usize>> {
    (0..jacobian.nrows() / 3)
        .map(|i| {
            let rows = jacobian.rows(3 * i, 3);
            (0..jacobian.ncols())
                .filter(|&k| rows.column(k).iter().any(|x| *x != 0.0))
                .collect()
        })
        .collect()
}

/// `J x` (`3n × cols`) on the contacts' supports.
fn jacobian_product(
    jacobian: &DMatrix<f64>,
    supports: &[Vec<usize>],
    x: &DMatrix<f64>,
) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(jacobian.nrows(), x.ncols());
    for column in 0..x.ncols() {
        let x = x.column(column);
        for (i, support) in supports.iter().enumerate() {
            let mut sum = Vector3::zeros();
            for &k in support {
                sum += jacobian.fixed_view::<3, 1>(3 * i, k) * x[k];
            }
            out.fixed_view_mut::<3, 1>(3 * i, column).copy_from(&sum);
        }
    }
    out
}

/// `M⁻¹ Jᵀ` (`nv × 3n`) from the dense `M⁻¹`, on the contacts' supports.
fn inverse_mass_jacobian_t(
    inverse_mass: &DMatrix<f64>,
    jacobian: &DMatrix<f64>,
    supports: &[Vec<usize>],
) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(inverse_mass.nrows(), jacobian.nrows());
    for (i, support) in supports.iter().enumerate() {
        for row in 3 * i..3 * i + 3 {
            let mut column = out.column_mut(row);
            for &k in support {
                column.axpy(jacobian[(row, k)], &inverse_mass.column(k), 1.0);
            }
        }
    }
    out
}

/// `dλ` and what the solve's derivative reports.
struct ContactResponse {
    d_lambda: DMatrix<f64>,
    modes: Vec<ModeReport>,
    method: LinearMethod,
    rank: (usize, usize),
}

impl Default for ContactResponse {
    fn default() -> Self {
        Self {
            d_lambda: DMatrix::zeros(0, 0),
            modes: Vec::new(),
            method: LinearMethod::Empty,
            rank: (0, 0),
        }
    }
}
