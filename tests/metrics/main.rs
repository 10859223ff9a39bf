//! The metrics: the relative criterion's local scales and the split of contact forces
//! into required and injected internal forces.

mod internal_forces;
mod ruler_locality;
mod sparse_jacobian;
