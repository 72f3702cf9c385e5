#!/usr/bin/python3
"""Plots of an `aggnet sweep` results database (PNG and SVG).

    /usr/bin/python3 scripts/plot_sweep.py OUT/results.db --out OUT/plots [--metric KEY]

Writes, when the sweep has the axes they need:
  metric_vs_buffer.{png,svg}  the metric vs buffer size (log x), one line per schedule
                                 (one panel per link rate when the sweep varies it);
  winner_heatmap.{png,svg}       the winning schedule per (buffer, link rate);
  pareto.{png,svg}               buffer bytes vs time to eps-consensus, every point plus
                                 the Pareto front, one panel (and front) per link rate
                                 (per combination of the axes other than schedule and
                                 buffer); the memory tiers' capacities shade the buffer
                                 axis and each front point names the tier its run needs
                                 and the memory's cost (the run JSON's `memory`,
                                 docs/memory-tiers.md);
  variants.{png,svg}             the metric and slowdown per variant, over one data centre
                                 (the fastest variant's co-located reference; sweeps without a
                                 buffer axis, e.g. the ablation);
and plot_numbers.txt with the numbers behind every plot. Exit status 3 (with a one-line
message) when matplotlib is missing, 2 on a database it cannot read.
"""
import argparse
import json
import math
import os
import re
import sqlite3
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"matplotlib is not available ({e}); install python3-matplotlib")
    sys.exit(3)

SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
              "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or (m.group(2) or "B") not in SIZE_UNITS:
        return None
    return float(m.group(1)) * SIZE_UNITS[m.group(2) or "B"]


def fmt_bytes(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:g} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{b:g} B"


def two_line_bytes(b):
    value, unit = fmt_bytes(b).split(" ")
    return f"{value}\n{unit}"


def fmt_rate(bps):
    for unit, scale in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} b/s"


# The numeric column of an axis, by its kind (sweeps/README.md): buffer -> buffer_bytes.
KIND_SUFFIX = {"bytes": "_bytes", "rate_bps": "_bps", "time_s": "_s", "frequency_hz": "_hz",
               "number": "_value"}


def numeric_column(axis):
    return axis["name"] + KIND_SUFFIX.get(axis["kind"], "_value")


def num(row, axis):
    """An axis' number in base units (databases before the unit names: <axis>_value)."""
    v = row.get(numeric_column(axis))
    return row.get(axis["name"] + "_value") if v is None else v


# One colour per schedule in every figure, so figures can be compared.
SCHEDULE_COLORS = {"all-to-all": "tab:blue", "ring": "tab:orange", "sequential-3": "tab:green",
                   "triad_pair_16mib": "tab:red", "triad_pair_aligned_16mib": "tab:purple",
                   "triads": "goldenrod", "hierarchical": "tab:pink", "pairs": "tab:olive",
                   "triad_pair_aligned": "tab:cyan", "triad_pair": "tab:gray",
                   "reduction-forest": "teal", "reduction-tree": "slateblue",
                   "reduction-in-trees": "yellowgreen", "rotating-3": "tab:brown",
                   "affine_triads": "tab:purple"}

SCHEDULE_WORDS = {
    "all-to-all": "all-to-all (one group of all sites)",
    "ring": "host ring all-reduce (no FPGA)",
    "reduction-forest": "reduction forest (in-network sums on load-aware trees)",
    "reduction-tree": "one reduction tree (shortest paths, best root)",
    "reduction-in-trees": "in-trees (in-network sums to every site on its own tree)",
    "triads": "triads, 4 classes in platform order",
    "triad_pair_16mib": "best pair of triad classes (search at 16 MiB)",
    "triad_pair_aligned_16mib": "best pair of triad classes, aligned search",
    "sequential-3": "sequential triads (one group per round)",
    "hierarchical": "hierarchical (continent groups, then leaders)",
    "pairs": "pairs",
    "rotating-3": "rotating-3 (greedy covers of triads)",
    "affine_triads": "affine triads (log3 n rounds of triads)",
}


def short_name(schedule):
    """Schedule files by their stem: sweeps/schedules/triad_pair_16mib.yaml -> triad_pair_16mib."""
    base = os.path.basename(str(schedule))
    return base.rsplit(".", 1)[0] if base.endswith((".yaml", ".yml")) else str(schedule)


def schedule_words(schedule):
    name = short_name(schedule)
    return SCHEDULE_WORDS.get(name, name)


