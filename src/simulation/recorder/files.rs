//! A run's files: `steps.csv` and `contacts.csv` streamed as the steps come
//! ([`RunWriter`]), their cells and column names (shared with the Python package), the
//! JSON of `summary.json` and of results manifests, and the reading of numeric CSV columns
//! back (`contactbench report`). The `csv` crate quotes and parses; the layout is ours.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::summary::{status_tag, SummaryBuilder};
use super::{columns, RecordError, Recorder, RunHeader, RunSummary, ScenarioOrigin, StepRecord};
use crate::metrics::ProblemMetrics;

/// A float in Rust's shortest round-trip form (`{:?}`: `0.1`, `1e-7`, `NaN`, `inf`).
pub fn fmt_f64(x: f64) -> String {
    format!("{x:?}")
}

/// Streams a run to `steps.csv` and `contacts.csv` as its steps come, then writes
/// `summary.json`: memory stays bounded whatever the number of steps.
pub struct RunWriter {
    dir: PathBuf,
    steps: Option<csv::Writer<File>>,
    contacts: Option<csv::Writer<File>>,
    builder: SummaryBuilder,
    started: bool,
    origin: Option<ScenarioOrigin>,
}

impl RunWriter {
    /// Creates `dir` and opens its CSV files.
    pub fn create(dir: &Path) -> Result<Self, RecordError> {
        std::fs::create_dir_all(dir).map_err(|error| RecordError::Io {
            path: dir.display().to_string(),
            error,
        })?;
        Ok(Self {
            steps: Some(csv_writer(&dir.join("steps.csv"))?),
            contacts: Some(csv_writer(&dir.join("contacts.csv"))?),
            dir: dir.to_path_buf(),
            builder: SummaryBuilder::new(RunHeader::default()),
            started: false,
            origin: None,
        })
    }

    /// Records `origin` in the summary when the run's header does not name one (a runner
    /// that builds its world in code).
    pub fn with_origin(mut self, origin: ScenarioOrigin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// `header` with this writer's origin when it has none.
    fn completed(&self, mut header: RunHeader) -> RunHeader {
        if header.origin.is_none() {
            header.origin = self.origin.clone();
        }
        header
    }

    fn csv_error(&self, file: &str, error: csv::Error) -> RecordError {
        RecordError::Csv {
            path: self.dir.join(file).display().to_string(),
            error,
        }
    }

    fn write_headers(&mut self, header: &RunHeader) -> Result<(), RecordError> {
        let names = step_column_names(header);
        let contact_names = contact_column_names();
        if let Some(w) = self.steps.as_mut() {
            let result = w.write_record(&names);
            result.map_err(|e| self.csv_error("steps.csv", e))?;
        }
        if let Some(w) = self.contacts.as_mut() {
            let result = w.write_record(&contact_names);
            result.map_err(|e| self.csv_error("contacts.csv", e))?;
        }
        self.started = true;
        Ok(())
    }

    /// Flushes the CSV files and writes `summary.json`; `header` is used when the run
    /// failed before its first step.
    pub fn finish(
        mut self,
        header: &RunHeader,
        failure: Option<String>,
    ) -> Result<RunSummary, RecordError> {
        if !self.started {
            let header = self.completed(header.clone());
            self.write_headers(&header)?;
            self.builder.set_header(header);
        }
        for (file, writer) in [
            ("steps.csv", self.steps.take()),
            ("contacts.csv", self.contacts.take()),
        ] {
            if let Some(w) = writer {
                w.into_inner()
                    .map_err(|e| RecordError::Io {
                        path: self.dir.join(file).display().to_string(),
                        error: e.into_error(),
                    })?
                    .sync_all()
                    .map_err(|error| RecordError::Io {
                        path: self.dir.join(file).display().to_string(),
                        error,
                    })?;
            }
        }
        let summary = self.builder.finish(failure);
        write_json(&self.dir.join("summary.json"), &summary)?;
        Ok(summary)
    }
}

impl Recorder for RunWriter {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.write_headers(&header)?;
        let header = self.completed(header);
        self.builder.set_header(header);
        Ok(())
    }

    fn warn(&mut self, warning: &str) -> Result<(), RecordError> {
        self.builder.warn(warning);
        Ok(())
    }

    fn record(&mut self, s: &StepRecord, analytical: Option<f64>) -> Result<(), RecordError> {
        self.builder.add(s);
        let mut text = String::new();
        if let Some(w) = self.steps.as_mut() {
            let result = write_row(w, &step_cells(s, analytical), &mut text);
            result.map_err(|e| self.csv_error("steps.csv", e))?;
        }
        if let Some(w) = self.contacts.as_mut() {
            let result = contact_cells(s).try_for_each(|cells| write_row(w, &cells, &mut text));
            result.map_err(|e| self.csv_error("contacts.csv", e))?;
        }
        Ok(())
    }
}

