//! The one translation to clarabel (interior point), used by ccp-ipm, lcp-qp and the
//! sub-problems of the staggered projections.
//!
//! A convex QP `min ½ xᵀ P x + qᵀ x` whose variables are split into consecutive blocks,
//! each constrained on its own (friction cone, pyramid, `x ≥ 0`, disk, box). Clarabel's
//! form is `A x + s = b`, `s ∈ K`; each block adds its rows to `A` and its cones to `K`.
//! A friction cone `‖x_T‖ ≤ μ x_N` becomes the second-order cone on `s = (μ x_N, x_T)`.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use nalgebra::{DMatrix, DVector};

use super::SolveStatus;

/// A block of consecutive variables and the set it must lie in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Block {
    /// Three variables `(t1, t2, n)` in the friction cone `K_μ`.
    IceCream(f64),
    /// Three variables `(t1, t2, n)` in the pyramid `‖x_T‖_∞ ≤ μ x_N`.
    Pyramid(f64),
    /// One variable, `x ≥ 0`.
    Nonnegative,
    /// Two variables in the disk `‖x‖₂ ≤ r`.
    Disk(f64),
    /// Two variables in the box `‖x‖_∞ ≤ r`.
    Box(f64),
}

impl Block {
    /// Number of variables of the block.
    fn size(&self) -> usize {
        match self {
            Block::IceCream(_) | Block::Pyramid(_) => 3,
            Block::Nonnegative => 1,
            Block::Disk(_) | Block::Box(_) => 2,
        }
    }
}

/// Clarabel's answer.
#[derive(Debug, Clone)]
pub(crate) struct ConicSolution {
    /// The minimizer (clarabel's last iterate when not solved).
    pub(crate) x: DVector<f64>,
    /// Clarabel's status.
    pub(crate) status: SolverStatus,
    /// Interior-point iterations.
    pub(crate) iterations: u32,
}

/// Constraint rows `(A, b)` as triplets plus cones, built block by block.
#[derive(Default)]
struct Constraints {
    rows: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
    b: Vec<f64>,
    cones: Vec<SupportedConeT<f64>>,
}

impl Constraints {
    /// Adds one row `Σ a_k x_{col_k} + s = b`.
    fn row(&mut self, entries: &[(usize, f64)], b: f64) {
        let r = self.b.len();
        for &(col, value) in entries {
            self.rows.push(r);
            self.cols.push(col);
            self.values.push(value);
        }
        self.b.push(b);
    }

    /// `x_{t1} = x_{t2} = 0` (zero cone on `s = −x`).
    fn zero_pair(&mut self, t1: usize, t2: usize) {
        self.row(&[(t1, 1.0)], 0.0);
        self.row(&[(t2, 1.0)], 0.0);
        self.cones.push(SupportedConeT::ZeroConeT(2));
    }

    /// `x_col ≥ 0` (non-negative cone on `s = x`).
    fn nonnegative(&mut self, col: usize) {
        self.row(&[(col, -1.0)], 0.0);
        self.cones.push(SupportedConeT::NonnegativeConeT(1));
    }

    fn add(&mut self, block: Block, first: usize) {
        let (t1, t2, n) = (first, first + 1, first + 2);
        match block {
            Block::IceCream(mu) | Block::Pyramid(mu) if mu == 0.0 => {
                self.zero_pair(t1, t2);
                self.nonnegative(n);
            }
            Block::IceCream(mu) => {
                // s = (μ x_N, x_T1, x_T2) in the second-order cone.
                self.row(&[(n, -mu)], 0.0);
                self.row(&[(t1, -1.0)], 0.0);
                self.row(&[(t2, -1.0)], 0.0);
                self.cones.push(SupportedConeT::SecondOrderConeT(3));
            }
            Block::Pyramid(mu) => {
                // μ x_N ∓ x_Tk ≥ 0 for both tangents, and x_N ≥ 0.
                for t in [t1, t2] {
                    self.row(&[(t, 1.0), (n, -mu)], 0.0);
                    self.row(&[(t, -1.0), (n, -mu)], 0.0);
                }
                self.row(&[(n, -1.0)], 0.0);
                self.cones.push(SupportedConeT::NonnegativeConeT(5));
            }
            Block::Nonnegative => self.nonnegative(first),
            Block::Disk(r) | Block::Box(r) if r <= 0.0 => self.zero_pair(first, first + 1),
            Block::Disk(r) => {
                // s = (r, x_1, x_2) in the second-order cone.
                self.row(&[], r);
                self.row(&[(first, -1.0)], 0.0);
                self.row(&[(first + 1, -1.0)], 0.0);
                self.cones.push(SupportedConeT::SecondOrderConeT(3));
            }
            Block::Box(r) => {
                for t in [first, first + 1] {
                    self.row(&[(t, 1.0)], r);
                    self.row(&[(t, -1.0)], r);
                }
                self.cones.push(SupportedConeT::NonnegativeConeT(4));
            }
        }
    }
}

