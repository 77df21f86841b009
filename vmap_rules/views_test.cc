// vmap of every view and shape op against the loop-and-stack oracle, the ops' errors under
// vmap (the same messages as for one example), and storage sharing of the vmapped views.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;

using ViewFn = std::function<Tensor(const Tensor&)>;

// Unary wraps a one-tensor function for CheckVmap.
testing::LoopFn Unary(ViewFn f) {
  return [f = std::move(f)](const TensorList& a) { return TensorList{f(a[0])}; };
}

// CheckOp runs the standard check of `f` on per-example `shape`, and two checks that writes
// go through the view under vmap (both directions), on a buffer created inside the function.
// `writable`: in-place writes through the result are allowed (false for expand, whose result
// overlaps itself).
::testing::AssertionResult CheckOp(const ViewFn& f, IntArrayRef shape, bool writable = true) {
  const std::vector<ArgSpec> spec = {ArgSpec{Shape(shape.begin(), shape.end())}};
  if (auto r = CheckVmap(Unary(f), spec); !r) return r << " (plain)";
  if (writable) {
    auto write_through_view = [&f](const TensorList& a) {
      Tensor buf = clone(a[0]);
      add_(f(buf), 1.0);
      return TensorList{buf};
    };
    if (auto r = CheckVmap(write_through_view, spec); !r) return r << " (write through view)";
  }
  auto view_sees_write = [&f](const TensorList& a) {
    Tensor buf = clone(a[0]);
    Tensor v = f(buf);
    mul_(buf, 2.0);
    return TensorList{v};
  };
  if (auto r = CheckVmap(view_sees_write, spec); !r) return r << " (view sees write)";
  return ::testing::AssertionSuccess();
}

Tensor Rand(IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g);
}

// ExpectSameError: vmap(f) over `batch` (mapped at in_dim) throws exactly the error f throws
// for one example.
void ExpectSameError(const ViewFn& f, IntArrayRef example_shape, int64_t in_dim = 0) {
  Tensor one = Rand(example_shape, 7);
  std::string eager;
  try {
    f(one);
    ADD_FAILURE() << "f does not throw for one example";
    return;
  } catch (const Error& e) {
    eager = e.what();
  }
  Tensor batch = Rand(example_shape, 8);
  batch = stack({batch, batch}, in_dim);
  EXPECT_FT_ERROR(vmap(TensorFn(f), in_dim)(batch), eager);
}

// ---- The ops ft::vmap itself and nested vmaps rely on first.

TEST(ViewRules, Movedim) {
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return movedim(x, 0, 2); }, {2, 3, 4}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return movedim(x, -1, 0); }, {2, 3, 4}));
  EXPECT_TRUE(CheckOp(
      [](const Tensor& x) { return movedim(x, Shape{-1, 0}, Shape{0, 1}); }, {2, 3, 4}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return movedim(x, 0, -1); }, {3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return movedim(x, 0, -1); }, {}));
}

TEST(ViewRules, Unsqueeze) {
  for (int64_t d : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(d);
    EXPECT_TRUE(CheckOp([d](const Tensor& x) { return unsqueeze(x, d); }, {2, 3}));
  }
  for (int64_t d : {0, -1}) {
    EXPECT_TRUE(CheckOp([d](const Tensor& x) { return unsqueeze(x, d); }, {}));
  }
}

TEST(ViewRules, Expand) {
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {2, 3, 4}); }, {3, 1}, false));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {2, -1, 4}); }, {3, 1}, false));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {-1, 5}); }, {3, 1}, false));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {2, 3}); }, {}, false));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {}); }, {}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {-1}); }, {3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return expand(x, {0, 3}); }, {3}));
  // expand_as expands to the logical shape of a batched tensor too.
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{expand_as(a[0], a[1])}; },
                        {ArgSpec{{3, 1}}, ArgSpec{{2, 3, 4}}}));
}

TEST(ViewRules, Select) {
  for (auto [dim, index] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {0, -1}, {1, 2}, {-1, 3}, {-2, 1}}) {
    SCOPED_TRACE(::testing::Message() << dim << ", " << index);
    EXPECT_TRUE(CheckOp([dim = dim, index = index](const Tensor& x) { return select(x, dim, index); }, {3, 4}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return select(x, 0, 1); }, {2}));
}

