// Collectives over vmap axes (the members are a vmap's examples), under every transform,
// against loops over the examples, closed forms, finite differences and jvp/vjp
// transposition. Process axes are tested in process_collectives_test.cc.
#include "distributed/collectives.h"

#include <gtest/gtest.h>

#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tree/transforms.h"

namespace ft {
namespace {

using testing::Rand;

VmapOptions Named(const std::string& axis, Dims in_dims = 0, Dims out_dims = 0) {
  VmapOptions options;
  options.in_dims = std::move(in_dims);
  options.out_dims = std::move(out_dims);
  options.axis_name = axis;
  return options;
}

// Each example's result, by a loop over the examples: f(i, x_i, all xs).
Tensor Loop(int64_t n, const std::function<Tensor(int64_t)>& f) {
  TensorList parts;
  for (int64_t i = 0; i < n; ++i) parts.push_back(f(i));
  return stack(parts, 0);
}

TEST(VmapAxis, PsumPmeanPmaxOverTheBatch) {
  const Tensor xs = Rand({5, 3}, 1);
  Tensor s = vmap(TensorFn([](const Tensor& x) { return psum(x, "i"); }), Named("i"))(xs);
  EXPECT_TENSOR_NEAR(s, expand(unsqueeze(sum(xs, {0}), 0), {5, 3}), 1e-12);
  Tensor m = vmap(TensorFn([](const Tensor& x) { return x - pmean(x, "i"); }), Named("i"))(xs);
  EXPECT_TENSOR_NEAR(m, xs - mean(xs, {0}, true), 1e-12);
  Tensor mx = vmap(TensorFn([](const Tensor& x) { return pmax(x, "i"); }), Named("i"))(xs);
  EXPECT_TENSOR_NEAR(mx, expand(amax(xs, {0}, true), {5, 3}), 0);
  // A batch dim elsewhere than 0.
  const Tensor xt = Rand({3, 4}, 2);
  Tensor st = vmap(TensorFn([](const Tensor& x) { return psum(x, "j"); }), Named("j", 1, 0))(xt);
  EXPECT_TENSOR_NEAR(st, expand(unsqueeze(sum(xt, {1}), 0), {4, 3}), 1e-12);
}

TEST(VmapAxis, UnbatchedInputIsTheSameOnEveryExample) {
  const Tensor xs = Rand({4, 2}, 3);
  const Tensor c = Rand({2}, 4);
  auto f = vmap(TensorListFn([](const TensorList& a) {
                  return TensorList{psum(a[1], "i"), pmax(a[1], "i"), axis_index("i")};
                }),
                Named("i", {0, std::nullopt}));
  TensorList out = f({xs, c});
  EXPECT_TENSOR_NEAR(out[0], expand(unsqueeze(c * 4.0, 0), {4, 2}), 1e-12);
  EXPECT_TENSOR_NEAR(out[1], expand(unsqueeze(c, 0), {4, 2}), 0);
  EXPECT_TENSOR_EQ(out[2], arange(Scalar(int64_t{4})));
  EXPECT_EQ(out[2].dtype(), kInt64);
}

TEST(VmapAxis, AllGatherStacksEveryExampleAtDim) {
  const Tensor xs = Rand({3, 2, 4}, 5);
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    auto f = vmap(TensorFn([dim](const Tensor& x) { return all_gather(x, "i", dim); }),
                  Named("i"));
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Tensor expected = Loop(3, [&](int64_t) { return movedim(xs, 0, d); });
    EXPECT_TENSOR_NEAR(f(xs), expected, 0) << "dim " << dim;
  }
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return all_gather(x, "i", 3); }),
                       Named("i"))(xs),
                  "all_gather: dim 3 is out of range for a tensor of rank 2");
}

