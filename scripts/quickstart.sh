#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what is missing, build
# the optimised tree (build/release), and bring up the local cluster of
# cluster-configs/local.toml (a master and 6 workers in 2 racks on loopback).
# The cluster keeps running; the last line printed says how to stop it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" release copse copse-master copse-worker
exec "$root/build/release/bin/copse" --config "$root/cluster-configs/local.toml" cluster up