TEST(ViewRules, Permute) {
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return permute(x, {2, 0, 1}); }, {2, 3, 4}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return permute(x, {-1, 0, -2}); }, {2, 3, 4}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return permute(x, {0}); }, {3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return permute(x, {}); }, {}));
}

TEST(ViewRules, Transpose) {
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {-1, -2}, {1, 1}}) {
    SCOPED_TRACE(::testing::Message() << a << ", " << b);
    EXPECT_TRUE(CheckOp([a = a, b = b](const Tensor& x) { return transpose(x, a, b); },
                        {2, 3, 4}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return transpose(x, 0, -1); }, {}));
}

TEST(ViewRules, ReshapeAndView) {
  // CheckVmap's inputs are stored with stride 2 in the last dim: reshapes that merge the last
  // dim copy; reshape must still match the oracle.
  for (const Shape& s : {Shape{6, 4}, Shape{-1}, Shape{4, -1, 2}, Shape{24}, Shape{2, 12}}) {
    SCOPED_TRACE(ShapeToString(s));
    EXPECT_TRUE(CheckOp([s](const Tensor& x) { return reshape(x, s); }, {2, 3, 4}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return reshape(x, {1, 1}); }, {}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return reshape(x, {}); }, {1}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return reshape(x, {-1, 3}); }, {0, 3}));
  // view: only shapes the per-example layout allows (the leading dims merge, the last splits).
  for (const Shape& s : {Shape{6, 4}, Shape{-1, 4}, Shape{2, 3, 2, 2}, Shape{6, 2, -1}}) {
    SCOPED_TRACE(ShapeToString(s));
    EXPECT_TRUE(CheckOp([s](const Tensor& x) { return view(x, s); }, {2, 3, 4}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return view(x, {-1}); }, {}));
}

// ---- The rest.

TEST(ViewRules, FlattenAndUnflatten) {
  for (auto [s, e] : std::vector<std::pair<int64_t, int64_t>>{{0, -1}, {1, 2}, {0, 1}, {-2, -1},
                                                               {1, 1}}) {
    SCOPED_TRACE(::testing::Message() << s << ", " << e);
    EXPECT_TRUE(CheckOp([s = s, e = e](const Tensor& x) { return flatten(x, s, e); }, {2, 3, 4}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return flatten(x, 0, -1); }, {}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return unflatten(x, 0, {2, 3}); }, {6, 2}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return unflatten(x, -2, {3, -1}); }, {6, 2}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return unflatten(x, 1, {1, 2, 1}); }, {6, 2}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return unflatten(x, -1, {-1, 2}); }, {6, 4}));
}

TEST(ViewRules, Squeeze) {
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return squeeze(x); }, {1, 3, 1}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return squeeze(x); }, {3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return squeeze(x); }, {}));
  for (int64_t d : {0, 1, 2, -1}) {
    SCOPED_TRACE(d);
    EXPECT_TRUE(CheckOp([d](const Tensor& x) { return squeeze_dim(x, d); }, {1, 3, 1}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return squeeze_dim(x, -1); }, {}));
  for (const Shape& dims : {Shape{0, 2}, Shape{-1}, Shape{1}, Shape{0, 1, 2}, Shape{}}) {
    SCOPED_TRACE(ShapeToString(dims));
    EXPECT_TRUE(CheckOp([dims](const Tensor& x) { return squeeze_dims(x, dims); }, {1, 3, 1}));
  }
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return squeeze_dims(x, {0}); }, {}));
}

