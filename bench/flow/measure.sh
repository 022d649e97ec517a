#!/usr/bin/env bash
# Runs the min-cost-flow measurements quoted in docs/flow.md, one scale at a
# time, each capped in wall time. Usage: bench/flow/measure.sh OUTDIR [SCALES...]
# (default scales: a b c cmem d e; cmem = scale c with the default solver alone,
# for its peak memory; ainc binc cinc = incremental solvers only, run 4).
# Needs `scripts/build.sh release copse copse-bench-flow`.
# From-scratch times at a and b are the median of 3 runs (--repeat 3), Copse
# and LEMON alike; larger scales run once.
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
    a) args=(--scale a --steps 50 --lemon-every 10 --repeat 3
             --scratch cost_scaling,relaxation,race,race_always
             --incremental race,race_always,incremental_auto,incremental,incremental_cs,relaxation) ;;
    b) args=(--scale b --steps 10 --lemon-every 5 --repeat 3
             --scratch cost_scaling,relaxation,race,race_always
             --incremental race,race_always,incremental,incremental_cs) ;;
    c) args=(--scale c --steps 5 --scratch cost_scaling,relaxation,race
             --incremental race,race_always,incremental_cs,relaxation) ;;
    cmem) args=(--scale c --steps 3 --scratch none --lemon none --incremental race) ;;
    d) args=(--scale d --steps 3 --lemon-every 1 --lemon ns,cs --scratch cost_scaling,race
             --incremental race,race_always,incremental_cs) ;;
    e) args=(--scale e --steps 3 --lemon ns,cs --scratch cost_scaling,race
             --incremental race,incremental_cs) ;;
    # Incremental solvers only (run 4): the persistent incremental_local next to
    # the solvers it is compared with, in the same process.
    ainc) args=(--scale a --steps 100 --scratch none --lemon none
                --incremental race,incremental_local,incremental,incremental_auto,incremental_cs) ;;
    binc) args=(--scale b --steps 10 --scratch none --lemon none
                --incremental race,incremental_local,incremental,incremental_cs) ;;
    cinc) args=(--scale c --steps 3 --scratch none --lemon none
                --incremental race,incremental_local,relaxation) ;;
    *) echo "unknown scale $s" >&2; exit 2 ;;
  esac
  echo "== $s: copse bench flow ${args[*]} --json $out/$s.json  ($(date -u +%H:%M:%S), $(cut -d' ' -f1-3 /proc/loadavg))"
  timeout 1500 "$copse" bench flow "${args[@]}" --json "$out/$s.json" > "$out/$s.txt" 2>&1
  echo "   exit $? ($(date -u +%H:%M:%S))"
done
