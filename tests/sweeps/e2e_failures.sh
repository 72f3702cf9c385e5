#!/usr/bin/env bash
# Failed points (rejected input, timeout, crash) are recorded with their error; the sweep runs
# the other points and exits non-zero naming the failed ones.
source "$(dirname "$0")/lib.sh"
W=$(workdir failures)
rc=0
"$AGGNET" sweep "$SWEEP_TEST_DATA/failures.yaml" --out "$W/out" --workers 2 --no-plot \
  --no-progress >"$W/out.txt" 2>"$W/err.txt" || rc=$?
cat "$W/err.txt" >&2
[ "$rc" = 1 ] || fail "expected exit 1, got $rc"
grep -q "2 points failed" "$W/err.txt" || fail "no failure summary"
grep -q "case=tiny-buffer" "$W/err.txt" || fail "tiny-buffer point not named"
grep -q "case=too-long" "$W/err.txt" || fail "too-long point not named"
"$PY" - "$W/out/results.db" <<'PY' || fail "database rows"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
got = {r[0]: (r[1], r[2] or "") for r in con.execute("SELECT \"case\", status, error FROM points")}
print(got, file=sys.stderr)
assert got["fine"][0] == "ok", got["fine"]
assert got["tiny-buffer"][0] == "bad_input", got["tiny-buffer"]
assert "at least one chunk" in got["tiny-buffer"][1], got["tiny-buffer"]
assert got["too-long"][0] == "timeout" and "timeout after" in got["too-long"][1], got["too-long"]
ok_row = con.execute("SELECT step_time_s_mean FROM points WHERE \"case\" = 'fine'").fetchone()
assert ok_row[0] is not None and ok_row[0] > 0
PY
echo "PASS: failures recorded, sweep exit 1"

# A crash: a wrapper runs the real aggnet, except that it dies of SIGSEGV on seed 13.
cat >"$W/crashing-aggnet" <<WRAP
#!/usr/bin/env bash
case " \$* " in *" --seed 13 "*) kill -SEGV \$\$ ;; esac
exec "$AGGNET" "\$@"
WRAP
chmod +x "$W/crashing-aggnet"
rc=0
"$AGGNET" sweep "$SWEEP_TEST_DATA/crash.yaml" --out "$W/crash" --aggnet "$W/crashing-aggnet" \
  --workers 2 --no-plot --no-progress >/dev/null 2>"$W/crash.txt" || rc=$?
cat "$W/crash.txt" >&2
[ "$rc" = 1 ] || fail "crash: expected exit 1, got $rc"
grep -q "seed=13 .*killed by signal 11" "$W/crash.txt" || fail "crashed point not named"
"$PY" - "$W/crash/results.db" <<'PY' || fail "crash database rows"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
got = {r[0]: (r[1], r[2], r[3]) for r in con.execute("SELECT seed, status, exit_code, error FROM points")}
assert got["1"][0] == "ok", got
assert got["13"][:2] == ("crashed", -11) and "signal 11" in got["13"][2], got
PY
echo "PASS: crash recorded, sweep exit 1"

# No point produces the ranking metric: the verdict names it and says why, the plots are
# skipped in the same words, and the exit status is the points' (1 when all failed: buffers
# smaller than a chunk; 0 when all finished without it: one step stops before eps).
no_metric() {  # $1 = name, $2 = buffer sizes, $3 = expected exit, $4 = expected verdict
  cat >"$W/$1.yaml" <<YAML
name: $1
metric: time_to_eps_s
base: {gradient: 256KiB, chunk: 64KiB, steps: 1, no-colocated: true}
axes:
  - {option: schedule, values: [triads, hierarchical]}
  - {option: buffer, values: [$2]}
YAML
  rc=0
  "$AGGNET" sweep "$W/$1.yaml" --out "$W/$1" --workers 2 --no-progress >"$W/$1.out" \
    2>"$W/$1.err" || rc=$?
  cat "$W/$1.out" "$W/$1.err" >&2
  [ "$rc" = "$3" ] || fail "$1: expected exit $3, got $rc"
  grep -qF -- "$4" "$W/$1.out" || fail "$1: expected the verdict '$4'"
  ! grep -q "Traceback" "$W/$1.err" || fail "$1: the plot script crashed"
}
no_metric all_failed "16KiB, 32KiB" 1 \
  "No crossover analysis: no point produced the metric 'time_to_eps_s': all 4 points failed"
no_metric none_reach_eps "1MiB, 2MiB" 0 \
  "no point produced the metric 'time_to_eps_s': 4 of 4 points finished, none with a value for it (a run reports it only when it simulated the rounds it needs to reach eps"
grep -qF "plot_sweep: no point produced the metric 'time_to_eps_s' (4 of 4 points finished" \
  "$W/none_reach_eps.err" || grep -q "plots skipped" "$W/none_reach_eps.err" ||
  fail "none_reach_eps: the plot script did not name the metric"
echo "PASS: a metric no point produced is named, with why"
