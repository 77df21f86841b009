// docs/errors.md, checked. One test per family of ft::Error in the catalog (suite
// ErrorCatalog, each test named after its family's id: `shape-mismatch` is ShapeMismatch),
// which raises the family's errors and checks the message's key parts (the op or transform
// it starts with, the shapes, dims or levels); a test that the catalog's families and these
// tests are the same set; and the transform stack the message names inside transforms
// (suite TransformStack, NOTE: [Transform stack in errors] in tensor/error.h): vmap inside
// grad, grad inside vmap, vmap inside vmap, jvp inside vmap, a custom Function's rule inside
// vmap(grad), functionalize inside vmap, a vjp_fn called after vjp returned. After every
// error the layer stack is empty.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/collectives.h"
#include "distributed/testing.h"
#include "ft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interop/eigen.h"
#include "interop/npy.h"
#include "tests/test_util.h"

// The size-overflow family asks for more memory than any machine has: under AddressSanitizer
// that aborts unless the allocator may return null, which is what malloc does without it.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace ft {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Caught: the parts of the ft::Error a call raised.
struct Caught {
  std::string what;     // the whole message
  std::string message;  // the op's or transform's words (Error::message())
  std::string stack;    // the transform stack (Error::transform_stack()), "" outside transforms
};

// Catch runs f, which must raise an ft::Error, and returns its parts; the layer stack must be
// empty afterwards (every test calls transforms from outside any).
Caught Catch(const std::function<void()>& f) {
  Caught c;
  try {
    f();
    ADD_FAILURE() << "no ft::Error was raised";
  } catch (const Error& e) {
    c = {e.what(), std::string(e.message()), std::string(e.transform_stack())};
  }
  EXPECT_TRUE(LayerStack::empty()) << LayerStack::DebugString();
  return c;
}

// EXPECT_ERROR_STARTS(stmt, start): stmt raises an ft::Error whose message starts with `start`,
// and leaves the layer stack empty.
#define EXPECT_ERROR_STARTS(stmt, start) \
  EXPECT_THAT(Catch([&] { (void)(stmt); }).what, ::testing::StartsWith(start))

// NextLevel: the level the next transform will take (levels only grow, NOTE: [Levels]); a test
// that names levels in messages reads it just before the call.
int64_t NextLevel() { return LayerStack::NewLevel() + 1; }

const Tensor& X() {
  static const Tensor x = tensor({0.5f, 1.0f, 2.0f});
  return x;
}

Tensor Ints(std::vector<int64_t> v) { return tensor(std::move(v)); }

// ---- The catalog's families (docs/errors.md), in its order.

TEST(ErrorCatalog, ShapeMismatch) {
  Caught c = Catch([] { matmul(ones({2, 3}), ones({4, 5})); });
  EXPECT_THAT(c.what, StartsWith("matmul: size mismatch, got [2, 3] @ [4, 5]: dim -1 of the "
                                 "first (3) must equal dim -2 of the second (4)"));
  EXPECT_THAT(c.stack, IsEmpty());  // no transform active: nothing appended
  EXPECT_ERROR_STARTS(add(ones({2, 3}), ones({4})),
                      "add: shapes [2, 3] and [4] cannot be broadcast together");
  EXPECT_ERROR_STARTS(cat({ones({2, 3}), ones({2, 4})}, 0),
                      "cat: shapes must match except in dim 0, but tensor 1 has shape [2, 4]");
  EXPECT_ERROR_STARTS(reshape(ones({2, 3}), {4}),
                      "reshape: shape [4] is invalid for input of size 6");
  EXPECT_ERROR_STARTS(expand(ones({2, 3}), {4, 3}),
                      "expand: the expanded size of the tensor (4) must match the existing "
                      "size (2) at non-singleton dimension 0");
  EXPECT_ERROR_STARTS(add_(ones({3}), ones({2, 3})),
                      "add_: output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_ERROR_STARTS(copy_(ones({3}), ones({2})),
                      "copy_: shapes [3] and [2] cannot be broadcast together");
}

TEST(ErrorCatalog, Dims) {
  EXPECT_ERROR_STARTS(sum(ones({2, 3}), {2}),
                      "sum: dim 2 is out of range for a tensor of rank 2 (expected a dim in "
                      "[-2, 1])");
  EXPECT_ERROR_STARTS(sum(ones({2, 3}), {0, -2}),
                      "sum: dim 0 appears more than once in the dim list [0, -2]");
  EXPECT_ERROR_STARTS(permute(ones({2, 3}), {0}),
                      "permute: number of dims don't match: got [0] for a tensor of shape "
                      "[2, 3]");
  EXPECT_ERROR_STARTS(select(scalar_tensor(1.0), 0, 0),
                      "select: cannot be applied to a 0-dim tensor");
  EXPECT_ERROR_STARTS(diagonal(ones({3})),
                      "diagonal: expected a tensor with at least 2 dimensions, got shape [3]");
}

TEST(ErrorCatalog, Dtypes) {
  const Tensor b = ones({2}, kBool);
  EXPECT_ERROR_STARTS(sub(b, b), "sub: subtraction with two bool tensors is not supported");
  EXPECT_ERROR_STARTS(neg(b), "neg: not supported for bool tensors");
  EXPECT_ERROR_STARTS(add_(Ints({1, 2}), 0.5),
                      "add_: result type float32 can't be cast to the desired output type "
                      "int64");
  EXPECT_ERROR_STARTS(where(ones({2}), ones({2}), ones({2})),
                      "where: expected condition to be a bool tensor, got float32");
  EXPECT_ERROR_STARTS(index_select(ones({3}), 0, ones({1})),
                      "index_select: expected an int64 index tensor, got float32");
  EXPECT_ERROR_STARTS(mean(Ints({1, 2})),
                      "mean: could not infer the output dtype; input dtype must be floating "
                      "point, got int64");
  EXPECT_ERROR_STARTS(pow(Ints({2}), Ints({-1})),
                      "pow: Integers to negative integer powers are not allowed");
}

TEST(ErrorCatalog, UndefinedTensor) {
  EXPECT_ERROR_STARTS(Tensor().sizes(),
                      "sizes: the tensor is undefined (a default-constructed ft::Tensor)");
  EXPECT_ERROR_STARTS(add(X(), Tensor()), "add: argument 'other' is an undefined tensor");
  EXPECT_THAT(Catch([] { vmap(TensorFn([](const Tensor& t) { return t; }))(Tensor()); }).what,
              StartsWith("vmap: argument 0 is an undefined tensor"));
  EXPECT_THAT(Catch([] { grad(TensorFn([](const Tensor&) { return Tensor(); }))(X()); }).what,
              StartsWith("grad: f's output 0 is an undefined tensor"));
}

