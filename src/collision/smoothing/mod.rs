//! Derivatives of collision detection by randomized smoothing ("Differentiable Collision
//! Detection: a Randomized Smoothing Approach", Montaut et al. 2023, `../shared/papers/002_…`).
//!
//! The geometry of a pair — witness points `x₁`, `x₂`, normal `n` (from A to B) and signed
//! distance `d`, as [`signed_distance`] returns them, expressed in A's frame — is a function
//! of the pose `T = (R, t)` of B in A's frame. Its derivatives are taken with respect to a
//! perturbation `ξ = (v, ω) ∈ ℝ⁶` of that pose in B's own frame: B moves to `t + R v` and
//! turns to `R exp([ω]ₓ)` (to first order the SE(3) local increment `T·exp(ξ)`, Solà et
//! al.). Each derivative is a 3×6 Jacobian (1×6 for `d`), columns `[v, ω]`.
//!
//! Estimators ([`Estimator`]):
//! - finite differences (forward or central) on `ξ`: 7 or 12 queries;
//! - the 0th-order Gaussian estimator, eq. (6): `M` GJK/EPA queries at `ξ = ε z`, each
//!   GJK warm-started from the unperturbed query and each mesh support's hill climbing
//!   from the vertex the previous query found, with the unperturbed value as a control
//!   variate (same expectation, far smaller variance);
//! - the 1st-order estimators, eq. (12)-(19) and (29): implicit differentiation of the
//!   optimality condition of GJK/EPA, with the Hessian of each shape's support function
//!   estimated by Gaussian smoothing (eq. 26), by the Gumbel soft-max on the `n_l`-ring of
//!   the witness vertex of a mesh (eq. 27-28), or taken in closed form where one exists
//!   ([`hessian`]).
//!
//! Every estimator is deterministic for its seed. [`oracle`] has the exact derivatives of
//! two spheres and of a box resting on a slab, which the tests compare the estimators with.

pub mod hessian;
pub mod oracle;

