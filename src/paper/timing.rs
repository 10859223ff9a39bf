//! Solver timings as ContactBench measures them (`bindings/pycontact/simulators.py`,
//! `solveContactProblem`): the contact problems of one trajectory are recorded once, then
//! every solver solves each of them **cold** (`λ0 = 0`) and **warm** (`λ0` = its own answer
//! at the previous step, matched contact by contact), its kept state (ADMM's ρ,
//! factorizations) reset before every solve as ContactBench's bindings do. Each solve is
//! repeated `n` times from the same guess and timed as the **mean of the `k` fastest**
//! (ContactBench: 8 of 10); a solve that ends at its iteration cap is timed once (it
//! measures the cap, and claims on it are not measurable). Every step is solved, so that
//! warm guesses follow the trajectory; about 200 evenly spaced steps are timed (every
//! step of a 100-step trajectory, one in ten of a 2000-step one). The `n` repetitions are
//! taken in **re-timings** of the whole trajectory, every solver cold and warm at one step
//! before the next. Cold and warm are compared step by step: **paired ratios**, summarised
//! by their geometric mean with a seeded bootstrap interval over the steps, and a **noise
//! band**: how far the same ratio on one re-timing alone falls from it.

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

/// How each solve is timed: `rounds` re-timings of the whole trajectory, each solve
/// repeated `per_round` times in each; the time of a solve is the mean of the `fastest`
/// of all its `rounds · per_round` repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repetitions {
    /// Re-timings of the trajectory, one after the other.
    pub rounds: usize,
    /// Re-solves per problem in each re-timing.
    pub per_round: usize,
    /// Kept, fastest first, of all re-solves (ContactBench: 8 of 10).
    pub fastest: usize,
}

impl Repetitions {
    /// Re-solves per problem in all (ContactBench: 10).
    pub fn repetitions(&self) -> usize {
        self.rounds * self.per_round
    }
}

/// ContactBench's mean of the 8 fastest of 10, the 10 taken as 5 re-timings of 2.
pub const CONTACTBENCH_REPETITIONS: Repetitions = Repetitions {
    rounds: 5,
    per_round: 2,
    fastest: 8,
};

/// One solver's replay of the recorded steps in one mode.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Solve time per step (µs): the mean of the fastest repetitions; NaN on the steps
    /// not timed.
    pub times: Vec<f64>,
    /// Per re-timing, the solve time per step (µs): the fastest of that re-timing's
    /// repetitions (a capped solve, timed once, has its one time in every re-timing).
    pub retimings: Vec<Vec<f64>>,
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

    /// The times of `take`.
    pub fn times_of(&self, take: Take) -> &[f64] {
        match take {
            Take::Pooled => &self.times,
            Take::Retiming(j) => self.retimings.get(j).map_or(&[], Vec::as_slice),
        }
    }
}

/// Which times of a replay: every repetition pooled, or one re-timing's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// The mean of the fastest of all repetitions.
    Pooled,
    /// The `j`-th re-timing.
    Retiming(usize),
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

/// One timed step's two solves (cold, warm) for one solver: the guess, whether the solve
/// ends at its cap, and the repetitions' times per re-timing.
struct TimedSolve {
    guess: Option<DVector<f64>>,
    capped: bool,
    samples: Vec<Vec<f64>>,
}

