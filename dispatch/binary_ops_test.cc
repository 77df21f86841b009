#include "dispatch/binary_ops.h"

#include "gtest/gtest.h"

TEST(BinaryOps, NotWrittenYet) { GTEST_SKIP() << "being written"; }
