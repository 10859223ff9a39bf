//! Mechanical energy and the analytical energy of a sliding cube (design.md §5).

use serde::{Deserialize, Serialize};

/// Standard gravity (m/s²), as in the models.
pub const GRAVITY: f64 = 9.81;

/// Mechanical energy `E = ½ vᵀ M v + U(q)` split in its two parts (J).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MechanicalEnergy {
    /// Kinetic energy `½ vᵀ M v` (J).
    pub kinetic: f64,
    /// Gravitational potential energy `U(q) = −Σ m_i gᵀ c_i` (J), zero at height 0.
    pub potential: f64,
}

impl MechanicalEnergy {
    /// `E = kinetic + potential` (J).
    pub fn total(&self) -> f64 {
        self.kinetic + self.potential
    }
}

/// Analytical kinetic energy of a body of mass `m` (kg) sliding on flat ground from speed
/// `v0` (m/s) with friction `μ`: `½ m (v0 − μ g t)²` until it stops at `t = v0 / (μ g)`,
/// zero after (J).
pub fn sliding_kinetic_energy(mass: f64, v0: f64, mu: f64, t: f64) -> f64 {
    let speed = (v0 - mu * GRAVITY * t).max(0.0);
    0.5 * mass * speed * speed
}

/// Analytical stopping distance `v0² / (2 μ g)` (m) of a body sliding from speed `v0`.
pub fn sliding_stop_distance(v0: f64, mu: f64) -> f64 {
    v0 * v0 / (2.0 * mu * GRAVITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_energy_reaches_zero_at_stop_time() {
        let (m, v0, mu) = (1.0, 2.0, 0.5);
        let stop = v0 / (mu * GRAVITY);
        assert_eq!(sliding_kinetic_energy(m, v0, mu, 0.0), 2.0);
        assert!(sliding_kinetic_energy(m, v0, mu, 0.5 * stop) > 0.0);
        assert_eq!(sliding_kinetic_energy(m, v0, mu, stop * 1.01), 0.0);
    }

    #[test]
    fn stop_distance_matches_constant_deceleration() {
        let (v0, mu) = (2.0, 0.5);
        let t = v0 / (mu * GRAVITY);
        let d = v0 * t - 0.5 * mu * GRAVITY * t * t;
        assert!((sliding_stop_distance(v0, mu) - d).abs() < 1e-12);
    }
}