METRIC_WORDS = {
    "step_time_s_mean": "mean step time (s)",
    "step_time_s_max": "slowest step time (s)",
    "time_to_eps_s": "time to \u03b5-consensus with compute (s)",
    "comm_time_to_eps_s": "time to \u03b5-consensus without compute (s)",
    "round_time_s_mean": "mean round time (s)",
    "round_time_s_max": "slowest round time (s)",
    "total_time_s": "total simulated time (s)",
    "exposed_comm_time_s_mean": "mean exposed communication time (s)",
    "slowdown_vs_colocated": "slowdown vs one data centre (\u00d7)",
    "gpu_idle_fraction": "GPU idle fraction",
    "allreduce_bandwidth_gbps": "all-reduce bandwidth (Gb/s)",
    "buffer_high_water_bytes_max": "largest buffer high-water mark (bytes)",
    "link_utilization_max": "busiest link's utilization",
}


def metric_words(key):
    """A summary key in words with its unit: comm_time_to_eps_s -> time to eps-consensus
    without compute (s)."""
    if key in METRIC_WORDS:
        return METRIC_WORDS[key]
    units = {"s": "s", "ms": "ms", "ns": "ns", "bytes": "bytes", "gbps": "Gb/s"}
    parts = key.split("_")
    unit = next((units[p] for p in parts if p in units), None)
    words = " ".join(p for p in parts if p not in units)
    return f"{words} ({unit})" if unit else words


def run_options(block):
    """A run JSON's options as one flat dict of command-line values: the `resolved` block
    (sizes as bytes) with the given --buffer (a uniform buffer); an older report's one
    flat block as it is."""
    if "resolved" not in block:
        return dict(block)
    opts = {k: v for k, v in block["resolved"].items() if k != "buffer_bytes"}
    for key in ("gradient", "chunk"):
        if f"{key}_bytes" in opts:
            opts[key] = f"{opts.pop(key + '_bytes')}B"
    if "buffer" in block.get("given", {}):
        opts["buffer"] = block["given"]["buffer"]
    return opts


def run_parameters(rows, db, skip=()):
    """The run's fixed parameters in one line (platform, gradient, chunk, flow control, eps,
    steps, overrides): from the first successful point's run JSON next to the database
    (options with their defaults), else from the options column; options that vary across
    the points (axes) and those in `skip` are left out."""
    per_point = [json.loads(r.get("options") or "{}") for r in rows]
    varying = set()
    for field in ("options", "set"):
        keys = {k for p in per_point for k in p.get(field, {})}
        for k in keys:
            if len({str(p.get(field, {}).get(k)) for p in per_point}) > 1:
                varying.add(k.replace("-", "_"))
    opts, sets, platform = {}, {}, None
    ok = [r for r in rows if r.get("status") == "ok"]
    path = (os.path.join(os.path.dirname(os.path.abspath(db)), "runs", ok[0]["point_id"] + ".json")
            if ok else "")
    try:
        with open(path) as f:
            j = json.load(f)
        opts = run_options(j.get("options", {}))
        platform = j.get("platform")
        sets = {s.split("=", 1)[0]: s.split("=", 1)[1] for s in opts.pop("set", []) if "=" in s}
    except (OSError, ValueError, TypeError):
        pass
    if per_point:  # the spec's values as written win ("steps: 0" = until eps, not the count run)
        opts.update({k.replace("-", "_"): v for k, v in per_point[0].get("options", {}).items()})
        sets.update(per_point[0].get("set", {}))
    skip = set(skip) | varying
    parts = []
    if "platform" not in skip and (platform or opts.get("platform")):
        parts.append(f"platform {platform or short_name(opts['platform'])}")
    for key, words in (("gradient", "gradient"), ("chunk", "chunk"), ("buffer", "FPGA buffer")):
        if key not in skip and opts.get(key):
            b = parse_size(opts[key])
            parts.append(f"{words} {fmt_bytes(b) if b else opts[key]}")
    if "schedule" not in skip and opts.get("schedule"):
        parts.append(f"schedule {short_name(opts['schedule'])}")
    if "flow_control" not in skip and opts.get("flow_control"):
        parts.append(f"{opts['flow_control']} flow control")
    if "alignment" not in skip and opts.get("alignment"):
        parts.append(f"alignment {opts['alignment']}")
    if "eps" not in skip and opts.get("eps") is not None:
        parts.append(f"\u03b5 = {opts['eps']:g}" if isinstance(opts["eps"], (int, float))
                     else f"\u03b5 = {opts['eps']}")
    if "steps" not in skip and opts.get("steps") is not None:
        parts.append("steps until \u03b5" if str(opts["steps"]) == "0" else f"{opts['steps']} step{'' if str(opts['steps']) == '1' else 's'}")
    for path, v in sorted(sets.items()):
        if path not in varying:
            parts.append(f"{path} = {v}")
    return " \u00b7 ".join(parts)


