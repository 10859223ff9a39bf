//! FCLIB problem files (HDF5), the exchange format of Siconos, LMGC90 and the FCLIB
//! collections (Acary, Brémond, Huber 2018; the fclib library's `fclib.h`).
//!
//! A **local** problem (`/fclib_local`) is `û = W r + q + [μ‖u_T‖, 0, 0]`,
//! `K*_μ ∋ û ⊥ r ∈ K_μ`: our `(G, g, μ)` with `G = W`, `g = q`, `λ = r`, except for the
//! per-contact order, `[n, t1, t2]` in FCLIB and `[t1, t2, n]` here (a cyclic
//! permutation, so a right-handed frame stays right-handed).
//!
//! A **global** problem (`/fclib_global`) is `M v = H r + f`, `u = Hᵀ v + w`; eliminating
//! `v` gives the local problem `W = Hᵀ M⁻¹ H`, `q = Hᵀ M⁻¹ f + w` ([`reduce_global`]), with
//! a sparse Cholesky factorization of `M`.
//!
//! Matrices are CSparse structures (`nzmax`, `m`, `n`, `p`, `i`, `x`, `nz`): `nz = -1`
//! compressed columns, `nz = -2` compressed rows, `nz ≥ 0` a list of `nz` triplets (row
//! `i[k]`, column `p[k]`, the data's convention whatever `fclib.h`'s comment says;
//! duplicates add up). A mass matrix stored as one triangle only (LMGC90 writes the upper
//! one) is mirrored before the factorization: reduced naively it gives a `W` that is 16 %
//! asymmetric.
//!
//! Not supported, with an [`ProblemFileError::Unsupported`] naming the dataset: 2D
//! problems and rolling friction (`spacedim ≠ 3`, or Siconos's `/fclib_local_rolling`,
//! `/fclib_global_rolling` groups), mixed local problems (`V`, `R`, `s`),
//! global problems with equality constraints (`G`, `b`).
//!
//! The writer stores a local problem, `W = G + R` in compressed columns (exact zeros
//! left out), and the reference `λ` (if any) as `/solution/r` with its velocity as
//! `/solution/u`. The reader takes a non-zero `/solution/r` as the reference answer (an
//! all-zero one is what Siconos stores when it has none).

use std::path::Path;

use hdf5_pure::{File, FileBuilder, GroupBuilder};
use nalgebra::{DMatrix, DVector};
use nalgebra_sparse::factorization::CscCholesky;
use nalgebra_sparse::{CooMatrix, CscMatrix, CsrMatrix};

use super::file::{read_bounded, ProblemFileError};
use super::ContactProblem;

/// Largest problem dimension `3n` the reader turns into a dense `G` (1.8 GB of `f64`).
pub const MAX_DENSE_DIM: usize = 15_000;

/// Largest number of degrees of freedom of a global problem's `M` (its reduction holds
/// blocks of 64 dense columns of `M⁻¹H`: 512 MB at this size).
pub const MAX_GLOBAL_DOFS: usize = 1_000_000;

/// Largest number of stored entries of one sparse matrix (a dense `W` of
/// [`MAX_DENSE_DIM`] rows).
pub const MAX_ENTRIES: usize = MAX_DENSE_DIM * MAX_DENSE_DIM;

/// Largest FCLIB file read (bytes; it is read whole): a dense `W` of [`MAX_DENSE_DIM`]
/// rows takes 2.7 GB in compressed columns.
pub const MAX_FCLIB_BYTES: u64 = 4 << 30;

/// deflate's largest expansion, about 1032 bytes out per byte in: a dataset cannot hold
/// more values than this many per byte of its file (a chunked dataset that declares a
/// huge shape and stores no chunk would otherwise be filled with its fill value).
const MAX_EXPANSION: u64 = 1032;

/// Number of right-hand sides per sparse solve in the reduction of a global problem.
const REDUCTION_BLOCK: usize = 64;

