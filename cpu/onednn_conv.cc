// float32 convolutions on oneDNN (cpu/onednn_conv.h documents the contract).
#include "cpu/onednn_conv.h"

#include <dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "cpu/parallel.h"

// libgomp, oneDNN's threading runtime in Debian's build: the thread count of the calling
// thread's next parallel regions. Declared here rather than through omp.h, which not every
// compiler configuration of this build puts on the include path.
extern "C" void omp_set_num_threads(int num_threads);

#if defined(__SANITIZE_THREAD__)
#define FT_ONEDNN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FT_ONEDNN_TSAN 1
#endif
#endif

namespace ft::kernels::internal::onednn {
namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;

// Below this many multiply-adds, oneDNN's per-call setup (descriptors, primitive lookup,
// ~20-60 us) costs more than the im2col path's whole convolution.
constexpr int64_t kMinMultiplyAdds = int64_t{1} << 17;

std::atomic<int> g_backend{-1};  // a ConvBackend, or -1 before the environment is read

ConvBackend BackendFromEnvironment() {
  const char* v = std::getenv("FT_CONV_BACKEND");
  if (v == nullptr) return ConvBackend::kAuto;
  if (std::strcmp(v, "im2col") == 0) return ConvBackend::kIm2Col;
  if (std::strcmp(v, "onednn") == 0) return ConvBackend::kOneDnn;
  return ConvBackend::kAuto;  // "auto" and anything unknown
}

thread_local std::string t_last_implementation;

const dnnl::engine& Engine() {
  // Never destroyed: convolutions may run from other static destructors.
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

Dims ToDims(const ConvDims& s) { return Dims(s.begin(), s.end()); }

Tag DataTag(size_t spatial) {
  return spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw;
}

Tag WeightTag(size_t spatial, bool grouped) {
  if (grouped) return spatial == 1 ? Tag::goiw : spatial == 2 ? Tag::goihw : Tag::goidhw;
  return spatial == 1 ? Tag::oiw : spatial == 2 ? Tag::oihw : Tag::oidhw;
}

// oneDNN's grouped weights are [groups, O / groups, C / groups, k...]: the same bytes as
// torch's [O, C / groups, k...].
Dims WeightDims(const ConvProblem& p) {
  if (p.groups == 1) return ToDims(p.weights);
  Dims d = {p.groups, p.weights[0] / p.groups};
  d.insert(d.end(), p.weights.begin() + 1, p.weights.end());
  return d;
}

// oneDNN counts dilation from 0 (no gap); torch from 1.
Dims OneDnnDilation(const ConvDims& dilation) {
  Dims d;
  for (int64_t v : dilation) d.push_back(v - 1);
  return d;
}

int64_t Numel(const ConvDims& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

bool UseOneDnn(const ConvProblem& p) {
#if defined(FT_ONEDNN_TSAN)
  (void)p;
  return false;
#else
  const ConvBackend backend = GetConvBackend();
  if (backend == ConvBackend::kIm2Col) return false;
  if (Numel(p.src) == 0 || Numel(p.dst) == 0 || Numel(p.weights) == 0) return false;
  if (backend == ConvBackend::kOneDnn) return true;
  // dst elements x (C / groups) x kernel elements.
  const int64_t kernel = Numel(p.weights) / p.weights[0];
  return Numel(p.dst) * kernel >= kMinMultiplyAdds;
#endif
}

// Blocked layouts pay their reorders back only on spatial kernels with enough channels per
// group (docs/performance.md, "Model workloads"); grouped problems stay plain.
bool Blocked(const ConvProblem& p) {
  const int64_t kernel = Numel(p.weights) / (p.weights[0] * p.weights[1]);
  return p.groups == 1 && kernel > 1 && p.weights[0] >= 16 && p.weights[1] >= 16;
}

// The operand descriptors: the user's plain buffers and what the primitive is asked for.
struct Descs {
  memory::desc src_plain, weights_plain, dst_plain;
  memory::desc src, weights, dst;  // tag::any when blocked
};

Descs MakeDescs(const ConvProblem& p) {
  const size_t n = p.stride.size();
  const auto f32 = memory::data_type::f32;
  Descs d;
  d.src_plain = memory::desc(ToDims(p.src), f32, DataTag(n));
  d.weights_plain = memory::desc(WeightDims(p), f32, WeightTag(n, p.groups > 1));
  d.dst_plain = memory::desc(ToDims(p.dst), f32, DataTag(n));
  if (Blocked(p)) {
    d.src = memory::desc(ToDims(p.src), f32, Tag::any);
    d.weights = memory::desc(WeightDims(p), f32, Tag::any);
    d.dst = memory::desc(ToDims(p.dst), f32, Tag::any);
  } else {
    d.src = d.src_plain;
    d.weights = d.weights_plain;
    d.dst = d.dst_plain;
  }
  return d;
}

dnnl::convolution_forward::desc ForwardDesc(const ConvProblem& p, const Descs& d,
                                            dnnl::prop_kind kind, const memory::desc* bias) {
  const Dims stride = ToDims(p.stride), dilation = OneDnnDilation(p.dilation);
  const Dims pad_l = ToDims(p.padding_l), pad_r = ToDims(p.padding_r);
  if (bias != nullptr) {
    return dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, d.src,
                                           d.weights, *bias, d.dst, stride, dilation, pad_l,
                                           pad_r);
  }
  return dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, d.src,
                                         d.weights, d.dst, stride, dilation, pad_l, pad_r);
}

// An input operand in the layout the primitive wants: the user's buffer itself, or a reorder
// of it into a scratch buffer.
memory Input(const memory::desc& wanted, const memory::desc& plain, const float* data,
             dnnl::stream& stream) {
  memory user(plain, Engine(), const_cast<float*>(data));
  if (wanted == plain) return user;
  memory m(wanted, Engine());
  dnnl::reorder(user, m).execute(stream, user, m);
  return m;
}

// An output operand: the user's buffer, or scratch reordered into it by Finish.
struct Output {
  memory user, primitive;
  Output(const memory::desc& wanted, const memory::desc& plain, float* data)
      : user(plain, Engine(), data),
        primitive(wanted == plain ? user : memory(wanted, Engine())) {}
  void Finish(dnnl::stream& stream) {
    if (primitive.get_data_handle() != user.get_data_handle()) {
      dnnl::reorder(primitive, user).execute(stream, primitive, user);
    }
  }
};

}  // namespace

