#!/usr/bin/env python3
"""Writes the seed corpus of //tests/fuzz: tests/fuzz/corpus/<target>/seed-<name>.

Each seed is a byte string laid out the way the targets decode it (tests/fuzz/fuzz_input.h,
op_table.h, nn_op_table.h, transform_stack.h): a tensor, then ops by name (their indices are
read from op_table.cc's and nn_op_table.cc's tables, so the seeds follow a table if it is
reordered: run this again), or a function and a transform stack. The seeds only give the fuzzer good starting points; any byte
string is a valid input.

Also writes regression-<name>: each finding that was fixed, as an input for the current
decoders (a reproducer the fuzzer wrote is kept as it was instead, when it still decodes the
same way).

Usage: tools/gen_fuzz_seeds.py [GROUP...]   (from anywhere; rewrites these files, keeps the
others). GROUPs: ops, transforms, custom_function, nn, regressions; default all. (The ops
seeds written now differ from the committed ones where op_table.cc's table changed after
they were written; writing only the group one works on keeps the others as they are.)
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

with open(os.path.join(ROOT, "tests", "fuzz", "op_table.cc")) as f:
    table = f.read().split("const OpEntry kOps[] = {", 1)[1]
OPS = re.findall(r"FT_FUZZ_(?:UNARY|BINARY|INPLACE|REDUCE|DIM|OP)\((\w+)\)", table)
OP = {name: i for i, name in enumerate(OPS)}

with open(os.path.join(ROOT, "tests", "fuzz", "nn_op_table.cc")) as f:
    nn_table = f.read().split("const OpEntry kNnOps[] = {", 1)[1]
NN_OPS = re.findall(r"FT_NN_(?:OP|ACTIVATION)\((\w+)\)", nn_table)
NN_OP = {name: i for i, name in enumerate(NN_OPS)}

F32, F64, I64, BOOL = 0, 3, 5, 7  # indices into FuzzInput::AnyDType's table
CONTIGUOUS, TRANSPOSED, STEP2, EXPANDED, SELECTED, NARROWED, PERMUTED = range(7)
TRANSFORMS = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
              "jit", "functionalize", "linearize"]


def tensor(sizes, dtype=F32, layout=CONTIGUOUS, d=0, e=1, seed=7, specials=()):
    """MakeTensor's bytes: rank, sizes, dtype, layout, two dims, layout extras, Fill."""
    rank = len(sizes)
    out = [rank] + list(sizes) + [dtype, layout] + ([d, e] if rank > 0 else [])
    if layout == SELECTED:
        out.append(1)  # a leading dim of 3
    if layout == NARROWED and rank > 0:
        out += [0, 1]  # start 1, one element to spare
    out.append(seed)
    if dtype in (F32, F64):
        out.append(0)  # scale 1
    numel = 1
    for s in sizes:
        numel *= s
    if numel > 0:
        out.append(len(specials))
        for at, value in specials:
            out += [at, value]
    if layout == SELECTED:
        out.append(2)  # row 2 of 3
    return out


def op(name, *params):
    return [OP[name]] + list(params)


def write(target, name, data, prefix="seed-"):
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    with open(os.path.join(CORPUS, target, prefix + name), "wb") as f:
        f.write(bytes(b % 256 for b in data))


