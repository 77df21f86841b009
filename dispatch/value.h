// ft/dispatch/value.h
//
// Value: one boxed argument or result of an op, as interpreters see it. The dispatcher boxes
// a call only when a transform is active (see dispatch.h); with no transform the kernel is
// called with its typed arguments directly.
//
// A Value holds exactly one of: nothing (None, also "optional not given"), a Tensor, a
// TensorList, a Scalar (a number whose kind matters for promotion), an int64 (dims, sizes),
// a double, a bool, a Shape (dim or size lists), a DType, or a Generator pointer (not owned).
//
// Example:
//   ValueList args = {Value(x), Value(int64_t{1}), Value(true)};   // (self, dim, keepdim)
//   args[0].tensor().sizes();  args[1].to_int() == 1
#ifndef FT_DISPATCH_VALUE_H_
#define FT_DISPATCH_VALUE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <new>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

// NOTE: [Value is a hand-written tagged union]
// Every op under a transform boxes its arguments and results into ValueLists, copies and
// moves them between interpreters, and destroys them: several Values per op, each time. A
// std::variant visits a jump table for each of those; this union tests the tag inline, with
// the tensor case first (most Values are tensors) and only the three owning kinds (Tensor,
// TensorList, Shape) doing any work. Invariant: exactly the member named by `tag_` is alive.
class Value {
 public:
  enum class Tag : uint8_t {
    kNone,
    kTensor,
    kTensorList,
    kScalar,
    kInt,
    kDouble,
    kBool,
    kShape,
    kDType,
    kGenerator
  };

  Value() noexcept {}
  Value(Tensor t) noexcept : tag_(Tag::kTensor) {  // NOLINT
    new (&u_.tensor) Tensor(std::move(t));
  }
  Value(TensorList ts) noexcept : tag_(Tag::kTensorList) {  // NOLINT
    new (&u_.tensor_list) TensorList(std::move(ts));
  }
  Value(Scalar s) noexcept : tag_(Tag::kScalar) { new (&u_.scalar) Scalar(s); }  // NOLINT
  Value(int64_t i) noexcept : tag_(Tag::kInt) { u_.int_value = i; }           // NOLINT
  Value(double d) noexcept : tag_(Tag::kDouble) { u_.double_value = d; }      // NOLINT
  Value(bool b) noexcept : tag_(Tag::kBool) { u_.bool_value = b; }            // NOLINT
  Value(Shape s) noexcept : tag_(Tag::kShape) {                               // NOLINT
    new (&u_.shape) Shape(std::move(s));
  }
  Value(DType d) noexcept : tag_(Tag::kDType) { u_.dtype = d; }                    // NOLINT
  Value(Generator* g) noexcept : tag_(Tag::kGenerator) { u_.generator = g; }      // NOLINT

