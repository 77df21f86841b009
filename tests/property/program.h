// ft/tests/property/program.h  (testonly)
//
// Random programs over ft's op table, for the property tests (property_test.cc, soak.cc).
// A Program is a straight-line function of 1 to 3 float tensors: each Step applies one
// catalog entry (an op of docs/coverage.md with its arguments made valid: a dim in range, an
// index that fits, a positive operand for log) to earlier values. The same seed gives the
// same program on every machine (the generator draws from its own integer generator).
//
// Invariants:
//   - Every value of a Program is a float tensor of the program's dtype (or float64 after a
//     `to` upcast) whose elements are finite and at most 1e4 in magnitude on the inputs the
//     generator tried: the derivative oracles need values that central differences resolve.
//   - A program drawn with `smooth_only` uses only entries that are differentiable at random
//     points (no kinks, ties or jumps), so central differences are a valid oracle for it.
//   - Constant tensors a step needs (an index, a matrix operand) are made inside the program
//     by Constant() and Index(), from the shapes alone: under vmap they are unbatched.
//   - Running a Program never writes its inputs (in-place steps write a clone).
//
// Example:
//   Program p = Generate(/*seed=*/7, GenerateOptions{});
//   TensorList outs = p.Run(MakeInputs(p.inputs, p.dtype, /*seed=*/1));
//   std::cout << p.ToCpp();   // the same function as C++ source
#ifndef FT_TESTS_PROPERTY_PROGRAM_H_
#define FT_TESTS_PROPERTY_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ft::property {

using Shape = std::vector<int64_t>;

// Rng: a small deterministic integer generator (splitmix64), identical on every platform,
// unlike the distributions of <random>.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  int64_t Below(int64_t n);                 // uniform in [0, n), n >= 1
  int64_t Between(int64_t lo, int64_t hi);  // uniform in [lo, hi]
  bool Chance(int percent);                 // true with probability percent/100
 private:
  uint64_t state_;
};

// How an input tensor is laid out in memory: the property tests run every transform on
// non-contiguous inputs too.
enum class Layout {
  kContiguous,
  kTransposed,  // a transposed copy viewed back (reversed strides)
  kStrided,     // every other element of a twice-as-large last dim
  kExpanded,    // dim 0's first slice broadcast (stride 0) when dim 0 has size > 1
};
const char* LayoutName(Layout layout);

struct InputSpec {
  Shape shape;
  Layout layout = Layout::kContiguous;
};

// MakeInputs: one tensor per spec, values uniform in [-1, 1) from `seed`, of `dtype`, laid
// out as the spec says. The same specs and seed give the same tensors.
TensorList MakeInputs(const std::vector<InputSpec>& specs, DType dtype, uint64_t seed);

// Constant: a tensor of `shape` and like's dtype with fixed values in [-0.6, 0.6] (salt
// varies them). Made from the shape alone, so under a transform it is a plain tensor.
Tensor Constant(const Tensor& like, const Shape& shape, int64_t salt);
// Index: an int64 tensor of `shape` with fixed values in [0, high).
Tensor Index(const Shape& shape, int64_t high, int64_t salt);
// Weight: Constant(like, like's shape, 101): the fixed cotangent of the derivative checks.
Tensor Weight(const Tensor& like);
// Spd: t t^T + m I for t = tanh(x) and x [..., m, k] (rank >= 2): symmetric positive-definite
// with eigenvalues >= m, whatever x holds, for the catalog's factorization steps.
Tensor Spd(const Tensor& x);
// WellConditioned: Spd(x) plus a fixed non-symmetric constant of norm < m / 2: invertible
// and well-conditioned (for solve, inverse, slogdet).
Tensor WellConditioned(const Tensor& x);

// Helpers the catalog uses for write-through-view steps, public so that a printed program
// compiles in a regression test. Each clones x first, so x itself is never written.
Tensor MulNarrow_(const Tensor& x, int64_t dim, int64_t start, int64_t length, double factor);
Tensor FillSelect_(const Tensor& x, int64_t dim, int64_t index, double value);
Tensor AddTranspose_(const Tensor& x, int64_t dim0, int64_t dim1, const Tensor& other);
Tensor ZeroDiagonal_(const Tensor& x);
// OneHotArgmax: one_hot(argmax(x, -1)) in x's dtype (x of rank >= 1).
Tensor OneHotArgmax(const Tensor& x);

// One step: catalog entry `op` applied to values `args` with integer parameters `params`.
// Values are numbered inputs first (0 .. inputs-1), then one per step in order.
struct Step {
  int op = 0;
  std::vector<int> args;
  std::vector<int64_t> params;
};

struct Program {
  DType dtype = kFloat64;
  std::vector<InputSpec> inputs;  // the shapes the program is written for (one example)
  std::vector<Step> steps;
  std::vector<int> outputs;  // value ids returned, in order

  // Run: the program on `inputs` (any transform's wrappers). With `plain`, each custom
  // Function step runs as the same math in built-in ops instead (its plain twin).
  TensorList Run(const TensorList& inputs, bool plain = false) const;
  // HasFunctions: some step calls a custom Function (so the plain twin differs).
  bool HasFunctions() const;
  // ToCpp: a C++ lambda `[](const TensorList& x) -> TensorList {...}` computing Run (with
  // `plain`, Run(x, true)).
  std::string ToCpp(bool plain = false) const;
  // Op names of the steps, e.g. "sin, sum, matmul_const".
  std::string Summary() const;
};

struct GenerateOptions {
  bool smooth_only = false;  // only entries differentiable at random points
  int max_steps = 6;
  int64_t max_input_numel = 12;
  bool allow_float32 = true;
};

// Generate: the program for `seed`. It runs each candidate step eagerly on sample inputs
// and keeps only steps that succeed with finite, bounded values.
Program Generate(uint64_t seed, const GenerateOptions& options);

// Catalog introspection, for the coverage report of the property tests.
int CatalogSize();
const char* CatalogName(int op);
// CatalogOps: the registry op names an entry exercises (e.g. "log", "square", "add").
std::vector<std::string> CatalogOps(int op);

// DCE: removes steps whose values no output needs (and renumbers). Used by the shrinker.
Program DeadCodeEliminated(const Program& p);

}  // namespace ft::property

#endif  // FT_TESTS_PROPERTY_PROGRAM_H_
