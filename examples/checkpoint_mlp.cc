// checkpoint_mlp: a deep residual MLP trained with ft::checkpoint around every block, printing
// the peak memory of one training step with and without it.
//   ./bazelw run -c opt //examples:checkpoint_mlp [-- --width 1024 --batch 256]
//
// Block k: h <- h + gelu(layer_norm(h) W_k + b_k). Without checkpoint, grad keeps each block's
// input, its normalized input and its pre-activation until the backward pass has used them;
// with checkpoint(block) it keeps only the input and runs the block again in the backward
// pass. The program checks that both give the same loss and gradients, trains a few steps,
// and measures each variant in a fresh process (this program re-run with --measure), with
// ft's large-block cache off and every large block its own mapping, so that resident memory
// follows live memory:
// - the step's peak: the kernel's high-water mark of resident memory, reset before the step;
// - what the forward pass leaves for the backward pass: resident memory when the loss is
//   computed (the saved activations), which is what checkpointing shrinks. The peak is the
//   larger of that and the gradients the step returns (grad frees activations as the
//   backward pass goes), so where the weights' gradients outweigh the activations (width
//   1024, batch 256) no checkpoint lowers the peak.
// It exits non-zero when the variants disagree or checkpointing does not shrink what the
// forward pass leaves.
#include <malloc.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "ft.h"

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr int64_t kDepth = 16;
int64_t kWidth = 128, kBatch = 512;  // --width, --batch

int64_t StatusKb(const char* name);
// Under --measure: resident memory (kB) when the loss was last computed.
bool measuring = false;
int64_t forward_end_kb = -1;

// Layer: block k's weight W_k [width, width] and bias b_k [width].
struct Layer {
  ft::Tensor w, b;
};
FT_TREE(Layer, w, b);

// The network's parameters, a tree: one Layer per block.
using Params = std::vector<Layer>;

ft::Tensor Block(const ft::Tensor& h, const Layer& layer) {
  return h + ft::gelu(ft::linear(ft::layer_norm(h, {kWidth}), layer.w, layer.b));
}

// How a step treats each block: plainly, checkpointed, or checkpointed keeping the outputs
// of matrix products (CheckpointPolicy::kSaveMatmuls).
enum class Variant { kPlain, kCheckpoint, kSaveMatmuls };
const char* const kVariantNames[] = {"plain", "checkpoint", "save_matmuls"};

// The mean squared error of the network on (x, y).
ft::Tensor Loss(const Params& params, const ft::Tensor& x, const ft::Tensor& y,
                Variant variant) {
  static const auto checkpointed = ft::checkpoint(&Block);
  static const auto saving =
      ft::checkpoint(&Block, {.policy = ft::CheckpointPolicy::kSaveMatmuls});
  ft::Tensor h = x;
  for (const Layer& layer : params) {
    switch (variant) {
      case Variant::kPlain: h = Block(h, layer); break;
      case Variant::kCheckpoint: h = checkpointed(h, layer); break;
      case Variant::kSaveMatmuls: h = saving(h, layer); break;
    }
  }
  ft::Tensor loss = ft::mean(ft::square(h - y));
  if (measuring) forward_end_kb = StatusKb("VmRSS");
  return loss;
}

struct Problem {
  Params params;
  ft::Tensor x, y;
};

Problem MakeProblem() {
  ft::Generator gen(3);
  Problem p;
  for (int64_t k = 0; k < kDepth; ++k) {
    p.params.push_back({.w = ft::randn_like(ft::zeros({kWidth, kWidth}), &gen) *
                             (0.5 / std::sqrt(static_cast<double>(kWidth))),
                        .b = ft::zeros({kWidth})});
  }
  p.x = ft::randn_like(ft::zeros({kBatch, kWidth}), &gen);
  p.y = ft::sin(p.x);
  return p;
}

// One step's gradients (a Params) and loss.
using GradAndLoss = ft::TreeGradAndValue<Params, ft::Tensor>;

GradAndLoss Step(const Problem& p, Variant variant) {
  auto loss = [&p, variant](const Params& params) { return Loss(params, p.x, p.y, variant); };
  return ft::grad_and_value(loss)(p.params);
}

// Whether every gradient of `a` is close to the same gradient of `b`.
bool AllClose(const Params& a, const Params& b) {
  const ft::TensorList leaves_a = ft::tree_leaves(a), leaves_b = ft::tree_leaves(b);
  for (size_t i = 0; i < leaves_a.size(); ++i) {
    if (!ft::allclose(leaves_a[i], leaves_b[i], 1e-6, 1e-7)) return false;
  }
  return true;
}

int64_t StatusKb(const char* name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(name);
  while (std::getline(status, line)) {
    if (line.compare(0, n, name) == 0 && line[n] == ':') return std::atoll(line.c_str() + n + 1);
  }
  return -1;
}

