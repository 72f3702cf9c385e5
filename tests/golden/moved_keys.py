#!/usr/bin/python3
"""Every value that differs between two recordings of the golden runs, by path, with
golden.py's notion of equal numbers (a ps for times, 1e-12 relative otherwise):

    moved_keys.py OLD_DIR NEW_DIR [--only PREFIX ...]

With --only, exit status 1 if any moved path of any case starts with none of the
prefixes (e.g. `--only $.colocated $.summary.colocated_step_time_s_mean`): the proof a
re-recording moved nothing else.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import as_number, same_number  # noqa: E402


def moved(a, b, path="$"):
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return [] if same_number(x, y, path) else [(path, a, b)]
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append((f"{path}.{k}", a.get(k, "<absent>"), b.get(k, "<absent>")))
            else:
                out += moved(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in moved(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    outside = 0
    for name in sorted(os.listdir(args.old)):
        with open(os.path.join(args.old, name)) as f, open(os.path.join(args.new, name)) as g:
            diffs = moved(json.load(f), json.load(g))
        for path, a, b in diffs:
            allowed = args.only is None or any(path.startswith(p) for p in args.only)
            outside += not allowed
            print(f"{name} {path}: {a!r} -> {b!r}{'' if allowed else '   <- outside --only'}")
    print(f"{outside} moved values outside --only" if args.only is not None else "done")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
