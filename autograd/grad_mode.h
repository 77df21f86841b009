// ft/autograd/grad_mode.h
//
// Grad mode: a per-thread switch that says whether the grad transform records ops, and the
// RAII guards that flip it (torch.no_grad / torch.enable_grad).
//
// Semantics (functorch's NOTE "grad and vjp interaction with no_grad"):
//   - Inside a grad/vjp transform grad mode is on, whatever it was outside.
//   - Ops run while grad mode is off are not recorded by any grad level: their results are
//     constants for the levels that see them.
//   - A grad level entered while grad mode was off passes its ops to the levels below with
//     grad mode off, so it is invisible to outer grad levels (grad under no_grad).
//
// Example:
//   auto f = [](const TensorList& a) {
//     Tensor c;
//     { ft::NoGradGuard no_grad; c = a[0] * a[0]; }   // a constant for grad
//     return ft::sum(a[0] * a[0] - c);
//   };
//   ft::grad(ScalarFn(f))({x});   // 2x
#ifndef FT_AUTOGRAD_GRAD_MODE_H_
#define FT_AUTOGRAD_GRAD_MODE_H_

namespace ft {

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// NoGradGuard turns grad mode off for a scope (restored on exit, exceptions included).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// EnableGradGuard turns grad mode on for a scope.
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ft

#endif  // FT_AUTOGRAD_GRAD_MODE_H_
