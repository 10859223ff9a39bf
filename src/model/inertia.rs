//! Rigid-body inertia: mass, centre of mass and rotational inertia about the centre of
//! mass, all expressed in one frame (Featherstone 2008, §2.13).

use nalgebra::{Isometry3, Matrix3, Matrix6, SymmetricEigen, Vector3, Vector6};

/// The inertia of a rigid body, expressed in a given frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inertia {
    /// Mass, kg.
    pub mass: f64,
    /// Centre of mass in the frame, m.
    pub com: Vector3<f64>,
    /// Rotational inertia about the centre of mass, in the frame's axes, kg·m².
    pub rotational: Matrix3<f64>,
}

impl Inertia {
    /// A massless body.
    pub fn zero() -> Inertia {
        Inertia {
            mass: 0.0,
            com: Vector3::zeros(),
            rotational: Matrix3::zeros(),
        }
    }

    /// A body of the given mass, centre of mass and rotational inertia about the centre of
    /// mass; checks that the parameters are physical (finite, mass ≥ 0, rotational inertia
    /// symmetric positive semi-definite: point masses such as Talos' sensor frames are allowed).
    pub fn new(mass: f64, com: Vector3<f64>, rotational: Matrix3<f64>) -> Result<Inertia, String> {
        if !mass.is_finite() || mass < 0.0 {
            return Err(format!("mass {mass} is negative or not finite"));
        }
        if !com.iter().chain(rotational.iter()).all(|x| x.is_finite()) {
            return Err("centre of mass or inertia is not finite".to_string());
        }
        let asym = (rotational - rotational.transpose()).abs().max();
        if asym > 1e-12 * rotational.abs().max().max(1.0) {
            return Err("inertia matrix is not symmetric".to_string());
        }
        let eig = SymmetricEigen::new(rotational).eigenvalues;
        let min = eig.min();
        let scale = eig.abs().max();
        if min < -1e-12 * scale.max(f64::MIN_POSITIVE) {
            return Err(format!(
                "inertia matrix is not positive (semi-)definite (smallest eigenvalue {min:e})"
            ));
        }
        Ok(Inertia {
            mass,
            com,
            rotational,
        })
    }

    /// When the principal moments `a ≤ b ≤ c` of the rotational inertia violate the
    /// triangle inequality `a + b ≥ c` (no rigid mass distribution has them) by more than
    /// round-off, a description with the relative violation `(c − a − b) / c`.
    pub fn triangle_inequality_violation(&self) -> Option<String> {
        let mut e: Vec<f64> = SymmetricEigen::new(self.rotational)
            .eigenvalues
            .iter()
            .copied()
            .collect();
        e.sort_by(f64::total_cmp);
        let excess = e[2] - e[0] - e[1];
        (e[2] > 0.0 && excess > 1e-9 * e[2]).then(|| {
            format!(
                "principal moments ({:.3e}, {:.3e}, {:.3e}) kg·m² violate the triangle inequality by {:.1} % of the largest",
                e[0],
                e[1],
                e[2],
                100.0 * excess / e[2]
            )
        })
    }

    /// A solid box of the given mass and half extents, centred at the frame's origin.
    pub fn solid_box(mass: f64, half_extents: Vector3<f64>) -> Inertia {
        let s = half_extents * 2.0;
        let k = mass / 12.0;
        Inertia {
            mass,
            com: Vector3::zeros(),
            rotational: Matrix3::from_diagonal(&Vector3::new(
                k * (s.y * s.y + s.z * s.z),
                k * (s.x * s.x + s.z * s.z),
                k * (s.x * s.x + s.y * s.y),
            )),
        }
    }

    /// A solid sphere of the given mass and radius, centred at the frame's origin.
    pub fn solid_sphere(mass: f64, radius: f64) -> Inertia {
        Inertia {
            mass,
            com: Vector3::zeros(),
            rotational: Matrix3::identity() * (0.4 * mass * radius * radius),
        }
    }

    /// The same body expressed in frame A, given the placement `a_m_b` of this inertia's
    /// frame B in A: `c_A = R c_B + p`, `I_A = R I_B Rᵀ`.
    pub fn transformed(&self, a_m_b: &Isometry3<f64>) -> Inertia {
        let r = a_m_b.rotation.to_rotation_matrix().into_inner();
        Inertia {
            mass: self.mass,
            com: r * self.com + a_m_b.translation.vector,
            rotational: r * self.rotational * r.transpose(),
        }
    }

    /// The union of two bodies expressed in the same frame (parallel-axis theorem).
    pub fn add(&self, other: &Inertia) -> Inertia {
        let mass = self.mass + other.mass;
        if mass <= 0.0 {
            return Inertia {
                mass: 0.0,
                com: Vector3::zeros(),
                rotational: self.rotational + other.rotational,
            };
        }
        let com = (self.com * self.mass + other.com * other.mass) / mass;
        let d = self.com - other.com;
        let dd = d.cross_matrix();
        Inertia {
            mass,
            com,
            rotational: self.rotational + other.rotational
                - dd * dd * (self.mass * other.mass / mass),
        }
    }

    /// The 6×6 spatial inertia about the frame origin, `[linear; angular]` ordering:
    /// `[[m I, −m ĉ], [m ĉ, I_c − m ĉ ĉ]]` (Featherstone eq. 2.63).
    pub fn matrix(&self) -> Matrix6<f64> {
        let m = self.mass;
        let c = self.com.cross_matrix();
        let mut out = Matrix6::zeros();
        out.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * m));
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-c * m));
        out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(c * m));
        out.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(self.rotational - c * c * m));
        out
    }

    /// Momentum `I v` of a spatial velocity `v = [v; ω]`: `f = m (v − c × ω)`,
    /// `n = I_c ω + c × f`.
    #[inline]
    pub fn mul_motion(&self, v: &Vector6<f64>) -> Vector6<f64> {
        let lin = v.fixed_rows::<3>(0).into_owned();
        let ang = v.fixed_rows::<3>(3).into_owned();
        let f = (lin - self.com.cross(&ang)) * self.mass;
        let n = self.rotational * ang + self.com.cross(&f);
        Vector6::new(f.x, f.y, f.z, n.x, n.y, n.z)
    }
}
