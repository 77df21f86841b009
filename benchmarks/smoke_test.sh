#!/usr/bin/env bash
# Runs a benchmark binary with a minimal time budget: proves it starts, computes and exits 0.
set -euo pipefail
FT_BENCH_SMOKE=1 "$1" --benchmark_min_time=0.0001 --benchmark_repetitions=1 >/dev/null