TEST(VmapAxis, PsumScatterGivesEachExampleItsSum) {
  const int64_t n = 4;
  const Tensor xs = Rand({n, 3, n}, 6);  // each example: [3, n], scattered over dim 1
  auto f = vmap(TensorFn([](const Tensor& x) { return psum_scatter(x, "i", 1); }), Named("i"));
  Tensor expected = Loop(n, [&](int64_t i) { return select(sum(xs, {0}), 1, i); });
  EXPECT_TENSOR_NEAR(f(xs), expected, 1e-12);
  // The transpose pair: <all_gather(x), y> == <x, psum_scatter(y)> summed over members.
  const Tensor ys = Rand({n, 3, n, 2}, 7);
  const Tensor xs2 = Rand({n, 3, 2}, 8);
  Tensor gathered = vmap(TensorFn([](const Tensor& x) { return all_gather(x, "i", 1); }),
                         Named("i"))(xs2);
  Tensor scattered = vmap(TensorFn([](const Tensor& y) { return psum_scatter(y, "i", 1); }),
                          Named("i"))(ys);
  EXPECT_NEAR(sum(gathered * ys).item<double>(), sum(xs2 * scattered).item<double>(), 1e-12);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return psum_scatter(x, "i", 0); }),
                       Named("i"))(xs),
                  "psum_scatter: dim 0 of the input (shape [3, 4]) must have one entry per "
                  "member of axis 'i' (4)");
}

TEST(VmapAxis, PpermuteSendsEachValueToItsDestination) {
  const Tensor xs = Rand({4, 2}, 40);
  // A ring: member i gets member i - 1's value.
  auto ring = vmap(TensorFn([](const Tensor& x) {
                     return ppermute(x, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
                   }),
                   Named("i"));
  EXPECT_TENSOR_NEAR(ring(xs), cat({narrow(xs, 0, 3, 1), narrow(xs, 0, 0, 3)}, 0), 0);
  // Members nothing is sent to get zeros; an unbatched x is the same on every member.
  auto partial = vmap(TensorListFn([](const TensorList& a) {
                        return TensorList{ppermute(a[1], "i", {{2, 0}})};
                      }),
                      Named("i", {0, std::nullopt}));
  const Tensor c = Rand({2}, 41);
  Tensor got = partial({xs, c})[0];
  EXPECT_TENSOR_NEAR(select(got, 0, 0), c, 0);
  EXPECT_TENSOR_NEAR(narrow(got, 0, 1, 3), zeros({3, 2}, kFloat64), 0);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return ppermute(x, "i", {{0, 4}}); }),
                       Named("i"))(xs),
                  "ppermute: pair (0, 4) is out of range for axis 'i' of 4 members");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                         return ppermute(x, "i", {{0, 1}, {2, 1}});
                       }),
                       Named("i"))(xs),
                  "ppermute: member 1 appears twice as a destination");
}

TEST(VmapAxis, NestedNamesComposeAndTheInnermostNameWins) {
  const Tensor xs = Rand({2, 3, 4}, 9);
  // Inner over "j" (dim 1 of xs), outer over "i" (dim 0).
  auto inner = [](const Tensor& x) { return psum(psum(x, "j"), "i"); };
  Tensor total = vmap(TensorFn([&](const Tensor& row) {
                        return vmap(TensorFn(inner), Named("j"))(row);
                      }),
                      Named("i"))(xs);
  EXPECT_TENSOR_NEAR(total, expand(sum(xs, {0, 1}, true), {2, 3, 4}), 1e-12);
  // Over the outer name only, from inside the inner vmap: the batch of "j" rides along.
  Tensor over_i = vmap(TensorFn([](const Tensor& row) {
                         return vmap(TensorFn([](const Tensor& x) { return psum(x, "i"); }),
                                     Named("j"))(row);
                       }),
                       Named("i"))(xs);
  EXPECT_TENSOR_NEAR(over_i, expand(sum(xs, {0}, true), {2, 3, 4}), 1e-12);
  // The same name twice: the inner vmap's axis is meant.
  Tensor shadow = vmap(TensorFn([](const Tensor& row) {
                         return vmap(TensorFn([](const Tensor& x) { return psum(x, "i"); }),
                                     Named("i"))(row);
                       }),
                       Named("i"))(xs);
  EXPECT_TENSOR_NEAR(shadow, expand(sum(xs, {1}, true), {2, 3, 4}), 1e-12);
  // axis_index of the outer axis inside the inner vmap.
  Tensor idx = vmap(TensorFn([](const Tensor& row) {
                      return vmap(TensorFn([](const Tensor& x) {
                                    return x * 0.0 + to(axis_index("i"), kFloat64);
                                  }),
                                  Named("j"))(row);
                    }),
                    Named("i"))(xs);
  EXPECT_TENSOR_NEAR(select(idx, 0, 1), ones({3, 4}, kFloat64), 0);
}

