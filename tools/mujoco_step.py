#!/usr/bin/env python3
"""Time the same simulation step in MuJoCo and in contactbench, side by side in one run.

The MJCF is built from the scenario's world as contactbench simulates it
(`contactbench bench-step SCENARIO --describe`): the robot's kinematic tree, masses and
inertias read from the same URDF by Pinocchio, the same contact spheres (and nothing else
that collides), the same initial state, the same PD gains, the same dt. M(q0)'s joint block
is checked against contactbench's before anything is timed. MuJoCo steps with its own
contact model (soft constraints, `pyramidal` cone by default) and its Newton or PGS solver
at its default tolerance; contactbench with the solver given (default ncp-admm, eps 1e-6).

Both sides take `--settle` untimed steps from the initial state, then time blocks of
`--steps` steps (MuJoCo: one `mujoco.rollout.rollout` call, the state of every step written
out; contactbench: `bench-step`, by default recorded steps with every metric as a run takes
them, see `--variants`), median over `--repeats` blocks. `--rounds` alternates the sides
that many times and reports the medians and the median of the per-round ratios, so that a
busy machine moves both sides alike.

Example (the three cases of docs/speed.md):
  tools/mujoco_step.py scenarios/solo_standing.yaml --contactbench target/release/contactbench
  tools/mujoco_step.py scenarios/talos_push.yaml --set external_forces=[] --contactbench ...
  tools/mujoco_step.py scenarios/cube_slide.yaml --settle 0 --steps 500 --contactbench ...

Needs the `mujoco` (measured with 4.0.0), `pinocchio` (for the URDF, 4.1.0) and `numpy`
packages; measurement tooling only, not a dependency of contactbench.
"""

import argparse
import json
import math
import platform
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET


def require(name):
    try:
        return __import__(name)
    except ImportError as error:
        sys.exit(
            f"tools/mujoco_step.py: the Python package `{name}` is not importable ({error}). "
            f"Install it (e.g. `python3 -m pip install {'pin' if name == 'pinocchio' else name}`) "
            "and run again."
        )


mujoco = require("mujoco")
np = require("numpy")
try:
    from mujoco import rollout
except ImportError as error:
    sys.exit(
        f"tools/mujoco_step.py: `mujoco.rollout` is not importable ({error}); "
        "MuJoCo >= 3.2 is needed (measured with 4.0.0)."
    )

POINT_RADIUS = 1e-4  # MuJoCo spheres need a radius: a point contact becomes a 0.1 mm sphere


def contactbench(binary, scenario, overrides, *args):
    command = [binary, "bench-step", scenario, *args]
    for o in overrides:
        command += ["--set", o]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def quat_wxyz(q_xyzw):
    x, y, z, w = q_xyzw
    return [w, x, y, z]


def rotation_xyzw(q):
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def inertial(parent, mass, com, inertia):
    i = np.asarray(inertia)
    ET.SubElement(
        parent,
        "inertial",
        pos=fmt(com),
        mass=repr(float(mass)),
        fullinertia=fmt([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]),
    )


def build_mjcf(world, solver, cone):
    """The MJCF of the described world (module docs) and the map from our joint names to
    their MuJoCo bodies."""
    mu = world["friction"]
    friction = f"{mu} 0.005 0.0001"
    root = ET.Element("mujoco", model=world["scenario"])
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(
        root,
        "option",
        timestep=repr(world["dt"]),
        gravity="0 0 -9.81",
        integrator="Euler",
        solver=solver,
        cone=cone,
    )
    default = ET.SubElement(root, "default")
    ET.SubElement(default, "geom", contype="0", conaffinity="0")
    ET.SubElement(default, "joint", damping="0", armature="0")
    worldbody = ET.SubElement(root, "worldbody")
    # Spheres collide with the ground only (contype 2 / conaffinity 1 against 1 / 2).
    ET.SubElement(
        worldbody, "geom", name="ground", type="plane", size="0 0 1",
        contype="1", conaffinity="2", friction=friction,
    )
    bodies = {"universe": worldbody}
    joints = {j["name"]: j for j in world["joints"]}
    if world["urdf"]:
        pin = require("pinocchio")
        free = any(j["kind"] == "free_flyer" and j["parent"] == "universe" for j in world["joints"])
        model = (
            pin.buildModelFromUrdf(world["urdf"], pin.JointModelFreeFlyer())
            if free
            else pin.buildModelFromUrdf(world["urdf"])
        )
        for i in range(1, model.njoints):
            name = model.names[i]
            if name not in joints:
                sys.exit(f"joint {name} of {world['urdf']} is not in contactbench's model")
            placement = model.jointPlacements[i]
            body = ET.SubElement(
                bodies[model.names[model.parents[i]]],
                "body",
                name=name,
                pos=fmt(placement.translation),
                quat=fmt(pin.Quaternion(placement.rotation).coeffs()[[3, 0, 1, 2]]),
            )
            y = model.inertias[i]
            inertial(body, y.mass, y.lever, y.inertia)
            kind = model.joints[i].shortname()
            if kind == "JointModelFreeFlyer":
                ET.SubElement(body, "freejoint", name=name)
            elif kind in ("JointModelRX", "JointModelRY", "JointModelRZ"):
                axis = {"X": "1 0 0", "Y": "0 1 0", "Z": "0 0 1"}[kind[-1]]
                ET.SubElement(body, "joint", name=name, type="hinge", axis=axis, limited="false")
            elif kind == "JointModelRevoluteUnaligned":
                axis = fmt(model.joints[i].extract().axis)
                ET.SubElement(body, "joint", name=name, type="hinge", axis=axis, limited="false")
            else:
                sys.exit(f"joint {name}: {kind} is not rebuilt by this script")
            bodies[name] = body
    for b in world["bodies"]:
        body = ET.SubElement(worldbody, "body", name=b["name"])
        ET.SubElement(body, "freejoint", name=b["joint"])
        inertial(body, b["mass"], b["com"], b["inertia"])
        bodies[b["joint"]] = body
    for s in world["ground_spheres"]:
        radius = s["radius"] if s["radius"] > 0 else POINT_RADIUS
        ET.SubElement(
            bodies[s["joint"]], "geom", name=s["name"], type="sphere", size=repr(radius),
            pos=fmt(s["position"]), contype="2", conaffinity="1", friction=friction,
        )
    actuators = ET.SubElement(root, "actuator")
    controls = []
    pd = world["pd"]
    if pd:
        for a in pd["actuated"]:
            kp, kd = pd["kp"] * a["scale"], pd["kd"] * a["scale"]
            ET.SubElement(
                actuators, "general", name=a["joint"], joint=a["joint"], gainprm=repr(kp),
                biastype="affine", biasprm=f"0 {-kp!r} {-kd!r}",
            )
            controls.append(joint_angle(joints[a["joint"]], pd["target"]))
    return ET.tostring(root, encoding="unicode"), np.array(controls)