TEST(ViewRules, SqueezeKeepsABatchOfOne) {
  Tensor x = Rand({1, 1, 3, 1}, 1);  // one example of logical shape [1, 3, 1]
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze(t); }))(x).sizes(),
            (IntArrayRef{1, 3}));
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze_dim(t, 0); }))(x).sizes(),
            (IntArrayRef{1, 3, 1}));
  Tensor y = Rand({3, 1, 1}, 3);  // mapped at 1: one example of logical shape [3, 1]
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze(t); }), 1)(y).sizes(),
            (IntArrayRef{1, 3}));
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze_dims(t, {-1}); }), 1)(y).sizes(),
            (IntArrayRef{1, 3}));
  // A scalar per example: squeeze_dim(0) / squeeze_dims({0}) name its absent dim.
  Tensor s = Rand({1}, 2);
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze_dim(t, 0); }))(s).sizes(),
            (IntArrayRef{1}));
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return squeeze_dims(t, {0}); }))(s).sizes(),
            (IntArrayRef{1}));
}

TEST(ViewRules, T) {
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return t(x); }, {2, 3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return t(x); }, {3}));
  EXPECT_TRUE(CheckOp([](const Tensor& x) { return t(x); }, {}));
}

TEST(ViewRules, NarrowAndSlice) {
  for (auto [dim, start, length] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 1, 3}, {-1, -2, 2}, {0, 5, 0}, {1, 0, 3}, {0, -5, 5}}) {
    SCOPED_TRACE(::testing::Message() << dim << ", " << start << ", " << length);
    EXPECT_TRUE(CheckOp(
        [dim = dim, start = start, length = length](const Tensor& x) {
          return narrow(x, dim, start, length);
        },
        {5, 3}));
  }
  using Opt = std::optional<int64_t>;
  for (auto [dim, start, end, step] : std::vector<std::tuple<int64_t, Opt, Opt, int64_t>>{
           {0, 1, std::nullopt, 2},
           {-2, -4, -1, 1},
           {1, std::nullopt, std::nullopt, 2},
           {0, 10, 20, 1},
           {-1, -100, 100, 5},
           {0, 4, 2, 1}}) {
    SCOPED_TRACE(::testing::Message() << dim << ", " << step);
    EXPECT_TRUE(CheckOp(
        [dim = dim, start = start, end = end, step = step](const Tensor& x) {
          return slice(x, dim, start, end, step);
        },
        {6, 3}));
  }
}

TEST(ViewRules, Diagonal) {
  for (int64_t offset : {0, 1, -1, 2, -3, 5}) {
    SCOPED_TRACE(offset);
    EXPECT_TRUE(CheckOp([offset](const Tensor& x) { return diagonal(x, offset); }, {3, 4}));
  }
  for (auto [offset, d1, d2] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 1, 2}, {1, -1, 0}, {-1, 2, 0}, {0, 0, -2}}) {
    SCOPED_TRACE(::testing::Message() << offset << ", " << d1 << ", " << d2);
    EXPECT_TRUE(CheckOp(
        [offset = offset, d1 = d1, d2 = d2](const Tensor& x) {
          return diagonal(x, offset, d1, d2);
        },
        {2, 3, 4}));
  }
}

TEST(ViewRules, ContiguousCloneFlip) {
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) { return contiguous(x); }), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) { return clone(x); }), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) { return contiguous(transpose(x, 0, 1)); }),
                        {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) { return clone(x); }), {ArgSpec{{}}}));
  for (const Shape& dims : {Shape{0}, Shape{-1, 0}, Shape{}, Shape{1, 2, 0}}) {
    SCOPED_TRACE(ShapeToString(dims));
    EXPECT_TRUE(CheckVmap(Unary([dims](const Tensor& x) { return flip(x, dims); }),
                          {ArgSpec{{2, 3, 4}}}));
  }
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) { return flip(x, {}); }), {ArgSpec{{}}}));
  // In-place writes into a clone (or a copying contiguous) do not reach the input.
  Tensor x = Rand({2, 3, 4}, 3);
  Tensor before = clone(x);
  vmap(TensorFn([](const Tensor& e) { return add_(clone(e), 1.0); }))(x);
  vmap(TensorFn([](const Tensor& e) { return add_(contiguous(transpose(e, 0, 1)), 1.0); }))(x);
  EXPECT_TENSOR_EQ(x, before);
}

