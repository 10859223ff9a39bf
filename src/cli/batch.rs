//! `contactbench batch`: every scenario × solver in parallel, with a progress bar; a
//! failing run is recorded as failed and the others go on. With `--baseline`, a
//! regression gate on the physical results.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contactbench::corpus::bench::ShardChoice;
use contactbench::corpus::tasks::{ArrayGeometry, Shard, SlurmTask};
use contactbench::output::{write_file, SharedDir};
use contactbench::report::tables::summary_table;
use contactbench::simulation::batch::{self, Baseline, BatchSettings, Job, Tolerances};
use contactbench::simulation::output::ResultsManifest;
use contactbench::simulation::recorder::{read_json, RunSummary};
use contactbench::simulation::shards::{is_shard_output, jobs_plan, merge_shards, run_batch_shard};
use serde::{Deserialize, Serialize};

use super::common::{
    jobs, load_scenarios, print_run_notes, replace_policy, runner, runs_exit_code, scenario_files,
    UsageError,
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
    /// Compare with a stored baseline (from `--write-baseline`): refused unless this batch
    /// has the baseline's `--set` and `--solver` flags; exit with 1 on a regression beyond
    /// the tolerances. Runs without a baseline entry are listed, not compared.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Store this batch's settings (`--set`, `--solver`) and summaries as a baseline file
    /// (it must not exist unless `--force`).
    #[arg(long)]
    pub write_baseline: Option<PathBuf>,
    /// Run only shard K of N (1 <= K <= N) of the scenario × solver runs: run `i` (in
    /// file order, then each scenario's solver order) belongs to shard `i mod N + 1`, as
    /// in `bench-problems`. Default: in a Slurm job array, the task's shard (of the array
    /// that first wrote `--out`), else every run. Shards write `--out/shard-K-of-N/` and
    /// may share `--out`; a shard whose results are there, complete, is not run again;
    /// `contactbench merge --out DIR` joins them.
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
    let files = scenario_files(&args.inputs)?;
    let scenarios = load_scenarios(&files, &args.overrides)?;
    let settings = BatchSettings {
        overrides: args.overrides.clone(),
        solvers: args.solvers.clone(),
    };
    let baseline = match &args.baseline {
        Some(path) => Some(read_baseline(path, &settings)?),
        None => None,
    };
    if let Some(path) = &args.write_baseline {
        if std::fs::symlink_metadata(path).is_ok() && !args.force {
            return Err(UsageError(format!(
                "--write-baseline {}: exists; pass --force to replace it",
                path.display()
            ))
            .into());
        }
    }
    let choice = match &args.shard {
        Some(text) => Some(ShardChoice::Given(
            Shard::parse(text).map_err(|e| UsageError(format!("--shard: {e}")))?,
        )),
        None => SlurmTask::from_env(|name| std::env::var(name).ok())
            .map_err(|e| UsageError(format!("--shard: {e}")))?
            .map(ShardChoice::Slurm),
    };
    let all = jobs(scenarios, &args.solvers)?;
    let manifest = match choice {
        Some(choice) => run_shard(&all, choice, &args)?,
        None => batch::run_batch(
            &all,
            &args.out,
            runner(),
            !args.json,
            replace_policy(args.force),
        )?,
    };
    let summaries: Vec<RunSummary> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&manifest)?);
    } else {
        out!("{}", summary_table(&summaries));
        outln!("results: {}", args.out.display());
    }
    print_run_notes(&summaries);
    if let Some(path) = &args.write_baseline {
        let stored = Baseline {
            settings,
            runs: summaries.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&stored)?;
        bytes.push(b'\n');
        write_file(path, &bytes, args.force)?;
        eprintln!("baseline written: {}", path.display());
    }
    let Some(baseline) = baseline else {
        return Ok(runs_exit_code(&summaries));
    };
    let unlisted = baseline.without_entry(&summaries);
    if !unlisted.is_empty() {
        let names: Vec<String> = unlisted.iter().map(|(s, v)| format!("{s} / {v}")).collect();
        eprintln!(
            "baseline: {} run(s) have no entry in it and are not compared: {}",
            unlisted.len(),
            names.join(", ")
        );
    }
    let mut baseline = baseline.runs;
    if manifest.shard.is_some() {
        // A shard is compared with the baseline's runs it ran.
        baseline.retain(|b| {
            summaries
                .iter()
                .any(|s| s.scenario == b.scenario && s.solver == b.solver)
        });
    }
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

