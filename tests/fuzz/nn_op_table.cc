#include "tests/fuzz/nn_op_table.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft::fuzz {

namespace {

using OpFn = void (*)(FuzzInput&, Registers&);

struct OpEntry {
  const char* name;
  OpFn fn;
};

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Decoding parameters ----

// Param: a size-like parameter (a kernel size, stride, padding, group count) from one byte:
// mostly in [lo, lo + n), sometimes an edge case (0, negative, huge, one past the range).
int64_t Param(FuzzInput& in, int64_t lo, int64_t n) {
  const uint8_t b = in.Byte();
  if (b < 224) return lo + b % n;
  static constexpr int64_t kOdd[] = {0, -1, -2, kHuge, int64_t{1} << 62, kI64Max, kI64Min, 9};
  return kOdd[b % 8];
}

// PerDim: a per-spatial-dim argument of an op with n spatial dims: one value for all dims,
// one per dim, or (sometimes) none or one too many.
Shape PerDim(FuzzInput& in, int64_t n, int64_t lo, int64_t count) {
  int64_t len = n;
  switch (in.Below(8)) {
    case 0:
    case 1:
    case 2:
    case 3:
      len = 1;
      break;
    case 7:
      len = in.Bool() ? 0 : n + 1;
      break;
    default:
      break;
  }
  Shape s(static_cast<size_t>(len));
  for (int64_t& v : s) v = Param(in, lo, count);
  return s;
}

// Extent: a dim size of an operand: mostly 1-4, sometimes 0.
int64_t Extent(FuzzInput& in) {
  static constexpr int64_t kExtents[] = {1, 2, 3, 4, 2, 3, 1, 0};
  return kExtents[in.Below(std::size(kExtents))];
}

// SmallShape: rank in [min_rank, max_rank], each size an Extent.
Shape SmallShape(FuzzInput& in, int64_t min_rank, int64_t max_rank) {
  Shape s(static_cast<size_t>(min_rank + in.Below(max_rank - min_rank + 1)));
  for (int64_t& v : s) v = Extent(in);
  return s;
}

// Spatial: n spatial sizes in [1, max].
Shape Spatial(FuzzInput& in, int64_t n, int64_t max) {
  Shape s(static_cast<size_t>(n));
  for (int64_t& v : s) v = 1 + in.Below(max);
  return s;
}

// OperandDType: the dtype an op's operands are converted to: floating, rarely int64 or bool.
DType OperandDType(FuzzInput& in) {
  const int64_t b = in.Below(16);
  if (b == 14) return kInt64;
  if (b == 15) return kBool;
  return b % 2 == 0 ? kFloat32 : kFloat64;
}

double FromTable(FuzzInput& in, std::initializer_list<double> values) {
  return values.begin()[in.Below(static_cast<int64_t>(values.size()))];
}

double Eps(FuzzInput& in) { return FromTable(in, {1e-5, 1e-5, 1e-5, 1e-12, 0.0, 1.0, -1.0, kNaN}); }

Reduction::Mode DecodeReduction(FuzzInput& in) {
  static constexpr Reduction::Mode kModes[] = {
      Reduction::kMean, Reduction::kSum,       Reduction::kNone,
      Reduction::kMean, Reduction::kSum,       Reduction::kNone,
      Reduction::kBatchMean, static_cast<Reduction::Mode>(7)};  // the last one is unknown
  return kModes[in.Below(std::size(kModes))];
}

// ---- Building operands ----

// NumelOf: the element count of shape, or -1 when a size is negative or the count is more
// than an operand should be.
int64_t NumelOf(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0 || s > 64) return -1;
    n *= s;
    if (n > 4 * kMaxNumel) return -1;
  }
  return n;
}

// Fit: x's elements flattened, cut or tiled to shape's count and reshaped; x itself when the
// shape is not one an operand may have (the op then sees a mismatched operand).
Tensor Fit(const Tensor& x, IntArrayRef shape) {
  const int64_t n = NumelOf(shape);
  if (n < 0) return x;
  const Tensor flat = reshape(x, Shape{-1});
  const int64_t have = flat.numel();
  if (have == 0) return zeros(shape, x.dtype());
  const Tensor tiled = have >= n ? flat : repeat(flat, Shape{(n + have - 1) / have});
  return reshape(narrow(tiled, 0, 0, n), shape);
}

// Constant: an operand made here (not from the function's inputs): varied values, no
// randomness (so it is the same under every transform).
Tensor Constant(IntArrayRef shape, DType dtype) {
  const int64_t n = NumelOf(shape);
  if (n < 0) return zeros(shape, dtype);  // throws for a negative size, as the op would
  const Tensor values = mul(sin(arange(Scalar(int64_t{0}), Scalar(n), Scalar(int64_t{1}), kFloat64)), Scalar(3.0));
  return to(reshape(values, shape), dtype);
}

// Operand: an operand of `shape` and `dtype` made from a register (see the header comment),
// sometimes the register as it is or a constant.
Tensor Operand(FuzzInput& in, const Registers& r, IntArrayRef shape, DType dtype) {
  const int64_t mode = in.Below(16);
  const Tensor x = Pick(in, r);
  switch (mode) {
    case 0:
      return x;
    case 1:
      return Fit(x, shape);
    case 2:
      return Constant(shape, dtype);
    default:
      return to(Fit(x, shape), dtype);
  }
}

std::optional<Tensor> OptionalOperand(FuzzInput& in, const Registers& r, IntArrayRef shape,
                                      DType dtype) {
  if (in.Below(3) == 0) return std::nullopt;
  return Operand(in, r, shape, dtype);
}

