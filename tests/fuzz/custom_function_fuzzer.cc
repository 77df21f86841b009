// custom_function_fuzzer: custom Functions (ft::Function) inside a decoded function, under a
// decoded stack of transforms (transform_stack.h). The Functions are the autograd_function_db
// ones of tests/custom_function_db.h (correct rules, user and generated vmap rules, mark_dirty,
// non-differentiable outputs, non-tensor arguments and outputs, defaults) and misbehaving
// ones whose backward, jvp or vmap rule returns what a careless user writes: undefined or
// wrong-shaped or wrong-dtype gradients, too few or too many results, out_dims that do not
// fit, a rule that throws, an input returned without mark_dirty. Each must end in a value or
// an ft::Error naming the Function, never a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "custom_function/function.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tests/custom_function_db.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/op_table.h"
#include "tests/fuzz/transform_stack.h"

namespace ft::fuzz {
namespace {

// Behavior: how the misbehaving Functions' rules misbehave, set by the step that applies
// one (the rules run later, under the transforms, and read it then).
struct Behavior {
  int64_t backward = 0;
  int64_t jvp = 0;
  int64_t vmap = 0;
  int64_t count = 0;  // 0: right number of results, 1: one fewer, 2: one more
  bool dirty = true;
};
thread_local Behavior g_behavior;

// Misshape: what a rule returns instead of `good`, by mode.
Tensor Misshape(int64_t mode, const Tensor& good) {
  switch (mode) {
    case 1: return Tensor();                         // "no gradient"
    case 2: return unsqueeze(good, 0);               // an extra dim
    case 3: return sum(good);                        // a scalar
    case 4: return to(good, kFloat64);               // another float dtype
    case 5: return to(good, kInt64);                 // an integer dtype
    case 6: {                                        // oversized, to be reduced
      Shape big{3};
      big.insert(big.end(), good.sizes().begin(), good.sizes().end());
      return expand(unsqueeze(good, 0), big);
    }
    case 7: ThrowError("BadRule: thrown by a rule");
    case 8: return zeros({2, 3}, good.dtype());      // unrelated shape
    default: return good;
  }
}

TensorList Count(TensorList results) {
  if (g_behavior.count == 1 && !results.empty()) results.pop_back();
  if (g_behavior.count == 2) results.push_back(results.empty() ? Tensor() : results[0]);
  return results;
}

// BadScale: 2x with rules that misbehave as g_behavior says; a user vmap rule.
struct BadScale : Function<BadScale> {
  static constexpr const char* name = "BadScale";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    return Count({Misshape(g_behavior.backward, g[0] * 2.0)});
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) {
    return Count({Misshape(g_behavior.jvp, t[0] * 2.0)});
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo& info, const InDims& in_dims,
                                         const Tensor& x) {
    const std::optional<int64_t> d = in_dims[0];
    switch (g_behavior.vmap) {
      case 1: return {BadScale::apply(x), {}};                    // no out_dims
      case 2: return {BadScale::apply(x), {std::nullopt}};        // batched, but "unbatched"
      case 3: return {BadScale::apply(x), {x.dim() + 3}};         // out of range
      case 4: return {BadScale::apply(x), {d, d}};                // one too many
      case 5:                                                     // the wrong batch size
        return {BadScale::apply(d ? narrow(x, *d, 0, info.batch_size > 1 ? 1 : 0) : x), {d}};
      case 6: ThrowError("BadScale: thrown by its vmap rule");
      case 7: return {BadScale::apply(d ? movedim(x, *d, -1) : x), {-1}};  // fine: dim -1
      default: return {BadScale::apply(x), {d}};
    }
  }
};

// BadScaleGen: the same with the generated vmap rule (backward and jvp run vmapped).
struct BadScaleGen : Function<BadScaleGen> {
  static constexpr const char* name = "BadScaleGen";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    return Count({Misshape(g_behavior.backward, g[0] * 2.0)});
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) {
    return Count({Misshape(g_behavior.jvp, t[0] * 2.0)});
  }
};

// MulPair: (x * y, x + y) with broadcasting; saves both inputs; backward reduces to each
// input's shape with sum_to_size; mark_non_differentiable on the second output sometimes;
// set_materialize_grads(false), so a grad may be undefined.
struct MulPair : Function<MulPair> {
  static constexpr const char* name = "MulPair";
  static constexpr bool generate_vmap_rule = true;
  static std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& y) {
    return {x * y, x + y};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(in)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(in)});
    ctx.set_materialize_grads(g_behavior.backward % 2 == 0);
    if (g_behavior.jvp % 3 == 1) ctx.mark_non_differentiable({std::get<1>(out)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    // With materialize_grads off an undefined grad is an ft::Error inside the op (user bug).
    const Tensor gx = g[0] * y + g[1];
    const Tensor gy = g[0] * x + g[1];
    return Count({Misshape(g_behavior.backward / 2, sum_to_size(gx, x.sizes())),
                  sum_to_size(gy, y.sizes())});
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return Count({Misshape(g_behavior.jvp / 3, t[0] * y + x * t[1]), t[0] + t[1]});
  }
};

