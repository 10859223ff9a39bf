//! Bad input never panics: one test per bad input, problem-file errors, round trip, and
//! the empty problem for every solver.

use crate::common::solvers as common;

use std::path::PathBuf;

use common::{build, settings};
use contactbench::problem::io::{read_lambda, read_problem, write_problem, ProblemFileError};
use contactbench::problem::{ContactProblem, ProblemError, ValidationNote};
use contactbench::solvers::{SolveStatus, SolverError, SolverId, SolverSpec};
use nalgebra::{DMatrix, DVector};

fn identity_problem(
    g: DMatrix<f64>,
    free: DVector<f64>,
    mu: DVector<f64>,
    r: Option<DVector<f64>>,
) -> Result<ContactProblem, ProblemError> {
    ContactProblem::new(g, free, mu, r)
}

fn eye(n: usize) -> DMatrix<f64> {
    DMatrix::identity(n, n)
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn nan_in_g_is_refused_with_its_position() {
    let mut g = eye(3);
    g[(1, 2)] = f64::NAN;
    let err = identity_problem(g, DVector::zeros(3), DVector::from_element(1, 0.5), None);
    assert_eq!(
        err,
        Err(ProblemError::NonFinite {
            field: "G",
            index: "(1, 2)".into()
        })
    );
}

#[test]
fn infinite_free_velocity_is_refused() {
    let free = DVector::from_vec(vec![0.0, f64::INFINITY, 0.0]);
    let err = identity_problem(eye(3), free, DVector::from_element(1, 0.5), None);
    assert!(matches!(
        err,
        Err(ProblemError::NonFinite { field: "g", .. })
    ));
}

#[test]
fn asymmetric_g_is_refused() {
    let mut g = eye(3);
    g[(0, 2)] = 0.3;
    let err = identity_problem(g, DVector::zeros(3), DVector::from_element(1, 0.5), None);
    assert!(matches!(
        err,
        Err(ProblemError::Asymmetric { i: 0, j: 2, .. })
    ));
}

/// The problem of a data file, validated.
fn read(name: &str) -> Result<ContactProblem, ProblemFileError> {
    read_problem(&data(name)).map(|f| f.problem)
}

#[test]
fn an_iteratively_reduced_fclib_matrix_is_symmetrized_and_says_so() {
    // LMGC's global problem 46 (FCLIB, Siconos) reduced with a conjugate gradient at
    // rtol 1e-2: W is 1.8e-3 asymmetric (tests/data/fclib/README.md).
    let p = match read("fclib/lmgc46_cg.json") {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    let notes = p.validation_notes();
    assert!(
        matches!(notes, [ValidationNote::Symmetrized { relative_gap, .. }]
            if (*relative_gap - 1.79e-3).abs() < 1e-5),
        "{notes:?}"
    );
    let g = p.delassus();
    assert_eq!(g, &g.transpose());
    // The note says what was done, in words.
    assert!(notes[0].to_string().contains("symmetrized"), "{}", notes[0]);
}

#[test]
fn a_wrongly_reduced_fclib_matrix_is_refused() {
    // The same data with M's missing lower triangle: W is 0.16 asymmetric.
    match read("fclib/lmgc46_naive.json") {
        Err(ProblemFileError::Invalid {
            error: ProblemError::Asymmetric { relative, .. },
            ..
        }) => assert!((relative - 0.161).abs() < 1e-3, "{relative}"),
        other => panic!("expected an asymmetry error, got {other:?}"),
    }
}

#[test]
fn rank_deficient_matrices_printed_to_8_digits_are_accepted() {
    // ContactBench's own test matrices (tests/data/contactbench/): rank deficient, printed
    // with 8-9 digits, smallest eigenvalues -7e-9 to -1.1e-5 (down to -7.2e-9 of the
    // largest). Every one is accepted; those below zero say so.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/contactbench");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("{} is readable", dir.display());
    };
    let mut tolerated = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let problem = match read_problem(&path) {
            Ok(f) => f.problem,
            Err(e) => panic!("{e}"),
        };
        for note in problem.validation_notes() {
            if let ValidationNote::NegativeEigenvalueTolerated { min_eigenvalue, .. } = note {
                tolerated.push(*min_eigenvalue);
            }
        }
    }
    tolerated.sort_by(f64::total_cmp);
    // ccp_admm_solver_getsolution3 (8 contacts, max |G| = 5.6e3) is the most negative.
    assert!(
        tolerated
            .first()
            .is_some_and(|m| (*m + 1.1e-5).abs() < 1e-6),
        "{tolerated:?}"
    );
    assert!(tolerated.len() >= 6, "{tolerated:?}");
}

