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

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use nalgebra::DVector;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::output::OutputError;
use crate::metrics::energy::MechanicalEnergy;
use crate::metrics::ProblemMetrics;
use crate::solvers::SolveStatus;

/// Why a record could not be written or read.
#[derive(Debug, Error)]
pub enum RecordError {
    /// File system error.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        error: std::io::Error,
    },
    /// CSV error.
    #[error("{path}: {error}")]
    Csv {
        /// The file.
        path: String,
        /// The error.
        error: csv::Error,
    },
    /// JSON error.
    #[error("{path}: {error}")]
    Json {
        /// The file.
        path: String,
        /// The error.
        error: serde_json::Error,
    },
    /// A value in a CSV file is not a number.
    #[error("{path}: row {row}, column {column}: '{value}' is not a number")]
    NotANumber {
        /// The file.
        path: String,
        /// Row (1-based, header excluded).
        row: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
    },
    /// A value in a CSV file is NaN or infinite (contactbench writes an empty cell for
    /// "no value", never NaN).
    #[error("{path}: row {row}, column {column}: '{value}' is not a finite number")]
    NotFinite {
        /// The file.
        path: String,
        /// Row (1-based, header excluded).
        row: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
    },
    /// A results file is inconsistent (a manifest path outside the results, a run
    /// directory without its files).
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The output directory was refused, is locked, or the command was interrupted.
    #[error(transparent)]
    Output(#[from] OutputError),
}

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
    /// The steps, from the initial state on.
    pub steps: Vec<StepRecord>,
    /// Why the run stopped early, if it did.
    pub failure: Option<String>,
    /// Analytical mechanical energy at each step's time, when the scenario has one (J).
    pub analytical_energy: Option<Vec<f64>>,
}

impl Recorder for RunRecord {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.scenario = header.scenario;
        self.solver = header.solver;
        self.dt = header.dt;
        self.q_names = header.q_names;
        self.v_names = header.v_names;
        Ok(())
    }

    fn record(&mut self, step: &StepRecord, analytical: Option<f64>) -> Result<(), RecordError> {
        self.steps.push(step.clone());
        if let Some(e) = analytical {
            self.analytical_energy.get_or_insert_with(Vec::new).push(e);
        }
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
        Ok(self.failure.clone())
    }

    /// The JSON summary.
    pub fn summary(&self) -> RunSummary {
        let mut builder = SummaryBuilder::new(self.header());
        for step in &self.steps {
            builder.add(step);
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

/// Statistics of a series: median, mean, max.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesStats {
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Maximum.
    pub max: f64,
}

impl SeriesStats {
    /// Exact statistics of `values` (zeros when empty; NaN are ignored).
    pub fn of(values: impl Iterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = values.filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        Self {
            median,
            mean: v.iter().sum::<f64>() / n as f64,
            max: v[n - 1],
        }
    }
}

/// Running statistics in bounded memory: exact count, mean and max; the median from a
/// histogram, exact for integers ([`Histogram::exact`]) and within 0.05 % for positive
/// values ([`Histogram::relative`]: buckets of ratio 1.001 from 1e-12 on).
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    relative: bool,
    count: u64,
    sum: f64,
    max: f64,
    buckets: BTreeMap<i64, u64>,
}

/// Ratio between neighbouring buckets of a relative histogram.
const BUCKET_RATIO: f64 = 1.001;
/// Lower end of a relative histogram; smaller values share bucket `i64::MIN` (value 0).
const BUCKET_FLOOR: f64 = 1e-12;

impl Histogram {
    /// For integer values (iterations): one bucket per value.
    pub fn exact() -> Self {
        Self::default()
    }

    /// For positive real values (wall times): relative resolution 1e-3.
    pub fn relative() -> Self {
        Self {
            relative: true,
            ..Self::default()
        }
    }

    /// Adds a value (NaN is ignored).
    pub fn add(&mut self, x: f64) {
        if x.is_nan() {
            return;
        }
        self.max = if self.count == 0 { x } else { self.max.max(x) };
        self.count += 1;
        self.sum += x;
        *self.buckets.entry(self.bucket(x)).or_default() += 1;
    }

    fn bucket(&self, x: f64) -> i64 {
        if !self.relative {
            return x.round() as i64;
        }
        if x <= BUCKET_FLOOR {
            return i64::MIN;
        }
        ((x / BUCKET_FLOOR).ln() / BUCKET_RATIO.ln()).floor() as i64
    }

