//! Simulation: scenario files and their errors, whole-trajectory physics, per-step
//! metrics, warm starts, batches, sweeps and records of non-finite values.

mod batch;
mod cli;
mod force_qp;
mod generated_scenes;
mod gravity_compensation;
mod locomotion;
mod non_finite_records;
mod physics;
mod robot_geometry;
mod scenario_errors;
mod scenario_numbers;
mod self_collision;
mod step_metrics;
mod sweep;
mod view;
mod warm_start;
