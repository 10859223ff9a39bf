//! A solver written outside the crate, through the public API alone (the trait, the loop
//! building blocks of `solvers::support`, `SolveReport::finish`), stops like the built-in ones:
//! converged at the tolerance, at the iteration or time cap, a warm start accepted only
//! under the same test; its settings are validated when they change. And the registry's
//! listing (`contactbench solvers`) shows every registered solver.

use std::process::Command;
use std::time::Instant;

use contactbench::metrics::model_criteria as measured_criteria;
use contactbench::problem::generators::random_problem;
use contactbench::problem::{
    cones, contact_vector, set_contact_vector, ContactModel, ContactProblem,
};
use contactbench::solvers::registry::REGISTRY;
use contactbench::solvers::support::{
    iterate_status, model_criteria, passes, relative_step, replace_settings, stopping_status,
};
use contactbench::solvers::{
    solve_checked, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use nalgebra::DVector;
use serde_json::{Map, Value};

/// Projected gradient on the CCP: `λ ← proj_K(λ − t ((G + R) λ + g))`, `t = 1/‖G + R‖_F`.
struct ProjectedGradient {
    settings: SolverSettings,
}

impl ContactSolver for ProjectedGradient {
    fn name(&self) -> &str {
        "projected-gradient (user)"
    }
    fn model(&self) -> ContactModel {
        ContactModel::Ccp
    }
    fn settings(&self) -> &SolverSettings {
        &self.settings
    }
    fn set_settings(&mut self, settings: SolverSettings) -> Result<(), SolverError> {
        replace_settings(&mut self.settings, settings)
    }
    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        solve_checked(problem, self.model(), &self.settings, warm_start, |start| {
            Ok(self.iterate(problem, warm_start, start))
        })
    }
}

impl ProjectedGradient {
    fn iterate(
        &self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
        start: Instant,
    ) -> SolveReport {
        let model = ContactModel::Ccp;
        let finish = |lambda, status, iterations| {
            SolveReport::finish(
                problem,
                model,
                &self.settings,
                lambda,
                status,
                iterations,
                start,
                None,
            )
        };
        let mut lambda = warm_start
            .cloned()
            .unwrap_or_else(|| DVector::zeros(problem.dim()));
        if warm_start.is_some() {
            let criteria = model_criteria(model, problem, &lambda, &problem.velocity(&lambda));
            if passes(&criteria, &self.settings) {
                return finish(lambda, SolveStatus::Converged, 0);
            }
        }
        let step = 1.0 / problem.effective_delassus().norm();
        let mut previous = lambda.clone();
        for k in 1..=self.settings.max_iter {
            previous.copy_from(&lambda);
            let c = problem.velocity(&lambda);
            for i in 0..problem.num_contacts() {
                let trial = contact_vector(&lambda, i) - contact_vector(&c, i) * step;
                let p = cones::project_ice_cream(problem.mu_of(i), &trial);
                set_contact_vector(&mut lambda, i, &p);
            }
            if let Some(status) = iterate_status(&lambda, k, "forces") {
                return finish(previous, status, k);
            }
            let criteria = model_criteria(model, problem, &lambda, &problem.velocity(&lambda));
            let moved = relative_step(&lambda, &previous);
            if let Some(status) = stopping_status(&criteria, moved, &self.settings, k, start) {
                return finish(lambda, status, k);
            }
        }
        finish(lambda, SolveStatus::MaxIterations, self.settings.max_iter)
    }
}

fn problem() -> ContactProblem {
    random_problem(3, 2, 12).unwrap_or_else(|e| panic!("{e}"))
}

fn user(settings: SolverSettings) -> ProjectedGradient {
    ProjectedGradient { settings }
}

#[test]
fn a_user_solver_converges_at_the_tolerance_like_a_built_in_one() {
    let p = problem();
    let settings = SolverSettings {
        eps_rel: 1e-6,
        eps_step: 0.0,
        max_iter: 200_000,
        ..SolverSettings::default()
    };
    let report = user(settings.clone())
        .solve(&p, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert!(report.iterations > 1);
    // Judged by the metrics module, independently of the solver's own bookkeeping.
    let judged = measured_criteria(ContactModel::Ccp, &p, &report.lambda, &report.velocity);
    assert!(judged.relative <= 1e-6, "{}", judged.relative);
    assert_eq!(report.residual, judged.relative);
    // Its answer is accepted as a warm start in 0 iterations, by it and by ccp-admm (the
    // same test); a perturbed one is not.
    let again = user(settings.clone())
        .solve(&p, Some(&report.lambda))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (again.status, again.iterations),
        (SolveStatus::Converged, 0)
    );
    let mut admm = SolverId::CcpAdmm
        .build(settings.clone(), &Map::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let builtin = admm
        .solve(&p, Some(&report.lambda))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (builtin.status, builtin.iterations),
        (SolveStatus::Converged, 0)
    );
    let perturbed = report.lambda.map(|v| v * 1.1);
    let cold = user(settings)
        .solve(&p, Some(&perturbed))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(cold.iterations > 0);
}

#[test]
fn a_user_solver_stops_at_the_iteration_and_time_caps() {
    let p = problem();
    let capped = SolverSettings {
        eps_rel: 0.0,
        eps_step: 0.0,
        max_iter: 3,
        ..SolverSettings::default()
    };
    let report = user(capped.clone())
        .solve(&p, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (report.status, report.iterations),
        (SolveStatus::MaxIterations, 3)
    );
    let timed = SolverSettings {
        max_iter: 1_000_000_000,
        max_time: Some(0.02),
        ..capped
    };
    // A larger problem, so that the 20 ms run out long before an exact fixed point.
    let large = random_problem(5, 30, 60).unwrap_or_else(|e| panic!("{e}"));
    let report = user(timed)
        .solve(&large, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::MaxTime);
    assert!(report.solve_time.as_secs_f64() < 1.0);
}

#[test]
fn changed_settings_are_validated_for_user_and_built_in_solvers() {
    let bad = SolverSettings {
        max_iter: 0,
        ..SolverSettings::default()
    };
    let mut mine = user(SolverSettings::default());
    assert!(mine.set_settings(bad.clone()).is_err());
    assert_eq!(mine.settings().max_iter, 1000, "the old settings are kept");
    for id in SolverId::ALL {
        let mut solver = id
            .build(SolverSettings::default(), &Map::new())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(solver.set_settings(bad.clone()).is_err(), "{id}");
        assert_eq!(solver.settings().max_iter, 1000, "{id}");
        let good = SolverSettings {
            max_iter: 7,
            ..SolverSettings::default()
        };
        assert!(solver.set_settings(good).is_ok(), "{id}");
        assert_eq!(solver.settings().max_iter, 7, "{id}");
    }
}

#[test]
fn the_listing_shows_every_registered_solver_and_its_parameters() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_contactbench"))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run(&["solvers"]);
    let json: Value =
        serde_json::from_str(&run(&["solvers", "--json"])).unwrap_or_else(|e| panic!("{e}"));
    let listed = json["solvers"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, REGISTRY.len());
    for e in &REGISTRY {
        assert!(text.contains(&format!("\n{} [", e.name)), "{}", e.name);
        for p in e.params {
            assert!(
                text.contains(&format!("    {} = ", p.name)),
                "{} {}",
                e.name,
                p.name
            );
        }
    }
    assert!(text.contains("eps_rel = 1e-6 [-]"), "{text}");
    let help = run(&["--help"]);
    for id in SolverId::ALL {
        assert!(help.contains(id.as_str()), "--help lacks {id}");
    }
    assert!(help.contains("contactbench solvers"));
}
