#!/usr/bin/python3
"""The numbers docs/findings.md's "regime map at scale" quotes, recomputed: the prose from
the map's numbers file (docs/img/regime_map_scale.txt, G = 1 GiB) and the nine-city one,
the G = 256 MiB table, the busiest links, rounds to eps and cuts from runs of their own
(docs/img/regime_scale_runs.json):

    /usr/bin/python3 scripts/scale_findings.py                # print each phrase
    /usr/bin/python3 scripts/scale_findings.py --check        # ctest docs_scale_findings
    /usr/bin/python3 scripts/scale_findings.py --aggnet build/apps/aggnet --write
                                            # the runs (about 15 CPU-s), the runs file anew
    /usr/bin/python3 scripts/scale_findings.py --aggnet build/apps/aggnet --check
                                            # ctest docs_scale_findings_runs: fresh runs
                                            # equal the runs file, and the doc holds them

The runs use the platforms of scripts/make_platforms.py --synthetic N --seed 1 and the
groups of scripts/affine_triads.py, made in a temporary folder. --check fails (exit 1)
naming every phrase the doc does not hold (whitespace and line breaks aside) and every
claim of the section the numbers contradict.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from findings_figures import DOC, HUNDRED, NUMBERS as NINE_CITY, PAIR, at, normalized  # noqa: E402
from bound_table import parse as parse_nine_city  # noqa: E402
from scale_regime_table import parse as parse_scale  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = os.path.join(ROOT, "docs", "img", "regime_map_scale.txt")
RUNS = os.path.join(ROOT, "docs", "img", "regime_scale_runs.json")
SIZES = (27, 81, 243)
BUFFERS = ("16MiB", "8GiB")
GRADIENT = "256MiB"
GRADIENT_BYTES = {"256MiB": 256 * 2**20, "1GiB": 2**30}
BASE = ["--steps", "0", "--no-colocated", "--chunk", "1MiB", "-q",
        "--set", "defaults.cluster.compute_time=0s"]
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
CUT = re.compile(r"cut \{([^}]*)\} -> rest: ([0-9.]+) ms over ([0-9.]+) Gbps \(([^)]*)\)")


# --- the runs --------------------------------------------------------------------------

def points(platforms):
    """[(key, platform, schedule, options)] of every run the section quotes."""
    out = []
    for n in SIZES:
        plat = platforms[n]
        for family, schedule in (("affine_triads", plat["triads"]), ("all-to-all", "all-to-all")):
            for buffer in BUFFERS:
                out.append((f"{n} {family} {buffer}", plat["yaml"], schedule,
                            ["--gradient", GRADIENT, "--buffer", buffer,
                             "--set", "defaults.link.bandwidth=100Gbps"]))
        if n < 243:  # rounds to eps only: the greedy covers' count
            out.append((f"{n} rotating-3", plat["yaml"], "rotating-3",
                        ["--gradient", GRADIENT, "--buffer", "16MiB",
                         "--set", "defaults.link.bandwidth=100Gbps"]))
        out.append((f"{n} cut", plat["yaml"], "ring",  # the 10 Gb/s bound's cut, the ring's load
                    ["--gradient", "1GiB", "--set", "defaults.link.bandwidth=10Gbps"]))
    out.append(("9 all-to-all", os.path.join(ROOT, "platforms", "nine_city.yaml"), "all-to-all",
                ["--gradient", GRADIENT]))
    return out


def make_platforms(folder):
    platforms = {}
    for n in SIZES:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_platforms.py"),
                        "--synthetic", str(n), "--seed", "1", "--out", folder],
                       check=True, capture_output=True)
        yaml = os.path.join(folder, f"synthetic_{n}.yaml")
        triads = os.path.join(folder, f"affine_triads_{n}.yaml")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "affine_triads.py"),
                        yaml, "--out", triads], check=True, capture_output=True)
        platforms[n] = {"yaml": yaml, "triads": triads}
    return platforms


def summary_of(run, gradient):
    """What the section reads of one run's JSON (`gradient`: its --gradient)."""
    busiest = max(run["links"], key=lambda link: link["payload_bytes"])
    out = {"comm_time_to_eps_s": run["summary"]["comm_time_to_eps_s"],
           "rounds_to_eps": run["summary"]["rounds_to_eps"],
           "busiest_link": f"{busiest['from']}->{busiest['to']}",
           "busiest_link_gradients": busiest["payload_bytes"] / GRADIENT_BYTES[gradient],
           "bound_s": run["bound"]["bound_s"], "bound_set_by": run["bound"]["set_by"]}
    return out


