//! A run's summary (`summary.json`), accumulated step by step in bounded memory: counts,
//! worst residuals, solver statuses, and medians of iterations and times from histograms.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{RunHeader, StepRecord};
use crate::solvers::SolveStatus;

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
    /// What the run noticed without stopping (a body that ended below the ground).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The scenario file and overrides the run was made from (absent in runs recorded
    /// before it was kept, and for a world built in code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<super::ScenarioOrigin>,
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
    warnings: Vec<String>,
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
            warnings: Vec::new(),
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

    /// Adds a warning to the summary.
    pub fn warn(&mut self, warning: &str) {
        self.warnings.push(warning.to_string());
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
            origin: self.header.origin.clone(),
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
            warnings: self.warnings.clone(),
        }
    }
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
    fn a_nan_residual_is_not_hidden_by_the_max() {
        assert!(nan_max(0.0, f64::NAN).is_nan());
        assert!(nan_max(f64::NAN, 1.0).is_nan());
        assert_eq!(nan_max(1.0, 2.0), 2.0);
    }
}
