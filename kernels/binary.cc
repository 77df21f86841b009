#include "kernels/binary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/vecmath.h"
#include "kernels/activation_math.h"
#include "kernels/checks.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/loops.h"
#include "tensor/scalar_check.h"

namespace ft::kernels {
namespace {

using internal::ArrayMap;
using internal::BinaryLoop;
using internal::ConstArrayMap;
using internal::ConstStridedMap;
using internal::MakeOperand;
using internal::Operand;
using internal::StridedMap;
using internal::UnaryLoop;

bool SameShape(IntArrayRef a, IntArrayRef b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

DType ResultTypeOf(const Tensor& a, const Tensor& b) {
  return ResultType(a.dtype(), a.dim() == 0, b.dtype(), b.dim() == 0);
}

// Overlaps reports whether `other` reads memory that writing `self` may change before
// `other` is fully read: same storage, but not exactly the same view. (An identical view is
// safe for elementwise ops: each element is read before it is written.)
bool Overlaps(const Tensor& self, const Tensor& other) {
  if (!self.storage().is_same(other.storage())) return false;
  return !(self.storage_offset() == other.storage_offset() &&
           SameShape(self.sizes(), other.sizes()) && SameShape(self.strides(), other.strides()));
}

template <typename T>
bool IsNanValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// ---- Element rules of the dtypes beyond the original four (issue 43). ----
// NOTE: [Binary kernels of the new dtypes]
// A compute dtype other than float32, float64, int64 and bool (complex64/128, float16,
// bfloat16, int8/16/32, uint8) takes its own branch (RunNewDType, plain loops: Eigen cannot
// hold the 16-bit floating types), so the original four keep their code paths untouched.
// Each op's `Element(a, b)` is its rule on one pair of values of OpMathType<T>:
// - integers wrap on overflow as torch's do, computed in unsigned arithmetic at least as
//   wide as `unsigned` (signed overflow, and int16 * int16 promoted to int, would be UB);
// - float16 and bfloat16 compute in float and round once per element (torch's CPU kernels);
// - complex * and / use torch 1.13's vectorized formulas, not std::complex's (see
//   ComplexMul): (a+bi)(c+di) = (ac-bd) + (ad+bc)i, and the quotient
//   ((ac+bd) + (bc-ad)i) / (c*c+d*d) without scaling, so huge or tiny divisors overflow or
//   underflow as in torch (std::complex's division scales and would not);
// - complex add and sub are torch's a + alpha * b with alpha = 1 or -1 (a complex product):
//   where b has an infinite part, 0 * inf makes the other part of the result NaN, as in
//   torch ((inf + 1i) + (inf + 1i) is inf + nan i, not std::complex's inf + 2i);
// - complex values have no order: maximum, minimum, lt, le, gt, ge and clamp throw before
//   any loop (their validation), so their complex Element is never reached.

// WrapInt: a op b on a narrow integer type, wrapping modulo 2^bits.
template <typename T, typename F>
T WrapInt(T a, T b, F f) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
  const W r = f(static_cast<W>(static_cast<U>(a)), static_cast<W>(static_cast<U>(b)));
  return static_cast<T>(static_cast<U>(r));
}

template <typename R>
std::complex<R> ComplexMul(std::complex<R> x, std::complex<R> y) {
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  return {a * c - b * d, a * d + b * c};
}

template <typename R>
std::complex<R> ComplexDiv(std::complex<R> x, std::complex<R> y) {
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R denominator = c * c + d * d;
  return {(a * c + b * d) / denominator, (b * c - a * d) / denominator};
}

// Nonzero: the truth of a value (a complex value is true when either part is nonzero; NaN is
// true).
template <typename M>
bool Nonzero(M v) {
  if constexpr (kIsComplexElement<M>) {
    return v.real() != 0 || v.imag() != 0;
  } else {
    return v != M(0);
  }
}

// ---- Element functors (scalar only; Eigen applies them per coefficient). ----
// int64 arithmetic wraps around like PyTorch's; done in uint64 because signed overflow is UB.
struct WrapAdd {
  int64_t operator()(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
};
struct WrapSub {
  int64_t operator()(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  }
};
struct WrapMul {
  int64_t operator()(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
};
// IntPow: exponentiation by squaring, wrapping; exponents are >= 0 (checked beforehand).
struct IntPow {
  int64_t operator()(int64_t base, int64_t exponent) const {
    uint64_t result = 1;
    uint64_t b = static_cast<uint64_t>(base);
    uint64_t e = static_cast<uint64_t>(exponent);
    while (e != 0) {
      if (e & 1) result *= b;
      e >>= 1;
      if (e != 0) b *= b;
    }
    return static_cast<int64_t>(result);
  }
};
struct FloatPow {
  template <typename T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};
struct Atan2Fn {
  template <typename T>
  T operator()(T a, T b) const {
    return std::atan2(a, b);
  }
};

// ---- Ops: each is an Eigen expression builder over two same-typed array expressions. ----
// kPredicate: the result is bool (else the compute type). kSupports<T>: compute types the op
// has a kernel for (validation guarantees only those reach the loop).
struct OpBase {
  static constexpr bool kPredicate = false;
  // kOrdered: the op needs an order on values (complex dtypes are refused before the loop).
  static constexpr bool kOrdered = false;
  // kArith: the vecmath::Arith this op is on float and double (add, sub, mul, div,
  // maximum, minimum), or -1.
  static constexpr int kArith = -1;
  // kCompare: the vecmath::Cmp this comparison is on float and double, or -1.
  static constexpr int kCompare = -1;
  template <typename T>
  static constexpr bool kSupports = true;
  static void Validate(const char*, const Tensor&, const Tensor&) {}
};

template <typename T>
constexpr bool kIsBool = std::is_same_v<T, bool>;

struct AddOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kAdd);
  template <typename M>
  static M Element(M a, M b) {
    if constexpr (std::is_integral_v<M>) {
      return WrapInt(a, b, [](auto x, auto y) { return x + y; });
    } else if constexpr (kIsComplexElement<M>) {
      return a + ComplexMul(M(1, 0), b);  // torch's a + alpha * b (NOTE above)
    } else {
      return a + b;
    }
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a || b;
    } else if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, WrapAdd{});
    } else {
      return a + b;
    }
  }
};
struct SubOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kSub);
  template <typename M>
  static M Element(M a, M b) {
    if constexpr (std::is_integral_v<M>) {
      return WrapInt(a, b, [](auto x, auto y) { return x - y; });
    } else if constexpr (kIsComplexElement<M>) {
      return a + ComplexMul(M(-1, 0), b);  // torch's a + (-alpha) * b (NOTE above)
    } else {
      return a - b;
    }
  }
  template <typename T>
  static constexpr bool kSupports = !kIsBool<T>;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, WrapSub{});
    } else {
      return a - b;
    }
  }
};
struct MulOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kMul);
  template <typename M>
  static M Element(M a, M b) {
    if constexpr (std::is_integral_v<M>) {
      return WrapInt(a, b, [](auto x, auto y) { return x * y; });
    } else if constexpr (kIsComplexElement<M>) {
      return ComplexMul(a, b);
    } else {
      return a * b;
    }
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a && b;
    } else if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, WrapMul{});
    } else {
      return a * b;
    }
  }
};
struct DivOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kDiv);
  // Compute types are floating or complex (DivType), never integers.
  template <typename M>
  static M Element(M a, M b) {
    if constexpr (kIsComplexElement<M>) {
      return ComplexDiv(a, b);
    } else if constexpr (std::is_floating_point_v<M>) {
      return a / b;
    } else {
      FT_CHECK(false && "div computes in a floating or complex dtype");
      return M(0);
    }
  }
  template <typename T>
  static constexpr bool kSupports = std::is_floating_point_v<T>;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a / b;
  }
};
struct PowOp : OpBase {
  // Float and double powers run vecmath::Pow (VectorMathLoop), every layout; this Eigen
  // expression is the integer one.
  template <typename T>
  static void VectorMath(const T* a, const T* b, T* out, int64_t n) {
    vecmath::Pow(a, b, out, n);
  }
  template <typename T>
  static constexpr bool kSupports = !kIsBool<T>;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, IntPow{});
    } else {
      return a.binaryExpr(b, FloatPow{});
    }
  }
  // Integer bases cannot take negative integer exponents (PyTorch's rule): the result
  // would not be an integer.
  static void Validate(const char* name, const Tensor& base, const Tensor& exponent) {
    if (exponent.dtype() != kInt64) return;
    int64_t bad = 0;
    bool found = false;
    std::array<Operand, 1> ops = {MakeOperand(exponent, exponent.sizes())};
    internal::ForEachStrided<1>(
        exponent.sizes(), ops,
        [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
          const char* ptr = p[0];
          for (int64_t i = 0; i < n && !found; ++i, ptr += s[0]) {
            const int64_t e = *reinterpret_cast<const int64_t*>(ptr);
            if (e < 0) {
              found = true;
              bad = e;
            }
          }
        });
    if (found) {
      ThrowError(name, ": Integers to negative integer powers are not allowed (int64 base of ",
                 "shape ", ShapeToString(base.sizes()), ", exponent of shape ",
                 ShapeToString(exponent.sizes()), " contains ", bad,
                 "); convert the base to a floating dtype first");
    }
  }
};
struct MaximumOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kMaximum);
  static constexpr bool kOrdered = true;
  template <typename M>
  static M Element(M a, M b) {
    return std::is_integral_v<M> ? std::max(a, b) : vecmath::MaximumOf(a, b);
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a || b;
    } else if constexpr (std::is_integral_v<T>) {
      return a.max(b);
    } else {
      // Float and double run vecmath (kArith) in the contiguous layouts; the others take this
      // scalar form of its rule, so that no layout differs (Eigen's own NaN-propagating max
      // keeps a between -0 and +0 in scalar code and b in its packets).
      return a.binaryExpr(b, [](T x, T y) { return vecmath::MaximumOf(x, y); });
    }
  }
};
struct MinimumOp : OpBase {
  static constexpr int kArith = static_cast<int>(vecmath::Arith::kMinimum);
  static constexpr bool kOrdered = true;
  template <typename M>
  static M Element(M a, M b) {
    return std::is_integral_v<M> ? std::min(a, b) : vecmath::MinimumOf(a, b);
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a && b;
    } else if constexpr (std::is_integral_v<T>) {
      return a.min(b);
    } else {
      return a.binaryExpr(b, [](T x, T y) { return vecmath::MinimumOf(x, y); });
    }
  }
};
struct Atan2Op : OpBase {
  // vecmath::Atan2 (VectorMathLoop) for float and double, every layout; the Eigen
  // expression is never reached (atan2 computes in a floating type).
  template <typename T>
  static void VectorMath(const T* a, const T* b, T* out, int64_t n) {
    vecmath::Atan2(a, b, out, n);
  }
  template <typename T>
  static constexpr bool kSupports = std::is_floating_point_v<T>;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.binaryExpr(b, Atan2Fn{});
  }
};

