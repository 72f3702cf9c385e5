#!/usr/bin/env bash
# Engine benchmarks (not tests): prints the tables of docs/performance.md.
#   bash benchmarks/run.sh [BUILD_DIR] [--quick]
# Every figure is CPU time (the machine is shared) and every rate is also given as a ratio
# to the bare SystemC kernel rate measured just before it, in the same run.
# Needs the aggnet_bench and aggnet targets of BUILD_DIR (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
quick=${2:-}
bench=$build/benchmarks/aggnet_bench
aggnet=$build/apps/aggnet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 9 27 81 243; do
  /usr/bin/python3 scripts/make_platforms.py --synthetic "$n" --out "$out" > /dev/null
done
kernel_events=5000000

# Each CPU time below is the least of $repeats runs (BENCH_REPEATS, default 5), the kernel's
# and the engine's taken in turns: the least is the run the other jobs disturbed least, and
# taking turns lets both sides see the same spells of a machine whose speed drifts (a
# kernel rate of 18 to 36 M events/CPU-s within one table, measured back to back).
repeats=${BENCH_REPEATS:-5}

# least: of the JSON lines on stdin (other lines ignored), the one with the least sim_cpu_s.
least() {
  /usr/bin/python3 -c 'import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(json.dumps(min(rows, key=lambda r: r["sim_cpu_s"])) if rows else "")'
}

# row LABEL ARGS...: kernel rate and engine run in turns; one JSON line into rows.jsonl.
row() {
  local label=$1
  shift
  local kernels="" runs="" line i k r
  for ((i = 0; i < repeats; i++)); do
    kernels+=$("$bench" kernel "$kernel_events")$'\n'
    # stdout: the JSON line (the kernel may print warnings there too)
    if ! line=$("$bench" run "$@" 2> "$out/err"); then
      echo "$label: $(cat "$out/err")" | tee -a "$out/failed.txt" >&2
      return
    fi
    runs+=$line$'\n'
  done
  k=$(printf '%s' "$kernels" | least)
  r=$(printf '%s' "$runs" | least)
  echo "{\"label\": \"$label\", \"kernel\": $k, \"run\": $r}" >> "$out/rows.jsonl"
}

# pair_row LABEL "SMALL ARGS" "LARGE ARGS": two engine runs taken in turns, the least of
# each; the scale ratio from them needs no kernel rate (both see the same spells of the
# host, whose memory latency the bare kernel's rate does not show).
pair_row() {
  local label=$1 small_runs="" large_runs="" i
  for ((i = 0; i < repeats; i++)); do
    # shellcheck disable=SC2086  # the argument lists are split on purpose
    small_runs+=$("$bench" run $2)$'\n'
    # shellcheck disable=SC2086
    large_runs+=$("$bench" run $3)$'\n'
  done
  echo "{\"label\": \"$label\", \"small\": $(printf '%s' "$small_runs" | least), \"large\": $(printf '%s' "$large_runs" | least), \"turns\": $(turn_rates "$small_runs" "$large_runs")}" \
    >> "$out/rows.jsonl"
}

# turn_rates SMALL_LINES LARGE_LINES: [[small, large], ...] hop rates of each turn, so the
# table can show how far the ratio moves between turns on a host whose speed drifts.
turn_rates() {
  /usr/bin/python3 -c 'import json, sys
rates = [[json.loads(l)["hops_per_cpu_s"] for l in side.splitlines() if l.startswith("{")]
         for side in sys.argv[1:]]
print(json.dumps([list(turn) for turn in zip(*rates, strict=True)]))' "$1" "$2"
}

# schedule_row LABEL PLATFORM [OPTION...]: CPU time of `aggnet schedule` (user + sys).
schedule_row() {
  local ok=true label=$1 platform=$2
  shift 2
  /usr/bin/time -f "%U %S %M" -o "$out/time" "$aggnet" schedule --platform "$platform" "$@" \
    > /dev/null 2> "$out/err" || ok=false
  read -r user sys rss_kb < <(grep -v "^Command" "$out/time")
  echo "{\"label\": \"$label\", \"schedule_cpu_s\": $(awk "BEGIN {print $user + $sys}"), \"ok\": $ok, \"peak_rss_kib\": $rss_kb}" \
    >> "$out/rows.jsonl"
  $ok || echo "$label: $(cat "$out/err")" | tee -a "$out/failed.txt" >&2
}

