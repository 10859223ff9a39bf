//! `contactbench dump`: the contact problem of a scenario at a given step, as a problem
//! file that `contactbench solve` (or Pinocchio's solvers) can replay.

use std::path::PathBuf;
use std::process::ExitCode;

use contactbench::problem::io::write_problem;
use contactbench::simulation::runner::simulator;

use super::common::{load_scenarios, UsageError};
use super::out::outln;

/// Arguments of `contactbench dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// The step whose problem to write (1 is the first step).
    #[arg(long)]
    pub step: usize,
    /// The solver that drives the simulation up to that step. Default: the scenario's first.
    #[arg(long)]
    pub solver: Option<String>,
    /// Change a scenario value before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Output file (it must not exist unless `--force`), in the format of its extension:
    /// `.json` (ours), `.hdf5`/`.h5` (FCLIB, for Siconos), `.npz` (numpy). Default
    /// `<scenario>_step<N>.json`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenario = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?.remove(0);
    if args.step < 1 || args.step > scenario.num_steps() {
        return Err(UsageError(format!(
            "--step {}: must lie in 1..={} (the scenario's steps)",
            args.step,
            scenario.num_steps()
        ))
        .into());
    }
    let spec = match &args.solver {
        Some(text) => scenario.solver_override(text)?,
        None => scenario.solver_specs().remove(0),
    };
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from(format!("{}_step{}.json", scenario.name, args.step)));
    if std::fs::symlink_metadata(&out).is_ok() && !args.force {
        return Err(UsageError(format!(
            "{}: exists; pass --force to replace it",
            out.display()
        ))
        .into());
    }
    let mut sim = simulator(&scenario, &spec)?;
    for _ in 0..args.step {
        sim.step()?;
    }
    let Some((problem, lambda, converged)) = sim.last_solution() else {
        return Err(UsageError(format!(
            "--step {}: the step has no contact, so no problem to write",
            args.step
        ))
        .into());
    };
    let mut solver_map = spec.params.clone();
    solver_map.insert("solver".into(), spec.id.to_string().into());
    solver_map.insert("stop".into(), spec.settings.stop.as_str().into());
    let tolerance = spec.settings.stop.tolerance_field();
    solver_map.insert(tolerance.into(), spec.settings.tolerance().into());
    solver_map.insert("max_iter".into(), spec.settings.max_iter.into());
    write_problem(
        &out,
        problem,
        converged.then_some(lambda),
        Some(&solver_map),
    )?;
    outln!(
        "{}: {} contacts at step {} (t = {:.6} s){}",
        out.display(),
        problem.num_contacts(),
        args.step,
        sim.time(),
        if converged {
            ", with the solver's lambda"
        } else {
            ", solver did not converge: no lambda"
        }
    );
    Ok(ExitCode::SUCCESS)
}
