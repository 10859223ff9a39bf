"""Derivatives from Python: the step-wise Simulator (state, set_state, step with an added
torque, step_derivatives -> (A, B)) against central differences of its own steps, and
solve(..., derivatives=True) against differences of solves; errors typed, never NaN."""

from __future__ import annotations

import numpy as np
import pytest

import contactbench as cb
from conftest import SCENARIOS

CUBE_SLIDE = SCENARIOS / "cube_slide.yaml"
TIGHT = "ncp-admm:eps_rel=1e-12,max_iter=200000,eps_step=0"


def settled_cube():
    sim = cb.Simulator(CUBE_SLIDE, solver=TIGHT)
    for _ in range(50):
        sim.step()
    # 0.2 mm into the ground, off the kink of the Baumgarte bias (docs/derivatives.md).
    q, v = sim.state()
    q[2] -= 2e-4
    sim.set_state(q, v)
    return sim


def test_the_simulator_steps_and_keeps_its_state_through_derivatives():
    sim = cb.Simulator(CUBE_SLIDE)
    q0, v0 = sim.state()
    assert sim.nv == 6 and q0.shape == (7,) and v0.shape == (6,)
    a, b = sim.step_derivatives()
    assert a.shape == (12, 12) and b.shape == (12, 6)
    q, v = sim.state()
    assert np.array_equal(q, q0) and np.array_equal(v, v0) and sim.time == 0.0
    sim.step()
    assert sim.time > 0.0
    assert not np.array_equal(sim.state()[0], q0)


def test_step_derivatives_match_central_differences_of_steps():
    sim = settled_cube()
    q, v = sim.state()
    a, b = sim.step_derivatives()
    assert np.isfinite(a).all() and np.isfinite(b).all()
    # Widths that move v+ by about 1e-4. Each step here is warm-started from the previous
    # perturbed one, and the cube's four sliding corners are redundant: which of the
    # equivalent answers the solver returns follows its warm start, which moves the
    # rotation rows by a few 1e-7 of the largest entry (measured 4.0e-7 at h = 1e-5,
    # 3.4e-7 at 1e-4); tests/derivatives/step.rs restores the warm start and gets 4e-9.
    h = 1e-4
    worst = 0.0
    # The velocity columns of A and the torque columns of B: v+ after one step.
    for k in range(sim.nv):
        ends = []
        for sign in (1.0, -1.0):
            dv = np.zeros(sim.nv)
            dv[k] = sign * h
            sim.set_state(q, v + dv)
            sim.step()
            ends.append(sim.state()[1])
            sim.set_state(q, v)
        column = (ends[0] - ends[1]) / (2 * h)
        scale = np.abs(a[sim.nv :, sim.nv :]).max()
        worst = max(worst, np.abs(a[sim.nv :, sim.nv + k] - column).max() / scale)
    torque = 0.1
    for k in range(sim.nv):
        ends = []
        for sign in (1.0, -1.0):
            tau = np.zeros(sim.nv)
            tau[k] = sign * torque
            sim.set_state(q, v)
            sim.step(tau)
            ends.append(sim.state()[1])
        column = (ends[0] - ends[1]) / (2 * torque)
        scale = np.abs(b[sim.nv :]).max()
        worst = max(worst, np.abs(b[sim.nv :, k] - column).max() / scale)
    print(f"worst relative error {worst:.2e}")
    assert worst <= 1e-6


def test_bad_states_and_torques_are_typed_errors():
    sim = cb.Simulator(CUBE_SLIDE)
    q, v = sim.state()
    with pytest.raises(cb.DynamicsError):
        sim.set_state(q, v[:3])
    with pytest.raises(cb.DynamicsError):
        sim.step(np.full(sim.nv, np.nan))
    with pytest.raises(cb.ScenarioError):
        cb.Simulator(CUBE_SLIDE, set=["simulation.dt=-1"])


def test_solve_derivatives_match_central_differences():
    G = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, 0.0, 1.0]])
    g = np.array([-0.625, -1.0, -1.0])
    r = cb.solve(cb.ContactProblem(G, g, [0.5]), "ncp-admm", derivatives=True, eps_rel=1e-12)
    d = r.derivatives
    assert d["modes"] == [{"mode": "slide", "boundary_with": None}]
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        plus = cb.solve(cb.ContactProblem(G, g + e, [0.5]), "ncp-admm", eps_rel=1e-12).lambda_
        minus = cb.solve(cb.ContactProblem(G, g - e, [0.5]), "ncp-admm", eps_rel=1e-12).lambda_
        column = (plus - minus) / (2 * h)
        assert np.abs(d["dlambda_dg"][:, k] - column).max() <= 1e-7
    assert cb.solve(cb.ContactProblem(G, g, [0.5]), "ncp-admm").derivatives is None


def test_an_unconverged_solve_has_no_derivative():
    G = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, 0.0, 1.0]])
    p = cb.ContactProblem(G, [-0.625, -1.0, -1.0], [0.5])
    with pytest.raises(cb.DerivativeError, match="did not converge"):
        cb.solve(p, "ncp-pgs", derivatives=True, eps_rel=1e-14, max_iter=1)
