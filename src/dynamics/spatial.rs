//! Spatial algebra (Featherstone 2008, ch. 2) with fixed-size types. Motions and forces are
//! 6-vectors ordered `[linear; angular]` as in Pinocchio; a placement `a_M_b` maps
//! coordinates in frame B to frame A.

use nalgebra::{
    Isometry3, Matrix3, Matrix6, Rotation3, Translation3, UnitQuaternion, Vector3, Vector6,
};

/// A rigid transform `a_M_b` (rotation matrix and translation: `x_A = R x_B + p`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Se3 {
    /// Rotation of B's axes in A.
    pub rot: Matrix3<f64>,
    /// Origin of B in A.
    pub trans: Vector3<f64>,
}

#[inline]
fn lin(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

#[inline]
fn ang(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[3], v[4], v[5])
}

#[inline]
fn stack(l: Vector3<f64>, a: Vector3<f64>) -> Vector6<f64> {
    Vector6::new(l.x, l.y, l.z, a.x, a.y, a.z)
}

impl Se3 {
    /// The identity.
    pub fn identity() -> Se3 {
        Se3 {
            rot: Matrix3::identity(),
            trans: Vector3::zeros(),
        }
    }

    /// From an isometry.
    pub fn from_isometry(m: &Isometry3<f64>) -> Se3 {
        Se3 {
            rot: m.rotation.to_rotation_matrix().into_inner(),
            trans: m.translation.vector,
        }
    }

    /// To an isometry (the rotation matrix is converted to a unit quaternion).
    pub fn to_isometry(&self) -> Isometry3<f64> {
        let r = Rotation3::from_matrix_unchecked(self.rot);
        Isometry3::from_parts(
            Translation3::from(self.trans),
            UnitQuaternion::from_rotation_matrix(&r),
        )
    }

    /// Composition `a_M_c = a_M_b * b_M_c`.
    #[inline]
    pub fn compose(&self, other: &Se3) -> Se3 {
        Se3 {
            rot: self.rot * other.rot,
            trans: self.rot * other.trans + self.trans,
        }
    }

    /// The point `x_A = R x_B + p`.
    #[inline]
    pub fn act_point(&self, x: &Vector3<f64>) -> Vector3<f64> {
        self.rot * x + self.trans
    }

    /// A motion in B expressed in A: `ω_A = R ω_B`, `v_A = R v_B + p × ω_A`.
    #[inline]
    pub fn act_motion(&self, m: &Vector6<f64>) -> Vector6<f64> {
        let w = self.rot * ang(m);
        stack(self.rot * lin(m) + self.trans.cross(&w), w)
    }

    /// A motion in A expressed in B: `ω_B = Rᵀ ω_A`, `v_B = Rᵀ (v_A − p × ω_A)`.
    #[inline]
    pub fn act_inv_motion(&self, m: &Vector6<f64>) -> Vector6<f64> {
        let w = ang(m);
        let rt = self.rot.transpose();
        stack(rt * (lin(m) - self.trans.cross(&w)), rt * w)
    }

    /// A force in B expressed in A: `f_A = R f_B`, `n_A = R n_B + p × f_A`.
    #[inline]
    pub fn act_force(&self, f: &Vector6<f64>) -> Vector6<f64> {
        let fa = self.rot * lin(f);
        stack(fa, self.rot * ang(f) + self.trans.cross(&fa))
    }

    /// A force in A expressed in B: `f_B = Rᵀ f_A`, `n_B = Rᵀ (n_A − p × f_A)`.
    #[inline]
    pub fn act_inv_force(&self, f: &Vector6<f64>) -> Vector6<f64> {
        let fa = lin(f);
        let rt = self.rot.transpose();
        stack(rt * fa, rt * (ang(f) - self.trans.cross(&fa)))
    }

