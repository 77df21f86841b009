#include "tests/fuzz/transform_stack.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft::fuzz {

namespace {

const char* KindName(TransformKind kind) {
  switch (kind) {
    case TransformKind::kVmap: return "vmap";
    case TransformKind::kGrad: return "grad";
    case TransformKind::kGradAndValue: return "grad_and_value";
    case TransformKind::kVjp: return "vjp";
    case TransformKind::kJvp: return "jvp";
    case TransformKind::kJacrev: return "jacrev";
    case TransformKind::kJacfwd: return "jacfwd";
    case TransformKind::kHessian: return "hessian";
    case TransformKind::kJit: return "jit";
    case TransformKind::kFunctionalize: return "functionalize";
    case TransformKind::kLinearize: return "linearize";
  }
  return "?";
}

// First: f's first output (f may return none: an ft::Error, as for a user).
Tensor First(const TensorList& outputs) {
  if (outputs.empty()) ThrowError("fuzz: the function returned no outputs");
  return outputs[0];
}

std::optional<int64_t> DecodeBDim(FuzzInput& p) {
  static constexpr int64_t kDims[] = {0, 0, 0, 1, -1, 2, -2, 3, 64,
                                      std::numeric_limits<int64_t>::min()};
  if (p.Below(4) == 0) return std::nullopt;
  return kDims[p.Below(std::size(kDims))];
}

// DecodeDims: one dim for all, or a list of n (sometimes n - 1 or n + 1) dims.
Dims DecodeDims(FuzzInput& p, size_t n) {
  if (p.Bool()) {
    const std::optional<int64_t> d = DecodeBDim(p);
    return d ? Dims(*d) : Dims(std::nullopt);
  }
  size_t count = n;
  switch (p.Below(6)) {
    case 0: count = n + 1; break;
    case 1: count = n == 0 ? 0 : n - 1; break;
    default: break;
  }
  std::vector<std::optional<int64_t>> dims(count);
  for (auto& d : dims) d = DecodeBDim(p);
  return Dims(std::move(dims));
}

std::vector<int64_t> DecodeArgnums(FuzzInput& p) {
  static constexpr int64_t kArgnums[] = {0, 1, 2, -1, -2, 3, 0, 1};
  if (p.Below(3) != 0) return {p.Below(2)};
  std::vector<int64_t> argnums(static_cast<size_t>(p.Below(4)));
  for (int64_t& a : argnums) a = kArgnums[p.Below(std::size(kArgnums))];
  return argnums;
}

std::optional<int64_t> DecodeChunk(FuzzInput& p) {
  if (p.Below(3) != 0) return std::nullopt;
  return p.Size();
}

Randomness DecodeRandomness(FuzzInput& p) {
  static constexpr Randomness kModes[] = {Randomness::kError, Randomness::kSame,
                                          Randomness::kDifferent};
  return kModes[p.Below(3)];
}

// Perturb: what a vjp cotangent or jvp tangent for `like` becomes: usually ones_like, or the
// wrong shape or dtype, or undefined.
Tensor Perturb(int64_t mode, const Tensor& like) {
  switch (mode) {
    case 1: return Tensor();
    case 2: return unsqueeze(ones_like(like), 0);
    case 3: return ones_like(like, kInt64);
    case 4: return zeros_like(like, kFloat64);
    case 5: return randn_like(like);
    default: return ones_like(like);
  }
}

// Bias: mode 0 most of the time, another of `n` modes sometimes.
int64_t Bias(FuzzInput& p, int64_t n) { return p.Below(2) == 0 ? 0 : p.Below(n); }

}  // namespace

void RunOpStep(FuzzInput& in, Registers& regs) { ApplyOp(in, regs); }

TensorList Program::Run(const TensorList& args) const {
  Registers regs(args.begin(), args.end());
  if (captured.defined()) regs.push_back(captured);
  if (regs.empty()) ThrowError("fuzz: the function has no inputs");
  for (size_t i = 0; i < steps.size(); ++i) {
    FuzzInput in(steps[i].data(), steps[i].size());
    if (catches[i]) {
      try {
        step(in, regs);
      } catch (const Error& e) {
        if (Verbose()) std::fprintf(stderr, "  (caught inside f) %s\n", e.what());
      }
    } else {
      step(in, regs);
    }
  }
  TensorList out;
  for (int64_t k = num_outputs; k >= 1; --k) {
    const int64_t at = static_cast<int64_t>(regs.size()) - k;
    out.push_back(regs[static_cast<size_t>(at < 0 ? 0 : at)]);
  }
  return out;
}

TensorListFn Program::AsFunction(std::shared_ptr<const Program> program) {
  return [program](const TensorList& args) { return program->Run(args); };
}

