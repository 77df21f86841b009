// ft/interpreters/functionalize/random_program.h  (testonly)
//
// RandomProgram: a random program of views (of views) of its input and in-place writes
// through any of them, the same program for the same seed. Run eagerly it is the oracle
// that functionalize's tests compare with (alone, under vmap and under grad).
//
// Example:
//   const RandomProgram p(7);
//   TensorList eager = p.Run(clone(x));
//   TensorList pure = functionalize(TensorListFn([&](const TensorList& a) {
//     return p.Run(a[0]);
//   }))({clone(x)});
#ifndef FT_INTERPRETERS_FUNCTIONALIZE_RANDOM_PROGRAM_H_
#define FT_INTERPRETERS_FUNCTIONALIZE_RANDOM_PROGRAM_H_

#include <cstdint>
#include <optional>
#include <random>

#include "ops/ops.h"
#include "tensor/tensor.h"

namespace ft::testing {

// Run: 30 steps over a pool that starts as {x}: each step takes a pool tensor and adds a
// view of it (transpose, select, narrow, slice, diagonal, reshape, unsqueeze, chunk, split,
// a reshape of a transpose that copies) or writes it in place (mul_, add_, fill_, copy_).
// Returns every pool tensor's values at the end (each a new tensor).
class RandomProgram {
 public:
  explicit RandomProgram(uint64_t seed) : seed_(seed) {}

  TensorList Run(const Tensor& x) const {
    std::mt19937_64 rng(seed_);
    auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
    TensorList pool = {x};
    for (int step = 0; step < 30; ++step) {
      const Tensor t = pool[static_cast<size_t>(pick(static_cast<int64_t>(pool.size())))];
      const int64_t rank = t.dim();
      const int64_t d = rank > 0 ? pick(rank) : 0;
      const int64_t n = rank > 0 ? t.size(d) : 0;
      switch (pick(14)) {
        case 12:
          if (rank >= 2) pool.push_back(reshape(transpose(t, 0, 1), {t.numel()}));  // may copy
          break;
        case 13:
          if (n > 1) pool.push_back(split(t, 1, d)[static_cast<size_t>(pick(n))]);
          break;
        case 0:
          if (rank >= 2) pool.push_back(transpose(t, 0, rank - 1));
          break;
        case 1:
          if (n > 0) pool.push_back(select(t, d, pick(n)));
          break;
        case 2:
          if (n > 0) {
            const int64_t s = pick(n);
            pool.push_back(narrow(t, d, s, pick(n - s) + 1));
          }
          break;
        case 3:
          if (n > 1) pool.push_back(slice(t, d, pick(n), std::nullopt, 2));
          break;
        case 4:
          if (rank >= 2) pool.push_back(diagonal(t, pick(3) - 1, 0, 1));
          break;
        case 5:
          pool.push_back(reshape(t, {t.numel()}));
          break;
        case 6:
          pool.push_back(unsqueeze(t, rank > 0 ? pick(rank + 1) : 0));
          break;
        case 7:
          if (n > 1) pool.push_back(chunk(t, 2, d)[static_cast<size_t>(pick(2))]);
          break;
        case 8:
          mul_(t, 1.0 + 0.125 * static_cast<double>(pick(4)));
          break;
        case 9:
          add_(t, static_cast<double>(pick(5)) - 2.0);
          break;
        case 10:
          fill_(t, static_cast<double>(pick(7)));
          break;
        case 11:
          copy_(t, sin(t) + 0.5);
          break;
      }
    }
    TensorList out;
    for (const Tensor& t : pool) out.push_back(t * 1.0);  // values at the end, each its own
    return out;
  }

 private:
  uint64_t seed_;
};

}  // namespace ft::testing

#endif  // FT_INTERPRETERS_FUNCTIONALIZE_RANDOM_PROGRAM_H_
