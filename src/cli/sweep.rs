//! `contactbench sweep`: time-step or tolerance sweep of a scenario, each solver against
//! its own reference run (paper Tab. III and IV); prints a Markdown table (or JSON with
//! `--json`) and, with `--out DIR`, writes `sweep.json` and `sweep.md` there.
//!
//! With `--scene path=value` (repeatable), a sweep over scenes instead, e.g. the size of a
//! generated pile: µs per step against contacts and the fitted growth exponent, measured
//! as `bench-step --sweep` measures them (the same code).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use contactbench::simulation::output::Staging;
use contactbench::simulation::recorder::write_json;
use contactbench::simulation::sweep::{check_limits, sweep, SweepKind};
use contactbench::simulation::SolverFactory;

use super::bench_step;
use super::common::{load_scenarios, replace_policy, runner, scenario_factory, UsageError};
use super::out::{out, outln};

/// Arguments of `contactbench sweep`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("kind").required(true).args(["dt", "eps", "scenes"])))]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Time steps (s) to compare with a Δt = 1e-4 s reference, e.g. `1e-3,1e-2,1e-1`.
    #[arg(long, value_delimiter = ',')]
    pub dt: Vec<f64>,
    /// Tolerances `eps_abs` to compare with an `eps_abs = 1e-9` reference.
    #[arg(long, value_delimiter = ',')]
    pub eps: Vec<f64>,
    /// Scenes to time, each a change `path=value` applied after the `--set` ones
    /// (repeatable), e.g. `--scene 'world.generate.columns={nx: 4, ny: 4, height: 4}'`:
    /// µs per recorded step (every metric) against contacts, with the growth exponent,
    /// for one solver (`--solver`, default `ncp-admm`), as `bench-step --sweep`.
    #[arg(long = "scene", conflicts_with_all = ["out", "force"])]
    pub scenes: Vec<String>,
    /// With `--scene`: steps per timed block.
    #[arg(long, default_value_t = 100, requires = "scenes")]
    pub steps: usize,
    /// With `--scene`: timed blocks per scene (the median is reported).
    #[arg(long, default_value_t = 3, requires = "scenes")]
    pub repeats: usize,
    /// With `--scene`: untimed steps before each block.
    #[arg(long, default_value_t = 20, requires = "scenes")]
    pub settle: usize,
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
    if !args.scenes.is_empty() {
        return run_scenes(args);
    }
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

/// `sweep --scene`: `bench-step --sweep` over the scenes.
fn run_scenes(args: Args) -> anyhow::Result<ExitCode> {
    let solver = match args.solvers.as_slice() {
        [] => "ncp-admm".to_string(),
        [one] => one.clone(),
        _ => {
            return Err(
                UsageError("--scene times one solver: give at most one --solver".into()).into(),
            )
        }
    };
    bench_step::run(bench_step::Args {
        scenario: args.scenario,
        solver,
        steps: args.steps,
        repeats: args.repeats,
        settle: args.settle,
        overrides: args.overrides,
        sweeps: args.scenes,
        metrics: bench_step::Metrics::All,
        no_record: false,
        derivatives: false,
        describe: false,
        json: args.json,
    })
}
