//! Collision detection: closed-form distances, GJK/EPA's contract, degenerate input,
//! parry3d as an oracle, the collision papers' baselines, the scene, the simulator's
//! detector and the randomized-smoothing derivatives.

#[path = "../common/mod.rs"]
mod common;

mod baselines;
mod degenerate;
mod detector;
mod exact;
mod gjk;
mod heightfield;
mod scene;
mod smoothing;
mod vs_parry;
