//! A user's own solver, defined in this crate with no change to contactbench
//! (`user_solver::JacobiNcp` in the solver shell), runs through every runner by the public
//! API alone: `scenarios/solo_standing.yaml` on the Solo-12, a time-step and a tolerance
//! sweep, a batch beside a built-in solver and its report, and a paper experiment that
//! compares solvers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use contactbench::paper::{run_paper_with, Options};
use contactbench::report::make_report;
use contactbench::simulation::batch::{jobs_with, run_batch, Runner};
use contactbench::simulation::output::{Replace, ResultsManifest};
use contactbench::simulation::recorder::{read_json, RunSummary};
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::sweep::{sweep, SweepKind};
use contactbench::simulation::{simulate, Scenario, SolverFactory, UserSolver};
use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};

fn jacobi() -> UserSolver {
    let settings = SolverSettings {
        max_iter: 500,
        ..SolverSettings::default()
    };
    user_solver::factory(settings, 0.3)
}

/// A scenario of the repository's `scenarios/`, cut to `duration` seconds.
fn scenario(file: &str, duration: f64) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    Scenario::load(&path, &[format!("simulation.duration={duration}")])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn runner() -> &'static Runner {
    &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-user-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn user_solver_runs_solo_standing() {
    let solo = scenario("solo_standing.yaml", 0.2);
    let record = simulate(&solo, &jacobi()).unwrap_or_else(|e| panic!("{e}"));
    let summary = record.summary();
    assert_eq!(summary.solver, "jacobi-ncp:max_iter=500");
    assert!(summary.reached_end(), "{:?}", summary.failure);
    assert_eq!(summary.steps, 200);
    let z0 = record.steps[0].base_position[2];
    let z1 = summary.final_base_position[2];
    // The robot stands: its base settles by millimetres (measured 3.0e-3 m), not by
    // its height.
    assert!((z1 - z0).abs() < 5e-3, "base height {z0} -> {z1}");
    assert!(summary.max_contacts >= 4, "{}", summary.max_contacts);
}

#[test]
fn user_solver_in_time_step_and_tolerance_sweeps() {
    let solo = scenario("solo_standing.yaml", 0.05);
    let table = sweep(&solo, &[jacobi()], SweepKind::TimeStep, &[1e-3], runner());
    assert_eq!(table.rows[0].solver, "jacobi-ncp:max_iter=500");
    let cell = &table.rows[0].cells[0];
    let error = cell.consistency_error.unwrap_or_else(|| panic!("{cell:?}"));
    // Measured 1.9e-6 m·s.
    assert!(error > 1.9e-7 && error < 1.9e-5, "{error}");

    // The tolerance sweep rebuilds the user's solver at every `eps_abs`.
    let cube = scenario("cube_slide.yaml", 0.2);
    let solvers: Vec<Arc<dyn SolverFactory>> = vec![jacobi().into_arc()];
    let table = sweep(
        &cube,
        &solvers,
        SweepKind::Tolerance,
        &[1e-2, 1e-9],
        runner(),
    );
    let errors: Vec<f64> = table.rows[0]
        .cells
        .iter()
        .map(|c| c.consistency_error.unwrap_or_else(|| panic!("{c:?}")))
        .collect();
    // At the reference's own eps_abs the run is the reference, bit for bit; at 1e-2 it
    // differs (measured 1.4e-7 m·s).
    assert_eq!(errors[1], 0.0, "{errors:?}");
    assert!(errors[0] > 1.4e-8 && errors[0] < 1.4e-6, "{errors:?}");
}

