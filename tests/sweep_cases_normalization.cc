// Transforms-sweep entries (tests/sweep_cases.h): normalization. batch_norm and
// instance_norm return their output and both running statistics (flattened and
// concatenated), so every output's derivative is swept.
#include "ops/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {
namespace {

Tensor Flat(const NormResult& r) {
  return cat({flatten(r.output), *r.running_mean, *r.running_var}, 0);
}

}  // namespace

std::vector<OpCase> NormalizationCases() {
  return {
      {"layer_norm",
       [](const TensorList& a) { return layer_norm(a[0], {4}, a[1], a[2]); },
       {{{2, 4}}, {{4}, 0.5, 1.5}, {{4}}}},
      {"rms_norm",
       [](const TensorList& a) { return rms_norm(a[0], {4}, a[1]); },
       {{{2, 4}}, {{4}, 0.5, 1.5}}},
      {"normalize", [](const TensorList& a) { return normalize(a[0]); }, {{{3, 4}}}},
      {"group_norm",
       [](const TensorList& a) { return group_norm(a[0], 2, a[1], a[2]); },
       {{{2, 4}}, {{4}, 0.5, 1.5}, {{4}}}},
      {"batch_norm",  // training: batch statistics, running stats updated
       [](const TensorList& a) {
         return Flat(batch_norm(a[0], a[1], a[2], a[3], a[4], true, 0.2));
       },
       {{{3, 2}}, {{2}}, {{2}, 0.5, 1.5}, {{2}, 0.5, 1.5}, {{2}}}},
      {"instance_norm",
       [](const TensorList& a) {
         return Flat(instance_norm(a[0], a[1], a[2], a[3], a[4], true, 0.3));
       },
       {{{2, 2, 3}}, {{2}}, {{2}, 0.5, 1.5}, {{2}, 0.5, 1.5}, {{2}}}},
  };
}

}  // namespace ft::sweep