// IndexOperand: int64 indices of `shape` for a dim of `bound` elements: made by MakeIndex
// (a random op: under vmap's default randomness "error" it throws), or computed from a
// register (batched under vmap), clamped into range or not.
Tensor IndexOperand(FuzzInput& in, const Registers& r, IntArrayRef shape, int64_t bound) {
  if (in.Below(2) != 0) return MakeIndex(in, shape, bound);
  const Tensor x = Pick(in, r);
  const Tensor i = to(Fit(x, shape), kInt64);
  if (in.Bool()) return i;
  return clamp(i, Scalar(int64_t{0}), Scalar(std::max<int64_t>(bound - 1, 0)));
}

// MaskOperand: a bool mask of `shape`: a comparison of a register (batched under vmap), a
// constant, or a register as it is (often not bool: an error).
Tensor MaskOperand(FuzzInput& in, const Registers& r, IntArrayRef shape) {
  switch (in.Below(6)) {
    case 0:
      return Pick(in, r);
    case 1:
      return gt(Constant(shape, kFloat32), Scalar(0.5));
    default: {
      const Tensor x = Pick(in, r);
      return gt(to(Fit(x, shape), kFloat64), Scalar(0.0));
    }
  }
}

// ---- Shapes of results ----

// At: the k-th value of a per-dim argument (one value for all, or one per dim), or fallback.
int64_t At(IntArrayRef v, size_t k, int64_t fallback) {
  if (v.empty()) return fallback;
  if (v.size() == 1) return v[0];
  return k < v.size() ? v[k] : fallback;
}

// ConvOut: a convolution's (or pool's, or unfold's block grid's) output size along one dim,
// clamped to [1, 8]; 1 when a parameter is out of range (the op throws then anyway).
int64_t ConvOut(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                int64_t dilation) {
  if (size < 0 || size > 64 || stride <= 0 || stride > 8 || padding < 0 || padding > 8 ||
      dilation <= 0 || dilation > 8 || kernel <= 0 || kernel > 8) {
    return 1;
  }
  const int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  if (span < 0) return 1;
  return std::min<int64_t>(span / stride + 1, 8);
}

// Batched: [N, C, *spatial] for N >= 1 (or 0 rarely), or [C, *spatial] (unbatched).
Shape Batched(int64_t batch, int64_t channels, IntArrayRef spatial) {
  Shape s;
  if (batch >= 0) s.push_back(batch);
  s.push_back(channels);
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

// DecodeBatch: -1 (unbatched), 1, 2 or 0.
int64_t DecodeBatch(FuzzInput& in) {
  static constexpr int64_t kBatch[] = {1, 2, -1, 1, 2, -1, 1, 0};
  return kBatch[in.Below(std::size(kBatch))];
}

// ---- Convolution and pooling ----

void Conv(FuzzInput& in, Registers& r, int64_t n) {
  const DType dt = OperandDType(in);
  const int64_t batch = DecodeBatch(in);
  const int64_t g = 1 + in.Below(2);
  const int64_t cin = g * (1 + in.Below(2));
  const int64_t cout = g * (1 + in.Below(2));
  const Shape spatial = Spatial(in, n, n == 3 ? 3 : 5);
  const Shape kernel = Spatial(in, n, 3);
  const int64_t groups = in.Below(8) == 0 ? Param(in, 0, 4) : g;
  const Shape stride = PerDim(in, n, 1, 2);
  const int64_t padding_mode = in.Below(6);
  const Shape padding = PerDim(in, n, 0, 2);
  const Shape dilation = PerDim(in, n, 1, 2);
  const Tensor x = Operand(in, r, Batched(batch, cin, spatial), dt);
  Shape wshape = {cout, cin / g};
  wshape.insert(wshape.end(), kernel.begin(), kernel.end());
  const Tensor w = Operand(in, r, wshape, dt);
  const std::optional<Tensor> b = OptionalOperand(in, r, {cout}, dt);
  Tensor y;
  if (padding_mode <= 1) {
    const ConvPadding p = padding_mode == 0 ? ConvPadding::kSame : ConvPadding::kValid;
    y = n == 1 ? conv1d(x, w, b, stride, p, dilation, groups)
        : n == 2 ? conv2d(x, w, b, stride, p, dilation, groups)
                 : conv3d(x, w, b, stride, p, dilation, groups);
  } else {
    y = n == 1 ? conv1d(x, w, b, stride, padding, dilation, groups)
        : n == 2 ? conv2d(x, w, b, stride, padding, dilation, groups)
                 : conv3d(x, w, b, stride, padding, dilation, groups);
  }
  Put(r, y);
}

void ConvTranspose(FuzzInput& in, Registers& r, int64_t n) {
  const DType dt = OperandDType(in);
  const int64_t batch = DecodeBatch(in);
  const int64_t g = 1 + in.Below(2);
  const int64_t cin = g * (1 + in.Below(2));
  const int64_t cout = g * (1 + in.Below(2));
  const Shape spatial = Spatial(in, n, 3);
  const Shape kernel = Spatial(in, n, 2);
  const int64_t groups = in.Below(8) == 0 ? Param(in, 0, 4) : g;
  const Shape stride = PerDim(in, n, 1, 2);
  const Shape padding = PerDim(in, n, 0, 2);
  const Shape output_padding = PerDim(in, n, 0, 2);
  const Shape dilation = PerDim(in, n, 1, 2);
  const Tensor x = Operand(in, r, Batched(batch, cin, spatial), dt);
  Shape wshape = {cin, cout / g};
  wshape.insert(wshape.end(), kernel.begin(), kernel.end());
  const Tensor w = Operand(in, r, wshape, dt);
  const std::optional<Tensor> b = OptionalOperand(in, r, {cout}, dt);
  Put(r, n == 1   ? conv_transpose1d(x, w, b, stride, padding, output_padding, groups, dilation)
         : n == 2 ? conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)
                  : conv_transpose3d(x, w, b, stride, padding, output_padding, groups, dilation));
}