/// Reads a baseline and refuses one made with other settings than `current`, saying
/// which flags compare like with like.
fn read_baseline(path: &Path, current: &BatchSettings) -> anyhow::Result<Baseline> {
    let baseline: Baseline = match read_json(path) {
        Ok(b) => b,
        Err(e) => {
            if read_json::<Vec<RunSummary>>(path).is_ok() {
                return Err(UsageError(format!(
                    "--baseline {}: a list of runs without the settings they were made \
                     with (an older format); write it again with --write-baseline and the \
                     flags it was made with",
                    path.display()
                ))
                .into());
            }
            return Err(anyhow::Error::new(e).context("--baseline"));
        }
    };
    if let Some(why) = baseline.settings_mismatch(current) {
        return Err(UsageError(format!("--baseline {}: {why}", path.display())).into());
    }
    Ok(baseline)
}

/// The shared folder's record of a sharded batch (`shards.json`): the plan, the shard
/// count, and the Slurm job array that first wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardsFile {
    plan: String,
    count: usize,
    array: Option<ArrayGeometry>,
}

/// Name of the record in the shared folder of a sharded batch.
const SHARDS_FILE: &str = "shards.json";

/// Runs this process's shard into `--out/shard-K-of-N/` (or finds it complete).
fn run_shard(all: &[Job], choice: ShardChoice, args: &Args) -> anyhow::Result<ResultsManifest> {
    let container = SharedDir::open(&args.out, &[SHARDS_FILE])?;
    let plan = jobs_plan(all);
    let recorded: Option<ShardsFile> = read_json(&args.out.join(SHARDS_FILE)).ok();
    let known = recorded
        .as_ref()
        .filter(|r| r.plan == plan)
        .and_then(|r| r.array);
    let (shard, array) = match choice {
        ShardChoice::Given(shard) => (shard, known.filter(|a| a.count == shard.count)),
        ShardChoice::Slurm(task) => {
            let (shard, array) = task
                .shard(known)
                .map_err(|e| UsageError(format!("--shard: {e}")))?;
            (shard, Some(array))
        }
        ShardChoice::All => (Shard::ALL, None),
    };
    let record = ShardsFile {
        plan,
        count: shard.count,
        array,
    };
    if recorded.as_ref() != Some(&record) {
        let mut bytes = serde_json::to_vec_pretty(&record)?;
        bytes.push(b'\n');
        container.write(SHARDS_FILE, &bytes, true)?;
    }
    eprintln!(
        "{} runs; shard {}/{}: {} runs",
        all.len(),
        shard.index,
        shard.count,
        (0..all.len())
            .filter(|i| i % shard.count + 1 == shard.index)
            .count()
    );
    let run = run_batch_shard(
        all,
        shard.index,
        shard.count,
        container.path(),
        runner(),
        !args.json,
    )?;
    if run.resumed {
        eprintln!(
            "{}: complete for the same batch; nothing to run",
            run.dir.display()
        );
    }
    Ok(run.manifest)
}

/// Whether the folders given to `merge` are batch shards.
pub fn is_shard_container(dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| is_shard_output(d))
}

/// `merge` of batch shards into a new results directory.
pub fn merge(
    dirs: &[PathBuf],
    out: Option<&std::path::Path>,
    partial: bool,
) -> anyhow::Result<ExitCode> {
    let Some(out) = out else {
        return Err(UsageError(
            "merge of batch shards: give --out, a new directory for the joined results".into(),
        )
        .into());
    };
    let merged = merge_shards(dirs, out, partial)?;
    if !merged.missing.is_empty() {
        let list: Vec<String> = merged
            .missing
            .iter()
            .map(|k| format!("{k}/{}", merged.count))
            .collect();
        eprintln!(
            "{} of {} shards have no complete results: {}",
            merged.missing.len(),
            merged.count,
            list.join(", ")
        );
    }
    let Some(dir) = merged.out else {
        eprintln!("nothing written: run the missing shards, or pass --partial");
        return Ok(ExitCode::FAILURE);
    };
    eprintln!(
        "{} of {} runs{}",
        merged.runs.1,
        merged.runs.0,
        if merged.missing.is_empty() {
            ""
        } else {
            " (partial)"
        }
    );
    outln!("results: {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
