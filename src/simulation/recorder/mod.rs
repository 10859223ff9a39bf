//! Recording of a run, per step: state, contacts and forces, the metrics of design.md §5,
//! energy, iterations, solver status and wall times. Written as CSV (one row per step,
//! `steps.csv`; one row per contact and step, `contacts.csv`) plus a JSON summary
//! (`summary.json`).
//!
//! Runs are streamed: a [`Recorder`] receives each step as it is computed, and
//! [`RunWriter`] writes it to disk at once and keeps only the running summary
//! ([`SummaryBuilder`], bounded memory whatever the duration). [`RunRecord`] keeps every
//! step in memory, for tests and short runs, and writes the same files through the same
//! writer.
//!
//! Numbers are written in Rust's shortest round-trip form, in scientific notation below
//! 1e-4 and from 1e16 on (`-6.938893903907228e-18`, not `-0.0000…06938893903907228`);
//! column names carry their unit (`time_s`, `solve_time_s`, `lambda_n_N_s`); an empty
//! cell means "no value" (the metrics of a step without contact).

mod error;
mod files;
mod summary;

pub use error::RecordError;
pub use files::{
    contact_cells, contact_column_names, fmt_f64, read_columns, read_json, step_cells,
    step_column_names, write_json, Cell, RunWriter,
};
pub use summary::{status_tag, Histogram, RunSummary, SeriesStats, SummaryBuilder};

use std::path::Path;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use crate::metrics::energy::MechanicalEnergy;
use crate::metrics::ProblemMetrics;
use crate::solvers::SolveStatus;

/// Column names of `steps.csv` and `contacts.csv`, with their units; the metric columns
/// are [`ProblemMetrics::COLUMNS`].
pub mod columns {
    /// Step index (0 = initial state).
    pub const STEP: &str = "step";
    /// Time after the step (s).
    pub const TIME: &str = "time_s";
    /// Base position (m, world).
    pub const BASE: [&str; 3] = ["base_x_m", "base_y_m", "base_z_m"];
    /// Number of contacts of the step.
    pub const NUM_CONTACTS: &str = "num_contacts";
    /// Kinetic energy (J).
    pub const KINETIC_ENERGY: &str = "kinetic_energy_J";
    /// Potential energy (J).
    pub const POTENTIAL_ENERGY: &str = "potential_energy_J";
    /// Mechanical energy (J).
    pub const MECHANICAL_ENERGY: &str = "mechanical_energy_J";
    /// Analytical mechanical energy (J), empty when the scenario has none.
    pub const ANALYTICAL_ENERGY: &str = "analytical_energy_J";
    /// Solver iterations.
    pub const ITERATIONS: &str = "iterations";
    /// Wall time of the stages (s).
    pub const STAGE_TIMES: [&str; 5] = [
        "dynamics_time_s",
        "collision_time_s",
        "assembly_time_s",
        "solve_time_s",
        "integration_time_s",
    ];
    /// Solver wall time (s).
    pub const SOLVE_TIME: &str = "solve_time_s";
    /// Whole-step wall time (s).
    pub const STEP_TIME: &str = "step_time_s";
    /// 1 when the solver converged (or there was no contact), else 0.
    pub const CONVERGED: &str = "converged";
    /// The solver status's serde tag (`converged`, `max_iterations`, …), empty without
    /// contact.
    pub const SOLVER_STATUS: &str = "solver_status";
    /// Collision queries of the step that hit their iteration cap.
    pub const COLLISION_FAILURES: &str = "collision_failures";
    /// A walking task's columns (after `status`, only for runs with a trot controller):
    /// target and actual base velocity (m/s, world), distance from the start (m), fallen
    /// (base out of its height or tilt band, 0/1, kept once set), force QP solved (0/1)
    /// and its wall time (s).
    pub const TASK: [&str; 8] = [
        "target_vx_m_s",
        "target_vy_m_s",
        "base_vx_m_s",
        "base_vy_m_s",
        "distance_m",
        "fallen",
        "controller_qp_solved",
        "controller_qp_time_s",
    ];
    /// The status in words.
    pub const STATUS: &str = "status";
    /// `contacts.csv`: index of the contact within its step.
    pub const CONTACT: &str = "contact";
    /// `contacts.csv`: the geometry pair `A|B`.
    pub const PAIR: &str = "pair";
    /// `contacts.csv`: contact point (m, world).
    pub const POINT: [&str; 3] = ["x_m", "y_m", "z_m"];
    /// `contacts.csv`: signed distance (m).
    pub const SIGNED_DISTANCE: &str = "signed_distance_m";
    /// `contacts.csv`: impulse `λ` (N·s, contact frame `[t1, t2, n]`).
    pub const LAMBDA: [&str; 3] = ["lambda_t1_N_s", "lambda_t2_N_s", "lambda_n_N_s"];
    /// `contacts.csv`: contact velocity `c` (m/s, contact frame).
    pub const VELOCITY: [&str; 3] = ["c_t1_m_per_s", "c_t2_m_per_s", "c_n_m_per_s"];
}

