//! Analytical derivatives of the recursive Newton-Euler algorithm (Carpentier & Mansard
//! 2018, "Analytical derivatives of rigid body dynamics algorithms"), in the world frame:
//! `∂τ/∂q` and `∂τ/∂v` of `τ = RNEA(q, v, a)` at a fixed `a`, and with them the forward
//! dynamics' derivatives `∂a/∂x = −M⁻¹ ∂τ/∂x` at `a = ABA(q, v, τ)`.
//!
//! Everything is expressed in world coordinates about the world origin: the motion
//! subspace `S_j` of every dof, each body's twist `V_i`, spatial acceleration `A_i`
//! (gravity as `A_0 = (−g, 0)`), inertia `I_i`, momentum `h_i = I_i V_i` and force
//! `f_i = I_i A_i + V_i ×* h_i`. A tangent change `δq_j` moves every body of the subtree
//! of `j`'s joint `J` rigidly by the twist `S_j δq_j`, so that a quantity carried by those
//! bodies changes by `S_j ×` (motions) or `S_j ×*` (forces), except for what comes from
//! `J`'s parent body `P`, which does not move:
//!
//! ```text
//! δV_i = S_j × (V_i − V_P)
//! δA_i = S_j × (A_i − A_P) − (S_j × V_P) × (V_i − V_P)
//! δf_i = S_j ×* f_i + I_i w_j + (I_i [V_i]× − [V_i]×* I_i) u_j − u_j ×* h_i
//! ```
//!
//! with `u_j = S_j × V_P`, `w_j = A_P × S_j + u_j × V_P`. Summed over the subtree of a
//! joint `k` (composites `I^c`, `Y^c − X^c = Σ I [V]× − [V]×* I`, `H^c`, `F^c`) and
//! projected on `S_k` (the term `S_j ×* F^c` cancels the change of `S_k` itself):
//!
//! - `k` in the subtree of `J`: `∂τ_k/∂q_j = α_k·w_j + (β_k − γ_k)·u_j`,
//!   `∂τ_k/∂v_j = α_k·z_j − (β_k − γ_k)·S_j`, with `α_k = I^c_k S_k`,
//!   `β_k = (Y^c_k − X^c_k)ᵀ S_k`, `γ_k = −S_k ×* H^c_k` and `z_j = (V_J + V_P) × S_j`;
//! - `k` a strict ancestor of `J`: `∂τ_k/∂q_j = S_k·(S_j ×* F^c_J + I^c_J w_j +
//!   (Y^c_J − X^c_J) u_j − u_j ×* H^c_J)`, `∂τ_k/∂v_j = S_k·(I^c_J z_j −
//!   (Y^c_J − X^c_J) S_j + S_j ×* H^c_J)`.
//!
//! One forward pass, one backward pass of 6×6 composites, then two dot products per
//! entry. Tangent changes follow [`super::integrate`]: a free flyer's `δq` is a twist in
//! its body frame (`q ⊕ δq = M exp6(δq)`). Tested against central differences of
//! [`super::rnea`] (tests/dynamics/derivatives.rs).
//!
//! [`mass_quadratic_gradient`] is `∂(wᵀ M(q) w)/∂q = −2 ⟨H^c_J(w), S_j × V_P(w)⟩`, which
//! a PD whose gains are scaled by `1 / (M⁻¹)_jj` needs; [`point_force_derivative`] and
//! [`point_velocity_derivative`] are the changes of `J(p)ᵀ f` and `J(p) x` of a point
//! whose motion is given by anchors on bodies ([`Anchor`]), for contacts and external
//! forces.

use nalgebra::{DMatrix, DVector, Dyn, Matrix, Matrix3, Matrix6, StorageMut, Vector3, Vector6};

use super::kinematics::update_placements;
use super::spatial::{force_cross, motion_cross};
use super::{check_configuration, check_data, check_velocity, Data, DynamicsError};
use crate::model::Model;

/// `[V]×`, the matrix of `m ↦ V × m`.
fn motion_cross_matrix(v: &Vector6<f64>) -> Matrix6<f64> {
    let (lin, ang) = (
        v.fixed_rows::<3>(0).cross_matrix(),
        v.fixed_rows::<3>(3).cross_matrix(),
    );
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&ang);
    m.fixed_view_mut::<3, 3>(0, 3).copy_from(&lin);
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(&ang);
    m
}

