#!/usr/bin/python3
"""Functions longer than a limit in the given C++ files (issue 32: short functions).

    /usr/bin/python3 scripts/long_functions.py [--limit 60] [--except FILE:NAME,...] FILES

A function is a definition that starts in column 0 (a line ending in '{' that is not a
namespace, class, struct, enum or initializer) and ends at the next '}' in column 0; its
length counts the lines between them. Prints `file:line: name: N lines` for each one over
the limit and exits 1 if there is any.
"""
import argparse
import re
import sys

NOT_FUNCTION = re.compile(r"^(namespace|class|struct|enum|union|extern|template\s*<[^>]*>\s*(class|struct))\b|=\s*\{$|^(const|constexpr|static|inline)?\s*[\w:<>,\s*&]+\s+\w+\[\]")


def functions(path):
    with open(path) as f:
        lines = f.read().splitlines()
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if line and not line[0].isspace() and line.endswith("{") and not line.startswith("}") \
                    and not NOT_FUNCTION.search(line) and not line.startswith("#"):
                start = i
            elif line and not line[0].isspace() and "(" in line and not line.endswith(";") \
                    and not NOT_FUNCTION.search(line) and i + 1 < len(lines) and \
                    lines[i + 1].startswith(" ") and not line.startswith(("#", "//", "}")):
                # a signature continued on the next lines: the body starts at its '{'
                j = i
                while j + 1 < len(lines) and not lines[j].endswith("{") and \
                        not lines[j].endswith(";"):
                    j += 1
                if lines[j].endswith("{") and not lines[j].endswith("= {"):
                    start = i
        elif line.startswith("}"):
            name = re.search(r"([\w:~]+)\s*\(", lines[start])
            yield start + 1, name.group(1) if name else lines[start][:40], i - start - 1
            start = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--except", dest="known", default="",
                    help="comma-separated FILE:FUNCTION left over the limit on purpose")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    known = set(filter(None, args.known.split(",")))
    long = [(f, line, name, n) for f in args.files for line, name, n in functions(f)
            if n > args.limit and f"{f}:{name}" not in known]
    for f, line, name, n in long:
        print(f"{f}:{line}: {name}: {n} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
