#include "dispatch/operator.h"

#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "kernels/unary.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

TEST(OpRegistry, BuiltinOpsAreRegisteredOnceWithSchemas) {
  RegisterAllOps();
  RegisterAllOps();  // idempotent
  OpRegistry& r = OpRegistry::Global();
  const Operator* sin_op = r.Find("sin");
  ASSERT_NE(sin_op, nullptr);
  EXPECT_EQ(sin_op->schema().ToString(), "sin(Tensor self) -> Tensor  [every dtype]");
  EXPECT_EQ(&r.ById(sin_op->id()), sin_op);
  EXPECT_EQ(&OpFor<&kernels::sin>(), sin_op);
  const Operator& exp_ = r.Get("exp_");
  EXPECT_EQ(exp_.schema().mutated_arg, 0);
  EXPECT_EQ(exp_.schema().ToString(),
            "exp_(Tensor self) -> Tensor  [mutates self]  [every dtype]");
  EXPECT_EQ(r.Get("erf").schema().ToString(), "erf(Tensor self) -> Tensor");
  EXPECT_EQ(r.Find("no_such_op"), nullptr);
  EXPECT_FT_ERROR(r.Get("no_such_op"), "OpRegistry: no operator named 'no_such_op'");
  // ops() lists every op in registration order, ids dense.
  std::vector<Operator*> ops = r.ops();
  ASSERT_EQ(static_cast<int>(ops.size()), r.size());
  for (int i = 0; i < r.size(); ++i) EXPECT_EQ(ops[i]->id(), i);
}

TEST(Operator, BoxedBaseKernelMatchesTypedCall) {
  RegisterAllOps();
  const Operator& sin_op = OpRegistry::Global().Get("sin");
  ValueList args;
  args.emplace_back(tensor({0.5, 1.5}));
  ValueList out = sin_op.CallBaseKernel(args);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TENSOR_NEAR(out[0].tensor(), tensor({std::sin(0.5), std::sin(1.5)}), 1e-15);
}

// The DirectKernel reads tensors through pointers and every other argument from its Value;
// results are compared with closed forms, not with the boxed call.
TEST(Operator, DirectKernelReadsArgumentsInPlace) {
  RegisterAllOps();
  OpRegistry& r = OpRegistry::Global();
  // sum(Tensor, int[] dims, bool keepdim): a tensor and two plain arguments.
  const Operator& sum_op = r.Get("sum");
  ASSERT_NE(sum_op.direct_kernel(), nullptr);
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  std::vector<Value> fixed = {Value(), Value(Shape{1}), Value(true)};
  const Tensor* tensors[3] = {&x, nullptr, nullptr};
  Tensor results[1];
  sum_op.direct_kernel()(fixed.data(), tensors, results);
  EXPECT_TENSOR_NEAR(results[0], tensor({6.0, 15.0}, {2, 1}), 0.0);
  // sort returns two tensors, in order.
  const Operator& sort_op = r.Get("sort");
  ASSERT_NE(sort_op.direct_kernel(), nullptr);
  const Tensor v = tensor({3.0, 1.0, 2.0});
  fixed = {Value(), Value(int64_t{0}), Value(false)};
  const Tensor* sort_tensors[3] = {&v, nullptr, nullptr};
  Tensor sorted[2];
  sort_op.direct_kernel()(fixed.data(), sort_tensors, sorted);
  EXPECT_TENSOR_NEAR(sorted[0], tensor({1.0, 2.0, 3.0}), 0.0);
  EXPECT_EQ(sorted[1].to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0}));
  // An absent optional tensor is a null pointer: linear without a bias.
  const Operator& linear_op = r.Get("linear");
  ASSERT_NE(linear_op.direct_kernel(), nullptr);
  const Tensor w = tensor({1.0, 1.0, 1.0}, {1, 3});
  fixed = {Value(), Value(), Value()};
  const Tensor* linear_tensors[3] = {&x, &w, nullptr};
  linear_op.direct_kernel()(fixed.data(), linear_tensors, results);
  EXPECT_TENSOR_NEAR(results[0], tensor({6.0, 15.0}, {2, 1}), 0.0);
  // TensorList arguments have no direct entry.
  EXPECT_EQ(r.Get("cat").direct_kernel(), nullptr);
  EXPECT_EQ(r.Get("stack").direct_kernel(), nullptr);
}

