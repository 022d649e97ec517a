#!/usr/bin/env bash
# Configures and builds one tree. Usage: scripts/build.sh release|asan [ninja targets...]
#   release -> build/release (optimised; used for the demo and for measurements)
#   asan    -> build/asan (AddressSanitizer + UBSan; what the test command runs)
# Builds take a lock so that two builds never run at once on this 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
shift || true
case "$kind" in
  release) dir="$root/build/release"; flags=(-DCMAKE_BUILD_TYPE=Release -DCOPSE_SANITIZE=OFF) ;;
  asan) dir="$root/build/asan"; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOPSE_SANITIZE=ON) ;;
  *) echo "usage: scripts/build.sh release|asan [targets...]" >&2; exit 2 ;;
esac
# ccache keys on paths: relative to the checkout, and without the build
# directory that -g would otherwise add, so that a unit compiled alone is
# reused by a fresh clone anywhere. A unity unit (cmake/CopseBuild.cmake) is
# reused only by a checkout at the same path: CMake 3.25 writes the absolute
# paths of its sources into it (docs/development.md, "Build times").
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true
# Units compiled with a precompiled header (cmake/CopseBuild.cmake) are
# cached only with these: the header's .gch is hashed instead of its macros
# and times.
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
mkdir -p "$root/build"
exec 9>"$root/build/.build-lock"
flock 9
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$root" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
fi
cmake --build "$dir" -- "$@"
