#include "distributed/collectives.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "interpreters/vmap/vmap_interpreter.h"
#include "ops/ops.h"
#include "tensor/copy.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft {
namespace {

// ---------------------------------------------------------------------------------------
// Axis lookup and validation.

const std::string& Name(int64_t axis) { return AxisNameString(axis); }

const NamedAxis& AxisOrThrow(const char* op, int64_t axis) {
  const NamedAxis* a = NamedAxes::Find(axis);
  if (a == nullptr) {
    ThrowError(op, ": axis name '", Name(axis), "' is not in effect (named axes in effect: ",
               NamedAxes::Describe(), "); name a vmap's axis with VmapOptions::axis_name or ",
               "bind processes with ft::dist::bind_axis");
  }
  return *a;
}

dist::AxisBinding& ProcessBinding(const char* op, int64_t axis) {
  const NamedAxis& a = AxisOrThrow(op, axis);
  if (a.is_vmap()) {
    // Ops reach the base kernel only below every transform; the vmap of this name is
    // above, so the call was made where its examples are not in reach.
    ThrowError(op, ": axis '", Name(axis), "' is the axis of vmap level ", a.vmap_level,
               ", but the call ran outside that vmap's transform (with every transform ",
               "excluded); make it inside the vmapped function");
  }
  return *static_cast<dist::AxisBinding*>(a.binding);
}

// NormalizeDim: `dim` (negative counts from the end) in [0, bound), or an error naming the
// op, the dim and the rank it is for.
int64_t NormalizeDim(const char* op, int64_t dim, int64_t bound, int64_t rank) {
  const int64_t d = dim < 0 ? dim + bound : dim;
  if (d < 0 || d >= bound) {
    ThrowError(op, ": dim ", dim, " is out of range for a tensor of rank ", rank,
               " (expected ", -bound, " <= dim < ", bound, ")");
  }
  return d;
}

// ---------------------------------------------------------------------------------------
// Process collectives (the base kernels). Every call first gathers a fixed-size record
// from every process: a header (op, dtype, shape, dim, call number) and, for a small
// payload, the payload itself. Every process checks that the headers agree (a mismatch is
// an error on all of them, never a hang or a garbled reduction), and a small payload is then
// reduced or assembled locally, in rank order, so that one round trip suffices and every
// process computes the same bits. A large payload takes the engine's own collective.

enum class Coll : uint32_t {
  kPsum = 1,
  kPmax = 2,
  kAllGather = 3,
  kPsumScatter = 4,
  kPpermute = 5
};

const char* CollName(uint32_t c) {
  switch (static_cast<Coll>(c)) {
    case Coll::kPsum: return "psum";
    case Coll::kPmax: return "pmax";
    case Coll::kAllGather: return "all_gather";
    case Coll::kPsumScatter: return "psum_scatter";
    case Coll::kPpermute: return "ppermute";
  }
  return "an unknown collective";
}

constexpr uint32_t kMagic = 0x46544331;  // "FTC1"
constexpr int kHeaderSizes = 8;

struct Header {
  uint32_t magic;
  uint32_t coll;
  uint32_t dtype;
  uint32_t rank;  // the tensor's
  int64_t dim;
  int64_t call;
  int64_t sizes[kHeaderSizes];  // the first sizes, for messages
  uint64_t shape_hash;          // every size
  uint64_t extra_hash;          // ppermute's pairs
};

constexpr int64_t kSmallPayload = 256;
constexpr int64_t kRecordBytes = static_cast<int64_t>(sizeof(Header)) + kSmallPayload;

void* RawData(const Tensor& t) { return t.impl()->raw_data(); }

uint64_t HashInts(IntArrayRef values) {
  uint64_t hash = 1469598103934665603ull;
  for (int64_t v : values) hash = (hash ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return hash;
}

Header MakeHeader(Coll c, const Tensor& x, int64_t dim, int64_t call, IntArrayRef extra) {
  Header h;
  std::memset(&h, 0, sizeof(h));
  h.magic = kMagic;
  h.coll = static_cast<uint32_t>(c);
  h.dtype = static_cast<uint32_t>(x.dtype());
  h.rank = static_cast<uint32_t>(x.dim());
  h.dim = dim;
  h.call = call;
  uint64_t hash = 1469598103934665603ull;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < kHeaderSizes) h.sizes[i] = x.sizes()[i];
    hash = (hash ^ static_cast<uint64_t>(x.sizes()[i])) * 1099511628211ull;
  }
  h.shape_hash = hash;
  h.extra_hash = HashInts(extra);
  return h;
}

