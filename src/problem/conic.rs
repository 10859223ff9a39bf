//! The one translation to clarabel (interior point), used by ccp-ipm, lcp-qp, the
//! sub-problems of the staggered projections and the internal-force metric.
//!
//! A convex QP `min ½ xᵀ P x + qᵀ x` whose variables are split into consecutive blocks,
//! each constrained on its own (friction cone, pyramid, `x ≥ 0`, disk, box). Clarabel's
//! form is `A x + s = b`, `s ∈ K`; each block adds its rows to `A` and its cones to `K`.
//! A friction cone `‖x_T‖ ≤ μ x_N` becomes the second-order cone on `s = (μ x_N, x_T)`.
//!
//! Clarabel's tolerances are partly absolute, so the QP is made dimensionless before it is
//! handed over: with `v = ‖q‖∞` (a velocity) and `a = v / max|P|` (an impulse),
//! `x = a x̃` and the QP in `x̃` has `P̃ = P / max|P|`, `q̃ = q / v` and the radii of
//! disks and boxes divided by `a`. The answer, and clarabel's iterations, are then the
//! same in any units (docs/ruler.md).
//!
//! **Infeasibility is checked, not taken on trust.** Every QP here is feasible (`x = 0`
//! lies in every block), so the only possible certificate is of unboundedness: a
//! direction `d` in the blocks' recession cones with `P d = 0` and `qᵀd < 0`. Contact
//! problems often have an *unbounded set of minimizers* instead: internal forces `d`
//! (`G d = 0`) in the cones that cost nothing (`gᵀd = 0` whenever `g = J v`), along which
//! clarabel's homogeneous embedding runs off and, at its tolerances, calls the problem
//! (almost) dual infeasible. So a claim of infeasibility is kept only when its
//! certificate passes [`certifies_unbounded`] on the dimensionless data (a descent
//! direction in the cones without the curvature to stop it before 1e12 times the QP's
//! scale); otherwise clarabel runs again without its infeasibility test, towards the
//! minimizer, and the callers' own criteria judge the answer.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use std::time::Instant;

use nalgebra::{DMatrix, DVector};

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
#[derive(Default, Clone)]
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

/// A conic program `min ½ zᵀ P z + qᵀ z` subject to constraints added one by one, each
/// on affine functions `b − aᵀ z` of the variables (clarabel's `A z + s = b`, `s ∈ K`).
/// Used where the blocks of [`solve_conic_qp`] do not fit (the internal-force metric).
#[derive(Default)]
pub(crate) struct ConicProgram {
    constraints: Constraints,
}

impl ConicProgram {
    /// `(b_0 − a_0ᵀz, b_1 − a_1ᵀz, …)` in the second-order cone
    /// (`‖(s_1, …)‖ ≤ s_0`); `rows` are `(a_k, b_k)` with dense `a_k`.
    pub(crate) fn second_order(&mut self, rows: &[(DVector<f64>, f64)]) {
        for (a, b) in rows {
            self.affine_row(a, *b);
        }
        self.constraints
            .cones
            .push(SupportedConeT::SecondOrderConeT(rows.len()));
    }

    /// `b − aᵀz ≥ 0`.
    pub(crate) fn nonnegative(&mut self, a: &DVector<f64>, b: f64) {
        self.affine_row(a, b);
        self.constraints
            .cones
            .push(SupportedConeT::NonnegativeConeT(1));
    }

    fn affine_row(&mut self, a: &DVector<f64>, b: f64) {
        let entries: Vec<(usize, f64)> = a
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(j, v)| (j, *v))
            .collect();
        self.constraints.row(&entries, b);
    }

    /// Solves the program with the given (already dimensionless) data and limits.
    pub(crate) fn solve(
        self,
        p: &DMatrix<f64>,
        q: &DVector<f64>,
        limits: ConicLimits,
    ) -> Result<ConicSolution, String> {
        run_clarabel(p, q, self.constraints, limits)
    }
}