Program DecodeProgram(FuzzInput& in, StepFn step, size_t step_bytes) {
  Program p;
  p.step = step;
  const int64_t n = 1 + in.Below(6);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t flags = in.Byte();
    p.catches.push_back((flags & 3) == 3);
    p.steps.push_back(in.Take(step_bytes));
  }
  p.num_outputs = 1 + in.Below(2);
  if (in.Below(4) == 0) p.captured = MakeTensor(in, {.max_rank = 2, .max_size = 3});
  return p;
}

TensorList DecodeArgs(FuzzInput& in) {
  TensorList args(static_cast<size_t>(1 + in.Below(3)));
  for (Tensor& a : args) {
    a = MakeTensor(in, {.max_rank = 3, .max_size = 4, .floating_only = in.Below(6) != 0});
  }
  return args;
}

std::vector<Layer> DecodeLayers(FuzzInput& in) {
  std::vector<Layer> layers(static_cast<size_t>(in.Below(4)));
  for (Layer& l : layers) {
    l.kind = static_cast<TransformKind>(in.Below(static_cast<int64_t>(TransformKind::kLinearize) + 1));
    l.params = in.Take(12);
  }
  return layers;
}

std::string LayersString(const std::vector<Layer>& layers) {
  std::vector<std::string> names;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) names.push_back(KindName(it->kind));
  if (names.empty()) return "f";
  return absl::StrCat(absl::StrJoin(names, "("), "(f", std::string(names.size(), ')'));
}

TensorListFn Wrap(const Layer& layer, TensorListFn f, size_t num_args) {
  FuzzInput p(layer.params.data(), layer.params.size());
  auto scalar = [f, reduce = p.Below(4) != 0](const TensorList& a) {
    const Tensor y = First(f(a));
    return reduce ? sum(y) : y;
  };
  auto first = [f](const TensorList& a) { return First(f(a)); };
  switch (layer.kind) {
    case TransformKind::kVmap: {
      const Dims in_dims = DecodeDims(p, num_args);
      const Dims out_dims = DecodeDims(p, 2);
      const Randomness randomness = DecodeRandomness(p);
      return vmap(f, in_dims, out_dims, randomness, DecodeChunk(p));
    }
    case TransformKind::kGrad:
      return grad(scalar, DecodeArgnums(p));
    case TransformKind::kGradAndValue: {
      auto g = grad_and_value(scalar, DecodeArgnums(p));
      return [g](const TensorList& a) {
        GradAndValue r = g(a);
        r.grads.push_back(r.value);
        return r.grads;
      };
    }
    case TransformKind::kVjp: {
      const int64_t mode = Bias(p, 6);
      const int64_t count = Bias(p, 3);  // 0: one per output, 1: one fewer, 2: one more
      const bool twice = p.Bool();
      return [f, mode, count, twice](const TensorList& a) {
        VjpResult r = vjp(f, a);
        TensorList cotangents;
        for (const Tensor& o : r.outputs) cotangents.push_back(Perturb(mode, o));
        if (count == 1 && !cotangents.empty()) cotangents.pop_back();
        if (count == 2) cotangents.push_back(First(r.outputs));
        TensorList g = r.vjp_fn(cotangents);
        if (twice) g = r.vjp_fn(cotangents);
        return g;
      };
    }
    case TransformKind::kJvp: {
      const int64_t mode = Bias(p, 6);
      const int64_t count = Bias(p, 3);
      return [f, mode, count](const TensorList& a) {
        TensorList tangents;
        for (const Tensor& x : a) tangents.push_back(Perturb(mode, x));
        if (count == 1 && !tangents.empty()) tangents.pop_back();
        if (count == 2) tangents.push_back(First(a));
        JvpResult r = jvp(f, a, tangents);
        r.outputs.insert(r.outputs.end(), r.tangents.begin(), r.tangents.end());
        return r.outputs;
      };
    }
    case TransformKind::kJacrev: {
      const std::vector<int64_t> argnums = DecodeArgnums(p);
      return jacrev(first, argnums, DecodeChunk(p));
    }
    case TransformKind::kJacfwd: {
      const std::vector<int64_t> argnums = DecodeArgnums(p);
      const Randomness randomness = DecodeRandomness(p);
      return jacfwd(first, argnums, randomness, DecodeChunk(p));
    }
    case TransformKind::kHessian:
      return hessian(first, DecodeArgnums(p));
    case TransformKind::kJit: {
      TraceOptions options;
      options.fold_captured = p.Bool();
      options.fuse_pointwise = p.Below(4) != 0;
      const JitFunction j = jit(f, options);
      const bool twice = p.Below(3) != 0;
      return [j, twice](const TensorList& a) {
        TensorList out = j(a);
        if (twice) out = j(a);
        return out;
      };
    }
    case TransformKind::kFunctionalize:
      return functionalize(f, p.Bool() ? FunctionalizeRemove::kMutationsAndViews
                                       : FunctionalizeRemove::kMutations);
    case TransformKind::kLinearize: {
      const int64_t mode = Bias(p, 6);
      return [f, mode](const TensorList& a) {
        Linearized l = linearize(f, a);
        TensorList tangents;
        for (const Tensor& x : a) tangents.push_back(Perturb(mode, x));
        TensorList out = l.jvp_fn(tangents);
        out.insert(out.end(), l.outputs.begin(), l.outputs.end());
        return out;
      };
    }
  }
  return f;
}