bool SameCall(const Header& a, const Header& b) {
  return a.magic == b.magic && a.coll == b.coll && a.dtype == b.dtype && a.rank == b.rank &&
         a.dim == b.dim && a.call == b.call && a.shape_hash == b.shape_hash &&
         a.extra_hash == b.extra_hash;
}

std::string DescribeHeader(const Header& h) {
  if (h.magic != kMagic) return "something that is not an ft collective";
  std::string shape = "[";
  for (uint32_t i = 0; i < h.rank; ++i) {
    if (i >= static_cast<uint32_t>(kHeaderSizes)) {
      absl::StrAppend(&shape, ", ...");
      break;
    }
    absl::StrAppend(&shape, i == 0 ? "" : ", ", h.sizes[i]);
  }
  shape += "]";
  std::string dim = static_cast<Coll>(h.coll) == Coll::kAllGather ||
                            static_cast<Coll>(h.coll) == Coll::kPsumScatter
                        ? absl::StrCat(" dim ", h.dim)
                        : std::string();
  const std::string pairs = static_cast<Coll>(h.coll) == Coll::kPpermute
                                ? absl::StrCat(" (pairs hash ", h.extra_hash, ")")
                                : std::string();
  return absl::StrCat(CollName(h.coll), " of a ", DTypeName(static_cast<DType>(h.dtype)),
                      " tensor of shape ", shape, dim, pairs, " as its collective #", h.call);
}

// Engine runs one engine call, turning its failure into an error naming the axis, the op,
// this process and the cause.
template <typename Fn>
void Engine(const char* op, const dist::AxisBinding& b, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    ThrowError(op, " over axis '", b.axis(), "' (rank ", b.group().rank(), " of ",
               b.group().size(), ", ", b.group().backend(), "): ", std::string(e.message()));
  } catch (const std::exception& e) {
    ThrowError(op, " over axis '", b.axis(), "' (rank ", b.group().rank(), " of ",
               b.group().size(), ", ", b.group().backend(), "): ", e.what());
  }
}

// ReduceRecords: out[i] = the reduction, in rank order, of element (offset + i) of every
// record's payload.
template <typename T>
void ReduceRecords(const std::vector<char>& records, int size, int64_t count, Coll c,
                   int64_t offset, T* out) {
  for (int q = 0; q < size; ++q) {
    const char* payload = records.data() + static_cast<size_t>(q) * kRecordBytes + sizeof(Header);
    const T* in = reinterpret_cast<const T*>(payload) + offset;
    for (int64_t i = 0; i < count; ++i) {
      if (q == 0) {
        out[i] = in[i];
      } else if (c == Coll::kPmax) {
        // A NaN wins (as amax), wherever it is in rank order.
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(in[i])) {
            out[i] = in[i];
            continue;
          }
        }
        out[i] = in[i] > out[i] ? in[i] : out[i];
      } else {
        out[i] = static_cast<T>(out[i] + in[i]);
      }
    }
  }
}

void ReduceSmall(const std::vector<char>& records, int size, const Tensor& out, Coll c,
                 int64_t element_offset) {
  const int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::kFloat32:
      ReduceRecords<float>(records, size, n, c, element_offset, out.data<float>());
      break;
    case DType::kFloat64:
      ReduceRecords<double>(records, size, n, c, element_offset, out.data<double>());
      break;
    case DType::kInt64:
      ReduceRecords<int64_t>(records, size, n, c, element_offset, out.data<int64_t>());
      break;
    case DType::kBool:
      ReduceRecords<bool>(records, size, n, c, element_offset, out.data<bool>());
      break;
    default:
      ThrowDTypeNotSupportedYet(out.dtype());  // CheckReduction refused it before
      break;
  }
}