    fn value(&self, bucket: i64) -> f64 {
        match (self.relative, bucket) {
            (false, k) => k as f64,
            (true, i64::MIN) => 0.0,
            (true, k) => BUCKET_FLOOR * BUCKET_RATIO.powf(k as f64 + 0.5),
        }
    }

    /// The value of the `k`-th smallest element (0-based).
    fn nth(&self, k: u64) -> f64 {
        let mut seen = 0;
        for (&bucket, &n) in &self.buckets {
            seen += n;
            if seen > k {
                return self.value(bucket);
            }
        }
        self.max
    }

    /// Median, mean and max (zeros when empty).
    pub fn stats(&self) -> SeriesStats {
        if self.count == 0 {
            return SeriesStats::default();
        }
        let n = self.count;
        let median = if n % 2 == 1 {
            self.nth(n / 2)
        } else {
            0.5 * (self.nth(n / 2 - 1) + self.nth(n / 2))
        };
        SeriesStats {
            median,
            mean: self.sum / n as f64,
            max: self.max,
        }
    }
}

/// The JSON summary of a run (`summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Scenario name.
    pub scenario: String,
    /// Solver specification.
    pub solver: String,
    /// `completed` (every step's solver converged), `unconverged` (the run reached its
    /// end but some steps' solver did not converge: see `unconverged_steps`) or `failed`
    /// (the run stopped early: see `failure`).
    pub outcome: String,
    /// Why it failed, if it did.
    pub failure: Option<String>,
    /// Time step (s).
    pub dt: f64,
    /// Steps simulated.
    pub steps: usize,
    /// Simulated time reached (s).
    pub final_time: f64,
    /// Final configuration.
    pub final_q: Vec<f64>,
    /// Final base position (m).
    pub final_base_position: [f64; 3],
    /// Initial mechanical energy (J).
    pub initial_energy: f64,
    /// Final mechanical energy (J).
    pub final_energy: f64,
    /// Largest gain of mechanical energy over the initial one, `max_k E_k − E_0` (J).
    #[serde(default)]
    pub max_energy_gain: f64,
    /// Largest NCP criterion over the run (NaN if any step's was); `None` (JSON `null`)
    /// when some step with contacts did not compute its metrics (`step_metrics: none`).
    pub max_ncp_criterion: Option<f64>,
    /// Largest Signorini complementarity violation `|λ_N c_N|` over the run (`None` as
    /// above).
    pub max_signorini_violation: Option<f64>,
    /// Largest normal velocity into an obstacle over the run (m/s; `None` as above).
    pub max_penetration_velocity: Option<f64>,
    /// Steps whose solver did not converge.
    pub unconverged_steps: usize,
    /// Steps with contacts per solver status, by the status's serde tag (`converged`,
    /// `max_iterations`, …).
    #[serde(default)]
    pub solver_statuses: BTreeMap<String, usize>,
    /// Collision queries that hit their iteration cap, over the run.
    #[serde(default)]
    pub collision_failures: usize,
    /// Iterations per step with contacts.
    pub iterations: SeriesStats,
    /// Solver wall time per step with contacts (s).
    pub solve_time: SeriesStats,
    /// Whole-step wall time (s).
    pub step_time: SeriesStats,
    /// Largest number of contacts in a step.
    pub max_contacts: usize,
}

impl RunSummary {
    /// True unless the run stopped early.
    pub fn reached_end(&self) -> bool {
        self.outcome != "failed"
    }
}

/// The serde tag of a solver status (`converged`, `max_iterations`, `stalled`, …), read
/// from its serialized form so that it follows the status type.
pub fn status_tag(status: &SolveStatus) -> String {
    match serde_json::to_value(status) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(map)) => match map.get("status") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => map.keys().next().cloned().unwrap_or_default(),
        },
        _ => status.to_string(),
    }
}

/// Largest of two values, NaN if either is: a NaN residual is never hidden by a max.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// A run's summary, accumulated step by step in bounded memory.
#[derive(Debug, Clone)]
pub struct SummaryBuilder {
    header: RunHeader,
    records: usize,
    initial_energy: f64,
    last_time: f64,
    last_q: Vec<f64>,
    last_base: [f64; 3],
    last_energy: f64,
    max_energy_gain: f64,
    max_ncp: Option<f64>,
    max_signorini: Option<f64>,
    max_penetration: Option<f64>,
    unconverged: usize,
    statuses: BTreeMap<String, usize>,
    collision_failures: usize,
    iterations: Histogram,
    solve_time: Histogram,
    step_time: Histogram,
    max_contacts: usize,
}

