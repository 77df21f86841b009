// ft.h: the one header a user of ft includes (target //:ft).
//
// ft is PyTorch functorch's composable function transforms rebuilt as a C++ library. This
// header gathers the eager tensor library: tensors and factories (//tensor), every op
// (//dispatch), and the transforms: vmap (//interpreters/vmap), grad, vjp and jacrev
// (//interpreters/grad), jvp, linearize, jacfwd and hessian (//interpreters/jvp), and the
// check helpers gradcheck/jvpcheck/gradgradcheck (//interpreters/gradcheck), custom
// Functions with their own derivative and batching rules (//custom_function), ft::jit,
// which traces a (transformed) function once and replays its kernels (//interpreters/jit),
// ft::functionalize, which makes in-place code pure (//interpreters/functionalize), and
// control flow the transforms see, cond, switch_case, while_loop, fori_loop, scan and
// checkpoint (//control_flow), and trees, your own structs of tensors as values (//tree).
//
// Example:
//   #include "ft.h"
//   ft::Tensor x = ft::linspace(0, 1, 5);
//   ft::Tensor y = ft::sum(ft::sin(x) * x, {0});
//   std::cout << y << "\n";   // tensor(0.9267) (roughly)
#ifndef FT_FT_H_
#define FT_FT_H_

#include "autograd/grad_mode.h"
#include "control_flow/control_flow.h"
#include "cpu/parallel.h"
#include "custom_function/function.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/memory.h"
#include "tensor/print.h"
#include "tensor/promotion.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"
#include "tree/control_flow.h"
#include "tree/optim.h"
#include "tree/transforms.h"
#include "tree/tree.h"

#endif  // FT_FT_H_
