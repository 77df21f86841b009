# Helpers of the sh_tests of //distributed (sourced, not run).
#
# Every test runs its processes under a unique TOKEN argument, so that it can tell whether any
# of them is left behind, and bounds each step in wall time.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# now_ms: milliseconds since the epoch.
now_ms() {
  date +%s%3N
}

# leftovers TOKEN: the pids of processes whose command line contains TOKEN (not this shell's).
leftovers() {
  local f pid args
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    args=$(tr '\0' ' ' <"$f" 2>/dev/null) || continue
    [[ $args == *"$1"* ]] && echo "$pid"
  done
}

# expect_no_leftovers TOKEN: fails when a process of TOKEN still runs (after up to 2 s).
expect_no_leftovers() {
  local i
  for i in $(seq 20); do
    [[ -z $(leftovers "$1") ]] && return 0
    sleep 0.1
  done
  fail "processes left behind: $(leftovers "$1" | tr '\n' ' ')"
}

# expect_contains FILE TEXT
expect_contains() {
  grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks: $2"; }
}

# expect_elapsed_below START_MS LIMIT_MS WHAT
expect_elapsed_below() {
  local elapsed=$(($(now_ms) - $1))
  ((elapsed < $2)) || fail "$3 took ${elapsed} ms, more than $2 ms"
  echo "$3: ${elapsed} ms"
}

# start_ranks P TIMEOUT_MS COMMAND...: starts ranks 0..P-1 of COMMAND in the background by
# hand, as ft_launch would but without its stopping the others when one fails, with a fresh
# store and FT_DIST_TIMEOUT_MS=TIMEOUT_MS; their pids in $pids, rank r's output in
# $TMPDIR/out$r and $TMPDIR/err$r, each bounded to 30 s.
start_ranks() {
  local p=$1 timeout_ms=$2 r store
  shift 2
  store=$(mktemp -d)
  pids=()
  for ((r = 0; r < p; r++)); do
    FT_RANK=$r FT_WORLD_SIZE=$p FT_STORE="file:$store" FT_DIST_TIMEOUT_MS=$timeout_ms \
      timeout 30 "$@" >"$TMPDIR/out$r" 2>"$TMPDIR/err$r" &
    pids+=($!)
  done
}

export TMPDIR=${TEST_TMPDIR:-$(mktemp -d)}
