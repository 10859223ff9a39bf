//! The contact solvers: known answers, random and recorded problems, the ruler's verdict
//! on every "converged", units, time caps, warm starts, a user's solver, and corpora of
//! problem files.

#[path = "../common/mod.rs"]
mod common;

mod admm_kept_state;
mod contactbench_problems;
mod corpus_bench;
mod corpus_max_time;
mod global;
mod global_single_contact;
mod infeasible_claims;
mod max_time;
mod ncp_pgs_block;
mod operator_forms;
mod per_contact_findings;
mod pile_convergence;
mod random;
mod regressions;
mod single_contact;
mod status_checked;
mod units;
mod user;
mod velocity_agreement;
mod warm_start;
