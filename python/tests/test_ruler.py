"""The Python judge is the Rust ruler: its scales are local to each contact, so a huge
squeeze elsewhere in the problem does not waive a contact that pushes while it separates
(docs/ruler.md, "Why local scales")."""

from __future__ import annotations

import numpy as np

import contactbench as cb


def squeezed_and_elsewhere() -> cb.ContactProblem:
    """Body 0 held between two walls (normals ±x) by friction against its weight; body 1,
    elsewhere, falls on the floor at 1 m/s. Point masses of 1 kg, ``G = J Jᵀ``."""
    x, y, z = np.eye(3)
    frames = [(0, (y, z, x)), (0, (y, -z, -x)), (1, (x, y, z))]
    jacobian = np.zeros((9, 6))
    for i, (body, axes) in enumerate(frames):
        for row, axis in enumerate(axes):
            jacobian[3 * i + row, 3 * body : 3 * body + 3] = axis
    v_free = np.array([0.0, 0.0, -0.01, 0.0, 0.0, -1.0])
    return cb.ContactProblem(G=jacobian @ jacobian.T, g=jacobian @ v_free, mu=[0.5] * 3)


# The walls squeeze body 0 with 1e8 N·s and hold its weight; body 1's contact pushes
# with 11 N·s while separating at 10 m/s.
SQUEEZED = np.array([0.0, 0.005, 1e8, 0.0, -0.005, 1e8, 0.0, 0.0, 11.0])


def test_a_squeeze_elsewhere_does_not_waive_a_separating_contact():
    p = squeezed_and_elsewhere()
    for model in ["ncp", "ccp"]:
        assert cb.model_criteria(p, SQUEEZED, model)["relative"] == 1.0
    assert cb.relative_criterion(p, SQUEEZED) == 1.0


def test_the_admm_solvers_do_not_accept_the_squeezed_warm_start():
    p = squeezed_and_elsewhere()
    for solver in ["ncp-admm", "ccp-admm"]:
        r = cb.solve(p, solver, warm_start=SQUEEZED)
        assert r.iterations > 0, solver
        if r.status == "converged":
            assert abs(r.lambda_[8] - 1.0) <= 1e-5, (solver, r.lambda_[8])


def test_an_answer_the_ruler_refutes_is_not_converged():
    # ccp-newton on G = 0, g_N = −1: no force can stop the contact penetrating.
    p = cb.ContactProblem(G=np.zeros((3, 3)), g=[0.0, 0.0, -1.0], mu=[0.5])
    r = cb.solve(p, "ccp-newton")
    assert (r.status, r.converged) == ("refuted_by_ruler", False)
    assert r.relative_criterion >= 1.0
