#!/usr/bin/python3
"""The three result formats load into pandas with one call each (docs/run-json.md,
"Loading into pandas"): a sweep's results.db, a run's --stats CSV and its JSON.

    test_pandas.py --aggnet BUILD/apps/aggnet     (from the repository root)
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

import pandas as pd

LINE3 = "tests/workflow/data/line3.yaml"
SPEC = "tests/sweeps/data/small.yaml"


def check(cond, what):
    if not cond:
        print("FAIL:", what)
    return 0 if cond else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    aggnet = ap.parse_args().aggnet
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        run_json, stats_csv = os.path.join(tmp, "run.json"), os.path.join(tmp, "stats.csv")
        subprocess.run([aggnet, "run", "--platform", LINE3, "--schedule", "all-to-all",
                        "--gradient", "4MiB", "--chunk", "256KiB", "--no-colocated", "-q",
                        "--json", run_json, "--stats", stats_csv], check=True)
        out = os.path.join(tmp, "sweep")
        subprocess.run([aggnet, "sweep", SPEC, "--out", out, "--workers", "2", "--no-plot",
                        "--no-progress"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

        points = pd.read_sql("SELECT * FROM points", sqlite3.connect(os.path.join(out, "results.db")))
        failures += check(len(points) == 10, f"results.db: 10 points, got {len(points)}")
        failures += check(points["status"].eq("ok").all(), "results.db: every point ok")
        failures += check(pd.api.types.is_float_dtype(points["step_time_s_mean"]),
                          "results.db: step_time_s_mean is a float column")
        failures += check(pd.api.types.is_integer_dtype(points["buffer_bytes"]),
                          "results.db: buffer_bytes is an integer column")

        stats = pd.read_csv(stats_csv)
        failures += check(len(stats) > 0 and "instance" in stats.columns,
                          f"--stats CSV: rows with an instance column, got {list(stats.columns)[:5]}")

        with open(run_json) as f:
            report = json.load(f)
        sites = pd.json_normalize(report, record_path="sites")
        failures += check(sorted(sites["site"]) == ["a", "b", "c"], "run JSON: one row per site")
        summary = pd.json_normalize(report["summary"])
        failures += check(summary.loc[0, "time_to_eps_s"] == report["summary"]["time_to_eps_s"],
                          "run JSON: the summary as one row")
    print("pandas: results.db, --stats CSV and run JSON loaded" if not failures else
          f"pandas: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
