//! raisim (placeholder until the solver lands).

use serde_json::{Map, Value};

use super::{ContactSolver, SolverError, SolverSettings};

/// Builds the solver.
pub fn build(
    _settings: SolverSettings,
    _params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    Err(SolverError::NotImplemented("raisim"))
}
