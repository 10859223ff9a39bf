//! `contactbench batch`: every scenario × solver in parallel, with a progress bar; a
//! failing run is recorded as failed and the others go on. With `--baseline`, a
//! regression gate on the physical results.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use contactbench::corpus::tasks::Shard;
use contactbench::report::tables::summary_table;
use contactbench::simulation::batch::{self, Tolerances};
use contactbench::simulation::recorder::{read_json, write_json, RunSummary};

use super::common::{
    install_signal_handler, jobs, load_scenarios, print_run_notes, replace_policy, runner,
    runs_exit_code, scenario_files, UsageError,
};
use super::out::{out, outln};

/// Arguments of `contactbench batch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario files or directories of scenario files (`*.yaml`).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Results directory (published whole at the end); it must not exist (or be empty)
    /// unless `--force`.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an earlier results directory written by contactbench (never a directory
    /// holding files contactbench did not write).
    #[arg(long)]
    pub force: bool,
    /// Print the manifest (every run's summary) as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Solver to run on every scenario instead of each scenario's list (repeatable); it
    /// keeps each scenario's settings unless given here.
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Change a value in every scenario before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Compare with a stored baseline (JSON list of run summaries, from
    /// `--write-baseline`); exit with 1 on a regression beyond the tolerances.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Store this batch's summaries as a baseline file (it must not exist unless `--force`).
    #[arg(long)]
    pub write_baseline: Option<PathBuf>,
    /// Run only shard K of N (1 <= K <= N) of the scenario × solver runs: run `i` (in
    /// file order, then each scenario's solver order) belongs to shard `i mod N + 1`, as
    /// in `bench-problems`. Default: from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT
    /// in a Slurm job array, else every run. Each shard writes its own `--out`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Largest change of a final base position (m).
    #[arg(long, default_value_t = Tolerances::default().position)]
    pub tol_position: f64,
    /// Largest relative change of a final mechanical energy.
    #[arg(long, default_value_t = Tolerances::default().energy)]
    pub tol_energy: f64,
    /// Largest growth factor of the maximum NCP criterion.
    #[arg(long, default_value_t = Tolerances::default().residual_factor)]
    pub tol_residual_factor: f64,
}

/// Runs the command; exits with 1 on a failed run, or on a regression.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    install_signal_handler();
    let files = scenario_files(&args.inputs)?;
    let scenarios = load_scenarios(&files, &args.overrides)?;
    let baseline: Option<Vec<RunSummary>> = match &args.baseline {
        Some(path) => Some(read_json(path).with_context(|| "--baseline".to_string())?),
        None => None,
    };
    if let Some(path) = &args.write_baseline {
        if path.exists() && !args.force {
            return Err(UsageError(format!(
                "--write-baseline {}: exists; pass --force to replace it",
                path.display()
            ))
            .into());
        }
    }
    let shard = match &args.shard {
        Some(text) => Shard::parse(text),
        None => Shard::from_slurm(|name| std::env::var(name).ok()).map(|s| s.unwrap_or(Shard::ALL)),
    }
    .map_err(|e| UsageError(format!("--shard: {e}")))?;
    let all = jobs(scenarios, &args.solvers)?;
    let total = all.len();
    let jobs: Vec<_> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.owns(*i))
        .map(|(_, job)| job)
        .collect();
    if shard != Shard::ALL {
        eprintln!(
            "{total} runs; shard {}/{}: {} runs",
            shard.index,
            shard.count,
            jobs.len()
        );
    }
    let manifest = batch::run_batch(
        &jobs,
        &args.out,
        runner(),
        !args.json,
        replace_policy(args.force),
    )?;
    let summaries: Vec<RunSummary> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&manifest)?);
    } else {
        out!("{}", summary_table(&summaries));
        outln!("results: {}", args.out.display());
    }
    print_run_notes(&summaries);
    if let Some(path) = &args.write_baseline {
        write_json(path, &summaries)?;
        eprintln!("baseline written: {}", path.display());
    }
    let Some(baseline) = baseline else {
        return Ok(runs_exit_code(&summaries));
    };
    let tol = Tolerances {
        position: args.tol_position,
        energy: args.tol_energy,
        residual_factor: args.tol_residual_factor,
        ..Tolerances::default()
    };
    let regressions = batch::compare(&summaries, &baseline, &tol);
    if regressions.is_empty() {
        eprintln!(
            "baseline: {} runs within tolerance (position {:.1e} m, energy {:.1e} relative, NCP criterion x{})",
            baseline.len(),
            tol.position,
            tol.energy,
            tol.residual_factor
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("baseline: {} regression(s):", regressions.len());
    for r in &regressions {
        eprintln!("  {} / {}: {}", r.scenario, r.solver, r.what);
    }
    Ok(ExitCode::FAILURE)
}
