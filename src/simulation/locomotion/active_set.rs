//! Goldfarb and Idnani's dual active-set method (Math. Programming 27, 1983) for a small
//! dense strictly convex QP
//!
//! `min_x ½ xᵀ H x + cᵀ x   subject to   G x ≤ h`,
//!
//! `H` symmetric positive definite. With `H = L Lᵀ` and `y = Lᵀ x` the objective is
//! `½‖y‖² + ĉᵀ y` (`ĉ = L⁻¹ c`) and row `i` of the constraints `ĝ_iᵀ y ≤ h_i`
//! (`ĝ_i = L⁻¹ g_i`). The method starts at the unconstrained minimum `y = −ĉ` and keeps
//! the KKT conditions `y + ĉ + Σ_{i∈A} u_i ĝ_i = 0`, `u ≥ 0`, `ĝ_iᵀ y = h_i` on an active
//! set `A` of linearly independent rows while it adds the most violated row `p`: its
//! multiplier grows by `t` along `y ← y − t z`, `u ← u − t r` with `z` the part of `ĝ_p`
//! orthogonal to the active rows and `r` the active rows' share (`N = Q₁ R`,
//! `r = R⁻¹ Q₁ᵀ ĝ_p`). The step stops where row `p` holds (`t = (ĝ_pᵀ y − h_p)/‖z‖²`,
//! `p` joins `A`) or where an active multiplier reaches zero (`t = u_k / r_k`, `k` leaves
//! `A`); no such step means the constraints are infeasible. Each change to `A` costs one
//! column added to or removed from the QR factors of the active rows.

/// Why the method gave no solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ActiveSetError {
    /// A number of the problem is NaN or infinite, or the sizes do not agree.
    #[error("the problem holds a non-finite number or mismatched sizes")]
    Malformed,
    /// `H` is not positive definite (its Cholesky factor failed).
    #[error("H is not positive definite")]
    NotPositiveDefinite,
    /// No point satisfies `G x ≤ h`.
    #[error("the constraints are infeasible")]
    Infeasible,
    /// The active set changed more than the cap allows.
    #[error("no solution within {0} active-set changes")]
    IterationCap(usize),
}

/// A QP of the module docs: `h_matrix` (`n × n`) and `g` (`m × n`) row-major.
#[derive(Debug, Clone, Copy)]
pub struct DenseQp<'a> {
    /// Variables.
    pub n: usize,
    /// `H`, row-major, symmetric positive definite.
    pub h_matrix: &'a [f64],
    /// `c`.
    pub c: &'a [f64],
    /// `G`, row-major (`m` rows of `n`).
    pub g: &'a [f64],
    /// `h` (`m`).
    pub bound: &'a [f64],
}

/// Relative size below which the part of a row orthogonal to the active rows is zero
/// (the row depends on them).
const DEPENDENT: f64 = 1e-10;
/// Violation (in the units of `h`, relative to the row's scale) above which a row is
/// added.
const VIOLATION: f64 = 1e-11;

/// The solver's buffers, reused from one solve to the next (no allocation once sized).
#[derive(Debug, Clone, Default)]
pub struct DualActiveSet {
    n: usize,
    /// `L`, row-major lower triangle.
    chol: Vec<f64>,
    /// `ĝ_i = L⁻¹ g_i`, row `i` of `m × n`.
    rows: Vec<f64>,
    y: Vec<f64>,
    /// `Q₁`'s columns (column `j` at `j n`), `R` column-major `n × n` (upper triangle).
    q1: Vec<f64>,
    r: Vec<f64>,
    /// Active rows and their multipliers, in the order of `Q₁`'s columns.
    active: Vec<usize>,
    u: Vec<f64>,
    z: Vec<f64>,
    w: Vec<f64>,
    step: Vec<f64>,
    /// The solution `x` and every row's multiplier of the last solve.
    x: Vec<f64>,
    multipliers: Vec<f64>,
}

impl DualActiveSet {
    /// The minimizer `x` of `qp` and the multipliers `λ ≥ 0` of its rows
    /// (`H x + c + Gᵀ λ = 0`, `λ_i (h_i − g_iᵀ x) = 0`), after at most `max_changes`
    /// changes of the active set.
    pub fn solve(
        &mut self,
        qp: &DenseQp,
        max_changes: usize,
    ) -> Result<(&[f64], &[f64]), ActiveSetError> {
        let n = qp.n;
        let m = qp.bound.len();
        let sizes = qp.h_matrix.len() == n * n && qp.c.len() == n && qp.g.len() == m * n;
        let finite = [qp.h_matrix, qp.c, qp.g, qp.bound]
            .iter()
            .all(|s| s.iter().all(|v| v.is_finite()));
        if !sizes || !finite || n == 0 {
            return Err(ActiveSetError::Malformed);
        }
        self.size(n, m);
        self.factor(qp.h_matrix)?;
        self.transform(qp)?;
        let mut changes = 0;
        while let Some(p) = self.most_violated(qp.bound) {
            self.add_row(p, qp.bound[p], &mut changes, max_changes)?;
        }
        self.finish(m);
        Ok((&self.x, &self.multipliers))
    }

