//! One ruler for every solver (design.md §5): residuals of each contact model, energy,
//! consistency. Solvers stop on these same functions.

pub mod consistency;
pub mod energy;
pub mod forces;
pub mod residuals;

pub use forces::internal_forces;
pub use residuals::{ccp_residual, lcp_residual, ncp_criterion, ContactResidual};