use nalgebra::{
    Isometry3, Matrix3, Matrix3x6, RowVector6, SMatrix, SVector, Translation3, UnitQuaternion,
    Vector3, Vector6,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use super::benchmark::standard_normal;
use super::contact::{signed_distance, signed_distance_hinted, Contact, ContactSettings};
use super::error::CollisionError;
use super::shape::Shape;
use super::simplex::{Simplex, SupportPoint};
use hessian::{support_hessian, HessianMethod};

/// Largest number of samples an estimator accepts.
pub const MAX_SAMPLES: usize = 1_000_000;
/// Largest neighbourhood depth `n_l` of the Gumbel estimator.
pub const MAX_RINGS: usize = 64;
/// Below this separation (m) — GJK's resolution `√ε` at its default duality-gap
/// tolerance `ε = 1e-12` — the shapes touch: the normal has no derivative, and the
/// 1st-order estimators evaluate the support Hessians at `TOUCHING · n` instead of `x*`.
pub const TOUCHING: f64 = 1e-6;

/// Why derivatives could not be computed.
#[derive(Debug, Error)]
pub enum SmoothingError {
    /// A collision query failed (bad pose, unsupported pair).
    #[error(transparent)]
    Collision(#[from] CollisionError),
    /// An estimator parameter is out of range.
    #[error("invalid estimator parameter {field} = {value} ({expected})")]
    InvalidParameter {
        /// `samples`, `noise`, `rings` or `step`.
        field: &'static str,
        /// The offending value.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
    /// The exact Hessian of this shape's support function has no closed form here.
    #[error("no closed-form support Hessian for a {0} (use a smoothed estimator)")]
    NoClosedForm(&'static str),
    /// The Gumbel estimator needs a mesh (a convex hull with vertices).
    #[error("the Gumbel estimator needs a convex hull, not a {0}")]
    NotAMesh(&'static str),
    /// The implicit system (eq. 19) is singular, or a smoothed Hessian overflowed (an
    /// extreme noise level): the derivative is not defined.
    #[error("the implicit system of the optimality condition is singular or not finite")]
    Singular,
}

/// How the derivatives are estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Estimator {
    /// Finite differences on `ξ` with step `step` (m and rad): forward (7 queries) or
    /// central (12 queries).
    FiniteDifferences {
        /// Step on each coordinate of `ξ`.
        step: f64,
        /// Central differences (else forward).
        central: bool,
    },
    /// 0th-order Gaussian estimator, eq. (6), on `ξ` (noise in m and rad).
    ZerothOrder {
        /// Samples `M`.
        samples: usize,
        /// Noise level `ε`.
        noise: f64,
        /// Seed of the samples.
        seed: u64,
    },
    /// 1st-order estimator with Gaussian-smoothed support Hessians, eq. (26); the noise
    /// is added to the support direction `x*` (m), as in the paper.
    FirstOrderGaussian {
        /// Samples `M` per shape.
        samples: usize,
        /// Noise level `ε`.
        noise: f64,
        /// Seed of the samples.
        seed: u64,
    },
    /// 1st-order estimator with the Gumbel soft-max Hessian of a mesh, eq. (27)-(28), on
    /// the vertices within `rings` edges of the witness vertex; the noise is the soft-max
    /// temperature on `zᵢ = ⟨vᵢ, x*⟩` (m²), as in the paper.
    FirstOrderGumbel {
        /// Neighbourhood depth `n_l`.
        rings: usize,
        /// Temperature `ε` (m²).
        noise: f64,
    },
    /// 1st-order with the closed-form support Hessians (exact where the support function
    /// is twice differentiable: spheres, capsules, ellipsoids, cylinders and cones off
    /// their edges; zero on polytopes, eq. 25).
    FirstOrderExact,
}

impl Estimator {
    /// Short name used in tables (`fd-central`, `zeroth`, `first-gaussian`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Estimator::FiniteDifferences { central: true, .. } => "fd-central",
            Estimator::FiniteDifferences { central: false, .. } => "fd-forward",
            Estimator::ZerothOrder { .. } => "zeroth",
            Estimator::FirstOrderGaussian { .. } => "first-gaussian",
            Estimator::FirstOrderGumbel { .. } => "first-gumbel",
            Estimator::FirstOrderExact => "first-exact",
        }
    }

    fn check(&self) -> Result<(), SmoothingError> {
        let positive = |field, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(SmoothingError::InvalidParameter {
                    field,
                    value,
                    expected: "finite and > 0",
                })
            }
        };
        let count = |field, value: usize, max: usize, min: usize| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(SmoothingError::InvalidParameter {
                    field,
                    value: value as f64,
                    expected: if min == 1 {
                        "between 1 and 1e6"
                    } else {
                        "between 0 and 64"
                    },
                })
            }
        };
        match *self {
            Estimator::FiniteDifferences { step, .. } => positive("step", step),
            Estimator::ZerothOrder { samples, noise, .. }
            | Estimator::FirstOrderGaussian { samples, noise, .. } => {
                count("samples", samples, MAX_SAMPLES, 1)?;
                positive("noise", noise)
            }
            Estimator::FirstOrderGumbel { rings, noise } => {
                count("rings", rings, MAX_RINGS, 0)?;
                positive("noise", noise)
            }
            Estimator::FirstOrderExact => Ok(()),
        }
    }
}

/// The geometry of a pair in A's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairGeometry {
    /// Witness point on A (m).
    pub point_a: Vector3<f64>,
    /// Witness point on B (m).
    pub point_b: Vector3<f64>,
    /// Unit normal from A to B.
    pub normal: Vector3<f64>,
    /// Signed distance (m, < 0 penetrating).
    pub distance: f64,
}

impl PairGeometry {
    fn of(contact: &Contact) -> Self {
        Self {
            point_a: contact.point_a,
            point_b: contact.point_b,
            normal: contact.normal,
            distance: contact.distance,
        }
    }

