#!/usr/bin/env python3
"""Time one step's derivatives in MuJoCo and in contactbench, side by side in one run.

MuJoCo: `mjd_transitionFD` (finite differences of whole steps: A = ∂x⁺/∂x, (2nv)², and
B = ∂x⁺/∂u of its actuators), forward (`flg_centered=0`) and centered, at its default
`eps = 1e-6`, on the MJCF that `tools/mujoco_step.py` builds from the scenario's world
(`contactbench bench-step SCENARIO --describe`: the same URDF, masses, contact spheres, PD
gains and dt; M(q0) checked against contactbench's before anything is timed), after
`--settle` steps from the initial state, median of `--repeats` calls.

contactbench: `bench-step --derivatives --json`: after each step of a block, the analytical
A = ∂(q⁺, v⁺)/∂(q, v) and B = ∂(q⁺, v⁺)/∂τ (B of every dof, MuJoCo's of the actuated ones),
on a clock of their own; the median block of `--steps` steps after `--settle` steps.

`--rounds` alternates the two sides and reports medians and the median of the per-round
ratios, so that a busy machine moves both alike. The step itself is timed on both sides
too (MuJoCo `mj_step`, contactbench `advance`).

Example (the table of docs/derivatives.md):
  tools/mujoco_derivatives.py scenarios/solo_standing.yaml \\
      "scenarios/talos_push.yaml --set external_forces=[]" --contactbench target/release/contactbench

Needs `mujoco` (measured with 4.0.0), `pinocchio` (4.1.0) and `numpy`, as
tools/mujoco_step.py; measurement tooling only, not a dependency of contactbench.
"""

import argparse
import json
import os
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mujoco_step import (  # noqa: E402  (the MJCF builder shared with the step timing)
    build_mjcf,
    check_mass_matrix,
    contactbench,
    mujoco,
    mujoco_state,
    np,
)


def mujoco_case(world, solver, cone, settle):
    """The model and its data after `settle` steps, and the controls (PD targets)."""
    xml, controls = build_mjcf(world, solver, cone)
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = mujoco_state(world, model)
    worst, scale = check_mass_matrix(world, model, data)
    if worst > 1e-9 * max(scale, 1.0):
        sys.exit(f"M(q0) differs from contactbench's by {worst:.3e} (scale {scale:.3e})")
    if len(controls):
        data.ctrl[:] = controls
    for _ in range(settle):
        mujoco.mj_step(model, data)
    return model, data


def time_transition(model, data, centered, repeats):
    """µs per `mjd_transitionFD` call (median) from the settled state."""
    n = 2 * model.nv + model.na
    a, b = np.zeros((n, n)), np.zeros((n, model.nu))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        mujoco.mjd_transitionFD(model, data, 1e-6, centered, a, b, None, None)
        times.append(time.perf_counter() - start)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        sys.exit("mjd_transitionFD returned a non-finite entry")
    return statistics.median(times) * 1e6


def time_mujoco_step(model, data, repeats):
    """µs per `mj_step` from the settled state (median over blocks of 100 steps)."""
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, state, spec)
    times = []
    for _ in range(repeats):
        mujoco.mj_setState(model, data, state, spec)
        start = time.perf_counter()
        for _ in range(100):
            mujoco.mj_step(model, data)
        times.append((time.perf_counter() - start) / 100)
    mujoco.mj_setState(model, data, state, spec)
    return statistics.median(times) * 1e6


def measure(args, case):
    scenario, *rest = shlex.split(case)
    overrides = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] == "--set"]
    world = contactbench(args.contactbench, scenario, overrides, "--describe")
    model, data = mujoco_case(world, args.mujoco_solver, args.cone, args.settle)
    rounds = {k: [] for k in ("ours", "ours_step", "forward", "centered", "mj_step")}
    ours = None
    for _ in range(args.rounds):
        ours = contactbench(
            args.contactbench, scenario, overrides, "--json", "--derivatives",
            "--solver", args.solver, "--steps", str(args.steps),
            "--repeats", str(args.repeats), "--settle", str(args.settle),
        )
        rounds["ours"].append(ours["derivatives_us"])
        rounds["ours_step"].append(ours["step_us"])
        rounds["forward"].append(time_transition(model, data, 0, args.repeats))
        rounds["centered"].append(time_transition(model, data, 1, args.repeats))
        rounds["mj_step"].append(time_mujoco_step(model, data, args.repeats))
    ratio = {
        k: statistics.median(o / t for o, t in zip(rounds["ours"], rounds[k]))
        for k in ("forward", "centered")
    }
    return {
        "scenario": world["scenario"],
        "nv": model.nv,
        "actuators": model.nu,
        "mujoco_contacts_after_settling": int(data.ncon),
        "contactbench_contacts": ours["contacts"],
        "contactbench_not_converged": ours["not_converged"],
        "median_us": {k: statistics.median(v) for k, v in rounds.items()},
        "rounds_us": rounds,
        "ratio_ours_to_mujoco": ratio,
        "machine": ours["machine"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="+", help='a scenario, with its --set overrides in the same quoted word')
    parser.add_argument("--contactbench", default="target/release/contactbench")
    parser.add_argument("--solver", default="ncp-admm")
    parser.add_argument("--mujoco-solver", default="Newton")
    parser.add_argument("--cone", default="pyramidal", choices=["pyramidal", "elliptic"])
    parser.add_argument("--settle", type=int, default=200)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(args, case) for case in args.cases]
    if args.json:
        print(json.dumps(results))
        return
    print(
        f"MuJoCo {mujoco.__version__} ({args.mujoco_solver}, {args.cone}) against contactbench "
        f"{args.solver}; {args.rounds} rounds, medians; machine: {results[0]['machine']['cpu']} "
        f"({results[0]['machine']['cores']} cores)"
    )
    print(
        "| robot | nv | contacts (ours / MuJoCo) | contactbench A, B (µs) | MuJoCo FD forward (µs) "
        "| MuJoCo FD centered (µs) | ratio to forward | ratio to centered | step: ours / MuJoCo (µs) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        m = r["median_us"]
        print(
            f"| {r['scenario']} | {r['nv']} | {r['contactbench_contacts']:.0f} / "
            f"{r['mujoco_contacts_after_settling']} | {m['ours']:.1f} | {m['forward']:.1f} | "
            f"{m['centered']:.1f} | {r['ratio_ours_to_mujoco']['forward']:.3f} | "
            f"{r['ratio_ours_to_mujoco']['centered']:.3f} | {m['ours_step']:.1f} / {m['mj_step']:.1f} |"
        )


if __name__ == "__main__":
    main()