/// Upper triangle of a dense symmetric matrix, as clarabel's `P`.
fn upper_triangle_csc(p: &DMatrix<f64>) -> CscMatrix<f64> {
    let n = p.nrows();
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..n {
        for i in 0..=j {
            let v = p[(i, j)];
            if v != 0.0 {
                rows.push(i);
                cols.push(j);
                values.push(v);
            }
        }
    }
    CscMatrix::new_from_triplets(n, n, rows, cols, values)
}

/// Solves `min ½ xᵀ P x + qᵀ x` with `x` split into `blocks`, to clarabel's gap and
/// feasibility tolerance `tolerance`, in at most `max_iter` interior-point iterations.
/// Errors (as text) when clarabel refuses the data.
pub(crate) fn solve_conic_qp(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    blocks: &[Block],
    tolerance: f64,
    max_iter: usize,
) -> Result<ConicSolution, String> {
    let n = q.len();
    let mut constraints = Constraints::default();
    let mut first = 0;
    for block in blocks {
        constraints.add(*block, first);
        first += block.size();
    }
    if first != n {
        return Err(format!("blocks cover {first} variables, the QP has {n}"));
    }
    let a = CscMatrix::new_from_triplets(
        constraints.b.len(),
        n,
        constraints.rows,
        constraints.cols,
        constraints.values,
    );
    let settings = DefaultSettings {
        verbose: false,
        max_iter: u32::try_from(max_iter).unwrap_or(u32::MAX),
        tol_gap_abs: tolerance,
        tol_gap_rel: tolerance,
        tol_feas: tolerance,
        ..DefaultSettings::default()
    };
    let mut solver = DefaultSolver::new(
        &upper_triangle_csc(p),
        q.as_slice(),
        &a,
        &constraints.b,
        &constraints.cones,
        settings,
    )
    .map_err(|e| format!("clarabel refused the problem: {e}"))?;
    solver.solve();
    Ok(ConicSolution {
        x: DVector::from_vec(solver.solution.x.clone()),
        status: solver.solution.status,
        iterations: solver.solution.iterations,
    })
}

/// Clarabel's status as a [`SolveStatus`]: `None` when solved (the caller then checks
/// its own residual), else `MaxIterations` or `Failed` with clarabel's reason.
pub(crate) fn unsolved_status(status: SolverStatus) -> Option<SolveStatus> {
    match status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => None,
        SolverStatus::MaxIterations => Some(SolveStatus::MaxIterations),
        other => Some(SolveStatus::Failed(format!("clarabel: {other:?}"))),
    }
}

/// Clarabel's gap/feasibility tolerance for a target `eps_abs` on the model residual:
/// a thousandth of it, kept within `[1e-12, 1e-8]` (clarabel's default is `1e-8`).
pub(crate) fn interior_point_tolerance(eps_abs: f64) -> f64 {
    (1e-3 * eps_abs).clamp(1e-12, 1e-8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friction_cone_qp_lands_on_the_boundary() {
        // min ½‖x‖² − (2, 0, 1)ᵀx over K_0.5: the projection of (2, 0, 1) on the cone.
        let p = DMatrix::identity(3, 3);
        let q = DVector::from_vec(vec![-2.0, 0.0, -1.0]);
        let sol = solve_conic_qp(&p, &q, &[Block::IceCream(0.5)], 1e-10, 100);
        let Ok(sol) = sol else { panic!("clarabel ran") };
        assert!(unsolved_status(sol.status).is_none());
        // Boundary ray (0.5, 0, 1) s with s = (0.5·2 + 1)/1.25 = 1.6.
        assert!((sol.x[0] - 0.8).abs() < 1e-6 && (sol.x[2] - 1.6).abs() < 1e-6);
    }

    #[test]
    fn box_and_disk_blocks_clip() {
        let p = DMatrix::identity(4, 4);
        let q = DVector::from_vec(vec![-3.0, -4.0, -3.0, -4.0]);
        let blocks = [Block::Disk(1.0), Block::Box(1.0)];
        let Ok(sol) = solve_conic_qp(&p, &q, &blocks, 1e-10, 100) else {
            panic!("clarabel ran")
        };
        assert!((sol.x[0] - 0.6).abs() < 1e-6 && (sol.x[1] - 0.8).abs() < 1e-6);
        assert!((sol.x[2] - 1.0).abs() < 1e-6 && (sol.x[3] - 1.0).abs() < 1e-6);
    }
}
