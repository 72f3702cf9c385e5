#!/bin/bash
# aggnet run with faults, as a user runs it: a partitioned network ends in the watchdog's
# diagnosis with exit status 3 and no output file; bad fault specs are one line, exit 2;
# `drop` flow control and 1 % loss run to the end with every invariant holding.
# Usage: faults_cli.sh AGGNET (from the source root).
set -u
aggnet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
line3=tests/workflow/data/line3.yaml
small=(--gradient 1MiB --chunk 64KiB --no-colocated -q)

# Partition: a's only link fails at 5 ms for good.
"$aggnet" run --platform $line3 --schedule all-to-all "${small[@]}" --fault down:a-b@5ms \
  --watchdog 2s --json "$tmp/part.json" 2> "$tmp/err"
status=$?
[ $status -eq 3 ] || fail "partition: exit $status, expected 3: $(cat "$tmp/err")"
[ ! -e "$tmp/part.json" ] || fail "partition: wrote an output file"
grep -q "no progress for 2.000 s (watchdog window 2.000 s)" "$tmp/err" || fail "$(cat "$tmp/err")"
grep -q "a: step 0 of 1, waits since .* for ready messages of step 0 from b,c" "$tmp/err" ||
  fail "no per-site diagnosis: $(cat "$tmp/err")"
grep -q "cannot reach b,c" "$tmp/err" || fail "no reachability: $(cat "$tmp/err")"
grep -q "links down: a-b down since 5.000 ms" "$tmp/err" || fail "$(cat "$tmp/err")"
# It stops within the window (checked every window / 8) after the last progress (the
# last ready message arrives at 40 ms; compute ends at 10 ms): at 2.25 s.
grep -q "stopped progressing at 2.250 s" "$tmp/err" || fail "$(cat "$tmp/err")"

# A credit deadlock under loss (found by a reviewer: two sites hold both slots of a 2 MiB
# buffer and wait for each other's credits) ends in the watchdog's diagnosis. Credits and
# grants sent again changed nothing but counted as progress, so this ran for ever.
python3 scripts/make_platforms.py --synthetic 9 --seed 1 --out "$tmp" > /dev/null
timeout 60 "$aggnet" run --platform "$tmp/synthetic_9.yaml" --schedule rotating-3 --steps 3 \
  --gradient 32MiB --set defaults.fpga.buffer=2MiB --set defaults.fpga.latency_cycles=0 \
  --loss 0.01 --flow-control credit --seed 46 -q 2> "$tmp/err"
status=$?
[ $status -eq 3 ] || fail "credit deadlock: exit $status, expected 3: $(cat "$tmp/err")"
grep -q "s4: step 1 of 3, waits since .* for credits of step 1 from s5 (2 slots in use" \
  "$tmp/err" || fail "credit deadlock: $(cat "$tmp/err")"

# Bad specs: one line naming --fault, exit 2.
for spec in "flood:a-b" "down:a-c@5ms" "down:a-b@1s-500ms" "stall:zz@1s-2s" "loss:a-b=2"; do
  "$aggnet" run --platform $line3 --schedule all-to-all "${small[@]}" --fault "$spec" \
    2> "$tmp/err"
  status=$?
  [ $status -eq 2 ] || fail "$spec: exit $status"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$spec: $(cat "$tmp/err")"
  grep -q -- "--fault" "$tmp/err" || fail "$spec: $(cat "$tmp/err")"
done
"$aggnet" run --schedule ring --loss 0.01 "${small[@]}" 2> "$tmp/err"
[ $? -eq 2 ] || fail "ring with loss accepted"

# drop flow control with 1 % loss on every WAN link of the nine cities: runs, recovers.
"$aggnet" run --schedule triads "${small[@]}" --flow-control drop --loss 0.01 --functional \
  --buffer 256KiB --steps 2 --json "$tmp/drop.json" || fail "drop run failed"
python3 - "$tmp/drop.json" <<'PY' || fail "drop run report"
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
assert all(v == "holds" for v in r["invariants"].values()), r["invariants"]
assert r["options"]["resolved"]["flow_control"] == "drop"
assert s["functional_mismatches"] == 0 and s["functional_checks"] > 0
assert s["retransmissions_total"] > 0 and s["lost_chunks_total"] > 0, s
assert s["dropped_contributions_total"] > 0, s
PY
# A link that fails with a backlog and comes back up: what is handed to it then used to
# queue behind the lost backlog's arrival instants and stop the run ("arrivals out of time
# order", exit 1).
"$aggnet" run --platform "$tmp/synthetic_9.yaml" --schedule pairs --flow-control drop \
  --gradient 32MiB --chunk 1MiB --steps 3 --seed 7 --loss 0.02 --burst 2 \
  --fault down:s3-s6@1.468s-1.678s --retransmit-timeout 1ms -q --json "$tmp/backlog.json" \
  2> "$tmp/err" || fail "down and up with a backlog: $(cat "$tmp/err")"
