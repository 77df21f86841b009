// ft/ops/attention.h
//
// Attention and contractions: the public ops addmm, baddbmm, einsum and
// scaled_dot_product_attention, with torch's names, argument order, defaults and semantics.
// Each dispatches (dispatch.h) to its base kernel in kernels/attention.h, has a
// batching rule (vmap_rules/attention.cc) and vjp / jvp formulas written with public ops
// (autograd/attention_formulas.cc), so grad, jacrev, jacfwd, hessian and vmap of code using
// them work at every order.
//
// Dtype rules: the result dtype is PromoteTypes of the tensor operands (addmm, baddbmm and
// einsum also take int64; bool operands throw). scaled_dot_product_attention takes float32 or
// float64 query / key / value. Results are new contiguous tensors that never alias an input.
//
// Errors are ft::Errors whose message starts with the op's name ("einsum(): ..." for einsum,
// as torch's) and names the shapes involved (einsum also the equation).
//
// Example:
//   Tensor y = ft::addmm(bias, x, w);                       // bias + x @ w
//   Tensor g = ft::einsum("bij,bjk->bik", {a, b});          // a batched matmul
//   Tensor tr = ft::einsum("ii", {m});                      // trace
//   Tensor o = ft::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true);
#ifndef FT_OPS_ATTENTION_H_
#define FT_OPS_ATTENTION_H_

#include <optional>
#include <string_view>

#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// addmm is torch.addmm: beta * input + alpha * (mat1 @ mat2) for mat1 [n, m] and mat2
// [m, p]; input broadcasts to [n, p] (e.g. a bias [p]); the result is [n, p]. With beta == 0
// input's values are ignored (nan and inf in it do not propagate), as torch's. beta and alpha
// must be integers when every operand is int64. Throws for non-2-D mat1 / mat2, mismatched
// inner sizes, an input that does not broadcast to [n, p], or bool operands.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1);

// baddbmm is torch.baddbmm: beta * input + alpha * bmm(batch1, batch2) for batch1 [B, n, m]
// and batch2 [B, m, p]; input broadcasts to [B, n, p]. Same rules and errors as addmm (3-D
// operands with equal batch sizes).
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2,
               Scalar beta = 1, Scalar alpha = 1);

// einsum is torch.einsum: the sum of products of `operands` given by `equation`, one term of
// subscripts (letters a-z, A-Z) per operand separated by commas, then optionally "->" and the
// output's subscripts. Spaces are ignored.
//   - A letter shared by operands multiplies their elements along it; a letter missing from
//     the output is summed ("ij,jk->ik" is a matrix product, "i,i->" a dot product).
//   - A letter repeated within one operand takes its diagonal ("ii->i"; "ii" is the trace).
//   - "..." stands for the dims no letter names; ellipsis dims of different operands
//     broadcast (numpy rules, right-aligned), and so do letters of size 1.
//   - Without "->" the output is the ellipsis dims, then the letters used exactly once, in
//     alphabetical order (upper case first): "ij,jk" is "ij,jk->ik", "ji" is "ji->ij".
//   - With "->" and no "..." in the output, the ellipsis dims are summed.
// Operands are contracted pairwise, greedily (at each step the pair whose result is
// smallest), each pair as one batched matrix product; letters only one operand uses are
// summed first. Errors ("einsum(): ...", naming the equation and the operand shapes): no
// operands, a term count that differs from the operand count, a term whose subscript count
// does not fit its operand's rank, invalid characters, a '.' outside an ellipsis, two
// ellipses in a term, a repeated letter whose sizes differ, sizes that do not broadcast,
// output letters that no input uses or that repeat, bool operands, and ellipses needing more
// letters than the equation leaves unused (52 subscripts in all).
Tensor einsum(std::string_view equation, const TensorList& operands);

// scaled_dot_product_attention is torch 2.x's F.scaled_dot_product_attention:
//   softmax(query @ key^T * scale + mask, dim=-1) @ value
// for query [..., L, E], key [..., S, E] and value [..., S, Ev] (batch dims broadcast as
// matmul's), giving [..., L, Ev]. scale defaults to 1 / sqrt(E). attn_mask broadcasts to the
// weights [..., L, S]: a bool mask keeps the scores where it is true (the others become
// -inf), a float mask is added to the scores. is_causal keeps only j <= i (the lower
// triangle of an [L, S] mask) and excludes attn_mask. A row whose scores are all masked
// gives nan, as torch's math implementation does.
//
// dropout_p > 0 zeroes each attention weight with probability dropout_p and scales the kept
// ones by 1 / (1 - dropout_p), drawing one counter of `gen` (nullptr: the thread's default
// generator) per weight, row-major over [..., L, S], exactly as ft::dropout of the weights.
// With dropout_p == 0 nothing is drawn and the op is deterministic: it is the op
// "scaled_dot_product_attention"; with dropout_p > 0 it runs the random op
// "scaled_dot_product_attention_dropout", which behaves under vmap like every random op
// (randomness "error" throws, "same" shares one dropout mask over the batch, "different"
// draws one per example). Throws for rank < 2 operands, non-floating query / key / value,
// mismatched E or S, batch dims that do not broadcast, a mask that does not broadcast to the
// weights or is int64, a mask with is_causal, dropout_p outside [0, 1], or a non-finite scale.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt,
                                    double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    Generator* gen = nullptr);

// RegisterAttentionOps adds this family to the op table (called by RegisterAllOps).
void RegisterAttentionOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_ATTENTION_H_
