#!/usr/bin/env python3
"""Regenerate platforms/nine_city.yaml and platforms/nine_city_full_mesh.yaml.

Inputs (the reference data set, see its README.md for sources):
  cities.csv        code,name,continent,lat_deg,lng_deg,coord_source
  links_wan.csv     a,b,rtt_ms,jitter_ms,testnet_bandwidth_gbps,label,source   (12 links)
  rtt_full_mesh.csv a,b,rtt_ms,label                                           (36 pairs)

Conventions (also stated in the generated files and platforms/README.md):
  delay  = RTT / 2, computed in exact decimal arithmetic (66.93 ms -> 33.465 ms);
  jitter = jitter_ms / 2: the data's jitter is a round-trip figure per link, taken as
           the standard deviation of the extra one-way delay split evenly over the two
           directions. Links without a jitter figure (Azure 'A' rows) get none.

The YAML files are committed (CI has no access to the data directory); rerun this after
changing the data:  /usr/bin/python3 scripts/make_platforms.py [--data DIR] [--check]

Synthetic platforms for benchmarks (benchmarks/run.sh; not committed):
  make_platforms.py --synthetic N [--seed S] --out DIR   writes DIR/synthetic_N.yaml
N random sites spread over three continents (uniform in a box per continent, N/3 each),
links between each site and its NEIGHBOURS nearest sites plus a minimum spanning tree
(so the graph is connected; it carries the shortest ocean crossings) plus the shortest
link between each pair of continents; delay = great-circle distance x FIBRE_FACTOR / the
speed of light in fibre (2e5 km/s). N is 3 to MAX_SITES = 10,000 (the simulator's scale
target is 1,000 sites): the distance matrix grows with N^2, and 10,000 sites take about
3 minutes and 6 GB (3,000: 15 s and 0.6 GB).

--check writes nothing: it compares the text this run would write with the existing file(s)
(the two nine-city files, or DIR/synthetic_N.yaml with --synthetic) and exits 1 if one
differs or is missing.

Bad input (an option's value, a data file, an output path that is not a directory or an
existing output file that is not a regular file: a symbolic link, FIFO, device or directory)
is refused with one line on stderr and exit status 2, nothing written. Each file is written
to a temporary file in DIR and renamed over the old one, so a failure leaves it unchanged.
"""
import argparse
import csv
import math
import os
import random
import stat
import sys
import tempfile
from decimal import Decimal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = "/work/shared/data"

