#!/usr/bin/python3
"""The regime map of a crossover sweep: the winning schedule per (buffer, gradient), one
panel per (link rate, alignment), from an `aggnet sweep` results database.

    /usr/bin/python3 scripts/plot_regime_map.py OUT/results.db [MORE.db ...] --out OUT/plots
        [--metric KEY] [--rows AXIS] [--name NAME] [--only SCHEDULE,...]

Needs the axes `schedule`, `buffer` and the row axis (`gradient`, or `--rows platform`
for a map over platforms: rows ordered by the number in the platform's file name, e.g.
synthetic_27 before synthetic_243); `link_rate` (a set:...bandwidth axis) and `alignment`
are optional panel axes. Further databases add their points, read by the first one's axis
columns (sweeps/regime_scale_plans.yaml, whose bundle axis sets platform and schedule
together). A cell is coloured by the schedule with the lowest metric (default
comm_time_to_eps_s) and labelled with its lead over the runner-up (runner-up / winner); a black bar marks a crossover (the winner changes between two
buffer sizes), dashed and thin for a near tie (margin under 5 %), thicker the larger the
margin (the smaller lead of the two winners next to it). Cells where a point failed are hatched. The run's parameters (platform,
chunk, eps, flow control) are printed under the title. Writes regime_map.{png,svg} and
regime_map.txt (the numbers behind every cell); `--name` changes the files' stem, `--only`
keeps the named schedules (a schedule file by its stem). Exit status 3 when matplotlib is
missing, 2 on a database without the needed axes.
"""
import argparse
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
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"matplotlib is not available ({e}); install python3-matplotlib")
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_sweep import (SCHEDULE_COLORS, fmt_bytes, metric_words, num,  # noqa: E402
                        run_parameters, schedule_words, short_name)


def load_all(dbs, rows_axis):
    """The first database's axes, every database's points."""
    rows, axes, rate = load(dbs[0], rows_axis)
    for db in dbs[1:]:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        rows += [dict(r) for r in con.execute("SELECT * FROM points")]
    return rows, axes, rate


def load(db, rows_axis):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    axes = {r["option"]: dict(r) for r in con.execute("SELECT name, option, kind FROM axes")}
    rate = next((a for o, a in axes.items() if o.startswith("set:") and o.endswith("bandwidth")),
                None)
    need = {"schedule", "buffer", rows_axis}
    if not need <= set(axes):
        print(f"{db}: the regime map needs the axes {', '.join(sorted(need))}")
        sys.exit(2)
    rows = [dict(r) for r in con.execute("SELECT * FROM points")]
    return rows, axes, rate


def panel_of(r, axes, rate):
    return (num(r, rate) if rate else None,
            r.get(axes["alignment"]["name"]) if "alignment" in axes else None)


def row_of(r, axes, rows_axis):
    """A point's row: a number in base units (gradient), or a platform's file stem."""
    axis = axes[rows_axis]
    return num(r, axis) if axis["kind"] != "text" else short_name(r[axis["name"]])


def row_order(value):
    """Numbers by value; names by the numbers in them (synthetic_27 < synthetic_243)."""
    if isinstance(value, (int, float)):
        return (value,)
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"(\d+)", value) if p)


def row_label(value):
    return fmt_bytes(value) if isinstance(value, (int, float)) else value


def cells(rows, axes, rate, metric, rows_axis="gradient"):
    """{(rate, alignment): {(buffer, row): {schedule: metric or None}}}, row = gradient or
    the `rows_axis` value."""
    out = {}
    for r in rows:
        panel = panel_of(r, axes, rate)
        key = (num(r, axes["buffer"]), row_of(r, axes, rows_axis))
        ok = r["status"] == "ok" and r.get(metric) is not None
        out.setdefault(panel, {}).setdefault(key, {})[short_name(r[axes["schedule"]["name"]])] = (
            r[metric] if ok else None)
    return out


def bounds(rows, axes, rate, rows_axis="gradient"):
    """{(rate, alignment): {(buffer, row): bound_s}} (the physical bound of the
    platform and gradient, docs/physical-bound.md); empty for databases without it."""
    out = {}
    for r in rows:
        if r.get("bound_s") is not None:
            key = (num(r, axes["buffer"]), row_of(r, axes, rows_axis))
            out.setdefault(panel_of(r, axes, rate), {})[key] = r["bound_s"]
    return out


def efficiency(values, bound):
    win = winner(values)[0]
    return bound / values[win] if win and bound and values[win] else None