def ops_seeds():
    t = "ops_fuzzer"
    # Dim bytes: 2k -> dim k, 2k + 1 -> dim k - rank; Size byte 4 -> 4, 2 -> 2; Index like Dim.
    write(t, "elementwise-transposed",
          tensor([3, 4], F32, TRANSPOSED, 0, 1, specials=[(2, 200), (5, 141)]) + [0] +
          op("exp", 0) + op("add", 0, 0, 1) + op("mul", 1, 1, 0) + op("where", 1, 0, 1, 2, 0) +
          op("clamp", 0, 1, 3, 1, 2) + op("pow", 0, 0, 0) + op("atan2", 0, 2, 1))
    write(t, "reductions-keepdim",
          tensor([2, 3, 4], F64, PERMUTED) + [0] + op("sum", 0, 2, 0, 3, 1) +
          op("var_std", 0, 1, 2, 2, 1, 0) + op("norm", 0, 0, 1, 4, 1) +
          op("argmax_argmin", 0, 1, 3, 1, 0) + op("logsumexp", 0, 1, 1, 0) +
          op("softmax", 0, 3) + op("cumsum", 0, 1) + op("prod", 0, 0, 1))
    write(t, "views-expanded",
          tensor([3, 1, 4], F32, EXPANDED, 1) + [0] + op("reshape", 0, 1, 0) +
          op("transpose", 0, 0, 2) + op("unsqueeze", 0, 1) + op("expand", 0, 3, 1, 4) +
          op("select", 0, 2, 3) + op("narrow", 0, 0, 2, 3) + op("slice", 0, 2, 1, 1, 1, 0, 3) +
          op("diagonal", 0, 0, 0, 2) + op("flatten", 0, 0, 3) + op("movedim", 0, 1, 0, 3))
    write(t, "index-int64",
          tensor([4, 3], I64, STEP2, 0) + [0] + op("index_select", 0, 0, 0, 3, 2, 9) +
          op("gather", 0, 2, 0, 2, 9) + op("scatter_add", 0, 0, 0, 3, 1, 0) +
          op("take_along_dim", 0, 1, 0, 2, 5) + op("one_hot", 3, 2, 3, 3, 2, 4, 1) +
          op("sort", 0, 1, 1) + op("topk", 0, 1, 1, 4, 1, 1))
    write(t, "cat-stack-split",
          tensor([2, 3], F32) + [1] + tensor([2, 3], F64, SELECTED) +
          op("cat", 1, 0, 1, 2) + op("stack", 1, 1, 0, 3) + op("split", 0, 2, 0) +
          op("chunk", 0, 3, 3) + op("split_with_sizes", 0, 2, 1, 2, 2) +
          op("repeat", 0, 2, 2, 1) + op("pad", 0, 4, 1, 2, 0, 1, 3, 200))
    write(t, "inplace-and-views",
          tensor([3, 3], F32, NARROWED, 1) + [0] + op("write_through_view", 0, 2, 2, 1, 0, 3) +
          op("add_", 0, 1, 0, 3) + op("mul_", 0, 0, 0) + op("copy_", 0, 0) +
          op("clamp_", 0, 1, 2, 0) + op("fill_", 0, 2, 3) + op("compound_assign", 0, 0, 1) +
          op("exp_", 0) + op("zero_", 0))
    write(t, "linalg",
          tensor([3, 4], F64, PERMUTED) + [1] + tensor([4, 2], F64, TRANSPOSED, 0, 1) +
          op("matmul", 0, 0, 1) + op("mm", 0, 0, 1) + op("linear", 0, 1, 0, 1, 0) +
          op("outer", 0, 0, 0) + op("t", 0) + op("dot", 0, 2, 2) + op("bmm", 0, 0, 0))
    write(t, "scatter-views",
          tensor([3, 4], F32) + [0] + op("select_scatter", 0, 0, 1, 0) +
          op("slice_scatter", 0, 2, 1, 1, 1, 1, 0, 1, 3) +
          op("diagonal_scatter", 0, 1, 0, 2, 0) + op("flip", 0, 2, 0, 2) +
          op("sum_to_size", 0, 2))
    write(t, "edge-values",
          tensor([5], F32, specials=[(0, 142), (1, 141), (2, 140), (3, 139)]) + [0] +
          op("log", 0) + op("sqrt", 0) + op("reciprocal", 0) + op("to", 0, 5) +
          op("round", 0) + op("sign", 0) + op("relu", 0) + op("rsqrt", 0))
    write(t, "int64-extremes",
          tensor([2, 2], I64, specials=[(0, 0), (1, 1), (3, 0)]) + [0] +
          op("neg", 0) + op("abs", 0) + op("square", 0) + op("mul", 0, 0, 0) + op("sum", 0, 0, 0) +
          op("cumsum", 0, 0) + op("matmul", 0, 0, 0) + op("pow", 0, 0, 1))
    write(t, "factories-random",
          tensor([], F32) + [0] + op("factory", 0, 2, 2, 3, 0) + op("factory", 2, 130, 136, 132) +
          op("factory", 4, 3, 4, 0) + op("random", 0, 1) + op("random", 3, 132, 1) +
          op("like", 3, 0, 1, 2, 3) + op("random", 4, 0, 3, 2, 2, 3))
    write(t, "size-zero-and-huge",
          tensor([0, 3], F32) + [0] + op("reshape", 0, 4, 3, 0) + op("sum", 0, 1, 0, 1) +
          op("expand", 0, 4, 2, 14, 3) + op("repeat", 0, 2, 14, 3) + op("pad", 0, 2, 14, 1, 0) +
          op("amax", 0, 0, 0) + op("topk", 0, 1, 0, 2))
    write(t, "bool-logical",
          tensor([2, 3], BOOL) + [1] + tensor([3], BOOL) + op("logical_and", 0, 0, 1) +
          op("logical_or", 0, 0, 1) + op("logical_not", 0) + op("eq", 1, 0, 3) +
          op("sum", 0, 0, 0) + op("read_values", 0, 1) + op("allclose", 0, 1, 0))


