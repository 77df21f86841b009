// ft/interpreters/jit/fuse_test_util.h  (testonly)
//
// The oracles fuse_test (the pass, fuse.h) and fused_kernel_test (the fused step,
// fused_kernel.h) share: a replay compared with the eager kernels bit for bit, the fused steps
// of a program counted, and the arithmetic chain both trace. Tests only.
//
// Example:
//   TraceResult t = Trace(&Chain, args);
//   EXPECT_EQ(CountFused(*t.program), 1);
//   ExpectSameBits(t.program->Run(next)[0], Chain(next)[0]);
#ifndef FT_INTERPRETERS_JIT_FUSE_TEST_UTIL_H_
#define FT_INTERPRETERS_JIT_FUSE_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dispatch/value.h"
#include "gtest/gtest.h"
#include "interpreters/jit/trace.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft::testing {

// ExpectSameBits: same dtype, shape and element values exactly (float32 widens to double
// exactly, so comparing doubles compares the bits of non-NaN values).
inline void ExpectSameBits(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.dtype(), expected.dtype());
  ASSERT_EQ(Shape(actual.sizes().begin(), actual.sizes().end()),
            Shape(expected.sizes().begin(), expected.sizes().end()));
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], e[i]) << "element " << i;
}

// CountFused: the fused steps of `p` (its DebugString's "fused[" entries).
inline int CountFused(const Program& p) {
  const std::string s = p.DebugString();
  int n = 0;
  for (size_t at = s.find("fused["); at != std::string::npos; at = s.find("fused[", at + 1)) ++n;
  return n;
}

// g(x, y, s) = -((x * y - s) / (y + x)^2): x [rows, 9], y a row [9], s a scalar.
inline TensorList Chain(const TensorList& a) {
  const Tensor& x = a[0];
  const Tensor& y = a[1];
  const Tensor& s = a[2];
  return {neg((x * y - s) / square(y + x))};
}

inline double ChainAt(double x, double y, double s) {
  return -((x * y - s) / ((y + x) * (y + x)));
}

// ExpectReplayKeepsTheKernelsBits traces f on args_for(1), expects `steps` steps, and
// checks a replay on args_for(7) against f run eagerly, bit for bit, and against `at`
// (f's closed form at each flat index of its one output, given args_for(7), rounded to the
// output's dtype) within atol.
inline void ExpectReplayKeepsTheKernelsBits(
    const TensorListFn& f, const std::function<TensorList(uint64_t)>& args_for, int steps,
    const std::function<double(const TensorList&, int64_t)>& at, double atol = 1e-12) {
  TraceResult t = Trace(f, args_for(1));
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(t.program->num_steps(), steps) << t.program->DebugString();
  const TensorList args = args_for(7);
  const Tensor out = t.program->Run(args)[0];
  ExpectSameBits(out, f(args)[0]);
  std::vector<double> expected;
  for (int64_t i = 0; i < out.numel(); ++i) expected.push_back(at(args, i));
  EXPECT_TENSOR_NEAR(out, to(tensor(expected, out.sizes()), out.dtype()), atol);
}

// At: element `flat` of t (row-major), as a double.
inline double At(const Tensor& t, int64_t flat) { return t.to_vector<double>()[flat]; }

}  // namespace ft::testing

#endif  // FT_INTERPRETERS_JIT_FUSE_TEST_UTIL_H_