/// A local problem read from an FCLIB file, in contactbench's order `[t1, t2, n]`, before
/// validation. `W` is kept sparse as stored.
#[derive(Debug, Clone)]
pub struct FclibProblem {
    /// The Delassus matrix `W` (`3n × 3n`).
    pub w: CscMatrix<f64>,
    /// The free velocity `q` (`3n`).
    pub q: DVector<f64>,
    /// Friction coefficients (`n`).
    pub mu: DVector<f64>,
    /// A non-zero stored solution `r`, if any.
    pub reference: Option<DVector<f64>>,
    /// What the reader did that a user should know (a mirrored `M`, a global reduction).
    pub notes: Vec<String>,
}

impl FclibProblem {
    /// The validated contact problem (`G` dense).
    pub fn to_problem(&self, path: &Path) -> Result<ContactProblem, ProblemFileError> {
        let dense: DMatrix<f64> = nalgebra_sparse::convert::serial::convert_csc_dense(&self.w);
        ContactProblem::new(dense, self.q.clone(), self.mu.clone(), None).map_err(|error| {
            ProblemFileError::Invalid {
                path: path.to_path_buf(),
                error,
            }
        })
    }
}

/// Reads a local or global FCLIB problem.
pub fn read_fclib(path: &Path) -> Result<FclibProblem, ProblemFileError> {
    let bytes = read_bounded(path, MAX_FCLIB_BYTES)?;
    let length = bytes.len() as u64;
    let file = Reader {
        path,
        length,
        file: File::from_bytes(bytes).map_err(|e| ProblemFileError::Hdf5 {
            path: path.to_path_buf(),
            dataset: "/".into(),
            message: e.to_string(),
        })?,
    };
    // As libhdf5: a file shorter than the end address its superblock records is truncated,
    // even when the missing bytes are ones this reader would not have used.
    let superblock = file.file.superblock();
    let expected = superblock
        .base_address
        .get()
        .checked_add(superblock.eof_address);
    match expected {
        Some(expected) if length >= expected => {}
        Some(expected) => {
            return Err(ProblemFileError::Hdf5 {
                path: path.to_path_buf(),
                dataset: "/".into(),
                message: format!("truncated file: {length} bytes, the superblock says {expected}"),
            });
        }
        None => {
            return Err(ProblemFileError::Hdf5 {
                path: path.to_path_buf(),
                dataset: "/".into(),
                message: "corrupt superblock: its base and end addresses overflow".into(),
            });
        }
    }
    let groups = file.root_groups()?;
    if let Some(rolling) = groups
        .iter()
        .find(|g| g.starts_with("fclib_") && g.contains("rolling"))
    {
        return Err(file.unsupported(rolling, "rolling friction"));
    }
    if groups.iter().any(|g| g == "fclib_local") {
        read_local(&file)
    } else if groups.iter().any(|g| g == "fclib_global") {
        read_global(&file)
    } else {
        Err(file.unsupported(
            "/",
            "neither /fclib_local nor /fclib_global: not an FCLIB problem",
        ))
    }
}

fn read_local(file: &Reader) -> Result<FclibProblem, ProblemFileError> {
    file.check_spacedim("fclib_local/spacedim")?;
    for mixed in ["fclib_local/V", "fclib_local/R"] {
        if file.has_group(mixed)? {
            return Err(file.unsupported(
                mixed,
                "mixed local problems (V, R, s: equality constraints) are not supported",
            ));
        }
    }
    let w = file.matrix("fclib_local/W", (MAX_DENSE_DIM, MAX_DENSE_DIM))?;
    let dim = contact_dim(file, "fclib_local/W", &w)?;
    let q = file.vector("fclib_local/vectors/q", dim)?;
    let mu = file.vector("fclib_local/vectors/mu", dim / 3)?;
    Ok(FclibProblem {
        w: fclib_to_ours_matrix(&w),
        q: fclib_to_ours(&q),
        mu,
        reference: file.reference(dim)?,
        notes: Vec::new(),
    })
}