TEST(ErrorCatalog, SizeOverflow) {
  constexpr int64_t kBig = int64_t{1} << 40;  // kBig * kBig overflows int64
  Caught c = Catch([&] { repeat(ones({2}), {kBig, kBig}); });
  EXPECT_THAT(c.what, StartsWith("repeat: a tensor of shape [1099511627776, 2199023255552] and "
                                 "dtype float32 has more elements than int64 can count"));
  EXPECT_ERROR_STARTS(empty({int64_t{1} << 45}),
                      "empty: a tensor of shape [35184372088832] and dtype float32 needs "
                      "140737488355328 bytes, more than this machine can allocate");
  // The type is AllocationError, also when raised inside a transform, where the message ends
  // with the transform stack.
  const int64_t level = NextLevel();
  try {
    vmap(TensorFn([&](const Tensor& t) { return repeat(t, {kBig, kBig}); }))(ones({2, 1}));
    ADD_FAILURE() << "no AllocationError";
  } catch (const AllocationError& e) {
    EXPECT_THAT(e.what(), StartsWith("repeat: a tensor of shape [2, 1099511627776, "));
    EXPECT_EQ(e.transform_stack(), absl::StrCat(" (in vmap (level ", level, "))"));
  }
  EXPECT_TRUE(LayerStack::empty());
}

TEST(ErrorCatalog, IndexOutOfRange) {
  EXPECT_ERROR_STARTS(index_select(X(), 0, Ints({1, 5})),
                      "index_select: index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR_STARTS(gather(X(), 0, Ints({-1})),
                      "gather: index -1 is out of bounds for dimension 0 with size 3 "
                      "(negative indices are not supported)");
  EXPECT_ERROR_STARTS(select(X(), 0, 3),
                      "select: index 3 out of range for tensor of size [3] at dimension 0");
  EXPECT_ERROR_STARTS(narrow(X(), 0, 2, 2),
                      "narrow: start (2) + length (2) exceeds dimension size (3)");
  EXPECT_ERROR_STARTS(topk(X(), 4), "topk: k (4) is out of range for dimension 0 of size 3");
  EXPECT_ERROR_STARTS(one_hot(Ints({0, 3}), 3), "one_hot: class value 3 is out of range [0, 3)");
}

TEST(ErrorCatalog, BadArgument) {
  EXPECT_ERROR_STARTS(arange(0.0, 1.0, 0.0), "arange: step must be nonzero");
  EXPECT_ERROR_STARTS(linspace(0.0, 1.0, -1),
                      "linspace: number of steps must be non-negative, got -1");
  EXPECT_ERROR_STARTS(split_with_sizes(X(), {1, 1}),
                      "split_with_sizes: sizes [1, 1] sum to 2 but dimension 0 has size 3");
  EXPECT_ERROR_STARTS(chunk(X(), 0), "chunk: chunks must be positive");
  EXPECT_ERROR_STARTS(pad(X(), {1}), "pad: padding [1] must have an even length");
  EXPECT_ERROR_STARTS(clamp(X()), "clamp: at least one of min or max must be given");
  EXPECT_ERROR_STARTS(Ints({1, 2}).item<int64_t>(),
                      "item: a tensor with 2 elements (shape [2]) cannot be converted to a "
                      "scalar");
  EXPECT_ERROR_STARTS(SetNumThreads(0), "SetNumThreads: the thread count must be >= 1, got 0");
  EXPECT_ERROR_STARTS(SetCachedMemoryLimit(-1),
                      "SetCachedMemoryLimit: the limit must be >= 0 bytes, got -1");
}

TEST(ErrorCatalog, EmptyReduction) {
  EXPECT_ERROR_STARTS(amax(zeros({0, 3}), {0}),
                      "amax: cannot reduce over a zero-size dimension (dim 0 of shape [0, 3])");
  EXPECT_ERROR_STARTS(argmax(zeros({0})), "argmax: cannot reduce over a zero-size dimension");
}

TEST(ErrorCatalog, Linalg) {
  EXPECT_ERROR_STARTS(mm(ones({3}), ones({3, 2})), "mm: expected 2-D tensors, got [3] and [3, 2]");
  EXPECT_ERROR_STARTS(bmm(ones({2, 2, 3}), ones({3, 3, 2})),
                      "bmm: batch sizes differ, got [2, 2, 3] and [3, 3, 2]");
  EXPECT_ERROR_STARTS(dot(ones({3}), ones({4})), "dot: size mismatch, got [3] and [4]");
  EXPECT_ERROR_STARTS(matmul(scalar_tensor(1.0), ones({3})),
                      "matmul: both arguments need at least 1 dimension");
  EXPECT_ERROR_STARTS(linear(ones({2, 3}), ones({4, 5})),
                      "linear: size mismatch, input [2, 3] has 3");
  EXPECT_ERROR_STARTS(matmul(ones({2}, kBool), ones({2}, kBool)),
                      "matmul: bool tensors are not supported");
  // Solves, factorizations, determinants.
  EXPECT_ERROR_STARTS(inverse(ones({2, 3})),
                      "inverse: expected square matrices [..., n, n] for A, got [2, 3]");
  EXPECT_ERROR_STARTS(logdet(ones({3})), "logdet: expected A of rank >= 2");
  EXPECT_ERROR_STARTS(linalg_solve(eye(3), ones({4, 2})),
                      "linalg_solve: size mismatch, got A [3, 3] and B [4, 2]");
  EXPECT_ERROR_STARTS(slogdet(ones({2, 2}, kInt64)),
                      "slogdet: expected a float32 or float64 A, got int64 [2, 2]");
  EXPECT_ERROR_STARTS(linalg_solve(tensor({1.0, 2.0, 2.0, 4.0}, {2, 2}), ones({2})),
                      "linalg_solve: A is singular: pivot 1 of its LU factorization is zero");
  EXPECT_ERROR_STARTS(cholesky(tensor({1.0, 2.0, 2.0, 1.0}, {2, 2})),
                      "cholesky: A is not positive-definite (A [2, 2])");
}