/// Writes one row of cells, each formatted into `text` (reused: no string per cell).
fn write_row(w: &mut csv::Writer<File>, cells: &[Cell], text: &mut String) -> csv::Result<()> {
    for cell in cells {
        text.clear();
        cell.write_csv(text);
        w.write_field(text.as_bytes())?;
    }
    w.write_record(None::<&[u8]>)
}

/// One cell of a record row: written to `steps.csv` / `contacts.csv` by [`RunWriter`],
/// turned into numpy columns by the Python package (one layout for both).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A count or an index.
    Int(i64),
    /// A number.
    Float(f64),
    /// A text (a pair's name, a status; may be empty).
    Text(String),
    /// A number that was not computed (an empty CSV cell, NaN in numpy).
    Absent,
}

impl Cell {
    /// The cell as written in a CSV file (floats short and round-tripping).
    pub fn to_csv(&self) -> String {
        let mut text = String::new();
        self.write_csv(&mut text);
        text
    }

    /// [`Cell::to_csv`] appended to `text`.
    pub fn write_csv(&self, text: &mut String) {
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = match self {
            Cell::Int(i) => write!(text, "{i}"),
            Cell::Float(x) => write!(text, "{x:?}"),
            Cell::Text(t) => text.write_str(t),
            Cell::Absent => Ok(()),
        };
    }
}

/// The column names of `steps.csv` for a run.
pub fn step_column_names(header: &RunHeader) -> Vec<String> {
    let mut names: Vec<String> = vec![columns::STEP.into(), columns::TIME.into()];
    names.extend(columns::BASE.iter().map(|s| s.to_string()));
    names.extend(header.q_names.iter().map(|n| format!("q_{n}")));
    names.extend(header.v_names.iter().map(|n| format!("v_{n}")));
    names.push(columns::NUM_CONTACTS.into());
    names.extend(ProblemMetrics::COLUMNS.iter().map(|s| s.to_string()));
    names.extend(
        [
            columns::KINETIC_ENERGY,
            columns::POTENTIAL_ENERGY,
            columns::MECHANICAL_ENERGY,
            columns::ANALYTICAL_ENERGY,
            columns::ITERATIONS,
        ]
        .iter()
        .chain(columns::STAGE_TIMES.iter())
        .chain(&[
            columns::STEP_TIME,
            columns::CONVERGED,
            columns::SOLVER_STATUS,
            columns::COLLISION_FAILURES,
            columns::STATUS,
        ])
        .map(|s| s.to_string()),
    );
    if header.task {
        names.extend(columns::TASK.iter().map(|s| s.to_string()));
    }
    names
}

/// The column names of `contacts.csv`.
pub fn contact_column_names() -> Vec<String> {
    let mut names = vec![
        columns::STEP,
        columns::TIME,
        columns::CONTACT,
        columns::PAIR,
    ];
    names.extend(columns::POINT);
    names.push(columns::SIGNED_DISTANCE);
    names.extend(columns::LAMBDA);
    names.extend(columns::VELOCITY);
    names.into_iter().map(str::to_string).collect()
}

/// The row of `steps.csv` for a step, in the order of [`step_column_names`]: a metric
/// not computed (no contact, or `step_metrics` without it) is [`Cell::Absent`].
pub fn step_cells(s: &StepRecord, analytical: Option<f64>) -> Vec<Cell> {
    let solved = !s.contacts.is_empty();
    let mut row = vec![Cell::Int(s.step as i64), Cell::Float(s.time)];
    row.extend(s.base_position.iter().map(|x| Cell::Float(*x)));
    row.extend(s.q.iter().map(|x| Cell::Float(*x)));
    row.extend(s.v.iter().map(|x| Cell::Float(*x)));
    row.push(Cell::Int(s.contacts.len() as i64));
    let values = s
        .metrics
        .as_ref()
        .map_or([None; ProblemMetrics::COLUMNS.len()], |m| {
            m.column_options()
        });
    row.extend(values.into_iter().map(|value| match value {
        Some(v) if solved => Cell::Float(v),
        _ => Cell::Absent,
    }));
    row.extend([s.energy.kinetic, s.energy.potential, s.energy.total()].map(Cell::Float));
    row.push(analytical.map_or(Cell::Absent, Cell::Float));
    row.push(Cell::Int(s.iterations as i64));
    let t = &s.timings;
    row.extend(
        [
            t.dynamics,
            t.collision,
            t.assembly,
            t.solve,
            t.integration,
            t.total(),
        ]
        .map(Cell::Float),
    );
    row.push(Cell::Int(i64::from(s.converged)));
    row.push(Cell::Text(
        s.solver_status
            .as_ref()
            .map_or_else(String::new, status_tag),
    ));
    row.push(Cell::Int(s.collision_failures as i64));
    row.push(Cell::Text(s.status.clone()));
    if let Some(t) = &s.task {
        row.extend(
            [
                t.target_velocity[0],
                t.target_velocity[1],
                t.base_velocity[0],
                t.base_velocity[1],
                t.distance,
            ]
            .map(Cell::Float),
        );
        row.push(Cell::Int(i64::from(t.fallen)));
        row.push(Cell::Int(i64::from(t.qp_solved)));
        row.push(Cell::Float(t.qp_time));
    }
    row
}

