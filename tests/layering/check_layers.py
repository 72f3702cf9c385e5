#!/usr/bin/python3
"""Layering check: every source folder includes only from itself and from the folders
listed before it, and SystemC / yaml-cpp appear only in the folders allowed to use them.

    check_layers.py ROOT LAYER [LAYER ...]   (LAYERs in dependency order, as in CMake)

Prints one line per violation (file, line, what it includes, why not) and exits 1.
"""
import os
import re
import sys

SYSTEMC = re.compile(r'#include\s*<(systemc|tlm)')
YAML = re.compile(r'#include\s*<yaml-cpp/')
LOCAL = re.compile(r'#include\s*"([a-z_]+)/')
# Which folders may use SystemC or YAML: "does it need SystemC? does it need YAML?"
USES_SYSTEMC = {"modules", "sim", "apps"}
USES_YAML = {"config", "sweeps", "apps"}


def violations(root, layers):
    rank = {name: i for i, name in enumerate(layers)}
    for layer in layers:
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    for no, line in enumerate(f, 1):
                        m = LOCAL.search(line)
                        if m and m.group(1) in rank and rank[m.group(1)] > rank[layer]:
                            yield (f"{rel}:{no}: includes {m.group(1)}/, a layer above "
                                   f"{layer}/ (order: {' -> '.join(layers)})")
                        if SYSTEMC.search(line) and layer not in USES_SYSTEMC:
                            yield f"{rel}:{no}: SystemC in {layer}/ (only {sorted(USES_SYSTEMC)})"
                        if YAML.search(line) and layer not in USES_YAML:
                            yield f"{rel}:{no}: yaml-cpp in {layer}/ (only {sorted(USES_YAML)})"


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    found = list(violations(sys.argv[1], sys.argv[2:]))
    for v in found:
        print(v)
    print(f"layering: {len(found)} violation(s) in {' -> '.join(sys.argv[2:])}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
