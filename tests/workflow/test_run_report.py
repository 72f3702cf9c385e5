#!/usr/bin/python3
"""`aggnet run --report FILE.md` through the real binary (docs/run-report.md): the report
and its three figures appear, whole, with the sections and with every number equal to the
run JSON's; bad report paths exit 2 and a failing figure script exits 1, both without
any output.

    test_run_report.py --aggnet BUILD/apps/aggnet     (from the repository root)
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

FIGURES = ("occupancy", "links", "alignment")
SECTIONS = ("## Inputs", "## Against the physical bound", "## FPGA buffer occupancy",
            "## Link utilisation", "## Schedule rounds", "## Alignment offsets")
RUN = ["run", "--schedule", "triads", "--gradient", "64MiB", "--buffer", "16MiB", "-q"]


def check(cond, what):
    if not cond:
        print("FAIL:", what)
    return 0 if cond else 1


def png_size(path):
    """(width, height) from the PNG header; None when it is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def table_rows(md, section):
    """The rows of the first table after `section`, as lists of cells."""
    body = md.split(section, 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in body.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row] for row in rows[2:]]


def check_numbers(md, run):
    failures = 0
    summary = {r[0].strip("`"): r[1] for r in table_rows(md, "## Against the physical bound")}
    for key in ("bound_s", "exact_average_time_s", "efficiency", "comm_time_to_eps_s",
                "time_to_eps_s", "rounds_to_eps", "allreduce_bandwidth_gbps"):
        failures += check(key in run["summary"], f"the run JSON has {key}")
        failures += check(float(summary.get(key, "nan")) == run["summary"].get(key),
                          f"report {key} {summary.get(key)} == JSON {run['summary'].get(key)}")
    failures += check(f"set by: {run['bound']['set_by']}." in md, "the bound's set_by line")
    # NCCL's convention by hand: triads, so n = 3 and busbw = algbw x 4/3; Gb/s -> GB/s.
    algbw = run["summary"]["allreduce_bandwidth_gbps"] / 8
    failures += check(abs(float(summary["algbw (NCCL)"]) - algbw) <= 1e-12 * algbw and
                      abs(float(summary["busbw (NCCL)"]) - algbw * 4 / 3) <= 1e-12 * algbw,
                      f"NCCL algbw {summary.get('algbw (NCCL)')} busbw {summary.get('busbw (NCCL)')}"
                      f" for algbw {algbw}")
    sites = {r[0]: r for r in table_rows(md, "## FPGA buffer occupancy")}
    for s in run["sites"]:
        failures += check(sites[s["site"]][2] == str(s["high_water_bytes"]),
                          f"{s['site']} high-water {sites[s['site']][2]} == {s['high_water_bytes']}")
    links = {r[0]: r for r in table_rows(md, "## Link utilisation")}
    wan = sorted((l for l in run["links"] if l["kind"] == "wan"), key=lambda l: -l["utilization"])
    failures += check(len(links) == 10, f"ten busiest links, got {len(links)}")
    busiest = f"{wan[0]['from']}->{wan[0]['to']}"
    failures += check(float(links[busiest][1]) == wan[0]["utilization"], "busiest link's utilization")
    rounds = table_rows(md, "## Schedule rounds")
    failures += check(len(rounds) == len(run["steps"]), "one rounds row per step")
    for row, step in zip(rounds, run["steps"]):
        failures += check(float(row[3]) == step["round_time_s"] and float(row[4]) == step["end_s"],
                          f"step {step['step']}: round_time_s and end_s")
        failures += check(row[2].count(";") + 1 == len(step["groups"]), "every group listed")
    aligned = table_rows(md, "## Alignment offsets")
    members = [(g["round"], m) for g in run["alignment"] for m in g["members"]]
    failures += check(len(aligned) == len(members) > 0, "one alignment row per member")
    for row, (rnd, m) in zip(aligned, members):
        failures += check(row[0] == str(rnd) and row[2] == m["site"] and
                          float(row[3]) == m["waiting_ms"] and
                          float(row[6]) == m["residual_skew_ms"], f"alignment of {m['site']}")
    return failures


def good_run(aggnet, tmp):
    failures = 0
    report, run_json = os.path.join(tmp, "r.md"), os.path.join(tmp, "r.json")
    with open(report, "w") as f:
        f.write("an older report: replaced\n")
    done = subprocess.run([aggnet, *RUN, "--report", report, "--json", run_json])
    failures += check(done.returncode == 0, f"--report run exit {done.returncode}")
    with open(run_json) as f:
        run = json.load(f)
    with open(report) as f:
        md = f.read()
    for section in SECTIONS:
        failures += check(section in md, f"section {section}")
    for figure in FIGURES:
        path = os.path.join(tmp, f"r.{figure}.png")
        size = png_size(path) if os.path.exists(path) else None
        failures += check(size is not None and size[0] > 500 and size[1] > 300,
                          f"{path}: a PNG figure, got {size}")
        failures += check(f"](r.{figure}.png)" in md, f"the report links r.{figure}.png")
    failures += check(sorted(os.listdir(tmp)) == sorted(
        ["r.md", "r.json"] + [f"r.{f}.png" for f in FIGURES]), f"no stray files: {os.listdir(tmp)}")
    return failures + check_numbers(md, run)


def bad_runs(aggnet, tmp):
    failures = 0
    os.mkdir(os.path.join(tmp, "d.links.png"))
    broken = os.path.join(tmp, "broken.py")
    with open(broken, "w") as f:  # writes half a report, then fails
        f.write("import sys, os\nd = sys.argv[sys.argv.index('--out-dir') + 1]\n"
                "open(os.path.join(d, 'b.md'), 'w').write('half')\nsys.exit(1)\n")
    cases = [(["--report", os.path.join(tmp, "x.html")], 2, "ending in .md"),
             (["--report", "-"], 2, "ending in .md"),
             (["--report", os.path.join(tmp, "d.md")], 2, "not a directory"),
             (["--report", os.path.join(tmp, "nodir", "x.md")], 2, "existing directory"),
             (["--report", os.path.join(tmp, "b.md")], 1, "broken.py failed (exit status 1)")]
    if os.environ.get("AGGNET_TEST_SANITIZED"):
        cases.pop()  # a throw after sc_start: see tests/workflow/CMakeLists.txt
    for args, code, message in cases:
        before = sorted(os.listdir(tmp))
        done = subprocess.run([aggnet, *RUN, *args, "--json", os.path.join(tmp, "j.json")],
                              capture_output=True, text=True,
                              env={**os.environ, "AGGNET_REPORT_SCRIPT": broken})
        lines = done.stderr.strip().splitlines()
        failures += check(done.returncode == code and len(lines) == 1 and message in lines[0] and
                          lines[0].startswith("aggnet run: --report"),
                          f"{args}: exit {done.returncode}, {done.stderr.strip()!r}")
        failures += check(sorted(os.listdir(tmp)) == before, f"{args}: no output written")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    aggnet = ap.parse_args().aggnet
    with tempfile.TemporaryDirectory() as good, tempfile.TemporaryDirectory() as bad:
        failures = good_run(aggnet, good) + bad_runs(aggnet, bad)
    print("run report:", "ok" if failures == 0 else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
