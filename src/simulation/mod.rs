//! Time stepping, scenarios, recording, sweeps and batches.

pub mod batch;
pub mod controllers;
pub mod export;
pub mod factory;
pub mod interrupt;
pub mod locomotion;
pub mod output;
pub mod recorder;
pub mod runner;
pub mod scenario;
pub mod shards;
pub mod step;
pub mod sweep;
pub mod timing;
pub mod trajectory;
pub mod view;
pub mod world;

pub use factory::{SolverFactory, UserSolver};
pub use runner::{simulate, SimulationError};
pub use scenario::{RobotError, Scenario, ScenarioError, StepMetrics};
pub use step::{Simulator, StepDerivativeError, StepDerivatives, StepError, StepSummary};
pub use world::World;