impl SummaryBuilder {
    /// An empty summary for a run.
    pub fn new(header: RunHeader) -> Self {
        Self {
            header,
            records: 0,
            initial_energy: 0.0,
            last_time: 0.0,
            last_q: Vec::new(),
            last_base: [0.0; 3],
            last_energy: 0.0,
            max_energy_gain: 0.0,
            max_ncp: Some(0.0),
            max_signorini: Some(0.0),
            max_penetration: Some(0.0),
            unconverged: 0,
            statuses: BTreeMap::new(),
            collision_failures: 0,
            iterations: Histogram::exact(),
            solve_time: Histogram::relative(),
            step_time: Histogram::relative(),
            max_contacts: 0,
        }
    }

    /// Replaces the header (known once the world is built).
    pub fn set_header(&mut self, header: RunHeader) {
        self.header = header;
    }

    /// Adds one step (the initial state first).
    pub fn add(&mut self, s: &StepRecord) {
        let energy = s.energy.total();
        if self.records == 0 {
            self.initial_energy = energy;
        }
        self.records += 1;
        self.last_time = s.time;
        self.last_q.clear();
        self.last_q.extend(s.q.iter());
        self.last_base = s.base_position;
        self.last_energy = energy;
        self.max_energy_gain = nan_max(self.max_energy_gain, energy - self.initial_energy);
        self.max_contacts = self.max_contacts.max(s.contacts.len());
        self.collision_failures += s.collision_failures;
        if !s.converged {
            self.unconverged += 1;
        }
        if let Some(status) = &s.solver_status {
            *self.statuses.entry(status_tag(status)).or_default() += 1;
        }
        if s.step == 0 {
            return;
        }
        self.step_time.add(s.timings.total());
        if s.contacts.is_empty() {
            return;
        }
        let worst = |max: Option<f64>, value: Option<f64>| Some(nan_max(max?, value?));
        let m = s.metrics.as_ref();
        self.max_ncp = worst(self.max_ncp, m.map(|m| m.ncp_criterion));
        self.max_signorini = worst(
            self.max_signorini,
            m.map(|m| m.signorini_violation.complementarity),
        );
        self.max_penetration = worst(
            self.max_penetration,
            m.map(|m| m.signorini_violation.penetration_velocity),
        );
        self.iterations.add(s.iterations as f64);
        self.solve_time.add(s.timings.solve);
    }

    /// The summary of the steps added, with the run's failure if it stopped early.
    pub fn finish(&self, failure: Option<String>) -> RunSummary {
        let outcome = match (&failure, self.unconverged) {
            (Some(_), _) => "failed",
            (None, 0) => "completed",
            (None, _) => "unconverged",
        };
        RunSummary {
            scenario: self.header.scenario.clone(),
            solver: self.header.solver.clone(),
            outcome: outcome.into(),
            failure,
            dt: self.header.dt,
            steps: self.records.saturating_sub(1),
            final_time: self.last_time,
            final_q: self.last_q.clone(),
            final_base_position: self.last_base,
            initial_energy: self.initial_energy,
            final_energy: self.last_energy,
            max_energy_gain: self.max_energy_gain,
            max_ncp_criterion: self.max_ncp,
            max_signorini_violation: self.max_signorini,
            max_penetration_velocity: self.max_penetration,
            unconverged_steps: self.unconverged,
            solver_statuses: self.statuses.clone(),
            collision_failures: self.collision_failures,
            iterations: self.iterations.stats(),
            solve_time: self.solve_time.stats(),
            step_time: self.step_time.stats(),
            max_contacts: self.max_contacts,
        }
    }
}

/// A float in Rust's shortest round-trip form (`{:?}`: `0.1`, `1e-7`, `NaN`, `inf`).
pub fn fmt_f64(x: f64) -> String {
    format!("{x:?}")
}

/// Streams a run to `steps.csv` and `contacts.csv` as its steps come, then writes
/// `summary.json`: memory stays bounded whatever the number of steps.
pub struct RunWriter {
    dir: PathBuf,
    steps: Option<csv::Writer<File>>,
    contacts: Option<csv::Writer<File>>,
    builder: SummaryBuilder,
    started: bool,
}

