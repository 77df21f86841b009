#include "dispatch/linalg_ops.h"

#include "gtest/gtest.h"

TEST(LinalgOps, NotWrittenYet) { GTEST_SKIP() << "being written"; }
