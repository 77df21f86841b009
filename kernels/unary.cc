#include "kernels/unary.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/vecmath.h"
#include "kernels/checks.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {

// NOTE: [Unary kernels of the new dtypes]
// Every kernel below keeps its path for float32, float64, int64 and bool (Eigen and vecmath,
// unchanged) and takes one comparison (IsOriginalDType) to branch here for the eight dtypes
// of issue 43, with torch 1.13's results on CPU:
// - float16 and bfloat16: blocks widened to float, the float32 vecmath function run on the
//   block, each result rounded once to 16 bits (torch's bfloat16 kernels do the same; torch
//   1.13 has no float16 kernel for most of these ops, ft has). Two details follow torch:
//   sign of NaN is 0 (torch's (0 < x) - (x < 0); ft's float32 and float64 sign keep the
//   NaN), and rsqrt rounds once where torch's scalar tail rounds sqrt to 16 bits first
//   (torch's bfloat16 rsqrt(17.625) is 0.2383 or 0.2393 depending on the element's position;
//   ft's is always 0.2383, the correctly rounded one);
// - int8, int16, int32 and uint8: the floating functions convert to float32 first (as int64
//   does); neg, abs, sign, square and relu keep the dtype and wrap like torch's (computed in
//   uint64, so -INT8_MIN and 200 * 200 are defined); floor and round copy;
// - complex64 and complex128: <complex>'s functions (glibc's cexp, clog, csqrt, ...), one
//   element at a time; abs returns the real dtype (hypot). What torch 1.13 refuses for
//   complex on CPU (sign, relu, floor, round, expm1, log1p) throws an ft::Error naming the op.
namespace {

using internal::UnaryLoop;

constexpr int64_t kBlock = 256;  // elements per gathered or widened block

void RejectBool(const char* op, const Tensor& x) {
  if (x.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert with to(kFloat32) or to(kInt64) first");
  }
}

[[noreturn]] void RefuseComplex(const char* op, const Tensor& x, const char* hint) {
  ThrowError(op, ": not supported for complex tensors (", DTypeName(x.dtype()), " of shape ",
             ShapeToString(x.sizes()), "), as in torch 1.13 on CPU", hint);
}

// GatherLoop calls block(in, out, n) over contiguous arrays that cover `in` (any strides, of
// out's shape) and `out` (contiguous): contiguous input is one call per thread's range, a
// strided run is gathered kBlock elements at a time.
template <typename In, typename Out, typename Block>
void GatherLoop(const Tensor& out, const Tensor& in, Block&& block) {
  const int64_t total = out.numel();
  if (total == 0) return;
  Out* po = static_cast<Out*>(out.impl()->raw_data());
  if (in.is_contiguous() && in.numel() == total) {
    const In* pi = static_cast<const In*>(in.impl()->raw_data());
    internal::ParallelRun(po, total, [&](int64_t b, int64_t e) { block(pi + b, po + b, e - b); });
    return;
  }
  std::array<internal::Operand, 2> ops = {internal::MakeOperand(out, out.sizes()),
                                          internal::MakeOperand(in, out.sizes())};
  internal::ForEachStrided<2>(
      out.sizes(), ops,
      [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        Out* o = reinterpret_cast<Out*>(p[0]);  // out is contiguous: its runs are too
        if (s[1] == static_cast<int64_t>(sizeof(In))) {
          block(reinterpret_cast<const In*>(p[1]), o, n);
          return;
        }
        In buffer[kBlock];
        for (int64_t start = 0; start < n; start += kBlock) {
          const int64_t m = std::min(kBlock, n - start);
          const char* a = p[1] + start * s[1];
          for (int64_t i = 0; i < m; ++i) std::memcpy(&buffer[i], a + i * s[1], sizeof(In));
          block(static_cast<const In*>(buffer), o + start, m);
        }
      });
}

// MapLoop: out[i] = f(in[i]), one element at a time.
template <typename In, typename Out, typename F>
void MapLoop(const Tensor& out, const Tensor& in, F f) {
  GatherLoop<In, Out>(out, in, [&](const In* a, Out* o, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
  });
}

// WidenedVecMath: out = fn(in) for T Half or BFloat16, computed in float (vecmath's float32
// function on widened blocks) and rounded once.
template <typename T>
void WidenedVecMath(vecmath::Fn fn, const Tensor& out, const Tensor& in) {
  GatherLoop<T, T>(out, in, [fn](const T* a, T* o, int64_t n) {
    float buffer[kBlock];
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t m = std::min(kBlock, n - start);
      for (int64_t i = 0; i < m; ++i) buffer[i] = static_cast<float>(a[start + i]);
      vecmath::Apply(fn, buffer, buffer, m);
      for (int64_t i = 0; i < m; ++i) o[start + i] = T(buffer[i]);
    }
  });
}

