//! Contact problems with known structure, for tests, benchmarks and examples.
//!
//! - [`single_contact`]: one contact with a given `G` and `g`.
//! - [`random_problem`]: `G = J M⁻¹ Jᵀ` from a random `J` (`3n × nv`, rank-deficient when
//!   `3n > nv`) and a random SPD `M`, seeded.
//! - [`cube_on_plane`]: a cube resting on the ground on its 4 bottom corners, pushed
//!   horizontally (paper Fig. 11: internal forces at stiction).
//! - [`cube_stack`]: a heavy cube on a light cube on the ground, 8 contacts (paper Fig. 12:
//!   ill-conditioning when the mass ratio is large).
//! - [`box_pile`]: columns of cubes resting on the ground and on each other, four corner
//!   contacts per face, with a factorized Delassus operator (sparse `J` and block-diagonal
//!   `M`): the problems of piles, with hundreds of contacts.
//!
//! Free bodies use a world-aligned twist `(v, ω)`; the velocity of a point at `r` from the
//! centre of mass is `v + ω × r`, so its Jacobian is `[I₃, −[r]×]`. All contacts here have a
//! horizontal ground-like frame: `t1 = x`, `t2 = y`, `n = z`.

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use nalgebra_sparse::{CooMatrix, CscMatrix, CsrMatrix};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{ContactProblem, FactorizedDelassus, ProblemError};

/// Standard gravity (m/s²).
const GRAVITY: f64 = 9.81;

/// A one-contact problem `(G, g, μ)`.
pub fn single_contact(
    mu: f64,
    delassus: Matrix3<f64>,
    free_velocity: Vector3<f64>,
) -> Result<ContactProblem, ProblemError> {
    ContactProblem::new(
        DMatrix::from_iterator(3, 3, delassus.iter().copied()),
        DVector::from_iterator(3, free_velocity.iter().copied()),
        DVector::from_element(1, mu),
        None,
    )
}

/// A random problem: `J` with entries in `[−1, 1]`, `M = A Aᵀ + 0.1 I` with `A` in
/// `[−1, 1]`, `G = J M⁻¹ Jᵀ`, `g` in `[−1, 1]` with normal components shifted down by
/// 0.5 (most contacts approach), `μ` in `[0.2, 1]`. `J` is attached to the problem.
pub fn random_problem(
    seed: u64,
    num_contacts: usize,
    nv: usize,
) -> Result<ContactProblem, ProblemError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dim = 3 * num_contacts;
    let jacobian = DMatrix::from_fn(dim, nv, |_, _| rng.random_range(-1.0..1.0));
    let a = DMatrix::from_fn(nv, nv, |_, _| rng.random_range(-1.0..1.0));
    let mass = &a * a.transpose() + DMatrix::identity(nv, nv) * 0.1;
    let free_velocity = DVector::from_fn(dim, |i, _| {
        let shift = if i % 3 == 2 { -0.5 } else { 0.0 };
        rng.random_range(-1.0..1.0) + shift
    });
    let mu = DVector::from_fn(num_contacts, |_, _| rng.random_range(0.2..1.0));
    let delassus = delassus_from(&jacobian, &mass);
    ContactProblem::new(delassus, free_velocity, mu, None)?.with_jacobian(jacobian)
}

/// A cube of side `2 h` and mass `m` resting on the ground on its 4 bottom corners, over
/// one time step `dt` under gravity and a horizontal force `force_x` (N) along x.
/// `J` (12 × 6) is attached; `G` has rank 6, so the 12 forces are not unique.
pub fn cube_on_plane(
    mass: f64,
    half_size: f64,
    mu: f64,
    force_x: f64,
    dt: f64,
) -> Result<ContactProblem, ProblemError> {
    let h = half_size;
    let corners: Vec<Vector3<f64>> = bottom_corners(h, -h);
    let jacobian = stack_point_jacobians(&corners);
    let mass_matrix = free_body_mass_matrix(mass, h);
    let free_twist =
        DVector::from_vec(vec![dt * force_x / mass, 0.0, -dt * GRAVITY, 0.0, 0.0, 0.0]);
    let free_velocity = &jacobian * free_twist;
    let delassus = delassus_from(&jacobian, &mass_matrix);
    ContactProblem::new(delassus, free_velocity, DVector::from_element(4, mu), None)?
        .with_jacobian(jacobian)
}

