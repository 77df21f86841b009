// ft/tests/custom_function_db.h  (testonly)
//
// The autograd_function_db Functions of functorch_semantics §3.1, written in C++ with their
// INTENDED math (the "[quirk]" notes of §3.1 say what is intended) using ft ops: the
// "Numpy*" ones have user vmap rules, the "*GenVmap" ones the generated rule. Shared by
// custom_function_db_test.cc (their numbers, the §3.4 vmap-API cases, regressions) and
// custom_function_matrix_test.cc (the transform matrix of §3.2).
#ifndef FT_TESTS_CUSTOM_FUNCTION_DB_H_
#define FT_TESTS_CUSTOM_FUNCTION_DB_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "custom_function/function.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft::function_db {


inline constexpr int64_t kB = 2;          // batch size of every vmap level
inline constexpr double kTol = 1e-10;     // atol and rtol of every comparison
inline constexpr double kScale = 3.14;    // ScaleGradGenVmap's factor

inline Tensor Rand(IntArrayRef shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * (high - low) + low;
}
inline Tensor F64(const std::vector<double>& values, IntArrayRef shape) { return tensor(values, shape); }
inline Tensor I64(const std::vector<int64_t>& values, IntArrayRef shape) {
  return tensor(values, shape);
}

// ---------------------------------------------------------------------------------------
// The §3.1 Functions.
// ---------------------------------------------------------------------------------------

// F4 NumpyMul: x * y with broadcasting; user vmap moves each batch dim last.
struct NumpyMul : Function<NumpyMul> {
  static constexpr const char* name = "NumpyMul";
  static Tensor forward(const Tensor& x, const Tensor& y) { return x * y; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(in)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {ctx.needs_input_grad(0) ? NumpyMul::apply(g[0], y) : Tensor(),
            ctx.needs_input_grad(1) ? NumpyMul::apply(g[0], x) : Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {NumpyMul::apply(t[0], y) + NumpyMul::apply(t[1], x)};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         const Tensor& y) {
    auto last = [](const Tensor& t, std::optional<int64_t> d) {
      return d ? movedim(t, *d, -1) : unsqueeze(t, -1);
    };
    Tensor r = NumpyMul::apply(last(x, in_dims[0]), last(y, in_dims[1]));
    return {movedim(r, -1, 0), {0}};
  }
};

// F5 MulGenVmap: the same with the generated rule; backward calls itself.
struct MulGenVmap : Function<MulGenVmap> {
  static constexpr const char* name = "MulGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, const Tensor& y) { return x * y; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(in)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {ctx.needs_input_grad(0) ? MulGenVmap::apply(g[0], y) : Tensor(),
            ctx.needs_input_grad(1) ? MulGenVmap::apply(g[0], x) : Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {t[0] * y + x * t[1]};
  }
};

// F1 NumpyCube: (x^3, 3x^2); its rules call NumpyMul; user vmap calls itself.
struct NumpyCube : Function<NumpyCube> {
  static constexpr const char* name = "NumpyCube";
  static std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x * x * x, x * x * 3.0}; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(out)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(out)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {NumpyMul::apply(g[0], dx) + NumpyMul::apply(g[1], x) * 6.0};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {NumpyMul::apply(t[0], dx), NumpyMul::apply(t[0], x) * 6.0};
  }
  static std::pair<std::tuple<Tensor, Tensor>, OutDims> vmap(const VmapInfo&,
                                                             const InDims& in_dims,
                                                             const Tensor& x) {
    return {NumpyCube::apply(x), {in_dims[0], in_dims[0]}};
  }
};

// F2 CubeGenVmap: generated rule; backward with the intended g1 * 6x (§3.1 quirk); jvp
// through MulGenVmap and NumpyMul.
struct CubeGenVmap : Function<CubeGenVmap> {
  static constexpr const char* name = "CubeGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x * x * x, x * x * 3.0}; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(out)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(out)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {g[0] * dx + g[1] * 6.0 * x};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {MulGenVmap::apply(t[0], dx), NumpyMul::apply(t[0], x) * 6.0};
  }
};

// F3 NumpyCubeNotComposable: once differentiable, a non-tensor second output, no vmap, no
// jvp. Intended backward g * 3x^2 (the db's ignores g).
struct NumpyCubeNotComposable : Function<NumpyCubeNotComposable> {
  static constexpr const char* name = "NumpyCubeNotComposable";
  static constexpr bool once_differentiable = true;
  static std::tuple<Tensor, double> forward(const Tensor& x) {
    return {x * x * x, sum(x).item<double>()};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in,
                            const std::tuple<Tensor, double>&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    return {g[0] * 3.0 * x * x};
  }
};

