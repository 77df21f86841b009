#include "dispatch/reduction_ops.h"

#include "gtest/gtest.h"

TEST(ReductionOps, NotWrittenYet) { GTEST_SKIP() << "being written"; }