/// A cube of mass `light_mass` on the ground and a cube of mass `light_mass · mass_ratio`
/// on top of it, both of side `2 h`, at rest, over one step `dt` under gravity.
/// Contacts 0-3: ground → light cube; contacts 4-7: light cube → heavy cube. `nv = 12`
/// (light cube twist, then heavy cube twist); `J` is attached.
pub fn cube_stack(
    light_mass: f64,
    mass_ratio: f64,
    half_size: f64,
    mu: f64,
    dt: f64,
) -> Result<ContactProblem, ProblemError> {
    let h = half_size;
    let mut jacobian = DMatrix::zeros(24, 12);
    // Ground contacts: only the light cube (body B) moves.
    let ground = stack_point_jacobians(&bottom_corners(h, -h));
    jacobian.view_mut((0, 0), (12, 6)).copy_from(&ground);
    // Cube-cube contacts: heavy cube (B) minus light cube (A) at the shared corners.
    let on_light = stack_point_jacobians(&bottom_corners(h, h));
    let on_heavy = stack_point_jacobians(&bottom_corners(h, -h));
    jacobian.view_mut((12, 0), (12, 6)).copy_from(&(-on_light));
    jacobian.view_mut((12, 6), (12, 6)).copy_from(&on_heavy);
    let mut mass_matrix = DMatrix::zeros(12, 12);
    mass_matrix
        .view_mut((0, 0), (6, 6))
        .copy_from(&free_body_mass_matrix(light_mass, h));
    mass_matrix
        .view_mut((6, 6), (6, 6))
        .copy_from(&free_body_mass_matrix(light_mass * mass_ratio, h));
    let mut free_twist = DVector::zeros(12);
    free_twist[2] = -dt * GRAVITY;
    free_twist[8] = -dt * GRAVITY;
    let free_velocity = &jacobian * free_twist;
    let delassus = delassus_from(&jacobian, &mass_matrix);
    ContactProblem::new(delassus, free_velocity, DVector::from_element(8, mu), None)?
        .with_jacobian(jacobian)
}

/// A `columns × columns` grid of columns of `height` unit-mass cubes of side `2 h` (side
/// by side, not touching), at rest over one step `dt` under gravity: cube `k` of a column
/// rests on cube `k − 1` (on the ground for `k = 0`) on its four bottom corners, so there
/// are `4 columns² height` contacts and `6 columns² height` dofs. `G` is the factorized
/// operator of the sparse `J` and the block-diagonal `M`; `J` is not attached.
pub fn box_pile(
    columns: usize,
    height: usize,
    half_size: f64,
    mu: f64,
    dt: f64,
) -> Result<ContactProblem, ProblemError> {
    let h = half_size;
    let bodies = columns * columns * height;
    let (n, nv) = (4 * bodies, 6 * bodies);
    let mut jacobian = CooMatrix::new(3 * n, nv);
    let mut mass = CooMatrix::new(nv, nv);
    let body_mass = free_body_mass_matrix(1.0, h);
    let on_upper = stack_point_jacobians(&bottom_corners(h, -h));
    let on_lower = stack_point_jacobians(&bottom_corners(h, h));
    for b in 0..bodies {
        for k in 0..6 {
            mass.push(6 * b + k, 6 * b + k, body_mass[(k, k)]);
        }
        // Rows of the four contacts under body b: + its own twist, − the one below.
        let rows = 12 * b;
        push_block(&mut jacobian, rows, 6 * b, &on_upper, 1.0);
        if b % height != 0 {
            push_block(&mut jacobian, rows, 6 * (b - 1), &on_lower, -1.0);
        }
    }
    let jacobian = CsrMatrix::from(&jacobian);
    let mut free_twist = DVector::zeros(nv);
    for b in 0..bodies {
        free_twist[6 * b + 2] = -dt * GRAVITY;
    }
    let mut free_velocity = DVector::zeros(3 * n);
    for (r, out) in free_velocity.iter_mut().enumerate() {
        let row = jacobian.row(r);
        *out = row
            .col_indices()
            .iter()
            .zip(row.values())
            .map(|(&k, a)| a * free_twist[k])
            .sum();
    }
    let operator = FactorizedDelassus::new(jacobian, CscMatrix::from(&mass))?;
    ContactProblem::from_operator(operator, free_velocity, DVector::from_element(n, mu), None)
}

