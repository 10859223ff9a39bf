#!/usr/bin/env python3
"""Our GJK, Polyak and Nesterov beside coal 3's on the same problems (tools/coal_gjk.sh).

usage: coal_compare.py OURS.csv COAL.csv

OURS.csv is a timing page's per-run data (problem, mesh_a, mesh_b, target_distance_m,
distance_m, variant, query, iterations, time_us); COAL.csv what tools/coal_gjk.cpp wrote for
the same problems. Prints Markdown:
- a check that both sides solved the same problems: coal's hull vertex counts, and the
  largest gap between the separation distance coal's GJK finds and ours;
- per pair of meshes and query, the mean time (µs) of each implementation's GJK, Polyak
  (HPP-FCL's delta = 1/(k+1) in both) and normalized Nesterov (delta = (k+2)/(k+3) in both),
  the ratio coal / ours, the mean iterations and the share of problems where both take
  the same number of iterations;
- per pair and query, the speed-up GJK / accelerated of each implementation.
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
VARIANTS = ["GJK", "Polyak", "Nesterov"]


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def short(name):
    return name.rsplit("/", 1)[-1]


def read_ours(path):
    """(problem, variant, query) -> (iterations, µs); problem -> meshes; problem -> distance."""
    runs, pair_of, distance_of = {}, {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            variant = OURS.get(row["variant"])
            if variant is None:
                continue
            pair_of[row["problem"]] = (row["mesh_a"], row["mesh_b"])
            distance_of[row["problem"]] = float(row["distance_m"])
            runs[(row["problem"], variant, row["query"])] = (
                int(row["iterations"]),
                float(row["time_us"]),
            )
    return runs, pair_of, distance_of


def read_coal(path):
    """(problem, variant, query) -> (iterations, µs); problem -> coal's distance and hull sizes."""
    runs, distance_of, vertices_of = {}, {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["problem"], COAL[row["variant"]], row["query"])
            runs[key] = (int(row["iterations"]), float(row["time_us"]))
            if key[1:] == ("GJK", "distance"):
                distance_of[row["problem"]] = float(row["distance_m"])
                vertices_of[row["problem"]] = (
                    int(row["hull_vertices_a"]),
                    int(row["hull_vertices_b"]),
                )
    return runs, distance_of, vertices_of


def same_problems(pair_of, ours_distance, coal_distance, coal_vertices):
    """Coal's hull sizes, and the largest distance gap on separated problems."""
    sizes = {}
    for problem, (a, b) in pair_of.items():
        if problem in coal_vertices:
            sizes[a], sizes[b] = coal_vertices[problem]
    separated = [
        abs(ours_distance[p] - coal_distance[p])
        for p in pair_of
        if p in coal_distance and ours_distance[p] > 1e-4
    ]
    print("coal's hulls: " + ", ".join(f"`{short(m)}` {n} vertices" for m, n in sorted(sizes.items())))
    print()
    print(
        f"separated problems: {len(separated)}; largest |distance ours − coal| = "
        f"{max(separated, default=float('nan')):.2e} m"
    )
    print()


def cells_of(ours, coal, pair_of):
    cells = defaultdict(lambda: defaultdict(list))
    for key, (n, t) in ours.items():
        if key not in coal:
            continue
        problem, variant, query = key
        cn, ct = coal[key]
        cell = cells[(pair_of[problem], query)]
        cell[(variant, "ours_t")].append(t)
        cell[(variant, "coal_t")].append(ct)
        cell[(variant, "ours_n")].append(n)
        cell[(variant, "coal_n")].append(cn)
        cell[(variant, "same")].append(1.0 if n == cn else 0.0)
    return cells


def print_table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours, pair_of, ours_distance = read_ours(sys.argv[1])
    coal, coal_distance, coal_vertices = read_coal(sys.argv[2])
    same_problems(pair_of, ours_distance, coal_distance, coal_vertices)
    cells = cells_of(ours, coal, pair_of)
    label = lambda a, b, q: [f"`{short(a)}` × `{short(b)}`", q]
    header = ["pair", "query"]
    for v in VARIANTS:
        header += [f"{v} ours µs", f"coal µs", "coal / ours", "iterations ours / coal", "same iterations"]
    rows = []
    for ((a, b), query), cell in sorted(cells.items()):
        row = label(a, b, query)
        for v in VARIANTS:
            ours_t, coal_t = mean(cell[(v, "ours_t")]), mean(cell[(v, "coal_t")])
            row += [
                f"{ours_t:.2f}",
                f"{coal_t:.2f}",
                f"{coal_t / ours_t:.2f}",
                f"{mean(cell[(v, 'ours_n')]):.2f} / {mean(cell[(v, 'coal_n')]):.2f}",
                f"{100 * mean(cell[(v, 'same')]):.0f} %",
            ]
        rows.append(row)
    print_table(header, rows)
    header = ["pair", "query"]
    for v in VARIANTS[1:]:
        header += [f"GJK / {v} ours", f"GJK / {v} coal"]
    rows = []
    for ((a, b), query), cell in sorted(cells.items()):
        row = label(a, b, query)
        for v in VARIANTS[1:]:
            for side in ["ours_t", "coal_t"]:
                row.append(f"{mean(cell[('GJK', side)]) / mean(cell[(v, side)]):.2f}")
        rows.append(row)
    print_table(header, rows)


if __name__ == "__main__":
    main()
