#!/usr/bin/env bash
# docs/coverage.md must be the current output of //tools:coverage (regenerate it with
# `./bazelw run //tools:coverage` when an op or a rule is added).
set -euo pipefail
coverage=$1
doc=$2
if ! diff <("$coverage") <(sed -n '/^| op |/,$p' "$doc"); then
  echo "docs/coverage.md is stale: regenerate its table with ./bazelw run //tools:coverage" >&2
  exit 1
fi
