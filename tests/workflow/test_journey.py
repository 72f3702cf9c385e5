#!/usr/bin/python3
"""`aggnet run --journey`: the hand-over counts of two runs on line3 (a -- b -- c) against
counts derived by hand, so a tap that misses a bind, counts a kind wrongly or drops a
chunk fails here. 1 MiB gradient, 256 KiB chunks: C = 4 chunks per site, n = 3.

All-to-all (multicast, in-network aggregation): every cluster sends its C contributions up
its access link; every FPGA aggregates the other n-1 members' (C (n-1) = 8 arrive from
its switch) and hands the C reduced chunks down to its cluster. a's and c's contributions
leave on their one link (C); b's switch forwards b's own and the far end's (2 C = 8) to
each neighbour.

Ring: 2 (n-1) = 4 steps, each one segment of G/n = 349,525.3 bytes, i.e. 2 chunks, so
every cluster sends 8 ring segments and receives 8, and nothing reaches an FPGA's
to_network port (the ring is host-based).
"""
import argparse
import re
import subprocess
import sys

COMMON = ["--platform", "tests/workflow/data/line3.yaml", "--gradient", "1MiB", "--chunk",
          "256KiB", "--steps", "1", "--no-colocated", "-q", "--journey", "-"]
KIND = re.compile(r"^([a-z_]+):$")
EDGE = re.compile(r"^  (\S+) -> (\S+): (\d+)$")


def journey(aggnet, schedule):
    out = subprocess.run([aggnet, "run", *COMMON, "--schedule", schedule], capture_output=True,
                         text=True, check=True).stdout
    counts, kind = {}, None
    for line in out.splitlines():
        if KIND.match(line):
            kind = KIND.match(line).group(1)
        elif EDGE.match(line):
            frm, to, n = EDGE.match(line).groups()
            counts[(kind, frm, to)] = int(n)
    return counts


def expect(counts, want, case):
    failed = 0
    for key, n in want.items():
        if counts.get(key) != n:
            print(f"{case}: {key[0]} {key[1]} -> {key[2]}: expected {n}, got {counts.get(key)}")
            failed += 1
    return failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--aggnet", required=True)
    aggnet = parser.parse_args().aggnet
    c, n = 4, 3
    failed = 0
    a2a = journey(aggnet, "all-to-all")
    want = {}
    for s in "abc":
        want[("contribution", f"wan.{s}.cluster", f"wan.{s}.access_up")] = c
        want[("contribution", f"wan.{s}.switch", f"wan.{s}.fpga")] = c * (n - 1)
        want[("reduced", f"wan.{s}.fpga", f"wan.{s}.access_down")] = c
        want[("reduced", f"wan.{s}.access_down", f"wan.{s}.cluster")] = c
    want[("contribution", "wan.a.switch", "wan.a.link_to_b")] = c
    want[("contribution", "wan.c.switch", "wan.c.link_to_b")] = c
    want[("contribution", "wan.b.switch", "wan.b.link_to_a")] = 2 * c
    want[("contribution", "wan.b.switch", "wan.b.link_to_c")] = 2 * c
    failed += expect(a2a, want, "all-to-all")
    ring = journey(aggnet, "ring")
    steps, chunks_per_segment = 2 * (n - 1), 2
    want = {}
    for s in "abc":
        want[("ring_segment", f"wan.{s}.cluster", f"wan.{s}.access_up")] = steps * chunks_per_segment
        want[("ring_segment", f"wan.{s}.access_down", f"wan.{s}.cluster")] = (
            steps * chunks_per_segment)
    failed += expect(ring, want, "ring")
    if any(frm.endswith(".fpga") and to.endswith(".switch") for _, frm, to in ring):
        print("ring: an FPGA handed a chunk to the network")
        failed += 1
    print(f"journey: {failed} mismatch(es)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
