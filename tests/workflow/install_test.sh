#!/bin/bash
# `cmake --install` gives a tree where aggnet runs from any directory: bin/aggnet finds its
# shipped platforms under share/aggnet (common/data_dir.h) and the docs are installed.
#   install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/aggnet share/aggnet/platforms/nine_city.yaml share/aggnet/sweeps/crossover.yaml \
         share/aggnet/scripts/plot_sweep.py share/doc/aggnet/README.md \
         share/doc/aggnet/docs/run-json.md; do
  [ -e "$tmp/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
# No checkout on the way: the data must come from the prefix, not the source tree.
unset AGGNET_DATA_DIR
"$tmp/prefix/bin/aggnet" run --steps 1 --gradient 1MiB --no-colocated -q --json out.json
python3 - "$tmp/prefix" <<'PY'
import json, sys
report = json.load(open("out.json"))
prefix = sys.argv[1]
assert report["platform"] == "nine_city", report["platform"]
assert report["platform_file"] == prefix + "/share/aggnet/platforms/nine_city.yaml", \
    report["platform_file"]
assert report["summary"]["steps"] == 1
assert len(report["sites"]) == 9
PY
# --help names the shipped platform by its name in the data directory, not by a path.
help=$("$tmp/prefix/bin/aggnet" run --help)
grep -q -- "--platform arg (=platforms/nine_city.yaml)" <<< "$help" || { echo "$help"; exit 1; }
echo "install test: ok"