Shape SizesOf(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

// Sources: for each member, the member whose value it receives from ppermute's (source,
// destination) pairs (flattened), or -1 (it receives zeros). Validated against `size`.
std::vector<int64_t> PermutationSources(const char* op, IntArrayRef pairs, int64_t size,
                                        const std::string& axis) {
  if (pairs.size() % 2 != 0) {
    ThrowError(op, ": the pairs must be (source, destination) pairs, got ", pairs.size(),
               " numbers");
  }
  std::vector<int64_t> sources(static_cast<size_t>(size), -1);
  std::vector<bool> sent(static_cast<size_t>(size), false);
  for (size_t i = 0; i < pairs.size(); i += 2) {
    const int64_t from = pairs[i], to = pairs[i + 1];
    if (from < 0 || from >= size || to < 0 || to >= size) {
      ThrowError(op, ": pair (", from, ", ", to, ") is out of range for axis '", axis, "' of ",
                 size, " members");
    }
    if (sent[static_cast<size_t>(from)] || sources[static_cast<size_t>(to)] >= 0) {
      ThrowError(op, ": member ", sent[static_cast<size_t>(from)] ? from : to, " appears twice ",
                 sent[static_cast<size_t>(from)] ? "as a source" : "as a destination",
                 " in the pairs over axis '", axis, "'");
    }
    sent[static_cast<size_t>(from)] = true;
    sources[static_cast<size_t>(to)] = from;
  }
  return sources;
}

Tensor ProcessCollective(Coll c, const char* op, const Tensor& input, int64_t axis,
                         int64_t dim, IntArrayRef pairs = {}) {
  dist::AxisBinding& b = ProcessBinding(op, axis);
  dist::ProcessGroup& g = b.group();
  const int size = g.size();
  const int rank = g.rank();
  const Tensor x = input.is_contiguous() ? input : kernels::contiguous(input);
  const int64_t esize = ItemSize(x.dtype());
  const int64_t bytes = x.numel() * esize;
  // Local validation first: every process runs the same program, so each finds the same
  // problem and none is left waiting.
  int64_t d = 0;
  if (c == Coll::kAllGather) d = NormalizeDim(op, dim, x.dim() + 1, x.dim());
  if (c == Coll::kPsumScatter) {
    d = NormalizeDim(op, dim, x.dim(), x.dim());
    if (x.sizes()[d] != size) {
      ThrowError(op, ": dim ", dim, " of the input (shape ", ShapeToString(x.sizes()),
                 ") must have one entry per member of axis '", b.axis(), "' (", size, ")");
    }
  }
  std::vector<int64_t> sources;
  if (c == Coll::kPpermute) sources = PermutationSources(op, pairs, size, b.axis());
  const int64_t call = b.mutable_calls()++;
  const Header header = MakeHeader(c, x, d, call, pairs);
  const bool small = bytes <= kSmallPayload;
  std::vector<char> record(kRecordBytes, 0);
  std::memcpy(record.data(), &header, sizeof(header));
  if (small && bytes > 0) std::memcpy(record.data() + sizeof(header), RawData(x), bytes);
  std::vector<char> records(static_cast<size_t>(kRecordBytes) * size);
  Engine(op, b, [&] { g.AllGather(record.data(), records.data(), kRecordBytes); });
  for (int q = 0; q < size; ++q) {
    Header other;
    std::memcpy(&other, records.data() + static_cast<size_t>(q) * kRecordBytes, sizeof(other));
    if (!SameCall(header, other)) {
      ThrowError(op, " over axis '", b.axis(), "': the processes disagree: rank ", rank,
                 " made ", DescribeHeader(header), ", but rank ", q, " made ",
                 DescribeHeader(other), " (every process must make the same collectives in ",
                 "the same order, with the same dtypes and shapes)");
    }
  }
  switch (c) {
    case Coll::kPsum:
    case Coll::kPmax: {
      if (small) {
        Tensor out = empty(SizesOf(x), x.dtype());
        ReduceSmall(records, size, out, c, 0);
        return out;
      }
      // One plain copy on this thread: the engine's threads need the other core.
      Tensor out = empty(SizesOf(x), x.dtype());
      std::memcpy(RawData(out), RawData(x), static_cast<size_t>(bytes));
      Engine(op, b, [&] {
        g.AllReduce(RawData(out), out.numel(), out.dtype(),
                    c == Coll::kPsum ? dist::ReduceOp::kSum : dist::ReduceOp::kMax);
      });
      return out;
    }
    case Coll::kPpermute: {
      // The engine has no point-to-point call: every value goes to every member (an
      // all-gather), and each keeps the one it receives.
      Tensor out = zeros(SizesOf(x), x.dtype());
      const int64_t from = sources[static_cast<size_t>(rank)];
      if (small) {
        if (from >= 0 && bytes > 0) {
          std::memcpy(RawData(out),
                      records.data() + from * kRecordBytes + static_cast<int64_t>(sizeof(Header)),
                      static_cast<size_t>(bytes));
        }
        return out;
      }
      std::vector<char> gathered(static_cast<size_t>(bytes) * size);
      Engine(op, b, [&] { g.AllGather(RawData(x), gathered.data(), bytes); });
      if (from >= 0) {
        std::memcpy(RawData(out), gathered.data() + from * bytes, static_cast<size_t>(bytes));
      }
      return out;
    }
    case Coll::kAllGather: {
      std::vector<char> gathered;
      const char* base;
      int64_t stride;  // bytes between consecutive processes' payloads
      if (small) {
        base = records.data() + sizeof(Header);
        stride = kRecordBytes;
      } else {
        gathered.resize(static_cast<size_t>(bytes) * size);
        Engine(op, b, [&] { g.AllGather(RawData(x), gathered.data(), bytes); });
        base = gathered.data();
        stride = bytes;
      }
      Shape shape = SizesOf(x);
      shape.insert(shape.begin() + d, size);
      Tensor out = empty(shape, x.dtype());
      int64_t outer = 1;
      for (int64_t i = 0; i < d; ++i) outer *= x.sizes()[i];
      const int64_t inner_bytes = outer == 0 ? 0 : bytes / outer;
      char* dst = static_cast<char*>(RawData(out));
      for (int64_t o = 0; o < outer; ++o) {
        for (int q = 0; q < size; ++q) {
          std::memcpy(dst + (o * size + q) * inner_bytes, base + q * stride + o * inner_bytes,
                      static_cast<size_t>(inner_bytes));
        }
      }
      return out;
    }
    case Coll::kPsumScatter: {
      Shape out_shape = SizesOf(x);
      out_shape.erase(out_shape.begin() + d);
      Tensor out = empty(out_shape, x.dtype());
      int64_t outer = 1;
      for (int64_t i = 0; i < d; ++i) outer *= x.sizes()[i];
      const int64_t inner = x.numel() == 0 ? 0 : x.numel() / (outer * size);
      const int64_t inner_bytes = inner * esize;
      // Blocks: block p holds x[..., p, ...] (outer * inner elements), contiguous.
      std::vector<char> blocks(static_cast<size_t>(bytes));
      const char* src = small ? nullptr : static_cast<const char*>(RawData(x));
      auto arrange = [&](const char* from, char* to) {
        for (int p = 0; p < size; ++p) {
          for (int64_t o = 0; o < outer; ++o) {
            std::memcpy(to + (p * outer + o) * inner_bytes, from + (o * size + p) * inner_bytes,
                        static_cast<size_t>(inner_bytes));
          }
        }
      };
      if (!small) {
        arrange(src, blocks.data());
        Engine(op, b, [&] {
          g.ReduceScatter(blocks.data(), RawData(out), outer * inner, x.dtype(),
                          dist::ReduceOp::kSum);
        });
        return out;
      }
      // Rearrange every record's payload into blocks, then reduce block `rank` in rank order.
      std::vector<char> arranged(records.size(), 0);
      for (int q = 0; q < size; ++q) {
        const size_t at = static_cast<size_t>(q) * kRecordBytes;
        std::memcpy(arranged.data() + at, records.data() + at, sizeof(Header));
        arrange(records.data() + at + sizeof(Header), arranged.data() + at + sizeof(Header));
      }
      ReduceSmall(arranged, size, out, c, rank * outer * inner);
      return out;
    }
  }
  return Tensor();
}

// The base kernels.
Tensor PsumKernel(const Tensor& x, int64_t axis) {
  return ProcessCollective(Coll::kPsum, "psum", x, axis, 0);
}
Tensor PmaxKernel(const Tensor& x, int64_t axis) {
  return ProcessCollective(Coll::kPmax, "pmax", x, axis, 0);
}
Tensor AllGatherKernel(const Tensor& x, int64_t axis, int64_t dim) {
  return ProcessCollective(Coll::kAllGather, "all_gather", x, axis, dim);
}
Tensor PsumScatterKernel(const Tensor& x, int64_t axis, int64_t dim) {
  return ProcessCollective(Coll::kPsumScatter, "psum_scatter", x, axis, dim);
}
Tensor PpermuteKernel(const Tensor& x, int64_t axis, IntArrayRef pairs) {
  return ProcessCollective(Coll::kPpermute, "ppermute", x, axis, 0, pairs);
}
Tensor AxisIndexKernel(int64_t axis) {
  return scalar_tensor(int64_t{ProcessBinding("axis_index", axis).group().rank()}, kInt64);
}

// ---------------------------------------------------------------------------------------
// vmap rules: over the vmap's own axis a local reduction or gather over the batch dim,
// otherwise the batch rides along (JAX's _batched_reduction_collective).

bool OwnAxis(const VmapContext& ctx, int64_t axis) {
  const NamedAxis* a = NamedAxes::Find(axis);
  return a != nullptr && a->vmap_level == ctx.level;
}

BatchedResult ReductionRule(const VmapContext& ctx, BatchedArgs& args, bool is_sum) {
  const Tensor& x = args.tensor(0);
  const BDim bdim = args.bdim(0);
  const int64_t axis = args.values[1].to_int();
  if (OwnAxis(ctx, axis)) {
    if (!bdim) {
      Tensor same = is_sum ? x * Scalar(ctx.batch_size) : x;
      return {{Value(std::move(same))}, {std::nullopt}};
    }
    Tensor reduced = is_sum ? sum(x, {*bdim}) : amax(x, {*bdim});
    return {{Value(std::move(reduced))}, {std::nullopt}};
  }
  Tensor y = is_sum ? Call<&PsumKernel>(x, axis) : Call<&PmaxKernel>(x, axis);
  return {{Value(std::move(y))}, {bdim}};
}

BatchedResult AllGatherRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim bdim = args.bdim(0);
  const int64_t axis = args.values[1].to_int();
  const int64_t rank = LogicalRank(x, bdim);
  const int64_t d = NormalizeDim("all_gather", args.values[2].to_int(), rank + 1, rank);
  if (OwnAxis(ctx, axis)) {
    if (bdim) return {{Value(movedim(x, *bdim, d))}, {std::nullopt}};
    Shape shape = SizesOf(x);
    shape.insert(shape.begin() + d, ctx.batch_size);
    return {{Value(expand(unsqueeze(x, d), shape))}, {std::nullopt}};
  }
  if (!bdim) return {{Value(Call<&AllGatherKernel>(x, axis, d))}, {std::nullopt}};
  return {{Value(Call<&AllGatherKernel>(MoveBdimToFront(x, bdim), axis, d + 1))}, {0}};
}

