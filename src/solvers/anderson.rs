//! Type-II Anderson acceleration of a fixed-point iteration `u ← T(u)`, with a safeguard.
//!
//! With the residuals `f_k = T(u_k) − u_k` and images `g_k = T(u_k)` of the last `m + 1`
//! points, the differences `ΔF = [f_{j+1} − f_j]`, `ΔG = [g_{j+1} − g_j]` give the
//! extrapolation (Walker & Ni, "Anderson acceleration for fixed-point iterations", SIAM
//! J. Numer. Anal. 2011, eq. 2.1 in its type-II form)
//!
//! ```text
//! γ = argmin ‖f_k − ΔF γ‖₂,     u_{k+1} = g_k − ΔG γ
//! ```
//!
//! solved by the normal equations `(ΔFᵀΔF + δ I) γ = ΔFᵀ f_k` (`m ≤` [`MAX_MEMORY`]
//! unknowns, `δ` a relative 1e-10 of the trace). The safeguard (Zhang, O'Donoghue &
//! Boyd, "Globally convergent type-I Anderson acceleration for nonsmooth fixed-point
//! iterations", SIAM J. Optim. 2020, §3): an extrapolated point whose residual
//! `‖T(u) − u‖` exceeds the residual of the point it was extrapolated from is rejected,
//! the plain image `g_k` of that point is taken instead and the memory is cleared.

use nalgebra::DVector;

/// Largest memory `m` accepted.
pub const MAX_MEMORY: usize = 32;

/// Relative Tikhonov weight of the normal equations.
const REGULARIZATION: f64 = 1e-10;

/// What [`Anderson::step`] made of a point and its image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AndersonStep {
    /// The next point is the image `T(u)` (no usable memory yet, or a singular system).
    Plain,
    /// The next point is the extrapolation `g_k − ΔG γ`.
    Extrapolated,
    /// `u` was an extrapolation whose residual grew: the next point is the plain image of
    /// the point it came from, and the memory is cleared.
    Rejected,
}

/// The memory of the accelerator: the last `memory` differences `ΔF`, `ΔG` (ring
/// buffers), the last residual and image, and the pending extrapolation's reference.
#[derive(Debug, Clone, Default)]
pub struct Anderson {
    memory: usize,
    df: Vec<DVector<f64>>,
    dg: Vec<DVector<f64>>,
    stored: usize,
    oldest: usize,
    last_f: DVector<f64>,
    last_g: DVector<f64>,
    has_last: bool,
    /// The residual norm of the point the pending extrapolation came from.
    pending: Option<f64>,
    rejections: usize,
    gram: Vec<f64>,
    gamma: Vec<f64>,
}

impl Anderson {
    /// An accelerator of memory `memory` (1 to [`MAX_MEMORY`]; the caller checks it).
    pub fn new(memory: usize) -> Self {
        Self {
            memory: memory.clamp(1, MAX_MEMORY),
            ..Self::default()
        }
    }

    /// Sets the memory (1 to [`MAX_MEMORY`]) and forgets the past (a new solve).
    pub fn restart(&mut self, memory: usize) {
        self.memory = memory.clamp(1, MAX_MEMORY);
        self.df.truncate(self.memory);
        self.dg.truncate(self.memory);
        self.reset();
    }

    /// Forgets the memory and the pending extrapolation (the map changed).
    pub fn reset(&mut self) {
        self.stored = 0;
        self.oldest = 0;
        self.has_last = false;
        self.pending = None;
    }

    /// Extrapolations rejected by the safeguard since creation.
    pub fn rejections(&self) -> usize {
        self.rejections
    }

    /// Takes the point `u` and its image `image = T(u)`, and writes into `next` the point
    /// to evaluate next (module doc). `u` is taken as the last extrapolation this returned
    /// when one is pending.
    pub fn step(
        &mut self,
        u: &DVector<f64>,
        image: &DVector<f64>,
        next: &mut DVector<f64>,
    ) -> AndersonStep {
        let n = u.len();
        if self.last_f.len() != n {
            self.last_f = DVector::zeros(n);
            self.last_g = DVector::zeros(n);
            self.reset();
        }
        let residual = image.metric_distance(u);
        if let Some(reference) = self.pending.take() {
            if residual > reference || residual.is_nan() {
                next.copy_from(&self.last_g);
                self.rejections += 1;
                self.reset();
                return AndersonStep::Rejected;
            }
        }
        if self.has_last {
            self.push_difference(u, image);
        }
        self.last_g.copy_from(image);
        self.last_f.copy_from(image);
        self.last_f -= u;
        self.has_last = true;
        if self.stored > 0 && self.extrapolate(next) {
            self.pending = Some(residual);
            AndersonStep::Extrapolated
        } else {
            next.copy_from(image);
            AndersonStep::Plain
        }
    }

