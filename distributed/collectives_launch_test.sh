#!/usr/bin/env bash
# The collectives across real processes: collectives_worker's checks through ft_launch with
# P = 1, 2 and 3, and under mpirun -np 2 with both engines; a peer killed or stopped after
# one psum makes the others' next psum throw an ft::Error naming the axis, the op and the rank
# within twice FT_DIST_TIMEOUT_MS.
set -uo pipefail
launch=$1
worker=$2
source "$3"
token="ft-collectives-test-$$-$RANDOM"

for np in 1 2 3; do
  start=$(now_ms)
  FT_DIST_TIMEOUT_MS=10000 timeout 60 "$launch" --timeout 50 -n "$np" "$worker" check "$token" \
    >"$TMPDIR/out" 2>"$TMPDIR/err"
  code=$?
  [[ $code -eq 0 ]] || { cat "$TMPDIR/out" "$TMPDIR/err" >&2; fail "ft_launch -n $np: exit $code"; }
  for ((r = 0; r < np; r++)); do
    expect_contains "$TMPDIR/out" "rank $r of $np (gloo): OK"
  done
  expect_elapsed_below "$start" 30000 "ft_launch -n $np check"
done

for mode in die stall; do
  start=$(now_ms)
  # By hand: ft_launch would stop the survivors itself.
  start_ranks 3 1000 "$worker" "$mode" "$token"
  for r in 0 2; do
    wait "${pids[$r]}"
    code=$?
    [[ $code -eq 3 ]] || { cat "$TMPDIR/err$r" >&2; fail "$mode: rank $r exited $code, not 3"; }
    expect_contains "$TMPDIR/err$r" "psum over axis 'dp' (rank $r of 3, gloo): "
  done
  # Twice the timeout (1000 ms), plus a second for start-up and the first psum.
  expect_elapsed_below "$start" 3000 "$mode: survivors' error"
  kill -KILL $(leftovers "$token") 2>/dev/null
  wait "${pids[1]}" 2>/dev/null
  expect_no_leftovers "$token"
done

mpirun_flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_backing_directory=$TMPDIR
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
for backend in mpi gloo; do
  start=$(now_ms)
  FT_BACKEND=$backend FT_DIST_TIMEOUT_MS=10000 timeout 50 mpirun -np 2 "${mpirun_flags[@]}" \
    -x FT_BACKEND -x FT_DIST_TIMEOUT_MS -x TMPDIR -x ASAN_OPTIONS \
    "$worker" check "$token" >"$TMPDIR/out" 2>"$TMPDIR/err"
  code=$?
  [[ $code -eq 0 ]] || { cat "$TMPDIR/out" "$TMPDIR/err" >&2; fail "mpirun, $backend: $code"; }
  expect_contains "$TMPDIR/out" "rank 0 of 2 ($backend): OK"
  expect_contains "$TMPDIR/out" "rank 1 of 2 ($backend): OK"
  expect_elapsed_below "$start" 30000 "mpirun -np 2, FT_BACKEND=$backend"
done
expect_no_leftovers "$token"
echo PASS
