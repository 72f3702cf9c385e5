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
                                 buffer);
  variants.{png,svg}             the metric and slowdown per variant (sweeps without a
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
    from matplotlib.colors import ListedColormap
    from matplotlib.lines import Line2D
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
            return f"{v:g}{unit}" if v == int(v) else f"{v:.3g}{unit}"
    return f"{b:g}B"


def fmt_rate(bps):
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g}{unit}"
    return f"{bps:g}bps"


# Per-step costs: ranking schedules by them ignores how many rounds each needs to mix
# (hierarchical, rho 0.82, looks cheap per step and is 25-1000x slower to consensus).
PER_STEP = {"step_time_s_mean", "step_time_s_max", "round_time_s_mean", "round_time_s_max",
            "slowdown_vs_colocated", "exposed_comm_time_s_mean", "gpu_idle_fraction",
            "colocated_step_time_s_mean"}
TIME_TO_EPS = ("time_to_eps_s", "comm_time_to_eps_s")


def never_reaches_eps(row):
    return row.get("rounds_to_eps") is not None and row["rounds_to_eps"] < 0


def value(row, key):
    """The row's `key`; +inf for a time to eps the run never reaches; None if missing."""
    v = row.get(key)
    if v is None and key in TIME_TO_EPS and never_reaches_eps(row):
        return math.inf
    return v


def has_key(rows, key):
    return all(value(r, key) is not None for r in rows)


def ranking_metric(rows, metric):
    """As sweeps/analysis.cpp ranking_metric: time_to_eps_s in place of a per-step metric
    when every point has it (or never reaches eps), else the spec's metric."""
    return "time_to_eps_s" if metric in PER_STEP and has_key(rows, "time_to_eps_s") else metric


def pareto_metric(rows, metric):
    """Time to eps-consensus: the spec's metric if it is one, else time_to_eps_s when every
    point has it, else (with a warning in the title) the spec's metric."""
    if metric in TIME_TO_EPS:
        return metric
    return "time_to_eps_s" if has_key(rows, "time_to_eps_s") else metric


def buffer_axis(axes):
    return next((a for a in axes if a["option"] == "buffer" or
                 (a["option"].startswith("set:") and a["option"].endswith(".fpga.buffer"))), None)


def panel_label(key_axes, row, rate):
    """Title of a Pareto panel: the link rate (formatted) and any other axis values."""
    parts = []
    for a in key_axes:
        if rate is not None and a["name"] == rate["name"]:
            parts.append(f"link {fmt_rate(row[a['name'] + '_value'])}")
        else:
            parts.append(f"{a['name']}={row[a['name']]}")
    return ", ".join(parts)


def pareto_front(pts):
    """Points (buffer, y, label) not dominated by one with no more buffer and a lower y."""
    front, best = [], math.inf
    for b, y, label in sorted(pts, key=lambda p: (p[0], p[1])):
        if y < best:
            front.append((b, y, label))
            best = y
    return front


