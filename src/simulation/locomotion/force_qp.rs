//! The trot's stance force QP: for feet at lever arms `r_i` from the base, with surface
//! normals `n_i`,
//!
//! `min_f ‖A f − w‖²_W + ε‖f‖²`, `A = [I₃ …; [r_i]× …]`, `W = diag(1, 1, 1, 10, 10, 10)`,
//! subject to `|t₁·f_i|, |t₂·f_i| ≤ μ n_i·f_i` and `f_min ≤ n_i·f_i ≤ f_max`,
//!
//! solved by the dual active-set method of [`active_set`](super::active_set) (exact, a
//! few microseconds for 12 variables), with clarabel's interior point as its fallback
//! when it does not finish, or by clarabel alone (`actuation.trot.force_qp`).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use super::active_set::{ActiveSetError, DenseQp, DualActiveSet};

/// Which solver distributes the stance forces (`actuation.trot.force_qp`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForceQpSolver {
    /// Goldfarb and Idnani's dual active-set method, clarabel when it does not finish.
    #[default]
    ActiveSet,
    /// clarabel's interior point alone.
    Clarabel,
}

/// Weights of the wrench error: force rows 1, torque rows 10.
const FORCE_WEIGHT: f64 = 1.0;
const TORQUE_WEIGHT: f64 = 10.0;
/// The QP's regularization `ε` of `‖f‖²`.
const FORCE_REGULARIZATION: f64 = 1e-4;
/// Rows of `G f ≤ h` per stance foot (normal `n`, tangents `t₁, t₂`):
/// `±t₁·f − μ n·f ≤ 0`, `±t₂·f − μ n·f ≤ 0` (the friction pyramid on the surface),
/// `−n·f ≤ −f_min`, `n·f ≤ f_max`.
pub const ROWS_PER_FOOT: usize = 6;
/// Changes of the active set before the active-set method gives way to clarabel (a
/// stance QP of the trot takes at most 12, `cargo test --test simulation force_qp`).
const ACTIVE_SET_CHANGES: usize = 60;

/// One tick's stance QP (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct StanceProblem {
    /// Lever arms `r_i` of the stance feet from the base (m, world axes).
    pub arms: Vec<Vector3<f64>>,
    /// Unit surface normals `n_i` under the feet.
    pub normals: Vec<Vector3<f64>>,
    /// The wrench `w` asked of the feet (N, N·m).
    pub wrench: [f64; 6],
    /// The controller's friction coefficient `μ`.
    pub friction: f64,
    /// `[f_min, f_max]` (N).
    pub normal_force: [f64; 2],
}

impl StanceProblem {
    /// Variables: three force components per foot.
    pub fn variables(&self) -> usize {
        3 * self.arms.len()
    }

