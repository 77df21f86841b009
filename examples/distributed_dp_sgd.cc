// distributed_dp_sgd: differentially private SGD (as examples/dp_sgd.cc) with the global batch
// split across processes, which meet over a named axis "dp" (distributed/collectives.h).
//   ./bazelw build //examples:distributed_dp_sgd //distributed:ft_launch
//   .bazel/bin/distributed/ft_launch -n 2 .bazel/bin/examples/distributed_dp_sgd
// or, once built,
//   ./bazelw run //distributed:ft_launch -- -n 2 $(pwd)/.bazel/bin/examples/distributed_dp_sgd
// or under Open MPI (add --allow-run-as-root as root): `mpirun -np 2
// .bazel/bin/examples/distributed_dp_sgd` runs MPI's engine, `FT_BACKEND=gloo mpirun ...`
// Gloo's. Any number of processes that divides the global batch (24) works, 1 included.
//
// Each step every process builds the whole global batch from the step's seed and keeps its
// own shard (contiguous rows, rank order). On the shard:
//   1. per-example gradients by vmap(grad(loss)): no collective, they are this process's own;
//   2. each clipped to L2 norm <= kClip (over all parameters together) and summed;
//   3. ONE psum over "dp" of those sums (the tree flattened into one vector: one all-reduce);
//   4. Gaussian noise added once: every process draws the same noise from the same
//      generator after the psum (noise drawn before it would be counted P times);
//   5. divided by the global batch size and an SGD step, the same on every process.
// Checks (exits 1 with a message on a failure):
//   - each step makes exactly one collective (the psum);
//   - every process's weights are bitwise identical (all_gather of the flattened weights);
//   - the weights equal a single-process run of the same DP-SGD on the whole batch (same
//     clipping and noise, no collectives) to max|a - b| / max|b| <= 1e-12 per parameter
//     (float64; only the order of the sums differs);
//   - so does the loss on the last batch (pmean of the shards' mean losses), and the
//     processes' counts of clipped examples add up to the reference's (kClip is set so that
//     some examples are clipped and some not).
// Without a process group in the environment (not under ft_launch or mpirun) it exits 2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/collectives.h"
#include "distributed/process_group.h"
#include "ft.h"

