#include "tests/fuzz/op_table.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft::fuzz {

const Tensor& Pick(FuzzInput& in, const Registers& r) {
  return r[static_cast<size_t>(in.Below(static_cast<int64_t>(r.size())))];
}

void Put(Registers& r, const Tensor& t) {
  if (t.defined() && t.numel() > kMaxNumel) {
    ThrowError("fuzz: a result of ", t.numel(), " elements is not kept");
  }
  r.push_back(t);
}

void PutAll(Registers& r, const TensorList& ts) {
  // split and chunk can make many pieces: keep a few.
  for (size_t i = 0; i < ts.size() && i < 6; ++i) Put(r, ts[i]);
}

int64_t SizeAt(const Tensor& x, int64_t d) {
  const int64_t rank = x.dim();
  if (rank == 0) return 1;
  if (d < -rank || d >= rank) return 3;
  // An empty tensor's other sizes may reach INT64_MAX; callers add 1 (and Index adds 1 to
  // what it is given), which must not overflow in the harness itself.
  return std::min<int64_t>(x.size(d), std::numeric_limits<int64_t>::max() - 2);
}

namespace {

using OpFn = void (*)(FuzzInput&, Registers&);

struct OpEntry {
  const char* name;
  OpFn fn;
};

TensorList PickList(FuzzInput& in, const Registers& r) {
  TensorList ts(static_cast<size_t>(1 + in.Below(3)));
  for (Tensor& t : ts) t = Pick(in, r);
  return ts;
}

std::optional<Scalar> OptionalScalar(FuzzInput& in) {
  if (in.Below(3) == 0) return std::nullopt;
  return in.AnyScalar();
}

// Permutation: a permutation of rank dims (usually) or any dim list.
std::vector<int64_t> Permutation(FuzzInput& in, int64_t rank) {
  if (in.Below(4) == 0) return in.DimList(rank, rank + 1);
  std::vector<int64_t> p;
  for (int64_t i = 0; i < rank; ++i) p.push_back(i);
  for (int64_t i = rank - 1; i > 0; --i) std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(in.Below(i + 1))]);
  return p;
}

// IndexFor: an int64 index tensor for a dim of `bound` elements: made by a factory (a
// constant under transforms), or computed from a register (varies under vmap).
Tensor IndexFor(FuzzInput& in, const Registers& r, IntArrayRef shape, int64_t bound) {
  switch (in.Below(4)) {
    case 0:
      return to(Pick(in, r), kInt64);
    case 1: {
      const Tensor& x = Pick(in, r);
      return argsort(x, in.Dim(x.dim()));
    }
    default:
      return MakeIndex(in, shape, bound);
  }
}

// Binary: a binary op on tensor/tensor, tensor/scalar or scalar/tensor, where it exists.
template <typename F>
void Binary(FuzzInput& in, Registers& r, F op) {
  switch (in.Below(4)) {
    case 1:
      if constexpr (std::is_invocable_v<F, const Tensor&, Scalar>) {
        const Tensor& a = Pick(in, r);
        Put(r, op(a, in.AnyScalar()));
        return;
      }
      break;
    case 2:
      if constexpr (std::is_invocable_v<F, Scalar, const Tensor&>) {
        const Scalar a = in.AnyScalar();
        Put(r, op(a, Pick(in, r)));
        return;
      }
      break;
    default:
      break;
  }
  const Tensor& a = Pick(in, r);
  Put(r, op(a, Pick(in, r)));
}

// InPlace: an in-place binary op on a register with a tensor or a scalar.
template <typename F>
void InPlace(FuzzInput& in, Registers& r, F op) {
  const Tensor& self = Pick(in, r);
  if constexpr (std::is_invocable_v<F, const Tensor&, Scalar>) {
    if (in.Bool()) {
      Put(r, op(self, in.AnyScalar()));
      return;
    }
  }
  Put(r, op(self, Pick(in, r)));
}

template <typename F>
void Reduce(FuzzInput& in, Registers& r, F op) {
  const Tensor& x = Pick(in, r);
  const std::vector<int64_t> dims = in.DimList(x.dim(), 3);
  Put(r, op(x, dims, in.Bool()));
}

