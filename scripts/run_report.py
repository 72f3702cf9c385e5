#!/usr/bin/env python3
"""The per-run report of `aggnet run --report FILE.md` (docs/run-report.md).

aggnet calls it with the run's JSON (--json layout, docs/run-json.md) and its module
statistics (--stats FILE.json layout, docs/waveforms.md) and takes over what it writes:
DIR/NAME.md and, next to it, NAME.occupancy.png, NAME.links.png and NAME.alignment.png.
Every number in the Markdown is the JSON's, written with Python's repr (the shortest
decimal that reads back as the same double, as the JSON has it).

usage: run_report.py --run RUN.json --stats STATS.json --out-dir DIR --name NAME
Exit status 3 when matplotlib is missing, 2 for unreadable input.
"""
import argparse
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
except ImportError:
    print("run_report.py: matplotlib is missing (Debian: python3-matplotlib)", file=sys.stderr)
    sys.exit(3)

FIGURES = ("occupancy", "links", "alignment")
MIB = 1 << 20
NOT_REACHED = "not reached"

# (summary key, what it is) in the order the report lists them.
BOUND_ROWS = [
    ("bound_s", "physical lower bound on the time to the exact average (docs/physical-bound.md)"),
    ("exact_average_time_s", "measured time to the exact average, compute left out"),
    ("efficiency", "bound_s / exact_average_time_s (1 = at the bound)"),
    ("comm_time_to_eps_s", "decision metric: time to eps-consensus without compute"),
    ("time_to_eps_s", "the same with compute"),
    ("rounds_to_eps", "rounds to eps-consensus (mixing matrices)"),
    ("round_time_s_mean", "mean of the steps' slowest round"),
    ("step_time_s_mean", "mean step time over sites and steps"),
    ("gpu_idle_fraction", "exposed communication / step time"),
    ("allreduce_bandwidth_gbps", "gradient bits / round_time_s_mean"),
    ("buffer_high_water_bytes_max", "largest FPGA buffer high-water mark"),
    ("slot_stalls_total", "contributions that waited for a free slot"),
    ("link_utilization_max", "busiest link's busy time / run time"),
    ("slowdown_vs_colocated", "mean step time / the co-located reference's"),
]


def number(value):
    return NOT_REACHED if value is None else repr(value)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def series_of(stats, module, name):
    """{site: (times_s, values)} of one series of every instance of `module`."""
    out = {}
    for row in stats:
        if row["module"] != module or name not in row["series"]:
            continue
        step_s = row["series_interval_ns"] * 1e-9
        values = row["series"][name]
        out[row["instance"]] = ([i * step_s for i in range(len(values))], values)
    return out


def plot_occupancy(run, stats, path):
    fig, ax = plt.subplots(figsize=(10, 4.5))
    series = series_of(stats, "FpgaAggregator", "buffer_occupancy_bytes")
    cmap = plt.get_cmap("tab10")
    for i, (instance, (t, v)) in enumerate(series.items()):
        site = instance.split(".")[1]
        ax.plot(t, [x / MIB for x in v], label=site, color=cmap(i % 10), lw=1.2)
    buffers = {s["site"]: s["buffer_bytes"] for s in run["sites"]}
    if buffers and len(set(buffers.values())) == 1:
        cap = next(iter(buffers.values())) / MIB
        ax.axhline(cap, color="black", ls="--", lw=1)
        ax.annotate(f"buffer {cap:g} MiB", (0, cap), xytext=(4, -12),
                    textcoords="offset points", fontsize=8)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("FPGA buffer occupancy (MiB)")
    interval_ns = next((r["series_interval_ns"] for r in stats if "series_interval_ns" in r), 0)
    ax.set_title(f"FPGA buffer occupancy over time (sampled every {interval_ns * 1e-6:g} ms)")
    if series:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def wan_links(run):
    return [link for link in run["links"] if link["kind"] == "wan"]


def plot_utilization_matrix(ax, run):
    codes = [s["site"] for s in run["sites"]]
    index = {c: i for i, c in enumerate(codes)}
    grid = [[float("nan")] * len(codes) for _ in codes]
    for link in wan_links(run):
        grid[index[link["from"]]][index[link["to"]]] = link["utilization"] * 100
    image = ax.imshow(grid, cmap="viridis", vmin=0)
    ax.set_xticks(range(len(codes)), codes)
    ax.set_yticks(range(len(codes)), codes)
    ax.set_xlabel("to")
    ax.set_ylabel("from")
    ax.set_title("WAN link utilisation over the run (%)")
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value == value:  # not NaN: a link
                ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=7,
                        color="white" if value < 0.6 * max(1e-9, image.norm.vmax) else "black")
    plt.colorbar(image, ax=ax, fraction=0.046)


