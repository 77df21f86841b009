#include "tensor/copy.h"

#include <algorithm>
#include <array>
#include <complex>
#include <type_traits>

#include "tensor/loops.h"

namespace ft::kernels {
namespace {

// ConvertLoop: dst = ConvertElement<Out>(src) elementwise, for the pairs that involve a dtype
// beyond the original four (complex, 16-bit floating, narrow integers). Plain loops, which
// the compiler vectorizes for the integer and float pairs; the 16-bit floating types
// convert one element at a time.
template <typename In, typename Out>
void ConvertLoop(const Tensor& dst, const Tensor& src) {
  const int64_t total = dst.numel();
  if (dst.is_contiguous() && src.is_contiguous() && src.numel() == total) {
    Out* po = static_cast<Out*>(dst.impl()->raw_data());
    const In* pi = static_cast<const In*>(src.impl()->raw_data());
    internal::ParallelRun(po, total, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) po[i] = ConvertElement<Out>(pi[i]);
    });
    return;
  }
  std::array<internal::Operand, 2> ops = {internal::MakeOperand(dst, dst.sizes()),
                                          internal::MakeOperand(src, dst.sizes())};
  internal::ForEachStrided<2>(dst.sizes(), ops, [&](const std::array<char*, 2>& p,
                                                    const std::array<int64_t, 2>& s,
                                                    int64_t n) {
    char* o = p[0];
    const char* a = p[1];
    for (int64_t i = 0; i < n; ++i, o += s[0], a += s[1]) {
      const In v = *reinterpret_cast<const In*>(a);
      *reinterpret_cast<Out*>(o) = ConvertElement<Out>(v);
    }
  });
}

}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  // Validates that src broadcasts to dst (throws with both shapes otherwise), also when dst
  // has no elements: copying 3 values into a size-0 tensor is an error, as in PyTorch.
  Shape b = BroadcastShapes("copy_", dst.sizes(), src.sizes());
  if (!std::equal(b.begin(), b.end(), dst.sizes().begin(), dst.sizes().end())) {
    ThrowError("copy_: source of shape ", ShapeToString(src.sizes()),
               " cannot be broadcast to the destination shape ", ShapeToString(dst.sizes()));
  }
  if (Numel(dst.sizes()) == 0) return;
  if (IsOriginalDType(dst.dtype()) && IsOriginalDType(src.dtype())) {
    // The original four among themselves: Eigen's vectorized casts.
    VisitDType(dst.dtype(), [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      VisitDType(src.dtype(), [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        internal::UnaryLoop<In, Out>(dst, src, [](const auto& a) {
          if constexpr (std::is_same_v<Out, bool> && !std::is_same_v<In, bool>) {
            return a != In(0);
          } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<In>) {
            // NaN, infinities and out-of-range values: defined (ConvertElement), not UB.
            return a.unaryExpr([](In v) { return ConvertElement<Out>(v); });
          } else {
            return a.template cast<Out>();
          }
        });
      });
    });
    return;
  }
  VisitEveryDType(dst.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    VisitEveryDType(src.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      ConvertLoop<In, Out>(dst, src);
    });
  });
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = EmptyContiguous(t.sizes(), t.dtype());
  copy_into(out, t);
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = EmptyContiguous(t.sizes(), t.dtype());
  copy_into(out, t);
  return out;
}

Tensor stop_gradient(const Tensor& t) { return clone(t); }

Tensor to(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = EmptyContiguous(t.sizes(), dtype);
  copy_into(out, t);
  return out;
}

}  // namespace ft::kernels
