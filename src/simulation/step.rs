//! One time step in pipeline order (design.md §1), with a wall-clock timer per stage:
//!
//! 1. dynamics: kinematics, `M(q)` and its Cholesky factor, the generalized force
//!    `τ + J_extᵀ f_ext − nle(q, v)` (one RNEA with external forces);
//! 2. collision: contacts of the allowed pairs within the margin, their frames and the
//!    Jacobian rows `R_iᵀ (J_B(p_i) − J_A(p_i))`;
//! 3. assembly: `v_f`, then `G`, `g` with the Baumgarte/restitution bias and compliance
//!    ([`crate::problem::build`]);
//! 4. solve: the contact solver, warm-started with the previous `λ` of the contacts
//!    matched by pair of collision objects (same bodies, same geometries), or cold (from
//!    `λ = 0`, solver reset) when `warm_start` is off;
//! 5. integration: `v⁺ = v_f + M⁻¹Jᵀλ`, `q⁺ = q ⊕ v⁺ Δt`, metrics and energy.

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::{DMatrix, DVector, Vector3};
use thiserror::Error;

use super::params::StepParameters;
use super::recorder::{ContactRecord, StageTimings, StepRecord};
use super::world::World;
use crate::collision::{detect_contacts, CollisionError, ContactSettings};
use crate::dynamics::{self, Data, DynamicsError, MassCholesky};
use crate::metrics::compute_model_metrics;
use crate::metrics::energy::MechanicalEnergy;
use crate::metrics::ProblemMetrics;
use crate::problem::build::{assemble, free_velocity, AssembledProblem, ContactState};
use crate::problem::{contact_vector, set_contact_vector, ContactProblem, ProblemError};
use crate::solvers::{ContactModel, ContactSolver, SolveStatus, SolverError};

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

/// A contact of the current step, before solving.
#[derive(Debug, Clone)]
struct StepContact {
    key: (usize, usize),
    point: Vector3<f64>,
    distance: f64,
}

/// A world being simulated with one solver.
pub struct Simulator {
    world: World,
    data: Data,
    solver: Box<dyn ContactSolver>,
    params: StepParameters,
    forces: Vec<super::scenario::ExternalForce>,
    q: DVector<f64>,
    v: DVector<f64>,
    step: usize,
    previous: HashMap<(usize, usize), Vector3<f64>>,
    last_solution: Option<(ContactProblem, DVector<f64>, bool)>,
}

