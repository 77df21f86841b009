// ft/autograd/grad_mode.h
//
// Grad mode: a per-thread switch that says whether the grad transform records ops, and the
// RAII guards that flip it (torch.no_grad / torch.enable_grad); and forward grad mode, the
// same switch for the jvp transform.
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

// FwdGradMode: the forward-mode analogue (torch.autograd.forward_ad's fwd-grad switch).
// Ops run while it is off carry no tangent: their results are constants for every jvp level
// that sees them, and a jvp level entered while it was off passes its ops down with it off.
// Inside a jvp/jacfwd transform it is on, whatever it was outside.
class FwdGradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// NoFwdGradGuard turns forward grad mode off for a scope.
class NoFwdGradGuard {
 public:
  NoFwdGradGuard() : prev_(FwdGradMode::is_enabled()) { FwdGradMode::set_enabled(false); }
  ~NoFwdGradGuard() { FwdGradMode::set_enabled(prev_); }
  NoFwdGradGuard(const NoFwdGradGuard&) = delete;
  NoFwdGradGuard& operator=(const NoFwdGradGuard&) = delete;

 private:
  bool prev_;
};

// EnableFwdGradGuard turns forward grad mode on for a scope.
class EnableFwdGradGuard {
 public:
  EnableFwdGradGuard() : prev_(FwdGradMode::is_enabled()) { FwdGradMode::set_enabled(true); }
  ~EnableFwdGradGuard() { FwdGradMode::set_enabled(prev_); }
  EnableFwdGradGuard(const EnableFwdGradGuard&) = delete;
  EnableFwdGradGuard& operator=(const EnableFwdGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ft

#endif  // FT_AUTOGRAD_GRAD_MODE_H_
