#!/usr/bin/python3
"""Groups of three that reach the exact average in log3(n) rounds, for a platform of
n = 3^k sites: the parallel classes of the affine space AG(k, 3) along its k axes.

    /usr/bin/python3 scripts/affine_triads.py PLATFORM.yaml --out FILE.yaml

Site i (platform order) is the point whose base-3 digits are those of i. Round j groups the
sites whose digits differ in digit j only, so after the k rounds every site holds the
average of all n (one averaging per coordinate). On nine sites these are two parallel
classes of the affine plane (rows and columns), the study's pair of triad classes. On the
synthetic platforms (scripts/make_platforms.py --synthetic) digit 0 is the continent: the
rounds of digits k-1 .. 1 group sites of one continent, the last round (digit 0) one site
per continent. Writes a schedule file (traffic/README.md); bad input exits 2.
"""
import argparse
import sys

import yaml


def digit_rounds(n):
    """[[group, ...] per round]: round r groups the indices differing in digit k-1-r only."""
    k = 0
    while 3 ** k < n:
        k += 1
    if n < 3 or 3 ** k != n:
        raise ValueError(f"{n} sites: affine triads need a power of 3 (9, 27, 81, ...)")
    rounds = []
    for digit in reversed(range(k)):
        step = 3 ** digit
        bases = [i for i in range(n) if (i // step) % 3 == 0]
        rounds.append([[b, b + step, b + 2 * step] for b in bases])
    return rounds


def schedule_yaml(codes):
    lines = ["# aggnet schedule file (format: traffic/README.md); scripts/affine_triads.py",
             f"name: affine-triads-{len(codes)}", "collective: group-average", "rounds:"]
    for groups in digit_rounds(len(codes)):
        lines.append("  - [" + ", ".join("[" + ", ".join(codes[i] for i in g) + "]"
                                         for g in groups) + "]")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("platform")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        with open(args.platform) as f:
            codes = [s["code"] for s in yaml.safe_load(f)["sites"]]
        text = schedule_yaml(codes)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        print(f"{args.platform}: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
