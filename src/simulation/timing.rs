//! Timing whole simulation steps (`contactbench bench-step`): µs per step and per stage,
//! the median over repeated blocks of steps, each block taken from the same settled state.
//!
//! Each repeat builds the simulator afresh, takes `settle` untimed steps, then times a
//! block of `steps` consecutive steps with one wall clock (the total) and sums the
//! per-stage clocks of the steps ([`StageTimings`]): every block times the same simulated
//! interval, and a robot that would eventually wander off (or fall) in a long run is not
//! timed there. The report keeps the median over the repeats of each figure, so that a
//! block disturbed by another process on a shared machine does not move it. The
//! per-stage medians need not add up to the total's median; `other` is what the stage
//! clocks do not cover (the record, the clocks themselves).
//!
//! With [`StepBenchSettings::derivatives`] every timed step is followed by its
//! derivatives `A` and `B` ([`Simulator::step_with_derivatives`](super::step::Simulator::step_with_derivatives)), timed on a clock of their
//! own (`derivatives_us`) and left out of the step's.

use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use super::recorder::StageTimings;
use super::runner::{simulator, SimulationError};
use super::scenario::Scenario;
use super::scenario::{Actuation, StepMetrics};
use super::step::{StepDerivativeError, StepError, StepSummary};
use crate::solvers::SolverSpec;

/// Why a measurement stopped.
#[derive(Debug, Error)]
pub enum StepBenchError {
    /// The simulator could not be built.
    #[error(transparent)]
    Setup(#[from] SimulationError),
    /// A step failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// A step's derivatives failed.
    #[error(transparent)]
    Derivatives(#[from] StepDerivativeError),
}

/// What to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepBenchSettings {
    /// Untimed steps before each block, so that the timed steps are the steady regime
    /// (the robot standing, warm starts in place).
    pub settle: usize,
    /// Steps per timed block.
    pub steps: usize,
    /// Timed blocks; the report keeps the median.
    pub repeats: usize,
    /// Time [`Simulator::step`](super::step::Simulator::step) (a recorded step: record, metrics, energy, as a run
    /// does) rather than [`Simulator::advance`](super::step::Simulator::advance) (the step alone).
    pub record: bool,
    /// Follow every timed step with its derivatives `A` and `B`, timed apart (module
    /// docs); the steps are then not recorded.
    pub derivatives: bool,
}

impl Default for StepBenchSettings {
    fn default() -> Self {
        Self {
            settle: 200,
            steps: 1000,
            repeats: 7,
            record: true,
            derivatives: false,
        }
    }
}

/// Microseconds per step of each stage (median over the repeats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageMicros {
    /// Kinematics, mass matrix, its factorization, actuation and nonlinear effects.
    pub dynamics: f64,
    /// Collision detection and contact Jacobians.
    pub collision: f64,
    /// Free velocity, `G`, `g`.
    pub assembly: f64,
    /// The contact solver.
    pub solve: f64,
    /// Velocity update, integration, metrics, energy.
    pub integration: f64,
    /// The whole step minus the stages above (recording, clocks).
    pub other: f64,
    /// Within `dynamics`: the walking controller's force QP, its time per tick spread
    /// over the steps the tick's torques are held (recorded steps of a trot only).
    pub controller_qp: Option<f64>,
}

/// The timing of one scenario with one solver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepBenchReport {
    /// Steps per block and blocks.
    pub steps: usize,
    /// Timed blocks.
    pub repeats: usize,
    /// Untimed steps before the first block.
    pub settle: usize,
    /// Median over the blocks of the wall time per step (µs).
    pub step_us: f64,
    /// Fastest and slowest block (µs per step).
    pub step_us_range: [f64; 2],
    /// Median over the blocks of the time per step of its derivatives `A` and `B` (µs),
    /// when they were timed.
    pub derivatives_us: Option<f64>,
    /// Median per-stage split (µs per step).
    pub stages_us: StageMicros,
    /// Mean number of contacts per timed step.
    pub contacts: f64,
    /// Mean solver iterations per timed step.
    pub iterations: f64,
    /// Timed steps whose solver did not converge.
    pub not_converged: usize,
    /// Collision queries of the timed steps that hit an iteration cap (GJK or EPA).
    pub collision_not_converged: usize,
}