def args(*tensors):
    """DecodeArgs' bytes: count, then per argument the floating_only byte and the tensor."""
    out = [len(tensors) - 1]
    for t in tensors:
        out += [1] + t  # floating only
    return out


def program(steps, outputs=1, captured=None, catches=(), step_bytes=16):
    """DecodeProgram's bytes: steps (step_bytes each, padded), outputs, captured tensor."""
    out = [len(steps) - 1]
    for i, step in enumerate(steps):
        out.append(3 if i in catches else 0)
        assert len(step) <= step_bytes, step
        out += (step + [0] * step_bytes)[:step_bytes]
    out.append(outputs - 1)
    if captured is None:
        out.append(1)
    else:
        out += [0] + captured
    return out


def layers(*ls):
    """DecodeLayers' bytes, innermost first: each (name, params) with 12 param bytes."""
    out = [len(ls)]
    for name, params in ls:
        out += [TRANSFORMS.index(name)] + (list(params) + [0] * 12)[:12]
    return out


# Layer parameters; the first byte is the reduce flag every layer reads (1: sum f's output
# for grad & co.). vmap: in_dims and out_dims (1 = one dim for all, then 1 = not nullopt and
# the index of the dim: 0 -> 0, 4 -> -1), randomness, chunk_size (1 = none, 0 then a Size
# byte). grad & co.: argnums (1, 0 = {0}), then jacrev's chunk_size or jacfwd's randomness.
VMAP0 = [1, 1, 1, 0, 1, 1, 0, 0, 1]
VMAP_LAST = [1, 1, 1, 4, 1, 1, 0, 0, 1]  # in_dim -1
VMAP_NONE_0 = [1, 0, 2, 0, 1, 0, 1, 1, 0, 0, 1]  # per-argument in_dims (None, 0)
VMAP_CHUNK = [1, 1, 1, 0, 1, 1, 0, 2, 0, 3]  # randomness different, chunk_size 3
GRAD = [1, 1, 0]
BAD_ARGNUMS = [1, 0, 3, 0, 3, 0]  # {0, -1, 0}
JACREV = [1, 1, 0, 1]
JACFWD = [1, 1, 0, 0, 1]
JVP = [1, 0, 0]
VJP = [1, 0, 0, 1]  # cotangents ones_like, vjp_fn called twice
JIT = [1, 1, 1, 1]  # fold_captured, fused, called twice
FUNCTIONALIZE = [1, 0]
LINEARIZE = [1, 0]