// F6 NumpyExp_: exp in place, mark_dirty; user vmap returns its (modified) input.
struct NumpyExp_ : Function<NumpyExp_> {
  static constexpr const char* name = "NumpyExp_";
  static Tensor forward(const Tensor& x) { return exp_(x); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    ctx.mark_dirty({std::get<0>(in)});
    ctx.save_for_backward({out});
    ctx.save_for_forward({out});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {NumpyMul::apply(g[0], ctx.saved_tensors()[0])};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * ctx.saved_tensors()[0]};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims,
                                         const Tensor& x) {
    return {NumpyExp_::apply(x), {in_dims[0]}};
  }
};

inline int64_t WrapDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// F9 NumpyTake: take_along_dim(x, ind, dim); backward takes along ind_inv. User vmap:
// unbatched operands expanded to B at the front, batch dims moved to 0, dim + 1 (negative
// dims wrapped with the logical rank, the intended form of the §3.1 quirk).
struct NumpyTake : Function<NumpyTake> {
  static constexpr const char* name = "NumpyTake";
  static Tensor forward(const Tensor& x, const Tensor& ind, const Tensor& ind_inv, int64_t dim) {
    return take_along_dim(x, ind, dim);
  }
  static void setup_context(FunctionCtx& ctx,
                            const std::tuple<Tensor, Tensor, Tensor, int64_t>& in,
                            const Tensor&) {
    ctx.save_for_backward({std::get<1>(in), std::get<2>(in)});
    ctx.save_for_forward({std::get<1>(in), std::get<2>(in)});
    ctx.state<int64_t>() = std::get<3>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {NumpyTake::apply(g[0], ind_inv, ind, ctx.state<int64_t>()), Tensor(), Tensor(),
            Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {NumpyTake::apply(t[0], ind, ind_inv, ctx.state<int64_t>())};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo& info, const InDims& in_dims,
                                         const Tensor& x, const Tensor& ind,
                                         const Tensor& ind_inv, int64_t dim) {
    auto front = [&info](const Tensor& t, std::optional<int64_t> d) {
      if (d) return movedim(t, *d, 0);
      Shape sizes{info.batch_size};
      sizes.insert(sizes.end(), t.sizes().begin(), t.sizes().end());
      return expand(unsqueeze(t, 0), sizes);
    };
    const int64_t rank = in_dims[0] ? x.dim() - 1 : x.dim();
    return {NumpyTake::apply(front(x, in_dims[0]), front(ind, in_dims[1]),
                             front(ind_inv, in_dims[2]), WrapDim(dim, rank) + 1),
            {0}};
  }
};

// F7 NumpySort: (sorted values, ind, ind_inv) along dim (the intended form: the db returns
// x unsorted); indices non-differentiable; rules through NumpyTake; user vmap.
struct NumpySort : Function<NumpySort> {
  static constexpr const char* name = "NumpySort";
  static std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x, int64_t dim) {
    auto [values, ind] = sort(x, dim);
    return {values, ind, argsort(ind, dim)};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const std::tuple<Tensor, Tensor, Tensor>& out) {
    ctx.mark_non_differentiable({std::get<1>(out), std::get<2>(out)});
    ctx.save_for_backward({std::get<1>(out), std::get<2>(out)});
    ctx.save_for_forward({std::get<1>(out), std::get<2>(out)});
    ctx.state<int64_t>() = std::get<1>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {NumpyTake::apply(g[0], ind_inv, ind, ctx.state<int64_t>()), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {NumpyTake::apply(t[0], ind, ind_inv, ctx.state<int64_t>()), Tensor(), Tensor()};
  }
  static std::pair<std::tuple<Tensor, Tensor, Tensor>, OutDims> vmap(const VmapInfo&,
                                                                     const InDims& in_dims,
                                                                     const Tensor& x,
                                                                     int64_t dim) {
    const int64_t rank = x.dim() - 1;
    return {NumpySort::apply(movedim(x, *in_dims[0], 0), WrapDim(dim, rank) + 1), {0, 0, 0}};
  }
};

// F8 TakeGenVmap / SortGenVmap: the same with built-in ops and generated rules.
struct TakeGenVmap : Function<TakeGenVmap> {
  static constexpr const char* name = "TakeGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, const Tensor& ind, const Tensor& ind_inv, int64_t dim) {
    return take_along_dim(x, ind, dim);
  }
  static void setup_context(FunctionCtx& ctx,
                            const std::tuple<Tensor, Tensor, Tensor, int64_t>& in,
                            const Tensor&) {
    ctx.save_for_backward({std::get<1>(in), std::get<2>(in)});
    ctx.save_for_forward({std::get<1>(in), std::get<2>(in)});
    ctx.state<int64_t>() = std::get<3>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {TakeGenVmap::apply(g[0], ind_inv, ind, ctx.state<int64_t>()), Tensor(), Tensor(),
            Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {TakeGenVmap::apply(t[0], ind, ind_inv, ctx.state<int64_t>())};
  }
};

struct SortGenVmap : Function<SortGenVmap> {
  static constexpr const char* name = "SortGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x, int64_t dim) {
    auto [values, ind] = sort(x, dim);
    return {values, ind, argsort(ind, dim)};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const std::tuple<Tensor, Tensor, Tensor>& out) {
    ctx.mark_non_differentiable({std::get<1>(out), std::get<2>(out)});
    ctx.save_for_backward({std::get<1>(out), std::get<2>(out)});
    ctx.save_for_forward({std::get<1>(out), std::get<2>(out)});
    ctx.state<int64_t>() = std::get<1>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {TakeGenVmap::apply(g[0], ind_inv, ind, ctx.state<int64_t>()), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const Tensor& ind_inv = ctx.saved_tensors()[1];
    return {TakeGenVmap::apply(t[0], ind, ind_inv, ctx.state<int64_t>()), Tensor(), Tensor()};
  }
};

// The gradient of x[idx] for x of shape `shape`: zeros with row idx = g, written with ops
// (a one-hot row times g) so that it batches and differentiates.
inline Tensor SelectBackward(const Tensor& g, const Shape& shape, int64_t idx) {
  Shape ones_shape(shape.size(), 1);
  ones_shape[0] = shape[0];
  Tensor row = reshape(select(eye(shape[0], g.dtype()), 0, idx), ones_shape);
  return expand(row * unsqueeze(g, 0), shape);
}

struct SelectState {
  Shape x_shape;
  int64_t idx = 0;
};

// F10 Select: x[idx]; setup stores the shape and idx (no tensors saved); user vmap moves
// the batch dim to 1 and selects with the built-in op.
struct Select : Function<Select> {
  static constexpr const char* name = "Select";
  static Tensor forward(const Tensor& x, int64_t idx) { return select(x, 0, idx); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<SelectState>() = {Shape(x.sizes().begin(), x.sizes().end()), std::get<1>(in)};
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const SelectState& s = ctx.state<SelectState>();
    return {SelectBackward(g[0], s.x_shape, s.idx), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {Select::apply(t[0], ctx.state<SelectState>().idx)};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         int64_t idx) {
    return {select(movedim(x, *in_dims[0], 1), 0, idx), {0}};
  }
};

// F11 SelectGenVmap: the generated rule; the stored shape must be an example's
// (setup_context runs under a fresh vmap), via ctx.state<Shape>().
struct SelectGenVmap : Function<SelectGenVmap> {
  static constexpr const char* name = "SelectGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, int64_t idx) { return select(x, 0, idx); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<Shape>() = Shape(x.sizes().begin(), x.sizes().end());
    ctx.state<int64_t>() = std::get<1>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {SelectBackward(g[0], ctx.state<Shape>(), ctx.state<int64_t>()), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {SelectGenVmap::apply(t[0], ctx.state<int64_t>())};
  }
};

// F12 ScaleGradGenVmap: identity forward; backward and jvp scale by kScale.
struct ScaleGradGenVmap : Function<ScaleGradGenVmap> {
  static constexpr const char* name = "ScaleGradGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return clone(x); }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0] * kScale}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {t[0] * kScale}; }
};

// F13 ZeroGradientsGenVmap: (clone x, clone y); backward returns an oversized unbatched
// zeros [3, 4, *x.shape] for x (must be reduced) and zeros for y; jvp returns zeros.
struct ZeroGradientsGenVmap : Function<ZeroGradientsGenVmap> {
  static constexpr const char* name = "ZeroGradientsGenVmap";
  static constexpr bool generate_vmap_rule = true;
  static std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& y) {
    return {clone(x), clone(y)};
  }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor, Tensor>&,
                            const std::tuple<Tensor, Tensor>&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    Shape big{3, 4};
    big.insert(big.end(), g[0].sizes().begin(), g[0].sizes().end());
    return {zeros(big, g[0].dtype()), zeros(g[1].sizes(), g[1].dtype())};
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) {
    return {zeros(t[0].sizes(), t[0].dtype()), zeros(t[1].sizes(), t[1].dtype())};
  }
};

// F14 ForwardHasDefaultArgs: x[idx] with idx defaulting to 2; rules like Select. Records
// the in_dims its vmap rule sees.
inline InDims g_default_args_in_dims;  // inline: the header is in several targets of one binary
struct ForwardHasDefaultArgs : Function<ForwardHasDefaultArgs> {
  static constexpr const char* name = "ForwardHasDefaultArgs";
  static constexpr auto defaults = std::tuple{int64_t{2}};
  static Tensor forward(const Tensor& x, int64_t idx) { return select(x, 0, idx); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<SelectState>() = {Shape(x.sizes().begin(), x.sizes().end()), std::get<1>(in)};
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const SelectState& s = ctx.state<SelectState>();
    return {SelectBackward(g[0], s.x_shape, s.idx), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {ForwardHasDefaultArgs::apply(t[0], ctx.state<SelectState>().idx)};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         int64_t idx) {
    g_default_args_in_dims = in_dims;
    return {select(movedim(x, *in_dims[0], 1), 0, idx), {0}};
  }
};

}  // namespace ft::function_db

#endif  // FT_TESTS_CUSTOM_FUNCTION_DB_H_
