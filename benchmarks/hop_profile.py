#!/usr/bin/python3
"""Where a chunk-hop's CPU time goes, function by function, at 9 and at 243 sites: the two
sides of a `scale` pair of benchmarks/run.sh, profiled (docs/performance.md).

    python3 benchmarks/hop_profile.py [--build DIR] [--platforms DIR] [--pair ring|all-to-all]
                                      [--top N] [--repeats K]

Each side runs `aggnet_bench run` under `perf record -e cpu-clock` with its events enabled
for the simulation alone (perf's control fifos: the set-up, e.g. the ring's order heuristic,
is not in the profile), and each function's share of the samples times the run's simulation
CPU seconds, over its chunk-hops, is its nanoseconds per hop. The table lists the functions
by how much more a hop costs in them at 243 sites. CPU time moves with the host's load (the
least of K runs per side is kept); benchmarks/counts.py gives the deterministic counts.
Needs perf (Debian: linux-perf); about a minute.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from bench_setup import bench_path, enter_repository, synthetic_platforms

PAIRS = {  # as benchmarks/run.sh's `scale` rows: (small, large) arguments of `aggnet_bench run`
    "ring": (("synthetic_9.yaml", "ring", "1GiB", "0", "512"),
             ("synthetic_243.yaml", "ring", "1GiB", "0", "8")),
    "all-to-all": (("synthetic_9.yaml", "all-to-all", "64GiB", "4GiB", "1"),
                   ("synthetic_243.yaml", "all-to-all", "256MiB", "4GiB", "1", "noalign")),
}
REPORT_LINE = re.compile(r"^\s*([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$")


def profiled_run(bench, args, tmp):
    """(run's JSON, {function: share of the simulation's samples}) of one profiled run."""
    ctl, ack, data = (os.path.join(tmp, name) for name in ("ctl", "ack", "perf.data"))
    for fifo in (ctl, ack):
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)
    env = dict(os.environ, AGGNET_BENCH_PERF_CTL=ctl, AGGNET_BENCH_PERF_ACK=ack)
    record = subprocess.run(
        ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-D", "-1",
         "--control", f"fifo:{ctl},{ack}", "-o", data, "--", bench, "run", *args],
        capture_output=True, text=True, env=env, check=False)
    if record.returncode != 0:
        sys.exit(f"hop_profile.py: perf record of {' '.join(args)} failed: {record.stderr[-400:]}")
    run = json.loads(next(line for line in record.stdout.splitlines() if line.startswith("{")))
    report = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "--no-children", "-F", "overhead,sym", "-q"],
        capture_output=True, text=True, check=True)
    shares = {}
    for line in report.stdout.splitlines():
        match = REPORT_LINE.match(line)
        if match:
            shares[match.group(2)] = shares.get(match.group(2), 0.0) + float(match.group(1)) / 100
    return run, shares


def ns_per_hop(bench, args, repeats, tmp):
    """{function: ns per hop} of the least simulation CPU time among `repeats` runs."""
    best = None
    for _ in range(repeats):
        run, shares = profiled_run(bench, args, tmp)
        if best is None or run["sim_cpu_s"] < best[0]["sim_cpu_s"]:
            best = (run, shares)
    run, shares = best
    scale = 1e9 * run["sim_cpu_s"] / run["hops"]
    return run, {name: share * scale for name, share in shares.items()}


def short(name, width=90):
    name = re.sub(r"\(.*", "", name)  # drop the parameter list
    return name if len(name) <= width else name[:width - 3] + "..."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--platforms", help="synthetic platforms (default: generated)")
    parser.add_argument("--pair", choices=sorted(PAIRS), default="ring")
    parser.add_argument("--top", type=int, default=15, help="functions listed")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side (the least kept)")
    args = parser.parse_args()
    enter_repository()
    bench = bench_path(args.build)
    with tempfile.TemporaryDirectory() as tmp:
        platforms = synthetic_platforms(args.platforms, tmp)
        sides = []
        for platform, *rest in PAIRS[args.pair]:
            sides.append(ns_per_hop(bench, [os.path.join(platforms, platform), *rest],
                                    args.repeats, tmp))
    (small_run, small), (large_run, large) = sides
    total_small = 1e9 * small_run["sim_cpu_s"] / small_run["hops"]
    total_large = 1e9 * large_run["sim_cpu_s"] / large_run["hops"]
    print(f"| ns per hop ({args.pair}) | {small_run['sites']} sites | {large_run['sites']} sites "
          "| difference |")
    print("|---|---|---|---|")
    print(f"| all (hops per CPU-s: {small_run['hops_per_cpu_s'] / 1e6:.2f} M, "
          f"{large_run['hops_per_cpu_s'] / 1e6:.2f} M; ratio "
          f"{small_run['hops_per_cpu_s'] / large_run['hops_per_cpu_s']:.2f}x) | "
          f"{total_small:.0f} | {total_large:.0f} | {total_large - total_small:+.0f} |")
    names = sorted(set(small) | set(large),
                   key=lambda n: large.get(n, 0.0) - small.get(n, 0.0), reverse=True)
    for name in names[:args.top]:
        a, b = small.get(name, 0.0), large.get(name, 0.0)
        print(f"| {short(name)} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")


if __name__ == "__main__":
    main()