#[test]
fn user_solver_in_a_batch_and_its_report() {
    let solvers: Vec<Arc<dyn SolverFactory>> = vec![
        jacobi().into_arc(),
        Arc::new(SolverSpec::new(SolverId::NcpAdmm)),
    ];
    let scenarios = vec![
        scenario("solo_standing.yaml", 0.05),
        scenario("cube_slide.yaml", 0.05),
    ];
    let jobs = jobs_with(scenarios, &solvers);
    assert_eq!(jobs.len(), 4);
    let out = temp_dir("batch");
    let manifest =
        run_batch(&jobs, &out, runner(), false, Replace::Never).unwrap_or_else(|e| panic!("{e}"));
    let on_disk: ResultsManifest = read_json(&out.join(contactbench::simulation::output::MANIFEST))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(on_disk.runs.len(), 4);
    for entry in &manifest.runs {
        assert!(entry.summary.reached_end(), "{:?}", entry.summary.failure);
        let summary: RunSummary = read_json(&out.join(&entry.path).join("summary.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(summary, entry.summary);
    }
    let paths: Vec<&str> = manifest.runs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "solo_standing/jacobi-ncp",
            "solo_standing/ncp-admm",
            "cube_slide/jacobi-ncp",
            "cube_slide/ncp-admm"
        ]
    );
    let report = make_report(&out).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("jacobi-ncp:max_iter=500"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn user_solver_in_a_paper_experiment() {
    // Fig. 12 (a heavy cube stacked on a light one) and Fig. 16 (solve times on robots)
    // compare solvers: the user's solver is added to their compared sets at the
    // experiment's settings. Fig. 9 studies named built-in solvers and says it left the
    // user's out.
    let out = temp_dir("paper");
    let options = Options {
        only: vec!["fig09".into(), "fig12".into(), "fig16".into()],
        quick: true,
        force: false,
        earlier: None,
    };
    let outcome =
        run_paper_with(&out, &options, &[jacobi().into_arc()]).unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.errors().is_empty(), "{:?}", outcome.errors());
    let page =
        std::fs::read_to_string(out.join("fig12/README.md")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        page.contains("Extra solvers (the user's): jacobi-ncp"),
        "{page}"
    );
    // One row per mass ratio, with its numbers, beside the built-in solvers' rows.
    let csv =
        std::fs::read_to_string(out.join("fig12/fig12.csv")).unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(",jacobi-ncp,")).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    let ncp_admm = csv.lines().filter(|l| l.contains(",ncp-admm,")).count();
    assert_eq!(ncp_admm, 4, "{csv}");
    for row in rows {
        let steps = row.rsplit(',').next().unwrap_or_default();
        assert!(
            steps.ends_with("/ 100"),
            "a complete run of 100 steps: {row}"
        );
    }
    // Fig. 16: one row per robot and stopping protocol (ContactBench's scripts, the
    // paper's text): median times, paired ratios, iterations, capped steps.
    let csv =
        std::fs::read_to_string(out.join("fig16/fig16.csv")).unwrap_or_else(|e| panic!("{e}"));
    let robots: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",jacobi-ncp,"))
        .filter_map(|l| l.split(',').next())
        .collect();
    assert_eq!(
        robots,
        ["Solo-12", "Solo-12", "Talos", "Talos", "Allegro", "Allegro"],
        "{csv}"
    );
    let fig09 =
        std::fs::read_to_string(out.join("fig09/README.md")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        fig09.contains("Extra solvers (jacobi-ncp) are not run in this experiment"),
        "{fig09}"
    );
    // A name taken by a built-in solver is refused.
    let clash = UserSolver::new("ncp-admm", SolverSettings::default(), |settings| {
        Ok(user_solver::solver(settings, 0.3)?.boxed())
    });
    assert!(run_paper_with(&temp_dir("clash"), &options, &[clash.into_arc()]).is_err());
    let _ = std::fs::remove_dir_all(&out);
}

/// Running a scenario with a user's solver does not mean copying the runner and losing
/// the analytical energy curve (private to the runner). Through the public runner,
/// the user's solver on the sliding cube gets the same curve, step for step, as a
/// built-in solver, and follows it (the NCP's answer: the cube stops at v0²/(2μg)).
#[test]
fn user_solver_on_the_sliding_cube_gets_the_analytical_energy_curve() {
    let cube = scenario("cube_slide.yaml", 0.4);
    let mine = simulate(&cube, &jacobi()).unwrap_or_else(|e| panic!("{e}"));
    let admm =
        simulate(&cube, &SolverSpec::new(SolverId::NcpAdmm)).unwrap_or_else(|e| panic!("{e}"));
    let curve = mine
        .analytical_energy
        .as_ref()
        .unwrap_or_else(|| panic!("cube_slide has an analytical solution"));
    assert_eq!(curve.len(), mine.steps.len());
    assert_eq!(Some(curve), admm.analytical_energy.as_ref());
    let worst = mine
        .steps
        .iter()
        .zip(curve)
        .map(|(s, e)| (s.energy.total() - e).abs())
        .fold(0.0, f64::max);
    println!(
        "jacobi-ncp cube slide: mechanical energy within {worst:.2e} J of the analytical curve"
    );
    assert!(worst < WORST_ENERGY_GAP, "{worst} J");
    let stop = 1.0 / (2.0 * 0.4 * 9.81);
    let travelled = mine.summary().final_base_position[0];
    assert!(
        (travelled - stop).abs() < 0.01 * stop,
        "{travelled} m vs {stop} m"
    );
}

/// Bound on |E − E_analytical| for the user's solver (eps_rel = 1e-6) on the sliding cube:
/// measured 1.75e-7 J over 0.4 s; about 10x that.
const WORST_ENERGY_GAP: f64 = 2e-6;
