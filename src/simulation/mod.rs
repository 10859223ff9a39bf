//! Time stepping, scenarios, recording and sweeps.

pub mod params;

pub use params::StepParameters;
