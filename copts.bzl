"""Compiler flags for every project target, in one place (house style rule 3)."""

# Library and binary code: strict warnings, warnings are errors.
FT_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Wno-unused-parameter",
    "-Werror",
]

# Tests and benchmarks: the same warnings, but not fatal for gtest macro noise.
FT_TEST_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-sign-compare",
    "-Wno-unused-parameter",
]
