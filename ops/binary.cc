#include "ops/binary.h"

#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dispatch/dispatch.h"
#include "dispatch/named_axes.h"
#include "kernels/binary.h"

namespace ft {
namespace {

// ScalarAs converts a scalar operand to the compute type T. The dtype comes from
// ResultTypeWithScalar, so it is floating whenever s is: no double -> integer conversion
// happens here. A double beyond float32's range becomes +-inf, as a float32 computation with
// that scalar would give.
template <typename T>
T ScalarAs(Scalar s) {
  if constexpr (std::is_same_v<T, float>) {
    const double d = s.to<double>();
    const double limit = static_cast<double>(std::numeric_limits<float>::max());
    if (std::isfinite(d) && std::fabs(d) > limit) {
      return d > 0 ? std::numeric_limits<float>::infinity()
                   : -std::numeric_limits<float>::infinity();
    }
    return static_cast<float>(d);
  } else {
    return s.to<T>();
  }
}

// WrappedScalar is a 0-dim tensor holding `s` in `dtype` (torch's "wrapped number").
//
// NOTE: [Scalar tensor cache]
// Loops multiply by the same few constants over and over (x * 0.9, y + 1): each thread keeps
// its last few scalar tensors and hands the same (never written) tensor out again, which
// saves two allocations per scalar op. Safe because a wrapped scalar is only ever an
// operand: no op writes into its `other` argument or returns it as its result.
Tensor WrappedScalar(Scalar s, DType dtype) {
  if (!IsOriginalDType(dtype)) [[unlikely]] {
    // The dtypes beyond the original four are not cached (a complex128 value needs 16 bytes
    // of key): the scalar converts as a casting copy of it would (ConvertElement), a double
    // beyond float32's range saturating to +-inf in complex64, float16 and bfloat16 as in
    // float32 (ScalarAs).
    Tensor t = EmptyContiguous({}, dtype);
    VisitEveryDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v;
      if constexpr (std::is_same_v<T, std::complex<float>>) {
        const std::complex<double> z = s.to<std::complex<double>>();
        v = T(ScalarAs<float>(z.real()), ScalarAs<float>(z.imag()));
      } else if constexpr (kIsReducedFloatElement<T>) {
        v = T(ScalarAs<float>(s));  // through float, as ConvertElement, saturating first
      } else {
        v = s.to<T>();
      }
      std::memcpy(t.impl()->raw_data(), &v, sizeof(T));
    });
    return t;
  }
  struct Entry {
    DType dtype = kFloat32;
    uint64_t bits = 0;
    Tensor tensor;
  };
  constexpr int kCacheSize = 8;
  thread_local std::array<Entry, kCacheSize> cache;
  thread_local int next_slot = 0;
  uint64_t bits = 0;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = ScalarAs<T>(s);
    std::memcpy(&bits, &v, sizeof(T));
  });
  // With named axes in effect the grad levels tell a constant made inside f from data
  // captured from outside by when its buffer was allocated (NOTE: [Gradients across named
  // axes] in interpreters/grad/grad_interpreter.h): a cached scalar would look captured.
  const bool cacheable = NamedAxes::depth() == 0;
  if (cacheable) {
    for (const Entry& e : cache) {
      if (e.tensor.defined() && e.dtype == dtype && e.bits == bits) return e.tensor;
    }
  }
  Tensor t = EmptyContiguous({}, dtype);
  std::memcpy(t.impl()->raw_data(), &bits, static_cast<size_t>(ItemSize(dtype)));
  if (!cacheable) return t;
  cache[next_slot] = Entry{dtype, bits, t};
  next_slot = (next_slot + 1) % kCacheSize;
  return t;
}

// Promoted is the 0-dim tensor for `s` next to tensor `t` (python-scalar promotion).
Tensor Promoted(const Tensor& t, Scalar s) {
  return WrappedScalar(s, ResultTypeWithScalar(t.dtype(), s.kind()));
}