    /// A spatial inertia (6×6, force = I · motion) given in B, expressed in A:
    /// `X* I X*ᵀ` with `X* = [[R, 0], [p̂ R, R]]` (Featherstone eq. 2.66), by blocks: with
    /// `I = [[A, B], [Bᵀ, C]]` rotated to `A', B', C'`, the result is
    /// `[[A', B' − A' p̂], [·ᵀ, C' + p̂ B' + (p̂ B')ᵀ − p̂ A' p̂]]`.
    pub fn act_inertia_matrix(&self, inertia: &Matrix6<f64>) -> Matrix6<f64> {
        let r = &self.rot;
        let rt = r.transpose();
        let a = r * inertia.fixed_view::<3, 3>(0, 0) * rt;
        let b = r * inertia.fixed_view::<3, 3>(0, 3) * rt;
        let c = r * inertia.fixed_view::<3, 3>(3, 3) * rt;
        let px = self.trans.cross_matrix();
        let top_right = b - a * px;
        let g = px * b;
        let bottom_right = c + g + g.transpose() - px * a * px;
        let mut out = Matrix6::zeros();
        out.fixed_view_mut::<3, 3>(0, 0).copy_from(&a);
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&top_right);
        out.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&top_right.transpose());
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&bottom_right);
        out
    }
}

/// Spatial cross product of motions `v × m` (Featherstone eq. 2.31):
/// `[ω × m_v + v × m_ω; ω × m_ω]`.
#[inline]
pub fn motion_cross(v: &Vector6<f64>, m: &Vector6<f64>) -> Vector6<f64> {
    let w = ang(v);
    stack(w.cross(&lin(m)) + lin(v).cross(&ang(m)), w.cross(&ang(m)))
}

/// Spatial cross product of a motion and a force `v ×* f` (Featherstone eq. 2.32):
/// `[ω × f; ω × n + v × f]`.
#[inline]
pub fn force_cross(v: &Vector6<f64>, f: &Vector6<f64>) -> Vector6<f64> {
    let w = ang(v);
    let fl = lin(f);
    stack(w.cross(&fl), w.cross(&ang(f)) + lin(v).cross(&fl))
}

/// Rotation `c I + s [a]× + (1 − c) a aᵀ` about a unit axis, from the angle's cosine and
/// sine (Rodrigues' formula).
#[inline]
pub fn axis_rotation(axis: &Vector3<f64>, c: f64, s: f64) -> Matrix3<f64> {
    let k = 1.0 - c;
    let (x, y, z) = (axis.x, axis.y, axis.z);
    Matrix3::new(
        c + k * x * x,
        k * x * y - s * z,
        k * x * z + s * y,
        k * x * y + s * z,
        c + k * y * y,
        k * y * z - s * x,
        k * x * z - s * y,
        k * y * z + s * x,
        c + k * z * z,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Inertia;

    fn placement() -> Se3 {
        Se3 {
            rot: Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner(),
            trans: Vector3::new(0.4, -0.2, 1.5),
        }
    }

    #[test]
    fn inertia_congruence_by_blocks_equals_the_6x6_products() {
        let m = placement();
        let mut xf = Matrix6::zeros();
        xf.fixed_view_mut::<3, 3>(0, 0).copy_from(&m.rot);
        xf.fixed_view_mut::<3, 3>(3, 3).copy_from(&m.rot);
        xf.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(m.trans.cross_matrix() * m.rot));
        let inertia = Inertia {
            mass: 2.0,
            com: Vector3::new(0.1, 0.2, -0.3),
            rotational: Matrix3::new(0.3, 0.01, 0.02, 0.01, 0.2, 0.03, 0.02, 0.03, 0.1),
        }
        .matrix();
        let expected = xf * inertia * xf.transpose();
        assert!((m.act_inertia_matrix(&inertia) - expected).amax() < 1e-14);
    }

    #[test]
    fn motion_and_force_actions_are_dual_and_invertible() {
        let m = placement();
        let v = Vector6::new(0.1, -0.7, 0.3, 1.2, 0.4, -0.9);
        let f = Vector6::new(2.0, 1.0, -3.0, 0.5, 0.25, 0.0);
        // Power is frame independent: ⟨X v, X* f⟩ = ⟨v, f⟩.
        let power = m.act_motion(&v).dot(&m.act_force(&f));
        assert!((power - v.dot(&f)).abs() < 1e-14);
        assert!((m.act_inv_motion(&m.act_motion(&v)) - v).amax() < 1e-15);
        assert!((m.act_inv_force(&m.act_force(&f)) - f).amax() < 1e-15);
        let rot = axis_rotation(&Vector3::z(), 0.5_f64.cos(), 0.5_f64.sin());
        let expected = Rotation3::from_axis_angle(&Vector3::z_axis(), 0.5).into_inner();
        assert!((rot - expected).amax() < 1e-15);
    }
}