    /// `½ fᵀ H f + cᵀ f` equal to the objective up to a constant: `H = 2 (Aᵀ W A + ε I)`,
    /// `c = −2 Aᵀ W w` (`H` row-major).
    pub fn objective(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.variables();
        let force = Vector3::new(self.wrench[0], self.wrench[1], self.wrench[2]);
        let torque = Vector3::new(self.wrench[3], self.wrench[4], self.wrench[5]);
        let mut h = vec![0.0; n * n];
        for (i, ri) in self.arms.iter().enumerate() {
            for (j, rj) in self.arms.iter().enumerate() {
                // Block (i, j) of Aᵀ W A: W_f I + W_τ [r_i]×ᵀ [r_j]×.
                let mut block = ri.cross_matrix().transpose() * rj.cross_matrix() * TORQUE_WEIGHT;
                for d in 0..3 {
                    block[(d, d)] += FORCE_WEIGHT + if i == j { FORCE_REGULARIZATION } else { 0.0 };
                }
                for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
                    h[(3 * i + a) * n + 3 * j + b] = 2.0 * block[(a, b)];
                }
            }
        }
        let c = self
            .arms
            .iter()
            .flat_map(|r| {
                let row =
                    force * FORCE_WEIGHT + r.cross_matrix().transpose() * torque * TORQUE_WEIGHT;
                [-2.0 * row.x, -2.0 * row.y, -2.0 * row.z]
            })
            .collect();
        (h, c)
    }

    /// `G` (row-major, [`ROWS_PER_FOOT`] rows per foot, each touching its foot's three
    /// forces only) and `h`.
    pub fn constraints(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.variables();
        let mu = self.friction;
        let [lo, hi] = self.normal_force;
        let mut g = vec![0.0; ROWS_PER_FOOT * self.arms.len() * n];
        for (i, normal) in self.normals.iter().enumerate() {
            let (t1, t2) = tangents(normal);
            let rows = [
                t1 - normal * mu,
                -t1 - normal * mu,
                t2 - normal * mu,
                -t2 - normal * mu,
                -normal,
                *normal,
            ];
            for (k, row) in rows.iter().enumerate() {
                let start = (ROWS_PER_FOOT * i + k) * n + 3 * i;
                g[start..start + 3].copy_from_slice(row.as_slice());
            }
        }
        let h = (0..self.arms.len())
            .flat_map(|_| [0.0, 0.0, 0.0, 0.0, -lo, hi])
            .collect();
        (g, h)
    }
}

/// Tangents `t₁, t₂` of a surface with unit normal `n`: `t₁` along `x` projected on the
/// surface, `t₂ = n × t₁`.
pub fn tangents(normal: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let t1 = (Vector3::x() - normal * normal.x).normalize();
    (t1, normal.cross(&t1))
}

/// The stance QP's solvers: the active-set method's buffers and clarabel's solvers, one
/// per number of stance feet, built at the first tick with that many feet, then updated
/// in place (`P`, `q` and the pyramid rows change; the pattern does not). Updating gives
/// the same solution as a fresh solver: clarabel starts every solve from its default
/// point, and equilibration, presolve and zero dropping are off, so the stored problem is
/// the one given. A clone starts empty and builds its solvers again.
pub struct ForceQp {
    choice: ForceQpSolver,
    active_set: DualActiveSet,
    solvers: Vec<(usize, DefaultSolver<f64>)>,
    fallbacks: usize,
    max_changes: usize,
}

impl Clone for ForceQp {
    fn clone(&self) -> Self {
        Self::new(self.choice).with_change_cap(self.max_changes)
    }
}

impl std::fmt::Debug for ForceQp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let feet: Vec<usize> = self.solvers.iter().map(|(n, _)| *n).collect();
        f.debug_struct("ForceQp")
            .field("choice", &self.choice)
            .field("clarabel_stance_feet", &feet)
            .field("fallbacks", &self.fallbacks)
            .finish()
    }
}

impl ForceQp {
    /// Solvers for `choice`, built at their first use.
    pub fn new(choice: ForceQpSolver) -> Self {
        Self {
            choice,
            active_set: DualActiveSet::default(),
            solvers: Vec::new(),
            fallbacks: 0,
            max_changes: ACTIVE_SET_CHANGES,
        }
    }

    /// The same solvers with the active-set method capped at `max_changes` changes of its
    /// active set.
    pub fn with_change_cap(mut self, max_changes: usize) -> Self {
        self.max_changes = max_changes;
        self
    }

    /// The stance forces of `problem` by the chosen solver (module docs), `None` when
    /// neither solves it.
    pub fn solve(&mut self, problem: &StanceProblem) -> Option<Vec<Vector3<f64>>> {
        if problem.arms.is_empty() {
            return Some(Vec::new());
        }
        if self.choice == ForceQpSolver::ActiveSet {
            if let Ok((forces, _)) = self.solve_active_set(problem) {
                return Some(forces);
            }
            self.fallbacks += 1;
        }
        self.solve_clarabel(problem)
    }

