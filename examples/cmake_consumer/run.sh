#!/usr/bin/env bash
# Builds consumer.cc against ft installed in PREFIX (`./bazelw run -c opt //:install --
# PREFIX`) two ways and runs what it built: the CMake project here (find_package(ft), linked
# to ft::ft and to ft::ft_static) and a plain compiler line from `pkg-config --cflags --libs
# ft`. Each program checks its own results. CI runs this (.ci/run).
# Usage: examples/cmake_consumer/run.sh PREFIX [BUILD_DIR]; BUILD_DIR defaults to a temporary
# directory, removed afterwards.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 PREFIX [BUILD_DIR]  (PREFIX: where //:install put ft)" >&2
  exit 2
fi
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -eq 2 ]]; then
  build=$2
  mkdir -p "$build"
else
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
fi
jobs=$(nproc)

echo "== CMake: find_package(ft) from ${prefix}"
cmake -S "$here" -B "${build}/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "${build}/cmake" --parallel "$jobs"
"${build}/cmake/consumer"
"${build}/cmake/consumer_static"

echo "== pkg-config: \$(pkg-config --cflags --libs ft)"
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig${PKG_CONFIG_PATH:+:${PKG_CONFIG_PATH}}"
# ft is C++20 (the .pc file cannot say so); the rpath lets the program find libft.so.
read -ra ft_flags <<<"$(pkg-config --cflags --libs ft)"
libdir=$(pkg-config --variable=libdir ft)
# shellcheck disable=SC2206  # CXX may be a command with arguments
cxx=(${CXX:-c++} -std=c++20 -O2)
set -x
"${cxx[@]}" "${here}/consumer.cc" -o "${build}/consumer_pkgconfig" "${ft_flags[@]}" \
  -Wl,-rpath,"$libdir"
{ set +x; } 2>/dev/null
"${build}/consumer_pkgconfig"
