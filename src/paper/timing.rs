//! Solver timings as ContactBench measures them (`bindings/pycontact/simulators.py`,
//! `solveContactProblem`): the contact problems of one trajectory are recorded once, then
//! every solver solves each of them **cold** (`λ0 = 0`) and **warm** (`λ0` = its own answer
//! at the previous step, matched contact by contact), its kept state (ADMM's ρ,
//! factorizations) reset before every solve as ContactBench's bindings do. Each solve is
//! repeated `n` times from the same guess and timed as the **mean of the `k` fastest**
//! (ContactBench: 8 of 10); a solve that ends at its iteration cap is timed once (it
//! measures the cap, and claims on it are not measurable). Every step is solved, so that
//! warm guesses follow the trajectory; about 200 evenly spaced steps are timed (every
//! step of a 100-step trajectory, one in ten of a 2000-step one). Cold and warm are compared
//! step by step: **paired ratios**, summarised by their geometric mean with a seeded
//! bootstrap interval over the steps.

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::{DVector, Vector3};
use rand::{RngExt, SeedableRng};

use super::PaperError;
use crate::problem::{contact_vector, set_contact_vector, ContactProblem};
use crate::simulation::recorder::StepRecord;
use crate::simulation::SolverFactory;
use crate::solvers::SolveStatus;

/// One recorded step: its time, its problem and the identity of each contact (its pair of
/// collision objects, and its rank among that pair's contacts).
#[derive(Debug, Clone)]
pub struct RecordedStep {
    /// Time (s).
    pub time: f64,
    /// The contact problem.
    pub problem: ContactProblem,
    /// One key per contact, in the problem's order.
    pub keys: Vec<String>,
}

impl RecordedStep {
    /// The recorded step of a simulator's step with contacts.
    pub fn new(step: &StepRecord, problem: &ContactProblem) -> Self {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let keys = step
            .contacts
            .iter()
            .map(|c| {
                let rank = seen.entry(c.pair.as_str()).or_insert(0);
                *rank += 1;
                format!("{}#{rank}", c.pair)
            })
            .collect();
        Self {
            time: step.time,
            problem: problem.clone(),
            keys,
        }
    }
}

/// How each solve is timed: the mean of the `fastest` of `repetitions` re-solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repetitions {
    /// Re-solves per problem (ContactBench: 10).
    pub repetitions: usize,
    /// Kept, fastest first (ContactBench: 8).
    pub fastest: usize,
}

/// ContactBench's: the mean of the 8 fastest of 10.
pub const CONTACTBENCH_REPETITIONS: Repetitions = Repetitions {
    repetitions: 10,
    fastest: 8,
};

/// One solver's replay of the recorded steps in one mode.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Solve time per step (µs), NaN on the steps not timed.
    pub times: Vec<f64>,
    /// Iterations of each solved step (warm: every step; cold: the timed ones).
    pub iterations: Vec<usize>,
    /// Solved steps that ended at the iteration cap.
    pub capped: usize,
    /// Solved steps whose solver did not converge (the cap, a stall, an error).
    pub unconverged: usize,
}

impl Replay {
    /// Mean iterations per step.
    pub fn mean_iterations(&self) -> f64 {
        self.iterations.iter().sum::<usize>() as f64 / self.iterations.len().max(1) as f64
    }

    /// The median solve time (µs).
    pub fn median_time(&self) -> f64 {
        median(&self.times)
    }
}

/// The median of finite values (NaN when there is none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The guess of a warm solve: the previous answer of each contact still present.
fn warm_guess(step: &RecordedStep, previous: &HashMap<String, Vector3<f64>>) -> DVector<f64> {
    let mut guess = DVector::zeros(step.problem.dim());
    for (i, key) in step.keys.iter().enumerate() {
        if let Some(lambda) = previous.get(key) {
            set_contact_vector(&mut guess, i, lambda);
        }
    }
    guess
}

/// Timed steps of a trajectory: about this many, evenly spaced ([`timed_every`]).
pub const TIMED_STEPS: usize = 200;

/// Every how many recorded steps one is timed, so that about [`TIMED_STEPS`] are.
pub fn timed_every(steps: usize) -> usize {
    steps.div_ceil(TIMED_STEPS).max(1)
}

