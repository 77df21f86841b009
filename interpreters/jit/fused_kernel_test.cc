// Tests of the fused step (fused_kernel.h): what a FusedKernel computes in every operand
// layout, over several chunks and threads, with masks, special values and donated buffers.
// Two oracles: the same function run eagerly, op by op, on the replay's inputs (the separate
// kernels fusion replaces; fused results must match them bit for bit), and closed forms
// computed with loops over the elements. Most tests get their kernels as jit does, from a
// traced program (fuse.h makes them); the first builds one by hand.
#include "interpreters/jit/fused_kernel.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "dispatch/value.h"
#include "gtest/gtest.h"
#include "interpreters/jit/fuse_test_util.h"
#include "interpreters/jit/trace.h"
#include "kernels/activation_math.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/storage.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::At;
using testing::Chain;
using testing::ChainAt;
using testing::CountFused;
using testing::ExpectReplayKeepsTheKernelsBits;
using testing::ExpectSameBits;
using testing::Rand;
using testing::ScopedCpuCapability;

// CallActivation: the public op computing `fn`, with constants other than its defaults
// (`variant` picks gelu's tanh form).
Tensor CallActivation(activation::Fn fn, const Tensor& x, bool variant) {
  using activation::Fn;
  switch (fn) {
    case Fn::kGelu: return variant ? gelu(x, "tanh") : gelu(x);
    case Fn::kSilu: return silu(x);
    case Fn::kMish: return mish(x);
    case Fn::kSoftplus: return softplus(x, 1.5, 2.0);
    case Fn::kElu: return elu(x, 0.5);
    case Fn::kSelu: return selu(x);
    case Fn::kCelu: return celu(x, 2.0);
    case Fn::kLeakyRelu: return leaky_relu(x, 0.2);
    case Fn::kHardtanh: return hardtanh(x, -0.5, 1.5);
    case Fn::kHardswish: return hardswish(x);
    case Fn::kHardsigmoid: return hardsigmoid(x);
    case Fn::kLogsigmoid: return logsigmoid(x);
    case Fn::kSoftsign: return softsign(x);
    case Fn::kErfinv: return erfinv(x);
    case Fn::kDigamma: return digamma(x);
    case Fn::kPolygamma: return polygamma(2, x);
    case Fn::kClamp: return variant ? clamp(x, -0.5, 0.8) : clamp(x, std::nullopt, 0.25);
  }
  return x;
}

TEST(FuseTest, AKernelBuiltByHandRunsWithoutAProgram) {
  // fused_kernel.h's example, neg(x * y) on [4, 16] float32 with y a [16] row broadcast down
  // x: no trace and no Program, only the instructions, the inputs' geometry and the outputs.
  // x has the result's layout and mul is its last reader, so its buffer can take the result.
  const Tensor x = to(Rand({4, 16}, 1), kFloat32), y = to(Rand({16}, 2), kFloat32);
  using K = FusedKernel;
  const K k(kFloat32, {4, 16}, {K::InputFor(x, {4, 16}), K::InputFor(y, {4, 16})},
            {{K::Opcode::kMul, 0, 1}, {K::Opcode::kNeg, 2, -1}}, {3});
  EXPECT_EQ(k.ToString(), "{ r2 = mul(r0, r1); r3 = neg(r2) } -> r3");
  EXPECT_EQ(k.num_outputs(), 1);
  EXPECT_EQ(k.donor(), 0);
  EXPECT_EQ(k.donor_output(), 0);
  const Tensor* in[] = {&x, &y};
  Tensor out;
  k.Run(in, &out);
  ExpectSameBits(out, neg(x * y));
  // Given the donor's buffer (its holder drops it after Run), the result is written into it.
  Tensor donor = clone(x);
  const void* buffer = donor.impl()->raw_data();
  const Tensor* donated[] = {&donor, &y};
  Tensor reused;
  k.Run(donated, &reused, /*reuse_donor=*/true);
  EXPECT_EQ(reused.impl()->raw_data(), buffer);
  ExpectSameBits(reused, out);
}