def log_axis(ax, axis, values):
    """A log scale with plain tick labels (0.2, 0.5, 1, 2, 5; within a decade also 1.5, 3, 4,
    6, 8) when the values span more than a factor of 3, else a linear one (a log axis over a
    narrow range has no labelled tick)."""
    finite = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not finite or max(finite) / min(finite) <= 3:
        return
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    # Within a decade 1-2-5 may label one value (1 to 4: 1 and 2 only): more steps there.
    within_decade = max(finite) / min(finite) < 10
    subs = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0) if within_decade else (1.0, 2.0, 5.0)
    target.set_major_locator(LogLocator(base=10, subs=subs))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def buffer_ticks(ax, values, none_at=None):
    """Log-2 buffer axis, one horizontal two-line label per swept size (at most ~10); the
    tick at `none_at` stands for no buffer."""
    ax.set_xscale("log", base=2)
    ticks = sorted(set(values))
    step = max(1, (len(ticks) + 9) // 10)
    ax.set_xticks(ticks[::step])
    ax.set_xticklabels(["no\nbuffer" if t == none_at else two_line_bytes(t)
                        for t in ticks[::step]])
    ax.minorticks_off()


def crossovers(best_by_buffer):
    """[(buffer below, buffer above, winner below, winner above)] where the winner changes."""
    bufs = sorted(best_by_buffer)
    return [(a, b, best_by_buffer[a], best_by_buffer[b])
            for a, b in zip(bufs, bufs[1:]) if best_by_buffer[a] != best_by_buffer[b]]


# Per-step costs: ranking schedules by them ignores how many rounds each needs to mix
# (hierarchical, rho 0.82, looks cheap per step and is 25-1000x slower to consensus).
PER_STEP = {"step_time_s_mean", "step_time_s_max", "round_time_s_mean", "round_time_s_max",
            "slowdown_vs_colocated", "exposed_comm_time_s_mean", "gpu_idle_fraction",
            "colocated_step_time_s_mean"}
TIME_TO_EPS = ("time_to_eps_s", "comm_time_to_eps_s")
# The decision metric (docs/run-json.md, "Time metrics"), as sweeps/analysis.cpp ranks.
DECISION = "comm_time_to_eps_s"


def never_reaches_eps(row):
    return row.get("rounds_to_eps") is not None and row["rounds_to_eps"] < 0


def column(row, key):
    """The results database's column of metric `key`: `metric_<key>` where the key clashes
    with an axis or option column (sweeps/store.cpp, ResultStore::metric_column), else the
    key itself. `--metric steps` with a `steps` option: the option's column holds 0 for
    `steps: 0`, the metric's the steps the run resolved that to."""
    renamed = "metric_" + re.sub(r"[^A-Za-z0-9]", "_", key)
    return renamed if renamed in row else key


def value(row, key):
    """The row's metric `key`; +inf for a time to eps the run never reaches; None if
    missing."""
    v = row.get(column(row, key))
    if v is None and key in TIME_TO_EPS and never_reaches_eps(row):
        return math.inf
    return v


def has_key(rows, key):
    return all(value(r, key) is not None for r in rows)


def ranking_metric(rows, metric):
    """As sweeps/analysis.cpp ranking_metric: the decision metric in place of a per-step
    metric when every point has it (or never reaches eps), else the spec's metric."""
    return DECISION if metric in PER_STEP and has_key(rows, DECISION) else metric


def pareto_metric(rows, metric):
    """Time to eps-consensus: the spec's metric if it is one, else the decision metric when
    every point has it, else (with a warning in the title) the spec's metric."""
    if metric in TIME_TO_EPS:
        return metric
    return DECISION if has_key(rows, DECISION) else metric


def buffer_axis(axes):
    return next((a for a in axes if a["option"] == "buffer" or
                 (a["option"].startswith("set:") and a["option"].endswith(".fpga.buffer"))), None)


def panel_label(key_axes, row, rate):
    """Title of a panel: the link rate (formatted) and any other axis values."""
    parts = []
    for a in key_axes:
        if rate is not None and a["name"] == rate["name"]:
            parts.append(f"{fmt_rate(num(row, a))} WAN links")
        elif a["kind"] == "bytes":  # "64 MiB" as every other label, not the spec's "64MiB"
            parts.append(f"{a['name'].replace('_', ' ')} {fmt_bytes(num(row, a))}")
        else:
            parts.append(f"{a['name'].replace('_', ' ')} {short_name(row[a['name']])}")
    return ", ".join(parts)


def category_label(cat, value):
    return schedule_words(value) if cat is not None and cat["option"] == "schedule" else str(value)


def pareto_front(pts):
    """Points (buffer, y, label) not dominated by one with no more buffer and a lower y."""
    front, best = [], math.inf
    for b, y, label in sorted(pts, key=lambda p: (p[0], p[1])):
        if y < best:
            front.append((b, y, label))
            best = y
    return front


def attach_memory(rows, db):
    """Each row's run JSON `memory` object (tier, cost, the tiers) as row["memory"], when the
    run JSON is next to the database (runs/POINT.json) and has one (docs/memory-tiers.md)."""
    runs = os.path.join(os.path.dirname(os.path.abspath(db)), "runs")
    for r in rows:
        try:
            with open(os.path.join(runs, f"{r['point_id']}.json")) as f:
                r["memory"] = json.load(f).get("memory")
        except (OSError, ValueError, KeyError, TypeError):
            r["memory"] = None


def memory_words(memory):
    """'HBM, 17 USD': the tier a run's buffer needs and the memory's cost over its sites."""
    cost = memory["cost_usd"]
    if cost is None:  # no tier holds the buffer: no price
        return memory["tier"]
    return f"{memory['tier']}, {cost:.3g} USD" if cost < 1000 else f"{memory['tier']}, {cost:,.0f} USD"


def shade_tiers(ax, tiers, lo, hi):
    """The buffer range each tier holds (by capacity alone; a run's access rate may need a
    faster tier), shaded, and named above the panel; past the last tier nothing fits."""
    start = 0
    bands = [(t["name"], t["capacity_bytes"], f"\u2264 {fmt_bytes(t['capacity_bytes'])}\n"
              f"{t['cost_usd_per_gib']:g} USD/GiB") for t in tiers]
    bands.append(("none fits", math.inf, ""))
    for i, (name, end, words) in enumerate(bands):
        a, b = max(start, lo), min(end, hi)
        if a < b:
            if math.isfinite(end):
                ax.axvspan(a, b, color=("#e8f0fb", "#fbf3e4", "#eaf5ea", "#f3e8f5")[i % 4],
                           zorder=0)
            ax.text(math.sqrt(a * b), 1.01, f"{name}\n{words}".strip(),
                    transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=7,
                    color="#555555")
        start = end


def header(fig, title, params, height):
    """Title in words and the run's parameters under it; returns the top of the plot area."""
    fig.suptitle(title, fontsize=12, y=1 - 0.05 / height, va="top")
    fig.text(0.5, 1 - 0.36 / height, params, ha="center", va="top", fontsize=9, color="#333333")
    return 1 - 0.6 / height


def plot_pareto(rows, axes, cat, rate, metric, params, out, written, numbers):
    """One panel per link rate (per combination of the axes other than the category and the
    buffer): buffer bytes vs time to eps-consensus, every point, and that panel's front."""
    key = pareto_metric(rows, metric)
    buf = buffer_axis(axes)
    key_axes = [a for a in axes if a is not cat and a is not buf]
    panels, memory = {}, {}  # memory: (panel, buffer, label) -> the run JSON's `memory`
    for r in rows:
        b, y = buffer_of(r, buf), value(r, key)
        if b is None or y is None:
            continue
        k = tuple(num(r, a) if a["kind"] != "text" else r[a["name"]] for a in key_axes)
        panels.setdefault(k, {"title": panel_label(key_axes, r, rate), "pts": []})
        panels[k]["pts"].append((b, y, r[cat["name"]] if cat else "point"))
        if r.get("memory"):
            memory[(k, b, r[cat["name"]] if cat else "point")] = r["memory"]
    if not panels:
        return
    # A schedule that holds no FPGA buffer (the host ring) needs none: one point per panel at
    # buffer 0 (drawn at the left edge, its time as a dashed line across), not one per size.
    unbuffered = {lab for lab in {r[cat["name"]] for r in rows} if cat} if cat else set()
    for r in rows:
        if cat and (r.get("buffer_high_water_bytes_max") or 0) > 0:
            unbuffered.discard(r[cat["name"]])
    for panel in panels.values():
        kept = {}
        for b, y, lab in panel["pts"]:
            if lab in unbuffered:
                kept[lab] = min(kept.get(lab, (0, math.inf, lab)), (0, y, lab), key=lambda p: p[1])
        panel["pts"] = [p for p in panel["pts"] if p[2] not in unbuffered] + list(kept.values())
    labels = sorted({p[2] for panel in panels.values() for p in panel["pts"]})
    color = {lab: SCHEDULE_COLORS.get(short_name(lab), plt.get_cmap("tab10")(i % 10))
             for i, lab in enumerate(labels)}
    ncols = len(panels) if len(panels) <= 3 else min(4, math.ceil(math.sqrt(len(panels))))
    nrows = (len(panels) + ncols - 1) // ncols
    height = 4.4 * nrows + 1.0
    fig, axs = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, height), squeeze=False)
    fallback = key not in TIME_TO_EPS
    ylabel = metric_words(key)
    for ax, (k, panel) in zip(axs.flat, sorted(panels.items())):
        pts = panel["pts"]
        finite = [p for p in pts if math.isfinite(p[1])]
        sized = [p[0] for p in pts if p[0] > 0]
        left = min(sized) / 4 if sized else 1 << 20  # where buffer 0 is drawn
        at = lambda b: b if b > 0 else left  # noqa: E731
        for lab in labels:
            sel = [p for p in finite if p[2] == lab]
            if sel:
                ax.scatter([at(p[0]) for p in sel], [p[1] for p in sel], s=24, color=color[lab],
                           zorder=3, marker="s" if lab in unbuffered else "o")
            if lab in unbuffered and sel:
                ax.axhline(sel[0][1], color=color[lab], linestyle="--", linewidth=0.8, zorder=1)
        front = pareto_front(finite)
        if front:
            xs = [at(p[0]) for p in front] + [max(at(p[0]) for p in finite)]
            ys = [p[1] for p in front] + [front[-1][1]]
            ax.step(xs, ys, where="post", color="black", linewidth=1.2, zorder=2)
            ax.scatter([at(p[0]) for p in front], [p[1] for p in front], s=70, facecolors="none",
                       edgecolors="black", linewidths=1.0, zorder=4)
        never = sorted({p[2] for p in pts if not math.isfinite(p[1])})
        tiers = next((m["tiers"] for m in memory.values() if m.get("tiers")), None)
        if tiers and sized:
            shade_tiers(ax, tiers, min(sized) / 1.5, max(sized) * 1.5)
        for b, y, lab in front:
            m = memory.get((k, b, lab)) if b > 0 else None
            if m:
                ax.annotate(memory_words(m), (at(b), y), textcoords="offset points",
                            xytext=(4, 5), fontsize=7, color="#222222", zorder=5)
        buffer_ticks(ax, [at(p[0]) for p in pts], left)
        log_axis(ax, "y", [p[1] for p in finite])
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("FPGA buffer per site")
        ax.set_ylabel(ylabel)
        if panel["title"]:
            ax.set_title(panel["title"], fontsize=10, pad=30 if tiers else 6)
        name = cat["name"] if cat else "point"
        numbers.append(f"# Pareto front [{panel['title'] or 'all'}] (buffer bytes, {key}, {name})")
        numbers.extend(f"{fmt_bytes(b)} {y:.6g} {lab}" +
                       (f" [{memory_words(memory[(k, b, lab)])}]"
                        if b > 0 and (k, b, lab) in memory else "")
                       for b, y, lab in front)
        numbers.extend(f"never reaches eps: {lab}" for lab in never)
    for ax in list(axs.flat)[len(panels):]:
        ax.set_visible(False)
    # Never reaching eps is a property of the mixing, so of the schedule, not the panel.
    finite_labels = {p[2] for panel in panels.values() for p in panel["pts"] if math.isfinite(p[1])}
    handles = [Line2D([], [], marker=("s" if lab in unbuffered else "o") if lab in finite_labels
                      else "x", linestyle="", color=color[lab],
                      label=category_label(cat, lab) + ("" if lab in finite_labels else
                                                        " (never reaches \u03b5)") +
                      (", at 'no buffer' (dashed)" if lab in unbuffered else ""))
               for lab in labels]
    handles.append(Line2D([], [], color="black", marker="o", markerfacecolor="none",
                          label="Pareto front (this panel)"))
    if memory:
        handles.append(Patch(color="#e8f0fb", label="memory tier holding that buffer (shaded);\n"
                             "front labels: the tier the run needs\n(capacity and access rate), "
                             "memory cost of all sites"))
    what = (f"{ylabel}, NOT time to consensus (some points lack {DECISION}: run with "
            "steps: 0)" if fallback else ylabel.split(" (")[0])
    top = header(fig, f"FPGA buffer vs {what}: the lower left is better", params, height)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9,
               title=cat["name"] if cat else None)
    save(fig, out, "pareto", written)


