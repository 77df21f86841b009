// Tests for tensor/tensor.h: dense metadata, views via MakeDense, element access (item,
// to_vector, data), DebugString, and a transform-wrapper subclass of TensorImpl.
#include "tensor/tensor.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Shape S(std::initializer_list<int64_t> v) { return Shape(v); }

// Buffer returns a contiguous float32 tensor holding 0, 1, ..., n-1 (its storage is viewed
// with other layouts below).
Tensor Buffer(int64_t n) {
  Tensor t = EmptyContiguous({n}, kFloat32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(Tensor, UndefinedHandle) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.impl(), nullptr);
  EXPECT_EQ(t.DebugString(), "Tensor(undefined)");
  EXPECT_FT_ERROR(t.item<float>(), "item: the tensor is undefined");
  EXPECT_FT_ERROR(t.to_vector<float>(), "to_vector: the tensor is undefined");
  EXPECT_FT_ERROR(t.data<float>(), "data: the tensor is undefined");
  EXPECT_TRUE(t.is_same(Tensor()));
  // Every metadata accessor is an ft::Error naming itself, never a null dereference.
  EXPECT_FALSE(t.is_dense());
  EXPECT_FT_ERROR(t.dtype(), "dtype: the tensor is undefined (a default-constructed ft::Tensor)");
  EXPECT_FT_ERROR(t.kind(), "kind: the tensor is undefined");
  EXPECT_FT_ERROR(t.sizes(), "sizes: the tensor is undefined");
  EXPECT_FT_ERROR(t.shape(), "shape: the tensor is undefined");
  EXPECT_FT_ERROR(t.strides(), "strides: the tensor is undefined");
  EXPECT_FT_ERROR(t.storage_offset(), "storage_offset: the tensor is undefined");
  EXPECT_FT_ERROR(t.dim(), "dim: the tensor is undefined");
  EXPECT_FT_ERROR(t.numel(), "numel: the tensor is undefined");
  EXPECT_FT_ERROR(t.is_contiguous(), "is_contiguous: the tensor is undefined");
  EXPECT_FT_ERROR(t.is_floating_point(), "dtype: the tensor is undefined");
  EXPECT_FT_ERROR(t.size(0), "sizes: the tensor is undefined");
  EXPECT_FT_ERROR(t.stride(-1), "strides: the tensor is undefined");
  EXPECT_FT_ERROR(t.storage(), "storage: the tensor is undefined");
  EXPECT_FT_ERROR(t.version(), "version: the tensor is undefined");
  EXPECT_FT_ERROR(t.data_version(), "data_version: the tensor is undefined");
  EXPECT_FT_ERROR(t.data_storage(), "data_storage: the tensor is undefined");
  EXPECT_FT_ERROR(t.bump_version(), "bump_version: the tensor is undefined");
}

TEST(Tensor, DenseContiguousMetadata) {
  Tensor t = EmptyContiguous({2, 3}, kFloat32);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.kind(), TensorKind::kDense);
  EXPECT_TRUE(t.is_dense());
  EXPECT_EQ(Shape(t.sizes().begin(), t.sizes().end()), S({2, 3}));
  EXPECT_EQ(Shape(t.shape().begin(), t.shape().end()), S({2, 3}));
  EXPECT_EQ(Shape(t.strides().begin(), t.strides().end()), S({3, 1}));
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_floating_point());
  EXPECT_TRUE(t.storage().defined());
  EXPECT_EQ(t.storage().nbytes(), 6u * sizeof(float));
  EXPECT_EQ(t.impl()->raw_data(), t.storage().data());
  EXPECT_EQ(t.version(), 0);

  Tensor i = EmptyContiguous({4}, kInt64);
  EXPECT_FALSE(i.is_floating_point());
  EXPECT_EQ(i.storage().nbytes(), 32u);
  Tensor b = EmptyContiguous({3}, kBool);
  EXPECT_EQ(b.storage().nbytes(), 3u);
  Tensor d = EmptyContiguous({2, 2}, kFloat64);
  EXPECT_TRUE(d.is_floating_point());
  EXPECT_EQ(d.storage().nbytes(), 32u);
}

