// The attention and contraction kernels of kernels/attention.h, called directly: addmm and
// baddbmm (broadcast inputs, beta and alpha, beta == 0 ignoring nan, int64 and dtype
// promotion, CheckAddmm), einsum (contractions, outer products, traces, diagonals, batches,
// transposes, sums, ellipses, size-1 broadcasting, rank-0 and empty operands, 300 seeded
// random equations, and the helpers EinsumCodes / EinsumString / EinsumNormalize /
// SplitEinsum / JoinEinsum / UnusedEinsumLetters), scaled_dot_product_attention with masks,
// causality, scales and dropout (CheckAttention, AttentionScale), and every documented error.
//
// Oracles: loops in double over to_vector<double>() values: beta * input + alpha * sum of
// products for addmm / baddbmm; for einsum, a brute-force loop over every assignment of every
// letter of an explicit equation (ellipses spelled out by hand); for attention, scores,
// a max-subtracted softmax and the weighted sum written out. The dropout mask is checked
// against the counters of NOTE: [Random counters] (Generator::Uniform per weight).
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::BroadcastIndex;
using ::ft::testing::NonContiguousCopy;
using ::ft::testing::Rand;
using ::ft::testing::ShapeOf;
using ::ft::testing::TensorNear;
using ::ft::testing::TransposedCopy;

Tensor Expected(const std::vector<double>& values, IntArrayRef shape, DType dtype) {
  return to(tensor(values, shape), dtype);
}

double Tol(DType dtype) {
  if (dtype == kFloat32) return 1e-5;
  if (dtype == kFloat64) return 1e-12;
  return 0.0;
}

// ======================================================================================
// addmm, baddbmm
// ======================================================================================

// RefBaddbmm: beta * input + alpha * (m1 @ m2) over a batch ([B, n, m] @ [B, m, p]; rank-2
// operands are a batch of one), input broadcast to the result `out` shape.
std::vector<double> RefBaddbmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                               double alpha, IntArrayRef out) {
  const std::vector<double> iv = input.to_vector<double>(), av = m1.to_vector<double>(),
                            bv = m2.to_vector<double>();
  const int64_t n = m1.sizes()[m1.dim() - 2], m = m1.sizes()[m1.dim() - 1];
  const int64_t p = m2.sizes()[m2.dim() - 1];
  const int64_t batch = m1.dim() == 3 ? m1.sizes()[0] : 1;
  std::vector<double> r;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < p; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < m; ++k) acc += av[(b * n + i) * m + k] * bv[(b * m + k) * p + j];
        const int64_t o = static_cast<int64_t>(r.size());
        r.push_back((beta == 0 ? 0.0 : beta * iv[BroadcastIndex(input.sizes(), out, o)]) + alpha * acc);
      }
    }
  }
  return r;
}

void ExpectAddmm(const Tensor& input, const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha,
                 DType dtype, const std::string& what) {
  Shape out = ShapeOf(m1);
  out.back() = m2.sizes()[m2.dim() - 1];
  const std::vector<double> want =
      RefBaddbmm(input, m1, m2, beta.to<double>(), alpha.to<double>(), out);
  const Tensor got =
      m1.dim() == 2 ? addmm(input, m1, m2, beta, alpha) : baddbmm(input, m1, m2, beta, alpha);
  EXPECT_TRUE(TensorNear(got, Expected(want, out, dtype), Tol(dtype), 1e-6)) << what;
}

TEST(Addmm, MatchesLoopsForBroadcastInputsAndScalars) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const std::string name(DTypeName(dtype));
    const Tensor m1 = Rand({3, 4}, dtype, 1), m2 = Rand({4, 5}, dtype, 2);
    for (const Shape& in : {Shape{3, 5}, Shape{5}, Shape{1, 5}, Shape{3, 1}, Shape{}}) {
      const Tensor input = Rand(in, dtype, 3);
      ExpectAddmm(input, m1, m2, 1, 1, dtype, name + " input " + ShapeToString(in));
      ExpectAddmm(input, m1, m2, 0.5, -2.0, dtype, name + " beta 0.5 alpha -2");
      ExpectAddmm(input, m1, m2, 3, 0, dtype, name + " alpha 0");
    }
    // Non-contiguous operands.
    ExpectAddmm(NonContiguousCopy(Rand({3, 5}, dtype, 4)), TransposedCopy(m1),
                NonContiguousCopy(m2), 2, 3, dtype, name + " non-contiguous");
    ExpectAddmm(expand(Rand({1}, dtype, 5), {3, 5}), m1, m2, 1, 1, dtype, name + " expanded");
    // Size 0 and 1: inner size 0 (beta * input alone), no rows, 1 x 1.
    ExpectAddmm(Rand({2, 3}, dtype, 6), Rand({2, 0}, dtype, 7), Rand({0, 3}, dtype, 8), 2, 1, dtype,
                name + " inner 0");
    EXPECT_EQ(ShapeOf(addmm(Rand({5}, dtype, 1), Rand({0, 4}, dtype, 2), m2, 1, 1)), Shape({0, 5}));
    ExpectAddmm(Rand({1, 1}, dtype, 9), Rand({1, 1}, dtype, 10), Rand({1, 1}, dtype, 11), 1, 1,
                dtype, name + " 1 x 1");
  }
  // By hand: 2 * [10] + 3 * ([1, 2] @ [3, 4]^T) = 20 + 3 * 11 = 53.
  EXPECT_TENSOR_EQ(
      addmm(tensor({10.0}), tensor({1.0, 2.0}, {1, 2}), tensor({3.0, 4.0}, {2, 1}), 2, 3),
      tensor({53.0}, {1, 1}));
}

TEST(Addmm, BetaZeroIgnoresNanAndInfInInput) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const Tensor input = tensor({nan, inf, -inf, 1.0}, {2, 2});
  const Tensor m1 = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}), m2 = tensor({1.0, 0.0, 0.0, 1.0}, {2, 2});
  EXPECT_TENSOR_EQ(addmm(input, m1, m2, 0, 1), m1);
  EXPECT_TENSOR_EQ(addmm(input, m1, m2, 0.0, 2), tensor({2.0, 4.0, 6.0, 8.0}, {2, 2}));
  const Tensor b3 = tensor({nan, nan, nan, nan}, {1, 2, 2});
  EXPECT_TENSOR_EQ(baddbmm(b3, unsqueeze(m1, 0), unsqueeze(m2, 0), 0, 1), unsqueeze(m1, 0));
  // With beta != 0 the nan propagates.
  EXPECT_TRUE(std::isnan(addmm(input, m1, m2, 1, 1).to_vector<double>()[0]));
}