struct PredicateBase : OpBase {
  static constexpr bool kPredicate = true;
};
struct EqOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kEq);
  template <typename M>
  static bool Element(M a, M b) {
    return a == b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a == b;
  }
};
struct NeOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kNe);
  template <typename M>
  static bool Element(M a, M b) {
    return a != b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a != b;
  }
};
struct LtOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kLt);
  static constexpr bool kOrdered = true;
  template <typename M>
  static bool Element(M a, M b) {
    return a < b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a < b;
  }
};
struct LeOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kLe);
  static constexpr bool kOrdered = true;
  template <typename M>
  static bool Element(M a, M b) {
    return a <= b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a <= b;
  }
};
struct GtOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kGt);
  static constexpr bool kOrdered = true;
  template <typename M>
  static bool Element(M a, M b) {
    return a > b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a > b;
  }
};
struct GeOp : PredicateBase {
  static constexpr int kCompare = static_cast<int>(vecmath::Cmp::kGe);
  static constexpr bool kOrdered = true;
  template <typename M>
  static bool Element(M a, M b) {
    return a >= b;
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a >= b;
  }
};
struct LogicalAndOp : PredicateBase {
  template <typename M>
  static bool Element(M a, M b) {
    return Nonzero(a) && Nonzero(b);
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a && b;
    } else {
      return (a != T(0)) && (b != T(0));
    }
  }
};
struct LogicalOrOp : PredicateBase {
  template <typename M>
  static bool Element(M a, M b) {
    return Nonzero(a) || Nonzero(b);
  }
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    using T = typename A::Scalar;
    if constexpr (kIsBool<T>) {
      return a || b;
    } else {
      return (a != T(0)) || (b != T(0));
    }
  }
};

