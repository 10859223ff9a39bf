//! The pivoted Householder QR of [`super::null_space`] and [`super::frontal`], and the
//! products with its `Q`, on column-major slices in a fixed order of operations (the same
//! bits on every run).

/// The rows of a group of four contacts (a sole's four corners, the cube's), and of
/// Talos's reduced problem: [`reflect`] has code specialized to this length.
const FIXED_ROWS: usize = 12;

/// A Householder QR with column pivoting (Golub & Van Loan, *Matrix Computations*, 4th
/// ed., §5.4.2) of the first `pivots` columns of the column-major `m × c` matrix `a`
/// (the reflectors are applied to the columns after them too, never pivoted), stopped at
/// rank `ρ` when no remaining column has a squared norm (rows `ρ..`) above `tolerance`;
/// returns `ρ`. The column norms are recomputed at every step (no downdating: the
/// decision is taken where downdating cancels). Leaves reflector `j`'s `v_j` (zeros
/// above row `j`, 1 on it; `m` rows) in column `j < ρ` of `reflectors` (column-major,
/// `m × min(m, pivots)`) and `τ_j` in `taus[j]`, so that `Q = H_0 ⋯ H_{ρ−1}`,
/// `H_j = I − τ_j v_j v_jᵀ`, and `R` on and above the diagonal of `a` (`v_j`'s entries
/// below it); the columns' order is applied to `order` when given (column `k` of the
/// result is column `order[k]`). The reflections run over whole columns (`v_j`'s leading
/// zeros leave rows `..j` as they are, up to a zero's sign), so that their length is `m`
/// at every step. Pivoting on the largest remaining column is what a pivoted Cholesky
/// factor of `aᵀa` does (Higham 2002, §10.3), without squaring `a`.
pub(super) fn householder_qr(
    a: &mut [f64],
    m: usize,
    pivots: usize,
    taus: &mut [f64],
    reflectors: &mut [f64],
    tolerance: f64,
    mut order: Option<&mut [usize]>,
) -> usize {
    let c = a.len().checked_div(m).unwrap_or(0);
    let pivots = pivots.min(c);
    reflectors.fill(0.0);
    let mut rank = 0;
    while rank < m.min(pivots) {
        let j = rank;
        let (mut p, mut largest) = (j, f64::NEG_INFINITY);
        for (k, column) in a[j * m..pivots * m].chunks_exact(m).enumerate() {
            let squared = dot(&column[j..], &column[j..]);
            if squared > largest {
                (p, largest) = (j + k, squared);
            }
        }
        if largest.is_nan() || largest <= tolerance {
            break;
        }
        if p != j {
            let (left, right) = a.split_at_mut(p * m);
            left[j * m..(j + 1) * m].swap_with_slice(&mut right[..m]);
            if let Some(order) = order.as_deref_mut() {
                order.swap(j, p);
            }
        }
        let (left, right) = a.split_at_mut((j + 1) * m);
        let x = &mut left[j * m + j..];
        let alpha = x[0];
        let norm = largest.sqrt();
        let beta = if alpha >= 0.0 { -norm } else { norm };
        taus[j] = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        x[0] = beta;
        let v = &mut reflectors[j * m..(j + 1) * m];
        v[j] = 1.0;
        for (x, v) in x[1..].iter_mut().zip(&mut v[j + 1..]) {
            *x *= scale;
            *v = *x;
        }
        reflect(v, taus[j], right);
        rank += 1;
    }
    rank
}

/// `y ← (I − τ v vᵀ) y` for every column `y` (of `v`'s length) of the column-major
/// `columns`. At [`FIXED_ROWS`] rows the loops have a constant length and compile to
/// straight-line packed arithmetic (the same operations in the same order as at any other
/// length), `v` kept in registers from column to column.
fn reflect(v: &[f64], tau: f64, columns: &mut [f64]) {
    if let Ok(v) = <&[f64; FIXED_ROWS]>::try_from(v) {
        for y in columns.as_chunks_mut::<FIXED_ROWS>().0 {
            reflect_slices(v, tau, y);
        }
    } else if !v.is_empty() {
        for y in columns.chunks_exact_mut(v.len()) {
            reflect_slices(v, tau, y);
        }
    }
}

/// [`reflect`]'s arithmetic on one column: `s = τ ⟨v, y⟩`, `y ← y − s v`.
#[inline(always)]
fn reflect_slices(v: &[f64], tau: f64, y: &mut [f64]) {
    let s = tau * dot(v, y);
    subtract_scaled(y, s, v);
}

/// `Σ a_i b_i` over the shorter length, in four partial sums by index mod 4 added as
/// `(s_0 + s_2) + (s_1 + s_3)` (two packed pairs), then the last `len mod 4` terms in
/// turn: packed arithmetic without bounds checks, in a fixed order (the same bits on
/// every run). The sums start at `−0.0`, the identity of `+`.
#[inline(always)]
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a4, a_tail) = a[..n].as_chunks::<4>();
    let (b4, b_tail) = b[..n].as_chunks::<4>();
    let mut s = [-0.0; 4];
    for (x, y) in a4.iter().zip(b4) {
        for ((s, x), y) in s.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    let pairs = (s[0] + s[2]) + (s[1] + s[3]);
    a_tail
        .iter()
        .zip(b_tail)
        .fold(pairs, |sum, (x, y)| sum + x * y)
}

/// `y ← y − s x` over the shorter length, four entries at a time.
#[inline(always)]
fn subtract_scaled(y: &mut [f64], s: f64, x: &[f64]) {
    let n = y.len().min(x.len());
    let (y4, y_tail) = y[..n].as_chunks_mut::<4>();
    let (x4, x_tail) = x[..n].as_chunks::<4>();
    for (y, x) in y4.iter_mut().zip(x4) {
        for (y, x) in y.iter_mut().zip(x) {
            *y -= s * x;
        }
    }
    y_tail.iter_mut().zip(x_tail).for_each(|(y, x)| *y -= s * x);
}

/// `y ← Qᵀ y` with the first `rank` reflectors of a [`householder_qr`] factor (`m = y.len()`
/// rows).
pub(super) fn apply_transpose(reflectors: &[f64], taus: &[f64], rank: usize, y: &mut [f64]) {
    let m = y.len();
    if m == 0 {
        return;
    }
    for (v, tau) in reflectors.chunks_exact(m).zip(taus).take(rank) {
        reflect(v, *tau, y);
    }
}

/// `y ← Q y` with the first `rank` reflectors of a [`householder_qr`] factor.
pub(super) fn apply(reflectors: &[f64], taus: &[f64], rank: usize, y: &mut [f64]) {
    let m = y.len();
    if m == 0 {
        return;
    }
    for (v, tau) in reflectors.chunks_exact(m).zip(taus).take(rank).rev() {
        reflect(v, *tau, y);
    }
}
