#!/usr/bin/python3
"""Deterministic per-hop costs of the engine: instructions, L1 and L2 data misses and branch
mispredictions per chunk-hop, counted by valgrind's cachegrind (docs/performance.md).

    python3 benchmarks/counts.py [--build DIR] [--scale] [--platforms DIR]

CPU time on a shared machine moves by +-30 % between runs; these counts do not move, so
an A/B of two builds is one run of each. Each row runs `aggnet_bench run` at two gradient
sizes and divides the differences by the difference in chunk-hops, which cancels the
set-up (reading the platform, building the modules). The bare kernel row is the same for
`aggnet_bench kernel` (per timed event). Needs valgrind; about 2 minutes (--scale adds
the 243-site ring and all-to-all, about 6 minutes more).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile

from bench_setup import bench_path, enter_repository, synthetic_platforms

ROWS = [  # label, platform, schedule, (small, large) gradient, buffer[, options] (one step each)
    ("nine_city all-to-all", "platforms/nine_city.yaml", "all-to-all", ("1GiB", "2GiB"), "4GiB"),
    ("nine_city triads", "platforms/nine_city.yaml", "triads", ("2GiB", "4GiB"), "4GiB"),
    ("nine_city ring", "platforms/nine_city.yaml", "ring", ("1GiB", "2GiB"), "0"),
    ("synthetic 9 ring", "{platforms}/synthetic_9.yaml", "ring", ("1GiB", "2GiB"), "0"),
]
SCALE_ROWS = [
    ("synthetic 243 ring", "{platforms}/synthetic_243.yaml", "ring", ("512MiB", "1GiB"), "0"),
    # The ready messages are per step, so the difference cancels them with the set-up.
    ("synthetic 243 all-to-all (no alignment)", "{platforms}/synthetic_243.yaml", "all-to-all",
     ("32MiB", "64MiB"), "4GiB", ("noalign",)),
]
KERNEL_EVENTS = (200_000, 400_000)
SUMMARY = {"I": r"I\s+refs:\s+([\d,]+)", "D1": r"D1  misses:\s+([\d,]+)",
           "L2": r"LLd misses:\s+([\d,]+)", "mispredicts": r"Mispredicts:\s+([\d,]+)"}
# The last level cachegrind simulates is this machine's L2 (1 MiB, 16-way; its default
# would be the 32 MiB L3, which every run fits in): data that misses there waits for the
# shared L3, which is what slows the runs with hundreds of sites.
L2 = "--LL=1048576,16,64"


def cachegrind(cmd):
    """(stdout, {I, D1, mispredicts}) of cmd run under cachegrind."""
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                           L2, "--cachegrind-out-file=/dev/null", *cmd],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"counts.py: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-400:]}")
    counts = {}
    for key, pattern in SUMMARY.items():
        match = re.search(pattern, proc.stderr)
        if not match:
            sys.exit(f"counts.py: no '{key}' in cachegrind's summary of {' '.join(cmd)}")
        counts[key] = int(match.group(1).replace(",", ""))
    return proc.stdout, counts


def json_line(stdout):
    return json.loads(next(line for line in stdout.splitlines() if line.startswith("{")))


def per_unit(small, large, units_small, units_large):
    span = units_large - units_small
    return {key: (large[key] - small[key]) / span for key in small}


def kernel_row(bench):
    runs = [cachegrind([bench, "kernel", str(n)])[1] for n in KERNEL_EVENTS]
    return per_unit(runs[0], runs[1], *KERNEL_EVENTS)


def engine_row(bench, platform, schedule, sizes, buffer, options=()):
    hops, counts = [], []
    for gradient in sizes:
        stdout, c = cachegrind([bench, "run", platform, schedule, gradient, buffer, "1", *options])
        hops.append(json_line(stdout)["hops"])
        counts.append(c)
    return per_unit(counts[0], counts[1], hops[0], hops[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--scale", action="store_true",
                        help="also the 243-site ring and all-to-all")
    parser.add_argument("--platforms", help="synthetic platforms (default: generated)")
    parser.add_argument("--only", help="only the workloads whose label contains this")
    args = parser.parse_args()
    enter_repository()
    bench = bench_path(args.build)
    with tempfile.TemporaryDirectory() as tmp:
        platforms = synthetic_platforms(args.platforms, tmp)
        kernel = kernel_row(bench)
        print("| workload | instructions / hop | kernel instructions / event ÷ that | "
              "L1d misses / hop | L2 data misses / hop | mispredicts / hop |")
        print("|---|---|---|---|---|---|")
        print(f"| bare kernel (per event) | {kernel['I']:.0f} | 100 % | {kernel['D1']:.2f} | "
              f"{kernel['L2']:.2f} | {kernel['mispredicts']:.2f} |")
        for label, platform, schedule, sizes, buffer, *options in (
                ROWS + (SCALE_ROWS if args.scale else [])):
            if args.only and args.only not in label:
                continue
            row = engine_row(bench, platform.format(platforms=platforms), schedule, sizes, buffer,
                             *options)
            print(f"| {label} | {row['I']:.0f} | {100 * kernel['I'] / row['I']:.1f} % | "
                  f"{row['D1']:.1f} | {row['L2']:.2f} | {row['mispredicts']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