def run_all(aggnet):
    results = {}
    with tempfile.TemporaryDirectory(prefix="scale_findings_") as folder:
        platforms = make_platforms(folder)
        for key, platform, schedule, options in points(platforms):
            out = os.path.join(folder, "run.json")
            proc = subprocess.run([aggnet, "run", "--platform", platform, "--schedule", schedule,
                                   "--json", out] + BASE + options, cwd=ROOT,
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"scale_findings: {key}: exit {proc.returncode}\n{proc.stderr}")
            with open(out) as f:
                results[key] = summary_of(json.load(f), options[options.index("--gradient") + 1])
    return {"gradient": GRADIENT, "runs": results}


# --- the claims ------------------------------------------------------------------------

def words(count):
    return WORDS.get(count, str(count))


def ranged(values, fmt, unit):
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}{unit}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else \
        f"{lo:{fmt}}-{hi:{fmt}}{unit}"


def pct(x):
    return f"{100 * x:.0f}" if 100 * x >= 9.95 else f"{100 * x:.1f}"


def cell(cells, n, rate, buffer):
    return next(v for s, r, b, _, v in cells if (s, r, b) == (n, rate, buffer))


def map_claims(cells):
    """Phrases from the G = 1 GiB regime map at scale."""
    lead = lambda v: sorted(t for k, t in v.items()  # noqa: E731
                            if k not in ("bound", "efficiency"))[1:2][0] / v["reduction-forest"]
    small = [lead(v) for s, *_, v in cells if s < 243]
    eff = lambda rate: [v["efficiency"] for _, r, _, _, v in cells if r == rate]  # noqa: E731
    ring = lambda n, rate: cell(cells, n, rate, "16 MiB")  # noqa: E731
    ring_eff = lambda n, rate: ring(n, rate)["bound"] / ring(n, rate)["ring"]  # noqa: E731
    in_trees = [v["bound"] / v["reduction-in-trees"] for s, *_, v in cells if s < 243]
    a2a = {n: (cell(cells, n, "100", "16 MiB")["all-to-all"],
               cell(cells, n, "100", "8 GiB")["all-to-all"]) for n in SIZES}
    triads_8g = [cell(cells, n, "100", "8 GiB")["affine_triads"] for n in SIZES]
    lead_10 = [cell(cells, n, "10", "16 MiB")["all-to-all"] /
               cell(cells, n, "10", "16 MiB")["affine_triads"] for n in SIZES]
    ten_moves = max(abs(cell(cells, n, "10", "8 GiB")[k] / v[k] - 1)
                    for n, r, b, _, v in cells if r == "10" and b == "16 MiB"
                    for k in v if k not in ("bound", "efficiency"))
    paths = [cell(cells, n, "100", "16 MiB")["bound"] * 1000 for n in SIZES]
    edge = [v["bound"] / v[f] for s, r, _, _, v in cells if s > 27 and r == "10"
            for f in ("affine_triads", "all-to-all")]
    return [
        ("the forest's lead on 27 and 81 sites",
         f"{ranged(small, '.1f', 'x')} ahead of the runner-up on 27 and 81 sites"),
        ("the forest's lead on 243 sites",
         f"{lead(cell(cells, 243, '10', '16 MiB')):.1f}x (10 Gb/s) and "
         f"{lead(cell(cells, 243, '100', '16 MiB')):.1f}x (100 Gb/s) on 243"),
        ("the forest's efficiency",
         f"The forest reaches {ranged([100 * e for e in eff('10')], '.0f', ' %')} of the "
         f"physical bound at 10 Gb/s and {ranged([100 * e for e in eff('100')], '.0f', ' %')} "
         "at 100 Gb/s"),
        ("the 100 Gb/s bound", f"the longest shortest path ({ranged(paths, '.0f', ' ms')})"),
        ("the ring's efficiency",
         f"The ring stays at {ranged([100 * ring_eff(n, '10') for n in SIZES], '.0f', ' %')} "
         f"of the bound at 10 Gb/s and falls from {pct(ring_eff(27, '100'))} % to "
         f"{pct(ring_eff(243, '100'))} % at 100 Gb/s"),
        ("the in-trees' efficiency",
         f"The in-trees reach {ranged([100 * e for e in in_trees], '.1f', ' %')} on 27 and 81"),
        ("the edge-summing families at 10 Gb/s on 81 and 243 sites",
         "(under 1 % of the bound at 10 Gb/s on 81 and 243 sites)" if max(edge) < 0.01
         else f"({ranged([100 * e for e in edge], '.1f', ' %')} of the bound at 10 Gb/s)"),
        ("the buffer at 10 Gb/s", "At 10 Gb/s no schedule's time moves by 1 %"
         if ten_moves < 0.01 else f"(moves by {100 * ten_moves:.1f} %)"),
        ("all-to-all's gain from the buffer at 100 Gb/s",
         f"all-to-all gains {a2a[27][0] / a2a[27][1]:.1f}x from the larger buffer on 27 sites "
         f"({a2a[27][0]:.2f} s to {a2a[27][1]:.2f} s), {a2a[81][0] / a2a[81][1]:.2f}x on 81 "
         f"({a2a[81][0]:.2f} s to {a2a[81][1]:.2f} s) and "
         + (f"nothing on 243 ({a2a[243][0]:.2f} s at both)" if a2a[243][0] == a2a[243][1]
            else f"{a2a[243][0] / a2a[243][1]:.2f}x on 243")),
        ("the affine triads at 8 GiB, 100 Gb/s",
         f"({triads_8g[0]:.2f} s, {triads_8g[1]:.2f} s, {triads_8g[2]:.1f} s)"),
        ("the triads' lead at 10 Gb/s",
         f"from {lead_10[0]:.2f}x (27 sites, 10 Gb/s) to {lead_10[1]:.2f}x (81) and "
         f"{lead_10[2]:.2f}x (243)"),
    ]


