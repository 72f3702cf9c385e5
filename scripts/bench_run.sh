#!/usr/bin/env bash
# Benchmark of the main job: the default `aggnet run` (nine-city platform, triads, 1 GiB
# gradient, co-located reference) and a heavier all-to-all run. Reports wall time,
# peak memory and kernel events per second; fails if the default run exceeds its 30 s
# budget (issue: "the default simulation itself, after the build, in under 30 s").
# Usage: bash scripts/bench_run.sh [path/to/aggnet]
set -euo pipefail
cd "$(dirname "$0")/.."
aggnet=${1:-build/apps/aggnet}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

bench() {
  local label=$1 budget_s=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" "$aggnet" run "$@" --json "$out/run.json" -q
  read -r wall rss_kb < "$out/time"
  /usr/bin/python3 - "$label" "$wall" "$rss_kb" "$budget_s" "$out/run.json" <<'PY'
import json, sys
label, wall, rss_kb, budget, path = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
s = json.load(open(path))["summary"]
print(f"{label:<34} wall {wall:6.2f} s  peak RSS {rss_kb/1024:7.1f} MiB  "
      f"simulated {s['total_time_s']:.3f} s  {s['events']/max(wall,1e-9):,.0f} delta cycles/s")
if wall > budget:
    sys.exit(f"{label}: {wall:.2f} s exceeds the {budget:.0f} s budget")
PY
}

bench "default run (triads, 1 GiB)" 30
bench "all-to-all, 4 GiB buffer, 4 GiB G" 120 --schedule all-to-all --buffer 4GiB --gradient 4GiB
bench "credit, all-to-all, 4 GiB buffer" 120 --schedule all-to-all --buffer 4GiB --flow-control credit
