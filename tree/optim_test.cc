// The functional optimizers against torch.optim's recorded trajectories (tests/fixtures/
// torch/optim, written by tools/torch_fixtures/optim.py), closed forms, and themselves under
// jit and vmap (an ensemble of runs against runs one by one).
#include "tree/optim.h"

#include <cmath>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft {
namespace optim_test {

struct Linear {
  Tensor w, b;
};
FT_TREE(Linear, w, b);

Tensor Fixture(const std::string& name) {
  return LoadNpy("tests/fixtures/torch/optim/" + name + ".npy");
}

// The problem of optim.py: mean over rows of |x w + b - y|^2.
Tensor Loss(const Linear& p, const Tensor& x, const Tensor& y) {
  Tensor d = matmul(x, p.w) + p.b - y;
  return sum(d * d) / static_cast<double>(x.sizes()[0]);
}

// Replay: runs `opt` for the fixture's steps from its start and compares every step.
template <typename Opt>
void Replay(const std::string& name, const Opt& opt) {
  SCOPED_TRACE(name);
  const Tensor x = Fixture(name + ".x"), y = Fixture(name + ".y");
  Linear params{Fixture(name + ".w0"), Fixture(name + ".b0")};
  auto state = opt.init(params);
  for (int step = 1; step <= 6; ++step) {
    SCOPED_TRACE(step);
    Linear g = grad(&Loss)(params, x, y);
    auto [updates, next] = opt.update(g, state, params);
    params = optim::apply_updates(params, updates);
    state = next;
    const std::string at = std::to_string(step);
    EXPECT_TRUE(allclose(params.w, Fixture(name + ".w" + at), 1e-12, 1e-14))
        << params.w << " vs " << Fixture(name + ".w" + at);
    EXPECT_TRUE(allclose(params.b, Fixture(name + ".b" + at), 1e-12, 1e-14));
  }
  EXPECT_EQ(state.count.template item<double>(), 6.0);
}

TEST(Optim, SgdReplaysTorchOptim) {
  Replay("sgd", optim::Sgd{.lr = 0.1});
  Replay("sgd_momentum", optim::Sgd{.lr = 0.1, .momentum = 0.9});
  Replay("sgd_nesterov_decay",
         optim::Sgd{.lr = 0.05, .momentum = 0.8, .weight_decay = 0.01, .nesterov = true});
  Replay("sgd_dampening", optim::Sgd{.lr = 0.1, .momentum = 0.5, .dampening = 0.3});
}

TEST(Optim, AdamAndAdamWReplayTorchOptim) {
  Replay("adam", optim::Adam{.lr = 0.01});
  Replay("adam_decay",
         optim::Adam{.lr = 0.02, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.1});
  Replay("adamw", optim::AdamW{.lr = 0.01});
  Replay("adamw_decay", optim::AdamW{.lr = 0.05, .beta1 = 0.85, .beta2 = 0.95, .eps = 1e-7,
                                     .weight_decay = 0.3});
}

TEST(Optim, ClosedForms) {
  // SGD on 0.5 |p|^2 (gradient p): p_k = (1 - lr)^k p_0.
  Linear p{full({2, 2}, 2.0, kFloat64), full({2}, -1.0, kFloat64)};
  optim::Sgd sgd{.lr = 0.25};
  auto state = sgd.init(p);
  Linear q = p;
  for (int k = 0; k < 3; ++k) {
    auto [u, next] = sgd.update(q, state, q);
    q = optim::apply_updates(q, u);
    state = next;
  }
  EXPECT_TENSOR_NEAR(q.w, p.w * std::pow(0.75, 3), 1e-15);
  // Adam's first step is -lr g / (|g| + eps) whatever the betas: the bias corrections undo
  // the moments' (1 - beta) factors.
  optim::Adam adam{.lr = 0.1, .beta1 = 0.7, .beta2 = 0.8, .eps = 1e-3};
  Linear g{tensor({3.0, -0.5, 0.25, 0.0}, {2, 2}), tensor({-2.0, 1.0})};
  auto [u, next] = adam.update(g, adam.init(p), p);
  EXPECT_TENSOR_NEAR(u.w, g.w * -0.1 / (abs(g.w) + 1e-3), 1e-15);
  EXPECT_TENSOR_NEAR(next.mu.b, g.b * 0.3, 1e-15);
  EXPECT_TENSOR_NEAR(next.nu.b, g.b * g.b * 0.2, 1e-15);
  // AdamW decays by lr * weight_decay * p on top of that.
  optim::AdamW adamw{.lr = 0.1, .beta1 = 0.7, .beta2 = 0.8, .eps = 1e-3, .weight_decay = 0.5};
  auto [uw, unused] = adamw.update(g, adamw.init(p), p);
  EXPECT_TENSOR_NEAR(uw.b, g.b * -0.1 / (abs(g.b) + 1e-3) - p.b * 0.05, 1e-15);
  // float32 leaves stay float32 (the float64 count never promotes them).
  Linear p32{full({2, 2}, 1.0), full({2}, 1.0)};
  auto [u32, s32] = adam.update(p32, adam.init(p32), p32);
  EXPECT_EQ(u32.w.dtype(), kFloat32);
  EXPECT_EQ(s32.nu.b.dtype(), kFloat32);
}

// One training step as a pure function of trees: what jit and vmap take.
std::pair<Linear, optim::AdamState<Linear>> Step(const Linear& p,
                                                 const optim::AdamState<Linear>& s,
                                                 const Tensor& x, const Tensor& y) {
  const optim::Adam adam{.lr = 0.05};
  auto [u, next] = adam.update(grad(&Loss)(p, x, y), s, p);
  return {optim::apply_updates(p, u), next};
}

TEST(Optim, AStepUnderJitAndVmap) {
  const Tensor x = Fixture("adam.x"), y = Fixture("adam.y");
  const Linear p0{Fixture("adam.w0"), Fixture("adam.b0")};
  const optim::Adam adam{.lr = 0.05};
  // jit: the count is a tensor, so every step replays the one trace.
  auto jitted = jit(&Step);
  Linear p = p0, q = p0;
  auto s = adam.init(p0), t = adam.init(p0);
  for (int k = 0; k < 4; ++k) {
    std::tie(p, s) = jitted(p, s, x, y);
    std::tie(q, t) = Step(q, t, x, y);
  }
  EXPECT_TENSOR_NEAR(p.w, q.w, 1e-14);
  EXPECT_TENSOR_NEAR(s.nu.b, t.nu.b, 1e-14);
  // vmap: three runs from three starts at once, against each run alone.
  Linear starts{stack({p0.w, p0.w * 2.0, p0.w - 1.0}, 0), stack({p0.b, p0.b, p0.b + 3.0}, 0)};
  auto states = vmap([](const Linear& l) { return optim::Adam{}.init(l); })(starts);
  auto batched = vmap(&Step, {0, 0, std::nullopt, std::nullopt});
  for (int k = 0; k < 3; ++k) std::tie(starts, states) = batched(starts, states, x, y);
  for (int64_t r = 0; r < 3; ++r) {
    Linear one{select(stack({p0.w, p0.w * 2.0, p0.w - 1.0}, 0), 0, r),
               select(stack({p0.b, p0.b, p0.b + 3.0}, 0), 0, r)};
    auto st = adam.init(one);
    for (int k = 0; k < 3; ++k) std::tie(one, st) = Step(one, st, x, y);
    EXPECT_TENSOR_NEAR(select(starts.w, 0, r), one.w, 1e-14);
    EXPECT_TENSOR_NEAR(select(states.mu.b, 0, r), st.mu.b, 1e-14);
  }
}

}  // namespace optim_test
}  // namespace ft