TEST(Addmm, Int64AndDTypePromotion) {
  const Tensor i1 = Rand({3, 4}, kInt64, 1), i2 = Rand({4, 2}, kInt64, 2);
  const Tensor ii = Rand({2}, kInt64, 3);
  ExpectAddmm(ii, i1, i2, 2, -3, kInt64, "int64");
  ExpectAddmm(ii, i1, i2, 0, 1, kInt64, "int64 beta 0");
  ExpectAddmm(Rand({3, 2}, kFloat32, 4), i1, i2, 0.5, 1.5, kFloat32, "float32 input");
  ExpectAddmm(ii, Rand({3, 4}, kFloat32, 5), Rand({4, 2}, kFloat64, 6), 1, 1, kFloat64,
              "int64 input, float32 @ float64");
  ExpectAddmm(Rand({2}, kFloat64, 7), Rand({3, 4}, kFloat32, 8), i2, 1, 1, kFloat64,
              "float64 input, float32 @ int64");
  ExpectAddmm(ii, i1, Rand({4, 2}, kFloat32, 9), 2, 2.5, kFloat32, "float alpha, float mats");
  EXPECT_FT_ERROR(addmm(ii, i1, i2, 0.5, 1),
                  "addmm: beta and alpha must be integers for int64 operands, got beta 0.5");
  EXPECT_FT_ERROR(baddbmm(ii, unsqueeze(i1, 0), unsqueeze(i2, 0), 1, 2.5),
                  "baddbmm: beta and alpha must be integers for int64 operands");
}

TEST(Addmm, Errors) {
  EXPECT_FT_ERROR(addmm(ones({2}), ones({2}), ones({2, 2}), 1, 1),
                  "addmm: expected matrices, got [2] and [2, 2]");
  EXPECT_FT_ERROR(addmm(ones({2}), ones({1, 2, 2}), ones({2, 2}), 1, 1),
                  "addmm: expected matrices");
  EXPECT_FT_ERROR(addmm(ones({2}, kBool), ones({2, 2}), ones({2, 2}), 1, 1),
                  "addmm: bool tensors are not supported, got bool, float32 and float32");
  EXPECT_FT_ERROR(addmm(ones({2}), ones({2, 2}), ones({2, 2}, kBool), 1, 1),
                  "addmm: bool tensors are not supported");
  EXPECT_FT_ERROR(addmm(ones({2}), ones({2, 3}), ones({2, 2}), 1, 1),
                  "addmm: size mismatch, got [2, 3] @ [2, 2]: dim 1 of the first (3) must equal "
                  "dim 0 of the second (2)");
  EXPECT_FT_ERROR(addmm(ones({3}), ones({2, 2}), ones({2, 2}), 1, 1),
                  "addmm: input of shape [3] does not broadcast to the product's shape [2, 2]");
  EXPECT_FT_ERROR(addmm(ones({1, 2, 2}), ones({2, 2}), ones({2, 2}), 1, 1),
                  "addmm: input of shape [1, 2, 2] does not broadcast");
}

TEST(Baddbmm, MatchesLoopsForBroadcastInputsAndScalars) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const std::string name(DTypeName(dtype));
    const Tensor b1 = Rand({2, 3, 4}, dtype, 1), b2 = Rand({2, 4, 5}, dtype, 2);
    for (const Shape& in : {Shape{2, 3, 5}, Shape{5}, Shape{3, 1}, Shape{2, 1, 5}, Shape{}}) {
      const Tensor input = Rand(in, dtype, 3);
      ExpectAddmm(input, b1, b2, 1, 1, dtype, name + " input " + ShapeToString(in));
      ExpectAddmm(input, b1, b2, -2, 3, dtype, name + " beta -2 alpha 3");
    }
    ExpectAddmm(Rand({3, 5}, dtype, 4), TransposedCopy(b1), NonContiguousCopy(b2), 1, 2, dtype,
                name + " non-contiguous");
    ExpectAddmm(Rand({3, 5}, dtype, 5), expand(Rand({1, 3, 4}, dtype, 6), {2, 3, 4}), b2, 1, 1,
                dtype, name + " expanded batch");
    ExpectAddmm(Rand({5}, dtype, 7), Rand({2, 3, 0}, dtype, 8), Rand({2, 0, 5}, dtype, 9), 1, 1,
                dtype, name + " inner 0");
    EXPECT_EQ(ShapeOf(baddbmm(Rand({5}, dtype, 1), Rand({0, 3, 4}, dtype, 2),
                              Rand({0, 4, 5}, dtype, 3), 1, 1)),
              Shape({0, 3, 5}));
  }
}

TEST(Baddbmm, Errors) {
  EXPECT_FT_ERROR(baddbmm(ones({2}), ones({2, 2}), ones({1, 2, 2}), 1, 1),
                  "baddbmm: expected 3-D batches of matrices, got [2, 2] and [1, 2, 2]");
  EXPECT_FT_ERROR(baddbmm(ones({2}), ones({2, 2, 2}), ones({3, 2, 2}), 1, 1),
                  "baddbmm: batch sizes differ, got [2, 2, 2] and [3, 2, 2] (2 vs 3)");
  EXPECT_FT_ERROR(baddbmm(ones({2}), ones({2, 2, 3}), ones({2, 2, 2}), 1, 1),
                  "baddbmm: size mismatch, got [2, 2, 3] @ [2, 2, 2]: dim 2 of the first (3) "
                  "must equal dim 1 of the second (2)");
  EXPECT_FT_ERROR(baddbmm(ones({3, 2, 2}), ones({2, 2, 2}), ones({2, 2, 2}), 1, 1),
                  "baddbmm: input of shape [3, 2, 2] does not broadcast to the product's shape "
                  "[2, 2, 2]");
  EXPECT_FT_ERROR(baddbmm(ones({2}), ones({1, 2, 2}, kBool), ones({1, 2, 2}), 1, 1),
                  "baddbmm: bool tensors are not supported");
}

TEST(CheckAddmm, ReturnsTheProductShapeAndPromotedDType) {
  {
    const auto [shape, dtype] =
        CheckAddmm("addmm", 2, Shape{5}, kInt64, Shape{3, 4}, kFloat32, Shape{4, 5}, kInt64, 1, 1);
    EXPECT_EQ(shape, Shape({3, 5}));
    EXPECT_EQ(dtype, kFloat32);
  }
  {
    const auto [shape, dtype] = CheckAddmm("baddbmm", 3, Shape{}, kFloat64, Shape{2, 3, 0},
                                           kFloat32, Shape{2, 0, 7}, kFloat32, 0.5, 2);
    EXPECT_EQ(shape, Shape({2, 3, 7}));
    EXPECT_EQ(dtype, kFloat64);
  }
  {
    const auto [shape, dtype] = CheckAddmm("addmm", 2, Shape{1, 1}, kInt64, Shape{1, 1}, kInt64,
                                           Shape{1, 1}, kInt64, 2, true);
    EXPECT_EQ(shape, Shape({1, 1}));
    EXPECT_EQ(dtype, kInt64);
  }
  // The op name given is the one in the messages (a batching rule names its own op).
  EXPECT_FT_ERROR(CheckAddmm("my_addmm", 2, Shape{3}, kFloat32, Shape{2, 2}, kFloat32, Shape{2, 2},
                             kFloat32, 1, 1),
                  "my_addmm: input of shape [3] does not broadcast");
  EXPECT_FT_ERROR(CheckAddmm("my_addmm", 3, Shape{}, kFloat32, Shape{2, 2}, kFloat32, Shape{2, 2},
                             kFloat32, 1, 1),
                  "my_addmm: expected 3-D batches of matrices");
  EXPECT_FT_ERROR(
      CheckAddmm("my_addmm", 2, Shape{}, kInt64, Shape{2, 2}, kInt64, Shape{2, 2}, kInt64, 1, 0.5),
      "my_addmm: beta and alpha must be integers for int64 operands, got beta 1 and "
      "alpha 0.5");
}

