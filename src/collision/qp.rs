//! The collision problem as a generic conic QP (GJK++ eq. 2), solved by clarabel, an
//! interior-point solver (the paper uses ProxQP):
//!
//! ```text
//! min ‖x₁ − x₂‖²  s.t.  x₁ ∈ A,  x₂ ∈ B
//! ```
//!
//! with a polytope as the linear inequalities `Aᵢ xᵢ ≤ bᵢ` of its faces (a convex hull's
//! triangles, a box's six faces: the `N_f` of GJK++ Tab. II) and, beyond the paper, an
//! ellipsoid or a ball as one second-order cone `‖D⁻¹ Rᵀ (x − c)‖ ≤ 1`, a cylinder as a
//! cone and two inequalities. Everything is written in the frame of shape A.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use nalgebra::{Isometry3, Matrix3, Vector3};

use super::error::CollisionError;
use super::projection::core_name;
use super::shape::{Core, Shape};

/// The answer of the collision QP (A's frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QpResult {
    /// `‖x₁ − x₂‖` (m).
    pub distance: f64,
    /// The point of A.
    pub point_a: Vector3<f64>,
    /// The point of B.
    pub point_b: Vector3<f64>,
    /// Interior-point iterations.
    pub iterations: u32,
    /// Linear inequalities plus cone dimensions: the size of the constraint set.
    pub constraints: usize,
}

/// Clarabel's constraints `A z + s = b`, `s ∈ K`, built shape by shape; `z = (x₁, x₂)`.
#[derive(Default)]
struct Constraints {
    rows: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
    b: Vec<f64>,
    cones: Vec<SupportedConeT<f64>>,
}

impl Constraints {
    /// `⟨n, x⟩ ≤ offset` on the point starting at column `col`.
    fn halfspace(&mut self, col: usize, n: &Vector3<f64>, offset: f64) {
        let row = self.b.len();
        for k in 0..3 {
            self.rows.push(row);
            self.cols.push(col + k);
            self.values.push(n[k]);
        }
        self.b.push(offset);
        self.cones.push(SupportedConeT::NonnegativeConeT(1));
    }

    /// `‖M (x − c)‖ ≤ 1` on the point starting at column `col`, as
    /// `s = b − A x = (1; M (x − c)) ∈ SOC(4)` with `A = (0; −M)`, `b = (1; −M c)`.
    fn ellipsoid(&mut self, col: usize, m: &Matrix3<f64>, c: &Vector3<f64>) {
        let row = self.b.len();
        self.b.push(1.0);
        let mc = m * c;
        for i in 0..3 {
            for k in 0..3 {
                self.rows.push(row + 1 + i);
                self.cols.push(col + k);
                self.values.push(-m[(i, k)]);
            }
            self.b.push(-mc[i]);
        }
        self.cones.push(SupportedConeT::SecondOrderConeT(4));
    }

    /// `‖P (x − c)‖ ≤ r` with `P` the projection on the two first rows of `R` (the
    /// cylinder's radial directions), as `s = (r; R₁₂ (x − c)) ∈ SOC(3)`.
    fn disk(&mut self, col: usize, r: &Matrix3<f64>, c: &Vector3<f64>, radius: f64) {
        let row = self.b.len();
        self.b.push(radius);
        let rc = r * c;
        for i in 0..2 {
            for k in 0..3 {
                self.rows.push(row + 1 + i);
                self.cols.push(col + k);
                self.values.push(-r[(i, k)]);
            }
            self.b.push(-rc[i]);
        }
        self.cones.push(SupportedConeT::SecondOrderConeT(3));
    }

    fn count(&self) -> usize {
        self.b.len()
    }
}