def load(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    axes = [dict(r) for r in con.execute("SELECT name, option, kind FROM axes ORDER BY position")]
    meta = {r["key"]: r["value"] for r in con.execute("SELECT key, value FROM meta")}
    all_rows = [dict(r) for r in con.execute("SELECT * FROM points ORDER BY point_index")]
    return axes, meta, all_rows


def pick_axes(axes):
    """Buffer, category (schedule, else the first text axis) and link-rate axes; the buffer
    axis only when the category is the schedule (other categories are ranked, not crossed)."""
    buf = cat = rate = None
    for a in axes:
        opt = a["option"]
        if buf is None and (opt == "buffer" or (opt.startswith("set:") and opt.endswith(".fpga.buffer"))):
            buf = a
        if cat is None and opt == "schedule":
            cat = a
        if rate is None and opt.startswith("set:") and opt.endswith("bandwidth") and a["kind"] == "rate_bps":
            rate = a
    if cat is None:
        cat = next((a for a in axes if a["kind"] == "text" and a is not buf), None)
        if cat is not None:
            buf = None
    return buf, cat, rate


def group_key(row, axes, skip):
    """The other axes' values of a row, sizes as every label writes them ("64 MiB")."""
    return " ".join(f"{a['name']}=" + (fmt_bytes(num(row, a)) if a["kind"] == "bytes"
                                       else short_name(row[a['name']]))
                    for a in axes if a["name"] not in skip)


def save(fig, out, name, written):
    for ext in ("png", "svg"):
        path = os.path.join(out, f"{name}.{ext}")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        written.append(path)
    plt.close(fig)


def buffer_of(row, buf):
    if buf is not None and num(row, buf) is not None:
        return num(row, buf)
    try:
        opts = json.loads(row.get("options") or "{}")
    except ValueError:
        opts = {}
    b = parse_size(opts.get("options", {}).get("buffer", "")) if opts else None
    if b is None:
        for path, v in opts.get("set", {}).items():
            if path.endswith("fpga.buffer"):
                b = parse_size(v)
    return b if b is not None else row.get("buffer_high_water_bytes_max")


def panel_key(row, panel_axes):
    return tuple(num(row, a) if a["kind"] != "text" else row[a["name"]] for a in panel_axes)


def panel_title(row, panel_axes, rate):
    parts = []
    for a in panel_axes:
        if rate is not None and a["name"] == rate["name"]:
            parts.append(f"{fmt_rate(num(row, a))} links")
        elif a["kind"] == "bytes":
            parts.append(f"{a['name'].replace('_', ' ')} {fmt_bytes(num(row, a))}")
        else:
            parts.append(f"{a['name'].replace('_', ' ')} {short_name(row[a['name']])}")
    return ", ".join(parts)


def plot_metric_vs_buffer(rows, axes, buf, cat, rate, metric, params, out, written, numbers):
    """The metric vs buffer size, one line per schedule, one panel per link rate (and per
    combination of the other axes); the crossovers (where the fastest schedule changes)
    marked."""
    panel_axes = [a for a in axes if a["name"] not in {buf["name"], cat["name"]}]
    panel_axes.sort(key=lambda a: 0 if rate is not None and a["name"] == rate["name"] else 1)
    panels = {}
    for r in rows:
        panels.setdefault(panel_key(r, panel_axes), []).append(r)
    keys = sorted(panels, key=lambda k: tuple(str(x) if isinstance(x, str) else f"{x:020.3f}"
                                              for x in k))
    ncols = min(4, len(keys)) if len(keys) > 2 else len(keys)
    nrows = (len(keys) + ncols - 1) // ncols
    height = 3.6 * nrows + 1.0
    fig, axs = plt.subplots(nrows, ncols, figsize=(5.0 * ncols + 0.6, height), squeeze=False)
    numbers.append(f"# {metric} vs {buf['name']} per {cat['name']}")
    handles, crossed = {}, False
    for ax, k in zip(axs.flat, keys):
        sub = panels[k]
        title = panel_title(sub[0], panel_axes, rate)
        series = {}
        for r in sub:
            series.setdefault(r[cat["name"]], []).append((num(r, buf), value(r, metric)))
        for label, pts in sorted(series.items()):
            pts.sort()
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                            color=SCHEDULE_COLORS.get(short_name(label)))
            handles.setdefault(category_label(cat, label), line)
            numbers.append((f"[{title}] " if title else "") + f"{label}: " + ", ".join(
                f"{fmt_bytes(x)}={y:.6g}" for x, y in pts))
        buffer_ticks(ax, [num(r, buf) for r in sub])
        log_axis(ax, "y", [value(r, metric) for r in sub])
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(title, fontsize=9.5)
        best = {}
        for label, pts in series.items():
            for b, y in pts:
                if y is not None and (b not in best or y < best[b][1]):
                    best[b] = (label, y)
        for b0, b1, w0, w1 in crossovers({b: w for b, (w, _) in best.items()}):
            crossed = True
            x = math.sqrt(b0 * b1)
            ax.axvline(x, color="black", linestyle="--", linewidth=1.1, zorder=1)
            numbers.append((f"[{title}] " if title else "") +
                           f"crossover between {fmt_bytes(b0)} and {fmt_bytes(b1)}: "
                           f"{w0} -> {w1}")
    for ax in list(axs.flat)[len(keys):]:
        ax.set_visible(False)
    for ax in axs[-1]:
        ax.set_xlabel("FPGA buffer per site")
    for row in axs:
        row[0].set_ylabel(metric_words(metric))
    if crossed:
        handles["crossover: the fastest schedule changes"] = Line2D(
            [], [], color="black", linestyle="--", linewidth=1.1)
    top = header(fig, f"{metric_words(metric).split(' (')[0].capitalize()} vs FPGA buffer size",
                 params, height)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.legend(list(handles.values()), list(handles.keys()), loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=min(3, len(handles)), fontsize=9,
               title=cat["name"])
    save(fig, out, "metric_vs_buffer", written)


