// Tests for interop/eigen.h: views both ways (aliasing in both directions), row- and
// column-major, float and double, complex and the narrow integers, non-contiguous tensors,
// the copies and their lifetimes (run under --config=asan), float16 and bfloat16 through
// float copies, and every documented error.
#include "interop/eigen.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Iota2D: a contiguous 2-D tensor of T with element [i, j] = 10 * i + j.
template <typename T>
Tensor Iota2D(int64_t rows, int64_t cols) {
  Tensor t = empty({rows, cols}, DTypeOf<T>());
  T* p = t.data<T>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = static_cast<T>(10 * i + j);
  }
  return t;
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

// ---- complex and the narrow integers (the dtypes of issue 43) ----

// The element types whose tensors Eigen views: every dtype's but float16's and bfloat16's.
template <typename T>
class EigenNewTypes : public ::testing::Test {};
using NewElementTypes =
    ::testing::Types<std::complex<float>, std::complex<double>, int8_t, int16_t, int32_t, uint8_t>;
TYPED_TEST_SUITE(EigenNewTypes, NewElementTypes);

// Elem: the value 10 * i + j as T, and for complex types with -i as the imaginary part, so
// that a transposed read (which swaps i and j) cannot pass by accident.
template <typename T>
T Elem(int64_t i, int64_t j) {
  if constexpr (kIsComplexElement<T>) {
    using Part = typename T::value_type;
    return T(static_cast<Part>(10 * i + j), static_cast<Part>(-i));
  } else {
    return static_cast<T>(10 * i + j);
  }
}
template <typename T>
Tensor Iota2DElem(int64_t rows, int64_t cols) {
  Tensor t = empty({rows, cols}, DTypeOf<T>());
  T* p = t.data<T>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = Elem<T>(i, j);
  }
  return t;
}

// WriteThroughFt: element [i, j] of t set to v by ft (a casting copy into a view of t).
template <typename T>
void WriteThroughFt(const Tensor& t, int64_t i, int64_t j, T v) {
  Tensor one = empty({}, DTypeOf<T>());
  *one.data<T>() = v;
  kernels::copy_into(select(select(t, 0, i), 0, j), one);
}
// ReadThroughFt: element [i, j] of t read by ft.
template <typename T>
T ReadThroughFt(const Tensor& t, int64_t i, int64_t j) {
  return select(select(t, 0, i), 0, j).item<T>();
}

TYPED_TEST(EigenNewTypes, RowAndColumnMajorViewsAliasBothWays) {
  using T = TypeParam;
  Tensor t = Iota2DElem<T>(2, 3);
  auto m = MapRowMajor<T>(t);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 3);
  EXPECT_EQ(m.data(), t.data<T>());  // zero copy: the same memory
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), (Elem<T>(i, j))) << i << j;
  }
  m(0, 1) = Elem<T>(7, 7);  // Eigen -> ft
  EXPECT_EQ(ReadThroughFt<T>(t, 0, 1), (Elem<T>(7, 7)));
  WriteThroughFt<T>(t, 1, 2, Elem<T>(9, 9));  // ft -> Eigen
  EXPECT_EQ(m(1, 2), (Elem<T>(9, 9)));
  m.row(1) *= T(2);  // an Eigen algorithm in place
  EXPECT_EQ(ReadThroughFt<T>(t, 1, 0), static_cast<T>(Elem<T>(1, 0) * T(2)));

  // The transpose is column-major: MapColMajor views it without a copy.
  Tensor tt = transpose(t, 0, 1);  // [3, 2], strides [1, 3]
  auto c = MapColMajor<T>(tt);
  EXPECT_EQ(c.data(), t.data<T>());
  EXPECT_EQ(c.outerStride(), 3);
  EXPECT_EQ(c(2, 0), (Elem<T>(0, 2)));
  c(0, 1) = Elem<T>(4, 4);
  EXPECT_EQ(ReadThroughFt<T>(t, 1, 0), (Elem<T>(4, 4)));
}