TEST(ViewRules, ContiguousAndCloneMakeEachExampleRowMajor) {
  auto bdim_of = [](const Tensor& t) {
    return static_cast<const BatchedTensorImpl*>(t.impl())->bdim();
  };
  // Mapped at 1 of a row-major [3, 4]: each example [3] has stride 4, so contiguous copies,
  // and the copy is batch-front (every example row-major), as eager contiguous would be.
  Tensor y = Rand({3, 4}, 5);
  vmap(TensorFn([&](const Tensor& e) {
    EXPECT_EQ(bdim_of(e), 1);
    EXPECT_EQ(bdim_of(clone(e)), 0);
    EXPECT_EQ(bdim_of(contiguous(e)), 0);
    return e;
  }), 1)(y);
  Tensor c = vmap(TensorFn([](const Tensor& t) { return contiguous(t); }), 1, 1)(y);
  EXPECT_FALSE(c.storage().is_same(y.storage()));
  EXPECT_TENSOR_EQ(c, y);
  // Batch-front and row-major already: contiguous is the value itself, clone still copies.
  Tensor x = transpose(Rand({4, 3}, 4), 0, 1);  // [3, 4] mapped at 1: physically [4, 3] rows
  Tensor same = vmap(TensorFn([](const Tensor& t) { return contiguous(t); }), 1, 1)(x);
  EXPECT_TRUE(same.storage().is_same(x.storage()));
  Tensor k = vmap(TensorFn([](const Tensor& t) { return clone(t); }), 1, 1)(x);
  EXPECT_FALSE(k.storage().is_same(x.storage()));
  EXPECT_TENSOR_EQ(k, x);
}

// Found by the property test: view(contiguous(e)) of examples that are strided inside a
// row-major batch (batch dim in the middle) threw view's "not compatible" error.
TEST(ViewRules, ViewOfContiguousWithTheBatchDimInside) {
  const Tensor x = Rand({2, 1, 1, 2, 3}, 6);  // examples [2, 1, 1, 3] along dim 3
  const Tensor batched = vmap(TensorFn([](const Tensor& e) { return view(contiguous(e), {6}); }),
                              3)(x);
  TensorList rows;
  for (int64_t b = 0; b < 2; ++b) rows.push_back(view(contiguous(select(x, 3, b)), {6}));
  EXPECT_TENSOR_EQ(batched, stack(rows, 0));
  const Tensor cloned = vmap(TensorFn([](const Tensor& e) { return view(clone(e), {2, 3}); }),
                             -2)(x);
  EXPECT_TENSOR_EQ(cloned, reshape(stack(rows, 0), {2, 2, 3}));
}

// Every view op's vmapped result views the input's storage (the output is the physical
// result with its batch dim moved to out_dim, itself a view).
TEST(ViewRules, VmappedViewsShareTheInputStorage) {
  const std::vector<std::pair<const char*, ViewFn>> views = {
      {"reshape", [](const Tensor& x) { return reshape(x, {3, 2, 4}); }},
      {"view", [](const Tensor& x) { return view(x, {-1}); }},
      {"flatten", [](const Tensor& x) { return flatten(x); }},
      {"unflatten", [](const Tensor& x) { return unflatten(x, 2, {2, 2}); }},
      {"expand", [](const Tensor& x) { return expand(x, {5, 2, 3, 4}); }},
      {"unsqueeze", [](const Tensor& x) { return unsqueeze(x, -1); }},
      {"squeeze", [](const Tensor& x) { return squeeze(x); }},
      {"squeeze_dim", [](const Tensor& x) { return squeeze_dim(x, 0); }},
      {"squeeze_dims", [](const Tensor& x) { return squeeze_dims(x, {0, 1}); }},
      {"movedim", [](const Tensor& x) { return movedim(x, 0, -1); }},
      {"permute", [](const Tensor& x) { return permute(x, {1, 2, 0}); }},
      {"transpose", [](const Tensor& x) { return transpose(x, 0, 2); }},
      {"t", [](const Tensor& x) { return t(select(x, 0, 1)); }},
      {"select", [](const Tensor& x) { return select(x, 1, -1); }},
      {"narrow", [](const Tensor& x) { return narrow(x, 2, 1, 2); }},
      {"slice", [](const Tensor& x) { return slice(x, -1, 1, std::nullopt, 2); }},
      {"diagonal", [](const Tensor& x) { return diagonal(x, 1, 1, 2); }},
  };
  const Tensor x = Rand({6, 2, 3, 4}, 9);  // contiguous, batch at 0
  const Tensor xt = movedim(x, 0, -1);     // the same batch, mapped at -1
  for (const auto& [name, f] : views) {
    SCOPED_TRACE(name);
    Tensor a = vmap(TensorFn(f))(x);
    EXPECT_TRUE(a.storage().is_same(x.storage()));
    Tensor b = vmap(TensorFn(f), -1)(xt);
    EXPECT_TRUE(b.storage().is_same(x.storage()));
    EXPECT_TENSOR_EQ(contiguous(b), contiguous(a));
    Tensor c = vmap(vmap(TensorFn(f)), -1)(movedim(Rand({6, 2, 2, 3, 4}, 10), 0, -1));
    EXPECT_EQ(c.dim(), a.dim() + 1);
  }
}

