#!/usr/bin/python3
"""Map of a platform's WAN from `aggnet platform --json`:

    aggnet platform --json platform.json
    /usr/bin/python3 scripts/plot_platform.py platform.json --out wan.png

Sites sit at their coordinates (longitude, latitude; equirectangular) when the platform
gives them, else evenly on a circle; each link is a line labelled with its one-way delay,
its width following its bandwidth.
"""
import argparse
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def positions(sites):
    """(x, y) per site code: longitude and latitude if any site has them, else a circle."""
    if any(s["lat_deg"] or s["lng_deg"] for s in sites):
        return {s["site"]: (s["lng_deg"], s["lat_deg"]) for s in sites}, True
    n = len(sites)
    return {s["site"]: (math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n))
            for i, s in enumerate(sites)}, False


SHORT_DEG = 15  # links shorter than this (in degrees) are listed in a box, not labelled


def segments(p1, p2, geographic):
    """The line(s) of a link: one that crosses the date line is drawn as two, leaving the
    map at one edge and coming back at the other (the way the cable goes)."""
    (x1, y1), (x2, y2) = p1, p2
    if not geographic or abs(x2 - x1) <= 180:
        return [((x1, y1), (x2, y2))]
    shift = 360 if x1 > x2 else -360
    return [((x1, y1), (x2 + shift, y2)), ((x1 - shift, y1), (x2, y2))]


def label_offsets(pos, near_deg=15, distance_pt=22):
    """Label offsets (points): away from the sites within `near_deg` (a cluster such as
    London, Amsterdam and Frankfurt gets its codes fanned out), else up and right."""
    offsets = {}
    for code, (x, y) in pos.items():
        near = [(px, py) for c, (px, py) in pos.items()
                if c != code and math.hypot(px - x, py - y) < near_deg]
        if not near:
            offsets[code] = (6, 6)
            continue
        cx = sum(p[0] for p in near) / len(near)
        cy = sum(p[1] for p in near) / len(near)
        dx, dy = x - cx, y - cy
        norm = math.hypot(dx, dy) or 1.0
        offsets[code] = (distance_pt * dx / norm, distance_pt * dy / norm)
    return offsets


def label_point(p1, p2, placed, width_deg=16, height_deg=5):
    """Where along a link its delay label goes: the middle of its part on the map unless
    another label is there (a label is about `width_deg` x `height_deg`)."""
    (x1, y1), (x2, y2) = p1, p2
    visible = 1.0
    if abs(x2) > 180:  # crosses the date line: the part up to the map's edge
        visible = (math.copysign(180, x2) - x1) / (x2 - x1)
    for t in (0.5, 0.3, 0.7, 0.2, 0.8):
        x, y = x1 + t * visible * (x2 - x1), y1 + t * visible * (y2 - y1)
        if all(abs(x - px) >= width_deg or abs(y - py) >= height_deg for px, py in placed):
            break
    placed.append((x, y))
    return x, y


def plot(doc, out):
    pos, geographic = positions(doc["sites"])
    lats = [y for _, y in pos.values()]
    lat_lo, lat_hi = max(-90, min(lats) - 20), min(90, max(lats) + 15)
    height = 12 * (lat_hi - lat_lo) / 360 + 1.6 if geographic else 8
    fig, ax = plt.subplots(figsize=(12, height))
    placed = []
    rates = [l["bandwidth_gbps"] for l in doc["links"]] or [1]
    top = max(rates)
    short = []
    for l in doc["links"]:
        for (x1, y1), (x2, y2) in segments(pos[l["a"]], pos[l["b"]], geographic):
            ax.plot([x1, x2], [y1, y2], color="#4477aa", alpha=0.7,
                    linewidth=1 + 3 * l["bandwidth_gbps"] / top, zorder=1, solid_capstyle="round")
        (x1, y1), (x2, y2) = segments(pos[l["a"]], pos[l["b"]], geographic)[0]
        if geographic and math.hypot(x2 - x1, y2 - y1) < SHORT_DEG:
            short.append(f"{l['a']}-{l['b']} {l['delay_ms']:.1f} ms")
            continue
        ax.annotate(f"{l['delay_ms']:.1f} ms", label_point((x1, y1), (x2, y2), placed), fontsize=8,
                    color="#223355", ha="center", va="center",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                    zorder=3)
    offsets = label_offsets(pos)
    for s in doc["sites"]:
        x, y = pos[s["site"]]
        ax.scatter([x], [y], s=90, color="#cc6677", edgecolor="black", zorder=4)
        dx, dy = offsets[s["site"]]
        ax.annotate(s["site"], (x, y), xytext=(dx, dy), textcoords="offset points",
                    fontsize=10, weight="bold", zorder=5,
                    ha="left" if dx >= 0 else "right", va="bottom" if dy >= 0 else "top")
    if short:
        ax.text(0.01, 0.02, "short links (one-way delay):\n" + "\n".join(short),
                transform=ax.transAxes, fontsize=8, va="bottom",
                bbox=dict(boxstyle="round", fc="white", ec="#999999"))
    if geographic:
        ax.set_xlim(-180, 180)
        ax.set_ylim(lat_lo, lat_hi)
        ax.set_xlabel("longitude (deg)")
        ax.set_ylabel("latitude (deg)")
        ax.set_aspect("equal", adjustable="box")
        ax.grid(True, color="#dddddd", linewidth=0.5)
    else:
        ax.set_axis_off()
        ax.set_aspect("equal")
        ax.margins(0.1)
    rate_text = (f"{min(rates):g} to {top:g} Gb/s" if min(rates) != top else f"{top:g} Gb/s")
    ax.set_title(f"{doc['platform']}: {len(doc['sites'])} sites, {len(doc['links'])} WAN links "
                 f"({rate_text}; labels: one-way delay)"
                 + ("" if geographic else "\nno coordinates in the platform: sites on a circle"))
    fig.tight_layout()
    fig.savefig(out, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("platform_json", help="output of aggnet platform --json FILE")
    parser.add_argument("--out", required=True, help="image file to write (.png, .svg, .pdf)")
    args = parser.parse_args()
    with open(args.platform_json) as f:
        doc = json.load(f)
    plot(doc, args.out)


if __name__ == "__main__":
    main()
