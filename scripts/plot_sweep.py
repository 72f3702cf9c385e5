#!/usr/bin/python3
"""Plots of an `aggnet sweep` results database (PNG and SVG).

    /usr/bin/python3 scripts/plot_sweep.py OUT/results.db --out OUT/plots [--metric KEY]

Writes, when the sweep has the axes they need:
  metric_vs_buffer.{png,svg}  the metric vs buffer size (log x), one line per schedule
                                 (one panel per link rate when the sweep varies it);
  winner_heatmap.{png,svg}       the winning schedule per (buffer, link rate);
  pareto.{png,svg}               buffer bytes vs slowdown against co-located training,
                                 every point plus the Pareto front;
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

        # 2. winning schedule per (buffer, link rate).
        bufs = sorted({r[buf["name"] + "_value"] for r in rows})
        cats = sorted({r[cat["name"]] for r in rows})
        best = {}
        for r in rows:
            key = (r[buf["name"] + "_value"], r[rate["name"] + "_value"] if rate else None)
            if key not in best or r[metric] < best[key][1]:
                best[key] = (r[cat["name"]], r[metric])
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
        ax.set_title(f"best {cat['name']} by {metric}" +
                     (" (* some schedule failed there)" if incomplete else ""))
        save(fig, args.out, "winner_heatmap", written)
        numbers.append(f"# best {cat['name']} per ({buf['name']}, link rate)")
        for rv in rates:
            numbers.append((f"{fmt_rate(rv)}: " if rate else "") + ", ".join(
                f"{fmt_bytes(b)}={best[(b, rv)][0]}" + ("*" if (b, rv) in incomplete else "")
                for b in bufs if (b, rv) in best))

    # 3. Pareto front: buffer bytes vs slowdown against co-located training.
    slow = "slowdown_vs_colocated"
    pts = [(buffer_of(r, buf), r.get(slow), r[cat["name"]] if cat else "point") for r in rows]
    pts = [p for p in pts if p[0] is not None and p[1] is not None]
    if pts:
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
        for label in sorted({p[2] for p in pts}):
            sel = [p for p in pts if p[2] == label]
            ax.scatter([p[0] for p in sel], [p[1] for p in sel], label=label, s=22)
        front, best_slow = [], math.inf
        for b, s, label in sorted(pts, key=lambda p: (p[0], p[1])):
            if s < best_slow:
                front.append((b, s, label))
                best_slow = s
        ax.step([p[0] for p in front], [p[1] for p in front], where="post", color="black",
                linewidth=1.2, label="Pareto front")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        xt = sorted({p[0] for p in pts})
        step = max(1, len(xt) // 8)
        ax.set_xticks(xt[::step])
        ax.set_xticklabels([fmt_bytes(t) for t in xt[::step]], rotation=45)
        ax.minorticks_off()
        ax.set_xlabel("buffer bytes per aggregator")
        ax.set_ylabel("slowdown vs co-located training")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("buffer vs slowdown (lower left is better)")
        save(fig, args.out, "pareto", written)
        numbers.append("# Pareto front (buffer bytes, slowdown vs co-located, " +
                       (cat["name"] if cat else "point") + ")")
        numbers.extend(f"{fmt_bytes(b)} {s:.6g} {label}" for b, s, label in front)

    # 4. Variants side by side (category other than schedule, e.g. the ablation): one bar
    # per variant, one bar group per combination of the other axes.
    if buf is None and cat is not None:
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
