#!/usr/bin/env bash
# Runs //benchmarks:distributed once on tiny counts (FT_BENCH_SMOKE) as 2 processes under
# ft_launch: proves it starts, checks its values, prints the table from rank 0 only and exits
# 0. A hang fails fast: ft_launch --timeout 45 and a 10 s peer timeout, inside the test's
# short timeout.
set -euo pipefail
launch=$1
bench=$2
out=${TEST_TMPDIR:-$(mktemp -d)}/out
code=0
FT_BENCH_SMOKE=1 FT_DIST_TIMEOUT_MS=10000 "$launch" --timeout 45 -n 2 "$bench" >"$out" || code=$?
cat "$out"
[[ $code -eq 0 ]] || { echo "FAIL: ft_launch exited $code" >&2; exit 1; }
for size in "1 float" "1 KiB" "64 KiB" "4 MiB"; do
  rows=$(grep -cF "[0] | $size |" "$out") || true
  [[ $rows -eq 2 ]] || { echo "FAIL: $rows rows for $size, not 2 (times, ratios)" >&2; exit 1; }
done
if grep -q '^\[1\]' "$out"; then
  echo "FAIL: rank 1 printed to stdout" >&2
  exit 1
fi
echo PASS
