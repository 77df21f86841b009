// ft/tests/property/runner.h  (testonly)
//
// RunCases: generates and checks a range of property cases (stack.h), shrinks each mismatch
// and tallies what happened, for the property test (a fixed range in CI) and the soak binary
// (as many as asked for).
//
// Example:
//   Tally t = RunCases(/*first_seed=*/1, /*count=*/2000, &std::cerr);
//   // t.mismatches.empty() when every case agreed with its oracle
#ifndef FT_TESTS_PROPERTY_RUNNER_H_
#define FT_TESTS_PROPERTY_RUNNER_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ft::property {

struct Tally {
  int64_t cases = 0;
  int64_t checked = 0;                             // compared with an oracle and agreed
  int64_t rejected = 0;                            // an ft::Error from the transform or the oracle
  std::map<std::string, int64_t> checked_by_kind;  // by the outermost layer
  std::map<std::string, int64_t> rejected_by_kind;
  std::map<std::string, int64_t> rejection_reasons;  // message starts
  std::map<std::string, uint64_t> rejection_seeds;   // a seed of each reason
  std::map<std::string, int64_t> redraw_reasons;     // why GenerateCase redrew a stack
  std::map<std::string, uint64_t> redraw_seeds;
  std::map<std::string, int64_t> entries_checked;  // catalog entries in checked cases
  std::map<int64_t, int64_t> checked_by_depth;
  int64_t redrawn_stacks = 0;
  std::vector<uint64_t> mismatch_seeds;
  std::vector<std::string> mismatches;  // each a regression test to paste
  std::string Summary() const;
};

// RunCases: cases first_seed .. first_seed + count - 1. Progress and every shrunk mismatch
// go to `log` when not null.
Tally RunCases(uint64_t first_seed, int64_t count, std::ostream* log);

}  // namespace ft::property

#endif  // FT_TESTS_PROPERTY_RUNNER_H_
