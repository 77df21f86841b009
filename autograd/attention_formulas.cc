// vjp and jvp formulas: attention and contractions (addmm, baddbmm, einsum,
// scaled_dot_product_attention and its dropout form), written with the public ops so that
// they are differentiable again (hessian, jacfwd of jacrev) and batchable.
//
//   addmm / baddbmm: out = beta in + alpha m1 m2:
//     g_in = sum_to_size(beta g), g_m1 = alpha g m2^T, g_m2 = alpha m1^T g;
//     tangent beta t_in + alpha (t_m1 m2 + m1 t_m2). With beta == 0 the input gets no
//     gradient (zeros) and contributes no tangent (its values are ignored by the op).
//   einsum: linear in each operand, so the tangent is the sum over operands of the equation
//     with that operand replaced by its tangent, and the gradient of operand i is another
//     einsum: the other operands and g contracted to operand i's term. Three cases need more
//     than the term itself as the output (an output term cannot repeat letters or hold
//     letters no input has): a repeated letter (a diagonal) gets a fresh letter tied to the
//     first by an identity matrix factor; a letter only operand i uses (summed by the op) gets
//     a ones factor (the gradient is constant along it); a size-1 dim that broadcast against
//     a larger size gets a fresh letter with a ones factor of size 1 (its gradient is the sum
//     over the broadcast).
//   scaled_dot_product_attention: with S = q k^T * scale + mask, P = softmax(S), out = (P K) v
//     (K the dropout factors, 1 without dropout; the dropout op returns them as its second
//     output), the weights P are recomputed from the inputs and
//       g_v = (P K)^T g,  dP = (g v^T) K,  dS = P (dP - rowsum(P dP)),
//       g_q = dS k * scale,  g_k = dS^T q * scale,  g_mask = dS (a float mask);
//     tangent: dS = (t_q k^T + q t_k^T) * scale + t_mask, dP = P (dS - rowsum(P dS)),
//     out' = (dP K) v + (P K) t_v. Each gradient is summed back to its input's (broadcast)
//     shape. A bool mask gets no gradient. Masked scores (-inf) have P = 0, so they
//     contribute nothing; a row with every score masked is nan, as the op's output.
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "kernels/attention.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

// AsDType: x in `dtype` (a gradient computed in the promoted dtype, back to its input's).
Tensor AsDType(const Tensor& x, DType dtype) { return x.dtype() == dtype ? x : to(x, dtype); }

bool IsZero(Scalar s) { return s.to<double>() == 0.0; }
bool IsOne(Scalar s) { return s.to<double>() == 1.0; }

Tensor Scaled(const Tensor& x, Scalar s) { return IsOne(s) ? x : mul(x, s); }

// ---- einsum ----

struct EinsumInfo {
  kernels::EinsumParts parts;
  std::string unused;                // letters free for new subscripts
  std::map<char, int64_t> size_of;   // every letter's (broadcast) size
};

EinsumInfo Analyze(const ValueList& inputs) {
  const std::string equation = kernels::EinsumString(inputs[0].shape());
  const TensorList& operands = inputs[1].tensor_list();
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : operands) {
    shapes.emplace_back(t.sizes().begin(), t.sizes().end());
    dtypes.push_back(t.dtype());
  }
  const std::string normal = kernels::EinsumNormalize(equation, shapes, dtypes);
  EinsumInfo info{kernels::SplitEinsum(normal), kernels::UnusedEinsumLetters(normal), {}};
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& term = info.parts.inputs[i];
    for (size_t d = 0; d < term.size(); ++d) {
      const int64_t s = operands[i].sizes()[d];
      auto [it, inserted] = info.size_of.emplace(term[d], s);
      if (!inserted && it->second == 1) it->second = s;
    }
  }
  return info;
}

// EinsumGrad: the gradient of operand i, one einsum (see the file comment).
Tensor EinsumGrad(const EinsumInfo& info, const TensorList& operands, const Tensor& g,
                  size_t i) {
  const std::string& term = info.parts.inputs[i];
  kernels::EinsumParts eq;
  TensorList args;
  for (size_t j = 0; j < operands.size(); ++j) {
    if (j == i) continue;
    eq.inputs.push_back(info.parts.inputs[j]);
    args.push_back(operands[j]);
  }
  eq.inputs.push_back(info.parts.output);
  args.push_back(g);
  const auto used_elsewhere = [&](char c) {
    for (const std::string& t : eq.inputs) {
      if (t.find(c) != std::string::npos) return true;
    }
    return false;
  };
  size_t next = 0;
  const auto fresh = [&]() {
    if (next >= info.unused.size()) {
      ThrowError("einsum(): the gradient of operand ", i,
                 " needs more subscript letters than the 52 the equation leaves");
    }
    return info.unused[next++];
  };
  const DType dtype = g.dtype();
  std::string placed;
  for (size_t d = 0; d < term.size(); ++d) {
    const char c = term[d];
    const int64_t size = operands[i].sizes()[d];
    if (size == 1 && info.size_of.at(c) != 1) {
      const char f = fresh();
      eq.inputs.push_back(std::string(1, f));
      args.push_back(ones({1}, dtype));
      eq.output.push_back(f);
    } else if (placed.find(c) != std::string::npos) {
      const char f = fresh();
      eq.inputs.push_back(std::string{c, f});
      args.push_back(eye(size, dtype));
      eq.output.push_back(f);
    } else {
      if (!used_elsewhere(c)) {
        eq.inputs.push_back(std::string(1, c));
        args.push_back(ones({size}, dtype));
      }
      placed.push_back(c);
      eq.output.push_back(c);
    }
  }
  return AsDType(einsum(kernels::JoinEinsum(eq), args), operands[i].dtype());
}

