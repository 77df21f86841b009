#!/usr/bin/env bash
# Installs ft @FT_VERSION@ into a prefix: `./bazelw run -c opt //:install -- PREFIX`.
#
#   PREFIX/include/ft/...           ft.h and every header it reaches, at its path in ft's tree
#   PREFIX/lib/libft.so, libft.a    every ft package, shared and static
#   PREFIX/lib/cmake/ft/            ftConfig.cmake, ftConfigVersion.cmake (find_package(ft))
#   PREFIX/lib/pkgconfig/ft.pc      pkg-config --cflags --libs ft
#
# A relative PREFIX is taken from the directory `bazel run` was started in (with ./bazelw, the
# checkout's root). Installing again overwrites the same files with the same contents. This
# file is a template that tools/install/ft_installer.bzl fills with the manifest's path.
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "install: expected one argument, the prefix to install ft into, e.g." >&2
  echo "  ./bazelw run -c opt //:install -- \$HOME/.local" >&2
  exit 2
fi
prefix=$1
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/${prefix}"
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# The runfiles root: beside this program under `bazel run` and bazel-bin, or the test's.
if [[ -d "$0.runfiles" ]]; then
  runfiles="$0.runfiles"
elif [[ -n "${RUNFILES_DIR:-}" ]]; then
  runfiles=$RUNFILES_DIR
elif [[ -n "${TEST_SRCDIR:-}" ]]; then
  runfiles=$TEST_SRCDIR
else
  echo "install: cannot find the runfiles of $0; run it with bazel run" >&2
  exit 1
fi
manifest="${runfiles}/@FT_MANIFEST@"
[[ -f "$manifest" ]] || { echo "install: no manifest at ${manifest}" >&2; exit 1; }

headers=0
others=()
while IFS=$'\t' read -r mode dest src; do
  [[ "$mode" == \#* ]] && continue
  target="${prefix}/${dest}"
  if [[ "$dest" == *.pc ]]; then
    tmp=$(mktemp)
    escaped=$(printf '%s' "$prefix" | sed 's/[\\&|]/\\&/g')  # for sed's replacement
    sed "s|@PREFIX@|${escaped}|" "${runfiles}/${src}" >"$tmp"
    install -D -m "$mode" "$tmp" "$target"
    rm -f "$tmp"
  else
    install -D -m "$mode" "${runfiles}/${src}" "$target"
  fi
  if [[ "$dest" == include/* ]]; then
    headers=$((headers + 1))
  else
    others+=("$dest")
  fi
done <"$manifest"

echo "Installed ft @FT_VERSION@ into ${prefix}:"
echo "  include/ft/ (${headers} headers: ft.h, tensor/tensor.h, ...)"
printf '  %s\n' "${others[@]}"
echo "Use it from CMake: find_package(ft REQUIRED), target ft::ft (or ft::ft_static), with"
echo "  -DCMAKE_PREFIX_PATH=${prefix}; from pkg-config:"
echo "  PKG_CONFIG_PATH=${prefix}/lib/pkgconfig pkg-config --cflags --libs ft"