TEST(VmapAxis, Errors) {
  const Tensor xs = Rand({3, 2}, 10);
  EXPECT_FT_ERROR(psum(xs, "nowhere"), "psum: axis name 'nowhere' is not in effect");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return psum(x, "k"); }), Named("i"))(xs),
                  "named axes in effect: 'i' (vmap, 3 members)");
  VmapOptions chunked = Named("i");
  chunked.chunk_size = 2;
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return psum(x, "i"); }), chunked)(xs),
                  "vmap: chunk_size (2) cannot be combined with axis_name 'i'");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return psum(gt(x, Scalar(0.0)), "i"); }),
                       Named("i"))(xs),
                  "psum: cannot sum a bool tensor");
  EXPECT_FT_ERROR(axis_size("i"), "axis_size: axis name 'i' is not in effect");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return pmean(to(x, kInt64), "i"); }),
                       Named("i"))(xs),
                  "pmean: needs a floating point tensor, got int64 (over axis 'i')");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                         return psum_scatter(gt(x, Scalar(0.0)), "i", 0);
                       }),
                       Named("i"))(xs),
                  "psum_scatter: cannot sum a bool tensor over axis 'i'");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                         return ppermute(x, "i", {{0, 1}, {0, 2}});
                       }),
                       Named("i"))(xs),
                  "ppermute: member 0 appears twice as a source in the pairs over axis 'i'");
  // A vmap axis is not a process axis; nothing bound at all is refused the same way.
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                         dist::PerProcessInputs local("i");
                         return x;
                       }),
                       Named("i"))(xs),
                  "PerProcessInputs: 'i' is not a process axis in effect (named axes in "
                  "effect: 'i' (vmap, 3 members))");
  EXPECT_FT_ERROR(dist::PerProcessInputs("dp"), "PerProcessInputs: 'dp' is not a process axis");
  EXPECT_FT_ERROR(dist::bind_axis("dp", nullptr), "bind_axis: axis 'dp' got a null group");
  // The name is gone once the vmap returned, also after an error inside it.
  EXPECT_EQ(NamedAxes::depth(), 0);
}

// The per-example loss of a linear model, and its batch mean over the axis.
Tensor Loss(const Tensor& w, const Tensor& x) {
  Tensor r = sum(w * x) - 1.0;
  return r * r;
}