BatchedResult PsumScatterRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim bdim = args.bdim(0);
  const int64_t axis = args.values[1].to_int();
  const int64_t rank = LogicalRank(x, bdim);
  const int64_t d = NormalizeDim("psum_scatter", args.values[2].to_int(), rank, rank);
  if (OwnAxis(ctx, axis)) {
    const Shape logical = LogicalShape(x, bdim);
    if (logical[d] != ctx.batch_size) {
      ThrowError("psum_scatter: dim ", args.values[2].to_int(), " of the input (shape ",
                 ShapeToString(logical), ") must have one entry per member of axis '",
                 Name(axis), "' (", ctx.batch_size, ")");
    }
    Tensor summed = bdim ? sum(x, {*bdim}) : x * Scalar(ctx.batch_size);
    return {{Value(std::move(summed))}, {d}};
  }
  if (!bdim) return {{Value(Call<&PsumScatterKernel>(x, axis, d))}, {std::nullopt}};
  return {{Value(Call<&PsumScatterKernel>(MoveBdimToFront(x, bdim), axis, d + 1))}, {0}};
}

BatchedResult PpermuteRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim bdim = args.bdim(0);
  const int64_t axis = args.values[1].to_int();
  const Shape& pairs = args.values[2].shape();
  if (OwnAxis(ctx, axis)) {
    const std::vector<int64_t> sources =
        PermutationSources("ppermute", pairs, ctx.batch_size, Name(axis));
    const Tensor front = EnsureBatchedFront(x, bdim, ctx.batch_size);
    TensorList rows;
    for (int64_t from : sources) {
      rows.push_back(from >= 0 ? select(front, 0, from) : zeros_like(select(front, 0, 0)));
    }
    if (rows.empty()) return {{Value(front)}, {0}};
    return {{Value(stack(rows, 0))}, {0}};
  }
  if (!bdim) return {{Value(Call<&PpermuteKernel>(x, axis, IntArrayRef(pairs)))}, {std::nullopt}};
  return {{Value(Call<&PpermuteKernel>(MoveBdimToFront(x, bdim), axis, IntArrayRef(pairs)))},
          {0}};
}