def plot_in_flight_map(ax, run, stats):
    """Bytes in flight of each WAN link over time, as a share of its bandwidth-delay product."""
    bdp = {(l["from"], l["to"]): l["bandwidth_gbps"] * 1e9 / 8 * l["delay_ms"] * 1e-3
           for l in wan_links(run)}
    rows, labels, span_s = [], [], 0
    for instance, (t, v) in series_of(stats, "WanLink", "bytes_in_flight").items():
        parts = instance.split(".")
        if not parts[2].startswith("link_to_"):
            continue
        key = (parts[1], parts[2][len("link_to_"):])
        if key not in bdp or bdp[key] <= 0:
            continue
        rows.append([x / bdp[key] for x in v])
        labels.append(f"{key[0]}->{key[1]}")
        span_s = max(span_s, t[-1] if t else 0)
    if not rows:
        ax.text(0.5, 0.5, "no WAN link series", ha="center", transform=ax.transAxes)
        return
    width = max(len(r) for r in rows)
    rows = [r + [0.0] * (width - len(r)) for r in rows]
    peak = max(max(r) for r in rows)
    image = ax.imshow([[max(x, 1e-3) for x in r] for r in rows], aspect="auto",
                      cmap="magma", interpolation="nearest", extent=(0, span_s, len(rows), 0),
                      norm=LogNorm(vmin=1e-3, vmax=max(peak, 1e-2)))
    ax.set_yticks([i + 0.5 for i in range(len(labels))], labels, fontsize=6)
    ax.set_xlabel("simulated time (s)")
    ax.set_title("WAN links over time: bytes in flight / (rate x one-way delay)")
    plt.colorbar(image, ax=ax, fraction=0.046)


