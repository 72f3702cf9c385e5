#!/usr/bin/python3
"""The findings' table of how far the fastest plan is from the physical bound, from the
numbers file of a regime map (`plot_regime_map.py` writes regime_map.txt):

    /usr/bin/python3 scripts/bound_table.py docs/img/regime_map_nine_city.txt

Per (link rate, gradient): the bound, and over the buffer sizes the fastest
plan's time and efficiency (bound / time) at the smallest and the largest buffer, the best
efficiency of the row, and the host ring's efficiency. A Markdown table on stdout;
tests/workflow/test_docs_bound.py checks that docs/findings.md holds this output.
"""
import re
import sys

CELL = re.compile(r"gradient (\S+ \S+) buffer (\S+ \S+): (\S+)")
VALUE = re.compile(r"(\S+)=([0-9.e+-]+|failed)")


def parse(path):
    rows, panel = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("[") and line.rstrip().endswith("]"):
                panel = line.strip()[1:-1]
                continue
            m = CELL.match(line)
            if not m or panel is None:
                continue
            values = {k: float(v) for k, v in VALUE.findall(line) if v != "failed"}
            rows.setdefault((panel, m.group(1)), []).append((m.group(2), m.group(3), values))
    return rows


def efficiency_text(bound, seconds):
    return f"{seconds:.3f} s, {100 * bound / seconds:.0f} %"


def table(rows):
    out = ["| panel | gradient | bound (s) | fastest at the smallest buffer | "
           "fastest at the largest buffer | best efficiency | ring |",
           "|---|---|---|---|---|---|---|"]
    for (panel, gradient), cells in rows.items():
        bound = cells[0][2].get("bound")
        if bound is None:
            continue
        first, last = cells[0], cells[-1]
        best = max(bound / c[2][c[1]] for c in cells)
        ring = cells[0][2].get("ring")
        out.append(
            f"| {panel} | {gradient} | {bound:.3f} | {first[1]} ({first[0]}): "
            f"{efficiency_text(bound, first[2][first[1]])} | {last[1]} ({last[0]}): "
            f"{efficiency_text(bound, last[2][last[1]])} | {100 * best:.0f} % | "
            f"{efficiency_text(bound, ring) if ring else '-'} |")
    return "\n".join(out) + "\n"


ROWS = [("reduction-forest", "reduction forest"), ("reduction-in-trees", "in-trees"),
        ("all-to-all", "all-to-all"), ("triads", "triads (4 classes, platform order)"),
        ("triad_pair_aligned_16mib", "best triad pair, aligned search"),
        ("ring", "ring (no FPGA)")]
BUFFERS = ["2 MiB", "32 MiB", "512 MiB", "8 GiB"]


def schedule_table(rows, rate="100 Gb/s", gradient="256 MiB"):
    """Every schedule's time at a few buffer sizes in one cell row; the fastest in bold."""
    out = ["| schedule | " + " | ".join(BUFFERS) + " |", "|---|" + "---|" * len(BUFFERS)]
    cells = {c[0]: c[2] for c in rows[(f"{rate} WAN links", gradient)]}
    winners = [min((v, k) for k, v in cells[b].items() if k not in ("bound", "efficiency"))[1]
               for b in BUFFERS]
    for key, words in ROWS:
        times = [cells[b].get(key) for b in BUFFERS]
        shown = [f"**{t:.3f}**" if w == key else f"{t:.3f}" for t, w in zip(times, winners)]
        out.append(f"| {words} | " + " | ".join(shown) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    parsed = parse(sys.argv[1])
    sys.stdout.write(schedule_table(parsed) if "--schedules" in sys.argv else table(parsed))