def plot_pareto(rows, axes, cat, rate, metric, meta, out, written, numbers):
    """One panel per link rate (per combination of the axes other than the category and the
    buffer): buffer bytes vs time to eps-consensus, every point, and that panel's front."""
    key = pareto_metric(rows, metric)
    buf = buffer_axis(axes)
    key_axes = [a for a in axes if a is not cat and a is not buf]
    panels = {}
    for r in rows:
        b, y = buffer_of(r, buf), value(r, key)
        if b is None or y is None:
            continue
        k = tuple(r[a["name"] + "_value"] if a["kind"] != "text" else r[a["name"]] for a in key_axes)
        panels.setdefault(k, {"title": panel_label(key_axes, r, rate), "pts": []})
        panels[k]["pts"].append((b, y, r[cat["name"]] if cat else "point"))
    if not panels:
        return
    labels = sorted({p[2] for panel in panels.values() for p in panel["pts"]})
    color = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    ncols = len(panels) if len(panels) <= 3 else min(4, math.ceil(math.sqrt(len(panels))))
    nrows = (len(panels) + ncols - 1) // ncols
    height = 4.4 * nrows
    fig, axs = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, height), squeeze=False)
    fallback = key not in TIME_TO_EPS
    ylabel = (key.replace("_", " ") if fallback else
              ("time to eps-consensus, s (time_to_eps_s)" if key == "time_to_eps_s" else
               "comm time to eps-consensus, s (comm_time_to_eps_s)"))
    for ax, (k, panel) in zip(axs.flat, sorted(panels.items())):
        pts = panel["pts"]
        finite = [p for p in pts if math.isfinite(p[1])]
        for lab in labels:
            sel = [p for p in finite if p[2] == lab]
            if sel:
                ax.scatter([p[0] for p in sel], [p[1] for p in sel], s=24, color=color[lab],
                           label=lab, zorder=3)
        front = pareto_front(finite)
        if front:
            xs = [p[0] for p in front] + [max(p[0] for p in finite)]
            ys = [p[1] for p in front] + [front[-1][1]]
            ax.step(xs, ys, where="post", color="black", linewidth=1.2, label="Pareto front",
                    zorder=2)
            ax.scatter([p[0] for p in front], [p[1] for p in front], s=70, facecolors="none",
                       edgecolors="black", linewidths=1.0, zorder=4)
        never = sorted({p[2] for p in pts if not math.isfinite(p[1])})
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        xt = sorted({p[0] for p in pts})
        step = max(1, len(xt) // 8)
        ax.set_xticks(xt[::step])
        ax.set_xticklabels([fmt_bytes(t) for t in xt[::step]], rotation=45)
        ax.minorticks_off()
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("buffer bytes per aggregator")
        ax.set_ylabel(ylabel)
        if panel["title"]:
            ax.set_title(panel["title"])
        name = cat["name"] if cat else "point"
        numbers.append(f"# Pareto front [{panel['title'] or 'all'}] (buffer bytes, {key}, {name})")
        numbers.extend(f"{fmt_bytes(b)} {y:.6g} {lab}" for b, y, lab in front)
        numbers.extend(f"never reaches eps: {lab}" for lab in never)
    for ax in list(axs.flat)[len(panels):]:
        ax.set_visible(False)
    # Never reaching eps is a property of the mixing, so of the schedule, not the panel.
    finite_labels = {p[2] for panel in panels.values() for p in panel["pts"] if math.isfinite(p[1])}
    handles = [Line2D([], [], marker="o" if lab in finite_labels else "x", linestyle="",
                      color=color[lab],
                      label=lab if lab in finite_labels else f"{lab} (never reaches eps)")
               for lab in labels]
    handles.append(Line2D([], [], color="black", marker="o", markerfacecolor="none",
                          label="Pareto front (this panel)"))
    what = (f"{key}, NOT time to consensus (some points lack time_to_eps_s: run with "
            "steps: 0)" if fallback else ylabel.split(",")[0])
    fig.suptitle(f"{meta.get('spec_name', '')}: buffer vs {what} (lower left is better)",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / height))  # room for the suptitle
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
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
    return " ".join(f"{a['name']}={row[a['name']]}" for a in axes if a["name"] not in skip)


def save(fig, out, name, written):
    for ext in ("png", "svg"):
        path = os.path.join(out, f"{name}.{ext}")
        fig.savefig(path, dpi=120, bbox_inches="tight")
        written.append(path)
    plt.close(fig)


