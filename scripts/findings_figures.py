#!/usr/bin/python3
"""The numbers docs/findings.md's prose quotes from the nine-city regime map, recomputed
from the map's numbers file (`plot_regime_map.py` writes it with the figure):

    /usr/bin/python3 scripts/findings_figures.py            # print each phrase
    /usr/bin/python3 scripts/findings_figures.py --check    # ctest docs_findings_figures
    /usr/bin/python3 scripts/findings_figures.py --check --aggnet build/apps/aggnet
                                                  # the ablation table, ctest docs_findings_ablation

Each claim is a phrase of the doc with its numbers filled in from
docs/img/regime_map_nine_city.txt; --check fails (exit 1) naming every phrase the doc
does not hold (whitespace and line breaks aside), so a re-run sweep that moves a number
moves the check. With --aggnet it checks the ablation table instead, from a fresh
sweep (the map's sweep takes ten minutes; the ablation's eight points a few seconds).
The tables between markers are scripts/bound_table.py's and
scripts/tree_cells.py's.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bound_table import parse  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "findings.md")
NUMBERS = os.path.join(ROOT, "docs", "img", "regime_map_nine_city.txt")
TEN, HUNDRED = "10 Gb/s WAN links", "100 Gb/s WAN links"
FAMILIES = ("all-to-all", "triads", "triad_pair_aligned_16mib")  # the source study's
PAIR, RING, FOREST = "triad_pair_aligned_16mib", "ring", "reduction-forest"


def cells(rows, panel=None):
    """[(panel, gradient, buffer, winner, values)] in the file's order."""
    return [(p, g, b, w, v) for (p, g), entries in rows.items() if panel in (None, p)
            for b, w, v in entries]


def at(rows, panel, gradient, buffer):
    return next(v for b, _, v in rows[(panel, gradient)] if b == buffer)


def percent_range(values):
    return f"{round(100 * min(values))}-{round(100 * max(values))} %"


def ratio_range(values):
    return f"{min(values):.1f}-{max(values):.1f}x"


def ring_cells(rows):
    """(panel, gradient) where the ring beats every family of the study at every buffer."""
    return [key for key, entries in rows.items()
            if all(v[RING] < min(v[f] for f in FAMILIES) for _, _, v in entries)]


def family_winners(rows, panel, gradient):
    """Per buffer, the study's family with the shortest time."""
    return [(b, min(FAMILIES, key=lambda f: v[f])) for b, _, v in rows[(panel, gradient)]]


def holds_phrases(rows):
    """The buffers up to which the best pair wins among the families and from which
    all-to-all does, the same in both rows (G = 64 and 256 MiB at 100 Gb/s)."""
    spans = set()
    for gradient in ("64 MiB", "256 MiB"):
        winners = family_winners(rows, HUNDRED, gradient)
        last_pair = max((i for i, (_, w) in enumerate(winners) if w == PAIR))
        first_a2a = min((i for i, (_, w) in enumerate(winners) if w == "all-to-all"))
        assert all(w == "all-to-all" for _, w in winners[first_a2a:]), winners
        spans.add((winners[last_pair][0], winners[first_a2a][0]))
    assert len(spans) == 1, spans
    return spans.pop()


