#include "interpreters/jit/fused_kernel.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>

#include "Eigen/Core"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "cpu/parallel.h"
#include "cpu/vecmath.h"
#include "tensor/error.h"

namespace ft {

namespace {

// Elements below which a fused step runs on the calling thread: the eager kernels' grain
// (tensor/loops.h), so a fused chain splits where its eager ops would.
constexpr int64_t kParallelGrain = 65536;

// The base op each opcode computes and its arity, in Opcode order: the one table OpcodeOf,
// Arity and the printed form read.
struct OpcodeInfo {
  const char* op;
  int arity;
};
constexpr OpcodeInfo kOpcodes[] = {
    {"add", 2},     {"sub", 2},     {"mul", 2},   {"div", 2},     {"neg", 1},
    {"square", 1},  {"reciprocal", 1}, {"abs", 1}, {"sign", 1},   {"floor", 1},
    {"round", 1},   {"relu", 1},
    {"maximum", 2}, {"minimum", 2}, {"eq", 2},    {"ne", 2},      {"lt", 2},
    {"le", 2},      {"gt", 2},      {"ge", 2},
    {"logical_and", 2}, {"logical_or", 2}, {"logical_not", 1},
    {"where", 3},   {"pow", 2},
    {"atan2", 2},
    {"activation", 1},  // named by its instruction's function; OpcodeOf never matches it
    {"exp", 1},
    {"expm1", 1},   {"log", 1},     {"log1p", 1}, {"sin", 1},     {"cos", 1},
    {"tan", 1},     {"tanh", 1},    {"sigmoid", 1}, {"sqrt", 1},  {"rsqrt", 1},
    {"erf", 1},     {"erfc", 1},    {"lgamma", 1}};
static_assert(std::size(kOpcodes) == static_cast<size_t>(FusedKernel::kNumOpcodes));

// The vecmath function of an opcode from kExp on (they are in vecmath::Fn's order).
constexpr bool IsVecMath(FusedKernel::Opcode code) {
  return static_cast<int>(code) >= static_cast<int>(FusedKernel::Opcode::kExp);
}
constexpr vecmath::Fn VecMathFn(FusedKernel::Opcode code) {
  return static_cast<vecmath::Fn>(static_cast<int>(code) -
                                  static_cast<int>(FusedKernel::Opcode::kExp));
}

// ExactVecMathFn: the vecmath function of an exact unary opcode (the ones the kernels run on
// vecmath's second group of Fn), if `code` is one.
constexpr std::optional<vecmath::Fn> ExactVecMathFn(FusedKernel::Opcode code) {
  using Opcode = FusedKernel::Opcode;
  switch (code) {
    case Opcode::kNeg: return vecmath::Fn::kNeg;
    case Opcode::kSquare: return vecmath::Fn::kSquare;
    case Opcode::kReciprocal: return vecmath::Fn::kReciprocal;
    case Opcode::kAbs: return vecmath::Fn::kAbs;
    case Opcode::kSign: return vecmath::Fn::kSign;
    case Opcode::kFloor: return vecmath::Fn::kFloor;
    case Opcode::kRound: return vecmath::Fn::kRound;
    case Opcode::kRelu: return vecmath::Fn::kRelu;
    default: return std::nullopt;
  }
}

const OpcodeInfo& Info(FusedKernel::Opcode code) { return kOpcodes[static_cast<int>(code)]; }

// Scratch: this thread's chunk registers, grown on demand and reused by every fused step.
template <typename T>
T* Scratch(size_t elements) {
  thread_local std::vector<T> scratch;
  if (scratch.size() < elements) scratch.resize(elements);
  return scratch.data();
}

// Gather copies elements [begin, begin + n) of the run's shape (row-major order) of a
// broadcast, strided input into `out`, one innermost run at a time, converting each from S
// to T (a mask: bool to 0 or 1).
template <typename S, typename T>
void Gather(const S* data, IntArrayRef strides, IntArrayRef sizes, int64_t begin, int64_t n,
            T* out) {
  const int64_t dims = static_cast<int64_t>(sizes.size());
  if (dims == 0) {
    out[0] = static_cast<T>(data[0]);
    return;
  }
  absl::InlinedVector<int64_t, 6> index(dims);
  int64_t rest = begin;
  for (int64_t d = dims - 1; d >= 0; --d) {
    index[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  const int64_t inner = sizes[dims - 1];
  const int64_t inner_stride = strides[dims - 1];
  while (n > 0) {
    const S* src = data;
    for (int64_t d = 0; d < dims; ++d) src += index[d] * strides[d];
    const int64_t run = std::min(n, inner - index[dims - 1]);
    if (inner_stride == 0) {
      std::fill_n(out, run, static_cast<T>(*src));
    } else if (inner_stride == 1) {
      std::copy_n(src, run, out);
    } else {
      for (int64_t k = 0; k < run; ++k) out[k] = static_cast<T>(src[k * inner_stride]);
    }
    out += run;
    n -= run;
    index[dims - 1] = 0;
    for (int64_t d = dims - 2; d >= 0; --d) {  // carry into the outer dims
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

// RepeatPeriod copies out[0, period) over out[period, n) (n a multiple of period). Each
// copy reads the first period, which was stored long before: copying from the copy just
// made would wait on store forwarding.
template <typename T>
void RepeatPeriod(T* out, int64_t period, int64_t n) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr int64_t W = ei::packet_traits<T>::size;
  for (T* copy = out + period; copy < out + n; copy += period) {
    int64_t q = 0;
    for (; q + W <= period; q += W) ei::pstoreu(copy + q, ei::ploadu<P>(out + q));
    for (; q < period; ++q) copy[q] = out[q];
  }
}

// FillFixed lays out the n values every chunk of a kFixed input reads (n is a multiple of
// the period): one period (copied when the input is that period, contiguous, else
// gathered, converting from S), then copies of it.
template <typename S, typename T>
void FillFixed(const S* data, const FusedKernel::Input& in, IntArrayRef sizes, int64_t n,
               T* out) {
  const int64_t period = std::min(in.period, n);
  if (in.dense_period) {
    std::copy_n(data, period, out);
  } else {
    Gather(data, in.strides, sizes, 0, period, out);
  }
  RepeatPeriod(out, period, n);
}

using Operand = FusedKernel::Operand;

// Apply writes op(a, b) into o[0, n), row by row (row divides n; row == n when no operand
// is a kRow), within a row a packet at a time, four packets per iteration, then element by
// element: the same IEEE operation on the same two values either way, so the bits do not
// depend on where a packet, a row or a chunk starts. kUnary: op ignores b.
template <typename T, Operand kA, Operand kB, bool kUnary, typename Op>
void Apply(T* o, const T* a, const T* b, int64_t n, int64_t row, Op op) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr int64_t W = ei::packet_traits<T>::size;
  constexpr bool kScalarA = kA == Operand::kScalar;
  constexpr bool kScalarB = kB == Operand::kScalar && !kUnary;
  const P pa = kScalarA ? ei::pset1<P>(*a) : P{};
  const P pb = kScalarB ? ei::pset1<P>(*b) : P{};
  if constexpr (!kUnary && (kA == Operand::kRow) != (kB == Operand::kRow)) {
    if (row == 4 * W) {
      // A row of four packets (16 floats under SSE): they stay in registers while the loop
      // walks down the rows, instead of a row loop with its tails per row.
      constexpr bool kRowA = kA == Operand::kRow;
      const T* const r = kRowA ? a : b;
      const P q0 = ei::ploadu<P>(r), q1 = ei::ploadu<P>(r + W), q2 = ei::ploadu<P>(r + 2 * W),
              q3 = ei::ploadu<P>(r + 3 * W);
      const T* const other = kRowA ? b : a;
      const P scalar = kRowA ? pb : pa;
      constexpr bool kOtherScalar = kRowA ? kScalarB : kScalarA;
      for (int64_t base = 0; base < n; base += row) {
        const auto at = [&](const P& q, int64_t k) {
          const P x = kOtherScalar ? scalar : ei::ploadu<P>(other + base + k);
          return kRowA ? op(q, x) : op(x, q);
        };
        const P r0 = at(q0, 0), r1 = at(q1, W), r2 = at(q2, 2 * W), r3 = at(q3, 3 * W);
        ei::pstoreu(o + base, r0);
        ei::pstoreu(o + base + W, r1);
        ei::pstoreu(o + base + 2 * W, r2);
        ei::pstoreu(o + base + 3 * W, r3);
      }
      return;
    }
  }
  for (int64_t base = 0; base < n; base += row) {
    T* const ro = o + base;
    const T* const ra = kA == Operand::kArray ? a + base : a;
    const T* const rb = kB == Operand::kArray && !kUnary ? b + base : b;
    const auto at = [&](int64_t k) {
      const P x = kScalarA ? pa : ei::ploadu<P>(ra + k);
      if constexpr (kUnary) {
        return op(x, x);
      } else {
        return op(x, kScalarB ? pb : ei::ploadu<P>(rb + k));
      }
    };
    int64_t k = 0;
    for (; k + 4 * W <= row; k += 4 * W) {
      const P r0 = at(k), r1 = at(k + W), r2 = at(k + 2 * W), r3 = at(k + 3 * W);
      ei::pstoreu(ro + k, r0);
      ei::pstoreu(ro + k + W, r1);
      ei::pstoreu(ro + k + 2 * W, r2);
      ei::pstoreu(ro + k + 3 * W, r3);
    }
    for (; k + W <= row; k += W) ei::pstoreu(ro + k, at(k));
    for (; k < row; ++k) {
      const T x = kScalarA ? *ra : ra[k];
      ro[k] = kUnary ? op(x, x) : op(x, kScalarB ? *rb : rb[k]);
    }
  }
}

// Operand reads for Where: element k of the row starting at `base`.
template <Operand kOp, typename P, typename T>
P LoadOperand(const T* p, int64_t base, int64_t k) {
  namespace ei = Eigen::internal;
  if constexpr (kOp == Operand::kScalar) {
    return ei::pset1<P>(*p);
  } else if constexpr (kOp == Operand::kRow) {
    return ei::ploadu<P>(p + k);
  } else {
    return ei::ploadu<P>(p + base + k);
  }
}
template <Operand kOp, typename T>
T ElementOf(const T* p, int64_t base, int64_t k) {
  if constexpr (kOp == Operand::kScalar) {
    return *p;
  } else if constexpr (kOp == Operand::kRow) {
    return p[k];
  } else {
    return p[base + k];
  }
}

// Where writes where(c, x, y) into o[0, n): x's value where the mask c is 1, else y's, row
// by row as Apply does. It copies one of two values, so its bits never depend on packets.
template <typename T, Operand kC, Operand kX, Operand kY>
void Where(T* o, const T* c, const T* x, const T* y, int64_t n, int64_t row,
           const FusedKernel::Instr& /*instr*/) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr int64_t W = ei::packet_traits<T>::size;
  const P zero = ei::pset1<P>(T(0));
  for (int64_t base = 0; base < n; base += row) {
    int64_t k = 0;
    for (; k + W <= row; k += W) {
      const P unset = ei::pcmp_eq(LoadOperand<kC, P>(c, base, k), zero);
      ei::pstoreu(o + base + k, ei::pselect(unset, LoadOperand<kY, P>(y, base, k),
                                            LoadOperand<kX, P>(x, base, k)));
    }
    for (; k < row; ++k) {
      o[base + k] = ElementOf<kC>(c, base, k) != T(0) ? ElementOf<kX>(x, base, k)
                                                      : ElementOf<kY>(y, base, k);
    }
  }
}

// SelectWhere returns Where for the operand reads (a mask is never a scalar).
template <typename T>
FusedKernel::InstrFn<T> SelectWhere(Operand c, Operand x, Operand y) {
  FusedKernel::InstrFn<T> fn = nullptr;
  const auto for_c = [&](auto c_kind) {
    const auto for_x = [&](auto x_kind) {
      const auto for_y = [&](auto y_kind) {
        fn = &Where<T, decltype(c_kind)::value, decltype(x_kind)::value, decltype(y_kind)::value>;
      };
      switch (y) {
        case Operand::kArray: for_y(std::integral_constant<Operand, Operand::kArray>()); break;
        case Operand::kScalar: for_y(std::integral_constant<Operand, Operand::kScalar>()); break;
        case Operand::kRow: for_y(std::integral_constant<Operand, Operand::kRow>()); break;
      }
    };
    switch (x) {
      case Operand::kArray: for_x(std::integral_constant<Operand, Operand::kArray>()); break;
      case Operand::kScalar: for_x(std::integral_constant<Operand, Operand::kScalar>()); break;
      case Operand::kRow: for_x(std::integral_constant<Operand, Operand::kRow>()); break;
    }
  };
  switch (c) {
    case Operand::kArray: for_c(std::integral_constant<Operand, Operand::kArray>()); break;
    case Operand::kRow: for_c(std::integral_constant<Operand, Operand::kRow>()); break;
    case Operand::kScalar: break;
  }
  return fn;
}

// Compute runs one instruction with opcode kCode over a chunk: o = kCode(a, b), each operand
// read as its Operand says. The constructor picks the instantiation for each instruction
// (Select), so a replay calls it through one pointer, with no switch on the opcode or the
// operands.
template <typename T, FusedKernel::Opcode kCode, Operand kA, Operand kB>
void Compute(T* o, const T* a, const T* b, const T* /*c*/, int64_t n, int64_t row,
             const FusedKernel::Instr& instr) {
  namespace ei = Eigen::internal;
  using Opcode = FusedKernel::Opcode;
  const auto binary = [&](auto op) { Apply<T, kA, kB, false>(o, a, b, n, row, op); };
  const auto unary = [&](auto op) {
    Apply<T, kA, Operand::kArray, true>(o, a, nullptr, n, row, op);
  };
  if constexpr (kCode == Opcode::kAdd) {
    binary([](const auto& x, const auto& y) { return ei::padd(x, y); });
  } else if constexpr (kCode == Opcode::kSub) {
    binary([](const auto& x, const auto& y) { return ei::psub(x, y); });
  } else if constexpr (kCode == Opcode::kMul) {
    binary([](const auto& x, const auto& y) { return ei::pmul(x, y); });
  } else if constexpr (kCode == Opcode::kDiv) {
    binary([](const auto& x, const auto& y) { return ei::pdiv(x, y); });
  } else if constexpr (ExactVecMathFn(kCode).has_value()) {
    // neg, square, reciprocal, abs, sign, floor, round and relu: the function the kernel
    // calls (kernels::abs of a float tensor is vecmath's kAbs over it), exact or one IEEE
    // step, so a chunk gets the kernel's bits. A kRow operand is computed once, then copied.
    vecmath::Apply(*ExactVecMathFn(kCode), a, o, kA == Operand::kArray ? n : row);
    if constexpr (kA == Operand::kRow) RepeatPeriod(o, row, n);
  } else if constexpr (kCode == Opcode::kMaximum || kCode == Opcode::kMinimum) {
    // The kernel's rule (vecmath::MaximumOf / MinimumOf: NaN from either side, x's first; b
    // between equal values), in packets and in the scalar tail alike.
    binary([](const auto& x, const auto& y) {
      using X = std::decay_t<decltype(x)>;
      constexpr bool kMax = kCode == Opcode::kMaximum;
      if constexpr (std::is_floating_point_v<X>) {
        return kMax ? vecmath::MaximumOf(x, y) : vecmath::MinimumOf(x, y);
      } else {
        const X beyond = kMax ? ei::pcmp_lt(y, x) : ei::pcmp_lt(x, y);
        return ei::pselect(ei::pcmp_eq(x, x),
                           ei::pselect(ei::pcmp_eq(y, y), ei::pselect(beyond, x, y), y), x);
      }
    });
  } else if constexpr (FusedKernel::IsComparison(kCode)) {
    // A mask: 1 where the comparison holds, else 0 (NaN compares unequal and unordered).
    binary([](const auto& x, const auto& y) {
      using X = std::decay_t<decltype(x)>;
      if constexpr (std::is_floating_point_v<X>) {
        bool holds = false;
        if constexpr (kCode == Opcode::kEq) holds = x == y;
        if constexpr (kCode == Opcode::kNe) holds = x != y;
        if constexpr (kCode == Opcode::kLt) holds = x < y;
        if constexpr (kCode == Opcode::kLe) holds = x <= y;
        if constexpr (kCode == Opcode::kGt) holds = x > y;
        if constexpr (kCode == Opcode::kGe) holds = x >= y;
        return holds ? X(1) : X(0);
      } else {
        const X one = ei::pset1<X>(T(1));
        if constexpr (kCode == Opcode::kEq) return ei::pand(ei::pcmp_eq(x, y), one);
        if constexpr (kCode == Opcode::kNe) return ei::psub(one, ei::pand(ei::pcmp_eq(x, y), one));
        if constexpr (kCode == Opcode::kLt) return ei::pand(ei::pcmp_lt(x, y), one);
        if constexpr (kCode == Opcode::kLe) return ei::pand(ei::pcmp_le(x, y), one);
        if constexpr (kCode == Opcode::kGt) return ei::pand(ei::pcmp_lt(y, x), one);
        if constexpr (kCode == Opcode::kGe) return ei::pand(ei::pcmp_le(y, x), one);
      }
    });
  } else if constexpr (FusedKernel::IsLogical(kCode)) {
    // Masks are 0 and 1: and is their product, or their maximum, not one minus the mask
    // (exact, and 0 or 1 again).
    if constexpr (kCode == Opcode::kLogicalAnd) {
      binary([](const auto& x, const auto& y) { return ei::pmul(x, y); });
    } else if constexpr (kCode == Opcode::kLogicalOr) {
      binary([](const auto& x, const auto& y) { return ei::pmax(x, y); });
    } else {
      unary([](const auto& x, const auto&) {
        using X = std::decay_t<decltype(x)>;
        return ei::psub(ei::pset1<X>(T(1)), x);
      });
    }
  } else if constexpr (kCode == Opcode::kPow || kCode == Opcode::kAtan2) {
    // kernels::pow's vecmath::Pow and kernels::atan2's vecmath::Atan2 (float dtypes, every
    // layout): an element's bits depend on its two values alone. A scalar or row operand is
    // first laid out over the chunk.
    FT_CHECK(n <= FusedKernel::kChunk);
    T spread_a[FusedKernel::kChunk], spread_b[FusedKernel::kChunk];
    const auto spread = [n, row](auto kind, const T* p, T* out) -> const T* {
      constexpr Operand kKind = decltype(kind)::value;
      if constexpr (kKind == Operand::kScalar) {
        std::fill_n(out, n, *p);
        return out;
      } else if constexpr (kKind == Operand::kRow) {
        std::copy_n(p, std::min(row, n), out);
        RepeatPeriod(out, row, n);
        return out;
      } else {
        return p;
      }
    };
    const T* const x = spread(std::integral_constant<Operand, kA>(), a, spread_a);
    const T* const y = spread(std::integral_constant<Operand, kB>(), b, spread_b);
    if constexpr (kCode == Opcode::kPow) {
      vecmath::Pow(x, y, o, n);
    } else {
      vecmath::Atan2(x, y, o, n);
    }
  } else if constexpr (kCode == Opcode::kActivation) {
    // The kernel's own strip function (kernels::gelu is activation::Apply over the tensor),
    // whose result depends on the element alone: a chunk gets the kernel's bits. A kRow
    // operand gives the same row every time: computed once, then copied.
    activation::Apply(instr.activation, instr.params, a, o, kA == Operand::kArray ? n : row);
    if constexpr (kA == Operand::kRow) RepeatPeriod(o, row, n);
  } else {
    static_assert(IsVecMath(kCode));
    // The function the kernel calls (kernels::exp is vecmath's kExp over the whole array):
    // vecmath's result depends on the element alone, so a chunk gets the kernel's bits.
    // A kRow operand gives the same row every time: computed once, then copied.
    vecmath::Apply(VecMathFn(kCode), a, o, kA == Operand::kArray ? n : row);
    if constexpr (kA == Operand::kRow) RepeatPeriod(o, row, n);
  }
}

// SelectPointwise returns Compute for (code, a, b), or null for what no instruction may be:
// a scalar beside a scalar, a unary opcode on a scalar or with a second operand read.
// (Whether the opcode is exact in T is Exact's rule, checked before.)
template <typename T, FusedKernel::Opcode kCode>
FusedKernel::InstrFn<T> SelectPointwise(Operand a, Operand b) {
  constexpr bool kUnary = kOpcodes[static_cast<int>(kCode)].arity == 1;
  const auto with_a = [b](auto a_kind) -> FusedKernel::InstrFn<T> {
    constexpr Operand kA = decltype(a_kind)::value;
    if constexpr (kUnary) {
      return b == Operand::kArray ? &Compute<T, kCode, kA, Operand::kArray> : nullptr;
    }
    switch (b) {
      case Operand::kArray:
        return &Compute<T, kCode, kA, Operand::kArray>;
      case Operand::kRow:
        return &Compute<T, kCode, kA, Operand::kRow>;
      case Operand::kScalar:
        if constexpr (kA == Operand::kScalar) {
          return nullptr;
        } else {
          return &Compute<T, kCode, kA, Operand::kScalar>;
        }
    }
    return nullptr;
  };
  switch (a) {
    case Operand::kArray:
      return with_a(std::integral_constant<Operand, Operand::kArray>());
    case Operand::kRow:
      return with_a(std::integral_constant<Operand, Operand::kRow>());
    case Operand::kScalar:
      if constexpr (kUnary) {
        return nullptr;
      } else {
        return with_a(std::integral_constant<Operand, Operand::kScalar>());
      }
  }
  return nullptr;
}

// SelectFor: the loop of an instruction with opcode kCode and operand reads a, b, c (c is
// kArray, unused, but for where), or null.
template <typename T, FusedKernel::Opcode kCode>
FusedKernel::InstrFn<T> SelectFor(Operand a, Operand b, Operand c) {
  if constexpr (kCode == FusedKernel::Opcode::kWhere) {
    return SelectWhere<T>(a, b, c);
  } else {
    return c == Operand::kArray ? SelectPointwise<T, kCode>(a, b) : nullptr;
  }
}

template <typename T, size_t... kCodes>
FusedKernel::InstrFn<T> SelectAmong(FusedKernel::Opcode code, Operand a, Operand b, Operand c,
                                    std::index_sequence<kCodes...>) {
  FusedKernel::InstrFn<T> fn = nullptr;
  ((static_cast<size_t>(code) == kCodes
        ? void(fn = SelectFor<T, static_cast<FusedKernel::Opcode>(kCodes)>(a, b, c))
        : void()),
   ...);
  return fn;
}

template <typename T>
FusedKernel::InstrFn<T> Select(FusedKernel::Opcode code, Operand a, Operand b, Operand c) {
  return SelectAmong<T>(code, a, b, c, std::make_index_sequence<FusedKernel::kNumOpcodes>());
}

}  // namespace

std::optional<FusedKernel::Opcode> FusedKernel::OpcodeOf(absl::string_view op) {
  for (int k = 0; k < static_cast<int>(std::size(kOpcodes)); ++k) {
    if (k != static_cast<int>(Opcode::kActivation) && op == kOpcodes[k].op) {
      return static_cast<Opcode>(k);
    }
  }
  if (ActivationOf(op)) return Opcode::kActivation;
  return std::nullopt;
}

std::optional<activation::Fn> FusedKernel::ActivationOf(absl::string_view op) {
  for (int k = 0; k < activation::kNumFns; ++k) {
    if (op == activation::FnName(static_cast<activation::Fn>(k))) {
      return static_cast<activation::Fn>(k);
    }
  }
  return std::nullopt;
}

int FusedKernel::Arity(Opcode code) { return Info(code).arity; }

bool FusedKernel::Exact(Opcode code, DType dtype) {
  // IEEE basic operations are exact whatever the packets; the functions from kExp on are
  // vecmath's, which the kernels call too (see fused_kernel.h).
  return dtype == kFloat32 || dtype == kFloat64;
}

FusedKernel::Input FusedKernel::InputFor(const Tensor& traced, IntArrayRef sizes) {
  Input in{Input::Access::kStrided, {}, 0};
  in.mask = traced.dtype() == kBool;
  const int64_t total = Numel(sizes);
  if (traced.numel() == total && traced.is_contiguous() && !in.mask) {
    in.access = Input::Access::kContiguous;
    in.result_layout = traced.sizes() == sizes && traced.storage_offset() == 0 &&
                       traced.strides() == IntArrayRef(ContiguousStrides(sizes));
    return in;
  }
  const int64_t dims = static_cast<int64_t>(sizes.size());
  in.strides.assign(dims, 0);
  const int64_t lead = dims - traced.dim();  // its dims align with the trailing dims
  for (int64_t d = 0; d < traced.dim(); ++d) {
    if (traced.size(d) != 1) in.strides[lead + d] = traced.stride(d);
  }
  // The values repeat along the flat index with the product of the sizes from the first
  // dim that moves through the input. Chunks start at multiples of kChunk, so when that
  // period divides kChunk (or there is one chunk) every chunk reads the same values.
  int64_t period = 1;
  bool moved = false;
  for (int64_t d = 0; d < dims; ++d) {
    moved |= in.strides[d] != 0;
    if (moved) period *= sizes[d];
  }
  if (total <= kChunk || kChunk % period == 0) {
    in.access = Input::Access::kFixed;
    in.period = period;
    // No dim inside the period broadcasts (they would make it larger than the input), so
    // a contiguous input lists the period's values in order.
    in.dense_period = traced.numel() == period && traced.is_contiguous() && !in.mask;
  }
  return in;
}

FusedKernel::FusedKernel(DType dtype, Shape sizes, std::vector<Input> inputs,
                         std::vector<Instr> instrs, std::vector<int> outputs,
                         int64_t prelude_size)
    : dtype_(dtype),
      sizes_(std::move(sizes)),
      numel_(Numel(sizes_)),
      num_inputs_(static_cast<int>(inputs.size())),
      inputs_(std::move(inputs)),
      instrs_(std::move(instrs)),
      outputs_(std::move(outputs)),
      output_of_(num_inputs_ + instrs_.size(), -1),
      is_mask_(output_of_.size(), false),
      prelude_size_(prelude_size) {
  FT_CHECK(dtype_ == kFloat32 || dtype_ == kFloat64);
  // Masks: bool inputs and comparisons' results, read only as where's condition.
  for (int i = 0; i < num_inputs_; ++i) {
    is_mask_[i] = inputs_[i].mask;
    FT_CHECK(!inputs_[i].mask || (inputs_[i].access != Input::Access::kContiguous &&
                                  !inputs_[i].dense_period && !inputs_[i].result_layout));
  }
  for (size_t k = 0; k < instrs_.size(); ++k) {
    const Instr& instr = instrs_[k];
    const int arity = Arity(instr.code);
    const int defined = num_inputs_ + static_cast<int>(k);
    FT_CHECK(Exact(instr.code, dtype_));
    FT_CHECK(instr.a >= 0 && instr.a < defined && (instr.b >= 0) == (arity >= 2) &&
             instr.b < defined && (instr.c >= 0) == (arity == 3) && instr.c < defined);
    const bool logical = IsLogical(instr.code);
    FT_CHECK(is_mask_[instr.a] == (instr.code == Opcode::kWhere || logical));
    FT_CHECK((instr.b < 0 || is_mask_[instr.b] == logical) &&
             (instr.c < 0 || !is_mask_[instr.c]));
    is_mask_[defined] = IsComparison(instr.code) || logical;
  }
  for (size_t k = 0; k < outputs_.size(); ++k) output_of_[outputs_[k]] = static_cast<int>(k);
  while (num_prelude_ < static_cast<int>(instrs_.size()) && instrs_[num_prelude_].prelude) {
    FT_CHECK(output_of_[num_inputs_ + num_prelude_] < 0);
    ++num_prelude_;
  }
  for (size_t k = num_prelude_; k < instrs_.size(); ++k) FT_CHECK(!instrs_[k].prelude);
  FT_CHECK((num_prelude_ == 0) == (prelude_size_ == 0));
  FT_CHECK(prelude_size_ == 0 || (numel_ % prelude_size_ == 0 &&
                                  (numel_ <= kChunk || kChunk % prelude_size_ == 0)));
  const auto is_prelude_result = [this](int reg) {
    return reg >= num_inputs_ && reg < num_inputs_ + num_prelude_;
  };
  // A one-value input is read as a scalar when every instruction reading it pairs it with
  // an array (x * s, s - x); otherwise (neg(s), s + s) it is laid out like any fixed input.
  // (where(m, s, t) reads two: its mask is the array.) A mask is always laid out.
  const auto one_value = [this](int reg) {
    return reg >= 0 && reg < num_inputs_ && inputs_[reg].access == Input::Access::kFixed &&
           inputs_[reg].period == 1 && !inputs_[reg].mask;
  };
  std::vector<bool> as_scalar(num_inputs_);
  for (int i = 0; i < num_inputs_; ++i) as_scalar[i] = one_value(i);
  for (const Instr& instr : instrs_) {
    const bool all_one_value = one_value(instr.a) && (instr.b < 0 || one_value(instr.b)) &&
                               (instr.c < 0 || one_value(instr.c));
    if (instr.b < 0 || all_one_value) {
      for (int reg : {instr.a, instr.b, instr.c}) {
        if (one_value(reg)) as_scalar[reg] = false;
      }
    }
  }
  // Registers read row by row: fixed inputs with a long period, and (after the prelude)
  // prelude results, unless an instruction pairs two of different periods: one row loop
  // per instruction, so both are laid out over the chunk instead.
  std::vector<int64_t> row_of(output_of_.size(), 0);
  for (int i = 0; i < num_inputs_; ++i) {
    if (!as_scalar[i] && inputs_[i].access == Input::Access::kFixed &&
        inputs_[i].period >= kMinRow) {
      row_of[i] = inputs_[i].period;
    }
  }
  for (int k = 0; k < num_prelude_; ++k) row_of[num_inputs_ + k] = prelude_size_;
  // The period instruction k reads register reg with (0: an array or a scalar). Inside the
  // prelude, prelude results are plain arrays of prelude_size elements.
  const auto row_in = [&](size_t k, int reg) -> int64_t {
    if (reg < 0 || (instrs_[k].prelude && is_prelude_result(reg))) return 0;
    return row_of[reg];
  };
  for (size_t k = 0; k < instrs_.size(); ++k) {
    const Instr& instr = instrs_[k];
    int64_t row = 0;
    bool mixed = false;
    for (int reg : {instr.a, instr.b, instr.c}) {
      const int64_t r = row_in(k, reg);
      if (r > 0 && row > 0 && r != row) mixed = true;
      if (r > 0) row = r;
    }
    if (!mixed) continue;
    for (int reg : {instr.a, instr.b, instr.c}) {
      if (row_in(k, reg) > 0) row_of[reg] = 0;
    }
  }
  for (int i = 0; i < num_inputs_; ++i) {
    if (as_scalar[i]) inputs_[i].access = Input::Access::kScalar;
    if (row_of[i] > 0) inputs_[i].access = Input::Access::kPeriodic;
  }
  for (int k = 0; k < num_prelude_; ++k) {
    if (row_of[num_inputs_ + k] == 0) repeated_.push_back(num_inputs_ + k);
  }
  const auto scalar = [&](int reg) { return reg >= 0 && reg < num_inputs_ && as_scalar[reg]; };
  for (size_t k = 0; k < instrs_.size(); ++k) {
    const Instr& instr = instrs_[k];
    if (instr.prelude) {
      // Only what repeats with a period dividing the prelude's size: one period of it.
      for (int reg : {instr.a, instr.b, instr.c}) {
        FT_CHECK(reg < num_inputs_ || is_prelude_result(reg));
        if (reg >= 0 && reg < num_inputs_) {
          FT_CHECK(inputs_[reg].access != Input::Access::kContiguous &&
                   inputs_[reg].access != Input::Access::kStrided &&
                   (inputs_[reg].access == Input::Access::kScalar ||
                    prelude_size_ % inputs_[reg].period == 0));
        }
      }
    }
    const int64_t ra = row_in(k, instr.a), rb = row_in(k, instr.b), rc = row_in(k, instr.c);
    const auto operand = [&](int reg, int64_t row) {
      return scalar(reg) ? Operand::kScalar : row > 0 ? Operand::kRow : Operand::kArray;
    };
    Plan plan{operand(instr.a, ra), operand(instr.b, rb), operand(instr.c, rc),
              std::max({ra, rb, rc})};
    if (dtype_ == kFloat32) {
      plan.f32 = Select<float>(instr.code, plan.a, plan.b, plan.c);
      FT_CHECK(plan.f32 != nullptr);
    } else {
      plan.f64 = Select<double>(instr.code, plan.a, plan.b, plan.c);
      FT_CHECK(plan.f64 != nullptr);
    }
    plans_.push_back(plan);
  }
  // Scratch slots. Inputs laid out or gathered, and prelude results, keep theirs for the
  // whole Run; a result of the run's own instructions that is not an output takes a slot
  // that an earlier such result no longer needs (its last reader has run; chunks are
  // independent). A destination never shares a slot with its own operands. Fewer slots keep
  // the step's scratch, with the tensors around it, inside the L1 cache. A mask output is
  // computed in a slot too and converted to bool as it is stored.
  scratch_slot_.assign(output_of_.size(), -1);
  for (int i = 0; i < num_inputs_; ++i) {
    const Input& in = inputs_[i];
    if (in.access == Input::Access::kFixed || in.access == Input::Access::kStrided ||
        (in.access == Input::Access::kPeriodic && !in.dense_period)) {
      scratch_slot_[i] = num_scratch_++;
    }
  }
  for (int k = 0; k < num_prelude_; ++k) scratch_slot_[num_inputs_ + k] = num_scratch_++;
  std::vector<int> last_reader(output_of_.size(), -1);
  for (size_t k = 0; k < instrs_.size(); ++k) {
    for (int reg : {instrs_[k].a, instrs_[k].b, instrs_[k].c}) {
      if (reg >= 0) last_reader[reg] = static_cast<int>(k);
    }
  }
  std::vector<int> free_slots;
  const auto own_result = [this](int reg) {  // a main instruction's result in scratch
    return reg >= num_inputs_ + num_prelude_ && (output_of_[reg] < 0 || is_mask_[reg]);
  };
  for (int k = num_prelude_; k < static_cast<int>(instrs_.size()); ++k) {
    const int r = num_inputs_ + k;
    if (own_result(r)) {
      if (free_slots.empty()) {
        scratch_slot_[r] = num_scratch_++;
      } else {
        scratch_slot_[r] = free_slots.back();
        free_slots.pop_back();
      }
    }
    const Instr& instr = instrs_[k];
    for (int reg : {instr.a, instr.b, instr.c}) {
      if (reg >= 0 && own_result(reg) && last_reader[reg] == k &&
          std::find(free_slots.begin(), free_slots.end(), scratch_slot_[reg]) ==
              free_slots.end()) {
        free_slots.push_back(scratch_slot_[reg]);  // once, though read twice (x * x)
      }
    }
    if (own_result(r) && last_reader[r] < 0) free_slots.push_back(scratch_slot_[r]);
  }

  // The donor: the first result-layout input, and the first output computed at or after
  // the last instruction that reads it.
  for (int i = 0; i < num_inputs_ && donor_ < 0; ++i) {
    if (!inputs_[i].result_layout || inputs_[i].access != Input::Access::kContiguous) continue;
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (outputs_[o] - num_inputs_ >= last_reader[i] && !is_mask_[outputs_[o]]) {
        donor_ = i;
        donor_output_ = static_cast<int>(o);
        break;
      }
    }
  }
}

void FusedKernel::Run(const Tensor* const* inputs, Tensor* outputs, bool reuse_donor) const {
  FT_CHECK(!reuse_donor || donor_ >= 0);
  if (dtype_ == kFloat32) {
    RunAs<float>(inputs, outputs, reuse_donor);
  } else {
    RunAs<double>(inputs, outputs, reuse_donor);
  }
}

template <typename T>
void FusedKernel::RunAs(const Tensor* const* inputs, Tensor* outputs, bool reuse_donor) const {
  absl::InlinedVector<void*, 8> out_data(outputs_.size());
  for (int k = 0; k < static_cast<int>(outputs_.size()); ++k) {
    outputs[k] = reuse_donor && k == donor_output_
                     ? *inputs[donor_]
                     : EmptyContiguous(sizes_, is_mask_[outputs_[k]] ? kBool : dtype_);
    out_data[k] = outputs[k].impl()->raw_data();
  }
  if (numel_ == 0) return;
  // The chunks are split over the intra-op threads, whole chunks per thread. Each thread
  // lays out its inputs and runs the prelude in its own scratch, and every chunk starts at
  // the same multiple of kChunk as in one pass, so the results are bit-identical to one
  // thread (and to eager: vecmath.h's results do not depend on where an array begins).
  const int64_t chunks = (numel_ + kChunk - 1) / kChunk;
  internal::ParallelFor(chunks, std::max<int64_t>(1, kParallelGrain / kChunk), 1, 0,
                        [&](int64_t first, int64_t last) {
                          RunChunks<T>(inputs, out_data.data(), first * kChunk,
                                       std::min(numel_, last * kChunk));
                        });
}

template <typename T>
void FusedKernel::RunChunks(const Tensor* const* inputs, void* const* out_data, int64_t first,
                            int64_t last) const {
  const int num_registers = static_cast<int>(output_of_.size());
  T* const scratch = Scratch<T>(static_cast<size_t>(num_scratch_) * kChunk);
  const auto scratch_of = [this, scratch](int reg) {
    return scratch + int64_t{scratch_slot_[reg]} * kChunk;
  };
  // reg[r]: where register r's current chunk is. data[i]: input i's elements.
  absl::InlinedVector<const T*, 32> reg(num_registers);
  absl::InlinedVector<const T*, 16> data(num_inputs_);  // null for a mask
  // WithData calls fn with input i's elements as they are stored: bool for a mask.
  const auto with_data = [&](int i, const auto& fn) {
    if (inputs_[i].mask) {
      fn(static_cast<const bool*>(inputs[i]->impl()->raw_data()));
    } else {
      fn(data[i]);
    }
  };
  for (int i = 0; i < num_inputs_; ++i) {
    if (!inputs_[i].mask) data[i] = static_cast<const T*>(inputs[i]->impl()->raw_data());
    if (inputs_[i].access == Input::Access::kScalar) {
      reg[i] = data[i];  // its one value; plans_ says which instructions read it so
    } else if (inputs_[i].access == Input::Access::kPeriodic) {
      if (inputs_[i].dense_period) {
        reg[i] = data[i];
      } else {
        with_data(i, [&](const auto* d) {
          FillFixed(d, inputs_[i], sizes_, inputs_[i].period, scratch_of(i));
        });
        reg[i] = scratch_of(i);
      }
    } else if (inputs_[i].access == Input::Access::kFixed) {
      with_data(i, [&](const auto* d) {
        FillFixed(d, inputs_[i], sizes_, std::min(kChunk, numel_), scratch_of(i));
      });
      reg[i] = scratch_of(i);
    }
  }
  // The prelude: once, over one period; a result read beside another period is repeated
  // over a chunk.
  for (int k = 0; k < num_prelude_; ++k) {
    T* dst = scratch_of(num_inputs_ + k);
    RunInstr<T>(static_cast<size_t>(k), dst, reg.data(), prelude_size_);
    reg[num_inputs_ + k] = dst;
  }
  for (int r : repeated_) RepeatPeriod(scratch_of(r), prelude_size_, std::min(kChunk, numel_));
  for (int64_t begin = first; begin < last; begin += kChunk) {
    const int64_t n = std::min(kChunk, last - begin);
    for (int i = 0; i < num_inputs_; ++i) {
      if (inputs_[i].access == Input::Access::kContiguous) {
        reg[i] = data[i] + begin;
      } else if (inputs_[i].access == Input::Access::kStrided) {
        with_data(i, [&](const auto* d) {
          Gather(d, inputs_[i].strides, sizes_, begin, n, scratch_of(i));
        });
        reg[i] = scratch_of(i);
      }
    }
    for (size_t k = num_prelude_; k < instrs_.size(); ++k) {
      const int r = num_inputs_ + static_cast<int>(k);
      const int out = output_of_[r];
      T* dst = out >= 0 && !is_mask_[r] ? static_cast<T*>(out_data[out]) + begin : scratch_of(r);
      RunInstr<T>(k, dst, reg.data(), n);
      reg[r] = dst;
      if (out >= 0 && is_mask_[r]) {
        bool* mask = static_cast<bool*>(out_data[out]) + begin;
        for (int64_t e = 0; e < n; ++e) mask[e] = dst[e] != T(0);
      }
    }
  }
}

template <typename T>
void FusedKernel::RunInstr(size_t k, T* dst, const T* const* reg, int64_t n) const {
  const Instr& instr = instrs_[k];
  const Plan& plan = plans_[k];
  const T* b = instr.b >= 0 ? reg[instr.b] : nullptr;
  const T* c = instr.c >= 0 ? reg[instr.c] : nullptr;
  const int64_t row = plan.row > 0 ? plan.row : n;  // n and chunk starts: whole rows
  if constexpr (std::is_same_v<T, float>) {
    plan.f32(dst, reg[instr.a], b, c, n, row, instr);
  } else {
    plan.f64(dst, reg[instr.a], b, c, n, row, instr);
  }
}

std::string FusedKernel::ToString() const {
  std::string out = "{";
  for (size_t k = 0; k < instrs_.size(); ++k) {
    const Instr& instr = instrs_[k];
    absl::StrAppend(&out, k == 0 ? " " : "; ");
    if (k == 0 && num_prelude_ > 0) absl::StrAppend(&out, "prelude[", prelude_size_, "] { ");
    const absl::string_view name = instr.code == Opcode::kActivation
                                       ? activation::FnName(instr.activation)
                                       : absl::string_view(Info(instr.code).op);
    absl::StrAppend(&out, "r", num_inputs_ + static_cast<int>(k), " = ", name, "(r", instr.a);
    if (instr.b >= 0) absl::StrAppend(&out, ", r", instr.b);
    if (instr.c >= 0) absl::StrAppend(&out, ", r", instr.c);
    absl::StrAppend(&out, ")");
    if (static_cast<int>(k) + 1 == num_prelude_) absl::StrAppend(&out, " }");
  }
  absl::StrAppend(&out, " } ->");
  for (int r : outputs_) absl::StrAppend(&out, " r", r);
  return out;
}

}  // namespace ft
