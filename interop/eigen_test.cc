// Tests for interop/eigen.h: views both ways (aliasing in both directions), row- and
// column-major, float and double, non-contiguous tensors, the copies and their lifetimes
// (run under --config=asan), and every documented error.
#include "interop/eigen.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Iota2D: a contiguous 2-D tensor of T with element [i, j] = 10 * i + j.
template <typename T>
Tensor Iota2D(int64_t rows, int64_t cols) {
  std::vector<T> v;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) v.push_back(static_cast<T>(10 * i + j));
  }
  return tensor(v, {rows, cols});
}

// At: element [i, j] of a 2-D tensor, read through ft (not through Eigen).
double At(const Tensor& t, int64_t i, int64_t j) {
  return select(select(t, 0, i), 0, j).item<double>();
}

TEST(EigenInterop, HeaderExample) {
  Tensor t = zeros({2, 3});
  auto m = MapRowMajor<float>(t);
  m(1, 2) = 5;
  EXPECT_EQ(At(t, 1, 2), 5);
  Eigen::MatrixXd e = Eigen::MatrixXd::Identity(3, 3);
  Tensor borrowed = BorrowEigen(e);
  Tensor owned = CopyFromEigen(e);
  EXPECT_TENSOR_EQ(borrowed, eye(3, kFloat64));
  EXPECT_TENSOR_EQ(owned, eye(3, kFloat64));
  Eigen::MatrixXf back = ToEigen<Eigen::MatrixXf>(transpose(t, 0, 1));
  EXPECT_EQ(back.rows(), 3);
  EXPECT_EQ(back(2, 1), 5);
}

// ---- ft tensor -> Eigen views ----

template <typename T>
class EigenMapTyped : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(EigenMapTyped, ElementTypes);

TYPED_TEST(EigenMapTyped, RowMajorAliasesBothWays) {
  using T = TypeParam;
  Tensor t = Iota2D<T>(2, 3);
  auto m = MapRowMajor<T>(t);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 3);
  EXPECT_EQ(m.outerStride(), 3);
  EXPECT_EQ(m.data(), t.data<T>());
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), 10 * i + j);
  }
  m(0, 1) = -1;  // Eigen -> ft
  EXPECT_EQ(At(t, 0, 1), -1);
  add_(t, 100);  // ft -> Eigen (an in-place op)
  EXPECT_EQ(m(1, 2), 112);
  // Eigen algorithms run on the view in place.
  m.row(1) *= 2;
  EXPECT_EQ(At(t, 1, 0), 220);
}

TYPED_TEST(EigenMapTyped, ColMajorViewsATransposedTensor) {
  using T = TypeParam;
  Tensor base = Iota2D<T>(3, 2);
  Tensor t = transpose(base, 0, 1);  // [2, 3] with strides [1, 2]
  auto m = MapColMajor<T>(t);
  EXPECT_EQ(m.outerStride(), 2);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), 10 * j + i);
  }
  m(1, 2) = 7;
  EXPECT_EQ(At(base, 2, 1), 7);
}

TYPED_TEST(EigenMapTyped, StridedViewsSlicedAndTransposedTensors) {
  using T = TypeParam;
  Tensor base = Iota2D<T>(4, 6);
  // Every other row and every third column: strides [12, 3].
  Tensor sliced = slice(slice(base, 0, 0, 4, 2), 1, 1, 6, 3);
  ASSERT_EQ(sliced.strides(), (IntArrayRef{12, 3}));
  auto m = MapStrided<T>(sliced);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 2);
  EXPECT_EQ(m.outerStride(), 12);
  EXPECT_EQ(m.innerStride(), 3);
  EXPECT_EQ(m(1, 1), 24);  // base[2, 4]
  m(1, 0) = -5;
  EXPECT_EQ(At(base, 2, 1), -5);
  // Transposed and sliced together.
  Tensor tt = transpose(sliced, 0, 1);
  auto mt = MapStrided<T>(tt);
  EXPECT_EQ(mt(0, 1), -5);
  EXPECT_EQ(mt.innerStride(), 12);
  // Row slices keep contiguous rows: MapRowMajor takes them (with the base's row stride).
  Tensor rows = slice(base, 1, 2, 5);  // [4, 3], strides [6, 1]
  auto mr = MapRowMajor<T>(rows);
  EXPECT_EQ(mr.outerStride(), 6);
  EXPECT_EQ(mr(3, 0), 32);
}