TEST(ErrorCatalog, Random) {
  EXPECT_ERROR_STARTS(bernoulli(full({2}, 1.5)),
                      "bernoulli: probabilities must be in [0, 1], got 1.5");
  EXPECT_ERROR_STARTS(dropout(X(), 2.0), "dropout: p must be in [0, 1], got 2");
  EXPECT_ERROR_STARTS(randint(3, 3, {2}), "randint: expected low < high, got low=3 and high=3");
  EXPECT_ERROR_STARTS(rand_like(Ints({1})),
                      "rand_like: expected a floating point or complex dtype, got int64");
}

TEST(ErrorCatalog, VmapInDims) {
  auto id = TensorListFn([](const TensorList& a) { return a; });
  const int64_t level = NextLevel();
  Caught c = Catch([&] { vmap(id, Dims({0, 0}))({X()}); });
  EXPECT_THAT(c.what, StartsWith("vmap: in_dims has 2 entries but there are 1 arguments"));
  EXPECT_THAT(c.what, HasSubstr(absl::StrCat("(vmap level ", level, ")")));
  EXPECT_ERROR_STARTS(vmap(id, 1)({X()}),
                      "vmap: Got in_dim=1 for argument 0, but that input is a Tensor of "
                      "dimensionality 1 so expected in_dim to satisfy -1 <= in_dim < 1.");
  EXPECT_ERROR_STARTS(vmap(id, std::nullopt)({X()}),
                      "vmap: Expected at least one Tensor to vmap over");
  EXPECT_ERROR_STARTS(vmap(id)({}), "vmap(f)(*args): got no inputs.");
  auto values = ValueFn([](const ValueList& a) { return a; });
  EXPECT_ERROR_STARTS(vmap(values)({Value(X()), Value(int64_t{2})}),
                      "vmap: Got in_dim=0 for argument 1 but the input is of type int.");
  EXPECT_ERROR_STARTS(vmap(id, 0, 0, Randomness::kError, 0)({X()}),
                      "vmap: chunk_size should be None or greater than 0. (got 0");
}

TEST(ErrorCatalog, VmapBatchSize) {
  auto add2 = TensorListFn([](const TensorList& a) { return TensorList{a[0] + a[1]}; });
  EXPECT_ERROR_STARTS(vmap(add2)({ones({2, 3}), ones({4, 3})}),
                      "vmap: Expected all tensors to have the same size in the mapped "
                      "dimension, got argument 0: size 2 at in_dim 0; argument 1: size 4 at "
                      "in_dim 0");
}

TEST(ErrorCatalog, VmapOutDims) {
  auto two = TensorListFn([](const TensorList& a) { return TensorList{a[0], a[0]}; });
  EXPECT_ERROR_STARTS(vmap(two, 0, Dims({0, 0, 0}))({X()}),
                      "vmap: out_dims has 3 entries but there are 2 outputs");
  EXPECT_ERROR_STARTS(vmap(two, 0, std::nullopt)({X()}),
                      "vmap: can not return a BatchedTensor when out_dim is None (output 0");
  EXPECT_ERROR_STARTS(vmap(two, 0, 3)({X()}),
                      "vmap: out_dim: dim 3 is out of range for a tensor of rank 1");
  auto number = ValueFn([](const ValueList&) { return ValueList{Value(1.5)}; });
  EXPECT_ERROR_STARTS(vmap(number)({Value(X())}),
                      "vmap: must only return Tensors, got type double for output 0. Did you "
                      "mean to set out_dims= to None for output 0?");
}

TEST(ErrorCatalog, VmapRandomness) {
  const int64_t level = NextLevel();
  Caught c = Catch([] { vmap(TensorFn([](const Tensor& t) { return rand_like(t); }))(X()); });
  EXPECT_THAT(c.what, StartsWith(absl::StrCat("vmap: called random operation 'rand_like' while in "
                                              "randomness error mode (level ",
                                              level, ")")));
  EXPECT_ERROR_STARTS(ParseRandomness("sometimes"),
                      "vmap: only allowed values for randomness are 'error', 'different', or "
                      "'same'. Got 'sometimes'");
}

TEST(ErrorCatalog, VmapInplace) {
  const Tensor buffer = zeros({3});
  Caught c = Catch([&] {
    vmap(TensorFn([&](const Tensor& t) { return add_(buffer, t); }))(ones({2, 3}));
  });
  EXPECT_THAT(c.what, StartsWith("vmap: add_(self, ...) would write values that vary over the "));
  EXPECT_THAT(c.what, HasSubstr("ft::functionalize"));
}

TEST(ErrorCatalog, DataDependent) {
  Caught c =
      Catch([] { vmap(TensorFn([](const Tensor& t) { return t * t.item<float>(); }))(ones({2})); });
  EXPECT_THAT(c.what, StartsWith("item: cannot read the elements of a batched tensor inside "
                                 "vmap"));
  EXPECT_THAT(c.what, HasSubstr("Branch with ft::where, ft::cond or ft::while_loop"));
  // Under grad a read returns the primal value (NOTE: [Host reads inside transforms]); a
  // functionalize wrapper still refuses.
  EXPECT_THAT(
      Catch([] {
        functionalize([](const TensorList& a) {
          return TensorList{a[0] * a[0].to_vector<double>()[0]};
        })({X()});
      }).what,
      StartsWith("to_vector: cannot read the elements of a functional tensor inside a "
                 "transform"));
}

// A user op with no rule for any transform.
Tensor UserTwiceKernel(const Tensor& x) { return x * 2.0; }
Tensor UserTwice(const Tensor& x) {
  static const bool registered = [] {
    RegisterAllOps();
    RegisterOp<&UserTwiceKernel>(OpRegistry::Global(), "user_twice", {"self"});
    return true;
  }();
  (void)registered;
  return Call<&UserTwiceKernel>(x);
}

TEST(ErrorCatalog, MissingRule) {
  UserTwice(X());
  SetVmapFallbackMode(VmapFallbackMode::kError);
  const int64_t level = NextLevel();
  EXPECT_THAT(Catch([] {
                vmap(TensorFn(UserTwice))(ones({2, 3}));
              }).what,
              StartsWith(absl::StrCat("vmap: no batching rule for 'user_twice' (level ", level,
                                      ") and the loop fallback is disabled")));
  SetVmapFallbackMode(VmapFallbackMode::kWarn);
  EXPECT_THAT(
      Catch([] { grad(TensorFn([](const Tensor& t) { return sum(UserTwice(t)); }))(X()); }).what,
      StartsWith("grad: no derivative formula for 'user_twice'"));
  EXPECT_THAT(Catch([] {
                jvp([](const TensorList& a) { return TensorList{UserTwice(a[0])}; }, {X()}, {X()});
              }).what,
              StartsWith("jvp: no forward-mode formula for 'user_twice'"));
  EXPECT_ERROR_STARTS(OpRegistry::Global().Get("no_such_op"),
                      "OpRegistry: no operator named 'no_such_op'");
}

