#include "benchmarks/compare.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "benchmark/benchmark.h"

namespace ft::bench {
namespace {

struct Figure {
  std::string target;
  double per_units = 1;
  std::string unit;
  double ft_ns = -1;
  double baseline_ns = -1;
};

std::map<std::string, Figure>& Figures() {
  static auto* figures = new std::map<std::string, Figure>();
  return *figures;
}

// Collects the median of each benchmark while the console reporter prints as usual.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Aggregate || run.aggregate_name != "median") continue;
      // function_name is the registered name ("<figure>/<side>"), without args/repeats.
      const std::string name = run.run_name.function_name;
      const size_t slash = name.rfind('/');
      if (slash == std::string::npos) continue;
      const std::string figure = name.substr(0, slash);
      const std::string side = name.substr(slash + 1);
      const double ns = run.GetAdjustedRealTime() *
                        benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
                        benchmark::GetTimeUnitMultiplier(run.time_unit);
      Figure& f = Figures()[figure];
      if (side == "ft") f.ft_ns = ns;
      if (side == "baseline") f.baseline_ns = ns;
    }
  }
};

std::string Human(double ns) {
  char buf[64];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof(buf), "%.3g ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3g us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g ms", ns / 1e6);
  }
  return buf;
}

}  // namespace

bool SmokeTest() { return std::getenv("FT_BENCH_SMOKE") != nullptr; }

void SetFigure(const std::string& figure, const std::string& target, double per_units,
               const std::string& unit) {
  Figure& f = Figures()[figure];
  f.target = target;
  f.per_units = per_units;
  f.unit = unit;
}

int RunAndCompare(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\n| figure | ft (median) | baseline (median) | ft / baseline | target |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& [name, f] : Figures()) {
    if (f.ft_ns < 0) continue;
    const std::string per = f.unit.empty() ? "" : " per " + f.unit;
    std::string ft = Human(f.ft_ns / f.per_units) + per;
    std::string base = f.baseline_ns < 0 ? "-" : Human(f.baseline_ns / f.per_units) + per;
    char ratio[32] = "-";
    if (f.baseline_ns > 0) std::snprintf(ratio, sizeof(ratio), "%.2fx", f.ft_ns / f.baseline_ns);
    std::printf("| %s | %s | %s | %s | %s |\n", name.c_str(), ft.c_str(), base.c_str(), ratio,
                f.target.empty() ? "-" : f.target.c_str());
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace ft::bench