/// World-frame quantities of the last [`rnea_derivatives`] (module docs), kept so that
/// the products that follow at the same `q` ([`mass_quadratic_gradient`], the point
/// derivatives) reuse them. Built once per model.
#[derive(Debug, Clone)]
pub struct DerivativeWorkspace {
    /// The joint of each dof.
    dof_joint: Vec<usize>,
    /// `S_j` of each dof, world frame.
    s: Vec<Vector6<f64>>,
    vel: Vec<Vector6<f64>>,
    acc: Vec<Vector6<f64>>,
    inertia: Vec<Matrix6<f64>>,
    /// Composites over each joint's subtree.
    ic: Vec<Matrix6<f64>>,
    yx: Vec<Matrix6<f64>>,
    hc: Vec<Vector6<f64>>,
    fc: Vec<Vector6<f64>>,
    /// Per dof `j`: `u_j`, `w_j`, `z_j` (module docs).
    u: Vec<Vector6<f64>>,
    w: Vec<Vector6<f64>>,
    z: Vec<Vector6<f64>>,
}

impl DerivativeWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Model) -> Self {
        let n = model.njoints();
        let mut dof_joint = vec![0; model.nv()];
        for (i, joint) in model.joints.iter().enumerate() {
            for k in 0..joint.nv() {
                dof_joint[joint.idx_v + k] = i;
            }
        }
        Self {
            dof_joint,
            s: vec![Vector6::zeros(); model.nv()],
            vel: vec![Vector6::zeros(); n],
            acc: vec![Vector6::zeros(); n],
            inertia: vec![Matrix6::zeros(); n],
            ic: vec![Matrix6::zeros(); n],
            yx: vec![Matrix6::zeros(); n],
            hc: vec![Vector6::zeros(); n],
            fc: vec![Vector6::zeros(); n],
            u: vec![Vector6::zeros(); model.nv()],
            w: vec![Vector6::zeros(); model.nv()],
            z: vec![Vector6::zeros(); model.nv()],
        }
    }

    /// `S_j` of dof `j` in world coordinates, at the `q` of the last
    /// [`rnea_derivatives`].
    pub fn motion_subspace(&self, j: usize) -> &Vector6<f64> {
        &self.s[j]
    }

    /// The dofs of joint `joint`.
    fn dofs(model: &Model, joint: usize) -> std::ops::Range<usize> {
        let j = &model.joints[joint];
        j.idx_v..j.idx_v + j.nv()
    }
}

/// `τ = RNEA(q, v, a)` with its partial derivatives (`nv × nv`).
#[derive(Debug, Clone, PartialEq)]
pub struct RneaDerivatives {
    /// `τ` (equal to [`super::rnea`]'s).
    pub tau: DVector<f64>,
    /// `∂τ/∂q` (tangent columns).
    pub dtau_dq: DMatrix<f64>,
    /// `∂τ/∂v`.
    pub dtau_dv: DMatrix<f64>,
}

/// `τ = RNEA(q, v, a)`, `∂τ/∂q` and `∂τ/∂v` (module docs); `ws` keeps the world-frame
/// quantities at `q` for the derivatives that follow.
pub fn rnea_derivatives(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativeWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
) -> Result<RneaDerivatives, DynamicsError> {
    let nv = model.nv();
    let mut out = RneaDerivatives {
        tau: DVector::zeros(nv),
        dtau_dq: DMatrix::zeros(nv, nv),
        dtau_dv: DMatrix::zeros(nv, nv),
    };
    rnea_derivatives_into(model, data, ws, q, v, a, &mut out)?;
    Ok(out)
}

/// [`rnea_derivatives`] into `out` (resized when its sizes are not `nv`), without
/// allocating otherwise.
pub fn rnea_derivatives_into(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativeWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    out: &mut RneaDerivatives,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_configuration(model, q)?;
    update_placements(model, data, q);
    rnea_derivatives_at_placements_into(model, data, ws, v, a, out)
}

