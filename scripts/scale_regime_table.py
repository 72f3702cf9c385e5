#!/usr/bin/python3
"""The findings' table of the regime map at scale, from the numbers file that
`plot_regime_map.py --rows platform` writes (docs/img/regime_map_scale.txt):

    /usr/bin/python3 scripts/scale_regime_table.py docs/img/regime_map_scale.txt

One row per (sites, link rate, buffer): the physical bound, the fastest plan, its lead over
the runner-up, every schedule's time to the exact average with its efficiency (bound /
time; "not run" where the sweeps leave it out), and the fastest of the source study's
families (groups of three: affine triads or rotating-3; all-to-all). A Markdown table on stdout; tests/workflow/test_docs_regime_scale.py checks
that docs/findings.md holds this output.
"""
import re
import sys

PANEL = re.compile(r"\[(\S+) Gb/s WAN links\]")
CELL = re.compile(r"platform \D*(\d+) buffer (\S+ \S+): (\S+)")
VALUE = re.compile(r"(\S+)=([0-9.e+-]+|failed)")
SCHEDULES = ["reduction-forest", "reduction-in-trees", "ring", "affine_triads", "rotating-3",
             "all-to-all"]
STUDY = ["affine_triads", "rotating-3", "all-to-all"]


def parse(path):
    """[(sites, rate Gb/s, buffer, winner, {schedule or bound: value})] in file order."""
    cells, rate = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            panel = PANEL.match(line)
            if panel:
                rate = panel.group(1)
                continue
            m = CELL.match(line)
            if m and rate is not None:
                values = {k: None if v == "failed" else float(v)
                          for k, v in VALUE.findall(line)}
                cells.append((int(m.group(1)), rate, m.group(2), m.group(3), values))
    return sorted(cells, key=lambda c: (c[0], float(c[1]), c[2] != "16 MiB"))


def timed(values, schedule):
    if schedule not in values:
        return "not run"
    t = values[schedule]
    if not t:
        return "failed"
    eff = 100 * values["bound"] / t
    return f"{t:.3f} s ({eff:.0f} %)" if eff >= 9.95 else f"{t:.3f} s ({eff:.1f} %)"


def table(cells):
    out = ["| sites | link rate | buffer | bound (s) | fastest | lead | " +
           " | ".join(SCHEDULES) + " | fastest study family |",
           "|---|---|---|---|---|---|" + "---|" * len(SCHEDULES) + "---|"]
    for sites, rate, buffer, winner, values in cells:
        times = sorted(values[s] for s in SCHEDULES if values.get(s))
        lead = f"{times[1] / times[0]:.2f}x" if len(times) > 1 else "-"
        study = min((s for s in STUDY if values.get(s)), key=lambda s: values[s], default="-")
        out.append(f"| {sites} | {rate} Gb/s | {buffer} | {values['bound']:.3f} | {winner} | "
                   f"{lead} | " + " | ".join(timed(values, s) for s in SCHEDULES) +
                   f" | {study} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table(parse(sys.argv[1])))