BatchedResult AxisIndexRule(const VmapContext& ctx, BatchedArgs& args) {
  const int64_t axis = args.values[0].to_int();
  if (OwnAxis(ctx, axis)) {
    return {{Value(arange(Scalar(int64_t{0}), Scalar(ctx.batch_size), Scalar(int64_t{1}),
                          kInt64))},
            {0}};
  }
  return {{Value(Call<&AxisIndexKernel>(axis))}, {std::nullopt}};
}

// ---------------------------------------------------------------------------------------
// Derivatives. Collectives are linear (pmax aside): jvp applies the op to the tangent.
// Transposes (NOTE: [Gradients across named axes] in interpreters/grad/grad_interpreter.h):
// psum's cotangent is one value for every member, so each member's input gets it as is;
// all_gather's input gets its own slice; psum_scatter's gets every member's cotangent.

Tensor OwnSlice(const Tensor& g, int64_t axis, int64_t d) {
  Tensor index = reshape(Call<&AxisIndexKernel>(axis), {1});
  return squeeze_dim(index_select(g, d, index), d);
}

// Inverse: the (source, destination) pairs swapped.
Shape InversePairs(const Shape& pairs) {
  Shape inverse(pairs.size());
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    inverse[i] = pairs[i + 1];
    inverse[i + 1] = pairs[i];
  }
  return inverse;
}

