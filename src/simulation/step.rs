//! One time step in pipeline order (design.md §1), with a wall-clock timer per stage:
//!
//! 1. dynamics: joint placements, `M(q)` (CRBA) and its LTDL factor `M = Lᵀ D L` through
//!    the kinematic tree, the bias `C(q, v) v + g(q)` (RNEA), the PD torques (their inertia
//!    scaling `1 / (M⁻¹)_jj` read from the factor) and the external forces `J_extᵀ f_ext`;
//! 2. collision: contacts of the pairs the scenario allows, within the margin, each pair
//!    GJK-warm-started from its previous step; their frames and Jacobian rows
//!    `R_iᵀ (J_B(p_i) − J_A(p_i))`;
//! 3. assembly: `v_f`, then `G`, `g` with the Baumgarte/restitution bias and compliance,
//!    through the tree ([`ContactAssembly`]);
//! 4. solve: the contact solver, warm-started with the previous `λ` of the contacts
//!    matched by pair of collision objects (same bodies, same geometries), or cold (from
//!    `λ = 0`, solver reset) when `warm_start` is off;
//! 5. integration: `v⁺ = v_f + M⁻¹Jᵀλ`, `q⁺ = q ⊕ v⁺ Δt`; on a recorded step, the
//!    metrics ([`StepMetrics`]) and energy.
//!
//! [`Simulator::advance`] takes a step without recording it: once the buffers have grown
//! to the number of contacts it allocates nothing itself (the solver's own report aside).
//! [`Simulator::step`] takes a step and returns its [`StepRecord`].

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::{DVector, Isometry3, Vector3};
use thiserror::Error;

mod derivatives;

pub use derivatives::{StepDerivativeError, StepDerivatives};

use super::locomotion::TrotState;
use super::recorder::{ContactRecord, StageTimings, StepRecord};
use super::scenario::{ExternalForce, StepMetrics};
use super::world::{ActuationWorkspace, World};
use crate::collision::{
    BuildPairHasher, CollisionError, ContactDetector, ContactSettings, DetectionOutcomes,
};
use crate::dynamics::all_terms::factorized_mass_and_bias_at_placements;
use crate::dynamics::{self, Data, DynamicsError, MassLtdl, Se3};
use crate::metrics::energy::MechanicalEnergy;
use crate::metrics::{compute_metrics_at_velocity, compute_model_metrics_at_velocity};
use crate::problem::build::{free_velocity_change, ContactAssembly, ContactState, DelassusForm};
use crate::problem::{
    contact_vector, set_contact_vector, ContactProblem, ProblemError, StepParameters,
};
use crate::solvers::{ContactSolver, SolveStatus, SolverError};

/// Why a step could not be taken.
#[derive(Debug, Error)]
pub enum StepError {
    /// A dynamics algorithm refused its input (non-finite state...).
    #[error("step {step}: dynamics: {source}")]
    Dynamics {
        /// The step.
        step: usize,
        /// The error.
        source: DynamicsError,
    },
    /// Collision detection failed.
    #[error("step {step}: collision: {source}")]
    Collision {
        /// The step.
        step: usize,
        /// The error.
        source: CollisionError,
    },
    /// The contact problem is invalid (non-finite `G` or `g`).
    #[error("step {step}: contact problem: {source}")]
    Problem {
        /// The step.
        step: usize,
        /// The error.
        source: ProblemError,
    },
    /// The solver refused the problem.
    #[error("step {step}: solver: {source}")]
    Solver {
        /// The step.
        step: usize,
        /// The error.
        source: SolverError,
    },
    /// The solver returned non-finite forces, or the state diverged.
    #[error("step {step}: {what} is not finite")]
    NonFinite {
        /// The step.
        step: usize,
        /// What.
        what: &'static str,
    },
}

/// What [`Simulator::advance`] tells about the step it took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepSummary {
    /// Contacts.
    pub contacts: usize,
    /// Solver iterations.
    pub iterations: usize,
    /// True when the solver converged (or there was no contact).
    pub converged: bool,
    /// Wall time per stage.
    pub timings: StageTimings,
    /// Collision queries, and those that hit an iteration cap.
    pub collision: DetectionOutcomes,
}

