#!/usr/bin/env bash
# Writes tests/fixtures/torch/<family>/*.npy from PyTorch (README.md beside this file).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
  echo "make_fixtures: installing python3-torch and python3-numpy" >&2
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
    python3-torch python3-numpy >&2
fi
families=("$@")
if ((${#families[@]} == 0)); then
  for f in *.py; do [[ $f == common.py ]] || families+=("${f%.py}"); done
fi
for family in "${families[@]}"; do
  out=../../tests/fixtures/torch/$family
  rm -rf "$out" && mkdir -p "$out"
  /usr/bin/python3 "$family.py" "$out"
  echo "make_fixtures: $family: $(ls "$out" | wc -l) files"
done
