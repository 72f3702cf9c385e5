#!/usr/bin/python3
"""Scale benchmark (issue 36; not a test): synthetic platforms of 9 to 1,000 sites
(scripts/make_platforms.py --synthetic N --seed 1), one step, G = 256 MiB.

    scale.py --build BUILD [--sizes 9,27,81,243,1000] [--out benchmarks/scale_numbers.json]
             [--ring-rate-only]    # the ring-rate rows alone (the other rows kept as they are)
             [--a2a-rate-only]     # the all-to-all's rate against the kernel alone (likewise)
             [--families ring,rotating-3]    # those families' runs only (the others kept)
             [--bursts-only]       # the all-to-all in bursts alone (likewise)
    scale.py --build BUILD --schedule-only [--schedule-sizes 243,1000]   # those rows only
    scale.py --table [--numbers benchmarks/scale_numbers.json]    # the Markdown table
    scale.py --write-doc [--numbers ...]    # the table into docs/performance.md's markers

Per size and family (ring, all-to-all, rotating-3, reduction-forest), with the co-located reference: the
process's CPU seconds (load, plan, build and simulation; `aggnet_bench run ... colocated`)
and its peak RSS. Per size, the ring without the reference: its WAN chunk-hops per
simulation CPU-second and that rate as a share of the bare SystemC kernel's event rate
(`aggnet_bench kernel`, taken in turns with it, the least CPU of `--repeats` runs each, as
benchmarks/run.sh does). `aggnet schedule` (user + system CPU, /usr/bin/time) at the sizes
of `--schedule-sizes`. The 9-site all-to-all without the reference, its WAN chunk-hops per
simulation CPU-second against the kernel's rate the same way (the issue's "all-to-all at or
above 30 %"), at a gradient of about 0.4 CPU-s of simulation. At the sizes of BURST_SIZES,
the all-to-all with the reference in bursts of K chunks (`--burst K`, burst=K): its CPU
seconds and its step's span beside the exact run's (burst mode's timing error, measured). The numbers file keeps every measured value;
tests/workflow/test_docs_scale.py checks that docs/performance.md shows its table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from bench_setup import bench_path, enter_repository

NUMBERS = "benchmarks/scale_numbers.json"
DOC = "docs/performance.md"
BEGIN, END = "<!-- scale_table: benchmarks/scale.py -->", "<!-- /scale_table -->"
FAMILIES = ("ring", "all-to-all", "rotating-3", "reduction-forest")  # the forest: the tree plan
GRADIENT = "256MiB"
KERNEL_EVENTS = "5000000"
BUFFER = "0B"  # the platform's own FPGA buffer
# The ring's hop rate: steps so that each size carries about a million WAN chunk-hops (a
# one-step 9-site ring at 256 MiB is 4,176 hops in 3 ms of CPU: noise, not a rate).
RING_RATE_STEPS = {9: 256, 27: 64, 81: 16, 243: 4, 1000: 1}
# The issue's own measure: the gradient scaled with the sites, n x 256 KiB, so that every
# size's ring segments are one 256 KiB chunk, as at 1,000 sites with 256 MiB: the same work
# per hop at every size. Steps for about a million hops (2 (n - 1) n per step).
SEGMENT_KIB = 256
# The all-to-all in bursts (K chunks a transaction): the sizes and the K measured.
BURST_SIZES = (243, 1000)
BURSTS = (8, 64)


# The all-to-all's hop rate against the kernel's: sizes measured and their gradient (a
# one-step 9-site all-to-all at 256 MiB is 0.002 CPU-s; at 64 GiB about 0.4).
A2A_RATE_GRADIENT = {9: "64GiB"}


def scaled_ring_args(n):
    steps = max(1, round(1e6 / (2 * (n - 1) * n)))
    return f"{n * SEGMENT_KIB}KiB", steps


def bench_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def least_in_turns(bench, run_args, repeats):
    """The kernel and one engine run in turns, the least CPU of each."""
    kernels, runs = [], []
    for _ in range(repeats):
        kernels.append(bench_json([bench, "kernel", KERNEL_EVENTS]))
        runs.append(bench_json([bench, "run", *run_args]))
    return (min(kernels, key=lambda k: k["sim_cpu_s"]), min(runs, key=lambda r: r["sim_cpu_s"]))


def schedule_cpu(aggnet, platform):
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", t.name, aggnet, "schedule",
                        "--platform", platform], check=True, stdout=subprocess.DEVNULL)
        user, system, rss_kib = open(t.name).read().split()[-3:]
    return {"cpu_s": float(user) + float(system), "peak_rss_mib": int(rss_kib) / 1024}


def synthetic(n, tmp):
    subprocess.run([sys.executable, "scripts/make_platforms.py", "--synthetic", str(n),
                    "--seed", "1", "--out", tmp], check=True, capture_output=True)
    return os.path.join(tmp, f"synthetic_{n}.yaml")


def measure_schedule(args):
    """Re-measures `aggnet schedule` at --schedule-sizes, keeping every other number."""
    aggnet = os.path.join(args.build, "apps", "aggnet")
    with open(args.out) as f:
        numbers = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.schedule_sizes:
            numbers["schedule"][str(n)] = schedule_cpu(aggnet, synthetic(n, tmp))
            print(n, "schedule", numbers["schedule"][str(n)], flush=True)
            with open(args.out, "w") as f:
                json.dump(numbers, f, indent=1, sort_keys=True)
                f.write("\n")


def measure_a2a_rate(bench, platform, n, numbers, repeats):
    gradient = A2A_RATE_GRADIENT[n]
    kernel, run = least_in_turns(bench, [platform, "all-to-all", gradient, BUFFER, "1"], repeats)
    numbers.setdefault("a2a_rate", {})[str(n)] = {
        "gradient": gradient, "steps": 1, "hops": run["hops"], "sim_cpu_s": run["sim_cpu_s"],
        "hops_per_cpu_s": run["hops_per_cpu_s"],
        "kernel_events_per_cpu_s": kernel["events_per_cpu_s"]}
    print(n, "all-to-all rate", numbers["a2a_rate"][str(n)], flush=True)


def measure_bursts(bench, platform, n, numbers):
    for k in BURSTS:
        r = bench_json([bench, "run", platform, "all-to-all", GRADIENT, BUFFER, "1", "colocated",
                        f"burst={k}"])
        numbers.setdefault("bursts", {}).setdefault(str(n), {})[str(k)] = {
            "cpu_s": r["setup_cpu_s"] + r["sim_cpu_s"], "setup_cpu_s": r["setup_cpu_s"],
            "peak_rss_mib": r["peak_rss_mib"], "span_s": r["step0_span_s"]}
        print(n, "all-to-all, burst", k, numbers["bursts"][str(n)][str(k)], flush=True)


def measure(args):
    bench = bench_path(args.build)
    aggnet = os.path.join(args.build, "apps", "aggnet")
    numbers = {"gradient": GRADIENT, "steps": 1, "families": {}, "ring_rate": {},
               "schedule": {}}
    if os.path.exists(args.out):
        with open(args.out) as f:
            numbers = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            if (args.a2a_rate_only and n not in A2A_RATE_GRADIENT or
                    args.bursts_only and n not in BURST_SIZES):
                continue
            platform = synthetic(n, tmp)
            if n in A2A_RATE_GRADIENT and not (args.ring_rate_only or args.bursts_only):
                measure_a2a_rate(bench, platform, n, numbers, args.repeats)
            if args.a2a_rate_only:
                write_numbers(args.out, numbers)
                continue
            if n in BURST_SIZES and (args.bursts_only or not args.ring_rate_only and
                                     "all-to-all" in args.families):
                measure_bursts(bench, platform, n, numbers)
            if args.bursts_only:
                write_numbers(args.out, numbers)
                continue
            if not args.ring_rate_only and args.families == list(FAMILIES):
                numbers["families"].pop(str(n), None)
            for family in () if args.ring_rate_only else args.families:
                r = bench_json([bench, "run", platform, family, GRADIENT, BUFFER, "1", "colocated"])
                numbers["families"].setdefault(str(n), {})[family] = {
                    "cpu_s": r["setup_cpu_s"] + r["sim_cpu_s"],
                    "setup_cpu_s": r["setup_cpu_s"], "peak_rss_mib": r["peak_rss_mib"],
                    "hops": r["hops"], "span_s": r["step0_span_s"]}
                print(n, family, numbers["families"][str(n)][family], flush=True)
            steps = RING_RATE_STEPS.get(n, 1)
            kernel, ring = least_in_turns(bench, [platform, "ring", GRADIENT, BUFFER, str(steps)],
                                          args.repeats)
            numbers["ring_rate"][str(n)] = {
                "steps": steps, "hops": ring["hops"], "sim_cpu_s": ring["sim_cpu_s"],
                "hops_per_cpu_s": ring["hops_per_cpu_s"],
                "kernel_events_per_cpu_s": kernel["events_per_cpu_s"]}
            print(n, "ring rate", numbers["ring_rate"][str(n)], flush=True)
            gradient, steps = scaled_ring_args(n)
            kernel, ring = least_in_turns(bench, [platform, "ring", gradient, BUFFER, str(steps)],
                                          args.repeats)
            numbers.setdefault("ring_rate_scaled", {})[str(n)] = {
                "gradient": gradient, "steps": steps, "hops": ring["hops"],
                "sim_cpu_s": ring["sim_cpu_s"], "hops_per_cpu_s": ring["hops_per_cpu_s"],
                "kernel_events_per_cpu_s": kernel["events_per_cpu_s"]}
            print(n, "ring rate, G scaled", numbers["ring_rate_scaled"][str(n)], flush=True)
            if n in args.schedule_sizes and not args.ring_rate_only:
                numbers["schedule"][str(n)] = schedule_cpu(aggnet, platform)
                print(n, "schedule", numbers["schedule"][str(n)], flush=True)
            write_numbers(args.out, numbers)


def write_numbers(path, numbers):
    with open(path, "w") as f:
        json.dump(numbers, f, indent=1, sort_keys=True)
        f.write("\n")


def table(numbers):
    sizes = sorted(numbers["families"], key=int)
    out = [f"One step, G = {numbers['gradient']}, with the co-located reference (the forest "
           "without it, as `aggnet run` runs a forest): CPU seconds of the whole process "
           "(set-up in brackets) and peak RSS.", "",
           "| sites | " + " | ".join(f"{f} CPU s | {f} peak RSS MiB" for f in FAMILIES) + " |",
           "|---" * (1 + 2 * len(FAMILIES)) + "|"]
    for n in sizes:
        cells = []
        for f in FAMILIES:
            r = numbers["families"][n].get(f)  # a run cut short: not measured
            cells += ([f"{r['cpu_s']:.2f} ({r['setup_cpu_s']:.2f})", f"{r['peak_rss_mib']:.0f}"]
                      if r else ["not measured", "-"])
        out.append(f"| {int(n):,} | " + " | ".join(cells) + " |")
    out += ["", "The ring without the reference: WAN chunk-hops per CPU-second of the "
            "simulation, against the bare kernel's event rate measured in turns with it. "
            f"G = {numbers['gradient']} at every size:", ""]
    out += rate_rows(numbers["ring_rate"], "steps")
    if numbers.get("ring_rate_scaled"):
        out += ["", f"The issue's measure, G scaled with the sites (n x {SEGMENT_KIB} KiB: every "
                "segment one chunk, as at 1,000 sites with 256 MiB):", ""]
        out += rate_rows(numbers["ring_rate_scaled"], "G, steps")
    if numbers.get("a2a_rate"):
        out += ["", "The all-to-all without the reference, one step, against the kernel's rate "
                "measured in turns with it:", "",
                "| sites | G | chunk-hops | sim CPU s | chunk-hops/CPU-s | kernel events/CPU-s | "
                "% of kernel |", "|---|---|---|---|---|---|---|"]
        for n in sorted(numbers["a2a_rate"], key=int):
            r = numbers["a2a_rate"][n]
            out.append(f"| {int(n):,} | {r['gradient']} | {r['hops']:,} | {r['sim_cpu_s']:.3f} | "
                       f"{r['hops_per_cpu_s'] / 1e6:.2f} M | "
                       f"{r['kernel_events_per_cpu_s'] / 1e6:.1f} M | "
                       f"{100 * r['hops_per_cpu_s'] / r['kernel_events_per_cpu_s']:.1f} % |")
    if numbers.get("bursts"):
        out += ["", "The all-to-all with the reference in bursts of K chunks (`--burst K`; "
                "docs/simulation-semantics.md, \"Burst mode\"), beside the exact run above: "
                "the process's CPU seconds (set-up in brackets), peak RSS and the step's span.",
                "", "| sites | K | CPU s | peak RSS MiB | step span s | exact span s | "
                "span vs exact |", "|---|---|---|---|---|---|---|"]
        for n in sorted(numbers["bursts"], key=int):
            exact = numbers["families"].get(n, {}).get("all-to-all", {}).get("span_s")
            for k in sorted(numbers["bursts"][n], key=int):
                r = numbers["bursts"][n][k]
                vs = ([f"{exact:.6f}", f"{100 * (r['span_s'] - exact) / exact:+.2f} %"]
                      if exact else ["not measured", "-"])
                out.append(f"| {int(n):,} | {k} | {r['cpu_s']:.2f} ({r['setup_cpu_s']:.2f}) | "
                           f"{r['peak_rss_mib']:.0f} | {r['span_s']:.6f} | " + " | ".join(vs) +
                           " |")
    if numbers["schedule"]:
        out += ["", "| `aggnet schedule` | CPU s | peak RSS MiB |", "|---|---|---|"]
        for n in sorted(numbers["schedule"], key=int):
            s = numbers["schedule"][n]
            out.append(f"| {int(n):,} sites | {s['cpu_s']:.2f} | {s['peak_rss_mib']:.0f} |")
    return "\n".join(out) + "\n"


def rate_rows(rates, steps_head):
    rows = [f"| sites | {steps_head} | chunk-hops | sim CPU s | chunk-hops/CPU-s | "
            "kernel events/CPU-s | % of kernel | vs 9 sites |", "|---|---|---|---|---|---|---|---|"]
    base = rates.get("9", {}).get("hops_per_cpu_s")
    for n in sorted(rates, key=int):
        r = rates[n]
        vs = f"{base / r['hops_per_cpu_s']:.2f}x lower" if base else "-"
        steps = f"{r['gradient']}, {r['steps']}" if "gradient" in r else str(r["steps"])
        rows.append(f"| {int(n):,} | {steps} | {r['hops']:,} | {r['sim_cpu_s']:.3f} | "
                    f"{r['hops_per_cpu_s'] / 1e6:.2f} M | "
                    f"{r['kernel_events_per_cpu_s'] / 1e6:.1f} M | "
                    f"{100 * r['hops_per_cpu_s'] / r['kernel_events_per_cpu_s']:.1f} % | {vs} |")
    return rows


def with_table(doc, text):
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC}: no scale table markers ({BEGIN} ... {END})")
    head, rest = doc.split(BEGIN, 1)
    return head + BEGIN + "\n" + text + rest[rest.index(END):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--sizes", default="9,27,81,243,1000")
    ap.add_argument("--schedule-sizes", default="243,1000")
    ap.add_argument("--schedule-only", action="store_true",
                    help="measure `aggnet schedule` only, keep the other numbers")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ring-rate-only", action="store_true",
                    help="measure the ring-rate rows alone; the other rows stay as measured")
    ap.add_argument("--a2a-rate-only", action="store_true",
                    help="measure the all-to-all's rate against the kernel alone; the other rows "
                    "stay as measured")
    ap.add_argument("--bursts-only", action="store_true",
                    help="measure the all-to-all in bursts alone; the other rows stay as "
                    "measured")
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="measure these families' runs; the others stay as measured")
    ap.add_argument("--out", default=NUMBERS)
    ap.add_argument("--numbers", default=NUMBERS)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    enter_repository()
    if args.table or args.write_doc:
        with open(args.numbers) as f:
            text = table(json.load(f))
        if args.table:
            sys.stdout.write(text)
            return 0
        with open(DOC) as f:
            doc = f.read()
        with open(DOC, "w") as f:
            f.write(with_table(doc, text))
        return 0
    if not args.build:
        ap.error("--build is required to measure")
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.families = [f for f in args.families.split(",")]
    if not set(args.families) <= set(FAMILIES):
        ap.error(f"--families: expected some of {','.join(FAMILIES)}")
    args.schedule_sizes = [int(s) for s in args.schedule_sizes.split(",")]
    (measure_schedule if args.schedule_only else measure)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