// ======================================================================================
// einsum
// ======================================================================================

// RefEinsum: what an explicit equation (letters only, "->" present, no spaces or ellipses)
// denotes, by a loop over every assignment of every letter: the sum over the letters missing
// from the output of the product of the operands' elements. A letter's size is the largest of
// its operands' sizes; an operand whose dim has size 1 reads index 0 there (broadcast).
Tensor RefEinsum(const std::string& equation, const std::vector<Tensor>& operands, DType dtype) {
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow), output = equation.substr(arrow + 2);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back().push_back(c);
    }
  }
  EXPECT_EQ(terms.size(), operands.size()) << equation;
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    EXPECT_EQ(static_cast<int64_t>(terms[i].size()), operands[i].dim()) << equation;
    for (size_t d = 0; d < terms[i].size(); ++d) {
      const int64_t s = operands[i].sizes()[d];
      auto [it, inserted] = size.emplace(terms[i][d], s);
      if (!inserted && it->second == 1) it->second = s;
    }
  }
  std::string letters;
  for (const auto& [c, s] : size) letters.push_back(c);
  Shape out_shape;
  for (char c : output) out_shape.push_back(size.at(c));
  std::vector<double> out(static_cast<size_t>(Numel(out_shape)), 0.0);
  std::vector<std::vector<double>> values;
  for (const Tensor& t : operands) values.push_back(t.to_vector<double>());
  int64_t total = 1;
  for (char c : letters) total *= size.at(c);
  std::map<char, int64_t> at;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (int64_t l = static_cast<int64_t>(letters.size()) - 1; l >= 0; --l) {
      at[letters[l]] = rest % size.at(letters[l]);
      rest /= size.at(letters[l]);
    }
    double product = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d < terms[i].size(); ++d) {
        const int64_t s = operands[i].sizes()[d];
        offset = offset * s + (s == 1 ? 0 : at[terms[i][d]]);
      }
      product *= values[i][offset];
    }
    int64_t o = 0;
    for (size_t d = 0; d < output.size(); ++d) o = o * out_shape[d] + at[output[d]];
    out[o] += product;
  }
  return Expected(out, out_shape, dtype);
}

Tensor Einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  return einsum(EinsumCodes(equation), operands);
}

struct EinsumCase {
  std::string equation;     // as given to einsum
  std::string explicit_eq;  // the same contraction, spelled out for RefEinsum
  std::vector<Shape> shapes;
};

const std::vector<EinsumCase>& EinsumCases() {
  static const auto* cases = new std::vector<EinsumCase>{
      {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},                     // matrix product
      {"ij,jk", "ij,jk->ik", {{3, 4}, {4, 5}}},                         // implicit output
      {"i,j->ij", "i,j->ij", {{3}, {4}}},                               // outer product
      {"i,i->", "i,i->", {{5}, {5}}},                                   // dot product
      {"ii->", "ii->", {{4, 4}}},                                       // trace
      {"ii", "ii->", {{4, 4}}},                                         // trace, implicit
      {"ii->i", "ii->i", {{4, 4}}},                                     // diagonal
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},         // batched matrix product
      {"ij->ji", "ij->ji", {{3, 4}}},                                   // transpose
      {"ji", "ji->ij", {{3, 4}}},                                       // implicit: alphabetical
      {"ijk->kji", "ijk->kji", {{2, 3, 4}}},                            // permutation
      {"ij->", "ij->", {{3, 4}}},                                       // sum of everything
      {"ij->j", "ij->j", {{3, 4}}},                                     // column sums
      {"ij,ij->ij", "ij,ij->ij", {{3, 4}, {3, 4}}},                     // elementwise product
      {"ij,ij->", "ij,ij->", {{3, 4}, {3, 4}}},                         // Frobenius inner product
      {"i,i,i->", "i,i,i->", {{4}, {4}, {4}}},                          // three operands
      {"ij,jk,kl->il", "ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},       // a chain
      {"bn,anm,bm->ba", "bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},  // bilinear
      {"iij->j", "iij->j", {{3, 3, 4}}},                                // diagonal then sum
      {"iji->j", "iji->j", {{3, 4, 3}}},                                // non-adjacent repeat
      {"ii,i->i", "ii,i->i", {{3, 3}, {3}}},
      {"iij->ji", "iij->ji", {{3, 3, 4}}},  // diagonal letter first
      {"ab,cd->abcd", "ab,cd->abcd", {{2, 3}, {2, 2}}},
      {"ij,kl->", "ij,kl->", {{2, 3}, {4, 2}}},  // independent sums
      {"ij,kl->lj", "ij,kl->lj", {{2, 3}, {4, 2}}},
      {"ij,jk->", "ij,jk->", {{2, 3}, {3, 4}}},
      {"ij,jk,ki->", "ij,jk,ki->", {{2, 3}, {3, 4}, {4, 2}}},  // trace of a product
      {"i,ij,j->", "i,ij,j->", {{3}, {3, 4}, {4}}},            // quadratic form
      {"bij,bjk,bkl->bil", "bij,bjk,bkl->bil", {{2, 2, 3}, {2, 3, 4}, {2, 4, 2}}},
      {"ab,ab,ab->a", "ab,ab,ab->a", {{3, 2}, {3, 2}, {3, 2}}},
      {"i,,i->", "i,,i->", {{3}, {}, {3}}},
      {"Ab,bC", "Ab,bC->AC", {{2, 3}, {3, 4}}},               // upper case letters
      {"bA", "bA->Ab", {{2, 3}}},                             // upper case first
      {" i j , j k -> i k ", "ij,jk->ik", {{3, 4}, {4, 5}}},  // spaces
      {"ij,ij->ij", "ij,ij->ij", {{3, 4}, {1, 4}}},           // size-1 letters broadcast
      {"ij,jk->ik", "ij,jk->ik", {{3, 1}, {4, 5}}},
      {"ii,i->i", "ii,i->i", {{1, 1}, {3}}},
      {",ij->ij", ",ij->ij", {{}, {2, 3}}},  // rank-0 operands
      {"i,->i", "i,->i", {{3}, {}}},
      {",->", ",->", {{}, {}}},
      {"...ij,...jk->...ik", "aij,jk->aik", {{2, 3, 4}, {4, 5}}},    // ellipses
      {"...ij,...jk", "abij,bjk->abik", {{2, 1, 3, 4}, {5, 4, 6}}},  // broadcast ellipses
      {"...ii->...i", "aii->ai", {{2, 3, 3}}},
      {"...ij", "aij->aij", {{2, 3, 4}}},
      {"i...->i", "iab->i", {{3, 2, 4}}},  // ellipsis dims summed
      {"i...,i...->...", "iab,ib->ab", {{3, 2, 4}, {3, 4}}},
      {"...,...->...", "ab,b->ab", {{2, 3}, {3}}},
      {"ij,jk->ik", "ij,jk->ik", {{3, 0}, {0, 5}}},  // empty sum: zeros
      {"ij,jk->ik", "ij,jk->ik", {{0, 4}, {4, 5}}},  // empty result
      {"ii->", "ii->", {{0, 0}}},
  };
  return *cases;
}

TEST(Einsum, EquationsMatchBruteForceLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    uint32_t seed = 1;
    for (const EinsumCase& c : EinsumCases()) {
      std::vector<Tensor> ops;
      for (const Shape& s : c.shapes) ops.push_back(Rand(s, dtype, seed++));
      const Tensor got = Einsum(c.equation, ops);
      EXPECT_TRUE(got.is_contiguous()) << c.equation;
      EXPECT_TRUE(TensorNear(got, RefEinsum(c.explicit_eq, ops, dtype), Tol(dtype), 1e-6))
          << DTypeName(dtype) << " \"" << c.equation << "\"";
    }
  }
}