TYPED_TEST(EigenNewTypes, StridedVectorAndReadOnlyBroadcastViews) {
  using T = TypeParam;
  Tensor base = Iota2DElem<T>(4, 6);
  Tensor sliced = slice(slice(base, 0, 0, 4, 2), 1, 1, 6, 3);  // [2, 2], strides [12, 3]
  auto m = MapStrided<T>(sliced);
  EXPECT_EQ(m.outerStride(), 12);
  EXPECT_EQ(m.innerStride(), 3);
  EXPECT_EQ(m(1, 1), (Elem<T>(2, 4)));
  m(1, 0) = Elem<T>(5, 5);
  EXPECT_EQ(ReadThroughFt<T>(base, 2, 1), (Elem<T>(5, 5)));

  Tensor column = select(base, 1, 2);  // [4], stride 6
  auto v = MapVector<T>(column);
  EXPECT_EQ(v.innerStride(), 6);
  EXPECT_EQ(v(3), (Elem<T>(3, 2)));
  v(0) = Elem<T>(8, 8);
  EXPECT_EQ(ReadThroughFt<T>(base, 0, 2), (Elem<T>(8, 8)));

  const Tensor row = slice(base, 0, 1, 2);  // [1, 6]
  const Tensor wide = expand(row, {3, 6});  // strides [0, 1]
  auto r = MapStrided<const T>(wide);
  EXPECT_EQ(r(2, 5), (Elem<T>(1, 5)));
  EXPECT_FT_ERROR(MapStrided<T>(wide), "as a writable Eigen object: dim 0 is broadcast");
}

TYPED_TEST(EigenNewTypes, BorrowEigenAndTheCopies) {
  using T = TypeParam;
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
  Matrix m(2, 3);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) m(i, j) = Elem<T>(i, j);
  }
  Tensor t = BorrowEigen(m);
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  EXPECT_EQ(t.strides(), (IntArrayRef{1, 2}));
  EXPECT_EQ(t.data<T>(), m.data());
  EXPECT_TRUE(t.storage().is_external());
  EXPECT_EQ(ReadThroughFt<T>(t, 1, 2), (Elem<T>(1, 2)));
  m(1, 0) = Elem<T>(6, 6);  // Eigen -> ft
  EXPECT_EQ(ReadThroughFt<T>(t, 1, 0), (Elem<T>(6, 6)));
  WriteThroughFt<T>(t, 0, 2, Elem<T>(3, 3));  // ft -> Eigen
  EXPECT_EQ(m(0, 2), (Elem<T>(3, 3)));

  // The copies own their elements.
  const Tensor copy = CopyFromEigen(m);
  EXPECT_TRUE(copy.is_contiguous());
  EXPECT_EQ(copy.dtype(), DTypeOf<T>());
  m(0, 0) = Elem<T>(1, 1);
  EXPECT_EQ(ReadThroughFt<T>(copy, 0, 0), (Elem<T>(0, 0)));
  EXPECT_EQ(ReadThroughFt<T>(copy, 0, 2), (Elem<T>(3, 3)));
  const Matrix back = ToEigen<Matrix>(transpose(transpose(copy, 0, 1), 0, 1));
  EXPECT_EQ(back(1, 0), (Elem<T>(6, 6)));
  EXPECT_EQ(back(1, 2), (Elem<T>(1, 2)));
  const Eigen::Matrix<T, Eigen::Dynamic, 1> vec =
      ToEigen<Eigen::Matrix<T, Eigen::Dynamic, 1>>(select(copy, 0, 1));
  EXPECT_EQ(vec(2), (Elem<T>(1, 2)));
}

TEST(EigenNewTypes, ComplexViewsRunEigenAlgebraInPlace) {
  Tensor t = empty({2, 2}, kComplex128);
  auto m = MapRowMajor<std::complex<double>>(t);
  m << std::complex<double>(1, 2), std::complex<double>(0, -1), std::complex<double>(3, 0),
      std::complex<double>(-2, 0.5);
  m = m.adjoint().eval();  // conjugate transpose, written back into t's storage
  const std::vector<std::complex<double>> v = t.to_vector<std::complex<double>>();
  EXPECT_EQ(v, (std::vector<std::complex<double>>{{1, -2}, {3, 0}, {0, 1}, {-2, -0.5}}));
  // A complex64 Eigen matrix borrowed, then a view of a view.
  Eigen::MatrixXcf e = Eigen::MatrixXcf::Zero(2, 2);
  Tensor b = BorrowEigen(e);
  EXPECT_EQ(b.dtype(), kComplex64);
  Tensor bt = transpose(b, 0, 1);  // row-major over the column-major buffer
  MapRowMajor<std::complex<float>>(bt)(0, 1) = {1.0f, -1.0f};
  EXPECT_EQ(e(1, 0), std::complex<float>(1.0f, -1.0f));
}

