#!/usr/bin/env bash
# The worker under `mpirun -np 2` and `-np 3` on this machine: the MPI engine, and Gloo bootstrapped
# through MPI (FT_BACKEND=gloo); a stalled rank under the MPI engine.
set -uo pipefail
worker=$1
source "$2"
token="ft-mpi-test-$$-$RANDOM"
out=$TMPDIR/out
err=$TMPDIR/err

mpirun_flags=(--oversubscribe)
# Open MPI names its shared-memory files after the job id, which it derives from mpirun's pid:
# in Bazel's sandboxes (a pid namespace each) two runs of this test have the same pid, and
# with the default /dev/shm they would map each other's files (and crash). Keep them in the
# test's own TMPDIR (the session directory follows TMPDIR already).
export OMPI_MCA_btl_vader_backing_directory=$TMPDIR
# Open MPI refuses root without this flag; CI runs as root.
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)

# Under --config=san: Open MPI's plugins are unloaded before LeakSanitizer looks, and only
# the slow unwinder reaches the Open MPI library below them, which lsan_suppressions.cc names.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0

for np in 2 3; do
  for backend in mpi gloo; do
    start=$(now_ms)
    FT_BACKEND=$backend FT_DIST_TIMEOUT_MS=10000 timeout 50 mpirun -np "$np" "${mpirun_flags[@]}" \
      -x FT_BACKEND -x FT_DIST_TIMEOUT_MS -x TMPDIR -x ASAN_OPTIONS \
      "$worker" allreduce "$backend" "$token" >"$out" 2>"$err"
    code=$?
    [[ $code -eq 0 ]] || { cat "$out" "$err" >&2; fail "mpirun -np $np, $backend: exit $code"; }
    for ((r = 0; r < np; r++)); do
      expect_contains "$out" "rank $r of $np ($backend): OK"
    done
    expect_elapsed_below "$start" 20000 "mpirun -np $np, FT_BACKEND=$backend"
  done
done
# The MPI engine's timeout: rank 1 sleeps 30 s after the first AllReduce; rank 0's next one
# must throw ft::Error within twice FT_DIST_TIMEOUT_MS, and mpirun then ends the job. (Not
# SIGSTOP, as peer_failure_test does: mpirun may wait long for a stopped process to die.)
start=$(now_ms)
FT_BACKEND=mpi FT_DIST_TIMEOUT_MS=1000 timeout 30 mpirun -np 2 "${mpirun_flags[@]}" \
  -x FT_BACKEND -x FT_DIST_TIMEOUT_MS -x TMPDIR -x ASAN_OPTIONS \
  "$worker" hang mpi "$token" >"$out" 2>"$err"
code=$?
[[ $code -ne 0 && $code -ne 124 ]] || { cat "$out" "$err" >&2; fail "mpirun stall: exit $code"; }
expect_contains "$err" "rank 0: ft::Error after"
expect_contains "$err" "AllReduce (mpi): rank 0 of 2: timed out after 1000 ms waiting for a peer"
expect_elapsed_below "$start" 20000 "mpirun -np 2, a stalled rank"
expect_no_leftovers "$token"

[[ -z $(ls "$TMPDIR" | grep ft-gloo-store-) ]] || fail "Gloo's store directory left behind"
expect_no_leftovers "$token"
echo PASS