TYPED_TEST(EigenMapTyped, VectorViews) {
  using T = TypeParam;
  Tensor base = Iota2D<T>(3, 4);
  Tensor column = select(base, 1, 2);  // [3] with stride 4
  auto v = MapVector<T>(column);
  ASSERT_EQ(v.size(), 3);
  EXPECT_EQ(v.innerStride(), 4);
  EXPECT_EQ(v(2), 22);
  v(0) = 9;
  EXPECT_EQ(At(base, 0, 2), 9);
  EXPECT_EQ(v.sum(), 9 + 12 + 22);
}

TYPED_TEST(EigenMapTyped, ConstMapsReadBroadcastTensors) {
  using T = TypeParam;
  Tensor row = tensor(std::vector<T>{1, 2, 3}, {1, 3});
  Tensor wide = expand(row, {4, 3});  // strides [0, 1]
  auto m = MapStrided<const T>(wide);
  EXPECT_EQ(m(3, 2), 3);
  EXPECT_EQ(m.sum(), 4 * 6);
  auto r = MapRowMajor<const T>(wide);
  EXPECT_EQ(r(2, 1), 2);
  const Tensor fives = expand(tensor(std::vector<T>{5}, {1}), {3});  // stride 0
  auto v = MapVector<const T>(fives);
  EXPECT_EQ(v.sum(), 15);
  EXPECT_FT_ERROR(MapStrided<T>(wide),
                  "MapStrided: cannot map a " + std::string(DTypeName(DTypeOf<T>())) +
                      " tensor of sizes [4, 3] and strides [0, 1] as a writable Eigen object: "
                      "dim 0 is broadcast");
  EXPECT_FT_ERROR(MapRowMajor<T>(wide), "MapRowMajor: cannot map");
  const Tensor tall = transpose(wide, 0, 1);
  EXPECT_FT_ERROR(MapColMajor<T>(tall), "MapColMajor: cannot map");
  EXPECT_FT_ERROR(MapVector<T>(fives), "MapVector: cannot map");
}

TEST(EigenMap, SizeZeroAndOneDims) {
  Tensor empty = zeros({0, 3});
  auto m = MapRowMajor<float>(empty);
  EXPECT_EQ(m.rows(), 0);
  EXPECT_EQ(m.size(), 0);
  const Tensor no_columns = zeros({3, 0}), no_elements = zeros({0});
  EXPECT_EQ(MapColMajor<float>(no_columns).size(), 0);
  EXPECT_EQ(MapVector<float>(no_elements).size(), 0);
  // A single column of a row-major tensor is row- and column-major at once.
  Tensor column = slice(Iota2D<float>(3, 4), 1, 1, 2);  // [3, 1], strides [4, 1]
  EXPECT_EQ(MapRowMajor<float>(column)(2, 0), 21);
  const Tensor row = transpose(column, 0, 1);  // [1, 3], strides [1, 4]
  auto c = MapColMajor<float>(row);
  EXPECT_EQ(c(0, 2), 21);
  // A single row of a transposed tensor: its inner stride is not 1, but one row needs none.
  Tensor one_row = slice(transpose(Iota2D<float>(3, 4), 0, 1), 0, 0, 1);  // [1, 3] strides [1, 4]
  EXPECT_EQ(MapColMajor<float>(one_row)(0, 1), 10);
}

TEST(EigenMap, Errors) {
  // Every argument is a named tensor: a Map of a temporary does not compile (it would dangle).
  const Tensor t = Iota2D<float>(2, 3), tt = transpose(t, 0, 1);
  const Tensor cube = zeros({2, 3, 4}), scalar = scalar_tensor(1.0f), floats = arange(3.0);
  const Tensor undefined;
  EXPECT_FT_ERROR(MapRowMajor<double>(t),
                  "MapRowMajor: expected a 2-D float64 tensor, got a 2-D float32 tensor of sizes "
                  "[2, 3] and strides [3, 1] (views never convert dtypes; ToEigen copies)");
  EXPECT_FT_ERROR(MapStrided<float>(cube),
                  "MapStrided: expected a 2-D float32 tensor, got a 3-D float32 tensor of sizes "
                  "[2, 3, 4] and strides [12, 4, 1]");
  EXPECT_FT_ERROR(MapVector<float>(t), "MapVector: expected a 1-D float32 tensor, got a 2-D");
  EXPECT_FT_ERROR(MapRowMajor<float>(scalar),
                  "MapRowMajor: expected a 2-D float32 tensor, got a 0-D");
  EXPECT_FT_ERROR(MapRowMajor<float>(tt),
                  "MapRowMajor: cannot map a float32 tensor of sizes [3, 2] and strides [1, 3] "
                  "as a row-major matrix: its rows are not contiguous (stride(1) must be 1)");
  EXPECT_FT_ERROR(MapColMajor<float>(t),
                  "MapColMajor: cannot map a float32 tensor of sizes [2, 3] and strides [3, 1] "
                  "as a column-major matrix: its columns are not contiguous");
  EXPECT_FT_ERROR(MapRowMajor<float>(undefined),
                  "MapRowMajor: the tensor is undefined (a default-constructed ft::Tensor)");
  EXPECT_FT_ERROR(MapVector<int64_t>(floats), "MapVector: expected a 1-D int64 tensor");
  // Inside vmap the tensor is a wrapper: it has no storage to view.
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                    MapVector<float>(x);
                    return x;
                  }))(t),
                  "MapVector: cannot reach the memory of a");
}

