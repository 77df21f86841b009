#include "dispatch/random_ops.h"

#include "gtest/gtest.h"

TEST(RandomOps, NotWrittenYet) { GTEST_SKIP() << "being written"; }