// A view of x for the write-through-view op.
Tensor SomeView(FuzzInput& in, const Tensor& x) {
  const int64_t d = in.Dim(x.dim());
  switch (in.Below(6)) {
    case 0:
      return select(x, d, in.Index(SizeAt(x, d)));
    case 1: {
      const int64_t start = in.Index(SizeAt(x, d));
      return narrow(x, d, start, in.Size());
    }
    case 2: {
      const int64_t offset = in.Index(3);
      return diagonal(x, offset, d, in.Dim(x.dim()));
    }
    case 3:
      return transpose(x, d, in.Dim(x.dim()));
    case 4:
      return slice(x, d, std::nullopt, std::nullopt, 1 + in.Below(3));
    default:
      return expand(x, in.ShapeFor(x));
  }
}

thread_local int tls_guard_depth = 0;

#define FT_FUZZ_UNARY(op) \
  {#op, [](FuzzInput& in, Registers& r) { Put(r, ft::op(Pick(in, r))); }}
#define FT_FUZZ_BINARY(op)                                                                 \
  {                                                                                        \
    #op, [](FuzzInput& in, Registers& r) {                                                 \
      Binary(in, r, [](const auto& a, const auto& b) -> decltype(ft::op(a, b)) { return ft::op(a, b); }); \
    }                                                                                      \
  }
#define FT_FUZZ_INPLACE(op)                                                                \
  {                                                                                        \
    #op, [](FuzzInput& in, Registers& r) {                                                 \
      InPlace(in, r, [](const Tensor& a, const auto& b) -> decltype(ft::op(a, b)) { return ft::op(a, b); }); \
    }                                                                                      \
  }
#define FT_FUZZ_REDUCE(op)                                                                 \
  {                                                                                        \
    #op, [](FuzzInput& in, Registers& r) {                                                 \
      Reduce(in, r, [](const Tensor& x, IntArrayRef d, bool k) { return ft::op(x, d, k); }); \
    }                                                                                      \
  }
#define FT_FUZZ_DIM(op)                                                                    \
  {                                                                                        \
    #op, [](FuzzInput& in, Registers& r) {                                                 \
      const Tensor& x = Pick(in, r);                                                       \
      Put(r, ft::op(x, in.Dim(x.dim())));                                                  \
    }                                                                                      \
  }
#define FT_FUZZ_OP(name) {#name, [](FuzzInput& in, Registers& r)

