#include "kernels/attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/binary.h"
#include "kernels/linalg.h"
#include "kernels/random.h"
#include "kernels/reduction.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/error.h"

namespace ft::kernels {
namespace {

// ScalarOf: a rank-0 tensor of `dtype` holding v (rank 0: it does not widen the result type).
Tensor ScalarOf(Scalar v, DType dtype) {
  Tensor t = EmptyContiguous({}, dtype);
  return full_like(t, v);
}

bool IsZero(Scalar s) { return s.to<double>() == 0.0; }
bool IsOne(Scalar s) { return s.to<double>() == 1.0; }

}  // namespace

// ---------------------------------------------------------------------------------------
// addmm, baddbmm: beta * input + alpha * (mat1 @ mat2).
// ---------------------------------------------------------------------------------------

std::tuple<Shape, DType> CheckAddmm(const char* op, int64_t rank, IntArrayRef input,
                                    DType input_dtype, IntArrayRef mat1, DType mat1_dtype,
                                    IntArrayRef mat2, DType mat2_dtype, Scalar beta,
                                    Scalar alpha) {
  const char* what = rank == 2 ? "matrices" : "3-D batches of matrices";
  if (static_cast<int64_t>(mat1.size()) != rank || static_cast<int64_t>(mat2.size()) != rank) {
    ThrowError(op, ": expected ", what, ", got ", ShapeToString(mat1), " and ",
               ShapeToString(mat2));
  }
  if (input_dtype == kBool || mat1_dtype == kBool || mat2_dtype == kBool) {
    ThrowError(op, ": bool tensors are not supported, got ", DTypeName(input_dtype), ", ",
               DTypeName(mat1_dtype), " and ", DTypeName(mat2_dtype));
  }
  if (rank == 3 && mat1[0] != mat2[0]) {
    ThrowError(op, ": batch sizes differ, got ", ShapeToString(mat1), " and ",
               ShapeToString(mat2), " (", mat1[0], " vs ", mat2[0], ")");
  }
  if (mat1[rank - 1] != mat2[rank - 2]) {
    ThrowError(op, ": size mismatch, got ", ShapeToString(mat1), " @ ", ShapeToString(mat2),
               ": dim ", rank - 1, " of the first (", mat1[rank - 1], ") must equal dim ",
               rank - 2, " of the second (", mat2[rank - 2], ")");
  }
  Shape out(mat1.begin(), mat1.end());
  out.back() = mat2[rank - 1];
  if (!IsExpandableTo(input, out)) {
    ThrowError(op, ": input of shape ", ShapeToString(input),
               " does not broadcast to the product's shape ", ShapeToString(out), " (",
               ShapeToString(mat1), " @ ", ShapeToString(mat2), ")");
  }
  const DType dtype = PromoteTypes(input_dtype, PromoteTypes(mat1_dtype, mat2_dtype));
  if (!IsFloating(dtype) && (beta.is_floating() || alpha.is_floating())) {
    ThrowError(op, ": beta and alpha must be integers for ", DTypeName(dtype),
               " operands, got beta ", beta.to<double>(), " and alpha ", alpha.to<double>());
  }
  return {out, dtype};
}

namespace {

Tensor AddmmImpl(const char* op, int64_t rank, const Tensor& input, const Tensor& m1,
                 const Tensor& m2, Scalar beta, Scalar alpha) {
  const auto [shape, dtype] = CheckAddmm(op, rank, input.sizes(), input.dtype(), m1.sizes(),
                                         m1.dtype(), m2.sizes(), m2.dtype(), beta, alpha);
  Tensor prod = rank == 2 ? mm(to(m1, dtype), to(m2, dtype)) : bmm(to(m1, dtype), to(m2, dtype));
  if (!IsOne(alpha)) prod = mul(prod, ScalarOf(alpha, dtype));
  // beta == 0 ignores input's values (nan and inf included), as torch does.
  if (IsZero(beta)) return prod;
  Tensor term = to(input, dtype);
  if (!IsOne(beta)) term = mul(term, ScalarOf(beta, dtype));
  return add(term, prod);
}

}  // namespace

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha) {
  return AddmmImpl("addmm", 2, input, mat1, mat2, beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha) {
  return AddmmImpl("baddbmm", 3, input, batch1, batch2, beta, alpha);
}

// ---------------------------------------------------------------------------------------
// einsum.
// ---------------------------------------------------------------------------------------

Shape EinsumCodes(std::string_view equation) {
  Shape codes;
  for (char c : equation) codes.push_back(static_cast<unsigned char>(c));
  return codes;
}

std::string EinsumString(IntArrayRef codes) {
  std::string s;
  for (int64_t c : codes) {
    if (c <= 0 || c > 127) ThrowError("einsum(): the equation has a non-ASCII code ", c);
    s.push_back(static_cast<char>(c));
  }
  return s;
}

namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

// A term as written: its letters, and where its ellipsis is (npos: none).
struct Term {
  std::string letters;
  size_t ellipsis = std::string::npos;
};

// EinsumError: einsum's message with the equation and the operand shapes appended.
template <typename... Args>
[[noreturn]] void EinsumError(std::string_view equation, absl::Span<const Shape> shapes,
                              const Args&... args) {
  std::vector<std::string> s;
  for (const Shape& x : shapes) s.push_back(ShapeToString(x));
  ThrowError("einsum(): ", args..., " (equation \"", std::string(equation), "\", operands ",
             s.empty() ? "none" : absl::StrJoin(s, ", "), ")");
}

}  // namespace