    /// Stores `ΔF = f − f_last`, `ΔG = g − g_last` over the oldest pair when full.
    fn push_difference(&mut self, u: &DVector<f64>, image: &DVector<f64>) {
        let slot = if self.stored < self.memory {
            self.stored += 1;
            if self.df.len() < self.stored {
                self.df.push(DVector::zeros(u.len()));
                self.dg.push(DVector::zeros(u.len()));
            }
            self.stored - 1
        } else {
            let slot = self.oldest;
            self.oldest = (self.oldest + 1) % self.memory;
            slot
        };
        let (df, dg) = (&mut self.df[slot], &mut self.dg[slot]);
        if df.len() != u.len() {
            *df = DVector::zeros(u.len());
            *dg = DVector::zeros(u.len());
        }
        let previous = self.last_f.iter().zip(self.last_g.iter());
        let current = image.iter().zip(u.iter());
        for ((dfk, dgk), ((f_last, g_last), (gk, uk))) in
            df.iter_mut().zip(dg.iter_mut()).zip(previous.zip(current))
        {
            *dfk = (gk - uk) - f_last;
            *dgk = gk - g_last;
        }
    }

    /// `next = g_k − ΔG γ` with `γ` of the regularized normal equations; false (and
    /// `next` untouched) when they are singular or `γ` is not finite.
    fn extrapolate(&mut self, next: &mut DVector<f64>) -> bool {
        let m = self.stored;
        self.gram.clear();
        self.gram.resize(m * m, 0.0);
        self.gamma.clear();
        self.gamma.resize(m, 0.0);
        for i in 0..m {
            for j in 0..=i {
                let v = self.df[i].dot(&self.df[j]);
                self.gram[i * m + j] = v;
                self.gram[j * m + i] = v;
            }
            self.gamma[i] = self.df[i].dot(&self.last_f);
        }
        let trace: f64 = (0..m).map(|i| self.gram[i * m + i]).sum();
        for i in 0..m {
            self.gram[i * m + i] += REGULARIZATION * trace;
        }
        if !solve_positive_definite(&mut self.gram, m, &mut self.gamma) {
            return false;
        }
        next.copy_from(&self.last_g);
        for (dg, gamma) in self.dg.iter().zip(&self.gamma).take(m) {
            next.axpy(-gamma, dg, 1.0);
        }
        next.iter().all(|v| v.is_finite())
    }
}

/// Solves `a x = b` in place (`b` becomes `x`) for the symmetric positive definite `m × m`
/// row-major `a` by Cholesky; false when a pivot is not positive or the answer not finite.
fn solve_positive_definite(a: &mut [f64], m: usize, b: &mut [f64]) -> bool {
    for j in 0..m {
        let mut pivot = a[j * m + j];
        for k in 0..j {
            pivot -= a[j * m + k] * a[j * m + k];
        }
        if !(pivot > 0.0 && pivot.is_finite()) {
            return false;
        }
        let pivot = pivot.sqrt();
        a[j * m + j] = pivot;
        for i in j + 1..m {
            let mut v = a[i * m + j];
            for k in 0..j {
                v -= a[i * m + k] * a[j * m + k];
            }
            a[i * m + j] = v / pivot;
        }
    }
    // L w = b, then Lᵀ x = w (L row-major in the lower triangle of `a`).
    for i in 0..m {
        let row = &a[i * m..i * m + i];
        let dot: f64 = row.iter().zip(&b[..i]).map(|(l, w)| l * w).sum();
        b[i] = (b[i] - dot) / a[i * m + i];
    }
    for i in (0..m).rev() {
        let dot: f64 = (i + 1..m).map(|k| a[k * m + i] * b[k]).sum();
        b[i] = (b[i] - dot) / a[i * m + i];
    }
    b.iter().all(|v| v.is_finite())
}