def buffer_of(row, buf):
    if buf is not None and row.get(buf["name"] + "_value") is not None:
        return row[buf["name"] + "_value"]
    try:
        opts = json.loads(row.get("options") or "{}")
    except ValueError:
        opts = {}
    b = parse_size(opts.get("options", {}).get("buffer", "")) if opts else None
    if b is None:
        for path, value in opts.get("set", {}).items():
            if path.endswith("fpga.buffer"):
                b = parse_size(value)
    return b if b is not None else row.get("buffer_high_water_bytes_max")


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
        print("plot_sweep: no successful points, nothing to plot")
        return 0
    if metric not in rows[0]:
        print(f"plot_sweep: the results have no metric '{metric}', nothing to plot")
        return 0
    buf, cat, rate = pick_axes(axes)
    ylabel = metric.replace("_", " ")

    # 1. metric vs buffer per schedule, log x (one panel per link rate).
    if buf is not None and cat is not None:
        rates = sorted({r[rate["name"] + "_value"] for r in rows}) if rate else [None]
        fig, axs = plt.subplots(1, len(rates), figsize=(6.4 * len(rates), 4.6), squeeze=False)
        numbers.append(f"# {metric} vs {buf['name']} per {cat['name']}")
        for ax, rv in zip(axs[0], rates):
            sub = [r for r in rows if rate is None or r[rate["name"] + "_value"] == rv]
            series = {}
            for r in sub:
                label = r[cat["name"]]
                extra = group_key(r, axes, {buf["name"], cat["name"], rate["name"] if rate else ""})
                if extra:
                    label += f" ({extra})"
                series.setdefault(label, []).append((r[buf["name"] + "_value"], r[metric]))
            for label, pts in sorted(series.items()):
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
                prefix = f"[{rate['name']}={fmt_rate(rv)}] " if rate else ""
                numbers.append(prefix + label + ": " + ", ".join(
                    f"{fmt_bytes(x)}={y:.6g}" for x, y in pts))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(f"{buf['name']} (bytes per aggregator)")
            ax.set_ylabel(ylabel)
            ticks = sorted({r[buf["name"] + "_value"] for r in sub})
            step = max(1, len(ticks) // 8)
            ax.set_xticks(ticks[::step])
            ax.set_xticklabels([fmt_bytes(t) for t in ticks[::step]], rotation=45)
            ax.minorticks_off()
            ax.grid(True, which="major", alpha=0.3)
            ax.set_title(f"{meta.get('spec_name', '')}" + (f", link {fmt_rate(rv)}" if rate else ""))
            ax.legend(fontsize=8)
        save(fig, args.out, "metric_vs_buffer", written)

        # 2. winning schedule per (buffer, link rate), ranked as the printed verdict is.
        rank = ranking_metric(rows, metric)
        bufs = sorted({r[buf["name"] + "_value"] for r in rows})
        cats = sorted({r[cat["name"]] for r in rows})
        best = {}
        for r in rows:
            key = (r[buf["name"] + "_value"], r[rate["name"] + "_value"] if rate else None)
            v = value(r, rank)
            if v is not None and (key not in best or v < best[key][1]):
                best[key] = (r[cat["name"]], v)
        # A cell where some schedule failed cannot name a winner: marked with '*'.
        incomplete = {(r[buf["name"] + "_value"], r[rate["name"] + "_value"] if rate else None)
                      for r in failed}
        grid = [[cats.index(best[(b, rv)][0]) if (b, rv) in best else math.nan for b in bufs]
                for rv in rates]
        fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(bufs) + 2), max(2.2, 0.6 * len(rates) + 1.6)))
        palette = plt.get_cmap("tab10")
        cmap = ListedColormap([palette(i % 10) for i in range(len(cats))])
        ax.imshow(grid, aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(cats) - 0.5, origin="lower")
        for yi, rv in enumerate(rates):
            for xi, b in enumerate(bufs):
                if (b, rv) in best:
                    mark = "*" if (b, rv) in incomplete else ""
                    ax.text(xi, yi, best[(b, rv)][0] + mark, ha="center", va="center", fontsize=7,
                            rotation=90 if len(bufs) > 8 else 0)
        ax.set_xticks(range(len(bufs)))
        ax.set_xticklabels([fmt_bytes(b) for b in bufs], rotation=45)
        ax.set_yticks(range(len(rates)))
        ax.set_yticklabels([fmt_rate(rv) for rv in rates] if rate else ["platform links"])
        ax.set_xlabel(f"{buf['name']} (bytes per aggregator)")
        ax.set_ylabel("WAN link rate" if rate else "")
        ax.set_title(f"best {cat['name']} by {rank}" +
                     (" (* some schedule failed there)" if incomplete else ""))
        save(fig, args.out, "winner_heatmap", written)
        numbers.append(f"# best {cat['name']} per ({buf['name']}, link rate)")
        for rv in rates:
            numbers.append((f"{fmt_rate(rv)}: " if rate else "") + ", ".join(
                f"{fmt_bytes(b)}={best[(b, rv)][0]}" + ("*" if (b, rv) in incomplete else "")
                for b in bufs if (b, rv) in best))

    # 3. Pareto front: buffer bytes vs time to eps-consensus, one front per link rate.
    plot_pareto(rows, axes, cat, rate, metric, meta, args.out, written, numbers)

    # 4. Variants side by side (category other than schedule, e.g. the ablation): one bar
    # per variant, one bar group per combination of the other axes.
    if buf is None and cat is not None:
        slow = "slowdown_vs_colocated"
        labels, groups = [], []
        for r in rows:
            if r[cat["name"]] not in labels:
                labels.append(r[cat["name"]])
            g = group_key(r, axes, {cat["name"]})
            if g not in groups:
                groups.append(g)
        fig, axs = plt.subplots(1, 2, figsize=(12, 4.4))
        width = 0.8 / max(1, len(groups))
        for ax, key in zip(axs, (metric, slow)):
            for gi, g in enumerate(groups):
                vals = []
                for lab in labels:
                    v = [r[key] for r in rows if r[cat["name"]] == lab and
                         group_key(r, axes, {cat["name"]}) == g and r.get(key) is not None]
                    vals.append(v[0] if v else 0)
                ax.bar([i + gi * width for i in range(len(labels))], vals, width,
                       label=g or "all")
                numbers.append(f"# {key} per {cat['name']}" + (f" [{g}]" if g else "") + ": " +
                               ", ".join(f"{lab}={v:.6g}" for lab, v in zip(labels, vals)))
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
            ax.set_xticklabels(labels, rotation=20, ha="right")
            ax.set_ylabel(key.replace("_", " "))
            if key == slow:
                ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
            if len(groups) > 1:
                ax.legend(fontsize=8)
        fig.suptitle(f"{meta.get('spec_name', '')}: {cat['name']}s side by side")
        save(fig, args.out, "variants", written)

    with open(os.path.join(args.out, "plot_numbers.txt"), "w") as f:
        f.write("\n".join(numbers) + "\n")
    print("plots: " + ", ".join(os.path.basename(w) for w in written if w.endswith(".png")) +
          f" (+ SVG) and plot_numbers.txt in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