std::string EinsumNormalize(std::string_view equation, absl::Span<const Shape> shapes,
                            absl::Span<const DType> dtypes) {
  if (shapes.empty()) EinsumError(equation, shapes, "must provide at least one operand");
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] == kBool) {
      EinsumError(equation, shapes, "bool tensors are not supported, operand ", i, " is bool");
    }
  }
  // Parse: terms separated by ',', an optional "->" and an output term.
  std::vector<Term> terms(1);
  Term out;
  bool has_arrow = false;
  for (size_t i = 0; i < equation.size(); ++i) {
    const char c = equation[i];
    Term& term = has_arrow ? out : terms.back();
    const size_t operand = terms.size() - 1;
    if (c == ' ') continue;
    if (IsLetter(c)) {
      term.letters.push_back(c);
    } else if (c == ',' && !has_arrow) {
      terms.emplace_back();
    } else if (c == '-' && !has_arrow && i + 1 < equation.size() && equation[i + 1] == '>') {
      has_arrow = true;
      ++i;
    } else if (c == '.') {
      if (equation.substr(i, 3) != "...") {
        EinsumError(equation, shapes, "found '.' at index ", i,
                    " that is not part of an ellipsis (...)");
      }
      if (term.ellipsis != std::string::npos) {
        EinsumError(equation, shapes, "found more than one ellipsis (...) for ",
                    has_arrow ? std::string("the output") : absl::StrCat("operand ", operand));
      }
      term.ellipsis = term.letters.size();
      i += 2;
    } else {
      EinsumError(equation, shapes, "invalid subscript '", std::string(1, c), "' at index ", i,
                  ": subscripts must be letters in [a-zA-Z]");
    }
  }
  if (terms.size() != shapes.size()) {
    EinsumError(equation, shapes, "the equation has ", terms.size(), " input term(s) but ",
                shapes.size(), " operand(s) were given");
  }
  // The ellipsis dims of every operand, and how many letters they need.
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t rank = static_cast<int64_t>(shapes[i].size());
    const int64_t n = static_cast<int64_t>(terms[i].letters.size());
    if (terms[i].ellipsis == std::string::npos) {
      if (n != rank) {
        EinsumError(equation, shapes, "operand ", i, " has ", rank,
                    " dimension(s) but its term \"", terms[i].letters, "\" has ", n,
                    " subscript(s) and no ellipsis");
      }
    } else {
      if (n > rank) {
        EinsumError(equation, shapes, "operand ", i, " has ", rank,
                    " dimension(s), fewer than the ", n, " subscript(s) of its term");
      }
      ellipsis_rank = std::max(ellipsis_rank, rank - n);
    }
  }
  std::string fresh;
  for (char c : kLetters) {
    if (static_cast<int64_t>(fresh.size()) == ellipsis_rank) break;
    if (equation.find(c) == std::string_view::npos) fresh.push_back(c);
  }
  if (static_cast<int64_t>(fresh.size()) < ellipsis_rank) {
    EinsumError(equation, shapes, "the ellipsis covers ", ellipsis_rank,
                " dimension(s) but only ", fresh.size(),
                " letters are left unused by the equation (52 subscripts at most)");
  }
  // The terms with their ellipses spelled out, and every letter's size (sizes of 1 broadcast).
  std::vector<std::string> full(terms.size());
  std::map<char, int64_t> size_of;
  std::map<char, int64_t> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& term = terms[i];
    std::string& f = full[i];
    if (term.ellipsis == std::string::npos) {
      f = term.letters;
    } else {
      const int64_t covered =
          static_cast<int64_t>(shapes[i].size()) - static_cast<int64_t>(term.letters.size());
      f = absl::StrCat(term.letters.substr(0, term.ellipsis),
                       fresh.substr(static_cast<size_t>(ellipsis_rank - covered)),
                       term.letters.substr(term.ellipsis));
    }
    std::map<char, int64_t> own;
    for (size_t d = 0; d < f.size(); ++d) {
      const char c = f[d];
      const int64_t size = shapes[i][d];
      const bool from_ellipsis = fresh.find(c) != std::string::npos;
      if (auto it = own.find(c); it != own.end() && it->second != size) {
        EinsumError(equation, shapes, "subscript ", std::string(1, c),
                    " is repeated for operand ", i, " but the sizes don't match, ", it->second,
                    " != ", size);
      }
      own[c] = size;
      if (!from_ellipsis) ++count[c];
      auto [it, inserted] = size_of.emplace(c, size);
      if (!inserted && it->second != size) {
        if (it->second != 1 && size != 1) {
          if (from_ellipsis) {
            EinsumError(equation, shapes, "the dims the ellipsis covers do not broadcast: ",
                        "operand ", i, " has size ", size, " at dim ", d, " where another has ",
                        it->second);
          }
          EinsumError(equation, shapes, "subscript ", std::string(1, c), " has size ", size,
                      " for operand ", i, " which does not broadcast with previously seen size ",
                      it->second);
        }
        if (it->second == 1) it->second = size;
      }
    }
  }
  std::string output;
  if (has_arrow) {
    for (size_t k = 0; k < out.letters.size(); ++k) {
      const char c = out.letters[k];
      if (count.find(c) == count.end()) {
        EinsumError(equation, shapes, "output subscript ", std::string(1, c),
                    " does not appear in the equation for any input operand");
      }
      if (out.letters.find(c, k + 1) != std::string::npos) {
        EinsumError(equation, shapes, "output subscript ", std::string(1, c),
                    " appears more than once in the output");
      }
    }
    output = out.ellipsis == std::string::npos
                 ? out.letters
                 : absl::StrCat(out.letters.substr(0, out.ellipsis), fresh,
                                out.letters.substr(out.ellipsis));
  } else {
    output = fresh;
    for (const auto& [c, n] : count) {  // std::map: ASCII order, upper case first (torch's)
      if (n == 1) output.push_back(c);
    }
  }
  return absl::StrCat(absl::StrJoin(full, ","), "->", output);
}

