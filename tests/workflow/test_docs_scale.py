#!/usr/bin/python3
"""docs/performance.md's scale table is what benchmarks/scale.py makes of the committed
numbers file (benchmarks/scale_numbers.json): a table edited by hand, or numbers measured
again without the table rewritten (`scale.py --write-doc`), fail here.

    test_docs_scale.py     (from the repository root)
"""
import json
import sys

sys.path.insert(0, "benchmarks")
from scale import BEGIN, DOC, END, NUMBERS, table  # noqa: E402


def main():
    with open(DOC) as f:
        doc = f.read()
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        print(f"{DOC}: expected one pair of scale table markers")
        return 1
    shown = doc.split(BEGIN)[1].split(END)[0].strip()
    with open(NUMBERS) as f:
        numbers = json.load(f)
    if shown != table(numbers).strip():
        print(f"{DOC}: the scale table differs from benchmarks/scale.py --table")
        return 1
    for n, families in numbers["families"].items():
        for family, r in families.items():
            if not 0 < r["setup_cpu_s"] <= r["cpu_s"] or r["peak_rss_mib"] <= 0:
                print(f"{NUMBERS}: {n} sites {family}: inconsistent {r}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