impl RunWriter {
    /// Creates `dir` and opens its CSV files.
    pub fn create(dir: &Path) -> Result<Self, RecordError> {
        std::fs::create_dir_all(dir).map_err(|error| RecordError::Io {
            path: dir.display().to_string(),
            error,
        })?;
        Ok(Self {
            steps: Some(csv_writer(&dir.join("steps.csv"))?),
            contacts: Some(csv_writer(&dir.join("contacts.csv"))?),
            dir: dir.to_path_buf(),
            builder: SummaryBuilder::new(RunHeader::default()),
            started: false,
        })
    }

    fn csv_error(&self, file: &str, error: csv::Error) -> RecordError {
        RecordError::Csv {
            path: self.dir.join(file).display().to_string(),
            error,
        }
    }

    fn write_headers(&mut self, header: &RunHeader) -> Result<(), RecordError> {
        let names = step_column_names(header);
        let contact_names = contact_column_names();
        if let Some(w) = self.steps.as_mut() {
            let result = w.write_record(&names);
            result.map_err(|e| self.csv_error("steps.csv", e))?;
        }
        if let Some(w) = self.contacts.as_mut() {
            let result = w.write_record(&contact_names);
            result.map_err(|e| self.csv_error("contacts.csv", e))?;
        }
        self.started = true;
        Ok(())
    }

    /// Flushes the CSV files and writes `summary.json`; `header` is used when the run
    /// failed before its first step.
    pub fn finish(
        mut self,
        header: &RunHeader,
        failure: Option<String>,
    ) -> Result<RunSummary, RecordError> {
        if !self.started {
            self.builder.set_header(header.clone());
            self.write_headers(header)?;
        }
        for (file, writer) in [
            ("steps.csv", self.steps.take()),
            ("contacts.csv", self.contacts.take()),
        ] {
            if let Some(w) = writer {
                w.into_inner()
                    .map_err(|e| RecordError::Io {
                        path: self.dir.join(file).display().to_string(),
                        error: e.into_error(),
                    })?
                    .sync_all()
                    .map_err(|error| RecordError::Io {
                        path: self.dir.join(file).display().to_string(),
                        error,
                    })?;
            }
        }
        let summary = self.builder.finish(failure);
        write_json(&self.dir.join("summary.json"), &summary)?;
        Ok(summary)
    }
}

impl Recorder for RunWriter {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.write_headers(&header)?;
        self.builder.set_header(header);
        Ok(())
    }

    fn record(&mut self, s: &StepRecord, analytical: Option<f64>) -> Result<(), RecordError> {
        self.builder.add(s);
        let row: Vec<String> = step_cells(s, analytical).iter().map(Cell::to_csv).collect();
        if let Some(w) = self.steps.as_mut() {
            let result = w.write_record(&row);
            result.map_err(|e| self.csv_error("steps.csv", e))?;
        }
        for cells in contact_cells(s) {
            let row: Vec<String> = cells.iter().map(Cell::to_csv).collect();
            if let Some(w) = self.contacts.as_mut() {
                let result = w.write_record(&row);
                result.map_err(|e| self.csv_error("contacts.csv", e))?;
            }
        }
        Ok(())
    }
}

/// One cell of a record row: written to `steps.csv` / `contacts.csv` by [`RunWriter`],
/// turned into numpy columns by the Python package (one layout for both).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A count or an index.
    Int(i64),
    /// A number.
    Float(f64),
    /// A text (a pair's name, a status; may be empty).
    Text(String),
    /// A number that was not computed (an empty CSV cell, NaN in numpy).
    Absent,
}

impl Cell {
    /// The cell as written in a CSV file (floats short and round-tripping).
    pub fn to_csv(&self) -> String {
        match self {
            Cell::Int(i) => i.to_string(),
            Cell::Float(x) => fmt_f64(*x),
            Cell::Text(t) => t.clone(),
            Cell::Absent => String::new(),
        }
    }
}

