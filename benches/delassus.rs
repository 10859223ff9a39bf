//! The Delassus operator against the dense `G` on piles of cubes ([`box_pile`], four
//! contacts per cube): `apply/<dense|factorized>/<n>` times `G λ`,
//! `shifted_solve/<dense|factorized>/<n>` times the factorization of `G + σ I` and one
//! solve (what an ADMM pays when ρ changes), for `n` from 16 to 1000 contacts. The dense
//! `G` is formed once, outside the timings.

use std::hint::black_box;
use std::time::Duration;

use contactbench::problem::generators::box_pile;
use contactbench::problem::Delassus;
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::DVector;

/// (columns, height) of the piles: 4 · columns² · height contacts.
const PILES: [(usize, usize); 4] = [(2, 1), (3, 3), (4, 4), (5, 10)];

fn bench_delassus(c: &mut Criterion) {
    let mut group = c.benchmark_group("delassus");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (columns, height) in PILES {
        let pile = match box_pile(columns, height, 0.05, 0.4, 1e-3) {
            Ok(p) => p,
            Err(err) => {
                eprintln!("cannot build the pile {columns}x{columns}x{height}: {err}");
                return;
            }
        };
        let n = pile.num_contacts();
        let dense = Delassus::Dense(pile.delassus().clone());
        let factorized = pile.operator().clone();
        let x = DVector::from_fn(pile.dim(), |k, _| ((k % 7) as f64 - 3.0) * 0.1);
        let shift = DVector::from_element(pile.dim(), 0.01 * dense.diagonal_block(0).amax());
        for (name, op) in [("dense", &dense), ("factorized", &factorized)] {
            group.bench_function(format!("apply/{name}/{n}"), |b| {
                b.iter(|| black_box(op.apply(black_box(&x))))
            });
            group.bench_function(format!("shifted_solve/{name}/{n}"), |b| {
                b.iter(|| match op.shifted(black_box(&shift)) {
                    Ok(factor) => black_box(factor.solve(&x)),
                    Err(_) => black_box(x.clone()),
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_delassus);
criterion_main!(benches);
