// Proves the walk of one op through the layer stack with a test-only recording interpreter:
// it sees every op with its arguments, lowers, and the stack is balanced after exceptions.
#include "dispatch/interpreter.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/dispatch.h"
#include "dispatch/higher_order_operator.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// RecordingInterpreter logs "name(args)" for every op it processes, then lowers and passes
// the op to the levels below unchanged.
class RecordingInterpreter : public Interpreter {
 public:
  RecordingInterpreter(std::vector<std::string>* log, std::string tag)
      : Interpreter(TransformType::kFunctionalize, LayerStack::NewLevel()),
        log_(log),
        tag_(std::move(tag)) {}

  ValueList Process(const Operator& op, ValueList& args) override {
    std::string entry = tag_ + ":" + op.name() + "(";
    for (size_t i = 0; i < args.size(); ++i) entry += (i ? ", " : "") + args[i].ToString();
    log_->push_back(entry + ")");
    if (throw_on_ == op.name()) ThrowError(op.name(), ": thrown by the recording interpreter");
    LowerGuard lower(this);
    EXPECT_NE(LayerStack::Top(), this);
    return DispatchBoxed(op, args);
  }

  std::string throw_on_;

 private:
  std::vector<std::string>* log_;
  std::string tag_;
};

TEST(Interpreter, AliasesInputSeesViewsOfRegisteredInputs) {
  std::vector<std::string> log;
  RecordingInterpreter interp(&log, "t");
  Tensor input = ones({2, 3}), other = ones({2, 3});
  interp.AddInputStorage(input.data_storage());
  EXPECT_TRUE(interp.AliasesInput(input));
  EXPECT_TRUE(interp.AliasesInput(select(input, 0, 1)));   // a view shares the storage
  EXPECT_FALSE(interp.AliasesInput(other));
  EXPECT_FALSE(interp.AliasesInput(clone(input)));         // a copy does not
}

TEST(LayerStack, EmptyStackRunsKernelsWithoutInterpreters) {
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_EQ(LayerStack::Top(), nullptr);
  Tensor y = sin(zeros({2}));
  EXPECT_TENSOR_EQ(y, zeros({2}));
}

TEST(LayerStack, RecordingInterpreterSeesEveryOpWithArguments) {
  std::vector<std::string> log;
  RecordingInterpreter rec(&log, "R");
  Tensor x = tensor({1.0, 2.0});
  Tensor y;
  {
    InterpreterScope scope(&rec);
    EXPECT_EQ(LayerStack::size(), 1);
    EXPECT_EQ(LayerStack::Top(), &rec);
    EXPECT_TRUE(rec.is_alive());
    y = exp(neg(x));
  }
  EXPECT_FALSE(rec.is_alive());
  EXPECT_TRUE(LayerStack::empty());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "R:neg(Tensor[2] float64)");
  EXPECT_EQ(log[1], "R:exp(Tensor[2] float64)");
  EXPECT_TENSOR_NEAR(y, tensor({std::exp(-1.0), std::exp(-2.0)}), 1e-15);
}

TEST(LayerStack, NestedInterpretersProcessInnermostFirstAndLower) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "outer");
  RecordingInterpreter inner(&log, "inner");
  EXPECT_LT(outer.level(), inner.level());
  {
    InterpreterScope s1(&outer);
    InterpreterScope s2(&inner);
    EXPECT_EQ(LayerStack::DebugString(),
              "[Functionalize(level=" + std::to_string(outer.level()) +
                  "), Functionalize(level=" + std::to_string(inner.level()) + ")]");
    sin(ones({3}));
    EXPECT_EQ(LayerStack::size(), 2);
  }
  EXPECT_EQ(log, (std::vector<std::string>{"inner:sin(Tensor[3] float32)",
                                           "outer:sin(Tensor[3] float32)"}));
}

TEST(LayerStack, BalancedAfterKernelException) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "outer");
  RecordingInterpreter inner(&log, "inner");
  auto body = [&] {
    InterpreterScope s1(&outer);
    InterpreterScope s2(&inner);
    sin(tensor(std::vector<bool>{true}));  // the kernel throws below both levels
  };
  EXPECT_TRUE(testing::ThrowsFtError(body, "sin: not supported for bool"));
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_FALSE(outer.is_alive());
  EXPECT_EQ(log.size(), 2u);
}

