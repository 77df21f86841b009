// gradcheck alone (@ft//interpreters/gradcheck): ft's derivatives against differences.
#include <cstdio>

#include "check.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  auto f = [](const ft::TensorList& a) { return ft::sum(ft::log1p(ft::square(a[0])) * a[1]); };
  const ft::TensorList args = {ft::tensor({0.2, -0.7, 1.1}), ft::tensor({1.5, 0.5, -2.0})};
  const ft::GradcheckResult rev = ft::gradcheck(f, args);
  const ft::GradcheckResult fwd = ft::jvpcheck(f, args);
  if (!rev.ok) std::fprintf(stderr, "%s\n", rev.message.c_str());
  if (!fwd.ok) std::fprintf(stderr, "%s\n", fwd.message.c_str());
  CHECK_TRUE(rev.ok && fwd.ok);
  return Finish("uses_gradcheck");
}
