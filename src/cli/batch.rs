//! `contactbench batch`: every scenario × solver in parallel, with a progress bar; a
//! failing run is recorded as failed and the others go on. With `--baseline`, a
//! regression gate on the physical results.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use contactbench::report::tables::summary_table;
use contactbench::simulation::batch::{self, Tolerances};
use contactbench::simulation::recorder::{read_json, write_json, RunSummary};

use super::common::{load_scenarios, parse_solvers, runner, scenario_files};

/// Arguments of `contactbench batch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario files or directories of scenario files (`*.yaml`).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Results directory (published whole at the end).
    #[arg(long)]
    pub out: PathBuf,
    /// Solver to run on every scenario instead of each scenario's list (repeatable).
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Change a value in every scenario before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Compare with a stored baseline (JSON list of run summaries, from
    /// `--write-baseline`); exit with 1 on a regression beyond the tolerances.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Store this batch's summaries as a baseline file.
    #[arg(long)]
    pub write_baseline: Option<PathBuf>,
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

/// Runs the command; exits with 1 on a failed run without baseline, or on a regression.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let files = scenario_files(&args.inputs)?;
    let scenarios = load_scenarios(&files, &args.overrides)?;
    let solvers = parse_solvers(&args.solvers)?;
    let baseline: Option<Vec<RunSummary>> = match &args.baseline {
        Some(path) => Some(read_json(path).with_context(|| "--baseline".to_string())?),
        None => None,
    };
    let jobs = batch::jobs(scenarios, solvers.as_deref());
    let manifest = batch::run_batch(&jobs, &args.out, runner(), true)?;
    let summaries: Vec<RunSummary> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    print!("{}", summary_table(&summaries));
    println!("results: {}", args.out.display());
    if let Some(path) = &args.write_baseline {
        write_json(path, &summaries)?;
        println!("baseline written: {}", path.display());
    }
    let Some(baseline) = baseline else {
        let failed = summaries.iter().any(|s| s.outcome != "completed");
        return Ok(if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    };
    let tol = Tolerances {
        position: args.tol_position,
        energy: args.tol_energy,
        residual_factor: args.tol_residual_factor,
        ..Tolerances::default()
    };
    let regressions = batch::compare(&summaries, &baseline, &tol);
    if regressions.is_empty() {
        println!(
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
