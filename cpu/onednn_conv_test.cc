// oneDNN's float32 convolutions against the im2col path in float64 (an independent
// implementation: its own loops and Eigen's GEMM) over random problems: 1-3 spatial dims,
// stride, padding, dilation, groups (depthwise included), output_padding, plain and blocked
// layouts, unbatched inputs.
#include "cpu/onednn_conv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/conv.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"

namespace ft::kernels {
namespace {

using internal::onednn::ConvBackend;

// Forces a backend for one test, restoring auto afterwards.
class ScopedBackend {
 public:
  explicit ScopedBackend(ConvBackend b) { internal::onednn::SetConvBackend(b); }
  ~ScopedBackend() { internal::onednn::SetConvBackend(ConvBackend::kAuto); }
};

Tensor Random(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = u(rng);
  return tensor(values, shape);
}

std::vector<double> Values(const Tensor& t) {
  const Tensor c = to(contiguous(t), DType::kFloat64);
  const double* p = static_cast<const double*>(c.impl()->raw_data());
  return std::vector<double>(p, p + c.numel());
}

// |got - want| within float32 rounding of sums of `terms` products of values in [-1, 1].
void ExpectClose(const Tensor& got32, const Tensor& want64, int64_t terms,
                 const std::string& what) {
  ASSERT_EQ(got32.dtype(), DType::kFloat32) << what;
  ASSERT_EQ(Shape(got32.sizes().begin(), got32.sizes().end()),
            Shape(want64.sizes().begin(), want64.sizes().end()))
      << what;
  const std::vector<double> got = Values(got32), want = Values(want64);
  const double tol = 4e-6 * static_cast<double>(terms) + 1e-6;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol) << what << " at flat index " << i;
  }
}

struct Problem {
  int64_t n, batch, groups, cg, og;
  Shape image, kernel, stride, padding, dilation, output_padding;
  bool batched, bias;
  std::string Describe() const {
    auto list = [](const Shape& s) {
      std::string r = "[";
      for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
      return r + "]";
    };
    return "n=" + std::to_string(n) + " N=" + std::to_string(batch) +
           " groups=" + std::to_string(groups) + " C/g=" + std::to_string(cg) +
           " O/g=" + std::to_string(og) + " image=" + list(image) + " k=" + list(kernel) +
           " s=" + list(stride) + " p=" + list(padding) + " d=" + list(dilation) +
           " op=" + list(output_padding) + (batched ? "" : " unbatched") +
           (bias ? " bias" : "");
  }
};

Problem Draw(std::mt19937& rng) {
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem p;
  p.n = pick(1, 3);
  p.batch = pick(1, 3);
  p.groups = pick(1, 3);
  const bool wide = pick(0, 3) == 0;  // enough channels for the blocked layouts
  p.cg = wide ? pick(16, 20) : pick(1, 4);
  p.og = wide ? pick(16, 20) : pick(1, 4);
  if (wide) p.groups = 1;
  if (pick(0, 4) == 0) {  // depthwise
    p.cg = 1;
    p.og = 1;
    p.groups = pick(2, 6);
  }
  for (int64_t i = 0; i < p.n; ++i) {
    p.kernel.push_back(pick(1, 3));
    p.stride.push_back(pick(1, 3));
    p.dilation.push_back(pick(1, 2));
    p.padding.push_back(pick(0, 2));
    const int64_t extent = p.dilation[i] * (p.kernel[i] - 1) + 1;
    p.image.push_back(std::max<int64_t>(extent, pick(1, p.n == 3 ? 6 : 9)));
    // output_padding must stay below stride or dilation (torch's rule).
    p.output_padding.push_back(pick(0, std::max(p.stride[i], p.dilation[i]) - 1));
  }
  p.batched = pick(0, 4) != 0;
  p.bias = pick(0, 1) == 1;
  return p;
}

Tensor Conv(const Problem& p, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  if (p.n == 1) return conv1d(x, w, b, p.stride, p.padding, p.dilation, p.groups);
  if (p.n == 2) return conv2d(x, w, b, p.stride, p.padding, p.dilation, p.groups);
  return conv3d(x, w, b, p.stride, p.padding, p.dilation, p.groups);
}

