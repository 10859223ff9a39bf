//! Section IV of "Contact Models in Robotics: a Comparative Analysis" (Le Lidec et al.),
//! reproduced: one [`Experiment`] per table and figure (Tab. III, IV; Fig. 9-18), each
//! defined in one file of [`experiments`] — its scenarios (`scenarios/paper/`), its
//! parameter grid, what it plots, and which of the paper's numbers and claims it is
//! compared with. [`run_paper`] runs a selection and writes, per experiment, PNG and SVG
//! figures, CSV data and a Markdown page (paper's numbers beside ours, the paper's
//! claims tested on our data), plus a summary page linking them.
//!
//! Fig. 17 and 18 (the paper's MPC locomotion on flat and bumpy ground) are reproduced
//! with the project's own trot controller (`simulation::locomotion`): the paper's MPC
//! (its reference \[69\]) is not public in ContactBench's repository.

pub mod claims;
pub mod collision;
pub mod earlier;
pub mod experiments;
pub mod gradients;
pub mod internal;
pub mod locked;
pub mod measurable;
pub mod names;
pub mod page;
pub mod protocol;
pub mod runs;
pub mod smoothing;
pub mod timing;
pub mod verdicts;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use thiserror::Error;

use crate::report::chart::{render, Figure};
use crate::report::ReportError;
use crate::simulation::factory::SolverFactory;
use crate::simulation::output::{Replace, Staging};
use crate::simulation::recorder::{write_json, RecordError};
use crate::simulation::{ScenarioError, SimulationError};
use crate::solvers::{SolverError, SolverId};
use page::{summary_markdown, Page, Stamp, SummaryLine};
use verdicts::Verdicts;

