//! `contactbench run`: one scenario with its solvers (or those given), in parallel; the
//! results directory is published whole at the end and a summary per solver is printed.

use std::path::PathBuf;
use std::process::ExitCode;

use contactbench::report::tables::summary_table;
use contactbench::simulation::batch;

use super::common::{load_scenarios, parse_solvers, runner};

/// Arguments of `contactbench run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Solver to run instead of the scenario's list (repeatable), e.g.
    /// `ncp-admm:eps_rel=1e-8,max_iter=500`.
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Results directory. Default `results/<scenario name>`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Change a scenario value before running, `path=value` (repeatable), e.g.
    /// `--set world.bodies.1.mass=1000 --set simulation.dt=1e-2`.
    #[arg(long = "set")]
    pub overrides: Vec<String>,
}

/// Runs the command; exits with 1 if a run failed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenarios = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?;
    let solvers = parse_solvers(&args.solvers)?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(&scenarios[0].name));
    let jobs = batch::jobs(scenarios, solvers.as_deref());
    let manifest = batch::run_batch(&jobs, &out, runner(), true)?;
    let summaries: Vec<_> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    print!("{}", summary_table(&summaries));
    println!("results: {}", out.display());
    let failed = summaries.iter().any(|s| s.outcome != "completed");
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
