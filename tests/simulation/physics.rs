//! Physics along whole trajectories (design.md §5, §6): the analytical cube slide under
//! NCP, CCP's bouncing, LCP's drift off the line, restitution, and Solo-12 standing.

use std::path::Path;

use contactbench::metrics::energy::{sliding_kinetic_energy, sliding_stop_distance};
use contactbench::simulation::output::Replace;
use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::{simulate, simulate_into};
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;

fn run(file: &str, solver: &str, overrides: &[&str]) -> RunRecord {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = solver.parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

const V0: f64 = 1.0;
const MU: f64 = 0.4;

#[test]
fn ncp_cube_stops_at_the_analytical_distance_and_energy() {
    let r = run(
        "cube_slide.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-10,max_iter=2000",
        &["simulation.duration=0.4"],
    );
    let expected = sliding_stop_distance(V0, MU);
    let last = r.steps.last().expect("steps");
    let travelled = last.base_position[0];
    println!("ncp-admm cube slide: stopped after {travelled:.5} m, analytical {expected:.5} m");
    assert!(
        (travelled - expected).abs() < 0.01 * expected,
        "stopped after {travelled} m, analytical {expected} m"
    );
    assert!(last.v.norm() < 1e-6, "still moving: {}", last.v.norm());
    let worst = r
        .steps
        .iter()
        .map(|s| (s.energy.kinetic - sliding_kinetic_energy(1.0, V0, MU, s.time)).abs())
        .fold(0.0, f64::max);
    println!("ncp-admm cube slide: kinetic energy within {worst:.2e} J of the analytical curve");
    // Measured 4.2e-9 J (eps_abs = 1e-10); the bound is about 10x that.
    assert!(worst < 4e-8, "kinetic energy off by {worst} J");
    assert_eq!(r.summary().unconverged_steps, 0);
}

#[test]
fn ccp_cube_leaves_the_ground() {
    let r = run(
        "cube_slide.yaml",
        "ccp-admm:stop=absolute,eps_abs=1e-10,max_iter=2000",
        &["simulation.duration=0.2"],
    );
    let rise = r
        .steps
        .iter()
        .map(|s| s.base_position[2] - 0.1)
        .fold(f64::MIN, f64::max);
    let normal_velocity = r.steps.iter().map(|s| s.v[2]).fold(f64::MIN, f64::max);
    println!(
        "ccp-admm cube slide: max upward velocity {normal_velocity:.2e} m/s, rise {rise:.2e} m"
    );
    // Measured 0.343 m/s and 6.2 mm: a take-off, not round-off.
    assert!(
        normal_velocity > 0.1,
        "max upward velocity {normal_velocity}"
    );
    assert!(rise > 1e-3, "max rise {rise}");
}

fn heading_degrees(r: &RunRecord) -> f64 {
    let p = r.steps.last().expect("steps").base_position;
    p[1].atan2(p[0]).to_degrees()
}

#[test]
fn lcp_cube_drifts_off_its_line_at_30_degrees() {
    let velocity = "initial_state.bodies.cube.velocity=[0.8660254037844386, 0.5, 0, 0, 0, 0]";
    let lcp = run(
        "cube_slide.yaml",
        "lcp-pgs:stop=absolute,eps_abs=1e-10,max_iter=2000",
        &[velocity, "simulation.duration=0.4"],
    );
    let ncp = run(
        "cube_slide.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-10,max_iter=2000",
        &[velocity, "simulation.duration=0.4"],
    );
    let (lcp_heading, ncp_heading) = (heading_degrees(&lcp), heading_degrees(&ncp));
    println!(
        "cube slide at 30°: final heading lcp-pgs {lcp_heading:.2}°, ncp-admm {ncp_heading:.2}°"
    );
    // Measured: NCP 30.00° (|error| < 0.005°), LCP 18.38° (11.6° off).
    assert!(
        (ncp_heading - 30.0).abs() < 0.05,
        "NCP heading {ncp_heading}°"
    );
    assert!(
        (lcp_heading - 30.0).abs() > 5.0,
        "LCP heading {lcp_heading}°"
    );
}

#[test]
fn ball_bounces_to_e_squared_of_its_height() {
    let r = run(
        "ball_drop.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-10,max_iter=500",
        &[],
    );
    let (radius, height, e) = (0.1, 1.0, 0.8);
    let impact = r
        .steps
        .windows(2)
        .position(|w| w[0].v[2] < 0.0 && w[1].v[2] > 0.0)
        .expect("a bounce");
    let apex = r.steps[impact..]
        .iter()
        .map(|s| s.base_position[2] - radius)
        .fold(f64::MIN, f64::max);
    let expected = e * e * height;
    println!("ball drop: bounced to {apex:.4} m, e² h = {expected:.4} m");
    // Measured 0.6404 m against 0.64 m (0.06 %).
    assert!(
        (apex - expected).abs() < 0.005 * expected,
        "bounced to {apex} m, expected {expected} m"
    );
}

#[test]
fn solo_stands_under_pd_without_sliding() {
    let r = run(
        "solo_standing.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-8,max_iter=500",
        &[],
    );
    let z0 = r.steps[0].base_position[2];
    let worst_height = r
        .steps
        .iter()
        .map(|s| (s.base_position[2] - z0).abs())
        .fold(0.0, f64::max);
    println!("solo12 standing: base height within {worst_height:.2e} m of its start");
    assert!(worst_height < 0.01, "base height moved by {worst_height} m");
    let settled = r.steps.iter().filter(|s| s.time >= 1.0);
    let worst_slip = settled
        .flat_map(|s| s.contacts.iter())
        .map(|c| c.velocity[0].hypot(c.velocity[1]))
        .fold(0.0, f64::max);
    println!("solo12 standing: tangential foot velocity after 1 s at most {worst_slip:.2e} m/s");
    // Measured 4.4e-7 m/s (7.6e-7 with a dense assembly of the Delassus matrix, round-off);
    // the bound is about 10x the larger.
    assert!(worst_slip < 8e-6, "feet slide at {worst_slip} m/s");
    assert!(r.steps.last().expect("steps").contacts.len() == 4);
}

#[test]
fn identical_runs_are_bitwise_identical() {
    let a = run("cube_stack.yaml", "ncp-admm", &["simulation.duration=0.05"]);
    let b = run("cube_stack.yaml", "ncp-admm", &["simulation.duration=0.05"]);
    for (x, y) in a.steps.iter().zip(&b.steps) {
        assert_eq!(x.q, y.q);
        assert_eq!(x.v, y.v);
    }
}

/// Cube of `cube_push.yaml`: 1 kg, μ = 0.4, force `10 t` N along x.
fn pushed_cube_position(t: f64) -> f64 {
    let (mass, slope) = (1.0, 10.0);
    let start = MU * mass * 9.81 / slope;
    let s = (t - start).max(0.0);
    slope / (6.0 * mass) * s.powi(3)
}

fn max_internal_forces_before(r: &RunRecord, t: f64) -> f64 {
    r.steps
        .iter()
        .filter(|s| s.time < t)
        .filter_map(|s| s.metrics.as_ref()?.internal_forces)
        .fold(0.0, f64::max)
}

#[test]
fn pushed_cube_sticks_then_slides_and_admm_injects_fewer_internal_forces() {
    let admm = run(
        "cube_push.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-8,max_iter=500",
        &[],
    );
    let pgs = run(
        "cube_push.yaml",
        "ncp-pgs:stop=absolute,eps_abs=1e-8,max_iter=500",
        &[],
    );
    let at = |r: &RunRecord, t: f64| {
        r.steps
            .iter()
            .find(|s| (s.time - t).abs() < 1e-9)
            .map(|s| s.base_position[0])
            .expect("a step at t")
    };
    let (stuck, slid) = (at(&admm, 0.35), at(&admm, 0.6));
    let expected = pushed_cube_position(0.6);
    let relative = (slid - expected).abs() / expected;
    println!(
        "cube push: x(0.35 s) = {stuck:.2e} m; x(0.6 s) = {slid:.5} m, analytical {expected:.5} m (relative error {relative:.1e})"
    );
    assert!(stuck.abs() < 1e-5, "moved {stuck} m while sticking");
    // Measured 2.4e-4 relative.
    assert!(relative < 2.5e-3, "x(0.6 s) off by {relative:.1e} relative");
    let (internal_admm, internal_pgs) = (
        max_internal_forces_before(&admm, 0.35),
        max_internal_forces_before(&pgs, 0.35),
    );
    println!("cube push, sticking: max internal forces ncp-admm {internal_admm:.2e}, ncp-pgs {internal_pgs:.2e} N·s");
    assert!(internal_admm < internal_pgs);
}

#[test]
fn batch_results_do_not_depend_on_the_thread_count() {
    use contactbench::simulation::batch;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let scenarios = || {
        ["cube_stack.yaml", "solo_standing.yaml"]
            .iter()
            .map(|f| {
                Scenario::load(&dir.join(f), &["simulation.duration=0.05".to_string()])
                    .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect::<Vec<_>>()
    };
    let runner: &batch::Runner =
        &|s, spec, recorder| simulate_into(s, spec, recorder).map_err(|e| e.to_string());
    let finals = |threads: usize| {
        let jobs = batch::jobs(scenarios(), None);
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "contactbench-threads-{threads}-{}",
            std::process::id()
        ));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let manifest = pool
            .install(|| batch::run_batch(&jobs, &out, runner, false, Replace::Never))
            .unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&out);
        manifest
            .runs
            .iter()
            .map(|r| (r.summary.solver.clone(), r.summary.final_q.clone()))
            .collect::<Vec<_>>()
    };
    let (one, two) = (finals(1), finals(2));
    assert_eq!(one.len(), 9);
    assert_eq!(one, two);
}

#[test]
fn pd_pulls_a_joint_offset_back_to_the_reference() {
    let r = run(
        "solo_standing.yaml",
        "ncp-admm:stop=absolute,eps_abs=1e-8,max_iter=500",
        &[
            "simulation.duration=1.0",
            "initial_state.joint_offsets.FL_KFE=0.2",
        ],
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/solo_standing.yaml");
    let scenario = Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let world = contactbench::simulation::World::build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let joint = world
        .model
        .joint_id("FL_KFE")
        .unwrap_or_else(|e| panic!("{e}"));
    let index = world.model.joints[joint].idx_q;
    let (start, end) = (r.steps[0].q[index], r.steps.last().expect("steps").q[index]);
    println!("solo12 FL_KFE: reference -1.6 rad, start {start:.3} rad, after 1 s {end:.3} rad");
    assert!((start - (-1.4)).abs() < 1e-12);
    assert!((end - (-1.6)).abs() < 0.05, "FL_KFE ended at {end}");
}