TEST(LayerStack, BalancedAfterExceptionInsideAnInterpreter) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "outer");
  RecordingInterpreter inner(&log, "inner");
  outer.throw_on_ = "cos";
  {
    InterpreterScope s1(&outer);
    InterpreterScope s2(&inner);
    // inner lowers (pops itself), outer throws: inner's LowerGuard must push it back.
    EXPECT_FT_ERROR(cos(ones({1})), "cos: thrown by the recording interpreter");
    EXPECT_EQ(LayerStack::size(), 2);
    EXPECT_EQ(LayerStack::Top(), &inner);
    EXPECT_EQ(LayerStack::At(0), &outer);
  }
  EXPECT_TRUE(LayerStack::empty());
}

TEST(LayerStack, ExcludeAllGuardEmptiesAndRestores) {
  std::vector<std::string> log;
  RecordingInterpreter rec(&log, "R");
  InterpreterScope scope(&rec);
  {
    ExcludeAllGuard exclude;
    EXPECT_TRUE(LayerStack::empty());
    sin(ones({1}));
  }
  EXPECT_EQ(LayerStack::Top(), &rec);
  EXPECT_TRUE(log.empty());
}

TEST(LayerStack, LowerBelowGuardPopsALevelAndEverythingInsideIt) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "A"), middle(&log, "B"), inner(&log, "C");
  InterpreterScope a(&outer);
  InterpreterScope b(&middle);
  InterpreterScope c(&inner);
  {
    LowerBelowGuard below(middle.level());
    EXPECT_EQ(LayerStack::size(), 1);
    EXPECT_EQ(LayerStack::Top(), &outer);
    sin(ones({1}));  // only the outer level sees it
    {
      LowerBelowGuard nothing_left(outer.level());
      EXPECT_TRUE(LayerStack::empty());
    }
    EXPECT_EQ(LayerStack::size(), 1);
  }
  EXPECT_EQ(LayerStack::size(), 3);
  EXPECT_EQ(LayerStack::Top(), &inner);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].substr(0, 6), "A:sin(");
  {
    LowerBelowGuard above_all(inner.level() + 1);  // no layer that high: nothing changes
    EXPECT_EQ(LayerStack::size(), 3);
  }
  // Restored after an exception too.
  try {
    LowerBelowGuard below(outer.level());
    ThrowError("thrown inside the guard");
  } catch (const Error&) {
  }
  EXPECT_EQ(LayerStack::size(), 3);
  EXPECT_EQ(LayerStack::Top(), &inner);
}

TEST(LayerStack, DepthLimitIsAnError) {
  std::vector<std::string> log;
  std::vector<std::unique_ptr<RecordingInterpreter>> interps;
  std::vector<std::unique_ptr<InterpreterScope>> scopes;
  for (int i = 0; i < LayerStack::kMaxDepth; ++i) {
    interps.push_back(std::make_unique<RecordingInterpreter>(&log, "R"));
    scopes.push_back(std::make_unique<InterpreterScope>(interps.back().get()));
  }
  RecordingInterpreter one_more(&log, "R");
  EXPECT_FT_ERROR(InterpreterScope(&one_more),
                  "functionalize: cannot nest more than 64 transforms");
  while (!scopes.empty()) scopes.pop_back();
  EXPECT_TRUE(LayerStack::empty());
}

// NOTE: [Transform stack in errors] (tensor/error.h): InterpreterScope names its level in
// every Error raised while it lives, innermost first, also while the level is lowered.
std::string StackOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), absl::StrCat(e.message(), e.transform_stack()));
    return std::string(e.transform_stack());
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

TEST(ErrorContext, NoTransformAddsNothing) {
  EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), "");
  try {
    ThrowError("op: bad");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op: bad");
    EXPECT_EQ(e.message(), "op: bad");
  }
}

TEST(ErrorContext, ScopesNameEveryLevelInnermostFirstAlsoWhenLowered) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "outer"), inner(&log, "inner");
  inner.set_name("inner");
  InterpreterScope s1(&outer);
  const std::string one = absl::StrCat(" (in functionalize (level ", outer.level(), "))");
  EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), one);
  {
    InterpreterScope s2(&inner);
    const std::string two = absl::StrCat(" (in inner (level ", inner.level(),
                                         ") inside functionalize (level ", outer.level(), "))");
    EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), two);
    // The kernel throws with both levels lowered (the stack is empty there): both named.
    EXPECT_EQ(StackOf([] { sin(ones({2}, kBool)); }), two);
    inner.throw_on_ = "cos";
    EXPECT_EQ(StackOf([] { cos(ones({2})); }), two);
    {
      ExcludeAllGuard none;
      EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), two);
    }
  }
  EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), one);
}

