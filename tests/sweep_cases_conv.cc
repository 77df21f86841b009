// Transforms-sweep entries (tests/sweep_cases.h): convolution and pooling. Small examples
// with groups, stride, padding, dilation and ceil_mode set, so that the batching rules' fold
// into N (input batched) and into groups (weight or bias batched) are both exercised; max
// pools draw random values (ties, where the max is not differentiable, have probability 0).
#include <tuple>

#include "ops/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> ConvCases() {
  return {
      {"conv1d",
       [](const TensorList& a) { return conv1d(a[0], a[1], a[2], {2}, {1}, {1}, 2); },
       {{{1, 2, 5}}, {{2, 1, 3}}, {{2}}}},
      {"conv2d",
       [](const TensorList& a) { return conv2d(a[0], a[1], a[2], {2, 1}, {1}, {1}, 2); },
       {{{1, 2, 3, 2}}, {{2, 1, 2, 2}}, {{2}}}},
      {"conv3d",
       [](const TensorList& a) { return conv3d(a[0], a[1], a[2], {1}, {0, 1, 0}, {1}); },
       {{{1, 2, 3, 1}}, {{2, 1, 2, 2, 1}}, {{2}}}},
      {"conv_transpose1d",
       [](const TensorList& a) {
         return conv_transpose1d(a[0], a[1], a[2], {2}, {0}, {1}, 1, {1});
       },
       {{{1, 2, 3}}, {{2, 2, 2}}, {{2}}}},
      {"conv_transpose2d",
       [](const TensorList& a) {
         return conv_transpose2d(a[0], a[1], a[2], {2}, {1}, {1}, 2, {1});
       },
       {{{2, 2, 2}}, {{2, 1, 2, 2}}, {{2}}}},
      {"conv_transpose3d",
       [](const TensorList& a) {
         return conv_transpose3d(a[0], a[1], a[2], {1}, {0}, {0}, 1, {1, 1, 2});
       },
       {{{1, 1, 2, 2, 1}}, {{1, 2, 2, 1, 2}}, {{2}}}},
      // The weight gradient of a grouped, strided, padded conv2d: both operands differentiable.
      {"conv_weight_grad",
       [](const TensorList& a) {
         return conv_weight_grad(a[0], {2, 1, 2, 2}, a[1], {2, 1}, {1}, {1}, 2);
       },
       {{{1, 2, 3, 3}}, {{1, 2, 2, 4}}}},
      {"unfold", [](const TensorList& a) { return unfold(a[0], {2}, {1}, {1}, {2}); },
       {{{1, 3, 4}}}},
      {"fold", [](const TensorList& a) { return fold(a[0], {3}, {2}); }, {{{4, 4}}}},
      {"max_pool1d",
       [](const TensorList& a) { return max_pool1d(a[0], {3}, {2}, {1}, {1}, true); },
       {{{2, 6}}}},
      {"max_pool2d", [](const TensorList& a) { return max_pool2d(a[0], {2}); }, {{{1, 3, 4}}}},
      {"max_pool1d_with_indices",
       [](const TensorList& a) {
         return std::get<0>(max_pool1d_with_indices(a[0], {2}, {1}, {0}, {2}));
       },
       {{{2, 5}}}},
      {"max_pool2d_with_indices",
       [](const TensorList& a) {
         return std::get<0>(max_pool2d_with_indices(a[0], {2}, {1}, {1}));
       },
       {{{1, 1, 3, 4}}}},
      {"avg_pool1d",
       [](const TensorList& a) { return avg_pool1d(a[0], {3}, {2}, {1}, true, false); },
       {{{2, 6}}}},
      {"avg_pool2d",
       [](const TensorList& a) { return avg_pool2d(a[0], {2}, {1}, {1}, false, true, 3); },
       {{{1, 3, 4}}}},
      {"adaptive_avg_pool1d", [](const TensorList& a) { return adaptive_avg_pool1d(a[0], {3}); },
       {{{2, 5}}}},
      {"adaptive_avg_pool2d",
       [](const TensorList& a) { return adaptive_avg_pool2d(a[0], {2, 3}); }, {{{1, 3, 4}}}},
      {"adaptive_max_pool2d",
       [](const TensorList& a) { return std::get<0>(adaptive_max_pool2d(a[0], {2})); },
       {{{1, 3, 4}}}},
      // The upsampling primitives (one entry per op: the other modes' derivatives are checked
      // in ops/conv_test.cc, their batching in vmap_rules/conv_test.cc), through
      // interpolate with scale factors that are not in / out (the kernels' 1 / scale path),
      // and the backwards directly.
      {"upsample_nearest",
       [](const TensorList& a) { return interpolate(a[0], {}, {1.5, 0.7}); }, {{{1, 2, 3, 4}}}},
      {"upsample_nearest_backward",
       [](const TensorList& a) { return upsample_nearest_backward(a[0], {5}, {2, 1, 3}); },
       {{{2, 1, 5}}}},
      {"upsample_linear",
       [](const TensorList& a) { return interpolate(a[0], {}, {1.5, 0.7, 1.2}, "trilinear"); },
       {{{1, 1, 2, 3, 3}}}},
      {"upsample_linear_backward",
       [](const TensorList& a) {
         return upsample_linear_backward(a[0], {3, 5}, {1, 2, 2, 2}, true);
       },
       {{{1, 2, 3, 5}}}},
  };
}

}  // namespace ft::sweep