TEST(FuseTest, ARunOfArithmeticIsOneStepWithTheKernelsBits) {
  // 40 x 9 = 360 elements: two chunks, and the row's period (9) does not divide a chunk, so
  // the row is gathered per chunk.
  for (int64_t rows : {3, 40}) {
    const TensorList traced_args = {Rand({rows, 9}, 1) + 2.0, Rand({9}, 2) + 2.0,
                                    Rand({}, 3)};
    TraceResult t = Trace(&Chain, traced_args);
    ASSERT_NE(t.program, nullptr) << t.reason;
    EXPECT_EQ(t.program->num_steps(), 1) << t.program->DebugString();
    EXPECT_EQ(CountFused(*t.program), 1);
    const TensorList args = {Rand({rows, 9}, 4) + 2.0, Rand({9}, 5) + 2.0, Rand({}, 6)};
    const Tensor out = t.program->Run(args)[0];
    ExpectSameBits(out, Chain(args)[0]);
    const std::vector<double> x = args[0].to_vector<double>(), y = args[1].to_vector<double>();
    const double s = args[2].item<double>();
    std::vector<double> expected;
    for (int64_t i = 0; i < rows * 9; ++i) expected.push_back(ChainAt(x[i], y[i % 9], s));
    EXPECT_TENSOR_NEAR(out, tensor(expected, {rows, 9}), 1e-12);
  }
}

TEST(FuseTest, StridedAndBroadcastInputsKeepTheKernelsBits) {
  // A transposed input (gathered with a stride), a column broadcast across rows, and an
  // expanded scalar (stride 0 everywhere), float32, over three chunks.
  const auto f = [](const TensorList& a) {
    const Tensor xt = transpose(a[0], 0, 1);  // [30, 20], strides [1, 30]
    return TensorList{(xt * a[1] + a[2]) * xt - a[1]};
  };
  const auto args_for = [](uint64_t seed) {
    return TensorList{to(Rand({20, 30}, seed), kFloat32), to(Rand({30, 1}, seed + 1), kFloat32),
                      expand(to(Rand({1}, seed + 2), kFloat32), {20})};
  };
  TraceResult t = Trace(f, args_for(1));
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 1) << t.program->DebugString();
  const TensorList args = args_for(10);
  ExpectSameBits(t.program->Run(args)[0], f(args)[0]);
}

TEST(FuseTest, ScalarOperandsOnEitherSideKeepTheKernelsBits) {
  // s (0-d) meets arrays on both sides of every binary opcode, so the fused step reads it
  // as a value; c (one value expanded to [300]) is also negated and added to itself, so it
  // is laid out like a row. 300 elements: two chunks. float32 and float64.
  const auto f = [](const TensorList& a) {
    const Tensor& x = a[0];
    const Tensor& s = a[1];
    const Tensor& c = a[2];
    const Tensor t = ((s - x) * s + s / x) - (x / s - s) + (x * c - neg(c)) * (c + c);
    return TensorList{t + (s + x)};
  };
  const auto at = [](double x, double s, double c) {
    return ((s - x) * s + s / x) - (x / s - s) + (x * c + c) * (c + c) + (s + x);
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    const auto args_for = [dtype](uint64_t seed) {
      return TensorList{to(Rand({300}, seed) + 1.0, dtype), to(Rand({}, seed + 1) + 1.0, dtype),
                        expand(to(Rand({1}, seed + 2), dtype), {300})};
    };
    ExpectReplayKeepsTheKernelsBits(
        f, args_for, 1,
        [&at](const TensorList& a, int64_t i) {
          return at(At(a[0], i), a[1].item<double>(), At(a[2], i));
        },
        dtype == kFloat32 ? 1e-4 : 1e-12);
  }
}