def transform_seeds():
    t = "transforms_fuzzer"
    x = tensor([3, 4], F32, TRANSPOSED)
    w = tensor([4], F64)
    sin_sum = program([op("sin", 0), op("mul", 0, 0, 1), op("sum", 0, 0, 0)])
    write(t, "vmap-grad", args(x) + sin_sum + layers(("grad", GRAD), ("vmap", VMAP0)) + [0])
    write(t, "vmap-last-dim", args(x) + program([op("exp", 0), op("sum", 0, 0, 0)]) +
          layers(("vmap", VMAP_LAST)) + [1])
    write(t, "jacrev-jacfwd", args(tensor([3], F64)) +
          program([op("tanh", 0), op("mul", 0, 0, 0)]) +
          layers(("jacrev", JACREV), ("jacfwd", JACFWD)) + [0])
    write(t, "hessian", args(tensor([3], F64)) + program([op("cos", 0), op("sum", 0, 0, 0)]) +
          layers(("hessian", GRAD)) + [0])
    write(t, "jvp-of-grad", args(tensor([4], F64)) + sin_sum +
          layers(("grad", GRAD), ("jvp", JVP)) + [0])
    write(t, "vjp-two-args", args(tensor([2, 3], F32), tensor([3], F32)) +
          program([op("mul", 0, 0, 1), op("exp", 2)], outputs=2) + layers(("vjp", VJP)) + [0])
    write(t, "jit-replay-new-signature", args(x, w) +
          program([op("add", 0, 0, 1), op("tanh", 2), op("mul", 0, 3, 0)]) +
          layers(("jit", JIT)) + [2])
    write(t, "functionalize-inplace-view", args(tensor([3, 3], F32)) +
          program([op("mul", 1, 0, 0), op("write_through_view", 1, 0, 2, 1, 0, 3),
                   op("sum", 1, 0, 0)]) +
          layers(("functionalize", FUNCTIONALIZE), ("vmap", VMAP0), ("grad", GRAD)) + [0])
    write(t, "vmap-in-dims-none-chunks", args(tensor([4], F32), tensor([3, 4], F32)) +
          program([op("mul", 0, 0, 1), op("random", 2, 1)], catches=(1,)) +
          layers(("vmap", VMAP_NONE_0), ("vmap", VMAP_CHUNK)) + [0])
    write(t, "linearize", args(tensor([3], F64)) + program([op("sin", 0), op("mul", 0, 1, 0)]) +
          layers(("linearize", LINEARIZE)) + [1])
    write(t, "bad-argnums", args(tensor([2], F32), tensor([2], F32)) +
          program([op("mul", 0, 0, 1), op("sum", 0, 0, 0)]) +
          layers(("grad", BAD_ARGNUMS)) + [0])
    write(t, "captured-write", args(tensor([3], F32)) +
          program([op("add_", 0, 1, 0), op("sum", 0, 0, 0)], captured=tensor([3], F32)) +
          layers(("grad", GRAD), ("vmap", VMAP0)) + [0])


def behavior(backward=0, jvp=0, vmap=0, count=0, dirty=True):
    """The misbehaving Functions' Behavior: four Mostly0 reads (1: mode 0; 0, m: mode m)."""
    out = []
    for mode in (backward, jvp, vmap, count):
        out += [0, mode] if mode else [1]
    return out + [1 if dirty else 0]


def function_step(fn, *params, misbehave=None):
    """A custom_function_fuzzer step applying Function number `fn` to register 0."""
    return [1] + (misbehave or behavior()) + [0, fn] + list(params)


