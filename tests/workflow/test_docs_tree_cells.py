#!/usr/bin/python3
"""docs/findings.md's reduction-forest table is what scripts/tree_cells.py measures now,
and the claims made from it hold: no run beats its bound, the fastest plan of each cell is
within 2x of it, and at 10 Gb/s, G = 4 GiB with
16 MiB of buffer the forest is within 1.5x of the bound and at least twice as fast as the
host ring.

    test_docs_tree_cells.py --aggnet BUILD/apps/aggnet     (from the repository root)
"""
import argparse
import sys

sys.path.insert(0, "scripts")
from tree_cells import SCHEDULES, measure, table  # noqa: E402

BEGIN, END = "<!-- tree_cells: scripts/tree_cells.py -->", "<!-- /tree_cells -->"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    cells = measure(ap.parse_args().aggnet)
    failures = []
    for (rate, gradient), cell in cells.items():
        for s in SCHEDULES:
            if cell[s] < cell["bound"] * (1 - 1e-9):
                failures.append(f"{s} at {rate} {gradient}: {cell[s]} s beats the bound")
        best = min(cell[s] for s in SCHEDULES)
        if best > 2 * cell["bound"]:
            failures.append(f"{rate} {gradient}: the fastest plan, {best} s, is above 2x the bound")
    target = cells[("10Gbps", "4GiB")]
    if target["reduction-forest"] > 1.5 * target["bound"]:
        failures.append(f"forest at 10Gbps 4GiB: {target['reduction-forest']} s > 1.5 x bound")
    if target["ring"] < 2 * target["reduction-forest"]:
        failures.append(f"forest at 10Gbps 4GiB: not twice as fast as the ring ({target})")
    with open("docs/findings.md") as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        failures.append("docs/findings.md: no tree_cells markers")
    elif doc.split(BEGIN)[1].split(END)[0].strip() != table(cells).strip():
        failures.append("docs/findings.md: the forest table differs from scripts/tree_cells.py")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