def joint_angle(joint, q):
    i = joint["idx_q"]
    if joint["kind"] == "revolute_unbounded":
        return math.atan2(q[i + 1], q[i])
    return q[i]


def mujoco_state(world, model):
    """qpos, qvel of MuJoCo from contactbench's q0, v0 (free flyers: quaternion order, and
    MuJoCo's linear velocity in world axes)."""
    qpos, qvel = np.zeros(model.nq), np.zeros(model.nv)
    q, v = world["q0"], world["v0"]
    for j in world["joints"]:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j["name"])
        a, b = model.jnt_qposadr[jid], model.jnt_dofadr[jid]
        iq, iv = j["idx_q"], j["idx_v"]
        if j["kind"] == "free_flyer":
            qpos[a : a + 3] = q[iq : iq + 3]
            qpos[a + 3 : a + 7] = quat_wxyz(q[iq + 3 : iq + 7])
            rotation = rotation_xyzw(q[iq + 3 : iq + 7])
            qvel[b : b + 3] = rotation @ np.array(v[iv : iv + 3])
            qvel[b + 3 : b + 6] = v[iv + 3 : iv + 6]
        else:
            qpos[a] = joint_angle(j, q)
            qvel[b] = v[iv]
    return qpos, qvel


def check_mass_matrix(world, model, data):
    """Max |M_mujoco − M_contactbench| over the dofs whose velocities both simulators
    define alike: hinge joints and the angular part of free joints (MuJoCo's free-joint
    linear velocity is in world axes, contactbench's in the body frame; at a given q the
    two are related by a rotation, so every block not involving it is the same). Also
    returns the largest entry compared."""
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    ours = np.array(world["mass_matrix"])
    theirs_index, ours_index = [], []
    for j in world["joints"]:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j["name"])
        b, iv = model.jnt_dofadr[jid], j["idx_v"]
        if j["kind"] == "free_flyer":
            theirs_index += [b + 3, b + 4, b + 5]
            ours_index += [iv + 3, iv + 4, iv + 5]
        else:
            theirs_index.append(b)
            ours_index.append(iv)
    theirs_block = full[np.ix_(theirs_index, theirs_index)]
    ours_block = ours[np.ix_(ours_index, ours_index)]
    return float(np.abs(theirs_block - ours_block).max()), float(np.abs(ours_block).max())


