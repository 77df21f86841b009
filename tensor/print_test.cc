// Tests for tensor/print.h. Every expected string is what PyTorch prints for the same tensor
// (torch/_tensor_str.py with default print options), except that ft names dtypes "float64"
// (not "torch.float64") and sizes "[2, 0]" (not "(2, 0)").
#include "tensor/print.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

Tensor Int64s(std::vector<int64_t> v, IntArrayRef shape) { return tensor(v, shape); }

TEST(Print, Float32IntegralValues) {
  EXPECT_EQ(ToString(tensor({1.0f, 2.0f, 3.0f})), "tensor([1., 2., 3.])");
  EXPECT_EQ(ToString(tensor({1.0f, -20.0f, 300.0f})), "tensor([  1., -20., 300.])");
  EXPECT_EQ(ToString(zeros({2})), "tensor([0., 0.])");
  EXPECT_EQ(ToString(tensor({-0.0f, 1.0f})), "tensor([-0., 1.])");
  EXPECT_EQ(ToString(tensor({1e8f})), "tensor([100000000.])");
}

TEST(Print, Float32FractionalValues) {
  EXPECT_EQ(ToString(tensor({1.5f, 2.25f})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(ToString(tensor({1.23456f})), "tensor([1.2346])");
  EXPECT_EQ(ToString(tensor({-1.5f, 10.25f})), "tensor([-1.5000, 10.2500])");
  EXPECT_EQ(ToString(tensor({1.5f, -10.25f})), "tensor([  1.5000, -10.2500])");
  EXPECT_EQ(ToString(tensor({0.0f, 1.5f})), "tensor([0.0000, 1.5000])");
}

TEST(Print, TwoDimensional) {
  EXPECT_EQ(ToString(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2})),
            "tensor([[1., 2.],\n"
            "        [3., 4.]])");
  EXPECT_EQ(ToString(tensor({1.5f, -2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {3, 2})),
            "tensor([[ 1.5000, -2.0000],\n"
            "        [ 3.0000,  4.0000],\n"
            "        [ 5.0000,  6.0000]])");
  EXPECT_EQ(ToString(tensor({1.0f, 2.0f}, {1, 2})), "tensor([[1., 2.]])");
  EXPECT_EQ(ToString(tensor({1.0f, 2.0f}, {2, 1})),
            "tensor([[1.],\n"
            "        [2.]])");
}

TEST(Print, ThreeDimensionalHasBlankLinesBetweenBlocks) {
  EXPECT_EQ(ToString(Int64s({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2})),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]])");
  EXPECT_EQ(ToString(Int64s({1, 2, 3, 4}, {2, 1, 1, 2})),
            "tensor([[[[1, 2]]],\n"
            "\n"
            "\n"
            "        [[[3, 4]]]])");
}

TEST(Print, Float64HasADTypeSuffix) {
  EXPECT_EQ(ToString(tensor({1.5, 2.25})), "tensor([1.5000, 2.2500], dtype=float64)");
  EXPECT_EQ(ToString(tensor({1.0, 2.0})), "tensor([1., 2.], dtype=float64)");
  EXPECT_EQ(ToString(tensor({1.5, 2.5, 3.5, 4.5}, {2, 2})),
            "tensor([[1.5000, 2.5000],\n"
            "        [3.5000, 4.5000]], dtype=float64)");
}

TEST(Print, Int64) {
  EXPECT_EQ(ToString(tensor({1, 2, 3})), "tensor([1, 2, 3])");
  EXPECT_EQ(ToString(tensor({1, -20, 300})), "tensor([  1, -20, 300])");
  // Printed exactly, not through a double.
  EXPECT_EQ(ToString(tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                 std::numeric_limits<int64_t>::min()})),
            "tensor([ 9223372036854775807, -9223372036854775808])");
  EXPECT_EQ(ToString(tensor(std::vector<int64_t>{(int64_t{1} << 53) + 1})),
            "tensor([9007199254740993])");
}