TEST(ErrorCatalog, Levels) {
  Tensor escaped;
  vmap(TensorFn([&](const Tensor& t) {
    escaped = t;  // a BatchedTensor leaves its vmap through a captured variable
    return t;
  }))(ones({2, 3}));
  EXPECT_ERROR_STARTS(sin(escaped), "sin: met a BatchedTensor of vmap level ");
  EXPECT_THAT(Catch([&] { sin(escaped); }).what, HasSubstr("but that vmap has already returned"));
  // Nesting past the stack's depth.
  std::function<Tensor(const Tensor&, int)> nest = [&](const Tensor& t, int depth) -> Tensor {
    if (depth == 0) return t;
    return vmap(TensorFn([&, depth](const Tensor& u) { return nest(u, depth - 1); }))(t);
  };
  Caught deep = Catch([&] { nest(ones(Shape(LayerStack::kMaxDepth + 1, 1)), 65); });
  EXPECT_THAT(deep.message, StartsWith("vmap: cannot nest more than 64 transforms (level "));
  EXPECT_THAT(deep.stack, HasSubstr(") inside 48 more inside vmap (level "));
  EXPECT_THAT(Catch([] {
                vmap(TensorFn([](const Tensor& t) {
                  Trace([](const TensorList& a) { return a; }, {ones({1})});
                  return t;
                }))(X());
              }).what,
              StartsWith("jit: Trace must run with no transform active"));
}

TEST(ErrorCatalog, GradArgnums) {
  auto f = ScalarFn([](const TensorList& a) { return sum(a[0] * a[1]); });
  EXPECT_ERROR_STARTS(grad(f, {2})({X(), X()}),
                      "grad: argnums 2 is out of range for a function of 2 arguments "
                      "(expected -2 <= argnum < 2)");
  EXPECT_ERROR_STARTS(grad(f, {0, -2})({X(), X()}), "grad: argnums contains 0 twice");
  EXPECT_ERROR_STARTS(grad(f, {})({X(), X()}), "grad: argnums must name at least one argument");
}

TEST(ErrorCatalog, GradOutput) {
  EXPECT_THAT(Catch([] { grad(TensorFn([](const Tensor& t) { return t; }))(X()); }).what,
              StartsWith("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                         "got tensor with 1 dims. Maybe you wanted to use the vjp or jacrev APIs "
                         "instead?"));
}

TEST(ErrorCatalog, NonFloatInput) {
  const Tensor i = Ints({1, 2});
  const int64_t level = NextLevel();
  EXPECT_THAT(Catch([&] { grad(TensorFn([](const Tensor& t) { return sum(t); }))(i); }).what,
              StartsWith(absl::StrCat("grad: only floating point inputs can be differentiated, "
                                      "got argument 0 of dtype int64 (level ",
                                      level, ")")));
  EXPECT_THAT(Catch([&] { jvp([](const TensorList& a) { return a; }, {i}, {i}); }).what,
              StartsWith("jvp: only floating point primals can carry a tangent, got primal 0 of "
                         "dtype int64"));
  EXPECT_THAT(Catch([&] { linearize([](const TensorList& a) { return a; }, {i}); }).what,
              StartsWith("linearize: only floating point primals can be linearized"));
}

TEST(ErrorCatalog, VjpCotangents) {
  VjpResult r = vjp([](const TensorList& a) { return TensorList{sin(a[0])}; }, {X()});
  EXPECT_ERROR_STARTS(r.vjp_fn({ones({2})}),
                      "vjp: Mismatch in shape: grad_output[0] has a shape of [2] and "
                      "output[0] has a shape of [3].");
  EXPECT_ERROR_STARTS(r.vjp_fn({X(), X()}),
                      "vjp: vjp_fn expected 1 cotangents (one per output), got 2");
}

TEST(ErrorCatalog, JvpTangents) {
  auto f = TensorListFn([](const TensorList& a) { return a; });
  EXPECT_ERROR_STARTS(jvp(f, {X()}, {}),
                      "jvp: Expected primals and tangents to have the same length, got 1 "
                      "primals and 0 tangents");
  EXPECT_ERROR_STARTS(jvp(f, {X()}, {ones({2})}),
                      "jvp: tangent 0 has shape [2] but its primal has shape [3]");
  EXPECT_ERROR_STARTS(jvp(f, {X()}, {ones({3}, kFloat64)}),
                      "jvp: tangent 0 has dtype float64 but its primal has dtype float32");
}

TEST(ErrorCatalog, AutodiffInplace) {
  const Tensor captured = zeros({3});
  Caught c =
      Catch([&] { grad(TensorFn([&](const Tensor& t) { return sum(add_(captured, t)); }))(X()); });
  EXPECT_THAT(c.what, StartsWith("grad: in-place op 'add_' would write a value that carries a "
                                 "gradient at level "));
  EXPECT_THAT(
      Catch([] { grad(TensorFn([](const Tensor& t) { return sum(mul_(t, 2.0)); }))(X()); }).what,
      StartsWith("grad: in-place op 'mul_' on an input being differentiated or a view "
                 "of one (shape [3], level "));
  EXPECT_THAT(Catch([] {
                grad(TensorFn([](const Tensor& t) {
                  Tensor y = exp(t);
                  mul_(y, 2.0);  // exp's backward reads its output
                  return sum(y);
                }))(X());
              }).what,
              StartsWith("grad: output 0 of 'exp', which its backward needs, was modified by an "
                         "in-place operation after 'exp' ran"));
  EXPECT_THAT(Catch([] {
                grad(TensorFn([](const Tensor& t) {
                  Tensor y = t * 2.0;
                  mul_(select(y, 0, 1), 3.0);  // a write through a view of y
                  return sum(y * y);
                }))(X());
              }).what,
              StartsWith("grad: 'mul' got a tensor of shape [3] whose value was modified in place "
                         "through a view"));
  EXPECT_THAT(
      Catch([&] {
        jvp([&](const TensorList& a) { return TensorList{add_(captured, a[0])}; }, {X()}, {X()});
      }).what,
      StartsWith("jvp: in-place op 'add_' would write a value carrying a tangent at level "));
}