/// Wall time (s) of each stage of a step, in pipeline order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimings {
    /// Kinematics, mass matrix and nonlinear effects.
    pub dynamics: f64,
    /// Collision detection and contact Jacobians.
    pub collision: f64,
    /// Assembly of `G` and `g`.
    pub assembly: f64,
    /// The contact solver.
    pub solve: f64,
    /// Velocity update, integration and metrics.
    pub integration: f64,
}

impl StageTimings {
    /// The whole step (s).
    pub fn total(&self) -> f64 {
        self.dynamics + self.collision + self.assembly + self.solve + self.integration
    }
}

/// One contact at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactRecord {
    /// The geometry pair, `A|B`.
    pub pair: String,
    /// Contact point (m, world).
    pub point: [f64; 3],
    /// Signed distance (m).
    pub signed_distance: f64,
    /// Impulse `λ = (λ_T1, λ_T2, λ_N)` (N·s, contact frame).
    pub lambda: [f64; 3],
    /// Contact velocity `c = (G + R)λ + g` (m/s, contact frame).
    pub velocity: [f64; 3],
}

/// One step of a run: the state after the step and what the step computed.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// Step index (0 is the initial state, nothing solved).
    pub step: usize,
    /// Time (s) after the step.
    pub time: f64,
    /// Configuration `q` after the step (`nq`).
    pub q: DVector<f64>,
    /// Velocity `v` after the step (`nv`).
    pub v: DVector<f64>,
    /// Base (or first body) position (m, world).
    pub base_position: [f64; 3],
    /// Contacts of the step, with their forces.
    pub contacts: Vec<ContactRecord>,
    /// Contact metrics of the step's answer; `None` without contacts and when the run's
    /// `step_metrics` is `none` (never zeros for "not computed").
    pub metrics: Option<ProblemMetrics>,
    /// Mechanical energy after the step.
    pub energy: MechanicalEnergy,
    /// Solver iterations.
    pub iterations: usize,
    /// Solver status in words (`converged`, `max iterations reached`, `no contact`).
    pub status: String,
    /// The solver's status, when a problem was solved.
    pub solver_status: Option<SolveStatus>,
    /// True when the solver converged (or there was no contact).
    pub converged: bool,
    /// Collision queries of the step that hit their iteration cap (GJK/EPA).
    pub collision_failures: usize,
    /// Wall time per stage.
    pub timings: StageTimings,
    /// The walking controller's last tick, when the scenario walks.
    pub task: Option<crate::simulation::locomotion::TrotRecord>,
}

/// What is known of a run before its first step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunHeader {
    /// Scenario name.
    pub scenario: String,
    /// Solver specification text.
    pub solver: String,
    /// Time step (s).
    pub dt: f64,
    /// Names of the configuration coordinates (`nq`).
    pub q_names: Vec<String>,
    /// Names of the velocity coordinates (`nv`).
    pub v_names: Vec<String>,
    /// The run has a walking task (its columns, [`columns::TASK`]).
    pub task: bool,
    /// The scenario file and overrides the run was made from.
    pub origin: Option<ScenarioOrigin>,
}