#[test]
fn a_clearly_indefinite_matrix_is_refused_with_its_eigenvalue() {
    // An eigenvalue of -1e-3 relative to ‖G‖_F is not round-off.
    let mut g = eye(3);
    g[(2, 2)] = -1e-3;
    match identity_problem(g, DVector::zeros(3), DVector::from_element(1, 0.5), None) {
        Err(ProblemError::Indefinite {
            min_eigenvalue,
            relative,
            ..
        }) => {
            assert_eq!(min_eigenvalue, -1e-3);
            assert!(relative < -1e-4, "{relative}");
        }
        other => panic!("expected Indefinite, got {other:?}"),
    }
}

#[test]
fn magnitudes_that_would_overflow_are_refused_naming_the_field() {
    // ccp-newton on G = I, g = (1e308, 0, −1) answered (NaN, NaN, inf) "converged".
    let huge_g = DVector::from_vec(vec![1e308, 0.0, -1.0]);
    assert!(matches!(
        identity_problem(eye(3), huge_g, DVector::from_element(1, 0.5), None),
        Err(ProblemError::Magnitude { field: "g", .. })
    ));
    let mut big = eye(3);
    big[(1, 1)] = 1e151;
    let err = identity_problem(big, DVector::zeros(3), DVector::from_element(1, 0.5), None);
    assert!(
        matches!(&err, Err(e @ ProblemError::Magnitude { field: "G", .. }) if e.to_string().contains("G[1, 1]")),
        "{err:?}"
    );
    let r = Some(DVector::from_vec(vec![0.0, 0.0, 1e200]));
    assert!(matches!(
        identity_problem(eye(3), DVector::zeros(3), DVector::from_element(1, 0.5), r),
        Err(ProblemError::Magnitude { field: "R", .. })
    ));
    // A warm start beyond the limit is refused by every solver (ADMMs warm-started at
    // ±1e308 said converged).
    let Ok(p) = identity_problem(
        eye(3),
        DVector::from_vec(vec![0.0, 0.0, -1.0]),
        DVector::from_element(1, 0.5),
        None,
    ) else {
        panic!("valid problem");
    };
    for value in [1e308, -1e308] {
        let warm = DVector::from_vec(vec![0.0, 0.0, value]);
        for id in SolverId::ALL {
            let mut solver = build(id, &settings(1e-6, 100));
            let result = solver.solve(&p, Some(&warm));
            assert!(
                matches!(
                    &result,
                    Err(SolverError::Problem(ProblemError::Magnitude {
                        field: "lambda",
                        ..
                    }))
                ),
                "{id}: {:?}",
                result.map(|r| r.status)
            );
        }
    }
}

#[test]
fn the_simulators_door_checks_sizes_and_finiteness_only() {
    // from_assembly trusts G = J M⁻¹ Jᵀ: no symmetry or eigenvalue check, no note.
    let mut g = eye(3);
    g[(0, 1)] = 1e-3;
    let Ok(p) = ContactProblem::from_assembly(
        g.clone(),
        DVector::zeros(3),
        DVector::from_element(1, 0.5),
        None,
    ) else {
        panic!("from_assembly accepts it");
    };
    assert!(p.validation_notes().is_empty());
    assert_eq!(p.delassus(), &g);
    g[(0, 1)] = f64::NAN;
    assert!(matches!(
        ContactProblem::from_assembly(g, DVector::zeros(3), DVector::from_element(1, 0.5), None),
        Err(ProblemError::NonFinite { field: "G", .. })
    ));
}

