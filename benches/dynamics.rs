//! Rigid-body algorithms on Solo-12 and Talos: forward kinematics, CRBA, RNEA, ABA and the
//! feet Jacobians, on 16 seeded random states cycled through (robots loaded, states drawn
//! and data allocated outside the timed closures). Ids: `dynamics/<algorithm>/<robot>`.

use std::hint::black_box;

use contactbench::dynamics::{self, Data};
use contactbench::model::robots::load_robot;
use contactbench::model::{JointKind, Model};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::DVector;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct State {
    q: DVector<f64>,
    v: DVector<f64>,
    a: DVector<f64>,
    tau: DVector<f64>,
}

fn random_states(model: &Model, n: usize) -> Vec<State> {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let vector = |n: usize, rng: &mut ChaCha8Rng| {
        DVector::from_iterator(n, (0..n).map(|_| rng.random_range(-1.0..1.0)))
    };
    (0..n)
        .map(|_| {
            let mut q = model.neutral_configuration();
            for joint in &model.joints {
                let i = joint.idx_q;
                match joint.kind {
                    JointKind::FreeFlyer => {
                        let quat = vector(4, &mut rng).normalize();
                        q.rows_mut(i + 3, 4).copy_from(&quat);
                    }
                    JointKind::Revolute { .. } | JointKind::Prismatic { .. } => {
                        q[i] = rng.random_range(-1.0..1.0);
                    }
                    _ => {}
                }
            }
            State {
                q,
                v: vector(model.nv(), &mut rng),
                a: vector(model.nv(), &mut rng),
                tau: vector(model.nv(), &mut rng),
            }
        })
        .collect()
}

fn bench_robot(c: &mut Criterion, robot: &str, feet: &[&str]) {
    let model = load_robot(robot).expect("robot loads");
    let states = random_states(&model, 16);
    let feet: Vec<usize> = feet
        .iter()
        .map(|f| model.frame_id(f).expect("frame"))
        .collect();
    let mut data = Data::new(&model);
    let mut k = 0usize;
    let mut next = || {
        k = (k + 1) % states.len();
        &states[k]
    };
    c.bench_function(&format!("dynamics/forward_kinematics/{robot}"), |b| {
        b.iter(|| {
            let s = next();
            dynamics::forward_kinematics(&model, &mut data, black_box(&s.q)).expect("fk");
        })
    });
    c.bench_function(&format!("dynamics/crba/{robot}"), |b| {
        b.iter(|| {
            let s = next();
            black_box(dynamics::crba(&model, &mut data, black_box(&s.q)).expect("crba"));
        })
    });
    c.bench_function(&format!("dynamics/rnea/{robot}"), |b| {
        b.iter(|| {
            let s = next();
            black_box(dynamics::rnea(&model, &mut data, &s.q, &s.v, &s.a, None).expect("rnea"));
        })
    });
    c.bench_function(&format!("dynamics/aba/{robot}"), |b| {
        b.iter(|| {
            let s = next();
            black_box(dynamics::aba(&model, &mut data, &s.q, &s.v, &s.tau, None).expect("aba"));
        })
    });
    c.bench_function(&format!("dynamics/feet_jacobians/{robot}"), |b| {
        b.iter(|| {
            let s = next();
            dynamics::forward_kinematics(&model, &mut data, &s.q).expect("fk");
            for &f in &feet {
                black_box(dynamics::frame_jacobian(&model, &data, f).expect("jacobian"));
            }
        })
    });
}

fn dynamics_benches(c: &mut Criterion) {
    bench_robot(c, "solo12", &["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]);
    bench_robot(c, "talos", &["left_sole_link", "right_sole_link"]);
}

criterion_group! {
    name = benches;
    // No plots: the sandbox has no fonts for criterion's plotters backend.
    config = Criterion::default().without_plots();
    targets = dynamics_benches
}
criterion_main!(benches);