def plot_winner_heatmap(rows, failed, axes, buf, cat, rate, metric, params, out, written,
                        numbers):
    """The winning schedule per buffer (columns) and link rate and other axes (rows), ranked
    as the printed verdict is: cells coloured by the winner with a key, crossovers as thick
    bars."""
    rank = ranking_metric(rows, metric)
    panel_axes = [a for a in axes if a["name"] not in {buf["name"], cat["name"]}]
    panel_axes.sort(key=lambda a: 0 if rate is not None and a["name"] == rate["name"] else 1)
    titles = {}
    for r in rows + failed:
        titles.setdefault(panel_key(r, panel_axes), panel_title(r, panel_axes, rate))
    keys = sorted(titles, key=lambda k: tuple(str(x) if isinstance(x, str) else f"{x:020.3f}"
                                              for x in k))
    bufs = sorted({num(r, buf) for r in rows})
    best = {}
    for r in rows:
        key = (num(r, buf), panel_key(r, panel_axes))
        v = value(r, rank)
        if v is not None and (key not in best or v < best[key][1]):
            best[key] = (r[cat["name"]], v)
    # A cell where some schedule failed cannot name a winner: hatched.
    incomplete = {(num(r, buf), panel_key(r, panel_axes)) for r in failed}
    winners = sorted({w for w, _ in best.values()})
    color = {w: SCHEDULE_COLORS.get(short_name(w), plt.get_cmap("tab10")(i % 10))
             for i, w in enumerate(winners)}
    height = 0.5 * len(keys) + 3.4
    crossed = False
    fig, ax = plt.subplots(figsize=(max(7.5, 0.62 * len(bufs) + 4.0), height))
    for yi, k in enumerate(keys):
        for xi, b in enumerate(bufs):
            w = best.get((b, k))
            ax.add_patch(plt.Rectangle((xi - 0.5, yi - 0.5), 1, 1,
                                       facecolor=color[w[0]] if w else "white", edgecolor="white",
                                       hatch="//" if (b, k) in incomplete else None))
        row = {b: best[(b, k)][0] for b in bufs if (b, k) in best}
        for b0, b1, w0, w1 in crossovers(row):
            crossed = True
            x = bufs.index(b1) - 0.5
            ax.plot([x, x], [yi - 0.5, yi + 0.5], color="black", linewidth=3.5,
                    solid_capstyle="butt")
            numbers.append((f"[{titles[k]}] " if titles[k] else "") +
                           f"crossover between {fmt_bytes(b0)} and {fmt_bytes(b1)}: {w0} -> {w1}")
    ax.set_xlim(-0.5, len(bufs) - 0.5)
    ax.set_ylim(-0.5, len(keys) - 0.5)
    ax.set_xticks(range(len(bufs)))
    ax.set_xticklabels([two_line_bytes(b) for b in bufs], fontsize=9)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([titles[k] or "all points" for k in keys], fontsize=9.5)
    ax.tick_params(length=0)
    ax.set_xlabel("FPGA buffer per site")
    handles = [Patch(facecolor=color[w], label=category_label(cat, w)) for w in winners]
    if crossed:
        handles.append(Line2D([], [], color="black", linewidth=3.5,
                              label="crossover: the fastest schedule changes"))
    if incomplete:
        handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//",
                             label="some schedule failed here"))
    top = header(fig, f"Fastest {cat['name']} by {metric_words(rank).split(' (')[0]}", params,
                 height)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
               fontsize=9, title="cell colour = fastest " + cat["name"])
    save(fig, out, "winner_heatmap", written)
    numbers.append(f"# best {cat['name']} per ({buf['name']}, other axes)")
    for k in keys:
        numbers.append((f"{titles[k]}: " if titles[k] else "") + ", ".join(
            f"{fmt_bytes(b)}={best[(b, k)][0]}" + ("*" if (b, k) in incomplete else "")
            for b in bufs if (b, k) in best))


