#!/usr/bin/python3
"""aggnet against SimGrid (and ns-3) on the same platform and scenario (docs/validation.md).

    compare.py --build DIR [--platform FILE] [--suite fast|full|ns3|trees]
               [--bandwidths 10,100] [--ns3] [--ns3-budget SECONDS] [--repeats N] [--check]
               [--doc FILE] [--json OUT] [--markdown OUT]

Runs every scenario of the suite with `aggnet run` and the harnesses built in DIR
(validation/aggnet-simgrid, validation/aggnet-ns3), measures each one's wall and CPU time,
and prints the table (with --repeats N each tool's times are the medians of up to N runs,
fewer once its runs took 2 CPU-s). With --check it exits 1 unless:
  - aggnet equals the store-and-forward closed form and SimGrid the flow-level one
    (where the scenario has one), so the observed difference is the closed-form one;
  - aggnet and SimGrid agree within 0.5 % on point-to-point and the ring family;
  - the ring step rules order as they must (receive <= sendrecv <= barrier);
  - the sender's transmit-complete time equals its closed form.
`--suite trees` runs the reduction trees (TREES) on their own platforms; with --check it
exits 1 unless aggnet and SimGrid give every one the same time (EXACT_TREES) and, with
--doc, the file's trees table is this run's.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

AGREE = 0.005        # aggnet vs SimGrid where the models should agree
EXACT_AGGNET = 1e-9  # aggnet vs its closed form (both exact in ps; relative)
EXACT_FLOW = 1e-6    # SimGrid vs its closed form (floating point, precision/timing 1e-9 s)

# (label, schedule name, G, closed form expected, agreement expected)
FAST = [
    ("point-to-point lon->nyc", "p2p:lon-nyc", "90MiB", True, True),
    ("point-to-point lon->nyc, 4 messages", "p2p:lon-nycx4", "90MiB", True, True),
    ("ring all-reduce, receive", "ring", "90MiB", True, True),
    ("ring all-reduce, sendrecv", "ring:sendrecv", "90MiB", True, True),
    ("ring all-reduce, barrier", "ring:barrier", "90MiB", True, True),
    ("reduce-scatter, receive", "reduce-scatter", "90MiB", True, True),
    ("all-gather, receive", "all-gather", "90MiB", True, True),
    ("parameter server lon", "parameter-server:lon", "90MiB", True, False),
    ("shared trunk lon->nyc + ams->chi", "p2p:lon-nyc,ams-chi", "90MiB", True, False),
    ("unicast all-to-all", "unicast-all-to-all", "90MiB", True, False),
]
FULL = FAST + [(label + ", 900 MiB", name, "900MiB", cf, agree)
               for label, name, _, cf, agree in FAST]
# Reduction trees (docs/reduction-trees.md) as chunk-level SimGrid actors:
# (label, platform, schedule name or file, G); paths from the source tree.
TREES = [
    ("line a-b-c, tree rooted at c", "tests/workflow/data/line3.yaml", "reduction-tree:c", "24MiB"),
    ("line a-b-c, in-trees", "tests/workflow/data/line3.yaml", "reduction-in-trees", "24MiB"),
    ("line a-b-c, forest rooted at a and c", "tests/workflow/data/line3.yaml",
     "tests/validation/data/line3_forest.yaml", "24MiB"),
    ("star h+x,y,z, tree rooted at h", "tests/workflow/data/star4.yaml", "reduction-tree:h",
     "24MiB"),
    ("star h+x,y,z, in-trees", "tests/workflow/data/star4.yaml", "reduction-in-trees", "24MiB"),
    ("star h+x,y,z, forest h 3/4 + x 1/4 paced", "tests/workflow/data/star4.yaml",
     "tests/validation/data/star4_forest.yaml", "24MiB"),
    ("star h+x,y,z, load-aware forest", "tests/workflow/data/star4.yaml", "reduction-forest",
     "24MiB"),
    ("nine cities, load-aware forest", "platforms/nine_city.yaml", "reduction-forest", "32MiB"),
    ("nine cities, in-trees", "platforms/nine_city.yaml", "reduction-in-trees", "16MiB"),
]
EXACT_TREES = 1e-9    # aggnet vs SimGrid on reduction trees (same semantics; relative)
TREE_BUFFER = "8GiB"  # FPGA buffer of every site in aggnet: large enough never to bind

# The ns-3 benchmark: every scenario at 108 MiB (113 MB, G a multiple of 9 x 1 MiB), the
# size from which aggnet must use 100x less CPU time than ns-3.
NS3 = [(label + ", 108 MiB", name, "108MiB", cf, agree) for label, name, _, cf, agree in FAST]
EXACT_PACKET = 1e-5  # ns-3 vs its packet-level closed form (interleaved messages: ~1 packet)
CPU_RATIO = 100      # ns-3 CPU time / aggnet CPU time, scenarios of 100 MB or more
REPEAT_BUDGET_S = 2.0  # with --repeats: no further run of a tool once its runs took this


def timed(cmd, repeats=1, output=None):
    """Runs cmd up to `repeats` times (no more once the runs' CPU time passes
    REPEAT_BUDGET_S, the same rule for every tool); returns (stdout, median wall s, median
    CPU s of the child, CPU s of all the runs). A single run's CPU time moves by tens of
    percent on a shared machine; every run must print the same (the tools are
    deterministic). `output`, a file the command writes, is removed before each run: every
    run writes a new file, as the harnesses' standard output is new (replacing a file on
    ext4 also writes its blocks back at once, about 0.2 ms that would be the harness's)."""
    walls, cpus, stdout = [], [], None
    while len(cpus) < max(1, repeats) and sum(cpus) < REPEAT_BUDGET_S:
        if output and os.path.exists(output):
            os.remove(output)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"compare.py: {' '.join(cmd)} failed ({proc.returncode}): "
                     f"{proc.stderr.strip()[-400:]}")
        if stdout is not None and proc.stdout != stdout:
            sys.exit(f"compare.py: {' '.join(cmd)} printed something else when run again")
        stdout = proc.stdout
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return stdout, statistics.median(walls), statistics.median(cpus), sum(cpus)