EinsumParts SplitEinsum(std::string_view normalized) {
  EinsumParts parts;
  const size_t arrow = normalized.find("->");
  FT_CHECK(arrow != std::string_view::npos);
  std::string_view lhs = normalized.substr(0, arrow);
  parts.output = std::string(normalized.substr(arrow + 2));
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    parts.inputs.emplace_back(lhs.substr(start, comma == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string JoinEinsum(const EinsumParts& parts) {
  return absl::StrCat(absl::StrJoin(parts.inputs, ","), "->", parts.output);
}

std::string UnusedEinsumLetters(std::string_view normalized) {
  std::string r;
  for (char c : kLetters) {
    if (normalized.find(c) == std::string_view::npos) r.push_back(c);
  }
  return r;
}

namespace {

// One operand during the contraction: its value and one distinct letter per dim.
struct Labeled {
  Tensor t;
  std::string labels;
};

// SumLetters: x with the dims of `drop` summed out.
Labeled SumLetters(const Labeled& x, const std::string& drop) {
  Shape dims;
  std::string kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (drop.find(x.labels[d]) != std::string::npos) {
      dims.push_back(static_cast<int64_t>(d));
    } else {
      kept.push_back(x.labels[d]);
    }
  }
  if (dims.empty()) return x;
  return {sum(x.t, dims, false), kept};
}

// Arrange: x permuted so that its dims follow `order` (a permutation of x.labels).
Tensor Arrange(const Labeled& x, const std::string& order) {
  Shape perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(x.labels.find(c)));
  return permute(x.t, perm);
}

int64_t SizeOf(const std::map<char, int64_t>& sizes, const std::string& letters) {
  int64_t n = 1;
  for (char c : letters) n = SaturatingMul(n, sizes.at(c));
  return n;
}

// Contract: the pairwise contraction of a and b keeping the letters `keep` (every other
// letter they share is summed): one bmm of [batch, left, summed] @ [batch, summed, right].
Labeled Contract(const Labeled& a, const Labeled& b, const std::string& keep,
                 const std::map<char, int64_t>& sizes) {
  const auto kept = [&](char c) { return keep.find(c) != std::string::npos; };
  // Letters of only one side that are not kept are summed first (none are, in practice: they
  // were summed before the contraction started).
  std::string drop_a, drop_b;
  for (char c : a.labels) {
    if (!kept(c) && b.labels.find(c) == std::string::npos) drop_a.push_back(c);
  }
  for (char c : b.labels) {
    if (!kept(c) && a.labels.find(c) == std::string::npos) drop_b.push_back(c);
  }
  const Labeled x = SumLetters(a, drop_a);
  const Labeled y = SumLetters(b, drop_b);
  std::string batch, left, summed, right;
  for (char c : x.labels) {
    const bool shared = y.labels.find(c) != std::string::npos;
    if (shared && kept(c)) {
      batch.push_back(c);
    } else if (shared) {
      summed.push_back(c);
    } else {
      left.push_back(c);
    }
  }
  for (char c : y.labels) {
    if (x.labels.find(c) == std::string::npos) right.push_back(c);
  }
  const int64_t nb = SizeOf(sizes, batch), nl = SizeOf(sizes, left);
  const int64_t ns = SizeOf(sizes, summed), nr = SizeOf(sizes, right);
  const Tensor xm = reshape(Arrange(x, batch + left + summed), {nb, nl, ns});
  const Tensor ym = reshape(Arrange(y, batch + summed + right), {nb, ns, nr});
  const std::string labels = batch + left + right;
  Shape shape;
  for (char c : labels) shape.push_back(sizes.at(c));
  return {reshape(bmm(xm, ym), shape), labels};
}

Tensor EinsumImpl(const std::string& normalized, const TensorList& operands) {
  const EinsumParts parts = SplitEinsum(normalized);
  DType dtype = operands[0].dtype();
  for (const Tensor& t : operands) dtype = PromoteTypes(dtype, t.dtype());
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& term = parts.inputs[i];
    for (size_t d = 0; d < term.size(); ++d) {
      const int64_t s = operands[i].sizes()[d];
      auto [it, inserted] = sizes.emplace(term[d], s);
      if (!inserted && it->second == 1) it->second = s;
    }
  }
  // Each operand with distinct letters (repeated ones become diagonals) and its size-1
  // letters broadcast to the full size (a view: the contraction then never sees a 1 where
  // another operand has n).
  std::vector<Labeled> ops;
  bool fresh = false;  // whether the value is a new tensor (else a view of an operand)
  for (size_t i = 0; i < operands.size(); ++i) {
    Labeled x{to(operands[i], dtype), parts.inputs[i]};
    fresh = fresh || x.t.dtype() != operands[i].dtype();
    for (size_t p = 0; p < x.labels.size(); ++p) {
      size_t q;
      while ((q = x.labels.find(x.labels[p], p + 1)) != std::string::npos) {
        const char c = x.labels[p];
        x.t = diagonal(x.t, 0, static_cast<int64_t>(p), static_cast<int64_t>(q));
        x.labels.erase(q, 1);
        x.labels.erase(p, 1);
        x.labels.push_back(c);
        p = 0;
      }
    }
    Shape full;
    for (char c : x.labels) full.push_back(sizes.at(c));
    x.t = expand(x.t, full);
    ops.push_back(std::move(x));
  }
  // count[c]: how many operands (and the output) still use letter c.
  std::map<char, int> count;
  for (const Labeled& x : ops) {
    for (char c : x.labels) ++count[c];
  }
  for (char c : parts.output) ++count[c];
  // Letters used by one operand only and not by the output are summed right away.
  for (Labeled& x : ops) {
    std::string drop;
    for (char c : x.labels) {
      if (count[c] == 1) drop.push_back(c);
    }
    if (!drop.empty()) {
      x = SumLetters(x, drop);
      fresh = true;
    }
  }
  // Greedy order: contract the pair whose result is smallest (the first such pair on ties).
  while (ops.size() > 1) {
    size_t best_i = 0, best_j = 1;
    std::string best_keep;
    int64_t best_size = std::numeric_limits<int64_t>::max();
    bool found = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size(); ++j) {
        std::string keep;
        for (const std::string* ls : {&ops[i].labels, &ops[j].labels}) {
          for (char c : *ls) {
            if (keep.find(c) != std::string::npos) continue;
            const int in_pair = (ops[i].labels.find(c) != std::string::npos) +
                                (ops[j].labels.find(c) != std::string::npos);
            if (count[c] > in_pair) keep.push_back(c);  // used by the output or another operand
          }
        }
        const int64_t size = SizeOf(sizes, keep);
        if (!found || size < best_size) {
          found = true;
          best_size = size;
          best_i = i;
          best_j = j;
          best_keep = keep;
        }
      }
    }
    Labeled c = Contract(ops[best_i], ops[best_j], best_keep, sizes);
    for (char l : ops[best_i].labels) --count[l];
    for (char l : ops[best_j].labels) --count[l];
    for (char l : c.labels) ++count[l];
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(best_j));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(best_i));
    ops.push_back(std::move(c));
    fresh = true;
  }
  Labeled last = ops[0];
  std::string drop;
  for (char c : last.labels) {
    if (parts.output.find(c) == std::string::npos) drop.push_back(c);
  }
  if (!drop.empty()) {
    last = SumLetters(last, drop);
    fresh = true;
  }
  const Tensor r = Arrange(last, parts.output);
  return fresh ? contiguous(r) : clone(r);
}

}  // namespace