    /// `[x₁, x₂, n, d]` stacked.
    fn stacked(&self) -> SVector<f64, 10> {
        let mut g = SVector::<f64, 10>::zeros();
        g.fixed_rows_mut::<3>(0).copy_from(&self.point_a);
        g.fixed_rows_mut::<3>(3).copy_from(&self.point_b);
        g.fixed_rows_mut::<3>(6).copy_from(&self.normal);
        g[9] = self.distance;
        g
    }
}

/// Jacobians of the geometry with respect to `ξ = (v, ω)` (columns `[v, ω]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeometryJacobians {
    /// `∂x₁/∂ξ`.
    pub point_a: Matrix3x6<f64>,
    /// `∂x₂/∂ξ`.
    pub point_b: Matrix3x6<f64>,
    /// `∂n/∂ξ`.
    pub normal: Matrix3x6<f64>,
    /// `∂d/∂ξ`.
    pub distance: RowVector6<f64>,
}

impl GeometryJacobians {
    fn from_stacked(j: &SMatrix<f64, 10, 6>) -> Self {
        Self {
            point_a: j.fixed_rows::<3>(0).into_owned(),
            point_b: j.fixed_rows::<3>(3).into_owned(),
            normal: j.fixed_rows::<3>(6).into_owned(),
            distance: j.fixed_rows::<1>(9).into_owned(),
        }
    }

    /// The largest absolute entry of `self − other` (over the four Jacobians).
    pub fn max_difference(&self, other: &Self) -> f64 {
        (self.point_a - other.point_a)
            .amax()
            .max((self.point_b - other.point_b).amax())
            .max((self.normal - other.normal).amax())
            .max((self.distance - other.distance).amax())
    }

    /// The largest absolute entry of the witness points' Jacobians.
    pub fn witness_scale(&self) -> f64 {
        self.point_a.amax().max(self.point_b.amax())
    }
}

/// A pair's geometry and its estimated derivatives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairDerivatives {
    /// The geometry at the given pose.
    pub geometry: PairGeometry,
    /// Its Jacobians.
    pub jacobians: GeometryJacobians,
    /// GJK/EPA queries run for the derivatives (the given unperturbed one not counted;
    /// the 0th-order estimator given a contact alone runs it again for its final simplex,
    /// counted; given a [`BaseQuery`] it does not).
    pub queries: usize,
    /// False when a 1st-order estimator found the shapes touching (`|x₁ − x₂|` below
    /// [`TOUCHING`]): the normal has no derivative there and its Jacobian is returned as
    /// zeros; the other Jacobians are those at the separation `TOUCHING · n`.
    pub normal_defined: bool,
}

/// A pair of shapes with B's pose in A's frame: what the estimators differentiate.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    /// Shape A (its frame is the reference).
    pub a: &'a Shape,
    /// Shape B.
    pub b: &'a Shape,
    /// Pose of B in A's frame.
    pub b_in_a: Isometry3<f64>,
}