// Random explicit equations over the letters a-e: 1 to 3 operands of rank 0 to 3, letters
// repeated within a term (diagonals), sizes of 1 broadcast against the letter's size, any
// subset of the letters as the output, in any order.
TEST(Einsum, RandomEquationsMatchBruteForceLoops) {
  std::mt19937 rng(7);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int c = 0; c < 300; ++c) {
    int64_t size[5];
    for (int64_t& s : size) s = pick(4);  // 0 to 3
    const int count = 1 + pick(3);
    std::string lhs, used;
    std::vector<Tensor> ops;
    for (int i = 0; i < count; ++i) {
      std::string term;
      Shape shape;
      const int rank = pick(4);
      for (int d = 0; d < rank; ++d) {
        const char l = static_cast<char>('a' + pick(5));
        // A repeated letter needs the same size in the term: no size-1 broadcast there.
        const bool repeated = term.find(l) != std::string::npos;
        term.push_back(l);
        shape.push_back(!repeated && pick(4) == 0 ? 1 : size[l - 'a']);
        if (used.find(l) == std::string::npos) used.push_back(l);
      }
      // A repeated letter: all its dims in this term take the letter's size.
      for (size_t d = 0; d < term.size(); ++d) {
        if (std::count(term.begin(), term.end(), term[d]) > 1) shape[d] = size[term[d] - 'a'];
      }
      lhs += (i ? "," : "") + term;
      ops.push_back(Rand(shape, pick(2) ? kFloat64 : kInt64, 100 + c * 3 + i));
    }
    std::shuffle(used.begin(), used.end(), rng);
    const std::string out = used.substr(0, pick(static_cast<int>(used.size()) + 1));
    const std::string eq = lhs + "->" + out;
    DType dtype = ops[0].dtype();
    for (const Tensor& t : ops) dtype = PromoteTypes(dtype, t.dtype());
    Tensor got;
    try {
      got = Einsum(eq, ops);
    } catch (const Error& e) {
      ADD_FAILURE() << eq << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(TensorNear(got, RefEinsum(eq, ops, dtype), 1e-12, 1e-12)) << eq;
  }
}

TEST(Einsum, NonContiguousOperandsMatchBruteForceLoops) {
  uint32_t seed = 1;
  for (const EinsumCase& c : EinsumCases()) {
    std::vector<Tensor> strided, transposed;
    for (const Shape& s : c.shapes) {
      const Tensor t = Rand(s, kFloat64, seed++);
      strided.push_back(NonContiguousCopy(t));
      transposed.push_back(t.dim() >= 2 ? TransposedCopy(t) : t);
    }
    const Tensor want = RefEinsum(c.explicit_eq, strided, kFloat64);
    EXPECT_TENSOR_NEAR(Einsum(c.equation, strided), want, 1e-12) << "strided " << c.equation;
    EXPECT_TENSOR_NEAR(Einsum(c.equation, transposed), want, 1e-12) << "transposed " << c.equation;
  }
  // Expanded operands (stride 0) and a sliced one.
  const Tensor e = expand(Rand({1, 4}, kFloat32, 1), {3, 4});
  const Tensor s = slice(Rand({4, 10}, kFloat32, 2), 1, 1, std::nullopt, 2);  // [4, 5]
  EXPECT_TENSOR_NEAR(Einsum("ij,jk->ik", {e, s}), RefEinsum("ij,jk->ik", {e, s}, kFloat32), 1e-5);
  EXPECT_TENSOR_NEAR(Einsum("ij->j", {e}), RefEinsum("ij->j", {e}, kFloat32), 1e-5);
}

TEST(Einsum, ClosedFormsAndResultsNeverAlias) {
  // trace([[1, 2], [3, 4]]) = 5; the diagonal [1, 4]; a transposed copy.
  const Tensor m = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  EXPECT_TENSOR_EQ(Einsum("ii", {m}), scalar_tensor(5.0, kFloat64));
  EXPECT_TENSOR_EQ(Einsum("ii->i", {m}), tensor({1.0, 4.0}));
  EXPECT_TENSOR_EQ(Einsum("ij->ji", {m}), tensor({1.0, 3.0, 2.0, 4.0}, {2, 2}));
  // The identity equation returns a new tensor (writing it leaves the operand alone).
  const Tensor copy = Einsum("ij->ij", {m});
  EXPECT_TENSOR_EQ(copy, m);
  EXPECT_NE(copy.data<double>(), m.data<double>());
  copy.data<double>()[0] = 42;
  EXPECT_EQ(m.to_vector<double>()[0], 1.0);
}

TEST(Einsum, PromotesDTypes) {
  const Tensor i = Rand({3, 4}, kInt64, 1), f = Rand({4, 2}, kFloat32, 2);
  const Tensor d = Rand({2}, kFloat64, 3);
  EXPECT_TENSOR_NEAR(Einsum("ij,jk->ik", {i, f}), RefEinsum("ij,jk->ik", {i, f}, kFloat32), 1e-5);
  EXPECT_TENSOR_NEAR(Einsum("ij,jk,k->i", {i, f, d}), RefEinsum("ij,jk,k->i", {i, f, d}, kFloat64),
                     1e-12);
  EXPECT_EQ(Einsum("ij->j", {i}).dtype(), kInt64);
}

