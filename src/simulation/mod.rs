//! Time stepping, scenarios, recording, sweeps and batches.

pub mod batch;
pub mod interrupt;
pub mod output;
pub mod params;
pub mod recorder;
pub mod runner;
pub mod scenario;
pub mod step;
pub mod sweep;
pub mod world;

pub use params::StepParameters;
pub use runner::{simulate, SimulationError};
pub use scenario::{Scenario, ScenarioError};
pub use step::{Simulator, StepError};
pub use world::World;