TEST(Tensor, RankZeroAndEmpty) {
  Tensor s = EmptyContiguous({}, kFloat64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.is_contiguous());
  EXPECT_TRUE(s.strides().empty());
  *s.data<double>() = 2.5;
  EXPECT_EQ(s.item<double>(), 2.5);
  EXPECT_EQ(s.to_vector<double>(), std::vector<double>{2.5});

  Tensor e = EmptyContiguous({2, 0, 3}, kFloat32);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(Shape(e.strides().begin(), e.strides().end()), S({3, 3, 1}));
  EXPECT_TRUE(e.to_vector<float>().empty());
  EXPECT_FT_ERROR(e.item<float>(), "item: a tensor with 0 elements (shape [2, 0, 3])");
}

// Found by //tests/fuzz (transforms_fuzzer, corpus regression-fill-empty-saturated-offset):
// fill_ on an empty piece of a split, whose offset saturates at INT64_MAX, computed
// offset * 4 bytes in raw_data (a signed overflow under UBSan). A tensor without elements
// points at its storage's start.
TEST(Tensor, EmptyTensorWithAFarOffsetPointsAtItsStorage) {
  Tensor buf = EmptyContiguous({2}, kFloat32);
  Tensor far = MakeDense(buf.storage(), kFloat32, {0, 3}, {3, 1},
                         std::numeric_limits<int64_t>::max());
  EXPECT_EQ(far.impl()->raw_data(), buf.impl()->raw_data());
  EXPECT_EQ(far.storage_offset(), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(far.to_vector<float>().empty());
}

TEST(Tensor, SizeAndStrideAcceptNegativeDims) {
  Tensor t = EmptyContiguous({2, 3, 4}, kFloat32);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(2), 4);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.size(-3), 2);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_EQ(t.stride(-2), 4);
}