    fn size(&mut self, n: usize, m: usize) {
        self.n = n;
        self.chol.resize(n * n, 0.0);
        self.rows.resize(m * n, 0.0);
        self.y.resize(n, 0.0);
        self.q1.resize(n * n, 0.0);
        self.r.resize(n * n, 0.0);
        self.z.resize(n, 0.0);
        self.w.resize(n, 0.0);
        self.step.resize(n, 0.0);
        self.x.resize(n, 0.0);
        self.multipliers.resize(m, 0.0);
        self.active.clear();
        self.u.clear();
    }

    /// `H = L Lᵀ`.
    fn factor(&mut self, h: &[f64]) -> Result<(), ActiveSetError> {
        let n = self.n;
        for i in 0..n {
            for j in 0..=i {
                let dot: f64 = (0..j)
                    .map(|k| self.chol[i * n + k] * self.chol[j * n + k])
                    .sum();
                let value = h[i * n + j] - dot;
                if i == j {
                    if value.is_nan() || value <= 0.0 {
                        return Err(ActiveSetError::NotPositiveDefinite);
                    }
                    self.chol[i * n + i] = value.sqrt();
                } else {
                    self.chol[i * n + j] = value / self.chol[j * n + j];
                }
            }
        }
        Ok(())
    }

    /// `v ← L⁻¹ v`.
    fn forward(chol: &[f64], n: usize, v: &mut [f64]) {
        for i in 0..n {
            let dot: f64 = (0..i).map(|k| chol[i * n + k] * v[k]).sum();
            v[i] = (v[i] - dot) / chol[i * n + i];
        }
    }

    /// `v ← L⁻ᵀ v`.
    fn backward(chol: &[f64], n: usize, v: &mut [f64]) {
        for i in (0..n).rev() {
            let dot: f64 = (i + 1..n).map(|k| chol[k * n + i] * v[k]).sum();
            v[i] = (v[i] - dot) / chol[i * n + i];
        }
    }