const OpEntry kOps[] = {
    // ---- unary ----
    FT_FUZZ_UNARY(neg), FT_FUZZ_UNARY(abs), FT_FUZZ_UNARY(sign), FT_FUZZ_UNARY(exp),
    FT_FUZZ_UNARY(expm1), FT_FUZZ_UNARY(log), FT_FUZZ_UNARY(log1p), FT_FUZZ_UNARY(sin),
    FT_FUZZ_UNARY(cos), FT_FUZZ_UNARY(tan), FT_FUZZ_UNARY(tanh), FT_FUZZ_UNARY(sigmoid),
    FT_FUZZ_UNARY(relu), FT_FUZZ_UNARY(sqrt), FT_FUZZ_UNARY(rsqrt), FT_FUZZ_UNARY(square),
    FT_FUZZ_UNARY(reciprocal), FT_FUZZ_UNARY(floor), FT_FUZZ_UNARY(round),
    FT_FUZZ_UNARY(logical_not), FT_FUZZ_UNARY(exp_),
    FT_FUZZ_OP(unary_minus) { Put(r, -Pick(in, r)); }},
    // ---- binary, comparison, logical ----
    FT_FUZZ_BINARY(add), FT_FUZZ_BINARY(sub), FT_FUZZ_BINARY(mul), FT_FUZZ_BINARY(div),
    FT_FUZZ_BINARY(pow), FT_FUZZ_BINARY(maximum), FT_FUZZ_BINARY(minimum),
    FT_FUZZ_BINARY(atan2), FT_FUZZ_BINARY(eq), FT_FUZZ_BINARY(ne), FT_FUZZ_BINARY(lt),
    FT_FUZZ_BINARY(le), FT_FUZZ_BINARY(gt), FT_FUZZ_BINARY(ge), FT_FUZZ_BINARY(logical_and),
    FT_FUZZ_BINARY(logical_or),
    FT_FUZZ_OP(operators) {
      const Tensor& a = Pick(in, r);
      const Tensor& b = Pick(in, r);
      switch (in.Below(4)) {
        case 0: Put(r, a + b); break;
        case 1: Put(r, a - in.AnyScalar()); break;
        case 2: Put(r, in.AnyScalar() * b); break;
        default: Put(r, a / b); break;
      }
    }},
    FT_FUZZ_OP(where) {
      const Tensor cond = in.Bool() ? Pick(in, r) : gt(Pick(in, r), 0);
      const Tensor& a = Pick(in, r);
      switch (in.Below(3)) {
        case 0: Put(r, where(cond, a, in.AnyScalar())); break;
        case 1: Put(r, where(cond, in.AnyScalar(), a)); break;
        default: Put(r, where(cond, a, Pick(in, r))); break;
      }
    }},
    FT_FUZZ_OP(clamp) {
      const Tensor& x = Pick(in, r);
      const std::optional<Scalar> lo = OptionalScalar(in);
      Put(r, clamp(x, lo, OptionalScalar(in)));
    }},
    // ---- in place ----
    FT_FUZZ_INPLACE(add_), FT_FUZZ_INPLACE(sub_), FT_FUZZ_INPLACE(mul_), FT_FUZZ_INPLACE(div_),
    FT_FUZZ_INPLACE(copy_),
    FT_FUZZ_OP(clamp_) {
      const Tensor& x = Pick(in, r);
      const std::optional<Scalar> lo = OptionalScalar(in);
      Put(r, clamp_(x, lo, OptionalScalar(in)));
    }},
    FT_FUZZ_OP(fill_) {
      const Tensor& x = Pick(in, r);
      Put(r, fill_(x, in.AnyScalar()));
    }},
    FT_FUZZ_OP(zero_) { Put(r, zero_(Pick(in, r))); }},
    FT_FUZZ_OP(compound_assign) {
      Tensor self = Pick(in, r);
      const Tensor& other = Pick(in, r);
      switch (in.Below(5)) {
        case 0: self += other; break;
        case 1: self -= other; break;
        case 2: self *= other; break;
        case 3: self /= other; break;
        default: self += in.AnyScalar(); break;
      }
      Put(r, self);
    }},
    FT_FUZZ_OP(write_through_view) {
      const Tensor& base = Pick(in, r);
      const Tensor v = SomeView(in, base);
      switch (in.Below(4)) {
        case 0: fill_(v, in.AnyScalar()); break;
        case 1: add_(v, Pick(in, r)); break;
        case 2: mul_(v, in.AnyScalar()); break;
        default: copy_(v, Pick(in, r)); break;
      }
      Put(r, base);
      if (in.Bool()) Put(r, v);
    }},
    // ---- reductions ----
    FT_FUZZ_REDUCE(sum), FT_FUZZ_REDUCE(mean), FT_FUZZ_REDUCE(prod), FT_FUZZ_REDUCE(amax),
    FT_FUZZ_REDUCE(amin), FT_FUZZ_REDUCE(logsumexp),
    FT_FUZZ_OP(var_std) {
      const Tensor& x = Pick(in, r);
      const std::vector<int64_t> dims = in.DimList(x.dim(), 3);
      const int64_t correction = in.Below(4) - 1;
      const bool keepdim = in.Bool();
      Put(r, in.Bool() ? var(x, dims, correction, keepdim) : ft::std(x, dims, correction, keepdim));
    }},
    FT_FUZZ_OP(norm) {
      static constexpr double kP[] = {2.0, 1.0, 0.0, 3.0, 0.5, -1.0,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN()};
      const Tensor& x = Pick(in, r);
      const double p = kP[in.Below(std::size(kP))];
      const std::vector<int64_t> dims = in.DimList(x.dim(), 3);
      Put(r, norm(x, p, dims, in.Bool()));
    }},
    FT_FUZZ_OP(argmax_argmin) {
      const Tensor& x = Pick(in, r);
      const std::optional<int64_t> d = in.OptionalDim(x.dim());
      const bool keepdim = in.Bool();
      Put(r, in.Bool() ? argmax(x, d, keepdim) : argmin(x, d, keepdim));
    }},
    FT_FUZZ_DIM(softmax), FT_FUZZ_DIM(log_softmax), FT_FUZZ_DIM(cumsum),
    FT_FUZZ_OP(sum_to_size) {
      const Tensor& x = Pick(in, r);
      Put(r, sum_to_size(x, in.ShapeFor(x)));
    }},
    // ---- linear algebra ----
    FT_FUZZ_BINARY(matmul), FT_FUZZ_BINARY(mm), FT_FUZZ_BINARY(bmm), FT_FUZZ_BINARY(dot),
    FT_FUZZ_BINARY(outer), FT_FUZZ_UNARY(t),
    FT_FUZZ_OP(linear) {
      const Tensor& x = Pick(in, r);
      const Tensor& w = Pick(in, r);
      std::optional<Tensor> bias;
      if (in.Bool()) bias = Pick(in, r);
      Put(r, linear(x, w, bias));
    }},
    // Solves, factorizations, determinants: random (often singular, non-square or
    // non-positive-definite) matrices, so their errors are most of the cases.
    FT_FUZZ_BINARY(linalg_solve),
    FT_FUZZ_OP(linalg_solve_triangular) {
      const Tensor& a = Pick(in, r);
      const Tensor& b = Pick(in, r);
      Put(r, linalg_solve_triangular(a, b, in.Bool()));
    }},
    FT_FUZZ_UNARY(cholesky), FT_FUZZ_UNARY(inverse), FT_FUZZ_UNARY(logdet),
    FT_FUZZ_OP(slogdet) {
      auto [sign, logabs] = slogdet(Pick(in, r));
      Put(r, sign);
      Put(r, logabs);
    }},
    // ---- views ----
    FT_FUZZ_OP(reshape) {
      const Tensor& x = Pick(in, r);
      Put(r, reshape(x, in.ShapeFor(x)));
    }},
    FT_FUZZ_OP(view) {
      const Tensor& x = Pick(in, r);
      Put(r, view(x, in.ShapeFor(x)));
    }},
    FT_FUZZ_OP(flatten) {
      const Tensor& x = Pick(in, r);
      const int64_t start = in.Dim(x.dim());
      Put(r, flatten(x, start, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(unflatten) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      Put(r, unflatten(x, d, in.Bool() ? Shape{-1, SizeAt(x, d)} : in.SizeList(3)));
    }},
    FT_FUZZ_OP(expand) {
      const Tensor& x = Pick(in, r);
      Shape sizes = in.ShapeFor(x);
      if (in.Bool()) sizes.insert(sizes.begin(), in.Size());
      Put(r, expand(x, sizes));
    }},
    FT_FUZZ_OP(expand_as) {
      const Tensor& x = Pick(in, r);
      Put(r, expand_as(x, Pick(in, r)));
    }},
    FT_FUZZ_OP(unsqueeze) {
      const Tensor& x = Pick(in, r);
      Put(r, unsqueeze(x, in.Dim(x.dim() + 1)));
    }},
    FT_FUZZ_UNARY(squeeze), FT_FUZZ_DIM(squeeze_dim),
    FT_FUZZ_OP(squeeze_dims) {
      const Tensor& x = Pick(in, r);
      Put(r, squeeze_dims(x, in.DimList(x.dim(), 3)));
    }},
    FT_FUZZ_OP(movedim) {
      const Tensor& x = Pick(in, r);
      if (in.Bool()) {
        const int64_t src = in.Dim(x.dim());
        Put(r, movedim(x, src, in.Dim(x.dim())));
      } else {
        const std::vector<int64_t> src = in.DimList(x.dim(), 3);
        Put(r, movedim(x, src, in.DimList(x.dim(), 3)));
      }
    }},
    FT_FUZZ_OP(permute) {
      const Tensor& x = Pick(in, r);
      Put(r, permute(x, Permutation(in, x.dim())));
    }},
    FT_FUZZ_OP(transpose) {
      const Tensor& x = Pick(in, r);
      const int64_t d0 = in.Dim(x.dim());
      Put(r, transpose(x, d0, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(select) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      Put(r, select(x, d, in.Index(SizeAt(x, d))));
    }},
    FT_FUZZ_OP(narrow) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      const int64_t start = in.Index(SizeAt(x, d));
      Put(r, narrow(x, d, start, in.Size()));
    }},
    FT_FUZZ_OP(slice) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      std::optional<int64_t> start, end;
      if (in.Bool()) start = in.Index(SizeAt(x, d));
      if (in.Bool()) end = in.Index(SizeAt(x, d) + 1);
      Put(r, slice(x, d, start, end, in.Bool() ? 1 : in.Size()));
    }},
    FT_FUZZ_OP(diagonal) {
      const Tensor& x = Pick(in, r);
      const int64_t offset = in.Index(3);
      const int64_t d1 = in.Dim(x.dim());
      Put(r, diagonal(x, offset, d1, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(select_scatter) {
      const Tensor& self = Pick(in, r);
      const int64_t d = in.Dim(self.dim());
      const int64_t i = in.Index(SizeAt(self, d));
      const Tensor src = in.Bool() ? Pick(in, r) : ones_like(select(self, d, i));
      Put(r, select_scatter(self, src, d, i));
    }},
    FT_FUZZ_OP(slice_scatter) {
      const Tensor& self = Pick(in, r);
      const int64_t d = in.Dim(self.dim());
      std::optional<int64_t> start, end;
      if (in.Bool()) start = in.Index(SizeAt(self, d));
      if (in.Bool()) end = in.Index(SizeAt(self, d) + 1);
      const int64_t step = in.Bool() ? 1 : in.Size();
      const Tensor src =
          in.Bool() ? Pick(in, r) : full_like(slice(self, d, start, end, step), in.AnyScalar());
      Put(r, slice_scatter(self, src, d, start, end, step));
    }},
    FT_FUZZ_OP(diagonal_scatter) {
      const Tensor& self = Pick(in, r);
      const int64_t offset = in.Index(3);
      const int64_t d1 = in.Dim(self.dim());
      const int64_t d2 = in.Dim(self.dim());
      const Tensor src = in.Bool() ? Pick(in, r) : zeros_like(diagonal(self, offset, d1, d2));
      Put(r, diagonal_scatter(self, src, offset, d1, d2));
    }},
    FT_FUZZ_UNARY(contiguous), FT_FUZZ_UNARY(clone),
    FT_FUZZ_OP(flip) {
      const Tensor& x = Pick(in, r);
      Put(r, flip(x, in.DimList(x.dim(), 3)));
    }},
    // ---- indexing, joining, splitting ----
    FT_FUZZ_OP(index_select) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      const Shape shape = in.Bool() ? Shape{} : Shape{in.Below(5)};
      Put(r, index_select(x, d, IndexFor(in, r, shape, SizeAt(x, d))));
    }},
    FT_FUZZ_OP(gather) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      Shape shape(x.sizes().begin(), x.sizes().end());
      if (!shape.empty() && in.Bool()) shape[static_cast<size_t>(in.Below(static_cast<int64_t>(shape.size())))] = in.Below(4);
      Put(r, gather(x, d, IndexFor(in, r, shape, SizeAt(x, d))));
    }},
    FT_FUZZ_OP(scatter_add) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      Shape shape(x.sizes().begin(), x.sizes().end());
      if (!shape.empty() && in.Bool()) shape[static_cast<size_t>(in.Below(static_cast<int64_t>(shape.size())))] = in.Below(3);
      const Tensor index = IndexFor(in, r, shape, SizeAt(x, d));
      const Tensor src = in.Bool() ? Pick(in, r) : ones_like(index, x.dtype());
      Put(r, scatter_add(x, d, index, src));
    }},
    FT_FUZZ_OP(take_along_dim) {
      const Tensor& x = Pick(in, r);
      const std::optional<int64_t> d = in.OptionalDim(x.dim());
      Shape shape(x.sizes().begin(), x.sizes().end());
      const int64_t bound = d ? SizeAt(x, *d) : x.numel();
      Put(r, take_along_dim(x, IndexFor(in, r, shape, bound), d));
    }},
    FT_FUZZ_OP(cat) {
      const TensorList ts = PickList(in, r);
      Put(r, cat(ts, in.Dim(ts[0].dim())));
    }},
    FT_FUZZ_OP(stack) {
      const TensorList ts = PickList(in, r);
      Put(r, stack(ts, in.Dim(ts[0].dim() + 1)));
    }},
    FT_FUZZ_OP(split) {
      const Tensor& x = Pick(in, r);
      const int64_t size = in.Size();
      PutAll(r, split(x, size, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(split_with_sizes) {
      const Tensor& x = Pick(in, r);
      const Shape sizes = in.SizeList(4);
      PutAll(r, split_with_sizes(x, sizes, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(chunk) {
      const Tensor& x = Pick(in, r);
      const int64_t chunks = in.Size();
      PutAll(r, chunk(x, chunks, in.Dim(x.dim())));
    }},
    FT_FUZZ_OP(repeat) {
      const Tensor& x = Pick(in, r);
      Put(r, repeat(x, in.SizeList(5)));
    }},
    FT_FUZZ_OP(pad) {
      const Tensor& x = Pick(in, r);
      const Shape pads = in.SizeList(6);
      Put(r, pad(x, pads, in.AnyScalar()));
    }},
    FT_FUZZ_OP(to) {
      const Tensor& x = Pick(in, r);
      Put(r, to(x, in.AnyDType()));
    }},
    FT_FUZZ_OP(one_hot) {
      const Tensor index = IndexFor(in, r, in.SizeList(2), 4);
      // An index expanded to many elements times many classes is a result one_hot rightly
      // allocates: gigabytes that the fuzzer's memory limit reports, not a bug. Such calls
      // are skipped; sizes whose bytes overflow or exceed any machine (ft::Error before
      // allocating) are still made.
      auto allocatable_but_large = [&](int64_t classes) {
        int64_t total = 0;
        if (__builtin_mul_overflow(index.numel(), std::max<int64_t>(classes, 0), &total)) {
          return false;
        }
        return total > kMaxNumel * kMaxNumel && total < (int64_t{1} << 37);
      };
      if (in.Bool()) {
        // Inferred classes (-1): the largest value + 1. A register cast to int64 can hold any
        // value, and one_hot would then rightly allocate gigabytes, so values above kMaxNumel
        // are clamped; negative ones stay, to reach the range error.
        if (allocatable_but_large(kMaxNumel + 1)) return;
        Put(r, one_hot(clamp(index, std::nullopt, Scalar(kMaxNumel)), -1));
      } else {
        const int64_t classes = in.Size();
        if (classes == -1) {  // inferred here too: the same clamp
          if (allocatable_but_large(kMaxNumel + 1)) return;
          Put(r, one_hot(clamp(index, std::nullopt, Scalar(kMaxNumel)), -1));
          return;
        }
        if (allocatable_but_large(classes)) return;
        Put(r, one_hot(index, classes));
      }
    }},
    // ---- sorting ----
    FT_FUZZ_OP(sort) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      auto [values, indices] = sort(x, d, in.Bool());
      Put(r, values);
      Put(r, indices);
    }},
    FT_FUZZ_OP(argsort) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      Put(r, argsort(x, d, in.Bool()));
    }},
    FT_FUZZ_OP(topk) {
      const Tensor& x = Pick(in, r);
      const int64_t d = in.Dim(x.dim());
      const int64_t k = in.Bool() ? in.Index(SizeAt(x, d) + 1) : in.Size();
      const bool largest = in.Bool();
      auto [values, indices] = topk(x, k, d, largest, in.Bool());
      Put(r, values);
      Put(r, indices);
    }},
    // ---- factories, like-factories and random ops ----
    FT_FUZZ_OP(like) {
      const Tensor& x = Pick(in, r);
      switch (in.Below(6)) {
        case 0: Put(r, zeros_like(x)); break;
        case 1: Put(r, ones_like(x, in.AnyDType())); break;
        case 2: Put(r, full_like(x, in.AnyScalar())); break;
        case 3: {
          const Scalar value = in.AnyScalar();
          Put(r, full_like(x, value, in.AnyDType()));
          break;
        }
        case 4: Put(r, zeros_like(x, in.AnyDType())); break;
        default: Put(r, ones_like(x)); break;
      }
    }},
    FT_FUZZ_OP(random) {
      const Tensor& x = Pick(in, r);
      switch (in.Below(5)) {
        case 0: Put(r, rand_like(x)); break;
        case 1: Put(r, randn_like(x)); break;
        case 2: Put(r, bernoulli(in.Bool() ? x : rand_like(x))); break;
        case 3: {
          const double p = in.Double();
          Put(r, dropout(x, p, in.Bool()));
          break;
        }
        default: {
          const int64_t low = in.Size();
          const int64_t high = in.Size();
          Put(r, randint(low, high, in.SizeList(3)));
          break;
        }
      }
    }},
    FT_FUZZ_OP(factory) {
      switch (in.Below(7)) {
        case 0: {
          const Shape shape = in.SizeList(3);
          Put(r, zeros(shape, in.AnyDType()));
          break;
        }
        case 1: {
          const Shape shape = in.SizeList(3);
          Put(r, full(shape, in.AnyScalar()));
          break;
        }
        case 2: {
          const double start = in.Double();
          const double end = in.Double();
          Put(r, arange(start, end, in.Double()));
          break;
        }
        case 3: {
          const double start = in.Double();
          const double end = in.Double();
          const int64_t steps = in.Size();
          Put(r, linspace(start, end, steps, in.FloatDType()));
          break;
        }
        case 4: {
          const int64_t n = in.Size();
          const int64_t m = in.Size();
          Put(r, eye(n, m, in.AnyDType()));
          break;
        }
        case 5: {
          const Scalar value = in.AnyScalar();
          Put(r, scalar_tensor(value, in.AnyDType()));
          break;
        }
        default: Put(r, MakeTensor(in, {.max_rank = 3, .max_size = 4})); break;
      }
    }},
    // ---- reading values, grad-mode guards, undefined tensors ----
    FT_FUZZ_OP(read_values) {
      const Tensor& x = Pick(in, r);
      if (x.numel() == 1 && in.Bool()) {
        Put(r, scalar_tensor(to(x, kFloat64).item<double>() + 1.0));
      } else {
        const std::vector<double> v = to(x, kFloat64).to_vector<double>();
        Put(r, scalar_tensor(static_cast<int64_t>(v.size())));
      }
    }},
    FT_FUZZ_OP(allclose) {
      const Tensor& a = Pick(in, r);
      const Tensor& b = Pick(in, r);
      Put(r, scalar_tensor(allclose(a, b, 1e-5, 1e-8, in.Bool())));
    }},
    FT_FUZZ_OP(guarded) {
      // The next op under no_grad or no_fwd_grad (one level deep).
      if (tls_guard_depth > 0) return;
      ++tls_guard_depth;
      struct Leave {
        ~Leave() { --tls_guard_depth; }
      } leave;
      if (in.Bool()) {
        NoGradGuard no_grad;
        ApplyOp(in, r);
      } else {
        NoFwdGradGuard no_fwd_grad;
        ApplyOp(in, r);
      }
    }},
    FT_FUZZ_OP(undefined) {
      if (in.Below(4) == 0) Put(r, Tensor());
    }},
};

#undef FT_FUZZ_UNARY
#undef FT_FUZZ_BINARY
#undef FT_FUZZ_INPLACE
#undef FT_FUZZ_REDUCE
#undef FT_FUZZ_DIM
#undef FT_FUZZ_OP

}  // namespace

const char* ApplyOp(FuzzInput& in, Registers& regs) {
  const OpEntry& op = kOps[static_cast<size_t>(in.Below(NumOps()))];
  if (Verbose()) std::fprintf(stderr, "  op %s on %zu registers\n", op.name, regs.size());
  op.fn(in, regs);
  return op.name;
}

int64_t NumOps() { return static_cast<int64_t>(std::size(kOps)); }

}  // namespace ft::fuzz