def claims(rows):
    """[(what, phrase)]: each phrase as the doc must hold it."""
    ten, hundred = cells(rows, TEN), cells(rows, HUNDRED)
    eff = lambda cs: [v["efficiency"] for *_, v in cs]  # noqa: E731
    big = at(rows, TEN, "4 GiB", "8 GiB")
    pair_until, a2a_from = holds_phrases(rows)
    forest_vs_ring = [v[RING] / v[FOREST] for p, g, _, _, v in cells(rows)
                      if (p, g) in ring_cells(rows)]
    ring_lead_10 = [min(v[f] for f in FAMILIES) / v[RING] for p, g, _, _, v in ten
                    if (p, g) in ring_cells(rows)]
    small = at(rows, HUNDRED, "256 MiB", "2 MiB")
    points = sum(len(set(v) - {"bound", "efficiency"}) for *_, v in cells(rows))
    tie = at(rows, TEN, "64 MiB", "8 GiB")
    pair_min = lambda p, g: min(v[PAIR] for _, _, v in rows[(p, g)])  # noqa: E731
    return [
        ("points of the sweep", f"({points} points, about ten minutes"),
        ("the winner's efficiency per link rate",
         f"The winner reaches {percent_range(eff(ten))} of the physical bound at 10 Gb/s and "
         f"{percent_range(eff(hundred))} at 100 Gb/s"),
        ("10 Gb/s, 4 GiB: the winner against the bound and the ring",
         f"At 10 Gb/s, G = 4 GiB it is within {big[FOREST] / big['bound']:.1f}x of the bound "
         f"and {big[RING] / big[FOREST]:.1f}x faster than the host ring"),
        ("the same, in the forest's section",
         f"the forest is within {big[FOREST] / big['bound']:.1f}x of the bound and "
         f"{big[RING] / big[FOREST]:.1f}x faster than the host ring"),
        ("the ring's efficiency", "the ring, which uses no FPGA, sits at " +
         percent_range([v["bound"] / v[RING] for *_, v in cells(rows)])),
        ("the ring's efficiency, in the list",
         f"pays 16 sequential hop latencies: "
         f"{percent_range([v['bound'] / v[RING] for *_, v in cells(rows)])} everywhere"),
        ("the forest against the ring where the ring beats the families",
         f"the reduction forest beats the ring by {ratio_range(forest_vs_ring)}"),
        ("the same, under the headline",
         f"the reduction forest is {ratio_range(forest_vs_ring)} faster than the ring in "
         "those cells"),
        ("the ring's lead over the families at 10 Gb/s",
         f"the ring wins everywhere there, by {ratio_range(ring_lead_10)} at 10 Gb/s"),
        ("triads in platform order against the pair, 100 Gb/s, 256 MiB, small buffers",
         f"are {round(100 * (small['triads'] / small[PAIR] - 1))} % slower than the aligned "
         "search's pair at small buffers"),
        ("the forest at 100 Gb/s, 256 MiB",
         f"the forest's {at(rows, HUNDRED, '256 MiB', '2 MiB')[FOREST]:.3f} s at G = 256 MiB"),
        ("the families' crossover at 100 Gb/s",
         f"the fastest of the study's families up to {pair_until} of buffer and all-to-all "
         f"from {a2a_from}"),
        ("all-to-all's win at 100 Gb/s",
         f"it wins from {a2a_from} at 100 Gb/s and G = 64 or 256 MiB"),
        ("all-to-all at 128 MiB, 100 Gb/s, 256 MiB",
         f"({at(rows, HUNDRED, '256 MiB', '128 MiB')['all-to-all']:.3f} s at 128 MiB, in the "
         "numbers file)"),
        ("the ring against the best pair",
         f"at 10 Gb/s from G = 256 MiB ({at(rows, TEN, '256 MiB', '8 GiB')[RING]:.2f} s against "
         f"{pair_min(TEN, '256 MiB'):.2f} s for the best pair), at 100 Gb/s from G = 1 GiB "
         f"({at(rows, HUNDRED, '1 GiB', '8 GiB')[RING]:.2f} s against "
         f"{pair_min(HUNDRED, '1 GiB'):.2f} s for the best pair)"),
        ("10 Gb/s, 64 MiB: ring and all-to-all",
         f"At 10 Gb/s and 64 MiB the ring and all-to-all tie within "
         f"{math.ceil(100 * abs(tie['all-to-all'] / tie[RING] - 1))} %, and the best pair beats "
         f"both from 128 MiB ({at(rows, TEN, '64 MiB', '128 MiB')[PAIR]:.2f} s)"),
    ]


# The ablation table's rows: sweeps/ablation.yaml's variant label -> the doc's row name.
ABLATION = {"plain-wan-ring": "plain WAN (host ring over unicast)",
            "multicast-only": "multicast only (FPGA passes contributions)",
            "aggregation-only": "aggregation only (unicast copies; per-copy offsets at 64 MiB)",
            "both": "both"}


def ablation_claims(aggnet):
    """The ablation table's rows from a fresh `aggnet sweep sweeps/ablation.yaml` (eight
    points, a few CPU-seconds): mean step time per variant at 64 MiB and 4 GiB."""
    with tempfile.TemporaryDirectory(prefix="findings_ablation_") as out:
        proc = subprocess.run([aggnet, "sweep", os.path.join(ROOT, "sweeps", "ablation.yaml"),
                               "--out", out, "--no-plot", "--workers", "2"], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"findings_figures: the ablation sweep: exit {proc.returncode}\n"
                     f"{proc.stderr}")
        with open(os.path.join(out, "results.csv")) as f:
            rows = {(r["variant"], r["buffer"]): float(r["step_time_s_mean"])
                    for r in csv.DictReader(f)}
    both = rows[("both", "4GiB")]
    return [(f"ablation: {label}",
             f"| {name} | {rows[(label, '64MiB')]:.3f} s | {rows[(label, '4GiB')]:.3f} s |")
            for label, name in ABLATION.items()] + [
        ("ablation: the tie at 4 GiB", f"the two tie ({both:.3f} s at 4 GiB)")]


def normalized(text):
    return re.sub(r"\s+", " ", text.replace("**", "").replace("`", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--aggnet", help="also re-run the ablation sweep with this binary and "
                    "check the ablation table (ctest docs_findings_ablation)")
    args = ap.parse_args()
    with open(DOC) as f:
        doc = normalized(f.read())
    missing = []
    found_claims = ablation_claims(args.aggnet) if args.aggnet else claims(parse(NUMBERS))
    for what, phrase in found_claims:
        found = normalized(phrase) in doc
        print(f"{'ok ' if found else 'NOT'} {what}: {phrase}")
        if not found:
            missing.append(what)
    if args.check and missing:
        print(f"findings_figures: docs/findings.md does not hold {len(missing)} phrase(s) as "
              f"{os.path.relpath(NUMBERS, ROOT)} gives them: " + "; ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