def custom_function_seeds():
    t = "custom_function_fuzzer"
    x = tensor([3, 4], F64)
    sum_all = [0] + op("sum", 0, 0, 0)  # a built-in op step
    write(t, "cube-vmap-grad", args(x) + program([function_step(12), sum_all]) +
          layers(("grad", GRAD), ("vmap", VMAP0)) + [0])
    write(t, "mul-gen-vmap-jvp", args(x, tensor([4], F64)) +
          program([function_step(11, 1), sum_all]) + layers(("jvp", JVP)) + [0])
    write(t, "sort-take-jacrev", args(tensor([4], F64)) + program([function_step(16, 0, 1)]) +
          layers(("jacrev", JACREV), ("vmap", VMAP0)) + [0])
    write(t, "exp-inplace-functionalize", args(tensor([3], F64)) +
          program([[0] + op("mul", 0, 0, 0), function_step(15), sum_all]) +
          layers(("functionalize", FUNCTIONALIZE), ("grad", GRAD)) + [0])
    write(t, "bad-backward-undefined", args(tensor([3], F32)) +
          program([function_step(0, misbehave=behavior(backward=1)), sum_all]) +
          layers(("grad", GRAD)) + [0])
    write(t, "bad-vmap-out-dims", args(tensor([2, 3], F32)) +
          program([function_step(0, misbehave=behavior(vmap=3))]) +
          layers(("vmap", VMAP0)) + [0])
    write(t, "generated-rule-wrong-shape", args(tensor([2, 3], F32)) +
          program([function_step(1, misbehave=behavior(backward=2)), sum_all]) +
          layers(("grad", GRAD), ("vmap", VMAP0)) + [0])
    write(t, "select-hessian", args(tensor([3, 2], F64)) +
          program([function_step(18, 2, 1), sum_all]) + layers(("hessian", GRAD)) + [0])
    write(t, "sum-dim-defaults-jacfwd", args(tensor([2, 3], F64)) +
          program([function_step(5, 2, 1, 1)]) + layers(("jacfwd", JACFWD)) + [0])
    write(t, "once-differentiable-twice", args(tensor([3], F64)) +
          program([function_step(9), sum_all]) +
          layers(("grad", GRAD), ("grad", GRAD)) + [0])
    write(t, "jit-of-vmap", args(tensor([2, 3], F64)) +
          program([function_step(13), sum_all]) + layers(("vmap", VMAP0), ("jit", JIT)) +
          [1])
    write(t, "mark-dirty-missing", args(tensor([3], F32)) +
          program([[0] + op("mul", 0, 0, 0), function_step(3, misbehave=behavior(dirty=False))]) +
          layers(("vjp", VJP)) + [0])


def nn(name, *params):
    """An nn_fuzzer step running nn op `name` (RunNnStep's first byte 1: ApplyNnOp)."""
    return [1, NN_OP[name]] + list(params)


def plain(name, *params):
    """An nn_fuzzer step running ApplyOp's op `name` (RunNnStep's first byte 0)."""
    return [0] + op(name, *params)


NN_STEP_BYTES = 48  # nn_fuzzer.cc's kNnStepBytes
EAGER, STACK = 0, 1  # nn_fuzzer's first byte
FIT = 3  # Operand's mode: a register fitted to the shape and converted to the op's dtype


