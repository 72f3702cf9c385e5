#!/usr/bin/env bash
# Opens the view `aggnet run --vcd` generates in the real GTKWave under Xvfb and checks,
# through GTKWave's Tcl interface, the displayed signals and the zoom window.
# Usage: gtkwave_view.sh AGGNET PROBE_TCL. Exit 77 (skipped) without gtkwave or xvfb-run.
set -euo pipefail
aggnet=$1 probe=$2
for tool in gtkwave xvfb-run; do
  command -v "$tool" > /dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/probe.txt" "$dir/gtkwave.log" 2> /dev/null | head -40; exit 1; }

# A 64 MiB all-to-all round of lon and tyo; record [1.1 s, 1.2 s] (inside the round).
"$aggnet" run --schedule all-to-all --steps 1 --gradient 64MiB --no-colocated -q \
  --vcd "$dir/r.vcd" --trace "sites=lon,tyo signals=buffer,links,state" \
  --trace-from 1.1s --trace-to 1.2s < /dev/null
[ -f "$dir/r.gtkw" ] || fail "no view next to the VCD"

# GTKWave never reads stdin here; the timeout bounds a hang (e.g. a missing display).
PROBE_OUT="$dir/probe.txt" timeout 60 xvfb-run -a -s "-screen 0 1600x1000x24" \
  gtkwave -S "$probe" "$dir/r.vcd" "$dir/r.gtkw" < /dev/null > "$dir/gtkwave.log" 2>&1 ||
  fail "gtkwave exited with $?"
grep -q '^error' "$dir/probe.txt" && fail "Tcl query failed"

value() { awk -v k="$1" '$1 == k { print $2 }' "$dir/probe.txt"; }
from=1100000000000 to=1200000000000
[ "$(value getWindowStartTime)" = "$from" ] || fail "window starts at $(value getWindowStartTime)"
end=$(value getWindowEndTime)
# The whole window shows, and not much more (the zoom fits it into most of the pane).
[ "$end" -ge "$to" ] && [ "$end" -le $((to + (to - from) / 5)) ] || fail "window ends at $end"
[ "$(value getMinTime)" = "$from" ] || fail "dump starts at $(value getMinTime), not at from"
[ "$(value getMaxTime)" = "$to" ] || fail "dump ends at $(value getMaxTime), not at to"

# Displayed signals: exactly the VCD's variables (GTKWave names, [msb:0]), lon's first.
grep '^signal ' "$dir/probe.txt" | cut -d' ' -f2 | sort > "$dir/shown.txt"
awk '/\$scope/ { s[++n] = $3 } /\$upscope/ { n-- }
     /\$var/ { p = ""; for (i = 1; i <= n; i++) p = p s[i] "."; print p $5 $6 }' "$dir/r.vcd" |
  sort > "$dir/declared.txt"
diff "$dir/declared.txt" "$dir/shown.txt" > /dev/null || fail "shown signals differ from the VCD's"
[ "$(wc -l < "$dir/shown.txt")" -gt 10 ] || fail "too few signals shown"
first=$(grep -m1 '^signal ' "$dir/probe.txt" | cut -d' ' -f2)
[ "$first" = "SystemC.wan.lon.fpga.buffer_occupancy_bytes[63:0]" ] || fail "first row is $first"
echo "GTKWave shows $(wc -l < "$dir/shown.txt") signals over [$(value getWindowStartTime), $end] ps"
