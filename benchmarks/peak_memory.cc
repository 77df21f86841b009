// Peak memory of the per-sample-gradient workload (benchmarks/per_sample.h): ft's
// vmap(grad(loss)) against the hand-written Eigen version, MLPs 32-64-64-10 and 784-128-10,
// B = 64 and 1024. Target (issue "grad, vjp, ..."): ft at most 1.5x the hand-written peak.
//   bazel run -c opt //benchmarks:peak_memory
//
// Each figure is measured in a fresh process (this binary re-run with --measure), so that
// memory freed by an earlier measurement cannot hide a later one: the process builds the
// inputs, runs one-time initialization on a tiny problem, resets the kernel's high-water mark
// (/proc/self/clear_refs), runs the workload once keeping its results, and reports VmHWM minus
// the resident size before the run. Inputs are not counted; results are, for both.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/per_sample.h"
#include "ft.h"

namespace ft::bench {
namespace {

// StatusKb reads a "Name:   123 kB" line of /proc/self/status.
int64_t StatusKb(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::atoll(line.c_str() + name.size() + 1);
  }
  return -1;
}

std::vector<int64_t> ParseSizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, '-')) sizes.push_back(std::atoll(part.c_str()));
  return sizes;
}

// Measure: one workload in this process; prints the peak increase in kB.
int Measure(const std::string& variant, const std::string& sizes_text, int64_t batch) {
  const std::vector<int64_t> sizes = ParseSizes(sizes_text);
  PerSampleProblem p = MakePerSampleProblem(sizes, batch);
  PerSampleProblem tiny = MakePerSampleProblem(sizes, 1);
  const bool ft = variant == "ft";
  TensorListFn per_sample = PerSampleGradsFt(p);
  if (ft) PerSampleGradsFt(tiny)(tiny.args);  // registries and one-time initialization
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  const int64_t before = StatusKb("VmRSS");
  int64_t kept = 0;
  if (ft) {
    const TensorList grads = per_sample(p.args);
    kept = grads[0].numel();
  } else {
    const std::vector<EigenRowMatrix> grads = PerSampleGradsEigen(p);
    kept = grads[0].size();
  }
  const int64_t peak = StatusKb("VmHWM");
  std::printf("%lld %lld\n", static_cast<long long>(peak - before),
              static_cast<long long>(kept));
  return 0;
}

// Run: this binary with --measure in a fresh process; the peak increase in kB.
int64_t Run(const std::string& self, const std::string& variant, const std::string& sizes,
            int64_t batch) {
  const std::string cmd = self + " --measure " + variant + " " + sizes + " " +
                          std::to_string(batch);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  long long kb = -1, kept = 0;
  if (std::fscanf(pipe, "%lld %lld", &kb, &kept) != 2) kb = -1;
  if (pclose(pipe) != 0) kb = -1;
  return kb;
}

int Drive() {
  const bool smoke = std::getenv("FT_BENCH_SMOKE") != nullptr;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  std::printf("| figure | ft peak | baseline peak | ft / baseline | target |\n");
  std::printf("|---|---|---|---|---|\n");
  int status = 0;
  for (const std::string sizes : {"32-64-64-10", "784-128-10"}) {
    for (int64_t batch : {int64_t{64}, int64_t{1024}}) {
      if (smoke && (batch != 64 || sizes != "32-64-64-10")) continue;
      const int64_t ft = Run(self, "ft", sizes, batch);
      const int64_t eigen = Run(self, "eigen", sizes, batch);
      if (ft < 0 || eigen < 0) {
        std::fprintf(stderr, "peak_memory: a measurement failed (%s, B=%lld)\n", sizes.c_str(),
                     static_cast<long long>(batch));
        status = 1;
        continue;
      }
      std::printf("| per_sample_grads_%s_B%lld peak | %.2f MB | %.2f MB | %.2fx | <= 1.5x |\n",
                  sizes.c_str(), static_cast<long long>(batch), ft / 1024.0, eigen / 1024.0,
                  eigen > 0 ? static_cast<double>(ft) / static_cast<double>(eigen) : 0.0);
    }
  }
  return status;
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--measure") {
    return ft::bench::Measure(argv[2], argv[3], std::atoll(argv[4]));
  }
  return ft::bench::Drive();
}
