//! Writes the seeded random contact problem of `problem::generators::random_problem` as a
//! problem file, optionally with every normal row of `g` shifted (a "previous step"), so
//! that other tools (Pinocchio's solvers, numpy) can solve exactly the bench's problem.
//!
//! ```sh
//! cargo run --release --example random_problem -- 20 20 72 random20.json
//! cargo run --release --example random_problem -- 20 20 72 random20_prev.json 1e-3
//! ```
//! Arguments: seed, contacts, nv, output file, and an optional normal shift of `g` (m/s).

use std::path::PathBuf;

use anyhow::{bail, Context};
use contactbench::problem::generators::random_problem;
use contactbench::problem::io::write_problem;
use contactbench::problem::ContactProblem;
use nalgebra::DVector;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(4..=5).contains(&args.len()) {
        bail!("usage: random_problem SEED CONTACTS NV OUT.json [NORMAL_SHIFT]");
    }
    let seed: u64 = args[0].parse().context("SEED")?;
    let contacts: usize = args[1].parse().context("CONTACTS")?;
    let nv: usize = args[2].parse().context("NV")?;
    let out = PathBuf::from(&args[3]);
    let shift: f64 = match args.get(4) {
        Some(text) => text.parse().context("NORMAL_SHIFT")?,
        None => 0.0,
    };
    let problem = random_problem(seed, contacts, nv)?;
    let normal_shift = DVector::from_fn(problem.dim(), |i, _| if i % 3 == 2 { shift } else { 0.0 });
    let shifted = ContactProblem::new(
        problem.delassus().clone(),
        problem.free_velocity() + normal_shift,
        problem.mu().clone(),
        problem.compliance().cloned(),
    )?;
    write_problem(&out, &shifted, None, None)?;
    println!(
        "{}: {contacts} contacts, nv = {nv}, seed {seed}",
        out.display()
    );
    Ok(())
}