ConvBackend GetConvBackend() {
  int v = g_backend.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(BackendFromEnvironment());
    g_backend.store(v, std::memory_order_relaxed);
  }
  return static_cast<ConvBackend>(v);
}

void SetConvBackend(ConvBackend backend) {
  g_backend.store(static_cast<int>(backend), std::memory_order_relaxed);
}

const char* LastImplementation() { return t_last_implementation.c_str(); }

bool ConvForward(const ConvProblem& p, const float* src, const float* weights,
                 const float* bias, float* dst) {
  t_last_implementation.clear();
  if (!UseOneDnn(p)) return false;
  try {
    const Descs d = MakeDescs(p);
    const memory::desc bias_md({p.dst[1]}, memory::data_type::f32, Tag::x);
    const dnnl::convolution_forward::primitive_desc pd(
        ForwardDesc(p, d, dnnl::prop_kind::forward_inference, bias ? &bias_md : nullptr),
        Engine());
    const dnnl::convolution_forward conv(pd);
    dnnl::stream stream(Engine());
    omp_set_num_threads(GetNumThreads());
    const memory src_m = Input(pd.src_desc(), d.src_plain, src, stream);
    const memory weights_m = Input(pd.weights_desc(), d.weights_plain, weights, stream);
    Output out(pd.dst_desc(), d.dst_plain, dst);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, weights_m}, {DNNL_ARG_DST, out.primitive}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, Engine(), const_cast<float*>(bias)));
    conv.execute(stream, args);
    out.Finish(stream);
    stream.wait();
    t_last_implementation = pd.impl_info_str();
    return true;
  } catch (const dnnl::error&) {
    return false;  // a problem oneDNN does not take: the caller's im2col path answers it
  }
}

