#!/usr/bin/python3
"""docs/findings.md's regime map at scale is what scripts/scale_regime_table.py makes of the
committed numbers file (docs/img/regime_map_scale.txt, written by plot_regime_map.py
--rows platform), and that file is consistent: every cell of 27, 81 and 243 sites x 10 and
100 Gb/s x 16 MiB and 8 GiB is there, no schedule beats the cell's bound, the named winner
is the fastest schedule and the efficiency is bound / its time; and the findings' claims
hold in every cell: the reduction forest first, the host ring second, and among the study's
families the affine triads ahead of all-to-all at both buffers (no crossover).

    test_docs_regime_scale.py     (from the repository root)
"""
import sys

sys.path.insert(0, "scripts")
from scale_regime_table import parse, table  # noqa: E402

NUMBERS = "docs/img/regime_map_scale.txt"
DOC = "docs/findings.md"
BEGIN, END = "<!-- scale_regime_table: scripts/scale_regime_table.py -->", \
    "<!-- /scale_regime_table -->"
CELLS = {(n, rate, buffer) for n in (27, 81, 243) for rate in ("10", "100")
         for buffer in ("16 MiB", "8 GiB")}


def cell_failures(cells):
    failures = []
    seen = {(n, rate, buffer) for n, rate, buffer, _, _ in cells}
    if seen != CELLS or len(cells) != len(CELLS):
        failures.append(f"{NUMBERS}: cells {sorted(seen)}, expected {sorted(CELLS)}")
    for n, rate, buffer, winner, values in cells:
        where = f"{NUMBERS}: {n} sites, {rate} Gb/s, {buffer}"
        times = {k: v for k, v in values.items() if k not in ("bound", "efficiency")}
        if min(times.values()) < values["bound"] * (1 - 1e-5):
            failures.append(f"{where}: a schedule beats the bound {values['bound']}: {times}")
        if times.get(winner) != min(times.values()):
            failures.append(f"{where}: {winner} is not the fastest of {times}")
        elif abs(values["efficiency"] - values["bound"] / times[winner]) > 6e-4:
            failures.append(f"{where}: efficiency {values['efficiency']} is not bound / time")
        ranked = sorted(times, key=times.get)
        if ranked[:2] != ["reduction-forest", "ring"]:
            failures.append(f"{where}: the forest and the ring are not first and second: {ranked}")
        if not times["affine_triads"] < times["all-to-all"]:
            failures.append(f"{where}: all-to-all overtakes the affine triads: {times}")
    return failures


def main():
    with open(DOC) as f:
        doc = f.read()
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        print(f"{DOC}: expected one pair of scale regime table markers")
        return 1
    cells = parse(NUMBERS)
    failures = cell_failures(cells)
    if doc.split(BEGIN)[1].split(END)[0].strip() != table(cells).strip():
        failures.append(f"{DOC}: the scale regime table differs from scripts/scale_regime_table.py")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
