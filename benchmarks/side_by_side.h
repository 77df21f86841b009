// ft/benchmarks/side_by_side.h  (testonly)
//
// Side-by-side benchmark reporting: every figure is measured next to its baseline in the same
// run, and the run ends with a table of medians and ratios.
//
// Convention: a benchmark named "<figure>/ft" is ft's measurement and "<figure>/baseline"
// the reference for the same work (a hand-written Eigen loop, Eigen's GEMM, ...). Register
// both with benchmark::RegisterBenchmark. Benchmarks are repeated (kRepetitions) and the
// median is reported. An optional per-figure target (the bound) is printed beside
// the ratio; it is informative, never asserted.
//
// With FT_BENCH_JSON=<path> in the environment, RunAndCompare also writes the medians as JSON
// (a list of {"figure", "ft", "baseline", "per_units", "unit"}, times in seconds per call,
// null where a side was not run), which //benchmarks:compare reads.
//
// Example (a benchmark binary's main):
//   int main(int argc, char** argv) { return ft::bench::RunAndCompare(argc, argv); }
#ifndef FT_BENCHMARKS_SIDE_BY_SIDE_H_
#define FT_BENCHMARKS_SIDE_BY_SIDE_H_

#include <map>
#include <optional>
#include <string>

#include "benchmark/benchmark.h"

namespace ft::bench {

inline constexpr int kRepetitions = 7;

// SmokeTest is true when FT_BENCH_SMOKE is set (the `bazel test` smoke run): benchmarks then
// run once on small sizes, only to prove they work.
bool SmokeTest();

// SetFigure records the target for `figure` as text (printed, never asserted, e.g.
// "<= 1.15x" or "<= 0.10 us per op") and an optional divisor: times are reported per unit
// (e.g. per_units 100 and unit "op" for a 100-op chain).
void SetFigure(const std::string& figure, const std::string& target, double per_units = 1.0,
               const std::string& unit = "");

// MedianNanoseconds: a reported row's time per iteration in nanoseconds when the row is the
// median of a benchmark's repetitions, or its only run (the smoke run has no aggregates);
// nullopt for every other row (single repetitions, means, deviations).
std::optional<double> MedianNanoseconds(const benchmark::BenchmarkReporter::Run& run);

// RunAndCompare runs the registered benchmarks (Google Benchmark flags apply) and prints the
// comparison table. Returns the process exit code.
int RunAndCompare(int argc, char** argv);

}  // namespace ft::bench

#endif  // FT_BENCHMARKS_SIDE_BY_SIDE_H_
