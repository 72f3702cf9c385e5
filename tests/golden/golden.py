#!/usr/bin/python3
"""Golden regression runs: a fixed set of `aggnet` commands whose JSON outputs must not
move when the code is restructured (issue: one model layer).

    golden.py --aggnet BUILD/apps/aggnet --data tests/golden/data            # compare
    golden.py --aggnet BUILD/apps/aggnet --data tests/golden/data --record   # rewrite

Run from the repository root (paths in the commands are relative to it). Values that
depend on the machine or the clock (wall time, version, elapsed time) are removed before
comparing; every other number must be identical. Exit status 1 on any difference, with
the first differing path of each case.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

SMALL = {"--gradient": "16MiB", "--chunk": "1MiB"}  # unless a case gives its own
RUNS = {
    "all_to_all": ["--schedule", "all-to-all", "--buffer", "8MiB"],
    "triads_aligned": ["--schedule", "triads", "--buffer", "4MiB"],
    "triads_unaligned": ["--schedule", "triads", "--buffer", "4MiB", "--alignment", "none"],
    "triad_pair": ["--schedule", "sweeps/schedules/triad_pair_aligned_16mib.yaml"],
    "pairs": ["--schedule", "pairs", "--steps", "4"],
    "rotating_4": ["--schedule", "rotating-4", "--steps", "3"],
    "sequential_3": ["--schedule", "sequential-3", "--steps", "6"],
    "random_3": ["--schedule", "random-3:7", "--steps", "2"],
    "hierarchical": ["--schedule", "hierarchical", "--steps", "2"],
    "ring": ["--schedule", "ring"],
    "credit": ["--schedule", "triads", "--flow-control", "credit", "--buffer", "4MiB"],
    "unicast_per_copy": ["--schedule", "all-to-all", "--multicast", "off", "--buffer", "4MiB",
                         "--alignment", "arrival"],
    "no_aggregation": ["--schedule", "all-to-all", "--aggregation", "off"],
    "jitter": ["--schedule", "triads", "--jitter", "on", "--seed", "3", "--steps", "2"],
    "functional": ["--schedule", "triads", "--functional", "--gradient", "256KiB", "--chunk",
                   "64KiB"],
    "ten_gbps": ["--schedule", "all-to-all", "--set", "defaults.link.bandwidth=10Gbps"],
    "colocated": ["--schedule", "triads", "--steps", "1", "--gradient", "4MiB"],
}
VOLATILE = {"wall_time_s", "aggnet_version", "elapsed_s", "finished_at", "wall_s"}


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def run_case(aggnet, name, args, tmp):
    out = os.path.join(tmp, "out.json")
    reference = [] if name == "colocated" else ["--no-colocated"]
    small = [w for k, v in SMALL.items() if k not in args for w in (k, v)]
    cmd = [aggnet, "run", *small, *args, *reference, "-q", "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return strip(json.load(f))


def size_buffers_case(aggnet, tmp):
    out = os.path.join(tmp, "sizing.json")
    subprocess.run([aggnet, "size-buffers", "--platform", "tests/workflow/data/line3.yaml",
                    "--schedule", "all-to-all", "--gradient", "16MiB", "--chunk", "256KiB",
                    "--workers", "2", "-q", "--json", out], check=True)
    with open(out) as f:
        return strip(json.load(f))


def sweep_case(aggnet, tmp):
    spec = os.path.join(tmp, "golden_sweep.yaml")
    with open(spec, "w") as f:
        f.write("name: golden\nmetric: comm_time_to_eps_s\nbase:\n"
                f"  platform: {os.path.abspath('platforms/nine_city.yaml')}\n"
                "  gradient: 8MiB\n  chunk: 1MiB\n  no-colocated: true\n"
                "axes:\n  - option: schedule\n    values: [all-to-all, triads, ring]\n"
                "  - option: buffer\n    values: [2MiB, 64MiB]\n")
    out = os.path.join(tmp, "sweep")
    subprocess.run([aggnet, "sweep", spec, "--out", out, "--workers", "2", "--no-plot"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "results.csv")) as f:
        rows = [strip(r) for r in csv.DictReader(f)]
    for r in rows:  # point ids, hashes, options and platform name this checkout's paths
        for key in ("options", "point_id", "spec_hash", "platform"):
            r.pop(key, None)
    return sorted(rows, key=lambda r: (r["schedule"], r["buffer"]))


TIME_UNITS_PS = {"s": 1e12, "ms": 1e9, "us": 1e6, "ns": 1e3, "ps": 1.0}


def as_number(x):
    """A JSON or CSV number as a float (None for anything else)."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def same_number(a, b, path):
    """Equal values, not equal float noise: the run JSON writes times rounded to whole ps
    and counts as integers, so a golden 34.855000000000004 equals a new 34.855 and 5.0
    equals 5. A time (key with a unit token, as in sim/report.h) may differ by a ps,
    anything else by one part in 1e12."""
    half_ps = 0.0
    for key in reversed(re.split(r"[.\[\]]", path)):  # send_offset_ms.lon: the offset's unit
        units = [TIME_UNITS_PS[t] for t in key.split("_") if t in TIME_UNITS_PS]
        if units:
            half_ps = 1.0 / units[0]  # rounding to whole ps moves a mean by <= 0.5 ps
            break
    return abs(a - b) <= max(half_ps, 1e-12 * max(abs(a), abs(b)))


def first_difference(a, b, path="$"):
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return None if same_number(x, y, path) else f"{path}: golden {a!r} != {b!r}"
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'golden' if k in a else 'this run'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: golden {a!r} != {b!r}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aggnet", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    cases = {name: (lambda tmp, n=name, a=a: run_case(args.aggnet, n, a, tmp))
             for name, a in RUNS.items()}
    cases["size_buffers"] = lambda tmp: size_buffers_case(args.aggnet, tmp)
    cases["sweep"] = lambda tmp: sweep_case(args.aggnet, tmp)
    failures = 0
    os.makedirs(args.data, exist_ok=True)
    for name, produce in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            got = produce(tmp)
        path = os.path.join(args.data, f"{name}.json")
        if args.record:
            with open(path, "w") as f:
                json.dump(got, f, indent=1, sort_keys=True)
                f.write("\n")
            continue
        with open(path) as f:
            diff = first_difference(json.load(f), got)
        if diff:
            failures += 1
            print(f"golden {name}: {diff}")
    print(f"golden: {len(cases)} cases, {failures} differ" if not args.record
          else f"golden: recorded {len(cases)} cases in {args.data}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
