//! The LTDL factorization `M = Lᵀ D L` through the kinematic tree (Featherstone 2008,
//! Table 6.3) against dense linear algebra on the three robots and the mixed-joint model
//! at seeded random configurations: the factors rebuild `M`, keep the branch-induced
//! sparsity, solve `M x = b` and give `diag(M⁻¹)` as the dense inverse does.

use crate::common::dynamics as dynamics_support;

use contactbench::dynamics::{self, Data, DynamicsError, MassLtdl};
use contactbench::model::{FreeBodiesBuilder, Model, RootJoint};
use dynamics_support::*;
use nalgebra::{DMatrix, Vector3};

const ROBOTS: [&str; 4] = ["solo12", "talos", "allegro", "mixed"];

fn load_robot(name: &str) -> Model {
    if name == "mixed" {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/model_mixed.urdf");
        Model::from_urdf(path, RootJoint::FreeFlyer).unwrap()
    } else {
        contactbench::model::robots::load_robot(name).unwrap()
    }
}

/// The mass matrices of `count` seeded random configurations.
fn mass_matrices(model: &Model, seed: u64, count: usize) -> Vec<DMatrix<f64>> {
    let mut r = rng(seed);
    let mut data = Data::new(model);
    (0..count)
        .map(|_| {
            let q = random_configuration(model, &mut r);
            dynamics::crba(model, &mut data, &q).unwrap().clone()
        })
        .collect()
}

/// True when dof `i` is `k` or one of its ancestors.
fn is_ancestor_or_self(factor: &MassLtdl, i: usize, k: usize) -> bool {
    let mut d = Some(k);
    while let Some(dof) = d {
        if dof == i {
            return true;
        }
        d = factor.parent(dof);
    }
    false
}

#[test]
fn factors_rebuild_the_mass_matrix_with_branch_induced_sparsity() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let nv = model.nv();
        let mut factor = MassLtdl::new(&model);
        for m in mass_matrices(&model, 3, 4) {
            factor.factorize(&m).unwrap();
            let l = DMatrix::from_fn(nv, nv, |k, i| {
                if i <= k && is_ancestor_or_self(&factor, i, k) {
                    factor.l(k, i)
                } else {
                    0.0
                }
            });
            let d = DMatrix::from_fn(nv, nv, |i, j| if i == j { factor.d(i) } else { 0.0 });
            assert_close(
                &format!("{robot}: LᵀDL"),
                &(l.transpose() * d * &l),
                &m,
                1e-13,
            );
            // M between dofs of different branches is zero, so is L (nothing filled in).
            for k in 0..nv {
                for i in 0..k {
                    if !is_ancestor_or_self(&factor, i, k) {
                        assert_eq!(m[(k, i)], 0.0, "{robot}: M[{k}, {i}] off the tree");
                    }
                }
            }
        }
    }
}

#[test]
fn solves_and_inverse_diagonal_match_the_dense_inverse() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let nv = model.nv();
        let mut factor = MassLtdl::new(&model);
        let mut r = rng(7);
        for m in mass_matrices(&model, 5, 4) {
            factor.factorize(&m).unwrap();
            let inverse = m.clone().try_inverse().unwrap();
            let b = random_vector(nv, 1.0, &mut r);
            let mut x = b.clone();
            factor.solve_in_place(x.as_mut_slice()).unwrap();
            assert_close_vec(&format!("{robot}: M⁻¹ b"), &x, &(&inverse * &b), 1e-11);
            let mut diagonal = vec![0.0; nv];
            factor.inverse_diagonal(&mut diagonal).unwrap();
            for (j, value) in diagonal.iter().enumerate() {
                assert_close_scalar(
                    &format!("{robot}: (M⁻¹)[{j}, {j}]"),
                    *value,
                    inverse[(j, j)],
                    1e-11,
                );
            }
        }
    }
}

#[test]
fn inverse_diagonal_on_some_dofs_writes_only_those() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let nv = model.nv();
        let mut factor = MassLtdl::new(&model);
        for m in mass_matrices(&model, 2, 5) {
            factor.factorize(&m).unwrap();
            let mut all = vec![0.0; nv];
            factor.inverse_diagonal(&mut all).unwrap();
            let dofs: Vec<usize> = (0..nv).filter(|j| j % 3 != 1).collect();
            let mut some = vec![-1.0; nv];
            factor.inverse_diagonal_on(&dofs, &mut some).unwrap();
            for j in 0..nv {
                let expected = if j % 3 != 1 { all[j] } else { -1.0 };
                assert_eq!(some[j], expected, "{robot}: entry {j}");
            }
            assert!(factor.inverse_diagonal_on(&[nv], &mut some).is_err());
        }
    }
}

