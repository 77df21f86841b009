#!/usr/bin/env bash
# Runs the peak-memory measurement on its smallest figure: proves it starts, measures and
# exits 0 (the numbers are meaningless outside -c opt on a quiet machine).
set -euo pipefail
FT_BENCH_SMOKE=1 "$1" >/dev/null
