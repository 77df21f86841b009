// ft/tests/vmap_oracle.h  (testonly)
//
// LoopVmap: the independent oracle for vmap. It runs f once per example on plain tensors
// (select along each in_dim) and stacks the results along each out_dim: no BatchedTensor,
// no batching rule, no interpreter involved. A vmap test compares ft::vmap(f) with it.
//
// Example:
//   TensorList expected = LoopVmap(f, {x, w}, {0, std::nullopt}, {0});
#ifndef FT_TESTS_VMAP_ORACLE_H_
#define FT_TESTS_VMAP_ORACLE_H_

#include <functional>
#include <optional>
#include <vector>

#include "tensor/tensor.h"

namespace ft::testing {

using LoopFn = std::function<TensorList(const TensorList&)>;

// LoopVmap maps f over the given in_dims (nullopt: passed whole to every call) and stacks
// each output along out_dims[o] (one per output). Preconditions: at least one mapped input;
// all mapped sizes equal.
TensorList LoopVmap(const LoopFn& f, const TensorList& args,
                    const std::vector<std::optional<int64_t>>& in_dims,
                    const std::vector<int64_t>& out_dims);

}  // namespace ft::testing

#endif  // FT_TESTS_VMAP_ORACLE_H_
