// Every example in docs/api.md, compiled and checked: the docs stay true.
#include <string>
#include <vector>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

TEST(Readme, Taste) {
  ft::Tensor x = ft::linspace(-1.0, 1.0, 5);
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor g = ft::matmul(m, ft::transpose(m, 0, 1));
  EXPECT_EQ(x.dtype(), kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(ft::ToString(ft::sum(g, {1})), "tensor([19., 64.])");
}

TEST(DocsApi, Tensors) {
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor mt = ft::transpose(m, 0, 1);
  EXPECT_EQ(mt.sizes(), (IntArrayRef{3, 2}));
  EXPECT_EQ(mt.strides(), (IntArrayRef{1, 3}));
  EXPECT_TRUE(mt.storage().is_same(m.storage()));
  EXPECT_EQ(ft::ToString(m), "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
  EXPECT_EQ(m.DebugString(),
            "Tensor(shape=[2, 3], dtype=float32, strides=[3, 1], offset=0, dense)");
  EXPECT_TRUE(ft::allclose(mt, ft::tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2})));
}

TEST(DocsApi, Factories) {
  ft::Tensor a = ft::zeros({2, 3});
  ft::Tensor b = ft::full({2}, 7);
  ft::Tensor c = ft::arange(0.0, 1.0, 0.25);
  ft::Tensor d = ft::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(d.dtype(), kFloat64);
}

TEST(DocsApi, Ops) {
  ft::Tensor x = ft::tensor({1.0f, 2.0f, 3.0f});
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  EXPECT_TENSOR_NEAR(y, ft::tensor({2 * std::sin(1.0f) + 1, 2 * std::sin(2.0f) + 1,
                                    2 * std::sin(3.0f) + 1}),
                     1e-6);
  ft::Tensor s = ft::sum(ft::reshape(ft::arange(6.0), {2, 3}), {1});
  EXPECT_TENSOR_EQ(s, ft::tensor({3.0f, 12.0f}));
  auto [values, indices] = ft::sort(ft::tensor({3.0f, 1.0f, 2.0f}));
  EXPECT_TENSOR_EQ(values, ft::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TENSOR_EQ(indices, ft::tensor(std::vector<int64_t>{1, 2, 0}));
  ft::Tensor p = ft::matmul(ft::ones({4, 2, 3}), ft::ones({3, 5}));
  EXPECT_TENSOR_EQ(p, ft::full({4, 2, 5}, 3.0f));
  ft::Tensor w = ft::zeros({3});
  ft::Tensor r = ft::add_(w, x);
  EXPECT_TRUE(r.is_same(w));
  EXPECT_TENSOR_EQ(w, x);
}

TEST(DocsApi, Promotion) {
  ft::Tensor i = ft::tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ((i * 2).dtype(), kInt64);
  EXPECT_EQ((i * 2.5).dtype(), kFloat32);
  EXPECT_EQ((i / i).dtype(), kFloat32);
  EXPECT_EQ((ft::ones({2}) + ft::scalar_tensor(1.0, ft::kFloat64)).dtype(), kFloat32);
}

TEST(DocsApi, Randomness) {
  ft::Generator g(42);
  ft::Tensor a = ft::randn_like(ft::zeros({3}), &g);
  g.manual_seed(42);
  ft::Tensor b = ft::randn_like(ft::zeros({3}), &g);
  EXPECT_TENSOR_EQ(a, b);
}

TEST(DocsApi, Errors) {
  std::string message;
  try {
    ft::matmul(ft::ones({2, 3}), ft::ones({2, 3}));
  } catch (const ft::Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("matmul: size mismatch, got [2, 3] @ [2, 3]: dim -1 of the first (3) "
                          "must equal dim -2 of the second (2)",
                          0),
            0u);
}

class Logger : public ft::Interpreter {
 public:
  explicit Logger(std::vector<std::string>* log)
      : Interpreter(ft::TransformType::kFunctionalize, ft::LayerStack::NewLevel()), log_(log) {}
  ft::ValueList Process(const ft::Operator& op, ft::ValueList& args) override {
    log_->push_back(op.name());
    ft::LowerGuard lower(this);
    return ft::DispatchBoxed(op, args);
  }

 private:
  std::vector<std::string>* log_;
};

TEST(DocsApi, Interpreter) {
  std::vector<std::string> log;
  Logger logger(&log);
  {
    ft::InterpreterScope scope(&logger);
    ft::exp(ft::sin(ft::ones({2})));
  }
  EXPECT_EQ(log, (std::vector<std::string>{"sin", "exp"}));
  EXPECT_TRUE(ft::LayerStack::empty());
}

}  // namespace
}  // namespace ft
