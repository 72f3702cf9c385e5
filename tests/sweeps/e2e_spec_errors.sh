#!/usr/bin/env bash
# Spec and command-line errors: one line naming file, line and key; exit 2; nothing written.
source "$(dirname "$0")/lib.sh"
W=$(workdir spec_errors)
expect_error() {  # $1 = substring of the message, rest = arguments of `aggnet sweep`
  local want=$1 rc=0
  shift
  "$AGGNET" sweep "$@" >"$W/out.txt" 2>"$W/err.txt" || rc=$?
  [ "$rc" = 2 ] || { cat "$W/err.txt" >&2; fail "$*: expected exit 2, got $rc"; }
  [ "$(wc -l <"$W/err.txt")" = 1 ] || { cat "$W/err.txt" >&2; fail "$*: expected one line"; }
  grep -qF -- "$want" "$W/err.txt" || { cat "$W/err.txt" >&2; fail "$*: expected '$want'"; }
  [ ! -e "$W/out" ] || fail "$*: output written despite the error"
}
expect_error "bad.yaml:6: axes[0].logrange.factor: expected a number > 1" \
  "$SWEEP_TEST_DATA/bad.yaml" --out "$W/out"
expect_error "--shard: expected K/N" "$SWEEP_TEST_DATA/small.yaml" --out "$W/out" --shard 3/3
expect_error "--timeout" "$SWEEP_TEST_DATA/small.yaml" --out "$W/out" --timeout soon
expect_error "cannot read" "$W/missing.yaml" --out "$W/out"
echo "PASS: spec errors"