// A Map of a temporary tensor would dangle: those calls do not compile.
template <typename Arg>
concept RowMappable = requires(Arg&& t) {
  MapRowMajor<float>(std::forward<Arg>(t));
};
template <typename Arg>
concept VectorMappable = requires(Arg&& t) {
  MapVector<const double>(std::forward<Arg>(t));
};
static_assert(RowMappable<Tensor&> && RowMappable<const Tensor&>);
static_assert(!RowMappable<Tensor> && !RowMappable<Tensor&&>);
static_assert(VectorMappable<const Tensor&> && !VectorMappable<Tensor>);

TEST(EigenMap, ViewsKeepNoStorageAliveButTheTensorDoes) {
  // The Map borrows: it stays valid while `t` (or a view of it) lives.
  Tensor t = Iota2D<double>(2, 2);
  Tensor view = transpose(t, 0, 1);
  auto m = MapColMajor<double>(view);
  t = Tensor();  // the view still holds the storage
  EXPECT_EQ(m(1, 0), 1);
}

// ---- ft tensor -> Eigen copies ----

TEST(ToEigen, CopiesAnyLayoutIntoAnyStorageOrder) {
  Tensor base = Iota2D<float>(3, 4);
  Tensor odd = transpose(slice(base, 1, 0, 4, 2), 0, 1);  // [2, 3], strides [2, 4]
  const Eigen::MatrixXf col = ToEigen<Eigen::MatrixXf>(odd);
  const RowMatrixXd row = ToEigen<RowMatrixXd>(odd);  // converts float32 -> double
  const Eigen::ArrayXXf arr = ToEigen<Eigen::ArrayXXf>(odd);
  const Eigen::Matrix<float, 2, 3> fixed = ToEigen<Eigen::Matrix<float, 2, 3>>(odd);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double expected = 10 * j + 2 * i;
      EXPECT_EQ(col(i, j), expected);
      EXPECT_EQ(row(i, j), expected);
      EXPECT_EQ(arr(i, j), expected);
      EXPECT_EQ(fixed(i, j), expected);
    }
  }
  // Vectors take 1-D tensors, including broadcast ones; int64 converts.
  const Eigen::VectorXd v = ToEigen<Eigen::VectorXd>(arange(int64_t{4}));
  EXPECT_EQ(v, Eigen::VectorXd::LinSpaced(4, 0, 3));
  const Eigen::RowVectorXf rv = ToEigen<Eigen::RowVectorXf>(expand(scalar_tensor(2.0f), {3}));
  EXPECT_EQ(rv, Eigen::RowVectorXf::Constant(3, 2.0f));
  const Eigen::Vector2f v2 = ToEigen<Eigen::Vector2f>(tensor({7.0f, 8.0f}));
  EXPECT_EQ(v2, Eigen::Vector2f(7, 8));
  EXPECT_EQ(ToEigen<Eigen::MatrixXf>(zeros({0, 2})).cols(), 2);
}

TEST(ToEigen, TheCopyIsIndependentAndOutlivesTheTensor) {
  Eigen::MatrixXd copy;
  {
    Tensor t = Iota2D<double>(2, 2);
    copy = ToEigen<Eigen::MatrixXd>(t);
    fill_(t, 0);
  }  // t's storage is freed here: ASan catches any lingering alias
  EXPECT_EQ(copy(1, 1), 11);
}

