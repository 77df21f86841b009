#!/usr/bin/env bash
# Ranks started by hand (as ft_launch would, but without its stopping the others): a peer that
# dies or stalls mid-run makes the survivors throw ft::Error within twice FT_DIST_TIMEOUT_MS,
# and a peer missing at start-up is named.
set -uo pipefail
worker=$1
source "$2"
token="ft-peer-test-$$-$RANDOM"

# A peer killed by SIGKILL after the first AllReduce: the survivors' next one fails.
start=$(now_ms)
start_ranks 3 1000 "$worker" die gloo "$token"
for r in 0 2; do
  wait "${pids[$r]}"
  code=$?
  [[ $code -eq 3 ]] || { cat "$TMPDIR/err$r" >&2; fail "die: rank $r exited $code, not 3"; }
  expect_contains "$TMPDIR/err$r" "rank $r: ft::Error after"
  expect_contains "$TMPDIR/err$r" "AllReduce (gloo): rank $r of 3: "
done
wait "${pids[1]}"
code=$?
[[ $code -eq 137 ]] || fail "die: rank 1 exited $code, not 137 (SIGKILL)"
expect_elapsed_below "$start" 10000 "die"
expect_no_leftovers "$token"

# A peer stopped (SIGSTOP) after the first AllReduce: the survivor times out.
start=$(now_ms)
start_ranks 2 1000 "$worker" stall gloo "$token"
wait "${pids[0]}"
code=$?
[[ $code -eq 3 ]] || { cat "$TMPDIR/err0" >&2; fail "stall: rank 0 exited $code, not 3"; }
expect_contains "$TMPDIR/err0" "AllReduce (gloo): rank 0 of 2: timed out after 1000 ms waiting"
expect_elapsed_below "$start" 10000 "stall"
# The stopped worker (a child of `timeout`, which a stopped child does not end): by its token.
kill -KILL $(leftovers "$token") 2>/dev/null
wait "${pids[1]}" 2>/dev/null
expect_no_leftovers "$token"

# FT_WORLD_SIZE=2 but only rank 0 starts: a clear error naming rank 1, within the bound.
start=$(now_ms)
store=$(mktemp -d)
FT_RANK=0 FT_WORLD_SIZE=2 FT_STORE="file:$store" FT_DIST_TIMEOUT_MS=500 \
  timeout 30 "$worker" allreduce gloo "$token" >"$TMPDIR/out0" 2>"$TMPDIR/err0"
code=$?
[[ $code -eq 3 ]] || { cat "$TMPDIR/err0" >&2; fail "missing peer: rank 0 exited $code"; }
expect_contains "$TMPDIR/err0" \
  "ft::Error: init (gloo): rank 0 of 2: peer rank(s) 1 did not join within 500 ms"
expect_elapsed_below "$start" 5000 "missing peer"

# No group in the environment at all.
env -u FT_RANK -u FT_WORLD_SIZE -u FT_STORE timeout 30 "$worker" allreduce >"$TMPDIR/out0" \
  2>"$TMPDIR/err0"
[[ $? -eq 3 ]] || fail "no environment: not an ft::Error"
expect_contains "$TMPDIR/err0" "init_process_group: no process group in the environment"
echo PASS
