//! Rigid-body dynamics: closed-form motions, Pinocchio's golden values, cross-checks
//! between the algorithms, the LTDL factorization and the analytical derivatives.

#[path = "../common/mod.rs"]
mod common;

mod analytic;
mod derivatives;
mod ltdl;
mod properties;
mod vs_pinocchio;