/// A contact of the current step, before solving.
#[derive(Debug, Clone, Copy)]
struct StepContact {
    /// Index of its pair in the detector's pairs.
    pair: usize,
    /// Its objects (A, B).
    objects: (usize, usize),
    point: Vector3<f64>,
    distance: f64,
}

/// The `λ` of each pair in contact at one step: the warm start and the restitution's
/// "was active" of the next step, kept for the pairs in contact only (not per allowed
/// pair, whose count grows with the square of the bodies).
#[derive(Debug, Clone, Default)]
struct PairForces {
    /// The step.
    step: usize,
    /// `(pair, λ)` by increasing pair (the detector's contact order).
    forces: Vec<(usize, Vector3<f64>)>,
}

impl PairForces {
    /// The `λ` of `pair` at the step before `step`, if it was in contact then.
    fn before(&self, step: usize, pair: usize) -> Option<Vector3<f64>> {
        if self.step + 1 != step {
            return None;
        }
        self.forces
            .binary_search_by_key(&pair, |&(p, _)| p)
            .ok()
            .map(|k| self.forces[k].1)
    }

    /// Keeps the `λ` of each of `contacts` at `step` (the last one per pair).
    fn record(&mut self, step: usize, contacts: &[StepContact], lambda: &DVector<f64>) {
        self.step = step;
        self.forces.clear();
        for (i, c) in contacts.iter().enumerate() {
            let force = (c.pair, contact_vector(lambda, i));
            match self.forces.last_mut() {
                Some(last) if last.0 == c.pair => *last = force,
                _ => self.forces.push(force),
            }
        }
    }
}

/// The vectors of nv (or nq) entries a step works in.
#[derive(Debug, Clone)]
struct Buffers {
    tau: DVector<f64>,
    generalized_force: DVector<f64>,
    v_free: DVector<f64>,
    v_next: DVector<f64>,
    q_next: DVector<f64>,
    warm: DVector<f64>,
    actuation: ActuationWorkspace,
}

/// What the solve of the last step returned.
#[derive(Debug, Clone)]
struct SolveOutcome {
    iterations: usize,
    /// `None` when there was no contact.
    status: Option<SolveStatus>,
}

/// A world being simulated with one solver.
pub struct Simulator {
    world: World,
    data: Data,
    solver: Box<dyn ContactSolver>,
    params: StepParameters,
    forces: Vec<ExternalForce>,
    metrics: StepMetrics,
    q: DVector<f64>,
    v: DVector<f64>,
    step: usize,
    mass: MassLtdl,
    detector: ContactDetector,
    /// Object placements in their joint frames.
    placements: Vec<Se3>,
    /// `A|B` names of the pairs of objects that have touched, for the records.
    pair_names: HashMap<(usize, usize), String, BuildPairHasher>,
    /// World poses of the objects (those in some pair are refreshed each step).
    poses: Vec<Isometry3<f64>>,
    assembly: ContactAssembly,
    contacts: Vec<StepContact>,
    states: Vec<ContactState>,
    /// The `λ` of the pairs in contact at the last step.
    previous: PairForces,
    buffers: Buffers,
    /// The last step's problem (`None` without contact) and `λ`.
    problem: Option<ContactProblem>,
    lambda: DVector<f64>,
    outcome: SolveOutcome,
    timings: StageTimings,
    collision: DetectionOutcomes,
    /// `data`'s joint placements are at `q`: the energy of a record computed them at the
    /// state the next step starts from, whose dynamics stage reuses them (cleared when
    /// `q` moves).
    placements_at_q: bool,
    /// A generalized force added to every step ([`Simulator::set_added_torque`]).
    added_torque: Option<DVector<f64>>,
    /// `data`'s joint placements are still at the `q` the last step started from (no
    /// record's energy moved them to the new `q` since): its derivatives reuse them.
    placements_at_step_start: bool,
    /// The buffers of [`Simulator::step_derivatives`], made at its first call.
    derivative_buffers: Option<Box<derivatives::DerivativeBuffers>>,
}

