// Transforms-sweep entries (tests/sweep_cases.h): indexing and shape ops for models.
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {
namespace {

// Fixed indices and masks captured by the entries (repeats accumulate in the gradients).
const Tensor& EmbeddingIndex() {  // [2, 3] into a table of 4 rows; row 1 repeats
  static const Tensor t = tensor(std::vector<int64_t>{1, 3, 1, 0, 2, 1}, {2, 3});
  return t;
}
const Tensor& AddIndex() {  // 3 indices into dim 1 of size 4; index 2 repeats
  static const Tensor t = tensor(std::vector<int64_t>{2, 0, 2});
  return t;
}
const Tensor& FillMask() {  // [4], broadcast over the rows of a [3, 4] input
  static const Tensor t = tensor(std::vector<bool>{true, false, false, true}, {4});
  return t;
}

const Tensor& NdIndex() {  // rows of 2 coordinates into [3, 4, ...]; rows 0 and 2 repeat
  static const Tensor t = tensor(std::vector<int64_t>{0, 1, 2, -1, 0, 1, 1, 0}, {4, 2});
  return t;
}
const Tensor& RowIndex() {  // broadcast against ColIndex to [2, 2]
  static const Tensor t = tensor(std::vector<int64_t>{2, 0}, {2, 1});
  return t;
}
const Tensor& ColIndex() {
  static const Tensor t = tensor(std::vector<int64_t>{-1, 1});
  return t;
}

}  // namespace

std::vector<OpCase> NnIndexingCases() {
  return {
      // No padding_idx: its row is a constant to the derivatives, which central differences
      // cannot see (//ops:nn_indexing_test checks it against torch).
      {"embedding", [](const TensorList& a) { return embedding(EmbeddingIndex(), a[0]); },
       {{{4, 3}}}},
      {"masked_fill", [](const TensorList& a) { return masked_fill(a[0], FillMask(), a[1]); },
       {{{3, 4}}, {{}}}},
      {"index_add",
       [](const TensorList& a) { return index_add(a[0], 1, AddIndex(), a[1], 1.5); },
       {{{3, 4}}, {{3, 3}}}},
      {"tril", [](const TensorList& a) { return tril(a[0], -1); }, {{{3, 4}}}},
      {"triu", [](const TensorList& a) { return triu(a[0], 1); }, {{{3, 4}}}},
      {"roll", [](const TensorList& a) { return roll(a[0], {1, -3}, {0, 1}); }, {{{3, 4}}}},
      {"pixel_shuffle", [](const TensorList& a) { return pixel_shuffle(a[0], 2); },
       {{{4, 1, 3}}}},
      {"pixel_unshuffle", [](const TensorList& a) { return pixel_unshuffle(a[0], 2); },
       {{{1, 2, 4}}}},
      // One entry per op: the primitive (repeated rows) and the torch-style composite.
      {"gather_nd",
       [](const TensorList& a) {
         return cat({reshape(gather_nd(a[0], NdIndex()), {-1}),
                     reshape(index(a[0], {std::nullopt, RowIndex(), ColIndex()}), {-1})});
       },
       {{{3, 4, 2}}}},
      // Repeated rows without accumulate (the last write wins, and only it has a derivative),
      // with accumulate, and index_put's non-adjacent indices.
      {"index_put_nd",
       [](const TensorList& a) {
         return stack({index_put_nd(a[0], NdIndex(), a[1]),
                       index_put_nd(a[0], NdIndex(), a[1], true),
                       index_put(a[0], {RowIndex(), std::nullopt, ColIndex()}, a[2])});
       },
       {{{3, 4, 2}}, {{4, 1}}, {{4}}}},
  };
}

}  // namespace ft::sweep
