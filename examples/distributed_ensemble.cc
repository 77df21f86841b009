// distributed_ensemble: an ensemble of kMembers small models (examples/ensembles.cc) sharded
// across processes that meet over a named axis "dp" (distributed/collectives.h).
//   ./bazelw build //examples:distributed_ensemble //distributed:ft_launch
//   .bazel/bin/distributed/ft_launch -n 2 .bazel/bin/examples/distributed_ensemble
// Any number of processes that divides kMembers (4) works: 1, 2 or 4; mpirun -np 2 too (as
// for examples/distributed_dp_sgd.cc).
//
// Every process builds all members' initial parameters and the shared data from one seed,
// keeps its own members (a contiguous block, rank order), stacked along a leading dim, and
// trains them at once: vmap of a training step (grad, then SGD) over the member dim, the
// data shared. No communication while training: the members are independent. Then the
// ensemble's prediction (the mean of the members' probabilities on a test set), two ways:
//   1. all_gather over "dp" of each process's [members, test, classes] probabilities: every
//      process holds every member's, in member order, and averages them;
//   2. inside a vmap over the local members whose axis is named "member": psum over "member"
//      (this process's members) then over "dp" (the processes'), divided by the member count;
//      each member's global index is axis_index("dp") * axis_size("member") +
//      axis_index("member").
// Checks (exits 1 with a message on a failure):
//   - the gathered global indices are 0 .. kMembers - 1 in order (the sharding);
//   - this process's trained members, every member's probabilities and loss, and both
//     ensemble means equal a single-process run of all kMembers members (one vmap, no
//     collectives) to max|a - b| / max|b| <= 1e-12 (float64);
//   - the psum'd ensemble mean is the same for every local member and bitwise identical on
//     every process.
// Without a process group in the environment (not under ft_launch or mpirun) it exits 2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distributed/collectives.h"
#include "distributed/process_group.h"
#include "ft.h"