impl Simulator {
    /// A simulator at the world's initial state; the collision pairs are those the
    /// world's filter accepts.
    pub fn new(
        world: World,
        solver: Box<dyn ContactSolver>,
        params: StepParameters,
        forces: Vec<ExternalForce>,
    ) -> Self {
        let data = Data::new(&world.model);
        let objects = world
            .objects
            .iter()
            .map(|o| (o.shape.clone(), o.joint))
            .collect();
        let detector = ContactDetector::new(objects, &world.filter);
        let placements = world
            .objects
            .iter()
            .map(|o| Se3::from_isometry(&o.placement))
            .collect();
        let (nq, nv) = (world.model.nq(), world.model.nv());
        let buffers = Buffers {
            tau: DVector::zeros(nv),
            generalized_force: DVector::zeros(nv),
            v_free: DVector::zeros(nv),
            v_next: DVector::zeros(nv),
            q_next: DVector::zeros(nq),
            warm: DVector::zeros(0),
            actuation: world.actuation_workspace(),
        };
        Self {
            q: world.q0.clone(),
            v: world.v0.clone(),
            mass: MassLtdl::new(&world.model),
            poses: vec![Isometry3::identity(); world.objects.len()],
            previous: PairForces::default(),
            assembly: ContactAssembly::new(nv),
            contacts: Vec::new(),
            states: Vec::new(),
            detector,
            placements,
            pair_names: HashMap::default(),
            data,
            world,
            solver,
            params,
            forces,
            metrics: StepMetrics::default(),
            step: 0,
            buffers,
            problem: None,
            lambda: DVector::zeros(0),
            outcome: SolveOutcome {
                iterations: 0,
                status: None,
            },
            timings: StageTimings::default(),
            collision: DetectionOutcomes::default(),
            placements_at_q: false,
            added_torque: None,
            placements_at_step_start: false,
            derivative_buffers: None,
        }
    }

    /// Chooses the metrics of recorded steps (default [`StepMetrics::All`]).
    pub fn set_metrics(&mut self, metrics: StepMetrics) {
        self.metrics = metrics;
    }

