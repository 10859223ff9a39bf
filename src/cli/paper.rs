//! `contactbench paper`: the tables and figures of §IV of the contact models paper, or of
//! the collision papers (GJK++, "Collision Detection Accelerated"), each with its page
//! (paper's numbers beside ours, claims tested on our data).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::common::user_solvers;
use super::out::outln;
use anyhow::Context;
use contactbench::paper::verdicts::Verdicts;
use contactbench::paper::{collision, experiments, gradients, run_paper_with, smoothing, Options};
use contactbench::simulation::SolverFactory;

/// Which paper's tables and figures a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Paper {
    /// "Contact Models in Robotics: a Comparative Analysis", §IV.
    #[default]
    Contact,
    /// GJK++ and "Collision Detection Accelerated" (alias: gjk).
    #[value(alias = "gjk")]
    Collision,
    /// "Differentiable Collision Detection: a Randomized Smoothing Approach".
    Smoothing,
    /// The gradient study: derivatives under every contact model and solver against
    /// finite differences.
    Gradients,
}

/// Arguments of `contactbench paper`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output directory; it must not exist unless `--force` (then only an earlier output
    /// of contactbench is replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an earlier output of contactbench at `--out`.
    #[arg(long)]
    pub force: bool,
    /// The paper whose experiments run when `--only` is not given.
    #[arg(long, value_enum, default_value_t = Paper::Contact)]
    pub paper: Paper,
    /// Experiments to run, comma separated, of either paper (default: all of `--paper`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The CI size: smaller grids and shorter runs.
    #[arg(long)]
    pub quick: bool,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// A verdict file (an earlier `OUT/paper.json`): exit with 1 when a claim's verdict
    /// differs from it (CI: `.ci/paper_verdicts_quick.json` at the `--quick` size).
    #[arg(long, value_name = "FILE")]
    pub expect_verdicts: Option<PathBuf>,
    /// An earlier run's verdict file (its `OUT/paper.json`, e.g. the committed
    /// `docs/paper/paper.json`): each page lists the verdicts that differ from it and why.
    #[arg(long, value_name = "FILE")]
    pub earlier: Option<PathBuf>,
}

/// Runs the experiments; exits with 1 if one of them failed or a verdict differs from
/// `--expect-verdicts` (a claim that does not hold is a finding on its page, not a
/// failure).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.list {
        let every = experiments::all()
            .into_iter()
            .chain(collision::all())
            .chain(smoothing::all())
            .chain(gradients::all());
        for e in every {
            outln!("{:<9} {:<18} {}", e.id(), e.paper_ref(), e.title());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let expected = args
        .expect_verdicts
        .as_deref()
        .map(Verdicts::read)
        .transpose()?;
    let earlier = args.earlier.as_deref().map(Verdicts::read).transpose()?;
    let only = match (args.only.is_empty(), args.paper) {
        (true, Paper::Collision) => collision::ids().into_iter().map(String::from).collect(),
        (true, Paper::Smoothing) => smoothing::ids().into_iter().map(String::from).collect(),
        (true, Paper::Gradients) => gradients::ids().into_iter().map(String::from).collect(),
        _ => args.only,
    };
    let options = Options {
        only,
        quick: args.quick,
        force: args.force,
        earlier,
    };
    let extra: Vec<Arc<dyn SolverFactory>> = user_solvers()
        .iter()
        .map(|u| u.clone().into_arc())
        .collect();
    let outcome = run_paper_with(&args.out, &options, &extra)
        .with_context(|| format!("paper --out {}", args.out.display()))?;
    for line in &outcome.lines {
        match &line.outcome {
            Ok(page) => outln!(
                "{:<9} {:<18} {}  ({:.1} s)",
                line.id,
                line.paper_ref,
                page.tally().text(),
                line.seconds
            ),
            Err(e) => outln!("{:<9} {:<18} ERROR: {e}", line.id, line.paper_ref),
        }
    }
    outln!("summary: {}", outcome.summary.display());
    let errors = outcome.errors();
    for (id, e) in &errors {
        eprintln!("error: experiment {id}: {e}");
    }
    let differences = expected.map_or_else(Vec::new, |e| outcome.verdicts.differences(&e));
    for d in &differences {
        eprintln!("verdict changed: {d}");
    }
    if errors.is_empty() && differences.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}