// Refuse: the ComplexF of an op that torch refuses for complex tensors.
struct Refuse {
  const char* hint = "";
};

// FloatingUnaryNew: a floating function (exp, log, sin, ...) of a dtype beyond the original
// four. complex_f(z) is its complex function, or Refuse.
template <typename ComplexF>
Tensor FloatingUnaryNew(const char* op, const Tensor& x, vecmath::Fn fn, ComplexF complex_f) {
  const DType dtype = x.dtype();
  if (IsIntegral(dtype, /*include_bool=*/false)) {
    Tensor out = kernels::to(x, kDefaultFloat);  // a fresh contiguous float32 tensor
    internal::VecMathLoop<float>(fn, out, out);
    return out;
  }
  if constexpr (std::is_same_v<ComplexF, Refuse>) {
    if (IsComplex(dtype)) RefuseComplex(op, x, complex_f.hint);
  }
  Tensor out = EmptyContiguous(x.sizes(), dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsReducedFloatElement<T>) {
      WidenedVecMath<T>(fn, out, x);
    } else if constexpr (kIsComplexElement<T> && !std::is_same_v<ComplexF, Refuse>) {
      MapLoop<T, T>(out, x, complex_f);
    }
  });
  return out;
}

// SameTypeUnaryNew: neg, abs, sign, square and relu of a dtype beyond the original four,
// keeping it: int_f for the integers, vecmath's `fn` for float16 and bfloat16, complex_f (or
// Refuse) for complex.
template <typename IntF, typename ComplexF>
Tensor SameTypeUnaryNew(const char* op, const Tensor& x, vecmath::Fn fn, IntF int_f,
                        ComplexF complex_f) {
  if constexpr (std::is_same_v<ComplexF, Refuse>) {
    if (IsComplex(x.dtype())) RefuseComplex(op, x, complex_f.hint);
  }
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  VisitEveryDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsReducedFloatElement<T>) {
      WidenedVecMath<T>(fn, out, x);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      MapLoop<T, T>(out, x, [&](T v) { return static_cast<T>(int_f(v)); });
    } else if constexpr (kIsComplexElement<T> && !std::is_same_v<ComplexF, Refuse>) {
      MapLoop<T, T>(out, x, complex_f);
    }
  });
  return out;
}

// FloorRoundNew: floor and round beyond the original four: a copy for the integers, vecmath
// in float for float16 and bfloat16, refused for complex.
Tensor FloorRoundNew(const char* op, const Tensor& x, vecmath::Fn fn) {
  if (IsComplex(x.dtype())) RefuseComplex(op, x, "");
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return FloatingUnaryNew(op, x, fn, Refuse{});
}

