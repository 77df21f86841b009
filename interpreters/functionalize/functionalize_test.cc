// Tests for ft::functionalize on its own: every in-place and view op against the eager
// program (the same code run without functionalize, and its out-of-place twin), write-back
// of inputs, both remove modes, errors, and random programs of writes through views.
// A recording BaseCallObserver checks the transform's claim: no in-place base kernel runs on
// a tensor made inside the function, and inputs are written back with one copy_ each.
#include "interpreters/functionalize/functionalize.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "interpreters/functionalize/random_program.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// InPlaceRecorder records the in-place base kernels that run while it is installed.
class InPlaceRecorder : public BaseCallObserver {
 public:
  struct Write {
    std::string op;
    Storage storage;
  };
  ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
    if (const std::optional<int> m = op.schema().mutated_arg) {
      writes.push_back(Write{op.name(), args[static_cast<size_t>(*m)].tensor().storage()});
    }
    ++calls;
    return op.CallBaseKernel(args);
  }
  std::vector<Write> writes;
  int calls = 0;
};

Tensor Seq(IntArrayRef shape, DType dtype = kFloat64) {
  return reshape(arange(0.0, static_cast<double>(Numel(shape)), 1.0, dtype), shape) * 0.5 + 1.0;
}

using Fn = std::function<Tensor(const Tensor&)>;

// ExpectMatchesEager runs f eagerly on a copy of x and under functionalize (both modes) on
// another copy: same output, same final input, and no in-place kernel but one copy_ into
// the input when f writes it.
void ExpectMatchesEager(const Fn& f, const Tensor& x, const std::string& what) {
  SCOPED_TRACE(what);
  const Tensor x_eager = clone(x);
  const int64_t version = x_eager.version();
  const Tensor eager = clone(f(x_eager));
  const bool input_written = x_eager.version() != version;
  for (FunctionalizeRemove mode :
       {FunctionalizeRemove::kMutations, FunctionalizeRemove::kMutationsAndViews}) {
    SCOPED_TRACE(FunctionalizeRemoveName(mode));
    const Tensor x_func = clone(x);
    InPlaceRecorder recorder;
    Tensor out;
    {
      BaseCallObserverScope observe(&recorder);
      out = functionalize(f, mode)(x_func);
    }
    EXPECT_TENSOR_EQ(out, eager);
    EXPECT_TENSOR_EQ(x_func, x_eager);
    ASSERT_EQ(recorder.writes.size(), input_written ? 1u : 0u);
    if (input_written) {
      EXPECT_EQ(recorder.writes[0].op, "copy_");
      EXPECT_TRUE(recorder.writes[0].storage.is_same(x_func.storage()));
    }
    if (mode == FunctionalizeRemove::kMutationsAndViews) {
      EXPECT_FALSE(out.storage().is_same(x_func.storage()));
    }
    EXPECT_TRUE(LayerStack::empty());
  }
}

// Every built-in in-place op has its out-of-place rule (an op added without one fails here;
// the view ops are checked by //tests:transforms_sweep_test, which runs every op).
TEST(Functionalize, EveryBuiltinInPlaceOpHasARule) {
  RegisterFunctionalizeRules();
  OpRegistry& registry = OpRegistry::Global();
  std::vector<std::string> missing;
  int inplace = 0;
  for (const Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op) || !op->schema().mutated_arg) continue;
    ++inplace;
    if (!op->has_rule(TransformType::kFunctionalize)) missing.push_back(op->name());
  }
  EXPECT_GE(inplace, 9);
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
}

// A user's in-place op, registered without a functionalize rule.
Tensor DoubleInPlaceKernel(const Tensor& self) { return mul_(self, 2.0); }

