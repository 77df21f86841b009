// Tests for tensor/factories.h: every factory and overload, dtype defaults (as in PyTorch),
// values against literal expectations, and every error.
#include "tensor/factories.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Shape SizesOf(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }
Shape S(std::initializer_list<int64_t> v) { return Shape(v); }

const DType kAll[] = {kFloat32, kFloat64, kInt64, kBool};

TEST(Empty, ShapeDTypeAndLayout) {
  Tensor t = empty({2, 3});
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(SizesOf(t), S({2, 3}));
  EXPECT_TRUE(t.is_contiguous());
  for (DType d : kAll) EXPECT_EQ(empty({4}, d).dtype(), d);
  EXPECT_EQ(empty({}).numel(), 1);
  EXPECT_EQ(empty({0, 5}).numel(), 0);
  EXPECT_FT_ERROR(empty({2, -1}), "empty: negative size in shape [2, -1]");
}

TEST(ZerosOnes, EveryDType) {
  for (DType d : kAll) {
    SCOPED_TRACE(DTypeName(d));
    Tensor z = zeros({2, 3}, d);
    Tensor o = ones({2, 3}, d);
    EXPECT_EQ(z.dtype(), d);
    EXPECT_EQ(o.dtype(), d);
    EXPECT_EQ(SizesOf(z), S({2, 3}));
    EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
    EXPECT_EQ(o.to_vector<double>(), std::vector<double>(6, 1.0));
  }
  EXPECT_EQ(zeros({3}).dtype(), kFloat32);
  EXPECT_EQ(ones({3}).dtype(), kFloat32);
  EXPECT_EQ(zeros({}).item<float>(), 0.0f);
  EXPECT_EQ(ones({}, kInt64).item<int64_t>(), 1);
  EXPECT_EQ(zeros({0}).numel(), 0);
  EXPECT_EQ(ones({3, 0}, kBool).numel(), 0);
  EXPECT_FT_ERROR(zeros({-1}), "zeros: negative size in shape [-1]");
  EXPECT_FT_ERROR(ones({2, -3}, kInt64), "ones: negative size in shape [2, -3]");
}

TEST(Full, DTypeFollowsTheValueKind) {
  Tensor i = full({2}, 1);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  Tensor f = full({2}, 1.5);
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, 1.5f}));
  EXPECT_EQ(full({2}, 1.5f).dtype(), kFloat32);
  Tensor b = full({3}, true);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(full({1}, int64_t{1} << 60).item<int64_t>(), int64_t{1} << 60);
}

TEST(Full, ExplicitDTypeConverts) {
  EXPECT_TENSOR_EQ(full({2, 2}, 2.5, kFloat64), tensor({2.5, 2.5, 2.5, 2.5}, {2, 2}));
  EXPECT_TENSOR_EQ(full({3}, 2.9, kInt64), tensor(std::vector<int64_t>{2, 2, 2}));
  EXPECT_TENSOR_EQ(full({2}, -2.9, kInt64), tensor(std::vector<int64_t>{-2, -2}));
  EXPECT_TENSOR_EQ(full({2}, 0.5, kBool), tensor(std::vector<bool>{true, true}));
  EXPECT_TENSOR_EQ(full({2}, 0, kBool), tensor(std::vector<bool>{false, false}));
  EXPECT_TENSOR_EQ(full({2}, -1, kFloat32), tensor({-1.0f, -1.0f}));
  EXPECT_TENSOR_EQ(full({1}, true, kFloat64), tensor({1.0}));
  EXPECT_EQ(full({}, 3, kFloat32).dim(), 0);
  EXPECT_EQ(full({0, 2}, 3).numel(), 0);
  EXPECT_FT_ERROR(full({-2}, 1), "full: negative size in shape [-2]");
  EXPECT_FT_ERROR(full({2, -2}, 1.0, kFloat64), "full: negative size in shape [2, -2]");
}

