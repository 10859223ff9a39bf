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

/// Largest number of bounces [`bouncing_energy_fraction`] counts.
const MAX_BOUNCES: usize = 1000;

/// Fraction `e^{2k}` of the initial drop energy left at time `t` (s) for a ball dropped
/// from rest at `height` (m) above its resting height with restitution `e`, `k` the
/// number of impacts before `t`: the first at `√(2h/g)`, then one after each flight of
/// `2 eᵏ √(2gh) / g`.
pub fn bouncing_energy_fraction(height: f64, restitution: f64, t: f64) -> f64 {
    let impact_speed = (2.0 * GRAVITY * height).sqrt();
    let mut next_impact = impact_speed / GRAVITY;
    let mut fraction = 1.0;
    let mut speed = impact_speed;
    for _ in 0..MAX_BOUNCES {
        if t < next_impact || fraction == 0.0 {
            break;
        }
        fraction *= restitution * restitution;
        speed *= restitution;
        next_impact += 2.0 * speed / GRAVITY;
    }
    fraction
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
    fn bounce_keeps_e_squared_of_the_energy() {
        let (h, e) = (1.0, 0.8);
        let first = (2.0 * h / GRAVITY).sqrt();
        assert_eq!(bouncing_energy_fraction(h, e, 0.99 * first), 1.0);
        assert!((bouncing_energy_fraction(h, e, 1.01 * first) - 0.64).abs() < 1e-12);
    }

    #[test]
    fn stop_distance_matches_constant_deceleration() {
        let (v0, mu) = (2.0, 0.5);
        let t = v0 / (mu * GRAVITY);
        let d = v0 * t - 0.5 * mu * GRAVITY * t * t;
        assert!((sliding_stop_distance(v0, mu) - d).abs() < 1e-12);
    }
}