TEST(FuseTest, RowsReadOnceKeepTheKernelsBits) {
  // Rows of 18 (past kMinRow, not a whole number of packets) broadcast down [5, 18]: r is
  // dense (read in place) and a first operand; s, a stride-2 slice, and q, an expanded row,
  // have one period laid out; q is negated.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) {
        const Tensor s = slice(a[2], 0, 0, std::nullopt, 2);
        const Tensor q = expand(a[3], {5, 18});
        return TensorList{(a[1] - a[0]) * s + neg(q) * a[0] / a[1]};
      },
      [](uint64_t seed) {
        return TensorList{Rand({5, 18}, seed) + 1.0, Rand({18}, seed + 1) + 1.0,
                          Rand({36}, seed + 2), Rand({18}, seed + 3)};
      },
      3,  // the two views, then one fused step
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), r = At(a[1], i % 18), s = At(a[2], 2 * (i % 18)),
                     q = At(a[3], i % 18);
        return (r - x) * s + -q * x / r;
      });
  // [40, 16]: three chunks, each starting at a row of 16.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) { return TensorList{(a[0] * a[1] + a[0]) * a[1]}; },
      [](uint64_t seed) { return TensorList{Rand({40, 16}, seed), Rand({16}, seed + 1)}; }, 1,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), r = At(a[1], i % 16);
        return (x * r + x) * r;
      });
  // A [2, 16] block (expanded: a view step) and a [16] row in one instruction: two
  // periods, both laid out.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) {
        const Tensor block = expand(a[1], {4, 2, 16});
        return TensorList{(a[0] * a[1] + block * a[2]) - a[2]};
      },
      [](uint64_t seed) {
        return TensorList{Rand({4, 2, 16}, seed), Rand({2, 16}, seed + 1),
                          Rand({16}, seed + 2)};
      },
      2,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), b = At(a[1], i % 32), r = At(a[2], i % 16);
        return (x * b + b * r) - r;
      });
}

TEST(FuseTest, RowsOfFourPacketsKeepTheKernelsBits) {
  // A row of exactly four packets stays in registers down the rows (16, 32 or 64 elements,
  // whichever the packets are: float32 under SSE is 16). The row is the second operand
  // (x * r, x / r) and the first ((s - r) - x, with s - r the [L] prelude, which reads r
  // after a scalar).
  const TensorListFn f = [](const TensorList& a) {
    return TensorList{(a[0] * a[1] - a[0]) / a[1] + ((a[2] - a[1]) - a[0])};
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    for (int64_t row : {16, 32, 64}) {
      const auto args_for = [&](uint64_t seed) {
        TensorList args = {Rand({5, row}, seed), Rand({row}, seed + 1) + 1.0,
                           Rand({}, seed + 2)};
        for (Tensor& t : args) t = to(t, dtype);
        return args;
      };
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " row ", row));
      ExpectReplayKeepsTheKernelsBits(
          f, args_for, 1,
          [row](const TensorList& a, int64_t i) {
            const double x = At(a[0], i), r = At(a[1], i % row), s = a[2].item<double>();
            return (x * r - x) / r + ((s - r) - x);
          },
          dtype == kFloat32 ? 1e-5 : 1e-12);
    }
  }
}

// SameBitsOrNaN: equal values with equal signs (so -0 differs from +0), or both NaN.
bool SameBitsOrNaN(double a, double b) {
  return (a == b && std::signbit(a) == std::signbit(b)) || (std::isnan(a) && std::isnan(b));
}

