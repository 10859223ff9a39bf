//! `contactbench sweep`: time-step or tolerance sweep of a scenario, each solver against
//! its own reference run (paper Tab. III and IV); prints a Markdown table (or JSON with
//! `--json`) and, with `--out DIR`, writes `sweep.json` and `sweep.md` there.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use contactbench::simulation::output::Staging;
use contactbench::simulation::recorder::write_json;
use contactbench::simulation::sweep::{check_limits, sweep, SweepKind};
use contactbench::simulation::SolverFactory;

use super::common::{load_scenarios, replace_policy, runner, scenario_factory, UsageError};
use super::out::{out, outln};

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
    /// Solver to sweep instead of the scenario's list (repeatable); it keeps the
    /// scenario's settings unless given here.
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Change a scenario value before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Print the table as JSON on stdout instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write `sweep.json` and `sweep.md` into this directory (it must not exist, or
    /// be empty, unless `--force`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an earlier output directory written by contactbench.
    #[arg(long)]
    pub force: bool,
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
        if !(v.is_finite() && *v > 0.0) {
            return Err(UsageError(format!("sweep value {v} must be finite and > 0")).into());
        }
    }
    check_limits(&scenario, kind, &values)?;
    let specs: Vec<Arc<dyn SolverFactory>> = if args.solvers.is_empty() {
        scenario
            .solver_specs()
            .into_iter()
            .map(|s| Arc::new(s) as Arc<dyn SolverFactory>)
            .collect()
    } else {
        args.solvers
            .iter()
            .map(|t| scenario_factory(&scenario, t))
            .collect::<anyhow::Result<Vec<_>>>()?
    };
    for spec in &specs {
        spec.build()?;
    }
    let staging = match &args.out {
        Some(out) => Some(Staging::create(out, replace_policy(args.force))?),
        None => None,
    };
    let table = sweep(&scenario, &specs, kind, &values, runner());
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&table)?);
    } else {
        out!("{}", table.to_markdown());
    }
    if let Some(staging) = staging {
        write_json(&staging.path().join("sweep.json"), &table)?;
        let md = staging.path().join("sweep.md");
        std::fs::write(&md, table.to_markdown())
            .map_err(|e| anyhow::anyhow!("{}: {e}", md.display()))?;
        let dir = staging.publish()?;
        eprintln!("sweep written: {}", dir.display());
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
