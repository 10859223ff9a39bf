//! Our JSON problem files (design.md §3): one object that numpy, Pinocchio's Python
//! bindings or any other tool can read and write.
//!
//! ```json
//! {
//!   "G": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
//!   "g": [0.0, 0.0, -1.0],
//!   "mu": [0.5],
//!   "R": [0.0, 0.0, 0.0],
//!   "lambda": [0.0, 0.0, 1.0],
//!   "solver": {"solver": "ncp-admm", "eps_rel": 1e-8, "rho": 1e-3}
//! }
//! ```
//!
//! `G` is an array of `3n` rows of `3n` numbers, `g` has `3n` entries, `mu` `n`; `R`
//! (diagonal compliance, `3n`), `lambda` (a reference answer, `3n`) and `solver` (a
//! solver specification, as in [`crate::solvers::SolverSpec::from_map`], so that a case
//! can be replayed) are optional. Per-contact order is `[t1, t2, n]`.

use std::path::Path;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::file::{read_json_text, ProblemFile, ProblemFileError, MAX_JSON_BYTES};
use super::ContactProblem;

/// A problem file's contents.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProblemFileData {
    #[serde(rename = "G")]
    delassus: Vec<Vec<f64>>,
    g: Vec<f64>,
    mu: Vec<f64>,
    #[serde(rename = "R", default, skip_serializing_if = "Option::is_none")]
    compliance: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lambda: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    solver: Option<Map<String, Value>>,
}

/// Reads and validates a JSON problem file.
pub fn read_json(path: &Path) -> Result<ProblemFile, ProblemFileError> {
    let text = read_json_text(path, MAX_JSON_BYTES)?;
    let data: ProblemFileData = parse_json(path, &text).map_err(|e| name_bad_field(e, &text))?;
    let invalid = |error| ProblemFileError::Invalid {
        path: path.to_path_buf(),
        error,
    };
    let delassus = rows_to_matrix(path, &data.delassus)?;
    let problem = ContactProblem::new(
        delassus,
        DVector::from_vec(data.g),
        DVector::from_vec(data.mu),
        data.compliance.map(DVector::from_vec),
    )
    .map_err(invalid)?;
    let lambda = data.lambda.map(DVector::from_vec);
    if let Some(l) = &lambda {
        problem.check_lambda(l).map_err(invalid)?;
    }
    Ok(ProblemFile {
        problem,
        lambda,
        solver: data.solver,
        notes: Vec::new(),
    })
}

/// A problem (and optionally a reference `λ` and a solver specification) as the JSON text
/// of a file (`path` names it in errors).
pub fn json_bytes(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<Vec<u8>, ProblemFileError> {
    let g = problem.delassus();
    let data = ProblemFileData {
        delassus: (0..g.nrows())
            .map(|i| g.row(i).iter().copied().collect())
            .collect(),
        g: problem.free_velocity().iter().copied().collect(),
        mu: problem.mu().iter().copied().collect(),
        compliance: problem.compliance().map(|r| r.iter().copied().collect()),
        lambda: lambda.map(|l| l.iter().copied().collect()),
        solver: solver.cloned(),
    };
    let text = serde_json::to_string_pretty(&data).map_err(|e| ProblemFileError::Serialize {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(text.into_bytes())
}

/// Parses JSON, with the position of a syntax error in its own fields (an error serde_json
/// gives no position for names the document instead).
pub(crate) fn parse_json<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
) -> Result<T, ProblemFileError> {
    serde_json::from_str(text).map_err(|e| {
        // serde_json appends " at line L column C"; the position has its own fields.
        let mut message = e.to_string();
        if let Some(at) = message.rfind(" at line ") {
            message.truncate(at);
        }
        if e.line() == 0 {
            return ProblemFileError::JsonField {
                path: path.to_path_buf(),
                field: ".".into(),
                message,
            };
        }
        ProblemFileError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}

/// serde_json names a missing or unknown field but not the field holding a value of the
/// wrong type: find it by reading each known field on its own, and prefix it.
fn name_bad_field(error: ProblemFileError, text: &str) -> ProblemFileError {
    let ProblemFileError::Json {
        path,
        line,
        column,
        message,
    } = error
    else {
        return error;
    };
    let fields = serde_json::from_str::<Map<String, Value>>(text).ok();
    let bad = fields.as_ref().and_then(|map| {
        map.iter().find_map(|(key, value)| {
            let ok = match key.as_str() {
                "G" => Vec::<Vec<f64>>::deserialize(value).is_ok(),
                "g" | "mu" | "R" | "lambda" => Vec::<f64>::deserialize(value).is_ok(),
                "solver" => value.is_object(),
                _ => true,
            };
            (!ok).then(|| key.clone())
        })
    });
    let message = match bad {
        Some(field) => format!("{field}: {message}"),
        None => message,
    };
    ProblemFileError::Json {
        path,
        line,
        column,
        message,
    }
}

fn rows_to_matrix(path: &Path, rows: &[Vec<f64>]) -> Result<DMatrix<f64>, ProblemFileError> {
    let ncols = rows.first().map_or(0, Vec::len);
    if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != ncols) {
        return Err(ProblemFileError::RaggedRows {
            path: path.to_path_buf(),
            row,
            got: r.len(),
            expected: ncols,
        });
    }
    Ok(DMatrix::from_fn(rows.len(), ncols, |i, j| rows[i][j]))
}
