#!/bin/bash
# The collapse case of docs/performance.md in full, as a user runs it: nine-city all-to-all,
# 1 GiB, 8 MiB buffers, no flow control (`drop`) at 10 Gb/s. It finishes within a 64 MiB
# limit on its chunk transactions (exit 0, every invariant holding, every chunk reduced at
# every site), where it once held 21 GB and then stalled until the watchdog stopped it.
# About 3 CPU-s: label `numbers`. faults_cli.sh runs a small version of it.
# Usage: collapse_cli.sh AGGNET (from the source root).
set -u
aggnet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
(
  [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 2097152
  AGGNET_MEMORY_LIMIT=64MiB exec timeout 300 "$aggnet" run --schedule all-to-all --gradient 1GiB \
    --buffer 8MiB --steps 2 --alignment none --set defaults.link.bandwidth=10Gbps --no-colocated \
    -q --flow-control drop --json "$tmp/collapse.json" 2> "$tmp/err"
) || fail "collapse: exit $?: $(cat "$tmp/err")"
python3 - "$tmp/collapse.json" <<'PY' || fail "collapse: report"
import json, sys
r = json.load(open(sys.argv[1]))
assert all(v == "holds" for v in r["invariants"].values()), r["invariants"]
sites, s = r["sites"], r["summary"]
assert all(x["reduced_chunks"] == 2 * 1024 for x in sites), [x["reduced_chunks"] for x in sites]
drops = sum(x["dropped_contributions"] for x in sites)
dups = sum(x["duplicate_contributions"] for x in sites)
assert s["retransmissions_total"] == drops + dups, (s["retransmissions_total"], drops, dups)
PY
echo "collapse_cli: ok"