TEST(Einsum, Errors) {
  const Tensor m = ones({2, 3});
  EXPECT_FT_ERROR(Einsum("ij", {}),
                  "einsum(): must provide at least one operand (equation \"ij\", operands none)");
  EXPECT_FT_ERROR(Einsum("ij", {ones({2, 3}, kBool)}),
                  "einsum(): bool tensors are not supported, operand 0 is bool");
  EXPECT_FT_ERROR(Einsum("i.j", {m}),
                  "einsum(): found '.' at index 1 that is not part of an "
                  "ellipsis (...)");
  EXPECT_FT_ERROR(Einsum("...i...", {m}),
                  "einsum(): found more than one ellipsis (...) for operand 0");
  EXPECT_FT_ERROR(Einsum("ij->...i...", {m}),
                  "einsum(): found more than one ellipsis (...) for the output");
  EXPECT_FT_ERROR(Einsum("i1", {m}),
                  "einsum(): invalid subscript '1' at index 1: subscripts must be letters");
  EXPECT_FT_ERROR(Einsum("ij-ij", {m}), "einsum(): invalid subscript '-' at index 2");
  EXPECT_FT_ERROR(Einsum("ij,jk", {m}),
                  "einsum(): the equation has 2 input term(s) but 1 operand(s) were given "
                  "(equation \"ij,jk\", operands [2, 3])");
  EXPECT_FT_ERROR(Einsum("ijk", {m}),
                  "einsum(): operand 0 has 2 dimension(s) but its term \"ijk\" has 3 "
                  "subscript(s) and no ellipsis");
  EXPECT_FT_ERROR(Einsum("ijk...", {m}),
                  "einsum(): operand 0 has 2 dimension(s), fewer than the 3 subscript(s)");
  EXPECT_FT_ERROR(Einsum("ii", {m}),
                  "einsum(): subscript i is repeated for operand 0 but the sizes don't match, "
                  "2 != 3");
  EXPECT_FT_ERROR(Einsum("ij,jk", {m, ones({4, 2})}),
                  "einsum(): subscript j has size 4 for operand 1 which does not broadcast with "
                  "previously seen size 3");
  EXPECT_FT_ERROR(Einsum("...i,...i", {ones({2, 3}), ones({4, 3})}),
                  "einsum(): the dims the ellipsis covers do not broadcast: operand 1 has size 4 "
                  "at dim 0 where another has 2");
  EXPECT_FT_ERROR(Einsum("ij->k", {m}),
                  "einsum(): output subscript k does not appear in the equation for any input "
                  "operand");
  EXPECT_FT_ERROR(Einsum("ij->ii", {m}),
                  "einsum(): output subscript i appears more than once in the output");
  EXPECT_FT_ERROR(einsum(Shape{'i', 0}, {ones({2})}),
                  "einsum(): the equation has a non-ASCII code 0");
}

TEST(EinsumCodes, RoundTripAndRejectNonAscii) {
  const Shape codes = EinsumCodes("ab,...->Z");
  EXPECT_EQ(codes, Shape({'a', 'b', ',', '.', '.', '.', '-', '>', 'Z'}));
  EXPECT_EQ(EinsumString(codes), "ab,...->Z");
  EXPECT_EQ(EinsumCodes(""), Shape());
  EXPECT_EQ(EinsumString(Shape{}), "");
  EXPECT_FT_ERROR(EinsumString(Shape{'a', 128}), "einsum(): the equation has a non-ASCII code 128");
  EXPECT_FT_ERROR(EinsumString(Shape{-1}), "einsum(): the equation has a non-ASCII code -1");
}

TEST(EinsumNormalize, SpellsOutEllipsesAndImplicitOutputs) {
  const auto normalize = [](const std::string& eq, std::vector<Shape> shapes) {
    const std::vector<DType> dtypes(shapes.size(), kFloat32);
    return EinsumNormalize(eq, shapes, dtypes);
  };
  EXPECT_EQ(normalize("ij,jk", {{2, 3}, {3, 4}}), "ij,jk->ik");
  EXPECT_EQ(normalize("ij,jk->ik", {{2, 3}, {3, 4}}), "ij,jk->ik");
  EXPECT_EQ(normalize(" i j , j k ", {{2, 3}, {3, 4}}), "ij,jk->ik");
  EXPECT_EQ(normalize("ii", {{3, 3}}), "ii->");
  EXPECT_EQ(normalize("ji", {{3, 3}}), "ji->ij");
  EXPECT_EQ(normalize("bA,Bc", {{1, 2}, {3, 4}}), "bA,Bc->ABbc");  // upper case first
  // Ellipses: the first unused letters, right-aligned over operands of different ranks.
  EXPECT_EQ(normalize("...ij,...jk", {{2, 5, 3, 4}, {5, 4, 6}}), "abij,bjk->abik");
  EXPECT_EQ(normalize("...ij,jk", {{2, 5, 3, 4}, {4, 6}}), "abij,jk->abik");
  EXPECT_EQ(normalize("a...,...", {{2, 3, 4}, {4}}), "abc,c->bca");  // ellipsis dims first
  EXPECT_EQ(normalize("...ii->...i", {{7, 3, 3}}), "aii->ai");
  EXPECT_EQ(normalize("i...->i", {{3, 4}}), "ia->i");
  EXPECT_EQ(normalize("...", {{}}), "->");
  EXPECT_EQ(normalize("...->...", {{2}}), "a->a");
  // Ellipses needing more letters than the equation leaves unused (50 used, 3 needed).
  const std::string used = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX";
  const std::string eq = used + "...";
  EXPECT_EQ(normalize(used + "...", {Shape(52, 1)}),
            used + "YZ->" + "YZ" + "ABCDEFGHIJKLMNOPQRSTUVWXabcdefghijklmnopqrstuvwxyz");
  EXPECT_FT_ERROR(normalize(eq, {Shape(53, 1)}),
                  "einsum(): the ellipsis covers 3 dimension(s) but only 2 letters are left "
                  "unused by the equation (52 subscripts at most)");
  EXPECT_FT_ERROR(EinsumNormalize("ij", {Shape{2, 3}}, {kBool}),
                  "einsum(): bool tensors are not supported, operand 0 is bool");
}

