#!/usr/bin/python3
"""Paired runs: the same `aggnet run` configurations through two binaries (before and after
a restructure), their --json outputs compared byte for byte once the wall-clock fields are
removed (as tests/golden/golden.py does). A configuration that fails must fail alike (exit
status and error message).

    paired_runs.py --old OLD/aggnet --new build/apps/aggnet [--count 1000] [--seed 1]
                   [--cache DIR] [--workers 2] [--ignore-colocated]

Run from the repository root. The configurations are drawn from every schedule family and
the options that change the cluster's behaviour (flow control, alignment, multicast,
aggregation, functional mode, loss, faults, jitter, bursts), with small gradients so that
each run takes a fraction of a second. --cache keeps the old binary's outputs (keyed by
the command line) so a second comparison runs only the new binary. Exit status 1 on any
difference, listing the differing command lines.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

VOLATILE = {"wall_time_s", "aggnet_version", "elapsed_s", "finished_at", "wall_s"}
# --ignore-colocated: the co-located reference's numbers (a change meant to move only them),
# and the kernel's event count, which sums both systems' events.
COLOCATED_KEYS = {"colocated", "colocated_step_time_s_mean", "slowdown_vs_colocated", "events"}
IGNORED = set()
SCHEDULES = [
    "all-to-all", "triads", "ring", "ring:sendrecv", "ring:barrier", "reduce-scatter",
    "all-gather", "pairs", "rotating-2", "rotating-4", "sequential-2", "sequential-3",
    "random-3:7", "random-2:11", "hierarchical", "p2p:lon-nyc", "p2p:lon-nycx3",
    "p2p:lon-nyc,ams-chi", "parameter-server:lon", "parameter-server:fra",
    "unicast-all-to-all",
]
GROUP = {"all-to-all", "triads", "pairs", "rotating-2", "rotating-4", "sequential-2",
         "sequential-3", "random-3:7", "random-2:11", "hierarchical"}
SIZES = [("1MiB", "256KiB"), ("2MiB", "512KiB"), ("4MiB", "1MiB"), ("3MiB", "256KiB"),
         ("16MiB", "1MiB"), ("1MiB", "1MiB"), ("5MiB", "768KiB")]
FAULTS = ["loss:lon-ams=0.05", "down:lon-ams@50ms-200ms", "stall:nyc@10ms-50ms", "slow:fra=2"]


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE | IGNORED}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def configuration(rng):
    """One command line (after `aggnet run`), drawn at random from the families, valid
    combinations only (aggnet rejects the others before simulating)."""
    schedule = rng.choice(SCHEDULES)
    group = schedule in GROUP
    gradient, chunk = rng.choice(SIZES)
    args = ["--schedule", schedule, "--gradient", gradient, "--chunk", chunk,
            "--steps", str(rng.choice([1, 2, 3]))]
    seeded = False
    if group:
        flow = rng.choice(["pacing", "pacing", "credit", "drop"])
        start = rng.choice(["auto", "auto", "aligned", "immediate"])
        aligned = start == "aligned" or (start == "auto" and flow != "credit")
        args += ["--flow-control", flow, "--round-start", start]
        args += ["--alignment", rng.choice(["auto", "arrival", "none"] if aligned else
                                           ["auto", "none"])]
        if rng.random() < 0.3:
            args += ["--multicast", "off"]
        if rng.random() < 0.25:
            args += ["--aggregation", "off"]
        if rng.random() < 0.3:
            args += ["--buffer", rng.choice(["2MiB", "4MiB", "8MiB"])]
        if rng.random() < 0.25:
            args += ["--loss", rng.choice(["0.01", "0.05"])]
            seeded = True
        elif rng.random() < 0.12:
            args += ["--fault", rng.choice(FAULTS)]
    if (group or schedule.startswith("ring")) and rng.random() < 0.2:
        args += ["--functional"]
    if rng.random() < 0.15:
        args += ["--jitter", "on"]
        seeded = True
    if seeded:
        args += ["--seed", str(rng.randint(1, 50))]
    if rng.random() < 0.1:
        args += ["--burst", rng.choice(["2", "4"])]
    if rng.random() < 0.1:
        args += ["--set", "defaults.link.bandwidth=10Gbps"]
    if rng.random() < 0.1:
        args += ["--no-colocated"]
    return args


def run(aggnet, args):
    """(exit status, stripped JSON text or the error output)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        proc = subprocess.run([aggnet, "run", *args, "-q", "--json", out],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            return proc.returncode, proc.stderr.strip()
        with open(out, encoding="utf-8") as f:
            return proc.returncode, json.dumps(strip(json.load(f)), sort_keys=True)


def cached_run(aggnet, args, cache):
    if cache is None:
        return run(aggnet, args)
    key = hashlib.sha256(" ".join(args).encode()).hexdigest()[:24]
    path = os.path.join(cache, key + ".json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return tuple(json.load(f))
    result = run(aggnet, args)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", help="directory keeping the old binary's outputs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--old-only", action="store_true", help="fill the cache, compare nothing")
    parser.add_argument("--ignore-colocated", action="store_true",
                        help="leave the co-located reference's numbers out of the comparison")
    a = parser.parse_args()
    if a.ignore_colocated:
        IGNORED.update(COLOCATED_KEYS)
        a.cache = a.cache and os.path.join(a.cache, "ignore-colocated")
    if a.cache:
        os.makedirs(a.cache, exist_ok=True)
    rng = random.Random(a.seed)
    configs, seen = [], set()
    while len(configs) < a.count:
        args = configuration(rng)
        if " ".join(args) not in seen:
            seen.add(" ".join(args))
            configs.append(args)

    def compare(args):
        old = cached_run(a.old, args, a.cache)
        if a.old_only:
            return args, True, old[0] == 0
        new = run(a.new, args)
        return args, old == new, old[0] == 0

    same = ok = 0
    differing = []
    with concurrent.futures.ThreadPoolExecutor(a.workers) as pool:
        for done, (args, identical, succeeded) in enumerate(pool.map(compare, configs), 1):
            same += identical
            ok += succeeded
            if not identical:
                differing.append(" ".join(args))
                print("  differs: aggnet run " + differing[-1], flush=True)
            if done % 100 == 0:
                print(f"  {done} done: {same} identical, {len(differing)} differ", flush=True)
    if a.old_only:
        print(f"{len(configs)} configurations cached ({ok} ran)")
        return 0
    print(f"{len(configs)} configurations ({ok} ran, {len(configs) - ok} rejected alike or "
          f"failed): {same} identical, {len(differing)} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