    /// How many solves the active-set method handed to clarabel.
    pub fn fallbacks(&self) -> usize {
        self.fallbacks
    }

    /// The forces by the dual active-set method and the multipliers of `G f ≤ h`'s rows
    /// (of [`StanceProblem::constraints`], for `½ fᵀ H f + cᵀ f` of
    /// [`StanceProblem::objective`]).
    pub fn solve_active_set(
        &mut self,
        problem: &StanceProblem,
    ) -> Result<(Vec<Vector3<f64>>, Vec<f64>), ActiveSetError> {
        let max_changes = self.max_changes;
        if problem.normals.len() != problem.arms.len() {
            return Err(ActiveSetError::Malformed);
        }
        let (h_matrix, c) = problem.objective();
        let (g, bound) = problem.constraints();
        let qp = DenseQp {
            n: problem.variables(),
            h_matrix: &h_matrix,
            c: &c,
            g: &g,
            bound: &bound,
        };
        let (x, multipliers) = self.active_set.solve(&qp, max_changes)?;
        Ok((to_forces(x), multipliers.to_vec()))
    }

    /// The forces by clarabel, `None` when it does not solve the problem.
    pub fn solve_clarabel(&mut self, problem: &StanceProblem) -> Option<Vec<Vector3<f64>>> {
        let feet = problem.arms.len();
        if problem.normals.len() != feet {
            return None;
        }
        let (h_matrix, c) = problem.objective();
        let (g, bound) = problem.constraints();
        let finite = [&h_matrix, &c, &g, &bound]
            .iter()
            .all(|v| v.iter().all(|x| x.is_finite()));
        if !finite {
            return None;
        }
        let p = upper_triangle(&h_matrix, 3 * feet);
        let g = block_columns(&g, feet);
        let solver = match self.solvers.iter().position(|(k, _)| *k == feet) {
            Some(i) => {
                let solver = &mut self.solvers[i].1;
                solver.update_P(&p).ok()?;
                solver.update_q(&c).ok()?;
                solver.update_A(&g).ok()?;
                solver.update_b(&bound).ok()?;
                solver
            }
            None => {
                let solver = new_clarabel(feet, p, &c, g, &bound)?;
                self.solvers.push((feet, solver));
                &mut self.solvers.last_mut()?.1
            }
        };
        solver.solve();
        let solution = &solver.solution;
        matches!(
            solution.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        )
        .then(|| to_forces(&solution.x))
    }
}

fn to_forces(x: &[f64]) -> Vec<Vector3<f64>> {
    x.chunks_exact(3)
        .map(|f| Vector3::new(f[0], f[1], f[2]))
        .collect()
}

/// The upper triangle of the row-major `n × n` `h`, column by column (zeros kept, so the
/// pattern depends on `n` only).
fn upper_triangle(h: &[f64], n: usize) -> Vec<f64> {
    (0..n)
        .flat_map(|c| (0..=c).map(move |r| h[r * n + c]))
        .collect()
}

/// `G`'s values column by column on its block pattern (column `3i + a` holds rows
/// `6i … 6i + 5`), from the row-major `g` of `feet` feet.
fn block_columns(g: &[f64], feet: usize) -> Vec<f64> {
    let n = 3 * feet;
    (0..n)
        .flat_map(|c| {
            let first = ROWS_PER_FOOT * (c / 3);
            (first..first + ROWS_PER_FOOT).map(move |r| g[r * n + c])
        })
        .collect()
}

/// clarabel's settings for a QP of at most 12 variables and 24 constraints, well scaled
/// (forces in N, lever arms in dm): no equilibration, no presolve (it would forbid the
/// updates), no iterative refinement of the KKT solves, gap and feasibility tolerances
/// of 1e-6 (forces to µN), at most 100 iterations.
fn clarabel_settings() -> DefaultSettings<f64> {
    DefaultSettings {
        verbose: false,
        max_iter: 100,
        equilibrate_enable: false,
        presolve_enable: false,
        input_sparse_dropzeros: false,
        iterative_refinement_enable: false,
        tol_gap_abs: 1e-6,
        tol_gap_rel: 1e-6,
        tol_feas: 1e-6,
        ..DefaultSettings::default()
    }
}

