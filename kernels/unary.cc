#include "kernels/unary.h"

#include <cstdint>
#include <type_traits>

#include "cpu/vecmath.h"
#include "kernels/checks.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::UnaryLoop;

void RejectBool(const char* op, const Tensor& x) {
  if (x.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert with to(kFloat32) or to(kInt64) first");
  }
}

}  // namespace

Tensor internal::VecMathUnary(const char* op, const Tensor& x, vecmath::Fn fn) {
  RejectBool(op, x);
  Tensor converted;
  const Tensor& in = IsFloating(x.dtype()) ? x : (converted = kernels::to(x, kDefaultFloat));
  Tensor out = EmptyContiguous(in.sizes(), in.dtype());
  VisitDType(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) internal::VecMathLoop<T>(fn, out, in);
  });
  return out;
}

namespace {

// SameTypeUnary: keeps the dtype. Float and double run vecmath's `fn` (the capability's
// vector path; these functions are exact or one IEEE step, so the bits are what a scalar loop
// gives), int64 runs `int_f` on Eigen arrays.
template <typename F>
Tensor SameTypeUnary(const char* op, const Tensor& x, vecmath::Fn fn, F&& int_f) {
  RejectBool(op, x);
  if (IsFloating(x.dtype())) return internal::VecMathUnary(op, x, fn);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int64_t>) UnaryLoop<T, T>(out, x, int_f);
  });
  return out;
}

// int64 arithmetic wraps around like PyTorch's (as kernels/binary.cc's WrapAdd & co.): done
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

}  // namespace

Tensor neg(const Tensor& x) {
  return SameTypeUnary("neg", x, vecmath::Fn::kNeg,
                       [](const auto& a) { return a.unaryExpr(WrapNeg{}); });
}
Tensor abs(const Tensor& x) {
  return SameTypeUnary("abs", x, vecmath::Fn::kAbs,
                       [](const auto& a) { return a.unaryExpr(WrapAbs{}); });
}
Tensor sign(const Tensor& x) {
  if (x.dtype() == kBool) return kernels::clone(x);
  return SameTypeUnary("sign", x, vecmath::Fn::kSign, [](const auto& a) { return a.sign(); });
}
Tensor exp(const Tensor& x) { return internal::VecMathUnary("exp", x, vecmath::Fn::kExp); }
Tensor expm1(const Tensor& x) { return internal::VecMathUnary("expm1", x, vecmath::Fn::kExpm1); }
Tensor log(const Tensor& x) { return internal::VecMathUnary("log", x, vecmath::Fn::kLog); }
Tensor log1p(const Tensor& x) { return internal::VecMathUnary("log1p", x, vecmath::Fn::kLog1p); }
Tensor sin(const Tensor& x) { return internal::VecMathUnary("sin", x, vecmath::Fn::kSin); }
Tensor cos(const Tensor& x) { return internal::VecMathUnary("cos", x, vecmath::Fn::kCos); }
Tensor tan(const Tensor& x) { return internal::VecMathUnary("tan", x, vecmath::Fn::kTan); }
Tensor tanh(const Tensor& x) { return internal::VecMathUnary("tanh", x, vecmath::Fn::kTanh); }
Tensor sigmoid(const Tensor& x) {
  return internal::VecMathUnary("sigmoid", x, vecmath::Fn::kSigmoid);
}
Tensor relu(const Tensor& x) {
  return SameTypeUnary("relu", x, vecmath::Fn::kRelu,
                       [](const auto& a) { return a.max(int64_t{0}); });
}
Tensor sqrt(const Tensor& x) { return internal::VecMathUnary("sqrt", x, vecmath::Fn::kSqrt); }
Tensor rsqrt(const Tensor& x) { return internal::VecMathUnary("rsqrt", x, vecmath::Fn::kRsqrt); }
Tensor square(const Tensor& x) {
  return SameTypeUnary("square", x, vecmath::Fn::kSquare,
                       [](const auto& a) { return a.unaryExpr(WrapSquare{}); });
}
Tensor reciprocal(const Tensor& x) {
  return internal::VecMathUnary("reciprocal", x, vecmath::Fn::kReciprocal);
}
// floor and round of an int64 tensor are the tensor itself (a copy, as torch returns).
Tensor floor(const Tensor& x) {
  RejectBool("floor", x);
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return internal::VecMathUnary("floor", x, vecmath::Fn::kFloor);
}
Tensor round(const Tensor& x) {
  // rint: round half to even, as torch.round does.
  RejectBool("round", x);
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return internal::VecMathUnary("round", x, vecmath::Fn::kRound);
}

Tensor exp_(const Tensor& self) {
  internal::CheckFloating("exp_", self);
  internal::CheckWritable("exp_", self);
  if (self.is_contiguous()) {
    VisitDType(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        internal::VecMathLoop<T>(vecmath::Fn::kExp, self, self);
      }
    });
  } else {
    kernels::copy_into(self, internal::VecMathUnary("exp_", self, vecmath::Fn::kExp));
  }
  self.bump_version();
  return self;
}

}  // namespace ft::kernels