impl Pair<'_> {
    /// The geometry at the pose, from GJK/EPA (`warm_start`: an earlier
    /// [`Contact::warm_start`] of this pair).
    pub fn contact(
        &self,
        settings: &ContactSettings,
        warm_start: Option<&Vector3<f64>>,
    ) -> Result<Contact, SmoothingError> {
        Ok(signed_distance(
            self.a,
            &Isometry3::identity(),
            self.b,
            &self.b_in_a,
            settings,
            warm_start,
        )?)
    }

    /// The pose moved by `ξ = (v, ω)` in B's frame: `(t + R v, R exp(ω))`.
    pub fn perturbed(&self, xi: &Vector6<f64>) -> Isometry3<f64> {
        let v = xi.fixed_rows::<3>(0).into_owned();
        let w = xi.fixed_rows::<3>(3).into_owned();
        let step =
            Isometry3::from_parts(Translation3::from(v), UnitQuaternion::from_scaled_axis(w));
        self.b_in_a * step
    }

    /// The geometry at the pose moved by `ξ`, GJK warm-started from `warm_start` and the
    /// mesh supports from the vertices in `hints`, which receives this query's (each query
    /// of a sequence at nearby poses starts next to its answer).
    fn geometry_at(
        &self,
        xi: &Vector6<f64>,
        settings: &ContactSettings,
        warm_start: &Vector3<f64>,
        hints: &mut [usize; 2],
    ) -> Result<SVector<f64, 10>, SmoothingError> {
        let moved = self.perturbed(xi);
        let mut cold = Simplex::default();
        let c = signed_distance_hinted(
            self.a, self.b, &moved, settings, warm_start, hints, &mut cold,
        )?;
        Ok(PairGeometry::of(&c).stacked())
    }

    /// [`Pair::geometry_at`] with GJK started from `simplex`, a final simplex at this
    /// pair's pose, its points re-placed at the moved pose (B's points follow B:
    /// `b' = T(ξ) T⁻¹ b`, `w = a − b'`).
    fn geometry_from_simplex(
        &self,
        xi: &Vector6<f64>,
        settings: &ContactSettings,
        warm_start: &Vector3<f64>,
        hints: &mut [usize; 2],
        simplex: &Simplex,
    ) -> Result<SVector<f64, 10>, SmoothingError> {
        let moved = self.perturbed(xi);
        let relative = moved * self.b_in_a.inverse();
        let mut start = Simplex::default();
        for p in simplex.points() {
            let b = relative.transform_point(&p.b.into()).coords;
            start.push(SupportPoint {
                w: p.a - b,
                a: p.a,
                b,
            });
        }
        let c = signed_distance_hinted(
            self.a, self.b, &moved, settings, warm_start, hints, &mut start,
        )?;
        Ok(PairGeometry::of(&c).stacked())
    }
}

/// A pair's unperturbed query as the estimators start from it: its contact, GJK's final
/// simplex and the vertices the mesh supports found. The 0th-order estimator starts each
/// sample's GJK from this simplex (its points re-placed at the sample's pose) and the first
/// sample's hill climbing from these vertices.
#[derive(Debug, Clone)]
pub struct BaseQuery {
    /// The contact at the pair's pose.
    pub contact: Contact,
    simplex: Simplex,
    hints: [usize; 2],
}

impl BaseQuery {
    /// The query of `pair` at its pose whose contact is `contact` (GJK/EPA run again from
    /// its warm start, for the final simplex and support vertices a contact does not keep).
    pub fn at(
        pair: &Pair<'_>,
        contact: Contact,
        settings: &ContactSettings,
    ) -> Result<Self, SmoothingError> {
        let mut hints = [usize::MAX; 2];
        let mut simplex = Simplex::default();
        signed_distance_hinted(
            pair.a,
            pair.b,
            &pair.b_in_a,
            settings,
            &contact.warm_start,
            &mut hints,
            &mut simplex,
        )?;
        Ok(Self {
            contact,
            simplex,
            hints,
        })
    }
}

/// The geometry of `pair` and its derivatives by `estimator` (one GJK/EPA query, then the
/// estimator's).
pub fn pair_derivatives(
    pair: &Pair<'_>,
    estimator: &Estimator,
    settings: &ContactSettings,
) -> Result<PairDerivatives, SmoothingError> {
    estimator.check()?;
    let base = pair.contact(settings, None)?;
    derivatives_at(pair, &base, estimator, settings)
}

/// The derivatives of `pair` at its already computed contact `base` (the 0th-order
/// estimator first runs the unperturbed query again, for its final simplex:
/// [`derivatives_from`] keeps it).
pub fn derivatives_at(
    pair: &Pair<'_>,
    base: &Contact,
    estimator: &Estimator,
    settings: &ContactSettings,
) -> Result<PairDerivatives, SmoothingError> {
    estimates(pair, base, None, estimator, settings)
}

/// The derivatives of `pair` from its base query `start` (the estimator's cost alone, the
/// unperturbed query and its final simplex given: what the timing tables measure). The
/// same values as [`derivatives_at`] with `start.contact`.
pub fn derivatives_from(
    pair: &Pair<'_>,
    start: &BaseQuery,
    estimator: &Estimator,
    settings: &ContactSettings,
) -> Result<PairDerivatives, SmoothingError> {
    estimates(pair, &start.contact, Some(start), estimator, settings)
}