TEST(Functionalize, AUsersInPlaceOpWithoutARuleIsAnErrorOnTensorsItOwns) {
  static const bool registered = [] {
    RegisterAllOps();
    RegisterOp<&DoubleInPlaceKernel>(OpRegistry::Global(), "test_double_", {"self"},
                                     {.mutated_arg = 0});
    return true;
  }();
  ASSERT_TRUE(registered);
  auto f = functionalize(Fn([](const Tensor& x) {
    Tensor b = clone(x);
    Call<&DoubleInPlaceKernel>(b);
    return b;
  }));
  EXPECT_FT_ERROR(f(Seq({2})), "the in-place op 'test_double_' has no functionalize rule");
  EXPECT_TRUE(LayerStack::empty());
  // On a tensor functionalize does not own, it runs as it is.
  Tensor captured = Seq({2});
  functionalize(Fn([&captured](const Tensor& x) {
    Call<&DoubleInPlaceKernel>(captured);
    return x;
  }))(Seq({2}));
  EXPECT_TENSOR_EQ(captured, Seq({2}) * 2.0);
}

// Every built-in in-place op on buffers the function makes.
Tensor EveryInPlaceOp(const Tensor& x) {
  Tensor buf = zeros({2, 3}, kFloat64);
  add_(buf, x);
  mul_(buf, x);
  sub_(buf, 0.25);
  div_(buf, x + 1.0);
  clamp_(buf, 0.5, 3.0);
  exp_(buf);
  Tensor other = ones({3}, kFloat64);
  copy_(other, select(buf, 0, 1));  // a row into a buffer
  fill_(select(buf, 0, 0), 2.5);
  Tensor z = empty({2, 3}, kFloat64);
  zero_(z);
  return buf + other + z;
}

TEST(Functionalize, InPlaceOpsOnABufferMadeInside) {
  const Tensor x = Seq({2, 3});
  ExpectMatchesEager(&EveryInPlaceOp, x, "arithmetic");
  // The out-of-place twin, computed independently.
  Tensor buf = exp(clamp(((zeros({2, 3}, kFloat64) + x) * x - 0.25) / (x + 1.0), 0.5, 3.0));
  const Tensor other = select(buf, 0, 1);
  const Tensor expected = cat({full({1, 3}, 2.5, kFloat64), narrow(buf, 0, 1, 1)}, 0) + other;
  EXPECT_TENSOR_NEAR(functionalize(Fn(&EveryInPlaceOp))(x), expected, 1e-12);
}

TEST(Functionalize, WritesToInputsAreWrittenBackOnce) {
  ExpectMatchesEager(
      [](const Tensor& x) {
        add_(x, 1.0);
        mul_(x, 2.0);
        return sum(x);
      },
      Seq({4}), "whole input");
  ExpectMatchesEager(
      [](const Tensor& x) {
        fill_(select(x, 1, 2), -1.0);
        return x * 1.0;
      },
      Seq({2, 3}), "through a view");
  ExpectMatchesEager([](const Tensor& x) { return x * 3.0; }, Seq({3}), "not written");
}

TEST(Functionalize, AWriteThroughAViewIsSeenByTheBaseAndEveryOtherView) {
  const Tensor x = Seq({3, 4});
  ExpectMatchesEager(
      [](const Tensor& x) {
        Tensor b = clone(x);
        Tensor tr = transpose(b, 0, 1);       // [4, 3]
        Tensor row = select(b, 0, 1);          // [4]
        Tensor col = select(tr, 1, 2);         // [4]: b[2, :]
        mul_(row, 10.0);
        Tensor seen_by_tr = tr * 1.0;          // must see the write to row
        add_(col, select(tr, 1, 1));           // b[2] += b[1] (already x10)
        Tensor d = diagonal(b);
        sub_(d, 100.0);
        return cat({reshape(b, {12}), reshape(seen_by_tr, {12}), row, col, d}, 0);
      },
      x, "views of views");
}