void RegisterDerivativesOnce(const Operator& psum_op, const Operator& pmax_op,
                             const Operator& gather_op, const Operator& scatter_op,
                             const Operator& index_op, const Operator& permute_op) {
  using autograd::JvpContext;
  using autograd::VjpContext;
  autograd::SetVjp(psum_op, [](const VjpContext&, const TensorList& g) {
    return TensorList{g[0]};
  });
  autograd::SetJvp(psum_op, [](const JvpContext& c, const TensorList& t) {
    return TensorList{Call<&PsumKernel>(t[0], c.inputs[1].to_int())};
  });
  autograd::MarkInputValuesUnused(psum_op);
  autograd::SetVjp(gather_op, [](const VjpContext& c, const TensorList& g) {
    const int64_t rank = c.input(0).dim();
    const int64_t d = NormalizeDim("all_gather", c.inputs[2].to_int(), rank + 1, rank);
    return TensorList{OwnSlice(g[0], c.inputs[1].to_int(), d)};
  });
  autograd::SetJvp(gather_op, [](const JvpContext& c, const TensorList& t) {
    return TensorList{Call<&AllGatherKernel>(t[0], c.inputs[1].to_int(), c.inputs[2].to_int())};
  });
  autograd::MarkInputValuesUnused(gather_op);
  autograd::SetVjp(scatter_op, [](const VjpContext& c, const TensorList& g) {
    const int64_t rank = c.input(0).dim();
    const int64_t d = NormalizeDim("psum_scatter", c.inputs[2].to_int(), rank, rank);
    return TensorList{Call<&AllGatherKernel>(g[0], c.inputs[1].to_int(), d)};
  });
  autograd::SetJvp(scatter_op, [](const JvpContext& c, const TensorList& t) {
    return TensorList{
        Call<&PsumScatterKernel>(t[0], c.inputs[1].to_int(), c.inputs[2].to_int())};
  });
  autograd::MarkInputValuesUnused(scatter_op);
  autograd::MarkNonDifferentiable(index_op);
  // ppermute is a permutation (zeros where nothing arrives): its transpose sends back.
  autograd::SetVjp(permute_op, [](const VjpContext& c, const TensorList& g) {
    const Shape inverse = InversePairs(c.inputs[2].shape());
    return TensorList{Call<&PpermuteKernel>(g[0], c.inputs[1].to_int(), IntArrayRef(inverse))};
  });
  autograd::SetJvp(permute_op, [](const JvpContext& c, const TensorList& t) {
    return TensorList{Call<&PpermuteKernel>(t[0], c.inputs[1].to_int(),
                                            IntArrayRef(c.inputs[2].shape()))};
  });
  autograd::MarkInputValuesUnused(permute_op);
  // pmax has neither formula: grad and jvp refuse it when its input carries a derivative.
  (void)pmax_op;
}

