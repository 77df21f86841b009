// ft/tensor/factories.h
//
// Factories: new dense tensors from shapes and values. They take no tensor input, so they
// need no transform rule: inside a transform they make ordinary (unbatched, constant)
// tensors, exactly like torch.zeros inside torch.func.vmap. The one exception is a transform
// that must own every tensor its function makes (functionalize): it installs a
// FactoryResultHook, through which every factory here passes its result. The `*_like`
// factories take a tensor and live with the ops in //ops.
//
// Default dtype: float32 (kDefaultFloat). Integral fill values keep their kind where the
// PyTorch equivalent does (arange(5) is int64, full({2}, 1) is int64, full({2}, 1.5) float32).
//
// Example:
//   Tensor a = ft::zeros({2, 3});                       // float32 zeros
//   Tensor b = ft::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}); // float64 from the vector's type
//   Tensor c = ft::arange(0.0, 1.0, 0.25);               // [0, 0.25, 0.5, 0.75]
#ifndef FT_TENSOR_FACTORIES_H_
#define FT_TENSOR_FACTORIES_H_

#include <complex>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

// FactoryResultHook: while a FactoryResultHookScope installs one on this thread, each factory
// below returns Adopt(t) instead of its new dense tensor t. ft::functionalize wraps the
// tensors its function makes (`buf = zeros({3})`), so that in-place writes into them become
// its own, out-of-place (interpreters/functionalize). Adopt must return a tensor of t's
// sizes and dtype; it may return t itself.
class FactoryResultHook {
 public:
  virtual Tensor Adopt(Tensor t) = 0;

 protected:
  ~FactoryResultHook() = default;
};

namespace internal {
extern constinit thread_local FactoryResultHook* tls_factory_result_hook;
}  // namespace internal

// FactoryResultHookScope installs `hook` for a scope (the previous hook, if any, is restored
// after, exceptions included).
class FactoryResultHookScope {
 public:
  explicit FactoryResultHookScope(FactoryResultHook* hook)
      : saved_(internal::tls_factory_result_hook) {
    internal::tls_factory_result_hook = hook;
  }
  ~FactoryResultHookScope() { internal::tls_factory_result_hook = saved_; }
  FactoryResultHookScope(const FactoryResultHookScope&) = delete;
  FactoryResultHookScope& operator=(const FactoryResultHookScope&) = delete;

 private:
  FactoryResultHook* saved_;
};

// empty returns an uninitialized contiguous tensor. Throws on a negative size.
Tensor empty(IntArrayRef shape, DType dtype = kDefaultFloat);
Tensor zeros(IntArrayRef shape, DType dtype = kDefaultFloat);
Tensor ones(IntArrayRef shape, DType dtype = kDefaultFloat);

// full fills with `value`; the dtype defaults to the value's kind (bool, int64, float32).
Tensor full(IntArrayRef shape, Scalar value);
Tensor full(IntArrayRef shape, Scalar value, DType dtype);

// scalar_tensor returns a rank-0 tensor.
Tensor scalar_tensor(Scalar value);
Tensor scalar_tensor(Scalar value, DType dtype);

// arange: [start, end) with `step`, like torch.arange. int64 when every argument is
// integral, else float32 (or `dtype`). Throws when step is 0 or has the wrong sign.
Tensor arange(Scalar end);
Tensor arange(Scalar start, Scalar end, Scalar step = 1);
Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype);

// linspace: `steps` evenly spaced values from start to end inclusive. Throws if steps < 0.
Tensor linspace(double start, double end, int64_t steps, DType dtype = kDefaultFloat);

// eye: an n x m identity matrix (m defaults to n).
Tensor eye(int64_t n, DType dtype = kDefaultFloat);
Tensor eye(int64_t n, int64_t m, DType dtype = kDefaultFloat);

// tensor copies `values` into a new tensor of `shape` (1-D of values.size() when omitted).
// The dtype follows the element type: float, double, int64_t, bool, std::complex<float>
// (complex64), std::complex<double> (complex128), Half, BFloat16, int8_t, int16_t and
// uint8_t. `int` gives int64, as a Python int gives torch.int64 (ft::tensor({1, 2})); for
// int32 convert (ft::to(t, kInt32)). Throws when the number of values does not match the
// shape.
Tensor tensor(const std::vector<float>& values, IntArrayRef shape);
Tensor tensor(const std::vector<double>& values, IntArrayRef shape);
Tensor tensor(const std::vector<int64_t>& values, IntArrayRef shape);
Tensor tensor(const std::vector<int>& values, IntArrayRef shape);
Tensor tensor(const std::vector<bool>& values, IntArrayRef shape);
Tensor tensor(const std::vector<std::complex<float>>& values, IntArrayRef shape);
Tensor tensor(const std::vector<std::complex<double>>& values, IntArrayRef shape);
Tensor tensor(const std::vector<Half>& values, IntArrayRef shape);
Tensor tensor(const std::vector<BFloat16>& values, IntArrayRef shape);
Tensor tensor(const std::vector<int8_t>& values, IntArrayRef shape);
Tensor tensor(const std::vector<int16_t>& values, IntArrayRef shape);
Tensor tensor(const std::vector<uint8_t>& values, IntArrayRef shape);
template <typename T>
Tensor tensor(const std::vector<T>& values) {
  return tensor(values, {static_cast<int64_t>(values.size())});
}
// tensor(std::initializer_list) for literals: ft::tensor({1.0, 2.0}) is float64;
// ft::tensor({1.0f, 2.0f}) float32.
template <typename T>
Tensor tensor(std::initializer_list<T> values, IntArrayRef shape) {
  return tensor(std::vector<T>(values), shape);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values) {
  return tensor(std::vector<T>(values));
}

}  // namespace ft

#endif  // FT_TENSOR_FACTORIES_H_