TEST(ErrorCatalog, Jacobians) {
  auto f = TensorFnOfList([](const TensorList& a) { return sin(a[0]) * a[1]; });
  EXPECT_ERROR_STARTS(jacrev(f, {2})({X(), X()}),
                      "jacrev: argnums 2 is out of range for a function of 2 arguments");
  EXPECT_ERROR_STARTS(jacfwd(f, {0, 0})({X(), X()}), "jacfwd: argnums contains 0 twice");
  EXPECT_ERROR_STARTS(jacfwd(f)({Ints({1, 2, 3}), X()}),
                      "jacfwd: only floating point inputs can be differentiated, got argument "
                      "0 of dtype int64");
  // hessian is jacfwd(jacrev(f)): its errors are theirs.
  EXPECT_ERROR_STARTS(hessian(f, {5})({X(), X()}), "jacfwd: argnums 5");
}

TEST(ErrorCatalog, Jit) {
  // Untraceable functions are not errors: they run eagerly.
  JitFunction reads =
      jit([](const TensorList& a) { return TensorList{a[0] * a[0].to_vector<float>()[0]}; });
  EXPECT_TENSOR_EQ(reads({X()})[0], X() * 0.5f);
  EXPECT_EQ(reads.stats().untraceable, 1);
  // A replay raises the eager error for the new inputs.
  JitFunction pick =
      jit([](const TensorList& a) { return TensorList{index_select(a[0], 0, a[1])}; });
  pick({X(), Ints({0})});
  EXPECT_ERROR_STARTS(pick({X(), Ints({7})}),
                      "index_select: index 7 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR_STARTS(pick({X(), Tensor()}), "jit: argument 1 is an undefined tensor");
  TraceResult t = Trace([](const TensorList& a) { return TensorList{sin(a[0])}; }, {X()});
  ASSERT_NE(t.program, nullptr);
  EXPECT_ERROR_STARTS(t.program->Run({X(), X()}),
                      "jit: the program was traced with 1 inputs but got 2");
}

TEST(ErrorCatalog, Functionalize) {
  const Tensor base = zeros({4});
  Caught c = Catch([&] {
    functionalize(TensorListFn([](const TensorList& a) {
      add_(a[0], 1.0);
      return TensorList{a[1]};
    }))({narrow(base, 0, 0, 2), narrow(base, 0, 2, 2)});
  });
  EXPECT_THAT(c.what, StartsWith("functionalize: an input of shape [2] was written in place and "
                                 "shares memory with another input of shape [2] (level "));
  EXPECT_THAT(Catch([] {
                functionalize(TensorFn([](const Tensor& t) {
                  Tensor e = expand(unsqueeze(t, 0), {2, 3});
                  return add_(e, 1.0);
                }))(X());
              }).what,
              StartsWith("add_: cannot write in place into a tensor whose elements overlap"));
  EXPECT_THAT(Catch([] {
                functionalize(TensorFn([](const Tensor& t) { return add_(t, 0.5); }))(Ints({1}));
              }).what,
              StartsWith("add_: result type float32 can't be cast to the desired output type "
                         "int64"));
}

// Functions whose rules are wrong, one way each.
struct NoBackward : Function<NoBackward> {
  static constexpr const char* name = "NoBackward";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
};

struct TwoGrads : Function<TwoGrads> {
  static constexpr const char* name = "TwoGrads";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0], g[0]}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {sum(t[0])}; }
};

struct OnceDiff : Function<OnceDiff> {
  static constexpr const char* name = "OnceDiff";
  static constexpr bool once_differentiable = true;
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

TEST(ErrorCatalog, FunctionBackward) {
  EXPECT_THAT(Catch([] {
                grad(TensorFn([](const Tensor& t) { return sum(NoBackward::apply(t)); }))(X());
              }).what,
              StartsWith("NoBackward: You must implement either the backward or vjp method for "
                         "your custom Function to use it with backward mode AD"));
  EXPECT_THAT(Catch([] {
                grad(TensorFn([](const Tensor& t) { return sum(TwoGrads::apply(t)); }))(X());
              }).what,
              StartsWith("TwoGrads: backward returned 2 gradients, expected 1 (one per forward "
                         "argument"));
  auto once = TensorFn([](const Tensor& t) { return sum(OnceDiff::apply(t)); });
  EXPECT_THAT(
      Catch([&] { grad(TensorFn([&](const Tensor& t) { return sum(grad(once)(t)); }))(X()); }).what,
      StartsWith("OnceDiff: trying to differentiate twice a function that was marked "
                 "once_differentiable"));
}

TEST(ErrorCatalog, FunctionJvp) {
  EXPECT_THAT(Catch([] {
                jvp([](const TensorList& a) { return TensorList{NoBackward::apply(a[0])}; }, {X()},
                    {X()});
              }).what,
              StartsWith("NoBackward: You must implement the jvp function for your custom "
                         "Function to use it with forward mode AD (jvp, jacfwd)"));
  EXPECT_THAT(Catch([] {
                jvp([](const TensorList& a) { return TensorList{TwoGrads::apply(a[0])}; }, {X()},
                    {X()});
              }).what,
              StartsWith("TwoGrads: jvp returned a result of shape [] for output 0 of shape [3]"));
}

struct BadOutDims : Function<BadOutDims> {
  static constexpr const char* name = "BadOutDims";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x) {
    return {x * 2.0, {in_dims[0], in_dims[0]}};
  }
};

struct BothVmapRules : Function<BothVmapRules> {
  static constexpr const char* name = "BothVmapRules";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x) {
    return {x * 2.0, {in_dims[0]}};
  }
};

TEST(ErrorCatalog, FunctionVmap) {
  const Tensor xs = ones({2, 3});
  EXPECT_THAT(
      Catch([&] { vmap(TensorFn([](const Tensor& t) { return NoBackward::apply(t); }))(xs); }).what,
      StartsWith("vmap: You tried to vmap over NoBackward, but it does not have vmap "
                 "support"));
  EXPECT_THAT(Catch([&] {
                vmap(TensorFn([](const Tensor& t) { return BothVmapRules::apply(t); }))(xs);
              }).what,
              StartsWith("vmap: You tried to vmap over BothVmapRules, but it has both "
                         "generate_vmap_rule=true and a vmap rule"));
  EXPECT_THAT(
      Catch([&] { vmap(TensorFn([](const Tensor& t) { return BadOutDims::apply(t); }))(xs); }).what,
      StartsWith("BadOutDims: the vmap rule returned an incompatible (outputs, out_dims) "
                 "pair: 1 outputs but out_dims [0, 0]"));
}