/// [`rnea_derivatives_into`] once `data`'s placements are at `q` (a dynamics pass at the
/// same `q` left them so, as a simulation step's).
pub fn rnea_derivatives_at_placements_into(
    model: &Model,
    data: &Data,
    ws: &mut DerivativeWorkspace,
    v: &DVector<f64>,
    a: &DVector<f64>,
    out: &mut RneaDerivatives,
) -> Result<(), DynamicsError> {
    check_data(model, data)?;
    check_velocity(model, v, "v")?;
    check_velocity(model, a, "a")?;
    if ws.s.len() != model.nv() || ws.vel.len() != model.njoints() {
        return Err(DynamicsError::DataMismatch {
            data: ws.vel.len(),
            model: model.njoints(),
        });
    }
    forward_pass(model, data, ws, v, a);
    backward_pass(model, ws);
    let nv = model.nv();
    if out.tau.len() != nv {
        out.tau = DVector::zeros(nv);
    }
    for m in [&mut out.dtau_dq, &mut out.dtau_dv] {
        if m.shape() == (nv, nv) {
            m.fill(0.0);
        } else {
            *m = DMatrix::zeros(nv, nv);
        }
    }
    for j in 0..nv {
        let joint = ws.dof_joint[j];
        let parent = model.joints[joint].parent;
        let (vp, ap) = (&ws.vel[parent], &ws.acc[parent]);
        let s = &ws.s[j];
        let u = motion_cross(s, vp);
        ws.w[j] = motion_cross(ap, s) + motion_cross(&u, vp);
        ws.z[j] = motion_cross(&(ws.vel[joint] + vp), s);
        ws.u[j] = u;
    }
    let (u, w, z) = (&ws.u, &ws.w, &ws.z);
    // k in the subtree of J (J = k's joint or one of its ancestors).
    for k in 0..nv {
        let joint_k = ws.dof_joint[k];
        let sk = &ws.s[k];
        out.tau[k] = sk.dot(&ws.fc[joint_k]);
        let alpha = ws.ic[joint_k] * sk;
        let beta_minus_gamma = ws.yx[joint_k].transpose() * sk + force_cross(sk, &ws.hc[joint_k]);
        for j in chain_dofs(model, joint_k) {
            out.dtau_dq[(k, j)] = alpha.dot(&w[j]) + beta_minus_gamma.dot(&u[j]);
            out.dtau_dv[(k, j)] = alpha.dot(&z[j]) - beta_minus_gamma.dot(&ws.s[j]);
        }
    }
    // k a strict ancestor of J.
    for j in 0..nv {
        let joint = ws.dof_joint[j];
        let parent = model.joints[joint].parent;
        if parent == 0 {
            continue;
        }
        let s = &ws.s[j];
        let (ic, yx, hc) = (&ws.ic[joint], &ws.yx[joint], &ws.hc[joint]);
        let d = force_cross(s, &ws.fc[joint]) + ic * w[j] + yx * u[j] - force_cross(&u[j], hc);
        let e = ic * z[j] - yx * s + force_cross(s, hc);
        for k in chain_dofs(model, parent) {
            out.dtau_dq[(k, j)] = ws.s[k].dot(&d);
            out.dtau_dv[(k, j)] = ws.s[k].dot(&e);
        }
    }
    Ok(())
}

