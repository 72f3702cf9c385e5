#!/usr/bin/env bash
# Installs the Debian packages aggnet needs (only those missing) and builds it in ./build.
# Usage: bash scripts/setup.sh            (from the repository root; idempotent)
# Environment: AGGNET_BUILD_DIR (default build), AGGNET_BUILD_TYPE (default Release),
# AGGNET_WERROR (ON: warnings are errors, as CI builds).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libsystemc-dev libfmt-dev libboost-dev libboost-program-options-dev libboost-graph-dev
  libyaml-cpp-dev nlohmann-json3-dev libeigen3-dev libsqlite3-dev libgtest-dev googletest
  libglpk-dev gtkwave xvfb xauth python3-matplotlib python3-pandas python3-yaml clang-format clang-14
  libclang-rt-14-dev
  libsimgrid-dev libbenchmark-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${AGGNET_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${AGGNET_BUILD_TYPE:-Release}" \
  -DAGGNET_WERROR="${AGGNET_WERROR:-OFF}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
