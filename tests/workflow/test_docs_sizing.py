#!/usr/bin/python3
"""docs/buffer-sizing.md's worked examples are what scripts/sizing_examples.py makes of
today's binary: each command re-run, its table compared line by line.

    test_docs_sizing.py --aggnet BUILD/apps/aggnet     (from the repository root)
"""
import argparse
import difflib
import sys

sys.path.insert(0, "scripts")
from sizing_examples import BEGIN, DOC, END, block  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    aggnet = ap.parse_args().aggnet
    with open(DOC) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print(f"{DOC}: no sizing_examples markers")
        return 1
    shown = doc.split(BEGIN)[1].split(END)[0].strip("\n")
    made = block(aggnet)
    if shown != made:
        print(f"{DOC}: the worked examples differ from scripts/sizing_examples.py's output "
              "(re-run it with --write):")
        sys.stdout.writelines(difflib.unified_diff(shown.splitlines(True), made.splitlines(True),
                                                   "docs", "binary"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
