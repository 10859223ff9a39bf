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
//! - [`solvers`]: the solver trait and the twelve solvers, one file each.
//! - [`simulation`]: time stepping, scenarios, recording, sweeps.
//! - [`metrics`]: one ruler for every solver (residuals, energy, consistency).
//! - [`corpus`]: problem files × solvers, judged by one ruler, performance profiles.
//! - [`report`]: tables and plots from recorded runs.
//!
//! Conventions are Pinocchio's: free-flyer `q = [x y z qx qy qz qw]`, base twist in the
//! base frame, gravity `(0, 0, −9.81)`, per-contact order `[t1, t2, n]`.
#![warn(missing_docs)]

pub mod collision;
pub mod corpus;
pub mod dynamics;
pub mod metrics;
pub mod model;
pub mod problem;
pub mod report;
pub mod simulation;
pub mod solvers;