namespace {

constexpr int64_t kMembers = 4, kFeatures = 5, kHidden = 12, kClasses = 3;
constexpr int64_t kTrain = 96, kTest = 40, kSteps = 25;
constexpr double kLearningRate = 0.5, kTolerance = 1e-12;
constexpr uint64_t kSeed = 31;

// One member's parameters; the ensemble's (or a process's share) are an Mlp whose leaves are
// stacked along a leading member dim.
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

ft::Tensor Forward(const Mlp& p, const ft::Tensor& x) {
  return ft::linear(ft::tanh(ft::linear(x, p.w1, p.b1)), p.w2, p.b2);
}

ft::Tensor Probs(const Mlp& p, const ft::Tensor& x) { return ft::softmax(Forward(p, x), -1); }

// One member's mean cross-entropy on x [n, features], y one-hot [n, classes].
ft::Tensor Loss(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::mean(ft::neg(ft::sum(y * ft::log_softmax(Forward(p, x), -1), {1})));
}

// One member's training step: full-batch gradient descent.
Mlp TrainStep(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::tree_map(
      [](const ft::Tensor& w, const ft::Tensor& g) { return w - kLearningRate * g; }, p,
      ft::grad(&Loss)(p, x, y));
}

// All members' initial parameters, stacked [kMembers, ...]: every process makes all of them
// (cheap) and keeps its own, so a member starts alike whichever process owns it.
Mlp InitEnsemble() {
  ft::Generator gen(kSeed);
  return {.w1 = Randn({kMembers, kHidden, kFeatures}, gen) * (1.0 / std::sqrt(kFeatures)),
          .b1 = Randn({kMembers, kHidden}, gen) * 0.1,
          .w2 = Randn({kMembers, kClasses, kHidden}, gen) * (1.0 / std::sqrt(kHidden)),
          .b2 = ft::zeros({kMembers, kClasses}, ft::kFloat64)};
}

// Members [first, first + count) of a stacked ensemble.
Mlp Members(const Mlp& stacked, int64_t first, int64_t count) {
  return ft::tree_map([&](const ft::Tensor& t) { return ft::narrow(t, 0, first, count); },
                      stacked);
}

// The shared data: inputs labeled by a random teacher network, the same on every process.
struct Data {
  ft::Tensor x_train, y_train;  // [kTrain, features], [kTrain, classes] one-hot
  ft::Tensor x_test, labels;    // [kTest, features], [kTest] int64
};

Data MakeData() {
  ft::Generator gen(kSeed + 1);
  const Mlp teacher{.w1 = Randn({kHidden, kFeatures}, gen),
                    .b1 = Randn({kHidden}, gen),
                    .w2 = Randn({kClasses, kHidden}, gen),
                    .b2 = ft::zeros({kClasses}, ft::kFloat64)};
  Data d;
  d.x_train = Randn({kTrain, kFeatures}, gen);
  d.y_train = ft::to(ft::one_hot(ft::argmax(Forward(teacher, d.x_train), 1), kClasses),
                     ft::kFloat64);
  d.x_test = Randn({kTest, kFeatures}, gen);
  d.labels = ft::argmax(Forward(teacher, d.x_test), 1);
  return d;
}

// Trains stacked members together: vmap of the step over the member dim, the data shared.
Mlp Train(Mlp members, const Data& d) {
  const auto step = ft::vmap(&TrainStep, {0, std::nullopt, std::nullopt});
  for (int64_t s = 0; s < kSteps; ++s) members = step(members, d.x_train, d.y_train);
  return members;
}

// The ensemble mean from inside a vmap over this process's members, its axis named "member",
// and each member's global index. vmap over trees takes no axis name, so the parameters go
// in as a flat list of leaves (tree_flatten) and are rebuilt inside (tree_unflatten).
// Returns {mean [local, test, classes] (one value for every local member), index [local]}.
ft::TensorList NamedEnsembleMean(const Mlp& local, const ft::Tensor& x) {
  const std::pair<ft::TensorList, ft::TreeDef> flat = ft::tree_flatten(local);
  const ft::TreeDef def = flat.second;
  const auto n = static_cast<ptrdiff_t>(flat.first.size());
  const ft::TensorListFn member = [def, n](const ft::TensorList& args) {
    const Mlp p = ft::tree_unflatten<Mlp>(def, ft::TensorList(args.begin(), args.begin() + n));
    const ft::Tensor probs = Probs(p, args[static_cast<size_t>(n)]);
    // The innermost "member" sums this process's members; "dp" then sums the processes'.
    const auto count = static_cast<double>(ft::axis_size("member") * ft::axis_size("dp"));
    const ft::Tensor mean = ft::psum(ft::psum(probs, "member"), "dp") / count;
    const ft::Tensor index =
        ft::axis_index("dp") * ft::axis_size("member") + ft::axis_index("member");
    return ft::TensorList{mean, index};
  };
  std::vector<std::optional<int64_t>> in_dims(static_cast<size_t>(n), int64_t{0});
  in_dims.push_back(std::nullopt);  // x: shared by every member
  ft::TensorList args = flat.first;
  args.push_back(x);
  return ft::vmap(member, ft::VmapOptions{.in_dims = in_dims, .axis_name = "member"})(args);
}

// max |a - b| / max |b|.
double RelDiff(const ft::Tensor& a, const ft::Tensor& b) {
  return ft::amax(ft::abs(a - b)).item<double>() / ft::amax(ft::abs(b)).item<double>();
}

double RelDiff(const Mlp& a, const Mlp& b) {
  double worst = 0;
  const ft::TensorList la = ft::tree_leaves(a);
  const ft::TensorList lb = ft::tree_leaves(b);
  for (size_t i = 0; i < la.size(); ++i) worst = std::max(worst, RelDiff(la[i], lb[i]));
  return worst;
}

double Accuracy(const ft::Tensor& probs, const ft::Tensor& labels) {
  return ft::mean(ft::to(ft::eq(ft::argmax(probs, -1), labels), ft::kFloat64)).item<double>();
}

bool BitwiseEqual(const ft::Tensor& a, const ft::Tensor& b) {
  const std::vector<double> va = ft::contiguous(a).to_vector<double>();
  const std::vector<double> vb = ft::contiguous(b).to_vector<double>();
  return va.size() == vb.size() &&
         std::memcmp(va.data(), vb.data(), va.size() * sizeof(double)) == 0;
}

int Run(const std::shared_ptr<ft::dist::ProcessGroup>& group) {
  const int rank = group->rank();
  const int world = group->size();
  if (kMembers % world != 0) {
    std::fprintf(stderr, "rank %d: %d processes do not divide the %lld members\n", rank, world,
                 static_cast<long long>(kMembers));
    return 2;
  }
  auto binding = ft::dist::bind_axis("dp", group);
  const int64_t local = kMembers / world;
  const int64_t first = rank * local;
  const Data data = MakeData();
  const Mlp init = InitEnsemble();

  // This process's members, trained together; no collective.
  const Mlp mine = Train(Members(init, first, local), data);
  const ft::Tensor my_probs =
      ft::vmap(&Probs, {0, std::nullopt})(mine, data.x_test);  // [local, test, classes]
  const ft::Tensor my_losses =
      ft::vmap(&Loss, {0, std::nullopt, std::nullopt})(mine, data.x_train, data.y_train);

  // 1. Every member's probabilities and loss on every process: [world, local, ...] from the
  // gather, in rank order, so the member order of the single-process ensemble.
  const ft::Tensor probs =
      ft::reshape(ft::all_gather(my_probs, "dp", 0), {kMembers, kTest, kClasses});
  const ft::Tensor losses = ft::reshape(ft::all_gather(my_losses, "dp", 0), {kMembers});
  const ft::Tensor gathered_mean = ft::mean(probs, {0});

  // 2. The same mean by psum over the named member axis, then over "dp".
  const ft::TensorList named = NamedEnsembleMean(mine, data.x_test);
  const ft::Tensor named_mean = ft::select(named[0], 0, 0);
  const ft::Tensor indices = ft::reshape(ft::all_gather(named[1], "dp", 0), {kMembers});

  // The reference: all members in one process, one vmap, no collectives.
  const int64_t calls_before = binding.calls();
  const Mlp all = Train(init, data);
  const ft::Tensor ref_probs = ft::vmap(&Probs, {0, std::nullopt})(all, data.x_test);
  const ft::Tensor ref_losses =
      ft::vmap(&Loss, {0, std::nullopt, std::nullopt})(all, data.x_train, data.y_train);
  const ft::Tensor ref_mean = ft::mean(ref_probs, {0});
  bool ok = binding.calls() == calls_before;
  if (!ok) std::fprintf(stderr, "rank %d: FAILED: the reference run made a collective\n", rank);

  if (indices.to_vector<int64_t>() != ft::arange(kMembers).to_vector<int64_t>()) {
    std::fprintf(stderr, "rank %d: FAILED: the members' global indices are not 0..%lld\n", rank,
                 static_cast<long long>(kMembers - 1));
    ok = false;
  }
  for (int64_t m = 1; m < local; ++m) {
    if (!BitwiseEqual(ft::select(named[0], 0, m), named_mean)) {
      std::fprintf(stderr, "rank %d: FAILED: member %lld's psum differs from member 0's\n",
                   rank, static_cast<long long>(m));
      ok = false;
    }
  }
  const ft::Tensor everyone = ft::all_gather(named_mean, "dp", 0);  // [world, test, classes]
  for (int q = 0; q < world; ++q) {
    if (!BitwiseEqual(ft::select(everyone, 0, q), named_mean)) {
      std::fprintf(stderr, "rank %d: FAILED: the psum'd mean differs on rank %d\n", rank, q);
      ok = false;
    }
  }
  const std::pair<const char*, double> diffs[] = {
      {"this process's trained members", RelDiff(mine, Members(all, first, local))},
      {"every member's probabilities", RelDiff(probs, ref_probs)},
      {"every member's loss", RelDiff(losses, ref_losses)},
      {"the mean of the gathered probabilities", RelDiff(gathered_mean, ref_mean)},
      {"the mean by psum over \"member\" and \"dp\"", RelDiff(named_mean, ref_mean)},
  };
  double worst = 0;
  for (const auto& [what, diff] : diffs) {
    worst = std::max(worst, diff);
    if (!(diff <= kTolerance)) {
      std::fprintf(stderr, "rank %d: FAILED: %s: max rel diff from one process's %.2e > %.0e\n",
                   rank, what, diff, kTolerance);
      ok = false;
    }
  }

  std::string member_accuracy;
  for (int64_t m = 0; m < kMembers; ++m) {
    char text[32];
    std::snprintf(text, sizeof(text), "%s%.3f", m == 0 ? "" : " ",
                  Accuracy(ft::select(probs, 0, m), data.labels));
    member_accuracy += text;
  }
  std::printf("rank %d of %d (%s): members %lld..%lld of %lld, %lld steps; test accuracy: "
              "members %s, ensemble %.3f; vs one process: max rel diff %.2e\n",
              rank, world, group->backend().c_str(), static_cast<long long>(first),
              static_cast<long long>(first + local - 1), static_cast<long long>(kMembers),
              static_cast<long long>(kSteps), member_accuracy.c_str(),
              Accuracy(named_mean, data.labels), worst);
  return ok ? 0 : 1;
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
