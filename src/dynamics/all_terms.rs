//! The terms of the equations of motion that one time step needs, from one pass over the
//! placements (after Pinocchio's `computeAllTerms`): the mass matrix `M(q)` (CRBA) and the
//! bias `C(q, v) v + g(q) − Σ J_iᵀ f_ext,i` (RNEA with `a = 0`), so that
//! `M(q) a = τ − bias`.

use nalgebra::{DVector, Vector6};

use super::crba::crba_at_placements;
use super::kinematics::update_placements;
use super::rnea::{project_forces, rnea_passes};
use super::{check_configuration, check_data, check_fext, check_velocity, Data, DynamicsError};
use crate::model::Model;

/// `M(q)` into `data.mass_matrix` (both triangles) and `RNEA(q, v, 0, f_ext)` into
/// `data.tau` (nv); the joint placements `data.o_m_i` are left at `q`. `fext` as in
/// [`super::rnea()`]: one per joint, `[f; n]` in the joint's local frame. No allocation.
pub fn mass_matrix_and_bias(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    mass_matrix_and_bias_at_placements(model, data, v, fext)
}

/// [`mass_matrix_and_bias`] once `data`'s placements are at `q` (an
/// [`super::mechanical_energy`] at the same `q` leaves them so): a simulation that records
/// the energy after a step computes them once for both.
pub(crate) fn mass_matrix_and_bias_at_placements(
    model: &Model,
    data: &mut Data,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_velocity(model, v, "v")?;
    check_fext(model, fext)?;
    crba_at_placements(model, data);
    rnea_passes(model, data, v.as_slice(), None, fext, true);
    let mut tau = std::mem::replace(&mut data.tau, DVector::zeros(0));
    project_forces(model, data, &mut tau);
    data.tau = tau;
    Ok(())
}
