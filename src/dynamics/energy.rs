//! Mechanical energy: kinetic `½ vᵀ M v = ½ Σ v_iᵀ I_i v_i` and potential
//! `U = −Σ m_i g · c_i` (world frame), both in joules, as Pinocchio computes them (bodies
//! welded to the world are left out of `U`).

use nalgebra::{DVector, Vector6};

use super::kinematics::{update_local_placements, update_placements};
use super::rnea::joint_motion;
use super::{check_configuration, check_data, check_velocity, Data, DynamicsError};
use crate::model::Model;

/// Kinetic and potential energy at `(q, v)`, J, from one pass over the placements
/// (as [`kinetic_energy`] and [`potential_energy`] give them).
pub fn mechanical_energy(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<(f64, f64), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    update_placements(model, data, q);
    Ok((
        kinetic_at_placements(model, data, v),
        potential_at_placements(model, data),
    ))
}

/// Kinetic energy at `(q, v)`, J.
pub fn kinetic_energy(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<f64, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    update_local_placements(model, data, q);
    Ok(kinetic_at_placements(model, data, v))
}

/// `½ Σ v_iᵀ I_i v_i` once `data.li_m_i` holds the placements at `q`.
fn kinetic_at_placements(model: &Model, data: &mut Data, v: &DVector<f64>) -> f64 {
    data.vel[0] = Vector6::zeros();
    let mut energy = 0.0;
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let vj = joint_motion(
            &joint.kind,
            &v.as_slice()[joint.idx_v..joint.idx_v + joint.nv()],
        );
        let vi = data.li_m_i[i].act_inv_motion(&data.vel[joint.parent]) + vj;
        data.vel[i] = vi;
        energy += 0.5 * vi.dot(&model.inertias[i].mul_motion(&vi));
    }
    energy
}

/// Potential energy of gravity at `q`, J (zero at height 0).
pub fn potential_energy(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
) -> Result<f64, DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    Ok(potential_at_placements(model, data))
}

/// `−Σ m_i g · c_i` once `data.o_m_i` holds the placements at `q`.
fn potential_at_placements(model: &Model, data: &Data) -> f64 {
    model
        .inertias
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, inertia)| {
            -inertia.mass * model.gravity.dot(&data.o_m_i[i].act_point(&inertia.com))
        })
        .sum()
}
