//! The parameters that govern one time step (design.md §1), after rapier's
//! `IntegrationParameters`: one flat struct, every field with its unit and default. The
//! contact problem's builder reads the bias and compliance terms ([`super::build`]), the
//! simulator the margin and the warm start.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A step parameter out of range.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{field} = {value}: {reason}")]
pub struct ParameterError {
    /// The field (`dt`, `baumgarte`, ...).
    pub field: &'static str,
    /// Its value.
    pub value: f64,
    /// What is wrong.
    pub reason: &'static str,
}

/// Everything that governs one time step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepParameters {
    /// Time step `Δt` (s). Default `1e-3`.
    pub dt: f64,
    /// Baumgarte gain `K_b ∈ [0, 1]` (dimensionless): fraction of a penetration pushed out
    /// in one step, `b_N = K_b φ / Δt` for `φ < 0`. Default `0` (no correction).
    pub baumgarte: f64,
    /// Restitution coefficient `e ∈ [0, 1]` applied to contacts new this step:
    /// `b_N += e c_N⁻`. Default `0`.
    pub restitution: f64,
    /// Compliance `r ≥ 0` (s/kg): the diagonal `R = r I` added to `G` (paper §II). Default `0`.
    pub compliance: f64,
    /// Security margin (m): pairs closer than this become contacts, so that a contact
    /// can close its gap in one step (`b_N = φ / Δt` for `φ ≥ 0`). Default `1e-3`.
    pub margin: f64,
    /// Smallest approach speed (m/s) that triggers restitution; slower impacts are
    /// inelastic, so that a bouncing ball comes to rest. Default `1e-2`.
    pub restitution_threshold: f64,
    /// Start each solve from the previous `λ` of the contacts matched since the previous
    /// step (and the solver's kept state); `false` solves every step cold, from `λ = 0`
    /// with the solver reset. Default `true`.
    pub warm_start: bool,
}

impl Default for StepParameters {
    fn default() -> Self {
        Self {
            dt: 1e-3,
            baumgarte: 0.0,
            restitution: 0.0,
            compliance: 0.0,
            margin: 1e-3,
            restitution_threshold: 1e-2,
            warm_start: true,
        }
    }
}

impl StepParameters {
    /// `1 / Δt` (1/s).
    pub fn inv_dt(&self) -> f64 {
        1.0 / self.dt
    }

    /// Checks every field's range, naming the first bad one.
    pub fn validate(&self) -> Result<(), ParameterError> {
        let err = |field, value, reason| {
            Err(ParameterError {
                field,
                value,
                reason,
            })
        };
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return err("dt", self.dt, "must be a positive time step (s)");
        }
        if !(0.0..=1.0).contains(&self.baumgarte) {
            return err("baumgarte", self.baumgarte, "must lie in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return err("restitution", self.restitution, "must lie in [0, 1]");
        }
        if !(self.compliance.is_finite() && self.compliance >= 0.0) {
            return err("compliance", self.compliance, "must be finite and >= 0");
        }
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return err("margin", self.margin, "must be finite and >= 0");
        }
        if !(self.restitution_threshold.is_finite() && self.restitution_threshold >= 0.0) {
            return err(
                "restitution_threshold",
                self.restitution_threshold,
                "must be finite and >= 0",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        assert_eq!(StepParameters::default().validate(), Ok(()));
    }

    #[test]
    fn negative_dt_is_named() {
        let p = StepParameters {
            dt: -1e-3,
            ..Default::default()
        };
        assert_eq!(p.validate().map_err(|e| e.field), Err("dt"));
    }

    #[test]
    fn baumgarte_above_one_is_named() {
        let p = StepParameters {
            baumgarte: 1.5,
            ..Default::default()
        };
        assert_eq!(p.validate().map_err(|e| e.field), Err("baumgarte"));
    }
}