def winner(values):
    done = sorted((v, s) for s, v in values.items() if v is not None)
    if not done:
        return None, None, False
    lead = done[1][0] / done[0][0] if len(done) > 1 and done[0][0] > 0 else None
    return done[0][1], lead, any(v is None for v in values.values())


ALIGNMENT_WORDS = {"auto": "arrival-aligned sends", "none": "no send alignment",
                   "offsets": "arrival-aligned sends"}


def panel_title(panel):
    rate, alignment = panel
    parts = []
    if rate is not None:
        parts.append(f"{rate / 1e9:g} Gb/s WAN links")
    if alignment is not None:
        parts.append(ALIGNMENT_WORDS.get(alignment, f"alignment {alignment}"))
    return ", ".join(parts) or "all points"


def two_line_bytes(b):
    value, unit = fmt_bytes(b).split(" ")
    return f"{value}\n{unit}"


# Crossover bars by margin (the smaller of the two winners' leads next to the bar): a
# near tie is a thin dashed line, a clear change a thick bar.
MARGINS = ((1.05, {"linewidth": 1.2, "linestyle": (0, (2, 1.5))}, "near tie (margin < 5 %)"),
           (1.5, {"linewidth": 2.5, "linestyle": "-"}, "margin 5-50 %"),
           (math.inf, {"linewidth": 4.5, "linestyle": "-"}, "margin over 50 %"))


def crossover_style(margin):
    for limit, style, _ in MARGINS:
        if margin is None or margin < limit:
            return style
    return MARGINS[-1][1]


def draw(ax, grid, colors, cell_bounds, bufs, grads):
    """Cells coloured by the winner, its lead and efficiency written in; crossovers as thick
    bars. `bufs` and `grads`: the columns and rows of every panel (the axes are shared)."""
    best = {}
    for (b, g), values in grid.items():
        win, lead, incomplete = winner(values)
        best[(b, g)] = win
        x, y = bufs.index(b), grads.index(g)
        ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=colors.get(win, "white"),
                                   edgecolor="white", hatch="//" if incomplete else None))
        label = "" if lead is None else f"{lead:.2f}" if lead < 10 else f"{lead:.3g}"
        eff = efficiency(values, cell_bounds.get((b, g)))
        if eff is not None:
            label += f"\n{100 * eff:.0f}%" if eff >= 0.0995 else f"\n{100 * eff:.1f}%"
        if label:
            ax.text(x, y, label, ha="center", va="center", fontsize=7.5, linespacing=1.1)
    crossovers = []
    for y, g in enumerate(grads):
        for x in range(1, len(bufs)):
            a, b = best.get((bufs[x - 1], g)), best.get((bufs[x], g))
            if a and b and a != b:
                # The crossover's margin: the smaller lead of the two winners next to it.
                leads = [winner(grid[(bufs[i], g)])[1] for i in (x - 1, x)]
                margin = min((v for v in leads if v is not None), default=None)
                ax.plot([x - 0.5, x - 0.5], [y - 0.5, y + 0.5], color="black",
                        solid_capstyle="butt", zorder=5, **crossover_style(margin))
                crossovers.append((g, bufs[x - 1], bufs[x], a, b))
    ax.set_xlim(-0.5, len(bufs) - 0.5)
    ax.set_ylim(-0.5, len(grads) - 0.5)
    ax.set_xticks(range(len(bufs)))
    ax.set_xticklabels([two_line_bytes(b) for b in bufs], fontsize=8.5)
    ax.set_yticks(range(len(grads)))
    ax.set_yticklabels([row_label(g) for g in grads], fontsize=9.5)
    ax.tick_params(length=0)
    return crossovers


def fit_width(fig, legend):
    """Widens the figure when the legend (long names, "never fastest") is wider than it."""
    fig.canvas.draw()
    needed_in = legend.get_window_extent().width / fig.dpi + 0.2
    if needed_in > fig.get_figwidth():
        fig.set_figwidth(needed_in)


