// The transforms over trees against independent oracles: central differences in float64
// (grad, jacrev, jacfwd, jvp), loops over examples (vmap), <J t, c> == <t, J^T c> (vjp
// against jvp), closed forms (hessian of a quadratic), eager calls (jit), and every error.
#include "tree/transforms.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tree/tree.h"

namespace ft {
namespace tree_transforms_test {

using testing::Rand;

struct Mlp {
  Tensor w1, b1, w2, b2;
  double slope = 1.0;  // a static leaf: passes through
};
FT_TREE(Mlp, w1, b1, w2, b2, slope);

Mlp MakeMlp(uint64_t seed) {
  return {Rand({3, 4}, seed), Rand({4}, seed + 1), Rand({4, 2}, seed + 2), Rand({2}, seed + 3),
          0.5};
}

// loss: one example x [3], target y [2].
Tensor Forward(const Mlp& p, const Tensor& x) {
  Tensor h = tanh(matmul(x, p.w1) + p.b1) * p.slope;
  return matmul(h, p.w2) + p.b2;
}
Tensor Loss(const Mlp& p, const Tensor& x, const Tensor& y) {
  Tensor d = Forward(p, x) - y;
  return sum(d * d);
}

// CentralDifference: d f / d leaf, element by element, for every tensor leaf of `tree` (f of
// the tree alone), as a tree of tree's structure.
template <typename T, typename Fn>
T CentralDifference(const T& tree, Fn f) {
  constexpr double kEps = 1e-6;
  return tree_map(
      [&](const Tensor& leaf) {
        Tensor out = zeros_like(leaf);
        std::vector<double> base = leaf.to_vector<double>();
        std::vector<double> diff(base.size());
        for (size_t i = 0; i < base.size(); ++i) {
          auto at = [&](double delta) {
            std::vector<double> moved = base;
            moved[i] += delta;
            // Rebuild the tree with this leaf moved (leaves are compared by identity).
            T shifted = tree_map(
                [&](const Tensor& l) {
                  return l.is_same(leaf) ? reshape(tensor(moved), leaf.sizes()) : l;
                },
                tree);
            return f(shifted).template item<double>();
          };
          diff[i] = (at(kEps) - at(-kEps)) / (2 * kEps);
        }
        return reshape(tensor(diff), leaf.sizes());
      },
      tree);
}

template <typename T>
void ExpectTreeNear(const T& a, const T& b, double tol) {
  EXPECT_TRUE(tree_structure(a) == tree_structure(b))
      << tree_structure(a).ToString() << " vs " << tree_structure(b).ToString();
  const TensorList la = tree_leaves(a), lb = tree_leaves(b);
  const std::vector<std::string> paths = tree_leaf_paths(a);
  for (size_t i = 0; i < la.size(); ++i) {
    SCOPED_TRACE(paths[i]);
    EXPECT_TENSOR_NEAR(la[i], lb[i], tol);
  }
}

double Dot(const TensorList& a, const TensorList& b) {
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i) total += sum(a[i] * b[i]).item<double>();
  return total;
}

// The TensorList forms keep their types and meaning.
static_assert(std::is_same_v<decltype(grad(ScalarFn())), TensorListFn>);
static_assert(std::is_same_v<decltype(grad(TensorFn())), TensorFn>);
static_assert(std::is_same_v<decltype(vmap(TensorFn())), TensorFn>);
static_assert(!TreeFunction<TensorListFn> && !TreeFunction<ScalarFn>);
static_assert(TreeFunction<decltype(&Loss)>);
static_assert(TreeFunction<TensorFn> && !TreeFunctionBesideTensorFn<TensorFn>);

TEST(TreeTransforms, FunctionsOfOneTensorGoThroughEveryTransform) {
  auto f = [](const Tensor& v) { return sum(tanh(v)); };
  auto g = [](const Tensor& v) { return tanh(v); };
  const Tensor x = Rand({3}, 5), t = Rand({3}, 6);
  const Tensor sech2 = 1.0 - tanh(x) * tanh(x);
  EXPECT_TENSOR_NEAR(grad(f)(x), sech2, 1e-15);
  EXPECT_TENSOR_NEAR(jacrev(g)(x), eye(3, kFloat64) * sech2, 1e-15);
  EXPECT_TENSOR_NEAR(jacfwd(g)(x), eye(3, kFloat64) * sech2, 1e-15);
  EXPECT_TENSOR_NEAR(hessian(f)(x), eye(3, kFloat64) * (sech2 * tanh(x) * -2.0), 1e-14);
  EXPECT_TENSOR_NEAR(jvp(g, x, t).tangents, sech2 * t, 1e-15);
  EXPECT_TENSOR_NEAR(vjp(g, x).vjp_fn(t), sech2 * t, 1e-15);
  EXPECT_TENSOR_NEAR(jit(g)(x), tanh(x), 1e-15);
}

TEST(TreeTransforms, GradIsAnMlpAgainstCentralDifferences) {
  const Mlp p = MakeMlp(1);
  const Tensor x = Rand({3}, 10), y = Rand({2}, 11);
  Mlp g = grad(&Loss)(p, x, y);
  EXPECT_EQ(g.slope, 0.5);  // static leaves pass through
  ExpectTreeNear(g, CentralDifference(p, [&](const Mlp& q) { return Loss(q, x, y); }), 1e-7);
  // Several arguments: a tuple, in argnums order.
  auto [gx, gp] = grad(&Loss, argnums<1, 0>)(p, x, y);
  static_assert(std::is_same_v<decltype(gx), Tensor> && std::is_same_v<decltype(gp), Mlp>);
  ExpectTreeNear(gp, g, 0);
  ExpectTreeNear(gx, CentralDifference(x, [&](const Tensor& v) { return Loss(p, v, y); }), 1e-7);
  // grad_and_value, and has_aux (a pair whose second member is any tree).
  auto gv = grad_and_value(&Loss)(p, x, y);
  EXPECT_NEAR(gv.value.item<double>(), Loss(p, x, y).item<double>(), 1e-15);
  ExpectTreeNear(gv.grads, g, 0);
  auto with_aux = [](const Mlp& q, const Tensor& v, const Tensor& t)
      -> std::pair<Tensor, std::map<std::string, Tensor>> {
    Tensor out = Forward(q, v);
    return {sum((out - t) * (out - t)), {{"prediction", out}}};
  };
  auto [g_aux, aux] = grad(with_aux)(p, x, y);
  ExpectTreeNear(g_aux, g, 1e-15);
  EXPECT_TENSOR_NEAR(aux.at("prediction"), Forward(p, x), 1e-15);
  // A lambda over trees, nested: grad of (the squared norm of grad).
  auto norm = [](const Mlp& q, const Tensor& v, const Tensor& t) {
    const TensorList leaves = tree_leaves(grad(&Loss)(q, v, t));
    Tensor total = sum(leaves[0] * leaves[0]);
    for (size_t i = 1; i < leaves.size(); ++i) total = total + sum(leaves[i] * leaves[i]);
    return total;
  };
  ExpectTreeNear(grad(norm)(p, x, y),
                 CentralDifference(p, [&](const Mlp& q) { return norm(q, x, y); }), 1e-6);
}

TEST(TreeTransforms, PerExampleGradientsAgainstALoop) {
  const Mlp p = MakeMlp(2);
  const Tensor xs = Rand({5, 3}, 20), ys = Rand({5, 2}, 21);
  Mlp per_example = vmap(grad(&Loss), {std::nullopt, 0, 0})(p, xs, ys);
  EXPECT_EQ(per_example.slope, 0.5);
  for (int64_t b = 0; b < 5; ++b) {
    SCOPED_TRACE(b);
    Mlp one = grad(&Loss)(p, select(xs, 0, b), select(ys, 0, b));
    ExpectTreeNear(tree_map([b](const Tensor& t) { return select(t, 0, b); }, per_example), one,
                   1e-14);
  }
  // Batch dims per field (an ensemble of w2 and b2 over shared w1, b1), the output's batch dim
  // last for one field, a Fields prefix and a map output.
  Mlp stacked = p;
  stacked.w2 = stack({p.w2, p.w2 * 2.0, p.w2 * 3.0}, 0);
  stacked.b2 = stack({p.b2, p.b2 - 1.0, p.b2 + 1.0}, 0);
  const Tensor x = Rand({3}, 22);
  auto predict = [](const Mlp& q, const Tensor& v) -> std::map<std::string, Tensor> {
    return {{"out", Forward(q, v)}, {"w2_sum", sum(q.w2)}};
  };
  const TreeDims member_dims = TreeDims::Fields(
      {{"w1", std::nullopt}, {"b1", std::nullopt}, {"w2", 0}, {"b2", 0}, {"slope", 0}});
  auto ensemble = vmap(predict, {member_dims, std::nullopt},
                       TreeDims::Fields({{"out", -1}, {"w2_sum", 0}}))(stacked, x);
  for (int64_t m = 0; m < 3; ++m) {
    Mlp member = p;
    member.w2 = select(stacked.w2, 0, m);
    member.b2 = select(stacked.b2, 0, m);
    EXPECT_TENSOR_NEAR(select(ensemble.at("out"), 1, m), Forward(member, x), 1e-14);
    EXPECT_NEAR(select(ensemble.at("w2_sum"), 0, m).item<double>(),
                sum(member.w2).item<double>(), 1e-13);
  }
  EXPECT_EQ(ensemble.at("out").sizes()[1], 3);
}

// A tree-to-tree function: an Mlp and an input to a pair (prediction, hidden activations).
std::pair<Tensor, std::vector<Tensor>> Layers(const Mlp& p, const Tensor& x) {
  Tensor h = tanh(matmul(x, p.w1) + p.b1);
  return {matmul(h, p.w2) + p.b2, {h, h * h}};
}

TEST(TreeTransforms, VjpAndJvpAreTransposesAndJvpMatchesDifferences) {
  const Mlp p = MakeMlp(3);
  const Tensor x = Rand({3}, 30);
  const Mlp tp = MakeMlp(40);
  const Tensor tx = Rand({3}, 41);
  TreeJvpResult<std::pair<Tensor, std::vector<Tensor>>> j =
      jvp(&Layers, std::tuple{p, x}, std::tuple{tp, tx});
  auto v = vjp(&Layers, p, x);
  EXPECT_TENSOR_NEAR(j.outputs.first, Layers(p, x).first, 1e-15);
  EXPECT_TENSOR_NEAR(v.outputs.second[1], Layers(p, x).second[1], 1e-15);
  const std::pair<Tensor, std::vector<Tensor>> c{Rand({2}, 50), {Rand({4}, 51), Rand({4}, 52)}};
  auto [cp, cx] = v.vjp_fn(c);
  // <J t, c> == <t, J^T c> (the static leaf has no tangent and no cotangent).
  const double left = Dot(tree_leaves(j.tangents), tree_leaves(c));
  const double right = Dot(tree_leaves(tp), tree_leaves(cp)) + Dot({tx}, {cx});
  EXPECT_NEAR(left, right, 1e-12);
  // jvp against a central difference along (tp, tx).
  constexpr double kEps = 1e-6;
  auto along = [&](double e) {
    Mlp q = tree_map([e](const Tensor& a, const Tensor& b) { return a + b * e; }, p, tp);
    return Layers(q, x + tx * e);
  };
  const auto plus = along(kEps), minus = along(-kEps);
  EXPECT_TENSOR_NEAR(j.tangents.first, (plus.first - minus.first) / (2 * kEps), 1e-7);
  EXPECT_TENSOR_NEAR(j.tangents.second[1], (plus.second[1] - minus.second[1]) / (2 * kEps),
                     1e-7);
  // One argument: jvp(f, x, t).
  auto quad = [](const Mlp& q) { return sum(q.w1 * q.w1); };
  EXPECT_NEAR(jvp(quad, p, tp).tangents.item<double>(), 2 * sum(p.w1 * tp.w1).item<double>(),
              1e-13);
}

TEST(TreeTransforms, JacobiansAndHessianAgainstDifferencesAndClosedForms) {
  const Mlp p = MakeMlp(4);
  const Tensor x = Rand({3}, 60);
  auto out0 = [&x](const Mlp& q) { return Forward(q, x); };  // [2]
  Mlp jr = jacrev(out0)(p);
  Mlp jf = jacfwd(out0)(p);
  ExpectTreeNear(jr, jf, 1e-13);
  EXPECT_EQ(jr.w1.sizes(), (Shape{2, 3, 4}));
  // Row k of the Jacobian is the gradient of output k.
  for (int64_t k = 0; k < 2; ++k) {
    Mlp row = tree_map([k](const Tensor& t) { return select(t, 0, k); }, jr);
    ExpectTreeNear(row, CentralDifference(p, [&](const Mlp& q) {
                     return select(Forward(q, x), 0, k);
                   }),
                   1e-7);
  }
  // Two arguments: a tuple of their trees, in argnums order.
  auto out_of_both = [](const Mlp& q, const Tensor& v) { return Forward(q, v); };
  auto [jx, jp] = jacfwd(out_of_both, argnums<1, 0>)(p, x);
  ExpectTreeNear(jp, jr, 1e-13);
  EXPECT_TENSOR_NEAR(jx, jacrev(out_of_both, argnums<1>)(p, x), 1e-13);
  EXPECT_EQ(jx.sizes(), (Shape{2, 3}));
  // hessian of 0.5 |w1|^2 + <w1, b> over a struct of two leaves: blocks I, I / I, 0.
  auto quadratic = [](const std::map<std::string, Tensor>& q) {
    const Tensor& a = q.at("a");
    const Tensor& b = q.at("b");
    return sum(a * a) * 0.5 + sum(a * b);
  };
  std::map<std::string, Tensor> q{{"a", Rand({3}, 70)}, {"b", Rand({3}, 71)}};
  std::map<std::string, std::map<std::string, Tensor>> h = hessian(quadratic)(q);
  const Tensor eye3 = eye(3, kFloat64);
  EXPECT_TENSOR_NEAR(h.at("[\"a\"]").at("a"), eye3, 1e-14);
  EXPECT_TENSOR_NEAR(h.at("[\"a\"]").at("b"), eye3, 1e-14);
  EXPECT_TENSOR_NEAR(h.at("[\"b\"]").at("a"), eye3, 1e-14);
  EXPECT_TENSOR_NEAR(h.at("[\"b\"]").at("b"), zeros({3, 3}, kFloat64), 1e-14);
  // A Tensor argument: the Hessian itself.
  auto cubic = [](const Tensor& v, const Tensor& w) { return sum(v * v * v * w); };
  const Tensor v = Rand({3}, 72), w = Rand({3}, 73);
  EXPECT_TENSOR_NEAR(hessian(cubic)(v, w), eye3 * unsqueeze(v * w * 6.0, 1), 1e-13);
}

TEST(TreeTransforms, JitReplaysPerStructureAndStaticValues) {
  const Mlp p = MakeMlp(5);
  const Tensor x = Rand({3}, 80), y = Rand({2}, 81);
  auto calls = std::make_shared<int>(0);
  auto counted = [calls](const Mlp& q, const Tensor& v, const Tensor& t) {
    ++*calls;
    return Loss(q, v, t);
  };
  auto jitted = jit(grad(counted));
  for (int call = 0; call < 3; ++call) {
    ExpectTreeNear(jitted(p, x, y), grad(&Loss)(p, x, y), 1e-14);
  }
  EXPECT_EQ(*calls, 1);  // traced once, replayed twice
  // Another static value is another structure: traced again, never the first program.
  Mlp steeper = p;
  steeper.slope = 0.5000001;
  ExpectTreeNear(jitted(steeper, x, y), grad(&Loss)(steeper, x, y), 1e-14);
  EXPECT_EQ(*calls, 2);
  EXPECT_FALSE(allclose(tree_leaves(jitted(steeper, x, y))[0], tree_leaves(jitted(p, x, y))[0],
                        0, 0));
}

TEST(TreeTransforms, FunctionalizeAndCheckpoint) {
  const Mlp p = MakeMlp(6);
  const Tensor x = Rand({3}, 90), y = Rand({2}, 91);
  // In-place code over a tree, under grad through functionalize.
  auto in_place = [](const Mlp& q, const Tensor& v) {
    Tensor h = matmul(v, q.w1);
    add_(h, q.b1);
    exp_(h);
    return sum(matmul(h, q.w2));
  };
  auto pure = [](const Mlp& q, const Tensor& v) {
    return sum(matmul(exp(matmul(v, q.w1) + q.b1), q.w2));
  };
  ExpectTreeNear(grad(functionalize(in_place))(p, x),
                 CentralDifference(p, [&](const Mlp& q) { return pure(q, x); }), 1e-7);
  // checkpoint: the same gradients, by recomputation (central differences as the oracle).
  auto remat = checkpoint([](const Mlp& q, const Tensor& v) { return Forward(q, v); });
  auto loss = [remat](const Mlp& q, const Tensor& v, const Tensor& t) {
    Tensor d = remat(q, v) - t;
    return sum(d * d);
  };
  ExpectTreeNear(grad(loss)(p, x, y),
                 CentralDifference(p, [&](const Mlp& q) { return Loss(q, x, y); }), 1e-7);
}

TEST(TreeTransforms, StackAndUnstackAnEnsemble) {
  const std::vector<Mlp> members = {MakeMlp(110), MakeMlp(120), MakeMlp(130)};
  const Mlp stacked = tree_stack(members);
  EXPECT_EQ(stacked.w1.sizes(), (Shape{3, 3, 4}));
  EXPECT_EQ(stacked.slope, 0.5);
  const Tensor x = Rand({3}, 140);
  // vmap over the stacked members against each member alone.
  const Tensor outs = vmap([](const Mlp& q, const Tensor& v) { return Forward(q, v); },
                           {0, std::nullopt})(stacked, x);
  for (int64_t m = 0; m < 3; ++m) {
    EXPECT_TENSOR_NEAR(select(outs, 0, m), Forward(members[static_cast<size_t>(m)], x), 1e-15);
  }
  const std::vector<Mlp> back = tree_unstack(stacked);
  ASSERT_EQ(back.size(), 3u);
  ExpectTreeNear(back[1], members[1], 0);
  // Along another dim, and the errors.
  EXPECT_EQ(tree_stack(members, -1).b1.sizes(), (Shape{4, 3}));
  Mlp odd = members[0];
  odd.slope = 1.5;
  EXPECT_FT_ERROR(tree_stack(std::vector<Mlp>{members[0], odd}),
                  "tree_stack: tree 1 differs from tree 0 at .slope");
  EXPECT_FT_ERROR(tree_stack(std::vector<Mlp>{}), "tree_stack: no trees to stack");
  EXPECT_FT_ERROR(tree_unstack(members[0]),
                  "tree_unstack: leaf 1 has size 4 at dim 0 but leaf 0 has 3");
  EXPECT_FT_ERROR(tree_unstack(members[0], 2),
                  "tree_unstack: dim 2 is out of range for leaf 0 of shape [3, 4]");
  EXPECT_FT_ERROR(tree_unstack(std::vector<Tensor>{}),
                  "tree_unstack: the tree has no tensor leaves to unstack");
}

TEST(TreeTransforms, ErrorsNameThePaths) {
  const Mlp p = MakeMlp(7);
  const Tensor x = Rand({3}, 100), y = Rand({2}, 101);
  Mlp bad_tangent = p;
  bad_tangent.slope = 2.0;
  EXPECT_FT_ERROR(jvp(&Loss, std::tuple{p, x, y}, std::tuple{bad_tangent, x, y}),
                  "jvp: the tangents must have the structure of the primals; they "
                  "differ at .slope: the double 0.5 vs the double 2");
  auto v = vjp(&Layers, p, x);
  EXPECT_FT_ERROR(v.vjp_fn({Rand({2}, 1), {Rand({4}, 2)}}),
                  "vjp: the cotangents must have the structure of the outputs; they "
                  "differ at [1]: a vector of 2 vs a vector of 1");
  const Tensor xs = Rand({4, 3}, 102), ys = Rand({4, 2}, 103);
  EXPECT_FT_ERROR(vmap(&Loss, {std::nullopt, 0, 0})(p, xs, Rand({3, 2}, 105)),
                  "[over trees, argument i is tensor leaf i: 0 is arg0.w1, 1 is arg0.b1, 2 is "
                  "arg0.w2, 3 is arg0.b2, 4 is arg1, 5 is arg2]");
  EXPECT_FT_ERROR(vmap(&Loss, {std::nullopt, 0})(p, xs, ys),
                  "vmap: in_dims {nullopt, 0} has 2 entries but f takes 3 arguments");
  EXPECT_FT_ERROR(vmap(&Loss, {TreeDims::Fields({{"w1", 0}}), 0, 0})(p, xs, ys),
                  "vmap: in_dims Fields{w1: 0} does not fit arg0: the fields named are not "
                  "the node's (Mlp has w1, b1, w2, b2, slope)");
  EXPECT_FT_ERROR(vmap(&Loss, {{0, 0}, 0, 0})(p, xs, ys),
                  "vmap: in_dims {0, 0} does not fit arg0: a list of entries for a node that "
                  "is no sequence");
  auto counted = [](const std::map<std::string, Tensor>& c) { return sum(c.at("w")); };
  std::map<std::string, Tensor> c{{"w", Rand({2}, 104)}, {"steps", full({}, int64_t{3})}};
  auto no_leaves = [](const std::vector<Tensor>& v, const Tensor& w) { return sum(w); };
  EXPECT_FT_ERROR(grad(no_leaves)(std::vector<Tensor>{}, Rand({2}, 106)),
                  "grad: the arguments at argnums hold no tensor leaves (nothing to "
                  "differentiate)");
  EXPECT_FT_ERROR(grad(counted)(c),
                  "grad: the leaf arg0[\"steps\"] is a int64 tensor; only floating-point leaves "
                  "are differentiated");
  EXPECT_TRUE(LayerStack::empty());
  // An empty structure (a default TreeDef) has no leaves to give dims to (a fuzzer finding:
  // expanding read its root node).
  EXPECT_TRUE(TreeDims(0).ExpandArguments({TreeDef()}).empty());
  EXPECT_FT_ERROR(TreeDims({TreeDims::Fields({{"a", 0}})}).ExpandArguments({TreeDef()}),
                  "vmap: in_dims Fields{a: 0} does not fit arg0: the structure is empty");
}

}  // namespace tree_transforms_test
}  // namespace ft