def nn_seeds():
    # nn_op_table.cc's decoders, per byte: OperandDType 0 f32 / 1 f64; Extent k -> {1, 2, 3,
    # 4, 2, 3, 1, 0}[k]; DecodeBatch 0 -> N 1, 1 -> N 2, 2 -> unbatched; Spatial b -> 1 + b;
    # PerDim: 0 (one value for all dims) then Param bytes (lo + b); Operand: FIT, register;
    # OptionalOperand: 0 (none) or 1 then an Operand.
    t = "nn_fuzzer"

    def nn_program(steps, **kw):
        return program(steps, step_bytes=NN_STEP_BYTES, **kw)

    conv2d = nn("conv2d", 0, 0, 0, 1, 1, 2, 2, 1, 1, 1, 0, 0, 2, 0, 1, 0, 0, FIT, 0, FIT, 0,
                1, FIT, 0)  # [1, 2, 3, 3] * [2, 2, 2, 2] + bias, stride 1, padding 1
    silu = nn("silu", 0, 3, 1, 3, 3, FIT, 1)  # of the conv's [1, 2, 4, 4] as [2, 4, 4]
    write(t, "conv2d-silu-vmap-grad", [STACK] + args(tensor([2, 3, 4], F32)) +
          nn_program([conv2d, silu, plain("sum", 2, 0, 0)]) +
          layers(("grad", GRAD), ("vmap", VMAP0)) + [0])

    write(t, "eager-conv-transpose-pools", [EAGER] + tensor([2, 3, 4, 4], F64) + [0] +
          # conv_transpose1d: groups 2, stride 2, output_padding 1: [1, 2, 3] -> [1, 2, 7]
          nn("conv_transpose1d", 1, 0, 1, 0, 0, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0, FIT, 0, FIT,
             0, 0) +
          # max_pool2d_with_indices, kernel 2, stride 2, ceil_mode: [1, 2, 4, 4]
          nn("max_pool2d", 0, 0, 1, 3, 3, FIT, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1) +
          # avg_pool2d, kernel 3, stride None, padding 1, count_include_pad
          nn("avg_pool2d", 0, 0, 1, 3, 3, FIT, 0, 0, 2, 0, 0, 1, 0, 1, 1) +
          # adaptive_avg_pool1d of an unbatched [2, 5] to 3
          nn("adaptive_avg_pool1d", 1, 2, 1, 4, FIT, 0, 0, 2) +
          # unfold, kernel 2, stride 2: [1, 1, 4, 4] -> [1, 4, 4]
          nn("unfold", 0, 0, 0, 3, 3, FIT, 0, 0, 1, 0, 0, 0, 0, 0, 1) +
          # fold it back: output_size [4, 4], kernel 2, stride 2 (4 blocks)
          nn("fold", 0, 0, 0, 1, 3, 3, 0, 1, 0, 0, 0, 0, 0, 1, 1, FIT, 6))

    # interpolate: n 2, N 1, C 1, [2, 3], bilinear, scale_factor {2.0}, align_corners
    write(t, "interpolate-bilinear-jacrev", [STACK] + args(tensor([2, 3], F64)) +
          nn_program([nn("interpolate", 1, 1, 1, 0, 0, 1, 2, FIT, 0, 2, 2, 1, 1, 3, 1, 0, 1)]) +
          layers(("jacrev", JACREV)) + [0])

    layer_norm = nn("layer_norm", 0, 2, 1, 3, 1, 1, FIT, 0, 1, FIT, 0, 0, 0)  # [2, 4] over [4]
    # batch_norm, training, running stats (var made positive): [2, 2, 3]
    batch_norm = nn("batch_norm", 0, 1, 1, 1, 2, FIT, 1, 1, FIT, 0, 1, FIT, 0, 1, 0, 0, 1, 0, 0)
    group_norm = nn("group_norm", 0, 1, 1, 1, 0, 0, FIT, 2, 0, 0, 0)  # 2 groups of [1, 4]
    write(t, "norms-vmap", [STACK] + args(tensor([3, 2, 4], F32)) +
          nn_program([layer_norm, batch_norm, group_norm]) + layers(("vmap", VMAP0)) + [0])

    # scaled_dot_product_attention [2, 3, 2] x [2, 2, 2] x [2, 2, 3], a bool mask from arg 0
    sdpa = nn("scaled_dot_product_attention", 1, 1, 1, 2, 1, 1, 2, FIT, 0, FIT, 1, FIT, 1,
              1, 2, 0, 1, 1, 1)
    # einsum "ab,ba->a" of the attention output (as [2, 3]) and arg 0 (as [3, 2])
    einsum = nn("einsum", 1, 2, 0, 0, 0, 1, 1, 2, 0, 1, 1, FIT, 2, 2, 1, 0, 1, FIT, 0, 2, 1,
                0, 1)
    write(t, "attention-einsum-jvp", [STACK] + args(tensor([2, 3], F64), tensor([3, 3], F64)) +
          nn_program([sdpa, einsum]) + layers(("jvp", JVP)) + [0])

    mse = nn("mse_loss", 1, 1, 3, 2, FIT, 0, 1, 2, 0, 1)  # [4] against a constant, sum
    # cross_entropy of logits [4], a class index computed from arg 0 (clamped into range; a
    # MakeIndex is random, which vmap inside hessian refuses), label_smoothing 0.1
    cross_entropy = nn("cross_entropy", 1, 3, 0, FIT, 0, 1, 0, 0, 0, 0, 4, 0, 2)
    write(t, "losses-hessian", [STACK] + args(tensor([4], F64)) +
          nn_program([mse, cross_entropy, plain("add", 0, 1, 2)]) +
          layers(("hessian", GRAD)) + [0])

    embedding = nn("embedding", 0, 2, 3, 1, 1, FIT, 0, 1, 9, 3, 0, 2)  # [3, 4] table, padding 1
    # index_put(x [3, 4], (i [2],), the embedding's rows, accumulate)
    index_put = nn("index_put", 0, 2, 2, 3, FIT, 0, 1, 1, 1, 1, 3, 3, 1, 2, FIT, 1)
    roll = nn("roll", 0, 2, 2, 3, FIT, 2, 2, 2, 4, 2, 0, 2)  # shifts (1, 2), dims (0, 1)
    pixel_shuffle = nn("pixel_shuffle", 0, 1, 1, 2, 0, 1, 0, FIT, 3)  # [4, 2, 1] -> [1, 4, 2]
    write(t, "indexing-functionalize-jit", [STACK] + args(tensor([3, 4], F32)) +
          nn_program([embedding, index_put, roll, pixel_shuffle]) +
          layers(("functionalize", FUNCTIONALIZE), ("jit", JIT)) + [2])

    x = [0, 2, 1, 2, FIT, 0]  # ActivationInput: f32 [2, 3] from register 0
    write(t, "eager-activations",
          [EAGER] + tensor([2, 3], F32, specials=[(1, 142), (4, 141)]) + [0] +
          nn("gelu", *x, 1) + nn("softplus", *x, 0, 80, 1) + nn("mish", *x) +
          nn("erfinv", *x) + nn("lgamma", *x) + nn("digamma", *x) + nn("polygamma", *x, 2) +
          nn("hardtanh", *x, 0, 60, 70) + nn("celu", *x, 0, 68) +
          nn("tril_triu", 0, 1, 1, 2, FIT, 0, 2, 1) + nn("cumprod", *x, 1) +
          nn("logcumsumexp", *x, 2))


