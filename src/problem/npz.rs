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

use std::io::{BufReader, Cursor, Read, Write};
use std::path::Path;

use nalgebra::{DMatrix, DVector};
use zip::read::ZipFile;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::fclib::MAX_DENSE_DIM;
use super::file::{ProblemFile, ProblemFileError};
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

/// Largest `.npy` header read (bytes); numpy writes 64 or 128.
const MAX_NPY_HEADER: usize = 64 << 10;

/// deflate's largest expansion, about 1032 bytes out per byte in: a deflated entry that
/// declares more is refused before it is inflated.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// How many values an array may declare: `G` is at most [`MAX_DENSE_DIM`] square, every
/// other array a vector of at most [`MAX_DENSE_DIM`] values.
fn max_values(key: &str) -> (u64, &'static str) {
    let dim = MAX_DENSE_DIM as u64;
    match key {
        "G" => (dim * dim, "values (15000 x 15000)"),
        _ => (dim, "values"),
    }
}

/// Reads and validates a `.npz` problem file. The archive is read entry by entry (never
/// whole); each array's size is checked from its `.npy` header against [`max_values`]
/// and against the entry's declared sizes before its data are read, and no more than the
/// header declares is ever inflated.
pub fn read_npz(path: &Path) -> Result<ProblemFile, ProblemFileError> {
    let file = std::fs::File::open(path).map_err(|error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let bad = |entry: &str, message: String| ProblemFileError::Dataset {
        path: path.to_path_buf(),
        dataset: entry.to_string(),
        message,
    };
    let mut archive = ZipArchive::new(BufReader::new(file))
        .map_err(|e| bad("/", format!("not a zip archive: {e}")))?;
    let mut array = |key: &str| -> Result<Option<NpyArray>, ProblemFileError> {
        let name = format!("{key}.npy");
        let entry = match archive.by_name(&name) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(bad(&name, e.to_string())),
        };
        read_entry(path, &name, key, entry).map(Some)
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

/// A problem as the bytes `np.savez` would write (`G`, `g`, `mus`, and `R`, `lambda` when
/// present; `path` names the file in errors).
pub fn npz_bytes(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
) -> Result<Vec<u8>, ProblemFileError> {
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
    Ok(zip.finish().map_err(|e| fail(e.to_string()))?.into_inner())
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

/// What an `.npy` header declares.
#[derive(Debug, Clone)]
struct NpyHeader {
    shape: Vec<usize>,
    fortran: bool,
    width: usize,
    decode: Decoder,
}

impl NpyHeader {
    /// Number of values (the product of the dimensions, checked).
    fn count(&self) -> Result<usize, String> {
        self.shape
            .iter()
            .try_fold(1usize, |acc, d| acc.checked_mul(*d))
            .ok_or_else(|| format!("shape {:?} is too large", self.shape))
    }

    /// Bytes of data the header declares.
    fn data_bytes(&self) -> Result<usize, String> {
        self.count()?
            .checked_mul(self.width)
            .ok_or_else(|| format!("shape {:?} is too large", self.shape))
    }
}

/// Length of the fixed part before the header text (magic, version, header length) and
/// the header text's length, from the first 12 bytes of an `.npy` file.
fn npy_preamble(bytes: &[u8]) -> Result<(usize, usize), String> {
    if !bytes.starts_with(NPY_MAGIC) || bytes.len() < 10 {
        return Err("not an .npy array (bad magic)".into());
    }
    let major = bytes[6];
    match major {
        1 => Ok((10, u16::from_le_bytes([bytes[8], bytes[9]]) as usize)),
        2 | 3 if bytes.len() >= 12 => Ok((
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        )),
        _ => Err(format!("unsupported .npy version {major}")),
    }
}

/// Decodes an `.npy` header text.
fn parse_npy_header(header: &[u8]) -> Result<NpyHeader, String> {
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = header_string(header, "descr").ok_or("header has no 'descr'")?;
    let fortran = header_value(header, "fortran_order")
        .ok_or("header has no 'fortran_order'")?
        .starts_with("True");
    let shape = header_shape(header)?;
    let (width, decode) = element_decoder(&descr)?;
    let header = NpyHeader {
        shape,
        fortran,
        width,
        decode,
    };
    header.data_bytes()?;
    Ok(header)
}

/// The values of an array whose header is `header`, from its data bytes (at least
/// `header.data_bytes()` of them).
fn decode_npy(header: NpyHeader, body: &[u8]) -> Result<NpyArray, String> {
    let needed = header.data_bytes()?;
    if body.len() < needed {
        return Err(format!(
            "truncated data: shape {:?} needs {needed} bytes, has {}",
            header.shape,
            body.len()
        ));
    }
    let values: Vec<f64> = body[..needed]
        .chunks_exact(header.width)
        .map(header.decode)
        .collect();
    let data = match (header.fortran, header.shape.as_slice()) {
        (true, [rows, cols]) => (0..rows * cols)
            .map(|k| values[(k % cols) * rows + k / cols])
            .collect(),
        (true, s) if s.len() > 2 => return Err("Fortran-ordered arrays of rank > 2".into()),
        _ => values,
    };
    Ok(NpyArray {
        shape: header.shape,
        data,
    })
}

/// Decodes an `.npy` file into `f64` values in C order.
pub fn parse_npy(bytes: &[u8]) -> Result<NpyArray, String> {
    let (start, header_len) = npy_preamble(bytes)?;
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated .npy header")?;
    let header = parse_npy_header(header)?;
    decode_npy(header, &bytes[start + header_len..])
}

/// Reads one array entry of an archive: its header, then exactly the data it declares,
/// after checking the declared shape against [`max_values`] and the entry's sizes.
fn read_entry(
    path: &Path,
    name: &str,
    key: &str,
    entry: ZipFile<'_, BufReader<std::fs::File>>,
) -> Result<NpyArray, ProblemFileError> {
    let bad = |message: String| ProblemFileError::Dataset {
        path: path.to_path_buf(),
        dataset: name.to_string(),
        message,
    };
    let (declared, stored) = (entry.size(), entry.compressed_size());
    let inflates_to = match entry.compression() {
        CompressionMethod::Stored => stored,
        CompressionMethod::Deflated => stored.saturating_mul(MAX_DEFLATE_RATIO),
        other => return Err(bad(format!("unsupported compression {other}"))),
    };
    if declared > inflates_to {
        return Err(bad(format!(
            "the entry declares {declared} bytes, but its {stored} stored bytes hold at most {inflates_to}"
        )));
    }
    let mut reader = entry.take(declared);
    let mut preamble = vec![0u8; 10];
    reader
        .read_exact(&mut preamble)
        .map_err(|_| bad("not an .npy array (bad magic)".into()))?;
    if preamble.get(6).is_some_and(|&major| major >= 2) {
        let mut extra = [0u8; 2];
        reader
            .read_exact(&mut extra)
            .map_err(|_| bad("truncated .npy header".into()))?;
        preamble.extend(extra);
    }
    let (_, header_len) = npy_preamble(&preamble).map_err(bad)?;
    if header_len > MAX_NPY_HEADER {
        return Err(ProblemFileError::TooLarge {
            path: path.to_path_buf(),
            what: format!("{name}: the .npy header ({header_len} bytes)"),
            limit: MAX_NPY_HEADER as u64,
            unit: "bytes",
        });
    }
    let mut header = Vec::with_capacity(header_len);
    (&mut reader)
        .take(header_len as u64)
        .read_to_end(&mut header)
        .map_err(|e| bad(e.to_string()))?;
    if header.len() < header_len {
        return Err(bad("truncated .npy header".into()));
    }
    let header = parse_npy_header(&header).map_err(bad)?;
    let count = header.count().map_err(bad)? as u64;
    let (limit, unit) = max_values(key);
    if count > limit {
        return Err(ProblemFileError::TooLarge {
            path: path.to_path_buf(),
            what: format!("{name}: shape {:?} ({count} values)", header.shape),
            limit,
            unit,
        });
    }
    let needed = header.data_bytes().map_err(bad)?;
    let available = declared.saturating_sub((preamble.len() + header_len) as u64);
    if needed as u64 > available {
        return Err(bad(format!(
            "truncated data: shape {:?} needs {needed} bytes, the entry declares {available}",
            header.shape
        )));
    }
    let mut body = Vec::with_capacity(needed);
    reader
        .take(needed as u64)
        .read_to_end(&mut body)
        .map_err(|e| bad(e.to_string()))?;
    decode_npy(header, &body).map_err(bad)
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