def time_mujoco(model, state0, controls, settle, steps, repeats):
    """µs per step (median over `repeats` rollouts of `steps` steps after `settle` steps)
    and the number of contacts after settling."""
    data = mujoco.MjData(model)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    mujoco.mj_setState(model, data, state0, spec)
    data.ctrl[:] = controls
    for _ in range(settle):
        mujoco.mj_step(model, data)
    contacts = data.ncon
    settled = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, settled, spec)
    control = np.tile(controls, (1, steps, 1)) if len(controls) else np.zeros((1, steps, 0))
    out = np.empty((1, steps, settled.size))
    sensors = np.empty((1, steps, model.nsensordata))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        rollout.rollout(model, data, settled[None], control, state=out, sensordata=sensors)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6 / steps, contacts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario")
    parser.add_argument("--contactbench", default="target/release/contactbench", help="the contactbench binary")
    parser.add_argument(
        "--describe-with",
        help="the contactbench binary that describes the world (default --contactbench; "
        "lets an older build without --describe be timed)",
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="scenario override, as for contactbench")
    parser.add_argument("--solver", default="ncp-admm", help="contactbench's solver (default ncp-admm, eps 1e-6)")
    parser.add_argument("--mujoco-solvers", default="Newton,PGS")
    parser.add_argument("--cone", default="pyramidal", choices=["pyramidal", "elliptic"])
    parser.add_argument("--settle", type=int, default=200)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--variants",
        default="all",
        help="contactbench variants, comma separated: `all`, `no-internal-forces`, `none` "
        "(recorded steps with those --metrics) and `advance` (the step without record)",
    )
    parser.add_argument(
        "--mujoco-only",
        action="store_true",
        help="time MuJoCo only (e.g. under `valgrind --tool=callgrind --toggle-collect=mj_step` "
        "to count its instructions per step, see docs/speed.md)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    describer = args.describe_with or args.contactbench
    world = contactbench(describer, args.scenario, args.overrides, "--describe")
    if world["other_pairs"]:
        print(
            f"warning: {world['other_pairs']} collision pairs other than sphere-ground are not "
            "rebuilt in MuJoCo",
            file=sys.stderr,
        )
    models = {}
    for solver in args.mujoco_solvers.split(","):
        xml, controls = build_mjcf(world, solver, args.cone)
        model = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(model)
        qpos, qvel = mujoco_state(world, model)
        data.qpos[:], data.qvel[:] = qpos, qvel
        worst, scale = check_mass_matrix(world, model, data)
        if worst > 1e-9 * max(scale, 1.0):
            sys.exit(f"M(q0) differs from contactbench's by {worst:.3e} (scale {scale:.3e})")
        state0 = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_getState(model, data, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        models[solver] = (model, state0, controls, worst)

    variants = [] if args.mujoco_only else args.variants.split(",")
    ours_times = {v: [] for v in variants}
    ours_reports = {}
    theirs_times = {s: [] for s in models}
    mujoco_contacts = {}
    for _ in range(args.rounds):
        for v in variants:
            # `all` is bench-step's default: no flag, so that older builds can be timed too.
            flags = {"advance": ["--no-record"], "all": []}.get(v, ["--metrics", v])
            report = contactbench(
                args.contactbench, args.scenario, args.overrides, "--json",
                "--solver", args.solver, "--steps", str(args.steps), "--repeats", str(args.repeats),
                "--settle", str(args.settle), *flags,
            )
            ours_times[v].append(report["step_us"])
            ours_reports[v] = report
        for solver, (model, state0, controls, _) in models.items():
            theirs, contacts = time_mujoco(model, state0, controls, args.settle, args.steps, args.repeats)
            mujoco_contacts[solver] = contacts
            theirs_times[solver].append(theirs)
    # Ratios per round: each contactbench variant over each MuJoCo solver of the same round.
    ratios = {
        (v, s): [o / t for o, t in zip(ours_times[v], theirs_times[s])]
        for v in variants
        for s in models
    }
    result = {
        "scenario": world["scenario"],
        "machine": ours_reports[variants[0]]["machine"] if variants else platform.processor(),
        "python_platform": platform.platform(),
        "mujoco_version": mujoco.__version__,
        "mass_matrix_max_difference": {s: m[3] for s, m in models.items()},
        "contactbench": {
            v: {
                "solver": args.solver,
                "step_us_median": statistics.median(ours_times[v]),
                "step_us_rounds": ours_times[v],
                "stages_us": ours_reports[v]["stages_us"],
                "contacts": ours_reports[v]["contacts"],
                "iterations": ours_reports[v]["iterations"],
                "not_converged": ours_reports[v]["not_converged"],
                "ratio_median": {s: statistics.median(ratios[(v, s)]) for s in models},
            }
            for v in variants
        },
        "mujoco": {
            s: {
                "step_us_median": statistics.median(theirs_times[s]),
                "step_us_rounds": theirs_times[s],
                "contacts_after_settling": mujoco_contacts[s],
            }
            for s in models
        },
        "protocol": {
            "settle": args.settle, "steps": args.steps, "repeats": args.repeats,
            "rounds": args.rounds, "cone": args.cone,
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{world['scenario']}: {args.rounds} rounds, each {args.repeats} blocks of {args.steps} steps "
        f"after {args.settle} (median block per round, median of rounds)"
    )
    print(f"machine: {result['machine']}; MuJoCo {mujoco.__version__}, cone {args.cone}")
    print(
        "M(q0) shared blocks, max |MuJoCo - contactbench|: "
        f"{max(result['mass_matrix_max_difference'].values()):.2e}"
    )
    names = list(models)
    print("| simulator | µs per step | " + " | ".join(f"ratio to MuJoCo {s}" for s in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for v, c in result["contactbench"].items():
        cells = " | ".join(f"{c['ratio_median'][s]:.2f}" for s in names)
        print(f"| contactbench {args.solver} ({v}) | {c['step_us_median']:.2f} | {cells} |")
    for s, m in result["mujoco"].items():
        print(f"| MuJoCo {s} | {m['step_us_median']:.2f} |" + " |" * len(names))


if __name__ == "__main__":
    main()