TEST(EinsumParts, SplitJoinAndUnusedLetters) {
  const EinsumParts p = SplitEinsum("ij,jk,k->ik");
  EXPECT_EQ(p.inputs, std::vector<std::string>({"ij", "jk", "k"}));
  EXPECT_EQ(p.output, "ik");
  EXPECT_EQ(JoinEinsum(p), "ij,jk,k->ik");
  const EinsumParts scalar = SplitEinsum(",->");
  EXPECT_EQ(scalar.inputs, std::vector<std::string>({"", ""}));
  EXPECT_EQ(scalar.output, "");
  EXPECT_EQ(JoinEinsum(scalar), ",->");
  const EinsumParts one = SplitEinsum("ii->");
  EXPECT_EQ(one.inputs, std::vector<std::string>({"ii"}));
  EXPECT_EQ(JoinEinsum({{"ab", "bc"}, "ac"}), "ab,bc->ac");
  EXPECT_EQ(UnusedEinsumLetters("ij,jk->ik"), "abcdefghlmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  EXPECT_EQ(UnusedEinsumLetters("->"), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  EXPECT_EQ(UnusedEinsumLetters("abcdefghijklmnopqrstuvwxyz,ABCDEFGHIJKLMNOPQRSTUVWXY->Z"), "");
}

// ======================================================================================
// scaled_dot_product_attention
// ======================================================================================

// RefAttention: softmax(q k^T * scale + mask) v in double, with torch's broadcasting of the
// batch dims (query and key to the weights' batch, then value), a bool mask keeping the true
// scores (the others -inf), a float mask added, is_causal keeping j <= i; `keep` (when given,
// shaped like the weights) multiplies the weights after the softmax (dropout).
Tensor RefAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                    const std::optional<Tensor>& mask, bool is_causal, double scale, DType dtype,
                    const std::optional<Tensor>& keep = std::nullopt) {
  const int64_t rq = q.dim(), rk = k.dim(), rv = v.dim();
  const int64_t l = q.sizes()[rq - 2], e = q.sizes()[rq - 1], s = k.sizes()[rk - 2];
  const int64_t ev = v.sizes()[rv - 1];
  const IntArrayRef qb = q.sizes().subspan(0, rq - 2), kb = k.sizes().subspan(0, rk - 2),
                    vb = v.sizes().subspan(0, rv - 2);
  const auto broadcast = [](IntArrayRef a, IntArrayRef b) {
    const size_t n = std::max(a.size(), b.size());
    Shape r(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
      const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
      r[i] = da == 1 ? db : da;
    }
    return r;
  };
  const Shape wb = broadcast(qb, kb);
  const Shape ob = broadcast(wb, vb);
  Shape wshape = wb;
  wshape.push_back(l);
  wshape.push_back(s);
  const std::vector<double> qv = q.to_vector<double>(), kv = k.to_vector<double>(),
                            vv = v.to_vector<double>();
  std::vector<double> mv, keepv;
  if (mask) mv = mask->to_vector<double>();
  if (keep) keepv = keep->to_vector<double>();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> out;
  for (int64_t b = 0; b < Numel(ob); ++b) {
    const int64_t bw = BroadcastIndex(wb, ob, b);  // the weights' batch index
    const int64_t bq = BroadcastIndex(qb, ob, b), bk = BroadcastIndex(kb, ob, b), bv = BroadcastIndex(vb, ob, b);
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> w(static_cast<size_t>(s));
      double max = -inf;
      for (int64_t j = 0; j < s; ++j) {
        double score = 0;
        for (int64_t c = 0; c < e; ++c) {
          score += qv[(bq * l + i) * e + c] * kv[(bk * s + j) * e + c];
        }
        score *= scale;
        const int64_t wi = (bw * l + i) * s + j;  // offset in the weights [wb..., L, S]
        if (is_causal && j > i) score = -inf;
        if (mask) {
          const double m = mv[BroadcastIndex(mask->sizes(), wshape, wi)];
          if (mask->dtype() == kBool) {
            if (m == 0) score = -inf;
          } else {
            score += m;
          }
        }
        w[j] = score;
        max = std::max(max, score);
      }
      double total = 0;
      for (double& x : w) total += (x = std::exp(x - max));
      for (int64_t j = 0; j < s; ++j) {
        w[j] /= total;  // all -inf: 0 / 0, nan as torch's math path
        if (keep) w[j] *= keepv[(bw * l + i) * s + j];
      }
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += w[j] * vv[(bv * s + j) * ev + c];
        out.push_back(acc);
      }
    }
  }
  Shape oshape = ob;
  oshape.push_back(l);
  oshape.push_back(ev);
  return Expected(out, oshape, dtype);
}

TEST(ScaledDotProductAttention, MatchesLoopsWithMasksScalesAndCausality) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const std::string name(DTypeName(dtype));
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    const Tensor q = Rand({2, 3, 4}, dtype, 1), k = Rand({2, 5, 4}, dtype, 2);
    const Tensor v = Rand({2, 5, 6}, dtype, 3);
    const double scale = 1 / std::sqrt(4.0);
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, false, std::nullopt),
                       RefAttention(q, k, v, std::nullopt, false, scale, dtype), tol)
        << name << " default scale";
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, false, 0.3),
                       RefAttention(q, k, v, std::nullopt, false, 0.3, dtype), tol)
        << name << " scale 0.3";
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, false, 2),
                       RefAttention(q, k, v, std::nullopt, false, 2.0, dtype), tol)
        << name << " integer scale";
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, true, std::nullopt),
                       RefAttention(q, k, v, std::nullopt, true, scale, dtype), tol)
        << name << " causal";
    // Causal with more queries than keys (rows past S keep every key).
    const Tensor q6 = Rand({2, 6, 4}, dtype, 4);
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q6, k, v, std::nullopt, true, std::nullopt),
                       RefAttention(q6, k, v, std::nullopt, true, scale, dtype), tol)
        << name << " causal L > S";
    // A bool mask [L, S] with at least one key per row, broadcast over the batch; a bool
    // mask [S]; a float mask [2, 1, S].
    const Tensor bmask = tensor({true, false, true, false, true,    //
                                 false, false, false, true, false,  //
                                 true, true, true, true, true},
                                {3, 5});
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, bmask, false, std::nullopt),
                       RefAttention(q, k, v, bmask, false, scale, dtype), tol)
        << name << " bool mask";
    const Tensor bvec = tensor({false, true, true, false, true}, {5});
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, bvec, false, std::nullopt),
                       RefAttention(q, k, v, bvec, false, scale, dtype), tol)
        << name << " bool mask [S]";
    const Tensor fmask = Rand({2, 1, 5}, dtype, 5);
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, fmask, false, 0.7),
                       RefAttention(q, k, v, fmask, false, 0.7, dtype), tol)
        << name << " float mask";
    const Tensor fmask64 = Rand({3, 5}, kFloat64, 6);
    EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, fmask64, false, std::nullopt),
                       RefAttention(q, k, v, fmask64, false, scale, dtype), tol)
        << name << " float64 mask";
    // Non-contiguous operands and mask.
    const Tensor tq = TransposedCopy(q), sk = NonContiguousCopy(k), tv = TransposedCopy(v);
    EXPECT_TENSOR_NEAR(
        scaled_dot_product_attention(tq, sk, tv, NonContiguousCopy(fmask), false, std::nullopt),
        RefAttention(q, k, v, fmask, false, scale, dtype), tol)
        << name << " non-contiguous";
  }
}