/// The estimators at the contact `base`; the 0th-order one starts from `start`, or from a
/// base query run here.
fn estimates(
    pair: &Pair<'_>,
    base: &Contact,
    start: Option<&BaseQuery>,
    estimator: &Estimator,
    settings: &ContactSettings,
) -> Result<PairDerivatives, SmoothingError> {
    estimator.check()?;
    let geometry = PairGeometry::of(base);
    let mut normal_defined = true;
    let mut implicit =
        |method: &HessianMethod| -> Result<(GeometryJacobians, usize), SmoothingError> {
            let (jacobians, defined) = first_order(pair, &geometry, method)?;
            normal_defined = defined;
            Ok((jacobians, 0))
        };
    let (jacobians, queries) = match *estimator {
        Estimator::FiniteDifferences { step, central } => {
            finite_differences(pair, base, settings, step, central)?
        }
        Estimator::ZerothOrder {
            samples,
            noise,
            seed,
        } => {
            let owned;
            let (start, rerun) = match start {
                Some(start) => (start, 0),
                None => {
                    owned = BaseQuery::at(pair, base.clone(), settings)?;
                    (&owned, 1)
                }
            };
            let (jacobians, queries) = zeroth_order(pair, start, settings, samples, noise, seed)?;
            (jacobians, queries + rerun)
        }
        Estimator::FirstOrderGaussian {
            samples,
            noise,
            seed,
        } => implicit(&HessianMethod::Gaussian {
            samples,
            noise,
            seed,
        })?,
        Estimator::FirstOrderGumbel { rings, noise } => {
            implicit(&HessianMethod::Gumbel { rings, noise })?
        }
        Estimator::FirstOrderExact => implicit(&HessianMethod::Exact)?,
    };
    Ok(PairDerivatives {
        geometry,
        jacobians,
        queries,
        normal_defined,
    })
}

fn finite_differences(
    pair: &Pair<'_>,
    base: &Contact,
    settings: &ContactSettings,
    step: f64,
    central: bool,
) -> Result<(GeometryJacobians, usize), SmoothingError> {
    let g0 = PairGeometry::of(base).stacked();
    let mut hints = [usize::MAX; 2];
    let mut j = SMatrix::<f64, 10, 6>::zeros();
    for k in 0..6 {
        let e = Vector6::ith(k, step);
        let plus = pair.geometry_at(&e, settings, &base.warm_start, &mut hints)?;
        let column = if central {
            let minus = pair.geometry_at(&-e, settings, &base.warm_start, &mut hints)?;
            (plus - minus) / (2.0 * step)
        } else {
            (plus - g0) / step
        };
        j.set_column(k, &column);
    }
    let queries = if central { 12 } else { 6 };
    Ok((GeometryJacobians::from_stacked(&j), queries))
}

/// Eq. (6) with `μ = N(0, I)` (`−∇log μ(z) = z`) and the control variate `g(q)`:
/// `J ≈ (1/M) Σ (g(q + ε zⱼ) − g(q)) zⱼᵀ / ε`.
fn zeroth_order(
    pair: &Pair<'_>,
    start: &BaseQuery,
    settings: &ContactSettings,
    samples: usize,
    noise: f64,
    seed: u64,
) -> Result<(GeometryJacobians, usize), SmoothingError> {
    let base = &start.contact;
    let g0 = PairGeometry::of(base).stacked();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Each sample's GJK starts from the unperturbed final simplex, its hill climbing from
    // the vertices the previous query found.
    let mut hints = start.hints;
    let nominal = &start.simplex;
    let mut sum = SMatrix::<f64, 10, 6>::zeros();
    for _ in 0..samples {
        let z = Vector6::from_fn(|_, _| standard_normal(&mut rng));
        let xi = z * noise;
        let g = pair.geometry_from_simplex(&xi, settings, &base.warm_start, &mut hints, nominal)?;
        sum += (g - g0) * z.transpose();
    }
    let j = sum / (samples as f64 * noise);
    Ok((GeometryJacobians::from_stacked(&j), samples))
}