TEST(ScalarTensor, RankZeroWithTheValueKind) {
  Tensor f = scalar_tensor(3.5);
  EXPECT_EQ(f.dim(), 0);
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.item<float>(), 3.5f);
  EXPECT_EQ(scalar_tensor(3).dtype(), kInt64);
  EXPECT_EQ(scalar_tensor(3).item<int64_t>(), 3);
  EXPECT_EQ(scalar_tensor(true).dtype(), kBool);
  Tensor d = scalar_tensor(2, kFloat64);
  EXPECT_EQ(d.dim(), 0);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.item<double>(), 2.0);
  EXPECT_EQ(scalar_tensor(-1.5, kInt64).item<int64_t>(), -1);
}

TEST(Arange, IntegralArgumentsGiveInt64) {
  EXPECT_TENSOR_EQ(arange(5), tensor(std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TENSOR_EQ(arange(1, 4), tensor(std::vector<int64_t>{1, 2, 3}));
  EXPECT_TENSOR_EQ(arange(0, 10, 3), tensor(std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_TENSOR_EQ(arange(5, 0, -1), tensor(std::vector<int64_t>{5, 4, 3, 2, 1}));
  EXPECT_TENSOR_EQ(arange(10, 0, -3), tensor(std::vector<int64_t>{10, 7, 4, 1}));
  EXPECT_TENSOR_EQ(arange(-3, 3, 2), tensor(std::vector<int64_t>{-3, -1, 1}));
  Tensor empty_range = arange(0);
  EXPECT_EQ(empty_range.dtype(), kInt64);
  EXPECT_EQ(SizesOf(empty_range), S({0}));
  EXPECT_EQ(arange(3, 3).numel(), 0);
  EXPECT_EQ(arange(3, 3, -1).numel(), 0);
  // Exact beyond 2^53 (computed in int64, not double).
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(arange(big, big + 2).to_vector<int64_t>(), (std::vector<int64_t>{big, big + 1}));
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(arange(max - 2, max).to_vector<int64_t>(), (std::vector<int64_t>{max - 2, max - 1}));
  EXPECT_EQ(arange(min, min + 4, 2).to_vector<int64_t>(), (std::vector<int64_t>{min, min + 2}));
  EXPECT_EQ(arange(max, max - 3, -2).to_vector<int64_t>(), (std::vector<int64_t>{max, max - 2}));
  // The span (2^62 * 3) and i * step overflow int64; the elements do not.
  const int64_t a = int64_t{3} << 61;
  EXPECT_EQ(arange(-a, a, int64_t{1} << 62).to_vector<int64_t>(),
            (std::vector<int64_t>{-a, -(int64_t{1} << 61), int64_t{1} << 61}));
}

TEST(Arange, FloatingArgumentsGiveFloat32) {
  Tensor a = arange(5.0);
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_TENSOR_EQ(a, tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_TENSOR_EQ(arange(0.0, 1.0, 0.25), tensor({0.0f, 0.25f, 0.5f, 0.75f}));
  EXPECT_TENSOR_EQ(arange(1, 2.5, 0.5), tensor({1.0f, 1.5f, 2.0f}));  // mixed kinds
  EXPECT_TENSOR_EQ(arange(0, 2, 0.5), tensor({0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_TENSOR_EQ(arange(1.0, -1.0, -0.5), tensor({1.0f, 0.5f, 0.0f, -0.5f}));
  // ceil((end - start) / step) elements: 0.1 steps over [0, 1) give 10, not 11.
  Tensor tenths = arange(0, 1, 0.1);
  EXPECT_EQ(tenths.dtype(), kFloat32);
  ASSERT_EQ(tenths.numel(), 10);
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(tenths.to_vector<double>()[i], 0.1 * i, 1e-6) << i;
  EXPECT_EQ(arange(0.0, 1.05, 0.1).numel(), 11);
  EXPECT_EQ(arange(0.5).numel(), 1);
}

TEST(Arange, ExplicitDType) {
  EXPECT_TENSOR_EQ(arange(0, 3, 1, kFloat64), tensor({0.0, 1.0, 2.0}));
  EXPECT_TENSOR_EQ(arange(0.0, 3.0, 1.0, kInt64), tensor(std::vector<int64_t>{0, 1, 2}));
  EXPECT_TENSOR_EQ(arange(0.0, 1.0, 0.25, kFloat64), tensor({0.0, 0.25, 0.5, 0.75}));
  EXPECT_TENSOR_EQ(arange(4, 0, -2, kFloat32), tensor({4.0f, 2.0f}));
}

TEST(Arange, Errors) {
  EXPECT_FT_ERROR(arange(0, 5, 0), "arange: step must be nonzero");
  EXPECT_FT_ERROR(arange(0.0, 1.0, 0.0), "arange: step must be nonzero");
  EXPECT_FT_ERROR(arange(0, 5, -1), "arange: upper bound and step sign are inconsistent");
  EXPECT_FT_ERROR(arange(5, 0, 1), "arange: upper bound and step sign are inconsistent");
  EXPECT_FT_ERROR(arange(-1), "arange: upper bound and step sign are inconsistent");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FT_ERROR(arange(inf), "arange: start, end and step must be finite");
  EXPECT_FT_ERROR(arange(0.0, 1.0, std::nan("")), "arange: start, end and step must be finite");
  EXPECT_FT_ERROR(arange(0.0, 1e300, 1e-300), "arange: the range");
  EXPECT_FT_ERROR(arange(0.0, 1e30, 1e20, kInt64), "must be within the int64 range");
}

TEST(Linspace, ValuesAndExactEndpoints) {
  EXPECT_TENSOR_EQ(linspace(0, 1, 5), tensor({0.0f, 0.25f, 0.5f, 0.75f, 1.0f}));
  EXPECT_TENSOR_EQ(linspace(1, -1, 3), tensor({1.0f, 0.0f, -1.0f}));
  EXPECT_TENSOR_EQ(linspace(2, 2, 3), tensor({2.0f, 2.0f, 2.0f}));
  // Both endpoints are exact even where start + (n-1)*step would round.
  for (int64_t n : {2, 3, 7, 10, 11, 100}) {
    SCOPED_TRACE(n);
    Tensor t = linspace(0.1, 0.7, n, kFloat64);
    std::vector<double> v = t.to_vector<double>();
    ASSERT_EQ(static_cast<int64_t>(v.size()), n);
    EXPECT_EQ(v.front(), 0.1);
    EXPECT_EQ(v.back(), 0.7);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(v[i], 0.1 + 0.6 * static_cast<double>(i) / static_cast<double>(n - 1), 1e-15);
    }
    Tensor f = linspace(0.1, 0.7, n);
    EXPECT_EQ(f.to_vector<float>().back(), 0.7f);
  }
}

TEST(Linspace, ZeroAndOneSteps) {
  Tensor none = linspace(0, 10, 0);
  EXPECT_EQ(SizesOf(none), S({0}));
  EXPECT_EQ(none.dtype(), kFloat32);
  // One step is the start alone (torch.linspace(0, 10, 1) == tensor([0.])).
  EXPECT_TENSOR_EQ(linspace(0, 10, 1), tensor({0.0f}));
  EXPECT_TENSOR_EQ(linspace(3, -7, 1, kFloat64), tensor({3.0}));
  EXPECT_TENSOR_EQ(linspace(3, -7, 2, kFloat64), tensor({3.0, -7.0}));
}

TEST(Linspace, OtherDTypes) {
  // int64 truncates the float values: torch.linspace(0, 10, 5, dtype=torch.int64).
  EXPECT_TENSOR_EQ(linspace(0, 10, 5, kInt64), tensor(std::vector<int64_t>{0, 2, 5, 7, 10}));
  EXPECT_TENSOR_EQ(linspace(0, 1, 3, kBool), tensor(std::vector<bool>{false, true, true}));
}

TEST(Linspace, Errors) {
  EXPECT_FT_ERROR(linspace(0, 1, -1), "linspace: number of steps must be non-negative, got -1");
  EXPECT_FT_ERROR(linspace(0, INFINITY, 3, kInt64), "linspace: start 0 and end inf must be finite");
}

TEST(Eye, SquareAndRectangular) {
  EXPECT_TENSOR_EQ(eye(3), tensor({1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f}, {3, 3}));
  EXPECT_TENSOR_EQ(eye(2, kFloat64), tensor({1.0, 0.0, 0.0, 1.0}, {2, 2}));
  EXPECT_TENSOR_EQ(eye(2, 3, kFloat32), tensor({1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(eye(3, 2, kInt64), tensor(std::vector<int64_t>{1, 0, 0, 1, 0, 0}, {3, 2}));
  EXPECT_TENSOR_EQ(eye(2, kBool), tensor(std::vector<bool>{true, false, false, true}, {2, 2}));
  EXPECT_TENSOR_EQ(eye(1), tensor({1.0f}, {1, 1}));
  EXPECT_EQ(SizesOf(eye(0)), S({0, 0}));
  EXPECT_EQ(SizesOf(eye(0, 3, kFloat32)), S({0, 3}));
  EXPECT_EQ(SizesOf(eye(2, 0, kFloat32)), S({2, 0}));
}

TEST(Eye, Errors) {
  EXPECT_FT_ERROR(eye(-1), "eye: sizes must be non-negative, got n=-1, m=-1");
  EXPECT_FT_ERROR(eye(2, -1, kFloat32), "eye: sizes must be non-negative, got n=2, m=-1");
  EXPECT_FT_ERROR(eye(-2, 2, kInt64), "eye: sizes must be non-negative, got n=-2, m=2");
}

TEST(TensorFactory, FromEachVectorType) {
  Tensor f = tensor(std::vector<float>{1.5f, -2.0f});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(SizesOf(f), S({2}));
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  Tensor d = tensor(std::vector<double>{0.1, 0.2, 0.3}, {3, 1});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(SizesOf(d), S({3, 1}));
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0.1, 0.2, 0.3}));
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor i = tensor(std::vector<int64_t>{big, -big, 0});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{big, -big, 0}));
  Tensor small = tensor(std::vector<int>{1, -2, 3, 4}, {2, 2});
  EXPECT_EQ(small.dtype(), kInt64);
  EXPECT_EQ(SizesOf(small), S({2, 2}));
  EXPECT_EQ(small.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4}));
  Tensor b = tensor(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_TRUE(b.is_contiguous());
}

TEST(TensorFactory, FromInitializerLists) {
  EXPECT_EQ(tensor({1.0f, 2.0f}).dtype(), kFloat32);
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat64);
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt64);
  EXPECT_EQ(tensor({int64_t{1}, int64_t{2}}).dtype(), kInt64);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  Tensor m = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_EQ(SizesOf(m), S({2, 3}));
  EXPECT_EQ(m.to_vector<double>()[5], 6.0);
  Tensor s = tensor({5.0f}, {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 5.0f);
  EXPECT_EQ(tensor({1, 2, 3, 4}, {4, 1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(tensor({true, false}, {1, 2}).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(TensorFactory, EmptyValues) {
  Tensor e = tensor(std::vector<float>{});
  EXPECT_EQ(SizesOf(e), S({0}));
  EXPECT_EQ(e.dtype(), kFloat32);
  Tensor e2 = tensor(std::vector<double>{}, {2, 0});
  EXPECT_EQ(SizesOf(e2), S({2, 0}));
}

TEST(TensorFactory, Errors) {
  EXPECT_FT_ERROR(tensor({1.0, 2.0, 3.0}, {2, 2}),
                  "tensor: 3 values cannot fill a tensor of shape [2, 2] (4 elements)");
  EXPECT_FT_ERROR(tensor({1.0f, 2.0f}, {}),
                  "tensor: 2 values cannot fill a tensor of shape [] (1 elements)");
  EXPECT_FT_ERROR(tensor(std::vector<int64_t>{1, 2}, {-1, -2}),
                  "tensor: negative size in shape [-1, -2]");
  EXPECT_FT_ERROR(tensor(std::vector<int>{1}, {0}), "tensor: 1 values cannot fill");
  EXPECT_FT_ERROR(tensor(std::vector<bool>{true}, {2}), "tensor: 1 values cannot fill");
}

TEST(Factories, AllocateFreshStorage) {
  Tensor a = zeros({4});
  Tensor b = zeros({4});
  EXPECT_FALSE(a.storage().is_same(b.storage()));
  EXPECT_EQ(a.version(), 0);
  EXPECT_EQ(arange(3).version(), 0);
}

// CountingHook records every factory result it adopts and hands back a marked copy, so a
// test can tell that a factory's result went through the hook exactly once.
class CountingHook : public FactoryResultHook {
 public:
  Tensor Adopt(Tensor t) override {
    ++calls;
    last = t;
    return t;
  }
  int calls = 0;
  Tensor last;
};

TEST(FactoryResultHook, EveryFactoryPassesItsResultThroughTheHookOnce) {
  const std::vector<std::function<Tensor()>> factories = {
      [] { return empty({2}); },
      [] {
        return zeros({2, 3});
      },
      [] { return ones({3}); },
      [] { return full({2}, 1.5); },
      [] { return full({2}, 1.5, kFloat64); },
      [] { return scalar_tensor(2.0); },
      [] { return scalar_tensor(2, kInt64); },
      [] { return arange(4); },
      [] { return arange(0.0, 1.0, 0.25); },
      [] { return arange(0, 4, 2, kFloat32); },
      [] { return linspace(0.0, 1.0, 5); },
      [] { return eye(3); },
      [] { return eye(2, 3); },
      [] {
        return tensor({1.0f, 2.0f});
      },
      [] {
        return tensor({1.0, 2.0}, {2, 1});
      },
      [] {
        return tensor(std::vector<int64_t>{1, 2});
      },
      [] { return tensor(std::vector<bool>{true}); },
  };
  for (size_t i = 0; i < factories.size(); ++i) {
    CountingHook hook;
    Tensor t;
    {
      FactoryResultHookScope scope(&hook);
      t = factories[i]();
    }
    EXPECT_EQ(hook.calls, 1) << "factory " << i;
    EXPECT_TRUE(t.is_same(hook.last)) << "factory " << i;
  }
  // Without a hook (and after a scope ends) nothing is called.
  CountingHook hook;
  {
    FactoryResultHookScope scope(&hook);
    {
      FactoryResultHookScope none(nullptr);
      zeros({2});
    }
    EXPECT_EQ(hook.calls, 0);
  }
  zeros({2});
  EXPECT_EQ(hook.calls, 0);
}

TEST(FactoryResultHook, WhatTheHookReturnsIsTheFactorysResult) {
  // A hook that makes tensors of its own uninstalls itself first (its factory calls would
  // otherwise come back to it).
  struct Sevens : FactoryResultHook {
    Tensor Adopt(Tensor t) override {
      FactoryResultHookScope none(nullptr);
      return full(t.sizes(), 7.0, t.dtype());
    }
  };
  Sevens hook;
  Tensor t;
  {
    FactoryResultHookScope scope(&hook);
    t = zeros({2}, kFloat64);
  }
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{7.0, 7.0}));
}

// Until issue 43 writes the operations for them, no tensor of the eight new dtypes is made:
// every factory refuses them, naming the dtype, and none reaches a kernel.
// The dtypes of issue 43: every factory makes them, with values checked through a reading
// of another type (to_vector converts as ConvertElement, itself checked against torch in
// cast_test).
TEST(Factories, MakeEveryDType) {
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(DTypeName(d));
    EXPECT_EQ(empty({2, 3}, d).dtype(), d);
    EXPECT_EQ(zeros({3}, d).to_vector<double>(), std::vector<double>(3, 0.0));
    EXPECT_EQ(ones({2, 2}, d).to_vector<double>(), std::vector<double>(4, 1.0));
    EXPECT_EQ(full({2}, 1, d).to_vector<double>(), std::vector<double>(2, 1.0));
    EXPECT_EQ(eye(2, d).to_vector<double>(), (std::vector<double>{1, 0, 0, 1}));
    EXPECT_EQ(linspace(0, 1, 2, d).to_vector<double>(), (std::vector<double>{0, 1}));
    if (!IsComplex(d) && d != kBool) {
      EXPECT_EQ(arange(0, 4, 1, d).to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
    }
    EXPECT_EQ(scalar_tensor(true, d).item<int64_t>(), 1);
  }
  // A value the dtype cannot hold is refused, as torch.full refuses it (scalar_check.h).
  EXPECT_FT_ERROR(full({2}, 300, kInt8),
                  "full: value 300 cannot be converted to int8 without overflow");
  EXPECT_FT_ERROR(full({}, 1e39), "full: value 1e+39 cannot be converted to float32");
  EXPECT_EQ(full({}, -1, kUInt8).item<int64_t>(), 255);
}

TEST(Factories, NewDTypesValues) {
  // Complex: both parts, and a complex Scalar keeps its imaginary part.
  const std::complex<double> z(1.5, -2);
  EXPECT_EQ(full({2}, z).dtype(), kComplex64);
  EXPECT_EQ(full({2}, z, kComplex128).to_vector<std::complex<double>>(),
            (std::vector<std::complex<double>>(2, z)));
  EXPECT_FT_ERROR(full({2}, z, kFloat32), "full: value (1.5-2j) cannot be converted to float32");
  EXPECT_EQ(linspace(0, 1, 3, kComplex64).to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{0, 0}, {0.5f, 0}, {1, 0}}));
  // float16 and bfloat16 round once, to nearest even: 0.1 is 0x2E66 and 0x3DCD.
  EXPECT_EQ(full({}, 0.1, kFloat16).item<Half>().bits, 0x2E66);
  EXPECT_EQ(full({}, 0.1, kBFloat16).item<BFloat16>().bits, 0x3DCD);
  EXPECT_EQ(arange(0, 1, 0.25, kFloat16).to_vector<float>(),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  // Integral arange wraps past the dtype's range, as torch's does:
  // torch.arange(250, 260, dtype=torch.uint8) is 250..255, 0..3.
  EXPECT_EQ(arange(250, 260, 1, kUInt8).to_vector<int64_t>(),
            (std::vector<int64_t>{250, 251, 252, 253, 254, 255, 0, 1, 2, 3}));
  EXPECT_EQ(arange(-2, 2, 1, kInt8).to_vector<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 1}));
  EXPECT_FT_ERROR(arange(0, 4, 1, kComplex64), "arange: complex64 results are not supported");
  EXPECT_FT_ERROR(arange(0, 4, 1, kBool), "arange: bool results are not supported");
  // tensor() of each element type makes its dtype.
  EXPECT_EQ(tensor(std::vector<std::complex<float>>{{1, 2}}).dtype(), kComplex64);
  EXPECT_EQ(tensor(std::vector<std::complex<double>>{{1, 2}}).dtype(), kComplex128);
  EXPECT_EQ(tensor(std::vector<Half>{Half(1.0f)}).dtype(), kFloat16);
  EXPECT_EQ(tensor(std::vector<BFloat16>{BFloat16(1.0f)}).dtype(), kBFloat16);
  EXPECT_EQ(tensor(std::vector<int8_t>{-1}).item<int64_t>(), -1);
  EXPECT_EQ(tensor(std::vector<int16_t>{-300}).item<int64_t>(), -300);
  EXPECT_EQ(tensor(std::vector<uint8_t>{255}).item<int64_t>(), 255);
  EXPECT_EQ(tensor(std::vector<uint8_t>{255}).dtype(), kUInt8);
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt64);  // `int` is a Python int: int64
  // item<T> of a complex tensor: the real part when T is real, both parts when complex.
  Tensor c = tensor(std::vector<std::complex<double>>{{3, 4}});
  EXPECT_EQ(c.item<double>(), 3.0);
  EXPECT_EQ(c.item<std::complex<float>>(), std::complex<float>(3, 4));
  EXPECT_TRUE(c.item<bool>());
}

}  // namespace
}  // namespace ft