TEST(ScaledDotProductAttention, BroadcastBatchesPromotionAndSizes) {
  // Batch dims broadcast: query [2, 1, L, E], key [3, S, E], value [S, Ev] -> [2, 3, L, Ev].
  const Tensor q = Rand({2, 1, 3, 4}, kFloat64, 1), k = Rand({3, 5, 4}, kFloat64, 2);
  const Tensor v = Rand({5, 2}, kFloat64, 3);
  const Tensor got = scaled_dot_product_attention(q, k, v, std::nullopt, false, std::nullopt);
  EXPECT_EQ(ShapeOf(got), Shape({2, 3, 3, 2}));
  EXPECT_TENSOR_NEAR(got, RefAttention(q, k, v, std::nullopt, false, 0.5, kFloat64), 1e-12);
  // value's batch wider than the weights': [4, 1, S, Ev] with query and key [L, E], [S, E].
  const Tensor q2 = Rand({3, 4}, kFloat64, 4), k2 = Rand({5, 4}, kFloat64, 5);
  const Tensor v2 = Rand({4, 1, 5, 2}, kFloat64, 6);
  const Tensor bmask = expand(tensor({true, true, false, true, true}, {1, 5}), {3, 5});
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q2, k2, v2, bmask, false, std::nullopt),
                     RefAttention(q2, k2, v2, bmask, false, 0.5, kFloat64), 1e-12);
  // Promotion: float32 query with a float64 key gives float64.
  const Tensor q32 = Rand({3, 4}, kFloat32, 7);
  const Tensor mixed = scaled_dot_product_attention(
      q32, k2, to(Rand({5, 2}, kFloat32, 8), kFloat32), std::nullopt, false, std::nullopt);
  EXPECT_EQ(mixed.dtype(), kFloat64);
  EXPECT_TENSOR_NEAR(
      mixed, RefAttention(q32, k2, Rand({5, 2}, kFloat32, 8), std::nullopt, false, 0.5, kFloat64),
      1e-12);
  // Sizes 1: one query, one key (weight 1: the output is the value row).
  const Tensor v1 = Rand({1, 3}, kFloat32, 9);
  EXPECT_TENSOR_NEAR(
      scaled_dot_product_attention(Rand({1, 2}, kFloat32, 10), Rand({1, 2}, kFloat32, 11), v1,
                                   std::nullopt, false, std::nullopt),
      v1, 1e-7);
  // Size 0: no queries, an empty batch, Ev 0.
  EXPECT_EQ(ShapeOf(scaled_dot_product_attention(zeros({0, 4}), zeros({5, 4}), zeros({5, 2}),
                                                 std::nullopt, false, std::nullopt)),
            Shape({0, 2}));
  EXPECT_EQ(ShapeOf(scaled_dot_product_attention(zeros({0, 3, 4}), zeros({5, 4}), zeros({5, 2}),
                                                 std::nullopt, false, std::nullopt)),
            Shape({0, 3, 2}));
  // No keys: an empty softmax, then an empty sum: zeros, as torch's math path.
  EXPECT_TENSOR_EQ(scaled_dot_product_attention(Rand({3, 4}, kFloat32, 14), zeros({0, 4}),
                                                zeros({0, 2}), std::nullopt, false, std::nullopt),
                   zeros({3, 2}));
  EXPECT_EQ(ShapeOf(scaled_dot_product_attention(zeros({3, 4}), zeros({5, 4}), zeros({5, 0}),
                                                 std::nullopt, false, std::nullopt)),
            Shape({3, 0}));
  // scale 0: uniform weights, the output is the mean of the values.
  const Tensor vals = tensor({1.0, 2.0, 3.0, 6.0}, {2, 2});
  EXPECT_TENSOR_NEAR(
      scaled_dot_product_attention(Rand({1, 3}, kFloat64, 12), Rand({2, 3}, kFloat64, 13), vals,
                                   std::nullopt, false, 0),
      tensor({2.0, 4.0}, {1, 2}), 1e-15);
}

TEST(ScaledDotProductAttention, FullyMaskedRowIsNan) {
  const Tensor q = Rand({2, 3}, kFloat32, 1), k = Rand({2, 3}, kFloat32, 2);
  const Tensor v = Rand({2, 4}, kFloat32, 3);
  const Tensor mask = tensor({true, true, false, false}, {2, 2});
  const Tensor got = scaled_dot_product_attention(q, k, v, mask, false, std::nullopt);
  EXPECT_TENSOR_NEAR(got, RefAttention(q, k, v, mask, false, 1 / std::sqrt(3.0), kFloat32), 1e-6);
  const std::vector<double> g = got.to_vector<double>();
  for (int j = 4; j < 8; ++j) EXPECT_TRUE(std::isnan(g[j])) << j;
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor fmask =
      tensor({0.0f, 0.0f, -static_cast<float>(inf), -static_cast<float>(inf)}, {2, 2});
  EXPECT_TRUE(std::isnan(
      scaled_dot_product_attention(q, k, v, fmask, false, std::nullopt).to_vector<double>()[4]));
}

TEST(ScaledDotProductAttention, DropoutKeepsWeightsByTheirCounters) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor q = Rand({2, 3, 4}, dtype, 1), k = Rand({1, 5, 4}, dtype, 2);
    const Tensor v = Rand({2, 5, 3}, dtype, 3);
    const double p = 0.4;
    Generator gen(1234);
    gen.set_offset(7);
    const auto [out, keep] =
        scaled_dot_product_attention_dropout(q, k, v, std::nullopt, p, false, std::nullopt, &gen);
    // One counter per weight [2, 3, 5], row-major (NOTE: [Random counters]): kept, with the
    // factor 1 / (1 - p), when its uniform draw is below 1 - p (in the dtype), as dropout's.
    ASSERT_EQ(ShapeOf(keep), Shape({2, 3, 5}));
    ASSERT_EQ(keep.dtype(), dtype);
    EXPECT_EQ(gen.offset(), 7u + 30u);
    const std::vector<double> kv = keep.to_vector<double>();
    const double threshold =
        dtype == kFloat32 ? static_cast<double>(static_cast<float>(1 - p)) : 1 - p;
    const double factor =
        dtype == kFloat32 ? static_cast<double>(static_cast<float>(1 / (1 - p))) : 1 / (1 - p);
    int kept = 0;
    for (size_t i = 0; i < kv.size(); ++i) {
      const bool want = Generator::Uniform(1234, 7 + i) < threshold;
      EXPECT_EQ(kv[i], want ? factor : 0.0) << DTypeName(dtype) << " weight " << i;
      kept += want;
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, 30);
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    EXPECT_TENSOR_NEAR(out, RefAttention(q, k, v, std::nullopt, false, 0.5, dtype, keep), tol);
    // With a causal mask and a scale, too.
    const auto [out2, keep2] =
        scaled_dot_product_attention_dropout(q, k, v, std::nullopt, p, true, 1.5, &gen);
    EXPECT_TENSOR_NEAR(out2, RefAttention(q, k, v, std::nullopt, true, 1.5, dtype, keep2), tol);
    // p = 0 draws nothing and keeps everything; p = 1 drops everything.
    const uint64_t offset = gen.offset();
    const auto [out0, keep0] =
        scaled_dot_product_attention_dropout(q, k, v, std::nullopt, 0.0, false, std::nullopt, &gen);
    EXPECT_EQ(gen.offset(), offset);
    EXPECT_TENSOR_EQ(keep0, ones({2, 3, 5}, dtype));
    EXPECT_TENSOR_NEAR(out0, RefAttention(q, k, v, std::nullopt, false, 0.5, dtype), tol);
    const auto [out1, keep1] =
        scaled_dot_product_attention_dropout(q, k, v, std::nullopt, 1.0, false, std::nullopt, &gen);
    EXPECT_TENSOR_EQ(keep1, zeros({2, 3, 5}, dtype));
    EXPECT_TENSOR_EQ(out1, zeros({2, 3, 3}, dtype));
  }
  EXPECT_FT_ERROR(
      scaled_dot_product_attention_dropout(ones({2, 2}), ones({2, 2}), ones({2, 2}), std::nullopt,
                                           1.5, false, std::nullopt, nullptr),
      "scaled_dot_product_attention: dropout_p must be in [0, 1], got 1.5");
}

