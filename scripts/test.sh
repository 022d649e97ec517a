#!/usr/bin/env bash
# The test command: installs what is missing, builds the sanitizer tree
# (build/asan) and runs every test in it. Extra arguments go to ctest
# (for example: scripts/test.sh -R Flow).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" asan
cd "$root/build/asan"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --output-on-failure -j "$(nproc)" --timeout 300 "$@"
