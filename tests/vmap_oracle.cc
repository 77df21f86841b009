#include "tests/vmap_oracle.h"

#include "ops/ops.h"
#include "tensor/error.h"

namespace ft::testing {

TensorList LoopVmap(const LoopFn& f, const TensorList& args,
                    const std::vector<std::optional<int64_t>>& in_dims,
                    const std::vector<int64_t>& out_dims) {
  FT_CHECK(args.size() == in_dims.size());
  int64_t batch = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (in_dims[i]) batch = args[i].size(*in_dims[i]);
  }
  FT_CHECK(batch >= 0);
  std::vector<TensorList> per_output;
  for (int64_t b = 0; b < batch; ++b) {
    TensorList example;
    for (size_t i = 0; i < args.size(); ++i) {
      example.push_back(in_dims[i] ? clone(select(args[i], *in_dims[i], b)) : args[i]);
    }
    TensorList outs = f(example);
    if (per_output.empty()) per_output.resize(outs.size());
    for (size_t o = 0; o < outs.size(); ++o) per_output[o].push_back(outs[o]);
  }
  TensorList result;
  for (size_t o = 0; o < per_output.size(); ++o) {
    result.push_back(stack(per_output[o], out_dims[o]));
  }
  return result;
}

}  // namespace ft::testing
