#!/usr/bin/env bash
# The sweep as a Slurm job array on a real single-node Slurm (munge, slurmctld, slurmd
# started by scripts/slurm_local.sh), merged, gives the same rows as the local run.
# Runs when AGGNET_SLURM_TESTS=1 or CI=true; otherwise exits 77 (ctest: skipped).
source "$(dirname "$0")/lib.sh"
if [ "${AGGNET_SLURM_TESTS:-0}" != 1 ] && [ "${CI:-}" != true ]; then
  echo "SKIP: set AGGNET_SLURM_TESTS=1 (or CI=true) to run the Slurm test"
  exit 77
fi
SRC=${AGGNET_SOURCE_DIR:-$(cd "$HERE/../.." && pwd)}
export AGGNET_SLURM_DIR=${AGGNET_SLURM_DIR:-/tmp/aggnet-slurm}
started=0
if ! { [ -f "$AGGNET_SLURM_DIR/slurmctld.pid" ] && kill -0 "$(cat "$AGGNET_SLURM_DIR/slurmctld.pid")" 2>/dev/null; }; then
  started=1
fi
bash "$SRC/scripts/slurm_local.sh" start
[ "$started" = 1 ] && trap 'bash "$SRC/scripts/slurm_local.sh" stop' EXIT
export SLURM_CONF="$AGGNET_SLURM_DIR/slurm.conf"

W=$(workdir slurm)
SPEC="$SWEEP_TEST_DATA/small.yaml"
"$AGGNET" sweep "$SPEC" --out "$W/local" --workers 2 --no-plot --no-progress >/dev/null 2>"$W/local.err" ||
  { cat "$W/local.err" >&2; fail "local sweep failed"; }
rc=0
"$AGGNET" sweep "$SPEC" --out "$W/slurm" --slurm --shards 3 --wait --no-plot \
  >"$W/slurm.out" 2>"$W/slurm.err" || rc=$?
cat "$W/slurm.err" >&2
[ "$rc" = 0 ] || { cat "$W"/slurm/slurm-*.out >&2 2>/dev/null || true; fail "slurm sweep exit $rc"; }
grep -q "submitted job array" "$W/slurm.err" || fail "no job array submitted"
for k in 0 1 2; do
  [ -s "$W/slurm/shard-$k/results.db" ] || fail "shard $k wrote no database"
done
same_rows "$W/local/results.db" "$W/slurm/results.db" || fail "Slurm rows differ from the local run"

# The standalone merge command gives the same result.
"$AGGNET" sweep merge "$W/merged.db" "$W"/slurm/shard-*/results.db 2>&1
same_rows "$W/local/results.db" "$W/merged.db" || fail "aggnet sweep merge rows differ"
echo "PASS: Slurm job array of 3 shards merged to the same rows as the local run"
