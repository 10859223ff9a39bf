//! `contactbench run`: one scenario with its solvers (or those given), in parallel; the
//! results directory is published whole at the end and a summary per solver is printed.

use std::path::PathBuf;
use std::process::ExitCode;

use contactbench::report::tables::summary_table;
use contactbench::simulation::batch;
use contactbench::simulation::output::fresh_dir;
use contactbench::simulation::recorder::RunSummary;

use super::common::{
    jobs, load_scenarios, print_run_notes, replace_policy, runner, runs_exit_code,
};
use super::out::{out, outln};

/// Arguments of `contactbench run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Solver to run instead of the scenario's list (repeatable), e.g. `ncp-pgs` or
    /// `ncp-admm:eps_rel=1e-8,max_iter=500`; it keeps the scenario's settings for that
    /// solver (or those all its solvers share) unless given here.
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Results directory; it must not exist (or be empty) unless `--force`. Default
    /// `results/<scenario name>`, or `results/<scenario name>-N` when that exists.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an earlier results directory written by contactbench (never a directory
    /// holding files contactbench did not write).
    #[arg(long)]
    pub force: bool,
    /// Print the manifest (every run's summary) as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Change a scenario value before running, `path=value` (repeatable), e.g.
    /// `--set world.bodies.1.mass=1000 --set simulation.dt=1e-2`.
    #[arg(long = "set")]
    pub overrides: Vec<String>,
}

/// Runs the command; exits with 1 if a run failed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenarios = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?;
    let default = PathBuf::from("results").join(&scenarios[0].name);
    let out = match args.out {
        Some(out) => out,
        None if args.force => default,
        None => fresh_dir(&default),
    };
    let jobs = jobs(scenarios, &args.solvers)?;
    let manifest = batch::run_batch(
        &jobs,
        &out,
        runner(),
        !args.json,
        replace_policy(args.force),
    )?;
    let summaries: Vec<RunSummary> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&manifest)?);
    } else {
        out!("{}", summary_table(&summaries));
        outln!("results: {}", out.display());
    }
    print_run_notes(&summaries);
    Ok(runs_exit_code(&summaries))
}