TEST(ViewRules, NestedViewsWriteThrough) {
  // A buffer made inside a doubly vmapped function, written through a chain of views.
  auto f = [](const TensorList& a) {
    Tensor buf = clone(a[0]);
    Tensor v = select(transpose(unsqueeze(buf, 0), 1, 2), 0, 0);  // [4, 3] view of [3, 4]
    add_(narrow(diagonal(v), 0, 1, 2), 10.0);
    Tensor row = expand(select(buf, 0, 0), {3, 4});  // a broadcast view: read only
    return TensorList{buf, movedim(buf, 0, 1) * 1.0, row};
  };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{3, 4}}}));
}

TEST(ViewRules, TripleNestingWithBatchDimsEverywhere) {
  // Levels map dims -1 (outer), 2, 1 (inner) of x [2, 3, 4, 5]: one example is x[:, i, m, o],
  // and the result is stacked [o, m, i, ...].
  Tensor x = Rand({2, 3, 4, 5}, 12);
  auto f = TensorFn([](const Tensor& e) { return movedim(unsqueeze(e, 0), 0, -1); });  // [2, 1]
  Tensor y = vmap(vmap(vmap(f, 1), 2), -1)(x);
  EXPECT_TENSOR_EQ(y, unsqueeze(permute(x, {3, 2, 1, 0}), -1));
  EXPECT_TRUE(y.storage().is_same(x.storage()));
}

// ---- Errors: the same messages as for one example.