def numbers(data, metric, cell_bounds, rows_axis="gradient"):
    lines = [f"# winner per (buffer, {rows_axis}); {metric} of every schedule (s); lead = "
             "runner-up / winner; bound = the physical bound (s), efficiency = bound / winner"]
    for panel in sorted(data, key=lambda p: (p[0] or 0, str(p[1]))):
        lines.append(f"[{panel_title(panel)}]")
        for (b, g), values in sorted(data[panel].items(),
                                     key=lambda kv: (row_order(kv[0][1]), kv[0][0])):
            best, lead, _ = winner(values)
            each = " ".join(f"{s}={v:.6g}" if v is not None else f"{s}=failed"
                            for s, v in sorted(values.items()))
            bound = cell_bounds.get(panel, {}).get((b, g))
            eff = efficiency(values, bound)
            if eff is not None:
                each += f" bound={bound:.6g} efficiency={eff:.3f}"
            cell = f"{rows_axis} {row_label(g)} buffer {fmt_bytes(b)}: {best}"
            lines.append(f"{cell} (lead {lead:.3g}x) {each}" if lead else f"{cell} {each}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metric", default="comm_time_to_eps_s")
    ap.add_argument("--rows", default="gradient", help="the row axis: gradient or platform")
    ap.add_argument("--name", default="regime_map", help="the output files' stem")
    ap.add_argument("--only", help="comma-separated schedules to keep (default: all)")
    args = ap.parse_args()
    rows, axes, rate = load_all(args.db, args.rows)
    if args.only:
        keep = set(args.only.split(","))
        rows = [r for r in rows if short_name(r[axes["schedule"]["name"]]) in keep]
    data = cells(rows, axes, rate, args.metric, args.rows)
    cell_bounds = bounds(rows, axes, rate, args.rows)
    schedules = sorted({s for grid in data.values() for v in grid.values() for s in v})
    colors = {s: SCHEDULE_COLORS.get(s, plt.get_cmap("tab10")(i % 10))
              for i, s in enumerate(schedules)}
    panels = sorted(data, key=lambda p: (p[0] or 0, str(p[1])))
    rates = sorted({p[0] for p in panels}, key=lambda r: r or 0)
    aligns = sorted({p[1] for p in panels}, key=str)
    ncols = len(aligns)
    fig, axs = plt.subplots(len(rates), ncols, squeeze=False, sharex=True, sharey=True,
                            figsize=(7.4 * ncols + 0.8, 2.9 * len(rates) + 3.2))
    crossings, winners, failed = [], set(), False
    bufs = sorted({b for grid in data.values() for b, _ in grid})
    grads = sorted({g for grid in data.values() for _, g in grid}, key=row_order)
    for panel in panels:
        ax = axs[rates.index(panel[0])][aligns.index(panel[1])]
        crossings += [(panel,) + c
                      for c in draw(ax, data[panel], colors, cell_bounds.get(panel, {}), bufs,
                                    grads)]
        winners |= {winner(v)[0] for v in data[panel].values()}
        failed = failed or any(winner(v)[2] for v in data[panel].values())
        ax.set_title(panel_title(panel), fontsize=11)
    for ax in axs[-1]:
        ax.set_xlabel("FPGA buffer per site", fontsize=10)
    for row in axs:
        row[0].set_ylabel("gradient size" if args.rows == "gradient" else args.rows, fontsize=10)
    handles = [Patch(facecolor=colors[s],
                     label=schedule_words(s) + ("" if s in winners else "  (never fastest)"))
               for s in schedules]
    handles += [Line2D([], [], color="black", label=f"crossover, {words}", **style)
                for _, style, words in MARGINS]
    if failed:
        handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//",
                             label="a schedule failed in this cell"))
    legend = fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=9.5, frameon=True,
               title="cell colour = fastest schedule;  top number = runner-up time / fastest "
                     "time;  % = physical bound / fastest time",
               title_fontsize=9.5, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"Fastest schedule by {metric_words(args.metric).split(' (')[0]}", fontsize=13, y=0.995)
    fig.text(0.5, 0.955, run_parameters(rows, args.db[0], skip={"buffer", "gradient", "schedule",
                                                             "alignment", args.rows}),
             ha="center", va="top", fontsize=9.5, color="#333333")
    legend_rows = (len(handles) + 1) // 2
    bottom = (0.45 + 0.2 * legend_rows) / fig.get_figheight()
    fit_width(fig, legend)
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.75 / fig.get_figheight()))
    os.makedirs(args.out, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(args.out, f"{args.name}.{ext}"), dpi=110)
    with open(os.path.join(args.out, f"{args.name}.txt"), "w") as f:
        f.write(numbers(data, args.metric, cell_bounds, args.rows))
        f.write(f"# crossovers (panel, {args.rows}: buffer below -> buffer above: winner below "
                "-> winner above)\n")
        for panel, g, b0, b1, a, b in crossings:
            f.write(f"[{panel_title(panel)}] {args.rows} {row_label(g)}: {fmt_bytes(b0)} -> "
                    f"{fmt_bytes(b1)}: {a} -> {b}\n")
    print(f"wrote {args.out}/{args.name}.png, .svg and .txt")


if __name__ == "__main__":
    main()
