#!/usr/bin/env python3
"""Where a build's time goes (docs/development.md, "Build times").

  scripts/build_times.py BUILD_DIR [--top N]            the last build, from .ninja_log
  scripts/build_times.py BUILD_DIR --headers [--top N]  the heaviest headers

The first reads the build's steps from BUILD_DIR/.ninja_log (ninja writes
each step's start and end) and prints the slowest steps, the sum by folder
and the links. Run it on a directory that saw one clean build (`rm -rf
BUILD_DIR`, with the compiler cache emptied: `ccache -C`) to see what a
fresh machine pays.

The second finds which headers cost the most over the whole tree: it
preprocesses every translation unit of BUILD_DIR/compile_commands.json with
-H to learn which headers each includes, times parsing each widely included
header on its own (-fsyntax-only of a file holding just that #include, with
the tree's flags), and prints inclusions x parse time, the time the tree
spends parsing that header again and again.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time


def last_build(log_path):
    """Every step in .ninja_log, the latest entry of each output: (start ms,
    end ms, output). Times count from the start of the ninja run that made
    the entry, so read a build directory that saw one build."""
    steps = {}
    with open(log_path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4:
                steps[parts[3]] = (int(parts[0]), int(parts[1]))
    return [(s, e, t) for t, (s, e) in steps.items()]


def report_steps(build_dir, top):
    steps = last_build(os.path.join(build_dir, ".ninja_log"))
    if not steps:
        sys.exit(f"no steps in {build_dir}/.ninja_log")
    wall = (max(e for _, e, _ in steps) - min(s for s, _, _ in steps)) / 1000
    compiles = [(e - s, t) for s, e, t in steps if t.endswith(".o")]
    others = [(e - s, t) for s, e, t in steps if not t.endswith(".o")]
    print(f"{len(steps)} steps in {wall:.0f} s of wall time; compiling {len(compiles)} files took "
          f"{sum(d for d, _ in compiles) / 1000:.0f} s, linking and the rest "
          f"{sum(d for d, _ in others) / 1000:.0f} s (summed over the parallel jobs)")
    print(f"\nthe {top} slowest steps:")
    for d, t in sorted(compiles + others, reverse=True)[:top]:
        print(f"  {d / 1000:7.1f} s  {t}")
    by_dir = collections.Counter()
    for d, t in compiles:
        by_dir[t.split("/")[0]] += d
    print("\ncompiling, by folder:")
    for k, v in by_dir.most_common():
        print(f"  {v / 1000:7.0f} s  {k}/")
    links = sorted(((d, t) for d, t in others if "/" in t and not t.endswith(".a")), reverse=True)
    print(f"\nlinking executables: {sum(d for d, _ in links) / 1000:.0f} s in {len(links)}; the slowest:")
    for d, t in links[:5]:
        print(f"  {d / 1000:7.1f} s  {t}")


def includes_of(entry):
    """The headers one translation unit includes (directly or not)."""
    args = shlex.split(entry["command"])
    out = []
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    cmd = [args[0], "-E", "-H", "-o", os.devnull] + out
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    # Every header it reads, and the ones it names itself (depth 1): what a
    # precompiled header or a forward declaration could spare it.
    headers, direct = set(), set()
    for line in r.stderr.splitlines():
        m = re.match(r"^(\.+) (\S+)$", line)
        if m:
            path = os.path.normpath(os.path.join(entry["directory"], m.group(2)))
            headers.add(path)
            if len(m.group(1)) == 1:
                direct.add(path)
    return entry["file"], headers, direct, args


def parse_cost(header, flags, compiler):
    with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
        f.write(f'#include "{header}"\n')
        path = f.name
    try:
        t0 = time.monotonic()
        subprocess.run([compiler, "-fsyntax-only", path] + flags, capture_output=True)
        return time.monotonic() - t0
    finally:
        os.unlink(path)


def report_headers(build_dir, top, jobs):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if e["file"].endswith((".cc", ".c++", ".cpp"))]
    counts = collections.Counter()  # TUs that read the header
    named = collections.Counter()   # TUs that include it themselves
    flags = compiler = None
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for _, headers, direct, args in pool.map(includes_of, entries):
            counts.update(headers)
            named.update(direct)
            if flags is None:
                compiler = args[0]
                flags = [a for a in args[1:] if a.startswith(("-I", "-D", "-std", "-O", "-f"))]
    # Time the headers that translation units name most often (a header's
    # time counts what it includes), then rank by inclusions x time.
    candidates = [h for h, _ in named.most_common(150)]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        costs = dict(zip(candidates, pool.map(lambda h: parse_cost(h, flags, compiler), candidates)))
    baseline = parse_cost(os.devnull, flags, compiler)
    rows = sorted(((counts[h] * max(c - baseline, 0), counts[h], c - baseline, h)
                   for h, c in costs.items()), reverse=True)
    print(f"{len(entries)} translation units; parse time of each header on its own with "
          f"{' '.join(f for f in flags if f.startswith(('-O', '-f', '-std')))}\n")
    print(f"  {'TUs x s':>8}  {'TUs':>4}  {'s each':>6}  header")
    for total, n, c, h in rows[:top]:
        print(f"  {total:8.0f}  {n:4d}  {c:6.2f}  {h}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build_dir")
    p.add_argument("--headers", action="store_true", help="rank headers by inclusions x parse time")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = p.parse_args()
    if a.headers:
        report_headers(a.build_dir, a.top, a.jobs)
    else:
        report_steps(a.build_dir, a.top)


if __name__ == "__main__":
    main()
