#!/usr/bin/env bash
# Builds and tests this consumer workspace against the ft checkout two directories up, the
# way another project would use ft (CI runs it: .ci/run). Usage: examples/consumer/run.sh
# [bazel test flags]. ft's bazelw first installs the Debian packages a fresh machine lacks.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${here}/../../bazelw" --version >/dev/null
cd "${here}"
# The disk cache ft's own builds use: CI's fresh clone reuses what an earlier run compiled.
exec bazel test //... --disk_cache="${HOME}/.cache/ft-bazel-disk" "$@"