void RegisterCollectives() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    autograd::RegisterDerivatives();
    OpRegistry& registry = OpRegistry::Global();
    const OpOptions invariant{.ordered_effect = true, .axis_arg = 1, .makes_invariant = true};
    const OpOptions varying{.ordered_effect = true, .axis_arg = 1, .makes_invariant = false};
    Operator& psum_op = RegisterOp<&PsumKernel>(registry, "psum", {"self", "axis"}, invariant);
    Operator& pmax_op = RegisterOp<&PmaxKernel>(registry, "pmax", {"self", "axis"}, invariant);
    Operator& gather_op =
        RegisterOp<&AllGatherKernel>(registry, "all_gather", {"self", "axis", "dim"}, invariant);
    Operator& scatter_op = RegisterOp<&PsumScatterKernel>(registry, "psum_scatter",
                                                          {"self", "axis", "dim"}, varying);
    Operator& index_op = RegisterOp<&AxisIndexKernel>(
        registry, "axis_index", {"axis"},
        OpOptions{.ordered_effect = true, .axis_arg = 0, .makes_invariant = false});
    SetBatchRule(psum_op, [](const VmapContext& ctx, BatchedArgs& args) {
      return ReductionRule(ctx, args, /*is_sum=*/true);
    });
    SetBatchRule(pmax_op, [](const VmapContext& ctx, BatchedArgs& args) {
      return ReductionRule(ctx, args, /*is_sum=*/false);
    });
    SetBatchRule(gather_op, AllGatherRule);
    SetBatchRule(scatter_op, PsumScatterRule);
    Operator& permute_op =
        RegisterOp<&PpermuteKernel>(registry, "ppermute", {"self", "axis", "pairs"}, varying);
    SetBatchRule(index_op, AxisIndexRule);
    SetBatchRule(permute_op, PpermuteRule);
    RegisterDerivativesOnce(psum_op, pmax_op, gather_op, scatter_op, index_op, permute_op);
  });
}

