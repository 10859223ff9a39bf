//! The metric names the experiments read, in one place.
//!
//! Every per-step metric is looked up by its file name in
//! [`ProblemMetrics::COLUMNS`] (the metrics module's single list), never through a field:
//! when the metrics gain new columns (the relative criterion, the required / spurious
//! split of internal forces), switching an experiment is changing a constant here.

use crate::metrics::ProblemMetrics;

/// The complementarity criterion plotted and compared across models (absolute, in the
/// problem's units: N·s, m/s and their product).
pub const CRITERION: &str = "ncp_criterion";

/// Spurious internal forces (N·s): the distance from `λ` to the answer of least internal
/// force among those of the same model with the same `Jᵀλ` (docs/ruler.md), i.e. the
/// internal forces the solver injected beyond what the model requires.
pub const INTERNAL_FORCES: &str = "internal_forces_spurious";

/// The CCP residual (the CCP solvers' own model).
pub const CCP_RESIDUAL: &str = "ccp_residual";

/// Normal velocity into the obstacle, `max(0, −c_N)` (m/s).
pub const PENETRATION_VELOCITY: &str = "penetration_velocity";

/// The value of metric `name` in `metrics`, `None` when the metrics have no such column
/// or it has no value (NaN).
pub fn metric(metrics: &ProblemMetrics, name: &str) -> Option<f64> {
    let k = ProblemMetrics::COLUMNS.iter().position(|c| *c == name)?;
    let value = metrics.column_values()[k];
    (!value.is_nan()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_metrics_column() {
        for name in [
            CRITERION,
            INTERNAL_FORCES,
            CCP_RESIDUAL,
            PENETRATION_VELOCITY,
        ] {
            assert!(
                ProblemMetrics::COLUMNS.contains(&name),
                "{name} is not in ProblemMetrics::COLUMNS"
            );
        }
    }

    #[test]
    fn lookup_reads_the_column() {
        let m = ProblemMetrics {
            ncp_criterion: 0.25,
            ..Default::default()
        };
        assert_eq!(metric(&m, CRITERION), Some(0.25));
        assert_eq!(metric(&m, INTERNAL_FORCES), None);
        assert_eq!(metric(&m, "no_such_metric"), None);
    }
}