bool ConvBackwardData(const ConvProblem& p, const float* dst, const float* weights,
                      float* src) {
  t_last_implementation.clear();
  if (!UseOneDnn(p)) return false;
  // oneDNN's backward-data primitive refuses negative right padding. The input elements it
  // would cut off are read by no window, so their gradient is zero: run the primitive on the
  // src without them and write its result into the leading block of the zeroed buffer.
  ConvProblem q = p;
  bool trimmed = false;
  for (size_t i = 0; i < q.padding_r.size(); ++i) {
    if (q.padding_r[i] < 0) {
      q.src[2 + i] += q.padding_r[i];
      q.padding_r[i] = 0;
      trimmed = true;
    }
  }
  try {
    const Descs d = MakeDescs(q);
    const dnnl::convolution_forward::primitive_desc hint(
        ForwardDesc(q, d, dnnl::prop_kind::forward_training, nullptr), Engine());
    const dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(
            dnnl::algorithm::convolution_direct, d.src, d.weights, d.dst, ToDims(q.stride),
            OneDnnDilation(q.dilation), ToDims(q.padding_l), ToDims(q.padding_r)),
        Engine(), hint);
    const dnnl::convolution_backward_data conv(pd);
    memory::desc src_user = d.src_plain;
    if (trimmed) {
      Dims strides(p.src.size(), 1);
      for (size_t i = p.src.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * p.src[i];
      src_user = memory::desc(ToDims(q.src), memory::data_type::f32, strides);
      std::fill(src, src + Numel(p.src), 0.0f);
    }
    dnnl::stream stream(Engine());
    omp_set_num_threads(GetNumThreads());
    const memory dst_m = Input(pd.diff_dst_desc(), d.dst_plain, dst, stream);
    const memory weights_m = Input(pd.weights_desc(), d.weights_plain, weights, stream);
    Output out(pd.diff_src_desc(), src_user, src);
    conv.execute(stream, {{DNNL_ARG_DIFF_DST, dst_m},
                          {DNNL_ARG_WEIGHTS, weights_m},
                          {DNNL_ARG_DIFF_SRC, out.primitive}});
    out.Finish(stream);
    stream.wait();
    t_last_implementation = pd.impl_info_str();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool ConvBackwardWeights(const ConvProblem& p, const float* src, const float* dst,
                         float* weights) {
  t_last_implementation.clear();
  if (!UseOneDnn(p)) return false;
  try {
    const Descs d = MakeDescs(p);
    const dnnl::convolution_forward::primitive_desc hint(
        ForwardDesc(p, d, dnnl::prop_kind::forward_training, nullptr), Engine());
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(
            dnnl::algorithm::convolution_direct, d.src, d.weights, d.dst, ToDims(p.stride),
            OneDnnDilation(p.dilation), ToDims(p.padding_l), ToDims(p.padding_r)),
        Engine(), hint);
    const dnnl::convolution_backward_weights conv(pd);
    dnnl::stream stream(Engine());
    omp_set_num_threads(GetNumThreads());
    const memory src_m = Input(pd.src_desc(), d.src_plain, src, stream);
    const memory dst_m = Input(pd.diff_dst_desc(), d.dst_plain, dst, stream);
    Output out(pd.diff_weights_desc(), d.weights_plain, weights);
    conv.execute(stream, {{DNNL_ARG_SRC, src_m},
                          {DNNL_ARG_DIFF_DST, dst_m},
                          {DNNL_ARG_DIFF_WEIGHTS, out.primitive}});
    out.Finish(stream);
    stream.wait();
    t_last_implementation = pd.impl_info_str();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace ft::kernels::internal::onednn