// ---- Compute-type rules (they also validate the dtypes). ----
DType ArithmeticType(const char*, const Tensor& a, const Tensor& b) { return ResultTypeOf(a, b); }

DType SubType(const char* name, const Tensor& a, const Tensor& b) {
  if (a.dtype() == kBool && b.dtype() == kBool) {
    ThrowError(name, ": subtraction with two bool tensors is not supported; use logical_xor / ~ ",
               "(shapes ", ShapeToString(a.sizes()), " and ", ShapeToString(b.sizes()), ")");
  }
  if (a.dtype() == kBool || b.dtype() == kBool) {
    // PyTorch rejects a single bool operand too (it is almost always a mask inversion bug).
    ThrowError(name, ": subtraction with a bool tensor is not supported (got ",
               DTypeName(a.dtype()), " - ", DTypeName(b.dtype()),
               "); use logical_not / ~ to invert a mask, or convert it with to() first");
  }
  return ResultTypeOf(a, b);
}

// OrderedType: the promoted dtype of an op that orders values (maximum, minimum, lt, le, gt,
// ge), which complex dtypes do not have (torch refuses them too).
DType OrderedType(const char* name, const Tensor& a, const Tensor& b) {
  const DType t = ResultTypeOf(a, b);
  if (IsComplex(t)) {
    ThrowError(name, ": not supported for complex tensors (", DTypeName(a.dtype()), " of shape ",
               ShapeToString(a.sizes()), " and ", DTypeName(b.dtype()), " of shape ",
               ShapeToString(b.sizes()), "); complex numbers have no order, compare real() or ",
               "abs() instead");
  }
  return t;
}

// DivType: true division; integral and bool operands compute in float32, complex ones in
// their own dtype.
DType DivType(const char*, const Tensor& a, const Tensor& b) {
  const DType t = ResultTypeOf(a, b);
  return IsFloating(t) || IsComplex(t) ? t : kDefaultFloat;
}

// FloatingType: int/bool results compute in float32 (true division, atan2).
DType FloatingType(const char*, const Tensor& a, const Tensor& b) {
  const DType t = ResultTypeOf(a, b);
  return IsFloating(t) ? t : kDefaultFloat;
}

DType PowType(const char* name, const Tensor& a, const Tensor& b) {
  const DType t = ResultTypeOf(a, b);
  if (t == kBool) {
    ThrowError(name, ": not supported for two bool tensors (shapes ", ShapeToString(a.sizes()),
               " and ", ShapeToString(b.sizes()), "); convert one to int64 or a floating dtype");
  }
  return t;
}

