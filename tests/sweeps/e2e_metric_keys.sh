#!/usr/bin/env bash
# Every key of a real run's summary is accepted as `aggnet sweep --metric` (the list in
# sweeps/spec.cpp follows the summary). A process per key: `numbers` (werror pass only).
source "$(dirname "$0")/lib.sh"
W=$(workdir metric_keys)
# The metric list the sweep accepts is the summary `aggnet run --json` writes: every key
# of a real run's summary (with the co-located reference and --eps) passes the check.
"$AGGNET" run --gradient 256KiB --chunk 64KiB --steps 2 --eps 0.001 --quiet --json "$W/run.json" ||
  fail "aggnet run failed"
keys=$("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["summary"]))' "$W/run.json")
[ -n "$keys" ] || fail "no summary keys"
for k in $keys; do
  "$AGGNET" sweep "$SWEEP_TEST_DATA/small.yaml" --metric "$k" --dry-run >/dev/null 2>"$W/err.txt" ||
    { cat "$W/err.txt" >&2; fail "summary key $k is not accepted as a sweep metric (add it to summary_metrics() in sweeps/spec.cpp)"; }
done
echo "PASS: $(echo $keys | wc -w) summary keys accepted as metrics"