TEST(Functionalize, EveryViewOpCanBeWrittenThrough) {
  const Tensor x = Seq({2, 3, 4});
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> views = {
      {"reshape", [](const Tensor& b) { return reshape(b, {6, 4}); }},
      {"view", [](const Tensor& b) { return view(b, {2, 12}); }},
      {"flatten", [](const Tensor& b) { return flatten(b, 1, 2); }},
      {"unflatten", [](const Tensor& b) { return unflatten(b, 2, {2, 2}); }},
      {"expand", [](const Tensor& b) { return expand(b, {1, 2, 3, 4}); }},
      {"unsqueeze", [](const Tensor& b) { return unsqueeze(b, 1); }},
      {"squeeze", [](const Tensor& b) { return squeeze(unsqueeze(b, 0)); }},
      {"squeeze_dim", [](const Tensor& b) { return squeeze_dim(unsqueeze(b, 2), 2); }},
      {"squeeze_dims", [](const Tensor& b) { return squeeze_dims(unsqueeze(b, 3), {3}); }},
      {"movedim", [](const Tensor& b) { return movedim(b, {0, 2}, {2, 0}); }},
      {"permute", [](const Tensor& b) { return permute(b, {2, 0, 1}); }},
      {"transpose", [](const Tensor& b) { return transpose(b, 0, 2); }},
      {"t", [](const Tensor& b) { return t(select(b, 0, 1)); }},
      {"select", [](const Tensor& b) { return select(b, 2, -1); }},
      {"narrow", [](const Tensor& b) { return narrow(b, 1, -2, 2); }},
      {"slice", [](const Tensor& b) { return slice(b, 2, 1, std::nullopt, 2); }},
      {"diagonal", [](const Tensor& b) { return diagonal(b, 1, 1, 2); }},
      {"contiguous", [](const Tensor& b) { return contiguous(b); }},
      {"to", [](const Tensor& b) { return to(b, kFloat64); }},
      {"split", [](const Tensor& b) { return split(b, 2, 2)[1]; }},
      {"split_with_sizes", [](const Tensor& b) { return split_with_sizes(b, {1, 3}, 2)[1]; }},
      {"chunk", [](const Tensor& b) { return chunk(b, 2, 1)[1]; }},
      {"a non-view reshape", [](const Tensor& b) { return reshape(transpose(b, 0, 1), {24}); }},
  };
  for (const auto& [name, make_view] : views) {
    ExpectMatchesEager(
        [make_view = make_view](const Tensor& x) {
          Tensor b = clone(x);
          Tensor v = make_view(b);
          mul_(v, -2.0);
          add_(v, 0.5);
          return cat({reshape(b, {24}), reshape(v * 1.0, {v.numel()})}, 0);
        },
        x, name + " of a buffer");
    ExpectMatchesEager(
        [make_view = make_view](const Tensor& x) {
          fill_(make_view(x), 7.0);
          return x + 0.0;
        },
        x, name + " of the input");
  }
}

TEST(Functionalize, WhetherAnOpViewsIsDecidedByTheEagerLayout) {
  // After the write, v's value one level down is a new contiguous tensor, but eagerly v is
  // still a transposed view: reshape copies it, so the fill must not reach b. Contiguous of
  // it copies too; reshape of b itself views.
  ExpectMatchesEager(
      [](const Tensor& x) {
        Tensor b = clone(x);
        Tensor v = transpose(b, 0, 1);
        mul_(v, 2.0);
        Tensor copy = reshape(v, {-1});
        fill_(copy, 0.0);
        Tensor also_copy = contiguous(v);
        add_(also_copy, 100.0);
        Tensor flat = reshape(b, {-1});
        sub_(flat, 1.0);
        return cat({reshape(b, {-1}), copy, reshape(also_copy, {-1}), flat}, 0);
      },
      Seq({2, 3}), "reshape of a written transposed view");
  // view of a geometry that allows none is the eager error, even once the value below is
  // a contiguous tensor.
  auto f = functionalize(Fn([](const Tensor& x) {
    Tensor v = transpose(clone(x), 0, 1);
    mul_(v, 2.0);
    return view(v, {-1});
  }));
  EXPECT_FT_ERROR(f(Seq({2, 3})), "view: size is not compatible");
}

