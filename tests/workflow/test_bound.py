#!/usr/bin/python3
"""No simulated run beats the physical bound, the bound is never weaker than the simple
cut/latency bound (docs/physical-bound.md), and `aggnet platform` reports the same bound.

    test_bound.py --aggnet BUILD/apps/aggnet

Every schedule family on three platforms, with no compute: each run that reaches the exact
average reports exact_average_time_s >= bound_s. On the two small platforms the simple
bound is computed here independently from the YAML: for every split of the sites, G over
the payload capacity of the WAN links crossing it plus the least delay among them, and the
longest shortest delay between two clusters (access links both ways included). The
all-to-all families, which sum only at the receiving edge, never beat the edge-summation
bound either.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile

import yaml

GRADIENT = 16 << 20
COMMON = ["--gradient", "16MiB", "--chunk", "1MiB", "--steps", "0", "--no-colocated", "-q",
          "--set", "defaults.cluster.compute_time=0s"]
SMALL_RUNS = [
    ["--schedule", "all-to-all", "--buffer", "2MiB"],
    ["--schedule", "all-to-all", "--buffer", "64MiB"],
    ["--schedule", "all-to-all", "--flow-control", "credit", "--buffer", "4MiB"],
    ["--schedule", "all-to-all", "--multicast", "off"],
    ["--schedule", "all-to-all", "--aggregation", "off"],
    ["--schedule", "all-to-all", "--alignment", "none"],
    ["--schedule", "ring"],
    ["--schedule", "ring:sendrecv"],
    ["--schedule", "ring:barrier"],
    ["--schedule", "unicast-all-to-all"],
    ["--schedule", "reduction-tree"],
    ["--schedule", "reduction-forest", "--buffer", "2MiB"],
    ["--schedule", "reduction-in-trees"],
]
NINE_CITY_RUNS = [
    ["--schedule", "all-to-all"],
    ["--schedule", "all-to-all", "--buffer", "2MiB"],
    ["--schedule", "triads"],
    ["--schedule", "sweeps/schedules/triad_pair_aligned_16mib.yaml"],
    ["--schedule", "sequential-3"],
    ["--schedule", "ring"],
    ["--schedule", "unicast-all-to-all"],
    ["--schedule", "parameter-server:lon"],
    ["--schedule", "reduction-tree"],
    ["--schedule", "reduction-forest"],
    ["--schedule", "reduction-forest", "--buffer", "2MiB"],
    ["--schedule", "reduction-in-trees"],
    ["--schedule", "reduction-in-trees", "--round-start", "aligned"],
]
RATES = [[], ["--set", "defaults.link.bandwidth=10Gbps"]]


def parse_time_s(text):
    for unit, scale in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise ValueError(text)


def simple_bound_s(path, gradient_bytes):
    """The simple cut and latency bound of a platform whose links all use the defaults'
    rate (MTU 2048 B, header 80 B) and whose clusters have the default 2 us access delay."""
    with open(path) as f:
        p = yaml.safe_load(f)
    sites = [s["code"] for s in p["sites"]]
    rate = float(p["defaults"]["link"]["bandwidth"].rstrip("Gbps")) * 1e9 / 8 * 1968 / 2048
    links = [(l["a"], l["b"], parse_time_s(l["delay"])) for l in p["links"]]
    dist = {(a, b): (0.0 if a == b else float("inf")) for a in sites for b in sites}
    for a, b, d in links:
        dist[a, b] = dist[b, a] = min(dist[a, b], d)
    for k, i, j in itertools.product(sites, sites, sites):
        dist[i, j] = min(dist[i, j], dist[i, k] + dist[k, j])
    best = max(dist.values()) + 2 * 2e-6
    for size in range(1, len(sites)):
        for inside in itertools.combinations(sites, size):
            crossing = [d for a, b, d in links if (a in inside) != (b in inside)]
            best = max(best, gradient_bytes / (rate * len(crossing)) + min(crossing))
    return best


def platform_bound(aggnet, platform, args):
    """The bound block `aggnet platform` prints for the same platform, overrides and gradient."""
    sets = [x for i, x in enumerate(args) if i > 0 and args[i - 1] == "--set"]
    cmd = [aggnet, "platform", "--platform", platform, "--gradient", "16MiB", "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["bound"]


def run(aggnet, platform, args, tmp):
    out = os.path.join(tmp, "run.json")
    cmd = [aggnet, "run", "--platform", platform, *COMMON, *args, "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["summary"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    aggnet = ap.parse_args().aggnet
    cases = [(p, r + rate) for p in ("tests/workflow/data/line3.yaml", "tests/workflow/data/star4.yaml")
             for r in SMALL_RUNS for rate in ([],)]
    cases += [("platforms/nine_city.yaml", r + rate) for r in NINE_CITY_RUNS for rate in RATES]
    failures, efficiencies = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for platform, args in cases:
            sm = run(aggnet, platform, args, tmp)
            label = f"{os.path.basename(platform)} {' '.join(args)}"
            if "bound_s" not in sm:
                failures.append(f"{label}: no bound_s")
                continue
            bound = platform_bound(aggnet, platform, args)
            if sm["bound_s"] != bound["bound_s"]:
                failures.append(f"{label}: aggnet platform gives another bound")
            if "tests/workflow" in platform:
                simple = simple_bound_s(platform, GRADIENT)
                if sm["bound_s"] < simple * (1 - 1e-9):
                    failures.append(f"{label}: bound {sm['bound_s']} below the simple {simple}")
            if "exact_average_time_s" not in sm:
                failures.append(f"{label}: no exact_average_time_s")
                continue
            efficiencies.append(sm["efficiency"])
            # Summed only at the receiving edge: no multicast tree beats the tighter bound.
            if (args[1] in ("all-to-all", "unicast-all-to-all")
                    and sm["exact_average_time_s"] < bound["edge_summation_bound_s"]):
                failures.append(f"{label}: {sm['exact_average_time_s']} s beats the "
                                f"edge-summation bound {bound['edge_summation_bound_s']} s")
            if sm["exact_average_time_s"] < sm["bound_s"]:
                failures.append(f"{label}: {sm['exact_average_time_s']} s beats the bound "
                                f"{sm['bound_s']} s")
    print(f"{len(cases)} runs, efficiency {min(efficiencies):.3f} to {max(efficiencies):.3f}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
