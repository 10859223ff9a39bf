//! Cross-checks between the algorithms on the three robots at seeded random states:
//! M symmetric positive definite, RNEA(q, 0, 0) = g(q), ABA = M⁻¹(τ − nle), RNEA ∘ ABA = id
//! (with external forces too), CRBA columns from RNEA, Jacobians against finite differences
//! of frame positions, integrate/difference round trips. A small model with every joint type
//! on unaligned axes (`tests/data/model_mixed.urdf`) joins the three robots.

use crate::common::dynamics as dynamics_support;

use contactbench::dynamics::{self, Data, MassCholesky};
use contactbench::model::{Model, RootJoint};
use dynamics_support::*;
use nalgebra::{DMatrix, DVector, Vector3, Vector6};

const ROBOTS: [&str; 4] = ["solo12", "talos", "allegro", "mixed"];

/// A robot of the manifest, or the mixed-joint test model (free-flyer root).
fn load_robot(name: &str) -> Model {
    if name == "mixed" {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/model_mixed.urdf");
        Model::from_urdf(path, RootJoint::FreeFlyer).unwrap()
    } else {
        contactbench::model::robots::load_robot(name).unwrap()
    }
}

fn states(model: &Model, seed: u64, n: usize) -> Vec<(DVector<f64>, DVector<f64>, DVector<f64>)> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            let q = random_configuration(model, &mut r);
            let v = random_vector(model.nv(), 1.0, &mut r);
            let tau = random_vector(model.nv(), 2.0, &mut r);
            (q, v, tau)
        })
        .collect()
}

#[test]
fn mass_matrix_is_symmetric_positive_definite() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        for (q, _, _) in states(&model, 1, 5) {
            let m = dynamics::crba(&model, &mut data, &q).unwrap().clone();
            assert_close(&format!("{robot}: M - Mᵀ"), &m, &m.transpose(), 1e-14);
            let eig = m.clone().symmetric_eigen().eigenvalues;
            assert!(
                eig.min() > 0.0,
                "{robot}: smallest eigenvalue {}",
                eig.min()
            );
            assert!(MassCholesky::new(&m).is_ok());
        }
    }
}

#[test]
fn rnea_without_motion_is_gravity_and_crba_columns_match_rnea() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let zero = DVector::zeros(model.nv());
        for (q, _, _) in states(&model, 2, 3) {
            let tau = dynamics::rnea(&model, &mut data, &q, &zero, &zero, None)
                .unwrap()
                .clone();
            let g = dynamics::generalized_gravity(&model, &mut data, &q)
                .unwrap()
                .clone();
            assert_close_vec(&format!("{robot}: rnea(q,0,0) vs g"), &tau, &g, 1e-12);
            let m = dynamics::crba(&model, &mut data, &q).unwrap().clone();
            for k in 0..model.nv() {
                let mut e = zero.clone();
                e[k] = 1.0;
                let col = dynamics::rnea(&model, &mut data, &q, &zero, &e, None).unwrap() - &g;
                assert_close_vec(
                    &format!("{robot}: M column {k}"),
                    &col,
                    &m.column(k).into_owned(),
                    1e-10,
                );
            }
        }
    }
}

#[test]
fn aba_inverts_rnea_and_equals_the_mass_matrix_solve() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let mut r = rng(3);
        for (q, v, tau) in states(&model, 4, 3) {
            let ddq = dynamics::aba(&model, &mut data, &q, &v, &tau, None)
                .unwrap()
                .clone();
            let m = dynamics::crba(&model, &mut data, &q).unwrap().clone();
            let nle = dynamics::nonlinear_effects(&model, &mut data, &q, &v)
                .unwrap()
                .clone();
            let expected = MassCholesky::new(&m)
                .unwrap()
                .solve(&(&tau - &nle))
                .unwrap();
            assert_close_vec(
                &format!("{robot}: aba vs M⁻¹(τ − nle)"),
                &ddq,
                &expected,
                1e-9,
            );
            let fext: Vec<Vector6<f64>> = (0..model.njoints())
                .map(|_| Vector6::from_iterator(random_vector(6, 5.0, &mut r).iter().copied()))
                .collect();
            let ddq = dynamics::aba(&model, &mut data, &q, &v, &tau, Some(&fext))
                .unwrap()
                .clone();
            let back = dynamics::rnea(&model, &mut data, &q, &v, &ddq, Some(&fext)).unwrap();
            assert_close_vec(&format!("{robot}: rnea(aba) with fext"), back, &tau, 1e-9);
        }
    }
}

