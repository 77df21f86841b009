#!/usr/bin/env bash
# The worker under `mpirun -np 2` on this machine: the MPI engine, and Gloo bootstrapped
# through MPI (FT_BACKEND=gloo).
set -uo pipefail
worker=$1
source "$2"
token="ft-mpi-test-$$-$RANDOM"
out=$TMPDIR/out
err=$TMPDIR/err

mpirun_flags=(-np 2 --oversubscribe)
# Open MPI refuses root without this flag; CI runs as root.
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)

for backend in mpi gloo; do
  start=$(now_ms)
  FT_BACKEND=$backend FT_DIST_TIMEOUT_MS=10000 timeout 50 mpirun "${mpirun_flags[@]}" \
    -x FT_BACKEND -x FT_DIST_TIMEOUT_MS -x TMPDIR "$worker" allreduce "$backend" "$token" \
    >"$out" 2>"$err"
  code=$?
  [[ $code -eq 0 ]] || { cat "$out" "$err" >&2; fail "mpirun, FT_BACKEND=$backend: exit $code"; }
  expect_contains "$out" "rank 0 of 2 ($backend): OK"
  expect_contains "$out" "rank 1 of 2 ($backend): OK"
  expect_elapsed_below "$start" 40000 "mpirun -np 2, FT_BACKEND=$backend"
done
[[ -z $(ls "$TMPDIR" | grep ft-gloo-store-) ]] || fail "Gloo's store directory left behind"
expect_no_leftovers "$token"
echo PASS
