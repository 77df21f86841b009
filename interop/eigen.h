// ft/interop/eigen.h  (target //interop:eigen)
//
// Eigen interop: ft tensors and Eigen matrices and vectors, both ways, with and without
// copying. For code that already has Eigen matrices (a solver, a geometry library) and wants
// ft's transforms on them, or ft results in Eigen's algorithms.
//
// This is the one public header of ft that includes Eigen (house style keeps Eigen inside
// kernel .cc files); only code that depends on //interop:eigen pays for it.
//
// The functions, by who owns the memory afterwards:
//
//   ft tensor -> Eigen                          Eigen -> ft tensor
//   MapRowMajor<T>(t)   views  (no copy)        BorrowEigen(m)      views  (no copy)
//   MapColMajor<T>(t)   views  (no copy)        CopyFromEigen(m)    copies (ft owns it)
//   MapStrided<T>(t)    views  (no copy)
//   MapVector<T>(t)     views  (no copy)
//   ToEigen<M>(t)       copies (Eigen owns it)
//
// Invariants (ownership and aliasing):
// - A view is the same memory seen twice: a write through either side is seen by the other.
// - Map*(t) borrows t's storage: the Map is valid while some handle (t, a view of t, a copy
//   of the Storage) keeps that storage alive. `t` must be a named tensor: a Map of a
//   temporary (`MapRowMajor<float>(ft::sin(x))`) would dangle at the end of the statement,
//   so those overloads are deleted and do not compile.
// - BorrowEigen(m) borrows m's buffer (Storage::FromExternal, NOTE: [External storage] in
//   tensor/storage.h): the caller keeps `m` alive, and does not resize it, for as long as the
//   tensor or any view of it exists. ft never frees that memory.
// - The copies (ToEigen, CopyFromEigen) own their elements and outlive their source.
// - Writes through a Map, or through `m` behind a borrowed tensor, are not ft in-place ops:
//   they do not bump the version counter (NOTE: [Version counter] in tensor/storage.h). Do not
//   write them while a transform (grad, vjp, ...) has saved the tensor for backward, or call
//   t.bump_version() after writing so that autograd detects it.
// - Eigen's and ft's strides are both in elements. ft element [i, j] is at
//   data + i*stride(0) + j*stride(1); a row-major Eigen matrix has outerStride between rows,
//   a column-major one between columns.
// - Element types: the C++ element type of the tensor's dtype (DTypeOf in tensor/dtype.h):
//   float, double, std::complex<float> (kComplex64), std::complex<double> (kComplex128),
//   int8_t, int16_t, int32_t, int64_t, uint8_t and bool. A Map's T must be the tensor's
//   dtype exactly: views never convert. float16 and bfloat16 have no views and no Eigen
//   scalar type here (NOTE: [float16 and bfloat16 in Eigen]); their copies go through float.
//
// Example (mirrored by the test EigenInterop.HeaderExample):
//   ft::Tensor t = ft::zeros({2, 3});                     // float32, row-major
//   auto m = ft::MapRowMajor<float>(t);                   // Eigen view of t's storage
//   m(1, 2) = 5;                                          // t[1, 2] == 5
//   Eigen::MatrixXd e = Eigen::MatrixXd::Identity(3, 3);
//   ft::Tensor borrowed = ft::BorrowEigen(e);             // e must outlive `borrowed`
//   ft::Tensor owned = ft::CopyFromEigen(e);              // independent of e
//   Eigen::MatrixXf back = ft::ToEigen<Eigen::MatrixXf>(ft::transpose(t, 0, 1));  // a copy
//
// NOTE: [float16 and bfloat16 in Eigen]
// Eigen has its own Eigen::half and Eigen::bfloat16, with the same bits as ft::Half and
// ft::BFloat16. ft does not offer Maps of a float16 or bfloat16 tensor as those types, nor
// BorrowEigen of their matrices: the two are distinct C++ types, so reading one's elements
// through the other breaks C++'s aliasing rule (GCC's type-based alias analysis may reorder
// a write through the Map past a read through the tensor), and a view that is right only
// until the optimizer looks closer is worse than none. ft::Half, ft::BFloat16, Eigen::half
// and Eigen::bfloat16 are refused at compile time as the element type of every function
// here, the copies included (a static_assert naming the way out). What works:
// ToEigen<Eigen::MatrixXf>(t) copies a float16 or bfloat16 tensor exactly into float (every
// value of both is a float), and CopyFromEigen of a float matrix (m.cast<float>() of an
// Eigen::half one) followed by ft::to(x, kFloat16 or kBFloat16) rounds back (to nearest
// even, as ft's conversions do; exact for values that came from those types).
#ifndef FT_INTEROP_EIGEN_H_
#define FT_INTEROP_EIGEN_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "Eigen/Core"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace ft {