def common_slowdown(row, group):
    """The row's mean step time over the fastest co-located reference among its group's
    variants: one data centre for every variant (each run's own slowdown_vs_colocated
    divides by the reference of its own variant, so variants would not compare)."""
    refs = [r["colocated_step_time_s_mean"] for r in group
            if r.get("colocated_step_time_s_mean")]
    if not refs or row.get("step_time_s_mean") is None:
        return None
    return row["step_time_s_mean"] / min(refs)


def variant_value(row, key, group):
    return common_slowdown(row, group) if key == "slowdown_vs_colocated" else row.get(key)


def plot_variants(rows, axes, cat, metric, params, out, written, numbers):
    """Variants side by side (category other than schedule, e.g. the ablation): one bar per
    variant, one bar group per combination of the other axes."""
    slow = "slowdown_vs_colocated"
    labels, groups = [], []
    for r in rows:
        if r[cat["name"]] not in labels:
            labels.append(r[cat["name"]])
        g = group_key(r, axes, {cat["name"]})
        if g not in groups:
            groups.append(g)
    height = 5.2
    fig, axs = plt.subplots(1, 2, figsize=(12, height))
    width = 0.8 / max(1, len(groups))
    for ax, key in zip(axs, (metric, slow)):
        for gi, g in enumerate(groups):
            in_group = [r for r in rows if group_key(r, axes, {cat["name"]}) == g]
            vals = []
            for lab in labels:
                v = [variant_value(r, key, in_group) for r in in_group
                     if r[cat["name"]] == lab and variant_value(r, key, in_group) is not None]
                vals.append(v[0] if v else 0)
            ax.bar([i + gi * width for i in range(len(labels))], vals, width, label=g or "all")
            numbers.append(f"# {key} per {cat['name']}" + (f" [{g}]" if g else "") + ": " +
                           ", ".join(f"{lab}={v:.6g}" for lab, v in zip(labels, vals)))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=20, ha="right")
        ax.set_ylabel(metric_words(key) if key != slow else
                      "slowdown vs one data centre, the fastest variant's (\u00d7)")
        ax.set_title(metric_words(key).split(" (")[0].capitalize(), fontsize=10)
        if key == slow:
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    top = header(fig, f"{cat['name'].replace('_', ' ').capitalize()}s side by side", params,
                 height)
    bottom = 0
    if len(groups) > 1:  # one legend under both panels, where it covers no bar
        handles, names = axs[0].get_legend_handles_labels()
        ncol = min(len(groups), 3)
        bottom = (0.12 + 0.22 * math.ceil(len(groups) / ncol)) / height
        fig.legend(handles, names, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, bottom, 1, top))
    save(fig, out, "variants", written)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metric", default=None)
    args = ap.parse_args()
    try:
        axes, meta, all_rows = load(args.db)
    except sqlite3.Error as e:
        print(f"{args.db}: cannot read results database: {e}")
        return 2
    rows = [r for r in all_rows if r["status"] == "ok"]
    failed = [r for r in all_rows if r["status"] != "ok"]
    metric = args.metric or meta.get("metric") or "step_time_s_mean"
    os.makedirs(args.out, exist_ok=True)
    written, numbers = [], []
    if not rows:
        why = f"all {len(all_rows)} points failed" if all_rows else "the results hold no point"
        print(f"plot_sweep: no point produced the metric '{metric}' ({why}), nothing to plot")
        return 0
    if all(value(r, metric) is None for r in rows):
        print(f"plot_sweep: no point produced the metric '{metric}' ({len(rows)} of "
              f"{len(all_rows)} points finished, none with a value for it), nothing to plot")
        return 0
    buf, cat, rate = pick_axes(axes)
    attach_memory(rows, args.db)
    params = run_parameters(all_rows, args.db)
    if meta.get("spec_name"):
        params = f"sweep {meta['spec_name']} \u00b7 " + params
    if buf is not None and cat is not None:
        plot_metric_vs_buffer(rows, axes, buf, cat, rate, metric, params, args.out, written,
                              numbers)
        plot_winner_heatmap(rows, failed, axes, buf, cat, rate, metric, params, args.out,
                            written, numbers)
    plot_pareto(rows, axes, cat, rate, metric, params, args.out, written, numbers)
    if buf is None and cat is not None:
        plot_variants(rows, axes, cat, metric, params, args.out, written, numbers)
    with open(os.path.join(args.out, "plot_numbers.txt"), "w") as f:
        f.write("\n".join(numbers) + "\n")
    print("plots: " + ", ".join(os.path.basename(w) for w in written if w.endswith(".png")) +
          f" (+ SVG) and plot_numbers.txt in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