#[test]
fn indefinite_and_wrongly_sized_inputs_are_refused() {
    let model = load_robot("solo12");
    let nv = model.nv();
    let mut factor = MassLtdl::new(&model);
    assert!(matches!(
        factor.factorize(&DMatrix::zeros(nv, nv)),
        Err(DynamicsError::NotPositiveDefinite(_))
    ));
    let mut nan = DMatrix::identity(nv, nv);
    nan[(3, 3)] = f64::NAN;
    assert!(matches!(
        factor.factorize(&nan),
        Err(DynamicsError::NotPositiveDefinite(_))
    ));
    assert!(matches!(
        factor.factorize(&DMatrix::identity(nv + 1, nv + 1)),
        Err(DynamicsError::WrongSize { .. })
    ));
    factor.factorize(&DMatrix::identity(nv, nv)).unwrap();
    let mut short = vec![1.0; nv - 1];
    assert!(matches!(
        factor.solve_in_place(&mut short),
        Err(DynamicsError::WrongSize { .. })
    ));
}

/// 40 boxes and spheres of various masses and sizes, each on its own free flyer.
fn free_bodies() -> Model {
    let mut builder = FreeBodiesBuilder::new("pile");
    for k in 0..40 {
        let (mass, size) = (0.2 + 0.3 * (k % 7) as f64, 0.02 + 0.01 * (k % 5) as f64);
        let name = format!("body{k}");
        let added = if k % 3 == 0 {
            builder.add_sphere(&name, mass, size)
        } else {
            builder.add_box(&name, mass, Vector3::new(size, 1.5 * size, 0.7 * size))
        };
        added.unwrap();
    }
    builder.build()
}

#[test]
fn a_world_of_free_bodies_holds_one_block_per_body_and_solves_as_the_dense_matrix() {
    let model = free_bodies();
    let nv = model.nv();
    let mut data = Data::new(&model);
    let mut factor = MassLtdl::new(&model);
    let mut r = rng(11);
    for _ in 0..3 {
        let q = random_configuration(&model, &mut r);
        let v = random_vector(nv, 1.0, &mut r);
        dynamics::factorized_mass_and_bias(&model, &mut data, &q, &v, None, &mut factor).unwrap();
        // The simulator's path holds no nv × nv matrix.
        assert_eq!(data.mass_matrix.len(), 0);
        let mut dense = Data::new(&model);
        dynamics::mass_matrix_and_bias(&model, &mut dense, &q, &v, None).unwrap();
        let m = dense.mass_matrix.clone();
        assert_eq!(m.shape(), (nv, nv));
        // Each body's six dofs are a chain from the world: the factor's 6 × 6 blocks are
        // M's, which is zero between bodies.
        for k in 0..nv {
            let parent = (k % 6 != 0).then(|| k - 1);
            assert_eq!(factor.parent(k), parent, "dof {k}");
            for i in 0..nv {
                if i / 6 != k / 6 {
                    assert_eq!(m[(k, i)], 0.0, "M[{k}, {i}]");
                }
            }
        }
        assert_eq!(data.tau, dense.tau, "bias");
        let b = random_vector(nv, 1.0, &mut r);
        let mut x = b.clone();
        factor.solve_in_place(x.as_mut_slice()).unwrap();
        let expected = m.clone().cholesky().unwrap().solve(&b);
        assert_close_vec("M⁻¹ b", &x, &expected, 1e-12);
        let mut diagonal = vec![0.0; nv];
        factor.inverse_diagonal(&mut diagonal).unwrap();
        let inverse = m.clone().cholesky().unwrap().inverse();
        for (j, value) in diagonal.iter().enumerate() {
            assert_close_scalar(&format!("(M⁻¹)[{j}, {j}]"), *value, inverse[(j, j)], 1e-12);
        }
        let kinetic = dynamics::kinetic_energy(&model, &mut data, &q, &v).unwrap();
        assert_close_scalar("½ vᵀ M v", kinetic, 0.5 * v.dot(&(&m * &v)), 1e-12);
    }
}
