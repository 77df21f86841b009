#include "ops/attention.h"

#include <tuple>

#include "dispatch/dispatch.h"
#include "kernels/attention.h"

namespace ft {

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha) {
  return Call<&kernels::addmm>(input, mat1, mat2, beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha) {
  return Call<&kernels::baddbmm>(input, batch1, batch2, beta, alpha);
}

Tensor einsum(std::string_view equation, const TensorList& operands) {
  const Shape codes = kernels::EinsumCodes(equation);
  return Call<&kernels::einsum>(IntArrayRef(codes), operands);
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale,
                                    Generator* gen) {
  const std::optional<Scalar> s = scale ? std::optional<Scalar>(*scale) : std::nullopt;
  // dropout_p == 0 draws nothing: the deterministic op, which vmap batches in any randomness
  // mode and jit replays. (A nan dropout_p goes to the random op, which rejects it.)
  if (dropout_p == 0.0) {
    return Call<&kernels::scaled_dot_product_attention>(query, key, value, attn_mask, is_causal,
                                                        s);
  }
  return std::get<0>(Call<&kernels::scaled_dot_product_attention_dropout>(
      query, key, value, attn_mask, dropout_p, is_causal, s, gen));
}

namespace {
// Spelled out in full: `{.random = true}` alone trips GCC 12's -Wmissing-field-initializers.
constexpr OpOptions kRandom{.mutated_arg = std::nullopt, .random = true};
}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  RegisterOp<&kernels::addmm>(r, "addmm", {"input", "mat1", "mat2", "beta", "alpha"});
  RegisterOp<&kernels::baddbmm>(r, "baddbmm", {"input", "batch1", "batch2", "beta", "alpha"});
  RegisterOp<&kernels::einsum>(r, "einsum", {"equation", "operands"});
  RegisterOp<&kernels::scaled_dot_product_attention>(
      r, "scaled_dot_product_attention",
      {"query", "key", "value", "attn_mask", "is_causal", "scale"});
  RegisterOp<&kernels::scaled_dot_product_attention_dropout>(
      r, "scaled_dot_product_attention_dropout",
      {"query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "generator"},
      kRandom);
}

}  // namespace ft