def cut_phrase(run):
    m = CUT.match(run["bound_set_by"])
    assert m, run["bound_set_by"]
    return m.group(1).split(), float(m.group(3)), m.group(4).split(", ")


def cut_claims(runs, cells):
    """The 10 Gb/s bound's cuts, from the runs' bound and the map's."""
    r = runs["runs"]
    _, gbps_27, links_27 = cut_phrase(r["27 cut"])
    _, gbps_81, links_81 = cut_phrase(r["81 cut"])
    sites_243, gbps_243, links_243 = cut_phrase(r["243 cut"])
    same_cut = f"{gbps_27:.2f}" == f"{gbps_81:.2f}" and len(links_27) == len(links_81)
    bounds = [cell(cells, n, "10", "16 MiB")["bound"] for n in SIZES]
    return [
        ("the 10 Gb/s cut on 27 and 81 sites",
         f"North America's {words(len(links_27))} ocean links (G over {gbps_27:.2f} Gb/s, plus "
         f"their delay: {ranged(bounds[:2], '.2f', ' s')})"
         if same_cut else f"cuts of {gbps_27:.2f} and {gbps_81:.2f} Gb/s"),
        ("the 10 Gb/s cut on 243 sites",
         f"on 243 {words(len(sites_243))} sites behind {words(len(links_243))} link (G over "
         f"{gbps_243:.1f} Gb/s, {bounds[2]:.2f} s"),
    ]


def run_claims(runs, cells, nine_city):
    """Phrases from the runs file (and the map's 10 Gb/s time beside them)."""
    r = runs["runs"]
    busy = lambda n, family: round(r[f"{n} {family} 16MiB"]["busiest_link_gradients"])  # noqa: E731
    a2a_243 = cell(cells, 243, "10", "16 MiB")["all-to-all"]
    gigabits = 8 * 2**30 / 1e9
    nc = at(nine_city, HUNDRED, "1 GiB", "8 GiB")
    tie = comm_time(r, 81, "affine_triads", "8GiB") / comm_time(r, 81, "all-to-all", "8GiB")
    return cut_claims(runs, cells) + [
        ("all-to-all's busiest link, in the in-trees' sentence",
         f"as many as all-to-all's ({busy(27, 'all-to-all')} G, {busy(81, 'all-to-all')} G)"),
        ("rounds to eps",
         f"({r['27 rotating-3']['rounds_to_eps']} and {r['81 rotating-3']['rounds_to_eps']} "
         f"rounds to eps against the affine triads' "
         f"{r['27 affine_triads 16MiB']['rounds_to_eps']} and "
         f"{r['81 affine_triads 16MiB']['rounds_to_eps']})"),
        ("all-to-all's busiest link",
         f"{busy(27, 'all-to-all')} G on 27 sites, {busy(81, 'all-to-all')} G on 81, "
         f"{busy(243, 'all-to-all')} G on 243 "
         f"({round(r['9 all-to-all']['busiest_link_gradients'])} G on nine cities)"),
        ("all-to-all's link-bound time on 243 sites",
         f"({busy(243, 'all-to-all')} x {gigabits:.1f} Gb / 10 Gb/s = "
         f"{busy(243, 'all-to-all') * gigabits / 10:.0f} s against {a2a_243:.0f} s simulated "
         "on 243)"),
        ("the triads' busiest link",
         f"{busy(27, 'affine_triads')} G on 27 sites (an ocean link), "
         f"{busy(81, 'affine_triads')} G on 81 and {busy(243, 'affine_triads')} G on 243"),
        ("the ring's busiest link, as simulated (2(n-1)/n G)",
         f"{r['27 cut']['busiest_link_gradients']:.2f} G on 27 sites, "
         f"{r['243 cut']['busiest_link_gradients']:.2f} G on 243"),
        ("the nine-city pair against all-to-all at 1 GiB",
         f"{nc[PAIR]:.3f} s against {nc['all-to-all']:.3f} s with 8 GiB at 100 Gb/s"),
        ("the near tie on 81 sites",
         f"(all-to-all {pct(tie - 1)} % ahead with 8 GiB)"),
        ("all-to-all on 243 at both buffers",
         f"({comm_time(r, 243, 'all-to-all', '16MiB'):.3f} s with both)"),
        ("all-to-all's trees on the busiest link on 243 sites",
         f"because its {busy(243, 'all-to-all')} trees on the busiest link"),
        ("the triads' rounds on 243 sites",
         f"the triads' {words(r['243 affine_triads 16MiB']['rounds_to_eps'])} rounds"),
        ("the G = 256 MiB table", table_256(runs)),
    ]


