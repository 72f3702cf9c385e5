# Shared helpers of the sweep end-to-end tests (sourced).
set -euo pipefail
: "${AGGNET:?set AGGNET to the aggnet executable}"
: "${SWEEP_TEST_DATA:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/data}"
: "${SWEEP_TEST_WORK:=/tmp/aggnet-sweep-tests}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

fail() { echo "FAIL: $*" >&2; exit 1; }

# Fresh work directory for one test: $1 = test name.
workdir() {
  local d="$SWEEP_TEST_WORK/$1"
  rm -rf "$d"
  mkdir -p "$d"
  echo "$d"
}

# Number of rows (optionally with status $2) in results database $1.
rows() {
  "$PY" - "$1" "${2:-}" <<'PY'
import sqlite3, sys
try:
    con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    if sys.argv[2]:
        print(con.execute("SELECT COUNT(*) FROM points WHERE status = ?", (sys.argv[2],)).fetchone()[0])
    else:
        print(con.execute("SELECT COUNT(*) FROM points").fetchone()[0])
except Exception:
    print(0)
PY
}

# Same rows (ids, axis values, status, metrics) in two results databases.
same_rows() { "$PY" "$HERE/compare_dbs.py" "$1" "$2"; }