fn read_global(file: &Reader) -> Result<FclibProblem, ProblemFileError> {
    file.check_spacedim("fclib_global/spacedim")?;
    if file.has_group("fclib_global/G")? {
        return Err(file.unsupported(
            "fclib_global/G",
            "global problems with equality constraints (G, b) are not supported",
        ));
    }
    let m = file.matrix("fclib_global/M", (MAX_GLOBAL_DOFS, MAX_GLOBAL_DOFS))?;
    let h = file.matrix("fclib_global/H", (MAX_GLOBAL_DOFS, MAX_DENSE_DIM))?;
    if m.nrows() != m.ncols() {
        return Err(file.bad(
            "fclib_global/M",
            format!("M must be square, is {}x{}", m.nrows(), m.ncols()),
        ));
    }
    if h.nrows() != m.nrows() {
        return Err(file.bad(
            "fclib_global/H",
            format!("H has {} rows, M has {}", h.nrows(), m.nrows()),
        ));
    }
    let dim = h.ncols();
    if !dim.is_multiple_of(3) || dim > MAX_DENSE_DIM {
        return Err(file.bad(
            "fclib_global/H",
            format!("H has {dim} columns: expected 3 per contact, at most {MAX_DENSE_DIM}"),
        ));
    }
    let f = file.vector("fclib_global/vectors/f", m.nrows())?;
    let w = file.vector("fclib_global/vectors/w", dim)?;
    let mu = file.vector("fclib_global/vectors/mu", dim / 3)?;
    let mut notes = Vec::new();
    let m = match mirror_triangle(&m) {
        Some(full) => {
            notes.push(
                "M is stored as one triangle: mirrored into a symmetric matrix before reduction"
                    .to_string(),
            );
            full
        }
        None => m,
    };
    let (w_dense, q) =
        reduce_global(&m, &h, &f, &w).map_err(|message| file.bad("fclib_global/M", message))?;
    notes.push(format!(
        "global problem reduced to W = Hᵀ M⁻¹ H, q = Hᵀ M⁻¹ f + w ({} dofs, {} contacts)",
        m.nrows(),
        dim / 3
    ));
    let w_sparse = CscMatrix::from(&w_dense);
    Ok(FclibProblem {
        w: fclib_to_ours_matrix(&w_sparse),
        q: fclib_to_ours(&q),
        mu,
        reference: file.reference(dim)?,
        notes,
    })
}

/// `W = Hᵀ M⁻¹ H` and `q = Hᵀ M⁻¹ f + w` (FCLIB order), with one sparse Cholesky
/// factorization of `M` and solves by blocks of columns of `H`. Fails when `M` is not
/// positive definite.
pub fn reduce_global(
    m: &CscMatrix<f64>,
    h: &CscMatrix<f64>,
    f: &DVector<f64>,
    w: &DVector<f64>,
) -> Result<(DMatrix<f64>, DVector<f64>), String> {
    let chol = CscCholesky::factor(m)
        .map_err(|e| format!("M is not symmetric positive definite ({e:?})"))?;
    let ht = h.transpose();
    let cols = h.ncols();
    let mut delassus = DMatrix::zeros(cols, cols);
    for start in (0..cols).step_by(REDUCTION_BLOCK) {
        let end = (start + REDUCTION_BLOCK).min(cols);
        let block = dense_columns(h, start, end);
        let minv_h = chol.solve(&block);
        let product: DMatrix<f64> = &ht * &minv_h;
        delassus.columns_mut(start, end - start).copy_from(&product);
    }
    let minv_f = chol.solve(&DMatrix::from_column_slice(f.len(), 1, f.as_slice()));
    let q = (&ht * &minv_f).column(0) + w;
    Ok((delassus, q))
}

/// Columns `start..end` of a sparse matrix, dense.
fn dense_columns(a: &CscMatrix<f64>, start: usize, end: usize) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(a.nrows(), end - start);
    for j in start..end {
        let col = a.col(j);
        for (&i, &v) in col.row_indices().iter().zip(col.values()) {
            out[(i, j - start)] = v;
        }
    }
    out
}

/// `U + Uᵀ − diag(U)` when `a` has entries strictly on one side of the diagonal only.
fn mirror_triangle(a: &CscMatrix<f64>) -> Option<CscMatrix<f64>> {
    let (mut upper, mut lower) = (0usize, 0usize);
    for (i, j, _) in a.triplet_iter() {
        match i.cmp(&j) {
            std::cmp::Ordering::Less => upper += 1,
            std::cmp::Ordering::Greater => lower += 1,
            std::cmp::Ordering::Equal => {}
        }
    }
    if (upper == 0) == (lower == 0) {
        return None;
    }
    let mut coo = CooMatrix::new(a.nrows(), a.ncols());
    for (i, j, &v) in a.triplet_iter() {
        coo.push(i, j, v);
        if i != j {
            coo.push(j, i, v);
        }
    }
    Some(CscMatrix::from(&coo))
}

