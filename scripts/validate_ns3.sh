#!/usr/bin/env bash
# The ns-3 benchmark of docs/validation.md: every validation scenario at 108 MiB on the
# nine-city platform at 10 and 100 Gb/s in aggnet, SimGrid and ns-3, side by side, with
# wall and CPU time; fails unless ns-3 matches its packet-level closed form, its routes
# match aggnet's and aggnet uses 100x less CPU time (each tool's CPU time the median of up
# to 5 runs, fewer once its runs took 2 CPU-s). Not part of ctest (minutes of CPU).
# Usage: bash scripts/validate_ns3.sh [BUILD_DIR] [BUDGET_CPU_SECONDS]
#   writes BUILD_DIR/validation/ns3.{md,json}; ns-3 runs stop once their CPU time
#   exceeds the budget (default 900 s), the rows after it run without ns-3.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
budget=${2:-900}
# ns-3 is needed only here, so scripts/setup.sh does not install it.
if ! dpkg-query -W -f='${Status}' libns3-dev 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    libns3-dev >/dev/null
  cmake -S . -B "$build" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target aggnet-ns3
fi
for exe in apps/aggnet validation/aggnet-simgrid validation/aggnet-ns3; do
  [ -x "$build/$exe" ] || { echo "validate_ns3: $build/$exe is not built" >&2; exit 2; }
done
python3 validation/compare.py --build "$build" --suite ns3 --ns3 --ns3-budget "$budget" \
  --repeats 5 --check --markdown "$build/validation/ns3.md" --json "$build/validation/ns3.json"