/// Replays `steps` with `solver`, cold or warm, timing every `every`-th step as
/// `repetitions` says (the others get a NaN time). Warm, every step is solved (a guess is
/// the previous step's answer); cold, only the timed ones.
pub fn replay(
    steps: &[RecordedStep],
    solver: &dyn SolverFactory,
    warm: bool,
    repetitions: Repetitions,
    every: usize,
) -> Result<Replay, PaperError> {
    let mut s = solver.build()?;
    let mut out = Replay::default();
    let mut previous: HashMap<String, Vector3<f64>> = HashMap::new();
    for (k, step) in steps.iter().enumerate() {
        let timed = k % every.max(1) == 0;
        if !warm && !timed {
            // A cold solve depends on nothing before it: an untimed one is not needed.
            out.times.push(f64::NAN);
            continue;
        }
        let guess = warm.then(|| warm_guess(step, &previous));
        s.reset();
        let report = s.solve(&step.problem, guess.as_ref())?;
        let capped = matches!(report.status, SolveStatus::MaxIterations);
        let runs = match (timed, capped) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => repetitions.repetitions,
        };
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            s.reset();
            let clock = Instant::now();
            s.solve(&step.problem, guess.as_ref())?;
            samples.push(clock.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        let kept = &samples[..repetitions.fastest.min(samples.len())];
        out.times.push(if kept.is_empty() {
            f64::NAN
        } else {
            kept.iter().sum::<f64>() / kept.len() as f64
        });
        out.iterations.push(report.iterations);
        out.capped += usize::from(capped);
        out.unconverged += usize::from(!report.status.is_converged());
        previous = step
            .keys
            .iter()
            .enumerate()
            .map(|(i, key)| (key.clone(), contact_vector(&report.lambda, i)))
            .collect();
    }
    Ok(out)
}

/// Bootstrap resamples of a paired statistic.
const RESAMPLES: usize = 1000;

/// A geometric mean of per-step ratios and its 95 % bootstrap interval over the steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedRatio {
    /// `exp(mean(log r_k))`.
    pub value: f64,
    /// 2.5 % and 97.5 % quantiles of the bootstrap.
    pub low: f64,
    /// The upper end.
    pub high: f64,
    /// Steps paired.
    pub steps: usize,
}

impl PairedRatio {
    /// The geometric mean of `ratios` (positive, finite ones) with a bootstrap interval
    /// from a generator seeded with `seed` (the same numbers give the same interval).
    pub fn of(ratios: &[f64], seed: u64) -> Self {
        let logs: Vec<f64> = ratios
            .iter()
            .filter(|r| r.is_finite() && **r > 0.0)
            .map(|r| r.ln())
            .collect();
        let n = logs.len();
        if n == 0 {
            return Self {
                value: f64::NAN,
                low: f64::NAN,
                high: f64::NAN,
                steps: 0,
            };
        }
        let mean = |xs: &mut dyn Iterator<Item = f64>| xs.sum::<f64>() / n as f64;
        let value = mean(&mut logs.iter().copied()).exp();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut means: Vec<f64> = (0..RESAMPLES)
            .map(|_| mean(&mut (0..n).map(|_| logs[rng.random_range(0..n)])))
            .collect();
        means.sort_by(f64::total_cmp);
        let at = |q: f64| means[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)].exp();
        Self {
            value,
            low: at(0.025),
            high: at(0.975),
            steps: n,
        }
    }

    /// `1.23 [1.18, 1.29]`.
    pub fn text(&self) -> String {
        use super::claims::num;
        format!(
            "{} [{}, {}]",
            num(self.value),
            num(self.low),
            num(self.high)
        )
    }
}

/// Per-step ratios `a_k / b_k`.
pub fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

/// Why a timing ratio cannot decide a test against `threshold`: its geometric mean lies
/// within the machine's timing noise `noise` (a relative band) of the threshold, or its
/// bootstrap interval contains the threshold.
pub fn within_noise(
    label: &str,
    ratio: &PairedRatio,
    threshold: f64,
    noise: f64,
) -> Option<String> {
    use super::claims::num;
    let (lo, hi) = (threshold / (1.0 + noise), threshold * (1.0 + noise));
    if ratio.value > lo && ratio.value < hi {
        return Some(format!(
            "{label}: {} within the timing noise (±{} %) of {}",
            ratio.text(),
            num(noise * 100.0),
            num(threshold)
        ));
    }
    (ratio.low <= threshold && ratio.high >= threshold).then(|| {
        format!(
            "{label}: {}: its 95 % interval contains {}",
            ratio.text(),
            num(threshold)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_ratio_is_a_geometric_mean_with_a_reproducible_interval() {
        let r = PairedRatio::of(&[2.0, 8.0], 1);
        assert!((r.value - 4.0).abs() < 1e-12);
        assert!(r.low >= 2.0 - 1e-12 && r.high <= 8.0 + 1e-12);
        assert_eq!(PairedRatio::of(&[2.0, 8.0], 1), r);
        let steady = PairedRatio::of(&[0.5; 50], 3);
        assert!((steady.low - 0.5).abs() < 1e-12 && (steady.high - 0.5).abs() < 1e-12);
        assert!(PairedRatio::of(&[f64::NAN], 1).value.is_nan());
    }

    #[test]
    fn a_ratio_near_its_threshold_is_within_the_noise() {
        let clear = PairedRatio {
            value: 0.5,
            low: 0.45,
            high: 0.55,
            steps: 100,
        };
        assert_eq!(within_noise("x", &clear, 1.0, 0.1), None);
        let near = PairedRatio {
            value: 0.95,
            low: 0.9,
            high: 0.99,
            steps: 100,
        };
        assert!(within_noise("x", &near, 1.0, 0.1).is_some());
        let wide = PairedRatio {
            value: 0.7,
            low: 0.5,
            high: 1.1,
            steps: 10,
        };
        assert!(within_noise("x", &wide, 1.0, 0.1).is_some());
    }
}
