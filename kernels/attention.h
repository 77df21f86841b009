// ft/kernels/attention.h
//
// Attention and contractions: the base kernels of addmm, baddbmm, einsum and
// scaled_dot_product_attention (dense tensors only; //ops makes them public ops and
// documents the semantics: ops/attention.h).
//
// Every kernel here is a composition of other kernels (kernels::mm / bmm for the products,
// softmax, dropout, views), so dtype handling and the GEMM are the linear algebra kernels'.
// The Check* / Einsum* functions below are shared with the batching rules, which call them on
// LOGICAL (per-example) shapes so that an error under vmap reads like the op's for one example.
//
// einsum's equation travels through the op table as its character codes (an IntArrayRef: the
// table boxes no strings): EinsumCodes and EinsumString convert.
#ifndef FT_KERNELS_ATTENTION_H_
#define FT_KERNELS_ATTENTION_H_

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/types/span.h"
#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha);
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha);
Tensor einsum(IntArrayRef equation, const TensorList& operands);
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, bool is_causal,
                                    std::optional<Scalar> scale);
// The dropout_p > 0 form (a random op): returns (output, keep) where keep holds the dropout
// factor of every attention weight (0 or 1 / (1 - dropout_p), shaped [..., L, S]).
std::tuple<Tensor, Tensor> scaled_dot_product_attention_dropout(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
    std::optional<Scalar> scale, Generator* gen);

// CheckAddmm validates addmm (rank 2) / baddbmm (rank 3) operands given their shapes and
// dtypes (`op` names the op in messages) and returns the result shape and dtype.
std::tuple<Shape, DType> CheckAddmm(const char* op, int64_t rank, IntArrayRef input,
                                    DType input_dtype, IntArrayRef mat1, DType mat1_dtype,
                                    IntArrayRef mat2, DType mat2_dtype, Scalar beta, Scalar alpha);

// AttentionShapes: the shapes scaled_dot_product_attention computes with.
struct AttentionShapes {
  Shape weights;  // [batch..., L, S]: batch is the broadcast of query's and key's batch dims
  Shape output;   // [batch'..., L, Ev]: batch' also broadcasts value's batch dims
  DType dtype;    // PromoteTypes of query, key and value (float32 or float64)
};

// CheckAttention validates the arguments of scaled_dot_product_attention (mask is null when
// no attn_mask is given) and returns the shapes it computes with.
AttentionShapes CheckAttention(IntArrayRef query, DType query_dtype, IntArrayRef key,
                               DType key_dtype, IntArrayRef value, DType value_dtype,
                               const IntArrayRef* mask, DType mask_dtype, double dropout_p,
                               bool is_causal, std::optional<Scalar> scale);

// AttentionScale: `scale`, or 1 / sqrt(E) for query's last size E when it is not given.
double AttentionScale(IntArrayRef query, std::optional<Scalar> scale);

// EinsumCodes: the equation as the op's argument (one character code per element);
// EinsumString: back.
Shape EinsumCodes(std::string_view equation);
std::string EinsumString(IntArrayRef codes);

// EinsumNormalize validates `equation` against the operands' shapes and dtypes as einsum does
// (throwing its errors) and returns it in normal form: every ellipsis replaced by letters the
// equation does not use (right-aligned, so broadcast ellipsis dims share letters), the output
// explicit ("->" always present; the implicit output spelled out), no spaces. The normal form
// means the same contraction on the same operands. Throws when the ellipses need more
// letters than the 52 the equation leaves unused.
std::string EinsumNormalize(std::string_view equation, absl::Span<const Shape> shapes,
                            absl::Span<const DType> dtypes);

// EinsumParts: a normal-form equation split into its input terms and its output term.
struct EinsumParts {
  std::vector<std::string> inputs;
  std::string output;
};
EinsumParts SplitEinsum(std::string_view normalized);
std::string JoinEinsum(const EinsumParts& parts);

// UnusedEinsumLetters: the letters (a-z, A-Z order) that `normalized` does not use.
std::string UnusedEinsumLetters(std::string_view normalized);

}  // namespace ft::kernels

#endif  // FT_KERNELS_ATTENTION_H_