/// Index in contactbench's order `[t1, t2, n]` of FCLIB's index `k` (`[n, t1, t2]`).
fn ours_index(k: usize) -> usize {
    3 * (k / 3) + [2, 0, 1][k % 3]
}

/// Index in FCLIB's order of contactbench's index `k`.
fn fclib_index(k: usize) -> usize {
    3 * (k / 3) + [1, 2, 0][k % 3]
}

fn fclib_to_ours(x: &DVector<f64>) -> DVector<f64> {
    let mut out = DVector::zeros(x.len());
    for (k, v) in x.iter().enumerate() {
        out[ours_index(k)] = *v;
    }
    out
}

fn ours_to_fclib(x: &DVector<f64>) -> DVector<f64> {
    let mut out = DVector::zeros(x.len());
    for (k, v) in x.iter().enumerate() {
        out[fclib_index(k)] = *v;
    }
    out
}

fn fclib_to_ours_matrix(a: &CscMatrix<f64>) -> CscMatrix<f64> {
    let mut coo = CooMatrix::new(a.nrows(), a.ncols());
    for (i, j, &v) in a.triplet_iter() {
        coo.push(ours_index(i), ours_index(j), v);
    }
    CscMatrix::from(&coo)
}

fn contact_dim(file: &Reader, group: &str, w: &CscMatrix<f64>) -> Result<usize, ProblemFileError> {
    let dim = w.nrows();
    if w.ncols() != dim || !dim.is_multiple_of(3) || dim > MAX_DENSE_DIM {
        return Err(file.bad(
            group,
            format!(
                "W is {}x{}: expected square, 3 rows per contact, at most {MAX_DENSE_DIM}",
                w.nrows(),
                w.ncols()
            ),
        ));
    }
    Ok(dim)
}

/// An open FCLIB file, its path (for errors that name both) and its length in bytes.
struct Reader<'a> {
    path: &'a Path,
    length: u64,
    file: File,
}