# Without aggregation a tree rerouted after a failure delivers the contributions still on
# their way along its new branches again (chi gets nyc's chunks 17-19 twice, via lax); the
# cluster absorbs them like the aggregator does. They used to break "exactly-once".
"$aggnet" run --schedule rotating-3 --flow-control drop --gradient 5000004B --chunk 256KiB \
  --steps 2 --seed 3 --fault down:chi-nyc@1.189s-1.298s --retransmit-timeout 20ms \
  --set defaults.fpga.buffer=8MiB --set defaults.cluster.access_bandwidth=1Gbps \
  --aggregation off --functional --no-colocated -q --json "$tmp/reroute.json" 2> "$tmp/err" ||
  fail "rerouted copies without aggregation: $(cat "$tmp/err")"
python3 - "$tmp/backlog.json" "$tmp/reroute.json" <<'PY' || fail "down/up reports"
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    assert all(v == "holds" for v in r["invariants"].values()), (path, r["invariants"])
    assert r["summary"]["lost_chunks_total"] > 0, path
PY
# A ring with empty segments (3 floats over 9 sites) under the barrier and sendrecv rules
# finishes: nothing arrives for an empty segment, and its site marks it received itself.
for rule in barrier sendrecv; do
  timeout 60 "$aggnet" run --schedule "ring:$rule" --gradient 12B --chunk 1000B --steps 2 \
    --no-colocated --quiet > /dev/null || fail "ring:$rule with empty segments did not finish"
done

# A congestion collapse, cured: no flow control (`drop`) at 10 Gb/s, all-to-all on nine
# cities, where the first pass overruns every receiver's slots many times over. It once
# grew to 21 GB; with the retransmission window its memory stayed bounded but the
# watchdog stopped it (slots held by partial chunks whose missing contributions waited
# behind others). Now the FPGA admits new chunks only inside its window of lowest
# unreduced indices, answers drops with negative acknowledgements carrying the window's
# end, and senders serve their lines lowest chunk first: it finishes (the full case, 1 GiB
# with 8 MiB buffers: collapse_cli.sh). Here 16 MiB with 2 MiB buffers (16 chunks, 2 slots).
collapse=(--schedule all-to-all --gradient 16MiB --buffer 2MiB --steps 2 --alignment none
  --set defaults.link.bandwidth=10Gbps --no-colocated -q --flow-control drop)
(
  # Were the memory unbounded the run would take the machine: its address space is capped,
  # except under ASan (the sanitize preset sets ASAN_OPTIONS), which reserves terabytes of it.
  [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 2097152
  AGGNET_MEMORY_LIMIT=64MiB exec timeout 120 "$aggnet" run "${collapse[@]}" \
    --json "$tmp/collapse.json" 2> "$tmp/err"
) || fail "collapse: exit $?: $(cat "$tmp/err")"
python3 - "$tmp/collapse.json" <<'PY' || fail "collapse: report"
import json, sys
r = json.load(open(sys.argv[1]))
assert all(v == "holds" for v in r["invariants"].values()), r["invariants"]
sites, s = r["sites"], r["summary"]
steps, chunks, others = 2, 16, 8
# Every site reduced every chunk of both steps, each from its 8 other members.
assert all(x["reduced_chunks"] == steps * chunks for x in sites), [x["reduced_chunks"] for x in sites]
# Nothing is lost on the links, so every copy arrives: an FPGA sees each member's first
# copy of each chunk plus every copy sent again, and each copy beyond the one added was
# dropped or recognised as a duplicate (conservation of copies).
first = len(sites) * others * steps * chunks
drops = sum(x["dropped_contributions"] for x in sites)
dups = sum(x["duplicate_contributions"] for x in sites)
assert sum(x["contributions"] for x in sites) == first + s["retransmissions_total"]
assert s["retransmissions_total"] == drops + dups, (s["retransmissions_total"], drops, dups)
assert drops > first, drops  # the first pass overran the slots: the case is a collapse one
PY
for fc in pacing credit; do
  AGGNET_MEMORY_LIMIT=64MiB "$aggnet" run "${collapse[@]/drop/$fc}" \
    --json "$tmp/$fc.json" 2> "$tmp/err" || fail "$fc under the same limit: $(cat "$tmp/err")"
done

echo "faults_cli: ok"