TEST(ErrorContext, RethrowingKeepsTheTypeAndTheStackOnce) {
  std::vector<std::string> log;
  RecordingInterpreter outer(&log, "outer"), inner(&log, "inner");
  InterpreterScope s1(&outer);
  std::string what;
  try {
    try {
      InterpreterScope s2(&inner);
      throw AllocationError("empty: too big");
    } catch (Error&) {
      throw;  // caught and rethrown on the way out, with one level left
    }
  } catch (const AllocationError& e) {
    what = e.what();
  }
  EXPECT_EQ(what, absl::StrCat("empty: too big (in functionalize (level ", inner.level(),
                               ") inside functionalize (level ", outer.level(), "))"));
}

TEST(ErrorContext, DeepStacksNameTheirEndsAndCountTheMiddle) {
  std::vector<std::unique_ptr<ErrorContextScope>> scopes;
  for (int level = 1; level <= 20; ++level) {
    scopes.push_back(std::make_unique<ErrorContextScope>("vmap", level));
  }
  const std::string stack = StackOf([] { ThrowError("op: bad"); });
  EXPECT_EQ(stack.rfind(" (in vmap (level 20) inside vmap (level 19)", 0), 0u) << stack;
  EXPECT_NE(stack.find("inside vmap (level 13) inside 4 more inside vmap (level 8)"),
            std::string::npos)
      << stack;
  EXPECT_NE(stack.find("inside vmap (level 1))"), std::string::npos) << stack;
  while (!scopes.empty()) scopes.pop_back();
  EXPECT_EQ(ErrorContextScope::Describe(), "");
}

TEST(ErrorContext, BackwardPhase) {
  {
    ErrorContextScope backward("vjp", 7, ErrorContextScope::Phase::kBackward);
    EXPECT_EQ(StackOf([] { ThrowError("op: bad"); }), " (in the backward of vjp (level 7))");
  }
  EXPECT_EQ(ErrorContextScope::Describe(), "");
}

// A wrapper kind for the test: it belongs to one interpreter's level and holds a value.
class TestWrapper : public TensorImpl {
 public:
  TestWrapper(Tensor value, const Interpreter& owner)
      : TensorImpl(TensorKind::kGradWrapper, value.dtype(),
                   Shape(value.sizes().begin(), value.sizes().end())),
        value_(std::move(value)),
        alive_(owner.alive_flag()) {}
  bool is_alive_wrapper() const override { return *alive_; }
  Tensor UnwrapDead(const std::string&) const override { return value_; }
  std::string WrapperRepr() const override { return "TestWrapper"; }

 private:
  Tensor value_;
  std::shared_ptr<const bool> alive_;
};

// Counts the base-kernel calls it sees and runs them.
class CallLog final : public BaseCallObserver {
 public:
  ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
    names.push_back(op.name());
    return op.CallBaseKernel(args);
  }
  std::vector<std::string> names;
};

TEST(Dispatch, BaseCallObserverSeesEveryKernelCall) {
  CallLog log;
  Tensor y;
  {
    BaseCallObserverScope observe(&log);
    EXPECT_EQ(CurrentBaseCallObserver(), &log);
    y = exp(sin(ones({2})));  // no transform: the typed fast path is closed while observed
    std::vector<std::string> logged;
    RecordingInterpreter recorder(&logged, "r");
    InterpreterScope scope(&recorder);
    (void)neg(y);  // through an interpreter: the observer sees the call that reaches the bottom
  }
  EXPECT_EQ(CurrentBaseCallObserver(), nullptr);
  (void)cos(y);  // uninstalled: not seen
  EXPECT_EQ(log.names, (std::vector<std::string>{"sin", "exp", "neg"}));
  EXPECT_TENSOR_NEAR(y, exp(sin(ones({2}))), 0);
}

// A hook that doubles every tensor argument (with an op, which must not come back to it) and
// logs what it sees.
class DoublingHook final : public DispatchArgumentHook {
 public:
  void BeforeOp(const Operator& op, ValueList& args) override {
    log.push_back("before " + op.name());
    for (Value& v : args) {
      if (v.is_tensor()) v = Value(mul(v.tensor(), 2.0));
    }
  }
  void AfterOp(const Operator& op, const ValueList& outputs) override {
    log.push_back("after " + op.name() + " " + std::to_string(outputs.size()));
  }
  std::vector<std::string> log;
};