TensorListFn WrapAll(const std::vector<Layer>& layers, TensorListFn f, size_t num_args) {
  for (const Layer& l : layers) f = Wrap(l, std::move(f), num_args);
  return f;
}

void CheckOutputs(const TensorList& outputs) {
  for (const Tensor& t : outputs) {
    if (!t.defined()) continue;
    if (!t.is_dense()) {
      std::fprintf(stderr, "fuzz: a transform returned a wrapper to the caller: %s\n",
                   t.DebugString().c_str());
      std::abort();
    }
    CheckLayout(t);
    if (t.numel() <= kMaxNumel * kMaxNumel) (void)contiguous(t);
  }
}

int64_t JacobianWork(const std::vector<Layer>& layers, const TensorList& args,
                     int64_t outputs) {
  constexpr int64_t kOver = kMaxJacobianWork + 1;
  // a * b, saturating at kOver (both are at least 1).
  auto times = [](int64_t a, int64_t b) { return a > kOver / b ? kOver : a * b; };
  int64_t n = 1;
  for (const Tensor& a : args) n += a.numel();
  int64_t work = 1;
  int64_t out = std::max<int64_t>(outputs, 1);  // what the next layer's function returns
  for (const Layer& l : layers) {
    switch (l.kind) {
      case TransformKind::kJacfwd:
        work = times(work, n);
        out = times(out, n);
        break;
      case TransformKind::kJacrev:
        work = times(work, out);
        out = times(out, n);
        break;
      case TransformKind::kHessian:
        work = times(work, times(std::max(out, n), n));
        out = times(out, times(n, n));
        break;
      case TransformKind::kGrad:
      case TransformKind::kGradAndValue:
      case TransformKind::kVjp:
      case TransformKind::kJvp:
      case TransformKind::kLinearize:  // no batch; the results may add gradients or tangents
        out = std::min(out + n, kOver);
        break;
      default:  // vmap (the batch is in the arguments already), jit, functionalize
        break;
    }
    if (work > kMaxJacobianWork) return kOver;
  }
  return work;
}

// ProgramOutputs: the element count of the program's results on copies of the arguments,
// run without any transform (0 when it throws: the transformed call would throw too).
int64_t ProgramOutputs(const std::shared_ptr<Program>& program, const TensorList& args) {
  TensorList copies;
  for (const Tensor& a : args) copies.push_back(clone(a));
  try {
    int64_t m = 0;
    for (const Tensor& t : Program::AsFunction(program)(copies)) {
      if (t.defined()) m += t.numel();
    }
    return m;
  } catch (const Error&) {
    return 0;
  }
}

void RunStack(FuzzInput& in, StepFn step, size_t step_bytes) {
  TensorList args = DecodeArgs(in);
  auto program = std::make_shared<Program>(DecodeProgram(in, step, step_bytes));
  const std::vector<Layer> layers = DecodeLayers(in);
  const int64_t second = in.Below(3);
  if (JacobianWork(layers, args, ProgramOutputs(program, args)) > kMaxJacobianWork) {
    if (Verbose()) {
      std::fprintf(stderr, "skipped: %s is too much work\n", LayersString(layers).c_str());
    }
    return;
  }
  if (Verbose()) {
    std::fprintf(stderr, "%s of %zu steps on %zu args\n", LayersString(layers).c_str(),
                 program->steps.size(), args.size());
  }
  TensorListFn f = WrapAll(layers, Program::AsFunction(program), args.size());
  try {
    CheckOutputs(f(args));
  } catch (const Error& e) {
    if (Verbose()) std::fprintf(stderr, "first call: ft::Error: %s\n", e.what());
  }
  // The second call: the same arguments, or a new signature for jit (contiguous copies,
  // transposed views of transposed copies).
  if (second == 1) {
    for (Tensor& a : args) a = contiguous(a);
  } else if (second == 2) {
    for (Tensor& a : args) {
      if (a.dim() >= 2) a = transpose(contiguous(transpose(a, 0, 1)), 0, 1);
    }
  }
  CheckOutputs(f(args));
}

}  // namespace ft::fuzz