TEST(VmapAxis, GradOfPmeanIsTheBatchMeanGradientOnEveryExample) {
  const int64_t n = 6;
  const Tensor w = Rand({3}, 11);
  const Tensor xs = Rand({n, 3}, 12);
  auto per_example = vmap(grad(ScalarFn([](const TensorList& a) {
                            return pmean(Loss(a[0], a[1]), "i");
                          })),
                          Named("i", {std::nullopt, 0}));
  Tensor g = per_example({w, xs})[0];
  // Oracle: the gradient of the mean of the losses, by a loop in plain ops.
  Tensor expected = grad(ScalarFn([&](const TensorList& a) {
                      Tensor total = zeros({}, kFloat64);
                      for (int64_t i = 0; i < n; ++i) total = total + Loss(a[0], select(xs, 0, i));
                      return total / static_cast<double>(n);
                    }))({w})[0];
  EXPECT_TENSOR_NEAR(g, expand(unsqueeze(expected, 0), {n, 3}), 1e-12);
  // A term on the shared parameter alone (weight decay) after the pmean is not summed
  // over the examples: no factor of n.
  auto decayed = vmap(grad(ScalarFn([](const TensorList& a) {
                        return pmean(Loss(a[0], a[1]), "i") + 0.5 * sum(a[0] * a[0]);
                      })),
                      Named("i", {std::nullopt, 0}));
  EXPECT_TENSOR_NEAR(decayed({w, xs})[0], expand(unsqueeze(expected + w, 0), {n, 3}), 1e-12);
  // psum instead of pmean: n times the mean.
  auto summed = vmap(grad(ScalarFn([](const TensorList& a) {
                       return psum(Loss(a[0], a[1]), "i");
                     })),
                     Named("i", {std::nullopt, 0}));
  EXPECT_TENSOR_NEAR(summed({w, xs})[0], expand(unsqueeze(expected * 6.0, 0), {n, 3}), 1e-11);
}

TEST(VmapAxis, PerExampleGradientsAreUnchangedByNamingTheAxis) {
  const Tensor w = Rand({3}, 13);
  const Tensor xs = Rand({5, 3}, 14);
  auto g = grad(ScalarFn([](const TensorList& a) { return Loss(a[0], a[1]); }));
  Tensor plain = vmap(g, {std::nullopt, 0})({w, xs})[0];
  Tensor named = vmap(g, Named("i", {std::nullopt, 0}))({w, xs})[0];
  EXPECT_TENSOR_EQ(named, plain);
}

TEST(VmapAxis, GradOfAPerExampleOutputThroughACollectiveIsRefused) {
  const Tensor w = Rand({3}, 15);
  const Tensor xs = Rand({4, 3}, 16);
  auto centered = vmap(grad(ScalarFn([](const TensorList& a) {
                         Tensor l = Loss(a[0], a[1]);
                         return l - pmean(l, "i");
                       })),
                       Named("i", {std::nullopt, 0}));
  EXPECT_FT_ERROR(centered({w, xs}), "grad: f's output varies over axis 'i'");
}

TEST(VmapAxis, GradOfTheBatchedInputThroughPsum) {
  // Gradient with respect to each example's own input: d/dx_i of psum(x)^2 / 2 summed...
  // per example: the objective psum(sum(x^2)) is one value; its gradient for x_i is 2 x_i.
  const Tensor xs = Rand({4, 3}, 17);
  auto f = vmap(grad(TensorFn([](const Tensor& x) { return psum(sum(x * x), "i"); })),
                Named("i"));
  EXPECT_TENSOR_NEAR(f(xs), 2.0 * xs, 1e-12);
  // all_gather's transpose takes the example's own slice.
  auto g = vmap(grad(TensorFn([](const Tensor& x) {
                  Tensor all = all_gather(x, "i", 0);  // [4, 3], the same for every example
                  return psum(sum(all * all), "i") / 4.0;
                })),
                Named("i"));
  EXPECT_TENSOR_NEAR(g(xs), 2.0 * xs, 1e-12);
}