/// The generalized gravity `g(q)` (RNEA at `v = a = 0`) and `∂g/∂q` at the `q` of the last
/// [`rnea_derivatives`] (at any `v`, `a`), from its motion subspaces and composite
/// inertias alone: at rest `V = H = 0`, every `A_i = A_0 = (−g, 0)`, so `u_j = z_j = 0`,
/// `w_j = A_0 × S_j`, `F^c_J = I^c_J A_0`, and the module's formulas read
/// `∂g_k/∂q_j = (I^c_k S_k)·w_j` (`k` in the subtree of `j`'s joint) and
/// `S_k·(S_j ×* F^c_J + I^c_J w_j)` (`k` a strict ancestor), `g_k = S_k·F^c_k`. Both outputs
/// are resized when their sizes are not `nv`.
pub fn gravity_derivatives_into(
    model: &Model,
    ws: &DerivativeWorkspace,
    gravity: &mut DVector<f64>,
    dgravity_dq: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    let nv = model.nv();
    if ws.s.len() != nv || ws.ic.len() != model.njoints() {
        return Err(DynamicsError::DataMismatch {
            data: ws.ic.len(),
            model: model.njoints(),
        });
    }
    if gravity.len() != nv {
        *gravity = DVector::zeros(nv);
    }
    if dgravity_dq.shape() == (nv, nv) {
        dgravity_dq.fill(0.0);
    } else {
        *dgravity_dq = DMatrix::zeros(nv, nv);
    }
    let g = model.gravity;
    let a0 = Vector6::new(-g.x, -g.y, -g.z, 0.0, 0.0, 0.0);
    let w = |j: usize| motion_cross(&a0, &ws.s[j]);
    for k in 0..nv {
        let joint_k = ws.dof_joint[k];
        let sk = &ws.s[k];
        let alpha = ws.ic[joint_k] * sk;
        gravity[k] = alpha.dot(&a0);
        for j in chain_dofs(model, joint_k) {
            dgravity_dq[(k, j)] = alpha.dot(&w(j));
        }
    }
    for j in 0..nv {
        let joint = ws.dof_joint[j];
        let parent = model.joints[joint].parent;
        if parent == 0 {
            continue;
        }
        let ic = &ws.ic[joint];
        let d = force_cross(&ws.s[j], &(ic * a0)) + ic * w(j);
        for k in chain_dofs(model, parent) {
            dgravity_dq[(k, j)] = ws.s[k].dot(&d);
        }
    }
    Ok(())
}

/// World motion subspaces, twists, accelerations, inertias, momenta and forces.
fn forward_pass(
    model: &Model,
    data: &Data,
    ws: &mut DerivativeWorkspace,
    v: &DVector<f64>,
    a: &DVector<f64>,
) {
    let g = model.gravity;
    ws.vel[0] = Vector6::zeros();
    ws.acc[0] = Vector6::new(-g.x, -g.y, -g.z, 0.0, 0.0, 0.0);
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let m = &data.o_m_i[i];
        let (mut vj, mut aj) = (Vector6::zeros(), Vector6::zeros());
        for (k, dof) in DerivativeWorkspace::dofs(model, i).enumerate() {
            let local = match joint.kind.motion_subspace() {
                Some(s) => s,
                None => {
                    let mut e = Vector6::zeros();
                    e[k] = 1.0;
                    e
                }
            };
            let s = m.act_motion(&local);
            vj += s * v[dof];
            aj += s * a[dof];
            ws.s[dof] = s;
        }
        let p = joint.parent;
        ws.vel[i] = ws.vel[p] + vj;
        ws.acc[i] = ws.acc[p] + aj + motion_cross(&ws.vel[i], &vj);
        ws.inertia[i] = m.act_inertia_matrix(&data.body_matrices[i]);
        let h = ws.inertia[i] * ws.vel[i];
        ws.hc[i] = h;
        ws.fc[i] = ws.inertia[i] * ws.acc[i] + force_cross(&ws.vel[i], &h);
        ws.ic[i] = ws.inertia[i];
        let vx = motion_cross_matrix(&ws.vel[i]);
        // [V]×* = −[V]×ᵀ.
        ws.yx[i] = ws.inertia[i] * vx + vx.transpose() * ws.inertia[i];
    }
}

/// Subtree composites `I^c`, `Y^c − X^c`, `H^c`, `F^c`.
fn backward_pass(model: &Model, ws: &mut DerivativeWorkspace) {
    for i in (1..model.njoints()).rev() {
        let p = model.joints[i].parent;
        if p > 0 {
            let (ic, yx, hc, fc) = (ws.ic[i], ws.yx[i], ws.hc[i], ws.fc[i]);
            ws.ic[p] += ic;
            ws.yx[p] += yx;
            ws.hc[p] += hc;
            ws.fc[p] += fc;
        }
    }
}

/// The world twist of every body at joint velocity `x` (index 0 the world), with the
/// motion subspaces of the last [`rnea_derivatives`].
pub fn world_twists(
    model: &Model,
    ws: &DerivativeWorkspace,
    x: &DVector<f64>,
    out: &mut Vec<Vector6<f64>>,
) -> Result<(), DynamicsError> {
    check_velocity(model, x, "x")?;
    out.clear();
    out.push(Vector6::zeros());
    for (i, joint) in model.joints.iter().enumerate().skip(1) {
        let mut twist = out[joint.parent];
        for dof in DerivativeWorkspace::dofs(model, i) {
            twist += ws.s[dof] * x[dof];
        }
        out.push(twist);
    }
    Ok(())
}

