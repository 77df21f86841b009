#!/usr/bin/env bash
# Checks the package layering of docs/architecture.md with `bazel query`: the libraries of
# each package (its cc_library targets that are not testonly: test helpers, like tests, may
# reach higher) may depend only on the packages below it. Prints offending edges and exits 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# package | what its libraries may depend on (besides itself and //third_party)
# A rule may name one target (//pkg:name) instead: that library alone is held to it.
# The order, lowest first (docs/architecture.md, "Packages"): //tensor:error, //cpu, //tensor,
# //kernels and //dispatch (side by side: neither knows the other), //ops, then the rules and
# the transforms.
core="//tensor/... + //cpu/..."            # the tensor core and the backend below it
kernels="${core} + //kernels/..."          # ... and the base kernels
table="${kernels} + //dispatch/... + //ops/..."  # ... the op table's machinery and the ops
rules=(
  # The leaf every package reports errors through, //cpu included.
  "//tensor:error|"
  # The CPU backend: raw pointers and sizes, below the tensor core.
  "//cpu|+ //tensor:error"
  "//tensor|+ //cpu/..."
  # The base kernels: the tensor core and the backend, never the op table or a transform.
  "//kernels|+ ${core}"
  # The op table's machinery: no op, no kernel.
  "//dispatch|+ ${core}"
  # The built-in ops: kernels made public through the table.
  "//ops|+ ${kernels} + //dispatch/..."
  "//vmap_rules|+ ${table} + //interpreters/vmap:core"
  "//interpreters/vmap|+ ${table} + //vmap_rules/..."
  "//autograd|+ ${table}"
  "//interpreters/grad|+ ${table} + //autograd/... + //interpreters/vmap/... + //vmap_rules/..."
  "//custom_function|+ ${table} + //autograd/... + //interpreters/vmap/... + //vmap_rules/... + //interpreters/grad/... + //interpreters/jvp/... + //interpreters/jit/... + //interpreters/functionalize/..."
  "//control_flow|+ ${table} + //autograd/... + //interpreters/vmap/... + //vmap_rules/... + //interpreters/grad/... + //interpreters/jvp/... + //interpreters/jit/... + //interpreters/functionalize/... + //custom_function/..."
  "//interpreters/functionalize|+ ${table}"
  "//interpreters/jit|+ ${table} + //autograd/..."
  "//interop|+ ${core}"
  "//tree|+ ${table} + //autograd/... + //interpreters/... + //vmap_rules/... + //custom_function/... + //control_flow/..."
  "//interpreters/jvp|+ ${table} + //autograd/... + //interpreters/vmap/... + //vmap_rules/... + //interpreters/grad/... + //interpreters/jit/..."
  # The engine layer (process groups on Gloo and MPI); the collectives above it may go higher.
  "//distributed:process_group|+ ${core}"
  "//distributed|+ ${table} + //autograd/... + //interpreters/... + //vmap_rules/..."
)

status=0
for rule in "${rules[@]}"; do
  name=${rule%%|*}
  allowed=${rule#*|}
  pkg=${name%%:*}
  targets=${pkg}/...
  [[ $name == *:* ]] && targets=$name
  query="deps(attr(testonly, 0, kind(cc_library, ${targets}))) intersect //... except ${pkg}/... except //third_party/... except (//third_party/... ${allowed})"
  if ! bad=$(./bazelw query --noshow_progress "$query" 2>/tmp/ft-layering-query.log); then
    echo "layering: bazel query failed for ${name}:" >&2
    cat /tmp/ft-layering-query.log >&2
    exit 1
  fi
  if [[ -n "$bad" ]]; then
    echo "layering: ${name} must not depend on:" >&2
    echo "$bad" >&2
    status=1
  else
    echo "layering: ${name} ok"
  fi
done
exit "$status"