// ---- scaled_dot_product_attention ----

struct Sdpa {
  Tensor q, k, v;             // in the promoted dtype
  std::optional<Tensor> mask;
  bool float_mask = false;    // the mask has a gradient slot (it is an input tensor)
  bool has_mask = false;
  double scale = 1.0;
  Tensor p;                   // softmax weights
};

// SdpaOf reads (query, key, value, attn_mask, ...) from `inputs`; is_causal and scale are at
// `causal_at` and causal_at + 1. Recomputes the weights with public ops.
Sdpa SdpaOf(const ValueList& inputs, size_t causal_at) {
  Sdpa s;
  const Tensor& q = inputs[0].tensor();
  const DType dtype = PromoteTypes(q.dtype(), PromoteTypes(inputs[1].tensor().dtype(),
                                                           inputs[2].tensor().dtype()));
  s.q = AsDType(q, dtype);
  s.k = AsDType(inputs[1].tensor(), dtype);
  s.v = AsDType(inputs[2].tensor(), dtype);
  s.has_mask = !inputs[3].is_none();
  if (s.has_mask) {
    s.mask = inputs[3].tensor();
    s.float_mask = s.mask->dtype() != kBool;
  }
  const bool is_causal = inputs[causal_at].to_bool();
  const std::optional<Scalar> scale =
      inputs[causal_at + 1].is_none() ? std::nullopt
                                      : std::optional<Scalar>(inputs[causal_at + 1].scalar());
  s.scale = kernels::AttentionScale(q.sizes(), scale);
  Tensor scores = mul(matmul(s.q, mT(s.k)), s.scale);
  const double inf = std::numeric_limits<double>::infinity();
  if (is_causal) {
    const int64_t l = q.size(-2);
    const int64_t n = s.k.size(-2);
    std::vector<bool> keep(static_cast<size_t>(l * n));
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < n; ++j) keep[static_cast<size_t>(i * n + j)] = j <= i;
    }
    scores = where(tensor(keep, {l, n}), scores, -inf);
  } else if (s.has_mask) {
    scores = s.float_mask ? add(scores, AsDType(*s.mask, dtype)) : where(*s.mask, scores, -inf);
  }
  s.p = softmax(scores, -1);
  return s;
}

// SdpaVjp: gradients of (query, key, value[, mask]) for the cotangent g; keep are the dropout
// factors (undefined: none).
TensorList SdpaVjp(const VjpContext& c, const Sdpa& s, const Tensor& g, const Tensor& keep) {
  const Tensor w = keep.defined() ? mul(s.p, keep) : s.p;
  const bool need_scores = c.needs(0) || c.needs(1) || (s.float_mask && c.needs(3));
  TensorList out(3);
  if (c.needs(2)) {
    out[2] = AsDType(sum_to_size(matmul(mT(w), g), c.input(2).sizes()), c.input(2).dtype());
  }
  Tensor ds;
  if (need_scores) {
    Tensor dp = matmul(g, mT(s.v));
    if (keep.defined()) dp = mul(dp, keep);
    ds = s.p * (dp - sum(dp * s.p, {-1}, true));
  }
  if (c.needs(0)) {
    out[0] = AsDType(sum_to_size(mul(matmul(ds, s.k), s.scale), c.input(0).sizes()),
                     c.input(0).dtype());
  }
  if (c.needs(1)) {
    out[1] = AsDType(sum_to_size(mul(matmul(mT(ds), s.q), s.scale), c.input(1).sizes()),
                     c.input(1).dtype());
  }
  if (s.has_mask) {
    out.push_back(s.float_mask && c.needs(3)
                      ? AsDType(sum_to_size(ds, s.mask->sizes()), s.mask->dtype())
                      : Tensor());
  }
  return out;
}