Tensor ConvTranspose(const Problem& p, const Tensor& x, const Tensor& w,
                     const std::optional<Tensor>& b) {
  if (p.n == 1) {
    return conv_transpose1d(x, w, b, p.stride, p.padding, p.output_padding, p.groups,
                            p.dilation);
  }
  if (p.n == 2) {
    return conv_transpose2d(x, w, b, p.stride, p.padding, p.output_padding, p.groups,
                            p.dilation);
  }
  return conv_transpose3d(x, w, b, p.stride, p.padding, p.output_padding, p.groups,
                          p.dilation);
}

std::optional<Tensor> To64(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return to(*t, DType::kFloat64);
}

int64_t KernelElements(const Problem& p) {
  int64_t k = 1;
  for (int64_t v : p.kernel) k *= v;
  return k;
}

TEST(OneDnnConv, ForwardMatchesIm2ColInFloat64) {
  ScopedBackend backend(ConvBackend::kOneDnn);
  std::mt19937 rng(20261204);
  int ran_on_onednn = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = Draw(rng);
    Shape xs = {p.groups * p.cg};
    xs.insert(xs.end(), p.image.begin(), p.image.end());
    if (p.batched) xs.insert(xs.begin(), p.batch);
    Shape ws = {p.groups * p.og, p.cg};
    ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
    const Tensor x = Random(xs, rng), w = Random(ws, rng);
    const std::optional<Tensor> b =
        p.bias ? std::optional<Tensor>(Random({p.groups * p.og}, rng)) : std::nullopt;
    Tensor got;
    try {
      got = Conv(p, x, w, b);
    } catch (const Error&) {
      continue;  // no window fits: the same error either way (ops/conv_test covers it)
    }
    if (*internal::onednn::LastImplementation() != '\0') {
      ++ran_on_onednn;
    } else {
      ADD_FAILURE() << "oneDNN refused conv " << p.Describe();
    }
    const Tensor want = Conv(p, to(x, DType::kFloat64), to(w, DType::kFloat64), To64(b));
    ExpectClose(got, want, p.cg * KernelElements(p) + 1, "conv " + p.Describe());
  }
  EXPECT_GT(ran_on_onednn, 0);
}

TEST(OneDnnConv, TransposedMatchesIm2ColInFloat64) {
  ScopedBackend backend(ConvBackend::kOneDnn);
  std::mt19937 rng(4);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = Draw(rng);
    Shape xs = {p.groups * p.cg};
    xs.insert(xs.end(), p.image.begin(), p.image.end());
    if (p.batched) xs.insert(xs.begin(), p.batch);
    Shape ws = {p.groups * p.cg, p.og};  // [C_in, C_out / groups, k...]
    ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
    const Tensor x = Random(xs, rng), w = Random(ws, rng);
    const std::optional<Tensor> b =
        p.bias ? std::optional<Tensor>(Random({p.groups * p.og}, rng)) : std::nullopt;
    Tensor got;
    try {
      got = ConvTranspose(p, x, w, b);
    } catch (const Error&) {
      continue;
    }
    if (*internal::onednn::LastImplementation() == '\0') {
      ADD_FAILURE() << "oneDNN refused conv_transpose " << p.Describe();
    }
    const Tensor want =
        ConvTranspose(p, to(x, DType::kFloat64), to(w, DType::kFloat64), To64(b));
    ExpectClose(got, want, p.cg * KernelElements(p) + 1, "conv_transpose " + p.Describe());
  }
}

TEST(OneDnnConv, WeightGradMatchesIm2ColInFloat64) {
  ScopedBackend backend(ConvBackend::kOneDnn);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = Draw(rng);
    Shape xs = {p.groups * p.cg};
    xs.insert(xs.end(), p.image.begin(), p.image.end());
    if (p.batched) xs.insert(xs.begin(), p.batch);
    Shape ws = {p.groups * p.og, p.cg};
    ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
    const Tensor x = Random(xs, rng);
    Shape ys;
    try {
      ys = ConvShape("conv", p.n, x.sizes(), ws, std::nullopt, p.stride, p.padding, p.dilation,
                     p.groups);
    } catch (const Error&) {
      continue;
    }
    const Tensor gy = Random(ys, rng);
    const Tensor got =
        conv_weight_grad(x, ws, gy, p.stride, p.padding, p.dilation, p.groups);
    if (*internal::onednn::LastImplementation() == '\0') {
      ADD_FAILURE() << "oneDNN refused conv_weight_grad " << p.Describe();
    }
    const Tensor want = conv_weight_grad(to(x, DType::kFloat64), ws, to(gy, DType::kFloat64),
                                         p.stride, p.padding, p.dilation, p.groups);
    int64_t positions = p.batched ? p.batch : 1;
    for (size_t i = ys.size() - p.n; i < ys.size(); ++i) positions *= ys[i];
    ExpectClose(got, want, positions, "conv_weight_grad " + p.Describe());
  }
}

