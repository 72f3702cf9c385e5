#!/usr/bin/python3
"""Formats benchmarks/run.sh's JSON lines as the markdown table of docs/performance.md."""
import json
import sys


def burst_table(rows):
    """Rows labelled "burst WORKLOAD K=k": speed-up and step-0 span against K=1."""
    runs = [r for r in rows if "run" in r and r["label"].startswith("burst ")]
    if not runs:
        return
    exact = {r["label"].rsplit(" K=", 1)[0]: r["run"] for r in runs if r["run"]["burst"] == 1}
    print()
    print("| burst workload | K | chunk-hops | sim CPU s | chunk-hops/CPU-s | speed-up | "
          "step-0 span s | error vs K=1 |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        x = r["run"]
        base = exact.get(r["label"].rsplit(" K=", 1)[0])
        speed = f"{base['sim_cpu_s'] / x['sim_cpu_s']:.1f}x" if base else "-"
        error = (f"{(x['step0_span_s'] - base['step0_span_s']) * 1e3:+.3f} ms "
                 f"({100 * (x['step0_span_s'] / base['step0_span_s'] - 1):+.3f} %)"
                 if base else "-")
        print(f"| {r['label'].rsplit(' K=', 1)[0][6:]} | {x['burst']} | {x['hops']:,} | "
              f"{x['sim_cpu_s']:.3f} | {x['hops_per_cpu_s'] / 1e6:.2f} M | {speed} | "
              f"{x['step0_span_s']:.6f} | {error} |")


def main(path):
    rows = [json.loads(line) for line in open(path)]
    print("| benchmark | kernel events/CPU-s | hops | hops/CPU-s | % of kernel | "
          "setup CPU s (plan + build) | sim CPU s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "run" not in r:
            continue
        k, x = r["kernel"]["events_per_cpu_s"], r["run"]
        print(f"| {r['label']} | {k / 1e6:.1f} M | {x['hops']:,} | "
              f"{x['hops_per_cpu_s'] / 1e6:.2f} M | {100 * x['hops_per_cpu_s'] / k:.1f} % | "
              f"{x['setup_cpu_s']:.3f} ({x['plan_cpu_s']:.3f} + {x['build_cpu_s']:.3f}) | "
              f"{x['sim_cpu_s']:.3f} | {x['peak_rss_mib']:.1f} |")
    print()
    print("| optimizer | CPU s | peak RSS MiB |")
    print("|---|---|---|")
    for r in rows:
        if "schedule_cpu_s" in r:
            failed = "" if r.get("ok", True) else " (failed)"
            print(f"| {r['label']}{failed} | {r['schedule_cpu_s']:.2f} | "
                  f"{r['peak_rss_kib'] / 1024:.1f} |")
    burst_table(rows)
    by = {r["label"]: r for r in rows if "run" in r}
    print()
    for r in rows:
        if "memory" in r:
            latency = ", ".join(f"{int(kib) // 1024} MiB {ns:.1f}" if int(kib) >= 1024
                                else f"{kib} KiB {ns:.1f}"
                                for kib, ns in r["memory"]["load_ns_by_kib"].items())
            print(f"load latency (ns) by working set: {latency}")
    for r in rows:
        if "small" in r and "large" in r:
            small, large = r["small"]["hops_per_cpu_s"], r["large"]["hops_per_cpu_s"]
            ratios = [small_rate / large_rate for small_rate, large_rate in r.get("turns", [])]
            spread = (f"; turn by turn {min(ratios):.2f}x to {max(ratios):.2f}x"
                      if len(ratios) > 1 else "")
            print(f"{r['label']}: {r['large']['sites']} sites {small / large:.2f}x lower "
                  f"than {r['small']['sites']} sites, run in turns "
                  f"({small / 1e6:.2f} M against {large / 1e6:.2f} M hops/CPU-s{spread})")
    for fam in ("all-to-all", "triads", "rotating-3", "ring"):
        rates, crossings = {}, {}
        for label, r in by.items():
            parts = label.split()
            if parts[0] == "hops" and parts[1] == fam:
                run, kernel = r["run"], r["kernel"]["events_per_cpu_s"]
                rates[int(parts[2])] = run["hops_per_cpu_s"] / kernel
                # All WAN crossings, control messages (ready, credit) included.
                all_hops = run["hops"] + run.get("control_hops", 0)
                crossings[int(parts[2])] = all_hops / run["sim_cpu_s"] / kernel
        if 9 in rates and len(rates) > 1:
            big = max(rates)
            print(f"{fam}: kernel-relative hop rate at {big} sites = "
                  f"{rates[9] / rates[big]:.2f}x lower than at 9 sites "
                  f"(counting control messages too: {crossings[9] / crossings[big]:.2f}x)")


if __name__ == "__main__":
    main(sys.argv[1])
