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

# The vector-unit flags of the GEMM copies compiled once per CPU capability
# (cpu/cpu_capability.h): //cpu:gemm_<isa> and //benchmarks:gemm_libs_eigen_<isa>, which
# must measure the same code ft runs.
FT_GEMM_ISA_COPTS = {
    "sse2": [],
    "avx2": [
        "-mavx2",
        "-mfma",
    ],
    "avx512": [
        "-mavx512f",
        "-mavx512dq",
        "-mfma",
    ],
}