namespace {

constexpr int64_t kFeatures = 6, kHidden = 16, kClasses = 3;
constexpr int64_t kGlobalBatch = 24, kSteps = 6;
constexpr double kLearningRate = 0.5, kClip = 2.0, kNoise = 0.5;
constexpr double kTolerance = 1e-12;
constexpr uint64_t kSeed = 2024;

struct Mlp {
  ft::Tensor w1;  // [hidden, features]
  ft::Tensor b1;  // [hidden]
  ft::Tensor w2;  // [classes, hidden]
  ft::Tensor b2;  // [classes]
};
FT_TREE(Mlp, w1, b1, w2, b2);

ft::Tensor Randn(ft::IntArrayRef shape, ft::Generator& gen) {
  return ft::randn_like(ft::zeros(shape, ft::kFloat64), &gen);
}

// The initial parameters: from kSeed, so every process (and the reference run) starts alike.
Mlp InitParams() {
  ft::Generator gen(kSeed);
  return {.w1 = Randn({kHidden, kFeatures}, gen) * (1.0 / std::sqrt(kFeatures)),
          .b1 = ft::zeros({kHidden}, ft::kFloat64),
          .w2 = Randn({kClasses, kHidden}, gen) * (1.0 / std::sqrt(kHidden)),
          .b2 = ft::zeros({kClasses}, ft::kFloat64)};
}

ft::Tensor Logits(const Mlp& p, const ft::Tensor& x) {
  return ft::linear(ft::tanh(ft::linear(x, p.w1, p.b1)), p.w2, p.b2);
}

// Loss of ONE example (x [features], y one-hot [classes]); vmap adds the batch.
ft::Tensor ExampleLoss(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::neg(ft::sum(y * ft::log_softmax(Logits(p, x), -1)));
}

// The mean loss over a batch x [n, features], y [n, classes].
ft::Tensor BatchLoss(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::mean(ft::neg(ft::sum(y * ft::log_softmax(Logits(p, x), -1), {1})));
}

struct Batch {
  ft::Tensor x;  // [n, features]
  ft::Tensor y;  // [n, classes] one-hot, float64
};

// The global batch of step `step`: Gaussian blobs around one center per class. A generator
// of its own per step, so any process builds it without drawing the others' batches.
Batch GlobalBatch(int64_t step) {
  ft::Generator centers_gen(kSeed + 1);
  const ft::Tensor centers = Randn({kClasses, kFeatures}, centers_gen);
  ft::Generator gen(kSeed + 100 + static_cast<uint64_t>(step));
  const ft::Tensor labels = ft::randint(0, kClasses, {kGlobalBatch}, &gen);
  return {.x = ft::index_select(centers, 0, labels) + Randn({kGlobalBatch, kFeatures}, gen),
          .y = ft::to(ft::one_hot(labels, kClasses), ft::kFloat64)};
}

Batch Shard(const Batch& b, int64_t first, int64_t rows) {
  return {.x = ft::narrow(b.x, 0, first, rows), .y = ft::narrow(b.y, 0, first, rows)};
}

// Flatten / Unflatten: a tree as one vector and back, so that one collective moves it all.
ft::Tensor Flatten(const Mlp& tree) {
  ft::TensorList parts;
  for (const ft::Tensor& leaf : ft::tree_leaves(tree)) parts.push_back(ft::reshape(leaf, {-1}));
  return ft::cat(parts, 0);
}

Mlp Unflatten(const ft::Tensor& flat, const Mlp& like) {
  const auto [leaves, def] = ft::tree_flatten(like);
  std::vector<int64_t> sizes;
  for (const ft::Tensor& leaf : leaves) sizes.push_back(leaf.numel());
  const ft::TensorList pieces = ft::split_with_sizes(flat, sizes, 0);
  ft::TensorList shaped;
  for (size_t i = 0; i < leaves.size(); ++i) {
    shaped.push_back(ft::reshape(pieces[i], leaves[i].sizes()));
  }
  return ft::tree_unflatten<Mlp>(def, shaped);
}

// One DP-SGD step on `batch` (a shard, or the whole global batch). `distributed`: the
// clipped sums of every process are added by one psum over "dp"; otherwise the batch is
// the whole global batch and there is nothing to add. `noise_gen` must be in the same state
// on every process (and in the reference run): each draws the same noise. Adds to `clipped`
// the number of this batch's examples whose gradient was scaled down.
Mlp DpSgdStep(const Mlp& params, const Batch& batch, bool distributed, ft::Generator& noise_gen,
              int64_t& clipped) {
  const int64_t n = batch.x.size(0);
  // Parameters shared (nullopt), examples mapped: each leaf [n, shape of the parameter].
  // No collective inside: without a pmean the loss varies over "dp", so grad sums nothing.
  const Mlp grads =
      ft::vmap(ft::grad(&ExampleLoss), {std::nullopt, 0, 0})(params, batch.x, batch.y);
  ft::Tensor squared = ft::zeros({n}, ft::kFloat64);
  for (const ft::Tensor& g : ft::tree_leaves(grads)) {
    squared = squared + ft::sum(ft::square(ft::reshape(g, {n, -1})), {1});
  }
  const ft::Tensor scale = ft::minimum(kClip / (ft::sqrt(squared) + 1e-12), 1.0);  // [n]
  clipped += ft::sum(ft::lt(scale, 1.0)).item<int64_t>();
  const Mlp clipped_sum = ft::tree_map(
      [&](const ft::Tensor& g) {
        std::vector<int64_t> shape(static_cast<size_t>(g.dim()), 1);
        shape[0] = n;  // scale broadcast over the parameter's own dims
        return ft::sum(g * ft::reshape(scale, shape), {0});
      },
      grads);
  ft::Tensor total = Flatten(clipped_sum);
  if (distributed) total = ft::psum(total, "dp");
  // After the psum: one draw of noise for the whole batch, identical on every process.
  const ft::Tensor noise = ft::randn_like(total, &noise_gen) * (kNoise * kClip);
  const ft::Tensor private_grad = (total + noise) * (1.0 / kGlobalBatch);
  return ft::tree_map(
      [](const ft::Tensor& p, const ft::Tensor& g) { return p - kLearningRate * g; }, params,
      Unflatten(private_grad, params));
}

// max |a - b| / max |b| over each parameter, the largest over the parameters.
double MaxRelDiff(const Mlp& a, const Mlp& b) {
  double worst = 0;
  const ft::TensorList la = ft::tree_leaves(a);
  const ft::TensorList lb = ft::tree_leaves(b);
  for (size_t i = 0; i < la.size(); ++i) {
    const double gap = ft::amax(ft::abs(la[i] - lb[i])).item<double>();
    const double size = ft::amax(ft::abs(lb[i])).item<double>();
    worst = std::max(worst, gap / size);
  }
  return worst;
}

int Run(const std::shared_ptr<ft::dist::ProcessGroup>& group) {
  const int rank = group->rank();
  const int world = group->size();
  if (kGlobalBatch % world != 0) {
    std::fprintf(stderr, "rank %d: %d processes do not divide the global batch of %lld\n", rank,
                 world, static_cast<long long>(kGlobalBatch));
    return 2;
  }
  // Collectives over "dp" now run across the group's processes.
  auto binding = ft::dist::bind_axis("dp", group);
  const int64_t rows = kGlobalBatch / world;
  const Mlp init = InitParams();

  // Data-parallel DP-SGD.
  Mlp params = init;
  ft::Generator noise_gen(kSeed + 7);
  int64_t clipped = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    const Batch mine = Shard(GlobalBatch(step), rank * rows, rows);
    const int64_t before = binding.calls();
    params = DpSgdStep(params, mine, /*distributed=*/true, noise_gen, clipped);
    if (binding.calls() - before != 1) {
      std::fprintf(stderr, "rank %d: FAILED: step %lld made %lld collectives, expected 1\n",
                   rank, static_cast<long long>(step),
                   static_cast<long long>(binding.calls() - before));
      return 1;
    }
  }
  // The loss on the last batch: each shard's mean, averaged over the (equal) shards.
  const Batch last = GlobalBatch(kSteps - 1);
  const Batch last_mine = Shard(last, rank * rows, rows);
  const double loss = ft::pmean(BatchLoss(params, last_mine.x, last_mine.y), "dp").item<double>();