    /// Chooses the form of the contact problem's Delassus operator (default
    /// [`DelassusForm::Auto`]: dense for a few contacts, factorized for many).
    pub fn set_delassus_form(&mut self, form: DelassusForm) {
        self.assembly.set_form(form);
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Current time (s).
    pub fn time(&self) -> f64 {
        self.step as f64 * self.params.dt
    }

    /// Current configuration (`nq`) and velocity (`nv`).
    pub fn state(&self) -> (&DVector<f64>, &DVector<f64>) {
        (&self.q, &self.v)
    }

    /// The contact problem of the last step, the solver's `λ` and whether it converged
    /// (`None` before the first step or when the last step had no contact).
    pub fn last_solution(&self) -> Option<(&ContactProblem, &DVector<f64>, bool)> {
        let converged = self
            .outcome
            .status
            .as_ref()
            .is_some_and(SolveStatus::is_converged);
        self.problem.as_ref().map(|p| (p, &self.lambda, converged))
    }

    /// The trot controller's state (its last stance QP), when the world walks.
    pub fn trot_state(&self) -> Option<&TrotState> {
        self.buffers.actuation.trot.as_ref()
    }

    /// What the narrow phase did at the last step (queries that hit an iteration cap).
    pub fn collision_outcomes(&self) -> DetectionOutcomes {
        self.collision
    }

    /// The record of the current state, nothing solved (step 0).
    pub fn initial_record(&mut self) -> Result<StepRecord, StepError> {
        let energy = self.energy(0)?;
        Ok(StepRecord {
            step: 0,
            time: 0.0,
            q: self.q.clone(),
            v: self.v.clone(),
            base_position: self.world.base_position(&self.q),
            contacts: Vec::new(),
            metrics: None,
            energy,
            iterations: 0,
            status: "initial state".into(),
            solver_status: None,
            converged: true,
            collision_failures: 0,
            timings: StageTimings::default(),
            task: self.buffers.actuation.trot.as_ref().map(|t| t.record),
        })
    }

    fn energy(&mut self, step: usize) -> Result<MechanicalEnergy, StepError> {
        let (kinetic, potential) =
            dynamics::mechanical_energy(&self.world.model, &mut self.data, &self.q, &self.v)
                .map_err(|source| StepError::Dynamics { step, source })?;
        self.placements_at_q = true;
        self.placements_at_step_start = false;
        Ok(MechanicalEnergy { kinetic, potential })
    }

    /// Takes one step and returns its record (metrics as set by
    /// [`Simulator::set_metrics`], energy after the step).
    pub fn step(&mut self) -> Result<StepRecord, StepError> {
        self.take_step(self.metrics == StepMetrics::All)?;
        let clock = Instant::now();
        let mut record = self.record()?;
        self.timings.integration += clock.elapsed().as_secs_f64();
        record.timings = self.timings;
        Ok(record)
    }

    /// Takes one step without recording it (no metric, no energy): the steady-state path,
    /// which allocates nothing once the buffers have grown (the solver's report aside).
    /// Never inlined, so that `tools/callgrind_step.sh` can collect inside it.
    #[inline(never)]
    pub fn advance(&mut self) -> Result<StepSummary, StepError> {
        self.take_step(false)?;
        Ok(StepSummary {
            contacts: self.contacts.len(),
            iterations: self.outcome.iterations,
            converged: self
                .outcome
                .status
                .as_ref()
                .is_none_or(SolveStatus::is_converged),
            timings: self.timings,
            collision: self.collision,
        })
    }

    /// The stages of the module docs; `attach_jacobian` lends `J` to the problem (for the
    /// internal-force metric).
    #[inline(never)]
    fn take_step(&mut self, attach_jacobian: bool) -> Result<(), StepError> {
        let step = self.step + 1;
        let dynamics_error = |source| StepError::Dynamics { step, source };
        let mut timings = StageTimings::default();

        let clock = Instant::now();
        self.dynamics_stage().map_err(dynamics_error)?;
        timings.dynamics = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        if let Some(problem) = self.problem.take() {
            self.assembly.recycle(problem);
        }
        self.collision_stage(step)?;
        timings.collision = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        self.assembly_stage(step, attach_jacobian)?;
        timings.assembly = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        self.solve_stage(step)?;
        timings.solve = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        self.integration_stage(step)?;
        timings.integration = clock.elapsed().as_secs_f64();
        self.timings = timings;
        Ok(())
    }

    /// The factor of `M(q)` (`M` itself is never formed), and the generalized force
    /// `τ + J_extᵀ f_ext − C(q, v) v − g(q)` into `buffers.generalized_force`; the joint
    /// placements at `q` are those of the last record's energy when there was one (the
    /// same function of `q`, computed once).
    #[inline(never)]
    fn dynamics_stage(&mut self) -> Result<(), DynamicsError> {
        let model = &self.world.model;
        let (data, factor) = (&mut self.data, &mut self.mass);
        if self.placements_at_q {
            factorized_mass_and_bias_at_placements(model, data, &self.v, None, factor)?;
        } else {
            dynamics::factorized_mass_and_bias(model, data, &self.q, &self.v, None, factor)?;
        }
        self.placements_at_step_start = true;
        let b = &mut self.buffers;
        self.world.actuation(
            self.step,
            self.params.dt,
            &self.q,
            &self.v,
            &self.data,
            &mut self.mass,
            &mut b.actuation,
            &mut b.tau,
        )?;
        b.generalized_force.copy_from(&b.tau);
        b.generalized_force -= &self.data.tau;
        if let Some(added) = &self.added_torque {
            b.generalized_force += added;
        }
        let t = self.step as f64 * self.params.dt;
        self.world
            .add_external_forces(&self.data, &self.forces, t, &mut b.generalized_force)
    }

    /// Contacts of the allowed pairs, `J` and the contacts' supports.
    #[inline(never)]
    fn collision_stage(&mut self, step: usize) -> Result<(), StepError> {
        for &k in self.detector.objects() {
            let joint = self.world.objects[k].joint;
            self.poses[k] = self
                .data
                .joint_placement(joint)
                .compose(&self.placements[k])
                .to_isometry();
        }
        let settings = ContactSettings {
            margin: self.params.margin,
            ..Default::default()
        };
        self.detector
            .detect(&self.poses, &settings)
            .map_err(|source| StepError::Collision { step, source })?;
        let found = self.detector.contacts();
        self.collision = self.detector.outcomes();
        self.contacts.clear();
        for (pair, &p) in found.iter().zip(self.detector.contact_pairs()) {
            self.contacts.push(StepContact {
                pair: p,
                objects: (pair.a, pair.b),
                point: pair.contact.point(),
                distance: pair.contact.distance,
            });
        }
        self.assembly.begin(self.contacts.len());
        let model = &self.world.model;
        for (contact, pair) in self.contacts.iter().zip(found) {
            let frame = pair.contact.frame.matrix();
            let mut tops = [None; 2];
            for (k, (object, sign)) in [(contact.objects.1, 1.0), (contact.objects.0, -1.0)]
                .into_iter()
                .enumerate()
            {
                let joint = self.world.objects[object].joint;
                dynamics::add_point_jacobian_rows(
                    model,
                    &self.data,
                    joint,
                    &contact.point,
                    frame,
                    sign,
                    self.assembly.contact_rows_mut(),
                    0,
                )
                .map_err(|source| StepError::Dynamics { step, source })?;
                let j = &model.joints[joint];
                tops[k] = (j.nv() > 0).then(|| j.idx_v + j.nv() - 1);
            }
            self.assembly.push_support(&self.mass, &tops);
        }
        Ok(())
    }

    /// `v_f`, then `(G, g, μ, R)` (no problem without contact).
    #[inline(never)]
    fn assembly_stage(&mut self, step: usize, attach_jacobian: bool) -> Result<(), StepError> {
        let b = &mut self.buffers;
        free_velocity_change(
            &self.mass,
            &b.generalized_force,
            self.params.dt,
            &mut b.v_free,
        )
        .map_err(|source| StepError::Dynamics { step, source })?;
        b.v_free += &self.v;
        if self.contacts.is_empty() {
            return Ok(());
        }
        self.states.clear();
        for (i, c) in self.contacts.iter().enumerate() {
            let previous = self.previous.before(step, c.pair);
            self.states.push(ContactState {
                signed_distance: c.distance,
                normal_velocity: self.assembly.contact_velocity(i, &self.v).z,
                was_inactive: previous.is_none_or(|lambda| lambda.z <= 0.0),
                mu: self.world.friction,
            });
        }
        let problem = self
            .assembly
            .assemble(
                &self.mass,
                &self.buffers.v_free,
                &self.states,
                &self.params,
                attach_jacobian,
            )
            .map_err(|source| StepError::Problem { step, source })?;
        self.problem = Some(problem);
        Ok(())
    }

    /// The solver on the step's problem, warm-started from the contacts' previous `λ`.
    #[inline(never)]
    fn solve_stage(&mut self, step: usize) -> Result<(), StepError> {
        let Some(problem) = &self.problem else {
            self.lambda = DVector::zeros(0);
            self.outcome = SolveOutcome {
                iterations: 0,
                status: None,
            };
            return Ok(());
        };
        let warm = if self.params.warm_start {
            let warm = &mut self.buffers.warm;
            if warm.len() != problem.dim() {
                *warm = DVector::zeros(problem.dim());
            }
            for (i, c) in self.contacts.iter().enumerate() {
                let lambda = self
                    .previous
                    .before(step, c.pair)
                    .unwrap_or_else(Vector3::zeros);
                set_contact_vector(warm, i, &lambda);
            }
            Some(&*warm)
        } else {
            self.solver.reset();
            None
        };
        let report = self
            .solver
            .solve(problem, warm)
            .map_err(|source| StepError::Solver { step, source })?;
        if !report.lambda.iter().all(|x| x.is_finite()) {
            return Err(StepError::NonFinite {
                step,
                what: "the solver's lambda",
            });
        }
        self.lambda = report.lambda;
        self.outcome = SolveOutcome {
            iterations: report.iterations,
            status: Some(report.status),
        };
        Ok(())
    }

    /// `v⁺ = v_f + M⁻¹Jᵀλ`, `q⁺ = q ⊕ v⁺ Δt`; each pair keeps its `λ`.
    #[inline(never)]
    fn integration_stage(&mut self, step: usize) -> Result<(), StepError> {
        let dynamics_error = |source| StepError::Dynamics { step, source };
        let b = &mut self.buffers;
        if self.problem.is_some() {
            self.assembly
                .velocity_change(&self.mass, &self.lambda, &mut b.v_next)
                .map_err(dynamics_error)?;
            b.v_next += &b.v_free;
        } else {
            b.v_next.copy_from(&b.v_free);
        }
        dynamics::integrate_into(
            &self.world.model,
            &self.q,
            &b.v_next,
            self.params.dt,
            &mut b.q_next,
        )
        .map_err(dynamics_error)?;
        if !(b.q_next.iter().all(|x| x.is_finite()) && b.v_next.iter().all(|x| x.is_finite())) {
            return Err(StepError::NonFinite {
                step,
                what: "the state",
            });
        }
        self.previous.record(step, &self.contacts, &self.lambda);
        std::mem::swap(&mut self.q, &mut b.q_next);
        self.placements_at_q = false;
        std::mem::swap(&mut self.v, &mut b.v_next);
        self.step = step;
        Ok(())
    }

    /// The record of the step just taken: state, contacts, metrics, energy.
    fn record(&mut self) -> Result<StepRecord, StepError> {
        let energy = self.energy(self.step)?;
        let (contacts, metrics) = match &self.problem {
            Some(problem) => {
                // One `c = (G + R) λ + g` for the metrics and the contacts' velocities.
                let c = problem.velocity(&self.lambda);
                let metrics = match self.metrics {
                    StepMetrics::All => Some(compute_model_metrics_at_velocity(
                        problem,
                        &self.lambda,
                        &c,
                        self.solver.model(),
                    )),
                    StepMetrics::WithoutInternalForces => {
                        Some(compute_metrics_at_velocity(problem, &self.lambda, &c))
                    }
                    StepMetrics::None => None,
                };
                self.name_touching_pairs();
                (self.contact_records(&c), metrics)
            }
            None => (Vec::new(), None),
        };
        let (status, converged) = match &self.outcome.status {
            Some(status) => (status.to_string(), status.is_converged()),
            None => ("no contact".to_string(), true),
        };
        Ok(StepRecord {
            step: self.step,
            time: self.time(),
            q: self.q.clone(),
            v: self.v.clone(),
            base_position: self.world.base_position(&self.q),
            contacts,
            metrics,
            energy,
            iterations: self.outcome.iterations,
            status,
            solver_status: self.outcome.status.clone(),
            converged,
            collision_failures: self.collision.not_converged(),
            timings: self.timings,
            task: self.buffers.actuation.trot.as_ref().map(|t| t.record),
        })
    }

    /// Forms the `A|B` name of each contact's pair of objects at the pair's first contact
    /// and keeps it (names for every allowed pair would grow with the square of the
    /// objects; forming them anew each step costs a formatting per contact and step).
    fn name_touching_pairs(&mut self) {
        let objects = &self.world.objects;
        for contact in &self.contacts {
            let (a, b) = contact.objects;
            self.pair_names
                .entry((a, b))
                .or_insert_with(|| format!("{}|{}", objects[a].name, objects[b].name));
        }
    }

    /// Per-contact records of the last step (design.md §5), `c` its contact velocities.
    fn contact_records(&self, c: &DVector<f64>) -> Vec<ContactRecord> {
        self.contacts
            .iter()
            .enumerate()
            .map(|(i, contact)| ContactRecord {
                pair: self
                    .pair_names
                    .get(&contact.objects)
                    .cloned()
                    .unwrap_or_default(),
                point: contact.point.into(),
                signed_distance: contact.distance,
                lambda: contact_vector(&self.lambda, i).into(),
                velocity: contact_vector(c, i).into(),
            })
            .collect()
    }
}