#[test]
fn indefinite_g_is_refused() {
    let mut g = eye(3);
    g[(2, 2)] = -1.0;
    let err = identity_problem(g, DVector::zeros(3), DVector::from_element(1, 0.5), None);
    assert!(matches!(err, Err(ProblemError::Indefinite { .. })));
}

#[test]
fn negative_mu_is_refused() {
    let mu = DVector::from_vec(vec![0.5, -0.1]);
    let err = identity_problem(eye(6), DVector::zeros(6), mu, None);
    assert!(matches!(
        err,
        Err(ProblemError::Negative {
            field: "mu",
            index: 1,
            ..
        })
    ));
}

#[test]
fn negative_compliance_is_refused() {
    let r = DVector::from_vec(vec![0.0, 0.0, -1e-3]);
    let err = identity_problem(
        eye(3),
        DVector::zeros(3),
        DVector::from_element(1, 0.5),
        Some(r),
    );
    assert!(matches!(
        err,
        Err(ProblemError::Negative { field: "R", .. })
    ));
}

#[test]
fn mismatched_sizes_are_refused() {
    let mu = DVector::from_element(2, 0.5);
    let err = identity_problem(eye(3), DVector::zeros(3), mu.clone(), None);
    assert!(matches!(err, Err(ProblemError::Size { field: "G", .. })));
    let err = identity_problem(eye(6), DVector::zeros(5), mu.clone(), None);
    assert!(matches!(err, Err(ProblemError::Size { field: "g", .. })));
    let err = identity_problem(eye(6), DVector::zeros(6), mu, Some(DVector::zeros(3)));
    assert!(matches!(err, Err(ProblemError::Size { field: "R", .. })));
}

#[test]
fn wrong_size_warm_start_is_an_error_for_every_solver() {
    let Ok(p) = identity_problem(
        eye(3),
        DVector::zeros(3),
        DVector::from_element(1, 0.5),
        None,
    ) else {
        panic!("valid problem");
    };
    for id in SolverId::ALL {
        let mut solver = build(id, &settings(1e-6, 100));
        let err = solver.solve(&p, Some(&DVector::zeros(6)));
        assert!(
            matches!(
                err,
                Err(SolverError::Problem(ProblemError::Size {
                    field: "lambda",
                    ..
                }))
            ),
            "{id}"
        );
        let nan = DVector::from_element(3, f64::NAN);
        assert!(solver.solve(&p, Some(&nan)).is_err(), "{id}");
    }
}

