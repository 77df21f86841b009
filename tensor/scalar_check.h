// ft/tensor/scalar_check.h
//
// CheckScalarFits: whether a C++ scalar can become an element of a dtype without overflow,
// the check torch makes when a scalar fills a tensor (full, full_like, fill_): it refuses
// `torch.full((2,), 300, dtype=torch.int8)` ("value cannot be converted to type int8_t
// without overflow") instead of wrapping to 44.
//
// The rule is c10's `overflows<To, From>`:
//   - a bool never overflows, and nothing overflows into bool (2 fills as True);
//   - an integer must lie in the dtype's range, except that into uint8 a negative integer
//     down to -255 wraps (-1 fills as 255: torch lets `a - b` mean `a + 255 * b`);
//   - a floating value must lie within [lowest, max] of the dtype (127.9 does not fit int8,
//     65519.0 does not fit float16 although it would round to 65504); infinities fit every
//     floating dtype; NaN fits every floating dtype and no integer one;
//   - a complex value fits when both parts fit the parts' dtype; a complex scalar with a
//     nonzero imaginary part never fits a real dtype (Scalar::to throws for it too).
//
// Example:
//   CheckScalarFits("full", 300, kInt8);     // throws: "full: value 300 cannot be converted
//                                            // to int8 without overflow"
//   CheckScalarFits("full", -1, kUInt8);     // fine: fills 255
#ifndef FT_TENSOR_SCALAR_CHECK_H_
#define FT_TENSOR_SCALAR_CHECK_H_

#include "tensor/dtype.h"
#include "tensor/scalar.h"

namespace ft {

// ScalarOverflows: whether `value` overflows `dtype` under the rule above.
bool ScalarOverflows(const Scalar& value, DType dtype);

// CheckScalarFits throws an ft::Error naming `op`, the value and the dtype when
// ScalarOverflows.
void CheckScalarFits(const char* op, const Scalar& value, DType dtype);

}  // namespace ft

#endif  // FT_TENSOR_SCALAR_CHECK_H_
