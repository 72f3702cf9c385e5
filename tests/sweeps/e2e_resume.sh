#!/usr/bin/env bash
# A sweep killed midway (SIGKILL, then SIGINT) loses no finished point; rerunning with
# --resume runs only the missing points and ends with the same rows as an uninterrupted run.
source "$(dirname "$0")/lib.sh"
W=$(workdir resume)
SPEC="$SWEEP_TEST_DATA/small.yaml"
total=$("$AGGNET" sweep "$SPEC" --dry-run | sed -nE '1s/.*: ([0-9]+) points.*/\1/p')
[ "$total" -ge 6 ] || fail "expected a sweep of at least 6 points, got '$total'"

# Reference: uninterrupted.
"$AGGNET" sweep "$SPEC" --out "$W/ref" --workers 2 --no-plot --no-progress >/dev/null 2>"$W/ref.err" ||
  { cat "$W/ref.err" >&2; fail "reference sweep failed"; }
[ "$(rows "$W/ref/results.db" ok)" = "$total" ] || fail "reference sweep: not all points ok"

# Starts a one-worker sweep, waits until the database holds at least $2 rows, then sends
# signal $1 and waits for the sweep to end. Prints the sweep's exit status.
interrupt_after() {
  local sig=$1 want=$2 extra=${3:-}
  "$AGGNET" sweep "$SPEC" --out "$W/run" --workers 1 --no-plot --no-progress $extra \
    >/dev/null 2>>"$W/run.err" &
  local pid=$! n=0
  for _ in $(seq 600); do
    n=$(rows "$W/run/results.db")
    [ "$n" -ge "$want" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill -"$sig" "$pid" 2>/dev/null || true
  local rc=0
  wait "$pid" || rc=$?
  echo "$rc"
}

rc=$(interrupt_after KILL 2)
n1=$(rows "$W/run/results.db")
echo "after SIGKILL: exit $rc, $n1 of $total rows" >&2
[ "$rc" = 137 ] || fail "sweep was not killed midway (exit $rc): points run too fast?"
[ "$n1" -ge 2 ] && [ "$n1" -lt "$total" ] || fail "expected a partial database, got $n1 rows"
sleep 0.3
pgrep -f "$W/run/runs/" >/dev/null && fail "children of the killed sweep are still running"

rc=$(interrupt_after INT $((n1 + 1)) --resume)
n2=$(rows "$W/run/results.db")
echo "after SIGINT: exit $rc, $n2 of $total rows" >&2
grep -q "already finished" "$W/run.err" || fail "resume did not report finished points"
if [ "$n2" -lt "$total" ]; then
  [ "$rc" = 130 ] || fail "SIGINT: expected exit 130, got $rc"
  grep -q "interrupted" "$W/run.err" || fail "SIGINT: no 'interrupted' message"
fi
[ "$n2" -gt "$n1" ] || fail "the resumed sweep recorded nothing"

: >"$W/final.err"
"$AGGNET" sweep "$SPEC" --out "$W/run" --workers 2 --resume --no-plot --no-progress \
  >"$W/final.out" 2>"$W/final.err" || { cat "$W/final.err" >&2; fail "final resume failed"; }
grep -q "$((total - n2)) to run ($n2 already finished)" "$W/final.err" ||
  { cat "$W/final.err" >&2; fail "final resume should run exactly $((total - n2)) points"; }
grep -q "$((total - n2)) ok, 0 failed, $n2 skipped" "$W/final.err" ||
  { cat "$W/final.err" >&2; fail "final resume summary"; }
same_rows "$W/ref/results.db" "$W/run/results.db" || fail "resumed results differ from the reference"
[ -s "$W/run/results.csv" ] || fail "no CSV written"
[ "$(($(wc -l <"$W/run/results.csv") - 1))" = "$total" ] || fail "CSV should have $total rows"
echo "PASS: killed at $n1, interrupted at $n2, resumed to $total rows identical to the reference"
