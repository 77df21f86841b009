#include "tests/vmap_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft::testing {
namespace {

std::string DimsString(const std::vector<std::optional<int64_t>>& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(d ? absl::StrCat(*d) : "None");
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

// A tensor of `shape` with `batch` inserted at `dim` (wrapped for rank+1), stored with
// stride 2 in its last dim (non-contiguous) when it has one.
Tensor MakeBatchedInput(const ArgSpec& spec, int64_t batch, int64_t dim, uint64_t seed) {
  Shape shape = spec.shape;
  const int64_t rank = static_cast<int64_t>(shape.size()) + 1;
  const int64_t d = dim < 0 ? dim + rank : dim;
  shape.insert(shape.begin() + d, batch);
  Tensor t = spec.make(shape, seed);
  return t.dim() > 0 ? NonContiguousCopy(t) : t;
}

::testing::AssertionResult Compare(const TensorList& got, const TensorList& want,
                                   double tol, const std::string& where) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure()
           << where << ": " << got.size() << " outputs vs " << want.size();
  }
  for (size_t o = 0; o < got.size(); ++o) {
    const double t = IsFloating(want[o].dtype()) ? tol : 0.0;
    ::testing::AssertionResult r = TensorNear(contiguous(got[o]), want[o], t, t);
    if (!r) return ::testing::AssertionFailure() << where << ", output " << o << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

ValueMaker UniformMaker(double low, double high, DType dtype) {
  return [=](IntArrayRef shape, uint64_t seed) {
    Generator g(seed);
    Tensor u = rand_like(zeros(shape, kFloat64), &g) * (high - low) + low;
    return to(u, dtype);
  };
}

ValueMaker IndexMaker(int64_t high) {
  return [=](IntArrayRef shape, uint64_t seed) {
    Generator g(seed);
    return randint(0, high, shape, &g);
  };
}

::testing::AssertionResult CheckVmap(const LoopFn& f, const std::vector<ArgSpec>& args,
                                     double tol) {
  const size_t n = args.size();
  // Options per argument: 0 = unmapped, 1 = dim 0, 2 = last (positive), 3 = -1.
  size_t combos = 1;
  for (size_t i = 0; i < n; ++i) combos *= 4;
  uint64_t seed = 1;
  for (int64_t batch : {1, 3}) {
    for (size_t c = 1; c < combos; ++c) {
      std::vector<std::optional<int64_t>> in_dims(n);
      size_t code = c;
      bool valid = true;
      for (size_t i = 0; i < n; ++i, code /= 4) {
        const int64_t rank = static_cast<int64_t>(args[i].shape.size()) + 1;
        switch (code % 4) {
          case 0:
            in_dims[i] = std::nullopt;
            break;
          case 1:
            in_dims[i] = 0;
            break;
          case 2:
            in_dims[i] = rank - 1;
            break;
          default:
            in_dims[i] = -1;
        }
        if (in_dims[i] && !args[i].mappable) valid = false;
      }
      bool any = false;
      for (const auto& d : in_dims) any = any || d.has_value();
      if (!valid || !any) continue;
      TensorList inputs;
      for (size_t i = 0; i < n; ++i) {
        inputs.push_back(in_dims[i] ? MakeBatchedInput(args[i], batch, *in_dims[i], seed++)
                                    : args[i].make(args[i].shape, seed++));
      }
      const std::string where =
          absl::StrCat("batch ", batch, ", in_dims ", DimsString(in_dims));
      TensorList want = LoopVmap(f, inputs, in_dims, std::vector<int64_t>(64, 0));
      TensorList got;
      try {
        got = vmap(TensorListFn(f), Dims(in_dims))(inputs);
      } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << where << ": vmap threw: " << e.what();
      }
      ::testing::AssertionResult r = Compare(got, want, tol, where);
      if (!r) return r;
    }
  }
  // Two nested levels: inner maps dim 0 (size 2), outer maps the last dim (size 3).
  for (bool outer_all : {true, false}) {
    std::vector<std::optional<int64_t>> inner_dims(n, 0), outer_dims(n);
    TensorList inputs;
    bool valid = true;
    for (size_t i = 0; i < n; ++i) {
      if (!args[i].mappable) valid = false;
      const bool outer = outer_all || i == 0;
      outer_dims[i] = outer ? std::optional<int64_t>(-1) : std::nullopt;
      Shape shape = args[i].shape;
      shape.insert(shape.begin(), 2);
      if (outer) shape.push_back(3);
      Tensor t = args[i].make(shape, seed++);
      inputs.push_back(t.dim() > 0 ? NonContiguousCopy(t) : t);
    }
    if (!valid) break;
    const std::string where = absl::StrCat("nested: inner in_dims ", DimsString(inner_dims),
                                           ", outer in_dims ", DimsString(outer_dims));
    LoopFn inner_loop = [&](const TensorList& a) {
      return LoopVmap(f, a, inner_dims, std::vector<int64_t>(64, 0));
    };
    TensorList want = LoopVmap(inner_loop, inputs, outer_dims, std::vector<int64_t>(64, 0));
    TensorList got;
    try {
      got = vmap(vmap(TensorListFn(f), Dims(inner_dims)), Dims(outer_dims))(inputs);
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << where << ": vmap threw: " << e.what();
    }
    ::testing::AssertionResult r = Compare(got, want, tol, where);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ft::testing
