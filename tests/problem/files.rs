//! Problem files from the field: FCLIB (HDF5, local and global), ContactBench's `.npz` and
//! our JSON. Fixtures in `tests/data/fclib/` (README there: provenance).

use std::path::{Path, PathBuf};

use contactbench::problem::fclib::{read_fclib, FclibProblem};
use contactbench::problem::generators::random_problem;
use contactbench::problem::io::{read_problem, write_problem, ProblemFileError, ProblemFormat};
use contactbench::problem::npz::parse_npy;
use nalgebra::{DMatrix, DVector};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fclib")
        .join(name)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-problem-files-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

fn load(name: &str) -> FclibProblem {
    read_fclib(&data(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn dense(p: &FclibProblem) -> DMatrix<f64> {
    nalgebra_sparse::convert::serial::convert_csc_dense(&p.w)
}

/// `max |W − Wᵀ| / max |W|` on the data as read, before any validation.
fn asymmetry(w: &DMatrix<f64>) -> f64 {
    (w - w.transpose()).amax() / w.amax()
}

fn relative_gap(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// The four shared FCLIB files (all four are global problems, `/fclib_global`: M, H, f, w,
/// mu) reduce to local problems of the right size, symmetric to round-off, with one entry
/// of W and q computed independently. FCLIB index 0 (normal of contact 0) is our index 2.
#[test]
fn shared_fclib_files_load() {
    // (file, contacts, W[0,0] and q[0] in FCLIB's order, measured asymmetry bound)
    // Box_Stacks and Spheres have a diagonal M: W[0,0] = Σ_k H[k,0]² / M[k,k] by hand.
    // Box_Stacks: H[:,0] = (−2.3e-14, −4.0e-14, 1, 0.19791197980198, −9.514e-3, 2.0e-8),
    // M diag = (1, 1, 1, 0.180266659456 ×3): 1 + 0.197912²/0.180267 + 0.009514²/0.180267
    // = 1.2177866327625820. Spheres: H[2,0] = 1, M[2,2] = 1, the rest ≤ 1e-14: 1.0.
    // CubeH8 and LMGC (M stored as its upper triangle, mirrored) from
    // `python tools/fclib_fixtures.py` (numpy dense solve), q[0] likewise.
    let cases = [
        (
            "Box_Stacks-i0122-82-5.hdf5",
            82,
            1.217786632762582,
            -0.0009806650000000008,
            2.5e-15,
        ),
        (
            "Spheres-i099-356-679.hdf5",
            356,
            1.0,
            -0.004903324999953984,
            6.5e-16,
        ),
        (
            "CubeH8.hdf5",
            1,
            0.020556848571340006,
            -4.670079103640413e-05,
            1e-15,
        ),
        (
            "LMGC_GlobalFrictionContactProblem00046.hdf5",
            9,
            0.02055684857230968,
            -0.04638540696580032,
            1e-15,
        ),
    ];
    for (name, contacts, w00, q0, max_asymmetry) in cases {
        let raw = load(name);
        assert_eq!(raw.w.nrows(), 3 * contacts, "{name}");
        assert_eq!(raw.w.ncols(), 3 * contacts, "{name}");
        assert_eq!(raw.q.len(), 3 * contacts, "{name}");
        assert_eq!(raw.mu.len(), contacts, "{name}");
        let w = dense(&raw);
        let measured = asymmetry(&w);
        assert!(measured <= max_asymmetry, "{name}: asymmetry {measured:e}");
        assert!(
            relative_gap(w[(2, 2)], w00) < 1e-12,
            "{name}: {} vs {w00}",
            w[(2, 2)]
        );
        assert!(
            relative_gap(raw.q[2], q0) < 1e-12,
            "{name}: {} vs {q0}",
            raw.q[2]
        );
        assert_eq!(raw.reference, None, "{name}: stored solutions are zeros");
        let file = read_problem(&data(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.problem.num_contacts(), contacts, "{name}");
        assert!(!file.notes.is_empty(), "{name}: the reduction is reported");
    }
}

#[test]
fn a_mass_matrix_stored_as_one_triangle_is_mirrored() {
    for name in ["CubeH8.hdf5", "LMGC_GlobalFrictionContactProblem00046.hdf5"] {
        let raw = load(name);
        assert!(
            raw.notes.iter().any(|n| n.contains("mirrored")),
            "{name}: {:?}",
            raw.notes
        );
    }
    let raw = load("Box_Stacks-i0122-82-5.hdf5");
    assert!(!raw.notes.iter().any(|n| n.contains("mirrored")));
}

/// A local problem written by the HDF5 C library (h5py) in compressed rows, compressed
/// columns and triplets reads to the same W, equal to numpy's reduction of the LMGC
/// problem and to ours.
#[test]
fn local_problems_in_every_storage_agree() {
    let Ok(bytes) = std::fs::read(data("local_lmgc46_expected.npy")) else {
        panic!("fixture")
    };
    let expected = parse_npy(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(expected.shape, vec![28, 27]);
    let reduced = dense(&load("LMGC_GlobalFrictionContactProblem00046.hdf5"));
    for name in [
        "local_lmgc46_csr.hdf5",
        "local_lmgc46_csc.hdf5",
        "local_lmgc46_triplet.hdf5",
    ] {
        let raw = load(name);
        let w = dense(&raw);
        assert_eq!(w.nrows(), 27);
        // Stored exactly: numpy's W and q, permuted to [t1, t2, n].
        let fclib = |k: usize| 3 * (k / 3) + [1, 2, 0][k % 3];
        for i in 0..27 {
            for j in 0..27 {
                assert_eq!(w[(i, j)], expected.data[fclib(i) * 27 + fclib(j)], "{name}");
            }
            assert_eq!(raw.q[i], expected.data[27 * 27 + fclib(i)], "{name}");
        }
        let gap = (&w - &reduced).amax() / reduced.amax();
        assert!(gap < 1e-12, "{name}: ours vs numpy's reduction {gap:e}");
    }
}

#[test]
fn unsupported_variants_name_the_dataset() {
    for (name, what) in [
        ("unsupported_2d.hdf5", "2D"),
        ("unsupported_rolling.hdf5", "rolling friction"),
    ] {
        match read_problem(&data(name)) {
            Err(ProblemFileError::Unsupported {
                path,
                dataset,
                what: text,
            }) => {
                assert_eq!(path, data(name));
                assert_eq!(dataset, "fclib_local/spacedim");
                assert!(text.contains(what), "{text}");
            }
            other => panic!("{name}: expected Unsupported, got {other:?}"),
        }
    }
}

#[test]
fn truncated_hdf5_is_an_error_naming_the_file() {
    let dir = temp_dir("truncated");
    let Ok(bytes) = std::fs::read(data("CubeH8.hdf5")) else {
        panic!("fixture")
    };
    for cut in [4, 100, bytes.len() / 2, bytes.len() - 200] {
        let path = dir.join(format!("cut{cut}.hdf5"));
        std::fs::write(&path, &bytes[..cut]).unwrap_or_else(|e| panic!("{e}"));
        match read_problem(&path) {
            Err(ProblemFileError::Hdf5 { path: p, .. }) => assert_eq!(p, path),
            other => panic!("cut at {cut}: expected an HDF5 error, got {other:?}"),
        }
    }
}

/// Found by `tests/input/fuzz.rs` (25,000 cases): a superblock whose base and end
/// addresses overflow a u64 made the truncation check panic.
#[test]
fn overflowing_superblock_addresses_are_an_error() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/regressions/fclib_superblock_overflow.hdf5");
    match read_problem(&path) {
        Err(ProblemFileError::Hdf5 {
            path: p, message, ..
        }) => {
            assert_eq!(p, path);
            assert!(message.contains("overflow"), "{message}");
        }
        other => panic!("expected an HDF5 error, got {other:?}"),
    }
}

/// Seeded byte corruption of the file's first 4 KiB (superblock, object headers, B-trees,
/// heaps): every read ends in a value or a typed error, never a panic.
#[test]
fn corrupted_hdf5_never_panics() {
    let dir = temp_dir("corrupted");
    let Ok(bytes) = std::fs::read(data("CubeH8.hdf5")) else {
        panic!("fixture")
    };
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let path = dir.join("corrupted.hdf5");
    let mut errors = 0;
    for _ in 0..200 {
        let mut b = bytes.clone();
        for _ in 0..3 {
            let at = (next() as usize) % 4096;
            b[at] = next() as u8;
        }
        std::fs::write(&path, &b).unwrap_or_else(|e| panic!("{e}"));
        if read_problem(&path).is_err() {
            errors += 1;
        }
    }
    // Measured: 89 of the 200 corrupted files are refused; the others changed bytes that
    // the reader does not use (padding, unused heap space) or only values.
    println!("{errors} of 200 corrupted files refused");
    assert!(errors >= 40, "{errors} of 200 corrupted files refused");
}

/// A dataset of the wrong shape, or a missing one, is named.
#[test]
fn wrong_or_missing_datasets_are_named() {
    use hdf5_pure::FileBuilder;
    let dir = temp_dir("shapes");
    let write = |name: &str, q_len: usize, with_mu: bool| {
        let mut b = FileBuilder::new();
        let mut local = b.create_group("fclib_local");
        local.create_dataset("spacedim").with_i32_data(&[3]);
        let mut w = local.create_group("W");
        for (key, v) in [("m", 3), ("n", 3), ("nz", -1), ("nzmax", 3)] {
            w.create_dataset(key).with_i32_data(&[v]);
        }
        w.create_dataset("p").with_i32_data(&[0, 1, 2, 3]);
        w.create_dataset("i").with_i32_data(&[0, 1, 2]);
        w.create_dataset("x").with_f64_data(&[1.0, 1.0, 1.0]);
        local.add_group(w.finish());
        let mut v = local.create_group("vectors");
        v.create_dataset("q").with_f64_data(&vec![0.0; q_len]);
        if with_mu {
            v.create_dataset("mu").with_f64_data(&[0.5]);
        }
        local.add_group(v.finish());
        b.add_group(local.finish());
        let path = dir.join(name);
        b.write(&path).unwrap_or_else(|e| panic!("{e}"));
        path
    };
    let good = write("good.hdf5", 3, true);
    assert!(read_problem(&good).is_ok());
    match read_problem(&write("short_q.hdf5", 2, true)) {
        Err(ProblemFileError::Dataset {
            dataset, message, ..
        }) => {
            assert_eq!(dataset, "fclib_local/vectors/q");
            assert!(message.contains("expected 3 values, got 2"), "{message}");
        }
        other => panic!("expected a Dataset error, got {other:?}"),
    }
    match read_problem(&write("no_mu.hdf5", 3, false)) {
        Err(ProblemFileError::Hdf5 { dataset, .. }) => {
            assert_eq!(dataset, "fclib_local/vectors/mu")
        }
        other => panic!("expected an HDF5 error, got {other:?}"),
    }
}

/// JSON → FCLIB → npz → JSON keeps G, g, μ and the reference λ bit for bit.
#[test]
fn json_fclib_npz_round_trip_is_exact() {
    let dir = temp_dir("round-trip");
    let problem = random_problem(11, 5, 12).unwrap_or_else(|e| panic!("{e}"));
    let lambda = DVector::from_fn(15, |i, _| (i as f64 * 0.37).sin() / 3.0);
    let json = dir.join("p.json");
    write_problem(&json, &problem, Some(&lambda), None).unwrap_or_else(|e| panic!("{e}"));
    let mut current = json.clone();
    for next in ["p.hdf5", "p.npz", "back.json"] {
        let file = read_problem(&current).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join(next);
        write_problem(&path, &file.problem, file.lambda.as_ref(), None)
            .unwrap_or_else(|e| panic!("{e}"));
        current = path;
    }
    assert_eq!(
        ProblemFormat::detect(&dir.join("p.hdf5")).ok(),
        Some(ProblemFormat::Fclib)
    );
    assert_eq!(
        ProblemFormat::detect(&dir.join("p.npz")).ok(),
        Some(ProblemFormat::Npz)
    );
    let back = read_problem(&current).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.problem.delassus(), problem.delassus());
    assert_eq!(back.problem.free_velocity(), problem.free_velocity());
    assert_eq!(back.problem.mu(), problem.mu());
    assert_eq!(back.lambda.as_ref(), Some(&lambda));
}

/// Content decides the format, not the extension: an FCLIB file named `.json` is read as
/// FCLIB.
#[test]
fn format_is_recognized_by_content() {
    let dir = temp_dir("content");
    let misnamed = dir.join("cube.json");
    std::fs::copy(data("CubeH8.hdf5"), &misnamed).unwrap_or_else(|e| panic!("{e}"));
    let file = read_problem(&misnamed).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.problem.num_contacts(), 1);
}

/// An `.npz` written by numpy (`np.savez(G=, g=, mus=)`, as ContactBench's examples do).
#[test]
fn contactbench_npz_loads() {
    let file = read_problem(&data("contactbench_style.npz")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.problem.num_contacts(), 2);
    assert_eq!(file.problem.mu().as_slice(), &[0.5, 0.8]);
    // G = J Jᵀ with J from numpy's default_rng(7): G[5,5] printed by the generator.
    assert_eq!(file.problem.delassus()[(5, 5)], 9.917048552023346);
}

#[test]
fn npz_missing_or_misshapen_arrays_are_named() {
    use contactbench::problem::npz::npy_bytes;
    use std::io::Write;
    let dir = temp_dir("npz");
    let write = |name: &str, arrays: &[(&str, Vec<usize>, Vec<f64>)]| {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (key, shape, values) in arrays {
            zip.start_file(
                format!("{key}.npy"),
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            zip.write_all(&npy_bytes(shape, values))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let bytes = zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        path
    };
    let eye = vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let missing = write("missing.npz", &[("G", vec![3, 3], eye.clone())]);
    match read_problem(&missing) {
        Err(ProblemFileError::Dataset { dataset, .. }) => assert_eq!(dataset, "g.npy"),
        other => panic!("expected a Dataset error, got {other:?}"),
    }
    let flat_g = write(
        "flat.npz",
        &[
            ("G", vec![9], eye),
            ("g", vec![3], vec![0.0; 3]),
            ("mus", vec![1], vec![0.5]),
        ],
    );
    match read_problem(&flat_g) {
        Err(ProblemFileError::Dataset { dataset, .. }) => assert_eq!(dataset, "G.npy"),
        other => panic!("expected a Dataset error, got {other:?}"),
    }
}

/// A malformed compressed structure and a mixed local problem (`V`, `R`) are named.
#[test]
fn malformed_pointers_and_mixed_problems_are_named() {
    use hdf5_pure::FileBuilder;
    let dir = temp_dir("malformed");
    let write = |name: &str, pointers: &[i32], rows: &[i32], mixed: bool| {
        let mut b = FileBuilder::new();
        let mut local = b.create_group("fclib_local");
        local.create_dataset("spacedim").with_i32_data(&[3]);
        let mut w = local.create_group("W");
        for (key, v) in [("m", 3), ("n", 3), ("nz", -1), ("nzmax", 3)] {
            w.create_dataset(key).with_i32_data(&[v]);
        }
        w.create_dataset("p").with_i32_data(pointers);
        w.create_dataset("i").with_i32_data(rows);
        w.create_dataset("x").with_f64_data(&[1.0, 1.0, 1.0]);
        local.add_group(w.finish());
        if mixed {
            let mut v = local.create_group("V");
            v.create_dataset("m").with_i32_data(&[3]);
            local.add_group(v.finish());
        }
        let mut v = local.create_group("vectors");
        v.create_dataset("q").with_f64_data(&[0.0; 3]);
        v.create_dataset("mu").with_f64_data(&[0.5]);
        local.add_group(v.finish());
        b.add_group(local.finish());
        let path = dir.join(name);
        b.write(&path).unwrap_or_else(|e| panic!("{e}"));
        path
    };
    let good = [0, 1, 2];
    for (name, pointers, rows, dataset) in [
        (
            "decreasing.hdf5",
            &[0, 2, 1, 3][..],
            &good[..],
            "fclib_local/W/p",
        ),
        (
            "long_p.hdf5",
            &[0, 1, 2, 3, 4][..],
            &good[..],
            "fclib_local/W/p",
        ),
        (
            "row_out_of_range.hdf5",
            &[0, 1, 2, 3][..],
            &[0, 1, 5][..],
            "fclib_local/W",
        ),
    ] {
        match read_problem(&write(name, pointers, rows, false)) {
            Err(ProblemFileError::Dataset { dataset: d, .. }) => assert_eq!(d, dataset, "{name}"),
            other => panic!("{name}: expected a Dataset error, got {other:?}"),
        }
    }
    assert!(read_problem(&write("good.hdf5", &[0, 1, 2, 3], &good, false)).is_ok());
    match read_problem(&write("mixed.hdf5", &[0, 1, 2, 3], &good, true)) {
        Err(ProblemFileError::Unsupported { dataset, .. }) => assert_eq!(dataset, "fclib_local/V"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
