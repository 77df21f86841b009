#include "benchmarks/side_by_side.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
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
      const std::optional<double> ns = MedianNanoseconds(run);
      if (!ns) continue;
      // function_name is the registered name ("<figure>/<side>"), without args/repeats.
      const std::string name = run.run_name.function_name;
      const size_t slash = name.rfind('/');
      if (slash == std::string::npos) continue;
      const std::string figure = name.substr(0, slash);
      const std::string side = name.substr(slash + 1);
      Figure& f = Figures()[figure];
      if (side == "ft") f.ft_ns = *ns;
      if (side == "baseline") f.baseline_ns = *ns;
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

// WriteJson writes the figures' medians to `path` (FT_BENCH_JSON); false when it cannot.
bool WriteJson(const char* path) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) return false;
  auto seconds = [](double ns) {
    if (ns < 0) return std::string("null");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6e", ns * 1e-9);
    return std::string(buf);
  };
  std::fprintf(out, "[");
  bool first = true;
  for (const auto& [name, f] : Figures()) {
    if (f.ft_ns < 0 && f.baseline_ns < 0) continue;
    std::fprintf(out, "%s\n  {\"figure\": \"%s\", \"ft\": %s, \"baseline\": %s, "
                 "\"per_units\": %g, \"unit\": \"%s\"}",
                 first ? "" : ",", name.c_str(), seconds(f.ft_ns).c_str(),
                 seconds(f.baseline_ns).c_str(), f.per_units, f.unit.c_str());
    first = false;
  }
  std::fprintf(out, "\n]\n");
  return std::fclose(out) == 0;
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

std::optional<double> MedianNanoseconds(const benchmark::BenchmarkReporter::Run& run) {
  using Run = benchmark::BenchmarkReporter::Run;
  const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
  const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
  if (!median && !single) return std::nullopt;
  return run.GetAdjustedRealTime() * benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
         benchmark::GetTimeUnitMultiplier(run.time_unit);
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
  if (const char* path = std::getenv("FT_BENCH_JSON"); path != nullptr && *path != '\0') {
    if (!WriteJson(path)) {
      std::fprintf(stderr, "cannot write FT_BENCH_JSON=%s\n", path);
      return 1;
    }
  }
  return 0;
}

}  // namespace ft::bench