def run_aggnet(build, platform, schedule, gradient, gbps, tmp, repeats=1, extra=()):
    out = os.path.join(tmp, "aggnet.json")
    _, wall, cpu, _ = timed([
        os.path.join(build, "apps", "aggnet"), "run", "--platform", platform,
        "--schedule", schedule, "--gradient", gradient, "--chunk", "1MiB", "--steps", "1",
        "--set", "defaults.cluster.compute_time=0s",
        "--set", f"defaults.link.bandwidth={gbps}Gbps", "--no-colocated", "--quiet",
        "--json", out, *extra], repeats, output=out)
    with open(out, encoding="utf-8") as f:
        step = json.load(f)["steps"][0]
    sent = max((g.get("transmit_complete_s", 0) for g in step["groups"]), default=0)
    return {"time_s": step["round_time_s"], "transmit_complete_s": sent,
            "wall_s": wall, "cpu_s": cpu}


def run_harness(exe, platform, schedule, gradient, gbps, repeats=1):
    out, wall, cpu, spent = timed([exe, "--platform", platform, "--schedule", schedule,
                            "--gradient", gradient, "--chunk", "1MiB",
                            "--set", f"defaults.link.bandwidth={gbps}Gbps"], repeats)
    result = json.loads(out)
    result.update(wall_s=wall, cpu_s=cpu, cpu_spent_s=spent)
    return result


def check_row(row, failures):
    name = f"{row['scenario']} at {row['gbps']} Gb/s"
    a, s, cf = row["aggnet"]["time_s"], row["simgrid"]["time_s"], row["closed_form"]
    if row["expect_closed_form"] and not cf["applicable"]:
        failures.append(f"{name}: no closed form ({cf.get('why')})")
    if cf["applicable"]:
        slack = cf.get("tolerance_s", 0) + EXACT_AGGNET * cf["store_and_forward_s"] + 1e-12
        if abs(a - cf["store_and_forward_s"]) > slack:
            failures.append(f"{name}: aggnet {a!r} s != store-and-forward closed form "
                            f"{cf['store_and_forward_s']!r} s")
        if abs(s - cf["flow_level_s"]) > EXACT_FLOW * cf["flow_level_s"]:
            failures.append(f"{name}: SimGrid {s!r} s != flow-level closed form "
                            f"{cf['flow_level_s']!r} s")
        if "transmit_complete_s" in cf and abs(
                row["aggnet"]["transmit_complete_s"] - cf["transmit_complete_s"]) > 1e-12:
            failures.append(f"{name}: transmit complete {row['aggnet']['transmit_complete_s']!r}"
                            f" s != closed form {cf['transmit_complete_s']!r} s")
    if row["expect_agreement"] and abs(a - s) > AGREE * s:
        failures.append(f"{name}: aggnet {a:.6f} s and SimGrid {s:.6f} s differ by "
                        f"{(a - s) / s:+.3%} (limit {AGREE:.1%})")


def check_tree_row(row, failures):
    """The trees' semantics agree chunk for chunk (docs/validation.md), so the two times
    must be equal, not only within AGREE: an FPGA service too few per sum moves the time by
    a few tens of us in 0.1 s, well inside 0.5 %."""
    name = f"{row['scenario']} at {row['gbps']} Gb/s"
    a, s = row["aggnet"]["time_s"], row["simgrid"]["time_s"]
    if abs(a - s) > EXACT_TREES * s:
        failures.append(f"{name}: aggnet {a!r} s and SimGrid {s!r} s differ by "
                        f"{(a - s) / s:+.3e} (limit {EXACT_TREES:g} relative)")


