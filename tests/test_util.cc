#include "tests/test_util.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensor/copy.h"

namespace ft::testing {

::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected,
                                      double atol, double rtol) {
  if (!actual.defined() || !expected.defined()) {
    return ::testing::AssertionFailure() << "undefined tensor";
  }
  if (!std::equal(actual.sizes().begin(), actual.sizes().end(), expected.sizes().begin(),
                  expected.sizes().end())) {
    return ::testing::AssertionFailure()
           << "shape " << ShapeToString(actual.sizes()) << " != expected "
           << ShapeToString(expected.sizes());
  }
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DTypeName(actual.dtype())
                                         << " != expected " << DTypeName(expected.dtype());
  }
  const std::vector<double> a = actual.to_vector<double>();
  const std::vector<double> e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(a[i])) continue;
    if (a[i] == e[i]) continue;  // also equal infinities
    if (!(std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs expected " << e[i] << "\nactual:\n"
             << actual << "\nexpected:\n"
             << expected;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TensorEqual(const Tensor& actual, const Tensor& expected) {
  return TensorNear(actual, expected, 0.0, 0.0);
}

::testing::AssertionResult ThrowsFtError(const std::function<void()>& fn,
                                         const std::string& fragment) {
  try {
    fn();
  } catch (const Error& e) {
    if (std::string(e.what()).find(fragment) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "ft::Error message \"" << e.what() << "\" lacks \"" << fragment << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-ft exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw (expected \"" << fragment << "\")";
}

Tensor NonContiguousCopy(const Tensor& t) {
  // Store the values in a buffer twice as long and view every other element: same values,
  // stride 2 in the last dim (and correspondingly larger outer strides).
  Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape big = sizes;
  if (big.empty()) return kernels::clone(t);
  big.back() *= 2;
  Tensor storage = EmptyContiguous(big, t.dtype());
  Shape strides = ContiguousStrides(big);
  strides.back() = 2;
  Tensor view = MakeDense(storage.storage(), t.dtype(), sizes, strides, 0);
  kernels::copy_into(view, t);
  return view;
}

}  // namespace ft::testing
