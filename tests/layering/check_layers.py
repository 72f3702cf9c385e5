#!/usr/bin/python3
"""Layering check: every source folder includes only from itself and from the folders
listed before it, and SystemC / yaml-cpp appear only in the folders allowed to use them.
Folders that must not link the model (sweeps/: it drives the `aggnet run` command line)
reach, through their includes and the includes of what they include, only the folders
they may use (the option table in options/ is plain data).

    check_layers.py ROOT LAYER [LAYER ...]   (LAYERs in dependency order, as in CMake)

Prints one line per violation (file, line, what it includes, why not) and exits 1.
"""
import os
import re
import sys

from source_files import numbered_lines, source_files

SYSTEMC = re.compile(r'#include\s*<(systemc|tlm)')
YAML = re.compile(r'#include\s*<yaml-cpp/')
LOCAL = re.compile(r'#include\s*"([a-z_]+)/')
# Which folders may use SystemC or YAML: "does it need SystemC? does it need YAML?"
USES_SYSTEMC = {"modules", "sim", "apps", "benchmarks"}
USES_YAML = {"config", "sweeps", "apps"}
# Folders whose whole include closure stays within these folders (no model types).
MODEL_FREE = {"sweeps": {"common", "options", "sweeps"}}


def local_includes(root, rel):
    """Repository-relative paths that file `rel` includes with #include "folder/...". """
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [m.group(0).split('"')[1] for m in
                (re.search(r'#include\s*"([a-z_]+/[^"]+)"', line) for line in f) if m]


def model_free_violations(root, layers):
    for folder, allowed in MODEL_FREE.items():
        if folder not in layers:
            continue
        for _, inner in source_files(os.path.join(root, folder)):
            yield from closure_violations(root, os.path.join(folder, inner), allowed)


def closure_violations(root, start, allowed):
    seen, todo = {start}, [start]
    while todo:
        rel = todo.pop()
        for inc in local_includes(root, rel):
            if inc.split("/")[0] not in allowed:
                yield (f"{start}: reaches {inc} (through {rel}); {start.split('/')[0]}/ does "
                       f"not link the model and may reach only {sorted(allowed)}")
            elif inc not in seen:
                seen.add(inc)
                todo.append(inc)


def violations(root, layers):
    rank = {name: i for i, name in enumerate(layers)}
    for layer in layers:
        for path, inner in source_files(os.path.join(root, layer)):
            rel = os.path.join(layer, inner)
            for no, line in numbered_lines(path):
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
    found += list(model_free_violations(sys.argv[1], sys.argv[2:]))
    for v in found:
        print(v)
    print(f"layering: {len(found)} violation(s) in {' -> '.join(sys.argv[2:])}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
