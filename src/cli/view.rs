//! `contactbench view`: a scenario simulated with one solver, written as an animated glTF
//! binary file (links, bodies, ground, contact points, normals and forces per step) and/or
//! a still picture (PNG) of one instant. Given a run folder, the scenario (with its
//! overrides) and the solver are those the run recorded.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contactbench::report::snapshot::scene_png;
use contactbench::simulation::runner::simulator;
use contactbench::simulation::trajectory::{read_run_summary, run_scenario};
use contactbench::simulation::view::{export_glb, scene_at};
use contactbench::simulation::Scenario;

use super::common::{load_scenarios, UsageError};
use super::out::outln;

/// Arguments of `contactbench view`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML), or a run folder (`OUT/<scenario>/<solver>` of `run --out
    /// OUT`): the scenario, overrides and solver it recorded.
    pub scenario: PathBuf,
    /// The solver. Default: the run folder's, or the scenario's first.
    #[arg(long)]
    pub solver: Option<String>,
    /// Change a scenario value before running, `path=value` (repeatable).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Animated glTF output file, `.glb` (it must not exist unless `--force`).
    #[arg(long, required_unless_present = "png")]
    pub out: Option<PathBuf>,
    /// Still picture output file, `.png`: the world at `--time` (it must not exist unless
    /// `--force`).
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Time (s) of the picture: the step nearest it. Default: the end of the run.
    #[arg(long)]
    pub time: Option<f64>,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
}

/// Refuses to replace `path` unless `force`.
fn check_free(path: &Path, force: bool) -> Result<(), UsageError> {
    if std::fs::symlink_metadata(path).is_ok() && !force {
        return Err(UsageError(format!(
            "{}: exists; pass --force to replace it",
            path.display()
        )));
    }
    Ok(())
}

/// The scenario of the run in `dir` (the file and overrides it recorded, then `overrides`)
/// and the solver it ran.
fn recorded_scenario(
    dir: &Path,
    overrides: &[String],
) -> anyhow::Result<(Scenario, Option<String>)> {
    let summary = read_run_summary(dir)?;
    let scenario = run_scenario(dir, &summary, overrides)?;
    Ok((scenario, Some(summary.solver)))
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (scenario, recorded_solver) = match args.scenario.is_dir() {
        true => recorded_scenario(&args.scenario, &args.overrides)?,
        false => (
            load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?.remove(0),
            None,
        ),
    };
    let spec = match args.solver.as_ref().or(recorded_solver.as_ref()) {
        Some(text) => scenario.solver_override(text)?,
        None => scenario.solver_specs().remove(0),
    };
    let (steps, dt) = (scenario.num_steps(), scenario.simulation.dt);
    let time = args.time.unwrap_or(steps as f64 * dt);
    if !time.is_finite() || time < 0.0 {
        return Err(UsageError(format!("--time {time}: must be a finite time ≥ 0 (s)")).into());
    }
    for path in args.out.iter().chain(&args.png) {
        check_free(path, args.force)?;
    }
    if let Some(out) = &args.out {
        let summary = export_glb(simulator(&scenario, &spec)?, steps, dt, out)?;
        outln!(
            "{}: {} frames, {} objects, up to {} contacts, {} bytes",
            out.display(),
            summary.frames,
            summary.objects,
            summary.contact_slots,
            summary.bytes
        );
    }
    if let Some(png) = &args.png {
        let scene = scene_at(simulator(&scenario, &spec)?, steps, dt, time)?;
        let caption = format!("{} · {} · t = {:.3} s", scenario.name, spec.id, scene.time);
        let bytes = scene_png(&scene, &caption)?;
        std::fs::write(png, &bytes).map_err(|e| anyhow::anyhow!("{}: {e}", png.display()))?;
        outln!(
            "{}: t = {:.3} s, {} objects, {} contacts, {} bytes",
            png.display(),
            scene.time,
            scene.objects.len(),
            scene.contacts.len(),
            bytes.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
