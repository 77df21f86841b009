#!/usr/bin/env bash
# Builds //tests/fuzz's libFuzzer targets under --config=fuzz (clang, ASan, UBSan) and runs
# each for a bounded time from a copy of its seed corpus (tests/fuzz/corpus/<target>/), all
# at once. Prints each target's executions; on a finding (a
# crash, a sanitizer report, an FT_CHECK abort, a leak, a timeout, running out of memory)
# prints the fuzzer's report and the reproducer's path, and exits 1.
#
# Usage: tools/run_fuzzers.sh [seconds_per_target]   (default 60)
#   FT_FUZZ_SEED=<n>  libFuzzer's seed (default 1). A fixed seed makes CI's run the same
#                     sequence of inputs every time (a red CI is a finding anyone can replay,
#                     never luck); FT_FUZZ_SEED=0 lets libFuzzer pick one, for exploring.
# Reproduce a finding: ./bazelw run //tests/fuzz:<target> -- /path/to/crash-...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
seed=${FT_FUZZ_SEED:-1}
targets=(ops_fuzzer transforms_fuzzer custom_function_fuzzer nn_fuzzer control_flow_fuzzer
  tree_fuzzer dtype_fuzzer)
# All at once: the stage takes one time budget, not one per core's worth of targets.
jobs=${#targets[@]}

labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:${t}"); done
echo "== building ${labels[*]} with --config=fuzz"
./bazelw build --config=fuzz "${labels[@]}" || exit 1
bin="$(./bazelw info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"

work=$(mktemp -d "${TMPDIR:-/tmp}/ft-fuzz.XXXXXX")
echo "== fuzzing each target for ${seconds}s, ${jobs} at a time, seed ${seed} (work dir ${work})"

run_one() {
  local t=$1 dir="${work}/$1"
  mkdir -p "${dir}/corpus" "${dir}/findings"
  cp tests/fuzz/corpus/"${t}"/* "${dir}/corpus/"
  # Timeout: an input that takes 30 s is a hang; 10 s was hit by legitimate nested Jacobians
  # with three targets sharing CI's two cores.
  # RSS: libFuzzer's own corpus and feature tables plus ASan's quarantine grew one target
  # past 2 GiB in a minute (CI's first fuzz stage); 4 GiB with a smaller quarantine.
  ASAN_OPTIONS="${ASAN_OPTIONS:+${ASAN_OPTIONS}:}quarantine_size_mb=64" \
  "${bin}/${t}" -max_total_time="${seconds}" -seed="${seed}" -timeout=30 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="${dir}/findings/" "${dir}/corpus" \
    >"${dir}/log" 2>&1
  echo $? >"${dir}/rc"
}

running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  run_one "$t" &
  running=$((running + 1))
done
wait

status=0
for t in "${targets[@]}"; do
  dir="${work}/${t}"
  rc=$(cat "${dir}/rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "${dir}/log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "${dir}/log")
  findings=$(find "${dir}/findings" -type f | sort)
  echo "${t}: ${execs:-?} executions (${rate:-?}/s), exit ${rc}"
  if [[ "${rc}" != 0 || -n "${findings}" ]]; then
    status=1
    echo "---- ${t}: FINDING; the fuzzer's report:"
    grep -v -E '^#[0-9]+\s|^\s+NEW_FUNC' "${dir}/log" | tail -n 60
    for f in ${findings}; do
      echo "reproducer: ${f}"
      echo "  replay it: ./bazelw run //tests/fuzz:${t} -- ${f}"
    done
    echo "----"
  fi
done
if ((status == 0)); then
  echo "fuzzing: no findings"
  rm -rf "${work}"
fi
exit "${status}"
