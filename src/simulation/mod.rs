//! Time stepping, scenarios, recording and sweeps.

pub mod params;
pub mod recorder;
pub mod scenario;

pub use params::StepParameters;
pub use scenario::{Scenario, ScenarioError};