/// Why an experiment could not be made.
#[derive(Debug, Error)]
pub enum PaperError {
    /// A scenario of `scenarios/paper/` was refused.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A run could not start.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
    /// A solver could not be built.
    #[error("solver: {0}")]
    Solver(#[from] SolverError),
    /// Writing data failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Drawing failed.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A file could not be written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        error: std::io::Error,
    },
    /// A run the experiment needs stopped early.
    #[error("run {run} stopped early: {reason}")]
    RunFailed {
        /// Scenario and solver.
        run: String,
        /// Why.
        reason: String,
    },
    /// The selection names an unknown experiment.
    #[error("unknown experiment '{0}' (known: {known})", known = known_ids().join(", "))]
    UnknownExperiment(String),
    /// The run cache was poisoned by a panic in another experiment.
    #[error("the run cache is unusable after a panic in another experiment")]
    CachePoisoned,
    /// A robot's joints could not be locked.
    #[error(transparent)]
    Lock(#[from] locked::LockError),
    /// A verdict file (`--expect-verdicts`) could not be read.
    #[error("{path}: not a verdict file of contactbench paper: {message}")]
    VerdictFile {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// What the paper shows that is not reproduced, and why: empty, every table and figure
/// of §IV has an experiment.
pub const NOT_REPRODUCED: [(&str, &str); 0] = [];

/// Where an experiment writes, at which size it runs, and the user's solvers it adds to
/// its compared set.
#[derive(Debug, Clone)]
pub struct Context {
    /// The experiment's directory (`OUT/<id>`).
    pub dir: PathBuf,
    /// The CI size: smaller grids, shorter runs.
    pub quick: bool,
    /// Solvers compared beside the built-in ones ([`run_paper_with`]), by the experiments
    /// whose [`Experiment::compares_extra_solvers`] is true.
    pub extra_solvers: Vec<Arc<dyn SolverFactory>>,
}

impl Context {
    fn io(path: &Path, error: std::io::Error) -> PaperError {
        PaperError::Io {
            path: path.display().to_string(),
            error,
        }
    }

    /// Writes `rows` under `header` as `<name>` (CSV) and returns the file name.
    pub fn csv(
        &self,
        name: &str,
        header: &[&str],
        rows: &[Vec<String>],
    ) -> Result<String, PaperError> {
        let path = self.dir.join(name);
        let fail = |error: csv::Error| {
            PaperError::Record(RecordError::Csv {
                path: path.display().to_string(),
                error,
            })
        };
        let mut w = csv::Writer::from_path(&path).map_err(fail)?;
        w.write_record(header).map_err(fail)?;
        for row in rows {
            w.write_record(row).map_err(fail)?;
        }
        w.flush().map_err(|e| Self::io(&path, e))?;
        Ok(name.to_string())
    }

    /// Draws `figure` as `<stem>.png` and `<stem>.svg` and returns `stem`.
    pub fn figure(&self, stem: &str, figure: &Figure) -> Result<String, PaperError> {
        render(figure, &self.dir, stem)?;
        Ok(stem.to_string())
    }
}

/// One table or figure of §IV.
pub trait Experiment: Sync {
    /// Short id, as given to `--only` (`tab3`, `fig12`).
    fn id(&self) -> &'static str;
    /// Where in the paper (`§IV-B, Tab. III`).
    fn paper_ref(&self) -> &'static str;
    /// Title.
    fn title(&self) -> &'static str;
    /// Runs the experiment, writes its data and figures into `ctx.dir`, returns its page.
    fn run(&self, ctx: &Context) -> Result<Page, PaperError>;
    /// True when the experiment runs [`Context::extra_solvers`] beside its own solvers
    /// (an experiment that studies named built-in solvers does not).
    fn compares_extra_solvers(&self) -> bool {
        false
    }
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Experiment ids; all when empty.
    pub only: Vec<String>,
    /// The CI size.
    pub quick: bool,
    /// Replace an earlier output of `contactbench paper` (`--force`).
    pub force: bool,
    /// An earlier run's verdicts (`--earlier`): each page lists the verdicts that differ
    /// from them and why, and `OUT/earlier.json` keeps a copy.
    pub earlier: Option<Verdicts>,
}

/// The outcome of `run_paper`: where the summary is, each experiment's line, and the
/// verdicts written to `OUT/paper.json`.
#[derive(Debug)]
pub struct PaperOutcome {
    /// `OUT/README.md`.
    pub summary: PathBuf,
    /// One line per experiment (its page or its error).
    pub lines: Vec<SummaryLine>,
    /// Every claim's verdict, as in `OUT/paper.json`.
    pub verdicts: Verdicts,
}

impl PaperOutcome {
    /// Experiments that ended in an error (not a claim that does not hold).
    pub fn errors(&self) -> Vec<(&str, &str)> {
        self.lines
            .iter()
            .filter_map(|l| {
                l.outcome
                    .as_ref()
                    .err()
                    .map(|e| (l.id.as_str(), e.as_str()))
            })
            .collect()
    }
}

/// Every experiment id: the contact models paper's, then the collision papers'
/// ([`collision`], selected by id with `--only` or by `contactbench paper --paper collision`).
pub fn known_ids() -> Vec<&'static str> {
    let mut ids = experiments::ids();
    ids.extend(collision::ids());
    ids.extend(smoothing::ids());
    ids.extend(gradients::ids());
    ids
}

/// The experiments of `options`, in the papers' order (all of the contact models paper's
/// when `only` is empty).
fn selection(options: &Options) -> Result<Vec<&'static dyn Experiment>, PaperError> {
    if options.only.is_empty() {
        return Ok(experiments::all());
    }
    let mut all = experiments::all();
    all.extend(collision::all());
    all.extend(smoothing::all());
    all.extend(gradients::all());
    for id in &options.only {
        if !all.iter().any(|e| e.id() == id.trim()) {
            return Err(PaperError::UnknownExperiment(id.clone()));
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| options.only.iter().any(|id| id.trim() == e.id()))
        .collect())
}

/// Runs the selected experiments into `out`, through a staging directory published at
/// the end (`simulation::output::Staging`: locked, complete or absent, replacing an
/// earlier output of ours only when `options.force`): `out/<id>/README.md` per experiment
/// with its figures and data, `out/README.md` the summary, `out/paper.json` the verdicts
/// (and `out/earlier.json`, the earlier verdicts the pages are compared with).
/// An experiment that fails is reported on the summary and in [`PaperOutcome::errors`];
/// the others go on.
pub fn run_paper(out: &Path, options: &Options) -> Result<PaperOutcome, PaperError> {
    run_paper_with(out, options, &[])
}

/// [`run_paper`] with a user's solvers added to the compared set of the experiments that
/// compare solvers ([`Experiment::compares_extra_solvers`]; the others say on their page
/// that they left them out). Each extra solver runs at the experiment's settings (its
/// criterion, tolerance and iteration cap, through [`SolverFactory::with_settings`]) under
/// our protocol, and appears in its tables and figures by its name, which must differ
/// from the built-in ids and from each other.
pub fn run_paper_with(
    out: &Path,
    options: &Options,
    extra_solvers: &[Arc<dyn SolverFactory>],
) -> Result<PaperOutcome, PaperError> {
    check_extra_names(extra_solvers)?;
    let chosen = selection(options)?;
    let replace = if options.force {
        Replace::Ours
    } else {
        Replace::Never
    };
    let staging = Staging::create(out, replace).map_err(RecordError::from)?;
    let (lines, verdicts) = write_all(staging.path(), &chosen, options, extra_solvers)?;
    let out = staging.publish().map_err(RecordError::from)?;
    Ok(PaperOutcome {
        summary: out.join("README.md"),
        lines,
        verdicts,
    })
}

/// Refuses an extra solver named like a built-in one or like another extra: runs and
/// rows are told apart by name.
fn check_extra_names(extra_solvers: &[Arc<dyn SolverFactory>]) -> Result<(), PaperError> {
    for (k, factory) in extra_solvers.iter().enumerate() {
        let name = factory.name();
        let taken =
            name.parse::<SolverId>().is_ok() || extra_solvers[..k].iter().any(|f| f.name() == name);
        if taken {
            return Err(SolverError::InvalidSpec {
                spec: name,
                message: "an extra solver needs a name of its own (not a built-in id, not \
                          another extra solver's)"
                    .into(),
            }
            .into());
        }
    }
    Ok(())
}

/// The note of a page whose experiment left the extra solvers out.
fn extra_solvers_note(extra_solvers: &[Arc<dyn SolverFactory>]) -> String {
    let names: Vec<String> = extra_solvers.iter().map(|f| f.name()).collect();
    format!(
        "Extra solvers ({}) are not run in this experiment: it studies the paper's named \
         built-in solvers.",
        names.join(", ")
    )
}

fn write_all(
    dir: &Path,
    chosen: &[&'static dyn Experiment],
    options: &Options,
    extra_solvers: &[Arc<dyn SolverFactory>],
) -> Result<(Vec<SummaryLine>, Verdicts), PaperError> {
    let started = Instant::now();
    let commit = verdicts::source_commit();
    let mut lines = Vec::new();
    for experiment in chosen {
        let compares = experiment.compares_extra_solvers();
        let ctx = Context {
            dir: dir.join(experiment.id()),
            quick: options.quick,
            extra_solvers: if compares {
                extra_solvers.to_vec()
            } else {
                Vec::new()
            },
        };
        std::fs::create_dir_all(&ctx.dir).map_err(|e| Context::io(&ctx.dir, e))?;
        let clock = Instant::now();
        eprintln!("paper: {} ({})", experiment.id(), experiment.paper_ref());
        let outcome = match catch_unwind(AssertUnwindSafe(|| experiment.run(&ctx))) {
            Ok(Ok(mut page)) => {
                if !compares && !extra_solvers.is_empty() {
                    page.notes.push(extra_solvers_note(extra_solvers));
                }
                page.changes = options
                    .earlier
                    .as_ref()
                    .map(|e| earlier::compare(e, experiment.id(), &page.claims));
                let path = ctx.dir.join("README.md");
                std::fs::write(&path, page.to_markdown(options.quick, &commit))
                    .map_err(|e| Context::io(&path, e))?;
                Ok(page)
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the experiment panicked".to_string()),
        };
        lines.push(SummaryLine {
            id: experiment.id().into(),
            paper_ref: experiment.paper_ref().into(),
            title: experiment.title().into(),
            outcome,
            seconds: clock.elapsed().as_secs_f64(),
        });
    }
    let stamp = Stamp {
        commit,
        date: verdicts::utc_date(),
        quick: options.quick,
        seconds: started.elapsed().as_secs_f64(),
    };
    let summary = dir.join("README.md");
    let text = if chosen.iter().all(|e| collision::is_collision(e.id())) {
        collision::summary_markdown(&lines, options.quick)
    } else if chosen.iter().all(|e| smoothing::is_smoothing(e.id())) {
        smoothing::summary_markdown(&lines, options.quick)
    } else if chosen.iter().all(|e| gradients::is_gradients(e.id())) {
        gradients::summary_markdown(&lines, options.quick)
    } else {
        summary_markdown(&lines, &stamp, &NOT_REPRODUCED)
    };
    std::fs::write(&summary, text).map_err(|e| Context::io(&summary, e))?;
    let verdicts = Verdicts::of(&lines, &stamp.commit, options.quick);
    write_json(&dir.join("paper.json"), &verdicts)?;
    if let Some(earlier) = &options.earlier {
        write_json(&dir.join("earlier.json"), earlier)?;
    }
    Ok((lines, verdicts))
}
