#!/usr/bin/env bash
# Runs an example program and checks that it exits 0 and prints something.
set -euo pipefail
out=$("$@")
[[ -n "$out" ]]
echo "$out"
