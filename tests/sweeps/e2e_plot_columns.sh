#!/usr/bin/env bash
# The plots read a metric from its own column, not from an option's of the same name:
# `--metric steps` with `steps: 0` plots the steps each run took, as results.db holds them.
source "$(dirname "$0")/lib.sh"
W=$(workdir plot_columns)
"$PY" -c "import matplotlib" 2>/dev/null || { echo "SKIP: no matplotlib"; exit 77; }
"$AGGNET" sweep "$SWEEP_TEST_DATA/steps_metric.yaml" --out "$W/out" --metric steps \
  --no-progress >/dev/null 2>"$W/err.txt" || { cat "$W/err.txt" >&2; fail "the sweep failed"; }
# The expected numbers come from the database, not from the plot script.
expected=$("$PY" - "$W/out/results.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for schedule in ("all-to-all", "triads"):
    steps = {b: s for b, s in con.execute(
        "SELECT buffer, metric_steps FROM points WHERE schedule = ?", (schedule,))}
    print(f"{schedule}: 128 KiB={steps['128KiB']}, 1 MiB={steps['1MiB']}")
PY
)
grep -q "=0" <<<"$expected" && fail "a run took 0 steps; the test needs runs that resolve steps: 0"
got=$(sed -n '/^# steps vs buffer per schedule$/,/^#/p' "$W/out/plots/plot_numbers.txt" | grep -v '^#')
[ "$got" = "$expected" ] || fail "plotted steps:
$got
expected (results.db's metric_steps):
$expected"
echo "PASS: the plot of --metric steps follows metric_steps"