/// `[a]ₓ`, the matrix of `b ↦ a × b`.
fn skew(a: &Vector3<f64>) -> Matrix3<f64> {
    a.cross_matrix()
}

/// The 1st-order estimator: implicit differentiation of the optimality condition (12)
/// written with the support directions `u = |x| n` for A and `−Rᵀu` for B:
/// `F(x, ξ) = x − ∇σ_A(s x) + R ∇σ_B(−Rᵀ s x) + t = 0`, `s = −1` separated (x₁ = ∇σ_A(−x),
/// eq. 13) and `s = +1` penetrating (EPA's `x* ∈ ∂σ_D(x*)`, eq. 10). Also returns
/// whether the normal's derivative is defined (the shapes do not touch).
fn first_order(
    pair: &Pair<'_>,
    geometry: &PairGeometry,
    method: &HessianMethod,
) -> Result<(GeometryJacobians, bool), SmoothingError> {
    let x = geometry.point_a - geometry.point_b;
    let normal_defined = x.norm() >= TOUCHING;
    let length = x.norm().max(TOUCHING);
    let s = if geometry.distance < 0.0 { 1.0 } else { -1.0 };
    let n = geometry.normal;
    let rotation = pair.b_in_a.rotation.to_rotation_matrix().into_inner();
    let dir_b = -(rotation.transpose() * n);
    // Hessians at the separation vector u = |x| n and at −Rᵀu.
    let h_a = support_hessian(pair.a, &(n * length), method, 0)?;
    let h_b = support_hessian(pair.b, &(dir_b * length), method, 1)?;
    let y_b = rotation.transpose() * (geometry.point_b - pair.b_in_a.translation.vector);
    // Eq. (19), with the sign s of the support direction.
    let df_dx = Matrix3::identity() - (h_a + rotation * h_b * rotation.transpose()) * s;
    // ∂F/∂v = R; ∂F/∂ω = −R [y_B]ₓ − R H_B [Rᵀu]ₓ with u = s x.
    let u_in_b = rotation.transpose() * (n * length);
    let df_dw = -rotation * skew(&y_b) - rotation * h_b * skew(&u_in_b);
    let mut df_dxi = Matrix3x6::zeros();
    df_dxi.fixed_columns_mut::<3>(0).copy_from(&rotation);
    df_dxi.fixed_columns_mut::<3>(3).copy_from(&df_dw);
    // Eq. (18).
    let lu = df_dx.lu();
    let dx = lu.solve(&(-df_dxi)).ok_or(SmoothingError::Singular)?;
    if !dx.iter().all(|v| v.is_finite()) {
        return Err(SmoothingError::Singular);
    }
    // Eq. (29): x₁ = ∇σ_A(s x); x₂ = x₁ − x.
    let d_point_a = h_a * dx * s;
    let d_point_b = d_point_a - dx;
    // n = s x / |x|, d = −s |x|.
    let projector = Matrix3::identity() - n * n.transpose();
    let d_normal = if normal_defined {
        projector * dx * (s / length)
    } else {
        Matrix3x6::zeros()
    };
    let d_distance = -(n.transpose() * dx);
    let jacobians = GeometryJacobians {
        point_a: d_point_a,
        point_b: d_point_b,
        normal: d_normal,
        distance: d_distance,
    };
    // An extreme noise level can overflow a smoothed Hessian: refuse rather than pass on
    // an infinite or NaN derivative.
    let finite = [&jacobians.point_a, &jacobians.point_b, &jacobians.normal]
        .iter()
        .all(|j| j.iter().all(|v| v.is_finite()))
        && jacobians.distance.iter().all(|v| v.is_finite());
    if !finite {
        return Err(SmoothingError::Singular);
    }
    Ok((jacobians, normal_defined))
}