#[test]
fn zero_contacts_is_a_valid_problem_with_the_trivial_answer() {
    let p = identity_problem(eye(0), DVector::zeros(0), DVector::zeros(0), None);
    let Ok(p) = p else {
        panic!("empty problem refused: {p:?}");
    };
    assert_eq!(p.num_contacts(), 0);
    for id in SolverId::ALL {
        let mut solver = build(id, &settings(1e-6, 100));
        let r = match solver.solve(&p, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        assert_eq!(r.status, SolveStatus::Converged, "{id}");
        assert_eq!(r.iterations, 0, "{id}");
        assert_eq!(r.lambda.len(), 0, "{id}");
        assert_eq!(r.velocity.len(), 0, "{id}");
    }
}

#[test]
fn bad_settings_and_parameters_are_refused() {
    for spec in [
        "ncp-pgs:eps_rel=-1",
        "ncp-pgs:stop=absolute,eps_abs=-1",
        // A tolerance of the criterion not in use would be silently ignored.
        "ncp-pgs:eps_abs=1e-8",
        "ncp-pgs:stop=absolute,eps_rel=1e-8",
        "ncp-pgs:stop=sometimes",
        "ncp-pgs:max_time=0",
        "ncp-pgs:over_relaxation=2.5",
        "ncp-pgs:max_iter=0",
        "ncp-pgs:rho=1",
        "raisim:alpha=0",
        "raisim:beta2=1.5",
        "not-a-solver",
    ] {
        let built = spec.parse::<SolverSpec>().and_then(|s| s.build());
        assert!(built.is_err(), "{spec} was accepted");
    }
}

#[test]
fn missing_field_names_the_field_and_line() {
    match read_problem(&data("missing_mu.json")) {
        Err(ProblemFileError::Json { message, line, .. }) => {
            assert!(message.contains("mu"), "{message}");
            assert!(line >= 1);
        }
        other => panic!("expected a JSON error, got {other:?}"),
    }
}

#[test]
fn wrong_type_names_the_field() {
    match read_problem(&data("string_in_g.json")) {
        Err(e @ ProblemFileError::Json { line: 3, .. }) => {
            assert!(e.to_string().contains("line 3, column"), "{e}");
            assert!(e.to_string().contains(": g: invalid type"), "{e}");
        }
        other => panic!("expected a JSON error on line 3, got {other:?}"),
    }
}

#[test]
fn bad_json_gives_its_line_and_column() {
    match read_problem(&data("bad_syntax.json")) {
        Err(e @ ProblemFileError::Json { line: 4, .. }) => {
            assert!(e.to_string().contains("bad_syntax.json: line 4"), "{e}");
        }
        other => panic!("expected a JSON error on line 4, got {other:?}"),
    }
}

#[test]
fn invalid_problem_in_a_file_names_file_and_field() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-validation-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("ragged.json");
    let written = std::fs::write(
        &path,
        r#"{"G": [[1, 0, 0], [0, 1], [0, 0, 1]], "g": [0, 0, 0], "mu": [1]}"#,
    );
    assert!(written.is_ok());
    assert!(matches!(
        read_problem(&path),
        Err(ProblemFileError::RaggedRows {
            row: 1,
            got: 2,
            expected: 3,
            ..
        })
    ));
    let path = dir.join("negative.json");
    let written = std::fs::write(
        &path,
        r#"{"G": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "g": [0, 0, 0], "mu": [-1]}"#,
    );
    assert!(written.is_ok());
    let err = read_problem(&path);
    assert!(
        matches!(&err, Err(e @ ProblemFileError::Invalid { .. }) if e.to_string().contains("negative.json: mu[0]")),
        "{err:?}"
    );
    assert!(matches!(
        read_problem(&dir.join("absent.json")),
        Err(ProblemFileError::Io { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn problem_file_round_trip() {
    let file = match read_problem(&data("sliding_problem.json")) {
        Ok(f) => f,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(file.problem.num_contacts(), 1);
    assert_eq!(file.lambda.as_ref().map(|l| l[1]), Some(0.5));
    let spec = file.solver.clone().map(SolverSpec::from_map);
    assert!(matches!(&spec, Some(Ok(s)) if s.id == SolverId::Raisim && s.settings.eps_rel == 1e-9));

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-roundtrip-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("copy.json");
    let compliant = match ContactProblem::new(
        file.problem.delassus().clone(),
        file.problem.free_velocity().clone(),
        file.problem.mu().clone(),
        Some(DVector::from_vec(vec![0.0, 0.0, 1e-4])),
    ) {
        Ok(p) => p,
        Err(err) => panic!("{err}"),
    };
    let written = write_problem(
        &path,
        &compliant,
        file.lambda.as_ref(),
        file.solver.as_ref(),
    );
    assert!(written.is_ok(), "{written:?}");
    let back = match read_problem(&path) {
        Ok(f) => f,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(back.problem, compliant);
    assert_eq!(back.lambda, file.lambda);
    assert_eq!(back.solver, file.solver);
    // The same file serves as a warm start (its `lambda`), as does a bare array.
    assert_eq!(read_lambda(&path).ok(), file.lambda);
    let bare = dir.join("lambda.json");
    assert!(std::fs::write(&bare, "[0.0, 0.5, 1.0]").is_ok());
    assert_eq!(read_lambda(&bare).ok(), file.lambda);
    let _ = std::fs::remove_dir_all(&dir);
}
