#!/usr/bin/python3
"""docs/findings.md's table of efficiencies is what scripts/bound_table.py makes of the
committed regime map numbers (docs/img/regime_map_nine_city.txt), and every bound in that
file is the bound `aggnet run` reports for its link rate and gradient (a 1-chunk run).

    test_docs_bound.py --aggnet BUILD/apps/aggnet     (from the repository root)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, "scripts")
from bound_table import parse, schedule_table, table  # noqa: E402

NUMBERS = "docs/img/regime_map_nine_city.txt"
BEGIN, END = "<!-- bound_table: scripts/bound_table.py -->", "<!-- /bound_table -->"
ROWS_BEGIN = "<!-- schedule_table: scripts/bound_table.py --schedules -->"
ROWS_END = "<!-- /schedule_table -->"


def bound_of(aggnet, rate_gbps, gradient, tmp):
    """The bound of a real run: aggnet reports it whatever the run; one step of a
    point-to-point transfer keeps the simulation short."""
    out = os.path.join(tmp, "b.json")
    subprocess.run([aggnet, "run", "--gradient", gradient, "--chunk", "16MiB", "--schedule",
                    "p2p:lon-ams", "--steps", "1", "--no-colocated", "-q", "--set",
                    f"defaults.link.bandwidth={rate_gbps}Gbps", "--json", out], check=True)
    with open(out) as f:
        return json.load(f)["summary"]["bound_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    aggnet = ap.parse_args().aggnet
    with open("docs/findings.md") as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print("docs/findings.md: no bound table markers")
        return 1
    shown = doc.split(BEGIN)[1].split(END)[0].strip()
    rows = parse(NUMBERS)
    if shown != table(rows).strip():
        print("docs/findings.md: the bound table differs from scripts/bound_table.py's output")
        return 1
    if ROWS_BEGIN not in doc or ROWS_END not in doc or \
            doc.split(ROWS_BEGIN)[1].split(ROWS_END)[0].strip() != schedule_table(rows).strip():
        print("docs/findings.md: the schedule table differs from bound_table.py --schedules")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for (panel, gradient), cells in rows.items():
            if "no send alignment" in panel:
                continue  # the same bounds as the aligned panel
            rate = re.match(r"(\S+) Gb/s", panel).group(1)
            got = bound_of(aggnet, rate, gradient.replace(" ", ""), tmp)
            want = cells[0][2]["bound"]
            if abs(got - want) > 5e-6 * want:  # the numbers file keeps 6 digits
                print(f"{panel} {gradient}: the numbers file has bound {want}, aggnet {got}")
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