// The integer rules of the new integer dtypes, wrapping as torch's do: each is computed in
// uint64 (two's complement), and the conversion back keeps the low bits (C++20).
struct IntNeg {
  template <typename T>
  uint64_t operator()(T v) const {
    return uint64_t{0} - static_cast<uint64_t>(v);
  }
};
struct IntAbs {
  template <typename T>
  uint64_t operator()(T v) const {
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) return IntNeg{}(v);  // INT8_MIN stays itself
    }
    return static_cast<uint64_t>(v);
  }
};
struct IntSign {
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((v > 0) - (v < 0));
    } else {
      return static_cast<T>(v != 0);
    }
  }
};
struct IntSquare {
  template <typename T>
  uint64_t operator()(T v) const {
    return static_cast<uint64_t>(v) * static_cast<uint64_t>(v);
  }
};
struct IntRelu {
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_signed_v<T>) {
      return v < 0 ? T{0} : v;
    } else {
      return v;
    }
  }
};

// Complex functions (<complex>, glibc's C99 Annex G implementations).
struct ComplexSigmoid {
  template <typename C>
  C operator()(C z) const {
    return C(1) / (C(1) + std::exp(-z));
  }
};
struct ComplexRsqrt {
  template <typename C>
  C operator()(C z) const {
    return C(1) / std::sqrt(z);
  }
};

}  // namespace

