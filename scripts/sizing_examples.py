#!/usr/bin/python3
"""docs/buffer-sizing.md's worked examples: each command run and its table pasted between
the markers, with the totals the reading below them quotes.

    /usr/bin/python3 scripts/sizing_examples.py --aggnet build/apps/aggnet          # print
    /usr/bin/python3 scripts/sizing_examples.py --aggnet build/apps/aggnet --write  # update

tests/workflow/test_docs_sizing.py runs it and checks that the document holds its output
(the tables are deterministic for a given --workers, so the commands fix it).
"""
import argparse
import re
import subprocess
import sys

DOC = "docs/buffer-sizing.md"
BEGIN, END = "<!-- sizing_examples: scripts/sizing_examples.py -->", "<!-- /sizing_examples -->"
COMMON = ["--gradient", "1GiB", "--target", "0.95", "--workers", "2"]
EXAMPLES = [
    ("all-to-all, arrival-aligned sends where they help (the default)",
     ["--schedule", "all-to-all", "--heterogeneous"]),
    ("triads without send alignment: every member sends at the agreed start",
     ["--schedule", "triads", "--alignment", "none", "--heterogeneous"]),
    ("triads with arrival-aligned sends (the default): no skew is left in a group of three",
     ["--schedule", "triads"]),
    ("the load-aware reduction forest (no slot stall; `--target` does not apply to trees)",
     ["--schedule", "reduction-forest"]),
]


def run(aggnet, args):
    proc = subprocess.run([aggnet, "size-buffers", *args, *COMMON], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"aggnet size-buffers {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def totals(table):
    """(uniform per site, uniform total, heterogeneous total or None) as printed."""
    m = re.search(r"uniform, simulated\s+(\S+ \S+) per site, total (\S+ [KMGT]?i?B)", table)
    h = re.search(r"heterogeneous, simulated\s+total (\S+ [KMGT]?i?B)", table)
    return m.group(1), m.group(2), h.group(1) if h else None


def block(aggnet):
    out = []
    for words, args in EXAMPLES:
        table = run(aggnet, args).rstrip("\n")
        per_site, total, het = totals(table)
        summary = f"uniform {per_site} per site ({total} in total)"
        if het:
            summary += f"; heterogeneous {het} in total"
        out += [f"{words}: {summary}.", "",
                f"`aggnet size-buffers {' '.join(args + COMMON)}`", "", "```", table, "```", ""]
    return "\n".join(out).rstrip("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggnet", required=True)
    ap.add_argument("--write", action="store_true", help=f"replace the block in {DOC}")
    args = ap.parse_args()
    text = block(args.aggnet)
    if not args.write:
        print(text)
        return 0
    with open(DOC) as f:
        doc = f.read()
    head, rest = doc.split(BEGIN)
    tail = rest.split(END)[1]
    with open(DOC, "w") as f:
        f.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
