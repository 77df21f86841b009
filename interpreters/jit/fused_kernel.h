// ft/interpreters/jit/fused_kernel.h
//
// FusedKernel: one fused step of a jit program. It computes a run of elementwise
// instructions on one shape chunk by chunk in a small scratch area, and allocates only the
// tensors that are read after the run. FusePointwiseSteps (fuse.h) makes one from each run
// of elementwise steps of a Program, and Program::Run runs it (trace.h). It needs no Program:
// the instructions, the inputs' geometry and the outputs are all it is given, so it can be
// built and run by hand (the example below).
//
// What fuses: add, sub, mul, div, neg, square, reciprocal, abs, sign, floor, round, relu, maximum,
// minimum, the comparisons (eq, ne, lt, le, gt, ge), logical_and/or/not of masks, where, pow,
// atan2, the functions of cpu/vecmath.h (exp, expm1, log, log1p, sin, cos, tan, tanh, sigmoid,
// sqrt, rsqrt, erf, erfc, lgamma) and those of kernels/activation_math.h (gelu, silu, mish,
// softplus, elu, selu, celu, leaky_relu, hardtanh, hardswish, hardsigmoid, logsigmoid, softsign,
// erfinv, digamma, polygamma, clamp; their scalar arguments, traced as constants, ride in the
// instruction), whose floating operands and result are all float32 or all float64 (no type
// promotion), with only tensor arguments but for those constants, before the program's first
// in-place write. Operands may broadcast (a scalar, a row) and have any strides; every member of a
// run has the run's output shape. The fused arithmetic is bit for bit what the separate kernels
// compute: the same operation on the same value(s), element by element, in the same dtype. For the
// IEEE basic operations, the selections (where, relu, maximum's NaN rule) and the comparisons that
// holds whatever the packets; the functions are vecmath's, which the kernels call too, and whose
// result for an element depends only on its value and the active CPU capability (never on where a
// chunk starts), so a chunk of a fused step gets the kernel's bits; pow and atan2 are vecmath's Pow
// and Atan2, which kernels::pow and kernels::atan2 call for float dtypes in every layout; an
// activation is activation_math's Apply, the one definition its kernel runs too.
//
// Masks. A comparison's bool result and where's bool condition live in the run's registers
// as 0 and 1 of the run's dtype (exact in both): a bool input is converted as it is laid
// out, and a comparison read after the run is written out as a bool tensor. So relu's
// gradient, where(gt(y, 0), g, 0), and a jvp chain through it fuse into one pass. The
// logical ops combine masks exactly (and: a * b, or: max(a, b), not: 1 - a) and join the run
// that computes one of their operands, in its dtype (with none they stay kernels).
//
// Buffers. A result needs a fresh tensor unless an input can give it its buffer: donor()
// names an input with the result's layout that no instruction reads after the one computing
// that result (Program::Run hands it over when the step is the slot's last use and nothing
// else holds the buffer).
//
// Invariants: a FusedKernel is immutable once made, and Run may be called from several
// threads at once (each computes in scratch registers of its own); Run's inputs have the
// dtypes and geometry their Inputs were made for; the results, on one thread or split over
// the intra-op threads, are the separate kernels' bits.
//
// Example (by hand: x is [4, 16] float32, y a [16] row broadcast down it):
//   using K = ft::FusedKernel;
//   K k(ft::kFloat32, {4, 16}, {K::InputFor(x, {4, 16}), K::InputFor(y, {4, 16})},
//       {{K::Opcode::kMul, 0, 1}, {K::Opcode::kNeg, 2, -1}}, {3});
//   k.ToString() == "{ r2 = mul(r0, r1); r3 = neg(r2) } -> r3"
//   const ft::Tensor* in[] = {&x, &y};
//   ft::Tensor out;
//   k.Run(in, &out);   // out == ft::neg(x * y), bit for bit
#ifndef FT_INTERPRETERS_JIT_FUSED_KERNEL_H_
#define FT_INTERPRETERS_JIT_FUSED_KERNEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kernels/activation_math.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

class FusedKernel {
 public:
  // Elements per chunk: a chunk's registers stay in the L1 cache (16 registers of float64 are
  // 32 KiB), and a 16x16 float basis is one chunk.
  static constexpr int64_t kChunk = 256;