TEST(ViewRules, ErrorsNameTheLogicalShapeAndDims) {
  const std::vector<std::pair<ViewFn, Shape>> cases = {
      {[](const Tensor& x) { return select(x, 0, 5); }, {3, 4}},
      {[](const Tensor& x) { return select(x, -1, -5); }, {3, 4}},
      {[](const Tensor& x) { return select(x, 2, 0); }, {3, 4}},
      {[](const Tensor& x) { return select(x, 0, 0); }, {}},
      {[](const Tensor& x) { return unsqueeze(x, 3); }, {3, 4}},
      {[](const Tensor& x) { return unsqueeze(x, -2); }, {}},
      {[](const Tensor& x) { return movedim(x, Shape{0, 1}, Shape{0}); }, {3, 4}},
      {[](const Tensor& x) { return movedim(x, 2, 0); }, {3, 4}},
      {[](const Tensor& x) { return movedim(x, Shape{0, 0}, Shape{0, 1}); }, {3, 4}},
      {[](const Tensor& x) { return permute(x, {0, 1, 2}); }, {3, 4}},
      {[](const Tensor& x) { return permute(x, {0, 0}); }, {3, 4}},
      {[](const Tensor& x) { return transpose(x, 0, 2); }, {3, 4}},
      {[](const Tensor& x) { return transpose(x, 1, 0); }, {}},
      {[](const Tensor& x) { return t(x); }, {2, 3, 4}},
      {[](const Tensor& x) { return reshape(x, {4, -1}); }, {2, 3}},
      {[](const Tensor& x) { return reshape(x, {-1, -1}); }, {2, 3}},
      {[](const Tensor& x) { return reshape(x, {7}); }, {2, 3}},
      {[](const Tensor& x) { return reshape(x, {0, -1}); }, {0, 3}},
      {[](const Tensor& x) { return view(x, {-2, 3}); }, {2, 3}},
      {[](const Tensor& x) { return flatten(x, 1, 0); }, {3, 4}},
      {[](const Tensor& x) { return flatten(x, 0, 2); }, {3, 4}},
      {[](const Tensor& x) { return unflatten(x, 0, {4, -1}); }, {6, 2}},
      {[](const Tensor& x) { return unflatten(x, 2, {1}); }, {6, 2}},
      {[](const Tensor& x) { return unflatten(x, 0, {}); }, {6, 2}},
      {[](const Tensor& x) { return unflatten(x, 0, {1}); }, {}},
      {[](const Tensor& x) { return expand(x, {5, 4}); }, {3, 1}},
      {[](const Tensor& x) { return expand(x, {-1, 3, 1}); }, {3, 1}},
      {[](const Tensor& x) { return expand(x, {4}); }, {3, 1}},
      {[](const Tensor& x) { return expand(x, {3, -2}); }, {3, 1}},
      {[](const Tensor& x) { return squeeze_dim(x, 2); }, {1, 3}},
      {[](const Tensor& x) { return squeeze_dims(x, {0, -2}); }, {1, 3}},
      {[](const Tensor& x) { return squeeze_dims(x, {0, -1}); }, {}},
      {[](const Tensor& x) { return narrow(x, 0, 4, 0); }, {3, 4}},
      {[](const Tensor& x) { return narrow(x, -2, 1, 3); }, {3, 4}},
      {[](const Tensor& x) { return narrow(x, 0, 0, -1); }, {3, 4}},
      {[](const Tensor& x) { return narrow(x, 0, 0, 1); }, {}},
      {[](const Tensor& x) { return slice(x, 2, 0, 1, 1); }, {3, 4}},
      {[](const Tensor& x) { return slice(x, 0, 0, 1, 0); }, {3, 4}},
      {[](const Tensor& x) { return slice(x, 0, 0, 1, 1); }, {}},
      {[](const Tensor& x) { return diagonal(x); }, {3}},
      {[](const Tensor& x) { return diagonal(x, 0, 1, -1); }, {3, 4}},
      {[](const Tensor& x) { return diagonal(x, 0, 0, 2); }, {3, 4}},
      {[](const Tensor& x) { return flip(x, {2}); }, {3, 4}},
      {[](const Tensor& x) { return flip(x, {1, -1}); }, {3, 4}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "case " << i);
    ExpectSameError(cases[i].first, cases[i].second, 0);
    ExpectSameError(cases[i].first, cases[i].second, -1);
  }
}

TEST(ViewRules, ViewThrowsWhenTheExampleCannotBeViewed) {
  // Each example is a transposed [3, 2] (strides [1, 3]): no strides express [6].
  Tensor x = transpose(Rand({4, 2, 3}, 11), 1, 2);
  auto f = TensorFn([](const Tensor& e) { return view(e, {6}); });
  EXPECT_FT_ERROR(f(select(x, 0, 0)), "view: size is not compatible");
  EXPECT_FT_ERROR(vmap(f)(x), "view: size is not compatible");
  EXPECT_FT_ERROR(vmap(f, 1)(movedim(x, 0, 1)), "view: size is not compatible");
  // reshape copies instead.
  auto g = TensorFn([](const Tensor& e) { return reshape(e, {6}); });
  EXPECT_TENSOR_EQ(vmap(g)(x), reshape(x, {4, 6}));
}

TEST(ViewRules, InferredSizesArePerExampleEvenForAnEmptyBatch) {
  Tensor none = zeros({0, 2, 3}, kFloat64);
  auto f = TensorFn([](const Tensor& e) { return reshape(e, {-1, 2}); });
  EXPECT_EQ(vmap(f)(none).sizes(), (IntArrayRef{0, 3, 2}));
  auto g = TensorFn([](const Tensor& e) { return view(e, {3, -1}); });
  EXPECT_EQ(vmap(g)(none).sizes(), (IntArrayRef{0, 3, 2}));
  auto h = TensorFn([](const Tensor& e) { return expand(e, {5, -1, 3}); });
  EXPECT_EQ(vmap(h)(none).sizes(), (IntArrayRef{0, 5, 2, 3}));
}

