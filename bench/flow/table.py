#!/usr/bin/env python3
"""Turns copse-bench-flow --json files into tables like those of docs/flow.md.

Usage: bench/flow/table.py OUTDIR/a.json OUTDIR/b.json ...
From scratch: per scale, each solver's median time over the graphs it was
timed on (step 0 and every --lemon-every step), and its ratio to the fastest
LEMON solver's median. Incremental: median and maximum per step (steps >= 1).
Races: per racing solver, how many incremental steps ran both contestants
("n/a" for runs made before second_start_ms was recorded),
and the medians of the winner's time, of the time the loser took to return
after the winner's answer, and of the loser adopting the answer.
"""
import json
import statistics
import sys


def fmt(ms):
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.2f} ms"


def main(paths):
    scratch_rows, inc_rows, race_rows = [], [], []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        scale, recs = doc["scale"], doc["records"]
        by = {}
        for r in recs:
            if r["phase"] in ("scratch", "lemon"):
                by.setdefault((r["phase"], r["solver"]), []).append(r["solve_ms"])
        lemon = {s: statistics.median(v) for (p, s), v in by.items() if p == "lemon"}
        best = min(lemon.values()) if lemon else None
        for (phase, solver), v in sorted(by.items(), key=lambda kv: statistics.median(kv[1])):
            m = statistics.median(v)
            ratio = f"{m / best:.2f}" if best else "-"
            scratch_rows.append(f"| {scale} | {solver} | {fmt(m)} | {ratio} | {len(v)} |")
        inc = {}
        for r in recs:
            if r["phase"] == "inc":
                inc.setdefault(r["solver"], []).append(r["solve_ms"])
        for solver, v in inc.items():
            inc_rows.append(f"| {scale} | {solver} | {fmt(statistics.median(v))} | {fmt(max(v))} "
                            f"| {len(v)} | {doc['peak_rss_mib']} MiB |")
        races = {}
        for r in recs:
            if r["phase"] == "inc" and "raced" in r:
                races.setdefault(r["solver"], []).append(r)
        for solver, rs in races.items():
            med = lambda k: fmt(statistics.median(r[k] for r in rs))
            wins = {}
            for r in rs:
                wins[r["winner"]] = wins.get(r["winner"], 0) + 1
            won = ", ".join(f"{w} {n}" for w, n in sorted(wins.items()))
            # Both contestants ran: a race started together, or a hedged one whose
            # second contestant started (second_start_ms >= 0; older runs lack it).
            if all("second_start_ms" in r for r in rs):
                both = str(sum(r["raced"] and r["second_start_ms"] >= 0 for r in rs))
            else:
                both = "n/a"
            race_rows.append(f"| {scale} | {solver} | {both} of {len(rs)} "
                             f"| {won} | {med('winner_ms')} | {med('loser_ms')} "
                             f"| {med('adopt_ms')} |")
    print("| scale | solver | median time | / fastest LEMON | graphs |")
    print("|---|---|---|---|---|")
    print("\n".join(scratch_rows))
    print()
    print("| scale | solver | median per step | max per step | steps | peak RSS of the run |")
    print("|---|---|---|---|---|---|")
    print("\n".join(inc_rows))
    if race_rows:
        print()
        print("| scale | race | steps raced | answers by | winner (median) | loser returned after "
              "| adopt |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(race_rows))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
