#!/usr/bin/env bash
# Runs the min-cost-flow measurements quoted in docs/flow.md, one scale at a
# time, each capped in wall time. Usage: bench/flow/measure.sh OUTDIR [SCALES...]
# (default scales: a b c cmem d e; dsteady = d's burst in step 6, in the steady
# state; cmem = scale c with the default solver alone,
# for its peak memory; binc = `incremental` alone at b; bleaf, cleaf, eleaf
# = the leaf solver alone at b, c, e, as the scheduler would run it, every step
# checked by its potentials).
# Needs `scripts/build.sh release copse copse-bench-flow`.
# From-scratch times at a are the median of 3 runs (--repeat 3), Copse and
# LEMON alike; larger scales run once. Pass --regime Q (or QP, QF) through
# REGIME=Q to measure another regime, and CLOCK_HINT=false to pass every
# clock tick as each task's own cost change instead of two shifted cost
# groups (docs/flow.md, "The clock hint").
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: bench/flow/measure.sh OUTDIR [SCALES...]}
shift
scales=("$@")
[[ ${#scales[@]} -eq 0 ]] && scales=(a b c cmem d e)
mkdir -p "$out"
copse="$root/build/release/bin/copse"
for s in "${scales[@]}"; do
  case "$s" in
    # Every scale runs the scheduler's own regime (QFP: each job at exactly
    # its fair share, every task forced to run whenever all fit) to the steady
    # state: 40 steps or more, median, p99 and maximum per step; every step's
    # flow is checked against its potentials, and LEMON's cost every 10 steps.
    a) args=(--scale a --steps 50 --lemon-every 10 --repeat 3
             --scratch cost_scaling,relaxation,race
             --incremental race,incremental_leaf,race_leaf,incremental,incremental_local,incremental_cs) ;;
    b) args=(--scale b --steps 40 --lemon-every 10
             --scratch cost_scaling,race
             --incremental race,incremental_leaf,race_leaf,incremental,incremental_local,incremental_cs) ;;
    c) args=(--scale c --steps 40 --lemon-every 20 --lemon ns --scratch cost_scaling,race
             --incremental race,incremental_leaf,race_leaf) ;;
    # The burst in the steady state: the same job arrives in step 6, not in
    # the first solve after the cold one; LEMON checks the burst step's cost.
    dsteady) args=(--scale d --steps 8 --burst-step 6 --lemon-every 6 --lemon ns --scratch none
             --incremental incremental_leaf,race) ;;
    cmem) args=(--scale c --steps 3 --scratch none --lemon none --incremental race) ;;
    d) args=(--scale d --steps 40 --lemon-every 20 --lemon ns --scratch race
             --incremental race,incremental_leaf,race_leaf) ;;
    e) args=(--scale e --steps 40 --lemon-every 20 --lemon ns --scratch race
             --incremental race,incremental_leaf) ;;
    # The scheduler's solver (copse::kSchedulerSolver) where it is slow.
    binc) args=(--scale b --steps 40 --scratch none --lemon none --incremental incremental) ;;
    # The leaf solver alone (no other solver's state in the process).
    bleaf) args=(--scale b --steps 40 --scratch none --lemon none --incremental incremental_leaf) ;;
    cleaf) args=(--scale c --steps 40 --scratch none --lemon none --incremental incremental_leaf) ;;
    eleaf) args=(--scale e --steps 40 --scratch none --lemon none --incremental incremental_leaf) ;;
    *) echo "unknown scale $s" >&2; exit 2 ;;
  esac
  echo "== $s: copse bench flow ${args[*]} --json $out/$s.json  ($(date -u +%H:%M:%S), $(cut -d' ' -f1-3 /proc/loadavg))"
  timeout 1500 "$copse" bench flow "${args[@]}" --regime "${REGIME:-QFP}" --clock-hint "${CLOCK_HINT:-true}" --json "$out/$s.json" > "$out/$s.txt" 2>&1
  echo "   exit $? ($(date -u +%H:%M:%S))"
done