/// `∂(wᵀ M(q) w)/∂q` (`nv`) at the `q` of the last [`rnea_derivatives`]: with the twists
/// `V(w)` and the subtree momenta `H^c(w)`, `−2 ⟨H^c_J, S_j × V_P⟩` (module docs).
pub fn mass_quadratic_gradient(
    model: &Model,
    ws: &DerivativeWorkspace,
    w: &DVector<f64>,
    twists: &mut Vec<Vector6<f64>>,
    momenta: &mut Vec<Vector6<f64>>,
    out: &mut DVector<f64>,
) -> Result<(), DynamicsError> {
    world_twists(model, ws, w, twists)?;
    momenta.clear();
    momenta.extend((0..model.njoints()).map(|i| ws.inertia[i] * twists[i]));
    for i in (1..model.njoints()).rev() {
        let p = model.joints[i].parent;
        if p > 0 {
            let h = momenta[i];
            momenta[p] += h;
        }
    }
    if out.len() != model.nv() {
        *out = DVector::zeros(model.nv());
    }
    for (j, o) in out.iter_mut().enumerate() {
        let joint = ws.dof_joint[j];
        let parent = model.joints[joint].parent;
        *o = -2.0 * momenta[joint].dot(&motion_cross(&ws.s[j], &twists[parent]));
    }
    Ok(())
}

/// A point fixed on a body, whose motion carries (a part of) another point: the moving
/// point changes by `weight · ṗ_anchor`, `ṗ_anchor` the velocity of `point` as a point of
/// `joint`'s body. A point fixed on a body is one anchor at itself with the identity; a
/// contact point between the witness points of two bodies is two anchors
/// (docs/derivatives.md, "Collision geometry").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    /// The body (its joint; 0 for the world, which does not move).
    pub joint: usize,
    /// The anchor point, world coordinates (m).
    pub point: Vector3<f64>,
    /// How much of its motion the moving point follows.
    pub weight: Matrix3<f64>,
}

/// The change of the moving point of `anchors` for a change `δq_j` (world, per unit).
fn point_change(
    model: &Model,
    ws: &DerivativeWorkspace,
    anchors: &[Anchor],
    j: usize,
) -> Vector3<f64> {
    let mut out = Vector3::zeros();
    for anchor in anchors {
        if is_ancestor(model, ws.dof_joint[j], anchor.joint) {
            let s = &ws.s[j];
            let lin = s.fixed_rows::<3>(0) + s.fixed_rows::<3>(3).cross(&anchor.point);
            out += anchor.weight * lin;
        }
    }
    out
}

/// The dofs of `joint` and of its ancestors, up the chain to the world (which has none).
fn chain_dofs(model: &Model, joint: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(Some(joint), |&j| Some(model.joints[j].parent))
        .take_while(|&j| j > 0)
        .flat_map(|j| DerivativeWorkspace::dofs(model, j))
}

/// `ancestor` is `joint` or one of its ancestors (never the world).
fn is_ancestor(model: &Model, ancestor: usize, mut joint: usize) -> bool {
    while joint > 0 {
        if joint == ancestor {
            return true;
        }
        joint = model.joints[joint].parent;
    }
    false
}

/// The dofs whose change moves the point of `anchors` or body `joint`: those of the
/// chains of every anchor's body and of `joint` to the root, without repetition.
fn moving_dofs(model: &Model, joint: usize, anchors: &[Anchor]) -> Vec<usize> {
    let mut dofs = Vec::new();
    for start in std::iter::once(joint).chain(anchors.iter().map(|a| a.joint)) {
        let mut j = start;
        while j > 0 {
            for dof in DerivativeWorkspace::dofs(model, j) {
                if !dofs.contains(&dof) {
                    dofs.push(dof);
                }
            }
            j = model.joints[j].parent;
        }
    }
    dofs
}

