#include <cctype>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/formulas.h"
#include "dispatch/dispatch.h"

namespace ft::autograd {

// Defined in the family files (unary_formulas.cc, ...).
void RegisterElementwiseFormulas();
void RegisterReductionAndLinalgFormulas();
void RegisterShapeFormulas();
void RegisterMoreReductionFormulas();
void RegisterActivationFormulas();
void RegisterLossFormulas();
void RegisterNormalizationFormulas();
void RegisterNnIndexingFormulas();
void RegisterConvFormulas();
void RegisterAttentionFormulas();
void RegisterLinalgSolveFormulas();
void RegisterInplaceFormulas();  // last: reuses the out-of-place formulas

namespace {

using Entry = OpDerivatives;

// A deque: growing it keeps references valid, so GetVjp's pointers stay good (nodes keep
// them for their backward).
std::deque<Entry>& Table() {
  static auto* table = new std::deque<Entry>();
  return *table;
}

Entry& EntryFor(const Operator& op) {
  std::deque<Entry>& t = Table();
  if (static_cast<size_t>(op.id()) >= t.size()) t.resize(static_cast<size_t>(op.id()) + 1);
  return t[static_cast<size_t>(op.id())];
}

// "log_softmax" -> "LogSoftmaxBackward".
std::string MakeBackwardName(const std::string& op) {
  std::string name;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    upper = false;
  }
  return name + "Backward";
}

}  // namespace

void SetVjp(const Operator& op, VjpFormula formula) {
  Entry& e = EntryFor(op);
  e.vjp = std::move(formula);
  e.backward_name = MakeBackwardName(op.name());
}

void SetJvp(const Operator& op, JvpFormula formula) { EntryFor(op).jvp = std::move(formula); }

const JvpFormula* GetJvp(const Operator& op) {
  const std::deque<Entry>& t = Table();
  if (static_cast<size_t>(op.id()) >= t.size()) return nullptr;
  const Entry& e = t[static_cast<size_t>(op.id())];
  return e.jvp ? &e.jvp : nullptr;
}

void MarkNonDifferentiable(const Operator& op) { EntryFor(op).nondifferentiable = true; }

void MarkInputValuesUnused(const Operator& op) { EntryFor(op).reads_input_values = false; }

bool ReadsInputValues(const Operator& op) {
  const std::deque<Entry>& t = Table();
  return static_cast<size_t>(op.id()) >= t.size() ||
         t[static_cast<size_t>(op.id())].reads_input_values;
}

void MarkOutputValuesRead(const Operator& op) { EntryFor(op).reads_output_values = true; }

bool ReadsOutputValues(const Operator& op) {
  const std::deque<Entry>& t = Table();
  return static_cast<size_t>(op.id()) < t.size() &&
         t[static_cast<size_t>(op.id())].reads_output_values;
}

const std::string& BackwardName(const Operator& op) {
  FT_CHECK(GetVjp(op) != nullptr);  // set together with the formula
  return Table()[static_cast<size_t>(op.id())].backward_name;
}

const OpDerivatives* FindDerivatives(const Operator& op) {
  const std::deque<Entry>& t = Table();
  if (static_cast<size_t>(op.id()) >= t.size()) return nullptr;
  return &t[static_cast<size_t>(op.id())];
}

const VjpFormula* GetVjp(const Operator& op) {
  const std::deque<Entry>& t = Table();
  if (static_cast<size_t>(op.id()) >= t.size()) return nullptr;
  const Entry& e = t[static_cast<size_t>(op.id())];
  return e.vjp ? &e.vjp : nullptr;
}

bool IsNonDifferentiable(const Operator& op) {
  const std::deque<Entry>& t = Table();
  return static_cast<size_t>(op.id()) < t.size() && t[static_cast<size_t>(op.id())].nondifferentiable;
}

void RegisterDerivatives() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterElementwiseFormulas();
    RegisterReductionAndLinalgFormulas();
    RegisterShapeFormulas();
    RegisterMoreReductionFormulas();
    RegisterLinalgSolveFormulas();
    RegisterActivationFormulas();
    RegisterLossFormulas();
    RegisterNormalizationFormulas();
    RegisterNnIndexingFormulas();
    RegisterConvFormulas();
    RegisterAttentionFormulas();
    // Formulas that use their inputs' shapes only (checked against the formula files: none of
    // these reads an input's values; index arguments are integer tensors nobody differentiates
    // but their values are read, so gather & co. are not listed).
    for (const char* name :
         {"neg", "sign", "floor", "round", "add", "sub", "sum", "mean", "sum_to_size", "cumsum",
          "reshape", "view", "flatten", "unflatten", "contiguous", "clone", "expand", "transpose",
          "t", "unsqueeze", "squeeze", "squeeze_dim", "squeeze_dims", "permute", "movedim",
          "flip", "select", "narrow", "slice", "diagonal", "select_scatter", "slice_scatter",
          "diagonal_scatter", "cat", "stack", "split", "split_with_sizes", "chunk", "repeat",
          "pad", "to"}) {
      MarkInputValuesUnused(OpRegistry::Global().Get(name));
    }
    // Formulas that read their outputs' values (checked against the formula files; ops whose
    // formulas read only an output's shape or dtype are not listed).
    for (const char* name :
         {"exp", "expm1", "tan", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "reciprocal", "pow",
          "logsumexp", "softmax", "log_softmax", "cumprod", "logcumsumexp", "linear_recurrence",
          "amax", "amin", "std", "norm",
          "dropout", "sort", "topk", "linalg_solve", "linalg_solve_triangular", "cholesky",
          "inverse"}) {
      MarkOutputValuesRead(OpRegistry::Global().Get(name));
    }
    RegisterInplaceFormulas();
  });
}

}  // namespace ft::autograd
