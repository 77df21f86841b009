// ft/tensor/generator.h
//
// Generator: a seedable, counter-based random number source (Philox4x32-10, the generator
// PyTorch and JAX use). Element i of a draw is a pure function of (seed, offset + i), so:
//   - the same seed reproduces the same numbers, whatever ran in between on other
//     generators;
//   - a draw of B*N numbers for a batch gives each batch element an independent stream,
//     and drawing the same B*N numbers in chunks, in order, gives identical values (what
//     vmap's randomness="different" with chunk_size relies on).
//
// Invariants: `offset` counts the numbers consumed so far; Reserve(n) returns the first
// counter of a fresh block of n and advances the offset. A Generator is not thread-safe;
// DefaultGenerator() is one per thread.
//
// Example:
//   Generator g(42);
//   Tensor a = ft::rand_like(x, &g);   // with //dispatch
//   g.set_offset(0);
//   Tensor b = ft::rand_like(x, &g);   // equals a
#ifndef FT_TENSOR_GENERATOR_H_
#define FT_TENSOR_GENERATOR_H_

#include <array>
#include <cstdint>

namespace ft {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}

  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  // manual_seed resets the stream: new seed, offset 0.
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  void set_offset(uint64_t offset) { offset_ = offset; }

  // Reserve claims n consecutive counters and returns the first.
  uint64_t Reserve(uint64_t n) {
    const uint64_t first = offset_;
    offset_ += n;
    return first;
  }

  // Philox returns 4 random 32-bit words for (key, counter).
  static std::array<uint32_t, 4> Philox(uint64_t key, uint64_t counter);

  // Uniform returns a float64 in [0, 1) for counter `index` of stream `seed` (53 random bits).
  static double Uniform(uint64_t seed, uint64_t index);
  // Normal returns a standard normal sample for counter `index` (Box-Muller).
  static double Normal(uint64_t seed, uint64_t index);

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// DefaultGenerator is the calling thread's generator, used when an op gets none.
Generator& DefaultGenerator();

// manual_seed reseeds the calling thread's default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace ft

#endif  // FT_TENSOR_GENERATOR_H_
