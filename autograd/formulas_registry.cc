#include <deque>
#include <mutex>
#include <vector>

#include "autograd/formulas.h"
#include "dispatch/dispatch.h"

namespace ft::autograd {

// Defined in the family files (unary_formulas.cc, ...).
void RegisterElementwiseFormulas();
void RegisterReductionAndLinalgFormulas();
void RegisterShapeFormulas();
void RegisterMoreReductionFormulas();

namespace {

struct Entry {
  VjpFormula vjp;
  bool nondifferentiable = false;
};

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

}  // namespace

void SetVjp(const Operator& op, VjpFormula formula) { EntryFor(op).vjp = std::move(formula); }

void MarkNonDifferentiable(const Operator& op) { EntryFor(op).nondifferentiable = true; }

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
  });
}

}  // namespace ft::autograd
