#!/usr/bin/env python3
"""Pinocchio 4.1.0's C++ contact solvers (PGS and ADMM) on contactbench problem files.

For each problem file (JSON: `G` rows, `g`, `mu`, optional `R`; per-contact order
[t1, t2, n], the order of Pinocchio's CoulombFrictionCone) this runs, through Pinocchio's
Python bindings:

- `pgs`: PGSConstraintSolver. Its per-contact update is the NCP one (normal step, then the
  tangential step projected on the disk of radius mu * lambda_N: Alg. 5, our `ncp-pgs`);
  it stops on the de Saxce-corrected (NCP) dual feasibility and complementarity.
- `admm-ncp`: ADMMConstraintSolver with `solve_ncp = True` (de Saxce correction; our
  `ncp-admm`).
- `admm-ncp-spectral`: the same with the spectral rho update rule (Pinocchio 3's, and the
  rule of our `ncp-admm`) instead of the default OSQP rule.
- `admm-ccp`: ADMMConstraintSolver with `solve_ncp = False` (the CCP; our `ccp-admm`).

Settings: absolute feasibility and complementarity tolerances `--eps-abs` (1e-6), relative
tolerances 0 (so only the absolute test stops a solve), `max_iterations` 1000, every other
setting at Pinocchio's default (ADMM: OSQP rho update rule, mu_prox 1e-6, no Anderson
acceleration, rho not kept between solves).

Cold: no impulse guess (x0 = 0). Warm: the impulse guess is the answer of the same solver
(same settings) on the previous step's problem, given as `NAME=PROBLEM.json:PREVIOUS.json`,
as in contactbench's solver bench (`benches/common/mod.rs`).

Time per iteration: the median time divided by the iterations run, which is Pinocchio's
reported count + 1 (its loop index at the break counts from 0; a solve that stops at
once still runs the test once); `--solvers` limits the run to some solvers, `--no-warm`
skips the warm rows.

Time: median of `time.perf_counter()` around the `solve` call alone, over `--repeats` calls
(the Python -> C++ binding overhead is included; the Delassus operator, result object and
guess are set up outside the timer; one solver object, and so its workspace memory, serves
every repeat; the solver factorizes G + rho I inside every `solve`).

Every answer is judged by one ruler, contactbench's (docs/design.md section 5), recomputed
here in numpy: with c = (G + diag R) lambda + g and c_hat = c + (0, 0, mu ||c_T||),
NCP criterion = max_i max(dist_K(lambda_i), dist_K*(c_hat_i), |<lambda_i, c_hat_i>|);
the CCP residual is the same with c instead of c_hat.

Usage, with Pinocchio installed in a virtual environment outside the repository:

    python3 -m venv /tmp/pin && /tmp/pin/bin/pip install pin==4.1.0
    /tmp/pin/bin/python tools/pinocchio_solvers.py \
        solo12=solo12.json:solo12_prev.json talos=talos.json:talos_prev.json \
        random20=random20.json:random20_prev.json --json pinocchio_solvers.json
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import pinocchio as pin

MAX_ITERATIONS = 1000


def load_problem(path):
    """G (+ diag R), g, mu of a contactbench problem file."""
    with open(path) as f:
        data = json.load(f)
    G = np.array(data["G"], dtype=float)
    g = np.array(data["g"], dtype=float)
    mu = np.array(data["mu"], dtype=float)
    if G.shape != (g.size, g.size) or g.size != 3 * mu.size:
        sys.exit(f"{path}: G is {G.shape}, g has {g.size} entries, mu {mu.size}")
    if data.get("R") is not None:
        G = G + np.diag(np.array(data["R"], dtype=float))
    return G, g, mu


def project_cone(mu, x):
    """Euclidean projection onto {||x_T|| <= mu x_N} (design.md section 2)."""
    t = np.hypot(x[0], x[1])
    n = x[2]
    if t <= mu * n:
        return x.copy()
    if mu * t <= -n:
        return np.zeros(3)
    s = (mu * t + n) / (mu * mu + 1.0)
    return np.array([mu * s * x[0] / t, mu * s * x[1] / t, s])


def project_dual_cone(mu, x):
    """Projection onto the dual cone K_{1/mu} (the half-space x_N >= 0 when mu = 0)."""
    if mu == 0.0:
        return np.array([x[0], x[1], max(x[2], 0.0)])
    return project_cone(1.0 / mu, x)


def residual(G, g, mu, lam, corrected):
    """max_i max(eps_p, eps_d, eps_c); de Saxce-corrected velocity when `corrected` (NCP)."""
    c = G @ lam + g
    worst = 0.0
    for i, m in enumerate(mu):
        li = lam[3 * i : 3 * i + 3]
        ci = c[3 * i : 3 * i + 3].copy()
        if corrected:
            ci[2] += m * np.hypot(ci[0], ci[1])
        eps_p = np.linalg.norm(li - project_cone(m, li))
        eps_d = np.linalg.norm(ci - project_dual_cone(m, ci))
        eps_c = abs(li @ ci)
        worst = max(worst, eps_p, eps_d, eps_c)
    return worst


def constraints(mu):
    """One point-contact constraint (Coulomb cone of friction mu_i) per contact.

    Only the cones and sizes are used by the solvers, which are given G and g directly;
    the model is a placeholder free-flyer.
    """
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "body")
    models = pin.StdVec_ConstraintModel()
    for m in mu:
        contact = pin.PointContactConstraintModel(model, 1)
        contact.setFriction(float(m))
        models.append(contact)
    datas = pin.StdVec_ConstraintData()
    for cm in models:
        datas.append(cm.createData())
    return models, datas


SOLVERS = {
    "pgs": (pin.PGSConstraintSolver, pin.PGSSolverSettings, pin.PGSSolverResult, True),
    "admm-ncp": (pin.ADMMConstraintSolver, pin.ADMMSolverSettings, pin.ADMMSolverResult, True),
    "admm-ncp-spectral": (
        pin.ADMMConstraintSolver,
        pin.ADMMSolverSettings,
        pin.ADMMSolverResult,
        True,
    ),
    "admm-ccp": (pin.ADMMConstraintSolver, pin.ADMMSolverSettings, pin.ADMMSolverResult, False),
}


class Runner:
    """One Pinocchio solver with fixed settings on one problem."""

    def __init__(self, name, G, g, mu, eps_abs):
        solver_type, settings_type, result_type, ncp = SOLVERS[name]
        self.ncp = ncp
        self.G, self.g, self.mu = G, g, mu
        self.delassus = pin.DelassusOperatorDense(G)
        self.models, self.datas = constraints(mu)
        self.solver = solver_type(g.size)
        self.settings = settings_type()
        self.settings.max_iterations = MAX_ITERATIONS
        self.settings.absolute_feasibility_tol = eps_abs
        self.settings.absolute_complementarity_tol = eps_abs
        self.settings.relative_feasibility_tol = 0.0
        self.settings.relative_complementarity_tol = 0.0
        self.settings.solve_ncp = ncp
        if name.endswith("-spectral"):
            self.settings.admm_update_rule = pin.ADMMUpdateRule.SPECTRAL
        self.result = result_type()

    def solve(self, x0):
        """One solve from x0 (None: cold); returns (seconds, converged)."""
        if x0 is None:
            self.result.clearConstraintImpulseGuess()
        else:
            self.result.setConstraintImpulseGuess(x0)
        start = time.perf_counter()
        converged = self.solver.solve(
            self.delassus, self.g, self.models, self.datas, self.settings, self.result
        )
        return time.perf_counter() - start, converged

    def answer(self):
        return np.array(self.result.retrieveConstraintImpulses())


def measure(name, problem, previous, eps_abs, repeats):
    """Cold and warm rows for one solver on one problem."""
    G, g, mu = problem
    runner = Runner(name, G, g, mu, eps_abs)
    starts = {"cold": None}
    if previous is not None:
        prev = Runner(name, *previous, eps_abs)
        prev.solve(None)
        starts["warm"] = prev.answer()
    rows = []
    for mode, x0 in starts.items():
        times = []
        for _ in range(repeats):
            seconds, converged = runner.solve(x0)
            times.append(seconds)
        lam = runner.answer()
        median = statistics.median(times)
        rows.append(
            dict(
                solver=name,
                start=mode,
                median_time_s=median,
                time_per_iteration_s=median / (int(runner.result.iterations) + 1),
                repeats=repeats,
                iterations=int(runner.result.iterations),
                converged=bool(converged),
                ncp_criterion=residual(G, g, mu, lam, corrected=True),
                ccp_residual=residual(G, g, mu, lam, corrected=False),
                lambda_=lam.tolist(),
            )
        )
    return rows


def parse_spec(spec):
    if "=" not in spec:
        sys.exit(f"expected NAME=PROBLEM.json[:PREVIOUS.json], got {spec!r}")
    name, files = spec.split("=", 1)
    problem, _, previous = files.partition(":")
    return name, problem, previous or None


def format_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e3:.3g} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("problems", nargs="+", help="NAME=PROBLEM.json[:PREVIOUS.json]")
    parser.add_argument("--eps-abs", type=float, default=1e-6)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--json", help="write every row (with lambda) to this file")
    parser.add_argument(
        "--solvers", nargs="+", choices=list(SOLVERS), default=list(SOLVERS), help="default: all"
    )
    parser.add_argument("--no-warm", action="store_true", help="cold rows only")
    args = parser.parse_args()

    print(f"pinocchio {pin.__version__}, eps_abs {args.eps_abs}, {args.repeats} repeats")
    print(
        "| problem | solver | start | median time | iterations | time per iteration "
        "| converged | NCP criterion | CCP residual |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    out = []
    for spec in args.problems:
        name, problem_file, previous_file = parse_spec(spec)
        problem = load_problem(problem_file)
        previous = load_problem(previous_file) if previous_file and not args.no_warm else None
        for solver in args.solvers:
            for row in measure(solver, problem, previous, args.eps_abs, args.repeats):
                row["problem"] = name
                out.append(row)
                print(
                    f"| {name} | {solver} | {row['start']} | {format_time(row['median_time_s'])} "
                    f"| {row['iterations']} | {format_time(row['time_per_iteration_s'])} "
                    f"| {'yes' if row['converged'] else 'no'} "
                    f"| {row['ncp_criterion']:.2e} | {row['ccp_residual']:.2e} |"
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(pinocchio=pin.__version__, eps_abs=args.eps_abs, rows=out), f, indent=1)


if __name__ == "__main__":
    main()