TEST(Functionalize, ViewsOfInputsStayViewsUnlessViewsAreRemoved) {
  const Tensor x = Seq({2, 3});
  auto f = [](const Tensor& x) {
    add_(x, 1.0);
    return transpose(x, 0, 1);
  };
  Tensor a = clone(x);
  Tensor out = functionalize(Fn(f))(a);
  EXPECT_TRUE(out.storage().is_same(a.storage()));  // a view of the caller's tensor
  EXPECT_TENSOR_EQ(a, x + 1.0);
  fill_(out, 0.0);
  EXPECT_TENSOR_EQ(a, zeros({2, 3}, kFloat64));  // writes through it reach the input
  // f returning its input returns the caller's very tensor.
  Tensor b = clone(x);
  EXPECT_TRUE(functionalize(Fn([](const Tensor& x) { return mul_(x, 2.0); }))(b).is_same(b));
  // kMutationsAndViews: nothing an output holds is the input's memory.
  Tensor c = clone(x);
  Tensor copied = functionalize(Fn(f), FunctionalizeRemove::kMutationsAndViews)(c);
  EXPECT_FALSE(copied.storage().is_same(c.storage()));
  EXPECT_TENSOR_EQ(copied, transpose(x + 1.0, 0, 1));
  EXPECT_TENSOR_EQ(c, x + 1.0);
  Tensor d = clone(x);
  Tensor same = functionalize(Fn([](const Tensor& x) { return x; }),
                              FunctionalizeRemove::kMutationsAndViews)(d);
  EXPECT_FALSE(same.storage().is_same(d.storage()));
  EXPECT_TENSOR_EQ(same, x);
}

TEST(Functionalize, ViewValuesAreCopiesWhenViewsAreRemoved) {
  // Under kMutationsAndViews no value one level down aliases another: every view op's
  // result is followed by a copy (a clone) of it.
  const Tensor x = Seq({3, 3});
  std::vector<std::string> ops;
  struct Names : BaseCallObserver {
    std::vector<std::string>* ops;
    ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
      ops->push_back(op.name());
      return op.CallBaseKernel(args);
    }
  } names;
  names.ops = &ops;
  {
    BaseCallObserverScope observe(&names);
    functionalize(Fn([](const Tensor& x) { return sum(select(transpose(x, 0, 1), 0, 1)); }),
                  FunctionalizeRemove::kMutationsAndViews)(x);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"transpose", "clone", "select", "clone", "sum"}));
}

TEST(Functionalize, CapturedTensorsAreWrittenAsEagerly) {
  Tensor captured = zeros({3}, kFloat64);
  const Tensor x = Seq({3});
  Tensor out = functionalize(Fn([&captured](const Tensor& x) {
    add_(captured, x);  // not functionalize's: written in place
    Tensor v = select(captured, 0, 0);
    mul_(v, 2.0);       // a view of it is not functionalize's either
    return captured * 1.0;
  }))(x);
  const Tensor expected = tensor({2.0, 1.5, 2.0});
  EXPECT_TENSOR_EQ(captured, expected);
  EXPECT_TENSOR_EQ(out, expected);
}

TEST(Functionalize, TheSameTensorTwiceIsOneTensor) {
  Tensor a = Seq({3});
  auto f = functionalize(std::function<TensorList(const TensorList&)>([](const TensorList& xs) {
    add_(xs[0], 1.0);
    return TensorList{xs[1] * 1.0};  // sees the write to xs[0]
  }));
  const Tensor before = clone(a);
  TensorList out = f({a, a});
  EXPECT_TENSOR_EQ(out[0], before + 1.0);
  EXPECT_TENSOR_EQ(a, before + 1.0);
}