/// Replays `steps` with every solver of `solvers`, cold and warm, timing every
/// `every`-th step as `repetitions` says (the other steps get a NaN time); returns
/// (cold, warm) per solver. Warm, every step is solved (a guess is the solver's previous
/// answer); cold, only the timed ones. The timing is interleaved so that a change of the
/// machine's load falls on every ratio alike: each re-timing goes over the timed steps,
/// and at each step times every solver cold then warm.
pub fn replay_all(
    steps: &[RecordedStep],
    solvers: &[&dyn SolverFactory],
    repetitions: Repetitions,
    every: usize,
) -> Result<Vec<(Replay, Replay)>, PaperError> {
    let mut built = solvers
        .iter()
        .map(|f| f.build())
        .collect::<Result<Vec<_>, _>>()?;
    let blank = || Replay {
        retimings: vec![Vec::new(); repetitions.rounds],
        ..Replay::default()
    };
    let mut out: Vec<(Replay, Replay)> = solvers.iter().map(|_| (blank(), blank())).collect();
    let mut previous: Vec<HashMap<String, Vector3<f64>>> = vec![HashMap::new(); solvers.len()];
    // First pass: the guesses, iterations and statuses; timed[t][solver][cold, warm].
    let mut timed: Vec<(usize, Vec<[TimedSolve; 2]>)> = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let is_timed = k % every.max(1) == 0;
        let mut solves = Vec::new();
        for (i, s) in built.iter_mut().enumerate() {
            let (cold, warm) = &mut out[i];
            let mut solve_once = |guess: Option<DVector<f64>>,
                                  replay: &mut Replay|
             -> Result<(TimedSolve, DVector<f64>), PaperError> {
                s.reset();
                let report = s.solve(&step.problem, guess.as_ref())?;
                let capped = matches!(report.status, SolveStatus::MaxIterations);
                replay.iterations.push(report.iterations);
                replay.capped += usize::from(capped);
                replay.unconverged += usize::from(!report.status.is_converged());
                Ok((
                    TimedSolve {
                        guess,
                        capped,
                        samples: vec![Vec::new(); repetitions.rounds],
                    },
                    report.lambda,
                ))
            };
            let (warm_solve, lambda) = solve_once(Some(warm_guess(step, &previous[i])), warm)?;
            previous[i] = step
                .keys
                .iter()
                .enumerate()
                .map(|(c, key)| (key.clone(), contact_vector(&lambda, c)))
                .collect();
            if is_timed {
                let (cold_solve, _) = solve_once(None, cold)?;
                solves.push([cold_solve, warm_solve]);
            }
        }
        if is_timed {
            timed.push((k, solves));
        }
    }
    // The re-timings, interleaved.
    for round in 0..repetitions.rounds {
        for (k, solves) in timed.iter_mut() {
            let problem = &steps[*k].problem;
            for (s, pair) in built.iter_mut().zip(solves.iter_mut()) {
                for solve in pair.iter_mut() {
                    // A capped solve measures the cap: timed once.
                    let runs = match (solve.capped, round) {
                        (true, 0) => 1,
                        (true, _) => 0,
                        (false, _) => repetitions.per_round,
                    };
                    for _ in 0..runs {
                        s.reset();
                        let clock = Instant::now();
                        s.solve(problem, solve.guess.as_ref())?;
                        solve.samples[round].push(clock.elapsed().as_secs_f64() * 1e6);
                    }
                }
            }
        }
    }
    for (i, (cold, warm)) in out.iter_mut().enumerate() {
        cold.times = vec![f64::NAN; steps.len()];
        warm.times = vec![f64::NAN; steps.len()];
        for retiming in cold.retimings.iter_mut().chain(warm.retimings.iter_mut()) {
            *retiming = vec![f64::NAN; steps.len()];
        }
        for (k, solves) in &timed {
            for (replay, solve) in [(&mut *cold, &solves[i][0]), (&mut *warm, &solves[i][1])] {
                let pooled = mean_of_fastest(
                    solve.samples.iter().flatten().copied().collect(),
                    repetitions.fastest,
                );
                replay.times[*k] = pooled;
                for (retiming, samples) in replay.retimings.iter_mut().zip(&solve.samples) {
                    retiming[*k] = if samples.is_empty() {
                        pooled
                    } else {
                        samples.iter().copied().fold(f64::INFINITY, f64::min)
                    };
                }
            }
        }
    }
    Ok(out)
}

