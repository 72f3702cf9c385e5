#!/usr/bin/env bash
# Fuzzes aggnet's YAML and command-line loaders (fuzz/harness.h) with libFuzzer for a
# bounded time, under ASan and UBSan. A crash, hang (per-input timeout) or sanitizer report
# fails the script and leaves the input in the output directory; copy it to
# tests/config/fuzz_regressions/ (replayed by test_config's FuzzRegressions test).
# Usage: bash scripts/fuzz.sh [SECONDS]   (default 90; AGGNET_FUZZ_BUILD_DIR, default
#        build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-90}
build=${AGGNET_FUZZ_BUILD_DIR:-build-fuzz}

for p in clang-14 libclang-rt-14-dev; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      clang-14 libclang-rt-14-dev >/dev/null
    break
  fi
done

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAGGNET_FUZZ=ON \
  -DAGGNET_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER=clang++-14 \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_loaders

# Seed corpus: the platforms, the schedule files of the tests, a few command lines and
# the regression inputs, each prefixed with its loader byte (fuzz/harness.h).
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
rm -rf "$corpus"
mkdir -p "$corpus" "$artifacts"
i=0
seed() {  # seed LOADER_BYTE FILE
  { printf "\\x$1"; cat "$2"; } > "$corpus/seed-$i"
  i=$((i + 1))
}
for f in platforms/*.yaml; do seed 00 "$f"; done
for f in $(grep -rl "^rounds:" tests traffic --include=*.yaml 2>/dev/null | head -20); do seed 01 "$f"; done
printf 'name: s\ncollective: group-average\nrounds:\n  - [[lon, ams], [nyc, chi]]\n' > "$corpus/sched.txt"
seed 01 "$corpus/sched.txt"
rm "$corpus/sched.txt"
for line in "--schedule|triads|--set|defaults.link.bandwidth=10Gbps" \
            "--schedule=rotating-3|--chunk|64KiB|--buffer|1MiB|--flow-control|credit" \
            "--set|sites.lon.fpga.clock=250MHz|--gradient|1GiB|--steps|3|--seed|7" \
            "--schedule|random-3:5|--set|links.nyc-lon.delay=40ms|--eps|0.01"; do
  printf '%s' "$line" | tr '|' '\n' > "$corpus/cli.txt"
  seed 02 "$corpus/cli.txt"
done
rm "$corpus/cli.txt"
cp tests/config/fuzz_regressions/* "$corpus/" 2>/dev/null || true

start=$(date +%s)
set +e
"$build/fuzz/fuzz_loaders" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=16384 -close_fd_mask=1 -artifact_prefix="$artifacts/" -print_final_stats=1 \
  > "$build/fuzz.log" 2>&1
status=$?
set -e
grep -E "^(#[0-9]+ +DONE|stat::|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" "$build/fuzz.log" | tail -20
echo "fuzz.sh: $(( $(date +%s) - start )) s of fuzzing, exit status $status" >&2
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: crashing inputs in $artifacts; add them to tests/config/fuzz_regressions/" >&2
fi
exit "$status"