TEST(Functionalize, Errors) {
  // Writing an input that shares memory with another input.
  Tensor a = Seq({2, 3});
  auto two = functionalize(std::function<TensorList(const TensorList&)>([](const TensorList& xs) {
    add_(xs[0], 1.0);
    return TensorList{xs[1]};
  }));
  const Tensor before = clone(a);
  EXPECT_FT_ERROR(two({a, select(a, 0, 0)}), "shares memory with another input");
  EXPECT_TENSOR_EQ(a, before);  // nothing was written
  // Writes through a broadcasting expand, as eagerly.
  auto broadcast = functionalize(Fn([](const Tensor& x) {
    Tensor b = clone(x);
    Tensor e = expand(b, {4, 3});
    add_(e, 1.0);
    return b;
  }));
  EXPECT_FT_ERROR(broadcast(Seq({1, 3})),
                  "add_: cannot write in place into a tensor whose elements overlap (shape "
                  "[4, 3], strides [0, 1]: dim 0 is broadcast)");
  // A row of it no longer overlaps, but writing it would write every row: refused too (a
  // documented difference: eagerly, the write reaches the one row of the base).
  auto row_of_broadcast = functionalize(Fn([](const Tensor& x) {
    Tensor b = clone(x);
    add_(select(expand(b, {4, 3}), 0, 2), 1.0);
    return b;
  }));
  EXPECT_FT_ERROR(row_of_broadcast(Seq({1, 3})), "add_: cannot write in place into this view");
  EXPECT_FT_ERROR(row_of_broadcast(Seq({1, 3})), "broadcasting expand");
  // An input whose elements overlap, as eagerly.
  auto writes_input = functionalize(Fn([](const Tensor& x) { return add_(x, 1.0); }));
  EXPECT_FT_ERROR(writes_input(expand(Seq({1, 3}), {2, 3})),
                  "add_: cannot write in place into a tensor whose elements overlap");
  // The in-place kernels' own checks.
  auto int_buffer = functionalize(Fn([](const Tensor& x) {
    Tensor b = zeros({3}, kInt64);
    add_(b, x);
    return b;
  }));
  EXPECT_FT_ERROR(int_buffer(Seq({3})),
                  "add_: result type float64 can't be cast to the desired output type int64");
  auto broadcast_self = functionalize(Fn([](const Tensor& x) {
    Tensor b = zeros({3}, kFloat64);
    add_(b, x);
    return b;
  }));
  EXPECT_FT_ERROR(broadcast_self(Seq({2, 3})),
                  "add_: output with shape [3] doesn't match the broadcast shape [2, 3]");
  auto bad_copy = functionalize(Fn([](const Tensor& x) {
    Tensor b = zeros({3}, kFloat64);
    copy_(b, x);
    return b;
  }));
  EXPECT_FT_ERROR(bad_copy(Seq({2})), "copy_: shapes [3] and [2] cannot be broadcast");
  EXPECT_FT_ERROR(bad_copy(Seq({2, 3})), "copy_: source of shape [2, 3] cannot be broadcast");
  // An exception inside f: the stack is balanced and no input is written.
  Tensor c = Seq({3});
  auto throws = functionalize(Fn([](const Tensor& x) -> Tensor {
    add_(x, 1.0);
    ThrowError("thrown by f");
  }));
  EXPECT_FT_ERROR(throws(c), "thrown by f");
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_TENSOR_EQ(c, Seq({3}));
}

TEST(Functionalize, IntegerAndBoolBuffersAndDTypeCasts) {
  ExpectMatchesEager(
      [](const Tensor& x) {
        Tensor i = zeros({3}, kInt64);
        add_(i, arange(3));
        fill_(select(i, 0, 2), 9);
        Tensor f32 = zeros({3}, kFloat32);
        add_(f32, x);   // float64 into float32: computed in float64, cast
        copy_(f32, i);  // int64 into float32
        Tensor flags = zeros({3}, kBool);
        copy_(flags, gt(x, 1.6));
        return to(f32, kFloat64) + to(i, kFloat64) + to(flags, kFloat64);
      },
      Seq({3}), "dtypes");
}

