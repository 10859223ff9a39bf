//! Integral consistency error of a trajectory against a reference run (design.md §5,
//! paper Tab. III and IV): `Σ_t ‖p(t) − p_ref(t)‖ Δt` (m·s), `p` the base position, the
//! reference linearly interpolated at the coarse run's times.

use nalgebra::Vector3;
use thiserror::Error;

/// Why a consistency error could not be computed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConsistencyError {
    /// Times and positions differ in length.
    #[error("{which}: {times} times but {positions} positions")]
    Length {
        /// `run` or `reference`.
        which: &'static str,
        /// Number of times.
        times: usize,
        /// Number of positions.
        positions: usize,
    },
    /// The reference has no samples or its times are not increasing.
    #[error("reference: times must be non-empty and increasing (at index {index})")]
    Unordered {
        /// First bad index.
        index: usize,
    },
}

/// A sampled trajectory: increasing times (s) and base positions (m, world frame).
#[derive(Debug, Clone, Copy)]
pub struct Trajectory<'a> {
    /// Sample times (s), increasing.
    pub times: &'a [f64],
    /// Base positions (m), one per time.
    pub positions: &'a [Vector3<f64>],
}

impl Trajectory<'_> {
    fn check(&self, which: &'static str) -> Result<(), ConsistencyError> {
        if self.times.len() != self.positions.len() {
            return Err(ConsistencyError::Length {
                which,
                times: self.times.len(),
                positions: self.positions.len(),
            });
        }
        Ok(())
    }

    /// Linear interpolation at `t`, clamped to the first and last samples.
    pub fn interpolate(&self, t: f64) -> Vector3<f64> {
        let k = self.times.partition_point(|s| *s <= t);
        if k == 0 {
            return self.positions[0];
        }
        if k == self.times.len() {
            return self.positions[k - 1];
        }
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let w = (t - t0) / (t1 - t0);
        self.positions[k - 1] * (1.0 - w) + self.positions[k] * w
    }
}

/// `Σ_{k≥1} ‖p(t_k) − p_ref(t_k)‖ Δt_k` (m·s) over the steps of the run, with
/// `Δt_k = t_k − t_{k−1}` (the initial state, shared by both runs, is not a step).
pub fn consistency_error(
    run: Trajectory<'_>,
    reference: Trajectory<'_>,
) -> Result<f64, ConsistencyError> {
    run.check("run")?;
    let mut sum = ConsistencySum::new(reference)?;
    for (t, p) in run.times.iter().zip(run.positions) {
        sum.add(*t, p);
    }
    Ok(sum.value())
}

/// The same sum, one sample of the run at a time, so that a run need not be kept in
/// memory (the sweeps stream their runs through it).
#[derive(Debug, Clone)]
pub struct ConsistencySum<'a> {
    reference: Trajectory<'a>,
    previous_time: Option<f64>,
    sum: f64,
}

impl<'a> ConsistencySum<'a> {
    /// An empty sum against `reference` (checked: non-empty, increasing times).
    pub fn new(reference: Trajectory<'a>) -> Result<Self, ConsistencyError> {
        reference.check("reference")?;
        if reference.times.is_empty() {
            return Err(ConsistencyError::Unordered { index: 0 });
        }
        if let Some(index) = reference.times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(ConsistencyError::Unordered { index: index + 1 });
        }
        Ok(Self {
            reference,
            previous_time: None,
            sum: 0.0,
        })
    }

    /// Adds the run's sample `(t, p)`: `‖p − p_ref(t)‖ (t − t_prev)` (nothing for the
    /// first sample, the initial state).
    pub fn add(&mut self, t: f64, p: &Vector3<f64>) {
        if let Some(t0) = self.previous_time {
            self.sum += (p - self.reference.interpolate(t)).norm() * (t - t0);
        }
        self.previous_time = Some(t);
    }

    /// The sum so far (m·s).
    pub fn value(&self) -> f64 {
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_trajectories_have_zero_error() {
        let times: Vec<f64> = (0..11).map(|k| k as f64 * 0.1).collect();
        let pos: Vec<Vector3<f64>> = times.iter().map(|t| Vector3::new(*t, 0.0, 0.0)).collect();
        let traj = Trajectory {
            times: &times,
            positions: &pos,
        };
        assert_eq!(consistency_error(traj, traj), Ok(0.0));
    }

    #[test]
    fn constant_offset_integrates_to_offset_times_duration() {
        let times: Vec<f64> = (0..=10).map(|k| k as f64 * 0.1).collect();
        let pos: Vec<Vector3<f64>> = times.iter().map(|_| Vector3::new(0.0, 0.0, 0.5)).collect();
        let ref_times: Vec<f64> = (0..=100).map(|k| k as f64 * 0.01).collect();
        let ref_pos: Vec<Vector3<f64>> = ref_times.iter().map(|_| Vector3::zeros()).collect();
        let e = consistency_error(
            Trajectory {
                times: &times,
                positions: &pos,
            },
            Trajectory {
                times: &ref_times,
                positions: &ref_pos,
            },
        )
        .expect("valid");
        assert!((e - 0.5).abs() < 1e-12, "{e}");
    }

    #[test]
    fn interpolation_is_linear_between_samples() {
        let times = [0.0, 1.0];
        let pos = [Vector3::zeros(), Vector3::new(2.0, 0.0, 0.0)];
        let traj = Trajectory {
            times: &times,
            positions: &pos,
        };
        assert!((traj.interpolate(0.25).x - 0.5).abs() < 1e-15);
    }

    #[test]
    fn unordered_reference_is_refused() {
        let times = [0.0, 1.0, 0.5];
        let pos = [Vector3::zeros(); 3];
        let traj = Trajectory {
            times: &times,
            positions: &pos,
        };
        assert_eq!(
            consistency_error(traj, traj),
            Err(ConsistencyError::Unordered { index: 2 })
        );
    }
}