  // From kEq to kGe the comparisons (a mask result); kLogicalAnd to kLogicalNot read masks
  // and make one; kWhere reads a mask and two values;
  // kActivation is one of kernels/activation_math.h's functions (Instr says which, with its
  // constants); from kExp on, the functions of cpu/vecmath.h, in its Fn order.
  enum class Opcode : uint8_t {
    kAdd, kSub, kMul, kDiv, kNeg, kSquare, kReciprocal, kAbs, kSign, kFloor, kRound, kRelu,
    kMaximum, kMinimum,
    kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kLogicalNot, kWhere, kPow, kAtan2,
    kActivation,
    kExp, kExpm1, kLog, kLog1p, kSin, kCos, kTan, kTanh, kSigmoid, kSqrt, kRsqrt,
    kErf, kErfc, kLgamma,
  };
  static constexpr int kNumOpcodes = static_cast<int>(Opcode::kLgamma) + 1;
  // OpcodeOf: the opcode of the base op named `op`, if fusion supports it (kActivation for
  // the ops of activation_math.h).
  static std::optional<Opcode> OpcodeOf(absl::string_view op);
  // ActivationOf: the function of kernels/activation_math.h computing the base op `op`.
  static std::optional<activation::Fn> ActivationOf(absl::string_view op);
  static int Arity(Opcode code);
  // IsComparison: whether `code` computes a mask (eq ... ge).
  static constexpr bool IsComparison(Opcode code) {
    return code >= Opcode::kEq && code <= Opcode::kGe;
  }
  // IsLogical: whether `code` combines masks into a mask (logical_and, _or, _not).
  static constexpr bool IsLogical(Opcode code) {
    return code >= Opcode::kLogicalAnd && code <= Opcode::kLogicalNot;
  }
  // Exact: whether the fused `code` in `dtype` computes the kernel's bits (see above); only
  // such instructions may be given to the constructor.
  static bool Exact(Opcode code, DType dtype);

  // Registers [0, num_inputs) hold the inputs; instruction k writes register num_inputs + k.
  // A register is a mask (0 or 1) when it is a bool input or the result of a comparison or
  // a logical op; where's first operand is a mask and no other operand of it is; a logical
  // op's operands are all masks; no other opcode reads one.
  // Prelude instructions come first: they compute a smaller shape that broadcasts into the
  // run as a period (1 - t^2 on [16] before a [16, 16] run that reads it down its rows),
  // once per Run over prelude_size elements; the rest then read their results row by row.
  struct Instr {
    Opcode code;
    int a;
    int b;  // -1 for a unary opcode
    bool prelude = false;
    int c = -1;  // where's third operand (where(a, b, c)); -1 for every other opcode
    // kActivation: the function and its constants (the op's scalar arguments).
    activation::Fn activation = activation::Fn::kGelu;
    activation::Params params = {};
  };

  // How an input is read chunk by chunk (decided once, from its traced geometry):
  //   kContiguous  it has the run's shape, contiguous: a chunk is a pointer into it;
  //   kScalar      every element reads one value (a 0-d tensor, or one expanded), and every
  //                instruction that reads it is binary with a non-scalar other operand:
  //                those instructions read the value itself (x * s), nothing is laid out;
  //   kPeriodic    every chunk reads the same values, a block of at least kMinRow elements
  //                repeating with a period that divides the chunk (a row broadcast down a
  //                matrix): one period is read (in place when the input is exactly that
  //                block, contiguous) and the instructions that read it walk the chunk
  //                row by row;
  //   kFixed       every chunk reads the same values (a scalar used otherwise, a shorter
  //                period, or two periods in one instruction): they are laid out in the
  //                input's scratch register once per Run;
  //   kStrided     anything else: gathered per chunk.
  // InputFor never returns kScalar or kPeriodic: the constructor decides them from the
  // instructions.
  struct Input {
    enum class Access : uint8_t { kContiguous, kScalar, kPeriodic, kFixed, kStrided } access;
    Shape strides;       // per dim of the run's shape; 0 where the input broadcasts
    int64_t period = 0;  // kFixed: element k of the run reads the value of element k % period
    bool dense_period = false;  // kFixed: the input holds exactly one period, contiguous
    // kContiguous with exactly the layout of a result (the run's sizes, contiguous strides,
    // offset 0): its buffer can hold one.
    bool result_layout = false;
    // A bool input: a mask, converted to 0/1 of the run's dtype wherever it is laid out
    // (never read in place, so never kContiguous, kScalar or read in place as a period).
    bool mask = false;
  };
  // How an instruction reads one operand (decided by the constructor): kArray, element k at
  // p[k]; kScalar, *p for every element (a kScalar input; at most one per instruction);
  // kRow, element k at p[k % row] (a kPeriodic input or a prelude result).
  enum class Operand : uint8_t { kArray, kScalar, kRow };
  // InstrFn: one instruction's loop for its opcode and operand reads, computing o[0, n)
  // from a, b (null for a unary opcode) and c (where's third operand, else null), with kRow
  // operands of period `row`; `instr` is the instruction (kActivation reads its constants).
  template <typename T>
  using InstrFn = void (*)(T* o, const T* a, const T* b, const T* c, int64_t n, int64_t row,
                           const Instr& instr);
  // InputFor: how an input with `traced`'s geometry is read in a run of shape `sizes`.
  static Input InputFor(const Tensor& traced, IntArrayRef sizes);

