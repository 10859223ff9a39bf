//! `contactbench bench-step`: µs per whole simulation step of a scenario and the per-stage
//! split (median over repeated blocks of steps after settling), with the machine noted, as
//! text or JSON (for `tools/mujoco_step.py`, which times MuJoCo on the same robot).
//! With `--sweep path=value` (repeatable), one measurement per value, e.g. the size of a
//! generated pile, and µs per step against contacts with the growth exponent fitted by
//! least squares on their logarithms.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use contactbench::simulation::export::describe;
use contactbench::simulation::scenario::MAX_STEPS;
use contactbench::simulation::timing::{bench_steps, StepBenchReport, StepBenchSettings};
use contactbench::simulation::StepMetrics;
use contactbench::solvers::SolverSpec;
use serde::Serialize;

use super::common::{load_scenarios, warn_if_debug_build, UsageError};
use super::out::outln;

/// Arguments of `contactbench bench-step`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// The solver, e.g. `ncp-admm:eps_rel=1e-8`, at its default settings unless the text
    /// sets them (the scenario's solver list and settings are not used).
    #[arg(long, default_value = "ncp-admm")]
    pub solver: String,
    /// Steps per timed block.
    #[arg(long, default_value_t = 1000)]
    pub steps: usize,
    /// Timed blocks (the median is reported).
    #[arg(long, default_value_t = 7)]
    pub repeats: usize,
    /// Untimed steps before each block (each block starts from the initial state).
    #[arg(long, default_value_t = 200)]
    pub settle: usize,
    /// Change a scenario value first, `path=value` (repeatable), e.g.
    /// `--set external_forces=[]`.
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Measure once per scene, each this change applied after the `--set` ones
    /// (repeatable, at least two for a growth exponent), e.g.
    /// `--sweep 'world.generate.columns={nx: 4, ny: 4, height: 4}'`: prints µs per step
    /// against contacts and the fitted exponent `p` of `µs ∝ contacts^p`.
    #[arg(long = "sweep")]
    pub sweeps: Vec<String>,
    /// Contact metrics of each recorded step: `all`, `no-internal-forces` (no SVD of J)
    /// or `none`.
    #[arg(long, value_enum, default_value_t = Metrics::All)]
    pub metrics: Metrics,
    /// Time the step alone (`Simulator::advance`: no record, no metric, no energy)
    /// instead of the recorded step a run takes.
    #[arg(long)]
    pub no_record: bool,
    /// Follow every timed step with its derivatives A = ∂(q⁺, v⁺)/∂(q, v) and
    /// B = ∂(q⁺, v⁺)/∂τ, timed apart (`derivatives_us`; the steps are not recorded).
    #[arg(long)]
    pub derivatives: bool,
    /// Print the simulated world as JSON (robot URDF, joints, initial state, contact
    /// spheres, bodies, PD gains, M(q0)) instead of timing: what `tools/mujoco_step.py`
    /// rebuilds in MuJoCo.
    #[arg(long)]
    pub describe: bool,
    /// Print the result as one JSON object on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `--metrics` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metrics {
    /// Every metric, internal forces included.
    All,
    /// Every metric but the internal forces.
    NoInternalForces,
    /// No contact metric.
    None,
}

impl From<Metrics> for StepMetrics {
    fn from(m: Metrics) -> Self {
        match m {
            Metrics::All => StepMetrics::All,
            Metrics::NoInternalForces => StepMetrics::WithoutInternalForces,
            Metrics::None => StepMetrics::None,
        }
    }
}

/// The machine the figures come from.
#[derive(Debug, Serialize)]
struct Machine {
    cpu: String,
    cores: usize,
    load_average: String,
}

fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    Machine {
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        load_average,
    }
}