/// Times `settings.repeats` blocks of `settings.steps` steps of `scenario` with `spec`,
/// each after `settings.settle` untimed steps from the initial state (module docs);
/// recorded steps carry `metrics`. A failing step ends the measurement with its error.
pub fn bench_steps(
    scenario: &Scenario,
    spec: &SolverSpec,
    metrics: StepMetrics,
    settings: &StepBenchSettings,
) -> Result<StepBenchReport, StepBenchError> {
    let steps = settings.steps.max(1);
    let repeats = settings.repeats.max(1);
    let mut totals = Vec::with_capacity(repeats);
    let mut derivative_totals = Vec::with_capacity(repeats);
    let mut stages: Vec<StageTimings> = Vec::with_capacity(repeats);
    let (mut contacts, mut iterations, mut not_converged) = (0usize, 0usize, 0usize);
    let mut collision_not_converged = 0;
    let steps_per_tick = match &scenario.actuation {
        Actuation::Trot(trot) if settings.record && !settings.derivatives => {
            Some(trot.steps_per_tick(scenario.simulation.dt) as f64)
        }
        _ => None,
    };
    let mut qp_totals = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let mut sim = simulator(scenario, spec)?;
        sim.set_metrics(metrics);
        for _ in 0..settings.settle {
            sim.advance()?;
        }
        let mut sum = StageTimings::default();
        let mut derivative_time = 0.0;
        let mut qp_time = 0.0;
        let clock = Instant::now();
        for _ in 0..steps {
            let step = if settings.derivatives {
                let (q, v) = (sim.state().0.clone(), sim.state().1.clone());
                let summary = sim.advance()?;
                let derivative_clock = Instant::now();
                std::hint::black_box(sim.derivatives_of_last_step(&q, &v)?);
                derivative_time += derivative_clock.elapsed().as_secs_f64();
                summary
            } else if settings.record {
                let record = sim.step()?;
                qp_time += record.task.map_or(0.0, |t| t.qp_time);
                StepSummary {
                    contacts: record.contacts.len(),
                    iterations: record.iterations,
                    converged: record.converged,
                    timings: record.timings,
                    collision: sim.collision_outcomes(),
                }
            } else {
                sim.advance()?
            };
            add_timings(&mut sum, &step.timings);
            contacts += step.contacts;
            iterations += step.iterations;
            not_converged += usize::from(!step.converged);
            collision_not_converged += step.collision.not_converged();
        }
        totals.push(clock.elapsed().as_secs_f64() - derivative_time);
        derivative_totals.push(derivative_time);
        stages.push(sum);
        qp_totals.push(qp_time);
    }
    let per_step = |seconds: f64| seconds * 1e6 / steps as f64;
    let stage = |f: fn(&StageTimings) -> f64| per_step(median(stages.iter().map(f).collect()));
    let step_us = per_step(median(totals.clone()));
    let mut stages_us = StageMicros {
        dynamics: stage(|s| s.dynamics),
        collision: stage(|s| s.collision),
        assembly: stage(|s| s.assembly),
        solve: stage(|s| s.solve),
        integration: stage(|s| s.integration),
        other: 0.0,
        controller_qp: steps_per_tick.map(|ticks| per_step(median(qp_totals) / ticks)),
    };
    stages_us.other = step_us
        - (stages_us.dynamics
            + stages_us.collision
            + stages_us.assembly
            + stages_us.solve
            + stages_us.integration);
    let timed = (steps * repeats) as f64;
    Ok(StepBenchReport {
        steps,
        repeats,
        settle: settings.settle,
        step_us,
        step_us_range: [
            per_step(totals.iter().copied().fold(f64::INFINITY, f64::min)),
            per_step(totals.iter().copied().fold(0.0, f64::max)),
        ],
        derivatives_us: settings
            .derivatives
            .then(|| per_step(median(derivative_totals))),
        stages_us,
        contacts: contacts as f64 / timed,
        iterations: iterations as f64 / timed,
        not_converged,
        collision_not_converged,
    })
}

fn add_timings(sum: &mut StageTimings, t: &StageTimings) {
    sum.dynamics += t.dynamics;
    sum.collision += t.collision;
    sum.assembly += t.assembly;
    sum.solve += t.solve;
    sum.integration += t.integration;
}

/// The median (mean of the two middle values for an even count); NaN for no value.
fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