    /// The unconstrained minimum `y = −L⁻¹ c` and the rows `ĝ_i = L⁻¹ g_i`.
    fn transform(&mut self, qp: &DenseQp) -> Result<(), ActiveSetError> {
        let n = self.n;
        self.y.copy_from_slice(qp.c);
        Self::forward(&self.chol, n, &mut self.y);
        self.y.iter_mut().for_each(|v| *v = -*v);
        self.rows.copy_from_slice(qp.g);
        for row in self.rows.chunks_exact_mut(n) {
            Self::forward(&self.chol, n, row);
        }
        if self.y.iter().chain(&self.rows).all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ActiveSetError::Malformed)
        }
    }

    /// The inactive row violated the most (`ĝ_iᵀ y − h_i` above its tolerance).
    fn most_violated(&self, bound: &[f64]) -> Option<usize> {
        let n = self.n;
        let mut worst = None;
        let mut largest = 0.0;
        for (i, row) in self.rows.chunks_exact(n).enumerate() {
            if self.active.contains(&i) {
                continue;
            }
            let value = dot(row, &self.y);
            let scale = 1.0 + bound[i].abs() + norm(row) * norm(&self.y);
            let violation = value - bound[i];
            if violation > VIOLATION * scale && violation > largest {
                largest = violation;
                worst = Some(i);
            }
        }
        worst
    }

    /// Steps of the module docs until row `p` holds with a non-negative multiplier,
    /// dropping the active rows whose multipliers reach zero on the way.
    fn add_row(
        &mut self,
        p: usize,
        h_p: f64,
        changes: &mut usize,
        max_changes: usize,
    ) -> Result<(), ActiveSetError> {
        let n = self.n;
        let mut t_p = 0.0;
        loop {
            *changes += 1;
            if *changes > max_changes {
                return Err(ActiveSetError::IterationCap(max_changes));
            }
            let row_norm = norm(&self.rows[p * n..(p + 1) * n]);
            self.split(p);
            let z_norm2 = dot(&self.z, &self.z);
            let full = (z_norm2 > (DEPENDENT * row_norm).powi(2))
                .then(|| (dot(&self.rows[p * n..(p + 1) * n], &self.y) - h_p) / z_norm2);
            let partial = self.blocking_multiplier();
            let (t, change) = match (full, partial) {
                (None, None) => return Err(ActiveSetError::Infeasible),
                (Some(full), Some((k, t))) if t < full => (t, Change::Drop(k)),
                (Some(full), _) => (full, Change::Add),
                (None, Some((k, t))) => (t, Change::Drop(k)),
            };
            if full.is_some() {
                for (y, z) in self.y.iter_mut().zip(&self.z) {
                    *y -= t * z;
                }
            }
            for (u, r) in self.u.iter_mut().zip(&self.step) {
                *u -= t * r;
            }
            t_p += t;
            match change {
                Change::Add => {
                    self.append(p, t_p);
                    return Ok(());
                }
                Change::Drop(k) => self.drop(k),
            }
        }
    }

    /// `w = Q₁ᵀ ĝ_p`, `z = ĝ_p − Q₁ w` (orthogonalized twice), `step = r = R⁻¹ w`.
    fn split(&mut self, p: usize) {
        let n = self.n;
        let q = self.active.len();
        self.z.copy_from_slice(&self.rows[p * n..(p + 1) * n]);
        self.w[..q].fill(0.0);
        for _ in 0..2 {
            for j in 0..q {
                let column = &self.q1[j * n..(j + 1) * n];
                let c = dot(column, &self.z);
                self.w[j] += c;
                for (z, e) in self.z.iter_mut().zip(column) {
                    *z -= c * e;
                }
            }
        }
        for i in (0..q).rev() {
            let dot: f64 = (i + 1..q).map(|k| self.r[k * n + i] * self.step[k]).sum();
            self.step[i] = (self.w[i] - dot) / self.r[i * n + i];
        }
    }

    /// The active row whose multiplier reaches zero first along `u − t r` (`r_k > 0`) and
    /// that `t`.
    fn blocking_multiplier(&self) -> Option<(usize, f64)> {
        (0..self.active.len())
            .filter(|&j| self.step[j] > 0.0)
            .map(|j| (j, self.u[j].max(0.0) / self.step[j]))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Row `p` joins the active set with multiplier `u_p`: `Q₁` gains `z/‖z‖`, `R` the
    /// column `[w; ‖z‖]`.
    fn append(&mut self, p: usize, u_p: f64) {
        let n = self.n;
        let q = self.active.len();
        let length = norm(&self.z);
        for (e, z) in self.q1[q * n..(q + 1) * n].iter_mut().zip(&self.z) {
            *e = z / length;
        }
        self.r[q * n..q * n + q].copy_from_slice(&self.w[..q]);
        self.r[q * n + q] = length;
        self.active.push(p);
        self.u.push(u_p);
    }

    /// Active row `k` leaves: its column of `R` goes, Givens rotations bring `R` back to
    /// triangular and turn `Q₁`'s columns alike.
    fn drop(&mut self, k: usize) {
        let n = self.n;
        let q = self.active.len();
        for j in k..q - 1 {
            self.r.copy_within((j + 1) * n..(j + 2) * n, j * n);
        }
        for i in k..q - 1 {
            let (a, b) = (self.r[i * n + i], self.r[i * n + i + 1]);
            let radius = a.hypot(b);
            let (cos, sin) = (a / radius, b / radius);
            for j in i..q - 1 {
                let (x, y) = (self.r[j * n + i], self.r[j * n + i + 1]);
                self.r[j * n + i] = cos * x + sin * y;
                self.r[j * n + i + 1] = -sin * x + cos * y;
            }
            for l in 0..n {
                let (x, y) = (self.q1[i * n + l], self.q1[(i + 1) * n + l]);
                self.q1[i * n + l] = cos * x + sin * y;
                self.q1[(i + 1) * n + l] = -sin * x + cos * y;
            }
        }
        self.active.remove(k);
        self.u.remove(k);
    }

    /// `x = L⁻ᵀ y` and the multipliers of every row (0 off the active set).
    fn finish(&mut self, m: usize) {
        self.x.copy_from_slice(&self.y);
        Self::backward(&self.chol, self.n, &mut self.x);
        self.multipliers[..m].fill(0.0);
        for (&i, &u) in self.active.iter().zip(&self.u) {
            self.multipliers[i] = u;
        }
    }
}

/// The step's end: row `p` joins the active set, or active row `k` leaves it.
enum Change {
    Add,
    Drop(usize),
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}