// ---- ft tensor -> Eigen views ----

namespace interop_internal {
// Matrix: Eigen's dynamic-size matrix of T's element type, const when T is.
template <typename T, int Cols, int Options>
using Matrix =
    std::conditional_t<std::is_const_v<T>,
                       const Eigen::Matrix<std::remove_const_t<T>, Eigen::Dynamic, Cols, Options>,
                       Eigen::Matrix<std::remove_const_t<T>, Eigen::Dynamic, Cols, Options>>;
}  // namespace interop_internal

// The Map types of the views. T is an element type of the list above (float, double,
// std::complex<float>, int32_t, ...); `const T` gives a read-only Map (and then allows
// broadcast strides, see MapStrided).
template <typename T>
using EigenRowMajorMap = Eigen::Map<interop_internal::Matrix<T, Eigen::Dynamic, Eigen::RowMajor>,
                                    Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using EigenColMajorMap = Eigen::Map<interop_internal::Matrix<T, Eigen::Dynamic, Eigen::ColMajor>,
                                    Eigen::Unaligned, Eigen::OuterStride<>>;
// The general one: a row-major matrix type with both strides given at run time (outer =
// stride(0), between rows; inner = stride(1), between columns).
template <typename T>
using EigenStridedMap = Eigen::Map<interop_internal::Matrix<T, Eigen::Dynamic, Eigen::RowMajor>,
                                   Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
template <typename T>
using EigenVectorMap = Eigen::Map<interop_internal::Matrix<T, 1, Eigen::ColMajor>, Eigen::Unaligned,
                                  Eigen::InnerStride<>>;

// MapRowMajor views a 2-D tensor whose rows are contiguous (stride(1) == 1, or at most one
// column) as a row-major Eigen matrix: a plain contiguous tensor, or rows sliced out of one.
// Eigen vectorizes over the contiguous rows. Borrows t's storage (see the invariants above).
// Throws ft::Error ("MapRowMajor: ...", naming the dtype, sizes and strides) when t is
// undefined or not dense, is not 2-D, its dtype is not T's, or its rows are not contiguous
// (a transposed tensor: use MapColMajor or MapStrided).
template <typename T>
EigenRowMajorMap<T> MapRowMajor(const Tensor& t);
template <typename T>
EigenRowMajorMap<T> MapRowMajor(Tensor&& t) = delete;  // would dangle: name the tensor

// MapColMajor views a 2-D tensor whose columns are contiguous (stride(0) == 1, or at most one
// row) as a column-major Eigen matrix: the transpose of a contiguous tensor, or a tensor
// created from a column-major buffer (BorrowEigen of an Eigen::MatrixXf). Throws as
// MapRowMajor does ("MapColMajor: ...") when the columns are not contiguous.
template <typename T>
EigenColMajorMap<T> MapColMajor(const Tensor& t);
template <typename T>
EigenColMajorMap<T> MapColMajor(Tensor&& t) = delete;  // would dangle: name the tensor

// MapStrided views any 2-D strided tensor (row-major, column-major, sliced with steps,
// transposed) with run-time strides. A mutable Map (T not const) refuses broadcast dims
// (stride 0 over a size above 1: one element behind several coefficients, so a write would
// change them all); MapStrided<const T> accepts them. Throws as MapRowMajor does
// ("MapStrided: ...").
template <typename T>
EigenStridedMap<T> MapStrided(const Tensor& t);
template <typename T>
EigenStridedMap<T> MapStrided(Tensor&& t) = delete;  // would dangle: name the tensor

