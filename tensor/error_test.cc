// The //tensor:error leaf on its own: ThrowError's message, the transform stack that
// ErrorContextScope appends (NOTE: [Transform stack in errors]), its elision past 16 scopes,
// rethrowing keeping the stack once, AllocationError being an Error, and FT_CHECK aborting.
// Oracle: the messages written out by hand from the header's rules.
#include "tensor/error.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ft {
namespace {

std::string WhatOf(void (*fn)()) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ErrorTest, ThrowErrorConcatenatesItsArgumentsWithNoStackOutsideTransforms) {
  try {
    ThrowError("matmul: size mismatch, got ", 3, " and ", int64_t{4}, " (", 2.5, ")");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "matmul: size mismatch, got 3 and 4 (2.5)");
    EXPECT_EQ(e.message(), "matmul: size mismatch, got 3 and 4 (2.5)");
    EXPECT_TRUE(e.transform_stack().empty());
  }
  EXPECT_EQ(ErrorContextScope::Describe(), "");
}

TEST(ErrorTest, ScopesNameTheTransformsInnermostFirst) {
  ErrorContextScope grad("grad", 1);
  ErrorContextScope vmap("vmap", 2);
  EXPECT_EQ(ErrorContextScope::Describe(), " (in vmap (level 2) inside grad (level 1))");
  try {
    ThrowError("mm: bad");
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "mm: bad");
    EXPECT_EQ(e.transform_stack(), " (in vmap (level 2) inside grad (level 1))");
    EXPECT_STREQ(e.what(), "mm: bad (in vmap (level 2) inside grad (level 1))");
  }
}

TEST(ErrorTest, TheBackwardPhaseIsNamed) {
  ErrorContextScope backward("vjp", 1, ErrorContextScope::Phase::kBackward);
  EXPECT_EQ(ErrorContextScope::Describe(), " (in the backward of vjp (level 1))");
}

TEST(ErrorTest, ScopesUnwindWithTheirBlocks) {
  {
    ErrorContextScope outer("jvp", 3);
    {
      ErrorContextScope inner("jacrev", 4);
      EXPECT_EQ(ErrorContextScope::Describe(), " (in jacrev (level 4) inside jvp (level 3))");
    }
    EXPECT_EQ(ErrorContextScope::Describe(), " (in jvp (level 3))");
  }
  EXPECT_EQ(ErrorContextScope::Describe(), "");
}

TEST(ErrorTest, DeepStacksNameEightInnermostAndEightOutermost) {
  std::vector<std::unique_ptr<ErrorContextScope>> scopes;
  for (int level = 1; level <= 20; ++level) {
    scopes.push_back(std::make_unique<ErrorContextScope>("vmap", level));
  }
  std::string expected = " (in vmap (level 20)";
  for (int level = 19; level >= 13; --level) {
    expected += " inside vmap (level " + std::to_string(level) + ")";
  }
  expected += " inside 4 more";
  for (int level = 8; level >= 1; --level) {
    expected += " inside vmap (level " + std::to_string(level) + ")";
  }
  expected += ")";
  EXPECT_EQ(ErrorContextScope::Describe(), expected);
  while (!scopes.empty()) scopes.pop_back();  // innermost first, as the scopes nest
  EXPECT_EQ(ErrorContextScope::Describe(), "");
}

TEST(ErrorTest, RethrowingKeepsTheStackOnceAndTheDerivedType) {
  std::string what;
  try {
    try {
      ErrorContextScope grad("grad", 1);
      throw AllocationError("empty: 2^70 bytes");
    } catch (const Error&) {
      throw;  // past the scope's end: the message was complete when it was made
    }
  } catch (const AllocationError& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "empty: 2^70 bytes (in grad (level 1))");
}

TEST(ErrorTest, ErrorsAreRuntimeErrors) {
  EXPECT_THROW(ThrowError("op: x"), std::runtime_error);
  EXPECT_EQ(WhatOf([] { throw AllocationError("zeros: too large"); }), "zeros: too large");
}

TEST(ErrorDeathTest, FtCheckAbortsWithTheCondition) {
  const int one = 1;
  EXPECT_DEATH(FT_CHECK(one == 2), "FT_CHECK failed: one == 2");
}

}  // namespace
}  // namespace ft