// ---- Drivers. ----
// VectorLoop: out = a op b with vecmath's vector code for the float and double ops vecmath
// has (`run(a, a_step, b, b_step, out, n)` is its Arithmetic or Compare: steps 1 for an
// array, 0 for one broadcast value), `op` (the Eigen expression builder) where a run is
// strided. Contiguous operands (equal layouts, a broadcast scalar, a block repeating along
// the leading dims) take one call per thread's range or block. Any other layout goes run by
// run (ForEachStrided): a run whose output is unit-stride and whose inputs are unit-stride or
// broadcast (the rows of a narrowed or sliced view, a non-contiguous batch) is one vecmath
// call; a run reading or writing with a stride (a transposed operand, a step slice) is
// Eigen's strided loop, as before: gathering such a run into a buffer for the vector code
// measured no faster on a + b^T (1000 x 1000), where the strided reads are the cost. An
// element's result depends on its two values alone (IEEE rounds each +, -, *, / alike at any
// width; maximum, minimum and the comparisons only select), so every path, layout and thread
// count gives a scalar loop's bits.
template <typename T, typename Out, typename Run, typename Op>
void VectorLoop(const Tensor& out, const Tensor& a, const Tensor& b, Run run, Op op) {
  const int64_t total = out.numel();
  if (total == 0) return;
  if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
    Out* po = static_cast<Out*>(out.impl()->raw_data());
    const T* pa = static_cast<const T*>(a.impl()->raw_data());
    const T* pb = static_cast<const T*>(b.impl()->raw_data());
    const int64_t na = a.numel(), nb = b.numel();
    if ((na == total || na == 1) && (nb == total || nb == 1)) {
      const int64_t sa = na == total ? 1 : 0, sb = nb == total ? 1 : 0;
      internal::ParallelRun(po, total, [&](int64_t s, int64_t e) {
        run(pa + s * sa, sa, pb + s * sb, sb, po + s, e - s);
      });
      return;
    }
    const bool b_repeats = na == total && nb > 1 && internal::IsTrailingBlock(b, out.sizes());
    const bool a_repeats = nb == total && na > 1 && internal::IsTrailingBlock(a, out.sizes());
    if (a_repeats || b_repeats) {
      const int64_t block = b_repeats ? nb : na;
      internal::ParallelBlocks(total / block, block, [&](int64_t first, int64_t last) {
        for (int64_t r = first * block; r < last * block; r += block) {
          run(b_repeats ? pa + r : pa, 1, b_repeats ? pb : pb + r, 1, po + r, block);
        }
      });
      return;
    }
  }
  std::array<Operand, 3> ops = {MakeOperand(out, out.sizes()), MakeOperand(a, out.sizes()),
                                MakeOperand(b, out.sizes())};
  constexpr int64_t kIn = sizeof(T), kOut = sizeof(Out);
  const auto direct = [](int64_t stride) { return stride == kIn || stride == 0; };
  internal::ForEachStrided<3>(out.sizes(), ops, [&](const std::array<char*, 3>& p,
                                                    const std::array<int64_t, 3>& s, int64_t n) {
    const T* pa = reinterpret_cast<const T*>(p[1]);
    const T* pb = reinterpret_cast<const T*>(p[2]);
    if (s[0] == kOut && direct(s[1]) && direct(s[2])) {
      run(pa, s[1] != 0 ? 1 : 0, pb, s[2] != 0 ? 1 : 0, reinterpret_cast<Out*>(p[0]), n);
      return;
    }
    StridedMap<Out> o(reinterpret_cast<Out*>(p[0]), n, Eigen::InnerStride<>(s[0] / kOut));
    o = op(ConstStridedMap<T>(pa, n, Eigen::InnerStride<>(s[1] / kIn)),
           ConstStridedMap<T>(pb, n, Eigen::InnerStride<>(s[2] / kIn)));
  });
}

// VectorMathLoop: out = Op::VectorMath(a, b), vecmath's Pow or Atan2 (SLEEF's 1-ulp
// functions at the active capability), for every layout of a contiguous `out`. Operands
// laid out like `out` are read in place, a broadcast scalar through a strip filled with it;
// any other layout (a repeating row, a transposed or sliced view) is first copied out
// contiguous at out's shape. An element's bits depend only on its two values (vecmath's
// position independence), so every layout, thread count and jit's fused replay agree.
template <typename Op, typename T>
void VectorMathLoop(const Tensor& out, const Tensor& a, const Tensor& b) {
  FT_CHECK(out.is_contiguous());  // Binary's fresh result (pow and atan2 have no in-place form)
  const int64_t total = out.numel();
  if (total == 0) return;
  auto in_place = [&](const Tensor& t) {
    return t.is_contiguous() && (t.numel() == total || t.numel() == 1);
  };
  const Tensor da = in_place(a) ? a : contiguous(expand(a, out.sizes()));
  const Tensor db = in_place(b) ? b : contiguous(expand(b, out.sizes()));
  const T* pa = static_cast<const T*>(da.impl()->raw_data());
  const T* pb = static_cast<const T*>(db.impl()->raw_data());
  T* po = static_cast<T*>(out.impl()->raw_data());
  const bool a_scalar = da.numel() != total, b_scalar = db.numel() != total;
  internal::ParallelRun(po, total, [&](int64_t s, int64_t e) {
    constexpr int64_t kStrip = 256;
    T strip_a[kStrip], strip_b[kStrip];
    if (a_scalar) std::fill_n(strip_a, kStrip, pa[0]);
    if (b_scalar) std::fill_n(strip_b, kStrip, pb[0]);
    for (int64_t i = s; i < e; i += kStrip) {
      const int64_t m = std::min(kStrip, e - i);
      Op::VectorMath(a_scalar ? strip_a : pa + i, b_scalar ? strip_b : pb + i, po + i, m);
    }
  });
}

template <typename Op, typename = void>
struct HasVectorMath : std::false_type {};
template <typename Op>
struct HasVectorMath<Op, std::void_t<decltype(&Op::template VectorMath<float>)>>
    : std::true_type {};

// VisitNewDType calls f(TypeTag<T>{}) for the eight dtypes beyond the original four;
// FT_CHECKs that `dtype` is one of them.
template <typename F>
void VisitNewDType(DType dtype, F&& f) {
  FT_CHECK(!IsOriginalDType(dtype));
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (IsOriginalDType(DTypeOf<T>())) {
      FT_CHECK(false && "an original dtype in VisitNewDType");
    } else {
      f(tag);
    }
  });
}

// PlainBinaryLoop writes out[i] = f(a[i], b[i]) (f(In, In) -> Out) with plain loops: a and
// b already have element type In and broadcast to out's shape; `out` may be `a` itself (an
// in-place op: each element is read before it is written). Contiguous operands (or a
// one-element one) run over the intra-op threads; other layouts walk ForEachStrided's runs.
template <typename In, typename Out, typename F>
void PlainBinaryLoop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const int64_t na = a.numel(), nb = b.numel();
  if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous() && (na == total || na == 1) &&
      (nb == total || nb == 1)) {
    Out* po = static_cast<Out*>(out.impl()->raw_data());
    const In* pa = static_cast<const In*>(a.impl()->raw_data());
    const In* pb = static_cast<const In*>(b.impl()->raw_data());
    internal::ParallelRun(po, total, [&](int64_t s, int64_t e) {
      if (na == total && nb == total) {
        for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
      } else if (na == total) {
        const In y = pb[0];
        for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], y);
      } else if (nb == total) {
        const In x = pa[0];
        for (int64_t i = s; i < e; ++i) po[i] = f(x, pb[i]);
      } else {
        const Out v = f(pa[0], pb[0]);
        for (int64_t i = s; i < e; ++i) po[i] = v;
      }
    });
    return;
  }
  std::array<Operand, 3> ops = {MakeOperand(out, out.sizes()), MakeOperand(a, out.sizes()),
                                MakeOperand(b, out.sizes())};
  internal::ForEachStrided<3>(
      out.sizes(), ops,
      [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        char* o = p[0];
        const char* x = p[1];
        const char* y = p[2];
        for (int64_t i = 0; i < n; ++i, o += s[0], x += s[1], y += s[2]) {
          *reinterpret_cast<Out*>(o) =
              f(*reinterpret_cast<const In*>(x), *reinterpret_cast<const In*>(y));
        }
      });
}