TEST(FuseTest, RandomArithmeticProgramsKeepTheKernelsBits) {
  // 300 random programs of 12 elementwise ops (every opcode: vecmath's functions, pow, atan2, the
  // comparisons and where, and every activation included) at every CPU capability the machine has,
  // over operands that broadcast in every way fusion reads them: [4, 16] and [2, 4, 16] arrays, a
  // [16] row, a stride-2 row, a [4, 1] column, a 0-d scalar, bool masks of those shapes, and
  // whatever earlier ops made. Each replay (traced on other values) must equal the eager run bit
  // for bit (NaN matching NaN), a mask output included.
  std::mt19937 rng(2026);
  const auto inputs_for = [](uint64_t seed) {
    return TensorList{Rand({4, 16}, seed) + 1.0, Rand({16}, seed + 1) + 1.0, Rand({}, seed + 2),
                      Rand({4, 1}, seed + 3) + 1.0, Rand({2, 4, 16}, seed + 4),
                      Rand({32}, seed + 5) + 0.5};
  };
  // The masks come after the values: [4, 16], a [16] row, a [4, 1] column, a transposed
  // [4, 16] (gathered with a stride), and a 0-d one.
  const auto masks_for = [](uint64_t seed) {
    return TensorList{gt(Rand({4, 16}, seed), 0.0), gt(Rand({16}, seed + 1), 0.0),
                      gt(Rand({4, 1}, seed + 2), 0.0),
                      transpose(gt(Rand({16, 4}, seed + 3), 0.0), 0, 1),
                      gt(Rand({}, seed + 4), 0.0)};
  };
  constexpr int kNumMasks = 5;
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<CpuCapability> levels = SupportedCpuCapabilities();
    ScopedCpuCapability level(levels[trial % levels.size()]);
    const uint32_t program_seed = rng();
    const auto f = [program_seed](const TensorList& a) {
      std::mt19937 pick(program_seed);
      TensorList pool(a.begin(), a.end() - kNumMasks - 1);
      pool.push_back(slice(a[a.size() - kNumMasks - 1], 0, 0, std::nullopt, 2));  // stride 2
      TensorList masks(a.end() - kNumMasks, a.end());
      for (int k = 0; k < 12; ++k) {
        // Copies: pool grows below, and a reference into it would dangle.
        const Tensor x = pool[pick() % pool.size()];
        const Tensor y = pool[pick() % pool.size()];
        // Every opcode, the comparisons as where's condition (and kept as masks), and every
        // function of kActivation.
        constexpr int kCases = FusedKernel::kNumOpcodes - 1 + activation::kNumFns;
        const int choice = static_cast<int>(pick() % kCases);
        switch (choice) {
          case 0: pool.push_back(x + y); break;
          case 1: pool.push_back(x - y); break;
          case 2: pool.push_back(x * y); break;
          case 3: pool.push_back(x / y); break;
          case 4: pool.push_back(neg(x)); break;
          case 5: pool.push_back(square(x)); break;
          case 6: pool.push_back(reciprocal(x)); break;
          case 7: pool.push_back(abs(x)); break;
          case 8: pool.push_back(sign(x)); break;
          case 9: pool.push_back(relu(x)); break;
          case 10: pool.push_back(maximum(x, y)); break;
          case 11: pool.push_back(minimum(x, y)); break;
          case 12: masks.push_back(eq(x, y)); break;
          case 13: masks.push_back(ne(x, y)); break;
          case 14: masks.push_back(lt(x, y)); break;
          case 15: masks.push_back(le(x, y)); break;
          case 16: masks.push_back(gt(x, y)); break;
          case 17: masks.push_back(ge(x, y)); break;
          case 18: pool.push_back(where(masks[pick() % masks.size()], x, y)); break;
          case 19: pool.push_back(pow(x, y)); break;
          case 20: pool.push_back(exp(x)); break;
          case 21: pool.push_back(expm1(x)); break;
          case 22: pool.push_back(log(x)); break;
          case 23: pool.push_back(log1p(x)); break;
          case 24: pool.push_back(sin(x)); break;
          case 25: pool.push_back(cos(x)); break;
          case 26: pool.push_back(tan(x)); break;
          case 27: pool.push_back(tanh(x)); break;
          case 28: pool.push_back(sigmoid(x)); break;
          case 29: pool.push_back(sqrt(x)); break;
          case 30: pool.push_back(rsqrt(x)); break;
          case 31: pool.push_back(erf(x)); break;
          case 32: pool.push_back(erfc(x)); break;
          case 33: pool.push_back(lgamma(x)); break;
          case 34: pool.push_back(atan2(x, y)); break;
          case 35:
            masks.push_back(logical_and(masks[pick() % masks.size()], masks.back()));
            break;
          case 36:
            masks.push_back(logical_or(masks.back(), masks[pick() % masks.size()]));
            break;
          case 37: masks.push_back(logical_not(masks.back())); break;
          case 38: pool.push_back(floor(x)); break;
          case 39: pool.push_back(round(x * 4.0)); break;  // halves, and -0 from (-1/8, 0)
          default:
            pool.push_back(
                CallActivation(static_cast<activation::Fn>(choice - 40), x, pick() % 2 == 0));
        }
        // A fresh mask is read by where most of the time, as a program would.
        if (masks.size() > kNumMasks && pick() % 4 != 0) {
          pool.push_back(where(masks.back(), pool[pick() % pool.size()], x));
        }
      }
      return TensorList{pool[pool.size() - 1], pool[pool.size() - 4], masks.back()};
    };
    for (DType dtype : {kFloat32, kFloat64}) {
      const auto args_for = [&](uint64_t seed) {
        TensorList args = inputs_for(seed);
        for (Tensor& t : args) t = to(t, dtype);
        for (const Tensor& m : masks_for(seed + 100)) args.push_back(m);
        return args;
      };
      TraceResult t = Trace(f, args_for(1));
      ASSERT_NE(t.program, nullptr) << t.reason;
      const TensorList args = args_for(7);
      const TensorList replayed = t.program->Run(args), eager = f(args);
      for (size_t o = 0; o < eager.size(); ++o) {
        ASSERT_EQ(replayed[o].sizes(), eager[o].sizes());
        ASSERT_EQ(replayed[o].dtype(), eager[o].dtype());
        const std::vector<double> r = replayed[o].to_vector<double>();
        const std::vector<double> e = eager[o].to_vector<double>();
        for (size_t i = 0; i < r.size(); ++i) {
          ASSERT_TRUE(SameBitsOrNaN(r[i], e[i]))
              << "trial " << trial << " output " << o << " element " << i << ": " << r[i]
              << " vs " << e[i] << " at " << CpuCapabilityName(ActiveCpuCapability()) << "\n"
              << t.program->DebugString();
        }
      }
    }
  }
}

