#include "autograd/grad_mode.h"

namespace ft {
namespace {
constinit thread_local bool tls_grad_enabled = true;
constinit thread_local bool tls_fwd_grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return tls_grad_enabled; }
void GradMode::set_enabled(bool enabled) { tls_grad_enabled = enabled; }
bool FwdGradMode::is_enabled() { return tls_fwd_grad_enabled; }
void FwdGradMode::set_enabled(bool enabled) { tls_fwd_grad_enabled = enabled; }

}  // namespace ft
