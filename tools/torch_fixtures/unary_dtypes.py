"""torch 1.13's unary ops (neg ... round of ops/unary.h) on the eight dtypes beyond float32,
float64, int64 and bool, for ops/unary_test.cc.

For each op and dtype torch computes: <op>.<dtype>.x.npy (the input) and <op>.<dtype>.y.npy
(torch's result). ft's .npy loader reads float64, int64 and bool, so every value is stored
as float64, which holds each float16, bfloat16, float32 and narrow integer value exactly; a
complex array is stored as [..., 2] (real, imaginary). Where torch 1.13 has no float16 kernel
(exp, sqrt, floor, ...: "not implemented for 'Half'"), the result is torch's float32 function
of the float16 input rounded once to float16 (what its bfloat16 kernels do, and what ft
does): those files are <op>.float16_via_float32.y.npy.

Integer inputs of the floating functions give float32 (torch's default dtype, restored
here from common.py's float64).

Checks before saving (the script fails on a mismatch):
- complex results against NumPy in complex128 (independent of torch's kernels): the error
  relative to |result| within a few ulp of the dtype;
- bfloat16 results against torch's float32 function rounded once to bfloat16: the number of
  elements that differ (by one bfloat16 ulp at most) is printed.
"""
import numpy as np
import torch

from common import save

OPS = ["neg", "abs", "sign", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh",
       "sigmoid", "relu", "sqrt", "rsqrt", "square", "reciprocal", "floor", "round"]
POSITIVE = {"log", "log1p", "sqrt", "rsqrt"}

INTS = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "uint8": torch.uint8}
HALVES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
COMPLEX = {"complex64": torch.complex64, "complex128": torch.complex128}

NUMPY_COMPLEX = {
    "neg": lambda z: -z,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
    "sqrt": np.sqrt,
    "rsqrt": lambda z: 1 / np.sqrt(z),
    "square": lambda z: z * z,
    "reciprocal": lambda z: 1 / z,
}


def torch_op(op, x):
    return getattr(torch, op)(x)


def stored(t):
    """A tensor as float64 (complex as [..., 2])."""
    if t.is_complex():
        return torch.view_as_real(t.to(torch.complex128)).numpy()
    return t.to(torch.float64).numpy()


def half_inputs(op, seed):
    g = torch.Generator().manual_seed(seed)
    if op in POSITIVE:
        random = torch.rand(300, generator=g, dtype=torch.float64) * 20
        specials = [0.0, 1.0, 1e-3, 1e4, 60000.0, float("inf"), float("nan"), -1.0]
    else:
        random = (torch.rand(300, generator=g, dtype=torch.float64) - 0.5) * 24
        specials = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 1e4, -1e4, 60000.0,
                    float("inf"), float("-inf"), float("nan"), 1.5707963, -1.5707963]
    return torch.cat([torch.tensor(specials, dtype=torch.float64), random])


def complex_inputs(op, seed):
    g = torch.Generator().manual_seed(seed)
    re = (torch.rand(200, generator=g, dtype=torch.float64) - 0.5) * 6
    im = (torch.rand(200, generator=g, dtype=torch.float64) - 0.5) * 6
    chosen = [1, -1, 1j, -1j, 2 + 0j, -2 + 0j, -2 - 0j, 0.5j, 0.25 - 0.75j, 1e-3 + 1e-3j,
              10 + 3j, -10 - 3j]
    z = torch.complex(re, im)
    return torch.cat([torch.tensor(chosen, dtype=torch.complex128), z])


def int_inputs(name, dtype, seed):
    info = torch.iinfo(dtype)
    if info.bits == 8:
        return torch.arange(info.min, info.max + 1, dtype=torch.int64).to(dtype)
    g = torch.Generator().manual_seed(seed)
    random = torch.randint(info.min, info.max, (300,), generator=g, dtype=torch.int64)
    edges = [info.min, info.min + 1, -1, 0, 1, 2, info.max - 1, info.max, 181, -181, 46341]
    return torch.cat([torch.tensor(edges, dtype=torch.int64), random]).to(dtype)


def check_complex(op, x, y, name):
    if op not in NUMPY_COMPLEX:
        return
    ref = NUMPY_COMPLEX[op](x.to(torch.complex128).numpy())
    got = y.to(torch.complex128 if y.is_complex() else torch.float64).numpy()
    eps = np.finfo(np.float32 if name == "complex64" else np.float64).eps
    err = np.abs(got - ref) / np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    worst = float(np.max(err))
    if not worst <= 8 * eps:
        bad = int(np.argmax(err))
        raise SystemExit(f"{op} {name}: torch differs from numpy by {worst / eps:.1f} ulp at "
                         f"{x[bad].item()}: torch {got[bad]}, numpy {ref[bad]}")
    print(f"{op} {name}: torch within {worst / eps:.2f} ulp of numpy")


def main():
    torch.set_default_dtype(torch.float32)  # integer inputs compute in float32, as in torch
    for i, op in enumerate(OPS):
        for name, dtype in HALVES.items():
            x = half_inputs(op, 100 + i).to(dtype)
            via_float32 = torch_op(op, x.float()).to(dtype)
            try:
                y = torch_op(op, x)
            except RuntimeError as e:
                print(f"{op} {name}: torch refuses ({str(e)[:50]}); saving float32 rounded once")
                save(f"{op}.{name}_via_float32", x=stored(x), y=stored(via_float32))
                continue
            diff = ~((y == via_float32) | (y.isnan() & via_float32.isnan()))
            if diff.any():
                print(f"{op} {name}: {int(diff.sum())} of {x.numel()} differ from float32 "
                      f"rounded once: {x[diff][:4].tolist()}")
            save(f"{op}.{name}", x=stored(x), y=stored(y))
        for name, dtype in COMPLEX.items():
            x = complex_inputs(op, 200 + i).to(dtype)
            try:
                y = torch_op(op, x)
            except RuntimeError as e:
                print(f"{op} {name}: torch refuses ({str(e)[:60]})")
                continue
            check_complex(op, x, y, name)
            save(f"{op}.{name}", x=stored(x), y=stored(y))
        for name, dtype in INTS.items():
            x = int_inputs(name, dtype, 300 + i)
            if op in POSITIVE and dtype != torch.uint8:
                x = x.abs()  # (int8's -128 stays: log of it is nan in both)
            y = torch_op(op, x)
            save(f"{op}.{name}", x=stored(x), y=stored(y))


main()