#[test]
fn external_force_at_a_frame_acts_through_the_jacobian_transpose() {
    let model = load_robot("solo12");
    let mut data = Data::new(&model);
    let frame = model.frame_id("FL_FOOT").unwrap();
    let joint = model.frames[frame].parent_joint;
    for (q, v, _) in states(&model, 5, 3) {
        let a = DVector::zeros(model.nv());
        let base = dynamics::rnea(&model, &mut data, &q, &v, &a, None)
            .unwrap()
            .clone();
        dynamics::forward_kinematics(&model, &mut data, &q).unwrap();
        let force_world = Vector3::new(1.5, -2.0, 7.0);
        // The world force at the foot, as a spatial force in the joint's local frame.
        let omi = data.omi[joint];
        let p_local = omi.inverse_transform_point(&data.omf[frame].translation.vector.into());
        let f_local = omi.inverse_transform_vector(&force_world);
        let n_local = p_local.coords.cross(&f_local);
        let mut fext = vec![Vector6::zeros(); model.njoints()];
        fext[joint] = Vector6::new(
            f_local.x, f_local.y, f_local.z, n_local.x, n_local.y, n_local.z,
        );
        let with = dynamics::rnea(&model, &mut data, &q, &v, &a, Some(&fext))
            .unwrap()
            .clone();
        let j = dynamics::frame_jacobian(&model, &data, frame).unwrap();
        let expected = &base - j.transpose() * force_world;
        assert_close_vec("rnea with fext vs τ − Jᵀ f", &with, &expected, 1e-12);
    }
}

#[test]
fn jacobians_match_finite_differences_of_frame_positions() {
    let h = 1e-6;
    for (robot, frames) in [
        ("solo12", vec!["FL_FOOT", "HR_FOOT"]),
        (
            "talos",
            vec!["left_sole_link", "gripper_left_fingertip_3_link"],
        ),
        ("allegro", vec!["link_3.0_tip", "link_15.0_tip"]),
        ("mixed", vec!["arm_tip", "bracket", "flap"]),
    ] {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        for (q, _, _) in states(&model, 6, 2) {
            for name in &frames {
                let id = model.frame_id(name).unwrap();
                dynamics::forward_kinematics(&model, &mut data, &q).unwrap();
                let j = dynamics::frame_jacobian(&model, &data, id).unwrap();
                let mut fd = DMatrix::zeros(3, model.nv());
                for k in 0..model.nv() {
                    let mut e = DVector::zeros(model.nv());
                    e[k] = 1.0;
                    let mut position = |dt: f64| {
                        let qk = dynamics::integrate(&model, &q, &e, dt).unwrap();
                        dynamics::forward_kinematics(&model, &mut data, &qk).unwrap();
                        data.omf[id].translation.vector
                    };
                    let col = (position(h) - position(-h)) / (2.0 * h);
                    fd.set_column(k, &col);
                }
                let j = DMatrix::from_column_slice(3, model.nv(), j.as_slice());
                assert_close(&format!("{robot}: {name} jacobian vs FD"), &j, &fd, 1e-7);
            }
        }
    }
}

#[test]
fn integrate_and_difference_are_inverse() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        for (q, v, _) in states(&model, 7, 3) {
            let q1 = dynamics::integrate(&model, &q, &v, 0.7).unwrap();
            if model.has_free_flyer() {
                let norm = q1.rows(3, 4).norm();
                assert!(
                    (norm - 1.0).abs() < 1e-14,
                    "{robot}: quaternion norm {norm}"
                );
            }
            let back = dynamics::difference(&model, &q, &q1).unwrap();
            assert_close_vec(
                &format!("{robot}: difference(q, q ⊕ 0.7 v)"),
                &back,
                &(&v * 0.7),
                1e-10,
            );
            let again = dynamics::integrate(&model, &q, &back, 1.0).unwrap();
            assert_close_vec(&format!("{robot}: q ⊕ (q1 ⊖ q)"), &again, &q1, 1e-12);
            // Tiny steps too (finite differences, consistency metrics).
            let q2 = dynamics::integrate(&model, &q, &v, 1e-7).unwrap();
            let back = dynamics::difference(&model, &q, &q2).unwrap() / 1e-7;
            assert_close_vec(&format!("{robot}: small difference"), &back, &v, 1e-7);
        }
    }
}
