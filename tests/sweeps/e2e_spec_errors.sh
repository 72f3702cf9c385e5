#!/usr/bin/env bash
# Spec and command-line errors: one line naming file, line and key; exit 2; nothing written
# and no point run (a misspelled metric or `set:` path is found before the first point).
source "$(dirname "$0")/lib.sh"
W=$(workdir spec_errors)
# An `aggnet` for the points that only records that it was started.
cat >"$W/recording_aggnet" <<SH
#!/bin/sh
echo "\$@" >>"$W/started"
exec "$AGGNET" "\$@"
SH
chmod +x "$W/recording_aggnet"
expect_error() {  # $1 = substring of the message, rest = arguments of `aggnet sweep`
  local want=$1 rc=0
  shift
  "$AGGNET" sweep "$@" --aggnet "$W/recording_aggnet" >"$W/out.txt" 2>"$W/err.txt" || rc=$?
  [ "$rc" = 2 ] || { cat "$W/err.txt" >&2; fail "$*: expected exit 2, got $rc"; }
  [ "$(wc -l <"$W/err.txt")" = 1 ] || { cat "$W/err.txt" >&2; fail "$*: expected one line"; }
  grep -qF -- "$want" "$W/err.txt" || { cat "$W/err.txt" >&2; fail "$*: expected '$want'"; }
  [ ! -e "$W/out" ] || fail "$*: output written despite the error"
  [ ! -e "$W/started" ] || fail "$*: a point was run despite the error"
}
expect_error "bad.yaml:6: axes[0].logrange.factor: expected a number > 1" \
  "$SWEEP_TEST_DATA/bad.yaml" --out "$W/out"
expect_error "--shard: expected K/N" "$SWEEP_TEST_DATA/small.yaml" --out "$W/out" --shard 3/3
expect_error "--timeout" "$SWEEP_TEST_DATA/small.yaml" --out "$W/out" --timeout soon
expect_error "cannot read" "$W/missing.yaml" --out "$W/out"

# A misspelled metric (spec or --metric): exit 2 with a suggestion before any point runs.
sed 's/^name: small$/name: small\nmetric: time_to_eps/' "$SWEEP_TEST_DATA/small.yaml" >"$W/metric.yaml"
expect_error "metric.yaml:4: metric: unknown summary key 'time_to_eps' (did you mean 'time_to_eps_s'?)" \
  "$W/metric.yaml" --out "$W/out"
expect_error "aggnet sweep: --metric: unknown summary key 'step_time_mean' (did you mean 'step_time_s_mean'?)" \
  "$SWEEP_TEST_DATA/small.yaml" --out "$W/out" --metric step_time_mean
# A `set:` key no parameter row has (the spec's own check, with a did-you-mean), and a
# site the platform does not have (the platform's check of every point's overrides).
cat >"$W/set_axis.yaml" <<YAML
name: set_axis
base: {gradient: 256KiB, chunk: 64KiB, steps: 1}
axes:
  - option: set:defaults.link.bandwith
    values: [10Gbps, 100Gbps]
YAML
expect_error "set_axis.yaml:4: axes[0].option: unknown key 'bandwith', expected one of: delay, bandwidth, mtu, header, jitter (did you mean 'bandwidth'?)" \
  "$W/set_axis.yaml" --out "$W/out"
cat >"$W/set_base.yaml" <<YAML
name: set_base
base: {gradient: 256KiB, chunk: 64KiB, steps: 1, set: {sites.lnd.fpga.buffer: 1MiB}}
axes:
  - {option: schedule, values: [triads]}
YAML
expect_error "set_base.yaml: base.set.sites.lnd.fpga.buffer: the platform rejects point schedule=triads: --set: sites.lnd.fpga.buffer: no site 'lnd'" \
  "$W/set_base.yaml" --out "$W/out"
# A fault spec run's --fault parser refuses: found before the first point (every point ran
# and failed as bad_input), at the value's line in the very words of `aggnet run --fault`.
cat >"$W/fault_axis.yaml" <<YAML
name: fault_axis
base: {gradient: 256KiB, chunk: 64KiB, steps: 1}
axes:
  - {option: fault, values: ['slow:lon=2', 'slowx:lon=2']}
YAML
run_says=$("$AGGNET" run -q --steps 1 --gradient 256KiB --fault slowx:lon=2 2>&1 >/dev/null) &&
  fail "aggnet run --fault slowx:lon=2 was accepted"