// The problems oneDNN must take (not fall back on): plain and blocked layouts, grouped,
// a floor that leaves trailing input unread (negative right padding).
TEST(OneDnnConv, RunsTheProblemsItIsChosenFor) {
  ScopedBackend backend(ConvBackend::kOneDnn);
  std::mt19937 rng(7);
  struct Case {
    const char* what;
    Shape x, w, stride, padding;
    int64_t groups;
  };
  const Case cases[] = {
      {"plain 3x3", {2, 3, 9, 9}, {4, 3, 3, 3}, {1}, {1}, 1},
      {"blocked 3x3", {2, 16, 9, 9}, {16, 16, 3, 3}, {1}, {1}, 1},
      {"1x1", {2, 32, 6, 6}, {32, 32, 1, 1}, {1}, {0}, 1},
      {"grouped", {2, 6, 7, 7}, {9, 2, 3, 3}, {1}, {0}, 3},
      {"floor drops a column", {1, 2, 6, 6}, {3, 2, 2, 2}, {2}, {0}, 1},
  };
  for (const Case& c : cases) {
    const Tensor x = Random(c.x, rng), w = Random(c.w, rng);
    internal::onednn::SetConvBackend(ConvBackend::kOneDnn);
    const Tensor got = conv2d(x, w, std::nullopt, c.stride, c.padding, {1}, c.groups);
    EXPECT_NE(std::string(internal::onednn::LastImplementation()), "") << c.what;
    const Tensor want = conv2d(to(x, DType::kFloat64), to(w, DType::kFloat64), std::nullopt,
                               c.stride, c.padding, {1}, c.groups);
    ExpectClose(got, want, c.w[1] * c.w[2] * c.w[3], c.what);
  }
}

// A 1x1 convolution of one 4x4 channel: 16 multiply-adds, far under auto's threshold.
internal::onednn::ConvProblem OneByOneOn4x4() {
  internal::onednn::ConvProblem p;
  p.src = {1, 1, 4, 4};
  p.weights = {1, 1, 1, 1};
  p.dst = {1, 1, 4, 4};
  p.stride = {1, 1};
  p.padding_l = {0, 0};
  p.padding_r = {0, 0};
  p.dilation = {1, 1};
  return p;
}

TEST(OneDnnConv, Im2ColBackendNeverCallsOneDnn) {
  ScopedBackend backend(ConvBackend::kIm2Col);
  const internal::onednn::ConvProblem p = OneByOneOn4x4();
  std::vector<float> x(16, 1.0f), w(1, 2.0f), y(16, -1.0f);
  EXPECT_FALSE(internal::onednn::ConvForward(p, x.data(), w.data(), nullptr, y.data()));
  EXPECT_EQ(y[0], -1.0f);  // nothing written
  internal::onednn::SetConvBackend(ConvBackend::kOneDnn);
  EXPECT_TRUE(internal::onednn::ConvForward(p, x.data(), w.data(), nullptr, y.data()));
  EXPECT_EQ(y[0], 2.0f);
}

TEST(OneDnnConv, AutoLeavesTinyProblemsToIm2Col) {
  ScopedBackend backend(ConvBackend::kAuto);
  const internal::onednn::ConvProblem p = OneByOneOn4x4();
  std::vector<float> x(16, 1.0f), w(1, 2.0f), y(16, -1.0f);
  EXPECT_FALSE(internal::onednn::ConvForward(p, x.data(), w.data(), nullptr, y.data()));
}

}  // namespace
}  // namespace ft::kernels