// PromotedForDiv is Promoted for true division: next to an int8, int16, int32 or uint8
// tensor an integer scalar is wrapped in float32, the dtype the division computes in, so
// that it is not first wrapped to the tensor's width (torch: uint8 / 300 divides by 300, not
// by 44). int64 and bool tensors keep Promoted: int64 holds every integer scalar.
Tensor PromotedForDiv(const Tensor& t, Scalar s) {
  const DType d = t.dtype();
  if (IsIntegral(d, /*include_bool=*/false) && d != kInt64 &&
      !IsDifferentiable(ResultTypeWithScalar(d, s.kind()))) [[unlikely]] {
    return WrappedScalar(s, kDefaultFloat);
  }
  return Promoted(t, s);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return Call<&kernels::add>(a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return Call<&kernels::sub>(a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return Call<&kernels::mul>(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return Call<&kernels::div>(a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return Call<&kernels::pow>(a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return Call<&kernels::maximum>(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return Call<&kernels::minimum>(a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return Call<&kernels::atan2>(a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return Call<&kernels::eq>(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return Call<&kernels::ne>(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return Call<&kernels::lt>(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return Call<&kernels::le>(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return Call<&kernels::gt>(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return Call<&kernels::ge>(a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return Call<&kernels::logical_and>(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return Call<&kernels::logical_or>(a, b); }
Tensor logical_not(const Tensor& x) { return Call<&kernels::logical_not>(x); }
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return Call<&kernels::where>(condition, a, b);
}
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return Call<&kernels::clamp>(x, min, max);
}
Tensor add_(const Tensor& self, const Tensor& other) { return Call<&kernels::add_>(self, other); }
Tensor sub_(const Tensor& self, const Tensor& other) { return Call<&kernels::sub_>(self, other); }
Tensor mul_(const Tensor& self, const Tensor& other) { return Call<&kernels::mul_>(self, other); }
Tensor div_(const Tensor& self, const Tensor& other) { return Call<&kernels::div_>(self, other); }
Tensor clamp_(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  return Call<&kernels::clamp_>(self, min, max);
}
Tensor copy_(const Tensor& self, const Tensor& src) { return Call<&kernels::copy_>(self, src); }
Tensor fill_(const Tensor& self, Scalar value) { return Call<&kernels::fill_>(self, value); }
Tensor zero_(const Tensor& self) { return Call<&kernels::zero_>(self); }

// ---- Scalar convenience overloads ----
Tensor add(const Tensor& a, Scalar b) { return add(a, Promoted(a, b)); }
Tensor sub(const Tensor& a, Scalar b) { return sub(a, Promoted(a, b)); }
Tensor mul(const Tensor& a, Scalar b) { return mul(a, Promoted(a, b)); }
Tensor div(const Tensor& a, Scalar b) { return div(a, PromotedForDiv(a, b)); }
Tensor pow(const Tensor& a, Scalar b) { return pow(a, Promoted(a, b)); }
Tensor maximum(const Tensor& a, Scalar b) { return maximum(a, Promoted(a, b)); }
Tensor minimum(const Tensor& a, Scalar b) { return minimum(a, Promoted(a, b)); }
Tensor atan2(const Tensor& a, Scalar b) { return atan2(a, Promoted(a, b)); }
Tensor add(Scalar a, const Tensor& b) { return add(Promoted(b, a), b); }
Tensor sub(Scalar a, const Tensor& b) { return sub(Promoted(b, a), b); }
Tensor mul(Scalar a, const Tensor& b) { return mul(Promoted(b, a), b); }
Tensor div(Scalar a, const Tensor& b) { return div(PromotedForDiv(b, a), b); }
Tensor pow(Scalar a, const Tensor& b) { return pow(Promoted(b, a), b); }
Tensor eq(const Tensor& a, Scalar b) { return eq(a, Promoted(a, b)); }
Tensor ne(const Tensor& a, Scalar b) { return ne(a, Promoted(a, b)); }
Tensor lt(const Tensor& a, Scalar b) { return lt(a, Promoted(a, b)); }
Tensor le(const Tensor& a, Scalar b) { return le(a, Promoted(a, b)); }
Tensor gt(const Tensor& a, Scalar b) { return gt(a, Promoted(a, b)); }
Tensor ge(const Tensor& a, Scalar b) { return ge(a, Promoted(a, b)); }
Tensor where(const Tensor& condition, const Tensor& a, Scalar b) {
  return where(condition, a, Promoted(a, b));
}
Tensor where(const Tensor& condition, Scalar a, const Tensor& b) {
  return where(condition, Promoted(b, a), b);
}
Tensor add_(const Tensor& self, Scalar other) { return add_(self, Promoted(self, other)); }
Tensor sub_(const Tensor& self, Scalar other) { return sub_(self, Promoted(self, other)); }
Tensor mul_(const Tensor& self, Scalar other) { return mul_(self, Promoted(self, other)); }
Tensor div_(const Tensor& self, Scalar other) { return div_(self, PromotedForDiv(self, other)); }

// ---- Operators ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }
Tensor& operator+=(Tensor& self, const Tensor& other) {
  add_(self, other);
  return self;
}
Tensor& operator-=(Tensor& self, const Tensor& other) {
  sub_(self, other);
  return self;
}
Tensor& operator*=(Tensor& self, const Tensor& other) {
  mul_(self, other);
  return self;
}
Tensor& operator/=(Tensor& self, const Tensor& other) {
  div_(self, other);
  return self;
}
Tensor& operator+=(Tensor& self, Scalar other) {
  add_(self, other);
  return self;
}
Tensor& operator-=(Tensor& self, Scalar other) {
  sub_(self, other);
  return self;
}
Tensor& operator*=(Tensor& self, Scalar other) {
  mul_(self, other);
  return self;
}
Tensor& operator/=(Tensor& self, Scalar other) {
  div_(self, other);
  return self;
}

void RegisterBinaryOps(OpRegistry& r) {
  RegisterOp<&kernels::add>(r, "add", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::sub>(r, "sub", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::mul>(r, "mul", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::div>(r, "div", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::pow>(r, "pow", {"self", "exponent"});
  RegisterOp<&kernels::maximum>(r, "maximum", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::minimum>(r, "minimum", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::atan2>(r, "atan2", {"self", "other"});
  RegisterOp<&kernels::eq>(r, "eq", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::ne>(r, "ne", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::lt>(r, "lt", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::le>(r, "le", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::gt>(r, "gt", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::ge>(r, "ge", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::logical_and>(r, "logical_and", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::logical_or>(r, "logical_or", {"self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::logical_not>(r, "logical_not", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::where>(r, "where", {"condition", "self", "other"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::clamp>(r, "clamp", {"self", "min", "max"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::add_>(r, "add_", {"self", "other"},
                             {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::sub_>(r, "sub_", {"self", "other"},
                             {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::mul_>(r, "mul_", {"self", "other"},
                             {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::div_>(r, "div_", {"self", "other"},
                             {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::clamp_>(r, "clamp_", {"self", "min", "max"},
                               {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::copy_>(r, "copy_", {"self", "src"},
                              {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::fill_>(r, "fill_", {"self", "value"},
                              {.mutated_arg = 0, .dtypes = kEveryDType});
  RegisterOp<&kernels::zero_>(r, "zero_", {"self"}, {.mutated_arg = 0, .dtypes = kEveryDType});
}

}  // namespace ft
