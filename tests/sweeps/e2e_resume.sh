#!/usr/bin/env bash
# A sweep killed midway (SIGKILL, then SIGINT) loses no finished point; rerunning with
# --resume runs only the missing points and ends with the same rows as an uninterrupted run.
# The interruptions do not depend on machine speed: the points run through a gate that
# lets the first N points through and holds the next one until the sweep is signalled,
# so the sweep is always interrupted with exactly N rows and a point in progress.
source "$(dirname "$0")/lib.sh"
W=$(workdir resume)
SPEC="$SWEEP_TEST_DATA/small.yaml"
total=$("$AGGNET" sweep "$SPEC" --dry-run | sed -nE '1s/.*: ([0-9]+) points.*/\1/p')
[ "$total" -ge 6 ] || fail "expected a sweep of at least 6 points, got '$total'"

# Reference: uninterrupted.
"$AGGNET" sweep "$SPEC" --out "$W/ref" --workers 2 --no-plot --no-progress >/dev/null 2>"$W/ref.err" ||
  { cat "$W/ref.err" >&2; fail "reference sweep failed"; }
[ "$(rows "$W/ref/results.db" ok)" = "$total" ] || fail "reference sweep: not all points ok"

# The gate: an `aggnet` that runs the real one for the first $(cat allow) points it is
# started for, then marks itself blocked and waits (until the sweep kills it).
GATE="$W/gate"
mkdir -p "$GATE"
cat >"$W/gated_aggnet" <<SH
#!/usr/bin/env bash
exec 9>>"$GATE/lock"
flock 9
n=\$((\$(cat "$GATE/count" 2>/dev/null || echo 0) + 1))
echo "\$n" >"$GATE/count"
exec 9>&-
if [ "\$n" -gt "\$(cat "$GATE/allow")" ]; then
  touch "$GATE/blocked"
  while :; do sleep 0.05; done
fi
exec "$AGGNET" "\$@"
SH
chmod +x "$W/gated_aggnet"

# Waits (polling, up to 200 s: only a hang takes that long) until `cond` holds.
wait_until() {
  local cond=$1 what=$2
  for _ in $(seq 4000); do
    eval "$cond" && return 0
    sleep 0.05
  done
  fail "timed out waiting for: $what"
}

# Starts a one-worker sweep through the gate letting $2 points run, waits until the
# database holds those rows and the next point is held, then sends signal $1 and waits
# for the sweep to end. Prints the sweep's exit status.
interrupt_after() {
  local sig=$1 allow=$2 extra=${3:-} want
  want=$(($(rows "$W/run/results.db") + allow))
  echo 0 >"$GATE/count"
  echo "$allow" >"$GATE/allow"
  rm -f "$GATE/blocked"
  "$AGGNET" sweep "$SPEC" --out "$W/run" --workers 1 --no-plot --no-progress \
    --aggnet "$W/gated_aggnet" $extra >/dev/null 2>>"$W/run.err" &
  local pid=$!
  wait_until "[ -e '$GATE/blocked' ] && [ \"\$(rows '$W/run/results.db')\" -ge $want ]" \
    "$want rows and a held point"
  kill -"$sig" "$pid"
  local rc=0
  wait "$pid" || rc=$?
  echo "$rc"
}

rc=$(interrupt_after KILL 2)
n1=$(rows "$W/run/results.db")
echo "after SIGKILL: exit $rc, $n1 of $total rows" >&2
[ "$rc" = 137 ] || fail "SIGKILL: expected exit 137, got $rc"
[ "$n1" = 2 ] || fail "expected exactly the 2 finished points after SIGKILL, got $n1 rows"
wait_until "! pgrep -f '$W/run/runs/' >/dev/null" "the killed sweep's children to end"

rc=$(interrupt_after INT 1 --resume)
n2=$(rows "$W/run/results.db")
echo "after SIGINT: exit $rc, $n2 of $total rows" >&2
grep -q "already finished" "$W/run.err" || fail "resume did not report finished points"
[ "$rc" = 130 ] || fail "SIGINT: expected exit 130, got $rc"
grep -q "interrupted" "$W/run.err" || fail "SIGINT: no 'interrupted' message"
[ "$n2" = 3 ] || fail "expected 3 rows after the interrupted resume, got $n2"
wait_until "! pgrep -f '$W/run/runs/' >/dev/null" "the interrupted sweep's children to end"
ls "$W/run/runs/" | grep -q '\.part-' && fail "the interrupted point left a partial JSON file"

: >"$W/final.err"
"$AGGNET" sweep "$SPEC" --out "$W/run" --workers 2 --resume --no-plot --no-progress \
  >"$W/final.out" 2>"$W/final.err" || { cat "$W/final.err" >&2; fail "final resume failed"; }
grep -q "$((total - n2)) to run ($n2 already finished)" "$W/final.err" ||
  { cat "$W/final.err" >&2; fail "final resume should run exactly $((total - n2)) points"; }
grep -q "$((total - n2)) ok, 0 failed, $n2 skipped" "$W/final.err" ||
  { cat "$W/final.err" >&2; fail "final resume summary"; }
same_rows "$W/ref/results.db" "$W/run/results.db" || fail "resumed results differ from the reference"
"$PY" - "$W/ref/results.db" "$W/run/results.db" <<'PY' || fail "per-site and per-link rows differ"
import sqlite3, sys
def rows(path, table, key):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return sorted(con.execute(f"SELECT point_id, {key}, * FROM {table}").fetchall())
for table, key in (("sites", "site"), ("links", "from_site || to_site")):
    a, b = rows(sys.argv[1], table, key), rows(sys.argv[2], table, key)
    assert a == b and len(a) > 0, (table, len(a), len(b))
PY
[ -s "$W/run/results.csv" ] || fail "no CSV written"
[ "$(($(wc -l <"$W/run/results.csv") - 1))" = "$total" ] || fail "CSV should have $total rows"
echo "PASS: killed at $n1, interrupted at $n2, resumed to $total rows identical to the reference"
