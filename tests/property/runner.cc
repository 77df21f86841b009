#include "tests/property/runner.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/property/program.h"
#include "tests/property/stack.h"

namespace ft::property {

namespace {

// The start of a message, without the numbers that make every instance different.
std::string Reason(const std::string& message) {
  std::string r;
  for (char ch : message.substr(0, 90)) {
    if (ch >= '0' && ch <= '9') {
      if (r.empty() || r.back() != '#') r += '#';
    } else {
      r += ch;
    }
  }
  return r;
}

}  // namespace

std::string Tally::Summary() const {
  std::string s =
      absl::StrCat(cases, " cases: ", checked, " checked against their oracles, ", rejected,
                   " rejected (an ft::Error, or out of the oracle's reach), ", mismatches.size(),
                   " mismatches (", redrawn_stacks, " stacks redrawn)\n");
  absl::StrAppend(&s, "checked by outermost layer:");
  for (const auto& [kind, n] : checked_by_kind) absl::StrAppend(&s, " ", kind, "=", n);
  absl::StrAppend(&s, "\nchecked by depth:");
  for (const auto& [depth, n] : checked_by_depth) absl::StrAppend(&s, " ", depth, "=", n);
  absl::StrAppend(&s, "\nrejected by outermost layer:");
  for (const auto& [kind, n] : rejected_by_kind) absl::StrAppend(&s, " ", kind, "=", n);
  std::vector<std::pair<int64_t, std::string>> reasons;
  for (const auto& [why, n] : rejection_reasons) reasons.emplace_back(n, why);
  std::sort(reasons.rbegin(), reasons.rend());
  absl::StrAppend(&s, "\nmost common rejections:\n");
  for (size_t i = 0; i < reasons.size() && i < 12; ++i) {
    absl::StrAppend(&s, "  ", reasons[i].first, "x ", reasons[i].second, " (e.g. seed ",
                    rejection_seeds.at(reasons[i].second), ")\n");
  }
  std::vector<std::pair<int64_t, std::string>> redraws;
  for (const auto& [why, n] : redraw_reasons) redraws.emplace_back(n, why);
  std::sort(redraws.rbegin(), redraws.rend());
  absl::StrAppend(&s, "most common stack redraws:\n");
  for (size_t i = 0; i < redraws.size() && i < 40; ++i) {
    absl::StrAppend(&s, "  ", redraws[i].first, "x ", redraws[i].second, " (e.g. seed ",
                    redraw_seeds.at(redraws[i].second), ")\n");
  }
  return s;
}

Tally RunCases(uint64_t first_seed, int64_t count, std::ostream* log) {
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(i);
    std::vector<std::string> redrawn;
    const Case c = GenerateCase(seed, &redrawn);
    t.redrawn_stacks += static_cast<int64_t>(redrawn.size());
    for (const std::string& why : redrawn) {
      ++t.redraw_reasons[Reason(why)];
      t.redraw_seeds.emplace(Reason(why), seed);
    }
    const Outcome o = Check(c);
    ++t.cases;
    const std::string kind = c.stack.empty() ? "none" : KindName(c.stack.front().kind);
    switch (o.status) {
      case Outcome::kPass: {
        ++t.checked;
        ++t.checked_by_kind[kind];
        ++t.checked_by_depth[static_cast<int64_t>(c.stack.size())];
        std::set<std::string> names;
        for (const Step& s : c.program.steps) names.insert(CatalogName(s.op));
        for (const std::string& n : names) ++t.entries_checked[n];
        break;
      }
      case Outcome::kRejected:
        ++t.rejected;
        ++t.rejected_by_kind[kind];
        ++t.rejection_reasons[Reason(o.message)];
        t.rejection_seeds.emplace(Reason(o.message), seed);
        break;
      case Outcome::kMismatch: {
        const Case small = Shrink(c);
        const Outcome so = Check(small);
        t.mismatch_seeds.push_back(seed);
        t.mismatches.push_back(RegressionTest(small, so.status == Outcome::kMismatch ? so : o));
        if (log)
          *log << "MISMATCH seed " << seed << ": " << o.message << "\n"
               << t.mismatches.back() << "\n";
        break;
      }
    }
    if (log && (i + 1) % 1000 == 0) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      *log << (i + 1) << " cases in " << secs << " s, " << t.mismatches.size() << " mismatches\n";
    }
  }
  return t;
}

}  // namespace ft::property