def plot_links(run, stats, path):
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 6.5),
                                      gridspec_kw={"width_ratios": [1, 1.4]})
    plot_utilization_matrix(left, run)
    plot_in_flight_map(right, run, stats)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_alignment(run, path):
    groups = run.get("alignment", [])
    fig, ax = plt.subplots(figsize=(10, 4.5))
    labels, waits, skews, residual = [], [], [], []
    for g in groups:
        for m in g["members"]:
            labels.append(f"r{g['round']} {m['site']}")
            waits.append(m["waiting_ms"])
            skews.append(m["unaligned_skew_ms"])
            residual.append(m["residual_skew_ms"])
    if not labels:
        ax.text(0.5, 0.5, "no group-average alignment in this run", ha="center",
                transform=ax.transAxes)
        ax.set_axis_off()
    else:
        x = range(len(labels))
        w = 0.28
        ax.bar([i - w for i in x], waits, w, label="send offset wait (waiting_ms)",
               color="#1f77b4")
        ax.bar(list(x), skews, w, label="arrival skew without offsets", color="#ff7f0e")
        ax.bar([i + w for i in x], residual, w, label="arrival skew with offsets",
               color="#2ca02c")
        ax.set_xticks(list(x), labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("ms")
        ax.set_title("Arrival alignment per round and member")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def inputs_section(run):
    r = run["options"]["resolved"]
    buffers = sorted(set(r["buffer_bytes"].values()))
    rows = [("platform", run["platform_file"]), ("schedule", run["schedule"]),
            ("gradient_bytes", r["gradient_bytes"]), ("chunk_bytes", r["chunk_bytes"]),
            ("buffer_bytes", ", ".join(str(b) for b in buffers)), ("steps", r["steps"]),
            ("eps", repr(r["eps"])), ("flow_control", r["flow_control"]),
            ("round_start", r["round_start"]), ("alignment", r["alignment"]),
            ("given options", json.dumps(run["options"]["given"], sort_keys=True))]
    return table(["input", "value"], rows)


def largest_group(run):
    return max((len(g["members"]) for s in run["steps"] for g in s["groups"]), default=0)


def nccl_rows(run):
    """NCCL's convention (nccl-tests, doc/PERFORMANCE.md): algorithm bandwidth = bytes /
    time, bus bandwidth = algbw x 2(n-1)/n for an all-reduce of n ranks; here the time is
    the mean round time and n the largest group's members."""
    algbw_gbps = run["summary"]["allreduce_bandwidth_gbps"]
    n = largest_group(run)
    if n < 2:
        return []
    busbw_gbps = algbw_gbps * 2 * (n - 1) / n
    return [("algbw (NCCL)", repr(algbw_gbps / 8), "GB/s: gradient bytes / round_time_s_mean"),
            ("busbw (NCCL)", repr(busbw_gbps / 8),
             f"GB/s: algbw x 2(n-1)/n, n = {n} (the largest group's members)")]


def bound_section(run):
    summary = run["summary"]
    rows = [(f"`{k}`", number(summary.get(k)), what) for k, what in BOUND_ROWS]
    text = table(["summary key", "value", "meaning"], rows + nccl_rows(run))
    return text + f"\n\nThe bound is set by: {run['bound']['set_by']}."


def occupancy_section(run, name):
    rows = [(s["site"], s["buffer_bytes"], s["high_water_bytes"], s["slot_stalls"])
            for s in run["sites"]]
    return (f"![FPGA buffer occupancy]({name}.occupancy.png)\n\n"
            + table(["site", "buffer_bytes", "high_water_bytes", "slot_stalls"], rows))


def links_section(run, name):
    busiest = sorted(wan_links(run), key=lambda l: -l["utilization"])[:10]
    rows = [(f"{l['from']}->{l['to']}", number(l["utilization"]), l["payload_bytes"],
             l["wire_bytes"], number(l["delay_ms"])) for l in busiest]
    return (f"![Link utilisation]({name}.links.png)\n\nThe ten busiest WAN links "
            "(`utilization`: busy time / run time, wire bytes with headers):\n\n"
            + table(["link", "utilization", "payload_bytes", "wire_bytes", "delay_ms"], rows))


def rounds_section(run):
    rows = []
    for step in run["steps"]:
        groups = "; ".join(
            f"{' '.join(g['members'])} ({number(g['round_time_s'])} s, {g.get('alignment', '-')})"
            for g in step["groups"])
        rows.append((step["step"], step["round"], groups or "-", number(step["round_time_s"]),
                     number(step["end_s"])))
    return table(["step", "round", "groups (round_time_s, alignment)", "round_time_s", "end_s"],
                 rows)


def alignment_section(run, name):
    rows = []
    for g in run.get("alignment", []):
        for m in g["members"]:
            offsets = ", ".join(f"{k} {number(v)}" for k, v in sorted(m["send_offset_ms"].items()))
            rows.append((g["round"], g["method"], m["site"], number(m["waiting_ms"]),
                         offsets or "-", number(m["unaligned_skew_ms"]),
                         number(m["residual_skew_ms"])))
    text = f"![Alignment]({name}.alignment.png)\n\n"
    if not rows:
        return text + "No group-average rounds: nothing to align."
    return text + table(["round", "method", "site", "waiting_ms", "send_offset_ms (receiver ms)",
                         "unaligned_skew_ms", "residual_skew_ms"], rows)


def markdown(run, name):
    parts = [
        f"# aggnet run report: {run['schedule']} on {run['platform']}",
        f"aggnet {run['aggnet_version']}. Layout and definitions: docs/run-report.md, "
        "docs/run-json.md.",
        "## Inputs", inputs_section(run),
        "## Against the physical bound", bound_section(run),
        "## FPGA buffer occupancy", occupancy_section(run, name),
        "## Link utilisation", links_section(run, name),
        "## Schedule rounds", rounds_section(run),
        "## Alignment offsets", alignment_section(run, name),
    ]
    return "\n\n".join(parts) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", required=True)
    p.add_argument("--stats", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--name", required=True)
    a = p.parse_args()
    try:
        with open(a.run) as f:
            run = json.load(f)
        with open(a.stats) as f:
            stats = json.load(f)
    except (OSError, ValueError) as e:
        print(f"run_report.py: {e}", file=sys.stderr)
        return 2
    stem = os.path.join(a.out_dir, a.name)
    plot_occupancy(run, stats, stem + ".occupancy.png")
    plot_links(run, stats, stem + ".links.png")
    plot_alignment(run, stem + ".alignment.png")
    with open(stem + ".md", "w") as f:
        f.write(markdown(run, a.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