// ---- The scatter ops: two tensor arguments, either or both batched (CheckVmap runs every
// in_dims combination: self only, src only, both; batch 1 and 3; nested).

using ScatterFn = std::function<Tensor(const Tensor&, const Tensor&)>;

testing::LoopFn Binary(ScatterFn f) {
  return [f = std::move(f)](const TensorList& a) { return TensorList{f(a[0], a[1])}; };
}

// CheckScatter: CheckVmap of f(self, src) for float64 values, and for int64 ones.
::testing::AssertionResult CheckScatter(const ScatterFn& f, const Shape& self,
                                        const Shape& src) {
  if (auto r = CheckVmap(Binary(f), {ArgSpec{self}, ArgSpec{src}}); !r) return r << " (float64)";
  const testing::ValueMaker ints = testing::IndexMaker(50);
  if (auto r = CheckVmap(Binary(f), {ArgSpec{self, ints}, ArgSpec{src, ints}}); !r) {
    return r << " (int64)";
  }
  return ::testing::AssertionSuccess();
}

TEST(ViewRules, SelectScatter) {
  struct Case {
    int64_t dim, index;
    Shape src;
  };
  for (const Case& c : std::vector<Case>{
           {0, 0, {4}}, {0, -1, {4}}, {1, 2, {3}}, {-1, 3, {3}}, {-2, 1, {4}}}) {
    SCOPED_TRACE(::testing::Message() << c.dim << ", " << c.index);
    EXPECT_TRUE(CheckScatter(
        [c](const Tensor& x, const Tensor& v) { return select_scatter(x, v, c.dim, c.index); },
        {3, 4}, c.src));
  }
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, -2); }, {3}, {}));
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 1, 0); }, {2, 3, 0},
      {2, 0}));
}

TEST(ViewRules, SliceScatter) {
  struct Case {
    int64_t dim;
    std::optional<int64_t> start, end;
    int64_t step;
    Shape src;
  };
  const std::optional<int64_t> none;
  for (const Case& c : std::vector<Case>{{1, 1, none, 2, {4, 3}},
                                         {-1, -4, -1, 2, {4, 2}},
                                         {0, none, none, 1, {4, 6}},
                                         {-2, 1, 3, 1, {2, 6}},
                                         {0, 5, 9, 1, {0, 6}},
                                         {1, -100, 100, 4, {4, 2}}}) {
    SCOPED_TRACE(::testing::Message() << c.dim << " step " << c.step);
    EXPECT_TRUE(CheckScatter(
        [c](const Tensor& x, const Tensor& v) {
          return slice_scatter(x, v, c.dim, c.start, c.end, c.step);
        },
        {4, 6}, c.src));
  }
}

TEST(ViewRules, DiagonalScatter) {
  struct Case {
    int64_t offset, dim1, dim2;
    Shape self, src;
  };
  for (const Case& c : std::vector<Case>{{0, 0, 1, {3, 4}, {3}},
                                         {1, 0, 1, {3, 4}, {3}},
                                         {-1, 0, 1, {3, 4}, {2}},
                                         {1, 1, 0, {3, 4}, {2}},
                                         {5, 0, 1, {3, 4}, {0}},
                                         {0, 0, 2, {2, 3, 3}, {3, 2}},
                                         {1, -1, -2, {2, 3, 3}, {2, 2}}}) {
    SCOPED_TRACE(::testing::Message() << c.offset << ", " << c.dim1 << ", " << c.dim2);
    EXPECT_TRUE(CheckScatter(
        [c](const Tensor& x, const Tensor& v) {
          return diagonal_scatter(x, v, c.offset, c.dim1, c.dim2);
        },
        c.self, c.src));
  }
}