struct ReturnsInput : Function<ReturnsInput> {
  static constexpr const char* name = "ReturnsInput";
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0]}; }
};

struct ScaleInPlace : Function<ScaleInPlace> {
  static constexpr const char* name = "ScaleInPlace";
  static Tensor forward(const Tensor& x) { return mul_(x, 2.0); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.mark_dirty({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0] * 2.0}; }
};

// jvp reads saved_tensors()[0], but setup_context saved only for backward.
struct SavedForBackwardOnly : Function<SavedForBackwardOnly> {
  static constexpr const char* name = "SavedForBackwardOnly";
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

TEST(ErrorCatalog, FunctionCtx) {
  EXPECT_ERROR_STARTS(ReturnsInput::apply(X()),
                      "ReturnsInput: an input that has been returned as-is as output 0 is "
                      "being saved for backward. This is not supported");
  const int64_t level = NextLevel();
  EXPECT_THAT(
      Catch([] {
        grad(TensorFn([](const Tensor& t) { return sum(ScaleInPlace::apply(t)); }))(clone(X()));
      }).what,
      StartsWith(absl::StrCat("ScaleInPlace: forward modified argument 0 in place, an "
                              "input being differentiated at level ",
                              level, " (the caller's tensor); clone it first")));
  const int64_t jvp_level = NextLevel();
  Caught saved = Catch([] {
    jvp([](const TensorList& a) { return TensorList{SavedForBackwardOnly::apply(a[0])}; }, {X()},
        {X()});
  });
  EXPECT_THAT(saved.message, StartsWith("saved_tensors: index 0 is out of range, 0 tensors were "
                                        "saved (backward reads what setup_context passed to "
                                        "save_for_backward, jvp what it passed to "
                                        "save_for_forward)"));
  EXPECT_EQ(saved.stack, absl::StrCat(" (in jvp (level ", jvp_level, "))"));
  FunctionCtx ctx;
  ctx.state<int64_t>("k") = 1;
  EXPECT_ERROR_STARTS(ctx.state<double>("k"), "state: \"k\" holds a long, asked for a double");
}

struct CatalogMlp {
  Tensor w, b;
  double slope = 0.5;
};
FT_TREE(CatalogMlp, w, b, slope);

Tensor CatalogLoss(const CatalogMlp& p, const Tensor& x) { return sum(matmul(x, p.w) + p.b); }

TEST(ErrorCatalog, Tree) {
  const CatalogMlp p{ones({3, 2}), ones({2})};
  CatalogMlp other = p;
  other.slope = 2.0;
  EXPECT_ERROR_STARTS(tree_map([](const Tensor& a, const Tensor& b) { return a + b; }, p, other),
                      "tree_map: tree 1 differs from tree 0 at .slope: the double 0.5 vs the "
                      "double 2; tree 0: CatalogMlp{w: *, b: *, slope: 0.5}");
  EXPECT_ERROR_STARTS(jvp(&CatalogLoss, std::tuple{p, X()}, std::tuple{other, X()}),
                      "jvp: the tangents must have the structure of the primals; they "
                      "differ at .slope: the double 0.5 vs the double 2");
  const Tensor xs = ones({4, 3});
  EXPECT_ERROR_STARTS(vmap(&CatalogLoss, {TreeDims::Fields({{"w", 0}}), 0})(p, xs),
                      "vmap: in_dims Fields{w: 0} does not fit arg0: the fields named are not "
                      "the node's (CatalogMlp has w, b, slope)");
  EXPECT_ERROR_STARTS(tree_unflatten<Tensor>(tree_structure(p), tree_leaves(p)),
                      "tree_unflatten: at the root the structure holds CatalogMlp{w, b, slope} "
                      "where the type holds a Tensor");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(ErrorCatalog, NamedAxes) {
  const Tensor xs = ones({3, 2});
  VmapOptions named;
  named.axis_name = "i";
  EXPECT_ERROR_STARTS(psum(xs, "dp"), "psum: axis name 'dp' is not in effect (named axes in "
                                      "effect: none)");
  EXPECT_ERROR_STARTS(vmap(TensorFn([](const Tensor& x) { return psum(x, "dp"); }), named)(xs),
                      "psum: axis name 'dp' is not in effect (named axes in effect: 'i' (vmap, "
                      "3 members))");
  VmapOptions chunked = named;
  chunked.chunk_size = 2;
  EXPECT_ERROR_STARTS(vmap(TensorFn([](const Tensor& x) { return psum(x, "i"); }), chunked)(xs),
                      "vmap: chunk_size (2) cannot be combined with axis_name 'i'");
  EXPECT_ERROR_STARTS(
      vmap(TensorFn([](const Tensor& x) { return psum_scatter(x, "i", 0); }), named)(xs),
      "psum_scatter: dim 0 of the input (shape [2]) must have one entry per member of axis "
      "'i' (3)");
  EXPECT_ERROR_STARTS(
      vmap(TensorFn([](const Tensor& x) { return all_gather(x, "i", 3); }), named)(xs),
      "all_gather: dim 3 is out of range for a tensor of rank 1 (expected -2 <= dim < 2)");
  EXPECT_ERROR_STARTS(
      vmap(grad(TensorFn([](const Tensor& x) { return sum(pmax(x, "i")); })), named)(xs),
      "grad: no derivative formula for 'pmax'");
  VmapOptions shared = named;
  shared.in_dims = {std::nullopt, 0};
  auto centered = vmap(grad(ScalarFn([](const TensorList& a) {
                         Tensor l = sum(a[0] * a[1]);
                         return l - pmean(l, "i");
                       })),
                       shared);
  EXPECT_ERROR_STARTS(centered({ones({2}), xs}),
                      "grad: f's output varies over axis 'i' (each member of the axis has its "
                      "own), but it was computed through a collective over 'i'");
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_EQ(NamedAxes::depth(), 0);
}

TEST(ErrorCatalog, Processes) {
  EXPECT_ERROR_STARTS(dist::init_process_group(),
                      "init_process_group: no process group in the environment");
  std::vector<std::string> messages(2);
  dist::testing::RunOnThreads(2, [&](dist::ProcessGroup& g) {
    auto binding =
        dist::bind_axis("dp", std::shared_ptr<dist::ProcessGroup>(&g, [](dist::ProcessGroup*) {}));
    messages[static_cast<size_t>(g.rank())] =
        Catch([&] { psum(zeros({g.rank() == 0 ? 3 : 4}), "dp"); }).what;
  });
  for (const std::string& m : messages) {
    EXPECT_THAT(m, StartsWith("psum over axis 'dp': the processes disagree: rank "));
    EXPECT_THAT(m, HasSubstr("psum of a float32 tensor of shape [3] as its collective #0"));
    EXPECT_THAT(m, HasSubstr("psum of a float32 tensor of shape [4] as its collective #0"));
  }
  std::string stalled;
  dist::testing::RunOnThreads(
      2,
      [&](dist::ProcessGroup& g) {
        auto binding = dist::bind_axis(
            "dp", std::shared_ptr<dist::ProcessGroup>(&g, [](dist::ProcessGroup*) {}));
        if (g.rank() == 0) stalled = Catch([&] { psum(ones({3}), "dp"); }).what;
      },
      std::chrono::milliseconds(300));
  EXPECT_THAT(stalled, StartsWith("psum over axis 'dp' (rank 0 of 2, gloo): "));
  EXPECT_TRUE(LayerStack::empty());
}

// ---- The catalog and the tests are the same set of families.

// The ids of docs/errors.md's families: each "## `id` ..." heading.
std::vector<std::string> CatalogIds() {
  std::ifstream in("docs/errors.md");
  EXPECT_TRUE(in.good()) << "docs/errors.md is not in the test's runfiles";
  std::vector<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) != 0) continue;
    const size_t open = line.find('`'), close = line.find('`', open + 1);
    EXPECT_TRUE(open == 3 && close != std::string::npos)
        << "a family heading without an id: " << line;
    if (open == 3 && close != std::string::npos) ids.push_back(line.substr(4, close - 4));
  }
  return ids;
}

