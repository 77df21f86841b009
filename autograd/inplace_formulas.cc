// Formulas of the in-place ops. exp_, add_, sub_, mul_, div_ and clamp_ compute what their
// out-of-place op computes, so they share its vjp and jvp formulas: the grad and jvp
// interpreters hand a formula the value of `self` before the write as input 0 (cloned first
// when the formula reads it) and the written `self` as output 0. copy_, fill_ and zero_
// overwrite `self`, so nothing flows back into its old value.
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {

void RegisterInplaceFormulas() {
  using internal::Op;
  for (const auto& [inplace, out_of_place] :
       {std::pair{"exp_", "exp"}, {"add_", "add"}, {"sub_", "sub"}, {"mul_", "mul"},
        {"div_", "div"}, {"clamp_", "clamp"}}) {
    const Operator& op = Op(out_of_place);
    if (const VjpFormula* vjp = GetVjp(op)) SetVjp(Op(inplace), *vjp);
    if (const JvpFormula* jvp = GetJvp(op)) SetJvp(Op(inplace), *jvp);
    if (!ReadsInputValues(op)) MarkInputValuesUnused(Op(inplace));
    if (ReadsOutputValues(op)) MarkOutputValuesRead(Op(inplace));
  }
  // exp's formulas read only the output: no clone of the old value is needed.
  MarkInputValuesUnused(Op("exp_"));

  // copy_(self, src): self becomes src broadcast to self's shape, in self's dtype.
  SetVjp(Op("copy_"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& src = c.input(1);
    Tensor gs = sum_to_size(g[0], src.sizes());
    if (IsFloating(src.dtype()) && gs.dtype() != src.dtype()) gs = to(gs, src.dtype());
    return TensorList{Tensor(), IsFloating(src.dtype()) ? gs : Tensor()};
  });
  SetJvp(Op("copy_"), [](const JvpContext&, const TensorList& t) { return TensorList{t[1]}; });
  // fill_ and zero_: self becomes a constant.
  for (const char* name : {"fill_", "zero_"}) {
    SetVjp(Op(name), [](const VjpContext&, const TensorList&) { return TensorList{Tensor()}; });
    SetJvp(Op(name), [](const JvpContext&, const TensorList&) { return TensorList{Tensor()}; });
  }
  for (const char* name : {"copy_", "fill_", "zero_"}) MarkInputValuesUnused(Op(name));
}

}  // namespace ft::autograd