/// A clarabel solver for `feet` stance feet: objective `(p, q)` (`p` of
/// [`upper_triangle`]), constraints `G f ≤ h` (`g` of [`block_columns`]).
fn new_clarabel(
    feet: usize,
    p: Vec<f64>,
    q: &[f64],
    g: Vec<f64>,
    bound: &[f64],
) -> Option<DefaultSolver<f64>> {
    let n = 3 * feet;
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for c in 0..n {
        for r in 0..=c {
            rows.push(r);
            cols.push(c);
        }
    }
    let p = CscMatrix::new_from_triplets(n, n, rows, cols, p);
    let m = ROWS_PER_FOOT * feet;
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for c in 0..n {
        let first = ROWS_PER_FOOT * (c / 3);
        rows.extend(first..first + ROWS_PER_FOOT);
        cols.extend([c; ROWS_PER_FOOT]);
    }
    let constraints = CscMatrix::new_from_triplets(m, n, rows, cols, g);
    let cones = [SupportedConeT::NonnegativeConeT(m)];
    DefaultSolver::new(&p, q, &constraints, bound, &cones, clarabel_settings()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two diagonal feet under a base, a wrench holding 2.5 kg up and turning it a little.
    fn two_feet(normals: [Vector3<f64>; 2], wrench: [f64; 6], friction: f64) -> StanceProblem {
        StanceProblem {
            arms: vec![
                Vector3::new(0.19, 0.15, -0.24),
                Vector3::new(-0.19, -0.15, -0.25),
            ],
            normals: normals.to_vec(),
            wrench,
            friction,
            normal_force: [1.0, 40.0],
        }
    }

    fn largest_gap(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_reused_clarabel_solver_gives_the_solution_of_a_fresh_one() {
        let flat = two_feet([Vector3::z(); 2], [0.5, 0.1, 24.0, 0.2, -0.3, 0.05], 0.5);
        let tilted = two_feet(
            [Vector3::new(-0.4, 0.1, 1.0).normalize(), Vector3::z()],
            [-0.3, 0.4, 20.0, -0.1, 0.2, 0.0],
            0.3,
        );
        let mut reused = ForceQp::new(ForceQpSolver::Clarabel);
        assert!(reused.solve(&flat).is_some());
        let again = reused.solve(&tilted);
        let fresh = ForceQp::new(ForceQpSolver::Clarabel).solve(&tilted);
        assert_eq!(reused.solvers.len(), 1, "one solver for two feet");
        assert!(again.is_some());
        assert_eq!(again, fresh);
    }

    #[test]
    fn each_solver_keeps_each_force_in_the_pyramid_on_its_surface() {
        let normals = [
            Vector3::new(-0.45, 0.0, 1.0).normalize(),
            Vector3::new(0.1, 0.2, 1.0).normalize(),
        ];
        let problem = two_feet(normals, [0.5, 0.1, 24.0, 0.2, -0.3, 0.05], 0.3);
        let [lo, hi] = problem.normal_force;
        let mu = problem.friction;
        for choice in [ForceQpSolver::ActiveSet, ForceQpSolver::Clarabel] {
            let mut qp = ForceQp::new(choice);
            let forces = qp.solve(&problem).expect("solved");
            assert_eq!(qp.fallbacks(), 0);
            for (f, n) in forces.iter().zip(&normals) {
                let (t1, t2) = tangents(n);
                let normal = f.dot(n);
                println!(
                    "{choice:?}: normal force {normal:.4} N, tangents {:.4} {:.4} N",
                    f.dot(&t1),
                    f.dot(&t2)
                );
                assert!(normal >= lo - 1e-5 && normal <= hi + 1e-5, "{normal}");
                assert!(f.dot(&t1).abs() <= mu * normal + 1e-5, "{f} on {n}");
                assert!(f.dot(&t2).abs() <= mu * normal + 1e-5, "{f} on {n}");
            }
            // The weight is carried: the vertical forces add up to the asked 24 N within
            // the QP's weighting (the torque rows are weighted 10×, the force rows 1×).
            let vertical: f64 = forces.iter().map(|f| f.z).sum();
            assert!((vertical - 24.0).abs() < 1.0, "{vertical}");
        }
    }

    #[test]
    fn crossed_normal_force_bounds_are_infeasible_for_both_solvers() {
        let mut problem = two_feet([Vector3::z(); 2], [0.0, 0.0, 24.0, 0.0, 0.0, 0.0], 0.5);
        problem.normal_force = [10.0, 5.0];
        let mut qp = ForceQp::new(ForceQpSolver::ActiveSet);
        assert_eq!(
            qp.solve_active_set(&problem).map(|_| ()),
            Err(ActiveSetError::Infeasible)
        );
        assert_eq!(qp.solve(&problem), None);
        assert_eq!(qp.fallbacks(), 1);
    }

    #[test]
    fn a_non_finite_wrench_gives_no_forces_and_no_panic() {
        let problem = two_feet([Vector3::z(); 2], [0.0, f64::NAN, 24.0, 0.0, 0.0, 0.0], 0.5);
        let mut qp = ForceQp::new(ForceQpSolver::ActiveSet);
        assert_eq!(
            qp.solve_active_set(&problem).map(|_| ()),
            Err(ActiveSetError::Malformed)
        );
        let forces = qp.solve(&problem);
        assert!(
            forces
                .as_ref()
                .is_none_or(|f| f.iter().all(|v| v.iter().all(|x| x.is_finite()))),
            "{forces:?}"
        );
        assert_eq!(qp.fallbacks(), 1);
    }

    #[test]
    fn the_active_set_at_its_change_cap_hands_the_problem_to_clarabel() {
        // A sideways push beyond the pyramid: two friction faces and more must be active.
        let problem = two_feet([Vector3::z(); 2], [30.0, 0.0, 20.0, 0.0, 0.0, 1.0], 0.3);
        let mut capped = ForceQp::new(ForceQpSolver::ActiveSet).with_change_cap(1);
        assert_eq!(
            capped.solve_active_set(&problem).map(|_| ()),
            Err(ActiveSetError::IterationCap(1))
        );
        let forces = capped.solve(&problem).expect("clarabel solves it");
        assert_eq!(capped.fallbacks(), 1);
        let clarabel = ForceQp::new(ForceQpSolver::Clarabel)
            .solve(&problem)
            .expect("solved");
        assert_eq!(forces, clarabel);
        let exact = ForceQp::new(ForceQpSolver::ActiveSet)
            .solve(&problem)
            .expect("solved");
        let gap = largest_gap(&exact, &clarabel);
        println!("active set against clarabel (tolerance 1e-6): {gap:.2e} N");
        assert!(gap < 1e-4, "{gap}");
    }

    #[test]
    fn without_friction_the_dependent_pyramid_faces_leave_normal_forces() {
        // μ = 0: the faces `t·f ≤ 0` and `−t·f ≤ 0` are each other's negatives.
        let problem = two_feet([Vector3::z(); 2], [3.0, -2.0, 24.0, 0.2, -0.3, 0.05], 0.0);
        let mut qp = ForceQp::new(ForceQpSolver::ActiveSet);
        let forces = qp.solve(&problem).expect("solved");
        println!(
            "forces without friction: {forces:?}, fallbacks {}",
            qp.fallbacks()
        );
        for f in &forces {
            assert!(f.x.abs() < 1e-9 && f.y.abs() < 1e-9, "{f}");
            assert!(f.z.is_finite() && f.z >= 1.0 - 1e-9, "{f}");
        }
    }
}
