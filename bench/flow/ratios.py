#!/usr/bin/env python3
"""Per-graph from-scratch ratios to LEMON from copse-bench-flow --json files.

Usage: bench/flow/ratios.py FILE.json ...
For each file, one line: LEMON NetworkSimplex's median per graph (steps 0,
--lemon-every, ...) and, for each --scratch solver, its median over
NetworkSimplex's on the same graph in the same run, then the largest ratio
and the geometric mean. (bench/flow/table.py gives the medians over graphs.)
"""
import json
import math
import sys


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        ns, solvers = {}, {}
        for r in doc["records"]:
            if r["phase"] == "lemon" and r["solver"] == "lemon_network_simplex":
                ns[r["step"]] = r["solve_ms"]
            elif r["phase"] == "scratch":
                solvers.setdefault(r["solver"], {})[r["step"]] = r["solve_ms"]
        steps = sorted(ns)
        if not steps:
            print(f"{path}: no NetworkSimplex records")
            continue
        parts = ["ns " + " ".join(f"{ns[s]:.2f}" for s in steps) + " ms"]
        for name, times in solvers.items():
            ratios = [times[s] / ns[s] for s in steps if s in times]
            if not ratios:
                continue
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            parts.append(f"{name} " + " ".join(f"{x:.2f}" for x in ratios) +
                         f" (max {max(ratios):.2f}, geomean {gm:.2f})")
        print(f"{path}: " + " | ".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
