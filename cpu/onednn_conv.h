// ft/cpu/onednn_conv.h  (internal to ft: the conv kernels call it)
//
// float32 convolutions on oneDNN 2.6 (Debian's libdnnl, what PyTorch's CPU convolutions
// run), in place of im2col + Eigen GEMM. oneDNN generates code for the CPU it runs on
// (AVX-512, AVX2, SSE4.1), which is what makes it 4x-13x faster than the im2col path on the
// shapes of docs/performance.md's "Model workloads".
//
// Three entry points, one convolution each, in torch's terms (NC + spatial, weights
// [O, C / groups, k...], torch's dilation >= 1):
//   - ConvForward:  dst = conv(src, weights) + bias;
//   - ConvBackwardData: src = conv's adjoint in its input applied to dst, i.e.
//     conv_transpose(dst, weights); the shapes are the forward's (src is the output here);
//   - ConvBackwardWeights: weights = conv's adjoint in its weights: the weight gradient for
//     the output gradient dst (conv_weight_grad).
// Each returns false, having written nothing, when oneDNN is not to be used for the problem:
// the backend is im2col (FT_CONV_BACKEND=im2col, or SetConvBackend), the problem is too small
// for oneDNN's per-call setup to pay off, or oneDNN refuses the descriptor. The caller then
// runs its im2col path, so every problem has an answer.
//
// Layout per class (measured, docs/performance.md): a spatial kernel with at least 16 input
// and output channels per group runs in the blocked layouts oneDNN picks (the operands are
// reordered in and out on each call); everything else (1x1 kernels, few channels, grouped
// per-example convolutions) runs oneDNN's GEMM-based convolution on the plain NC... buffers.
//
// Threads: oneDNN runs on its OpenMP runtime with GetNumThreads() threads, set on each call
// (FT_NUM_THREADS governs both). Results are deterministic for a given thread count and CPU.
// Thread-sanitizer builds never use oneDNN: its OpenMP runtime is not instrumented.
//
// Example (kernels/conv.cc):
//   if (!internal::onednn::ConvForward(problem, x, w, b, y)) { /* im2col + GEMM */ }
#ifndef FT_CPU_ONEDNN_CONV_H_
#define FT_CPU_ONEDNN_CONV_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"

namespace ft::kernels::internal::onednn {

// ConvDims: sizes of one problem, the same type as ft::Shape (//cpu sees no tensor).
using ConvDims = absl::InlinedVector<int64_t, 6>;

// ConvProblem: one convolution with n = 1, 2 or 3 spatial dims. Every ConvDims below has n + 2
// entries (src, dst: [N, C, spatial...]; weights: [O, C / groups, k...]) or n entries
// (stride, padding_l, padding_r, dilation). padding_r is what makes
// dst = (src + padding_l + padding_r - dilation * (k - 1) - 1) / stride + 1 exact; it may be
// negative where torch's floor drops trailing input.
struct ConvProblem {
  ConvDims src, weights, dst;
  ConvDims stride, padding_l, padding_r, dilation;
  int64_t groups = 1;
};

enum class ConvBackend {
  kAuto,    // oneDNN for float32 problems large enough to pay its setup, else im2col
  kIm2Col,  // never oneDNN
  kOneDnn,  // oneDNN for every float32 problem it accepts, however small (tests)
};

// The process-wide backend: FT_CONV_BACKEND=auto|im2col|onednn from the environment, read at
// the first convolution; SetConvBackend overrides it (tests compare the two paths).
ConvBackend GetConvBackend();
void SetConvBackend(ConvBackend backend);

// The contiguous float32 buffers of the problem's shapes; bias may be null (ConvForward).
bool ConvForward(const ConvProblem& p, const float* src, const float* weights,
                 const float* bias, float* dst);
bool ConvBackwardData(const ConvProblem& p, const float* dst, const float* weights, float* src);
// weights = the gradient of <dst, conv(src, w)> with respect to w (overwritten).
bool ConvBackwardWeights(const ConvProblem& p, const float* src, const float* dst,
                         float* weights);

// The name of the oneDNN implementation the last call on this thread ran (e.g.
// "jit:avx512_core", "x64:gemm:jit"), empty if it returned false: tests check which path ran.
const char* LastImplementation();

}  // namespace ft::kernels::internal::onednn

#endif  // FT_CPU_ONEDNN_CONV_H_