// Entry: registration, then the axis name checked where the call is made (so the message
// names the op the user called, whatever transform is active).
int64_t Enter(const char* op, const std::string& axis) {
  RegisterCollectives();
  const int64_t id = AxisNameId(axis);
  AxisOrThrow(op, id);
  return id;
}

}  // namespace

Tensor psum(const Tensor& x, const std::string& axis) {
  const int64_t id = Enter("psum", axis);
  if (x.defined() && x.dtype() == kBool) {
    ThrowError("psum: cannot sum a bool tensor over axis '", axis, "'; convert it to int64 ",
               "first (or use pmax for a logical or)");
  }
  return Call<&PsumKernel>(x, id);
}

Tensor pmean(const Tensor& x, const std::string& axis) {
  const int64_t id = Enter("pmean", axis);
  if (x.defined() && !IsFloating(x.dtype())) {
    ThrowError("pmean: needs a floating point tensor, got ", DTypeName(x.dtype()),
               " (over axis '", axis, "')");
  }
  return Call<&PsumKernel>(x, id) / Scalar(static_cast<double>(NamedAxes::Find(id)->size));
}

Tensor pmax(const Tensor& x, const std::string& axis) {
  return Call<&PmaxKernel>(x, Enter("pmax", axis));
}

Tensor all_gather(const Tensor& x, const std::string& axis, int64_t dim) {
  return Call<&AllGatherKernel>(x, Enter("all_gather", axis), dim);
}

Tensor psum_scatter(const Tensor& x, const std::string& axis, int64_t dim) {
  const int64_t id = Enter("psum_scatter", axis);
  if (x.defined() && x.dtype() == kBool) {
    ThrowError("psum_scatter: cannot sum a bool tensor over axis '", axis, "'");
  }
  return Call<&PsumScatterKernel>(x, id, dim);
}

Tensor ppermute(const Tensor& x, const std::string& axis,
                const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  const int64_t id = Enter("ppermute", axis);
  Shape flat;
  for (const auto& [from, to] : pairs) {
    flat.push_back(from);
    flat.push_back(to);
  }
  // Validated here too, so that the message names the call under any transform.
  PermutationSources("ppermute", flat, NamedAxes::Find(id)->size, axis);
  return Call<&PpermuteKernel>(x, id, IntArrayRef(flat));
}

Tensor axis_index(const std::string& axis) {
  return Call<&AxisIndexKernel>(Enter("axis_index", axis));
}

int64_t axis_size(const std::string& axis) {
  return AxisOrThrow("axis_size", AxisNameId(axis)).size;
}

namespace dist {

AxisBinding::AxisBinding(const std::string& axis, std::shared_ptr<ProcessGroup> group)
    : axis_(axis),
      group_(std::move(group)),
      scope_([&] {
        if (group_ == nullptr) ThrowError("bind_axis: axis '", axis, "' got a null group");
        if (!LayerStack::empty()) {
          ThrowError("bind_axis: axis '", axis, "' must be bound outside every transform ",
                     "(active: ", LayerStack::DebugString(), "): a grad level tracks the ",
                     "axes named before it was entered");
        }
        NamedAxis named;
        named.name_id = AxisNameId(axis);
        named.size = group_->size();
        named.binding = this;
        return named;
      }()) {}

PerProcessInputs::PerProcessInputs(const std::string& axis) {
  const int64_t id = AxisNameId(axis);
  index_ = NamedAxes::FindIndex(id);
  if (index_ < 0 || NamedAxes::At(index_).is_vmap()) {
    ThrowError("PerProcessInputs: '", axis, "' is not a process axis in effect (named axes in ",
               "effect: ", NamedAxes::Describe(), "); bind it with ft::dist::bind_axis first");
  }
  saved_ = NamedAxes::At(index_).inputs_vary;
  NamedAxes::MutableAt(index_).inputs_vary = true;
}

PerProcessInputs::~PerProcessInputs() { NamedAxes::MutableAt(index_).inputs_vary = saved_; }

}  // namespace dist
}  // namespace ft
