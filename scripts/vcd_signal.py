#!/usr/bin/python3
"""The value changes of one signal of an aggnet VCD, as `TIME VALUE` lines (time in s,
the value in decimal): what a waveform viewer shows, for a doc or a shell.

    /usr/bin/python3 scripts/vcd_signal.py run.vcd wan.nyc.cluster.state

NAME is the signal's dotted name below SystemC's top scope (docs/waveforms.md, "Signals").
"""
import sys


def changes(path, name):
    """[(time_ps, value)] of `name`: the VCD's scopes joined by '.', SystemC's top left out."""
    scopes, ident, now, out = [], None, 0, []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "$scope":
                scopes.append(words[2])
            elif words[0] == "$upscope":
                scopes.pop()
            elif words[0] == "$var" and ".".join(scopes[1:] + [words[4]]) == name:
                ident = words[3]
            elif words[0].startswith("#"):
                now = int(words[0][1:])
            elif ident and len(words) == 2 and words[1] == ident and words[0][0] == "b":
                out.append((now, int(words[0][1:], 2)))
    if ident is None:
        sys.exit(f"vcd_signal: {path}: no signal {name}")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    for time_ps, value in changes(sys.argv[1], sys.argv[2]):
        print(f"{time_ps / 1e12:.6g} s {value}")


if __name__ == "__main__":
    main()