TEST(Tensor, SizeAndStrideErrors) {
  Tensor t = EmptyContiguous({2, 3}, kFloat32);
  EXPECT_FT_ERROR(t.size(2),
                  "size: dim 2 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  EXPECT_FT_ERROR(t.size(-3), "size: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(
      t.stride(5),
      "stride: dim 5 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  // A rank-0 tensor has no dims to ask about (torch.tensor(1.).size(0) raises).
  Tensor s = EmptyContiguous({}, kFloat32);
  EXPECT_FT_ERROR(s.size(0), "size: dim 0 is out of range for a tensor of rank 0");
  EXPECT_FT_ERROR(s.size(-1), "size: dim -1 is out of range for a tensor of rank 0");
  EXPECT_FT_ERROR(s.stride(0), "stride: dim 0 is out of range for a tensor of rank 0");
}

TEST(Tensor, IsSameIsIdentityNotEquality) {
  Tensor a = tensor({1.0f, 2.0f});
  Tensor alias = a;
  Tensor equal_values = tensor({1.0f, 2.0f});
  Tensor view = MakeDense(a.storage(), kFloat32, {2}, {1}, 0);
  EXPECT_TRUE(a.is_same(alias));
  EXPECT_EQ(a.impl(), alias.impl());
  EXPECT_FALSE(a.is_same(equal_values));
  EXPECT_EQ(a.to_vector<float>(), equal_values.to_vector<float>());
  // A view of the same storage is another object sharing the buffer.
  EXPECT_FALSE(a.is_same(view));
  EXPECT_TRUE(a.storage().is_same(view.storage()));
  EXPECT_FALSE(a.storage().is_same(equal_values.storage()));
}

TEST(Tensor, ViewsShareTheVersionCounter) {
  Tensor a = Buffer(6);
  Tensor view = MakeDense(a.storage(), kFloat32, {3}, {2}, 0);
  EXPECT_EQ(view.version(), 0);
  a.bump_version();
  EXPECT_EQ(view.version(), 1);
  view.bump_version();
  EXPECT_EQ(a.version(), 2);
  Tensor other = Buffer(6);
  EXPECT_EQ(other.version(), 0);
}

TEST(Tensor, ItemConvertsTheSingleElement) {
  Tensor f = tensor({2.75f});
  EXPECT_EQ(f.item<float>(), 2.75f);
  EXPECT_EQ(f.item<double>(), 2.75);
  EXPECT_EQ(f.item<int64_t>(), 2);
  EXPECT_TRUE(f.item<bool>());
  EXPECT_EQ(tensor({-2.75}).item<int64_t>(), -2);  // truncation toward zero
  EXPECT_FALSE(tensor({0.0}).item<bool>());
  EXPECT_EQ(tensor(std::vector<int64_t>{7}).item<float>(), 7.0f);
  EXPECT_EQ(tensor(std::vector<int64_t>{int64_t{1} << 62}).item<int64_t>(), int64_t{1} << 62);
  EXPECT_EQ(tensor(std::vector<bool>{true}).item<double>(), 1.0);
  EXPECT_EQ(tensor(std::vector<bool>{false}).item<int64_t>(), 0);
  // Any shape with one element works, including a view at an offset.
  EXPECT_EQ(tensor({4.5}, {1, 1, 1}).item<double>(), 4.5);
  Tensor buf = Buffer(5);
  EXPECT_EQ(MakeDense(buf.storage(), kFloat32, {}, {}, 3).item<float>(), 3.0f);
  EXPECT_EQ(MakeDense(buf.storage(), kFloat32, {1, 1}, {9, 9}, 4).item<float>(), 4.0f);
}

TEST(Tensor, ItemNeedsExactlyOneElement) {
  EXPECT_FT_ERROR(tensor({1.0f, 2.0f, 3.0f}).item<float>(),
                  "item: a tensor with 3 elements (shape [3]) cannot be converted to a scalar; "
                  "item() needs exactly one element");
  EXPECT_FT_ERROR(EmptyContiguous({2, 2}, kInt64).item<int64_t>(),
                  "item: a tensor with 4 elements (shape [2, 2])");
  EXPECT_FT_ERROR(EmptyContiguous({0}, kFloat32).item<float>(), "item: a tensor with 0 elements");
}

TEST(Tensor, ToVectorReadsViewsInRowMajorOrder) {
  Tensor buf = Buffer(12);  // 0..11
  // Transposed: sizes [3, 2] viewing a row-major [2, 3] as its transpose.
  Tensor t = MakeDense(buf.storage(), kFloat32, {3, 2}, {1, 3}, 0);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Stride 0: a broadcast row.
  Tensor e = MakeDense(buf.storage(), kFloat32, {2, 3}, {0, 1}, 0);
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  // Stride 0 in the inner dim.
  Tensor c = MakeDense(buf.storage(), kFloat32, {2, 3}, {4, 0}, 1);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 1, 1, 5, 5, 5}));
  // Offset plus stride 2.
  Tensor o = MakeDense(buf.storage(), kFloat32, {2, 2}, {6, 2}, 3);
  EXPECT_EQ(o.storage_offset(), 3);
  EXPECT_EQ(o.to_vector<float>(), (std::vector<float>{3, 5, 9, 11}));
  EXPECT_EQ(*o.data<float>(), 3.0f);  // data() points at element [0, 0]
  // Contiguous at an offset.
  Tensor r = MakeDense(buf.storage(), kFloat32, {2, 2}, {2, 1}, 8);
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{8, 9, 10, 11}));
  // 3-D permuted view, converted on read.
  Tensor p = MakeDense(buf.storage(), kFloat32, {2, 3, 2}, {1, 4, 2}, 0);
  EXPECT_EQ(p.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
}

