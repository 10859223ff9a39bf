//! "Infeasible" is a proof, not a guess: the clarabel-based solvers (ccp-ipm, lcp-qp and
//! the staggered projections) report it only on a checked certificate that the CCP's QP
//! is unbounded below. On ill-conditioned 3-contact problems (masses from 4e-6 to 1e5,
//! `G` with eigenvalues down to 1e-11 of the largest) clarabel's own test met a direction
//! of small positive curvature and all four called the problem infeasible, while raisim,
//! raisim-corrected and ccp-newton solved it to r < 1e-6.

use contactbench::problem::ContactProblem;
use contactbench::solvers::{SolveReport, SolveStatus, SolverId, SolverSettings};
use nalgebra::{DMatrix, DVector};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Map;

/// `G = J M⁻¹ Jᵀ`, `g = J v` for point masses `masses` (a diagonal `M`).
fn physical(j_rows: &[f64], masses: &[f64], v: &[f64], mu: &[f64]) -> ContactProblem {
    let nv = masses.len();
    let j = DMatrix::from_row_slice(j_rows.len() / nv, nv, j_rows);
    let m_inv = DMatrix::from_diagonal(&DVector::from_iterator(nv, masses.iter().map(|m| 1.0 / m)));
    let g = &j * DVector::from_column_slice(v);
    ContactProblem::new(
        &j * m_inv * j.transpose(),
        g,
        DVector::from_column_slice(mu),
        None,
    )
    .unwrap_or_else(|e| panic!("valid problem: {e}"))
}

/// Three contacts on `nv` point masses whose masses spread over `spread^u`, `u` in
/// [−1, 1]: `J`, `v` in [−1, 1], `μ` in [0.2, 1]. With `g = J v` the CCP's cost
/// `½λᵀGλ + gᵀλ = ½‖M^{-1/2}Jᵀλ‖² + vᵀJᵀλ` is bounded below: never infeasible.
fn point_masses(seed: u64, nv: usize, spread: f64) -> ContactProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let j: Vec<f64> = (0..9 * nv).map(|_| rng.random_range(-1.0..1.0)).collect();
    let masses: Vec<f64> = (0..nv)
        .map(|_| spread.powf(rng.random_range(-1.0..1.0)))
        .collect();
    let v: Vec<f64> = (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mu: Vec<f64> = (0..3).map(|_| rng.random_range(0.2..1.0)).collect();
    physical(&j, &masses, &v, &mu)
}

/// Three contacts on three point masses of 3.8e-6, 1.1e5 and 3.8e-6.
fn light_heavy_light() -> ContactProblem {
    physical(
        &[
            -0.28672984329955264,
            -0.5565755083702766,
            -0.9922072591358715,
            0.8148682547939781,
            -0.20387275960240103,
            -0.7162608605410585,
            -0.9601977986977501,
            0.8317712521141938,
            0.1722181101233904,
            -0.35843952979136784,
            0.3777191556756181,
            -0.26340845622040865,
            -0.008885473208238182,
            0.599129258248837,
            -0.030630635790775962,
            0.8183549406896238,
            -0.5823217919179515,
            0.03892839521512759,
            0.852925910258397,
            0.10206436288118415,
            0.5120831534843289,
            0.5914355689777699,
            0.30521411552333566,
            -0.6557896223198743,
            0.4184343988287518,
            -0.9043742522757703,
            -0.17388069049382127,
        ],
        &[
            3.7824606831677735e-6,
            112323.62603865215,
            3.784146779468404e-6,
        ],
        &[-0.5744427260589697, 0.7405984973558946, 0.19550245365449692],
        &[0.8023009380369164, 0.9392029025770192, 0.7259577913575626],
    )
}