# Hop rates: gradients scaled so each run carries a few hundred thousand chunk-hops.
declare -A a2a=([9]=4GiB [27]=512MiB [81]=64MiB [243]=64MiB)
declare -A tri=([9]=4GiB [27]=2GiB [81]=512MiB [243]=128MiB)
declare -A ring=([9]=16GiB [27]=8GiB [81]=2GiB [243]=1GiB)
sizes="9 27 81 243"
[ "$quick" = --quick ] && sizes="9 81"
row "nine_city all-to-all 4GiB" platforms/nine_city.yaml all-to-all 4GiB 4GiB 1
row "nine_city triads 4GiB" platforms/nine_city.yaml triads 4GiB 4GiB 1
row "nine_city ring 4GiB" platforms/nine_city.yaml ring 4GiB 0 1
row "nine_city default run (triads 1GiB, co-located)" platforms/nine_city.yaml triads 1GiB 0 0 colocated
for n in $sizes; do
  p=$out/synthetic_$n.yaml
  t=rotating-3
  [ "$n" = 9 ] && t=triads
  align=
  # As in the tables before step 16, when one group's offset LP took minutes (the set-up
  # with offsets has its own row below).
  [ "$n" -gt 27 ] && align=noalign
  row "hops all-to-all $n" "$p" all-to-all "${a2a[$n]}" 4GiB 1 $align
  row "hops $t $n" "$p" "$t" "${tri[$n]}" 4GiB 1
  row "hops ring $n" "$p" ring "${ring[$n]}" 0 1
done
# The host's load latency by working set (least of $repeats): the scale rows' ratios
# follow the step from the L2 cache to memory, which differs between hosts.
if [ "$quick" != --quick ]; then
  memory_runs=""
  for ((i = 0; i < repeats; i++)); do memory_runs+=$("$bench" memory)$'\n'; done
  echo "{\"label\": \"memory\", \"memory\": $(printf '%s' "$memory_runs" | least)}" \
    >> "$out/rows.jsonl"
fi
# Both long enough (0.4 and 2 CPU-s) that neither the pool's growth nor a fast moment of
# the host favours one side: the 4 GiB row above is a 0.03 CPU-s run.
if [ "$quick" != --quick ]; then
  pair_row "scale all-to-all" "$out/synthetic_9.yaml all-to-all 64GiB 4GiB 1" \
    "$out/synthetic_243.yaml all-to-all 256MiB 4GiB 1 noalign"
  # The ring's cost per hop depends on the gradient (a ring step's segment is G/n), and its
  # first step grows the chunk pool: both sides run the same 1 GiB for many steps (about
  # 1 CPU-s each); the single-step rows above understate the 9-site rate.
  pair_row "scale ring" "$out/synthetic_9.yaml ring 1GiB 0 512" "$out/synthetic_243.yaml ring 1GiB 0 8"
fi
for g in 1GiB 8GiB 64GiB; do
  row "rss all-to-all $g" platforms/nine_city.yaml all-to-all "$g" 4GiB 1
done
# Burst mode (--burst K): the same workload at K = 1, 8, 64 (speed-up and the error K adds).
for k in 1 8 64; do
  row "burst nine_city all-to-all 64GiB K=$k" platforms/nine_city.yaml all-to-all 64GiB 4GiB 1 \
    burst=$k
done
if [ "$quick" != --quick ]; then
  for k in 1 8 64; do
    row "burst 243 all-to-all 64MiB K=$k" "$out/synthetic_243.yaml" all-to-all 64MiB 4GiB 1 \
      noalign burst=$k
    row "burst 243 ring 4GiB K=$k" "$out/synthetic_243.yaml" ring 4GiB 0 1 burst=$k
  done
fi
row "setup rotating-3 243 (co-located)" "$out/synthetic_243.yaml" rotating-3 1MiB 0 1 colocated
row "setup all-to-all 243 (co-located, no alignment)" "$out/synthetic_243.yaml" all-to-all 1MiB 0 1 \
  colocated noalign
row "setup all-to-all 243 (send offsets of 243 members)" "$out/synthetic_243.yaml" all-to-all \
  1MiB 0 1
schedule_row "schedule nine_city" platforms/nine_city.yaml
schedule_row "schedule 27" "$out/synthetic_27.yaml"
schedule_row "schedule 27 --alignment none" "$out/synthetic_27.yaml" --alignment none
if [ "$quick" != --quick ]; then
  schedule_row "schedule 81" "$out/synthetic_81.yaml"
  schedule_row "schedule 81 --alignment none" "$out/synthetic_81.yaml" --alignment none
fi
cp "$out/rows.jsonl" "${BENCH_ROWS:-/dev/null}"
[ -f "$out/failed.txt" ] && sed 's/^/failed: /' "$out/failed.txt"
/usr/bin/python3 benchmarks/table.py "$out/rows.jsonl"
# The shipped sweeps, one worker (CPU per point, hop rate against the kernel's, start-up
# share); the crossover sweep's 1,248 points take minutes, so --quick leaves it out.
echo
if [ "$quick" = --quick ]; then
  /usr/bin/python3 benchmarks/sweeps.py --build "$build" sweeps/ablation.yaml sweeps/bench40.yaml
else
  /usr/bin/python3 benchmarks/sweeps.py --build "$build"
fi