/// Pushes `scale · block` at `(row, col)`, its exact zeros left out.
fn push_block(coo: &mut CooMatrix<f64>, row: usize, col: usize, block: &DMatrix<f64>, scale: f64) {
    for c in 0..block.ncols() {
        for r in 0..block.nrows() {
            if block[(r, c)] != 0.0 {
                coo.push(row + r, col + c, scale * block[(r, c)]);
            }
        }
    }
}

/// The 4 corners `(±h, ±h, z)` relative to a cube's centre.
fn bottom_corners(h: f64, z: f64) -> Vec<Vector3<f64>> {
    vec![
        Vector3::new(h, h, z),
        Vector3::new(-h, h, z),
        Vector3::new(-h, -h, z),
        Vector3::new(h, -h, z),
    ]
}

/// Rows `[I₃, −[r]×]` for each point `r`, stacked (`3k × 6`).
fn stack_point_jacobians(points: &[Vector3<f64>]) -> DMatrix<f64> {
    let mut jacobian = DMatrix::zeros(3 * points.len(), 6);
    for (i, r) in points.iter().enumerate() {
        jacobian
            .view_mut((3 * i, 0), (3, 3))
            .copy_from(&Matrix3::identity());
        jacobian
            .view_mut((3 * i, 3), (3, 3))
            .copy_from(&(-r.cross_matrix()));
    }
    jacobian
}

/// `diag(m I₃, I_c)` of a cube of side `2 h` (`I_c = m (2h)² / 6 · I₃`).
fn free_body_mass_matrix(mass: f64, h: f64) -> DMatrix<f64> {
    let inertia = mass * (2.0 * h).powi(2) / 6.0;
    DMatrix::from_diagonal(&DVector::from_vec(vec![
        mass, mass, mass, inertia, inertia, inertia,
    ]))
}

/// `G = J M⁻¹ Jᵀ`, symmetrized against round-off.
fn delassus_from(jacobian: &DMatrix<f64>, mass: &DMatrix<f64>) -> DMatrix<f64> {
    let nv = mass.nrows();
    let minv_jt = match mass.clone().cholesky() {
        Some(chol) => chol.solve(&jacobian.transpose()),
        None => DMatrix::zeros(nv, jacobian.nrows()),
    };
    let g = jacobian * minv_jt;
    (&g + g.transpose()) * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_problem_is_deterministic_and_valid() {
        let a = random_problem(7, 5, 8).map(|p| p.free_velocity().clone());
        let b = random_problem(7, 5, 8).map(|p| p.free_velocity().clone());
        assert!(a.is_ok());
        assert_eq!(a, b);
    }

    #[test]
    fn cube_on_plane_has_rank_six() {
        let p = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3);
        let rank = p.map(|p| p.delassus().clone().rank(1e-9));
        assert_eq!(rank, Ok(6));
    }

    #[test]
    fn box_pile_has_four_contacts_per_cube_and_its_dense_g_is_the_assembled_one() {
        let pile = box_pile(1, 2, 0.1, 0.5, 1e-3);
        let stack = cube_stack(1.0, 1.0, 0.1, 0.5, 1e-3);
        let gap = pile.and_then(|p| stack.map(|s| (p.delassus() - s.delassus()).amax()));
        assert!(matches!(gap, Ok(gap) if gap < 1e-12), "{gap:?}");
    }

    #[test]
    fn cube_stack_is_valid_for_extreme_ratios() {
        assert!(cube_stack(1.0, 1e6, 0.1, 0.5, 1e-3).is_ok());
    }
}