TEST(EigenNewTypes, IntegerViewsKeepTheirWidth) {
  // uint8 wraps in Eigen as in C++, and the tensor sees the wrapped byte.
  Tensor u = empty({3}, kUInt8);
  auto v = MapVector<uint8_t>(u);
  v << 250, 5, 128;
  v.array() += uint8_t{10};
  EXPECT_EQ(u.to_vector<int64_t>(), (std::vector<int64_t>{4, 15, 138}));
  // int8 and int16 extremes through Borrow and back.
  Eigen::Matrix<int8_t, Eigen::Dynamic, 1> i8(2);
  i8 << -128, 127;
  EXPECT_EQ(BorrowEigen(i8).to_vector<int64_t>(), (std::vector<int64_t>{-128, 127}));
  Eigen::Matrix<int16_t, 1, Eigen::Dynamic> i16(2);
  i16 << -32768, 32767;
  EXPECT_EQ(CopyFromEigen(i16).to_vector<int64_t>(), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(CopyFromEigen(i16).dtype(), kInt16);
  // int32, as other libraries hand over indices.
  Eigen::VectorXi idx(3);
  idx << 2, 0, 1;
  const Tensor ti = BorrowEigen(idx);
  EXPECT_EQ(ti.dtype(), kInt32);
  EXPECT_EQ(ti.to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 1}));
  // ToEigen converts between any dtypes (a copy): int32 to double, complex to its real part.
  const Eigen::VectorXd d = ToEigen<Eigen::VectorXd>(ti);
  EXPECT_EQ(d, Eigen::Vector3d(2, 0, 1));
  const Tensor c = tensor(std::vector<std::complex<float>>{{1.5f, 2.0f}});
  EXPECT_EQ(ToEigen<Eigen::VectorXf>(c)(0), 1.5f);
  EXPECT_EQ(ToEigen<Eigen::VectorXcd>(ti)(0), std::complex<double>(2, 0));
}

TEST(EigenNewTypes, DTypeMismatchesAreRefused) {
  const Tensor i32 = empty({2, 2}, kInt32), c64 = empty({2}, kComplex64);
  const Tensor u8 = empty({2, 2}, kUInt8);
  EXPECT_FT_ERROR(MapRowMajor<int64_t>(i32),
                  "MapRowMajor: expected a 2-D int64 tensor, got a 2-D int32 tensor of sizes "
                  "[2, 2] and strides [2, 1] (views never convert dtypes; ToEigen copies)");
  EXPECT_FT_ERROR(MapVector<std::complex<double>>(c64),
                  "MapVector: expected a 1-D complex128 tensor, got a 1-D complex64 tensor");
  EXPECT_FT_ERROR(MapVector<float>(c64), "MapVector: expected a 1-D float32 tensor");
  EXPECT_FT_ERROR(MapStrided<int8_t>(u8),
                  "MapStrided: expected a 2-D int8 tensor, got a 2-D uint8 tensor");
}

// NOTE: [float16 and bfloat16 in Eigen]: no views (MapRowMajor<Eigen::half> and
// BorrowEigen of an Eigen::half matrix stop at a static_assert); copies go through float,
// exactly.
TEST(EigenNewTypes, Float16AndBFloat16CopyThroughFloat) {
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    // Values both formats hold exactly: the copy to float is exact, and back is too.
    const Tensor t = to(tensor({0.5f, -2.0f, 0.75f, 0.0f, 3.0f, -0.125f}, {2, 3}), dtype);
    const Eigen::MatrixXf f = ToEigen<Eigen::MatrixXf>(t);
    EXPECT_EQ(f(0, 1), -2.0f);
    EXPECT_EQ(f(1, 2), -0.125f);
    const Tensor back = to(CopyFromEigen(f), dtype);
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.to_vector<float>(), t.to_vector<float>());
    EXPECT_FT_ERROR(MapRowMajor<float>(t),
                    "MapRowMajor: expected a 2-D float32 tensor, got a "
                    "2-D " +
                        std::string(DTypeName(dtype)));
  }
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
concept Borrowable = requires(M&& m) {
  BorrowEigen(std::forward<M>(m));
};
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
