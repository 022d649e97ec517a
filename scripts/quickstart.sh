#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what is missing, build
# the optimised tree (build/release: the tool, the daemons, the root task and
# the vertex programs), bring up the local cluster of
# cluster-configs/local.toml (a master and 6 workers in 2 racks on loopback),
# and run a WordCount job on it over this repository's documentation, stored
# in the cluster's file system in 4 partitions; prints the ten most frequent
# words. The cluster keeps running; the last line printed says how to stop it.
# Running it again reuses the running cluster and runs the job again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" release copse-cluster
copse=("$root/build/release/bin/copse" --config "$root/cluster-configs/local.toml")
"${copse[@]}" cluster up

corpus=$(mktemp /tmp/copse-quickstart-XXXXXX.txt)
trap 'rm -f "$corpus"' EXIT
cat "$root"/README.md "$root"/docs/*.md >"$corpus"
# A rerun replaces the previous run's files.
"${copse[@]}" fs rm /quickstart/docs >/dev/null 2>&1 || true
"${copse[@]}" fs rm /quickstart/wordcount >/dev/null 2>&1 || true
"${copse[@]}" fs put "$corpus" /quickstart/docs --partitions 4
echo
echo "running WordCount over /quickstart/docs ($(wc -c <"$corpus") bytes, 4 partitions)"
"${copse[@]}" run wordcount --input /quickstart/docs --output /quickstart/wordcount \
  --partitions 2 --wait
echo
echo "the ten most frequent words (copse fs cat /quickstart/wordcount | head):"
"${copse[@]}" fs cat /quickstart/wordcount | head -n 10
echo
echo "the job: ${copse[*]} job list; job status ID; job history ID; job logs ID"
echo "stop the cluster: ${copse[*]} cluster down"