def tree_markdown(rows):
    """The trees' table: only what a run determines (no wall or CPU time), so that
    docs/validation.md can hold it and --check compare it."""
    lines = ["| scenario | Gb/s | G | aggnet s | SimGrid s | aggnet - SimGrid (relative) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        a, s = r["aggnet"]["time_s"], r["simgrid"]["time_s"]
        # Bucketed: the ps aggnet rounds serializations and pacing to leave residues of
        # 1e-10 that a compiler's floating-point choices could move.
        diff = f"below {EXACT_TREES:g}" if abs(a - s) <= EXACT_TREES * s else f"{(a - s) / s:+.1e}"
        lines.append(f"| {r['scenario']} | {r['gbps']} | {r['gradient']} | {a:.9f} | {s:.9f} "
                     f"| {diff} |")
    return "\n".join(lines) + "\n"


DOC_BEGIN, DOC_END = "<!-- compare.py --suite trees: begin -->", "<!-- compare.py --suite trees: end -->"


def check_doc_table(doc, table, failures):
    """The table between the markers in `doc` must be this run's."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    if DOC_BEGIN not in text or DOC_END not in text:
        failures.append(f"{doc}: no table between {DOC_BEGIN} and {DOC_END}")
        return
    held = text.split(DOC_BEGIN, 1)[1].split(DOC_END, 1)[0].strip()
    if held != table.strip():
        failures.append(f"{doc}: the trees table differs from this run's (paste the table "
                        "printed by compare.py --suite trees)")


def run_trees(args, simgrid, failures):
    rows = []
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    only = set(filter(None, args.only.split(";")))
    with tempfile.TemporaryDirectory() as tmp:
        for gbps in [int(x) for x in args.bandwidths.split(",")]:
            for label, platform, sched, grad in TREES:
                if only and sched not in only:
                    continue
                platform = os.path.join(source, platform)
                if sched.endswith(".yaml"):
                    sched = os.path.join(source, sched)
                sg = run_harness(simgrid, platform, sched, grad, gbps, args.repeats)
                row = {"scenario": label, "schedule": sched, "gradient": grad, "gbps": gbps,
                       "aggnet": run_aggnet(args.build, platform, sched, grad, gbps, tmp,
                                            args.repeats, ("--buffer", TREE_BUFFER)),
                       "simgrid": {k: sg[k] for k in ("time_s", "wall_s", "cpu_s")}}
                if args.check:
                    check_tree_row(row, failures)
                rows.append(row)
                print(f"{label:<40} {gbps:>3} Gb/s  aggnet {row['aggnet']['time_s']:.9f} s  "
                      f"SimGrid {sg['time_s']:.9f} s", flush=True)
    return rows


def check_ns3(row, failures):
    name = f"{row['scenario']} at {row['gbps']} Gb/s (ns-3)"
    n, cf = row["ns3"], row["ns3"]["closed_form"]
    if not n["routes_match_aggnet"]:
        failures.append(f"{name}: ns-3 routes differ from aggnet's ({n.get('first_route_mismatch')})")
    if "packet_level_s" in cf and abs(n["time_s"] - cf["packet_level_s"]) > EXACT_PACKET * cf["packet_level_s"]:
        failures.append(f"{name}: ns-3 {n['time_s']!r} s != packet-level closed form "
                        f"{cf['packet_level_s']!r} s")
    if size_bytes(row["gradient"]) >= 100e6 and n["cpu_s"] < CPU_RATIO * row["aggnet"]["cpu_s"]:
        failures.append(f"{name}: ns-3 CPU {n['cpu_s']:.2f} s is less than {CPU_RATIO}x "
                        f"aggnet's {row['aggnet']['cpu_s']:.3f} s")


def size_bytes(text):
    units = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "MB": 1e6, "GB": 1e9}
    for unit, factor in units.items():
        if text.endswith(unit):
            return float(text[:-len(unit)]) * factor
    return float(text.rstrip("B"))


def check_rule_order(rows, failures):
    by = {(r["schedule"], r["gradient"], r["gbps"]): r["aggnet"]["time_s"] for r in rows}
    for (sched, g, gbps), t in by.items():
        if sched != "ring":
            continue
        sr, bar = by.get(("ring:sendrecv", g, gbps)), by.get(("ring:barrier", g, gbps))
        if sr is not None and bar is not None and not t <= sr * (1 + 1e-12) <= bar * (1 + 1e-12):
            failures.append(f"ring rules at {gbps} Gb/s, {g}: receive {t} <= sendrecv {sr} <= "
                            f"barrier {bar} does not hold")


def fmt_s(x):
    return "-" if x is None else f"{x:.6f}"


def markdown(rows):
    lines = [
        "| scenario | Gb/s | aggnet s | SimGrid s | ns-3 s | closed form aggnet / flow s | "
        "aggnet - SimGrid | closed-form difference | aggnet wall / CPU s | SimGrid wall / CPU s "
        "| ns-3 wall / CPU s | ns-3 packet-level closed form s | CPU ns-3 / aggnet |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, s, cf = r["aggnet"], r["simgrid"], r["closed_form"]
        n = r.get("ns3")
        if cf["applicable"]:
            closed = f"{cf['store_and_forward_s']:.6f} / {cf['flow_level_s']:.6f}"
            diff = f"{(cf['store_and_forward_s'] - cf['flow_level_s']) / cf['flow_level_s']:+.3%}"
        else:
            closed, diff = "n/a", "n/a (" + cf.get("why", "") + ")"
        lines.append(
            f"| {r['scenario']} | {r['gbps']} | {fmt_s(a['time_s'])} | {fmt_s(s['time_s'])} | "
            f"{fmt_s(n['time_s']) if n else '-'} | {closed} | "
            f"{(a['time_s'] - s['time_s']) / s['time_s']:+.3%} | {diff} | "
            f"{a['wall_s']:.2f} / {a['cpu_s']:.2f} | {s['wall_s']:.2f} / {s['cpu_s']:.2f} | "
            + (f"{n['wall_s']:.1f} / {n['cpu_s']:.1f}" if n else "-") + " | "
            + (fmt_s(n["closed_form"].get("packet_level_s")) if n else "-") + " | "
            + (f"{n['cpu_s'] / max(a['cpu_s'], 1e-9):.0f}x" if n else "-") + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--platform", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "platforms", "nine_city.yaml"))
    ap.add_argument("--suite", choices=["fast", "full", "ns3", "trees"], default="fast")
    ap.add_argument("--bandwidths", default="10,100")
    ap.add_argument("--only", default="", help="schedule names to keep, separated by ';'")
    ap.add_argument("--ns3", action="store_true", help="also run the ns-3 harness")
    ap.add_argument("--ns3-budget", type=float, default=600.0,
                    help="skip the remaining ns-3 runs once their CPU time exceeds this")
    ap.add_argument("--repeats", type=int, default=1,
                    help="time each tool as the median of up to this many runs (fewer once "
                         f"its runs took {REPEAT_BUDGET_S:g} CPU-s)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--doc", help="with --suite trees --check: a file whose trees table "
                    "(between the compare.py markers) must be this run's")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    simgrid = os.path.join(args.build, "validation", "aggnet-simgrid")
    ns3 = os.path.join(args.build, "validation", "aggnet-ns3")
    if args.suite == "trees":
        failures = []
        rows = run_trees(args, simgrid, failures)
        table = tree_markdown(rows)
        if args.check and args.doc:
            check_doc_table(args.doc, table, failures)
        return finish(args, rows, table, failures)
    suite = {"fast": FAST, "full": FULL, "ns3": NS3}[args.suite]
    only = set(filter(None, args.only.split(";")))
    rows, failures, ns3_cpu = [], [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for gbps in [int(x) for x in args.bandwidths.split(",")]:
            for label, sched, grad, expect_cf, expect_agree in suite:
                if only and sched not in only:
                    continue
                sg = run_harness(simgrid, args.platform, sched, grad, gbps, args.repeats)
                row = {"scenario": label, "schedule": sched, "gradient": grad, "gbps": gbps,
                       "aggnet": run_aggnet(args.build, args.platform, sched, grad, gbps, tmp,
                                            args.repeats),
                       "simgrid": {k: sg[k] for k in ("time_s", "wall_s", "cpu_s")},
                       "closed_form": sg["closed_form"], "expect_closed_form": expect_cf,
                       "expect_agreement": expect_agree}
                if args.ns3 and ns3_cpu < args.ns3_budget:
                    row["ns3"] = run_harness(ns3, args.platform, sched, grad, gbps, args.repeats)
                    ns3_cpu += row["ns3"]["cpu_spent_s"]
                    if args.check:
                        check_ns3(row, failures)
                if args.check:
                    check_row(row, failures)
                rows.append(row)
                print(f"{label:<40} {gbps:>3} Gb/s  aggnet {row['aggnet']['time_s']:.6f} s  "
                      f"SimGrid {sg['time_s']:.6f} s", flush=True)
    if args.check:
        check_rule_order(rows, failures)
    return finish(args, rows, markdown(rows), failures)


def finish(args, rows, table, failures):
    print(table)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(table)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