TEST(VmapAxis, JvpAndVjpAreTransposesForEveryCollective) {
  const int64_t n = 3;
  const Tensor xs = Rand({n, 2, n}, 18);
  const std::vector<std::pair<const char*, TensorFn>> collectives = {
      {"psum", [](const Tensor& x) { return psum(x, "i"); }},
      {"pmean", [](const Tensor& x) { return pmean(x, "i"); }},
      {"all_gather", [](const Tensor& x) { return all_gather(x, "i", 1); }},
      {"psum_scatter", [](const Tensor& x) { return psum_scatter(x, "i", 1); }},
      {"ppermute", [](const Tensor& x) { return ppermute(x, "i", {{0, 2}, {2, 1}}); }},
  };
  for (const auto& entry : collectives) {
    // Named variables: lambdas below capture them (clang 14 cannot capture bindings).
    const char* name = entry.first;
    const TensorFn& c = entry.second;
    TensorFn batched = vmap(c, Named("i"));
    const Tensor v = Rand(xs.sizes(), 19);
    JvpResult j = jvp(TensorListFn([&](const TensorList& a) { return TensorList{batched(a[0])}; }),
                      {xs}, {v});
    // jvp inside the vmap as well: the collective applied to the tangent.
    TensorFn tangent_inside = vmap(
        TensorFn([&](const Tensor& x) {
          const Tensor t = ones_like(x);
          return jvp(TensorListFn([&](const TensorList& a) { return TensorList{c(a[0])}; }),
                     {x}, {t})
              .tangents[0];
        }),
        Named("i"));
    EXPECT_TENSOR_NEAR(tangent_inside(xs), batched(ones_like(xs)), 1e-12) << name;
    const Tensor u = Rand(j.outputs[0].sizes(), 20);
    VjpResult r = vjp(TensorListFn([&](const TensorList& a) { return TensorList{batched(a[0])}; }),
                      {xs});
    const Tensor back = r.vjp_fn({u})[0];
    EXPECT_NEAR(sum(j.tangents[0] * u).item<double>(), sum(v * back).item<double>(), 1e-12)
        << name;
  }
}

TEST(VmapAxis, PmaxHasNoDerivative) {
  const Tensor xs = Rand({3, 2}, 21);
  auto f = vmap(grad(TensorFn([](const Tensor& x) { return sum(pmax(x, "i")); })), Named("i"));
  EXPECT_FT_ERROR(f(xs), "no derivative formula for 'pmax'");
}

TEST(VmapAxis, JitReplaysCollectivesOverAVmapAxis) {
  const Tensor xs = Rand({4, 3}, 22);
  auto body = TensorListFn([](const TensorList& a) {
    return TensorList{vmap(TensorFn([](const Tensor& x) { return x / psum(sum(x), "i"); }),
                           Named("i"))(a[0])};
  });
  auto compiled = jit(body);
  Tensor first = compiled({xs})[0];
  const Tensor ys = Rand({4, 3}, 23);
  EXPECT_TENSOR_NEAR(compiled({ys})[0], ys / sum(ys), 1e-12);
  EXPECT_TENSOR_NEAR(first, xs / sum(xs), 1e-12);
}

TEST(VmapAxis, FunctionalizeSeesCollectives) {
  const Tensor xs = Rand({4, 3}, 24);
  auto f = functionalize(TensorListFn([](const TensorList& a) {
    return TensorList{vmap(TensorFn([](const Tensor& x) {
                             Tensor y = clone(x);
                             mul_(y, Scalar(2.0));
                             return psum(y, "i");
                           }),
                           Named("i"))(a[0])};
  }));
  EXPECT_TENSOR_NEAR(f({xs})[0], expand(sum(xs * 2.0, {0}, true), {4, 3}), 1e-12);
}

struct Member {
  Tensor w;
  Tensor b;
};
FT_TREE(Member, w, b);

Tensor MemberOutput(const Member& m, const Tensor& x) {
  // Each member's output, centred by the mean output over the members.
  Tensor y = sum(m.w * x) + m.b;
  return y - pmean(y, "member");
}

TEST(VmapAxis, TreeVmapNamesItsAxis) {
  const Member stacked{Rand({4, 3}, 30), Rand({4}, 31)};
  const Tensor x = Rand({3}, 32);
  auto f = vmap(&MemberOutput, TreeVmapOptions{.in_dims = {0, std::nullopt},
                                                .axis_name = "member"});
  Tensor out = f(stacked, x);
  Tensor raw = sum(stacked.w * x, {1}) + stacked.b;
  EXPECT_TENSOR_NEAR(out, raw - mean(raw), 1e-12);
}

}  // namespace
}  // namespace ft