// PoolInput: [N, C, *spatial] (or unbatched) of n spatial dims up to 5.
Tensor PoolInput(FuzzInput& in, const Registers& r, int64_t n) {
  const DType dt = OperandDType(in);
  const int64_t batch = DecodeBatch(in);
  const int64_t channels = Extent(in);
  const Shape spatial = Spatial(in, n, 5);
  return Operand(in, r, Batched(batch, channels, spatial), dt);
}

void MaxPool(FuzzInput& in, Registers& r, int64_t n) {
  const Tensor x = PoolInput(in, r, n);
  const Shape kernel = PerDim(in, n, 1, 3);
  const Shape stride = in.Below(3) == 0 ? Shape{} : PerDim(in, n, 1, 2);
  const Shape padding = PerDim(in, n, 0, 2);
  const Shape dilation = PerDim(in, n, 1, 2);
  const bool ceil_mode = in.Bool();
  if (in.Bool()) {
    auto [values, indices] =
        n == 1 ? max_pool1d_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
               : max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode);
    Put(r, values);
    Put(r, indices);
  } else {
    Put(r, n == 1 ? max_pool1d(x, kernel, stride, padding, dilation, ceil_mode)
                  : max_pool2d(x, kernel, stride, padding, dilation, ceil_mode));
  }
}

void AvgPool(FuzzInput& in, Registers& r, int64_t n) {
  const Tensor x = PoolInput(in, r, n);
  const Shape kernel = PerDim(in, n, 1, 3);
  const Shape stride = in.Below(3) == 0 ? Shape{} : PerDim(in, n, 1, 2);
  const Shape padding = PerDim(in, n, 0, 2);
  const bool ceil_mode = in.Bool();
  const bool count_include_pad = in.Bool();
  if (n == 1) {
    Put(r, avg_pool1d(x, kernel, stride, padding, ceil_mode, count_include_pad));
    return;
  }
  std::optional<int64_t> divisor_override;
  if (in.Below(4) == 0) divisor_override = Param(in, 1, 3);
  Put(r, avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override));
}

void AdaptivePool(FuzzInput& in, Registers& r, int64_t n, bool max) {
  const Tensor x = PoolInput(in, r, n);
  const Shape output_size = PerDim(in, n, 1, 4);
  if (max) {
    auto [values, indices] = adaptive_max_pool2d(x, output_size);
    Put(r, values);
    Put(r, indices);
  } else {
    Put(r, n == 1 ? adaptive_avg_pool1d(x, output_size) : adaptive_avg_pool2d(x, output_size));
  }
}

void Interpolate(FuzzInput& in, Registers& r) {
  // const char*: interpolate takes an absl::string_view, which is not std::string_view here.
  static constexpr const char* kLinear[] = {"linear", "bilinear", "trilinear"};
  static constexpr const char* kOddModes[] = {"bicubic", "area", "bogus", ""};
  const DType dt = OperandDType(in);
  const int64_t n = 1 + in.Below(3);
  const int64_t batch = in.Below(8) == 0 ? -1 : 1 + in.Below(2);
  const int64_t channels = Extent(in);
  const Shape spatial = Spatial(in, n, 4);
  const Tensor x = Operand(in, r, Batched(batch, channels, spatial), dt);
  const char* mode = "nearest";
  switch (in.Below(8)) {
    case 0: mode = "nearest"; break;
    case 1: mode = "nearest-exact"; break;
    case 2:
    case 3: mode = kLinear[n - 1]; break;
    case 4:
    case 5:
    case 6: mode = kLinear[in.Below(3)]; break;
    default: mode = kOddModes[in.Below(std::size(kOddModes))]; break;
  }
  Shape size;
  std::vector<double> scale_factor;
  const int64_t which = in.Below(5);  // 0-1 size, 2-3 scale_factor, 4 both or neither
  if (which <= 1 || (which == 4 && in.Bool())) size = PerDim(in, n, 1, 6);
  if (which == 2 || which == 3 || (which == 4 && in.Bool())) {
    const int64_t len = in.Below(4) == 0 ? in.Below(4) : (in.Bool() ? 1 : n);
    for (int64_t i = 0; i < len; ++i) {
      // At most 3: a scale of 100 on three dims is a result that is legitimately too large
      // to compute here; the huge and non-finite ones must be refused before any allocation.
      scale_factor.push_back(FromTable(
          in, {0.5, 1.0, 1.5, 2.0, 3.0, 0.75, 2.5, 1.0 / 3, 0.0, -1.0, 1e-3, 1e30, 9.3e18, kNaN,
               kInf, -kInf}));
    }
  }
  std::optional<bool> align_corners;
  const int64_t ac = in.Below(3);
  if (ac != 0) align_corners = ac == 1;
  std::optional<bool> recompute;
  const int64_t rc = in.Below(4);
  if (rc >= 2) recompute = rc == 2;
  const bool antialias = in.Below(8) == 0;
  Put(r, interpolate(x, size, scale_factor, mode, align_corners, recompute, antialias));
}

// ---- Normalization ----

// NormInput: [N, C, *spatial] with 0-2 spatial dims (or a mismatched register).
Tensor NormInput(FuzzInput& in, const Registers& r, DType dt, int64_t channels) {
  const int64_t batch = 1 + in.Below(3);
  const Shape spatial = Spatial(in, in.Below(3), 3);
  return Operand(in, r, Batched(batch, channels, spatial), dt);
}