case "$run_says" in
  "aggnet run: --fault: "*) ;;
  *) fail "aggnet run --fault slowx:lon=2: unexpected message: $run_says" ;;
esac
expect_error "fault_axis.yaml:4: axes[0].values[1]: ${run_says#aggnet run: --fault: }" \
  "$W/fault_axis.yaml" --out "$W/out"
grep -qxF "$W/fault_axis.yaml:4: axes[0].values[1]: ${run_says#aggnet run: --fault: }" "$W/err.txt" ||
  { cat "$W/err.txt" >&2; fail "fault_axis.yaml: not run's message at axes[0].values[1]"; }

# `sweep merge` is all or nothing: into a garbage file, or from one, exit 2 with one line,
# the output untouched (or not created) and no temporary file left.
"$AGGNET" sweep "$SWEEP_TEST_DATA/small.yaml" --out "$W/ok" --workers 2 --no-plot --no-progress \
  >/dev/null 2>&1 || fail "small sweep failed"
printf 'not a database, just text\n%.0s' $(seq 100) >"$W/garbage.db"
cp "$W/garbage.db" "$W/garbage.orig"
for args in "$W/garbage.db $W/ok/results.db" "$W/new.db $W/ok/results.db $W/garbage.db"; do
  rc=0
  # shellcheck disable=SC2086
  "$AGGNET" sweep merge $args 2>"$W/err.txt" || rc=$?
  [ "$rc" = 2 ] || { cat "$W/err.txt" >&2; fail "merge $args: expected exit 2, got $rc"; }
  [ "$(wc -l <"$W/err.txt")" = 1 ] || { cat "$W/err.txt" >&2; fail "merge $args: expected one line"; }
  grep -q "garbage.db" "$W/err.txt" || { cat "$W/err.txt" >&2; fail "merge $args: file not named"; }
done
cmp -s "$W/garbage.db" "$W/garbage.orig" || fail "merge changed the garbage output file"
[ ! -e "$W/new.db" ] || fail "a failed merge left a partial new.db"
ls "$W" | grep -q '\.tmp' && fail "a failed merge left a temporary file"

# `sweep merge` into a symbolic link (dangling, or to a database): refused, the link left
# as it was, nothing created where it points.
ln -s "$W/nowhere.db" "$W/dangling.db"
cp "$W/ok/results.db" "$W/target.db"
ln -s "$W/target.db" "$W/link.db"
for out in dangling.db link.db; do
  rc=0
  "$AGGNET" sweep merge "$W/$out" "$W/ok/results.db" 2>"$W/err.txt" || rc=$?
  [ "$rc" = 2 ] || { cat "$W/err.txt" >&2; fail "merge into $out: expected exit 2, got $rc"; }
  [ "$(wc -l <"$W/err.txt")" = 1 ] || { cat "$W/err.txt" >&2; fail "merge into $out: one line"; }
  grep -qF "$W/$out: a symbolic link" "$W/err.txt" || { cat "$W/err.txt" >&2; fail "merge into $out: link not named"; }
  [ -L "$W/$out" ] || fail "merge replaced the link $out"
done
[ ! -e "$W/nowhere.db" ] || fail "merge wrote through the dangling link"
cmp -s "$W/target.db" "$W/ok/results.db" || fail "merge wrote through the link to target.db"

# --resume into another spec's results: exit 2 naming what differs, the directory as it was
# and no point run.
cat >"$W/other.yaml" <<YAML
name: other
base: {gradient: 256KiB, chunk: 64KiB, steps: 1}
axes:
  - {option: chunk, values: [32KiB, 64KiB]}
YAML
cp "$W/ok/results.db" "$W/ok.orig"
(cd "$W/ok" && find . -printf '%p %s %T@\n' | sort) >"$W/ok.before"
expect_error "$W/ok/results.db belongs to another spec (spec 'small', not 'other'; axes schedule, buffer, not chunk); choose a new directory" \
  "$W/other.yaml" --out "$W/ok" --resume
(cd "$W/ok" && find . -printf '%p %s %T@\n' | sort) >"$W/ok.after"
cmp -s "$W/ok.before" "$W/ok.after" || fail "--resume into another spec's results changed $W/ok"
cmp -s "$W/ok/results.db" "$W/ok.orig" || fail "--resume into another spec's results changed results.db"
echo "PASS: spec errors"
