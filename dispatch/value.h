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
#include <variant>

#include "absl/container/inlined_vector.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

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

  Value() = default;
  Value(Tensor t) : v_(std::move(t)) {}                // NOLINT
  Value(TensorList ts) : v_(std::move(ts)) {}          // NOLINT
  Value(Scalar s) : v_(s) {}                           // NOLINT
  Value(int64_t i) : v_(i) {}                          // NOLINT
  Value(double d) : v_(d) {}                           // NOLINT
  Value(bool b) : v_(b) {}                             // NOLINT
  Value(Shape s) : v_(std::move(s)) {}                 // NOLINT
  Value(DType d) : v_(d) {}                            // NOLINT
  Value(Generator* g) : v_(g) {}                       // NOLINT

  Tag tag() const { return static_cast<Tag>(v_.index()); }
  bool is_none() const { return tag() == Tag::kNone; }
  bool is_tensor() const { return tag() == Tag::kTensor; }
  bool is_tensor_list() const { return tag() == Tag::kTensorList; }

  // Accessors; each FT_CHECKs the tag (a mismatch is a bug in a rule, not user input). The
  // tensor ones are inline: every interpreter and rule reads its arguments through them.
  const Tensor& tensor() const {
    FT_CHECK(tag() == Tag::kTensor);
    return *std::get_if<Tensor>(&v_);
  }
  Tensor& mutable_tensor() {
    FT_CHECK(tag() == Tag::kTensor);
    return *std::get_if<Tensor>(&v_);
  }
  const TensorList& tensor_list() const {
    FT_CHECK(tag() == Tag::kTensorList);
    return *std::get_if<TensorList>(&v_);
  }
  TensorList& mutable_tensor_list() {
    FT_CHECK(tag() == Tag::kTensorList);
    return *std::get_if<TensorList>(&v_);
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
  std::variant<std::monostate, Tensor, TensorList, Scalar, int64_t, double, bool, Shape, DType,
               Generator*>
      v_;
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