  // Every process's weights, bitwise: row q of the gather is process q's.
  const ft::Tensor everyone = ft::all_gather(Flatten(params), "dp", 0);  // [world, numel]
  const std::vector<double> mine = Flatten(params).to_vector<double>();
  for (int q = 0; q < world; ++q) {
    const std::vector<double> theirs =
        ft::contiguous(ft::select(everyone, 0, q)).to_vector<double>();
    if (theirs.size() != mine.size() ||
        std::memcmp(theirs.data(), mine.data(), mine.size() * sizeof(double)) != 0) {
      std::fprintf(stderr, "rank %d: FAILED: weights differ from rank %d's\n", rank, q);
      return 1;
    }
  }

  // The reference: one process, the whole global batch, the same noise, no collectives.
  Mlp reference = init;
  ft::Generator reference_noise(kSeed + 7);
  const int64_t calls_before = binding.calls();
  int64_t reference_clipped = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    reference = DpSgdStep(reference, GlobalBatch(step), /*distributed=*/false, reference_noise,
                          reference_clipped);
  }
  const double reference_loss = BatchLoss(reference, last.x, last.y).item<double>();
  if (binding.calls() != calls_before) {
    std::fprintf(stderr, "rank %d: FAILED: the reference run made a collective\n", rank);
    return 1;
  }
  // The same examples clipped: the processes' counts add up to the reference's.
  const int64_t all_clipped =
      ft::psum(ft::full({}, ft::Scalar(clipped), ft::kInt64), "dp").item<int64_t>();
  if (all_clipped != reference_clipped) {
    std::fprintf(stderr, "rank %d: FAILED: %lld examples clipped, %lld in the reference run\n",
                 rank, static_cast<long long>(all_clipped),
                 static_cast<long long>(reference_clipped));
    return 1;
  }
  const double diff = MaxRelDiff(params, reference);
  const double loss_diff = std::abs(loss - reference_loss) / std::abs(reference_loss);
  const double initial_loss = BatchLoss(init, last.x, last.y).item<double>();
  std::printf("rank %d of %d (%s): %lld steps of DP-SGD on %lld of %lld examples per step, "
              "%lld of %lld clipped, loss %.4f -> %.6f; vs one process: max rel diff %.2e "
              "(loss %.2e); weights identical on every rank\n",
              rank, world, group->backend().c_str(), static_cast<long long>(kSteps),
              static_cast<long long>(rows), static_cast<long long>(kGlobalBatch),
              static_cast<long long>(clipped), static_cast<long long>(kSteps * rows),
              initial_loss, loss, diff, loss_diff);
  if (!(diff <= kTolerance) || !(loss_diff <= kTolerance)) {
    std::fprintf(stderr, "rank %d: FAILED: the distributed run differs from the single-process "
                 "one by more than %.0e\n", rank, kTolerance);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::shared_ptr<ft::dist::ProcessGroup> group;
  try {
    group = ft::dist::init_process_group();
  } catch (const ft::Error& e) {
    // Not under ft_launch or mpirun: say how, rather than run as one process unasked.
    std::fprintf(stderr, "%s\nhint: .bazel/bin/distributed/ft_launch -n 2 %s\n", e.what(),
                 argc > 0 ? argv[0] : "PROGRAM");
    return 2;
  }
  try {
    return Run(group);
  } catch (const ft::Error& e) {  // a peer that died or stalled, a mismatched collective
    std::fprintf(stderr, "rank %d: FAILED: %s\n", group->rank(), e.what());
    return 1;
  }
}