/// Three contacts on two point masses of 1.9e4 and 1.2e-5.
fn heavy_light() -> ContactProblem {
    physical(
        &[
            -0.575525728972869,
            -0.9478287637513323,
            0.6334580491803989,
            0.10994435936510705,
            -0.09396906557716589,
            -0.7360471495115317,
            0.4842699514071702,
            -0.9528825592306838,
            0.3143669395707174,
            -0.569463653502551,
            0.778682121858318,
            -0.19214701900811848,
            0.4141532737613285,
            0.665921833700958,
            0.9670165407178266,
            0.40147705362275365,
            0.343406672777153,
            0.08069036912328276,
        ],
        &[18674.316270706746, 1.1934888967920069e-5],
        &[-0.9957509141461083, -0.9609805583786883],
        &[0.7212963726937005, 0.38832708549739936, 0.556136968099332],
    )
}

const CLARABEL_SOLVERS: [SolverId; 4] = [
    SolverId::LcpQp,
    SolverId::LcpStagproj,
    SolverId::NcpStagproj,
    SolverId::CcpIpm,
];

fn solve(id: SolverId, p: &ContactProblem) -> SolveReport {
    let mut solver = id
        .build(SolverSettings::default(), &Map::new())
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    solver
        .solve(p, None)
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn an_ill_conditioned_problem_that_others_solve_is_not_called_infeasible() {
    let p = light_heavy_light();
    // The problem has an answer: raisim-corrected (an NCP solver) reaches it.
    let reference = solve(SolverId::RaisimCorrected, &p);
    assert!(reference.status.is_converged(), "{}", reference.status);
    for id in CLARABEL_SOLVERS {
        let report = solve(id, &p);
        assert_ne!(report.status, SolveStatus::Infeasible, "{id}");
        println!(
            "{id}: {} after {} iterations, r = {:.2e}",
            report.status, report.iterations, report.residual
        );
    }
}

#[test]
fn the_clarabel_solvers_solve_an_ill_conditioned_problem_they_called_infeasible() {
    let p = heavy_light();
    for id in CLARABEL_SOLVERS {
        let report = solve(id, &p);
        assert!(report.status.is_converged(), "{id}: {}", report.status);
        assert!(report.residual <= 1e-6, "{id}: r = {:e}", report.residual);
    }
}

#[test]
fn bounded_ccps_with_masses_spread_over_1e12_are_seldom_called_infeasible() {
    // 100 bounded problems (25 seeds × 2, 3, 4 and 6 degrees of freedom) with masses
    // spread over 1e±6. Before the check, 16 false claims: lcp-qp 7, ccp-ipm 5, each
    // staggered projection 2. The methods whose QPs are steps now make none; ccp-ipm keeps
    // one, where the curvature along clarabel's direction is below the 1e-12 of the
    // QP's scale that the certificate must reach.
    let mut claims: Vec<(SolverId, u64, usize)> = Vec::new();
    for nv in [2, 3, 4, 6] {
        for seed in 0..25 {
            let p = point_masses(seed, nv, 1e6);
            for id in CLARABEL_SOLVERS {
                if solve(id, &p).status == SolveStatus::Infeasible {
                    claims.push((id, seed, nv));
                }
            }
        }
    }
    println!("infeasible claims (solver, seed, dof): {claims:?}");
    assert!(
        claims.iter().all(|(id, _, _)| *id == SolverId::CcpIpm),
        "{claims:?}"
    );
    assert!(claims.len() <= 1, "{claims:?}");
}

#[test]
fn ccp_ipm_still_proves_an_unbounded_ccp_infeasible() {
    // G = 0, g_N = −1: the CCP's cost gᵀλ = −λ_N decreases without bound along the cone.
    let p = ContactProblem::new(
        DMatrix::zeros(3, 3),
        DVector::from_vec(vec![0.0, 0.0, -1.0]),
        DVector::from_vec(vec![0.5]),
        None,
    )
    .unwrap_or_else(|e| panic!("valid problem: {e}"));
    assert_eq!(solve(SolverId::CcpIpm, &p).status, SolveStatus::Infeasible);
    // For the solvers whose QPs are steps of a method, an unbounded QP stops the method
    // but proves nothing about the contact problem.
    for id in [
        SolverId::LcpQp,
        SolverId::LcpStagproj,
        SolverId::NcpStagproj,
    ] {
        let status = solve(id, &p).status;
        assert!(
            matches!(status, SolveStatus::NumericalError { .. }),
            "{id}: {status}"
        );
    }
}