// MapVector views a 1-D tensor of any stride as an Eigen column vector (InnerStride). A
// mutable Map refuses a broadcast tensor (stride 0), as MapStrided does. Throws ft::Error
// ("MapVector: ...") when t is not 1-D, its dtype is not T's, or it is undefined or not dense.
template <typename T>
EigenVectorMap<T> MapVector(const Tensor& t);
template <typename T>
EigenVectorMap<T> MapVector(Tensor&& t) = delete;  // would dangle: name the tensor

// ---- ft tensor -> Eigen copy ----

// ToEigen copies t into a new Eigen object of type M (any Eigen::Matrix or Eigen::Array:
// row- or column-major, dynamic or fixed sizes). t may have any layout (non-contiguous,
// transposed, broadcast) and any dtype; elements are converted to M's scalar type as ft
// converts them (ConvertElement in tensor/dtype.h). A vector type (M has one column or one
// row at compile time) takes a 1-D tensor; a matrix type a 2-D one. The result owns its
// elements and outlives t. Throws ft::Error ("ToEigen: ...") when t is undefined or not
// dense, its rank does not fit M, or its sizes do not fit M's fixed sizes.
template <typename M>
M ToEigen(const Tensor& t);

// ---- Eigen -> ft tensor ----

// BorrowEigen returns a tensor over m's buffer, without copying: a write through the tensor
// (an in-place op, a Map) is seen in m and a write to m is seen in the tensor. m is any Eigen
// object with direct, writable access to its coefficients: Matrix, Array, Map, Block, Ref,
// row- or column-major; its strides become the tensor's. An Eigen vector type (one column or
// one row at compile time) gives a 1-D tensor, anything else a 2-D one. The dtype follows
// the scalar type (DTypeOf: float -> kFloat32, std::complex<double> -> kComplex128, uint8_t
// -> kUInt8, ...; Eigen::half and Eigen::bfloat16 do not compile, NOTE: [float16 and
// bfloat16 in Eigen]).
// Ownership: the caller keeps `m` alive and does not resize it (a resize reallocates) while
// the tensor or any view of it exists; ft never frees the buffer. Temporaries are rejected
// at compile time (they die at the end of the statement); read-only objects too (ft has no
// read-only tensors): copy those with CopyFromEigen.
template <typename Derived>
Tensor BorrowEigen(Eigen::DenseBase<Derived>& m);
template <typename Derived>
Tensor BorrowEigen(Eigen::DenseBase<Derived>&& m) = delete;  // would dangle at once
template <typename Derived>
Tensor BorrowEigen(const Eigen::DenseBase<Derived>& m) = delete;  // read-only: CopyFromEigen

// CopyFromEigen copies m (any Eigen expression: a matrix, a block, a product) into a new,
// contiguous (row-major) ft tensor that owns its elements and outlives m. Vector types give
// a 1-D tensor, others 2-D; the dtype follows the scalar type, as for BorrowEigen.
template <typename Derived>
Tensor CopyFromEigen(const Eigen::DenseBase<Derived>& m);

// ---- template definitions ----

