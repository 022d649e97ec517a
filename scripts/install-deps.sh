#!/usr/bin/env bash
# Installs the Debian 12 packages Copse builds and runs with. Idempotent: when
# everything is present it only asks dpkg and returns within a second.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config lld
  libasio-dev capnproto libcapnp-dev librocksdb-dev
  libspdlog-dev libfmt-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
  liblemon-dev libsimgrid-dev python3-matplotlib
  iproute2 procps sqlite3 openssh-server openssh-client rsync
  libcpp-httplib-dev zlib1g-dev prometheus-cpp-dev node-d3 node-dagre-d3-renderer node-dagre-layout libjs-chart.js
)
# The dashboard's browser test runs Debian's Chromium; where it cannot be
# installed the test reports itself skipped (so a failure here is not fatal).
OPTIONAL=(chromium)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [[ "$status" == ii* ]] || missing+=("$p")
done

optional_missing=()
for p in "${OPTIONAL[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [[ "$status" == ii* ]] || optional_missing+=("$p")
done

if ((${#missing[@]} == 0 && ${#optional_missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
if ((${#missing[@]} > 0)); then
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ((${#optional_missing[@]} > 0)); then
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${optional_missing[@]}" ||
    echo "install-deps: could not install ${optional_missing[*]}; the dashboard's browser test will be skipped" >&2
fi
