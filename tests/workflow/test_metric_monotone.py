#!/usr/bin/python3
"""The decision metric never gets worse with more buffer or more link rate.

    test_metric_monotone.py --aggnet BUILD/apps/aggnet [--seed 34]

A seeded sample of plans (docs/run-json.md, "Time metrics"): small random platforms (4 to
6 sites, random delays), schedules drawn from the families (random ones with drawn
seeds), both flow controls, each at every buffer size and WAN link rate of a grid, run
through `aggnet sweep` (so through the SQLite columns the verdict and plots read). For a
plan at (buffer, rate), the plan with the next larger buffer and the one with the next
larger rate must reach eps-consensus no later, with and without compute
(comm_time_to_eps_s, time_to_eps_s). Also checked per row: comm_time_to_eps_s is
time_to_eps_s less rounds_to_eps x the platform's compute time.
"""
import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile

BUFFERS = ["1MiB", "4MiB", "16MiB", "64MiB"]
RATES = ["1Gbps", "10Gbps", "40Gbps"]
COMPUTE_S = 0.01
FAMILIES = ["all-to-all", "pairs", "ring", "rotating-2", "rotating-3", "sequential-2",
            "hierarchical"]
MIN_PLANS = 200


def platform_yaml(rng, name, n):
    """A connected random WAN: a random spanning tree plus one or two extra links."""
    codes = [f"s{i}" for i in range(n)]
    links = set()
    for i in range(1, n):
        links.add((rng.randrange(i), i))
    while len(links) < n - 1 + rng.randint(1, 2):
        a, b = sorted(rng.sample(range(n), 2))
        links.add((a, b))
    lines = [f"name: {name}", "defaults:", "  link: {bandwidth: 10Gbps}",
             f"  cluster: {{compute_time: {int(COMPUTE_S * 1000)}ms}}", "sites:"]
    lines += [f"  - {{code: {c}}}" for c in codes]
    lines.append("links:")
    lines += [f"  - {{a: {codes[a]}, b: {codes[b]}, delay: {rng.randint(1, 40)}ms}}"
              for a, b in sorted(links)]
    return "\n".join(lines) + "\n"


def spec_yaml(platform, schedules):
    return (f"name: monotone\nmetric: comm_time_to_eps_s\ntimeout: 2m\nbase:\n"
            f"  platform: {platform}\n  gradient: 4MiB\n  chunk: 256KiB\n  steps: 0\n"
            f"  no-colocated: true\naxes:\n"
            f"  - option: schedule\n    values: [{', '.join(schedules)}]\n"
            f"  - option: flow-control\n    values: [pacing, credit]\n"
            f"  - option: set:defaults.link.bandwidth\n    name: rate\n"
            f"    values: [{', '.join(RATES)}]\n"
            f"  - option: buffer\n    values: [{', '.join(BUFFERS)}]\n")


def sweep(aggnet, workdir, index, rng):
    n = rng.randint(4, 6)
    platform = os.path.join(workdir, f"p{index}.yaml")
    with open(platform, "w") as f:
        f.write(platform_yaml(rng, f"p{index}", n))
    schedules = rng.sample(FAMILIES, 2) + [f"random-2:{rng.randrange(1000)}"]
    spec = os.path.join(workdir, f"spec{index}.yaml")
    with open(spec, "w") as f:
        f.write(spec_yaml(platform, schedules))
    out = os.path.join(workdir, f"out{index}")
    proc = subprocess.run([aggnet, "sweep", spec, "--out", out, "--workers", "2", "--no-plot"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"sweep {index} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    con = sqlite3.connect(os.path.join(out, "results.db"))
    con.row_factory = sqlite3.Row
    return [dict(r) for r in con.execute("SELECT * FROM points")]


def check(rows, label):
    """Returns (plans, comparisons, failures) for one sweep's rows."""
    by_key = {}
    failures = []
    for r in rows:
        if r["status"] != "ok":
            failures.append(f"{label}: {r['schedule']} {r['flow_control']} failed: {r['status']}")
            continue
        by_key[(r["schedule"], r["flow_control"], r["rate"], r["buffer"])] = r
        if r["time_to_eps_s"] is not None:
            expected = r["time_to_eps_s"] - r["rounds_to_eps"] * COMPUTE_S
            if abs(r["comm_time_to_eps_s"] - expected) > 1e-9:
                failures.append(f"{label}: {r['schedule']}: comm {r['comm_time_to_eps_s']} "
                                f"!= {expected}")
    comparisons = 0
    for (sched, fc, rate, buf), r in by_key.items():
        if r["time_to_eps_s"] is None:
            continue  # never reaches eps: nothing to order
        bi, ri = BUFFERS.index(buf), RATES.index(rate)
        more = []
        if bi + 1 < len(BUFFERS):
            more.append(("buffer", by_key.get((sched, fc, rate, BUFFERS[bi + 1]))))
        if ri + 1 < len(RATES):
            more.append(("rate", by_key.get((sched, fc, RATES[ri + 1], buf))))
        for what, other in more:
            if other is None:
                continue
            for key in ("comm_time_to_eps_s", "time_to_eps_s"):
                comparisons += 1
                if other[key] > r[key] + 1e-12:
                    failures.append(
                        f"{label}: {sched} {fc} at {buf} {rate}: more {what} makes {key} "
                        f"worse: {r[key]:.9g} -> {other[key]:.9g}")
    plans = sum(1 for r in by_key.values() if r["time_to_eps_s"] is not None)
    return plans, comparisons, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--sweeps", type=int, default=4)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    plans = comparisons = 0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.sweeps):
            p, c, f = check(sweep(args.aggnet, tmp, i, rng), f"platform p{i}")
            plans, comparisons, failures = plans + p, comparisons + c, failures + f
    print(f"{plans} plans reaching eps, {comparisons} comparisons, {len(failures)} failures")
    for f in failures:
        print(f)
    if plans < MIN_PLANS:
        print(f"expected at least {MIN_PLANS} plans that reach eps")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