namespace interop_internal {

// CheckMappable: t is defined, dense, of `rank` and of dtype `dtype`, else ft::Error naming
// `fn`, what was found, and the tensor's dtype, sizes and strides.
void CheckMappable(const char* fn, const Tensor& t, int64_t rank, DType dtype);
// ThrowLayout: ft::Error "<fn>: cannot map <dtype> tensor of sizes [..] and strides [..]
// <why>".
[[noreturn]] void ThrowLayout(const char* fn, const Tensor& t, const char* why);
// RefuseBroadcast: a mutable Map cannot have a stride-0 dim of size above 1.
void RefuseBroadcast(const char* fn, const Tensor& t);
// ContiguousAs: t converted to `dtype` and made row-major contiguous (t itself when it
// already is), with rank `rank` checked; errors name `fn`.
Tensor ContiguousAs(const char* fn, const Tensor& t, DType dtype, int64_t rank);
// NewContiguous: a fresh contiguous tensor of `sizes`/`dtype` (for CopyFromEigen).
Tensor NewContiguous(IntArrayRef sizes, DType dtype);
// External: a tensor over borrowed memory (BorrowEigen).
Tensor External(void* data, DType dtype, IntArrayRef sizes, IntArrayRef strides);

// kIsElement: the C++ element types that views and copies take (the Map's T, the Eigen
// scalar type): every dtype's but float16's and bfloat16's.
template <typename T>
inline constexpr bool kIsElement =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, bool> || std::is_same_v<T, std::complex<float>> ||
    std::is_same_v<T, std::complex<double>> || std::is_same_v<T, int8_t> ||
    std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint8_t>;
template <typename T>
inline constexpr bool kIsHalfLike =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Eigen::half> ||
    std::is_same_v<T, Eigen::bfloat16>;

template <typename T>
constexpr DType ElementDType() {
  static_assert(!kIsHalfLike<T>,
                "ft interop: float16 and bfloat16 have no Eigen views (NOTE: [float16 and "
                "bfloat16 in Eigen] in interop/eigen.h): copy through float with "
                "ToEigen<Eigen::MatrixXf>(t), or CopyFromEigen(m.cast<float>()) then ft::to");
  static_assert(kIsHalfLike<T> || kIsElement<T>,
                "ft interop: the element type must be one of ft's: float, double, "
                "std::complex<float>, std::complex<double>, int8_t, int16_t, int32_t, int64_t, "
                "uint8_t or bool");
  if constexpr (kIsElement<T>) {
    return DTypeOf<T>();
  } else {
    return kFloat32;  // not reached: the static_asserts above have failed
  }
}

template <typename T>
T* DataOf(const Tensor& t) {
  return t.data<std::remove_const_t<T>>();
}

}  // namespace interop_internal

template <typename T>
EigenRowMajorMap<T> MapRowMajor(const Tensor& t) {
  constexpr DType dtype = interop_internal::ElementDType<std::remove_const_t<T>>();
  interop_internal::CheckMappable("MapRowMajor", t, 2, dtype);
  const int64_t rows = t.size(0), cols = t.size(1);
  if (cols > 1 && t.stride(1) != 1) {
    interop_internal::ThrowLayout(
        "MapRowMajor", t,
        "as a row-major matrix: its rows are not contiguous (stride(1) must be 1); use "
        "MapColMajor for a transposed tensor or MapStrided for any layout");
  }
  // With one row the outer stride is never used: give the one a contiguous matrix has.
  const int64_t outer = rows > 1 ? t.stride(0) : cols;
  if (!std::is_const_v<T> && rows > 1 && outer == 0) {
    interop_internal::RefuseBroadcast("MapRowMajor", t);
  }
  return EigenRowMajorMap<T>(interop_internal::DataOf<T>(t), rows, cols,
                             Eigen::OuterStride<>(outer));
}

template <typename T>
EigenColMajorMap<T> MapColMajor(const Tensor& t) {
  constexpr DType dtype = interop_internal::ElementDType<std::remove_const_t<T>>();
  interop_internal::CheckMappable("MapColMajor", t, 2, dtype);
  const int64_t rows = t.size(0), cols = t.size(1);
  if (rows > 1 && t.stride(0) != 1) {
    interop_internal::ThrowLayout(
        "MapColMajor", t,
        "as a column-major matrix: its columns are not contiguous (stride(0) must be 1); use "
        "MapRowMajor for a row-major tensor or MapStrided for any layout");
  }
  const int64_t outer = cols > 1 ? t.stride(1) : rows;
  if (!std::is_const_v<T> && cols > 1 && outer == 0) {
    interop_internal::RefuseBroadcast("MapColMajor", t);
  }
  return EigenColMajorMap<T>(interop_internal::DataOf<T>(t), rows, cols,
                             Eigen::OuterStride<>(outer));
}

template <typename T>
EigenStridedMap<T> MapStrided(const Tensor& t) {
  constexpr DType dtype = interop_internal::ElementDType<std::remove_const_t<T>>();
  interop_internal::CheckMappable("MapStrided", t, 2, dtype);
  if constexpr (!std::is_const_v<T>) interop_internal::RefuseBroadcast("MapStrided", t);
  return EigenStridedMap<T>(
      interop_internal::DataOf<T>(t), t.size(0), t.size(1),
      Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(t.stride(0), t.stride(1)));
}

