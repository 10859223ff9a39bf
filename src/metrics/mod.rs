//! One ruler for every solver (design.md §5, docs/ruler.md): residuals of each contact
//! model in their units and the dimensionless relative criterion, physical violations,
//! internal forces (total, required, spurious); all metrics of an answer at once with
//! [`compute_metrics`] / [`compute_model_metrics`]. Solvers stop on these same functions.

mod components;
pub mod consistency;
pub mod energy;
mod faces;
pub mod forces;
mod frontal;
mod householder;
mod null_space;
pub mod residuals;
pub mod summary;

pub use forces::{internal_force_split, internal_forces, InternalForces};
pub use residuals::{
    ccp_residual, lcp_residual, model_criteria, ncp_criterion, raisim_residual, relative_criterion,
    ContactResidual, Criteria, Scales,
};
pub use summary::{
    compute_metrics, compute_metrics_at_velocity, compute_metrics_with, compute_model_metrics,
    compute_model_metrics_at_velocity, ContactMetrics, ProblemMetrics,
};
