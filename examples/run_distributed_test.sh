#!/usr/bin/env bash
# Runs a distributed example (it checks its own results) on several processes:
#   run_distributed_test.sh launch FT_LAUNCH PROGRAM N...   under `ft_launch -n N`, each N
#   run_distributed_test.sh mpirun PROGRAM N                under `mpirun -np N`, with MPI's
#                                                           engine, then Gloo's over MPI
# Each run must exit 0 and every rank print its summary line ("rank R of N (ENGINE): ...").
# The launch mode also checks that PROGRAM alone (no process group) exits 2 with a hint.
set -uo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

export TMPDIR=${TEST_TMPDIR:-$(mktemp -d)}
# A stalled peer is an error after this long (not the default 30 s), well inside the test's
# timeout; so is `timeout` around each run, in case a process hangs outside a collective.
export FT_DIST_TIMEOUT_MS=20000
out=$TMPDIR/out
err=$TMPDIR/err

# check_run WHAT CODE N ENGINE: the run exited 0 and each of its N ranks printed its summary.
check_run() {
  local what=$1 code=$2 n=$3 engine=$4 r
  cat "$out"
  [[ $code -eq 0 ]] || { cat "$err" >&2; fail "$what: exit $code"; }
  for ((r = 0; r < n; r++)); do
    grep -qF "rank $r of $n ($engine): " "$out" || { cat "$err" >&2; fail "$what: no rank $r"; }
  done
}

mode=$1
shift
case $mode in
  launch)
    launch=$1 program=$2
    shift 2
    for n in "$@"; do
      timeout 60 "$launch" --timeout 50 -n "$n" "$program" >"$out" 2>"$err"
      check_run "ft_launch -n $n" $? "$n" gloo
    done
    # Outside a launcher: a hint and exit 2, not a crash or a hang.
    (unset FT_RANK FT_WORLD_SIZE FT_STORE && timeout 20 "$program") >"$out" 2>"$err"
    code=$?
    [[ $code -eq 2 ]] || { cat "$out" "$err" >&2; fail "without a launcher: exit $code, not 2"; }
    grep -qF "ft_launch -n 2" "$err" || { cat "$err" >&2; fail "without a launcher: no hint"; }
    ;;
  mpirun)
    program=$1 n=$2
    flags=(--oversubscribe)
    # Open MPI refuses root without this flag; CI runs as root.
    [[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
    # Open MPI's shared-memory files in the test's own TMPDIR: in Bazel's sandboxes (a pid
    # namespace each) two runs could otherwise share a job id and map each other's files.
    export OMPI_MCA_btl_vader_backing_directory=$TMPDIR
    # Under --config=san: only the slow unwinder reaches the Open MPI frames that
    # //distributed:lsan_suppressions names.
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
    for backend in mpi gloo; do
      FT_BACKEND=$backend timeout 60 mpirun -np "$n" "${flags[@]}" \
        -x FT_BACKEND -x FT_DIST_TIMEOUT_MS -x TMPDIR -x ASAN_OPTIONS \
        "$program" >"$out" 2>"$err"
      check_run "mpirun -np $n, FT_BACKEND=$backend" $? "$n" "$backend"
    done
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
echo PASS
