#!/usr/bin/python3
"""The regime map of a crossover sweep: the winning schedule per (buffer, gradient), one
panel per (link rate, alignment), from an `aggnet sweep` results database.

    /usr/bin/python3 scripts/plot_regime_map.py OUT/results.db --out OUT/plots [--metric KEY]

Needs the axes `schedule`, `buffer` and `gradient`; `link_rate` (a set:...bandwidth axis)
and `alignment` are optional panel axes. A cell is coloured by the schedule with the
lowest metric (default comm_time_to_eps_s) and labelled with its lead over the runner-up
(runner-up / winner). Cells where a point failed are hatched. Writes regime_map.{png,svg}
and regime_map.txt (the numbers behind every cell). Exit status 3 when matplotlib is
missing, 2 on a database without the needed axes.
"""
import argparse
import os
import sqlite3
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"matplotlib is not available ({e}); install python3-matplotlib")
    sys.exit(3)


def fmt_bytes(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:g} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{b:g} B"


def short_name(schedule):
    """Schedule files by their stem: sweeps/schedules/triad_pair_16mib.yaml -> triad_pair_16mib."""
    base = os.path.basename(schedule)
    return base.rsplit(".", 1)[0] if base.endswith((".yaml", ".yml")) else schedule


def load(db, metric):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    axes = {r["option"]: r["name"] for r in con.execute("SELECT name, option FROM axes")}
    rate = next((n for o, n in axes.items() if o.startswith("set:") and o.endswith("bandwidth")), None)
    need = {"schedule", "buffer", "gradient"}
    if not need <= set(axes):
        print(f"{db}: the regime map needs the axes {', '.join(sorted(need))}")
        sys.exit(2)
    rows = [dict(r) for r in con.execute("SELECT * FROM points")]
    return rows, axes, rate


def cells(rows, axes, rate, metric):
    """{(rate, alignment): {(buffer, gradient): {schedule: metric or None}}}."""
    out = {}
    for r in rows:
        panel = (r.get(f"{rate}_value") if rate else None,
                 r.get(axes["alignment"]) if "alignment" in axes else None)
        key = (r[f"{axes['buffer']}_value"], r[f"{axes['gradient']}_value"])
        ok = r["status"] == "ok" and r.get(metric) is not None
        out.setdefault(panel, {}).setdefault(key, {})[short_name(r[axes["schedule"]])] = (
            r[metric] if ok else None)
    return out


def winner(values):
    done = sorted((v, s) for s, v in values.items() if v is not None)
    if not done:
        return None, None, False
    lead = done[1][0] / done[0][0] if len(done) > 1 and done[0][0] > 0 else None
    return done[0][1], lead, any(v is None for v in values.values())


def panel_title(panel):
    rate, alignment = panel
    parts = []
    if rate is not None:
        parts.append(f"{rate / 1e9:g} Gb/s")
    if alignment is not None:
        parts.append(f"alignment {alignment}")
    return ", ".join(parts) or "all points"


def draw(ax, grid, schedules, colors):
    bufs = sorted({b for b, _ in grid})
    grads = sorted({g for _, g in grid})
    for (b, g), values in grid.items():
        best, lead, incomplete = winner(values)
        x, y = bufs.index(b), grads.index(g)
        color = colors[schedules.index(best)] if best else "white"
        ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=color, edgecolor="white",
                                   hatch="//" if incomplete else None))
        if lead is not None:
            ax.text(x, y, f"{lead:.3g}x", ha="center", va="center", fontsize=6.5)
    ax.set_xlim(-0.5, len(bufs) - 0.5)
    ax.set_ylim(-0.5, len(grads) - 0.5)
    ax.set_xticks(range(len(bufs)))
    ax.set_xticklabels([fmt_bytes(b) for b in bufs], rotation=60, fontsize=7)
    ax.set_yticks(range(len(grads)))
    ax.set_yticklabels([fmt_bytes(g) for g in grads], fontsize=8)


def numbers(data, metric):
    lines = [f"# winner per (buffer, gradient); {metric} of every schedule (s); lead = "
             "runner-up / winner"]
    for panel in sorted(data, key=lambda p: (p[0] or 0, str(p[1]))):
        lines.append(f"[{panel_title(panel)}]")
        for (b, g), values in sorted(data[panel].items(), key=lambda kv: (kv[0][1], kv[0][0])):
            best, lead, _ = winner(values)
            each = " ".join(f"{s}={v:.6g}" if v is not None else f"{s}=failed"
                            for s, v in sorted(values.items()))
            lines.append(f"gradient {fmt_bytes(g)} buffer {fmt_bytes(b)}: {best} "
                         f"(lead {lead:.3g}x) {each}" if lead else
                         f"gradient {fmt_bytes(g)} buffer {fmt_bytes(b)}: {best} {each}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metric", default="comm_time_to_eps_s")
    args = ap.parse_args()
    rows, axes, rate = load(args.db, args.metric)
    data = cells(rows, axes, rate, args.metric)
    schedules = sorted({s for grid in data.values() for v in grid.values() for s in v})
    colors = ListedColormap(plt.get_cmap("tab10").colors).colors[:len(schedules)]
    panels = sorted(data, key=lambda p: (p[0] or 0, str(p[1])))
    rates = sorted({p[0] for p in panels}, key=lambda r: r or 0)
    aligns = sorted({p[1] for p in panels}, key=str)
    fig, axs = plt.subplots(len(rates), len(aligns), squeeze=False, sharex=True, sharey=True,
                            figsize=(4.6 * len(aligns) + 1.5, 2.6 * len(rates) + 1.6))
    for panel in panels:
        ax = axs[rates.index(panel[0])][aligns.index(panel[1])]
        draw(ax, data[panel], schedules, colors)
        ax.set_title(panel_title(panel), fontsize=9)
    for ax in axs[-1]:
        ax.set_xlabel("FPGA buffer per site")
    for row in axs:
        row[0].set_ylabel("gradient G")
    fig.legend(handles=[Patch(facecolor=c, label=s) for s, c in zip(schedules, colors)],
               loc="upper center", ncol=min(3, len(schedules)), fontsize=8, frameon=False)
    fig.suptitle(f"fastest schedule by {args.metric} (cell label: runner-up / winner)",
                 fontsize=10, y=0.005, va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 0.9))
    os.makedirs(args.out, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(args.out, f"regime_map.{ext}"), dpi=130)
    with open(os.path.join(args.out, "regime_map.txt"), "w") as f:
        f.write(numbers(data, args.metric))
    print(f"wrote {args.out}/regime_map.png, .svg and .txt")


if __name__ == "__main__":
    main()
