#!/usr/bin/python3
"""The sweep's Pareto plot names the memory tier each front point's buffer needs and its
cost (docs/memory-tiers.md), from a real sweep: triads and the host ring at 16 and
64 MiB on nine cities. By hand, with the default tiers: 16 MiB fits on-chip (32 MiB),
9 sites x 16/1024 GiB x 1000 USD/GiB = 140.625 USD ("141 USD"); 64 MiB needs HBM,
9 x 64/1024 x 30 = 16.875 USD ("16.9 USD"); a triad's access rate (2 x 3 x at most
12.5 GB/s) is far below either tier's bandwidth. The ring holds no buffer: no label."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

EXPECTED = {"16 MiB": "on-chip, 141 USD", "64 MiB": "HBM, 16.9 USD"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "tiers.yaml")
        with open(spec, "w") as f:
            f.write("name: tiers\nmetric: comm_time_to_eps_s\nbase:\n"
                    f"  platform: {os.path.abspath('platforms/nine_city.yaml')}\n"
                    "  gradient: 8MiB\n  chunk: 1MiB\n  no-colocated: true\n  steps: 0\n"
                    "axes:\n  - option: schedule\n    values: [triads, ring]\n"
                    "  - option: buffer\n    values: [16MiB, 64MiB]\n")
        out = os.path.join(tmp, "sweep")
        done = subprocess.run([args.aggnet, "sweep", spec, "--out", out, "--workers", "2",
                               "--no-plot"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"aggnet sweep: exit {done.returncode}\n{done.stderr}")
            return 1
        plots = os.path.join(out, "plots")
        subprocess.run(["/usr/bin/python3", "scripts/plot_sweep.py",
                        os.path.join(out, "results.db"), "--out", plots], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(plots, "plot_numbers.txt")) as f:
            numbers = f.read()
    front = numbers.split("# Pareto front")[1].split("\n#")[0].strip().split("\n")[1:]
    labelled = 0
    for line in front:
        m = re.match(r"(\d+ MiB) \S+ triads \[(.*)\]$", line)
        if line.startswith("0 B") or " ring" in line:
            ok = "[" not in line  # the ring needs no FPGA memory
        else:
            ok = m is not None and EXPECTED.get(m.group(1)) == m.group(2)
            labelled += ok
        if not ok:
            print(f"pareto front line without the expected tier: {line!r}\n{numbers}")
            return 1
    if not labelled:
        print(f"no labelled triads point on the front:\n{numbers}")
        return 1
    print(f"pareto tiers: {labelled} front point(s) labelled as computed by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