TEST(Dispatch, ArgumentHookSeesOnlyTheOpsAtItsDepth) {
  std::vector<std::string> interp_log;
  RecordingInterpreter outer(&interp_log, "outer");
  RecordingInterpreter inner(&interp_log, "inner");
  DoublingHook hook, enclosing;
  Tensor y, z;
  {
    InterpreterScope s1(&outer);
    DispatchArgumentHookScope enclosing_scope(&enclosing);  // depth 1
    InterpreterScope s2(&inner);
    {
      DispatchArgumentHookScope scope(&hook);  // depth 2
      y = neg(tensor({1.0, 2.0}));
    }
    // Depth 2 with no hook: the depth-1 hook does not see exp as inner lowers it.
    z = exp(tensor({0.0}));
  }
  EXPECT_TRUE(LayerStack::empty());
  // neg saw its argument doubled once: the hook's own mul went to no hook at depth 2.
  EXPECT_TENSOR_NEAR(y, tensor({-2.0, -4.0}), 0);
  EXPECT_EQ(hook.log, (std::vector<std::string>{"before neg", "after neg 1"}));
  EXPECT_TRUE(enclosing.log.empty());
  EXPECT_TENSOR_NEAR(z, tensor({1.0}), 0);
  // The interpreters saw mul (the hook's), neg and exp at both levels.
  EXPECT_EQ(interp_log.size(), 6u);
  EXPECT_EQ(internal::tls_dispatch_hook.hook, nullptr);
}

TEST(Dispatch, DeadWrappersUnwrapThemselves) {
  std::vector<std::string> log;
  RecordingInterpreter rec(&log, "R");
  Tensor escaped;
  {
    InterpreterScope scope(&rec);
    escaped = Tensor(std::make_shared<TestWrapper>(tensor({0.0, 1.0}), rec));
  }
  // The level is dead: the op unwraps the wrapper and runs on its value.
  EXPECT_TENSOR_NEAR(cos(escaped), tensor({1.0, std::cos(1.0)}), 1e-15);
}

TEST(Dispatch, LiveWrapperWithoutTransformIsAnError) {
  std::vector<std::string> log;
  RecordingInterpreter rec(&log, "R");
  InterpreterScope scope(&rec);
  Tensor w(std::make_shared<TestWrapper>(ones({2}), rec));
  ExcludeAllGuard exclude;
  EXPECT_FT_ERROR(sin(w), "sin: argument 'self' is a grad wrapper tensor (TestWrapper) but no "
                          "transform is active");
}

TEST(Dispatch, InterpreterMayUseTheOpsRuleSlot) {
  RegisterAllOps();
  Operator& relu_op = OpRegistry::Global().Get("relu");
  ASSERT_FALSE(relu_op.has_rule(TransformType::kFunctionalize));
  relu_op.SetRule(TransformType::kFunctionalize,
                  [](Interpreter& interp, const Operator& op, ValueList& args) {
                    LowerGuard lower(&interp);
                    ValueList out = DispatchBoxed(op, args);
                    out[0] = Value(neg(out[0].tensor()));  // a visible, test-only twist
                    return out;
                  });
  class RuleInterpreter : public Interpreter {
   public:
    RuleInterpreter() : Interpreter(TransformType::kFunctionalize, LayerStack::NewLevel()) {}
    ValueList Process(const Operator& op, ValueList& args) override {
      const TransformRule* rule = op.rule(key());
      if (rule != nullptr) return (*rule)(*this, op, args);
      LowerGuard lower(this);
      return DispatchBoxed(op, args);
    }
  } interp;
  {
    InterpreterScope scope(&interp);
    EXPECT_TENSOR_EQ(relu(tensor({-1.0f, 2.0f})), tensor({-0.0f, -2.0f}));
  }
  relu_op.SetRule(TransformType::kFunctionalize, nullptr);
}