// ScaleInPlace: x *= 3 in place, returned; mark_dirty unless g_behavior says otherwise.
struct ScaleInPlace : Function<ScaleInPlace> {
  static constexpr const char* name = "ScaleInPlace";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return mul_(x, 3.0); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    if (g_behavior.dirty) ctx.mark_dirty({std::get<0>(in)});
    ctx.save_for_backward({out});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    return {Misshape(g_behavior.backward, g[0] * 3.0)};
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) {
    return {Misshape(g_behavior.jvp, t[0] * 3.0)};
  }
};

// Identity: returns its input as is and saves it (without mark_dirty: an ft::Error when a
// transform needs the difference); mark_dirty on a tensor that is not an input sometimes.
struct Identity : Function<Identity> {
  static constexpr const char* name = "Identity";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    ctx.save_for_backward({out});
    if (!g_behavior.dirty) ctx.mark_dirty({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return Count({g[0]}); }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return Count({t[0]}); }
};

// SumDim: sum(x, {dim}, keepdim) * scale with non-tensor arguments and a default; the shape
// kept in ctx state for backward.
struct SumDimState {
  Shape shape;
  int64_t dim = 0;
  bool keepdim = false;
  double scale = 1.0;
};
struct SumDim : Function<SumDim> {
  static constexpr const char* name = "SumDim";
  static constexpr bool generate_vmap_rule = true;
  static constexpr auto defaults = std::tuple{1.0};
  static Tensor forward(const Tensor& x, int64_t dim, bool keepdim, double scale) {
    return sum(x, {dim}, keepdim) * scale;
  }
  static void setup_context(FunctionCtx& ctx,
                            const std::tuple<Tensor, int64_t, bool, double>& in, const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<SumDimState>() = {Shape(x.sizes().begin(), x.sizes().end()), std::get<1>(in),
                                std::get<2>(in), std::get<3>(in)};
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const SumDimState& s = ctx.state<SumDimState>();
    const Tensor gk = s.keepdim ? g[0] : unsqueeze(g[0], s.dim);
    return Count({Misshape(g_behavior.backward, expand(gk, s.shape) * s.scale), Tensor(),
                  Tensor(), Tensor()});
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const SumDimState& s = ctx.state<SumDimState>();
    return Count({Misshape(g_behavior.jvp, SumDim::apply(t[0], s.dim, s.keepdim, s.scale))});
  }
};

// Reshaped: reshape(x, shape) with a Shape argument; backward reshapes back.
struct Reshaped : Function<Reshaped> {
  static constexpr const char* name = "Reshaped";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, const Shape& shape) { return reshape(x, shape); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Shape>& in,
                            const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<Shape>() = Shape(x.sizes().begin(), x.sizes().end());
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return Count({Misshape(g_behavior.backward, reshape(g[0], ctx.state<Shape>())), Tensor()});
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) {
    return Count({Misshape(g_behavior.jvp, clone(t[0]))});  // wrong shape unless trivial
  }
};

// ListSum: y * len(xs) + sum of the xs' sums: a TensorList argument (constants for it).
struct ListSum : Function<ListSum> {
  static constexpr const char* name = "ListSum";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const TensorList& xs, const Tensor& y) {
    Tensor total = y * static_cast<int64_t>(xs.size());
    for (const Tensor& x : xs) total = total + sum(x);
    return total;
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<TensorList, Tensor>& in,
                            const Tensor&) {
    ctx.state<int64_t>() = static_cast<int64_t>(std::get<0>(in).size());
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return Count({Tensor(), Misshape(g_behavior.backward, g[0] * ctx.state<int64_t>())});
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return Count({Misshape(g_behavior.jvp, t[1] * ctx.state<int64_t>())});
  }
};

// NoRules: forward only: every transform that needs a rule throws naming it.
struct NoRules : Function<NoRules> {
  static constexpr const char* name = "NoRules";
  static Tensor forward(const Tensor& x) { return sin(x); }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
};

