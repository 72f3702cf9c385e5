#!/usr/bin/env bash
# Fails (exit 1, listing the files) when a tracked C++ file is not clang-formatted.
# Usage: bash scripts/check_format.sh        (from anywhere; uses the repository's .clang-format)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: not clang-formatted (run clang-format -i): ${bad[*]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