TEST(HigherOrderOperator, DefaultWithoutTransformsRuleWithOne) {
  struct Fn {
    bool negate;
  };
  HigherOrderOperator<Fn> call_fn("call_fn", [](const Fn& f, ValueList& xs) {
    ValueList out;
    out.emplace_back(f.negate ? neg(xs[0].tensor()) : square(xs[0].tensor()));
    return out;
  });
  ValueList operands;
  operands.emplace_back(tensor({1.0, 2.0}));
  EXPECT_TENSOR_EQ(call_fn(Fn{true}, operands)[0].tensor(), tensor({-1.0, -2.0}));

  std::vector<std::string> log;
  RecordingInterpreter rec(&log, "R");
  InterpreterScope scope(&rec);
  EXPECT_FT_ERROR(call_fn(Fn{true}, operands),
                  "call_fn: no rule for the functionalize transform (level");
  int64_t seen_level = -1;
  call_fn.SetRule(TransformType::kFunctionalize,
                  [&](Interpreter& interp, const Fn& f, ValueList& xs) {
                    seen_level = interp.level();
                    LowerGuard lower(&interp);
                    return call_fn(f, xs);  // again, for the levels below: the default
                  });
  EXPECT_TRUE(call_fn.has_rule(TransformType::kFunctionalize));
  EXPECT_TENSOR_EQ(call_fn(Fn{false}, operands)[0].tensor(), tensor({1.0, 4.0}));
  EXPECT_EQ(seen_level, rec.level());
}

// An undefined (default-constructed) tensor given to any op is an ft::Error naming the op and
// the argument, through the typed fast path, the boxed path, and under an interpreter; never a
// null dereference in a kernel or a rule.
TEST(Dispatch, EveryOpNamesAnUndefinedTensorArgument) {
  RegisterAllOps();
  OpRegistry& registry = OpRegistry::Global();
  int checked = 0;
  for (const Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op)) continue;
    const OpSchema& schema = op->schema();
    for (size_t undefined = 0; undefined < schema.args.size(); ++undefined) {
      const ArgKind kind = schema.args[undefined].kind;
      if (kind != ArgKind::kTensor && kind != ArgKind::kOptionalTensor &&
          kind != ArgKind::kTensorList) {
        continue;
      }
      // Every other argument a plausible value; tensors defined.
      ValueList args;
      for (size_t i = 0; i < schema.args.size(); ++i) {
        const bool bad = i == undefined;
        switch (schema.args[i].kind) {
          case ArgKind::kTensor:
          case ArgKind::kOptionalTensor:
            args.emplace_back(bad ? Tensor() : ones({2, 2}));
            break;
          case ArgKind::kTensorList:
            args.emplace_back(bad ? TensorList{ones({2, 2}), Tensor()} : TensorList{ones({2, 2})});
            break;
          case ArgKind::kScalar:
            args.emplace_back(Scalar(1.0));
            break;
          case ArgKind::kInt:
            args.emplace_back(int64_t{0});
            break;
          case ArgKind::kDouble:
            args.emplace_back(0.5);
            break;
          case ArgKind::kBool:
            args.emplace_back(false);
            break;
          case ArgKind::kIntList:
            args.emplace_back(Shape{0});
            break;
          case ArgKind::kDType:
            args.emplace_back(kFloat32);
            break;
          default:
            args.emplace_back();
        }
      }
      const std::string fragment =
          kind == ArgKind::kTensorList
              ? absl::StrCat(op->name(), ": element 1 of argument '", schema.args[undefined].name,
                             "' is an undefined tensor")
              : absl::StrCat(op->name(), ": argument '", schema.args[undefined].name,
                             "' is an undefined tensor");
      EXPECT_FT_ERROR(DispatchBoxed(*op, args), fragment);
      std::vector<std::string> log;
      RecordingInterpreter rec(&log, "R");
      {
        InterpreterScope scope(&rec);
        EXPECT_FT_ERROR(DispatchBoxed(*op, args), fragment);
      }
      EXPECT_TRUE(log.empty()) << "the interpreter saw " << op->name();
      EXPECT_TRUE(LayerStack::empty());
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  // The typed public ops take the same path.
  const Tensor x = ones({3});
  EXPECT_FT_ERROR(sin(Tensor()), "sin: argument 'self' is an undefined tensor");
  EXPECT_FT_ERROR(add(x, Tensor()), "add: argument 'other' is an undefined tensor");
  EXPECT_FT_ERROR(add_(Tensor(), x), "add_: argument 'self' is an undefined tensor");
  EXPECT_FT_ERROR(cat({x, Tensor()}, 0), "cat: element 1 of argument 'tensors' is an undefined");
  EXPECT_FT_ERROR(zeros_like(Tensor()), "zeros_like: argument 'self' is an undefined tensor");
  EXPECT_FT_ERROR(linear(x, ones({2, 3}), Tensor()), "linear: argument 'bias' is an undefined");
}

}  // namespace
}  // namespace ft