// What functionalize emits for a write through a view: the view's new values written back
// into the base, out of place. One argument, so the scatter's self and src are both batched.
TEST(ViewRules, ScatterOfAViewOfItsOwnBase) {
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) {
                          return select_scatter(x, sin(select(x, 1, 0)) * 2.0, 1, 0);
                        }),
                        {ArgSpec{{3, 4}}}));
  EXPECT_TRUE(CheckVmap(Unary([](const Tensor& x) {
                          return diagonal_scatter(x, exp(diagonal(x, -1)), -1);
                        }),
                        {ArgSpec{{3, 3}}}));
}

// An unbatched self with a batched src gives a batched result; self is not written.
TEST(ViewRules, UnbatchedSelfBatchedSrc) {
  Tensor self = Rand({2, 3}, 3);
  const std::vector<double> before = self.to_vector<double>();
  Tensor src = Rand({4, 3}, 4);  // 4 examples of a row
  TensorFn f = [&](const Tensor& v) { return select_scatter(self, v, 0, 1); };
  Tensor out = vmap(f)(src);
  EXPECT_EQ(out.sizes(), (IntArrayRef{4, 2, 3}));
  for (int64_t b = 0; b < 4; ++b) {
    EXPECT_TENSOR_EQ(select(out, 0, b), stack({select(self, 0, 0), select(src, 0, b)}, 0));
  }
  EXPECT_EQ(self.to_vector<double>(), before);
}

// ExpectSameScatterError: vmap(f) throws exactly the error f throws for one example, with
// self only, src only, and both batched (at 0 and at -1).
void ExpectSameScatterError(const ScatterFn& f, const Shape& self_shape, const Shape& src_shape,
                            DType src_dtype = kFloat64) {
  Tensor self = Rand(self_shape, 7);
  Tensor src = to(Rand(src_shape, 8), src_dtype);
  std::string eager;
  try {
    f(self, src);
    ADD_FAILURE() << "f does not throw for one example";
    return;
  } catch (const Error& e) {
    eager = e.what();
  }
  const TensorListFn fl = [f](const TensorList& a) { return TensorList{f(a[0], a[1])}; };
  Tensor selfs = stack({self, self}, 0), srcs = stack({src, src}, 0);
  EXPECT_FT_ERROR(vmap(fl, Dims({0, 0}))({selfs, srcs}), eager);
  EXPECT_FT_ERROR(vmap(fl, Dims({0, std::nullopt}))({selfs, src}), eager);
  EXPECT_FT_ERROR(vmap(fl, Dims({std::nullopt, 0}))({self, srcs}), eager);
  EXPECT_FT_ERROR(
      vmap(fl, Dims({-1, -1}))({stack({self, self}, -1), stack({src, src}, -1)}), eager);
}

TEST(ViewRules, ScatterErrorsNameTheLogicalShapesAndDims) {
  struct Case {
    ScatterFn f;
    Shape self, src;
    DType src_dtype = kFloat64;
  };
  const std::vector<Case> cases = {
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 5); }, {3, 4}, {4}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, -1, -5); }, {3, 4}, {3}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 2, 0); }, {3, 4}, {4}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 0); }, {}, {}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 1); }, {3, 4}, {3}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 1); }, {3, 4},
       {1, 4}},
      {[](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 1, 1); }, {3, 4}, {3},
       kFloat32},
      {[](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 0, 0, 1, 0); }, {3, 4},
       {1, 4}},
      {[](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 2); }, {3, 4}, {3, 4}},
      {[](const Tensor& x, const Tensor& v) { return slice_scatter(x, v); }, {}, {}},
      {[](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 1, 0, 2); }, {3, 4},
       {3, 3}},
      {[](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 1, 0, 2); }, {3, 4},
       {3, 2}, kInt64},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v); }, {3}, {1}},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, 0, 1, -1); }, {3, 4},
       {3}},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, 0, 0, 2); }, {3, 4},
       {3}},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, 1); }, {3, 4}, {4}},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, 0, 0, 2); },
       {2, 3, 2}, {2, 3}},
      {[](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v); }, {3, 4}, {3},
       kFloat32},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "case " << i);
    ExpectSameScatterError(cases[i].f, cases[i].self, cases[i].src, cases[i].src_dtype);
  }
}

}  // namespace
}  // namespace ft