// A fused step over many chunks is split over the intra-op threads. With a strided input
// (gathered per chunk), a row computed by a fused step of its own and read periodically
// by the large one, and transcendentals, the replay at 1 and at 2 threads and the eager
// kernels give the same bits, on a size that is not a multiple of the chunk.
TEST(FuseTest, ThreadsSplitAFusedStepWithoutChangingItsBits) {
  const int threads = GetNumThreads();
  const auto f = [](const TensorList& a) {
    const Tensor xt = transpose(a[0], 0, 1);                    // [701, 300], gathered
    const Tensor row = tanh(a[1] * 2.0) + 1.0;                  // [300], read twice
    return TensorList{exp(sin(xt) * row) - sigmoid(xt + row)};  // row read beside xt
  };
  const auto args_for = [](uint64_t seed) {
    return TensorList{to(Rand({300, 701}, seed), kFloat32), to(Rand({300}, seed + 1), kFloat32)};
  };
  TraceResult t = Trace(f, args_for(1));
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 2) << t.program->DebugString();
  const TensorList args = args_for(3);
  SetNumThreads(1);
  const Tensor one = t.program->Run(args)[0];
  const Tensor eager = f(args)[0];
  SetNumThreads(2);
  const Tensor two = t.program->Run(args)[0];
  SetNumThreads(threads);
  ExpectSameBits(one, eager);
  ExpectSameBits(two, one);
}

