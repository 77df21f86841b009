// ft/tests/sweep_cases.h
//
// The entries of the transforms sweep (tests/transforms_sweep_test.cc): one per
// differentiable built-in op, each a function of float64 arguments drawn in a smooth region of
// the op. The sweep checks every entry through gradcheck, vmap(grad), vmap(jvp), grad(vmap),
// jacfwd == jacrev, jit replay and functionalize against independent references.
//
// The ops of transforms_sweep_test.cc's own table are the original families; each model
// family (issue 21) keeps its entries in a file of its own, tests/sweep_cases_<family>.cc,
// whose function below the test appends to its table.
//
// Example entry (an op of one [3, 4] argument drawn from [0.5, 2]):
//   {"log", [](const TensorList& a) { return log(a[0]); }, {{{3, 4}, 0.5, 2.0}}}
#ifndef FT_TESTS_SWEEP_CASES_H_
#define FT_TESTS_SWEEP_CASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "interpreters/vmap/vmap.h"
#include "tensor/tensor.h"

namespace ft::sweep {

// ArgSpec: the shape of one example of a float64 argument and the range it is drawn from.
struct ArgSpec {
  std::vector<int64_t> shape;
  double low = -1.0;
  double high = 1.0;
};

// Checks an entry may skip (each skip carries a `// BUG:` comment at the entry).
enum Check : unsigned {
  kVmapOfGrad = 1u << 0,
  kVmapOfJvp = 1u << 1,
  kGradOfVmap = 1u << 2,
  kJacfwdVsJacrev = 1u << 3,
};

struct OpCase {
  std::string op;  // the registry name of the op under test
  std::function<Tensor(const TensorList&)> fn;
  std::vector<ArgSpec> args;  // args[0] is the one batched by the sweep
  Randomness randomness = Randomness::kError;
  unsigned skip = 0;
  // Step and tolerance of the central-difference sanity check (check 0): larger only for an
  // entry whose function rounds through float32 (differences of 1e-6 drown in its rounding).
  double fd_eps = 1e-6;
};

// The model families' entries, one function per family file.
std::vector<OpCase> ActivationCases();
std::vector<OpCase> LossCases();
std::vector<OpCase> NormalizationCases();
std::vector<OpCase> NnIndexingCases();
std::vector<OpCase> ConvCases();
std::vector<OpCase> AttentionCases();

}  // namespace ft::sweep

#endif  // FT_TESTS_SWEEP_CASES_H_
