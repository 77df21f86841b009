// ft/distributed/reduce.h  (private to //distributed:process_group)
//
// The element types and reductions the engines accept, in one place for Gloo and MPI:
// float32, float64 and int64 reduce by kSum and kMax; bool (one byte, 0 or 1) by kMax only
// (a sum of bools is not a bool). CheckReduction is the ft::Error for anything else.
//
// ReduceFn<T, op> is the element-wise reduction Gloo calls: out[i] = a[i] op b[i]. Its order
// of operands never changes the value (sum and max commute bit-exactly in IEEE arithmetic),
// so the engine's fixed order of reduction alone decides the result. int64 sums wrap (two's
// complement) instead of overflowing into undefined behavior; max propagates NaN.
//
// Example:
//   CheckReduction("AllReduce (gloo)", dtype, op);      // throws for bool kSum
//   VisitReduceType(dtype, [&](auto zero) { using T = decltype(zero); ... });
#ifndef FT_DISTRIBUTED_REDUCE_H_
#define FT_DISTRIBUTED_REDUCE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "distributed/process_group.h"
#include "tensor/dtype.h"
#include "tensor/error.h"

namespace ft::dist {

inline const char* ReduceOpName(ReduceOp op) { return op == ReduceOp::kSum ? "sum" : "max"; }

// CheckReduction throws ft::Error, starting with `op`, for a dtype or reduction the engines
// do not reduce.
inline void CheckReduction(const char* op, DType dtype, ReduceOp reduce) {
  if (reduce != ReduceOp::kSum && reduce != ReduceOp::kMax) {
    ThrowError(op, ": unknown reduction ", static_cast<int>(reduce));
  }
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt64:
      return;
    case DType::kBool:
      if (reduce == ReduceOp::kSum) {
        ThrowError(op, ": a sum of bool is not supported (use max, a logical or)");
      }
      return;
    default:
      break;
  }
  if (static_cast<int>(dtype) >= kNumDTypes) {
    ThrowError(op, ": unknown dtype ", static_cast<int>(dtype));
  }
  ThrowError(op, ": ", DTypeName(dtype),
             " tensors are not reduced yet (float32, float64, int64 and bool are)");
}

// VisitReduceType calls f(T{}) with the C++ element type of dtype (uint8_t for bool).
template <typename F>
void VisitReduceType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      f(float{});
      return;
    case DType::kFloat64:
      f(double{});
      return;
    case DType::kInt64:
      f(int64_t{});
      return;
    case DType::kBool:
      f(uint8_t{});
      return;
    default:
      break;
  }
  FT_CHECK(false && "VisitReduceType: CheckReduction lets no other dtype through");
}

template <typename T, ReduceOp op>
T Combine(T a, T b) {
  if constexpr (op == ReduceOp::kSum) {
    if constexpr (std::is_same_v<T, int64_t>) {
      return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return static_cast<T>(a + b);
    }
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) {
        return a;
      }
      if (std::isnan(b)) {
        return b;
      }
    }
    return a < b ? b : a;
  }
}

// ReduceFn: Gloo's reduction signature; out may alias a or b.
template <typename T, ReduceOp op>
void ReduceFn(void* out, const void* a, const void* b, size_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    o[i] = Combine<T, op>(x[i], y[i]);
  }
}

}  // namespace ft::dist

#endif  // FT_DISTRIBUTED_REDUCE_H_