/// `out += scale · ∂(J_b(p)ᵀ f)/∂q` (`nv × nv`): the generalized force of a force `f`
/// fixed in the world (N, or N·s for an impulse) acting at the point `p` of `joint`'s body,
/// `p` moving as `anchors` say. With the wrench `W = (f, p × f)` about the origin,
/// `τ_k = S_kᵀ W`: `∂τ_k/∂q_j = −S_k·(S_j ×* W)` when `j`'s joint is `k`'s or an
/// ancestor (the change of `S_k`), plus `S_k·(0, δp_j × f)`.
#[allow(clippy::too_many_arguments)]
pub fn point_force_derivative(
    model: &Model,
    ws: &DerivativeWorkspace,
    joint: usize,
    point: &Vector3<f64>,
    force: &Vector3<f64>,
    anchors: &[Anchor],
    scale: f64,
    out: &mut Matrix<f64, Dyn, Dyn, impl StorageMut<f64, Dyn, Dyn>>,
) {
    if joint == 0 {
        return;
    }
    let wrench = Vector6::new(force.x, force.y, force.z, 0.0, 0.0, 0.0) + {
        let m = point.cross(force);
        Vector6::new(0.0, 0.0, 0.0, m.x, m.y, m.z)
    };
    let moments: Vec<(usize, Vector3<f64>)> = moving_dofs(model, joint, anchors)
        .into_iter()
        .map(|j| (j, point_change(model, ws, anchors, j).cross(force) * scale))
        .collect();
    // The chain's dofs from `joint` to the root, each with the first index of its joint's
    // dofs in the chain (where its ancestors-or-self start) and `scale · S_j ×* W`.
    let mut chain: Vec<(usize, usize, Vector6<f64>)> = Vec::new();
    let mut body = joint;
    while body > 0 {
        let start = chain.len();
        for j in DerivativeWorkspace::dofs(model, body) {
            chain.push((j, start, force_cross(&ws.s[j], &wrench) * scale));
        }
        body = model.joints[body].parent;
    }
    for &(k, start, _) in &chain {
        let sk = &ws.s[k];
        let sk_ang = sk.fixed_rows::<3>(3);
        for (j, _, change) in &chain[start..] {
            out[(k, *j)] -= sk.dot(change);
        }
        for (j, moment) in &moments {
            out[(k, *j)] += sk_ang.dot(moment);
        }
    }
}

/// `out[row..row + 3, :] += sign · Rᵀ ∂ẋ_p/∂q` (`nv` columns): the change of the velocity
/// `ẋ_p = lin(V) + ang(V) × p` of the point `p` of `joint`'s body at the joint velocity
/// whose world twists are `twists` ([`world_twists`]), expressed in the frame `rotation`,
/// with `p` moving as `anchors` say: `δV = S_j × (V − V_P)` for `j` on the body's chain
/// (`P` its joint's parent body), plus `ang(V) × δp_j`.
#[allow(clippy::too_many_arguments)]
pub fn point_velocity_derivative(
    model: &Model,
    ws: &DerivativeWorkspace,
    twists: &[Vector6<f64>],
    joint: usize,
    point: &Vector3<f64>,
    rotation: &Matrix3<f64>,
    sign: f64,
    anchors: &[Anchor],
    out: &mut Matrix<f64, Dyn, Dyn, impl StorageMut<f64, Dyn, Dyn>>,
    row: usize,
) {
    let rt = rotation.transpose() * sign;
    let twist = twists[joint];
    let omega: Vector3<f64> = twist.fixed_rows::<3>(3).into_owned();
    let mut add = |col: usize, x: Vector3<f64>| {
        let y = rt * x;
        for k in 0..3 {
            out[(row + k, col)] += y[k];
        }
    };
    let mut body = joint;
    while body > 0 {
        let parent = model.joints[body].parent;
        let relative = twist - twists[parent];
        for j in DerivativeWorkspace::dofs(model, body) {
            let dv = motion_cross(&ws.s[j], &relative);
            add(
                j,
                dv.fixed_rows::<3>(0) + dv.fixed_rows::<3>(3).cross(point),
            );
        }
        body = parent;
    }
    if omega != Vector3::zeros() {
        for j in moving_dofs(model, 0, anchors) {
            add(j, omega.cross(&point_change(model, ws, anchors, j)));
        }
    }
}
