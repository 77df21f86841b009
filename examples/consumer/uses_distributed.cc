// The collectives alone (@ft//distributed:collectives, @ft//distributed:process_group): psum
// over a vmap axis, then over a one-process Gloo group made by init_process_group from the
// launcher's variables, against the closed form.
#include <cstdlib>
#include <string>

#include "check.h"
#include "distributed/collectives.h"
#include "distributed/process_group.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  const ft::Tensor xs = ft::reshape(ft::arange(1.0, 7.0), {3, 2});  // rows sum to 3, 7, 11
  auto share = [](const ft::Tensor& x) { return x / ft::psum(ft::sum(x), "i"); };
  const ft::Tensor ys = ft::vmap(ft::TensorFn(share), ft::VmapOptions{.axis_name = "i"})(xs);
  CHECK_NEAR(ft::sum(ys).item<double>(), 1.0, 1e-6);
  // What ft_launch -n 1 would set: rank 0 of 1, a fresh store directory.
  char dir[] = "/tmp/ft-consumer-XXXXXX";
  CHECK_TRUE(mkdtemp(dir) != nullptr);
  setenv("FT_RANK", "0", 1);
  setenv("FT_WORLD_SIZE", "1", 1);
  setenv("FT_STORE", (std::string("file:") + dir).c_str(), 1);
  {
    auto binding = ft::dist::bind_axis("dp", ft::dist::init_process_group());
    CHECK_TRUE(ft::axis_size("dp") == 1);
    CHECK_NEAR(ft::psum(ft::sum(xs), "dp").item<double>(), 21.0, 1e-6);
  }
  CHECK_TRUE(std::system((std::string("rm -rf ") + dir).c_str()) == 0);
  return 0;
}