/// The column names of `steps.csv` for a run.
pub fn step_column_names(header: &RunHeader) -> Vec<String> {
    let mut names: Vec<String> = vec![columns::STEP.into(), columns::TIME.into()];
    names.extend(columns::BASE.iter().map(|s| s.to_string()));
    names.extend(header.q_names.iter().map(|n| format!("q_{n}")));
    names.extend(header.v_names.iter().map(|n| format!("v_{n}")));
    names.push(columns::NUM_CONTACTS.into());
    names.extend(ProblemMetrics::COLUMNS.iter().map(|s| s.to_string()));
    names.extend(
        [
            columns::KINETIC_ENERGY,
            columns::POTENTIAL_ENERGY,
            columns::MECHANICAL_ENERGY,
            columns::ANALYTICAL_ENERGY,
            columns::ITERATIONS,
        ]
        .iter()
        .chain(columns::STAGE_TIMES.iter())
        .chain(&[
            columns::STEP_TIME,
            columns::CONVERGED,
            columns::SOLVER_STATUS,
            columns::COLLISION_FAILURES,
            columns::STATUS,
        ])
        .map(|s| s.to_string()),
    );
    names
}

/// The column names of `contacts.csv`.
pub fn contact_column_names() -> Vec<String> {
    let mut names = vec![
        columns::STEP,
        columns::TIME,
        columns::CONTACT,
        columns::PAIR,
    ];
    names.extend(columns::POINT);
    names.push(columns::SIGNED_DISTANCE);
    names.extend(columns::LAMBDA);
    names.extend(columns::VELOCITY);
    names.into_iter().map(str::to_string).collect()
}

/// The row of `steps.csv` for a step, in the order of [`step_column_names`]: a metric
/// not computed (no contact, or `step_metrics` without it) is [`Cell::Absent`].
pub fn step_cells(s: &StepRecord, analytical: Option<f64>) -> Vec<Cell> {
    let solved = !s.contacts.is_empty();
    let mut row = vec![Cell::Int(s.step as i64), Cell::Float(s.time)];
    row.extend(s.base_position.iter().map(|x| Cell::Float(*x)));
    row.extend(s.q.iter().map(|x| Cell::Float(*x)));
    row.extend(s.v.iter().map(|x| Cell::Float(*x)));
    row.push(Cell::Int(s.contacts.len() as i64));
    let values = s
        .metrics
        .as_ref()
        .map_or([None; ProblemMetrics::COLUMNS.len()], |m| {
            m.column_options()
        });
    row.extend(values.into_iter().map(|value| match value {
        Some(v) if solved => Cell::Float(v),
        _ => Cell::Absent,
    }));
    row.extend([s.energy.kinetic, s.energy.potential, s.energy.total()].map(Cell::Float));
    row.push(analytical.map_or(Cell::Absent, Cell::Float));
    row.push(Cell::Int(s.iterations as i64));
    let t = &s.timings;
    row.extend(
        [
            t.dynamics,
            t.collision,
            t.assembly,
            t.solve,
            t.integration,
            t.total(),
        ]
        .map(Cell::Float),
    );
    row.push(Cell::Int(i64::from(s.converged)));
    row.push(Cell::Text(
        s.solver_status
            .as_ref()
            .map_or_else(String::new, status_tag),
    ));
    row.push(Cell::Int(s.collision_failures as i64));
    row.push(Cell::Text(s.status.clone()));
    row
}

/// The rows of `contacts.csv` for a step, in the order of [`contact_column_names`].
pub fn contact_cells(s: &StepRecord) -> impl Iterator<Item = Vec<Cell>> + '_ {
    s.contacts.iter().enumerate().map(move |(i, c)| {
        let mut row = vec![
            Cell::Int(s.step as i64),
            Cell::Float(s.time),
            Cell::Int(i as i64),
            Cell::Text(c.pair.clone()),
        ];
        row.extend(c.point.iter().map(|x| Cell::Float(*x)));
        row.push(Cell::Float(c.signed_distance));
        row.extend(c.lambda.iter().map(|x| Cell::Float(*x)));
        row.extend(c.velocity.iter().map(|x| Cell::Float(*x)));
        row
    })
}

fn csv_writer(path: &Path) -> Result<csv::Writer<File>, RecordError> {
    csv::Writer::from_path(path).map_err(|error| RecordError::Csv {
        path: path.display().to_string(),
        error,
    })
}

/// Writes a value as pretty JSON.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RecordError> {
    let io_err = |error| RecordError::Io {
        path: path.display().to_string(),
        error,
    };
    let file = File::create(path).map_err(io_err)?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut w, value).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })?;
    w.write_all(b"\n").map_err(io_err)?;
    w.flush().map_err(io_err)
}

/// Reads a JSON file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RecordError> {
    let text = std::fs::read_to_string(path).map_err(|error| RecordError::Io {
        path: path.display().to_string(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })
}

