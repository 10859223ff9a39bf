//! `contactbench view`: a scenario simulated with one solver, written as an animated glTF
//! binary file (links, bodies, ground, contact points, normals and forces per step).

use std::path::PathBuf;
use std::process::ExitCode;

use contactbench::simulation::runner::simulator;
use contactbench::simulation::view::export_glb;

use super::common::{load_scenarios, UsageError};
use super::out::outln;

/// Arguments of `contactbench view`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// The solver. Default: the scenario's first.
    #[arg(long)]
    pub solver: Option<String>,
    /// Change a scenario value before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Output file, `.glb` (it must not exist unless `--force`).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenario = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?.remove(0);
    let spec = match &args.solver {
        Some(text) => scenario.solver_override(text)?,
        None => scenario.solver_specs().remove(0),
    };
    let out = args.out;
    if std::fs::symlink_metadata(&out).is_ok() && !args.force {
        return Err(UsageError(format!(
            "{}: exists; pass --force to replace it",
            out.display()
        ))
        .into());
    }
    let sim = simulator(&scenario, &spec)?;
    let summary = export_glb(sim, scenario.num_steps(), scenario.simulation.dt, &out)?;
    outln!(
        "{}: {} frames, {} objects, up to {} contacts, {} bytes",
        out.display(),
        summary.frames,
        summary.objects,
        summary.contact_slots,
        summary.bytes
    );
    Ok(ExitCode::SUCCESS)
}
