// The vmap rule of custom_function_call: the seed's decision table.
//   generate_vmap_rule and a vmap rule both defined -> error (ambiguous);
//   neither -> error (no vmap support);
//   a user vmap rule: called one level down with VmapInfo and the in_dims of the arguments
//     (nullopt for non-tensors and tensors not batched at this level), unless nothing is
//     batched at this level: then the level is skipped without calling it. It returns
//     (outputs, out_dims), checked against the outputs, and each output is wrapped at its
//     out_dim (nullopt: returned unbatched), keeping identity for outputs that are arguments.
//   generate_vmap_rule: the Function vmapped by ft itself (Vmapped<Name>).
#include <optional>
#include <vector>

#include "custom_function/rules.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/vmap_interpreter.h"

namespace ft::custom_function {
namespace {

std::string DimsString(const OutDims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += dims[i] ? std::to_string(*dims[i]) : "nullopt";
  }
  return s + "]";
}

ValueList VmapRule(Interpreter& interpreter, const FunctionSpecPtr& spec, ValueList& args) {
  auto& vmap = static_cast<VmapInterpreter&>(interpreter);
  const int64_t level = vmap.level();
  if (spec->generate_vmap_rule && spec->vmap) {
    ThrowError("You tried to vmap over ", spec->name, ", but it has both generate_vmap_rule=true ",
               "and a vmap rule. Set generate_vmap_rule=false or delete the vmap rule to avoid ",
               "ambiguity (vmap level ", level, ")");
  }
  if (spec->generate_vmap_rule) {
    ThrowError("You tried to vmap over ", spec->name, " with generate_vmap_rule=true: the ",
               "generated vmap rule is not implemented yet (vmap level ", level, "); write a ",
               "vmap rule for it instead");
  }
  if (!spec->vmap) {
    ThrowError("You tried to vmap over ", spec->name, ", but it does not have vmap support. ",
               "Define a static vmap(info, in_dims, args...) rule or set generate_vmap_rule = ",
               "true (vmap level ", level, ")");
  }
  ValueList inner = args;
  InDims in_dims(args.size());
  bool any_batched = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor_list()) {
      ThrowError(spec->name, ": argument ", i, " is a TensorList; Functions take tensors one by ",
                 "one under vmap (pass them as separate arguments)");
    }
    if (!args[i].is_tensor()) continue;
    auto [value, bdim] = UnwrapBatched(args[i].tensor(), level);
    inner[i] = Value(value);
    in_dims[i] = bdim;
    any_batched = any_batched || bdim.has_value();
  }
  if (!any_batched) {  // nothing to do at this level: the levels below see the call
    LowerGuard lower(&vmap);
    return CallCustomFunction(spec, args);
  }
  std::pair<ValueList, OutDims> result;
  {
    LowerGuard lower(&vmap);
    result = spec->vmap(VmapInfo{vmap.batch_size(), vmap.randomness()}, in_dims, inner);
  }
  ValueList& outputs = result.first;
  OutDims out_dims = result.second;
  if (out_dims.size() == 1 && outputs.size() > 1) out_dims.resize(outputs.size(), out_dims[0]);
  if (out_dims.size() != outputs.size()) {
    ThrowError(spec->name, ": the vmap rule returned an incompatible (outputs, out_dims) pair: ",
               outputs.size(), " outputs but out_dims ", DimsString(result.second),
               " (give one out_dim per output, or a single one for all)");
  }
  const std::vector<int> sources = OutputSources(inner, outputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (sources[k] >= 0) {
      outputs[k] = args[static_cast<size_t>(sources[k])];
      continue;
    }
    if (!outputs[k].is_tensor()) {
      if (out_dims[k]) {
        ThrowError(spec->name, ": the vmap rule gave out_dim ", *out_dims[k], " to output ", k,
                   ", which is not a tensor (use nullopt)");
      }
      continue;
    }
    if (!out_dims[k]) continue;  // unbatched: the same for every example
    const Tensor& t = outputs[k].tensor();
    const int64_t d = *out_dims[k];
    if (d < -t.dim() || d >= t.dim()) {
      ThrowError(spec->name, ": the vmap rule gave out_dim ", d, " to output ", k, " of shape ",
                 ShapeToString(t.sizes()), ", out of range");
    }
    if (t.size(d) != vmap.batch_size()) {
      ThrowError(spec->name, ": the vmap rule's output ", k, " has size ", t.size(d),
                 " at its out_dim ", d, " but the batch size is ", vmap.batch_size());
    }
    outputs[k] = Value(MakeBatched(t, d, level, vmap.alive_flag()));
  }
  return outputs;
}

ValueList FunctionalizeRule(Interpreter& interpreter, const FunctionSpecPtr& spec, ValueList&) {
  ThrowError(spec->name, ": functionalize of a custom Function is not implemented yet (level ",
             interpreter.level(), ")");
}

}  // namespace

void RegisterGradAndJvpRules(HigherOrderOperator<FunctionSpecPtr>& op);

void RegisterRules(HigherOrderOperator<FunctionSpecPtr>& op) {
  RegisterGradAndJvpRules(op);
  op.SetRule(TransformType::kVmap, &VmapRule);
  op.SetRule(TransformType::kFunctionalize, &FunctionalizeRule);
}

}  // namespace ft::custom_function