TEST(ToEigen, Errors) {
  EXPECT_FT_ERROR(ToEigen<Eigen::MatrixXf>(zeros({3})),
                  "ToEigen: expected a 2-D tensor for an Eigen matrix type, got a 1-D float32 "
                  "tensor of sizes [3] and strides [1]");
  EXPECT_FT_ERROR(ToEigen<Eigen::VectorXf>(zeros({3, 1})),
                  "ToEigen: expected a 1-D tensor for an Eigen vector type, got a 2-D");
  EXPECT_FT_ERROR((ToEigen<Eigen::Matrix<float, 2, 2>>(zeros({2, 3}))),
                  "ToEigen: cannot map a float32 tensor of sizes [2, 3] and strides [3, 1] into "
                  "the requested Eigen type: its sizes do not fit");
  EXPECT_FT_ERROR(ToEigen<Eigen::MatrixXf>(Tensor()), "ToEigen: the tensor is undefined");
}

// ---- Eigen -> ft tensor ----

TEST(BorrowEigen, ColumnMajorMatrixAliasesBothWays) {
  Eigen::MatrixXf m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  Tensor t = BorrowEigen(m);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.sizes(), (IntArrayRef{2, 3}));
  EXPECT_EQ(t.strides(), (IntArrayRef{1, 2}));
  EXPECT_TRUE(t.storage().is_external());
  EXPECT_EQ(t.data<float>(), m.data());
  EXPECT_TENSOR_EQ(t, tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3}));
  m(1, 0) = 40;  // Eigen -> ft
  EXPECT_EQ(At(t, 1, 0), 40);
  mul_(t, 2.0f);  // ft -> Eigen
  EXPECT_EQ(m(0, 2), 6);
  EXPECT_EQ(m(1, 0), 80);
  // Ops read it like any tensor; their results are ordinary (owning) tensors.
  Tensor s = sum(t, {0});
  EXPECT_FALSE(s.storage().is_external());
  EXPECT_TENSOR_EQ(s, tensor({82.0f, 14.0f, 18.0f}));
}

TEST(BorrowEigen, RowMajorDoubleAndTheRoundTripBackToAMap) {
  RowMatrixXd m(2, 2);
  m << 1, 2, 3, 4;
  Tensor t = BorrowEigen(m);
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(t.strides(), (IntArrayRef{2, 1}));
  auto back = MapRowMajor<double>(t);
  EXPECT_EQ(back.data(), m.data());
  back(0, 1) = 20;
  EXPECT_EQ(m(0, 1), 20);
  // A column-major Eigen matrix comes back through MapColMajor.
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(3, 2);
  Tensor tc = BorrowEigen(c);
  MapColMajor<double>(tc)(2, 1) = 5;
  EXPECT_EQ(c(2, 1), 5);
}

TEST(BorrowEigen, BlocksMapsVectorsAndRefsKeepTheirStrides) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(4, 5);
  Eigen::Block<Eigen::MatrixXd> block = m.block(1, 2, 2, 3);
  Tensor tb = BorrowEigen(block);
  EXPECT_EQ(tb.sizes(), (IntArrayRef{2, 3}));
  EXPECT_EQ(tb.strides(), (IntArrayRef{1, 4}));
  fill_(tb, 1.0);
  EXPECT_EQ(m.sum(), 6);
  EXPECT_EQ(m(2, 4), 1);
  EXPECT_EQ(m(0, 0), 0);

  Eigen::VectorXf v = Eigen::VectorXf::LinSpaced(4, 0, 3);
  Tensor tv = BorrowEigen(v);
  EXPECT_EQ(tv.sizes(), (IntArrayRef{4}));
  add_(tv, 1.0f);
  EXPECT_EQ(v(3), 4);

  RowMatrixXf r = RowMatrixXf::Zero(3, 4);
  Eigen::Block<RowMatrixXf, Eigen::Dynamic, 1> column = r.col(1);  // stride 4
  Tensor tcol = BorrowEigen(column);
  EXPECT_EQ(tcol.sizes(), (IntArrayRef{3}));
  EXPECT_EQ(tcol.strides(), (IntArrayRef{4}));
  fill_(tcol, 2.0f);
  EXPECT_EQ(r.sum(), 6);
  EXPECT_EQ(r(2, 1), 2);

  std::vector<double> buffer = {1, 2, 3, 4, 5, 6};
  Eigen::Map<Eigen::MatrixXd, Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>
      strided(buffer.data(), 2, 2, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(3, 2));
  Tensor ts = BorrowEigen(strided);  // [2, 2], strides [2, 3]: elements 0, 2, 3, 5
  EXPECT_TENSOR_EQ(ts, tensor({1.0, 4.0, 3.0, 6.0}, {2, 2}));

  Eigen::Ref<Eigen::MatrixXd> ref(m);
  EXPECT_EQ(BorrowEigen(ref).storage().data(), m.data());
}