TEST(Tensor, ToVectorConvertsDTypes) {
  EXPECT_EQ(tensor({1.5f, -2.5f, 0.0f}).to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 0}));
  EXPECT_EQ(tensor({1.5f, -2.5f, 0.0f}).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(tensor(std::vector<bool>{true, false}).to_vector<float>(),
            (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(tensor(std::vector<int64_t>{3, -4}).to_vector<double>(),
            (std::vector<double>{3.0, -4.0}));
}

TEST(Tensor, DataChecksTheElementType) {
  Tensor t = tensor({1.0f, 2.0f});
  EXPECT_EQ(t.data<float>()[1], 2.0f);
  const float* cp = t.data<const float>();
  EXPECT_EQ(cp[0], 1.0f);
  EXPECT_FT_ERROR(t.data<double>(),
                  "data: requested element type float64 but the tensor is float32");
  EXPECT_FT_ERROR(t.data<int64_t>(),
                  "data: requested element type int64 but the tensor is float32");
  EXPECT_FT_ERROR(tensor(std::vector<int64_t>{1}).data<bool>(),
                  "data: requested element type bool but the tensor is int64");
  EXPECT_FT_ERROR(tensor(std::vector<bool>{true}).data<float>(),
                  "data: requested element type float32 but the tensor is bool");
}

TEST(Tensor, DebugString) {
  EXPECT_EQ(EmptyContiguous({2, 3}, kFloat32).DebugString(),
            "Tensor(shape=[2, 3], dtype=float32, strides=[3, 1], offset=0, dense)");
  Tensor buf = Buffer(12);
  EXPECT_EQ(MakeDense(buf.storage(), kFloat64, {3, 2}, {1, 3}, 5).DebugString(),
            "Tensor(shape=[3, 2], dtype=float64, strides=[1, 3], offset=5, dense)");
  EXPECT_EQ(EmptyContiguous({}, kBool).DebugString(),
            "Tensor(shape=[], dtype=bool, strides=[], offset=0, dense)");
  EXPECT_EQ(EmptyContiguous({0}, kInt64).DebugString(),
            "Tensor(shape=[0], dtype=int64, strides=[1], offset=0, dense)");
}

TEST(Tensor, KindNames) {
  EXPECT_STREQ(TensorKindName(TensorKind::kDense), "dense");
  EXPECT_STREQ(TensorKindName(TensorKind::kBatched), "batched");
  EXPECT_STREQ(TensorKindName(TensorKind::kGradWrapper), "grad wrapper");
  EXPECT_STREQ(TensorKindName(TensorKind::kDual), "dual");
  EXPECT_STREQ(TensorKindName(TensorKind::kFunctional), "functional");
}

TEST(Tensor, MakeDenseAndEmptyContiguous) {
  Tensor e = EmptyContiguous({4, 5}, kFloat64);
  EXPECT_EQ(e.storage().nbytes(), 160u);
  Tensor v = MakeDense(e.storage(), kFloat64, {5, 4}, {1, 5}, 0);
  EXPECT_EQ(v.dtype(), kFloat64);
  EXPECT_EQ(Shape(v.sizes().begin(), v.sizes().end()), S({5, 4}));
  EXPECT_EQ(Shape(v.strides().begin(), v.strides().end()), S({1, 5}));
  EXPECT_FALSE(v.is_contiguous());
  // Writing through the base is visible through the view.
  e.data<double>()[1 * 5 + 2] = 42.0;  // base [1, 2] is view [2, 1]
  EXPECT_EQ(v.to_vector<double>()[2 * 4 + 1], 42.0);
  TensorList list = {e, v};
  EXPECT_EQ(list.size(), 2u);
}

// A minimal transform wrapper, built through TensorImpl's protected wrapper constructor.
class FakeBatched : public TensorImpl {
 public:
  FakeBatched(DType dtype, Shape sizes)
      : TensorImpl(TensorKind::kBatched, dtype, std::move(sizes)) {}
};

// A wrapper whose logical sizes are a value's sizes without one dim (how batched tensors
// drop their batch dim).
class FakeDropDim : public TensorImpl {
 public:
  FakeDropDim(IntArrayRef value_sizes, int64_t dropped)
      : TensorImpl(TensorKind::kBatched, kFloat32, value_sizes, dropped) {}
};

TEST(TensorImpl, WrapperDropsOneDimOfItsValueSizes) {
  const Shape value = {2, 3, 4, 5};
  for (int64_t dropped = -1; dropped < 4; ++dropped) {
    Shape expected;
    for (int64_t d = 0; d < 4; ++d) {
      if (d != dropped) expected.push_back(value[static_cast<size_t>(d)]);
    }
    FakeDropDim w(value, dropped);
    EXPECT_EQ(Shape(w.sizes().begin(), w.sizes().end()), expected) << "dropped " << dropped;
    EXPECT_EQ(Shape(w.strides().begin(), w.strides().end()), ContiguousStrides(expected));
    EXPECT_EQ(w.numel(), Numel(expected));
    EXPECT_TRUE(w.is_contiguous());
  }
  // Rank 1 to rank 0, an empty dim kept, and more dims than the inline capacity.
  FakeDropDim scalar(Shape{7}, 0);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  FakeDropDim empty(Shape{3, 0, 2}, 0);
  EXPECT_EQ(Shape(empty.sizes().begin(), empty.sizes().end()), (Shape{0, 2}));
  EXPECT_EQ(empty.numel(), 0);
  const Shape wide = {1, 2, 3, 4, 5, 6, 7, 8};
  FakeDropDim w8(wide, 3);
  EXPECT_EQ(Shape(w8.sizes().begin(), w8.sizes().end()), (Shape{1, 2, 3, 5, 6, 7, 8}));
  EXPECT_EQ(Shape(w8.strides().begin(), w8.strides().end()),
            ContiguousStrides(Shape{1, 2, 3, 5, 6, 7, 8}));
}

// A wrapper that describes itself and reports a dead level.
class FakeDeadGrad : public TensorImpl {
 public:
  FakeDeadGrad() : TensorImpl(TensorKind::kGradWrapper, kFloat64, {4}) {}
  std::string WrapperRepr() const override { return "GradWrapper(lvl=3)"; }
  bool is_alive_wrapper() const override { return false; }
};

// Records what a ValueReadObserver hears.
class ReadLog final : public ValueReadObserver {
 public:
  void OnValueRead(const Tensor& t, const char* what) override {
    reads.push_back(std::string(what) + " " + ShapeToString(t.sizes()));
  }
  void OnValueDependentShape(const char* op) override { shapes.push_back(op); }
  std::vector<std::string> reads, shapes;
};

TEST(ValueReadObserver, HearsElementAccessWhileInstalled) {
  Tensor t = EmptyContiguous({2}, kFloat32);
  ReadLog log;
  internal::tls_value_read_observer = &log;
  t.data<float>()[0] = 1.0f;
  t.data<float>()[1] = 2.0f;
  (void)t.to_vector<float>();
  NoteValueDependentShape("one_hot");
  internal::tls_value_read_observer = nullptr;
  (void)t.data<float>();  // not installed: not heard
  EXPECT_EQ(log.reads, (std::vector<std::string>{"data [2]", "data [2]", "to_vector [2]"}));
  EXPECT_EQ(log.shapes, (std::vector<std::string>{"one_hot"}));
}

TEST(TensorWrapper, MetadataWithoutStorage) {
  Tensor w(std::make_shared<FakeBatched>(kFloat32, Shape{2, 3}));
  EXPECT_EQ(w.kind(), TensorKind::kBatched);
  EXPECT_FALSE(w.is_dense());
  EXPECT_EQ(w.dtype(), kFloat32);
  EXPECT_EQ(Shape(w.sizes().begin(), w.sizes().end()), S({2, 3}));
  EXPECT_EQ(Shape(w.strides().begin(), w.strides().end()), S({3, 1}));
  EXPECT_EQ(w.storage_offset(), 0);
  EXPECT_EQ(w.dim(), 2);
  EXPECT_EQ(w.numel(), 6);
  EXPECT_TRUE(w.is_contiguous());
  EXPECT_EQ(w.size(-1), 3);
  EXPECT_FALSE(w.storage().defined());
  EXPECT_TRUE(w.impl()->is_alive_wrapper());
  EXPECT_EQ(w.impl()->WrapperRepr(), "batched tensor of shape [2, 3]");
  EXPECT_EQ(w.DebugString(),
            "Tensor(shape=[2, 3], dtype=float32, strides=[3, 1], offset=0, batched)");
}

TEST(TensorWrapper, ElementAccessThrows) {
  Tensor w(std::make_shared<FakeBatched>(kFloat32, Shape{2, 3}));
  // A batched value differs per example: the message names the ops that branch per example.
  EXPECT_FT_ERROR(w.item<float>(),
                  "item: cannot read the elements of a batched tensor inside vmap "
                  "(batched tensor of shape [2, 3]): its value differs per example. Branch "
                  "with ft::where, ft::cond or ft::while_loop, or return it from the "
                  "transformed function instead");
  EXPECT_FT_ERROR(w.to_vector<float>(),
                  "to_vector: cannot read the elements of a batched tensor inside vmap");
  EXPECT_FT_ERROR(w.data<float>(), "data: cannot read the elements of a batched tensor");
  // item() rejects a wrapper even when it has exactly one element.
  Tensor one(std::make_shared<FakeBatched>(kInt64, Shape{}));
  EXPECT_FT_ERROR(one.item<int64_t>(),
                  "item: cannot read the elements of a batched tensor inside vmap "
                  "(batched tensor of shape [])");
  // An overridden WrapperRepr shows up in the messages; a grad wrapper without a value to
  // read is refused.
  Tensor g(std::make_shared<FakeDeadGrad>());
  EXPECT_FT_ERROR(g.item<double>(),
                  "item: cannot read the elements of a grad wrapper tensor "
                  "inside a transform (GradWrapper(lvl=3))");
}

// A grad or dual wrapper holding a value: item() and to_vector() read the primal through
// every layer (NOTE: [Host reads inside transforms]); data() stays dense-only.
class FakePrimalWrapper : public TensorImpl {
 public:
  FakePrimalWrapper(TensorKind kind, Tensor value)
      : TensorImpl(kind, value.dtype(), Shape(value.sizes().begin(), value.sizes().end())),
        value_(std::move(value)) {}
  const Tensor* wrapped_value() const override { return &value_; }

 private:
  Tensor value_;
};

TEST(TensorWrapper, ReadsThePrimalThroughGradAndDualWrappers) {
  Tensor v = EmptyContiguous({2}, kFloat64);
  v.data<double>()[0] = 1.5;
  v.data<double>()[1] = -2.0;
  Tensor dual(std::make_shared<FakePrimalWrapper>(TensorKind::kDual, v));
  Tensor g(std::make_shared<FakePrimalWrapper>(TensorKind::kGradWrapper, dual));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1.5, -2.0}));
  EXPECT_FT_ERROR(g.item<double>(), "item: a tensor with 2 elements (shape [2])");
  EXPECT_FT_ERROR(g.data<double>(), "data: cannot read the elements of a grad wrapper tensor");
  // The observer hears the dense primal, so a jit trace sees the read.
  ReadLog log;
  internal::tls_value_read_observer = &log;
  (void)g.to_vector<float>();
  internal::tls_value_read_observer = nullptr;
  EXPECT_EQ(log.reads, (std::vector<std::string>{"to_vector [2]"}));
  // A batched layer anywhere under the wrappers refuses.
  Tensor over_batched(std::make_shared<FakePrimalWrapper>(
      TensorKind::kGradWrapper, Tensor(std::make_shared<FakeBatched>(kFloat32, Shape{2}))));
  EXPECT_FT_ERROR(over_batched.to_vector<float>(),
                  "to_vector: cannot read the elements of a batched tensor inside vmap");
}

TEST(TensorWrapper, DefaultUnwrapDeadThrows) {
  FakeBatched b(kFloat32, {2, 3});
  EXPECT_FT_ERROR(b.UnwrapDead("add"),
                  "add: met a batched tensor whose transform has already returned (batched "
                  "tensor of shape [2, 3])");
  FakeDeadGrad g;
  EXPECT_FALSE(g.is_alive_wrapper());
  EXPECT_FT_ERROR(g.UnwrapDead("mul"),
                  "mul: met a grad wrapper tensor whose transform has already returned "
                  "(GradWrapper(lvl=3))");
}

}  // namespace
}  // namespace ft