/// The rows of `contacts.csv` for a step, in the order of [`contact_column_names`].
pub fn contact_cells(s: &StepRecord) -> impl Iterator<Item = Vec<Cell>> + '_ {
    s.contacts.iter().enumerate().map(move |(i, c)| {
        let mut row = vec![
            Cell::Int(s.step as i64),
            Cell::Float(s.time),
            Cell::Int(i as i64),
            Cell::Text(c.pair.clone()),
        ];
        row.extend(c.point.iter().map(|x| Cell::Float(*x)));
        row.push(Cell::Float(c.signed_distance));
        row.extend(c.lambda.iter().map(|x| Cell::Float(*x)));
        row.extend(c.velocity.iter().map(|x| Cell::Float(*x)));
        row
    })
}

fn csv_writer(path: &Path) -> Result<csv::Writer<File>, RecordError> {
    csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_path(path)
        .map_err(|error| RecordError::Csv {
            path: path.display().to_string(),
            error,
        })
}

/// Writes a value as pretty JSON.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RecordError> {
    let io_err = |error| RecordError::Io {
        path: path.display().to_string(),
        error,
    };
    let file = File::create(path).map_err(io_err)?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut w, value).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })?;
    w.write_all(b"\n").map_err(io_err)?;
    w.flush().map_err(io_err)
}

/// Reads a JSON file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RecordError> {
    let text = std::fs::read_to_string(path).map_err(|error| RecordError::Io {
        path: path.display().to_string(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })
}

/// What a CSV column holds, as far as read.
#[derive(Debug, Clone, PartialEq)]
enum Column {
    /// Only empty cells so far (their count).
    Empty(usize),
    /// Numbers (an empty cell is NaN: no value).
    Numbers(Vec<f64>),
    /// Text (`pair`, `status`): skipped.
    Text,
}

/// Reads the numeric columns of a CSV file by name. A column whose first non-empty cell
/// is not a number (`status`, `pair`) is skipped; an empty cell is "no value" and read as
/// NaN; a cell that says NaN or infinity, or that is not a number in a numeric column, is
/// an error naming the file, row and column.
pub fn read_columns(path: &Path) -> Result<BTreeMap<String, Vec<f64>>, RecordError> {
    let shown = path.display().to_string();
    let csv_err = |error| RecordError::Csv {
        path: shown.clone(),
        error,
    };
    let mut reader = csv::Reader::from_path(path).map_err(csv_err)?;
    let header: Vec<String> = reader
        .headers()
        .map_err(csv_err)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut columns: Vec<Column> = vec![Column::Empty(0); header.len()];
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(csv_err)?;
        for (k, field) in record.iter().enumerate() {
            let Some(column) = columns.get_mut(k) else {
                continue;
            };
            let field = field.trim();
            let parsed = if field.is_empty() {
                None
            } else {
                Some(field.parse::<f64>())
            };
            let cell_error = |finite: bool| {
                let (path, row, column, value) =
                    (shown.clone(), row + 1, header[k].clone(), field.to_string());
                if finite {
                    RecordError::NotANumber {
                        path,
                        row,
                        column,
                        value,
                    }
                } else {
                    RecordError::NotFinite {
                        path,
                        row,
                        column,
                        value,
                    }
                }
            };
            match (&mut *column, parsed) {
                (Column::Text, _) => {}
                (Column::Empty(n), None) => *n += 1,
                (Column::Numbers(v), None) => v.push(f64::NAN),
                (_, Some(Ok(x))) if !x.is_finite() => return Err(cell_error(false)),
                (Column::Empty(n), Some(Ok(x))) => {
                    let mut v = vec![f64::NAN; *n];
                    v.push(x);
                    *column = Column::Numbers(v);
                }
                (Column::Numbers(v), Some(Ok(x))) => v.push(x),
                (Column::Empty(_), Some(Err(_))) => *column = Column::Text,
                (Column::Numbers(_), Some(Err(_))) => return Err(cell_error(true)),
            }
        }
    }
    Ok(header
        .into_iter()
        .zip(columns)
        .filter_map(|(name, col)| match col {
            Column::Numbers(v) => Some((name, v)),
            Column::Empty(n) => Some((name, vec![f64::NAN; n])),
            Column::Text => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_short_and_round_trip() {
        let x = -6.938893903907228e-18;
        assert_eq!(fmt_f64(x), "-6.938893903907228e-18");
        assert_eq!(fmt_f64(0.1), "0.1");
        assert_eq!(fmt_f64(1.0), "1.0");
        assert_eq!(fmt_f64(1e20), "1e20");
        for v in [x, 0.1, 1.0 / 3.0, 123456.789, 1e-300, f64::MAX] {
            assert_eq!(fmt_f64(v).parse::<f64>().ok(), Some(v));
        }
    }
}
