#!/usr/bin/env bash
# ft_launch end to end: P = 2 and 3 ranks that all succeed; a failing rank stops the others
# quickly and leaves nothing behind; --timeout; usage errors.
set -uo pipefail
launch=$1
worker=$2
source "$3"
token="ft-launch-test-$$-$RANDOM"
out=$TMPDIR/out
err=$TMPDIR/err

for p in 2 3; do
  start=$(now_ms)
  timeout 60 "$launch" -n "$p" "$worker" allreduce gloo "$token" >"$out" 2>"$err"
  code=$?
  [[ $code -eq 0 ]] || { cat "$out" "$err" >&2; fail "P=$p: ft_launch exited $code"; }
  for ((r = 0; r < p; r++)); do
    expect_contains "$out" "[$r] rank $r of $p (gloo): OK"
  done
  expect_elapsed_below "$start" 30000 "P=$p allreduce"
done
expect_no_leftovers "$token"
[[ -z $(ls "$TMPDIR" | grep ft-launch-) ]] || fail "store directory left behind"

# Rank 1 exits 7; ranks 0 and 2 sleep 60 s unless ft_launch stops them.
start=$(now_ms)
timeout 60 "$launch" -n 3 "$worker" fail gloo "$token" >"$out" 2>"$err"
code=$?
[[ $code -eq 7 ]] || { cat "$out" "$err" >&2; fail "failing rank: ft_launch exited $code, not 7"; }
expect_contains "$err" "ft_launch: rank 1 exited with code 7; stopping the other ranks"
expect_contains "$err" "[1] rank 1: failing on purpose"
expect_elapsed_below "$start" 10000 "failing rank"
expect_no_leftovers "$token"

# --timeout: both ranks sleep 60 s.
start=$(now_ms)
timeout 60 "$launch" --timeout 1 -n 2 "$worker" sleep gloo "$token" >"$out" 2>"$err"
code=$?
[[ $code -eq 124 ]] || { cat "$out" "$err" >&2; fail "--timeout: ft_launch exited $code"; }
expect_contains "$err" "ft_launch: timed out after 1"
expect_elapsed_below "$start" 10000 "--timeout 1"
expect_no_leftovers "$token"

# A program that cannot run is a failing rank.
timeout 20 "$launch" -n 2 "$TMPDIR/no-such-program" >"$out" 2>"$err"
code=$?
[[ $code -eq 127 ]] || fail "missing program: ft_launch exited $code, not 127"
expect_contains "$err" "cannot run $TMPDIR/no-such-program"

# Usage errors: exit 2 with a message.
usage_case() {
  local want=$1
  shift
  timeout 10 "$launch" "$@" >"$out" 2>"$err"
  local code=$?
  [[ $code -eq 2 ]] || fail "ft_launch $*: exited $code, not 2"
  expect_contains "$err" "$want"
}
usage_case "missing -n N"
usage_case "missing -n N" "$worker"
usage_case "-n 0: the number of ranks must be an integer" -n 0 "$worker"
usage_case "-n x: the number of ranks must be an integer" -n x "$worker"
usage_case "missing PROGRAM" -n 2
usage_case "-n needs a value" -n
usage_case "--timeout 0: must be a number of seconds > 0" --timeout 0 -n 2 "$worker"
usage_case "unknown option --bogus" --bogus -n 2 "$worker"
echo PASS
