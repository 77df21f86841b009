// ft/tests/vmap_check.h  (testonly)
//
// CheckVmap: the standard vmap test of one function, against the loop-and-stack oracle
// (vmap_oracle.h). Given f over per-example tensors and one ArgSpec per argument (the
// per-example shape and how to make values), it checks ft::vmap(f) == LoopVmap(f) for:
//   - batch sizes 1 and 3;
//   - every combination of in_dims where each argument is mapped at 0, at its last dim,
//     at -1, or not mapped (nullopt), except all unmapped;
//   - mapped inputs stored non-contiguously (stride 2 in their last dim);
//   - two nested levels with different in_dims (inner 0, outer -1; and the outer level
//     mapping only the first argument).
// Outputs are compared with `tol` (exactly for integer and bool outputs); every output is
// stacked at out_dim 0.
//
// Example:
//   EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{ft::sum(a[0], {0})}; },
//                         {ArgSpec{{4, 5}}}));
#ifndef FT_TESTS_VMAP_CHECK_H_
#define FT_TESTS_VMAP_CHECK_H_

#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"
#include "tests/vmap_oracle.h"

namespace ft::testing {

// Makes a tensor of `shape` from a seed (values of one example or a whole batch).
using ValueMaker = std::function<Tensor(IntArrayRef shape, uint64_t seed)>;

// UniformMaker: float64 (or `dtype`) uniform in [low, high).
ValueMaker UniformMaker(double low = -1.0, double high = 1.0, DType dtype = kFloat64);
// IndexMaker: int64 uniform in [0, high).
ValueMaker IndexMaker(int64_t high);

struct ArgSpec {
  Shape shape;                        // per-example shape
  ValueMaker make = UniformMaker();   // how to fill it
  bool mappable = true;               // false: never mapped (e.g. must stay unbatched)
};

::testing::AssertionResult CheckVmap(const LoopFn& f, const std::vector<ArgSpec>& args,
                                     double tol = 1e-10);

}  // namespace ft::testing

#endif  // FT_TESTS_VMAP_CHECK_H_
