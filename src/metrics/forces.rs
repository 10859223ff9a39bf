//! Force metrics that need the contact Jacobian.

use nalgebra::DVector;

use crate::problem::ContactProblem;

/// Relative tolerance on singular values when separating `range(J)` from `null(Jᵀ)`.
const RANK_TOLERANCE: f64 = 1e-10;

/// Internal forces: the norm of the part of `λ` in `null(Jᵀ)`, forces that change no
/// velocity (design.md §5, paper Fig. 11). `None` when the problem carries no `J`.
///
/// With `P = J J⁺` the projector onto `range(J)`, the internal part is `λ − P λ`.
pub fn internal_forces(problem: &ContactProblem, lambda: &DVector<f64>) -> Option<f64> {
    let jacobian = problem.jacobian()?;
    if jacobian.nrows() == 0 {
        return Some(0.0);
    }
    let svd = jacobian.clone().svd(true, true);
    let u = svd.u.as_ref()?;
    let sigma_max = svd.singular_values.max();
    let rank = svd
        .singular_values
        .iter()
        .filter(|s| **s > RANK_TOLERANCE * sigma_max.max(f64::MIN_POSITIVE))
        .count();
    let basis = u.columns(0, rank);
    let in_range = basis * (basis.transpose() * lambda);
    Some((lambda - in_range).norm())
}