/// Adds the constraints of `shape` placed by `pose` (in A's frame) on column `col`.
fn add_shape(
    constraints: &mut Constraints,
    col: usize,
    shape: &Shape,
    pose: &Isometry3<f64>,
) -> Result<(), CollisionError> {
    let rotation = pose.rotation.to_rotation_matrix().into_inner();
    let c = pose.translation.vector;
    let refuse = |core: &'static str| CollisionError::UnsupportedShape {
        algorithm: "the collision QP",
        core,
    };
    let inflated = shape.radius > 0.0;
    match &shape.core {
        Core::Point => {
            let r = shape.radius.max(f64::MIN_POSITIVE);
            constraints.ellipsoid(col, &(rotation.transpose() / r), &c);
        }
        Core::Ellipsoid { radii } if !inflated => {
            let inverse = Matrix3::from_diagonal(&radii.map(|r| 1.0 / r.max(f64::MIN_POSITIVE)));
            constraints.ellipsoid(col, &(inverse * rotation.transpose()), &c);
        }
        Core::Cuboid { half_extents } if !inflated => {
            for axis in 0..3 {
                let n = rotation.column(axis).into_owned();
                constraints.halfspace(col, &n, n.dot(&c) + half_extents[axis]);
                constraints.halfspace(col, &-n, -n.dot(&c) + half_extents[axis]);
            }
        }
        Core::Cylinder {
            radius,
            half_length,
        } if !inflated => {
            constraints.disk(col, &rotation.transpose(), &c, *radius);
            let n = rotation.column(2).into_owned();
            constraints.halfspace(col, &n, n.dot(&c) + half_length);
            constraints.halfspace(col, &-n, -n.dot(&c) + half_length);
        }
        Core::Hull(hull) if !inflated && hull.is_solid() => {
            let vertices = hull.vertices();
            for face in hull.faces() {
                let [p, q, r] = face.map(|i| pose.transform_point(&vertices[i as usize].into()));
                let normal = (q - p).cross(&(r - p));
                if let Some(n) = normal.try_normalize(0.0) {
                    constraints.halfspace(col, &n, n.dot(&p.coords));
                }
            }
        }
        Core::Hull(_) if !inflated => return Err(refuse("flat convex hull")),
        core if inflated => {
            return Err(refuse(match core {
                Core::Segment { .. } => "capsule",
                _ => "inflated shape",
            }))
        }
        core => return Err(refuse(core_name(core))),
    }
    Ok(())
}

/// `P` of `‖x₁ − x₂‖² = ½ zᵀ P z`: `P = 2 [I −I; −I I]`, upper triangle.
fn objective() -> CscMatrix<f64> {
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..3 {
        for (r, c, v) in [(k, k, 2.0), (k + 3, k + 3, 2.0), (k, k + 3, -2.0)] {
            rows.push(r);
            cols.push(c);
            values.push(v);
        }
    }
    CscMatrix::new_from_triplets(6, 6, rows, cols, values)
}

/// Solves the collision QP of `a` (at the origin of its frame) and `b` placed by `b_in_a`
/// to clarabel's default tolerances (1e-8).
pub fn collision_qp(
    a: &Shape,
    b: &Shape,
    b_in_a: &Isometry3<f64>,
) -> Result<QpResult, CollisionError> {
    let mut constraints = Constraints::default();
    add_shape(&mut constraints, 0, a, &Isometry3::identity())?;
    add_shape(&mut constraints, 3, b, b_in_a)?;
    let count = constraints.count();
    let matrix = CscMatrix::new_from_triplets(
        count,
        6,
        constraints.rows,
        constraints.cols,
        constraints.values,
    );
    let settings = DefaultSettings {
        verbose: false,
        ..DefaultSettings::default()
    };
    let mut solver = DefaultSolver::new(
        &objective(),
        &[0.0; 6],
        &matrix,
        &constraints.b,
        &constraints.cones,
        settings,
    )
    .map_err(|e| CollisionError::Qp(format!("clarabel refused the problem: {e}")))?;
    solver.solve();
    let solution = &solver.solution;
    if !matches!(
        solution.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        return Err(CollisionError::Qp(format!(
            "clarabel ended {:?} after {} iterations",
            solution.status, solution.iterations
        )));
    }
    let z = &solution.x;
    let point_a = Vector3::new(z[0], z[1], z[2]);
    let point_b = Vector3::new(z[3], z[4], z[5]);
    Ok(QpResult {
        distance: (point_a - point_b).norm(),
        point_a,
        point_b,
        iterations: solution.iterations,
        constraints: count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    #[test]
    fn two_unit_cubes_one_metre_apart() {
        let cube = Shape::cuboid(Vector3::repeat(0.5)).unwrap();
        let pose =
            Isometry3::from_parts(Translation3::new(2.0, 0.0, 0.0), UnitQuaternion::identity());
        let r = collision_qp(&cube, &cube, &pose).unwrap();
        assert!((r.distance - 1.0).abs() < 1e-6, "{}", r.distance);
        assert_eq!(r.constraints, 12);
    }

    #[test]
    fn a_capsule_is_refused_by_name() {
        let capsule = Shape::capsule(0.1, 0.2).unwrap();
        let e = collision_qp(&capsule, &capsule, &Isometry3::identity()).unwrap_err();
        assert!(e.to_string().contains("capsule"), "{e}");
    }
}