// OnceDiff: once differentiable: differentiating its backward again is an ft::Error.
struct OnceDiff : Function<OnceDiff> {
  static constexpr const char* name = "OnceDiff";
  static constexpr bool once_differentiable = true;
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

// PutResult: every tensor of a Function's result (a Tensor or a tuple).
template <typename R>
void PutResult(Registers& r, const R& result) {
  if constexpr (std::is_same_v<R, Tensor>) {
    Put(r, result);
  } else {
    std::apply(
        [&r](const auto&... e) {
          auto one = [&r](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Tensor>) Put(r, v);
          };
          (one(e), ...);
        },
        result);
  }
}

// Permutation indices of x along dim (ind) and their inverse, as NumpyTake wants them.
std::pair<Tensor, Tensor> SortIndices(const Tensor& x, int64_t dim) {
  Tensor ind = std::get<1>(sort(x, dim));
  return {ind, argsort(ind, dim)};
}

// Mostly0: 0 two times in three, else a mode below n.
int64_t Mostly0(FuzzInput& in, int64_t n) { return in.Below(3) == 0 ? in.Below(n) : 0; }

void ApplyFunction(FuzzInput& in, Registers& r) {
  namespace db = function_db;
  g_behavior = {Mostly0(in, 9), Mostly0(in, 9), Mostly0(in, 8), Mostly0(in, 3),
                in.Below(4) != 0};
  const Tensor& x = Pick(in, r);
  switch (in.Below(22)) {
    case 0: PutResult(r, BadScale::apply(x)); break;
    case 1: PutResult(r, BadScaleGen::apply(x)); break;
    case 2: PutResult(r, MulPair::apply(x, Pick(in, r))); break;
    case 3: PutResult(r, ScaleInPlace::apply(x)); break;
    case 4: PutResult(r, Identity::apply(x)); break;
    case 5: {
      const int64_t dim = in.Dim(x.dim());
      const bool keepdim = in.Bool();
      if (in.Bool()) {
        PutResult(r, SumDim::apply(x, dim, keepdim));
      } else {
        PutResult(r, SumDim::apply(x, dim, keepdim, in.Double()));
      }
      break;
    }
    case 6: PutResult(r, Reshaped::apply(x, in.ShapeFor(x))); break;
    case 7: {
      TensorList xs(static_cast<size_t>(in.Below(3)));
      for (Tensor& t : xs) t = Pick(in, r);
      PutResult(r, ListSum::apply(xs, x));
      break;
    }
    case 8: PutResult(r, NoRules::apply(x)); break;
    case 9: PutResult(r, OnceDiff::apply(x)); break;
    case 10: PutResult(r, db::NumpyMul::apply(x, Pick(in, r))); break;
    case 11: PutResult(r, db::MulGenVmap::apply(x, Pick(in, r))); break;
    case 12: PutResult(r, db::NumpyCube::apply(x)); break;
    case 13: PutResult(r, db::CubeGenVmap::apply(x)); break;
    case 14: PutResult(r, db::NumpyCubeNotComposable::apply(x)); break;
    case 15: PutResult(r, db::NumpyExp_::apply(x)); break;
    case 16: {
      const int64_t dim = in.Dim(x.dim());
      PutResult(r, in.Bool() ? db::NumpySort::apply(x, dim) : db::SortGenVmap::apply(x, dim));
      break;
    }
    case 17: {
      const int64_t dim = in.Dim(x.dim());
      const Tensor& of = in.Bool() ? x : Pick(in, r);
      auto [ind, ind_inv] = SortIndices(of, in.Bool() ? dim : in.Dim(of.dim()));
      PutResult(r, in.Bool() ? db::NumpyTake::apply(x, ind, ind_inv, dim)
                             : db::TakeGenVmap::apply(x, ind, ind_inv, dim));
      break;
    }
    case 18: {
      const int64_t idx = in.Index(x.dim() == 0 ? 1 : x.size(0));
      PutResult(r, in.Bool() ? db::Select::apply(x, idx) : db::SelectGenVmap::apply(x, idx));
      break;
    }
    case 19: PutResult(r, db::ScaleGradGenVmap::apply(x)); break;
    case 20: PutResult(r, db::ZeroGradientsGenVmap::apply(x, Pick(in, r))); break;
    default: {
      if (in.Bool()) {
        PutResult(r, db::ForwardHasDefaultArgs::apply(x));
      } else {
        PutResult(r, db::ForwardHasDefaultArgs::apply(x, in.Index(x.dim() == 0 ? 1 : x.size(0))));
      }
      break;
    }
  }
}

// A step: a custom Function most of the time, a built-in op otherwise.
void FunctionStep(FuzzInput& in, Registers& r) {
  if (in.Below(3) == 0) {
    ApplyOp(in, r);
  } else {
    ApplyFunction(in, r);
  }
}

}  // namespace
}  // namespace ft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    ft::fuzz::RunStack(in, &ft::fuzz::FunctionStep);
  });
  return 0;
}
