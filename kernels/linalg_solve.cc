// Base kernels of the factorization-based linear algebra ops (declared in
// kernels/linalg.h): linalg_solve, linalg_solve_triangular, cholesky, inverse,
// slogdet and logdet.
//
// Every op brings its operands to one contiguous [batch..., rows, cols] buffer
// of the compute dtype (broadcast batch dims expanded, so one matrix follows
// the other), then runs one Eigen decomposition per matrix on row-major maps of
// those buffers and writes a new contiguous result. Only float32 and float64
// are computed (Eigen's decompositions make no sense for integers); validation
// happens before any work.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "Eigen/Cholesky"
#include "Eigen/LU"
#include "kernels/checks.h"
#include "kernels/linalg.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::RowMajorMatrix;
template <typename T>
using ConstMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned>;
template <typename T>
using MutMap = Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned>;

void CheckFloating(const char* op, const char* name, IntArrayRef shape, DType dtype) {
  if (!IsFloating(dtype)) {
    ThrowError(op, ": expected a float32 or float64 ", name, ", got ", DTypeName(dtype), " ",
               ShapeToString(shape));
  }
}

// CheckMatrix: `shape` is [..., n, n] (named `name` in messages).
void CheckSquare(const char* op, const char* name, IntArrayRef shape) {
  const size_t r = shape.size();
  if (r < 2) {
    ThrowError(op, ": expected ", name,
               " of rank >= 2 (a batch of square matrices [..., n, n]), got ",
               ShapeToString(shape));
  }
  if (shape[r - 2] != shape[r - 1]) {
    ThrowError(op, ": expected square matrices [..., n, n] for ", name, ", got ",
               ShapeToString(shape), " (dims -2 and -1 are ", shape[r - 2], " and ", shape[r - 1],
               ")");
  }
}

IntArrayRef BatchOf(IntArrayRef shape, int64_t core) {
  return shape.subspan(0, shape.size() - static_cast<size_t>(core));
}

// BroadcastBatch: the broadcast of two batch shapes, with a message naming both
// operands.
Shape BroadcastBatch(const char* op, IntArrayRef ab, IntArrayRef a, IntArrayRef bb, IntArrayRef b) {
  const size_t n = std::max(ab.size(), bb.size());
  Shape out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - ab.size() ? 1 : ab[i - (n - ab.size())];
    const int64_t db = i < n - bb.size() ? 1 : bb[i - (n - bb.size())];
    if (da != db && da != 1 && db != 1) {
      ThrowError(op, ": batch dims ", ShapeToString(ab), " of A ", ShapeToString(a), " and ",
                 ShapeToString(bb), " of B ", ShapeToString(b), " cannot be broadcast together (",
                 da, " vs ", db, ")");
    }
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

// Dense: t expanded to batch + [rows, cols], of `dtype`, contiguous (a copy
// when t is not already exactly that; the result is only read).
Tensor Dense(const Tensor& t, IntArrayRef batch, int64_t rows, int64_t cols, DType dtype) {
  Shape s(batch.begin(), batch.end());
  s.push_back(rows);
  s.push_back(cols);
  return contiguous(expand(to(t, dtype), s));
}

// WhereInBatch: " (matrix i of the batch of A [..])" or "" for a single matrix.
std::string WhereInBatch(int64_t i, int64_t count, IntArrayRef a) {
  if (count == 1) return absl::StrCat(" (A ", ShapeToString(a), ")");
  return absl::StrCat(" (matrix ", i, " of the batch of A ", ShapeToString(a), ")");
}

// SingularPivot: the first zero on the diagonal of an LU factor, or -1.
template <typename LU>
int64_t SingularPivot(const LU& lu) {
  const auto& m = lu.matrixLU();
  for (int64_t j = 0; j < m.rows(); ++j) {
    if (m(j, j) == 0) return j;
  }
  return -1;
}

template <typename Fn>
void VisitFloat(DType dtype, Fn&& fn) {
  if (dtype == kFloat32) {
    fn(float{});
  } else {
    FT_CHECK(dtype == kFloat64);
    fn(double{});
  }
}

// SolveImpl: X with A X = B (lu) or the triangular solve (triangular: upper or
// lower).
enum class SolveKind { kLu, kLower, kUpper };

Tensor SolveImpl(const char* op, const Tensor& a, const Tensor& b, bool allow_vector,
                 SolveKind kind) {
  const bool vector =
      CheckSolveOperands(op, a.sizes(), a.dtype(), b.sizes(), b.dtype(), allow_vector);
  const DType dtype = PromoteTypes(a.dtype(), b.dtype());
  const int64_t n = a.sizes()[a.dim() - 1];
  const int64_t k = vector ? 1 : b.sizes()[b.dim() - 1];
  const Shape batch = BroadcastBatch(op, BatchOf(a.sizes(), 2), a.sizes(),
                                     BatchOf(b.sizes(), vector ? 1 : 2), b.sizes());
  Shape out_shape = batch;
  out_shape.push_back(n);
  if (!vector) out_shape.push_back(k);
  Tensor out = EmptyContiguous(out_shape, dtype);
  if (out.numel() == 0) return out;
  const Tensor da = Dense(a, batch, n, n, dtype);
  const Tensor db = Dense(vector ? unsqueeze(b, -1) : b, batch, n, k, dtype);
  const int64_t count = Numel(batch);
  VisitFloat(dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* pa = static_cast<const T*>(da.impl()->raw_data());
    const T* pb = static_cast<const T*>(db.impl()->raw_data());
    T* po = static_cast<T*>(out.impl()->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      const ConstMap<T> am(pa + i * n * n, n, n);
      const ConstMap<T> bm(pb + i * n * k, n, k);
      MutMap<T> x(po + i * n * k, n, k);
      if (kind == SolveKind::kLu) {
        const Eigen::PartialPivLU<RowMajorMatrix<T>> lu(am);
        const int64_t j = SingularPivot(lu);
        if (j >= 0) {
          ThrowError(op, ": A is singular: pivot ", j, " of its LU factorization is zero",
                     WhereInBatch(i, count, a.sizes()), "; the system has no unique solution");
        }
        x.noalias() = lu.solve(bm);
      } else if (kind == SolveKind::kLower) {
        x.noalias() = am.template triangularView<Eigen::Lower>().solve(bm);
      } else {
        x.noalias() = am.template triangularView<Eigen::Upper>().solve(bm);
      }
    }
  });
  return out;
}

}  // namespace

