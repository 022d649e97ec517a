#!/usr/bin/env bash
# The test command: installs what is missing, builds the sanitizer tree
# (build/asan) and runs every test in it but the long ones labelled "soak".
# Extra arguments go to ctest (for example: scripts/test.sh -R Flow); with
# -L soak it runs only the soak.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" asan
cd "$root/build/asan"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
labels=(-LE soak)
for a in "$@"; do [[ "$a" == -L || "$a" == --label-regex ]] && labels=(); done
ctest --output-on-failure -j "$(nproc)" --timeout 300 "${labels[@]}" "$@"
