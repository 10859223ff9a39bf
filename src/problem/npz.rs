//! numpy `.npz` problem files, as ContactBench's examples save them
//! (`np.savez(path, G=G, g=g, mus=mus)`): `G` (`3n × 3n`), `g` (`3n`, or `3n × 1`), `mus`
//! (`n`), per-contact order `[t1, t2, n]` (Pinocchio's, as ours). Optional arrays `R`
//! (`3n`, diagonal compliance) and `lambda` (`3n`, a reference answer) are ours; other
//! arrays are ignored.
//!
//! Each array is an `.npy` entry (format versions 1-3) of little- or big-endian `f8`, `f4`,
//! `i8` or `i4`, in C or Fortran order; the archive may be stored or deflated
//! (`np.savez_compressed`). The writer produces what `np.savez` does: stored `.npy`
//! version 1.0 entries of `<f8`.

use std::io::{Cursor, Read, Write};
use std::path::Path;

use nalgebra::{DMatrix, DVector};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::file::{write_atomically, ProblemFile, ProblemFileError};
use super::ContactProblem;

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// One decoded `.npy` array: its shape and its values in C (row-major) order.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    /// Dimensions (empty for a scalar).
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: Vec<f64>,
}

/// Reads and validates a `.npz` problem file.
pub fn read_npz(path: &Path) -> Result<ProblemFile, ProblemFileError> {
    let bytes = std::fs::read(path).map_err(|error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let bad = |entry: &str, message: String| ProblemFileError::Dataset {
        path: path.to_path_buf(),
        dataset: entry.to_string(),
        message,
    };
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| bad("/", format!("not a zip archive: {e}")))?;
    let mut array = |key: &str| -> Result<Option<NpyArray>, ProblemFileError> {
        let name = format!("{key}.npy");
        let mut entry = match archive.by_name(&name) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(bad(&name, e.to_string())),
        };
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .map_err(|e| bad(&name, e.to_string()))?;
        parse_npy(&content).map(Some).map_err(|m| bad(&name, m))
    };
    let missing = |key: &str| bad(&format!("{key}.npy"), "missing array".into());
    let g_matrix = array("G")?.ok_or_else(|| missing("G"))?;
    let g_vector = array("g")?.ok_or_else(|| missing("g"))?;
    let mus = array("mus")?.ok_or_else(|| missing("mus"))?;
    let compliance = array("R")?;
    let lambda = array("lambda")?;

    let delassus = match g_matrix.shape.as_slice() {
        [r, c] => DMatrix::from_row_slice(*r, *c, &g_matrix.data),
        other => {
            return Err(bad(
                "G.npy",
                format!("expected a 2-D array, shape {other:?}"),
            ))
        }
    };
    let vector = |name: &str, a: NpyArray| -> Result<DVector<f64>, ProblemFileError> {
        match a.shape.as_slice() {
            [] | [_] | [_, 1] | [1, _] => Ok(DVector::from_vec(a.data)),
            other => Err(bad(
                &format!("{name}.npy"),
                format!("expected a vector, shape {other:?}"),
            )),
        }
    };
    let invalid = |error| ProblemFileError::Invalid {
        path: path.to_path_buf(),
        error,
    };
    let problem = ContactProblem::new(
        delassus,
        vector("g", g_vector)?,
        vector("mus", mus)?,
        compliance.map(|r| vector("R", r)).transpose()?,
    )
    .map_err(invalid)?;
    let lambda = lambda.map(|l| vector("lambda", l)).transpose()?;
    if let Some(l) = &lambda {
        problem.check_lambda(l).map_err(invalid)?;
    }
    Ok(ProblemFile {
        problem,
        lambda,
        solver: None,
        notes: Vec::new(),
    })
}

/// Writes a problem as `np.savez` would (`G`, `g`, `mus`, and `R`, `lambda` when present).
pub fn write_npz(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
) -> Result<(), ProblemFileError> {
    let g = problem.delassus();
    let row_major: Vec<f64> = (0..g.nrows())
        .flat_map(|i| g.row(i).iter().copied().collect::<Vec<_>>())
        .collect();
    let mut arrays = vec![
        ("G", vec![g.nrows(), g.ncols()], row_major),
        (
            "g",
            vec![problem.dim()],
            problem.free_velocity().as_slice().to_vec(),
        ),
        (
            "mus",
            vec![problem.num_contacts()],
            problem.mu().as_slice().to_vec(),
        ),
    ];
    if let Some(r) = problem.compliance() {
        arrays.push(("R", vec![r.len()], r.as_slice().to_vec()));
    }
    if let Some(l) = lambda {
        problem
            .check_lambda(l)
            .map_err(|error| ProblemFileError::Invalid {
                path: path.to_path_buf(),
                error,
            })?;
        arrays.push(("lambda", vec![l.len()], l.as_slice().to_vec()));
    }
    let fail = |message: String| ProblemFileError::Serialize {
        path: path.to_path_buf(),
        message,
    };
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    for (name, shape, data) in arrays {
        zip.start_file(format!("{name}.npy"), options)
            .map_err(|e| fail(e.to_string()))?;
        zip.write_all(&npy_bytes(&shape, &data))
            .map_err(|e| fail(e.to_string()))?;
    }
    let bytes = zip.finish().map_err(|e| fail(e.to_string()))?.into_inner();
    write_atomically(path, &bytes)
}

