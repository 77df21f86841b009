// The check helpers must catch wrong formulas: each is run on an op whose formula is
// deliberately replaced by a wrong one, and on the right formula.
#include "interpreters/gradcheck/gradcheck.h"

#include "autograd/formulas.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"

namespace ft {
namespace {

Tensor Rand(IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * 2.0 - 1.0;
}

TEST(Gradcheck, AllThreeAcceptRightFormulas) {
  auto f = [](const TensorList& a) { return sin(a[0]) * a[1]; };
  TensorList args = {Rand({2, 3}, 1), Rand({3}, 2)};
  EXPECT_TRUE(gradcheck(f, args).ok);
  EXPECT_TRUE(jvpcheck(f, args).ok);
  EXPECT_TRUE(gradgradcheck(f, args).ok);
}

TEST(Gradcheck, JvpcheckAndGradgradcheckCatchAWrongForwardFormula) {
  autograd::RegisterDerivatives();
  const Operator& op = OpRegistry::Global().Get("tan");
  const autograd::JvpFormula right = *autograd::GetJvp(op);
  // tan's tangent with the wrong sign.
  autograd::SetJvp(op, [](const autograd::JvpContext& c, const TensorList& t) {
    return TensorList{neg(t[0] * (square(c.output(0)) + 1.0))};
  });
  auto f = [](const TensorList& a) { return tan(a[0]); };
  TensorList args = {Rand({4}, 3) * 0.5};
  GradcheckResult fwd = jvpcheck(f, args);
  GradcheckResult second = gradgradcheck(f, args);
  autograd::SetJvp(op, right);
  EXPECT_FALSE(fwd.ok);
  EXPECT_NE(fwd.message.find("jvpcheck (tangent): argument 0"), std::string::npos) << fwd.message;
  EXPECT_FALSE(second.ok);
  EXPECT_NE(second.message.find("gradgradcheck (jvp of grad)"), std::string::npos)
      << second.message;
  EXPECT_TRUE(jvpcheck(f, args).ok);
}

}  // namespace
}  // namespace ft
