//! The trot's stance force QP on the problems of real trots: the dual active-set method's
//! forces against clarabel's at tight tolerances, its KKT conditions, the fallback, and
//! the choice of solver in a scenario.

use std::path::Path;

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use contactbench::simulation::locomotion::force_qp::ROWS_PER_FOOT;
use contactbench::simulation::locomotion::{ForceQp, ForceQpSolver, StanceProblem};
use contactbench::simulation::runner::{simulate, simulator};
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;

fn scenario(file: &str, overrides: &[&str]) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

fn admm() -> SolverSpec {
    "ncp-admm:eps_rel=1e-6,max_iter=500"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every tick's stance QP over the first `steps` steps of a trot, and how many of them
/// the controller's active-set method handed to clarabel.
fn recorded_problems(file: &str, overrides: &[&str], steps: usize) -> (Vec<StanceProblem>, usize) {
    let scenario = scenario(file, overrides);
    let mut sim = simulator(&scenario, &admm()).unwrap_or_else(|e| panic!("{e}"));
    let mut problems: Vec<StanceProblem> = Vec::new();
    for _ in 0..steps {
        sim.step().unwrap_or_else(|e| panic!("{e}"));
        let problem = sim.trot_state().and_then(|s| s.last_problem());
        if let Some(p) = problem.filter(|p| problems.last() != Some(*p)) {
            problems.push(p.clone());
        }
    }
    let fallbacks = sim.trot_state().map_or(0, |s| s.force_qp().fallbacks());
    (problems, fallbacks)
}

/// clarabel with its defaults (equilibration, refinement) and tolerances of 1e-11: the
/// reference forces.
fn clarabel_reference(problem: &StanceProblem) -> Vec<f64> {
    let n = problem.variables();
    let (h, c) = problem.objective();
    let (g, bound) = problem.constraints();
    let m = bound.len();
    let p = dense_to_csc(&h, n, n, true);
    let a = dense_to_csc(&g, m, n, false);
    let settings = DefaultSettings {
        verbose: false,
        tol_gap_abs: 1e-11,
        tol_gap_rel: 1e-11,
        tol_feas: 1e-11,
        tol_ktratio: 1e-9,
        max_iter: 200,
        ..DefaultSettings::default()
    };
    let cones = [SupportedConeT::NonnegativeConeT(m)];
    let mut solver = DefaultSolver::new(&p, &c, &a, &bound, &cones, settings)
        .unwrap_or_else(|e| panic!("{e:?}"));
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    solver.solution.x.clone()
}

/// A row-major dense matrix as CSC (only its upper triangle when `upper`).
fn dense_to_csc(dense: &[f64], rows: usize, cols: usize, upper: bool) -> CscMatrix<f64> {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..cols {
        for i in 0..rows {
            let value = dense[i * cols + j];
            if value != 0.0 && (!upper || i <= j) {
                r.push(i);
                c.push(j);
                v.push(value);
            }
        }
    }
    CscMatrix::new_from_triplets(rows, cols, r, c, v)
}

/// The largest violation of the KKT conditions of `½ fᵀ H f + cᵀ f`, `G f ≤ h` at
/// `(f, λ)`, each relative to the problem's scale `1 + ‖c‖∞ + ‖h‖∞`: stationarity
/// `H f + c + Gᵀ λ = 0`, primal `G f ≤ h`, dual `λ ≥ 0`, complementarity `λ_i s_i = 0`.
fn kkt_residual(problem: &StanceProblem, f: &[f64], lambda: &[f64]) -> f64 {
    let n = problem.variables();
    let (h, c) = problem.objective();
    let (g, bound) = problem.constraints();
    let scale = 1.0 + inf_norm(&c) + inf_norm(&bound);
    let stationarity = (0..n)
        .map(|i| {
            let hf: f64 = (0..n).map(|j| h[i * n + j] * f[j]).sum();
            let gl: f64 = (0..bound.len()).map(|k| g[k * n + i] * lambda[k]).sum();
            (hf + c[i] + gl).abs()
        })
        .fold(0.0, f64::max);
    let slacks: Vec<f64> = (0..bound.len())
        .map(|k| bound[k] - (0..n).map(|j| g[k * n + j] * f[j]).sum::<f64>())
        .collect();
    let primal = slacks.iter().map(|s| (-s).max(0.0)).fold(0.0, f64::max);
    let dual = lambda.iter().map(|l| (-l).max(0.0)).fold(0.0, f64::max);
    let complementarity = slacks
        .iter()
        .zip(lambda)
        .map(|(s, l)| (s * l).abs())
        .fold(0.0, f64::max);
    stationarity.max(primal).max(dual).max(complementarity) / scale
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

/// How often each kind of row is active (positive multiplier): `[pyramid face, f_min,
/// f_max]`.
fn active_kinds(lambda: &[f64]) -> [usize; 3] {
    let mut kinds = [0; 3];
    for (k, &l) in lambda.iter().enumerate() {
        if l > 0.0 {
            match k % ROWS_PER_FOOT {
                0..=3 => kinds[0] += 1,
                4 => kinds[1] += 1,
                _ => kinds[2] += 1,
            }
        }
    }
    kinds
}

#[test]
fn the_active_set_forces_equal_clarabels_on_the_stance_qps_of_flat_and_bumpy_trots() {
    let runs: [(&str, &[&str]); 3] = [
        ("solo_trot_flat.yaml", &[]),
        ("solo_trot_bumpy.yaml", &[]),
        // Tight normal bounds and little friction: the upper bound and the faces bind.
        (
            "solo_trot_flat.yaml",
            &[
                "actuation.trot.normal_force=[2, 13]",
                "actuation.trot.friction=0.1",
            ],
        ),
    ];
    let mut worst_gap = 0.0_f64;
    let mut worst_kkt = 0.0_f64;
    let mut feet_counts = [0_usize; 5];
    let mut kinds = [0_usize; 3];
    let mut total = 0;
    for (file, overrides) in runs {
        let (problems, fallbacks) = recorded_problems(file, overrides, 700);
        assert_eq!(
            fallbacks, 0,
            "{file} {overrides:?}: the active set always finishes"
        );
        let mut qp = ForceQp::new(ForceQpSolver::ActiveSet);
        for problem in &problems {
            let (forces, lambda) = qp
                .solve_active_set(problem)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            let f: Vec<f64> = forces.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
            let reference = clarabel_reference(problem);
            let gap = f
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / inf_norm(&reference);
            worst_gap = worst_gap.max(gap);
            worst_kkt = worst_kkt.max(kkt_residual(problem, &f, &lambda));
            feet_counts[problem.arms.len()] += 1;
            for (sum, k) in kinds.iter_mut().zip(active_kinds(&lambda)) {
                *sum += usize::from(k > 0);
            }
        }
        total += problems.len();
    }
    println!(
        "{total} stance QPs (by stance feet {feet_counts:?}; with a face, f_min, f_max \
         active: {kinds:?}): largest relative gap to clarabel {worst_gap:.2e}, largest \
         relative KKT residual {worst_kkt:.2e}"
    );
    assert!(
        feet_counts[2] > 100 && feet_counts[4] > 50,
        "{feet_counts:?}"
    );
    // Pyramid faces and the upper bound bind; the lower bound f_min does not in these runs.
    assert!(kinds[0] > 100 && kinds[2] > 30, "{kinds:?}");
    // The KKT residual shows the active set's forces are the optimum; clarabel's, even at
    // 1e-11, are off by about 1e-4 along the feet's internal force, weighted by ε alone.
    assert!(worst_kkt < 1e-14, "{worst_kkt}");
    assert!(worst_gap < 3e-4, "{worst_gap}");
}

#[test]
fn the_trot_with_clarabel_follows_the_trot_with_the_active_set() {
    let run = |choice: &str| {
        let overrides = [
            format!("actuation.trot.force_qp={choice}"),
            "simulation.duration=1.0".into(),
        ];
        let overrides: Vec<&str> = overrides.iter().map(String::as_str).collect();
        simulate(&scenario("solo_trot_flat.yaml", &overrides), &admm())
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (exact, clarabel) = (run("active-set"), run("clarabel"));
    // Step 0 is recorded before the controller's first tick.
    assert!(exact.steps[1..]
        .iter()
        .chain(&clarabel.steps[1..])
        .all(|s| s.task.is_some_and(|t| t.qp_solved)));
    let gap = exact
        .steps
        .iter()
        .zip(&clarabel.steps)
        .flat_map(|(a, b)| {
            a.base_position
                .iter()
                .zip(&b.base_position)
                .map(|(x, y)| (x - y).abs())
        })
        .fold(0.0, f64::max);
    let last = exact.steps.last().expect("steps").base_position[0];
    println!("1 s of trot: {last:.4} m forward, base paths within {gap:.2e} m");
    assert!(last > 0.15, "{last}");
    assert!(gap < 1e-5, "{gap}");
}

#[test]
fn an_unknown_force_qp_solver_is_refused_naming_the_field() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join("solo_trot_flat.yaml");
    let error = Scenario::load(&path, &["actuation.trot.force_qp=simplex".to_string()])
        .map(|_| ())
        .expect_err("refused");
    let message = error.to_string();
    println!("{message}");
    assert!(message.contains("force_qp"), "{message}");
    assert!(
        message.contains("active-set") && message.contains("clarabel"),
        "{message}"
    );
}