impl Reader<'_> {
    fn bad(&self, dataset: &str, message: String) -> ProblemFileError {
        ProblemFileError::Dataset {
            path: self.path.to_path_buf(),
            dataset: dataset.to_string(),
            message,
        }
    }

    fn unsupported(&self, dataset: &str, what: &str) -> ProblemFileError {
        ProblemFileError::Unsupported {
            path: self.path.to_path_buf(),
            dataset: dataset.to_string(),
            what: what.to_string(),
        }
    }

    fn hdf5(&self, dataset: &str, error: hdf5_pure::Error) -> ProblemFileError {
        ProblemFileError::Hdf5 {
            path: self.path.to_path_buf(),
            dataset: dataset.to_string(),
            message: error.to_string(),
        }
    }

    fn root_groups(&self) -> Result<Vec<String>, ProblemFileError> {
        self.file.root().groups().map_err(|e| self.hdf5("/", e))
    }

    /// Whether `path` (`parent/name`) is a group.
    fn has_group(&self, path: &str) -> Result<bool, ProblemFileError> {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        let groups = if parent.is_empty() {
            self.file.root().groups()
        } else {
            self.file.group(parent).and_then(|g| g.groups())
        };
        Ok(groups
            .map_err(|e| self.hdf5(parent, e))?
            .iter()
            .any(|g| g == name))
    }

    fn has_dataset(&self, path: &str) -> Result<bool, ProblemFileError> {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        if !parent.is_empty() && !self.has_group(parent)? {
            return Ok(false);
        }
        let datasets = if parent.is_empty() {
            self.file.root().datasets()
        } else {
            self.file.group(parent).and_then(|g| g.datasets())
        };
        Ok(datasets
            .map_err(|e| self.hdf5(parent, e))?
            .iter()
            .any(|d| d == name))
    }

    fn too_large(&self, what: String, limit: usize, unit: &'static str) -> ProblemFileError {
        ProblemFileError::TooLarge {
            path: self.path.to_path_buf(),
            what,
            limit: limit as u64,
            unit,
        }
    }

    /// The dataset at `path`, once its declared shape is checked: at most `max` values,
    /// and no more than the file's bytes can hold ([`MAX_EXPANSION`] per byte).
    fn dataset(&self, path: &str, max: usize) -> Result<hdf5_pure::Dataset, ProblemFileError> {
        let dataset = self.file.dataset(path).map_err(|e| self.hdf5(path, e))?;
        let shape = dataset.shape().map_err(|e| self.hdf5(path, e))?;
        let count = shape.iter().try_fold(1u64, |acc, d| acc.checked_mul(*d));
        let holdable = self.length.saturating_mul(MAX_EXPANSION);
        let limit = (max as u64).min(holdable);
        match count {
            Some(count) if count <= limit => Ok(dataset),
            _ => Err(self.too_large(
                format!(
                    "{path}: shape {shape:?} ({} values{})",
                    count.map_or_else(|| "too many".to_string(), |c| c.to_string()),
                    if (max as u64) > holdable {
                        format!(", in a file of {} bytes", self.length)
                    } else {
                        String::new()
                    }
                ),
                limit as usize,
                "values",
            )),
        }
    }

    fn reals(&self, path: &str, max: usize) -> Result<Vec<f64>, ProblemFileError> {
        let values = self
            .dataset(path, max)?
            .read_f64()
            .map_err(|e| self.hdf5(path, e))?;
        match values.iter().position(|v| !v.is_finite()) {
            Some(k) => Err(self.bad(path, format!("non-finite value at {k}"))),
            None => Ok(values),
        }
    }

    fn integers(&self, path: &str, max: usize) -> Result<Vec<i64>, ProblemFileError> {
        self.dataset(path, max)?
            .read_i64()
            .map_err(|e| self.hdf5(path, e))
    }

    fn scalar(&self, path: &str) -> Result<i64, ProblemFileError> {
        match self.integers(path, 1)?.as_slice() {
            [v] => Ok(*v),
            other => Err(self.bad(
                path,
                format!("expected one integer, got {} values", other.len()),
            )),
        }
    }

    /// A vector of `len` values (read if it holds at most the largest vector a problem
    /// has, so that a wrong length is named as such).
    fn vector(&self, path: &str, len: usize) -> Result<DVector<f64>, ProblemFileError> {
        let values = self.reals(path, MAX_GLOBAL_DOFS.max(len))?;
        if values.len() != len {
            return Err(self.bad(path, format!("expected {len} values, got {}", values.len())));
        }
        Ok(DVector::from_vec(values))
    }

    fn check_spacedim(&self, path: &str) -> Result<(), ProblemFileError> {
        match self.scalar(path)? {
            3 => Ok(()),
            2 => Err(self.unsupported(path, "2D frictional contact (spacedim 2)")),
            5 => Err(self.unsupported(path, "rolling friction (spacedim 5)")),
            other => Err(self.unsupported(
                path,
                &format!("spacedim {other} (only 3D Coulomb friction, spacedim 3)"),
            )),
        }
    }

    /// `/solution/r` in our order, when present and not identically zero.
    fn reference(&self, dim: usize) -> Result<Option<DVector<f64>>, ProblemFileError> {
        if !self.has_dataset("solution/r")? {
            return Ok(None);
        }
        let r = self.vector("solution/r", dim)?;
        Ok((r.iter().any(|v| *v != 0.0)).then(|| fclib_to_ours(&r)))
    }

    /// A CSparse matrix stored in `group`, of at most `max` (rows, columns): its sizes are
    /// checked before any of its arrays is read.
    fn matrix(&self, group: &str, max: (usize, usize)) -> Result<CscMatrix<f64>, ProblemFileError> {
        let path = |name: &str| format!("{group}/{name}");
        let size = |name: &str,
                    limit: usize,
                    unit: &'static str|
         -> Result<usize, ProblemFileError> {
            let value = self.scalar(&path(name))?;
            let size = usize::try_from(value)
                .map_err(|_| self.bad(&path(name), format!("invalid size {value}")))?;
            if size > limit {
                return Err(self.too_large(format!("{} = {size} {unit}", path(name)), limit, unit));
            }
            Ok(size)
        };
        let (rows, cols) = (size("m", max.0, "rows")?, size("n", max.1, "columns")?);
        let nz = self.scalar(&path("nz"))?;
        // A compressed layout has one pointer per major row or column and one more (the
        // exact count is checked below, naming the pointers); triplets one per entry.
        let pointers = match nz {
            -1 | -2 => max.0.max(max.1) + 1,
            _ => MAX_ENTRIES,
        };
        let p = self.indices(&path("p"), pointers)?;
        let i = self.indices(&path("i"), MAX_ENTRIES)?;
        let x = self.reals(&path("x"), MAX_ENTRIES)?;
        match nz {
            -1 => self.compressed(group, cols, rows, p, i, x, Orientation::Columns),
            -2 => self.compressed(group, rows, cols, p, i, x, Orientation::Rows),
            count if count >= 0 => {
                let count = count as usize;
                if i.len() < count || p.len() < count || x.len() < count {
                    return Err(self.bad(
                        &path("nz"),
                        format!(
                            "{count} triplets but i, p, x have {}, {}, {} entries",
                            i.len(),
                            p.len(),
                            x.len()
                        ),
                    ));
                }
                let coo = CooMatrix::try_from_triplets(
                    rows,
                    cols,
                    i[..count].to_vec(),
                    p[..count].to_vec(),
                    x[..count].to_vec(),
                )
                .map_err(|e| self.bad(group, format!("triplets: {e}")))?;
                Ok(CscMatrix::from(&coo))
            }
            other => Err(self.bad(
                &path("nz"),
                format!("nz = {other}: expected -1 (columns), -2 (rows) or a triplet count"),
            )),
        }
    }

    /// A compressed matrix: `major` pointers `p` (`major + 1`), `minor` indices `i`.
    #[allow(clippy::too_many_arguments)]
    fn compressed(
        &self,
        group: &str,
        major: usize,
        minor: usize,
        p: Vec<usize>,
        i: Vec<usize>,
        x: Vec<f64>,
        orientation: Orientation,
    ) -> Result<CscMatrix<f64>, ProblemFileError> {
        if p.len() != major + 1 {
            return Err(self.bad(
                &format!("{group}/p"),
                format!("expected {} pointers, got {}", major + 1, p.len()),
            ));
        }
        let offsets = p[..=major].to_vec();
        let nnz = offsets[major];
        if i.len() < nnz || x.len() < nnz {
            return Err(self.bad(
                group,
                format!(
                    "p[{major}] = {nnz} entries but i and x have {} and {}",
                    i.len(),
                    x.len()
                ),
            ));
        }
        // A malformed offset list is refused by nalgebra-sparse below; make it monotone
        // first so that the error names the pointers rather than a slice.
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets[0] != 0 {
            return Err(self.bad(
                &format!("{group}/p"),
                "pointers must start at 0 and not decrease".into(),
            ));
        }
        let (indices, values) = (i[..nnz].to_vec(), x[..nnz].to_vec());
        let bad = |e: nalgebra_sparse::SparseFormatError| self.bad(group, e.to_string());
        Ok(match orientation {
            Orientation::Columns => {
                CscMatrix::try_from_unsorted_csc_data(minor, major, offsets, indices, values)
                    .map_err(bad)?
            }
            Orientation::Rows => CscMatrix::from(
                &CsrMatrix::try_from_unsorted_csr_data(major, minor, offsets, indices, values)
                    .map_err(bad)?,
            ),
        })
    }

    fn indices(&self, path: &str, max: usize) -> Result<Vec<usize>, ProblemFileError> {
        self.integers(path, max)?
            .into_iter()
            .enumerate()
            .map(|(k, v)| {
                usize::try_from(v).map_err(|_| self.bad(path, format!("negative index {v} at {k}")))
            })
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Orientation {
    Columns,
    Rows,
}

/// `problem` as the bytes of an FCLIB local problem (`W = G + R` in compressed columns,
/// `q = g`, `μ`, FCLIB's order `[n, t1, t2]`), with `lambda` as `/solution/r` when given
/// (`path` names the file in errors).
pub fn fclib_bytes(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    title: &str,
) -> Result<Vec<u8>, ProblemFileError> {
    let dim = problem.dim();
    let too_big = || ProblemFileError::Serialize {
        path: path.to_path_buf(),
        message: format!("{dim} rows do not fit FCLIB's 32-bit indices"),
    };
    let w = fclib_delassus(&problem.effective_delassus());
    let to_i32 = |v: usize| i32::try_from(v).map_err(|_| too_big());
    let pointers: Vec<i32> = w
        .col_offsets()
        .iter()
        .map(|&v| to_i32(v))
        .collect::<Result<_, _>>()?;
    let rows: Vec<i32> = w
        .row_indices()
        .iter()
        .map(|&v| to_i32(v))
        .collect::<Result<_, _>>()?;
    let (dim32, nnz32) = (to_i32(dim)?, to_i32(w.nnz())?);

    let mut builder = FileBuilder::new();
    let mut local = builder.create_group("fclib_local");
    local.create_dataset("spacedim").with_i32_data(&[3]);
    let mut wg = local.create_group("W");
    wg.create_dataset("nzmax").with_i32_data(&[nnz32]);
    wg.create_dataset("m").with_i32_data(&[dim32]);
    wg.create_dataset("n").with_i32_data(&[dim32]);
    wg.create_dataset("nz").with_i32_data(&[-1]);
    wg.create_dataset("p").with_i32_data(&pointers);
    wg.create_dataset("i").with_i32_data(&rows);
    wg.create_dataset("x").with_f64_data(w.values());
    local.add_group(wg.finish());
    let mut vectors = local.create_group("vectors");
    vectors
        .create_dataset("q")
        .with_f64_data(ours_to_fclib(problem.free_velocity()).as_slice());
    vectors
        .create_dataset("mu")
        .with_f64_data(problem.mu().as_slice());
    local.add_group(vectors.finish());
    let mut info = local.create_group("info");
    let texts = [
        ("title", title),
        (
            "description",
            "written by contactbench (per contact [n, t1, t2])",
        ),
        ("math_info", ""),
    ];
    for (name, text) in texts {
        add_string(path, &mut info, name, text)?;
    }
    local.add_group(info.finish());
    builder.add_group(local.finish());
    if let Some(lambda) = lambda {
        problem
            .check_lambda(lambda)
            .map_err(|error| ProblemFileError::Invalid {
                path: path.to_path_buf(),
                error,
            })?;
        let mut solution = builder.create_group("solution");
        solution
            .create_dataset("r")
            .with_f64_data(ours_to_fclib(lambda).as_slice());
        solution
            .create_dataset("u")
            .with_f64_data(ours_to_fclib(&problem.velocity(lambda)).as_slice());
        builder.add_group(solution.finish());
    }
    builder.finish().map_err(|e| ProblemFileError::Serialize {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn add_string(
    path: &Path,
    group: &mut GroupBuilder,
    name: &str,
    text: &str,
) -> Result<(), ProblemFileError> {
    group
        .create_dataset(name)
        .with_ascii_strings(&[text])
        .map(|_| ())
        .map_err(|e| ProblemFileError::Serialize {
            path: path.to_path_buf(),
            message: format!("info/{name}: {e}"),
        })
}

/// `G` (our order, dense) as FCLIB's sparse `W` (FCLIB order), exact zeros left out.
fn fclib_delassus(g: &DMatrix<f64>) -> CscMatrix<f64> {
    let mut coo = CooMatrix::new(g.nrows(), g.ncols());
    for j in 0..g.ncols() {
        for i in 0..g.nrows() {
            let v = g[(i, j)];
            if v != 0.0 {
                coo.push(fclib_index(i), fclib_index(j), v);
            }
        }
    }
    CscMatrix::from(&coo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_maps_are_inverse_cyclic_permutations() {
        for k in 0..9 {
            assert_eq!(fclib_index(ours_index(k)), k);
        }
        // FCLIB's normal (component 0) is our third component.
        assert_eq!(ours_index(3), 5);
        assert_eq!(ours_index(4), 3);
    }

    #[test]
    fn upper_triangle_is_mirrored() {
        let mut coo = CooMatrix::new(2, 2);
        coo.push(0, 0, 2.0);
        coo.push(0, 1, 1.0);
        coo.push(1, 1, 3.0);
        let Some(full) = mirror_triangle(&CscMatrix::from(&coo)) else {
            panic!("one triangle: mirrored");
        };
        let dense = nalgebra_sparse::convert::serial::convert_csc_dense(&full);
        assert_eq!(dense, DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 3.0]));
    }
}