template <typename T>
EigenVectorMap<T> MapVector(const Tensor& t) {
  constexpr DType dtype = interop_internal::ElementDType<std::remove_const_t<T>>();
  interop_internal::CheckMappable("MapVector", t, 1, dtype);
  if constexpr (!std::is_const_v<T>) interop_internal::RefuseBroadcast("MapVector", t);
  return EigenVectorMap<T>(interop_internal::DataOf<T>(t), t.size(0),
                           Eigen::InnerStride<>(t.stride(0)));
}

template <typename M>
M ToEigen(const Tensor& t) {
  using Scalar = typename M::Scalar;
  constexpr DType dtype = interop_internal::ElementDType<Scalar>();
  constexpr bool kVector = M::IsVectorAtCompileTime;
  const Tensor c = interop_internal::ContiguousAs("ToEigen", t, dtype, kVector ? 1 : 2);
  const int64_t rows = kVector ? (M::ColsAtCompileTime == 1 ? c.size(0) : 1) : c.size(0);
  const int64_t cols = kVector ? (M::ColsAtCompileTime == 1 ? 1 : c.size(0)) : c.size(1);
  if ((M::RowsAtCompileTime != Eigen::Dynamic && M::RowsAtCompileTime != rows) ||
      (M::ColsAtCompileTime != Eigen::Dynamic && M::ColsAtCompileTime != cols) ||
      (M::MaxRowsAtCompileTime != Eigen::Dynamic && rows > M::MaxRowsAtCompileTime) ||
      (M::MaxColsAtCompileTime != Eigen::Dynamic && cols > M::MaxColsAtCompileTime)) {
    interop_internal::ThrowLayout("ToEigen", t,
                                  "into the requested Eigen type: its sizes do not fit the "
                                  "type's fixed (or maximum) rows and columns");
  }
  // A row-major view of the contiguous copy; assigning it copies into M's own storage order.
  const Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                   Eigen::Unaligned>
      source(c.data<Scalar>(), rows, cols);
  M out;
  out.resize(rows, cols);  // not M(rows, cols): for a fixed 2-vector that sets coefficients
  out.matrix() = source;   // .matrix(): M may be an Eigen::Array
  return out;
}

template <typename Derived>
Tensor BorrowEigen(Eigen::DenseBase<Derived>& m) {
  static_assert(bool(Derived::Flags & Eigen::DirectAccessBit),
                "BorrowEigen: the Eigen object must give direct access to its coefficients "
                "(a Matrix, Array, Map, Block or Ref, not an expression); copy expressions "
                "with CopyFromEigen");
  static_assert(bool(Derived::Flags & Eigen::LvalueBit),
                "BorrowEigen: the Eigen object is read-only (ft has no read-only tensors); "
                "copy it with CopyFromEigen");
  using Scalar = typename Derived::Scalar;
  constexpr DType dtype = interop_internal::ElementDType<Scalar>();
  Derived& d = m.derived();
  const int64_t inner = d.innerStride();
  if constexpr (Derived::IsVectorAtCompileTime) {
    const int64_t size = d.size();
    return interop_internal::External(d.data(), dtype, {size}, {inner});
  } else {
    const int64_t outer = d.outerStride();
    const int64_t rows = d.rows(), cols = d.cols();
    if constexpr (bool(Derived::IsRowMajor)) {
      return interop_internal::External(d.data(), dtype, {rows, cols}, {outer, inner});
    } else {
      return interop_internal::External(d.data(), dtype, {rows, cols}, {inner, outer});
    }
  }
}

template <typename Derived>
Tensor CopyFromEigen(const Eigen::DenseBase<Derived>& m) {
  using Scalar = typename Derived::Scalar;
  constexpr DType dtype = interop_internal::ElementDType<Scalar>();
  if constexpr (Derived::IsVectorAtCompileTime) {
    Tensor out = interop_internal::NewContiguous({static_cast<int64_t>(m.size())}, dtype);
    // Eigen transposes a row vector into the column vector Map by itself.
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>, Eigen::Unaligned>(
        out.data<Scalar>(), m.size()) = m.derived().matrix();
    return out;
  } else {
    const int64_t rows = m.rows(), cols = m.cols();
    Tensor out = interop_internal::NewContiguous({rows, cols}, dtype);
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
               Eigen::Unaligned>(out.data<Scalar>(), rows, cols) = m.derived().matrix();
    return out;
  }
}

}  // namespace ft

#endif  // FT_INTEROP_EIGEN_H_
