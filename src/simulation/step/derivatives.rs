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

use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};
use thiserror::Error;

use super::{Simulator, StepError, StepSummary};
use crate::collision::Core;
use crate::derivatives::{
    differentiate, ContactMode, DerivativeError, DerivativeSettings, LinearMethod, ModeReport,
};
use crate::dynamics::derivatives::{
    gravity_derivatives_into, mass_quadratic_gradient, point_force_derivative,
    point_velocity_derivative, rnea_derivatives_at_placements_into, rnea_derivatives_into,
    world_twists, Anchor, DerivativeWorkspace, RneaDerivatives,
};
use crate::dynamics::lie_derivatives::free_flyer_integrate_derivatives;
use crate::dynamics::{self, check_configuration, check_velocity, DynamicsError, MassLtdl};
use crate::problem::build::restitution_applies;
use crate::problem::contact_vector;
use crate::problem::ContactModel;
use crate::simulation::controllers::GravityWorkspace;

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
    /// the contacts, the joint placements and the factor of `M` of the simulator are still
    /// those of that step. The buffers are the simulator's, kept from call to call.
    pub(crate) fn derivatives_of_last_step(
        &mut self,
        q: &DVector<f64>,
        v: &DVector<f64>,
    ) -> Result<StepDerivatives, StepDerivativeError> {
        let mut buffers = self
            .derivative_buffers
            .take()
            .unwrap_or_else(|| Box::new(DerivativeBuffers::new(&self.world.model)));
        let result = self.derivatives_into(&mut buffers, q, v);
        self.derivative_buffers = Some(buffers);
        result
    }

    /// [`Simulator::derivatives_of_last_step`] in `buf`.
    fn derivatives_into(
        &mut self,
        buf: &mut DerivativeBuffers,
        q: &DVector<f64>,
        v: &DVector<f64>,
    ) -> Result<StepDerivatives, StepDerivativeError> {
        let step = self.step;
        let dynamics_error = |source| StepDerivativeError::Dynamics { step, source };
        let (nv, dt) = (self.world.model.nv(), self.params.dt);
        // a⁺ = (v⁺ − v) / Δt.
        buf.a_next.copy_from(&self.v);
        buf.a_next -= v;
        buf.a_next /= dt;
        if self.placements_at_step_start {
            rnea_derivatives_at_placements_into(
                &self.world.model,
                &self.data,
                &mut buf.ws,
                v,
                &buf.a_next,
                &mut buf.rnea,
            )
        } else {
            rnea_derivatives_into(
                &self.world.model,
                &mut self.data,
                &mut buf.ws,
                q,
                v,
                &buf.a_next,
                &mut buf.rnea,
            )
        }
        .map_err(dynamics_error)?;
        // Φ = [Φ_q Φ_v] (module docs).
        buf.phi.columns_mut(0, nv).copy_from(&buf.rnea.dtau_dq);
        buf.phi.columns_mut(nv, nv).copy_from(&buf.rnea.dtau_dv);
        buf.phi.neg_mut();
        buf.inverse_mass(&self.mass).map_err(dynamics_error)?;
        self.add_controller_derivatives(buf, q, v)
            .map_err(dynamics_error)?;
        let model = &self.world.model;
        let t = (step - 1) as f64 * dt;
        let mut phi_q = buf.phi.columns_mut(0, nv);
        for (force, &joint) in self.forces.iter().zip(&self.world.force_joints) {
            let origin = self.data.joint_position(joint);
            let f = Vector3::from(force.at(t));
            let anchor = [Anchor {
                joint,
                point: origin,
                weight: Matrix3::identity(),
            }];
            point_force_derivative(model, &buf.ws, joint, &origin, &f, &anchor, 1.0, &mut phi_q);
        }
        let contacts = self.held_contacts();
        for (i, contact) in contacts.iter().enumerate() {
            let f = contact.frame * contact_vector(&self.lambda, i);
            for (joint, sign) in [(contact.joints[1], 1.0), (contact.joints[0], -1.0)] {
                let (point, anchors) = (&contact.point, &contact.anchors);
                let scale = sign / dt;
                point_force_derivative(
                    model, &buf.ws, joint, point, &f, anchors, scale, &mut phi_q,
                );
            }
        }
        // V_λ = [Δt M⁻¹ Φ_q, I + Δt M⁻¹ Φ_v, Δt M⁻¹], the first two blocks one product
        // with the dense M⁻¹ that B's block is anyway.
        buf.dv_next
            .columns_mut(0, 2 * nv)
            .gemm(dt, &buf.inverse_mass, &buf.phi, 0.0);
        buf.dv_next
            .columns_mut(2 * nv, nv)
            .copy_from(&buf.inverse_mass);
        buf.dv_next.columns_mut(2 * nv, nv).scale_mut(dt);
        for k in 0..nv {
            buf.dv_next[(k, nv + k)] += 1.0;
        }
        let response = if contacts.is_empty() {
            ContactResponse::default()
        } else {
            self.contact_jacobian(&contacts, &mut buf.jacobian)
                .map_err(dynamics_error)?;
            contact_supports(&buf.jacobian, &mut buf.supports);
            resize_zeroed(&mut buf.dg, buf.jacobian.nrows(), 3 * nv);
            buf.dg.gemm(1.0, &buf.jacobian, &buf.dv_next, 0.0);
            let response = self.contact_response(buf, &contacts, v)?;
            inverse_mass_jacobian_t(
                &buf.inverse_mass,
                &buf.jacobian,
                &buf.supports,
                &mut buf.minv_jt,
            );
            buf.dv_next.gemm(1.0, &buf.minv_jt, &response.d_lambda, 1.0);
            response
        };
        let (a, b) = self.state_jacobians(&buf.dv_next);
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

    /// `A` and `B` from `dv⁺` (`nv × 3nv`, columns `[q, v, τ]`): `dq⁺ = ∂(q ⊕ ξ)/∂q
    /// [I 0 0] + ∂(q ⊕ ξ)/∂ξ dv⁺`, both integration derivatives the identity (times `Δt`
    /// for `ξ`) outside the free flyers' 6×6 blocks ([`free_flyer_integrate_derivatives`]).
    fn state_jacobians(&self, dv_next: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
        let model = &self.world.model;
        let (nv, dt) = (model.nv(), self.params.dt);
        let mut a = DMatrix::zeros(2 * nv, 2 * nv);
        let mut b = DMatrix::zeros(2 * nv, nv);
        for (out, first) in [(&mut a, 0), (&mut b, 2 * nv)] {
            let cols = out.ncols();
            out.view_mut((nv, 0), (nv, cols))
                .copy_from(&dv_next.columns(first, cols));
            let mut dq = out.view_mut((0, 0), (nv, cols));
            dq.copy_from(&dv_next.columns(first, cols));
            dq.scale_mut(dt);
        }
        for k in 0..nv {
            a[(k, k)] += 1.0;
        }
        for joint in &model.joints {
            if matches!(joint.kind, crate::model::JointKind::FreeFlyer) {
                let iv = joint.idx_v;
                let (integrate_q, integrate_v) =
                    free_flyer_integrate_derivatives(&self.v.fixed_rows::<6>(iv).into_owned(), dt);
                for (out, first) in [(&mut a, 0), (&mut b, 2 * nv)] {
                    let cols = out.ncols();
                    let rows = integrate_v * dv_next.view((iv, first), (6, cols));
                    out.view_mut((iv, 0), (6, cols)).copy_from(&rows);
                }
                let mut block = a.view_mut((iv, iv), (6, 6));
                block += integrate_q;
            }
        }
        (a, b)
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
    /// whose gradient is `s_j² ∂(w_jᵀ M w_j)/∂q` with `w_j = M⁻¹ e_j` (`buf`'s `M⁻¹`).
    fn add_controller_derivatives(
        &self,
        buf: &mut DerivativeBuffers,
        q: &DVector<f64>,
        v: &DVector<f64>,
    ) -> Result<(), DynamicsError> {
        let Some(pd) = &self.world.pd else {
            return Ok(());
        };
        let model = &self.world.model;
        let nv = model.nv();
        let error = dynamics::difference(model, q, &pd.target)?;
        for &j in &self.world.actuated {
            let scale = if pd.inertia_scaled {
                1.0 / buf.inverse_mass[(j, j)]
            } else {
                1.0
            };
            buf.phi[(j, j)] -= scale * pd.kp;
            buf.phi[(j, nv + j)] -= scale * pd.kd;
            if pd.inertia_scaled {
                buf.w.copy_from(&buf.inverse_mass.column(j));
                mass_quadratic_gradient(
                    model,
                    &buf.ws,
                    &buf.w,
                    &mut buf.twists,
                    &mut buf.momenta,
                    &mut buf.gradient,
                )?;
                let command = pd.kp * error[j] - pd.kd * v[j];
                let mut row = buf.phi.view_mut((j, 0), (1, nv));
                row += buf.gradient.transpose() * (command * scale * scale);
            }
        }
        if let Some(gravity) = &pd.gravity {
            // g(q) and ∂g/∂q from the step's composite inertias.
            gravity_derivatives_into(model, &buf.ws, &mut buf.gravity, &mut buf.gravity_dq)?;
            let work = buf
                .gravity_work
                .get_or_insert_with(|| gravity.workspace(model));
            gravity.add_derivative_to(
                model,
                &self.data,
                &buf.ws,
                &buf.gravity_dq,
                &buf.gravity,
                &self.world.actuated,
                work,
                &mut buf.phi.columns_mut(0, nv),
            )?;
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

    /// `J` (`3n × nv`) of the held contacts at the step's `q`, into `jacobian`.
    fn contact_jacobian(
        &self,
        contacts: &[HeldContact],
        jacobian: &mut DMatrix<f64>,
    ) -> Result<(), DynamicsError> {
        let model = &self.world.model;
        resize_zeroed(jacobian, 3 * contacts.len(), model.nv());
        for (i, c) in contacts.iter().enumerate() {
            for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                dynamics::add_point_jacobian_rows(
                    model,
                    &self.data,
                    joint,
                    &c.point,
                    &c.frame,
                    sign,
                    jacobian,
                    3 * i,
                )?;
            }
        }
        Ok(())
    }

    /// `dλ` (`3n × 3nv`) from `buf.dg = J V_λ` given: `dg += ∂(J v⁺ + b)/∂(q, v)` at
    /// fixed `λ` (module docs), then the solve's derivative along it.
    fn contact_response(
        &self,
        buf: &mut DerivativeBuffers,
        contacts: &[HeldContact],
        v: &DVector<f64>,
    ) -> Result<ContactResponse, StepDerivativeError> {
        let step = self.step;
        let model = &self.world.model;
        let nv = model.nv();
        let dynamics_error = |source| StepDerivativeError::Dynamics { step, source };
        let ws = &buf.ws;
        world_twists(model, ws, &self.v, &mut buf.twists).map_err(dynamics_error)?;
        world_twists(model, ws, v, &mut buf.twists_before).map_err(dynamics_error)?;
        let (after, before) = (&buf.twists, &buf.twists_before);
        let jacobian = &buf.jacobian;
        let dg = &mut buf.dg;
        let scratch = &mut buf.scratch;
        for (i, c) in contacts.iter().enumerate() {
            let mut velocity_q = dg.view_mut((3 * i, 0), (3, nv));
            for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                let (point, frame, anchors) = (&c.point, &c.frame, &c.anchors);
                point_velocity_derivative(
                    model,
                    ws,
                    after,
                    joint,
                    point,
                    frame,
                    sign,
                    anchors,
                    &mut velocity_q,
                    0,
                );
            }
            let normal = 3 * i + 2;
            match c.gap_gain {
                // b_N = κ φ / Δt with ∂φ/∂q = J_N (module docs).
                Some(gain) => {
                    let mut row = dg.view_mut((normal, 0), (1, nv));
                    row += jacobian.row(normal) * gain;
                }
                // b_N = e c_N⁻ = e (J v)_N.
                None => {
                    let e = self.params.restitution;
                    scratch.fill(0.0);
                    for (joint, sign) in [(c.joints[1], 1.0), (c.joints[0], -1.0)] {
                        let (point, frame, anchors) = (&c.point, &c.frame, &c.anchors);
                        point_velocity_derivative(
                            model, ws, before, joint, point, frame, sign, anchors, scratch, 0,
                        );
                    }
                    let mut row = dg.view_mut((normal, 0), (1, nv));
                    row += scratch.row(2) * e;
                    let mut row = dg.view_mut((normal, nv), (1, nv));
                    row += jacobian.row(normal) * e;
                }
            }
        }
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
            .jvp_free_velocity(&buf.dg)
            .map_err(|source| StepDerivativeError::Solve { step, source })?;
        Ok(ContactResponse {
            d_lambda,
            modes: derivative.modes().to_vec(),
            method: derivative.method(),
            rank: derivative.rank(),
        })
    }
}

/// `m` as a `rows × cols` matrix of zeros, reallocated only when its shape changes.
fn resize_zeroed(m: &mut DMatrix<f64>, rows: usize, cols: usize) {
    if m.shape() == (rows, cols) {
        m.fill(0.0);
    } else {
        *m = DMatrix::zeros(rows, cols);
    }
}

/// Per contact, the dofs where its three rows of `J` are not all zero (its support: the
/// chains of its bodies), increasing, into `supports`.
fn contact_supports(jacobian: &DMatrix<f64>, supports: &mut Vec<Vec<usize>>) {
    let n = jacobian.nrows() / 3;
    supports.resize_with(n, Vec::new);
    for (i, support) in supports.iter_mut().enumerate() {
        let rows = jacobian.rows(3 * i, 3);
        support.clear();
        support.extend((0..jacobian.ncols()).filter(|&k| rows.column(k).iter().any(|x| *x != 0.0)));
    }
}

/// `out = M⁻¹ Jᵀ` (`nv × 3n`) from the dense `M⁻¹`, on the contacts' supports.
fn inverse_mass_jacobian_t(
    inverse_mass: &DMatrix<f64>,
    jacobian: &DMatrix<f64>,
    supports: &[Vec<usize>],
    out: &mut DMatrix<f64>,
) {
    resize_zeroed(out, inverse_mass.nrows(), jacobian.nrows());
    for (i, support) in supports.iter().enumerate() {
        for row in 3 * i..3 * i + 3 {
            let mut column = out.column_mut(row);
            for &k in support {
                column.axpy(jacobian[(row, k)], &inverse_mass.column(k), 1.0);
            }
        }
    }
}

/// What a step's derivative works in, kept by the simulator from call to call: nothing of
/// size `nv` is allocated again (matrices of `3n` rows are when the number of contacts
/// changes).
pub(crate) struct DerivativeBuffers {
    ws: DerivativeWorkspace,
    rnea: RneaDerivatives,
    a_next: DVector<f64>,
    /// Each dof and its ancestors in the tree of `M`'s factor, decreasing (the support of
    /// `M⁻¹ e_j` under `L⁻ᵀ`).
    chains: Vec<Vec<usize>>,
    /// `M⁻¹` (`nv × nv`).
    inverse_mass: DMatrix<f64>,
    /// `[Φ_q Φ_v]` (`nv × 2nv`).
    phi: DMatrix<f64>,
    /// `V_λ`, then `dv⁺` (`nv × 3nv`, columns `[q, v, τ]`).
    dv_next: DMatrix<f64>,
    jacobian: DMatrix<f64>,
    supports: Vec<Vec<usize>>,
    /// `dg` (`3n × 3nv`).
    dg: DMatrix<f64>,
    minv_jt: DMatrix<f64>,
    /// A contact's three rows of `∂(J v)/∂q` at `v` (restitution).
    scratch: DMatrix<f64>,
    w: DVector<f64>,
    gradient: DVector<f64>,
    twists: Vec<Vector6<f64>>,
    twists_before: Vec<Vector6<f64>>,
    momenta: Vec<Vector6<f64>>,
    /// The PD's gravity feed-forward: `g(q)`, `∂g/∂q` and its support forces.
    gravity: DVector<f64>,
    gravity_dq: DMatrix<f64>,
    gravity_work: Option<GravityWorkspace>,
}

impl DerivativeBuffers {
    fn new(model: &crate::model::Model) -> Self {
        let nv = model.nv();
        let tree = MassLtdl::new(model);
        let chains = (0..nv)
            .map(|j| std::iter::successors(Some(j), |&k| tree.parent(k)).collect())
            .collect();
        Self {
            ws: DerivativeWorkspace::new(model),
            rnea: RneaDerivatives {
                tau: DVector::zeros(nv),
                dtau_dq: DMatrix::zeros(nv, nv),
                dtau_dv: DMatrix::zeros(nv, nv),
            },
            a_next: DVector::zeros(nv),
            chains,
            inverse_mass: DMatrix::zeros(nv, nv),
            phi: DMatrix::zeros(nv, 2 * nv),
            dv_next: DMatrix::zeros(nv, 3 * nv),
            jacobian: DMatrix::zeros(0, nv),
            supports: Vec::new(),
            dg: DMatrix::zeros(0, 3 * nv),
            minv_jt: DMatrix::zeros(nv, 0),
            scratch: DMatrix::zeros(3, nv),
            w: DVector::zeros(nv),
            gradient: DVector::zeros(nv),
            twists: Vec::new(),
            twists_before: Vec::new(),
            momenta: Vec::new(),
            gravity: DVector::zeros(nv),
            gravity_dq: DMatrix::zeros(nv, nv),
            gravity_work: None,
        }
    }

    /// `M⁻¹` column by column through the step's factor `M = Lᵀ D L`: `Lᵀ y = e_j` stays
    /// on `j`'s chain ([`MassLtdl::solve_lt_on`]), then `L⁻¹ D⁻¹ y`.
    fn inverse_mass(&mut self, factor: &MassLtdl) -> Result<(), DynamicsError> {
        let nv = self.inverse_mass.nrows();
        for (j, column) in self.inverse_mass.as_mut_slice().chunks_mut(nv).enumerate() {
            column.fill(0.0);
            column[j] = 1.0;
            factor.solve_lt_on(column, &self.chains[j])?;
            factor.solve_dl_in_place(column)?;
        }
        Ok(())
    }
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