  // prelude_size: the number of elements prelude instructions compute (0: none). It
  // divides the run's size, and the chunk when the run spans several; prelude results are
  // not outputs; prelude instructions read only inputs whose period divides it (kScalar,
  // kPeriodic, kFixed) and earlier prelude results.
  FusedKernel(DType dtype, Shape sizes, std::vector<Input> inputs, std::vector<Instr> instrs,
              std::vector<int> outputs, int64_t prelude_size = 0);

  // Run computes the outputs (fresh contiguous tensors of sizes() and dtype(), bool for a
  // mask) from the inputs, given in register order. Each input has the dtype (bool for a
  // mask) and the geometry (sizes, strides) its Input was made for; Program::Run's
  // precondition guarantees that.
  // reuse_donor: the caller holds the only reference to input donor()'s buffer and drops it
  // after Run, so that output donor_output() is written into that buffer and returned as
  // that tensor, with no allocation.
  void Run(const Tensor* const* inputs, Tensor* outputs, bool reuse_donor = false) const;
  // donor: an input whose buffer can take output donor_output() (-1: none). Neither is a
  // mask; the input has the result layout, and no instruction reads it after the one that
  // computes that output: within a chunk, each element of it is read before the same element
  // of the output is stored.
  int donor() const { return donor_; }
  int donor_output() const { return donor_output_; }

  DType dtype() const { return dtype_; }
  IntArrayRef sizes() const { return sizes_; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // ToString: "{ r6 = mul(r0, r1); r7 = neg(r6) } -> r7", with "prelude[16] { ... }; "
  // around the prelude's instructions.
  std::string ToString() const;

 private:
  template <typename T>
  void RunAs(const Tensor* const* inputs, Tensor* outputs, bool reuse_donor) const;
  // RunChunks computes elements [first, last) (first a multiple of the chunk size) of every
  // output, on the calling thread with its own scratch registers.
  template <typename T>
  void RunChunks(const Tensor* const* inputs, void* const* out_data, int64_t first,
                 int64_t last) const;
  // RunInstr computes instruction k over n elements into dst from the registers in reg.
  template <typename T>
  void RunInstr(size_t k, T* dst, const T* const* reg, int64_t n) const;

  // The shortest period read row by row (a shorter one costs more in row loops than its
  // layout saves).
  static constexpr int64_t kMinRow = 16;
  struct Plan {
    Operand a = Operand::kArray;
    Operand b = Operand::kArray;  // kArray for a unary opcode
    Operand c = Operand::kArray;  // kArray but for kWhere
    int64_t row = 0;              // the period of its kRow operands (0: none; one per instr)
    InstrFn<float> f32 = nullptr;   // the loop, for the kernel's dtype (the other is null)
    InstrFn<double> f64 = nullptr;
  };

  DType dtype_;
  Shape sizes_;
  int64_t numel_;
  int num_inputs_;
  std::vector<Input> inputs_;
  std::vector<Instr> instrs_;
  std::vector<int> outputs_;    // register of each output
  std::vector<int> output_of_;  // per register: the output it is, or -1
  std::vector<bool> is_mask_;   // per register: a mask (0/1); an output of one is bool
  int64_t prelude_size_;
  int num_prelude_ = 0;         // instructions [0, num_prelude_) are the prelude
  std::vector<Plan> plans_;     // per instruction
  std::vector<int> repeated_;   // prelude results laid out over a chunk (read beside another
                                // period), not row by row
  int donor_ = -1;
  int donor_output_ = -1;
  std::vector<int> scratch_slot_;  // per register: its chunk in the scratch area (-1: none,
                                   // read in place or written to an output)
  int num_scratch_ = 0;
};

}  // namespace ft

#endif  // FT_INTERPRETERS_JIT_FUSED_KERNEL_H_