TEST(FuseTest, APreludeOverSeveralChunksAndBesideAnotherPeriod) {
  // [40, 16]: three chunks, each starting at a row of the [16] prelude's result.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) {
        const Tensor u = 1.0 - square(a[1]);
        return TensorList{a[0] * u + a[0]};
      },
      [](uint64_t seed) { return TensorList{Rand({40, 16}, seed), Rand({16}, seed + 1)}; }, 1,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), r = At(a[1], i % 16);
        return x * (1.0 - r * r) + x;
      });
  // A [16] run before a [1, 16] run is as large as it: no prelude, two fused steps.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) {
        const Tensor pre = a[1] * a[1] - a[1];
        return TensorList{(a[0] * pre + a[0]) * a[0]};
      },
      [](uint64_t seed) { return TensorList{Rand({1, 16}, seed), Rand({16}, seed + 1)}; }, 2,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), r = At(a[1], i);
        return (x * (r * r - r) + x) * x;
      });
  // The prelude's result (period 16) times a column z (period 32 in [2, 16]) in one
  // instruction: the result is repeated over the chunk and z laid out.
  ExpectReplayKeepsTheKernelsBits(
      [](const TensorList& a) {
        const Tensor pre = a[1] * a[1] - a[1];
        return TensorList{(a[0] + pre * a[2]) * a[0]};
      },
      [](uint64_t seed) {
        return TensorList{Rand({2, 16}, seed), Rand({16}, seed + 1), Rand({2, 1}, seed + 2)};
      },
      1,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), r = At(a[1], i % 16), z = At(a[2], i / 16);
        return (x + (r * r - r) * z) * x;
      });
}

// Allocations replaying `program` on `args` makes on this thread (Storage::Mark serials).
uint64_t AllocationsOfRun(const Program& program, const TensorList& args) {
  const uint64_t before = Storage::Mark().serial;
  const TensorList out = program.Run(args);
  return Storage::Mark().serial - before;
}

TEST(FuseTest, AFusedResultTakesTheBufferOfAnInputItOutlives) {
  // m = x @ v is read only by the run, and first: the run's result is written into m's
  // buffer, so the replay allocates m alone. The run also reads y (an input, the caller's)
  // and m again after its first instruction.
  const Tensor v = Rand({6, 8}, 1);
  const TensorListFn f = [v](const TensorList& a) {
    const Tensor m = matmul(a[0], v);
    return TensorList{(m * 2.0 + a[1]) * m};
  };
  TraceResult t = Trace(f, {Rand({4, 6}, 2), Rand({4, 8}, 3)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  const std::string listing = t.program->DebugString();
  EXPECT_NE(listing.find("'s buffer when unshared)"), std::string::npos) << listing;
  const TensorList args = {Rand({4, 6}, 4), Rand({4, 8}, 5)};
  const Tensor y_before = clone(args[1]);
  EXPECT_EQ(AllocationsOfRun(*t.program, args), 1u) << listing;
  const Tensor out = t.program->Run(args)[0];
  ExpectSameBits(out, f(args)[0]);
  ExpectSameBits(args[1], y_before);
  const std::vector<double> x = args[0].to_vector<double>(), vv = v.to_vector<double>(),
                            y = args[1].to_vector<double>(), got = out.to_vector<double>();
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      double m = 0;
      for (int64_t k = 0; k < 6; ++k) m += x[i * 6 + k] * vv[k * 8 + j];
      EXPECT_NEAR(got[i * 8 + j], (m * 2.0 + y[i * 8 + j]) * m, 1e-12) << i << ", " << j;
    }
  }
  // Two results, and m read after the first: only the second may take m's buffer.
  const TensorListFn g = [v](const TensorList& a) {
    const Tensor m = matmul(a[0], v);
    const Tensor u = m * 2.0 + a[1];
    return TensorList{u, (u - m) * a[1]};
  };
  TraceResult tg = Trace(g, {Rand({4, 6}, 2), Rand({4, 8}, 3)});
  ASSERT_NE(tg.program, nullptr) << tg.reason;
  EXPECT_EQ(AllocationsOfRun(*tg.program, args), 2u) << tg.program->DebugString();
  const TensorList both = tg.program->Run(args), expected = g(args);
  ExpectSameBits(both[0], expected[0]);
  ExpectSameBits(both[1], expected[1]);
}

