#!/usr/bin/env python3
"""Time a pile of boxes in MuJoCo and in contactbench, side by side in one run.

The MJCF is built from `contactbench bench-step SCENARIO --describe` (scenarios with
built-in bodies only, e.g. scenarios/pile_columns.yaml): one free body per box, the same
sizes, masses, initial poses, friction and time step, on a ground plane. MuJoCo collides
the boxes themselves (its box-box and box-plane manifolds), contactbench their corner
spheres; MuJoCo solves its soft-constraint model with Newton (pyramidal cone by default).

Each round times, on each side, `--repeats` blocks of `--steps` steps after `--settle`
untimed steps and keeps the median block; MuJoCo steps with `mujoco.rollout.rollout`, one
block per call. contactbench runs `bench-step` once per variant (`--variants`, default
`all,none`: recorded steps with every metric, and without any). The report gives each
side's median over the rounds, the median of the rounds' ratios, the contacts per step on
both sides and contactbench's peak resident memory (`/usr/bin/time`, when present).

With `--sweep ASSIGNMENT` (repeatable) the measurement is repeated with each assignment
added to the `--set`s, and a last table gives µs per step against contacts on both sides
with the growth exponents fitted by least squares on their logarithms.

Example:
  tools/mujoco_pile.py scenarios/pile_columns.yaml --contactbench target/release/contactbench \
      --set 'world.generate.columns={nx: 3, ny: 3, height: 3}'
  tools/mujoco_pile.py scenarios/pile_columns.yaml --rounds 1 --variants none \
      --sweep 'world.generate.columns={nx: 2, ny: 2, height: 2}' \
      --sweep 'world.generate.columns={nx: 3, ny: 3, height: 3}'

Needs `mujoco` (measured with 4.0.0) and `numpy`; measurement tooling only.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import mujoco
    import numpy as np
    from mujoco import rollout
except ImportError as error:
    sys.exit(f"tools/mujoco_pile.py: needs `mujoco` (>= 3.2) and `numpy`: {error}")


def contactbench_args(args):
    sets = []
    for assignment in args.set:
        sets += ["--set", assignment]
    return [args.scenario] + sets


def describe(args):
    out = subprocess.run(
        [args.contactbench, "bench-step", *contactbench_args(args), "--describe"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def mjcf(world, cone):
    """The MJCF of the described bodies: boxes on a plane."""
    bodies = []
    for body in world["bodies"]:
        if body["half_extents"] is None:
            sys.exit(f"tools/mujoco_pile.py: body {body['name']} is not a box")
        joint = next(j for j in world["joints"] if j["name"] == body["joint"])
        q = world["q0"][joint["idx_q"]: joint["idx_q"] + 7]
        x, y, z, qx, qy, qz, qw = q
        h = body["half_extents"]
        bodies.append(
            f'<body name="{body["name"]}" pos="{x} {y} {z}" quat="{qw} {qx} {qy} {qz}">'
            f'<freejoint/><geom type="box" size="{h[0]} {h[1]} {h[2]}" mass="{body["mass"]}"/>'
            "</body>"
        )
    mu = world["friction"]
    return (
        f'<mujoco><option timestep="{world["dt"]}" solver="Newton" cone="{cone}"/>'
        f'<default><geom friction="{mu} 0.005 0.0001" condim="3"/></default>'
        '<size memory="200M"/>'
        f'<worldbody><geom type="plane" size="0 0 1"/>{"".join(bodies)}</worldbody></mujoco>'
    )


def time_mujoco(model, args):
    """Median µs per step over the blocks, and mean contacts per step."""
    data = mujoco.MjData(model)
    for _ in range(args.settle):
        mujoco.mj_step(model, data)
    state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    blocks, contacts = [], 0
    for _ in range(args.repeats):
        start = time.perf_counter()
        rollout.rollout(model, data, state[None, :], nstep=args.steps)
        blocks.append((time.perf_counter() - start) * 1e6 / args.steps)
    scratch = mujoco.MjData(model)
    mujoco.mj_setState(model, scratch, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    for _ in range(args.steps):
        mujoco.mj_step(model, scratch)
        contacts += scratch.ncon
    return statistics.median(blocks), contacts / args.steps


def time_contactbench(args, variant):
    """bench-step's report for a variant, and the process's peak memory (KB) if known."""
    command = [
        args.contactbench, "bench-step", *contactbench_args(args), "--json",
        "--steps", str(args.steps), "--repeats", str(args.repeats),
        "--settle", str(args.settle),
    ]
    if variant == "advance":
        command.append("--no-record")
    else:
        command += ["--metrics", variant]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    with tempfile.NamedTemporaryFile("r") as peak:
        if timer:
            command = [timer, "-f", "%M", "-o", peak.name] + command
        out = subprocess.run(command, check=True, capture_output=True, text=True)
        memory = int(peak.read().strip() or 0) if timer else None
    return json.loads(out.stdout), memory


def growth_exponent(contacts, micros):
    """Least-squares slope of log(µs) against log(contacts)."""
    x = [math.log(c) for c in contacts]
    y = [math.log(t) for t in micros]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    den = sum((a - mx) ** 2 for a in x)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / den if den > 0 else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep", action="append", default=[])
    parser.add_argument("scenario")
    parser.add_argument("--contactbench", default="target/release/contactbench")
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--variants", default="all,none")
    parser.add_argument("--cone", default="pyramidal", choices=["pyramidal", "elliptic"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--settle", type=int, default=100)
    args = parser.parse_args()
    if not args.sweep:
        measure(args)
        return
    fixed, rows = list(args.set), []
    for assignment in args.sweep:
        args.set = fixed + [assignment]
        rows.append((assignment, measure(args)))
    variants = args.variants.split(",")
    print("\n| size | contacts (ours / MuJoCo) | MuJoCo µs | "
          + " | ".join(f"ours µs ({v})" for v in variants) + " |")
    print("|---|---|---|" + "---|" * len(variants))
    for assignment, r in rows:
        print(f"| {assignment} | {r['contacts']:.0f} / {r['mujoco_contacts']:.0f} | "
              f"{r['mujoco']:.1f} | " + " | ".join(f"{r[v]:.1f}" for v in variants) + " |")
    if len(rows) > 1:
        fits = [f"MuJoCo {growth_exponent([r['mujoco_contacts'] for _, r in rows], [r['mujoco'] for _, r in rows]):.2f}"]
        fits += [f"ours ({v}) {growth_exponent([r['contacts'] for _, r in rows], [r[v] for _, r in rows]):.2f}"
                 for v in variants]
        print("growth exponent of µs per step against contacts: " + ", ".join(fits))


def measure(args):
    """One size: prints its report and returns its medians and contacts."""
    world = describe(args)
    model = mujoco.MjModel.from_xml_string(mjcf(world, args.cone))
    variants = args.variants.split(",")
    ours = {v: [] for v in variants}
    theirs, ratios = [], {v: [] for v in variants}
    reports, memory = {}, {}
    for _ in range(args.rounds):
        mj_us, mj_contacts = time_mujoco(model, args)
        theirs.append(mj_us)
        for v in variants:
            report, peak = time_contactbench(args, v)
            reports[v], memory[v] = report, peak
            ours[v].append(report["step_us"])
            ratios[v].append(report["step_us"] / mj_us)
    bodies = len(world["bodies"])
    print(f"{world['scenario']}: {bodies} boxes, dt {world['dt']} s, {args.rounds} rounds of "
          f"{args.repeats} blocks of {args.steps} steps after {args.settle}; load "
          f"{os.getloadavg()[0]:.1f}")
    print(f"MuJoCo {mujoco.__version__} Newton ({args.cone}): {statistics.median(theirs):.1f} µs "
          f"per step, {mj_contacts:.1f} contacts")
    for v in variants:
        r = reports[v]
        per_contact = ""
        if memory[v] and r["contacts"] > 0:
            per_contact = (f", peak memory {memory[v] / 1024:.1f} MB "
                           f"({memory[v] / r['contacts']:.1f} KB per contact)")
        print(f"contactbench {v}: {statistics.median(ours[v]):.1f} µs per step, "
              f"{r['contacts']:.1f} contacts, {r['iterations']:.1f} iterations, "
              f"{r['not_converged']} not converged; ratio to MuJoCo "
              f"{statistics.median(ratios[v]):.2f}x "
              f"[{' '.join(f'{x:.2f}' for x in ratios[v])}]{per_contact}")
    result = {"mujoco": statistics.median(theirs), "mujoco_contacts": mj_contacts,
              "contacts": reports[variants[0]]["contacts"]}
    result.update({v: statistics.median(ours[v]) for v in variants})
    return result


if __name__ == "__main__":
    main()
