#include "tensor/unary_kernels.h"

#include <cstdint>
#include <type_traits>

#include "tensor/copy.h"
#include "tensor/kernel_util.h"

namespace ft::kernels {
namespace {

using internal::UnaryLoop;

void RejectBool(const char* op, const Tensor& x) {
  if (x.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert with to(kFloat32) or to(kInt64) first");
  }
}

// FloatingUnary: int64 computes in float32 (PyTorch's int-to-float promotion).
template <typename F>
Tensor FloatingUnary(const char* op, const Tensor& x, F&& f) {
  RejectBool(op, x);
  // A floating x is read in place (a handle copy costs two atomic updates per op).
  Tensor converted;
  const Tensor& in = IsFloating(x.dtype()) ? x : (converted = kernels::to(x, kDefaultFloat));
  Tensor out = EmptyContiguous(in.sizes(), in.dtype());
  VisitDType(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) UnaryLoop<T, T>(out, in, f);
  });
  return out;
}

// SameTypeUnary: keeps int64 (and floating) dtypes.
template <typename F>
Tensor SameTypeUnary(const char* op, const Tensor& x, F&& f) {
  RejectBool(op, x);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) UnaryLoop<T, T>(out, x, f);
  });
  return out;
}

// FloatOnlyPart applies f to floating inputs and returns a copy for int64 (floor, round).
template <typename F>
Tensor RoundingUnary(const char* op, const Tensor& x, F&& f) {
  RejectBool(op, x);
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return FloatingUnary(op, x, f);
}

// int64 arithmetic wraps around like PyTorch's (as binary_kernels.cc's WrapAdd & co.): done
// in uint64, because signed overflow (-INT64_MIN, INT64_MAX * INT64_MAX) is UB.
struct WrapNeg {
  int64_t operator()(int64_t v) const {
    return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(v));
  }
};
struct WrapAbs {
  int64_t operator()(int64_t v) const { return v < 0 ? WrapNeg{}(v) : v; }  // INT64_MIN stays
};
struct WrapSquare {
  int64_t operator()(int64_t v) const {
    return static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(v));
  }
};

// IntOr: `wrap` per coefficient for int64 arrays, `other` (an Eigen expression) otherwise.
template <typename A, typename W, typename F>
auto IntOr(const A& a, W wrap, F other) {
  if constexpr (std::is_integral_v<typename A::Scalar>) {
    return a.unaryExpr(wrap);
  } else {
    return other(a);
  }
}

}  // namespace

Tensor neg(const Tensor& x) {
  return SameTypeUnary("neg", x, [](const auto& a) {
    return IntOr(a, WrapNeg{}, [](const auto& f) { return -f; });
  });
}
Tensor abs(const Tensor& x) {
  return SameTypeUnary("abs", x, [](const auto& a) {
    return IntOr(a, WrapAbs{}, [](const auto& f) { return f.abs(); });
  });
}
Tensor sign(const Tensor& x) {
  if (x.dtype() == kBool) return kernels::clone(x);
  return SameTypeUnary("sign", x, [](const auto& a) { return a.sign(); });
}
// NOTE: [Eigen exp underflow]
// Eigen 3.4's vectorized exp (SSE/AVX2 paths) clamps its argument, so exp(-inf) and
// exp(-1000) come out as the clamp's value (~3e-39 in float) instead of 0. Below the clamp
// the true value is a denormal or zero, so the result is multiplied by a factor that is 0
// there and 1 elsewhere: min((a - low)+ * 2^100, 1). It stays one vectorized expression
// (Eigen's select() is scalar in 3.4); only arguments within 2^-100 above `low` get a
// fraction of a ~1e-39 result. NaN stays NaN, +inf stays +inf. Eigen's AVX-512 exp
// handles the range itself, so builds for AVX-512 machines skip the factor.
template <typename A>
auto ExpFlushed(const A& a) {
#if defined(EIGEN_VECTORIZE_AVX512)
  return a.exp();
#else
  using T = typename A::Scalar;
  const T low = std::is_same_v<T, float> ? T(-88.3762626647949) : T(-709.436139303102);
  const T big = T(1.2676506002282294e30);  // 2^100
  return a.exp() * ((a - low).max(T(0)) * big).min(T(1));
#endif
}

Tensor exp(const Tensor& x) {
  return FloatingUnary("exp", x, [](const auto& a) { return ExpFlushed(a); });
}
Tensor expm1(const Tensor& x) {
  return FloatingUnary("expm1", x, [](const auto& a) { return a.expm1(); });
}
Tensor log(const Tensor& x) {
  return FloatingUnary("log", x, [](const auto& a) { return a.log(); });
}
Tensor log1p(const Tensor& x) {
  return FloatingUnary("log1p", x, [](const auto& a) { return a.log1p(); });
}
Tensor sin(const Tensor& x) {
  return FloatingUnary("sin", x, [](const auto& a) { return a.sin(); });
}
Tensor cos(const Tensor& x) {
  return FloatingUnary("cos", x, [](const auto& a) { return a.cos(); });
}
Tensor tan(const Tensor& x) {
  return FloatingUnary("tan", x, [](const auto& a) { return a.tan(); });
}
Tensor tanh(const Tensor& x) {
  return FloatingUnary("tanh", x, [](const auto& a) { return a.tanh(); });
}
Tensor sigmoid(const Tensor& x) {
  return FloatingUnary("sigmoid", x, [](const auto& a) { return a.logistic(); });
}
Tensor relu(const Tensor& x) {
  return SameTypeUnary("relu", x, [](const auto& a) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.max(T(0));
  });
}
Tensor sqrt(const Tensor& x) {
  return FloatingUnary("sqrt", x, [](const auto& a) { return a.sqrt(); });
}
Tensor rsqrt(const Tensor& x) {
  return FloatingUnary("rsqrt", x, [](const auto& a) { return a.rsqrt(); });
}
Tensor square(const Tensor& x) {
  return SameTypeUnary("square", x, [](const auto& a) {
    return IntOr(a, WrapSquare{}, [](const auto& f) { return f.square(); });
  });
}
Tensor reciprocal(const Tensor& x) {
  return FloatingUnary("reciprocal", x, [](const auto& a) { return a.inverse(); });
}
Tensor floor(const Tensor& x) {
  return RoundingUnary("floor", x, [](const auto& a) { return a.floor(); });
}
Tensor round(const Tensor& x) {
  // rint: round half to even, as torch.round does.
  return RoundingUnary("round", x, [](const auto& a) { return a.rint(); });
}

Tensor exp_(const Tensor& self) {
  internal::CheckFloating("exp_", self);
  internal::CheckWritable("exp_", self);
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      UnaryLoop<T, T>(self, self, [](const auto& a) { return ExpFlushed(a); });
    }
  });
  self.bump_version();
  return self;
}

}  // namespace ft::kernels