TEST(Functionalize, SizeZeroAndRankZero) {
  ExpectMatchesEager(
      [](const Tensor& x) {
        Tensor e = zeros({0, 3}, kFloat64);
        add_(e, 1.0);
        Tensor s = scalar_tensor(2.0, kFloat64);
        mul_(s, sum(x));
        Tensor v = narrow(x, 0, 1, 0);  // an empty view of the input
        fill_(v, 3.0);
        return s + sum(e);
      },
      Seq({4}), "empty and scalar");
}

TEST(Functionalize, AWrapperThatEscapesBehavesLikeItsValue) {
  Tensor escaped;
  Tensor view;
  functionalize(Fn([&](const Tensor& x) {
    escaped = clone(x);
    view = select(escaped, 0, 0);
    mul_(view, 3.0);  // escaped is stale when the call returns
    return x;
  }))(Seq({2}));
  EXPECT_EQ(escaped.kind(), TensorKind::kFunctional);
  EXPECT_TENSOR_EQ(escaped + 0.0, tensor({3.0, 1.5}));
  EXPECT_TENSOR_EQ(view + 0.0, scalar_tensor(3.0, kFloat64));
}

TEST(Functionalize, PrintsItsWrappersAndItsLevel) {
  std::string repr, stack;
  functionalize(Fn([&](const Tensor& x) {
    Tensor b = clone(x);
    add_(select(b, 0, 1), 1.0);
    repr = b.impl()->WrapperRepr();
    stack = LayerStack::DebugString();
    return b;
  }))(tensor({1.0, 2.0}));
  EXPECT_NE(repr.find("FunctionalTensor(lvl="), std::string::npos) << repr;
  EXPECT_NE(repr.find("3."), std::string::npos) << repr;  // the synced value
  EXPECT_NE(stack.find("Functionalize(level="), std::string::npos) << stack;
  EXPECT_NE(stack.find("remove=mutations)"), std::string::npos) << stack;
}

TEST(Functionalize, NestsWithItself) {
  ExpectMatchesEager(
      [](const Tensor& x) {
        Tensor b = clone(x);
        Tensor inner = functionalize(Fn([](const Tensor& y) {
          mul_(select(y, 0, 0), 5.0);
          return y + 1.0;
        }))(b);
        add_(b, inner);
        return b;
      },
      Seq({3}), "functionalize(functionalize)");
}

TEST(Functionalize, RandomProgramsOfWritesThroughViewsMatchEager) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const testing::RandomProgram program(seed);
    const Tensor x = Seq({3, 4});
    Tensor x_eager = clone(x);
    const TensorList eager = program.Run(x_eager);
    for (FunctionalizeRemove mode :
         {FunctionalizeRemove::kMutations, FunctionalizeRemove::kMutationsAndViews}) {
      Tensor x_func = clone(x);
      InPlaceRecorder recorder;
      TensorList got;
      {
        BaseCallObserverScope observe(&recorder);
        got = functionalize(std::function<TensorList(const TensorList&)>(
                                [&program](const TensorList& a) { return program.Run(a[0]); }),
                            mode)({x_func});
      }
      ASSERT_EQ(got.size(), eager.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(testing::TensorEqual(got[i], eager[i])) << "output " << i;
      }
      ASSERT_TRUE(testing::TensorEqual(x_func, x_eager));
      // At most the one write-back, into the caller's tensor.
      ASSERT_LE(recorder.writes.size(), 1u);
      for (const auto& w : recorder.writes) EXPECT_TRUE(w.storage.is_same(x_func.storage()));
    }
  }
}

}  // namespace
}  // namespace ft