template <typename Op, typename = void>
struct HasElement : std::false_type {};
template <typename Op>
struct HasElement<Op, std::void_t<decltype(&Op::template Element<int8_t>)>> : std::true_type {};

// RunNewDType: RunLoop for a compute dtype beyond the original four (NOTE: [Binary kernels of
// the new dtypes]). Ops without an Element rule (pow, atan2) refuse the dtype.
template <typename Op>
void RunNewDType(DType compute, const Tensor& out, const Tensor& a, const Tensor& b) {
  if constexpr (!HasElement<Op>::value) {
    ThrowDTypeNotSupportedYet(compute);
  } else {
    VisitNewDType(compute, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      using Out = std::conditional_t<Op::kPredicate, bool, T>;
      if constexpr (Op::kOrdered && kIsComplexElement<T>) {
        FT_CHECK(false && "complex compute type rejected by validation");
      } else {
        PlainBinaryLoop<T, Out>(out, a, b, [](T x, T y) -> Out {
          return static_cast<Out>(Op::template Element<M>(static_cast<M>(x), static_cast<M>(y)));
        });
      }
    });
  }
}

// RunLoop computes out = Op(a, b); a and b already have the compute dtype.
template <typename Op>
void RunLoop(DType compute, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!IsOriginalDType(compute)) [[unlikely]] {
    RunNewDType<Op>(compute, out, a, b);
    return;
  }
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Out = std::conditional_t<Op::kPredicate, bool, T>;
    constexpr bool kFloating = std::is_same_v<T, float> || std::is_same_v<T, double>;
    if constexpr (HasVectorMath<Op>::value && kFloating) {
      VectorMathLoop<Op, T>(out, a, b);
      return;
    }
    if constexpr (Op::kArith >= 0 && kFloating) {
      constexpr auto kOp = static_cast<vecmath::Arith>(Op::kArith);
      VectorLoop<T, T>(
          out, a, b,
          [](const T* x, int64_t x_step, const T* y, int64_t y_step, T* o, int64_t n) {
            vecmath::Arithmetic(kOp, x, x_step, y, y_step, o, n);
          },
          Op{});
      return;
    }
    if constexpr (Op::kCompare >= 0 && kFloating) {
      constexpr auto kOp = static_cast<vecmath::Cmp>(Op::kCompare);
      VectorLoop<T, bool>(
          out, a, b,
          [](const T* x, int64_t x_step, const T* y, int64_t y_step, bool* o, int64_t n) {
            vecmath::Compare(kOp, x, x_step, y, y_step, o, n);
          },
          Op{});
      return;
    }
    if constexpr (Op::template kSupports<T>) {
      BinaryLoop<T, Out>(out, a, b, Op{});
    } else {
      FT_CHECK(false && "compute type rejected by validation");
    }
  });
}

template <typename Op>
Tensor Binary(const char* name, DType compute, const Tensor& a, const Tensor& b) {
  const Shape shape = BroadcastShapes(name, a.sizes(), b.sizes());
  // Operands that already have the compute dtype are read in place: not even a handle copy
  // (two atomic updates) on the same-dtype fast path.
  Tensor converted_a, converted_b;
  const Tensor& ca = a.dtype() == compute ? a : (converted_a = to(a, compute));
  const Tensor& cb = b.dtype() == compute ? b : (converted_b = to(b, compute));
  Op::Validate(name, ca, cb);
  Tensor out = EmptyContiguous(shape, Op::kPredicate ? kBool : compute);
  RunLoop<Op>(compute, out, ca, cb);
  return out;
}

void CheckCastable(const char* name, DType result, const Tensor& self) {
  if (!CanCast(result, self.dtype())) {
    ThrowError(name, ": result type ", DTypeName(result), " can't be cast to the desired output ",
               "type ", DTypeName(self.dtype()), " (in-place op on a tensor of shape ",
               ShapeToString(self.sizes()), ")");
  }
}

// BinaryInPlace: self = Op(self, other), other broadcast to self's shape.
template <typename Op>
Tensor BinaryInPlace(const char* name, DType compute, const Tensor& self, const Tensor& other) {
  internal::CheckWritable(name, self);
  CheckCastable(name, compute, self);
  const Shape shape = BroadcastShapes(name, self.sizes(), other.sizes());
  if (!SameShape(shape, self.sizes())) {
    ThrowError(name, ": output with shape ", ShapeToString(self.sizes()),
               " doesn't match the broadcast shape ", ShapeToString(shape));
  }
  Tensor cb = to(other, compute);
  // A partially overlapping view of self would be overwritten while still being read.
  if (cb.is_same(other) && Overlaps(self, other)) cb = clone(other);
  if (compute == self.dtype()) {
    RunLoop<Op>(compute, self, self, cb);
  } else {
    // Computing in a wider dtype than self (float32 self, float64 other): compute, then cast.
    Tensor tmp = EmptyContiguous(self.sizes(), compute);
    RunLoop<Op>(compute, tmp, to(self, compute), cb);
    copy_into(self, tmp);
  }
  self.bump_version();
  return self;
}