/// Where a run's scenario came from: reloading `file` with `overrides` gives the world the
/// run simulated (`contactbench view RUN`, `contactbench.export_rerun`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioOrigin {
    /// The scenario file, absolute.
    pub file: std::path::PathBuf,
    /// The `path=value` overrides applied to it, in order.
    pub overrides: Vec<String>,
}

/// Where a run's steps go as they are computed.
pub trait Recorder {
    /// Called once, before the first step.
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError>;
    /// Called for every step, the initial state (step 0) first, with the analytical
    /// mechanical energy at its time when the scenario has one.
    fn record(
        &mut self,
        step: &StepRecord,
        analytical_energy: Option<f64>,
    ) -> Result<(), RecordError>;
    /// Called after the last step with what the run noticed without stopping (a body
    /// below the ground); recorders without a summary ignore it.
    fn warn(&mut self, warning: &str) -> Result<(), RecordError> {
        let _ = warning;
        Ok(())
    }
}

/// A whole run of one scenario with one solver, in memory (tests, short runs).
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    /// Scenario name.
    pub scenario: String,
    /// Solver specification text.
    pub solver: String,
    /// Time step (s).
    pub dt: f64,
    /// Names of the configuration coordinates (`nq`).
    pub q_names: Vec<String>,
    /// Names of the velocity coordinates (`nv`).
    pub v_names: Vec<String>,
    /// The run has a walking task.
    pub task: bool,
    /// The scenario file and overrides the run was made from.
    pub origin: Option<ScenarioOrigin>,
    /// The steps, from the initial state on.
    pub steps: Vec<StepRecord>,
    /// Why the run stopped early, if it did.
    pub failure: Option<String>,
    /// Analytical mechanical energy at each step's time, when the scenario has one (J).
    pub analytical_energy: Option<Vec<f64>>,
    /// What the run noticed without stopping.
    pub warnings: Vec<String>,
}

impl Recorder for RunRecord {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.scenario = header.scenario;
        self.solver = header.solver;
        self.dt = header.dt;
        self.q_names = header.q_names;
        self.v_names = header.v_names;
        self.task = header.task;
        self.origin = header.origin;
        Ok(())
    }

    fn record(&mut self, step: &StepRecord, analytical: Option<f64>) -> Result<(), RecordError> {
        self.steps.push(step.clone());
        if let Some(e) = analytical {
            self.analytical_energy.get_or_insert_with(Vec::new).push(e);
        }
        Ok(())
    }

    fn warn(&mut self, warning: &str) -> Result<(), RecordError> {
        self.warnings.push(warning.to_string());
        Ok(())
    }
}

impl RunRecord {
    /// The header of this record.
    pub fn header(&self) -> RunHeader {
        RunHeader {
            scenario: self.scenario.clone(),
            solver: self.solver.clone(),
            dt: self.dt,
            q_names: self.q_names.clone(),
            v_names: self.v_names.clone(),
            task: self.task,
            origin: self.origin.clone(),
        }
    }

    /// Feeds this record to another recorder; returns its failure.
    pub fn replay(&self, recorder: &mut dyn Recorder) -> Result<Option<String>, RecordError> {
        recorder.start(self.header())?;
        for (k, step) in self.steps.iter().enumerate() {
            let analytical = self
                .analytical_energy
                .as_ref()
                .and_then(|a| a.get(k))
                .copied();
            recorder.record(step, analytical)?;
        }
        for warning in &self.warnings {
            recorder.warn(warning)?;
        }
        Ok(self.failure.clone())
    }

    /// The JSON summary.
    pub fn summary(&self) -> RunSummary {
        let mut builder = SummaryBuilder::new(self.header());
        for step in &self.steps {
            builder.add(step);
        }
        for warning in &self.warnings {
            builder.warn(warning);
        }
        builder.finish(self.failure.clone())
    }

    /// Writes `steps.csv`, `contacts.csv` and `summary.json` into `dir` (created).
    pub fn write(&self, dir: &Path) -> Result<RunSummary, RecordError> {
        let mut writer = RunWriter::create(dir)?;
        let failure = self.replay(&mut writer)?;
        writer.finish(&self.header(), failure)
    }
}