LABELS = {
    "D": "DoubleZero testnet committed link RTT",
    "A": "Azure backbone inter-region RTT P95, 30 days to 2026-07-30",
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def ms(value):
    """Exact decimal milliseconds as a YAML quantity: Decimal('33.465') -> '33.465ms'."""
    d = Decimal(value).normalize()
    text = format(d, "f")
    return text + "ms"


def half(value):
    return Decimal(value) / 2


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


HEADER_DEFAULTS = """\
# Defaults for every site and link; a site's own fpga:/cluster:/switch: maps and a
# link's own keys override them. Keys are the module parameter tables
# (modules/core/params_info.cpp; `aggnet params` lists them).
defaults:
  link:
    # 100 Gb/s: DoubleZero mainnet-beta NYC-LON has a 100 Gb/s link (64.16 ms RTT);
    # every testnet WAN link is 10 Gb/s. Sweeps vary this (--set defaults.link.bandwidth=10Gbps).
    bandwidth: 100Gbps
    # Underlay MTU minimum of 2048 B (DoubleZero contributor requirements; testnet WAN
    # links run MTU 9000, exchange links 2048).
    mtu: 2048B
    # Framing estimate: preamble+IFG 20 + Ethernet 18 + IPv4 20 + UDP 8 + aggregation 14.
    header: 80B
    # No jitter unless a link states one.
    jitter: 0ms
  switch:
    latency: 0ns           # edge switch forwarding latency (Arista 7280CR3A; not modelled yet)
  fpga:
    # AMD V80 aggregator (estimates, see modules/fpga/params.h): 512-bit datapath at
    # 500 MHz = 32 GB/s; 64 MiB buffer = on-chip SRAM scale ("tens of MB"); the card's
    # 32 GB HBM is the other end of a buffer sweep (--set defaults.fpga.buffer=32GB).
    datapath_width: 512    # bits
    clock: 500MHz
    latency_cycles: 64
    buffer: 64MiB
  cluster:
    # Illustrative training step of a large model (our estimate, modules/cluster/params.h).
    compute_time: 1s
    access_bandwidth: 400Gbps
    access_delay: 2us

# The co-located reference (the same clusters in one data centre, on one fabric switch):
# a site-to-site path of 2 us one-way, 400 Gb/s (our estimate of an intra-DC path).
colocated:
  link: {delay: 2us, bandwidth: 400Gbps}
"""


def sites_block(cities):
    out = ["sites:"]
    for c in cities:
        out.append(f"  # {c['coord_source']}")
        out.append(
            f"  - {{code: {c['code']}, name: {quote(c['name'])}, continent: {c['continent']}, "
            f"lat_deg: {c['lat_deg']}, lng_deg: {c['lng_deg']}}}"
        )
    return "\n".join(out)


def link_line(a, b, rtt, jitter, source):
    fields = [f"a: {a}", f"b: {b}", f"delay: {ms(half(rtt))}"]
    if jitter:
        fields.append(f"jitter: {ms(half(jitter))}")
    fields.append(f"source: {quote(source)}")
    return "  - {" + ", ".join(fields) + "}"


def wan_source(row):
    return f"{row['label']}: {row['source']}; RTT {row['rtt_ms']} ms"


def nine_city(cities, wan):
    lines = [
        "# GENERATED by scripts/make_platforms.py from the reference data set",
        "# (cities.csv, links_wan.csv); edit the data or the script, not this file.",
        "#",
        "# Nine cities on three continents joined by a realistic partial mesh: the seven",
        "# DoubleZero testnet links (label D: a ring NYC-LON-SIN-TYO-LAX-NYC with AMS and",
        "# FRA spurs; committed RTT, telemetry P95 within ~1.5 % for Sept 2025) plus five",
        "# Azure backbone links (label A: inter-region RTT P95 over 30 days to 2026-07-30)",
        "# attaching Chicago and Mumbai and closing AMS-FRA. Routing is by shortest delay,",
        "# as the network's IS-IS metric is the RTT.",
        "#",
        "# delay  = RTT / 2 (one-way propagation on these symmetric paths), exact decimal.",
        "# jitter = jitter_ms / 2: the data's per-link jitter is a round-trip figure, taken",
        "#          as the std-dev of the extra one-way delay split over the two directions.",
        "#          Azure (A) links have no jitter figure and use defaults.link.jitter.",
        "# Testnet link bandwidth is 10 Gb/s on every D link; the default below is 100 Gb/s.",
        "name: nine_city",
        "description: Nine-city partial-mesh WAN (DoubleZero testnet links + Azure backbone RTTs)",
        "",
        HEADER_DEFAULTS,
        sites_block(cities),
        "",
        "# One-way delay = RTT/2; `source` cites the RTT.",
        "links:",
    ]
    for r in wan:
        testnet = (
            f" (testnet link {r['testnet_bandwidth_gbps']} Gb/s, RTT jitter {r['jitter_ms']} ms)"
            if r["testnet_bandwidth_gbps"]
            else ""
        )
        lines.append(f"  # {r['a']}-{r['b']}: RTT {r['rtt_ms']} ms, {r['label']}{testnet}")
        lines.append(link_line(r["a"], r["b"], r["rtt_ms"], r["jitter_ms"], wan_source(r)))
    return "\n".join(lines) + "\n"


def full_mesh(cities, wan, mesh):
    by_pair = {frozenset((r["a"], r["b"])): r for r in wan}
    lines = [
        "# GENERATED by scripts/make_platforms.py from the reference data set",
        "# (cities.csv, rtt_full_mesh.csv, links_wan.csv); edit the data or the script.",
        "#",
        "# The nine cities with a dedicated link between every pair (36 links): the",
        "# DoubleZero testnet committed RTT where such a link exists (label D), else the",
        "# Azure backbone inter-region RTT P95 over 30 days to 2026-07-30 (label A; East US",
        "# stands for New York, West US for Los Angeles, Central India for Mumbai).",
        "# delay = RTT / 2; jitter = jitter_ms / 2 for pairs that are links of the partial",
        "# mesh with a jitter figure (links_wan.csv), else none. See nine_city.yaml.",
        "name: nine_city_full_mesh",
        "description: Nine cities, dedicated link between every pair (DoubleZero / Azure RTTs)",
        "",
        HEADER_DEFAULTS,
        sites_block(cities),
        "",
        "links:",
    ]
    for r in mesh:
        w = by_pair.get(frozenset((r["a"], r["b"])))
        if w is not None:
            source = wan_source(w)
            jitter = w["jitter_ms"]
        else:
            source = f"{r['label']}: {LABELS[r['label']]}; RTT {r['rtt_ms']} ms"
            jitter = ""
        lines.append(link_line(r["a"], r["b"], r["rtt_ms"], jitter, source))
    return "\n".join(lines) + "\n"


# Synthetic platforms: continent boxes (lat_min, lat_max, lng_min, lng_max).
CONTINENTS = {
    "north_america": (25.0, 50.0, -123.0, -70.0),
    "europe": (37.0, 60.0, -9.0, 30.0),
    "asia": (1.0, 45.0, 72.0, 142.0),
}
EARTH_RADIUS_KM = 6371.0
FIBRE_KM_PER_MS = 200.0  # light in glass, about 2/3 c
FIBRE_FACTOR = 1.5       # fibre path length over the great-circle distance (route detours)
NEIGHBOURS = 3


def great_circle_km(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def synthetic_links(pos, continent):
    """Undirected edges (i, j), i < j: k nearest neighbours, a minimum spanning tree, and
    the shortest link between each pair of continents."""
    n = len(pos)
    dist = [[great_circle_km(pos[i], pos[j]) for j in range(n)] for i in range(n)]
    edges = set()
    for i in range(n):
        near = sorted((dist[i][j], j) for j in range(n) if j != i)[:NEIGHBOURS]
        edges.update((min(i, j), max(i, j)) for _, j in near)
    in_tree, best = {0}, {j: (dist[0][j], 0) for j in range(1, n)}  # Prim
    while best:
        j = min(best, key=lambda x: best[x][0])
        edges.add((min(j, best[j][1]), max(j, best[j][1])))
        in_tree.add(j)
        del best[j]
        for x in best:
            if dist[j][x] < best[x][0]:
                best[x] = (dist[j][x], j)
    names = sorted(set(continent))
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            pairs = [(dist[i][j], min(i, j), max(i, j)) for i in range(n) for j in range(n)
                     if continent[i] == names[a] and continent[j] == names[b]]
            if pairs:
                edges.add(min(pairs)[1:])
    return sorted(edges), dist


def synthetic(n, seed):
    rng = random.Random(seed)
    boxes = list(CONTINENTS.items())
    continent, pos = [], []
    for i in range(n):
        name, (la0, la1, lo0, lo1) = boxes[i % len(boxes)]
        continent.append(name)
        pos.append((round(rng.uniform(la0, la1), 4), round(rng.uniform(lo0, lo1), 4)))
    edges, dist = synthetic_links(pos, continent)
    width = len(str(n))
    codes = [f"s{i:0{width}d}" for i in range(n)]
    lines = [
        f"# GENERATED by scripts/make_platforms.py --synthetic {n} --seed {seed} (benchmarks).",
        f"# {n} random sites on three continents; links: {NEIGHBOURS} nearest neighbours, a",
        "# minimum spanning tree and the shortest link between each pair of continents;",
        f"# delay = great-circle distance x {FIBRE_FACTOR} / {FIBRE_KM_PER_MS:.0f} km/ms.",
        f"name: synthetic_{n}",
        f"description: Synthetic {n}-site platform (seed {seed})",
        "",
        HEADER_DEFAULTS,
        "sites:",
    ]
    for i in range(n):
        lines.append(f"  - {{code: {codes[i]}, name: \"site {i}\", continent: {continent[i]}, "
                     f"lat_deg: {pos[i][0]}, lng_deg: {pos[i][1]}}}")
    lines += ["", "links:"]
    for i, j in edges:
        delay_us = max(1, round(dist[i][j] * FIBRE_FACTOR / FIBRE_KM_PER_MS * 1000))
        lines.append(f"  - {{a: {codes[i]}, b: {codes[j]}, delay: {delay_us}us}}")
    return "\n".join(lines) + "\n"


PROG = "make_platforms.py"
MAX_SITES = 10_000


class InputError(Exception):
    """Bad input: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def output_dir(out, check):
    """`out` as the output directory, created unless `check`; InputError if it cannot be."""
    if out == "":
        raise InputError("--out: expected a directory, got ''")
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"--out: expected a directory, got {out!r} (not a directory)")
    if not check:
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            raise InputError(f"--out: expected a directory, got {out!r} ({e.strerror})")
    if not os.path.isdir(out):
        what = "an existing directory" if check else "a directory"
        raise InputError(f"--out: expected {what}, got {out!r}")
    return out


def existing_file(path):
    """True if `path` is a regular file, False if nothing is there; InputError if something
    else is (a symbolic link, FIFO, device or directory is never read or written through)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise InputError(f"{path}: expected a regular file or no file ({e.strerror})")
    if stat.S_ISREG(mode):
        return True
    kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode) else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    raise InputError(f"{path}: expected a regular file or no file, got {kind}")


def write_file(path, text):
    """Writes `text` to a temporary file beside `path`, then renames it over `path`."""
    folder, name = os.path.split(path)
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_data(folder):
    """The three reference CSV files; InputError if one is missing or malformed."""
    tables = {}
    for name, rows in (("cities.csv", 9), ("links_wan.csv", 12), ("rtt_full_mesh.csv", 36)):
        path = os.path.join(folder, name)
        try:
            tables[name] = read_csv(path)
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise InputError(f"--data: expected a directory holding {name}, got {folder!r} "
                             f"({getattr(e, 'strerror', None) or e})")
        if len(tables[name]) != rows:
            raise InputError(f"{path}: expected {rows} rows, got {len(tables[name])}")
    return tables["cities.csv"], tables["links_wan.csv"], tables["rtt_full_mesh.csv"]


def outputs(args):
    """{file name: text} of this run (generated before any file is touched)."""
    if args.synthetic is not None:
        return {f"synthetic_{args.synthetic}.yaml": synthetic(args.synthetic, args.seed)}
    cities, wan, mesh = read_data(args.data)
    try:
        return {
            "nine_city.yaml": nine_city(cities, wan),
            "nine_city_full_mesh.yaml": full_mesh(cities, wan, mesh),
        }
    except (KeyError, TypeError, ArithmeticError, ValueError) as e:
        raise InputError(f"--data: expected the columns of this script's docstring in "
                         f"{args.data!r}'s CSV files ({type(e).__name__}: {e})")


def run(argv):
    ap = Parser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="reference data directory")
    ap.add_argument("--out", default=os.path.join(REPO, "platforms"), help="output directory")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the file(s) would change")
    ap.add_argument("--synthetic", type=int, metavar="N",
                    help=f"write DIR/synthetic_N.yaml (3 <= N <= {MAX_SITES})")
    ap.add_argument("--seed", type=int, default=1, help="seed of --synthetic")
    args = ap.parse_args(argv)
    if args.synthetic is not None and not 3 <= args.synthetic <= MAX_SITES:
        raise InputError(f"--synthetic: expected 3 to {MAX_SITES} sites, got {args.synthetic}")
    out = output_dir(args.out, args.check)
    paths = {name: os.path.join(out, name)
             for name in ([f"synthetic_{args.synthetic}.yaml"] if args.synthetic is not None
                          else ["nine_city.yaml", "nine_city_full_mesh.yaml"])}
    exists = {name: existing_file(path) for name, path in paths.items()}
    texts = outputs(args)
    if args.check:
        stale = []
        for name, text in texts.items():
            old = None
            if exists[name]:
                try:
                    with open(paths[name]) as f:
                        old = f.read()
                except (OSError, UnicodeDecodeError) as e:
                    raise InputError(f"{paths[name]}: expected a readable text file "
                                     f"({getattr(e, 'strerror', None) or e})")
            if old != text:
                stale.append(name)
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    for name, text in texts.items():
        existing_file(paths[name])  # still no link, FIFO, device or directory there
        try:
            write_file(paths[name], text)
        except OSError as e:
            raise InputError(f"{paths[name]}: cannot write ({e.strerror or e})")
        print(f"wrote {paths[name]}")
    return 0


def main(argv=None):
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except InputError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG}: out of memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