TEST(ScaledDotProductAttention, Errors) {
  const Tensor q = ones({3, 4}), k = ones({5, 4}), v = ones({5, 2});
  const auto sdpa = [](const Tensor& a, const Tensor& b, const Tensor& c,
                       const std::optional<Tensor>& mask = std::nullopt, bool causal = false,
                       std::optional<Scalar> scale = std::nullopt) {
    return scaled_dot_product_attention(a, b, c, mask, causal, scale);
  };
  EXPECT_FT_ERROR(sdpa(ones({4}), k, v),
                  "scaled_dot_product_attention: query, key and value need at least 2 dimensions");
  EXPECT_FT_ERROR(sdpa(q, k, ones({5})),
                  "scaled_dot_product_attention: query, key and value "
                  "need at least 2 dimensions");
  EXPECT_FT_ERROR(sdpa(ones({3, 4}, kInt64), k, v),
                  "scaled_dot_product_attention: query, key and value must be float32 or float64, "
                  "got int64, float32 and float32");
  EXPECT_FT_ERROR(sdpa(q, k, ones({5, 2}, kBool)),
                  "scaled_dot_product_attention: query, key and value must be float32 or float64");
  EXPECT_FT_ERROR(sdpa(q, ones({5, 3}), v),
                  "scaled_dot_product_attention: query [3, 4] and key [5, 3] must have the same "
                  "last size (E), got 4 and 3");
  EXPECT_FT_ERROR(sdpa(q, k, ones({6, 2})),
                  "scaled_dot_product_attention: key [5, 4] and value [6, 2] must have the same "
                  "sequence length (dim -2), got 5 and 6");
  EXPECT_FT_ERROR(sdpa(ones({2, 3, 4}), ones({3, 5, 4}), v),
                  "scaled_dot_product_attention: the batch dims of query and key do not broadcast");
  EXPECT_FT_ERROR(sdpa(ones({2, 3, 4}), k, ones({3, 5, 2})),
                  "scaled_dot_product_attention: the batch dims of query, key and value do not "
                  "broadcast");
  EXPECT_FT_ERROR(sdpa(q, k, v, ones({3, 5}, kBool), true),
                  "scaled_dot_product_attention: attn_mask must not be given when is_causal is "
                  "true (got attn_mask [3, 5])");
  EXPECT_FT_ERROR(sdpa(q, k, v, ones({3, 5}, kInt64)),
                  "scaled_dot_product_attention: attn_mask must be bool or floating, got int64");
  EXPECT_FT_ERROR(sdpa(q, k, v, ones({3, 4})),
                  "scaled_dot_product_attention: attn_mask of shape [3, 4] does not broadcast to "
                  "the attention weights' shape [3, 5] [..., L, S]");
  EXPECT_FT_ERROR(sdpa(q, k, v, ones({2, 3, 5})),
                  "scaled_dot_product_attention: attn_mask of shape [2, 3, 5] does not broadcast");
  EXPECT_FT_ERROR(sdpa(q, k, v, std::nullopt, false, std::numeric_limits<double>::infinity()),
                  "scaled_dot_product_attention: scale must be finite, got inf");
  EXPECT_FT_ERROR(sdpa(q, k, v, std::nullopt, false, std::nan("")),
                  "scaled_dot_product_attention: scale must be finite");
}

TEST(CheckAttention, ReturnsShapesAndValidates) {
  const AttentionShapes s =
      CheckAttention(Shape{2, 1, 3, 4}, kFloat32, Shape{5, 6, 4}, kFloat32, Shape{7, 1, 1, 6, 8},
                     kFloat64, nullptr, kFloat32, 0.0, false, std::nullopt);
  EXPECT_EQ(s.weights, Shape({2, 5, 3, 6}));
  EXPECT_EQ(s.output, Shape({7, 2, 5, 3, 8}));
  EXPECT_EQ(s.dtype, kFloat64);
  const Shape mask_shape{3, 6};
  const IntArrayRef mask = mask_shape;
  const AttentionShapes m = CheckAttention(Shape{3, 4}, kFloat32, Shape{6, 4}, kFloat32,
                                           Shape{6, 2}, kFloat32, &mask, kBool, 1.0, false, 0.5);
  EXPECT_EQ(m.weights, Shape({3, 6}));
  EXPECT_EQ(m.output, Shape({3, 2}));
  EXPECT_EQ(m.dtype, kFloat32);
  EXPECT_FT_ERROR(CheckAttention(Shape{3, 4}, kFloat32, Shape{6, 4}, kFloat32, Shape{6, 2},
                                 kFloat32, nullptr, kFloat32, -0.1, false, std::nullopt),
                  "scaled_dot_product_attention: dropout_p must be in [0, 1], got -0.1");
  EXPECT_FT_ERROR(CheckAttention(Shape{3, 4}, kFloat32, Shape{6, 4}, kFloat32, Shape{6, 2},
                                 kFloat32, nullptr, kFloat32, std::nan(""), false, std::nullopt),
                  "scaled_dot_product_attention: dropout_p must be in [0, 1]");
  EXPECT_FT_ERROR(CheckAttention(Shape{3, 4}, kFloat32, Shape{6, 4}, kFloat32, Shape{6, 2},
                                 kFloat32, &mask, kFloat64, 0.0, true, std::nullopt),
                  "scaled_dot_product_attention: attn_mask must not be given when is_causal");
}

TEST(AttentionScale, DefaultsToInverseSqrtOfE) {
  EXPECT_DOUBLE_EQ(AttentionScale(Shape{2, 3, 16}, std::nullopt), 0.25);
  EXPECT_DOUBLE_EQ(AttentionScale(Shape{3, 2}, std::nullopt), 1 / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(AttentionScale(Shape{3, 16}, 0.125), 0.125);
  EXPECT_DOUBLE_EQ(AttentionScale(Shape{3, 16}, 3), 3.0);
  EXPECT_DOUBLE_EQ(AttentionScale(Shape{3, 16}, 0.0), 0.0);
}

}  // namespace
}  // namespace ft::kernels