TEST(Operator, RuleSlots) {
  RegisterAllOps();
  Operator& cos_op = OpRegistry::Global().Get("cos");
  for (TransformType t : {TransformType::kVmap, TransformType::kGrad, TransformType::kJvp,
                          TransformType::kFunctionalize}) {
    EXPECT_EQ(cos_op.rule(t) == nullptr, !cos_op.has_rule(t));
  }
  EXPECT_STREQ(TransformTypeName(TransformType::kJvp), "Jvp");
}

// The dtype gate (OpSchema::dtypes): an op refuses a tensor or DType argument of a dtype its
// kernel is not written for, by name, on the direct path and the boxed one alike.
TEST(Operator, RefusesDTypesItsKernelIsNotWrittenFor) {
  RegisterAllOps();
  const Tensor c = zeros({2}, kComplex64);
  EXPECT_FT_ERROR(ft::erf(c),
                  "erf: argument 'self' is complex64, which erf does not support yet (it "
                  "supports float32, float64, int64 and bool;");
  ValueList args;
  args.emplace_back(zeros({2}, kUInt8));
  EXPECT_FT_ERROR(DispatchBoxed(OpRegistry::Global().Get("erf"), args),
                  "erf: argument 'self' is uint8");
  EXPECT_EQ(OpRegistry::Global().Get("erf").schema().dtypes, kOriginalDTypes);
}

Tensor PassThrough(const Tensor& t) { return t; }
Tensor FirstOf(const TensorList& ts) { return ts[0]; }

TEST(Operator, AnOpDeclaresTheDTypesItSupports) {
  RegisterAllOps();
  OpOptions options;
  options.dtypes = kOriginalDTypes | DTypeSet{kComplex64};
  const Operator& op = RegisterOp<&PassThrough>(OpRegistry::Global(),
                                                 "test_pass_through_complex64", {"self"}, options);
  EXPECT_EQ(op.schema().ToString(),
            "test_pass_through_complex64(Tensor self) -> Tensor  [dtypes: float32, float64, "
            "int64, bool and complex64]");
  const Tensor c = zeros({2}, kComplex64);
  EXPECT_EQ(Call<&PassThrough>(c).dtype(), kComplex64);
  EXPECT_FT_ERROR(Call<&PassThrough>(zeros({2}, kComplex128)),
                  "test_pass_through_complex64: argument 'self' is complex128");
  // Each element of a TensorList is checked.
  RegisterOp<&FirstOf>(OpRegistry::Global(), "test_first_of", {"tensors"});
  EXPECT_EQ(Call<&FirstOf>(TensorList{zeros({2}), zeros({3})}).numel(), 2);
  EXPECT_FT_ERROR(Call<&FirstOf>(TensorList{zeros({2}), zeros({2}, kInt8)}),
                  "test_first_of: element 1 of argument 'tensors' is int8");
  // cat is written for every dtype: mixed operands promote (torch.cat's rule).
  const Tensor mixed = ft::cat({ft::full({1}, 1.5), zeros({1}, kInt8)}, 0);
  EXPECT_EQ(mixed.dtype(), kFloat32);
  EXPECT_EQ(mixed.to_vector<float>(), (std::vector<float>{1.5f, 0.0f}));
}

TEST(Value, HoldsEachKindAndPrints) {
  EXPECT_EQ(Value().ToString(), "None");
  EXPECT_EQ(Value(int64_t{3}).ToString(), "3");
  EXPECT_EQ(Value(2.5).ToString(), "2.5");
  EXPECT_EQ(Value(true).ToString(), "true");
  EXPECT_EQ(Value(Shape{1, 2}).ToString(), "[1, 2]");
  EXPECT_EQ(Value(kFloat64).ToString(), "float64");
  EXPECT_EQ(Value(Scalar(1.5)).ToString(), "1.5");
  EXPECT_EQ(Value(zeros({2, 3})).ToString(), "Tensor[2, 3] float32");
  EXPECT_EQ(Value(TensorList{zeros({1}), ones({2}, kInt64)}).ToString(),
            "[Tensor[1] float32, Tensor[2] int64]");
  EXPECT_EQ(Value(int64_t{4}).scalar().kind(), ScalarKind::kInt);
  EXPECT_EQ(Value(Value::Tag::kShape == Value(Shape{}).tag()).to_bool(), true);
  EXPECT_STREQ(ValueTagName(Value::Tag::kTensorList), "TensorList");
}

}  // namespace
}  // namespace ft