Tensor einsum(IntArrayRef equation, const TensorList& operands) {
  const std::string eq = EinsumString(equation);
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : operands) {
    shapes.emplace_back(t.sizes().begin(), t.sizes().end());
    dtypes.push_back(t.dtype());
  }
  return EinsumImpl(EinsumNormalize(eq, shapes, dtypes), operands);
}

// ---------------------------------------------------------------------------------------
// scaled_dot_product_attention: softmax(q k^T * scale + mask) v.
// ---------------------------------------------------------------------------------------

double AttentionScale(IntArrayRef query, std::optional<Scalar> scale) {
  if (scale) return scale->to<double>();
  return 1.0 / std::sqrt(static_cast<double>(query.back()));
}

AttentionShapes CheckAttention(IntArrayRef q, DType q_dtype, IntArrayRef k, DType k_dtype,
                               IntArrayRef v, DType v_dtype, const IntArrayRef* mask,
                               DType mask_dtype, double dropout_p, bool is_causal,
                               std::optional<Scalar> scale) {
  const char* op = "scaled_dot_product_attention";
  if (q.size() < 2 || k.size() < 2 || v.size() < 2) {
    ThrowError(op, ": query, key and value need at least 2 dimensions ([..., L, E], [..., S, E], ",
               "[..., S, Ev]), got ", ShapeToString(q), ", ", ShapeToString(k), " and ",
               ShapeToString(v));
  }
  if (!IsFloating(q_dtype) || !IsFloating(k_dtype) || !IsFloating(v_dtype)) {
    ThrowError(op, ": query, key and value must be float32 or float64, got ", DTypeName(q_dtype),
               ", ", DTypeName(k_dtype), " and ", DTypeName(v_dtype));
  }
  if (q.back() != k.back()) {
    ThrowError(op, ": query ", ShapeToString(q), " and key ", ShapeToString(k),
               " must have the same last size (E), got ", q.back(), " and ", k.back());
  }
  if (k[k.size() - 2] != v[v.size() - 2]) {
    ThrowError(op, ": key ", ShapeToString(k), " and value ", ShapeToString(v),
               " must have the same sequence length (dim -2), got ", k[k.size() - 2], " and ",
               v[v.size() - 2]);
  }
  const auto batch = [](IntArrayRef s) { return s.subspan(0, s.size() - 2); };
  const auto broadcast = [&](IntArrayRef a, IntArrayRef b, const char* what) {
    Shape r;
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
      const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
      if (da != db && da != 1 && db != 1) {
        ThrowError(op, ": the batch dims of ", what, " do not broadcast (query ", ShapeToString(q),
                   ", key ", ShapeToString(k), ", value ", ShapeToString(v), ")");
      }
      r.push_back(da == 1 ? db : da);
    }
    return r;
  };
  AttentionShapes r;
  r.weights = broadcast(batch(q), batch(k), "query and key");
  r.output = broadcast(r.weights, batch(v), "query, key and value");
  r.weights.push_back(q[q.size() - 2]);
  r.weights.push_back(k[k.size() - 2]);
  r.output.push_back(q[q.size() - 2]);
  r.output.push_back(v.back());
  r.dtype = PromoteTypes(q_dtype, PromoteTypes(k_dtype, v_dtype));
  if (mask != nullptr) {
    if (is_causal) {
      ThrowError(op, ": attn_mask must not be given when is_causal is true (got attn_mask ",
                 ShapeToString(*mask), ")");
    }
    if (mask_dtype != kBool && !IsFloating(mask_dtype)) {
      ThrowError(op, ": attn_mask must be bool or floating, got ", DTypeName(mask_dtype));
    }
    if (!IsExpandableTo(*mask, r.weights)) {
      ThrowError(op, ": attn_mask of shape ", ShapeToString(*mask),
                 " does not broadcast to the attention weights' shape ",
                 ShapeToString(r.weights), " [..., L, S]");
    }
  }
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) {
    ThrowError(op, ": dropout_p must be in [0, 1], got ", dropout_p);
  }
  if (scale && !std::isfinite(scale->to<double>())) {
    ThrowError(op, ": scale must be finite, got ", scale->to<double>());
  }
  return r;
}

