#include "dispatch/view_ops.h"

#include "gtest/gtest.h"

TEST(ViewOps, NotWrittenYet) { GTEST_SKIP() << "being written"; }