// TestName: "shape-mismatch" -> "ShapeMismatch".
std::string TestName(const std::string& id) {
  std::string name;
  bool upper = true;
  for (char ch : id) {
    if (ch == '-') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return name;
}

TEST(ErrorCatalog, Interop) {
  const Tensor tt = transpose(zeros({2, 3}), 0, 1);
  EXPECT_ERROR_STARTS(MapRowMajor<float>(tt),
                      "MapRowMajor: cannot map a float32 tensor of sizes [3, 2] and strides "
                      "[1, 3] as a row-major matrix: its rows are not contiguous (stride(1) "
                      "must be 1); use MapColMajor for a transposed tensor or MapStrided for "
                      "any layout");
  const Tensor f = zeros({2, 3});
  EXPECT_ERROR_STARTS(MapRowMajor<double>(f),
                      "MapRowMajor: expected a 2-D float64 tensor, got a 2-D float32 tensor of "
                      "sizes [2, 3] and strides [3, 1] (views never convert dtypes; ToEigen "
                      "copies)");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp");
  EXPECT_ERROR_STARTS(LoadNpy(dir + "/x.npy"), "LoadNpy: '" + dir +
                                                   "/x.npy': cannot open the file: No such "
                                                   "file or directory");
  {
    std::ofstream out(dir + "/ints.npy", std::ios::binary);
    const std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }";
    out << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size()) << '\0'
        << header << std::string(12, '\0');
  }
  EXPECT_ERROR_STARTS(LoadNpy(dir + "/ints.npy"),
                      "LoadNpy: '" + dir +
                          "/ints.npy': unsupported dtype '<u2' (an unsigned integer width ft "
                          "does not have: ft's one unsigned type is uint8; convert with "
                          "a.astype(np.int64)); ft reads bool ('|b1'), uint8 ('|u1'),");
  EXPECT_ERROR_STARTS(SaveNpy(dir + "/u.npy", Tensor()),
                      "SaveNpy: '" + dir + "/u.npy': the tensor is undefined");
}

TEST(ErrorCatalogDoc, EveryFamilyHasATestAndEveryTestAFamily) {
  std::set<std::string> tests;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    if (std::string(suite.name()) != "ErrorCatalog") continue;
    for (int j = 0; j < suite.total_test_count(); ++j) tests.insert(suite.GetTestInfo(j)->name());
  }
  const std::vector<std::string> ids = CatalogIds();
  EXPECT_GE(ids.size(), 20u);
  std::set<std::string> documented;
  for (const std::string& id : ids) {
    EXPECT_TRUE(documented.insert(TestName(id)).second) << "family `" << id << "` appears twice";
    EXPECT_TRUE(tests.count(TestName(id)))
        << "docs/errors.md's family `" << id << "` has no test ErrorCatalog." << TestName(id);
  }
  for (const std::string& t : tests) {
    EXPECT_TRUE(documented.count(t)) << "ErrorCatalog." << t << " is no family of docs/errors.md";
  }
}

// ---- The transform stack (NOTE: [Transform stack in errors]).

// A shape error of mm raised inside f, whatever transforms are around it.
Tensor BadMm(const Tensor& t) { return sum(mm(reshape(t, {1, 3}), ones({4, 5}))); }

TEST(TransformStack, VmapInsideGrad) {
  const int64_t level = NextLevel();  // grad's; the vmap inside takes the next one
  Caught c = Catch([] {
    grad(TensorFn([](const Tensor& x) {
      return sum(vmap(TensorFn([](const Tensor& r) { return BadMm(r); }))(reshape(x, {1, 3})));
    }))(X());
  });
  EXPECT_THAT(c.message, StartsWith("mm: size mismatch, got [1, 3] @ [4, 5]"));
  EXPECT_EQ(c.stack,
            absl::StrCat(" (in vmap (level ", level + 1, ") inside grad (level ", level, "))"));
  EXPECT_THAT(c.what, EndsWith(c.stack));
}

TEST(TransformStack, GradInsideVmap) {
  const int64_t level = NextLevel();
  Caught c = Catch([] { vmap(grad(TensorFn(BadMm)))(ones({2, 3})); });
  EXPECT_THAT(c.message, StartsWith("mm: size mismatch, got [1, 3] @ [4, 5]"));
  EXPECT_EQ(c.stack,
            absl::StrCat(" (in grad (level ", level + 1, ") inside vmap (level ", level, "))"));
}

