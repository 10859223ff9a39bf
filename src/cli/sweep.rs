//! `contactbench sweep`: time-step or tolerance sweep of a scenario, each solver against
//! its own reference run (paper Tab. III and IV); prints a Markdown table.

use std::path::PathBuf;
use std::process::ExitCode;

use contactbench::simulation::recorder::write_json;
use contactbench::simulation::sweep::{sweep, SweepKind};

use super::common::{load_scenarios, parse_solvers, runner};

/// Arguments of `contactbench sweep`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("kind").required(true).args(["dt", "eps"])))]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Time steps (s) to compare with a Δt = 1e-4 s reference, e.g. `1e-3,1e-2,1e-1`.
    #[arg(long, value_delimiter = ',')]
    pub dt: Vec<f64>,
    /// Tolerances `eps_abs` to compare with an `eps_abs = 1e-9` reference.
    #[arg(long, value_delimiter = ',')]
    pub eps: Vec<f64>,
    /// Solver to sweep instead of the scenario's list (repeatable).
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Change a scenario value before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Also write the table as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs the command; exits with 1 if a cell has no number.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenario = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?.remove(0);
    let (kind, values) = if args.dt.is_empty() {
        (SweepKind::Tolerance, args.eps)
    } else {
        (SweepKind::TimeStep, args.dt)
    };
    for v in &values {
        anyhow::ensure!(v.is_finite() && *v > 0.0, "sweep value {v} must be > 0");
    }
    let specs = parse_solvers(&args.solvers)?.unwrap_or_else(|| scenario.solver_specs());
    let table = sweep(&scenario, &specs, kind, &values, runner());
    print!("{}", table.to_markdown());
    if let Some(path) = &args.json {
        write_json(path, &table)?;
    }
    let complete = table
        .rows
        .iter()
        .all(|r| r.cells.iter().all(|c| c.consistency_error.is_some()));
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