void BatchOrInstanceNorm(FuzzInput& in, Registers& r, bool instance) {
  const DType dt = OperandDType(in);
  const int64_t channels = Extent(in);
  const Tensor x = NormInput(in, r, dt, channels);
  const std::optional<Tensor> running_mean = OptionalOperand(in, r, {channels}, dt);
  std::optional<Tensor> running_var = OptionalOperand(in, r, {channels}, dt);
  if (running_var && in.Bool()) running_var = abs(*running_var);
  const std::optional<Tensor> weight = OptionalOperand(in, r, {channels}, dt);
  const std::optional<Tensor> bias = OptionalOperand(in, r, {channels}, dt);
  const bool use_batch_stats = in.Bool();
  const double momentum = FromTable(in, {0.1, 0.1, 0.0, 1.0, 0.5, -1.0, kNaN});
  const double eps = Eps(in);
  const NormResult result =
      instance ? instance_norm(x, running_mean, running_var, weight, bias, use_batch_stats,
                               momentum, eps)
               : batch_norm(x, running_mean, running_var, weight, bias, use_batch_stats,
                            momentum, eps);
  Put(r, result.output);
  if (result.running_mean) Put(r, *result.running_mean);
  if (result.running_var) Put(r, *result.running_var);
}

// ---- Losses ----

// LossPair: input and target of one shape, or a target that broadcasts (or does not).
std::pair<Tensor, Tensor> LossPair(FuzzInput& in, const Registers& r) {
  const DType dt = OperandDType(in);
  const Shape shape = SmallShape(in, 0, 3);
  Shape target_shape = shape;
  switch (in.Below(6)) {
    case 0:  // trailing dims: broadcasts
      if (!target_shape.empty()) target_shape.erase(target_shape.begin());
      break;
    case 1:
      target_shape = SmallShape(in, 0, 3);
      break;
    default:
      break;
  }
  const Tensor input = Operand(in, r, shape, dt);
  const DType target_dt = in.Below(8) == 0 ? OperandDType(in) : dt;
  const Tensor target = Operand(in, r, target_shape, target_dt);
  return {input, target};
}

// ClassLoss: logits input [C] or [N, C, *d], and the shape and bound of a class-index target.
struct ClassLoss {
  Tensor input;
  Shape target_shape;  // [] or [N, *d]
  int64_t classes = 1;
  DType dtype = kFloat32;
};

ClassLoss DecodeClassLoss(FuzzInput& in, const Registers& r) {
  ClassLoss c;
  c.dtype = OperandDType(in);
  c.classes = Extent(in);
  Shape shape;
  if (in.Below(4) == 0) {
    shape = {c.classes};
  } else {
    const int64_t batch = Extent(in);
    shape = Batched(batch, c.classes, Spatial(in, in.Below(3) == 0 ? 1 : 0, 3));
    c.target_shape = shape;
    c.target_shape.erase(c.target_shape.begin() + 1);
  }
  c.input = Operand(in, r, shape, c.dtype);
  return c;
}

int64_t IgnoreIndex(FuzzInput& in, int64_t classes) {
  switch (in.Below(6)) {
    case 0: return 0;
    case 1: return classes;
    case 2: return -1;
    case 3: return kI64Min;
    default: return -100;
  }
}

// ---- Indexing ----

TensorIndices DecodeIndices(FuzzInput& in, const Registers& r, const Tensor& x) {
  TensorIndices indices(static_cast<size_t>(in.Below(x.dim() + 2)));
  for (size_t i = 0; i < indices.size(); ++i) {
    if (in.Below(3) == 0) continue;  // a `:`
    Shape shape;  // shapes that broadcast with each other, or not
    switch (in.Below(6)) {
      case 0: break;
      case 1: shape = {2}; break;
      case 2: shape = {1}; break;
      case 3: shape = {2, 1}; break;
      case 4: shape = {3}; break;
      default: shape = {0}; break;
    }
    indices[i] = IndexOperand(in, r, shape, SizeAt(x, static_cast<int64_t>(i)));
  }
  return indices;
}

// Einsum: letter sizes first, then each operand's subscripts and an operand fitted to them,
// so most equations are valid; sometimes a stray character, a repeated or unused output
// letter, or operands that do not fit make it invalid.
void Einsum(FuzzInput& in, Registers& r) {
  static constexpr char kLetters[] = "abcd";
  static constexpr std::string_view kJunk[] = {".", "-", ">", ",", "...", " ", "1", "Z", "->"};
  int64_t letter_size[4];
  for (int64_t& s : letter_size) s = 1 + in.Below(3);
  const int64_t ellipsis_size = in.Below(3);
  const DType dt = OperandDType(in);
  const int64_t num = 1 + in.Below(3);
  std::string equation;
  TensorList operands;
  bool any_ellipsis = false;
  for (int64_t i = 0; i < num; ++i) {
    const int64_t rank = in.Below(4);
    std::string term;
    Shape shape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t l = in.Below(4);
      term += kLetters[l];
      shape.push_back(letter_size[l]);
    }
    if (in.Below(6) == 0) {
      const int64_t at = in.Below(rank + 1);
      term.insert(static_cast<size_t>(at), "...");
      shape.insert(shape.begin() + at, ellipsis_size);
      any_ellipsis = true;
    }
    if (i > 0) equation += ",";
    equation += term;
    operands.push_back(Operand(in, r, shape, dt));
  }
  switch (in.Below(5)) {
    case 0:
    case 1:
      break;  // implicit output
    case 2:
    case 3: {
      equation += "->";
      if (any_ellipsis && in.Bool()) equation += "...";
      const int64_t k = in.Below(4);
      for (int64_t i = 0; i < k; ++i) equation += kLetters[in.Below(4)];
      break;
    }
    default: {
      const std::string_view junk = kJunk[in.Below(std::size(kJunk))];
      equation.insert(static_cast<size_t>(in.Below(static_cast<int64_t>(equation.size()) + 1)),
                      junk);
      break;
    }
  }
  if (in.Below(8) == 0) operands.pop_back();  // a term count that differs (or none at all)
  if (Verbose()) std::fprintf(stderr, "    einsum \"%s\"\n", equation.c_str());
  Put(r, einsum(equation, operands));
}