// ---- Scalar conversion helpers. ----
// ClampBound converts a clamp bound to the compute type T. T is floating whenever the bound
// is floating (promotion), so only floating narrowing can overflow: saturate to +-inf.
template <typename T>
T ClampBound(Scalar s) {
  if constexpr (std::is_floating_point_v<T>) {
    return activation::ClampBound<T>(s.to<double>());
  } else {
    return s.to<T>();
  }
}

// FillValue converts `value` to T, throwing where the conversion would overflow (PyTorch's
// "value cannot be converted to type ... without overflow").
template <typename T>
T FillValue(const char* name, Scalar value) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (value.is_floating()) {
      const double d = value.to<double>();
      // [-2^63, 2^63) is the range whose truncation fits in int64; NaN fails both tests.
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
        ThrowError(name, ": value ", value.ToString(),
                   " cannot be converted to int64 without overflow");
      }
    }
    return value.to<int64_t>();
  } else if constexpr (std::is_same_v<T, float>) {
    const double d = value.to<double>();
    if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
      ThrowError(name, ": value ", value.ToString(),
                 " cannot be converted to float32 without overflow");
    }
    return static_cast<float>(d);
  } else {
    return value.to<T>();
  }
}

// CheckedScalar converts `value` to a new dtype's element type T as torch's Scalar::to<T>()
// does (c10's checked_convert): CheckScalarFits's rule (tensor/scalar_check.h) throws
// "<name>: value ... cannot be converted to <dtype> without overflow" where torch does, and
// the conversion itself is ConvertElement.
template <typename T>
T CheckedScalar(const char* name, DType dtype, Scalar value) {
  CheckScalarFits(name, value, dtype);
  return value.to<T>();
}

template <typename T>
void FillLoop(const Tensor& self, T v) {
  std::array<Operand, 1> ops = {MakeOperand(self, self.sizes())};
  internal::ForEachStrided<1>(
      self.sizes(), ops,
      [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
        T* ptr = reinterpret_cast<T*>(p[0]);
        if (s[0] == static_cast<int64_t>(sizeof(T))) {
          ArrayMap<T>(ptr, n).setConstant(v);
        } else {
          StridedMap<T>(ptr, n, Eigen::InnerStride<>(s[0] / static_cast<int64_t>(sizeof(T))))
              .setConstant(v);
        }
      });
}

// PlainFill: every element of self (any layout) set to v, for the new dtypes.
template <typename T>
void PlainFill(const Tensor& self, T v) {
  std::array<Operand, 1> ops = {MakeOperand(self, self.sizes())};
  internal::ForEachStrided<1>(
      self.sizes(), ops,
      [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
        char* ptr = p[0];
        for (int64_t i = 0; i < n; ++i, ptr += s[0]) *reinterpret_cast<T*>(ptr) = v;
      });
}

Tensor Fill(const char* name, const Tensor& self, Scalar value) {
  internal::CheckWritable(name, self);
  if (!IsOriginalDType(self.dtype())) [[unlikely]] {
    VisitNewDType(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T v = CheckedScalar<T>(name, self.dtype(), value);  // may throw: before any write
      PlainFill<T>(self, v);
    });
    self.bump_version();
    return self;
  }
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = FillValue<T>(name, value);  // may throw: before any write
    FillLoop<T>(self, v);
  });
  self.bump_version();
  return self;
}

// ClampType: x's dtype promoted with each given bound (python-scalar rules).
DType ClampType(const char* name, const Tensor& x, const std::optional<Scalar>& min,
                const std::optional<Scalar>& max) {
  if (!min.has_value() && !max.has_value()) {
    ThrowError(name, ": at least one of min or max must be given (tensor of shape ",
               ShapeToString(x.sizes()), ")");
  }
  DType t = x.dtype();
  if (min.has_value()) t = ResultTypeWithScalar(t, min->kind());
  if (max.has_value()) t = ResultTypeWithScalar(t, max->kind());
  if (t == kBool) {
    ThrowError(name, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert to int64 or a floating dtype first");
  }
  if (IsComplex(t)) {
    ThrowError(name, ": not supported for complex types (", DTypeName(x.dtype()),
               " tensor of shape ", ShapeToString(x.sizes()), ", bounds ",
               min ? min->ToString() : "none", " and ", max ? max->ToString() : "none",
               "); complex numbers have no order");
  }
  return t;
}

// ClampFn: max(x, lo) then min(., hi), so min > max gives hi everywhere (PyTorch); NaN in
// x or in a bound propagates.
template <typename T>
struct ClampFn {
  T lo, hi;
  bool has_lo, has_hi;
  T operator()(const T& x) const {
    T y = x;
    if (has_lo && (IsNanValue(lo) || y < lo)) y = lo;
    if (has_hi && (IsNanValue(hi) || y > hi)) y = hi;
    return y;
  }
};

template <typename T>
ClampFn<T> MakeClampFn(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  ClampFn<T> fn{T(0), T(0), min.has_value(), max.has_value()};
  if (min.has_value()) fn.lo = ClampBound<T>(*min);
  if (max.has_value()) fn.hi = ClampBound<T>(*max);
  return fn;
}

// ClampNewDType: out = clamp(in) for a compute dtype beyond the original four (integers
// and float16/bfloat16; complex was refused). The bounds convert to the dtype first with
// torch's overflow check (CheckedScalar), then compare in OpMathType: clamping commutes
// with the monotone rounding, so float16/bfloat16 results are torch's. `out` may be `in`.
void ClampNewDType(const char* name, DType dtype, const Tensor& out, const Tensor& in,
                   const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  VisitNewDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsComplexElement<T>) {
      using M = OpMathType<T>;
      ClampFn<M> fn{M(0), M(0), min.has_value(), max.has_value()};
      if (min.has_value()) fn.lo = static_cast<M>(CheckedScalar<T>(name, dtype, *min));
      if (max.has_value()) fn.hi = static_cast<M>(CheckedScalar<T>(name, dtype, *max));
      // `in` as both operands: PlainBinaryLoop's layouts serve a unary op too.
      PlainBinaryLoop<T, T>(out, in, in,
                            [fn](T x, T) { return static_cast<T>(fn(static_cast<M>(x))); });
    }
  });
}

}  // namespace