TEST(FuseTest, ABufferSomethingElseHoldsIsNeverReused) {
  // The run's first input is the caller's x, then a returned m, then n, whose transpose a
  // later step reads: each is a donor by layout, and each buffer is still held (by the
  // caller, by the result list, by the view), so every replay allocates its result and
  // leaves them as they were.
  const Tensor v = Rand({3, 3}, 1);
  const TensorListFn by_caller = [](const TensorList& a) {
    return TensorList{a[0] * 2.0 + a[0]};
  };
  const TensorListFn returned = [v](const TensorList& a) {
    const Tensor m = matmul(a[0], v);
    return TensorList{m, m * 3.0 - a[0]};
  };
  const TensorListFn viewed = [v](const TensorList& a) {
    const Tensor n = matmul(a[0], v);
    const Tensor t = transpose(n, 0, 1);
    const Tensor u = n * 0.5 + a[0];  // n's last use
    return TensorList{u, sin(t)};
  };
  for (const TensorListFn& f : {by_caller, returned, viewed}) {
    TraceResult t = Trace(f, {Rand({3, 3}, 2)});
    ASSERT_NE(t.program, nullptr) << t.reason;
    const TensorList args = {Rand({3, 3}, 3)};
    const Tensor x_before = clone(args[0]);
    const TensorList got = t.program->Run(args), expected = f(args);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t o = 0; o < got.size(); ++o) ExpectSameBits(got[o], expected[o]);
    ExpectSameBits(args[0], x_before);
  }
}

TEST(FuseTest, EmptyAndZeroDimRuns) {
  const auto f = [](const TensorList& a) { return TensorList{(a[0] * a[0] - a[0]) / 2.0}; };
  for (const Shape& shape : {Shape{0, 3}, Shape{}}) {
    TraceResult t = Trace(f, {Rand(shape, 1)});
    ASSERT_NE(t.program, nullptr) << t.reason;
    EXPECT_EQ(CountFused(*t.program), 1) << t.program->DebugString();
    const Tensor x = Rand(shape, 2);
    ExpectSameBits(t.program->Run({x})[0], f({x})[0]);
  }
}

