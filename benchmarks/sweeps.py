#!/usr/bin/python3
"""The shipped sweeps as benchmarks: what a design-space sweep costs, point by point
(docs/performance.md, "Sweeps").

    python3 benchmarks/sweeps.py [--build DIR] [--workers N] [--repeats K] [SPEC ...]

Each spec (default: every sweeps/*.yaml) runs as `aggnet sweep SPEC --out TMP --workers N
--no-plot --no-progress`. Its CPU time is that of the sweep and of every point process it
ran (getrusage of the children: user + system). Its chunk-hops are the data chunks the WAN
links of the points' networks carried, summed from each point's runs/ID.json (a
co-located reference is not listed there, so a sweep that simulates one, as ablation does,
is credited with its WAN hops alone). Before each sweep the bare SystemC kernel's rate is
measured (`aggnet_bench kernel`, the least of K), and the sweep's hop rate is given as a
share of it, like the engine rows of benchmarks/run.sh. The start-up share is the points'
count times the CPU time of the least of K minimal runs (`aggnet run`, the nine-city
platform, one 1 MiB step, no co-located reference: start-up, elaboration and output) over
the sweep's CPU time: what a point costs before it simulates anything.
"""
import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from bench_setup import bench_path, enter_repository

KERNEL_EVENTS = "5000000"


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def least_cpu_s(cmd, repeats):
    """The least CPU time of `repeats` runs of `cmd` (its output discarded)."""
    best = float("inf")
    for _ in range(repeats):
        before = children_cpu_s()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, children_cpu_s() - before)
    return best


def kernel_rate(bench, repeats):
    rates = []
    for _ in range(repeats):
        out = subprocess.run([bench, "kernel", KERNEL_EVENTS], check=True, capture_output=True,
                             text=True).stdout
        rates.append(json.loads(next(l for l in out.splitlines() if l.startswith("{")))
                     ["events_per_cpu_s"])
    return max(rates)  # the least CPU time


def wan_hops(out_dir):
    """(points with a run record, WAN data chunk-hops summed over them)."""
    points, hops = 0, 0
    for path in glob.glob(os.path.join(out_dir, "runs", "*.json")):
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
        points += 1
        hops += sum(link["chunks"] for link in run.get("links", []) if link["kind"] == "wan")
    return points, hops


def run_sweep(aggnet, spec, workers, tmp):
    """{points, failed, cpu_s, wall_s, hops} of one sweep into a fresh directory."""
    out_dir = tempfile.mkdtemp(dir=tmp)
    before, start = children_cpu_s(), time.monotonic()
    proc = subprocess.run([aggnet, "sweep", spec, "--out", out_dir, "--workers", str(workers),
                           "--no-plot", "--no-progress"], capture_output=True, text=True,
                          check=False)
    wall, cpu = time.monotonic() - start, children_cpu_s() - before
    if proc.returncode not in (0, 1):  # 1: some point failed, the sweep still ran
        sys.exit(f"sweeps.py: aggnet sweep {spec} exited {proc.returncode}: {proc.stderr[-400:]}")
    points, hops = wan_hops(out_dir)
    listed = int(subprocess.run([aggnet, "sweep", spec, "--dry-run"], capture_output=True,
                                text=True, check=True).stdout.split(": ")[1].split()[0])
    return {"points": listed, "recorded": points, "cpu_s": cpu, "wall_s": wall, "hops": hops}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", help="sweep specs (default: sweeps/*.yaml)")
    parser.add_argument("--build", default="build")
    parser.add_argument("--workers", type=int, default=1,
                        help="concurrent points (default 1: CPU time is the figure)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="runs of the kernel and of the minimal run (the least kept)")
    args = parser.parse_args()
    enter_repository()
    aggnet = os.path.join(args.build, "apps", "aggnet")
    bench = bench_path(args.build)
    specs = args.specs or sorted(glob.glob("sweeps/*.yaml"))
    start_up = least_cpu_s([aggnet, "run", "--platform", "platforms/nine_city.yaml", "--gradient",
                            "1MiB", "--steps", "1", "--no-colocated", "--quiet"], args.repeats)
    print(f"minimal point (start-up, elaboration, output): {start_up * 1e3:.1f} ms CPU; "
          f"{args.workers} worker(s)\n")
    print("| sweep | points | CPU s | CPU ms per point | wall s | WAN chunk-hops | hops/CPU-s "
          "| kernel events/CPU-s | % of kernel | start-up share |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            kernel = kernel_rate(bench, args.repeats)
            r = run_sweep(aggnet, spec, args.workers, tmp)
            rate = r["hops"] / r["cpu_s"]
            missing = r["points"] - r["recorded"]
            note = f" ({missing} without a record)" if missing else ""
            print(f"| {os.path.basename(spec)} | {r['points']:,}{note} | {r['cpu_s']:.2f} "
                  f"| {1e3 * r['cpu_s'] / r['points']:.1f} | {r['wall_s']:.1f} | {r['hops']:,} "
                  f"| {rate / 1e6:.2f} M | {kernel / 1e6:.1f} M | {100 * rate / kernel:.1f} % "
                  f"| {100 * r['points'] * start_up / r['cpu_s']:.0f} % |", flush=True)


if __name__ == "__main__":
    main()