// ---- Out-of-place arithmetic ----
Tensor add(const Tensor& a, const Tensor& b) {
  return Binary<AddOp>("add", ArithmeticType("add", a, b), a, b);
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return Binary<SubOp>("sub", SubType("sub", a, b), a, b);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return Binary<MulOp>("mul", ArithmeticType("mul", a, b), a, b);
}
Tensor div(const Tensor& a, const Tensor& b) {
  return Binary<DivOp>("div", DivType("div", a, b), a, b);
}
Tensor pow(const Tensor& a, const Tensor& b) {
  return Binary<PowOp>("pow", PowType("pow", a, b), a, b);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return Binary<MaximumOp>("maximum", OrderedType("maximum", a, b), a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return Binary<MinimumOp>("minimum", OrderedType("minimum", a, b), a, b);
}
Tensor atan2(const Tensor& a, const Tensor& b) {
  return Binary<Atan2Op>("atan2", FloatingType("atan2", a, b), a, b);
}

// ---- Comparisons ----
Tensor eq(const Tensor& a, const Tensor& b) { return Binary<EqOp>("eq", ResultTypeOf(a, b), a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return Binary<NeOp>("ne", ResultTypeOf(a, b), a, b); }
Tensor lt(const Tensor& a, const Tensor& b) {
  return Binary<LtOp>("lt", OrderedType("lt", a, b), a, b);
}
Tensor le(const Tensor& a, const Tensor& b) {
  return Binary<LeOp>("le", OrderedType("le", a, b), a, b);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return Binary<GtOp>("gt", OrderedType("gt", a, b), a, b);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return Binary<GeOp>("ge", OrderedType("ge", a, b), a, b);
}

// ---- Logical ----
// Promotion never turns a nonzero into zero (int64 -> float32 keeps nonzero-ness), so the
// promoted dtype is a safe common type for the truth test.
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return Binary<LogicalAndOp>("logical_and", PromoteTypes(a.dtype(), b.dtype()), a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return Binary<LogicalOrOp>("logical_or", PromoteTypes(a.dtype(), b.dtype()), a, b);
}
Tensor logical_not(const Tensor& x) {
  Tensor out = EmptyContiguous(x.sizes(), kBool);
  if (!IsOriginalDType(x.dtype())) [[unlikely]] {
    VisitNewDType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      PlainBinaryLoop<T, bool>(out, x, x, [](T v, T) { return !Nonzero(v); });
    });
    return out;
  }
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    UnaryLoop<T, bool>(out, x, [](const auto& a) { return a == T(0); });
  });
  return out;
}

// ---- where ----

// RowSelect: where() of a condition with one value per row (per leading index; size 1 over
// the trailing dims) between a and b that are contiguous in the result's shape: each row
// of the result is the row of the side its condition picks. This is how vmap of cond and
// while_loop selects (a per-example predicate over each example's values), so it runs once
// per op on every batched branch or loop step. Returns false (nothing written) for any
// other layout, which the general strided loop then takes.
template <typename T>
bool RowSelect(const Tensor& condition, const Tensor& a, const Tensor& b, IntArrayRef shape,
               T* out) {
  if (!condition.is_contiguous() || !a.is_contiguous() || !b.is_contiguous() ||
      a.sizes() != shape || b.sizes() != shape || condition.dim() != std::ssize(shape)) {
    return false;
  }
  const IntArrayRef cs = condition.sizes();
  size_t p = 0;  // condition matches the result's dims [0, p), is 1 over [p, rank)
  while (p < shape.size() && cs[p] == shape[p]) ++p;
  for (size_t d = p; d < shape.size(); ++d) {
    if (cs[d] != 1) return false;
  }
  const int64_t rows = Numel(shape.subspan(0, p));
  const int64_t inner = Numel(shape.subspan(p));
  if (inner < 2) return false;  // an elementwise select: the general loop's packet path
  const bool* pc = condition.data<const bool>();
  const T* pa = a.data<const T>();
  const T* pb = b.data<const T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = (pc[r] ? pa : pb) + r * inner;
    std::copy_n(src, inner, out + r * inner);
  }
  return true;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  if (condition.dtype() != kBool) {
    ThrowError("where: expected condition to be a bool tensor, got ", DTypeName(condition.dtype()),
               " of shape ", ShapeToString(condition.sizes()),
               "; compare it first (e.g. ne(c, 0))");
  }
  const Shape ab = BroadcastShapes("where", a.sizes(), b.sizes());
  const Shape shape = BroadcastShapes("where", condition.sizes(), ab);
  const DType dtype = ResultTypeOf(a, b);
  const Tensor ca = to(a, dtype);
  const Tensor cb = to(b, dtype);
  Tensor out = EmptyContiguous(shape, dtype);
  if (!IsOriginalDType(dtype)) [[unlikely]] {
    // Selection only moves elements: one plain loop per element size (NOTE: [Binary kernels
    // of the new dtypes]).
    internal::VisitElementBytes(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::array<Operand, 4> ops = {MakeOperand(out, shape), MakeOperand(condition, shape),
                                    MakeOperand(ca, shape), MakeOperand(cb, shape)};
      internal::ForEachStrided<4>(
          shape, ops,
          [&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
            char* po = p[0];
            const char* pc = p[1];
            const char* pa = p[2];
            const char* pb = p[3];
            for (int64_t i = 0; i < n; ++i, po += s[0], pc += s[1], pa += s[2], pb += s[3]) {
              std::memcpy(po, *reinterpret_cast<const bool*>(pc) ? pa : pb, sizeof(T));
            }
          });
    });
    return out;
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int64_t kT = sizeof(T);
    if (RowSelect<T>(condition, ca, cb, shape, out.data<T>())) return;
    std::array<Operand, 4> ops = {MakeOperand(out, shape), MakeOperand(condition, shape),
                                  MakeOperand(ca, shape), MakeOperand(cb, shape)};
    internal::ForEachStrided<4>(
        shape, ops, [&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
          T* po = reinterpret_cast<T*>(p[0]);
          const bool* pc = reinterpret_cast<const bool*>(p[1]);
          const T* pa = reinterpret_cast<const T*>(p[2]);
          const T* pb = reinterpret_cast<const T*>(p[3]);
          if (s[0] == kT && s[1] == 1 && s[2] == kT && s[3] == kT) {
            ArrayMap<T>(po, n) =
                ConstArrayMap<bool>(pc, n).select(ConstArrayMap<T>(pa, n), ConstArrayMap<T>(pb, n));
            return;
          }
          if (s[1] == 0) {
            // One condition for the whole row (a per-example predicate broadcast over the
            // example's elements, as vmap of cond and while_loop selects): copy the row of
            // the side it picks.
            const T* src = *pc ? pa : pb;
            const int64_t ss = *pc ? s[2] : s[3];
            if (s[0] == kT && ss == kT) {
              std::memcpy(po, src, static_cast<size_t>(n) * kT);
            } else {
              StridedMap<T>(po, n, Eigen::InnerStride<>(s[0] / kT)) =
                  ConstStridedMap<T>(src, n, Eigen::InnerStride<>(ss / kT));
            }
            return;
          }
          StridedMap<T>(po, n, Eigen::InnerStride<>(s[0] / kT)) =
              ConstStridedMap<bool>(pc, n, Eigen::InnerStride<>(s[1]))
                  .select(ConstStridedMap<T>(pa, n, Eigen::InnerStride<>(s[2] / kT)),
                          ConstStridedMap<T>(pb, n, Eigen::InnerStride<>(s[3] / kT)));
        });
  });
  return out;
}

