//! One ruler for every solver (design.md §5): residuals of each contact model, physical
//! violations, internal forces; all metrics of an answer at once with [`compute_metrics`].
//! Solvers stop on these same functions.

pub mod consistency;
pub mod energy;
pub mod forces;
pub mod residuals;
pub mod summary;

pub use forces::internal_forces;
pub use residuals::{ccp_residual, lcp_residual, ncp_criterion, raisim_residual, ContactResidual};
pub use summary::{compute_metrics, compute_metrics_with, ContactMetrics, ProblemMetrics};
