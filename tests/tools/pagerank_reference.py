#!/usr/bin/env python3
"""PageRank in one process: the independent check of the pagerank app.

Reads a graph in the app's text format (docs/apps/pagerank.md), every
partition concatenated, from FILE or stdin:

    v<TAB>t1 t2 ... tk      (k >= 0, the tab always there, single spaces)

with ids 0..V-1, every vertex on exactly one line, multi-edges and
self-loops counted as edges. Runs the same iterations in float64,

    r_0(v)     = 1/V
    r_{t+1}(v) = (1-d)/V + d * (sum over u->v of r_t(u)/outdeg(u) + D_t/V)

where D_t is the rank held by the dangling vertices (out-degree 0), and
prints r_I as `v<TAB>rank` lines, v ascending, rank as "%.17g".

A malformed line, a vertex with two lines, a gap in the ids or an edge to a
vertex without a line is an error: a message on stderr and exit status 1.

It shares no code with the app, on purpose: it is what the app is checked
against (tests/apps_pagerank_test.cc).
"""

import argparse
import re
import sys

LINE = re.compile(rb"(\d+)\t((?:\d+)(?: \d+)*)?")


class BadGraph(Exception):
    pass


def parse(data):
    """The adjacency lists, indexed by vertex id."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    targets_of = {}
    for number, line in enumerate(lines, 1):
        match = LINE.fullmatch(line)
        if match is None:
            raise BadGraph(f"line {number}: not `vertex<TAB>targets`: {line[:80]!r}")
        v = int(match.group(1))
        if v in targets_of:
            raise BadGraph(f"line {number}: vertex {v} has two lines")
        rest = match.group(2)
        targets_of[v] = [int(t) for t in rest.split(b" ")] if rest else []
    n = len(targets_of)
    for v in range(n):
        if v not in targets_of:
            raise BadGraph(f"vertex {v} has no line (ids must run 0..{n - 1})")
    adjacency = [targets_of[v] for v in range(n)]
    for v, targets in enumerate(adjacency):
        for t in targets:
            if t >= n:
                raise BadGraph(f"vertex {v} has an edge to vertex {t}, which has no line")
    return adjacency


def pagerank(adjacency, damping, iterations):
    n = len(adjacency)
    if n == 0:
        return []
    rank = [1.0 / n] * n
    for _ in range(iterations):
        incoming = [0.0] * n
        dangling = 0.0
        for v, targets in enumerate(adjacency):
            if targets:
                share = rank[v] / len(targets)
                for t in targets:
                    incoming[t] += share
            else:
                dangling += rank[v]
        base = (1.0 - damping) / n + damping * dangling / n
        rank = [base + damping * x for x in incoming]
    return rank


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="the graph (default: stdin)")
    parser.add_argument("--damping", type=float, default=0.85)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    if args.file:
        with open(args.file, "rb") as f:
            data = f.read()
    else:
        data = sys.stdin.buffer.read()
    try:
        adjacency = parse(data)
    except BadGraph as e:
        print(f"pagerank_reference: {e}", file=sys.stderr)
        return 1
    rank = pagerank(adjacency, args.damping, args.iterations)
    sys.stdout.write("".join(f"{v}\t{r:.17g}\n" for v, r in enumerate(rank)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
