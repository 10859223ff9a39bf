#!/usr/bin/env python3
"""Golden values from Pinocchio for the dynamics tests (tests/data/pinocchio_<robot>.json).

Writes the same JSON format as the shared Solo-12 fixture: for three configurations (the SRDF
reference one, or the neutral one, then two random ones, seeded) with random velocities and
torques: mass matrix, nonlinear effects, generalized gravity, ABA acceleration, kinetic and
potential energy, placements and world-aligned linear Jacobians of some frames, and the
Delassus matrix J M^-1 J^T of those frames (point contacts, world-aligned axes).

Run it against the robots that `contactbench robots fetch` put in the cache, with
Pinocchio 4.1.0 installed in a virtual environment outside the repository:

    python3 -m venv /tmp/pin && /tmp/pin/bin/pip install pin==4.1.0
    /tmp/pin/bin/python tools/pinocchio_goldens.py talos tests/data/pinocchio_talos.json
    /tmp/pin/bin/python tools/pinocchio_goldens.py allegro tests/data/pinocchio_allegro.json
    /tmp/pin/bin/python tools/pinocchio_goldens.py mixed tests/data/pinocchio_mixed.json

`mixed` is the test model tests/data/model_mixed.urdf (every joint type on unaligned axes).

`total_mass` is the mass of every body, including those welded to the world (the Allegro
palm), which Pinocchio's computeTotalMass leaves out.
"""

import json
import os
import sys

import numpy as np
import pinocchio as pin

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ROBOTS = {
    "solo12": dict(
        urdf="solo_description/robots/solo12.urdf",
        srdf="solo_description/srdf/solo.srdf",
        free_flyer=True,
        reference="standing",
        frames=["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"],
    ),
    "talos": dict(
        urdf="talos_data/robots/talos_reduced.urdf",
        srdf="talos_data/srdf/talos.srdf",
        free_flyer=True,
        reference="half_sitting",
        frames=["left_sole_link", "right_sole_link", "gripper_left_fingertip_3_link", "wrist_right_ft_tool_link"],
    ),
    "allegro": dict(
        urdf="allegro_hand_description/urdf/allegro_right_hand.urdf",
        srdf=None,
        free_flyer=False,
        reference=None,
        frames=["link_3.0_tip", "link_7.0_tip", "link_11.0_tip", "link_15.0_tip"],
    ),
    "mixed": dict(
        urdf=os.path.join(REPO, "tests", "data", "model_mixed.urdf"),
        srdf=None,
        free_flyer=True,
        reference=None,
        frames=["arm_tip", "bracket", "flap"],
    ),
}

SEED = 20261121


def default_robots_dir():
    cache = os.environ.get("CONTACTBENCH_CACHE") or os.path.join(REPO, "robots", "cache")
    return os.path.join(cache, "example-robot-data-6.0.0", "share", "example-robot-data", "robots")


def random_configuration(model, rng):
    """Joints uniform in their limits (clipped to [-pi, pi]); a free flyer at a random
    position with a random unit quaternion."""
    lo = np.clip(model.lowerPositionLimit, -np.pi, np.pi)
    hi = np.clip(model.upperPositionLimit, -np.pi, np.pi)
    q = lo + (hi - lo) * rng.random(model.nq)
    for j in model.joints[1:]:
        if j.nq == 2 and j.nv == 1:
            theta = rng.uniform(-np.pi, np.pi)
            q[j.idx_q : j.idx_q + 2] = [np.cos(theta), np.sin(theta)]
        if j.shortname() == "JointModelFreeFlyer":
            i = j.idx_q
            q[i : i + 3] = rng.uniform(-1.0, 1.0, 3)
            quat = rng.normal(size=4)
            q[i + 3 : i + 7] = quat / np.linalg.norm(quat)
    return q


def matrix(m):
    return [list(map(float, row)) for row in np.asarray(m)]


def vector(v):
    return list(map(float, np.asarray(v).ravel()))


def case(model, data, frame_names, q, v, tau):
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    nle = pin.nonLinearEffects(model, data, q, v)
    g = pin.computeGeneralizedGravity(model, data, q)
    ddq = pin.aba(model, data, q, v, tau)
    ke = pin.computeKineticEnergy(model, data, q, v)
    pe = pin.computePotentialEnergy(model, data, q)
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    frames = {}
    jacobians = []
    for name in frame_names:
        fid = model.getFrameId(name)
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3, :]
        jacobians.append(J)
        frames[name] = {
            "position": vector(data.oMf[fid].translation),
            "rotation": matrix(data.oMf[fid].rotation),
            "jacobian_linear_world_aligned": matrix(J),
        }
    J = np.vstack(jacobians)
    G = J @ np.linalg.solve(M, J.T)
    return {
        "q": vector(q),
        "v": vector(v),
        "tau": vector(tau),
        "mass_matrix": matrix(M),
        "nonlinear_effects": vector(nle),
        "generalized_gravity": vector(g),
        "aba_acceleration": vector(ddq),
        "kinetic_energy": float(ke),
        "potential_energy": float(pe),
        "frames": frames,
        "delassus": {"frames": frame_names, "G": matrix(G)},
    }


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: pinocchio_goldens.py ROBOT OUTPUT.json [ROBOTS_DIR]")
    name, output = sys.argv[1], sys.argv[2]
    robots_dir = sys.argv[3] if len(sys.argv) == 4 else default_robots_dir()
    spec = ROBOTS[name]
    urdf = os.path.join(robots_dir, spec["urdf"])
    if spec["free_flyer"]:
        model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(urdf)
    if spec["srdf"]:
        pin.loadReferenceConfigurations(model, os.path.join(robots_dir, spec["srdf"]), False)
    data = model.createData()
    rng = np.random.default_rng(SEED)
    first = (
        model.referenceConfigurations[spec["reference"]].copy()
        if spec["reference"]
        else pin.neutral(model)
    )
    configurations = [first, random_configuration(model, rng), random_configuration(model, rng)]
    cases = []
    for q in configurations:
        v = rng.uniform(-1.0, 1.0, model.nv)
        tau = rng.uniform(-3.0, 3.0, model.nv)
        if spec["free_flyer"]:
            tau[:6] = 0.0
        cases.append(case(model, data, spec["frames"], q, v, tau))
    out = {
        "robot": name,
        "generator": "pinocchio " + pin.__version__,
        "package": "example-robot-data 6.0.0",
        "urdf": os.path.relpath(spec["urdf"], REPO) if os.path.isabs(spec["urdf"]) else spec["urdf"],
        "srdf": spec["srdf"],
        "free_flyer": spec["free_flyer"],
        "reference_configuration": spec["reference"],
        "conventions": {
            "q": "free-flyer: [x y z qx qy qz qw] then joints in joint_names order",
            "v": "free-flyer: [linear angular] expressed in the base (local) frame, then joints",
            "jacobian": "3 x nv, linear velocity of the frame origin, world-aligned axes",
            "gravity": vector(model.gravity.linear),
            "potential_energy": "sum over bodies of -m g.c (world frame), Pinocchio convention",
            "total_mass": "every body, including those welded to the world",
        },
        "nq": model.nq,
        "nv": model.nv,
        "total_mass": float(sum(inertia.mass for inertia in model.inertias)),
        "joint_names": list(model.names)[1:],
        "cases": cases,
    }
    with open(output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