/// What a CSV column holds, as far as read.
#[derive(Debug, Clone, PartialEq)]
enum Column {
    /// Only empty cells so far (their count).
    Empty(usize),
    /// Numbers (an empty cell is NaN: no value).
    Numbers(Vec<f64>),
    /// Text (`pair`, `status`): skipped.
    Text,
}

/// Reads the numeric columns of a CSV file by name. A column whose first non-empty cell
/// is not a number (`status`, `pair`) is skipped; an empty cell is "no value" and read as
/// NaN; a cell that says NaN or infinity, or that is not a number in a numeric column, is
/// an error naming the file, row and column.
pub fn read_columns(path: &Path) -> Result<BTreeMap<String, Vec<f64>>, RecordError> {
    let shown = path.display().to_string();
    let csv_err = |error| RecordError::Csv {
        path: shown.clone(),
        error,
    };
    let mut reader = csv::Reader::from_path(path).map_err(csv_err)?;
    let header: Vec<String> = reader
        .headers()
        .map_err(csv_err)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut columns: Vec<Column> = vec![Column::Empty(0); header.len()];
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(csv_err)?;
        for (k, field) in record.iter().enumerate() {
            let Some(column) = columns.get_mut(k) else {
                continue;
            };
            let field = field.trim();
            let parsed = if field.is_empty() {
                None
            } else {
                Some(field.parse::<f64>())
            };
            let cell_error = |finite: bool| {
                let (path, row, column, value) =
                    (shown.clone(), row + 1, header[k].clone(), field.to_string());
                if finite {
                    RecordError::NotANumber {
                        path,
                        row,
                        column,
                        value,
                    }
                } else {
                    RecordError::NotFinite {
                        path,
                        row,
                        column,
                        value,
                    }
                }
            };
            match (&mut *column, parsed) {
                (Column::Text, _) => {}
                (Column::Empty(n), None) => *n += 1,
                (Column::Numbers(v), None) => v.push(f64::NAN),
                (_, Some(Ok(x))) if !x.is_finite() => return Err(cell_error(false)),
                (Column::Empty(n), Some(Ok(x))) => {
                    let mut v = vec![f64::NAN; *n];
                    v.push(x);
                    *column = Column::Numbers(v);
                }
                (Column::Numbers(v), Some(Ok(x))) => v.push(x),
                (Column::Empty(_), Some(Err(_))) => *column = Column::Text,
                (Column::Numbers(_), Some(Err(_))) => return Err(cell_error(true)),
            }
        }
    }
    Ok(header
        .into_iter()
        .zip(columns)
        .filter_map(|(name, col)| match col {
            Column::Numbers(v) => Some((name, v)),
            Column::Empty(n) => Some((name, vec![f64::NAN; n])),
            Column::Text => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_even_series() {
        let s = SeriesStats::of([4.0, 1.0, 3.0, 2.0].into_iter());
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.max, 4.0);
    }

    #[test]
    fn histogram_medians_match_the_exact_ones() {
        let mut exact = Histogram::exact();
        let mut relative = Histogram::relative();
        let values: Vec<f64> = (1..=1001).map(|k| (k * k % 997) as f64).collect();
        for &v in &values {
            exact.add(v);
            relative.add(v * 1e-6);
        }
        let reference = SeriesStats::of(values.iter().copied());
        assert_eq!(exact.stats(), reference);
        let r = relative.stats();
        assert!((r.median - reference.median * 1e-6).abs() <= 5e-4 * reference.median * 1e-6);
        assert_eq!(r.max, reference.max * 1e-6);
    }

    #[test]
    fn floats_are_written_short_and_round_trip() {
        let x = -6.938893903907228e-18;
        assert_eq!(fmt_f64(x), "-6.938893903907228e-18");
        assert_eq!(fmt_f64(0.1), "0.1");
        assert_eq!(fmt_f64(1.0), "1.0");
        assert_eq!(fmt_f64(1e20), "1e20");
        for v in [x, 0.1, 1.0 / 3.0, 123456.789, 1e-300, f64::MAX] {
            assert_eq!(fmt_f64(v).parse::<f64>().ok(), Some(v));
        }
    }

    #[test]
    fn a_nan_residual_is_not_hidden_by_the_max() {
        assert!(nan_max(0.0, f64::NAN).is_nan());
        assert!(nan_max(f64::NAN, 1.0).is_nan());
        assert_eq!(nan_max(1.0, 2.0), 2.0);
    }
}
