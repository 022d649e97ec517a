#!/usr/bin/env bash
# The test command: installs what is missing, builds the sanitizer tree
# (build/asan) and runs every test in it but those labelled "long" (cases
# that take minutes) and "soak" (the hostile suite twenty times over).
# Extra arguments go to ctest (for example: scripts/test.sh -R Flow); with
# -L it runs only what it names: `scripts/test.sh -L 'long|soak'` is the
# run before a release (docs/development.md, "Tests").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" asan
cd "$root/build/asan"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
labels=(-LE 'long|soak')
for a in "$@"; do [[ "$a" == -L || "$a" == --label-regex ]] && labels=(); done
ctest --output-on-failure -j "$(nproc)" --timeout 300 "${labels[@]}" "$@"