// Measure: one training step in this process; prints the peak increase of resident memory,
// its increase when the loss was computed (what the forward pass leaves for the backward
// pass), and the size of the gradients the step returns (kB).
int Measure(Variant variant) {
  Problem p = MakeProblem();
  // Every block above 64 KiB is its own mapping, returned to the system when freed (ft keeps
  // large blocks in the heap for speed, NOTE: [Allocator settings] in tensor/storage.cc; set
  // after its first allocation, which configures that), and ft's cache keeps none: resident
  // memory then follows live memory.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 64 * 1024);
  ft::SetCachedMemoryLimit(0);
  Problem tiny = p;
  (void)Step(tiny, variant);  // registries and one-time initialization
  ft::ReleaseCachedMemory();
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  const int64_t before = StatusKb("VmRSS");
  measuring = true;
  GradAndLoss gv = Step(p, variant);
  measuring = false;
  const int64_t peak = StatusKb("VmHWM");
  const ft::TensorList grads = ft::tree_leaves(gv.grads);
  int64_t grad_bytes = 0;
  for (const ft::Tensor& g : grads) grad_bytes += g.numel() * 4;
  std::printf("%lld %lld %lld\n", static_cast<long long>(peak - before),
              static_cast<long long>(forward_end_kb - before),
              static_cast<long long>(grad_bytes / 1024));
  return grads.size() == 2 * kDepth ? 0 : 1;
}

struct Measured {
  int64_t peak_kb = -1, forward_kb = -1, grads_kb = -1;
};

// RunMeasure: Measure(variant) in a fresh process (peak_kb -1 when it failed).
Measured RunMeasure(const std::string& self, Variant variant) {
  const std::string cmd = self + " --width " + std::to_string(kWidth) + " --batch " +
                          std::to_string(kBatch) + " --measure " +
                          kVariantNames[static_cast<int>(variant)];
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {};
  long long peak = -1, forward = -1, grads = -1;
  if (std::fscanf(pipe, "%lld %lld %lld", &peak, &forward, &grads) != 3) peak = -1;
  if (pclose(pipe) != 0) peak = -1;
  return {peak, forward, grads};
}

}  // namespace

int main(int argc, char** argv) {
  const char* measure = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--width") {
      kWidth = std::atoll(argv[i + 1]);
    } else if (flag == "--batch") {
      kBatch = std::atoll(argv[i + 1]);
    } else if (flag == "--measure") {
      measure = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: checkpoint_mlp [--width N] [--batch N]\n");
      return 2;
    }
  }
  if (kWidth <= 0 || kBatch <= 0) return 2;
  if (measure != nullptr) {
    for (int v = 0; v < 3; ++v) {
      if (std::string(measure) == kVariantNames[v]) return Measure(static_cast<Variant>(v));
    }
    return 2;
  }
  Problem p = MakeProblem();
  // The same loss and gradients with and without checkpoint.
  const GradAndLoss plain = Step(p, Variant::kPlain);
  bool same = true;
  for (Variant v : {Variant::kCheckpoint, Variant::kSaveMatmuls}) {
    const GradAndLoss ckpt = Step(p, v);
    same = same && ft::allclose(plain.value, ckpt.value, 0, 0);
    same = same && AllClose(plain.grads, ckpt.grads);
  }
  std::printf("%lld blocks of width %lld, batch %lld: checkpointed gradients == plain: %s\n",
              static_cast<long long>(kDepth), static_cast<long long>(kWidth),
              static_cast<long long>(kBatch), same ? "yes" : "NO");
  // A few steps of gradient descent with checkpointing.
  for (int it = 0; it < 5; ++it) {
    const GradAndLoss gv = Step(p, Variant::kCheckpoint);
    p.params = ft::tree_map([](const ft::Tensor& w, const ft::Tensor& g) { return w - g * 0.5; },
                            p.params, gv.grads);
    std::printf("step %d  loss %.5f\n", it, gv.value.item<double>());
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  // Per variant: the step's peak, and what its forward pass leaves for the backward pass.
  Measured m[3];
  for (int v = 0; v < 3; ++v) {
    m[v] = RunMeasure(self, static_cast<Variant>(v));
    if (m[v].peak_kb <= 0 || m[v].forward_kb <= 0) {
      std::printf("peak memory: measurement failed (%s)\n", kVariantNames[v]);
      return 1;
    }
    std::printf("%-12s peak of one step %7.1f MB (%.2fx), of which gradients %.1f MB; left by "
                "the forward pass for the backward pass %7.1f MB (%.2fx)\n",
                kVariantNames[v], m[v].peak_kb / 1024.0,
                static_cast<double>(m[v].peak_kb) / m[0].peak_kb, m[v].grads_kb / 1024.0,
                m[v].forward_kb / 1024.0,
                static_cast<double>(m[v].forward_kb) / m[0].forward_kb);
  }
  // Under AddressSanitizer freed memory sits in a quarantine and resident memory no longer
  // follows live memory: the figures are printed, not compared.
  if (kSanitized) return same ? 0 : 1;
  return same && m[1].forward_kb < m[0].forward_kb ? 0 : 1;
}
