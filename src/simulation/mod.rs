//! Time stepping, scenarios, recording, sweeps and batches.

pub mod batch;
pub mod output;
pub mod params;
pub mod recorder;
pub mod scenario;
pub mod sweep;

pub use params::StepParameters;
pub use scenario::{Scenario, ScenarioError};