#[derive(Debug, Serialize)]
struct Output<'a> {
    scenario: &'a str,
    solver: &'a str,
    metrics: Metrics,
    recorded: bool,
    machine: Machine,
    #[serde(flatten)]
    report: &'a StepBenchReport,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let scenario = load_scenarios(std::slice::from_ref(&args.scenario), &args.overrides)?.remove(0);
    if args.describe {
        outln!("{}", serde_json::to_string(&describe(&scenario)?)?);
        return Ok(ExitCode::SUCCESS);
    }
    let spec: SolverSpec = args
        .solver
        .parse()
        .with_context(|| format!("--solver {}", args.solver))?;
    spec.build()
        .with_context(|| format!("--solver {}", args.solver))?;
    check_counts(&args)?;
    warn_if_debug_build("bench-step");
    if !args.sweeps.is_empty() {
        return run_sweep(&args, &spec);
    }
    let settings = step_bench_settings(&args);
    let report = bench_steps(&scenario, &spec, args.metrics.into(), &settings)?;
    let output = Output {
        scenario: &scenario.name,
        solver: &args.solver,
        metrics: args.metrics,
        recorded: settings.record,
        machine: machine(),
        report: &report,
    };
    if args.json {
        outln!("{}", serde_json::to_string(&output)?);
    } else {
        print_table(&output);
    }
    Ok(ExitCode::SUCCESS)
}

/// The block sizes and what each step does, from the command line.
fn step_bench_settings(args: &Args) -> StepBenchSettings {
    StepBenchSettings {
        settle: args.settle,
        steps: args.steps,
        repeats: args.repeats,
        record: !args.no_record && !args.derivatives,
        derivatives: args.derivatives,
    }
}

/// One scene of a `--sweep`.
#[derive(Debug, Serialize)]
struct SweepPoint {
    set: String,
    contacts: f64,
    step_us: f64,
    step_us_range: [f64; 2],
}

/// The `--sweep` output.
#[derive(Debug, Serialize)]
struct SweepOutput<'a> {
    scenario: &'a str,
    solver: &'a str,
    metrics: Metrics,
    recorded: bool,
    machine: Machine,
    points: Vec<SweepPoint>,
    /// `p` of `µs ∝ contacts^p`, when at least two scenes have distinct contact counts.
    growth_exponent: Option<f64>,
}

/// `bench-step --sweep`: one measurement per scene, then the growth exponent.
fn run_sweep(args: &Args, spec: &SolverSpec) -> anyhow::Result<ExitCode> {
    let settings = step_bench_settings(args);
    let mut points = Vec::with_capacity(args.sweeps.len());
    let mut name = String::new();
    for set in &args.sweeps {
        let mut overrides = args.overrides.clone();
        overrides.push(set.clone());
        let scenario = load_scenarios(std::slice::from_ref(&args.scenario), &overrides)
            .with_context(|| format!("--sweep {set}"))?
            .remove(0);
        let report = bench_steps(&scenario, spec, args.metrics.into(), &settings)
            .with_context(|| format!("--sweep {set}"))?;
        name = scenario.name;
        points.push(SweepPoint {
            set: set.clone(),
            contacts: report.contacts,
            step_us: report.step_us,
            step_us_range: report.step_us_range,
        });
    }
    let pairs: Vec<(f64, f64)> = points.iter().map(|p| (p.contacts, p.step_us)).collect();
    let output = SweepOutput {
        scenario: &name,
        solver: &args.solver,
        metrics: args.metrics,
        recorded: settings.record,
        machine: machine(),
        growth_exponent: growth_exponent(&pairs),
        points,
    };
    if args.json {
        outln!("{}", serde_json::to_string(&output)?);
    } else {
        print_sweep(&output);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_sweep(out: &SweepOutput<'_>) {
    let what = if out.recorded {
        format!("recorded steps, metrics {:?}", out.metrics)
    } else {
        "steps without record".to_string()
    };
    outln!("{} with {}, {what}", out.scenario, out.solver);
    outln!(
        "machine: {} ({} cores, load average {})",
        out.machine.cpu,
        out.machine.cores,
        out.machine.load_average
    );
    outln!("| scene | contacts per step | µs per step (median) | blocks |");
    outln!("|---|---|---|---|");
    for p in &out.points {
        outln!(
            "| `{}` | {:.1} | {:.3} | {:.3} to {:.3} |",
            p.set,
            p.contacts,
            p.step_us,
            p.step_us_range[0],
            p.step_us_range[1]
        );
    }
    match out.growth_exponent {
        Some(p) => {
            outln!("growth: µs per step ∝ contacts^{p:.2} (least squares on the logarithms)")
        }
        None => outln!("growth: no exponent (fewer than two scenes with distinct contact counts)"),
    }
}

/// The slope `p` of the least-squares line through `(ln contacts, ln µs)`: `µs ∝
/// contacts^p`. `None` with fewer than two distinct positive contact counts.
pub(crate) fn growth_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(c, t)| *c > 0.0 && *t > 0.0)
        .map(|(c, t)| (c.ln(), t.ln()))
        .collect();
    let n = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (logs.len() >= 2 && sxx > 0.0).then(|| sxy / sxx)
}