// ---- clamp ----
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  const DType dtype = ClampType("clamp", x, min, max);
  const Tensor in = to(x, dtype);
  Tensor out = EmptyContiguous(x.sizes(), dtype);
  if (!IsOriginalDType(dtype)) [[unlikely]] {
    ClampNewDType("clamp", dtype, out, in, min, max);
    return out;
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      // kernels/activation_math.h's clamp, which jit's fused steps run too (same bits).
      constexpr double kInf = std::numeric_limits<double>::infinity();
      const activation::Params bounds{min ? min->to<double>() : -kInf,
                                      max ? max->to<double>() : kInf};
      internal::StripLoop<T>(out, in, [&bounds](const T* a, T* o, int64_t n) {
        activation::Apply(activation::Fn::kClamp, bounds, a, o, n);
      });
    } else if constexpr (!kIsBool<T>) {
      const ClampFn<T> fn = MakeClampFn<T>(min, max);
      UnaryLoop<T, T>(out, in, [&](const auto& a) { return a.unaryExpr(fn); });
    }
  });
  return out;
}

Tensor clamp_(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  internal::CheckWritable("clamp_", self);
  const DType dtype = ClampType("clamp_", self, min, max);
  CheckCastable("clamp_", dtype, self);
  // Promotion never lowers the dtype, so a castable result type is self's own dtype.
  FT_CHECK(dtype == self.dtype());
  if (!IsOriginalDType(dtype)) [[unlikely]] {
    ClampNewDType("clamp_", dtype, self, self, min, max);
    self.bump_version();
    return self;
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsBool<T>) {
      const ClampFn<T> fn = MakeClampFn<T>(min, max);
      UnaryLoop<T, T>(self, self, [&](const auto& a) { return a.unaryExpr(fn); });
    }
  });
  self.bump_version();
  return self;
}

// ---- In-place arithmetic ----
Tensor add_(const Tensor& self, const Tensor& other) {
  return BinaryInPlace<AddOp>("add_", ArithmeticType("add_", self, other), self, other);
}
Tensor sub_(const Tensor& self, const Tensor& other) {
  return BinaryInPlace<SubOp>("sub_", SubType("sub_", self, other), self, other);
}
Tensor mul_(const Tensor& self, const Tensor& other) {
  return BinaryInPlace<MulOp>("mul_", ArithmeticType("mul_", self, other), self, other);
}
Tensor div_(const Tensor& self, const Tensor& other) {
  return BinaryInPlace<DivOp>("div_", DivType("div_", self, other), self, other);
}

// ---- Writes ----
Tensor copy_(const Tensor& self, const Tensor& src) {
  internal::CheckWritable("copy_", self);
  const Shape shape = BroadcastShapes("copy_", self.sizes(), src.sizes());
  if (!SameShape(shape, self.sizes())) {
    ThrowError("copy_: source of shape ", ShapeToString(src.sizes()),
               " cannot be broadcast to the destination shape ", ShapeToString(self.sizes()));
  }
  // Overlapping source and destination: read everything before writing anything.
  const Tensor source = Overlaps(self, src) ? clone(src) : src;
  copy_into(self, source);
  self.bump_version();
  return self;
}

Tensor fill_(const Tensor& self, Scalar value) { return Fill("fill_", self, value); }

Tensor zero_(const Tensor& self) { return Fill("zero_", self, Scalar(int64_t{0})); }

}  // namespace ft::kernels
