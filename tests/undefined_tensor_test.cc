// An undefined (default-constructed) ft::Tensor given to, or returned to, every transform and
// a custom Function: an ft::Error naming the transform or the Function, the role and the
// position, never a crash; where torch gives "None" a meaning (a backward's or a jvp's
// missing result: zero) that meaning. The layer stack is balanced after every error. (The
// ops and metadata accessors: dispatch/interpreter_test.cc and tensor/tensor_test.cc.)
#include <functional>
#include <tuple>
#include <utility>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

const char kUndefined[] = "is an undefined tensor (a default-constructed ft::Tensor)";

void ExpectError(const std::function<void()>& f, const std::string& fragment) {
  EXPECT_FT_ERROR(f(), fragment);
  EXPECT_TRUE(LayerStack::empty());
}

TEST(UndefinedTensors, TransformInputsAndOutputsAreNamedErrors) {
  const Tensor u, x = ones({3});
  const auto twice = TensorFn([](const Tensor& t) { return t * 2.0; });
  const auto returns_undefined = TensorFn([](const Tensor&) { return Tensor(); });
  const auto total = ScalarFn([](const TensorList& a) { return sum(a[0]); });
  const auto total_undefined = ScalarFn([](const TensorList&) { return Tensor(); });
  const auto copy = TensorListFn([](const TensorList& a) { return TensorList{a[0] * 1.0}; });
  const auto list_undefined = TensorListFn([](const TensorList&) { return TensorList{Tensor()}; });
  const std::string in = std::string("argument 0 ") + kUndefined;
  const std::string out = std::string("f's output 0 ") + kUndefined;

  ExpectError([&] { vmap(twice)(u); }, "vmap: " + in);
  ExpectError([&] { vmap(returns_undefined)(ones({2, 3})); }, "vmap: " + out);
  ExpectError([&] { grad(total)({u}); }, "grad: " + in);
  ExpectError([&] { grad(total_undefined)({x}); }, "grad: " + out);
  ExpectError([&] { vjp(copy, {u}); }, "vjp: " + in);
  ExpectError([&] { vjp(list_undefined, {x}); }, "vjp: " + out);
  ExpectError([&] { vjp(copy, {x}).vjp_fn({Tensor()}); },
              std::string("vjp_fn: cotangent 0 ") + kUndefined);
  ExpectError([&] { jvp(copy, {u}, {x}); }, "jvp: primal and tangent 0 must both be defined");
  ExpectError([&] { jvp(copy, {x}, {u}); }, "jvp: primal and tangent 0 must both be defined");
  ExpectError([&] { jvp(list_undefined, {x}, {x}); }, "jvp: " + out);
  ExpectError([&] { linearize(copy, {u}); }, "linearize: " + in);
  ExpectError([&] { jacrev(total)({u}); }, "jacrev: " + in);
  ExpectError([&] { jacrev(total_undefined)({x}); }, "jacrev: " + out);
  ExpectError([&] { jacfwd(total)({u}); }, "jacfwd: " + in);
  ExpectError([&] { jacfwd(total_undefined)({x}); }, "jacfwd: " + out);
  ExpectError([&] { hessian(total)({u}); }, "hessian: " + in);
  ExpectError([&] { hessian(total_undefined)({x}); }, "hessian: " + out);
  ExpectError([&] { jit(copy)({u}); }, "jit: " + in);
  ExpectError([&] { jit(list_undefined)({x}); }, "jit: " + out);
  ExpectError([&] { functionalize(twice)(u); }, "functionalize: " + in);
  ExpectError([&] { functionalize(returns_undefined)(x); }, "functionalize: " + out);
  // Inside a transform, an undefined tensor reaching an op names the op.
  ExpectError([&] { vmap(TensorFn([](const Tensor& t) { return t + Tensor(); }))(ones({2, 3})); },
              std::string("add: argument 'other' ") + kUndefined);
  // A second element of a list.
  ExpectError([&] { vmap(TensorListFn([](const TensorList& a) { return a; }))({x, u}); },
              std::string("vmap: argument 1 ") + kUndefined);
  EXPECT_EQ(ToString(u), "tensor(undefined)");
}

struct ForwardReturnsUndefined : Function<ForwardReturnsUndefined> {
  static constexpr const char* name = "ForwardReturnsUndefined";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor&) { return Tensor(); }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0]}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {t[0]}; }
};

// Its backward and jvp return "no result" (zero, as torch's None), its vmap rule an undefined
// output (an error).
struct RulesReturnUndefined : Function<RulesReturnUndefined> {
  static constexpr const char* name = "RulesReturnUndefined";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList&) { return {Tensor()}; }
  static TensorList jvp(FunctionCtx&, const TensorList&) { return {Tensor()}; }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims&, const Tensor&) {
    return {Tensor(), {0}};
  }
};

TEST(UndefinedTensors, CustomFunctionArgumentsAndResults) {
  const Tensor x = ones({3});
  const std::string forward =
      std::string("ForwardReturnsUndefined: forward's output 0 ") + kUndefined;
  ExpectError([&] { ForwardReturnsUndefined::apply(x); }, forward);
  ExpectError(
      [&] {
        grad(ScalarFn([](const TensorList& a) { return sum(ForwardReturnsUndefined::apply(a[0])); }))(
            {x});
      },
      forward);
  ExpectError(
      [&] { vmap(TensorFn([](const Tensor& a) { return ForwardReturnsUndefined::apply(a); }))(
                ones({2, 3})); },
      forward);
  ExpectError(
      [&] {
        jvp(TensorListFn([](const TensorList& a) {
              return TensorList{ForwardReturnsUndefined::apply(a[0])};
            }),
            {x}, {x});
      },
      forward);
  ExpectError(
      [&] { functionalize(TensorFn([](const Tensor& a) { return ForwardReturnsUndefined::apply(a); }))(x); },
      forward);
  ExpectError([&] { RulesReturnUndefined::apply(Tensor()); },
              std::string("RulesReturnUndefined: argument 0 ") + kUndefined);
  ExpectError(
      [&] { vmap(TensorFn([](const Tensor& a) { return RulesReturnUndefined::apply(a); }))(
                ones({2, 3})); },
      std::string("RulesReturnUndefined: the vmap rule's output 0 ") + kUndefined);
  // An undefined backward or jvp result is "no gradient" / "zero tangent".
  const Tensor g = grad(ScalarFn([](const TensorList& a) {
                     return sum(RulesReturnUndefined::apply(a[0]));
                   }))({x})[0];
  EXPECT_TENSOR_EQ(g, zeros({3}));
  const JvpResult r = jvp(TensorListFn([](const TensorList& a) {
                            return TensorList{RulesReturnUndefined::apply(a[0])};
                          }),
                          {x}, {x});
  EXPECT_TENSOR_EQ(r.outputs[0], x * 2.0);
  EXPECT_TENSOR_EQ(r.tangents[0], zeros({3}));
}

}  // namespace
}  // namespace ft