void CheckSquareMatrices(const char* op, IntArrayRef shape, DType dtype) {
  CheckSquare(op, "A", shape);
  CheckFloating(op, "A", shape, dtype);
}

bool CheckSolveOperands(const char* op, IntArrayRef a, DType a_dtype, IntArrayRef b, DType b_dtype,
                        bool allow_vector) {
  CheckSquareMatrices(op, a, a_dtype);
  CheckFloating(op, "B", b, b_dtype);
  const int64_t n = a[a.size() - 1];
  const bool vector =
      allow_vector && (b.size() == 1 || (b.size() + 1 == a.size() &&
                                         std::equal(b.begin(), b.end(), a.begin(), a.end() - 1)));
  if (vector) {
    if (b[b.size() - 1] != n) {
      ThrowError(op, ": size mismatch, B ", ShapeToString(b), " is a vector of length ",
                 b[b.size() - 1], " but A ", ShapeToString(a), " is ", n, " x ", n);
    }
    return true;
  }
  if (b.size() < 2) {
    ThrowError(op, ": expected B of rank >= 2 ([..., n, k]), got ", ShapeToString(b), " (A ",
               ShapeToString(a), ")");
  }
  if (b[b.size() - 2] != n) {
    ThrowError(op, ": size mismatch, got A ", ShapeToString(a), " and B ", ShapeToString(b),
               ": dim -2 of B (", b[b.size() - 2], ") must equal n (", n, ")");
  }
  BroadcastBatch(op, BatchOf(a, 2), a, BatchOf(b, 2), b);
  return false;
}

Tensor linalg_solve(const Tensor& a, const Tensor& b) {
  return SolveImpl("linalg_solve", a, b, /*allow_vector=*/true, SolveKind::kLu);
}

Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper) {
  return SolveImpl("linalg_solve_triangular", a, b, /*allow_vector=*/false,
                   upper ? SolveKind::kUpper : SolveKind::kLower);
}