impl Simulator {
    /// A simulator at the world's initial state.
    pub fn new(
        world: World,
        solver: Box<dyn ContactSolver>,
        params: StepParameters,
        forces: Vec<super::scenario::ExternalForce>,
    ) -> Self {
        let data = Data::new(&world.model);
        Self {
            q: world.q0.clone(),
            v: world.v0.clone(),
            data,
            world,
            solver,
            params,
            forces,
            step: 0,
            previous: HashMap::new(),
            last_solution: None,
        }
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Current time (s).
    pub fn time(&self) -> f64 {
        self.step as f64 * self.params.dt
    }

    /// The contact problem of the last step, the solver's `λ` and whether it converged
    /// (`None` before the first step or when the last step had no contact).
    pub fn last_solution(&self) -> Option<(&ContactProblem, &DVector<f64>, bool)> {
        self.last_solution
            .as_ref()
            .map(|(p, l, converged)| (p, l, *converged))
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
            metrics: ProblemMetrics::default(),
            energy,
            iterations: 0,
            status: "initial state".into(),
            solver_status: None,
            converged: true,
            collision_failures: 0,
            timings: StageTimings::default(),
        })
    }

    fn energy(&mut self, step: usize) -> Result<MechanicalEnergy, StepError> {
        let dynamics_error = |source| StepError::Dynamics { step, source };
        let model = &self.world.model;
        Ok(MechanicalEnergy {
            kinetic: dynamics::kinetic_energy(model, &mut self.data, &self.q, &self.v)
                .map_err(dynamics_error)?,
            potential: dynamics::potential_energy(model, &mut self.data, &self.q)
                .map_err(dynamics_error)?,
        })
    }

    /// Takes one step and returns its record.
    pub fn step(&mut self) -> Result<StepRecord, StepError> {
        let step = self.step + 1;
        let t = self.time();
        let dynamics_error = |source| StepError::Dynamics { step, source };
        let mut timings = StageTimings::default();

        let clock = Instant::now();
        let (mass, generalized_force) = self.dynamics_stage(t).map_err(dynamics_error)?;
        timings.dynamics = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        let (contacts, jacobian) = self.collision_stage(step)?;
        timings.collision = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        let v_free = free_velocity(&mass, &self.v, &generalized_force, self.params.dt)
            .map_err(dynamics_error)?;
        let assembled = self.assembly_stage(step, &contacts, &jacobian, &mass, &v_free)?;
        timings.assembly = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        let (lambda, iterations, solver_status) = match &assembled {
            Some(a) => self.solve_stage(step, &contacts, &a.problem)?,
            None => (DVector::zeros(0), 0, None),
        };
        let converged = solver_status.as_ref().is_none_or(SolveStatus::is_converged);
        let status = solver_status
            .as_ref()
            .map_or_else(|| "no contact".to_string(), ToString::to_string);
        timings.solve = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        let v_next = match &assembled {
            Some(a) => &v_free + &a.minv_jt * &lambda,
            None => v_free,
        };
        let q_next = dynamics::integrate(&self.world.model, &self.q, &v_next, self.params.dt)
            .map_err(dynamics_error)?;
        if !(q_next.iter().all(|x| x.is_finite()) && v_next.iter().all(|x| x.is_finite())) {
            return Err(StepError::NonFinite {
                step,
                what: "the state",
            });
        }
        let (records, metrics) = match &assembled {
            Some(a) => contact_records(
                &self.world,
                &contacts,
                &a.problem,
                &lambda,
                self.solver.model(),
            ),
            None => (Vec::new(), ProblemMetrics::default()),
        };
        self.previous = contacts
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key, contact_vector(&lambda, i)))
            .collect();
        self.last_solution = assembled.map(|a| (a.problem, lambda, converged));
        self.q = q_next;
        self.v = v_next;
        self.step = step;
        let energy = self.energy(step)?;
        timings.integration = clock.elapsed().as_secs_f64();
        Ok(StepRecord {
            step,
            time: self.time(),
            q: self.q.clone(),
            v: self.v.clone(),
            base_position: self.world.base_position(&self.q),
            contacts: records,
            metrics,
            energy,
            iterations,
            status,
            solver_status,
            converged,
            collision_failures: 0,
            timings,
        })
    }

    /// `M(q)` factorized and `τ + J_extᵀ f_ext − nle(q, v)` (as `τ − RNEA(q, v, 0, f_ext)`).
    fn dynamics_stage(&mut self, t: f64) -> Result<(MassCholesky, DVector<f64>), DynamicsError> {
        let model = &self.world.model;
        dynamics::forward_kinematics(model, &mut self.data, &self.q)?;
        let mass = MassCholesky::new(dynamics::crba(model, &mut self.data, &self.q)?)?;
        let tau = self.world.actuation(&self.q, &self.v, &mass)?;
        let forces: Vec<[f64; 3]> = self.forces.iter().map(|f| f.at(t)).collect();
        let fext = self.world.external_wrenches(&self.data, &forces);
        let zero = DVector::zeros(model.nv());
        let inverse = dynamics::rnea(model, &mut self.data, &self.q, &self.v, &zero, Some(&fext))?;
        Ok((mass, tau - inverse))
    }

    /// Contacts and the Jacobian `J` (`3n × nv`), rows `[t1, t2, n]` per contact.
    fn collision_stage(&self, step: usize) -> Result<(Vec<StepContact>, DMatrix<f64>), StepError> {
        let objects = self.world.placed_objects(&self.data);
        let settings = ContactSettings {
            margin: self.params.margin,
            ..Default::default()
        };
        let pairs = detect_contacts(&objects, &self.world.filter, &settings)
            .map_err(|source| StepError::Collision { step, source })?;
        let nv = self.world.model.nv();
        let mut jacobian = DMatrix::zeros(3 * pairs.len(), nv);
        let mut contacts = Vec::with_capacity(pairs.len());
        for (i, pair) in pairs.iter().enumerate() {
            let p = pair.contact.point();
            let joint_a = self.world.objects[pair.a].joint;
            let joint_b = self.world.objects[pair.b].joint;
            let relative = self
                .point_jacobian(joint_b, &p)
                .and_then(|jb| Ok(jb - self.point_jacobian(joint_a, &p)?))
                .map_err(|source| StepError::Dynamics { step, source })?;
            let rows = pair.contact.frame.matrix().transpose() * relative;
            jacobian.rows_mut(3 * i, 3).copy_from(&rows);
            contacts.push(StepContact {
                key: (pair.a, pair.b),
                point: p,
                distance: pair.contact.distance,
            });
        }
        Ok((contacts, jacobian))
    }

    /// World-aligned Jacobian (`3 × nv`) of a point fixed on `joint`'s body (zero for the
    /// world).
    fn point_jacobian(
        &self,
        joint: usize,
        p: &Vector3<f64>,
    ) -> Result<DMatrix<f64>, DynamicsError> {
        let nv = self.world.model.nv();
        if joint == 0 {
            return Ok(DMatrix::zeros(3, nv));
        }
        let j = dynamics::point_jacobian_world(&self.world.model, &self.data, joint, p)?;
        Ok(DMatrix::from_iterator(3, nv, j.iter().copied()))
    }

    fn assembly_stage(
        &self,
        step: usize,
        contacts: &[StepContact],
        jacobian: &DMatrix<f64>,
        mass: &MassCholesky,
        v_free: &DVector<f64>,
    ) -> Result<Option<AssembledProblem>, StepError> {
        if contacts.is_empty() {
            return Ok(None);
        }
        let velocity_before = jacobian * &self.v;
        let states: Vec<ContactState> = contacts
            .iter()
            .enumerate()
            .map(|(i, c)| ContactState {
                signed_distance: c.distance,
                normal_velocity: velocity_before[3 * i + 2],
                was_inactive: self.previous.get(&c.key).is_none_or(|l| l.z <= 0.0),
                mu: self.world.friction,
            })
            .collect();
        assemble(jacobian, mass, v_free, &states, &self.params)
            .map(Some)
            .map_err(|source| StepError::Problem { step, source })
    }

    fn solve_stage(
        &mut self,
        step: usize,
        contacts: &[StepContact],
        problem: &ContactProblem,
    ) -> Result<(DVector<f64>, usize, Option<SolveStatus>), StepError> {
        let warm = if self.params.warm_start {
            let mut warm = DVector::zeros(problem.dim());
            for (i, c) in contacts.iter().enumerate() {
                if let Some(previous) = self.previous.get(&c.key) {
                    set_contact_vector(&mut warm, i, previous);
                }
            }
            Some(warm)
        } else {
            self.solver.reset();
            None
        };
        let report = self
            .solver
            .solve(problem, warm.as_ref())
            .map_err(|source| StepError::Solver { step, source })?;
        if !report.lambda.iter().all(|x| x.is_finite()) {
            return Err(StepError::NonFinite {
                step,
                what: "the solver's lambda",
            });
        }
        Ok((report.lambda, report.iterations, Some(report.status)))
    }
}

/// Per-contact records and the step's metrics (design.md §5).
fn contact_records(
    world: &World,
    contacts: &[StepContact],
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> (Vec<ContactRecord>, ProblemMetrics) {
    let m = compute_model_metrics(problem, lambda, model);
    let c = problem.velocity(lambda);
    let records = contacts
        .iter()
        .enumerate()
        .map(|(i, contact)| ContactRecord {
            pair: format!(
                "{}|{}",
                world.objects[contact.key.0].name, world.objects[contact.key.1].name
            ),
            point: contact.point.into(),
            signed_distance: contact.distance,
            lambda: contact_vector(lambda, i).into(),
            velocity: contact_vector(&c, i).into(),
        })
        .collect();
    (records, m)
}