/// An `.npy` version 1.0 file of `<f8` values in C order (header padded to 64 bytes).
pub fn npy_bytes(shape: &[usize], data: &[f64]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = NPY_MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(NPY_MAGIC.len() + 4 + header.len() + 8 * data.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Decodes an `.npy` file into `f64` values in C order.
pub fn parse_npy(bytes: &[u8]) -> Result<NpyArray, String> {
    if !bytes.starts_with(NPY_MAGIC) || bytes.len() < 10 {
        return Err("not an .npy array (bad magic)".into());
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(format!("unsupported .npy version {major}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = header_string(header, "descr").ok_or("header has no 'descr'")?;
    let fortran = header_value(header, "fortran_order")
        .ok_or("header has no 'fortran_order'")?
        .starts_with("True");
    let shape = header_shape(header)?;
    let count = shape
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))
        .ok_or("shape too large")?;
    let (width, decode) = element_decoder(&descr)?;
    let body = &bytes[start + header_len..];
    let needed = count.checked_mul(width).ok_or("shape too large")?;
    if body.len() < needed {
        return Err(format!(
            "truncated data: shape {shape:?} needs {needed} bytes, has {}",
            body.len()
        ));
    }
    let values: Vec<f64> = body[..needed].chunks_exact(width).map(decode).collect();
    let data = match (fortran, shape.as_slice()) {
        (true, [rows, cols]) => (0..rows * cols)
            .map(|k| values[(k % cols) * rows + k / cols])
            .collect(),
        (true, s) if s.len() > 2 => return Err("Fortran-ordered arrays of rank > 2".into()),
        _ => values,
    };
    Ok(NpyArray { shape, data })
}

type Decoder = fn(&[u8]) -> f64;

/// Byte width and decoder of a numpy `descr` (`<f8`, `>f4`, `<i8`, `|i4`...).
fn element_decoder(descr: &str) -> Result<(usize, Decoder), String> {
    let decoder: (usize, Decoder) = match descr {
        "<f8" => (8, |b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        ">f8" => (8, |b| f64::from_be_bytes(b.try_into().unwrap_or([0; 8]))),
        "<f4" => (4, |b| {
            f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        ">f4" => (4, |b| {
            f32::from_be_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        "<i8" => (8, |b| {
            i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f64
        }),
        ">i8" => (8, |b| {
            i64::from_be_bytes(b.try_into().unwrap_or([0; 8])) as f64
        }),
        "<i4" => (4, |b| {
            i32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        ">i4" => (4, |b| {
            i32::from_be_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        other => return Err(format!("unsupported dtype '{other}' (f8, f4, i8, i4)")),
    };
    Ok(decoder)
}

/// The text after `'key':` in a header dict, trimmed.
fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))?;
    let rest = &header[at + key.len() + 2..];
    Some(rest.trim_start().strip_prefix(':')?.trim_start())
}

fn header_string(header: &str, key: &str) -> Option<String> {
    let value = header_value(header, key)?;
    let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = &value[1..];
    Some(inner[..inner.find(quote)?].to_string())
}

fn header_shape(header: &str) -> Result<Vec<usize>, String> {
    let value = header_value(header, "shape").ok_or("header has no 'shape'")?;
    let inner = value
        .strip_prefix('(')
        .and_then(|v| v.split_once(')'))
        .map(|(inner, _)| inner)
        .ok_or("shape is not a tuple")?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<usize>()
                .map_err(|_| format!("bad dimension '{t}'"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip_and_alignment() {
        let bytes = npy_bytes(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((bytes.len() - 48) % 64, 0, "header padded to 64 bytes");
        let Ok(a) = parse_npy(&bytes) else {
            panic!("own output parses")
        };
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn fortran_order_is_transposed_to_row_major() {
        let mut bytes = npy_bytes(&[2, 2], &[1.0, 3.0, 2.0, 4.0]);
        let Some(at) = bytes.windows(5).position(|w| w == b"False") else {
            panic!("header names fortran_order")
        };
        // Same length, so every byte position is kept.
        bytes[at..at + 5].copy_from_slice(b"True ");
        let a = parse_npy(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn truncated_npy_is_an_error() {
        let bytes = npy_bytes(&[4], &[1.0, 2.0, 3.0, 4.0]);
        let Err(e) = parse_npy(&bytes[..bytes.len() - 3]) else {
            panic!("truncated data must fail")
        };
        assert!(e.contains("truncated"), "{e}");
    }
}