/// Most timed blocks: the report keeps each block's stage timings.
const MAX_REPEATS: usize = 10_000;

/// Refuses counts that would not fit before anything is allocated or run: at least one
/// step and one block, at most [`MAX_REPEATS`] blocks, and at most a run's step cap
/// ([`MAX_STEPS`]) of timed steps and of settling steps over all blocks.
fn check_counts(args: &Args) -> Result<(), UsageError> {
    if args.steps == 0 || args.repeats == 0 {
        return Err(UsageError(
            "--steps and --repeats must be at least 1".into(),
        ));
    }
    if args.repeats > MAX_REPEATS {
        return Err(UsageError(format!(
            "--repeats {}: at most {MAX_REPEATS} blocks",
            args.repeats
        )));
    }
    for (flag, count) in [("--steps", args.steps), ("--settle", args.settle)] {
        let total = count.saturating_mul(args.repeats) as f64;
        if total > MAX_STEPS {
            return Err(UsageError(format!(
                "{flag} {count} x --repeats {} = {total:e} steps exceeds the cap of {MAX_STEPS:e} steps",
                args.repeats
            )));
        }
    }
    Ok(())
}

fn print_table(out: &Output<'_>) {
    let r = out.report;
    let s = &r.stages_us;
    let what = if out.recorded {
        format!("recorded steps, metrics {:?}", out.metrics)
    } else {
        "steps without record".to_string()
    };
    outln!(
        "{} with {}, {what}: {} blocks of {} steps, each after {} settling steps",
        out.scenario,
        out.solver,
        r.repeats,
        r.steps,
        r.settle
    );
    outln!(
        "machine: {} ({} cores, load average {})",
        out.machine.cpu,
        out.machine.cores,
        out.machine.load_average
    );
    outln!(
        "contacts per step {:.2}, solver iterations per step {:.2}, steps not converged {}, \
         collision queries not converged {}",
        r.contacts,
        r.iterations,
        r.not_converged,
        r.collision_not_converged
    );
    outln!("| stage | µs per step (median) |");
    outln!("|---|---|");
    for (name, value) in [
        ("dynamics", s.dynamics),
        ("collision", s.collision),
        ("assembly", s.assembly),
        ("solve", s.solve),
        ("integration + metrics", s.integration),
        ("other (record, clocks)", s.other),
    ] {
        outln!("| {name} | {value:.3} |");
    }
    if let Some(qp) = s.controller_qp {
        outln!("| (within dynamics) controller force QP | {qp:.3} |");
    }
    outln!(
        "| **whole step** | **{:.3}** (blocks {:.3} to {:.3}) |",
        r.step_us,
        r.step_us_range[0],
        r.step_us_range[1]
    );
    if let Some(d) = r.derivatives_us {
        outln!("| derivatives A, B (after each step) | {d:.3} |");
    }
}

#[cfg(test)]
mod tests {
    use super::growth_exponent;

    #[test]
    fn the_growth_exponent_is_the_slope_of_the_logarithms() {
        // µs = 3 contacts^1.5 exactly.
        let exact: Vec<(f64, f64)> = [32.0, 108.0, 256.0, 864.0]
            .iter()
            .map(|&c: &f64| (c, 3.0 * c.powf(1.5)))
            .collect();
        let p = growth_exponent(&exact).unwrap_or(f64::NAN);
        assert!((p - 1.5).abs() < 1e-12, "{p}");
        assert_eq!(growth_exponent(&exact[..1]), None);
        assert_eq!(growth_exponent(&[(10.0, 1.0), (10.0, 2.0)]), None);
        // ln 2 / ln 4 = 0.5 between (1, 1) and (4, 2).
        let p = growth_exponent(&[(1.0, 1.0), (4.0, 2.0)]).unwrap_or(f64::NAN);
        assert!((p - 0.5).abs() < 1e-12, "{p}");
    }
}
