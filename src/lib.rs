//! # contactbench
//!
//! A benchmark of the contact models and solvers used by robotics simulators, after
//! ContactBench ("Contact Models in Robotics: a Comparative Analysis", Le Lidec et al.).
//!
//! The modules follow the pipeline of one time step:
//!
//! ```text
//! model ─► dynamics ─► collision ─► problem ─► solvers ─► simulation ─► metrics ─► report
//! ```
//!
//! - [`model`]: the robot (URDF/SRDF or built-in bodies), immutable once loaded.
//! - [`dynamics`]: kinematics, CRBA, RNEA, ABA, Jacobians, energy, Lie-group integration.
//! - [`collision`]: shapes, GJK (vanilla, Polyak, Nesterov), EPA, broad phase, contacts.
//! - [`problem`]: the contact problem `(G, g, μ, R)`, friction cones, problem files.
//! - [`solvers`]: the solver trait, the solver shell and the twelve solvers, one file each.
//! - [`derivatives`]: derivatives of a solver's answer (implicit, and finite differences).
//! - [`simulation`]: time stepping, scenarios, recording, sweeps.
//! - [`metrics`]: one ruler for every solver (residuals, energy, consistency).
//! - [`corpus`]: problem files × solvers, judged by one ruler, performance profiles.
//! - [`report`]: tables and plots from recorded runs.
//! - [`paper`]: the tables and figures of the contact models paper's §IV, reproduced.
//! - [`output`]: how every command writes files (marker, staging, locks, signals); it
//!   depends on nothing else in the crate.
//! - [`cli`]: the `contactbench` command line, one file per command;
//!   [`cli::main_with`] builds it with a user's own solvers.
//!
//! Conventions are Pinocchio's: free-flyer `q = [x y z qx qy qz qw]`, base twist in the
//! base frame, gravity `(0, 0, −9.81)`, per-contact order `[t1, t2, n]`. The design (the
//! pipeline, conventions, formulas, and how to add a solver, a robot or a scenario) is in
//! `docs/design.md`.
//!
//! # A contact problem, a solver, the ruler
//!
//! One contact pressed into the ground (`g_N < 0`) and sliding (`g_T ≠ 0`), solved by the
//! NCP's ADMM and judged by the metrics every solver is judged by:
//!
//! ```
//! use contactbench::metrics::summary::compute_metrics;
//! use contactbench::problem::ContactProblem;
//! use contactbench::solvers::{SolverId, SolverSpec};
//! use nalgebra::{DMatrix, DVector};
//!
//! // G = J M⁻¹ Jᵀ (3n × 3n), g = J v_f (m/s), μ per contact; no compliance.
//! let problem = ContactProblem::new(
//!     DMatrix::identity(3, 3),
//!     DVector::from_vec(vec![0.5, 0.0, -1.0]),
//!     DVector::from_vec(vec![0.3]),
//!     None,
//! )?;
//! let mut solver = SolverSpec::new(SolverId::NcpAdmm).build()?;
//! let report = solver.solve(&problem, None)?;
//! assert!(report.status.is_converged());
//! // Sliding: the friction force is on the cone's boundary, |λ_T| = μ λ_N.
//! let (lt, ln) = (report.lambda[0].hypot(report.lambda[1]), report.lambda[2]);
//! assert!((lt - 0.3 * ln).abs() < 1e-5 * ln);
//! let metrics = compute_metrics(&problem, &report.lambda);
//! assert!(metrics.relative_criterion <= 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A scenario, with a built-in or a user's solver
//!
//! Every runner ([`simulation::simulate`], [`simulation::sweep::sweep`],
//! [`simulation::batch::run_batch`], the paper's runs) builds its solvers from a
//! [`simulation::SolverFactory`]: a [`solvers::SolverSpec`], or a
//! [`simulation::UserSolver`] wrapping a user's own [`solvers::ContactSolver`]. A
//! scenario file names its robot (a manifest name or a URDF path), its bodies, its
//! solvers and its duration (`scenarios/*.yaml`).
//!
//! # A solver of your own
//!
//! Every solver is an [`solvers::Algorithm`] (its iteration, parameters and kept state)
//! in the solver shell [`solvers::Shell`], which owns the name, the model and the
//! validated settings, checks warm starts, answers problems without contacts and
//! implements [`solvers::ContactSolver`]. A user's algorithm goes in the same shell, in
//! any crate, and is then run and judged like the built-in ones: the doc of
//! [`solvers::ContactSolver`] has a complete example, and `user-solver/` in the
//! repository is a crate that runs its own solver on a scenario, in a sweep, in a batch
//! and in the paper's solver comparisons ([`paper::run_paper_with`]).
#![warn(missing_docs)]

// The command line's files name the library `contactbench::`, as a user's crate does.
extern crate self as contactbench;

pub mod cli;
pub mod collision;
pub mod corpus;
pub mod derivatives;
pub mod dynamics;
pub mod metrics;
pub mod model;
pub mod output;
pub mod paper;
pub mod problem;
pub mod report;
pub mod simulation;
pub mod solvers;
