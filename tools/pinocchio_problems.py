#!/usr/bin/env python3
"""Contact problems built by Pinocchio 4.1.0 (an implementation independent of ours), as
contactbench problem files, for the regression tests of the ruler (tests/data/pinocchio/).

`solo12_standing.json`: Solo-12 (example-robot-data 6.0.0, free flyer) in its SRDF
`standing` configuration, at rest (v = 0), lowered so that the four foot spheres
(radius 0.016 m, centred at the *_FOOT frames) touch flat ground z = 0; τ = 0; one step
dt = 1 ms: v_f = dt ABA(q, 0, 0), G = J M⁻¹ Jᵀ and g = J v_f with J the world-aligned
linear Jacobians (3 x nv) of the four contact points (sphere bottoms), rows [t1, t2, n] =
world [x, y, z]; μ = 0.9, no compliance. `J` is not part of the file.

Usage (Pinocchio in a virtual environment outside the repository):

    /work/venv/bin/python tools/pinocchio_problems.py ROBOTS_DIR tests/data/pinocchio

with ROBOTS_DIR the `robots` directory of example-robot-data 6.0.0 (contactbench's
cache: $CONTACTBENCH_CACHE/example-robot-data-6.0.0/share/example-robot-data/robots).
"""

import json
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

DT = 1e-3
RADIUS = 0.016
MU = 0.9
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def solo12_standing(robots):
    urdf = robots / "solo_description/robots/solo12.urdf"
    srdf = robots / "solo_description/srdf/solo.srdf"
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(srdf), False)
    q = model.referenceConfigurations["standing"].copy()
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    lowest = min(data.oMf[model.getFrameId(f)].translation[2] for f in FEET)
    q[2] -= lowest - RADIUS
    pin.computeJointJacobians(model, data, q)
    pin.framesForwardKinematics(model, data, q)
    rows = []
    for f in FEET:
        fid = model.getFrameId(f)
        J6 = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        # Shift the linear velocity from the frame origin to the contact point:
        # v_p = v_o + ω × (p − o) = v_o − (p − o) × ω.
        offset = np.array([0.0, 0.0, -RADIUS])
        rows.append(J6[:3] - pin.skew(offset) @ J6[3:])
    J = np.vstack(rows)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    v = np.zeros(model.nv)
    a = pin.aba(model, data, q, v, np.zeros(model.nv))
    v_free = v + DT * a
    G = J @ np.linalg.solve(M, J.T)
    g = J @ v_free
    return {"G": G.tolist(), "g": g.tolist(), "mu": [MU] * len(FEET)}


def main():
    robots, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    problem = solo12_standing(robots)
    (out / "solo12_standing.json").write_text(json.dumps(problem) + "\n")
    print(f"pinocchio {pin.__version__}: {out / 'solo12_standing.json'}")


if __name__ == "__main__":
    main()