// Each opcode added for masks and selections, on every pair of special values (NaN, +-inf,
// +-0, a denormal, +-1, numbers), the operands broadcast ([1, S] by [S, 1]) and laid out
// whole: the fused step's bits are the kernels' bits, sign of zero and NaN included.
TEST(FuseTest, SpecialValuesKeepTheKernelsBits) {
  const std::vector<double> specials = {std::nan(""), -std::nan(""), INFINITY, -INFINITY, 0.0,
                                        -0.0, 1e-310, -1e-310, 1.0, -1.0, 2.5, -3.25};
  const int64_t s = static_cast<int64_t>(specials.size());
  using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
  using UnaryFn = Tensor (*)(const Tensor&);
  const std::vector<std::pair<std::string, BinaryFn>> binary = {
      {"maximum", &maximum}, {"minimum", &minimum}, {"eq", &eq}, {"ne", &ne},
      {"lt", &lt},           {"le", &le},           {"gt", &gt}, {"ge", &ge}};
  const std::vector<std::pair<std::string, UnaryFn>> unary = {
      {"abs", &abs},       {"sign", &sign}, {"relu", &relu}, {"reciprocal", &reciprocal},
      {"floor", &floor},   {"round", &round}, {"neg", &neg}, {"square", &square}};
  for (DType dtype : {kFloat32, kFloat64}) {
    for (bool whole : {false, true}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), whole ? " laid out whole" : " broadcast"));
      Tensor x = to(tensor(specials, {1, s}), dtype), y = to(tensor(specials, {s, 1}), dtype);
      if (whole) {
        x = contiguous(expand(x, {s, s}));
        y = contiguous(expand(y, {s, s}));
      }
      std::vector<std::pair<std::string, TensorListFn>> fns;
      for (const auto& [name, op] : binary) {
        const bool comparison = name != "maximum" && name != "minimum";
        fns.emplace_back(name, [op = op, comparison](const TensorList& a) {
          if (comparison) {
            const Tensor m = op(a[0], a[1]);
            return TensorList{where(m, a[0], neg(a[1])), m};
          }
          const Tensor r = op(a[0], a[1]);
          return TensorList{neg(r), r};
        });
      }
      for (const auto& [name, op] : unary) {
        fns.emplace_back(name, [op = op](const TensorList& a) {
          const Tensor r = op(a[0] * a[1]);
          return TensorList{neg(r), r};
        });
      }
      for (const auto& [name, fn] : fns) {
        SCOPED_TRACE(name);
        TraceResult t = Trace(fn, {x, y});
        ASSERT_NE(t.program, nullptr) << t.reason;
        EXPECT_EQ(CountFused(*t.program), 1) << t.program->DebugString();
        const TensorList replayed = t.program->Run({x, y}), eager = fn({x, y});
        for (size_t o = 0; o < eager.size(); ++o) {
          ASSERT_EQ(replayed[o].dtype(), eager[o].dtype());
          const std::vector<double> r = replayed[o].to_vector<double>();
          const std::vector<double> e = eager[o].to_vector<double>();
          for (size_t i = 0; i < r.size(); ++i) {
            ASSERT_TRUE(SameBitsOrNaN(r[i], e[i]))
                << "output " << o << " at " << specials[i % s] << ", " << specials[i / s]
                << ": " << r[i] << " vs " << e[i];
          }
        }
      }
    }
  }
}

TEST(FuseTest, MaskInputsAndMaskResultsOfEveryLayout) {
  // where's condition from a bool input, whole, a row, a column, transposed and 0-d, over
  // two chunks; and a comparison read after the run comes out as a bool tensor. The closed
  // form: where(m, 2x, -x) and x * x > 0.25.
  const std::vector<std::pair<std::string, Tensor>> masks = {
      {"whole", gt(Rand({40, 9}, 1), 0.0)},
      {"row", gt(Rand({9}, 2), 0.0)},
      {"column", gt(Rand({40, 1}, 3), 0.0)},
      {"transposed", transpose(gt(Rand({9, 40}, 4), 0.0), 0, 1)},
      {"0-d", gt(Rand({}, 5), -2.0)}};
  const auto f = [](const TensorList& a) {
    const Tensor twice = a[0] * 2.0;
    return TensorList{where(a[1], twice, neg(a[0])), gt(square(a[0]), 0.25)};
  };
  for (const auto& [name, m] : masks) {
    SCOPED_TRACE(name);
    TraceResult t = Trace(f, {Rand({40, 9}, 6), m});
    ASSERT_NE(t.program, nullptr) << t.reason;
    EXPECT_EQ(t.program->num_steps(), 1) << t.program->DebugString();
    const Tensor x = Rand({40, 9}, 7);
    const TensorList got = t.program->Run({x, m});
    ExpectSameBits(got[0], f({x, m})[0]);
    ASSERT_EQ(got[1].dtype(), kBool);
    const Tensor mask = contiguous(expand(m, {40, 9}));
    const std::vector<double> xs = x.to_vector<double>(), ms = mask.to_vector<double>();
    const std::vector<double> out = got[0].to_vector<double>(), big = got[1].to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      ASSERT_EQ(out[i], ms[i] != 0 ? 2 * xs[i] : -xs[i]) << i;
      ASSERT_EQ(big[i], xs[i] * xs[i] > 0.25 ? 1.0 : 0.0) << i;
    }
  }
}

}  // namespace
}  // namespace ft