namespace {

AttentionShapes CheckAttentionTensors(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const std::optional<Tensor>& mask, double dropout_p,
                                      bool is_causal, std::optional<Scalar> scale) {
  IntArrayRef mask_shape;
  if (mask) mask_shape = mask->sizes();
  return CheckAttention(q.sizes(), q.dtype(), k.sizes(), k.dtype(), v.sizes(), v.dtype(),
                        mask ? &mask_shape : nullptr, mask ? mask->dtype() : kFloat32, dropout_p,
                        is_causal, scale);
}

// AttentionWeights: softmax(q k^T * scale + mask) over the last dim, in `dtype`. A bool mask
// (and the causal one: keep j <= i) sets the dropped scores to -inf.
Tensor AttentionWeights(const Tensor& q, const Tensor& k, const std::optional<Tensor>& mask,
                        bool is_causal, double scale, DType dtype) {
  Tensor s = mul(matmul(to(q, dtype), transpose(to(k, dtype), -2, -1)), ScalarOf(scale, dtype));
  const Tensor minus_inf = ScalarOf(-std::numeric_limits<double>::infinity(), dtype);
  if (is_causal) {
    const int64_t l = q.sizes()[q.dim() - 2];
    const int64_t n = k.sizes()[k.dim() - 2];
    Tensor keep = EmptyContiguous({l, n}, kBool);
    bool* p = keep.data<bool>();
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < n; ++j) p[i * n + j] = j <= i;
    }
    s = where(keep, s, minus_inf);
  } else if (mask) {
    s = mask->dtype() == kBool ? where(*mask, s, minus_inf) : add(s, to(*mask, dtype));
  }
  return softmax(s, -1);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, bool is_causal,
                                    std::optional<Scalar> scale) {
  const AttentionShapes s =
      CheckAttentionTensors(query, key, value, attn_mask, 0.0, is_causal, scale);
  const Tensor w = AttentionWeights(query, key, attn_mask, is_causal,
                                    AttentionScale(query.sizes(), scale), s.dtype);
  return matmul(w, to(value, s.dtype));
}

std::tuple<Tensor, Tensor> scaled_dot_product_attention_dropout(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
    std::optional<Scalar> scale, Generator* gen) {
  const AttentionShapes s =
      CheckAttentionTensors(query, key, value, attn_mask, dropout_p, is_causal, scale);
  const Tensor w = AttentionWeights(query, key, attn_mask, is_causal,
                                    AttentionScale(query.sizes(), scale), s.dtype);
  // keep: dropout of ones, so that counter i decides weight i (row-major over [..., L, S]),
  // exactly as dropout of the weights would.
  Tensor ones = EmptyContiguous(s.weights, s.dtype);
  ones = full_like(ones, 1);
  const Tensor keep = dropout(ones, dropout_p, /*train=*/true, gen);
  return {matmul(mul(w, keep), to(value, s.dtype)), keep};
}

}  // namespace ft::kernels