  Value(const Value& other) : tag_(other.tag_) { CopyPayload(other); }
  Value(Value&& other) noexcept : tag_(other.tag_) { MovePayload(other); }
  Value& operator=(const Value& other) {
    if (this == &other) return *this;
    if (tag_ == Tag::kTensor && other.tag_ == Tag::kTensor) {
      u_.tensor = other.u_.tensor;
      return *this;
    }
    Value copy(other);  // before destroying ours: `other` may live inside it
    return *this = std::move(copy);
  }
  Value& operator=(Value&& other) noexcept {
    if (this == &other) return *this;
    if (tag_ == Tag::kTensor && other.tag_ == Tag::kTensor) {
      u_.tensor = std::move(other.u_.tensor);
      return *this;
    }
    DestroyPayload();
    tag_ = other.tag_;
    MovePayload(other);
    return *this;
  }
  ~Value() { DestroyPayload(); }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::kNone; }
  bool is_tensor() const { return tag_ == Tag::kTensor; }
  bool is_tensor_list() const { return tag_ == Tag::kTensorList; }

  // Accessors; each FT_CHECKs the tag (a mismatch is a bug in a rule, not user input). The
  // tensor ones are inline: every interpreter and rule reads its arguments through them.
  const Tensor& tensor() const {
    FT_CHECK(tag_ == Tag::kTensor);
    return u_.tensor;
  }
  Tensor& mutable_tensor() {
    FT_CHECK(tag_ == Tag::kTensor);
    return u_.tensor;
  }
  const TensorList& tensor_list() const {
    FT_CHECK(tag_ == Tag::kTensorList);
    return u_.tensor_list;
  }
  TensorList& mutable_tensor_list() {
    FT_CHECK(tag_ == Tag::kTensorList);
    return u_.tensor_list;
  }
  Scalar scalar() const;
  int64_t to_int() const;
  double to_double() const;
  bool to_bool() const;
  const Shape& shape() const;
  DType dtype() const;
  Generator* generator() const;

  // ToString: a short description for messages and the recording interpreter, e.g.
  // "Tensor[2, 3] float32", "1", "[0, 1]", "None".
  std::string ToString() const;

 private:
  union Payload {
    Payload() noexcept {}
    ~Payload() {}
    Tensor tensor;
    TensorList tensor_list;
    Scalar scalar;
    int64_t int_value;
    double double_value;
    bool bool_value;
    Shape shape;
    DType dtype;
    Generator* generator;
  };

  // Each of these starts the member `tag_` names in `u_` (which holds none) from `other`.
  void CopyPayload(const Value& other) {
    if (tag_ == Tag::kTensor) {
      new (&u_.tensor) Tensor(other.u_.tensor);
    } else if (tag_ == Tag::kTensorList) {
      new (&u_.tensor_list) TensorList(other.u_.tensor_list);
    } else if (tag_ == Tag::kShape) {
      new (&u_.shape) Shape(other.u_.shape);
    } else {
      CopyTrivialPayload(other);
    }
  }
  void MovePayload(Value& other) noexcept {
    if (tag_ == Tag::kTensor) {
      new (&u_.tensor) Tensor(std::move(other.u_.tensor));
    } else if (tag_ == Tag::kTensorList) {
      new (&u_.tensor_list) TensorList(std::move(other.u_.tensor_list));
    } else if (tag_ == Tag::kShape) {
      new (&u_.shape) Shape(std::move(other.u_.shape));
    } else {
      CopyTrivialPayload(other);
    }
  }
  void CopyTrivialPayload(const Value& other) noexcept;
  void DestroyPayload() noexcept {
    if (tag_ == Tag::kTensor) {
      u_.tensor.~Tensor();
    } else if (tag_ == Tag::kTensorList) {
      u_.tensor_list.~TensorList();
    } else if (tag_ == Tag::kShape) {
      u_.shape.~Shape();
    }
    tag_ = Tag::kNone;
  }

  Payload u_;
  Tag tag_ = Tag::kNone;
};

const char* ValueTagName(Value::Tag tag);

using ValueList = absl::InlinedVector<Value, 4>;

// The function kinds every transform takes and returns (vmap, functionalize, jit, ...):
// defined here, below all of them, so that each transform's header is enough on its own.
using ValueFn = std::function<ValueList(const ValueList&)>;
using TensorListFn = std::function<TensorList(const TensorList&)>;
using TensorFn = std::function<Tensor(const Tensor&)>;

// MapTensorArgs: `args` with every tensor (TensorList elements included) replaced by
// fn(tensor), non-tensors copied. Interpreters unwrap their level with it.
template <typename Fn>
ValueList MapTensorArgs(const ValueList& args, Fn&& fn) {
  ValueList out;
  for (const Value& v : args) {
    if (v.is_tensor()) {
      out.emplace_back(fn(v.tensor()));
    } else if (v.is_tensor_list()) {
      TensorList values;
      for (const Tensor& t : v.tensor_list()) values.push_back(fn(t));
      out.emplace_back(std::move(values));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace ft

#endif  // FT_DISPATCH_VALUE_H_
