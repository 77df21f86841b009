#!/usr/bin/env bash
# Runs the installer ($1, //tools/install:install) into the test's temporary directory and
# checks the installed tree: the headers (each one's own includes resolve inside it), both
# libraries with ft's symbols, the CMake and pkg-config files with this prefix's paths (and,
# when cmake and pkg-config are on the machine, what they make of them); a run without a
# prefix refuses, and a second run changes nothing.
set -uo pipefail
installer=$1
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Without a prefix: a clear refusal, nothing installed.
if out=$("$installer" 2>&1); then
  fail "the installer without PREFIX exited 0"
fi
[[ "$out" == *"the prefix to install ft into"* ]] || fail "no usage message without PREFIX: $out"

# A relative prefix is taken from the directory `bazel run` was started in.
export BUILD_WORKING_DIRECTORY=$TEST_TMPDIR
prefix="${TEST_TMPDIR}/some/prefix"
if ! out=$("$installer" some/prefix 2>&1); then
  echo "$out" >&2
  echo "FAIL: the installer exited non-zero" >&2
  exit 1
fi
echo "$out"
for shown in "into ${prefix}:" "include/ft/ (" "lib/libft.so" "lib/libft.a" \
  "lib/cmake/ft/ftConfig.cmake" "lib/cmake/ft/ftConfigVersion.cmake" "lib/pkgconfig/ft.pc"; do
  [[ "$out" == *"$shown"* ]] || fail "the installer did not print '${shown}'"
done

# Headers: ft.h, everything it includes, and every include of every installed header that is
# not Abseil's, Eigen's or the standard library's, at its path in ft's tree.
inc="${prefix}/include/ft"
[[ -f "${inc}/ft.h" ]] || fail "no ${inc}/ft.h"
count=0
while IFS= read -r header; do
  count=$((count + 1))
  while IFS= read -r included; do
    case "$included" in
      absl/* | Eigen/* | unsupported/Eigen/*) ;;
      *) [[ -f "${inc}/${included}" ]] || fail "${header#"${inc}/"} includes missing ${included}" ;;
    esac
  done < <(sed -n 's/^#include "\(.*\)".*/\1/p' "$header")
done < <(find "$inc" -type f -name '*.h')
((count > 50)) || fail "only ${count} headers under ${inc}"
for name in tensor/tensor.h ops/ops.h interpreters/vmap/vmap.h interpreters/grad/grad.h \
  interpreters/jvp/jvp.h interpreters/jit/jit.h custom_function/function.h \
  control_flow/control_flow.h interop/eigen.h interop/npy.h; do
  [[ -f "${inc}/${name}" ]] || fail "no ${inc}/${name}"
done
[[ -z "$(find "$inc" -path '*/absl/*' -o -path '*/Eigen/*' -o -path '*external*')" ]] ||
  fail "headers that are not ft's under ${inc}"

# Libraries: the shared one named libft.so inside, both holding every package's symbols.
lib="${prefix}/lib"
readelf -d "${lib}/libft.so" | grep -q 'Library soname: \[libft.so\]' || fail "libft.so: soname"
shared_symbols=$(nm -DC --defined-only "${lib}/libft.so")
static_symbols=$(nm -C --defined-only "${lib}/libft.a" 2>/dev/null)
for symbol in 'ft::RegisterAllOps()' 'ft::RegisterVmapRules()' 'ft::vmap(' 'ft::grad(' \
  'ft::jvp(' 'ft::jit(' 'ft::cond(' 'ft::while_loop(' 'ft::functionalize(' 'ft::SaveNpy('; do
  grep -qF "$symbol" <<<"$shared_symbols" || fail "libft.so lacks ${symbol}"
  grep -qF "$symbol" <<<"$static_symbols" || fail "libft.a lacks ${symbol}"
done

# CMake and pkg-config files.
config="${lib}/cmake/ft/ftConfig.cmake"
# shellcheck disable=SC2016  # CMake's ${...}, literally
for expected in 'add_library(ft::ft SHARED IMPORTED)' 'add_library(ft::ft_static STATIC IMPORTED)' \
  '/lib/libft.so"' '/lib/libft.a"' '"${_ft_prefix}/include;${_ft_prefix}/include/ft;' \
  'cxx_std_20' '-labsl_strings;' '-lsleef;' 'Threads::Threads'; do
  grep -qF -- "$expected" "$config" || fail "ftConfig.cmake lacks ${expected}"
done
version_file="${lib}/cmake/ft/ftConfigVersion.cmake"
grep -qE '^set\(PACKAGE_VERSION "[0-9]+\.[0-9]+\.[0-9]+"\)' "$version_file" ||
  fail "ftConfigVersion.cmake: no PACKAGE_VERSION"
pc="${lib}/pkgconfig/ft.pc"
grep -qx "prefix=${prefix}" "$pc" || fail "ft.pc: not prefix=${prefix}"
grep -qE '^Libs: -L\$\{libdir\} -lft .*-labsl_strings' "$pc" || fail "ft.pc: Libs"
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="${lib}/pkgconfig" pkg-config --cflags --libs ft) ||
    fail "pkg-config rejects ft.pc"
  for expected in "-I${prefix}/include " "-I${prefix}/include/ft " "-L${prefix}/lib " "-lft "; do
    [[ "$flags " == *"$expected"* ]] || fail "pkg-config --cflags --libs ft lacks ${expected}"
  done
fi
if command -v cmake >/dev/null; then
  # find_package alone (configure, no compile): the version check and the target's paths.
  project="${TEST_TMPDIR}/find_ft"
  mkdir -p "$project"
  cat >"${project}/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(find_ft CXX)
find_package(ft 99 QUIET)
if(ft_FOUND)
  message(FATAL_ERROR "find_package(ft 99) accepted version ${ft_VERSION}")
endif()
find_package(ft REQUIRED)
find_package(ft 0.1 REQUIRED)  # again, with a version: the targets are defined once
get_target_property(location ft::ft IMPORTED_LOCATION)
get_target_property(includes ft::ft INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(features ft::ft_static INTERFACE_COMPILE_FEATURES)
message(STATUS "ft::ft ${location} | ${includes} | ${features}")
EOF
  if ! out=$(cmake -S "$project" -B "${project}/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
    fail "find_package(ft) failed: ${out}"
  fi
  [[ "$out" == *"ft::ft ${prefix}/lib/libft.so | ${prefix}/include;${prefix}/include/ft"* ]] ||
    fail "ft::ft's location or include dirs: ${out}"
  [[ "$out" == *"| cxx_std_20"* ]] || fail "ft::ft_static does not ask for C++20: ${out}"
fi

# Idempotent: a second run leaves every file as it was.
sums() { (cd "$prefix" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(sums)
"$installer" "$prefix" >/dev/null || fail "the second run exited non-zero"
[[ "$(sums)" == "$before" ]] || fail "the second run changed the tree"

if ((failures > 0)); then
  echo "${failures} check(s) failed" >&2
  exit 1
fi
echo "install_test: ok"
