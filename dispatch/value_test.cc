// Tests for Value, the tagged union every boxed op call goes through: each kind round-trips,
// copies share and moves transfer ownership (counted by the tensors' owners), assignment
// between kinds destroys the old member, and nothing leaks or is freed twice (the sanitizer
// configuration runs this test too).
#include "dispatch/value.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/factories.h"

namespace ft {
namespace {

long Owners(const Tensor& t) { return t.impl_ptr().use_count(); }

// One Value of every kind, in Tag order.
std::vector<Value> OneOfEach(const Tensor& t, Generator* g) {
  std::vector<Value> values;
  values.emplace_back();
  values.emplace_back(t);
  values.emplace_back(TensorList{t, t});
  values.emplace_back(Scalar(2.5));
  values.emplace_back(int64_t{-7});
  values.emplace_back(0.25);
  values.emplace_back(true);
  values.emplace_back(Shape{1, 2, 3, 4, 5, 6, 7});  // past the inline capacity: heap storage
  values.emplace_back(kFloat64);
  values.emplace_back(g);
  return values;
}

void ExpectSame(const Value& a, const Value& b) {
  ASSERT_EQ(a.tag(), b.tag());
  EXPECT_EQ(a.ToString(), b.ToString());
  switch (a.tag()) {
    case Value::Tag::kTensor:
      EXPECT_EQ(a.tensor().impl(), b.tensor().impl());
      break;
    case Value::Tag::kTensorList:
      ASSERT_EQ(a.tensor_list().size(), b.tensor_list().size());
      for (size_t i = 0; i < a.tensor_list().size(); ++i) {
        EXPECT_EQ(a.tensor_list()[i].impl(), b.tensor_list()[i].impl());
      }
      break;
    case Value::Tag::kScalar:
      EXPECT_EQ(a.scalar().to<double>(), b.scalar().to<double>());
      break;
    case Value::Tag::kInt:
      EXPECT_EQ(a.to_int(), b.to_int());
      break;
    case Value::Tag::kDouble:
      EXPECT_EQ(a.to_double(), b.to_double());
      break;
    case Value::Tag::kBool:
      EXPECT_EQ(a.to_bool(), b.to_bool());
      break;
    case Value::Tag::kShape:
      EXPECT_EQ(a.shape(), b.shape());
      break;
    case Value::Tag::kDType:
      EXPECT_EQ(a.dtype(), b.dtype());
      break;
    case Value::Tag::kGenerator:
      EXPECT_EQ(a.generator(), b.generator());
      break;
    case Value::Tag::kNone:
      break;
  }
}

TEST(ValueTest, EachKindReadsBackWhatWasStored) {
  Tensor t = zeros({2, 3});
  Generator g(5);
  std::vector<Value> v = OneOfEach(t, &g);
  EXPECT_TRUE(v[0].is_none());
  EXPECT_EQ(v[1].tensor().impl(), t.impl());
  EXPECT_EQ(v[2].tensor_list().size(), 2u);
  EXPECT_EQ(v[3].scalar().to<double>(), 2.5);
  EXPECT_EQ(v[4].to_int(), -7);
  EXPECT_EQ(v[4].scalar().to<int64_t>(), -7);  // an int reads as a Scalar too
  EXPECT_EQ(v[5].to_double(), 0.25);
  EXPECT_TRUE(v[6].to_bool());
  EXPECT_EQ(v[7].shape(), (Shape{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(v[8].dtype(), kFloat64);
  EXPECT_EQ(v[9].generator(), &g);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(static_cast<size_t>(v[i].tag()), i);
  EXPECT_EQ(v[1].ToString(), "Tensor[2, 3] float32");
}

TEST(ValueTest, CopiesShareTensorsAndMovesTransferThem) {
  Tensor t = zeros({4});
  ASSERT_EQ(Owners(t), 1);
  {
    Value a(t);
    EXPECT_EQ(Owners(t), 2);
    Value b(a);  // copy: one more owner
    EXPECT_EQ(Owners(t), 3);
    Value c(std::move(a));  // move: same count, `a` left holding an undefined tensor
    EXPECT_EQ(Owners(t), 3);
    EXPECT_TRUE(a.is_tensor());
    EXPECT_FALSE(a.tensor().defined());
    Value list(TensorList{t, t, t});
    EXPECT_EQ(Owners(t), 6);
    Value list_copy = list;
    EXPECT_EQ(Owners(t), 9);
  }
  EXPECT_EQ(Owners(t), 1);  // every member destroyed exactly once
}

TEST(ValueTest, AssignmentBetweenEveryPairOfKinds) {
  Tensor t = zeros({3});
  Generator g(1);
  const std::vector<Value> kinds = OneOfEach(t, &g);
  const long base = Owners(t);
  for (const Value& from : kinds) {
    for (const Value& to : kinds) {
      Value copied = to;
      copied = from;
      ExpectSame(copied, from);
      Value moved = to;
      Value source = from;
      moved = std::move(source);
      ExpectSame(moved, from);
    }
  }
  EXPECT_EQ(Owners(t), base);  // assignments destroyed what they replaced
}

TEST(ValueTest, SelfAssignmentKeepsTheValue) {
  Tensor t = zeros({2});
  Generator g(1);
  for (Value v : OneOfEach(t, &g)) {
    const Value before = v;
    Value& alias = v;
    v = alias;
    ExpectSame(v, before);
    v = std::move(alias);
    ExpectSame(v, before);
  }
  EXPECT_EQ(Owners(t), 1);
}

TEST(ValueTest, ValueListGrowsPastItsInlineCapacity) {
  Tensor t = zeros({1});
  {
    ValueList list;
    for (int i = 0; i < 9; ++i) list.emplace_back(i % 2 == 0 ? Value(t) : Value(int64_t{i}));
    EXPECT_EQ(Owners(t), 6);
    ValueList copy = list;
    EXPECT_EQ(Owners(t), 11);
    list.erase(list.begin());  // shifts every element by a move assignment
    EXPECT_EQ(Owners(t), 10);
    EXPECT_EQ(list[0].to_int(), 1);
    EXPECT_EQ(list[1].tensor().impl(), t.impl());
  }
  EXPECT_EQ(Owners(t), 1);
}

}  // namespace
}  // namespace ft
