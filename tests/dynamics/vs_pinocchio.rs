//! Every quantity of the Pinocchio 4.1.0 golden files (`tests/data/pinocchio_*.json`) to
//! 1e-9 relative: mass matrix, nonlinear effects, gravity, ABA, energies, frame placements
//! and world-aligned Jacobians, and the feet Delassus matrix (dense, and through the
//! kinematic tree as the simulator assembles it).

use crate::common::dynamics as dynamics_support;

use contactbench::dynamics::{self, Data, MassCholesky, MassLtdl};
use contactbench::model::{robots, Model, ModelError, RootJoint};
use contactbench::problem::build::{ContactAssembly, ContactState};
use contactbench::problem::StepParameters;
use dynamics_support::*;
use nalgebra::{DMatrix, DVector, Matrix3};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn load_robot(name: &str) -> Result<Model, ModelError> {
    if name == "mixed" {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/model_mixed.urdf");
        Model::from_urdf(path, RootJoint::FreeFlyer)
    } else {
        robots::load_robot(name)
    }
}

fn check_robot(robot: &str) {
    let gold = golden(&format!("pinocchio_{robot}.json"));
    let model = load_robot(robot).expect("robot loads");
    assert_eq!(model.nq() as u64, gold["nq"].as_u64().unwrap(), "nq");
    assert_eq!(model.nv() as u64, gold["nv"].as_u64().unwrap(), "nv");
    let names: Vec<&str> = gold["joint_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(model.joint_names()[1..], names[..], "joint order");
    assert_close_scalar(
        "total mass",
        model.total_mass(),
        gold["total_mass"].as_f64().unwrap(),
        TOL,
    );
    let reference = gold["reference_configuration"].as_str().unwrap_or("");
    let mut data = Data::new(&model);
    let cases = gold["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for (k, case) in cases.iter().enumerate() {
        let q = vector(&case["q"]);
        let v = vector(&case["v"]);
        let tau = vector(&case["tau"]);
        if k == 0 && !reference.is_empty() {
            let qref = model.reference_configuration(reference).unwrap();
            assert_close_vec("reference configuration", &qref, &q, TOL);
        }
        let m = dynamics::crba(&model, &mut data, &q).unwrap().clone();
        assert_close(
            &format!("{robot} case {k}: M"),
            &m,
            &matrix(&case["mass_matrix"]),
            TOL,
        );
        let nle = dynamics::nonlinear_effects(&model, &mut data, &q, &v)
            .unwrap()
            .clone();
        assert_close_vec(
            &format!("{robot} case {k}: nle"),
            &nle,
            &vector(&case["nonlinear_effects"]),
            TOL,
        );
        let g = dynamics::generalized_gravity(&model, &mut data, &q)
            .unwrap()
            .clone();
        assert_close_vec(
            &format!("{robot} case {k}: gravity"),
            &g,
            &vector(&case["generalized_gravity"]),
            TOL,
        );
        let ddq = dynamics::aba(&model, &mut data, &q, &v, &tau, None)
            .unwrap()
            .clone();
        assert_close_vec(
            &format!("{robot} case {k}: aba"),
            &ddq,
            &vector(&case["aba_acceleration"]),
            TOL,
        );
        let ke = dynamics::kinetic_energy(&model, &mut data, &q, &v).unwrap();
        assert_close_scalar(
            "kinetic energy",
            ke,
            case["kinetic_energy"].as_f64().unwrap(),
            TOL,
        );
        let pe = dynamics::potential_energy(&model, &mut data, &q).unwrap();
        assert_close_scalar(
            "potential energy",
            pe,
            case["potential_energy"].as_f64().unwrap(),
            TOL,
        );

        dynamics::forward_kinematics(&model, &mut data, &q).unwrap();
        let frames = case["frames"].as_object().unwrap();
        assert!(!frames.is_empty());
        for (name, f) in frames {
            let id = model.frame_id(name).unwrap();
            let placement = data.omf[id];
            let pos = DVector::from_column_slice(placement.translation.vector.as_slice());
            assert_close_vec(
                &format!("{robot} case {k}: {name} position"),
                &pos,
                &vector(&f["position"]),
                TOL,
            );
            let rot = placement.rotation.to_rotation_matrix().into_inner();
            let rot = DMatrix::from_column_slice(3, 3, rot.as_slice());
            assert_close(
                &format!("{robot} case {k}: {name} rotation"),
                &rot,
                &matrix(&f["rotation"]),
                TOL,
            );
            let jac = dynamics::frame_jacobian(&model, &data, id).unwrap();
            let jac = DMatrix::from_column_slice(3, model.nv(), jac.as_slice());
            assert_close(
                &format!("{robot} case {k}: {name} jacobian"),
                &jac,
                &matrix(&f["jacobian_linear_world_aligned"]),
                TOL,
            );
        }
        if let Some(delassus) = case.get("delassus") {
            let names = delassus["frames"].as_array().unwrap();
            let mut j = DMatrix::zeros(3 * names.len(), model.nv());
            for (n, name) in names.iter().enumerate() {
                let id = model.frame_id(name.as_str().unwrap()).unwrap();
                let jf = dynamics::frame_jacobian(&model, &data, id).unwrap();
                j.rows_mut(3 * n, 3).copy_from(&jf);
            }
            let chol = MassCholesky::new(&m).unwrap();
            let minv_jt = chol.solve_matrix(&j.transpose()).unwrap();
            let g = &j * minv_jt;
            assert_close(
                &format!("{robot} case {k}: Delassus"),
                &g,
                &matrix(&delassus["G"]),
                TOL,
            );
            assert_close(
                &format!("{robot} case {k}: Delassus through the tree"),
                &tree_delassus(&model, &data, &m, names),
                &matrix(&delassus["G"]),
                TOL,
            );
        }
    }
}

/// `G = J M⁻¹ Jᵀ` of the frames' origins (world axes) by the simulator's assembly: LTDL
/// factor of `M`, Jacobian rows written on each frame's chain, `G = Yᵀ D⁻¹ Y`.
fn tree_delassus(model: &Model, data: &Data, m: &DMatrix<f64>, names: &[Value]) -> DMatrix<f64> {
    let mut factor = MassLtdl::new(model);
    factor.factorize(m).unwrap();
    let mut assembly = ContactAssembly::new(model.nv());
    assembly.begin(names.len());
    for name in names {
        let id = model.frame_id(name.as_str().unwrap()).unwrap();
        let joint = model.frames[id].parent_joint;
        let point = data.frame_placement(id).unwrap().translation.vector;
        let identity = Matrix3::identity();
        let j = assembly.contact_rows_mut();
        dynamics::add_point_jacobian_rows(model, data, joint, &point, &identity, 1.0, j, 0)
            .unwrap();
        let top = &model.joints[joint];
        assembly.push_support(&factor, &[Some(top.idx_v + top.nv() - 1)]);
    }
    let resting = ContactState {
        signed_distance: 0.0,
        normal_velocity: 0.0,
        was_inactive: false,
        mu: 0.5,
    };
    let states = vec![resting; names.len()];
    let v_free = DVector::zeros(model.nv());
    let params = StepParameters::default();
    let problem = assembly
        .assemble(&factor, &v_free, &states, &params, false)
        .unwrap();
    problem.delassus().clone()
}

#[test]
fn solo12_matches_pinocchio() {
    check_robot("solo12");
}

#[test]
fn talos_matches_pinocchio() {
    check_robot("talos");
}

#[test]
fn allegro_matches_pinocchio() {
    check_robot("allegro");
}

#[test]
fn mixed_joint_types_match_pinocchio() {
    check_robot("mixed");
}
