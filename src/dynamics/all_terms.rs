//! The terms of the equations of motion that one time step needs, from one pass over the
//! placements (after Pinocchio's `computeAllTerms`): the mass matrix `M(q)` (CRBA) and the
//! bias `C(q, v) v + g(q) − Σ J_iᵀ f_ext,i` (RNEA with `a = 0`), so that
//! `M(q) a = τ − bias`. [`factorized_mass_and_bias`] is the same pass with `M(q)` going
//! straight into its LTDL factor, for a caller that needs only the factor.

use nalgebra::{DVector, Vector6};

use super::crba::{crba_at_placements, crba_into_factor};
use super::kinematics::update_placements;
use super::ltdl::MassLtdl;
use super::rnea::{project_forces, rnea_passes};
use super::{check_configuration, check_data, check_fext, check_velocity, Data, DynamicsError};
use crate::model::Model;

/// `M(q)` into `data.mass_matrix` (both triangles) and `RNEA(q, v, 0, f_ext)` into
/// `data.tau` (nv); the joint placements `data.o_m_i` are left at `q`. `fext` as in
/// [`super::rnea()`]: one per joint, `[f; n]` in the joint's local frame. No allocation
/// after the first call (which makes `data.mass_matrix` nv × nv).
pub fn mass_matrix_and_bias(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_velocity(model, v, "v")?;
    check_fext(model, fext)?;
    update_placements(model, data, q);
    crba_at_placements(model, data);
    bias_at_placements(model, data, v, fext);
    Ok(())
}

/// [`mass_matrix_and_bias`] then [`MassLtdl::factorize`] of `M(q)`, without forming the
/// dense `M(q)`: the entries the factorization reads go straight into `factor` (from
/// [`MassLtdl::new`] on `model`), the same factor and `data.tau` to the bit;
/// `data.mass_matrix` is left as it was. No allocation.
pub fn factorized_mass_and_bias(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
    factor: &mut MassLtdl,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    check_factorized_inputs(model, v, fext, factor)?;
    update_placements(model, data, q);
    crba_into_factor(model, data, factor)?;
    bias_at_placements(model, data, v, fext);
    Ok(())
}

/// [`factorized_mass_and_bias`] once `data`'s placements are at `q` (an
/// [`super::mechanical_energy`] at the same `q` leaves them so): a simulation that records
/// the energy after a step computes them once for both.
pub(crate) fn factorized_mass_and_bias_at_placements(
    model: &Model,
    data: &mut Data,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
    factor: &mut MassLtdl,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_factorized_inputs(model, v, fext, factor)?;
    crba_into_factor(model, data, factor)?;
    bias_at_placements(model, data, v, fext);
    Ok(())
}

/// The sizes of `v`, `f_ext` and the factor, checked before anything is written.
fn check_factorized_inputs(
    model: &Model,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
    factor: &MassLtdl,
) -> Result<(), DynamicsError> {
    check_velocity(model, v, "v")?;
    check_fext(model, fext)?;
    if factor.dim() != model.nv() {
        return Err(DynamicsError::WrongSize {
            name: "mass factor",
            dim: "nv",
            expected: model.nv(),
            got: factor.dim(),
        });
    }
    Ok(())
}

/// `RNEA(q, v, 0, f_ext)` into `data.tau` once the placements are at `q`.
fn bias_at_placements(
    model: &Model,
    data: &mut Data,
    v: &DVector<f64>,
    fext: Option<&[Vector6<f64>]>,
) {
    rnea_passes(model, data, v.as_slice(), None, fext, true);
    let mut tau = std::mem::replace(&mut data.tau, DVector::zeros(0));
    project_forces(model, data, &mut tau);
    data.tau = tau;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::robots::load_robot;

    /// The factor straight from the CRBA is the factor of the dense `M(q)` to the bit, and
    /// the bias is unchanged, on Solo-12 and Talos away from the neutral configuration.
    #[test]
    fn the_factorized_pass_is_crba_then_factorize_to_the_bit() {
        for name in ["solo12", "talos"] {
            let model = load_robot(name).expect("robot");
            let nv = model.nv();
            let mut q = model.neutral_configuration();
            for (i, x) in q.iter_mut().enumerate().skip(7) {
                *x += 0.1 * ((i * 7919 % 13) as f64 - 6.0);
            }
            q.rows_mut(3, 4)
                .copy_from(&DVector::from_vec(vec![0.1, -0.2, 0.3, 0.9]).normalize());
            let v = DVector::from_fn(nv, |k, _| (k as f64 * 0.37).sin());
            let mut dense = Data::new(&model);
            mass_matrix_and_bias(&model, &mut dense, &q, &v, None).expect("dense");
            let mut expected = MassLtdl::new(&model);
            expected.factorize(&dense.mass_matrix).expect("spd");
            let mut data = Data::new(&model);
            let mut factor = MassLtdl::new(&model);
            factorized_mass_and_bias(&model, &mut data, &q, &v, None, &mut factor)
                .expect("factorized");
            assert_eq!(data.tau, dense.tau, "{name}: bias");
            for k in 0..nv {
                assert_eq!(
                    factor.d(k).to_bits(),
                    expected.d(k).to_bits(),
                    "{name}: D_{k}"
                );
                for i in 0..k {
                    assert_eq!(
                        factor.l(k, i).to_bits(),
                        expected.l(k, i).to_bits(),
                        "{name}: L[{k}][{i}]"
                    );
                }
            }
            assert_eq!(factor.inverse_d(), expected.inverse_d(), "{name}: 1 / D");
        }
    }

    /// A factor of another dimension is refused.
    #[test]
    fn a_factor_of_another_model_is_refused() {
        let model = load_robot("solo12").expect("robot");
        let other = load_robot("talos").expect("robot");
        let mut data = Data::new(&model);
        let (q, v) = (model.neutral_configuration(), DVector::zeros(model.nv()));
        let mut factor = MassLtdl::new(&other);
        let err = factorized_mass_and_bias(&model, &mut data, &q, &v, None, &mut factor);
        assert!(
            matches!(err, Err(DynamicsError::WrongSize { .. })),
            "{err:?}"
        );
    }
}
