#!/usr/bin/python3
"""The findings' before-and-after table of the reduction forest: the four cells of the
regime map at 10 and 100 Gb/s and G = 256 MiB and 4 GiB, 16 MiB of FPGA buffer per site,
compute time 0, each plan's time to the exact average against the run's physical bound.

    /usr/bin/python3 scripts/tree_cells.py --aggnet BUILD/apps/aggnet

A Markdown table on stdout; tests/workflow/test_docs_tree_cells.py checks that
docs/findings.md holds this output and the claims made from it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SCHEDULES = ["ring", "all-to-all", "triads", "reduction-forest", "reduction-in-trees"]
CELLS = [(rate, gradient) for rate in ("10Gbps", "100Gbps") for gradient in ("256MiB", "4GiB")]
BUFFER = "16MiB"


def run(aggnet, schedule, rate, gradient, tmp):
    """summary of one run to the exact average (steps 0: as many as the schedule needs)."""
    out = os.path.join(tmp, "run.json")
    subprocess.run([aggnet, "run", "-q", "--schedule", schedule, "--gradient", gradient,
                    "--buffer", BUFFER, "--steps", "0", "--no-colocated", "--set",
                    f"defaults.link.bandwidth={rate}", "--set",
                    "defaults.cluster.compute_time=0s", "--json", out], check=True)
    with open(out) as f:
        return json.load(f)["summary"]


def measure(aggnet):
    """{(rate, gradient): {"bound": s, schedule: s}}"""
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rate, gradient in CELLS:
            cell = {}
            for schedule in SCHEDULES:
                summary = run(aggnet, schedule, rate, gradient, tmp)
                cell["bound"] = summary["bound_s"]
                cell[schedule] = summary["exact_average_time_s"]
            cells[(rate, gradient)] = cell
    return cells


def table(cells):
    out = ["| link rate | gradient | bound (s) | " +
           " | ".join(SCHEDULES) + " | forest vs ring |",
           "|---|---|---|" + "---|" * len(SCHEDULES) + "---|"]
    for (rate, gradient), cell in cells.items():
        bound = cell["bound"]
        times = " | ".join(f"{cell[s]:.3f} s ({100 * bound / cell[s]:.0f} %)" for s in SCHEDULES)
        out.append(f"| {rate} | {gradient} | {bound:.3f} | {times} | "
                   f"{cell['ring'] / cell['reduction-forest']:.2f}x |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    sys.stdout.write(table(measure(ap.parse_args().aggnet)))