TEST(Print, Bool) {
  // PyTorch right-aligns "True" to the width of "False".
  EXPECT_EQ(ToString(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(ToString(tensor({true, true})), "tensor([True, True])");
  EXPECT_EQ(ToString(tensor({true, false, false, true}, {2, 2})),
            "tensor([[ True, False],\n"
            "        [False,  True]])");
}

TEST(Print, RankZero) {
  EXPECT_EQ(ToString(scalar_tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(ToString(scalar_tensor(2.0)), "tensor(2.)");
  EXPECT_EQ(ToString(scalar_tensor(-2.0)), "tensor(-2.)");
  EXPECT_EQ(ToString(scalar_tensor(3)), "tensor(3)");
  EXPECT_EQ(ToString(scalar_tensor(true)), "tensor(True)");
  EXPECT_EQ(ToString(scalar_tensor(1.5, kFloat64)), "tensor(1.5000, dtype=float64)");
  EXPECT_EQ(ToString(scalar_tensor(1e-7, kFloat64)), "tensor(1.0000e-07, dtype=float64)");
  EXPECT_EQ(ToString(scalar_tensor(std::nan(""), kFloat32)), "tensor(nan)");
}

TEST(Print, Empty) {
  EXPECT_EQ(ToString(zeros({0})), "tensor([])");
  EXPECT_EQ(ToString(zeros({0}, kInt64)), "tensor([], dtype=int64)");
  EXPECT_EQ(ToString(zeros({0}, kBool)), "tensor([], dtype=bool)");
  EXPECT_EQ(ToString(zeros({2, 0})), "tensor([], size=[2, 0])");
  EXPECT_EQ(ToString(zeros({0, 3}, kFloat64)), "tensor([], size=[0, 3], dtype=float64)");
}

TEST(Print, NanAndInf) {
  // The width counts only nonzero finite values, so "nan" is not padded against "1.".
  EXPECT_EQ(ToString(tensor({1.0f, kNan, kInf})), "tensor([1., nan, inf])");
  EXPECT_EQ(ToString(tensor({1.5f, kNan, -kInf})), "tensor([1.5000,    nan,   -inf])");
  EXPECT_EQ(ToString(tensor({kNan})), "tensor([nan])");
  EXPECT_EQ(ToString(tensor({-kInf, kInf})), "tensor([-inf, inf])");
  EXPECT_EQ(ToString(tensor({-kNan, 0.0f})), "tensor([nan, 0.])");  // never "-nan"
  EXPECT_EQ(ToString(tensor({1e-5, std::nan("")})),
            "tensor([1.0000e-05,        nan], dtype=float64)");
}

TEST(Print, ScientificNotation) {
  // Ratio of largest to smallest nonzero magnitude above 1000.
  EXPECT_EQ(ToString(tensor({1e-5f, 1.0f})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(ToString(tensor({1.0f, 1e4f})), "tensor([1.0000e+00, 1.0000e+04])");  // integral too
  EXPECT_EQ(ToString(tensor({1.0f, 1000.0f})), "tensor([   1., 1000.])");         // ratio 1000: no
  // Magnitudes above 1e8.
  EXPECT_EQ(ToString(tensor({1e9f})), "tensor([1.0000e+09])");
  EXPECT_EQ(ToString(tensor({2.5e8, 3.5e8})), "tensor([2.5000e+08, 3.5000e+08], dtype=float64)");
  // Non-integral values below 1e-4, even with a small ratio.
  EXPECT_EQ(ToString(tensor({5e-5, 1e-4})), "tensor([5.0000e-05, 1.0000e-04], dtype=float64)");
  EXPECT_EQ(ToString(tensor({1e-4, 0.05})), "tensor([0.0001, 0.0500], dtype=float64)");
  // Signs and zeros line up.
  EXPECT_EQ(ToString(tensor({-1e-5, 1.0})), "tensor([-1.0000e-05,  1.0000e+00], dtype=float64)");
  EXPECT_EQ(ToString(tensor({0.0, 1e-5, 1.0})),
            "tensor([0.0000e+00, 1.0000e-05, 1.0000e+00], dtype=float64)");
  EXPECT_EQ(ToString(tensor({1e100, 1.0})), "tensor([1.0000e+100,  1.0000e+00], dtype=float64)");
}

TEST(Print, NonContiguousPrintsLogicalOrder) {
  Tensor base = tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  Tensor t = MakeDense(base.storage(), kFloat32, {3, 2}, {1, 3}, 0);
  EXPECT_EQ(ToString(t),
            "tensor([[1., 4.],\n"
            "        [2., 5.],\n"
            "        [3., 6.]])");
  Tensor expanded = MakeDense(base.storage(), kFloat32, {2, 2}, {0, 1}, 4);
  EXPECT_EQ(ToString(expanded),
            "tensor([[5., 6.],\n"
            "        [5., 6.]])");
  EXPECT_EQ(ToString(testing::NonContiguousCopy(tensor({1, 2, 3}))), "tensor([1, 2, 3])");
}

TEST(Print, LongRowsWrapAtEightyColumns) {
  EXPECT_EQ(ToString(arange(30)),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])");
  EXPECT_EQ(ToString(arange(0.5, 12.0, 1.0)),
            "tensor([ 0.5000,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,  7.5000,\n"
            "         8.5000,  9.5000, 10.5000, 11.5000])");
  EXPECT_EQ(ToString(zeros({2, 30}, kInt64)),
            "tensor([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n"
            "         0, 0, 0, 0, 0, 0],\n"
            "        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n"
            "         0, 0, 0, 0, 0, 0]])");
}

TEST(Print, DTypeSuffixMovesToItsOwnLineWhenTheLineIsFull) {
  EXPECT_EQ(ToString(arange(0.5, 7.0, 1.0, kFloat64)),
            "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000], dtype=float64)");
  EXPECT_EQ(ToString(arange(0.5, 8.0, 1.0, kFloat64)),
            "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000],\n"
            "       dtype=float64)");
}

TEST(Print, LargeTensorsAreSummarized) {
  EXPECT_EQ(ToString(arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(ToString(arange(1001)), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  // 1000 elements is still printed in full.
  EXPECT_EQ(ToString(arange(1000)).find("..."), std::string::npos);
  const std::string row = "[0., 0., 0.,  ..., 0., 0., 0.]";
  EXPECT_EQ(ToString(zeros({100, 100})), "tensor([" + row + ",\n        " + row + ",\n        " +
                                             row + ",\n        ...,\n        " + row +
                                             ",\n        " + row + ",\n        " + row + "])");
  EXPECT_EQ(ToString(zeros({2, 1000})), "tensor([" + row + ",\n        " + row + "])");
  // The mode is chosen from the printed elements only: the hidden 0.5 does not matter.
  Tensor t = ones({2000});
  t.data<float>()[1000] = 0.5f;
  EXPECT_EQ(ToString(t), "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}

TEST(Print, StreamOperatorMatchesToString) {
  Tensor t = tensor({1.5, 2.0});
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), ToString(t));
  std::ostringstream undefined;
  undefined << Tensor();
  EXPECT_EQ(undefined.str(), "tensor(undefined)");
}

class FakeBatched : public TensorImpl {
 public:
  explicit FakeBatched(Shape sizes)
      : TensorImpl(TensorKind::kBatched, kFloat32, std::move(sizes)) {}
};

class NamedWrapper : public TensorImpl {
 public:
  NamedWrapper() : TensorImpl(TensorKind::kGradWrapper, kFloat32, {}) {}
  std::string WrapperRepr() const override { return "GradTrackingTensor(lvl=2, value=...)"; }
};

TEST(Print, WrappersPrintTheirRepr) {
  EXPECT_EQ(ToString(Tensor(std::make_shared<FakeBatched>(Shape{2, 3}))),
            "batched tensor of shape [2, 3]");
  EXPECT_EQ(ToString(Tensor(std::make_shared<NamedWrapper>())),
            "GradTrackingTensor(lvl=2, value=...)");
}

// The dtypes of issue 43, against torch 1.13's repr (with ft's dtype names): complex parts
// get a formatter each, every dtype but float32, complex64, int64 and bool is spelled out.
TEST(Print, Complex) {
  using C = std::complex<float>;
  EXPECT_EQ(ToString(tensor(std::vector<C>{{1, 2}, {3.5f, -4}, {-0.25f, 0}})),
            "tensor([ 1.0000+2.j,  3.5000-4.j, -0.2500+0.j])");
  using Z = std::complex<double>;
  EXPECT_EQ(ToString(tensor(std::vector<Z>{{1, 2}, {3, -4}, {kNan, 1}, {0, 1e10}}, {2, 2})),
            "tensor([[1.+2.0000e+00j, 3.-4.0000e+00j],\n"
            "        [nan+1.0000e+00j, 0.+1.0000e+10j]], dtype=complex128)");
  EXPECT_EQ(ToString(tensor(std::vector<C>{{1e-5f, 1}, {2, 0}})),
            "tensor([1.0000e-05+1.j, 2.0000e+00+0.j])");
  EXPECT_EQ(ToString(tensor(std::vector<C>{{1, -1}}, {})), "tensor(1.-1.j)");
  EXPECT_EQ(ToString(empty({0}, kComplex64)), "tensor([], dtype=complex64)");
}

TEST(Print, SixteenBitFloatsAndNarrowIntegers) {
  EXPECT_EQ(ToString(tensor(std::vector<Half>{1.5f, -2.0f, 65504.0f})),
            "tensor([ 1.5000e+00, -2.0000e+00,  6.5504e+04], dtype=float16)");
  EXPECT_EQ(ToString(tensor(std::vector<BFloat16>{1.5f, -2.0f, 3e38f})),
            "tensor([ 1.5000e+00, -2.0000e+00,  3.0041e+38], dtype=bfloat16)");
  EXPECT_EQ(ToString(tensor(std::vector<int8_t>{1, -2, 127})),
            "tensor([  1,  -2, 127], dtype=int8)");
  EXPECT_EQ(ToString(tensor(std::vector<uint8_t>{1, 255})), "tensor([  1, 255], dtype=uint8)");
  EXPECT_EQ(ToString(zeros({2, 3}, kInt16)),
            "tensor([[0, 0, 0],\n        [0, 0, 0]], dtype=int16)");
  EXPECT_EQ(ToString(arange(1, 3, 1, kInt32)), "tensor([1, 2], dtype=int32)");
}

}  // namespace
}  // namespace ft