Tensor cholesky(const Tensor& a) {
  CheckSquareMatrices("cholesky", a.sizes(), a.dtype());
  Tensor out = EmptyContiguous(a.sizes(), a.dtype());
  if (out.numel() == 0) return out;
  const int64_t n = a.sizes()[a.dim() - 1];
  const IntArrayRef batch = BatchOf(a.sizes(), 2);
  const Tensor da = Dense(a, batch, n, n, a.dtype());
  const int64_t count = Numel(batch);
  VisitFloat(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pa = static_cast<const T*>(da.impl()->raw_data());
    T* po = static_cast<T*>(out.impl()->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      const Eigen::LLT<RowMajorMatrix<T>, Eigen::Lower> llt(ConstMap<T>(pa + i * n * n, n, n));
      if (llt.info() != Eigen::Success) {
        ThrowError("cholesky: A is not positive-definite", WhereInBatch(i, count, a.sizes()),
                   "; the factorization needs a symmetric positive-definite matrix");
      }
      MutMap<T>(po + i * n * n, n, n) = llt.matrixL().toDenseMatrix();
    }
  });
  return out;
}

Tensor inverse(const Tensor& a) {
  CheckSquareMatrices("inverse", a.sizes(), a.dtype());
  Tensor out = EmptyContiguous(a.sizes(), a.dtype());
  if (out.numel() == 0) return out;
  const int64_t n = a.sizes()[a.dim() - 1];
  const IntArrayRef batch = BatchOf(a.sizes(), 2);
  const Tensor da = Dense(a, batch, n, n, a.dtype());
  const int64_t count = Numel(batch);
  VisitFloat(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pa = static_cast<const T*>(da.impl()->raw_data());
    T* po = static_cast<T*>(out.impl()->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      const Eigen::PartialPivLU<RowMajorMatrix<T>> lu(ConstMap<T>(pa + i * n * n, n, n));
      const int64_t j = SingularPivot(lu);
      if (j >= 0) {
        ThrowError("inverse: A is singular: pivot ", j, " of its LU factorization is zero",
                   WhereInBatch(i, count, a.sizes()), "; it has no inverse");
      }
      MutMap<T>(po + i * n * n, n, n) = lu.inverse();
    }
  });
  return out;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& a) {
  CheckSquareMatrices("slogdet", a.sizes(), a.dtype());
  const IntArrayRef batch = BatchOf(a.sizes(), 2);
  Tensor sign = EmptyContiguous(batch, a.dtype());
  Tensor logabs = EmptyContiguous(batch, a.dtype());
  const int64_t count = Numel(batch);
  if (count == 0) return {sign, logabs};
  const int64_t n = a.sizes()[a.dim() - 1];
  const Tensor da = Dense(a, batch, n, n, a.dtype());
  VisitFloat(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pa = static_cast<const T*>(da.impl()->raw_data());
    T* ps = static_cast<T*>(sign.impl()->raw_data());
    T* pl = static_cast<T*>(logabs.impl()->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      if (n == 0) {  // the empty product: det 1
        ps[i] = T(1);
        pl[i] = T(0);
        continue;
      }
      const Eigen::PartialPivLU<RowMajorMatrix<T>> lu(ConstMap<T>(pa + i * n * n, n, n));
      const auto& m = lu.matrixLU();
      T s = static_cast<T>(lu.permutationP().determinant());
      T l = T(0);
      for (int64_t j = 0; j < n; ++j) {
        const T u = m(j, j);
        if (u == T(0)) {
          s = T(0);
          l = -std::numeric_limits<T>::infinity();
          break;
        }
        if (u < T(0)) s = -s;
        l += std::log(std::abs(u));
      }
      ps[i] = s;
      pl[i] = l;
    }
  });
  return {sign, logabs};
}

Tensor logdet(const Tensor& a) {
  CheckSquareMatrices("logdet", a.sizes(), a.dtype());
  // Named members, not a structured binding: clang 14 (--config=fuzz) rejects a lambda's
  // capture of a structured binding, which C++20 allows.
  const std::tuple<Tensor, Tensor> sign_and_logabs = slogdet(a);
  const Tensor& sign = std::get<0>(sign_and_logabs);
  const Tensor& logabs = std::get<1>(sign_and_logabs);
  const int64_t count = logabs.numel();
  VisitFloat(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* ps = static_cast<const T*>(sign.impl()->raw_data());
    T* pl = static_cast<T*>(logabs.impl()->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      // log det: -inf for det 0 (pl already), nan for a negative determinant.
      if (ps[i] < T(0)) pl[i] = std::numeric_limits<T>::quiet_NaN();
    }
  });
  return logabs;
}

}  // namespace ft::kernels
