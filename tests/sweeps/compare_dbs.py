#!/usr/bin/python3
"""Exit 0 when two sweep databases hold the same rows: same point ids, and for each the
same axis values, status and metrics. Columns that measure the machine rather than the
model (wall times, timestamps) are ignored."""
import sqlite3
import sys

VOLATILE = {"elapsed_s", "finished_at", "wall_time_s", "metric_wall_time_s"}


def load(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = {r["point_id"]: dict(r) for r in con.execute("SELECT * FROM points")}
    cols = [r[1] for r in con.execute("PRAGMA table_info(points)")]
    return rows, set(cols) - VOLATILE


a_rows, a_cols = load(sys.argv[1])
b_rows, b_cols = load(sys.argv[2])
problems = []
if a_cols != b_cols:
    problems.append(f"columns differ: only in A {sorted(a_cols - b_cols)}, only in B {sorted(b_cols - a_cols)}")
if set(a_rows) != set(b_rows):
    problems.append(f"point ids differ: only in A {sorted(set(a_rows) - set(b_rows))}, "
                    f"only in B {sorted(set(b_rows) - set(a_rows))}")
for pid in sorted(set(a_rows) & set(b_rows)):
    for col in sorted(a_cols & b_cols):
        va, vb = a_rows[pid][col], b_rows[pid][col]
        if va != vb:
            problems.append(f"{pid}.{col}: {va!r} != {vb!r}")
for p in problems[:20]:
    print("compare_dbs:", p, file=sys.stderr)
print(f"compare_dbs: {len(a_rows)} vs {len(b_rows)} rows, {len(problems)} differences", file=sys.stderr)
sys.exit(1 if problems else 0)
