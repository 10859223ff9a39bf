//! Support maps: the only thing GJK and EPA need to know about a convex shape.
//!
//! The support point of a convex set `A` in direction `d` is `argmax_{p ∈ A} ⟨d, p⟩`
//! (GJK++ eq. (8) uses `argmin` on the Minkowski difference; the sign is handled in
//! [`crate::collision::gjk`]). Any positive rescaling of `d` gives the same point (eq. 9).

use nalgebra::Vector3;

/// A convex set described by its support function, in the shape's own frame.
pub trait SupportMap {
    /// A point of the set that maximizes `⟨dir, p⟩` (local frame, metres). `dir` need not
    /// be normalized; a zero `dir` returns any point of the set.
    fn local_support(&self, dir: &Vector3<f64>) -> Vector3<f64>;

    /// Same as [`SupportMap::local_support`], with a caller-kept hint (a vertex index for
    /// meshes, which start hill-climbing there and store the new vertex). Shapes with a
    /// closed-form support ignore the hint.
    fn local_support_hinted(&self, dir: &Vector3<f64>, hint: &mut usize) -> Vector3<f64> {
        let _ = hint;
        self.local_support(dir)
    }
}
