// The property soak: `./bazelw run -c opt //tests/property:soak -- --programs=100000
// [--seed=N]` checks that many random cases (stack.h) from seed N (default 1000000, past
// the seeds CI runs) and prints every shrunk mismatch and a summary. Exit status 1 when any
// case mismatched. `--show=S` prints case S as a regression test and its outcome instead.
#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/property/runner.h"
#include "tests/property/stack.h"

int main(int argc, char** argv) {
  int64_t programs = 10000;
  uint64_t seed = 1000000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--programs=", 0) == 0) {
      programs = std::atoll(arg.c_str() + 11);
    } else if (arg.rfind("--show=", 0) == 0) {
      const ft::property::Case c =
          ft::property::GenerateCase(std::strtoull(arg.c_str() + 7, nullptr, 10));
      const ft::property::Outcome o = ft::property::Check(c);
      std::cout << ft::property::RegressionTest(c, o) << "status " << o.status << "\n";
      return 0;
    } else if (arg.rfind("--seed=", 0) == 0) {
      seed = std::strtoull(arg.c_str() + 7, nullptr, 10);
    } else {
      std::cerr << "usage: soak [--programs=N] [--seed=S] | [--show=S]\n";
      return 2;
    }
  }
  const ft::property::Tally t = ft::property::RunCases(seed, programs, &std::cerr);
  std::cout << t.Summary();
  return t.mismatches.empty() ? 0 : 1;
}