Tensor internal::VecMathUnary(const char* op, const Tensor& x, vecmath::Fn fn) {
  if (!IsOriginalDType(x.dtype())) return FloatingUnaryNew(op, x, fn, Refuse{});
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

// FloatingUnary: a floating function; the original four through VecMathUnary, the others
// through FloatingUnaryNew with the op's complex function.
template <typename ComplexF>
Tensor FloatingUnary(const char* op, const Tensor& x, vecmath::Fn fn, ComplexF complex_f) {
  if (!IsOriginalDType(x.dtype())) return FloatingUnaryNew(op, x, fn, complex_f);
  return internal::VecMathUnary(op, x, fn);
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
  if (!IsOriginalDType(x.dtype())) {
    return SameTypeUnaryNew("neg", x, vecmath::Fn::kNeg, IntNeg{}, [](auto z) { return -z; });
  }
  return SameTypeUnary("neg", x, vecmath::Fn::kNeg,
                       [](const auto& a) { return a.unaryExpr(WrapNeg{}); });
}
Tensor abs(const Tensor& x) {
  if (!IsOriginalDType(x.dtype())) {
    if (!IsComplex(x.dtype())) {
      return SameTypeUnaryNew("abs", x, vecmath::Fn::kAbs, IntAbs{}, Refuse{});
    }
    // |z| (std::abs, glibc's hypot: no overflow for parts past sqrt(max)), of the real dtype.
    Tensor out = EmptyContiguous(x.sizes(), ToRealDType(x.dtype()));
    VisitEveryDType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsComplexElement<T>) {
        MapLoop<T, typename T::value_type>(out, x, [](T z) { return std::abs(z); });
      }
    });
    return out;
  }
  return SameTypeUnary("abs", x, vecmath::Fn::kAbs,
                       [](const auto& a) { return a.unaryExpr(WrapAbs{}); });
}
Tensor sign(const Tensor& x) {
  if (x.dtype() == kBool) return kernels::clone(x);
  if (!IsOriginalDType(x.dtype())) {
    if (x.dtype() == kFloat16 || x.dtype() == kBFloat16) {
      // torch's (0 < v) - (v < 0): 0 for NaN (ft's float32 and float64 keep the NaN).
      Tensor out = EmptyContiguous(x.sizes(), x.dtype());
      VisitEveryDType(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (kIsReducedFloatElement<T>) {
          MapLoop<T, T>(out, x, [](T v) {
            const float f = v;
            return T(static_cast<float>((0.0f < f) - (f < 0.0f)));
          });
        }
      });
      return out;
    }
    return SameTypeUnaryNew("sign", x, vecmath::Fn::kSign, IntSign{},
                            Refuse{" (torch.sign refuses complex too; torch.sgn is z / |z|)"});
  }
  return SameTypeUnary("sign", x, vecmath::Fn::kSign, [](const auto& a) { return a.sign(); });
}
Tensor exp(const Tensor& x) {
  return FloatingUnary("exp", x, vecmath::Fn::kExp, [](auto z) { return std::exp(z); });
}
// expm1 and log1p of complex: torch 1.13 has no CPU kernel (VecMathUnary refuses).
Tensor expm1(const Tensor& x) { return internal::VecMathUnary("expm1", x, vecmath::Fn::kExpm1); }
Tensor log(const Tensor& x) {
  return FloatingUnary("log", x, vecmath::Fn::kLog, [](auto z) { return std::log(z); });
}
Tensor log1p(const Tensor& x) { return internal::VecMathUnary("log1p", x, vecmath::Fn::kLog1p); }
Tensor sin(const Tensor& x) {
  return FloatingUnary("sin", x, vecmath::Fn::kSin, [](auto z) { return std::sin(z); });
}
Tensor cos(const Tensor& x) {
  return FloatingUnary("cos", x, vecmath::Fn::kCos, [](auto z) { return std::cos(z); });
}
Tensor tan(const Tensor& x) {
  return FloatingUnary("tan", x, vecmath::Fn::kTan, [](auto z) { return std::tan(z); });
}
Tensor tanh(const Tensor& x) {
  return FloatingUnary("tanh", x, vecmath::Fn::kTanh, [](auto z) { return std::tanh(z); });
}
Tensor sigmoid(const Tensor& x) {
  return FloatingUnary("sigmoid", x, vecmath::Fn::kSigmoid, ComplexSigmoid{});
}
Tensor relu(const Tensor& x) {
  if (!IsOriginalDType(x.dtype())) {
    return SameTypeUnaryNew("relu", x, vecmath::Fn::kRelu, IntRelu{}, Refuse{});
  }
  return SameTypeUnary("relu", x, vecmath::Fn::kRelu,
                       [](const auto& a) { return a.max(int64_t{0}); });
}
Tensor sqrt(const Tensor& x) {
  return FloatingUnary("sqrt", x, vecmath::Fn::kSqrt, [](auto z) { return std::sqrt(z); });
}
Tensor rsqrt(const Tensor& x) {
  return FloatingUnary("rsqrt", x, vecmath::Fn::kRsqrt, ComplexRsqrt{});
}
Tensor square(const Tensor& x) {
  if (!IsOriginalDType(x.dtype())) {
    return SameTypeUnaryNew("square", x, vecmath::Fn::kSquare, IntSquare{},
                            [](auto z) { return z * z; });
  }
  return SameTypeUnary("square", x, vecmath::Fn::kSquare,
                       [](const auto& a) { return a.unaryExpr(WrapSquare{}); });
}
Tensor reciprocal(const Tensor& x) {
  return FloatingUnary("reciprocal", x, vecmath::Fn::kReciprocal,
                       [](auto z) { return decltype(z)(1) / z; });
}
// floor and round of an int64 tensor are the tensor itself (a copy, as torch returns).
Tensor floor(const Tensor& x) {
  if (!IsOriginalDType(x.dtype())) return FloorRoundNew("floor", x, vecmath::Fn::kFloor);
  RejectBool("floor", x);
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return internal::VecMathUnary("floor", x, vecmath::Fn::kFloor);
}
Tensor round(const Tensor& x) {
  // rint: round half to even, as torch.round does.
  if (!IsOriginalDType(x.dtype())) return FloorRoundNew("round", x, vecmath::Fn::kRound);
  RejectBool("round", x);
  if (!IsFloating(x.dtype())) return kernels::clone(x);
  return internal::VecMathUnary("round", x, vecmath::Fn::kRound);
}

Tensor exp_(const Tensor& self) {
  if (!IsOriginalDType(self.dtype())) {
    if (!IsFloating(self.dtype()) && !IsComplex(self.dtype())) {
      ThrowError("exp_: the result of exp of ", DTypeName(self.dtype()),
                 " is float32, which cannot be written into self (", DTypeName(self.dtype()),
                 " of shape ", ShapeToString(self.sizes()), "); use exp()");
    }
    internal::CheckWritable("exp_", self);
    kernels::copy_into(self, kernels::exp(self));
    self.bump_version();
    return self;
  }
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