/// The mean of the `fastest` smallest `samples` (NaN when there is none).
fn mean_of_fastest(mut samples: Vec<f64>, fastest: usize) -> f64 {
    samples.sort_by(f64::total_cmp);
    let kept = &samples[..fastest.min(samples.len())];
    if kept.is_empty() {
        f64::NAN
    } else {
        kept.iter().sum::<f64>() / kept.len() as f64
    }
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

/// A timing ratio is decided only when it lies beyond this many times its noise band
/// from its threshold.
pub const NOISE_MARGIN: f64 = 1.5;

/// The narrowest noise band a ratio is given (relative): re-timings within one run share
/// the process (its memory layout, the clock's frequency), which another run does not.
pub const NOISE_FLOOR: f64 = 0.02;

/// A paired ratio measured on the pooled times, and the same ratio on each re-timing
/// alone: how much the latter spread is the ratio's own timing noise.
#[derive(Debug, Clone, PartialEq)]
pub struct NoisyRatio {
    /// The ratio of the pooled times, with its bootstrap interval over the steps.
    pub ratio: PairedRatio,
    /// The geometric mean of the same per-step ratios on each re-timing.
    pub retimings: Vec<f64>,
}

impl NoisyRatio {
    /// The paired ratio of `per_step(Take::Pooled)` and of `per_step(Take::Retiming(j))`
    /// for each of the `rounds` re-timings (bootstrap seeded with `seed`).
    pub fn of(rounds: usize, seed: u64, per_step: impl Fn(Take) -> Vec<f64>) -> Self {
        Self {
            ratio: PairedRatio::of(&per_step(Take::Pooled), seed),
            retimings: (0..rounds)
                .map(|j| geometric_mean(&per_step(Take::Retiming(j))))
                .collect(),
        }
    }

    /// The noise band, relative: the largest `|ln(r_j / r̄)|` of a re-timing's ratio
    /// `r_j` from their geometric mean `r̄`, at least [`NOISE_FLOOR`]; infinite when a
    /// ratio is missing.
    pub fn noise(&self) -> f64 {
        let centre = geometric_mean(&self.retimings);
        let spread =
            self.retimings
                .iter()
                .map(|r| (r / centre).ln().abs())
                .fold(
                    0.0,
                    |a: f64, d| if d.is_nan() { f64::INFINITY } else { a.max(d) },
                );
        if self.retimings.is_empty() || !self.ratio.value.is_finite() {
            f64::INFINITY
        } else {
            spread.max(NOISE_FLOOR.ln_1p())
        }
    }

    /// The band a decision needs, in percent: `exp(NOISE_MARGIN · noise) − 1`.
    pub fn decision_band_percent(&self) -> f64 {
        ((NOISE_MARGIN * self.noise()).exp() - 1.0) * 100.0
    }
}

/// `exp(mean(ln r))` over the positive finite `ratios` (NaN when there is none).
fn geometric_mean(ratios: &[f64]) -> f64 {
    let logs: Vec<f64> = ratios
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    if logs.is_empty() {
        return f64::NAN;
    }
    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
}

/// Why a timing ratio cannot decide a test against `threshold`: it lies within
/// [`NOISE_MARGIN`] times its own noise band of the threshold, or its bootstrap interval
/// over the steps contains the threshold.
pub fn within_noise(label: &str, ratio: &NoisyRatio, threshold: f64) -> Option<String> {
    use super::claims::num;
    let r = &ratio.ratio;
    let distance = (r.value / threshold).ln().abs();
    // NaN (an undefined ratio or band) counts as within the noise.
    let decided = distance > NOISE_MARGIN * ratio.noise();
    if !decided {
        return Some(format!(
            "{label}: {} (re-timings {}): timing noise ±{} % covers {}",
            r.text(),
            ratio
                .retimings
                .iter()
                .map(|x| num(*x))
                .collect::<Vec<_>>()
                .join(", "),
            num(ratio.decision_band_percent()),
            num(threshold)
        ));
    }
    (r.low <= threshold && r.high >= threshold).then(|| {
        format!(
            "{label}: {}: its 95 % interval contains {}",
            r.text(),
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
}
