#!/usr/bin/python3
"""Which keys moved between two recordings of the goldens, before a re-record.

    golden.py --aggnet BUILD/apps/aggnet --data /tmp/new --record
    moved_keys.py tests/golden/data /tmp/new --allow comm_time_to_eps_s,...

Every leaf of every case is compared as golden.py compares (numbers to a ps or 1e-12);
prints each moved path (list indices as []) with its count of changes, and exits 1 when
a moved leaf's key is not in --allow, or a key appears or disappears.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import as_number, same_number  # noqa: E402


def leaves(value, path="$"):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def moved(old, new):
    a, b = dict(leaves(old)), dict(leaves(new))
    out = []
    for path in sorted(set(a) | set(b)):
        if path not in a or path not in b:
            out.append((path, "only in " + ("old" if path in a else "new")))
            continue
        x, y = as_number(a[path]), as_number(b[path])
        same = same_number(x, y, path) if x is not None and y is not None else a[path] == b[path]
        if not same:
            out.append((path, f"{a[path]!r} -> {b[path]!r}"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--allow", default="")
    args = ap.parse_args()
    allow = set(filter(None, args.allow.split(",")))
    counts, bad = {}, []
    for name in sorted(os.listdir(args.old)):
        with open(os.path.join(args.old, name)) as f, open(os.path.join(args.new, name)) as g:
            for path, what in moved(json.load(f), json.load(g)):
                shape = re.sub(r"\[\d+\]", "[]", f"{name}:{path}")
                counts[shape] = counts.get(shape, 0) + 1
                key = re.split(r"[.\[\]]", path.rstrip("]"))[-1]
                if key not in allow or what.startswith("only in"):
                    bad.append(f"{name}:{path}: {what}")
    for shape, n in sorted(counts.items()):
        print(f"{n:5} {shape}")
    for b in bad:
        print("NOT ALLOWED", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