def regressions():
    """The findings, as inputs for the current decoders (each fixed; see its gtest)."""
    t = "ops_fuzzer"
    HUGE = 14  # FuzzInput::Size's index of 2^42
    MAX, MIN = 0, 1  # Fill's int64 special values
    # neg/abs/square of INT64_MIN / INT64_MAX: signed overflow in Eigen's functors.
    write(t, "int64-neg-abs-square",
          tensor([3], I64, specials=[(0, MIN), (1, MAX), (2, MIN)]) + [0] + op("neg", 0) +
          op("abs", 0) + op("square", 0) + op("unary_minus", 0), prefix="regression-")
    # matmul/mm/dot/linear of int64 extremes: signed overflow in Eigen's GEMM.
    write(t, "int64-matmul",
          tensor([2, 2], I64, specials=[(0, MAX), (1, MAX), (3, MIN)]) + [0] +
          op("matmul", 0, 0, 0) + op("mm", 0, 0, 0) + op("linear", 0, 0, 1, 0) +
          op("outer", 0, 0, 0), prefix="regression-")
    # chunk of an empty dim into 2^42 chunks: an allocation of 2^42 sizes (fatal under ASan).
    write(t, "chunk-empty-huge",
          tensor([0], I64) + [0] + op("chunk", 0, HUGE, 0) + op("chunk", 0, 16, 0),
          prefix="regression-")
    write("transforms_fuzzer", "chunk-empty-int64-max",
          args(tensor([0, 2], F32)) + program([[OP["chunk"], 0, 16, 0]]) +
          layers(("vmap", VMAP_LAST)) + [0], prefix="regression-")


if __name__ == "__main__":
    groups = {"ops": ops_seeds, "transforms": transform_seeds,
              "custom_function": custom_function_seeds, "nn": nn_seeds,
              "regressions": regressions}
    for group in sys.argv[1:] or list(groups):
        groups[group]()