TEST(TransformStack, VmapInsideVmapLevelsOneAndTwo) {
  const int64_t level = NextLevel();
  // A batching rule rejecting shapes: the logical shapes of one example, at both levels.
  Caught c = Catch([] {
    vmap(vmap(TensorListFn([](const TensorList& a) { return TensorList{matmul(a[0], a[1])}; })))(
        {ones({2, 2, 3}), ones({2, 2, 4})});
  });
  EXPECT_THAT(c.message, StartsWith("matmul: size mismatch, got [3] @ [4]"));
  EXPECT_EQ(c.stack,
            absl::StrCat(" (in vmap (level ", level + 1, ") inside vmap (level ", level, "))"));
  // The in_dims error of the inner vmap: its own level in its words, the outer in the stack.
  Caught inner = Catch([] {
    vmap(TensorFn([](const Tensor& t) {
      return vmap(TensorFn([](const Tensor& u) { return u; }), 1)(t);
    }))(ones({2, 3}));
  });
  EXPECT_THAT(inner.message,
              StartsWith("vmap: Got in_dim=1 for argument 0, but that input is a Tensor of "
                         "dimensionality 1"));
  EXPECT_THAT(inner.message, HasSubstr(absl::StrCat("(vmap level ", level + 3, ")")));
  EXPECT_EQ(inner.stack, absl::StrCat(" (in vmap (level ", level + 2, "))"));
}

TEST(TransformStack, JvpInsideVmap) {
  const int64_t level = NextLevel();
  // jvp misused inside vmap: the tangent's shape differs from its primal's.
  Caught c = Catch([] {
    vmap(TensorFn([](const Tensor& t) {
      return jvp([](const TensorList& a) { return a; }, {t}, {ones({2})}).tangents[0];
    }))(ones({2, 3}));
  });
  EXPECT_THAT(c.message, StartsWith("jvp: tangent 0 has shape [2] but its primal has shape [3]"));
  EXPECT_EQ(c.stack, absl::StrCat(" (in vmap (level ", level, "))"));
  // An op's error inside the jvp's function names both.
  Caught op = Catch([] {
    vmap(TensorFn([](const Tensor& t) {
      return jvp([](const TensorList& a) { return TensorList{BadMm(a[0])}; }, {t}, {t}).tangents[0];
    }))(ones({2, 3}));
  });
  EXPECT_EQ(op.stack,
            absl::StrCat(" (in jvp (level ", level + 2, ") inside vmap (level ", level + 1, "))"));
}

// A Function whose backward returns a gradient of the wrong shape.
struct WrongGradShape : Function<WrongGradShape> {
  static constexpr const char* name = "WrongGradShape";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {concat_twice(g[0])}; }
  static Tensor concat_twice(const Tensor& g) { return cat({g, g}, 0); }
};

TEST(TransformStack, CustomFunctionRuleInsideVmapOfGrad) {
  const int64_t level = NextLevel();
  Caught c = Catch([] {
    vmap(grad(TensorFn([](const Tensor& t) { return sum(WrongGradShape::apply(t)); })))(
        ones({2, 3}));
  });
  EXPECT_THAT(c.message, StartsWith("WrongGradShape: backward returned a result of shape [6] "
                                    "for argument 0 of shape [3]"));
  // The user's backward runs in grad's backward (its level popped), under the vmap.
  EXPECT_EQ(c.stack, absl::StrCat(" (in the backward of grad (level ", level + 1,
                                  ") inside vmap (level ", level, "))"));
}

TEST(TransformStack, FunctionalizeInsideVmap) {
  const int64_t level = NextLevel();
  Caught c = Catch([] {
    vmap(functionalize(TensorFn([](const Tensor& t) {
      Tensor buf = zeros({2});
      copy_(buf, t);  // [3] into [2]: the in-place kernels' shape error, per example
      return buf;
    })))(ones({4, 3}));
  });
  EXPECT_THAT(c.message, StartsWith("copy_: shapes [2] and [3] cannot be broadcast together"));
  EXPECT_EQ(c.stack, absl::StrCat(" (in functionalize (level ", level + 1, ") inside vmap (level ",
                                  level, "))"));
}

TEST(TransformStack, LaterVjpFnCall) {
  const int64_t level = NextLevel();
  VjpResult r =
      vjp([](const TensorList& a) { return TensorList{sum(WrongGradShape::apply(a[0]))}; }, {X()});
  Caught c = Catch([&] { r.vjp_fn({scalar_tensor(1.0f)}); });
  EXPECT_THAT(c.message, StartsWith("WrongGradShape: backward returned a result of shape [6]"));
  EXPECT_EQ(c.stack, absl::StrCat(" (in the backward of vjp (level ", level, "))"));
  // The same vjp_fn called later inside a vmap (as jacrev does) names that vmap too.
  const int64_t vmap_level = NextLevel();
  Caught batched = Catch(
      [&] { vmap(TensorFn([&](const Tensor& ct) { return r.vjp_fn({ct})[0]; }))(ones({2})); });
  EXPECT_EQ(batched.stack, absl::StrCat(" (in the backward of vjp (level ", level,
                                        ") inside vmap (level ", vmap_level, "))"));
}

TEST(TransformStack, PublicNamesOfTheLevels) {
  const int64_t level = NextLevel();
  Caught rev = Catch([] { jacrev([](const TensorList& a) { return BadMm(a[0]); })({X()}); });
  EXPECT_EQ(rev.stack, absl::StrCat(" (in jacrev (level ", level, "))"));
  // jacfwd is a vmap of a jvp over its basis; hessian is jacfwd of jacrev.
  const int64_t fwd = NextLevel();
  Caught f = Catch([] { jacfwd([](const TensorList& a) { return BadMm(a[0]); })({X()}); });
  EXPECT_EQ(f.stack,
            absl::StrCat(" (in jacfwd (level ", fwd + 1, ") inside vmap (level ", fwd, "))"));
  const int64_t h = NextLevel();
  Caught hess = Catch([] { hessian([](const TensorList& a) { return BadMm(a[0]); })({X()}); });
  EXPECT_EQ(hess.stack, absl::StrCat(" (in jacrev (level ", h + 2, ") inside jacfwd (level ", h + 1,
                                     ") inside vmap (level ", h, "))"));
  // Inside jit, the transforms it traces are named; a replay runs no transform.
  const int64_t j = NextLevel();
  Caught traced = Catch([] {
    jit([](const TensorList& a) { return TensorList{vmap(TensorFn(BadMm))(a[0])}; })(
        {ones({2, 3})});
  });
  EXPECT_EQ(traced.stack, absl::StrCat(" (in vmap (level ", j, "))"));
}

}  // namespace
}  // namespace ft