TEST(BorrowEigen, NegativeStridesAndEmptyMatrices) {
  // A reversed Map: element 0 is the buffer's last; the storage starts at the lowest address.
  std::vector<float> buffer = {1, 2, 3, 4};
  Eigen::Map<Eigen::VectorXf, Eigen::Unaligned, Eigen::InnerStride<>> reversed(
      buffer.data() + 3, 4, Eigen::InnerStride<>(-1));
  Tensor t = BorrowEigen(reversed);
  EXPECT_EQ(t.strides(), (IntArrayRef{-1}));
  EXPECT_EQ(t.storage_offset(), 3);
  EXPECT_EQ(t.storage().data(), buffer.data());
  EXPECT_EQ(t.storage().nbytes(), 4 * sizeof(float));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, 3, 2, 1}));

  Eigen::MatrixXd empty(0, 3);
  Tensor te = BorrowEigen(empty);
  EXPECT_EQ(te.sizes(), (IntArrayRef{0, 3}));
  EXPECT_EQ(te.numel(), 0);
  EXPECT_EQ(te.storage().nbytes(), 0u);
  EXPECT_EQ(sum(te).item<double>(), 0);
}

// BorrowEigen takes named, writable Eigen objects only: a temporary would dangle, and ft has
// no read-only tensors.
template <typename M>
concept Borrowable = requires(M&& m) { BorrowEigen(std::forward<M>(m)); };
static_assert(Borrowable<Eigen::MatrixXf&> && Borrowable<Eigen::Block<Eigen::MatrixXd>&>);
static_assert(Borrowable<Eigen::ArrayXXd&> && Borrowable<Eigen::Ref<Eigen::VectorXf>&>);
static_assert(!Borrowable<Eigen::MatrixXf> && !Borrowable<Eigen::MatrixXf&&>);
static_assert(!Borrowable<const Eigen::MatrixXf&>);

TEST(CopyFromEigen, CopiesAndOutlivesTheSource) {
  Tensor t, tv, tr;
  {
    Eigen::MatrixXf m(2, 3);
    m << 1, 2, 3, 4, 5, 6;
    t = CopyFromEigen(m);
    m(0, 0) = 100;  // not seen: t owns a copy
    const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(3, 1, 3);
    tv = CopyFromEigen(v);
    RowMatrixXd r = RowMatrixXd::Identity(2, 2);
    tr = CopyFromEigen(r * 2.0 + RowMatrixXd::Ones(2, 2));  // an expression
  }  // the Eigen objects are freed here (ASan catches a lingering alias)
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.storage().is_external());
  EXPECT_TENSOR_EQ(t, tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(tv, tensor({1.0, 2.0, 3.0}));
  EXPECT_TENSOR_EQ(tr, tensor({3.0, 1.0, 1.0, 3.0}, {2, 2}));
  // A block of a matrix, and a row vector (1-D).
  Eigen::MatrixXd big = Eigen::MatrixXd::Zero(3, 3);
  big(2, 1) = 7;
  EXPECT_TENSOR_EQ(CopyFromEigen(big.block(1, 1, 2, 2)), tensor({0.0, 0.0, 7.0, 0.0}, {2, 2}));
  EXPECT_TENSOR_EQ(CopyFromEigen(big.row(2)), tensor({0.0, 7.0, 0.0}));
  EXPECT_EQ(CopyFromEigen(Eigen::MatrixXf(0, 4)).sizes(), (IntArrayRef{0, 4}));
}

TEST(BorrowEigen, TheBorrowedTensorDiesBeforeTheMatrix) {
  // The documented lifetime: the tensor (and every view) goes first; the matrix outlives it.
  auto m = std::make_unique<Eigen::MatrixXf>(Eigen::MatrixXf::Ones(8, 8));
  {
    Tensor t = BorrowEigen(*m);
    Tensor view = transpose(t, 0, 1);
    add_(view, 1.0f);
  }
  EXPECT_EQ(m->sum(), 128);
  m.reset();  // the Eigen buffer is freed by Eigen only (ft's release would double free)
}

}  // namespace
}  // namespace ft
