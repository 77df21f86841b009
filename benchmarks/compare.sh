#!/usr/bin/env bash
# //benchmarks:compare: ft beside PyTorch functorch and the hand-written Eigen limit, in one
# run on this machine (docs/performance.md). Usage:
#   ./bazelw run -c opt //benchmarks:compare [-- --out DIR] [--smoke] [--no-functorch]
#                                            [--filter REGEX] [--threads 1,2] [--rounds N]
# Installs Debian's python3-torch and python3-matplotlib when they are missing and this user
# may (root, or passwordless sudo); otherwise that column or the chart is skipped with a
# message. Results go to benchmarks/results/ in the source tree unless --out says otherwise.
set -euo pipefail
# The suites and scripts are this target's runfiles: `bazel run` and `bazel test` start it in
# the runfiles tree (benchmarks/ is below the working directory); run directly, they sit in
# <script>.runfiles/ft. BUILD_WORKSPACE_DIRECTORY is the source tree the results belong in.
if [[ -f benchmarks/compare.py ]]; then
  here="$(pwd)/benchmarks"
else
  here="${BASH_SOURCE[0]}.runfiles/ft/benchmarks"
fi
bin_dir="${here}"
out="${BUILD_WORKSPACE_DIRECTORY:-$(pwd)}/benchmarks/results"
args=()
install=1
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-install) install=0; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
python=/usr/bin/python3
if [[ ! -x "${python}" ]]; then
  echo "compare: ${python} is missing (apt-get install python3)" >&2
  exit 1
fi
want_functorch=1
for a in "${args[@]}"; do [[ "$a" == --no-functorch ]] && want_functorch=0; done
missing=()
if ((want_functorch)) && ! "${python}" -c 'import torch, functorch' 2>/dev/null; then
  missing+=(python3-torch)
fi
if ! "${python}" -c 'import matplotlib' 2>/dev/null; then missing+=(python3-matplotlib); fi
if ((install)) && ((${#missing[@]} > 0)); then
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo -n)
  echo "compare: installing ${missing[*]} from Debian's packages" >&2
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
      --no-install-recommends "${missing[@]}" >&2; then
    echo "compare: could not install ${missing[*]}; going on without them" >&2
  fi
fi
exec "${python}" "${here}/compare.py" --bin-dir "${bin_dir}" \
  --peer "${here}/functorch_peer.py" --out "${out}" "${args[@]}"
