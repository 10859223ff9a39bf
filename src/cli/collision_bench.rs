//! `contactbench collision-bench`: GJK++'s Fig. 7-10 / Tab. I protocol on random
//! ellipsoid pairs and on convex hulls of the robots' STL meshes: mean GJK iterations and
//! times of vanilla, Polyak and Nesterov (normalized) per signed-distance bucket.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use super::common::UsageError;
use super::out::outln;
use anyhow::Context;
use contactbench::collision::benchmark::{
    measure, place_at_distance, random_direction, random_ellipsoid, random_rotation,
    variant_settings, PlacedPair,
};
use contactbench::collision::{ConvexHull, GjkVariant, Shape};
use contactbench::model::robots;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Arguments of `contactbench collision-bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory searched recursively for `.stl` meshes (default: the robots of the
    /// manifest, fetched on first use); a folder reached twice (a symbolic link loop) is
    /// visited once, down to 64 levels.
    #[arg(long)]
    mesh_dir: Option<PathBuf>,
    /// Random pairs per dataset.
    #[arg(long, default_value_t = 2000)]
    pairs: usize,
    /// Timed repetitions of each query.
    #[arg(long, default_value_t = 20)]
    repeats: usize,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Boolean collision check (Alg. 2) instead of distance computation.
    #[arg(long)]
    collision: bool,
}

const BUCKETS: [(f64, f64); 4] = [(-0.01, 0.0), (0.0, 0.01), (0.01, 0.05), (0.05, 0.1)];
const VARIANTS: [GjkVariant; 3] = [
    GjkVariant::Vanilla,
    GjkVariant::Polyak,
    GjkVariant::Nesterov { normalize: true },
];

/// Most random pairs per dataset (each is kept in memory, about 300 bytes).
const MAX_PAIRS: usize = 1_000_000;

/// Most timed repetitions of one query.
const MAX_REPEATS: usize = 1_000_000;

/// Deepest folder nesting searched under `--mesh-dir`.
const MAX_DEPTH: usize = 64;

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for (flag, count, limit) in [
        ("--pairs", args.pairs, MAX_PAIRS),
        ("--repeats", args.repeats, MAX_REPEATS),
    ] {
        if count == 0 || count > limit {
            return Err(UsageError(format!("{flag} {count}: expected 1 to {limit}")).into());
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let ellipsoids = ellipsoid_pairs(&mut rng, args.pairs)?;
    print_table("ellipsoids (semi-axes 0.05-0.2 m)", &ellipsoids, &args);
    let dir = match &args.mesh_dir {
        Some(dir) => dir.clone(),
        None => robots::manifest()?.fetch(true)?,
    };
    anyhow::ensure!(dir.is_dir(), "mesh directory {} is missing", dir.display());
    let hulls = load_hulls(&dir)?;
    if hulls.len() < 2 {
        anyhow::bail!("fewer than two usable .stl meshes under {}", dir.display());
    }
    let vertices: Vec<usize> = hulls.iter().map(|h| h.vertices().len()).collect();
    let meshes = mesh_pairs(&mut rng, &hulls, args.pairs)?;
    let title = format!(
        "convex hulls of {} STL meshes under {} ({}-{} hull vertices)",
        hulls.len(),
        dir.display(),
        vertices.iter().min().unwrap_or(&0),
        vertices.iter().max().unwrap_or(&0)
    );
    print_table(&title, &meshes, &args);
    Ok(ExitCode::SUCCESS)
}

fn random_target(rng: &mut ChaCha8Rng) -> f64 {
    rng.random_range(BUCKETS[0].0..BUCKETS[BUCKETS.len() - 1].1)
}

fn ellipsoid_pairs(rng: &mut ChaCha8Rng, count: usize) -> anyhow::Result<Vec<PlacedPair>> {
    (0..count)
        .map(|_| {
            let a = random_ellipsoid(rng, 0.05, 0.2)?;
            let b = random_ellipsoid(rng, 0.05, 0.2)?;
            place_pair(rng, &a, &b)
        })
        .collect()
}

fn place_pair(rng: &mut ChaCha8Rng, a: &Shape, b: &Shape) -> anyhow::Result<PlacedPair> {
    let (ra, rb) = (random_rotation(rng), random_rotation(rng));
    let dir = random_direction(rng);
    let target = random_target(rng);
    Ok(place_at_distance(a, b, ra, rb, &dir, target)?)
}

fn mesh_pairs(
    rng: &mut ChaCha8Rng,
    hulls: &[Arc<ConvexHull>],
    count: usize,
) -> anyhow::Result<Vec<PlacedPair>> {
    (0..count)
        .map(|_| {
            let i = rng.random_range(0..hulls.len());
            let j = rng.random_range(0..hulls.len());
            let a = Shape::convex_hull(hulls[i].clone());
            let b = Shape::convex_hull(hulls[j].clone());
            place_pair(rng, &a, &b)
        })
        .collect()
}

/// The `.stl` files under `dir`, sorted, searched depth first. Symbolic links are
/// followed, but a folder already visited (by its canonical path) is not entered again,
/// so a link loop ends; deeper than [`MAX_DEPTH`] levels is an error.
fn stl_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut visited = HashSet::new();
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        let canonical =
            std::fs::canonicalize(&dir).with_context(|| format!("reading {}", dir.display()))?;
        if !visited.insert(canonical) {
            continue;
        }
        anyhow::ensure!(
            depth <= MAX_DEPTH,
            "{}: folders nested deeper than {MAX_DEPTH} levels",
            dir.display()
        );
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        // Reversed onto the stack: the first folder is searched first.
        for path in entries.into_iter().rev() {
            if path.is_dir() {
                pending.push((path, depth + 1));
            } else if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("stl"))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Hulls of every readable STL mesh with volume (unreadable or flat ones are reported
/// and skipped).
fn load_hulls(dir: &Path) -> anyhow::Result<Vec<Arc<ConvexHull>>> {
    let files = stl_files(dir)?;
    let mut hulls = Vec::new();
    for path in files {
        match ConvexHull::from_stl(&path, &nalgebra::Vector3::repeat(1.0)) {
            Ok(hull) if hull.is_solid() => hulls.push(Arc::new(hull)),
            Ok(_) => eprintln!("skipped flat mesh {}", path.display()),
            Err(err) => eprintln!("skipped {err}"),
        }
    }
    Ok(hulls)
}

fn print_table(title: &str, pairs: &[PlacedPair], args: &Args) {
    let query = if args.collision {
        "boolean collision"
    } else {
        "distance"
    };
    outln!("\n{query}, {title}, seed {}:\n", args.seed);
    outln!(
        "| signed distance (m) | pairs | iterations vanilla | polyak | nesterov | time vanilla (µs) | polyak | nesterov | not converged |"
    );
    outln!("|---|---|---|---|---|---|---|---|---|");
    for (lo, hi) in BUCKETS {
        let bucket: Vec<&PlacedPair> = pairs
            .iter()
            .filter(|p| p.distance >= lo && p.distance < hi)
            .collect();
        if bucket.is_empty() {
            continue;
        }
        let mut iterations = [0.0; 3];
        let mut micros = [0.0; 3];
        let mut failures = 0;
        for pair in &bucket {
            for (k, variant) in VARIANTS.iter().enumerate() {
                let settings = variant_settings(*variant, args.collision, pair);
                let m = measure(pair, &settings, args.repeats);
                iterations[k] += m.iterations as f64;
                micros[k] += m.micros;
                failures += usize::from(!m.converged);
            }
        }
        let n = bucket.len() as f64;
        outln!(
            "| [{lo}, {hi}) | {} | {:.2} | {:.2} | {:.2} | {:.3} | {:.3} | {:.3} | {failures} |",
            bucket.len(),
            iterations[0] / n,
            iterations[1] / n,
            iterations[2] / n,
            micros[0] / n,
            micros[1] / n,
            micros[2] / n,
        );
    }
}