def comm_time(r, n, family, buffer):
    return r[f"{n} {family} {buffer}"]["comm_time_to_eps_s"]


def table_256(runs):
    r = runs["runs"]
    rows = ["| sites | affine triads, 16 MiB | all-to-all, 16 MiB | affine triads, 8 GiB | "
            "all-to-all, 8 GiB |", "|---|---|---|---|---|"]
    for n in SIZES:
        cells = []
        for buffer in BUFFERS:
            t = {f: comm_time(r, n, f, buffer) for f in ("affine_triads", "all-to-all")}
            cells += [f"**{t[f]:.3f} s**" if t[f] == min(t.values()) else f"{t[f]:.3f} s"
                      for f in t]
        rows.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def contradictions(runs, cells):
    """The section's claims the numbers do not bear out."""
    r, failures = runs["runs"], []
    winner = lambda n, b: min(("affine_triads", "all-to-all"),  # noqa: E731
                              key=lambda f: comm_time(r, n, f, b))
    if [winner(27, b) for b in BUFFERS] != ["affine_triads"] * 2:
        failures.append("256 MiB: the affine triads do not win both buffers on 27 sites")
    if [winner(81, b) for b in BUFFERS] != ["affine_triads", "all-to-all"]:
        failures.append("256 MiB: on 81 sites the winner does not change with the buffer")
    if [winner(243, b) for b in BUFFERS] != ["all-to-all"] * 2:
        failures.append("256 MiB: all-to-all does not win both buffers on 243 sites")
    if comm_time(r, 243, "all-to-all", "16MiB") != comm_time(r, 243, "all-to-all", "8GiB"):
        failures.append("256 MiB: all-to-all on 243 sites moves with the buffer")
    for n in SIZES:
        for b in ("16 MiB", "8 GiB"):
            v = cell(cells, n, "100", b)
            if not v["affine_triads"] < v["all-to-all"]:
                failures.append(f"1 GiB, {n} sites, {b}: all-to-all overtakes the triads")
    return failures


# --- the checks ------------------------------------------------------------------------

def differences(fresh, kept):
    """Keys whose values differ between fresh runs and the runs file."""
    keys = sorted(set(fresh["runs"]) | set(kept["runs"]))
    return [f"{key}: ran {fresh['runs'].get(key)}, the runs file has {kept['runs'].get(key)}"
            for key in keys if fresh["runs"].get(key) != kept["runs"].get(key)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the doc or numbers disagree")
    ap.add_argument("--aggnet", help="run the points with this binary")
    ap.add_argument("--write", action="store_true", help="with --aggnet: write the runs file")
    args = ap.parse_args()
    if args.write and not args.aggnet:
        ap.error("--write needs --aggnet")
    kept = None
    if not args.write:
        with open(RUNS) as f:
            kept = json.load(f)
    failures = []
    runs = kept
    if args.aggnet:
        runs = run_all(args.aggnet)
        if args.write:
            tmp = RUNS + ".tmp"
            with open(tmp, "w") as f:
                json.dump(runs, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, RUNS)
        else:
            failures += differences(runs, kept)
    cells = parse_scale(SCALE)
    with open(DOC) as f:
        doc = normalized(f.read())
    claims = map_claims(cells) + run_claims(runs, cells, parse_nine_city(NINE_CITY))
    for what, phrase in claims:
        found = normalized(phrase) in doc
        print(f"{'ok ' if found else 'NOT'} {what}: {phrase}")
        if not found:
            failures.append(f"{DOC} does not hold: {what}")
    failures += contradictions(runs, cells)
    for failure in failures:
        print(failure)
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
