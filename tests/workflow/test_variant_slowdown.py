#!/usr/bin/python3
"""The variants figure compares every variant against one data centre (issue 34): each
run's own slowdown_vs_colocated divides by its own variant's co-located reference, which
differs between variants. From a real sweep (two variants of all-to-all, one aggregating
in the FPGA and one not, whose co-located references differ), the figure's numbers must
be each variant's mean step time over the smaller of the two references, read here
straight from results.db."""
import argparse
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

SPEC = """name: variants
metric: step_time_s_mean
base:
  platform: {platform}
  schedule: all-to-all
  gradient: 16MiB
  chunk: 1MiB
  steps: 2
axes:
  - name: variant
    values:
      - {{label: both}}
      - {{label: multicast-only, aggregation: "off"}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "variants.yaml")
        with open(spec, "w") as f:
            f.write(SPEC.format(platform=os.path.abspath("platforms/nine_city.yaml")))
        out = os.path.join(tmp, "sweep")
        subprocess.run([args.aggnet, "sweep", spec, "--out", out, "--no-plot"], check=True,
                       capture_output=True)
        db = os.path.join(out, "results.db")
        subprocess.run(["/usr/bin/python3", "scripts/plot_sweep.py", db, "--out", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "plot_numbers.txt")) as f:
            numbers = f.read()
        con = sqlite3.connect(db)
        rows = con.execute("SELECT variant, step_time_s_mean, colocated_step_time_s_mean, "
                           "slowdown_vs_colocated FROM points").fetchall()
    refs = {r[0]: r[2] for r in rows}
    if len(set(refs.values())) < 2:
        print(f"the two variants share a reference, nothing to check: {rows}")
        return 1
    line = re.search(r"^# slowdown_vs_colocated per variant: (.*)$", numbers, re.M)
    if not line:
        print(f"no slowdown line in the figure's numbers:\n{numbers}")
        return 1
    shown = dict(kv.split("=") for kv in line.group(1).split(", "))
    for variant, step, _, own in rows:
        expected = step / min(refs.values())
        if abs(float(shown[variant]) - expected) > 1e-5 * expected:
            print(f"{variant}: figure {shown[variant]}, expected {expected:.6g} "
                  f"(its own reference gives {own:.6g})")
            return 1
    print(f"variants: slowdowns against one reference ({min(refs.values()):.6g} s): {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
