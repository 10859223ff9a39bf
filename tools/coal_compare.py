#!/usr/bin/env python3
"""Our GJK, Polyak and Nesterov beside coal 3's on the same problems (tools/coal_gjk.sh).

usage: coal_compare.py OURS.csv COAL.csv

OURS.csv is the gjk-tab1 page's per-run data (problem, mesh_a, mesh_b, ..., variant,
query, iterations, time_us); COAL.csv what tools/coal_gjk.cpp wrote for the same problems.
Prints, per pair of meshes and query, the mean time (µs) and mean iterations of each
implementation's GJK, Polyak (HPP-FCL's delta = 1/(k+1) in both) and normalized Nesterov
(delta = (k+2)/(k+3) in both), and the share of problems where both take the same
number of iterations.
"""

import csv
import sys
from collections import defaultdict

OURS = {
    "GJK": "GJK",
    "Polyak δ=1/(k+1)": "Polyak",
    "Nesterov normalized δ=(k+2)/(k+3)": "Nesterov",
}
COAL = {"coal GJK": "GJK", "coal Polyak": "Polyak", "coal Nesterov": "Nesterov"}


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pair_of = {}
    ours = defaultdict(dict)  # (problem, variant, query) -> (iterations, time)
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            variant = OURS.get(row["variant"])
            if variant is None:
                continue
            pair_of[row["problem"]] = (row["mesh_a"], row["mesh_b"])
            ours[(row["problem"], variant, row["query"])] = (
                int(row["iterations"]),
                float(row["time_us"]),
            )
    coal = {}
    with open(sys.argv[2], newline="") as f:
        for row in csv.DictReader(f):
            coal[(row["problem"], COAL[row["variant"]], row["query"])] = (
                int(row["iterations"]),
                float(row["time_us"]),
            )
    cells = defaultdict(lambda: defaultdict(list))
    for key, (n, t) in ours.items():
        problem, variant, query = key
        if key not in coal:
            continue
        cn, ct = coal[key]
        cell = cells[(pair_of[problem], query)]
        cell[(variant, "ours_t")].append(t)
        cell[(variant, "coal_t")].append(ct)
        cell[(variant, "ours_n")].append(n)
        cell[(variant, "coal_n")].append(cn)
        cell[(variant, "same")].append(1.0 if n == cn else 0.0)
    header = ["pair", "query"]
    for v in ["GJK", "Polyak", "Nesterov"]:
        header += [f"{v} ours µs", f"{v} coal µs", f"{v} iterations ours / coal", f"{v} same iterations"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for ((a, b), query), cell in sorted(cells.items()):
        row = [f"`{a.rsplit('/', 1)[-1]}` × `{b.rsplit('/', 1)[-1]}`", query]
        for v in ["GJK", "Polyak", "Nesterov"]:
            row += [
                f"{mean(cell[(v, 'ours_t')]):.2f}",
                f"{mean(cell[(v, 'coal_t')]):.2f}",
                f"{mean(cell[(v, 'ours_n')]):.2f} / {mean(cell[(v, 'coal_n')]):.2f}",
                f"{100 * mean(cell[(v, 'same')]):.0f} %",
            ]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