/// Upper triangle of a dense symmetric matrix, as clarabel's `P`, column by column (the
/// entries come out in clarabel's order: no sorting of triplets, which took 0.9 s for a
/// 3000 × 3000 matrix).
fn upper_triangle_csc(p: &DMatrix<f64>) -> CscMatrix<f64> {
    let n = p.nrows();
    let (mut colptr, mut rowval, mut nzval) = (Vec::with_capacity(n + 1), Vec::new(), Vec::new());
    colptr.push(0);
    for j in 0..n {
        for i in 0..=j {
            let v = p[(i, j)];
            if v != 0.0 {
                rowval.push(i);
                nzval.push(v);
            }
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(n, n, colptr, rowval, nzval)
}

/// The unit scaling of the module doc: `(a, v)`, 1 where `P` or `q` vanishes.
fn unit_scaling(p: &DMatrix<f64>, q: &DVector<f64>) -> (f64, f64) {
    let (p_max, v) = (p.amax(), q.amax());
    if p_max > 0.0 && v > 0.0 && (v / p_max).is_finite() && v / p_max > 0.0 {
        (v / p_max, v)
    } else {
        (1.0, 1.0)
    }
}

/// A block with its radius (disk, box) divided by the impulse scale `a`.
fn scaled_block(block: Block, a: f64) -> Block {
    match block {
        Block::Disk(r) => Block::Disk(r / a),
        Block::Box(r) => Block::Box(r / a),
        other => other,
    }
}

/// Limits of one clarabel call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConicLimits {
    /// Gap and feasibility tolerance (of the dimensionless QP).
    pub(crate) tolerance: f64,
    /// Interior-point iteration cap.
    pub(crate) max_iter: usize,
    /// Wall-time cap (s), if any.
    pub(crate) time_limit: Option<f64>,
}

/// Solves `min ½ xᵀ P x + qᵀ x` with `x` split into `blocks`, made dimensionless as in the
/// module doc, within `limits`; a claim of infeasibility is checked on its certificate and
/// otherwise the QP is solved again with a proximal term (module doc). Errors (as text)
/// when clarabel refuses the data.
pub(crate) fn solve_conic_qp(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    blocks: &[Block],
    limits: ConicLimits,
) -> Result<ConicSolution, String> {
    let start = Instant::now();
    let n = q.len();
    let (impulse, velocity) = unit_scaling(p, q);
    let p = p * (impulse / velocity);
    let q = q / velocity;
    let mut constraints = Constraints::default();
    let mut first = 0;
    for block in blocks {
        constraints.add(scaled_block(*block, impulse), first);
        first += block.size();
    }
    if first != n {
        return Err(format!("blocks cover {first} variables, the QP has {n}"));
    }
    let mut solution = run_clarabel(&p, &q, constraints.clone(), remaining(limits, start))?;
    if claims_infeasibility(solution.status)
        && !(solution.status == SolverStatus::DualInfeasible
            && certifies_unbounded(&p, &q, blocks, &solution.x))
    {
        let first_iterations = solution.iterations;
        solution = run_clarabel_to_a_minimizer(&p, &q, constraints, remaining(limits, start))?;
        solution.iterations += first_iterations;
    }
    solution.x *= impulse;
    Ok(solution)
}

/// `limits` with the time limit less the time elapsed since `start`.
fn remaining(limits: ConicLimits, start: Instant) -> ConicLimits {
    ConicLimits {
        time_limit: limits
            .time_limit
            .map(|t| (t - start.elapsed().as_secs_f64()).max(0.0)),
        ..limits
    }
}

/// True for clarabel's four infeasibility statuses (full or reduced accuracy).
fn claims_infeasibility(status: SolverStatus) -> bool {
    matches!(
        status,
        SolverStatus::PrimalInfeasible
            | SolverStatus::DualInfeasible
            | SolverStatus::AlmostPrimalInfeasible
            | SolverStatus::AlmostDualInfeasible
    )
}

/// Curvature, relative to the descent, below which a direction is taken as unbounded:
/// along a direction `d` of the dimensionless QP the cost `½t²dᵀPd + t qᵀd` is least at
/// `t = |qᵀd| / dᵀPd`; a certificate must put that minimum beyond `1 / NULL_CURVATURE`
/// = 1e12 times the QP's own scale (measured: clarabel's certificates of truly unbounded
/// random problems have `dᵀPd` of 1e-16..5e-15 for `|qᵀd|` of 0.2..0.7; ill-conditioned
/// but bounded ones, whose minimizer exists at 1e9..1e10, have 1e-11..1e-9).
const NULL_CURVATURE: f64 = 1e-12;

/// Margin of a certificate of unboundedness (dimensionless data, direction scaled to
/// `‖d‖∞ = 1`): its distance to the blocks' recession cones at most this, its descent
/// `qᵀd` at most minus this.
const CERTIFICATE_MARGIN: f64 = 1e-6;

/// True when `x` proves `min ½ xᵀ P x + qᵀ x` over `blocks` unbounded below (`P`, `q`
/// dimensionless, largest entries 1): with `d = x / ‖x‖∞`, `d` within
/// [`CERTIFICATE_MARGIN`] of every block's recession cone (a disk or a box has none: `d`
/// must vanish there), descending (`qᵀd ≤ −margin`) and without curvature to stop the
/// descent before 1e12 (`dᵀPd ≤ NULL_CURVATURE |qᵀd|`). Clarabel's own test bounds
/// `‖P x‖` relative to `qᵀx` and `‖x‖`, which a direction of small positive curvature
/// meets as `x` grows, although the QP then has a minimizer.
fn certifies_unbounded(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    blocks: &[Block],
    x: &DVector<f64>,
) -> bool {
    let size = x.amax();
    if !(size.is_finite() && size > 0.0) {
        return false;
    }
    let d = x / size;
    let mut first = 0;
    let mut in_cones = true;
    for block in blocks {
        in_cones &= recession_violation(*block, &d.as_slice()[first..first + block.size()])
            <= CERTIFICATE_MARGIN;
        first += block.size();
    }
    let descent = q.dot(&d);
    in_cones && descent <= -CERTIFICATE_MARGIN && d.dot(&(p * &d)) <= -NULL_CURVATURE * descent
}

/// How far `d` (one block's variables) is from the block's recession cone.
fn recession_violation(block: Block, d: &[f64]) -> f64 {
    match block {
        Block::IceCream(mu) => (d[0].hypot(d[1]) - mu * d[2]).max(-d[2]).max(0.0),
        Block::Pyramid(mu) => (d[0].abs().max(d[1].abs()) - mu * d[2]).max(-d[2]).max(0.0),
        Block::Nonnegative => (-d[0]).max(0.0),
        Block::Disk(_) | Block::Box(_) => d[0].abs().max(d[1].abs()),
    }
}

/// Clarabel on `min ½ xᵀ P x + qᵀ x`, `A x + s = b`, `s ∈ K` as built in `constraints`.
fn run_clarabel(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    constraints: Constraints,
    limits: ConicLimits,
) -> Result<ConicSolution, String> {
    run_clarabel_with(p, q, constraints, limits, DefaultSettings::default())
}

/// [`run_clarabel`] without clarabel's infeasibility test, for a QP whose claimed
/// certificate failed [`certifies_unbounded`]: clarabel goes on towards the minimizer (or
/// stops at its iteration cap, or on insufficient progress).
fn run_clarabel_to_a_minimizer(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    constraints: Constraints,
    limits: ConicLimits,
) -> Result<ConicSolution, String> {
    let no_infeasibility_test = DefaultSettings {
        tol_infeas_abs: f64::MAX,
        reduced_tol_infeas_abs: f64::MAX,
        ..DefaultSettings::default()
    };
    run_clarabel_with(p, q, constraints, limits, no_infeasibility_test)
}

/// Clarabel with `base` settings, `limits` on top.
fn run_clarabel_with(
    p: &DMatrix<f64>,
    q: &DVector<f64>,
    constraints: Constraints,
    limits: ConicLimits,
    base: DefaultSettings<f64>,
) -> Result<ConicSolution, String> {
    let start = Instant::now();
    let n = q.len();
    let a = CscMatrix::new_from_triplets(
        constraints.b.len(),
        n,
        constraints.rows,
        constraints.cols,
        constraints.values,
    );
    let settings = DefaultSettings {
        verbose: false,
        max_iter: u32::try_from(limits.max_iter).unwrap_or(u32::MAX),
        time_limit: limits.time_limit.unwrap_or(f64::INFINITY),
        tol_gap_abs: limits.tolerance,
        tol_gap_rel: limits.tolerance,
        tol_feas: limits.tolerance,
        ..base
    };
    let p = upper_triangle_csc(p);
    let q = q.as_slice().to_vec();
    let Constraints { b, cones, .. } = constraints;
    let run = move || -> Result<ConicSolution, String> {
        let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
            .map_err(|e| format!("clarabel refused the problem: {e}"))?;
        solver.solve();
        Ok(ConicSolution {
            x: DVector::from_vec(solver.solution.x.clone()),
            status: solver.solution.status,
            iterations: solver.solution.iterations,
        })
    };
    match remaining(limits, start).time_limit {
        Some(t) if t <= 0.0 => Ok(out_of_time(n)),
        Some(t) if n >= WATCHED_VARIABLES => watched(run, t, n),
        _ => run(),
    }
}

/// From this many variables a clarabel call with a time limit runs on a thread of its
/// own that the caller stops waiting for at the limit ([`watched`]). Clarabel checks its
/// time limit once per iteration, after the factorization of its dense KKT system, and
/// its set-up and first factorization happen before any check: measured on random
/// problems (test profile), 10 ms per factorization at 300 variables, 90 ms at 600,
/// 0.8 s at 1200 and 12 s at 3000 (ccp-ipm on 1000 contacts with max_time = 1 s
/// returned after 14 s).
const WATCHED_VARIABLES: usize = 300;

/// The answer of a clarabel call that had no time left: clarabel's `MaxTime`, no
/// iteration, zero forces.
fn out_of_time(n: usize) -> ConicSolution {
    ConicSolution {
        x: DVector::zeros(n),
        status: SolverStatus::MaxTime,
        iterations: 0,
    }
}

/// Runs `run` on a thread of its own and waits for it at most `time_limit` seconds; past
/// that, answers [`out_of_time`] at once. The thread is left to finish on its own:
/// clarabel stops at its next check of the same time limit, after the factorization it
/// is in, and its answer is dropped.
fn watched(
    run: impl FnOnce() -> Result<ConicSolution, String> + Send + 'static,
    time_limit: f64,
    n: usize,
) -> Result<ConicSolution, String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("clarabel".into())
        .spawn(move || {
            // The receiver is gone when the caller stopped waiting: nothing to tell.
            let _ = sender.send(run());
        })
        .map_err(|e| format!("could not start clarabel's thread: {e}"))?;
    let wait =
        std::time::Duration::try_from_secs_f64(time_limit).unwrap_or(std::time::Duration::MAX);
    match receiver.recv_timeout(wait) {
        Ok(answer) => answer,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Ok(out_of_time(n)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err("clarabel's thread ended without an answer (it panicked)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ConicLimits {
        ConicLimits {
            tolerance: 1e-10,
            max_iter: 100,
            time_limit: None,
        }
    }

    #[test]
    fn answers_do_not_depend_on_units() {
        // The same QP with the impulse unit changed by 1e3 (P / 1e3) has the answer × 1e3
        // and clarabel takes the same iterations.
        let p = DMatrix::from_row_slice(3, 3, &[2.0, 0.3, 0.1, 0.3, 1.5, 0.2, 0.1, 0.2, 1.0]);
        let q = DVector::from_vec(vec![0.4, -0.2, -1.0]);
        let blocks = [Block::IceCream(0.3)];
        let (Ok(a), Ok(b)) = (
            solve_conic_qp(&p, &q, &blocks, limits()),
            solve_conic_qp(&(&p * 1e-3), &q, &blocks, limits()),
        ) else {
            panic!("clarabel ran")
        };
        assert_eq!(a.iterations, b.iterations);
        assert!((&a.x * 1e3 - &b.x).amax() <= 1e-9 * b.x.amax());
    }

    #[test]
    fn friction_cone_qp_lands_on_the_boundary() {
        // min ½‖x‖² − (2, 0, 1)ᵀx over K_0.5: the projection of (2, 0, 1) on the cone.
        let p = DMatrix::identity(3, 3);
        let q = DVector::from_vec(vec![-2.0, 0.0, -1.0]);
        let sol = solve_conic_qp(&p, &q, &[Block::IceCream(0.5)], limits());
        let Ok(sol) = sol else { panic!("clarabel ran") };
        assert!(matches!(
            sol.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        ));
        // Boundary ray (0.5, 0, 1) s with s = (0.5·2 + 1)/1.25 = 1.6.
        assert!((sol.x[0] - 0.8).abs() < 1e-6 && (sol.x[2] - 1.6).abs() < 1e-6);
    }

    #[test]
    fn box_and_disk_blocks_clip() {
        let p = DMatrix::identity(4, 4);
        let q = DVector::from_vec(vec![-3.0, -4.0, -3.0, -4.0]);
        let blocks = [Block::Disk(1.0), Block::Box(1.0)];
        let Ok(sol) = solve_conic_qp(&p, &q, &blocks, limits()) else {
            panic!("clarabel ran")
        };
        assert!((sol.x[0] - 0.6).abs() < 1e-6 && (sol.x[1] - 0.8).abs() < 1e-6);
        assert!((sol.x[2] - 1.0).abs() < 1e-6 && (sol.x[3] - 1.0).abs() < 1e-6);
    }
}