// SdpaJvp: the output's tangent for input tangents t (query, key, value[, mask]).
Tensor SdpaJvp(const Sdpa& s, const TensorList& t, const Tensor& keep) {
  const DType dtype = s.q.dtype();
  Tensor ds;
  if (t[0].defined()) ds = matmul(AsDType(t[0], dtype), mT(s.k));
  if (t[1].defined()) ds = AddTangents(ds, matmul(s.q, mT(AsDType(t[1], dtype))));
  if (ds.defined()) ds = mul(ds, s.scale);
  if (t.size() > 3 && s.float_mask && t[3].defined()) {
    ds = AddTangents(ds, AsDType(t[3], dtype));
  }
  Tensor out;
  if (ds.defined()) {
    Tensor dp = s.p * (ds - sum(ds * s.p, {-1}, true));
    if (keep.defined()) dp = mul(dp, keep);
    out = matmul(dp, s.v);
  }
  if (t[2].defined()) {
    const Tensor w = keep.defined() ? mul(s.p, keep) : s.p;
    out = AddTangents(out, matmul(w, AsDType(t[2], dtype)));
  }
  return out;
}

}  // namespace

void RegisterAttentionFormulas() {
  // addmm / baddbmm: (input, mat1, mat2, beta, alpha).
  for (const char* name : {"addmm", "baddbmm"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      const Scalar beta = c.inputs[3].scalar();
      const Scalar alpha = c.inputs[4].scalar();
      const Tensor& in = c.input(0);
      const Tensor& m1 = c.input(1);
      const Tensor& m2 = c.input(2);
      Tensor gin;
      if (c.needs(0)) {
        gin = IsZero(beta) ? zeros_like(in) : AsDType(sum_to_size(Scaled(g[0], beta), in.sizes()),
                                                      in.dtype());
      }
      return TensorList{
          gin,
          c.needs(1) ? AsDType(Scaled(matmul(g[0], mT(m2)), alpha), m1.dtype()) : Tensor(),
          c.needs(2) ? AsDType(Scaled(matmul(mT(m1), g[0]), alpha), m2.dtype()) : Tensor()};
    });
    SetJvp(Op(name), [](const JvpContext& c, const TensorList& t) {
      const Scalar beta = c.inputs[3].scalar();
      const Scalar alpha = c.inputs[4].scalar();
      Tensor prod = AddTangents(t[1].defined() ? matmul(t[1], c.input(2)) : Tensor(),
                                t[2].defined() ? matmul(c.input(1), t[2]) : Tensor());
      if (prod.defined()) prod = Scaled(prod, alpha);
      const Tensor in = t[0].defined() && !IsZero(beta) ? Scaled(t[0], beta) : Tensor();
      return TensorList{AddTangents(in, prod)};
    });
  }

  // einsum: (equation, operands); one gradient / tangent slot per operand.
  SetVjp(Op("einsum"), [](const VjpContext& c, const TensorList& g) {
    const TensorList& operands = c.inputs[1].tensor_list();
    const EinsumInfo info = Analyze(c.inputs);
    TensorList out;
    for (size_t i = 0; i < operands.size(); ++i) {
      out.push_back(c.needs(i) ? EinsumGrad(info, operands, g[0], i) : Tensor());
    }
    return out;
  });
  SetJvp(Op("einsum"), [](const JvpContext& c, const TensorList& t) {
    const TensorList& operands = c.inputs[1].tensor_list();
    const std::string equation = kernels::JoinEinsum(Analyze(c.inputs).parts);
    Tensor out;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!t[i].defined()) continue;
      TensorList args = operands;
      args[i] = t[i];
      out = AddTangents(out, einsum(equation, args));
    }
    return TensorList{out};
  });

  // scaled_dot_product_attention: (query, key, value, attn_mask, is_causal, scale).
  SetVjp(Op("scaled_dot_product_attention"), [](const VjpContext& c, const TensorList& g) {
    return SdpaVjp(c, SdpaOf(c.inputs, 4), g[0], Tensor());
  });
  SetJvp(Op("scaled_dot_product_attention"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{SdpaJvp(SdpaOf(c.inputs, 4), t, Tensor())};
  });
  // The dropout form: (query, key, value, attn_mask, dropout_p, is_causal, scale, generator),
  // outputs (out, keep); keep (the dropout factors) carries no gradient.
  const Operator& dropout_op = Op("scaled_dot_product_attention_dropout");
  SetVjp(dropout_op, [](const VjpContext& c, const TensorList& g) {
    return SdpaVjp(c, SdpaOf(c.inputs, 5), g[0], c.output(1));
  });
  SetJvp(dropout_op, [](const JvpContext& c, const TensorList& t) {
    return TensorList{SdpaJvp(SdpaOf(c.inputs, 5), t, c.output(1)), Tensor()};
  });
  MarkOutputValuesRead(dropout_op);
}

}  // namespace ft::autograd