// Activation: an operand of any small shape for an elementwise op.
Tensor ActivationInput(FuzzInput& in, const Registers& r) {
  const DType dt = OperandDType(in);
  const Shape shape = SmallShape(in, 0, 3);
  return Operand(in, r, shape, dt);
}

#define FT_NN_OP(name) {#name, [](FuzzInput& in, Registers& r)
#define FT_NN_ACTIVATION(op) \
  {#op, [](FuzzInput& in, Registers& r) { Put(r, ft::op(ActivationInput(in, r))); }}

// The table. Append only (see the header comment).
const OpEntry kNnOps[] = {
    // ---- convolution, pooling, resizing ----
    FT_NN_OP(conv1d) { Conv(in, r, 1); }},
    FT_NN_OP(conv2d) { Conv(in, r, 2); }},
    FT_NN_OP(conv3d) { Conv(in, r, 3); }},
    FT_NN_OP(conv_transpose1d) { ConvTranspose(in, r, 1); }},
    FT_NN_OP(conv_transpose2d) { ConvTranspose(in, r, 2); }},
    FT_NN_OP(conv_transpose3d) { ConvTranspose(in, r, 3); }},
    FT_NN_OP(conv_weight_grad) {
      const DType dt = OperandDType(in);
      const int64_t n = 1 + in.Below(2);
      const int64_t batch = 1 + in.Below(2);
      const int64_t g = 1 + in.Below(2);
      const int64_t cin = g * (1 + in.Below(2));
      const int64_t cout = g * (1 + in.Below(2));
      const Shape spatial = Spatial(in, n, 5);
      const Shape kernel = Spatial(in, n, 3);
      const Shape stride = PerDim(in, n, 1, 2);
      const Shape padding = PerDim(in, n, 0, 2);
      const Shape dilation = PerDim(in, n, 1, 2);
      const int64_t groups = in.Below(8) == 0 ? Param(in, 0, 4) : g;
      Shape weight_size = {cout, cin / g};
      weight_size.insert(weight_size.end(), kernel.begin(), kernel.end());
      if (in.Below(8) == 0) weight_size = in.SizeList(static_cast<int64_t>(n) + 3);
      Shape out_shape = {batch, cout};
      for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
        out_shape.push_back(ConvOut(spatial[k], kernel[k], At(stride, k, 1), At(padding, k, 0),
                                    At(dilation, k, 1)));
      }
      const Tensor x = Operand(in, r, Batched(batch, cin, spatial), dt);
      const Tensor grad_output = Operand(in, r, out_shape, dt);
      Put(r, conv_weight_grad(x, weight_size, grad_output, stride, padding, dilation, groups));
    }},
    FT_NN_OP(unfold) {
      const Tensor x = PoolInput(in, r, 2);
      const Shape kernel = PerDim(in, 2, 1, 3);
      const Shape dilation = PerDim(in, 2, 1, 2);
      const Shape padding = PerDim(in, 2, 0, 2);
      const Shape stride = PerDim(in, 2, 1, 2);
      Put(r, unfold(x, kernel, dilation, padding, stride));
    }},
    FT_NN_OP(fold) {
      const DType dt = OperandDType(in);
      const int64_t batch = DecodeBatch(in);
      const int64_t channels = 1 + in.Below(2);
      const Shape output_size = in.Below(8) == 0 ? PerDim(in, 2, 1, 5) : Spatial(in, 2, 5);
      const Shape kernel = PerDim(in, 2, 1, 3);
      const Shape dilation = PerDim(in, 2, 1, 2);
      const Shape padding = PerDim(in, 2, 0, 2);
      const Shape stride = PerDim(in, 2, 1, 2);
      int64_t blocks = 1;
      for (size_t k = 0; k < 2; ++k) {
        blocks *= ConvOut(At(output_size, k, 1), At(kernel, k, 1), At(stride, k, 1),
                          At(padding, k, 0), At(dilation, k, 1));
      }
      if (in.Below(8) == 0) blocks += 1;
      const int64_t column = channels * std::clamp<int64_t>(At(kernel, 0, 1), 1, 3) *
                             std::clamp<int64_t>(At(kernel, 1, 1), 1, 3);
      const Tensor x = Operand(in, r, Batched(batch, column, {blocks}), dt);
      Put(r, fold(x, output_size, kernel, dilation, padding, stride));
    }},
    FT_NN_OP(max_pool1d) { MaxPool(in, r, 1); }},
    FT_NN_OP(max_pool2d) { MaxPool(in, r, 2); }},
    FT_NN_OP(avg_pool1d) { AvgPool(in, r, 1); }},
    FT_NN_OP(avg_pool2d) { AvgPool(in, r, 2); }},
    FT_NN_OP(adaptive_avg_pool1d) { AdaptivePool(in, r, 1, false); }},
    FT_NN_OP(adaptive_avg_pool2d) { AdaptivePool(in, r, 2, false); }},
    FT_NN_OP(adaptive_max_pool2d) { AdaptivePool(in, r, 2, true); }},
    FT_NN_OP(interpolate) { Interpolate(in, r); }},
    // ---- normalization ----
    FT_NN_OP(layer_norm) {
      const DType dt = OperandDType(in);
      const Shape shape = SmallShape(in, 0, 3);
      const int64_t k = in.Below(static_cast<int64_t>(shape.size()) + 1);
      Shape normalized(shape.end() - k, shape.end());
      if (in.Below(8) == 0) normalized = in.SizeList(2);
      const Tensor x = Operand(in, r, shape, dt);
      const std::optional<Tensor> weight = OptionalOperand(in, r, normalized, dt);
      const std::optional<Tensor> bias = OptionalOperand(in, r, normalized, dt);
      Put(r, layer_norm(x, normalized, weight, bias, Eps(in)));
    }},
    FT_NN_OP(rms_norm) {
      const DType dt = OperandDType(in);
      const Shape shape = SmallShape(in, 0, 3);
      const int64_t k = in.Below(static_cast<int64_t>(shape.size()) + 1);
      Shape normalized(shape.end() - k, shape.end());
      if (in.Below(8) == 0) normalized = in.SizeList(2);
      const Tensor x = Operand(in, r, shape, dt);
      const std::optional<Tensor> weight = OptionalOperand(in, r, normalized, dt);
      std::optional<double> eps;
      if (in.Bool()) eps = Eps(in);
      Put(r, rms_norm(x, normalized, weight, eps));
    }},
    FT_NN_OP(normalize) {
      const Tensor x = ActivationInput(in, r);
      const double p = FromTable(in, {2.0, 1.0, 0.0, 3.0, 0.5, -1.0, kInf, kNaN});
      const int64_t dim = in.Dim(x.dim());
      Put(r, normalize(x, p, dim, FromTable(in, {1e-12, 1e-12, 0.0, 1.0, -1.0, kNaN})));
    }},
    FT_NN_OP(group_norm) {
      const DType dt = OperandDType(in);
      const int64_t g = 1 + in.Below(2);
      const int64_t channels = g * (1 + in.Below(2));
      const int64_t num_groups = in.Below(8) == 0 ? Param(in, 0, 4) : g;
      const Tensor x = NormInput(in, r, dt, channels);
      const std::optional<Tensor> weight = OptionalOperand(in, r, {channels}, dt);
      const std::optional<Tensor> bias = OptionalOperand(in, r, {channels}, dt);
      Put(r, group_norm(x, num_groups, weight, bias, Eps(in)));
    }},
    FT_NN_OP(batch_norm) { BatchOrInstanceNorm(in, r, false); }},
    FT_NN_OP(instance_norm) { BatchOrInstanceNorm(in, r, true); }},
    // ---- attention and contractions ----
    FT_NN_OP(scaled_dot_product_attention) {
      const DType dt = OperandDType(in);
      const Shape batch = Spatial(in, in.Below(3), 2);
      const int64_t l = 1 + in.Below(3);
      const int64_t s = 1 + in.Below(3);
      const int64_t e = 1 + in.Below(3);
      const int64_t ev = 1 + in.Below(3);
      auto shape = [&batch](int64_t a, int64_t b) {
        Shape sh = batch;
        sh.push_back(a);
        sh.push_back(b);
        return sh;
      };
      const Tensor q = Operand(in, r, shape(l, e), dt);
      const Tensor k = Operand(in, r, shape(s, e), dt);
      const Tensor v = Operand(in, r, shape(s, ev), dt);
      std::optional<Tensor> mask;
      switch (in.Below(5)) {
        case 1:
          mask = MaskOperand(in, r, Shape{l, s});
          break;
        case 2:
          mask = MaskOperand(in, r, shape(l, s));
          break;
        case 3:
          mask = Operand(in, r, Shape{l, s}, dt);
          break;
        default:
          break;
      }
      const double dropout_p =
          in.Below(4) == 0 ? FromTable(in, {0.5, 1.0, 0.25, -0.1, 1.5, kNaN}) : 0.0;
      const bool is_causal = in.Below(4) == 0;
      std::optional<double> scale;
      if (in.Below(4) == 0) scale = in.Double();
      Put(r, scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal, scale));
    }},
    FT_NN_OP(addmm) {
      const DType dt = OperandDType(in);
      const int64_t n = Extent(in);
      const int64_t m = Extent(in);
      const int64_t p = Extent(in);
      Shape bias_shape;  // what broadcasts to [n, p]
      switch (in.Below(5)) {
        case 0: bias_shape = {n, p}; break;
        case 1: bias_shape = {p}; break;
        case 2: bias_shape = {1}; break;
        case 3: bias_shape = {1, 1}; break;
        default: break;
      }
      const Tensor input = Operand(in, r, bias_shape, dt);
      const Tensor mat1 = Operand(in, r, {n, m}, dt);
      const Tensor mat2 = Operand(in, r, {m, p}, dt);
      const bool odd_scalars = in.Below(3) == 0;
      const Scalar beta = odd_scalars ? in.AnyScalar() : Scalar(int64_t{1});
      const Scalar alpha = odd_scalars ? in.AnyScalar() : Scalar(int64_t{1});
      Put(r, addmm(input, mat1, mat2, beta, alpha));
    }},
    FT_NN_OP(baddbmm) {
      const DType dt = OperandDType(in);
      const int64_t b = Extent(in);
      const int64_t n = Extent(in);
      const int64_t m = Extent(in);
      const int64_t p = Extent(in);
      const Shape bias_shape = in.Bool() ? Shape{b, n, p} : Shape{p};
      const Tensor input = Operand(in, r, bias_shape, dt);
      const Tensor batch1 = Operand(in, r, {b, n, m}, dt);
      const Tensor batch2 = Operand(in, r, {b, m, p}, dt);
      const bool odd_scalars = in.Below(3) == 0;
      const Scalar beta = odd_scalars ? in.AnyScalar() : Scalar(int64_t{1});
      const Scalar alpha = odd_scalars ? in.AnyScalar() : Scalar(int64_t{1});
      Put(r, baddbmm(input, batch1, batch2, beta, alpha));
    }},
    FT_NN_OP(einsum) { Einsum(in, r); }},
    // ---- activations ----
    FT_NN_OP(gelu) {
      static constexpr std::string_view kApproximate[] = {"none", "tanh", "none", "tanh",
                                                         "exact"};
      const Tensor x = ActivationInput(in, r);
      Put(r, gelu(x, kApproximate[in.Below(std::size(kApproximate))]));
    }},
    FT_NN_ACTIVATION(silu), FT_NN_ACTIVATION(mish),
    FT_NN_OP(softplus) {
      const Tensor x = ActivationInput(in, r);
      const double beta = in.Bool() ? 1.0 : in.Double();
      const double threshold = in.Bool() ? 20.0 : in.Double();
      Put(r, softplus(x, beta, threshold));
    }},
    FT_NN_OP(elu) {
      const Tensor x = ActivationInput(in, r);
      Put(r, elu(x, in.Bool() ? 1.0 : in.Double()));
    }},
    FT_NN_ACTIVATION(selu),
    FT_NN_OP(celu) {
      const Tensor x = ActivationInput(in, r);
      Put(r, celu(x, in.Bool() ? 1.0 : in.Double()));
    }},
    FT_NN_OP(leaky_relu) {
      const Tensor x = ActivationInput(in, r);
      Put(r, leaky_relu(x, in.Bool() ? 0.01 : in.Double()));
    }},
    FT_NN_OP(hardtanh) {
      const Tensor x = ActivationInput(in, r);
      const bool defaults = in.Bool();
      const double lo = defaults ? -1.0 : in.Double();
      const double hi = defaults ? 1.0 : in.Double();
      Put(r, hardtanh(x, lo, hi));
    }},
    FT_NN_ACTIVATION(hardswish), FT_NN_ACTIVATION(hardsigmoid), FT_NN_ACTIVATION(logsigmoid),
    FT_NN_ACTIVATION(softsign), FT_NN_ACTIVATION(erf), FT_NN_ACTIVATION(erfc),
    FT_NN_ACTIVATION(erfinv), FT_NN_ACTIVATION(lgamma), FT_NN_ACTIVATION(digamma),
    FT_NN_OP(polygamma) {
      const Tensor x = ActivationInput(in, r);
      const int64_t n = in.Below(5) - 1;
      Put(r, polygamma(n, x));
    }},
    // ---- losses ----
    FT_NN_OP(mse_loss) {
      auto [input, target] = LossPair(in, r);
      Put(r, mse_loss(input, target, DecodeReduction(in)));
    }},
    FT_NN_OP(l1_loss) {
      auto [input, target] = LossPair(in, r);
      Put(r, l1_loss(input, target, DecodeReduction(in)));
    }},
    FT_NN_OP(smooth_l1_loss) {
      auto [input, target] = LossPair(in, r);
      const Reduction::Mode reduction = DecodeReduction(in);
      Put(r, smooth_l1_loss(input, target, reduction, FromTable(in, {1.0, 0.5, 0.0, -1.0, kNaN})));
    }},
    FT_NN_OP(huber_loss) {
      auto [input, target] = LossPair(in, r);
      const Reduction::Mode reduction = DecodeReduction(in);
      Put(r, huber_loss(input, target, reduction, FromTable(in, {1.0, 0.5, 0.0, -1.0, kNaN})));
    }},
    FT_NN_OP(kl_div) {
      auto [input, target] = LossPair(in, r);
      const Reduction::Mode reduction = DecodeReduction(in);
      Put(r, kl_div(input, target, reduction, in.Bool()));
    }},
    FT_NN_OP(binary_cross_entropy) {
      auto [input, target] = LossPair(in, r);
      // Mostly probabilities: inputs outside [0, 1] are an error.
      const Tensor p = in.Below(4) == 0 ? input : sigmoid(input);
      const Tensor t = in.Below(4) == 0 ? target : sigmoid(target);
      const std::optional<Tensor> weight = OptionalOperand(in, r, p.sizes(), p.dtype());
      Put(r, binary_cross_entropy(p, t, weight, DecodeReduction(in)));
    }},
    FT_NN_OP(binary_cross_entropy_with_logits) {
      auto [input, target] = LossPair(in, r);
      const std::optional<Tensor> weight = OptionalOperand(in, r, input.sizes(), input.dtype());
      const Shape last = input.dim() == 0 ? Shape{} : Shape{input.sizes().back()};
      const std::optional<Tensor> pos_weight = OptionalOperand(in, r, last, input.dtype());
      const Reduction::Mode reduction = DecodeReduction(in);
      Put(r, binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight));
    }},
    FT_NN_OP(nll_loss) {
      const ClassLoss c = DecodeClassLoss(in, r);
      const Tensor input = in.Bool() ? log_softmax(c.input, c.input.dim() > 1 ? 1 : 0) : c.input;
      const Tensor target = IndexOperand(in, r, c.target_shape, c.classes);
      const std::optional<Tensor> weight = OptionalOperand(in, r, {c.classes}, c.dtype);
      const int64_t ignore_index = IgnoreIndex(in, c.classes);
      Put(r, nll_loss(input, target, weight, ignore_index, DecodeReduction(in)));
    }},
    FT_NN_OP(cross_entropy) {
      const ClassLoss c = DecodeClassLoss(in, r);
      Tensor target;
      if (in.Below(3) == 0) {  // class probabilities
        const Tensor logits = Operand(in, r, c.input.sizes(), c.dtype);
        target = in.Bool() ? softmax(logits, c.input.dim() > 1 ? 1 : 0) : logits;
      } else {
        target = IndexOperand(in, r, c.target_shape, c.classes);
      }
      const std::optional<Tensor> weight = OptionalOperand(in, r, {c.classes}, c.dtype);
      const int64_t ignore_index = IgnoreIndex(in, c.classes);
      const Reduction::Mode reduction = DecodeReduction(in);
      const double label_smoothing = FromTable(in, {0.0, 0.0, 0.1, 0.5, 1.0, -0.1, 1.5, kNaN});
      Put(r, cross_entropy(c.input, target, weight, ignore_index, reduction, label_smoothing));
    }},
    // ---- indexing and shape ----
    FT_NN_OP(embedding) {
      const DType dt = OperandDType(in);
      const int64_t num = Extent(in);
      const int64_t dim = Extent(in);
      const Shape index_shape = SmallShape(in, 0, 2);
      const Tensor weight = Operand(in, r, {num, dim}, dt);
      const Tensor index = IndexOperand(in, r, index_shape, num);
      std::optional<int64_t> padding_idx;
      if (in.Below(3) == 0) padding_idx = in.Index(num);
      Put(r, embedding(index, weight, padding_idx));
    }},
    FT_NN_OP(masked_fill) {
      const Tensor x = ActivationInput(in, r);
      Shape mask_shape(x.sizes().begin(), x.sizes().end());
      if (in.Below(4) == 0 && !mask_shape.empty()) mask_shape.erase(mask_shape.begin());
      const Tensor mask = MaskOperand(in, r, mask_shape);
      switch (in.Below(4)) {
        case 0:
          Put(r, masked_fill(x, mask, Pick(in, r)));  // often not 0-dim: an error
          break;
        case 1: {
          const Tensor v = Pick(in, r);
          Put(r, masked_fill(x, mask, sum(v)));
          break;
        }
        default:
          Put(r, masked_fill(x, mask, in.AnyScalar()));
          break;
      }
    }},
    FT_NN_OP(index_add) {
      const DType dt = OperandDType(in);
      const Shape shape = SmallShape(in, 0, 3);
      const int64_t dim = in.Dim(static_cast<int64_t>(shape.size()));
      const int64_t count = in.Below(4);
      Shape source_shape = shape;
      const int64_t rank = static_cast<int64_t>(shape.size());
      if (rank > 0 && dim >= -rank && dim < rank) {
        source_shape[static_cast<size_t>(dim < 0 ? dim + rank : dim)] = count;
      }
      const Tensor x = Operand(in, r, shape, dt);
      const int64_t bound = SizeAt(x, dim);
      const Tensor index =
          IndexOperand(in, r, in.Below(8) == 0 ? Shape{} : Shape{count}, bound);
      const Tensor source = Operand(in, r, source_shape, dt);
      const Scalar alpha = in.Bool() ? Scalar(int64_t{1}) : in.AnyScalar();
      Put(r, index_add(x, dim, index, source, alpha));
    }},
    FT_NN_OP(index) {
      const Tensor x = ActivationInput(in, r);
      const TensorIndices indices = DecodeIndices(in, r, x);
      Put(r, index(x, indices));
    }},
    FT_NN_OP(index_put) {
      const Tensor x = ActivationInput(in, r);
      const TensorIndices indices = DecodeIndices(in, r, x);
      const bool accumulate = in.Bool();
      Tensor values;
      switch (in.Below(4)) {
        case 0:
          values = Pick(in, r);
          break;
        case 1: {
          values = Operand(in, r, Shape{}, x.dtype());
          break;
        }
        default: {
          const Tensor selected = index(x, indices);
          values = Operand(in, r, selected.sizes(), x.dtype());
          break;
        }
      }
      Put(r, index_put(x, indices, values, accumulate));
    }},
    FT_NN_OP(gather_nd) {
      const Tensor x = ActivationInput(in, r);
      const int64_t k = in.Below(x.dim() + 2);
      int64_t bound = 4;
      for (int64_t d = 0; d < std::min<int64_t>(k, x.dim()); ++d) bound = std::min(bound, x.size(d));
      const int64_t rows = Extent(in);
      const Tensor index = IndexOperand(in, r, Shape{rows, k}, bound);
      if (in.Bool()) {
        Put(r, gather_nd(x, index));
      } else {
        const bool accumulate = in.Bool();
        const Tensor values = Operand(in, r, Shape{}, x.dtype());
        Put(r, index_put_nd(x, index, values, accumulate));
      }
    }},
    FT_NN_OP(tril_triu) {
      const DType dt = OperandDType(in);
      const Shape shape = SmallShape(in, 1, 3);
      const Tensor x = Operand(in, r, shape, dt);
      const int64_t diagonal = in.Index(4);
      Put(r, in.Bool() ? tril(x, diagonal) : triu(x, diagonal));
    }},
    FT_NN_OP(cumprod) {
      const Tensor x = ActivationInput(in, r);
      Put(r, cumprod(x, in.Dim(x.dim())));
    }},
    FT_NN_OP(logcumsumexp) {
      const Tensor x = ActivationInput(in, r);
      Put(r, logcumsumexp(x, in.Dim(x.dim())));
    }},
    FT_NN_OP(pixel_shuffle) {
      const DType dt = OperandDType(in);
      const int64_t factor = Param(in, 1, 2);
      const int64_t f = std::clamp<int64_t>(factor, 1, 2);
      const bool shuffle = in.Bool();
      const int64_t batch = DecodeBatch(in);
      const int64_t c = 1 + in.Below(2);
      const int64_t h = 1 + in.Below(3);
      const int64_t w = 1 + in.Below(3);
      const Shape shape = shuffle ? Batched(batch, c * f * f, {h, w}) : Batched(batch, c, {h * f, w * f});
      const Tensor x = Operand(in, r, shape, dt);
      Put(r, shuffle ? pixel_shuffle(x, factor) : pixel_unshuffle(x, factor));
    }},
    FT_NN_OP(roll) {
      const Tensor x = ActivationInput(in, r);
      Shape shifts(static_cast<size_t>(in.Below(4)));
      for (int64_t& s : shifts) s = in.Index(5);
      const std::vector<int64_t> dims = in.DimList(x.dim(), 3);
      Put(r, roll(x, shifts, dims));
    }},
};

#undef FT_NN_OP
#undef FT_NN_ACTIVATION

}  // namespace

const char* ApplyNnOp(FuzzInput& in, Registers& regs) {
  const OpEntry& op = kNnOps[static_cast<size_t>(in.Below(NumNnOps()))];
  if (Verbose()) std::fprintf(stderr, "  nn op %s on %zu registers\n", op.name, regs.size());
  op.fn(in, regs);
  return op.name;
}

int64_t NumNnOps() { return static_cast<int64_t>(std::size(kNnOps)); }

}  // namespace ft::fuzz
