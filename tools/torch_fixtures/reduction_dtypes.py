"""torch 1.13's reductions over the dtypes issue 43 added (int8, int16, int32, uint8,
float16, bfloat16, complex64, complex128; bool and int64 beside them), for
ops/reduction_test.cc: sum, mean, prod, amax, amin, argmax, argmin, cumsum, cumprod and
logsumexp, over dim subsets with and without keepdim, empty tensors, NaN and infinities, and
sums long enough that float16 would lose them without float32 accumulation.

ft's .npy loader reads float64, int64 and bool, so every value is stored as float64 (exact
for every value of float16, bfloat16, float32 and the integers up to int32) or int64, and a
complex tensor as a float64 array [..., 2] of (real, imaginary). index.npy has one row per
case: [op, input dtype, output dtype (ft's DType enum order), arg, keepdim]; arg is a mask of
the reduced dims (sum, mean, prod, amax, amin, logsumexp: 0 means every dim), or the dim of
argmax / argmin / cumsum / cumprod (-1: argmax over the flattened tensor). Files c<i>.x.npy
and c<i>.out.npy hold case i's input and torch's output.

Each of torch's results is checked here against an independent computation before it is
saved: integers by Python's exact integer arithmetic wrapped to int64, floating sums by
math.fsum in float64 rounded once, extremes and their indices by plain Python, scans by
running sums in Python integers / float64 / complex128. torch 1.13's float16 / bfloat16
sum over non-adjacent dims rounds to the dtype between steps, and its mean rounds twice (the
sum, then the quotient), where ft rounds once: for those cases c<i>.once.npy holds math.fsum
(over n, for mean) rounded once (through float32, as ft's float32 accumulator is), and the
test checks ft against it and against torch within a few units in the last place. torch
1.13 has no float16 / bfloat16 prod, no float16 cumsum / cumprod and no bool argmax; ft's
(computed in float32, rounded once) are checked by kernels/reduction_test.cc alone.
"""
import math

import numpy as np
import torch

from common import save

# ft's default floating dtype (logsumexp of integers), not common.py's float64.
torch.set_default_dtype(torch.float32)

OPS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod",
       "logsumexp"]
FT_ORDER = [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64,
            torch.complex128, torch.bfloat16, torch.float16, torch.int8, torch.int16,
            torch.int32, torch.uint8]
INTS = [torch.int8, torch.int16, torch.int32, torch.uint8]
HALVES = [torch.float16, torch.bfloat16]
COMPLEX = [torch.complex64, torch.complex128]
INFO = {torch.int8: (-128, 127), torch.int16: (-32768, 32767),
        torch.int32: (-2**31, 2**31 - 1), torch.uint8: (0, 255), torch.int64: (-2**40, 2**40),
        torch.bool: (0, 1)}

rng = np.random.default_rng(43)
index = []
WORST = [0.0]  # the largest distance of torch's float16 / bfloat16 sum or mean from once-rounded


def wrap64(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def make(dtype, shape, kind="plain"):
    """A tensor of dtype with random values (kind: 'plain', 'small' ints, 'special' with
    NaN and infinities, 'ties' with repeated extremes)."""
    n = int(np.prod(shape))
    if dtype in INFO:
        lo, hi = INFO[dtype]
        if kind == "small":
            lo, hi = max(lo, -3), min(hi, 3)
        v = rng.integers(lo, hi + 1, size=n)
        if kind == "ties" and n > 4:
            v[1] = v[n - 2] = hi
            v[2] = v[n - 3] = lo
        return torch.tensor(v.reshape(shape)).to(dtype)
    if dtype in COMPLEX:
        re = rng.uniform(-2, 2, size=n)
        im = rng.uniform(-2, 2, size=n)
        if kind == "small":
            re, im = rng.uniform(0.8, 1.2, size=n), rng.uniform(-0.3, 0.3, size=n)
        return torch.complex(torch.tensor(re), torch.tensor(im)).reshape(shape).to(dtype)
    v = rng.uniform(-4, 4, size=n)
    if kind == "small":
        v = rng.uniform(0.8, 1.25, size=n)
    if kind == "special" and n >= 8:
        v[1], v[3], v[n - 2] = np.inf, -np.inf, np.nan
        v[5] = np.nan
    if kind == "ties" and n > 4:
        v = np.round(v)
    return torch.tensor(v.reshape(shape)).to(dtype)


def stored(t):
    """t as the arrays ft's loader reads."""
    if t.dtype in COMPLEX:
        return torch.view_as_real(t.to(torch.complex128)).numpy()
    if t.dtype == torch.bool:
        return t.numpy()
    if t.dtype.is_floating_point:
        return t.to(torch.float64).numpy()
    return t.to(torch.int64).numpy()


def groups(x, dims):
    """x's values (Python numbers, row-major) grouped by the output they reduce into, in
    output order: the oracle's view of a reduction over `dims`."""
    shape = list(x.shape)
    kept = [d for d in range(len(shape)) if d not in dims]
    perm = kept + list(dims)
    y = x.permute(perm) if shape else x
    kept_n = int(np.prod([shape[d] for d in kept])) if kept else 1
    red_n = int(np.prod([shape[d] for d in dims])) if dims else 1
    vals = y.reshape(kept_n, red_n)
    if x.dtype in COMPLEX:
        return [[complex(v) for v in row] for row in vals.to(torch.complex128).tolist()]
    if x.dtype.is_floating_point:
        return vals.to(torch.float64).tolist()
    return [[int(v) for v in row] for row in vals.to(torch.int64).tolist()]


def round_to(values, dtype, shape):
    return torch.tensor(values, dtype=torch.float64).to(dtype).reshape(shape)


def check_reduction(op, x, dims, out):
    """out (torch's) against an independent computation; returns the once-rounded mean of
    float16 / bfloat16 (None otherwise)."""
    g = groups(x, dims)
    flat = out.reshape(-1)
    assert flat.numel() == len(g), (op, x.shape, dims)
    dt = x.dtype
    if op in ("sum", "prod") and not (dt.is_floating_point or dt.is_complex):
        want = [wrap64(sum(r)) if op == "sum" else wrap64(math.prod(r)) for r in g]
        assert flat.tolist() == want, (op, dt, dims)
    elif op in ("sum", "mean") and dt in HALVES:
        n = len(g[0]) if g else 0
        exact = [math.fsum(r) / n if op == "mean" and n else math.nan if op == "mean"
                 else math.fsum(r) for r in g]
        once = round_to(exact, torch.float32, [-1]).to(dt)
        # torch 1.13 rounds a float16 / bfloat16 sum to the dtype between the steps of a
        # reduction over non-adjacent dims, and a mean twice (its sum, then the quotient), so
        # its results may be a few units in the last place from the once-rounded value.
        finite = ~once.isnan()
        assert torch.equal(flat.isnan(), ~finite), (op, dt, dims)
        ulps = ((flat.double() - once.double()).abs() / ulp(once))[finite]
        WORST[0] = max(WORST[0], float(ulps.max()) if ulps.numel() else 0.0)
        assert bool((ulps <= 4).all()), (op, dt, dims, ulps.max())
        return once.reshape(out.shape)
    elif op == "sum":  # complex
        want = [complex(math.fsum(v.real for v in r), math.fsum(v.imag for v in r)) for r in g]
        scale = [sum(abs(v) for v in r) + 1e-30 for r in g]
        eps = 1e-6 if dt == torch.complex64 else 1e-15
        for got, w, s in zip(flat.to(torch.complex128).tolist(), want, scale):
            assert abs(got - w) <= eps * s, (op, dt, got, w)
    elif op == "mean":  # complex
        n = len(g[0]) if g else 0
        want = [complex(math.fsum(v.real for v in r) / n, math.fsum(v.imag for v in r) / n)
                if n else complex(math.nan, math.nan) for r in g]
        eps = 1e-6 if dt == torch.complex64 else 1e-15
        for got, w, r in zip(flat.to(torch.complex128).tolist(), want, g):
            if n == 0:
                assert math.isnan(got.real) and math.isnan(got.imag)
            else:
                assert abs(got - w) <= eps * (sum(abs(v) for v in r) / n + 1e-30), (got, w)
    elif op == "prod":  # complex: in order, in complex128
        for got, r in zip(flat.to(torch.complex128).tolist(), g):
            w = complex(1)
            for v in r:
                w *= v
            assert abs(got - w) <= 1e-5 * max(abs(w), 1e-30), (got, w)
    elif op in ("amax", "amin"):
        for got, r in zip(flat.tolist(), g):
            if dt.is_floating_point and any(math.isnan(v) for v in r):
                assert math.isnan(got)
            else:
                assert got == (max(r) if op == "amax" else min(r)), (op, got)
    elif op == "logsumexp":
        for got, r in zip(flat.tolist(), g):
            m = max(r) if r else -math.inf
            w = m + math.log(math.fsum(math.exp(v - m) for v in r)) if r else -math.inf
            assert abs(got - w) <= 1e-6 * max(1.0, abs(w)), (got, w)
    else:
        raise AssertionError(op)
    return None


def ulp(t):
    """The spacing of t's dtype at each value of t (as float64)."""
    info = torch.finfo(t.dtype)
    a = t.double().abs().clamp(min=info.tiny)
    return torch.pow(2.0, torch.floor(torch.log2(a))) * info.eps


def check_arg(op, x, dim, out):
    xs = x.reshape(-1) if dim is None else x.movedim(dim, -1).reshape(-1, x.shape[dim])
    rows = [xs.tolist()] if dim is None else xs.tolist()
    got = out.reshape(-1).tolist()
    for r, i in zip(rows, got):
        vals = [float(v) for v in r]
        nans = [k for k, v in enumerate(vals) if math.isnan(v)]
        if nans:
            assert i == nans[0]
        else:
            best = max(vals) if op == "argmax" else min(vals)
            assert i == vals.index(best), (op, vals, i)


def check_scan(op, x, dim, out):
    xs = x.movedim(dim, -1).reshape(-1, x.shape[dim]) if x.dim() else x.reshape(1, 1)
    ys = out.movedim(dim, -1).reshape(-1, x.shape[dim]) if x.dim() else out.reshape(1, 1)
    dt = x.dtype
    for r, y in zip(xs.tolist(), ys.tolist()):
        if dt.is_complex:
            acc, want = None, []
            for v in r:  # complex128 running value, as torch's acc_type
                acc = complex(v) if acc is None else (acc + v if op == "cumsum" else acc * v)
                want.append(acc)
            w = torch.tensor(want, dtype=torch.complex128).to(dt).to(torch.complex128).tolist()
            for a, b in zip(y, w):
                assert abs(complex(a) - b) <= 1e-12 * max(abs(b), 1e-30), (op, a, b)
        elif dt.is_floating_point:  # bfloat16: a float32 running value, rounded per output
            acc, want = None, []
            for v in r:
                acc = np.float32(v) if acc is None else (
                    np.float32(acc + np.float32(v)) if op == "cumsum"
                    else np.float32(acc * np.float32(v)))
                want.append(float(acc))
            assert torch.equal(torch.tensor(y, dtype=torch.float64).to(dt),
                               torch.tensor(want, dtype=torch.float64).to(dt)), (op, r)
        else:
            acc, want = 0 if op == "cumsum" else 1, []
            for v in r:
                acc = wrap64(acc + int(v) if op == "cumsum" else acc * int(v))
                want.append(acc)
            assert [int(v) for v in y] == want, (op, y, want)


def add(op, x, arg, keepdim, out, once=None):
    i = len(index)
    index.append([OPS.index(op), FT_ORDER.index(x.dtype), FT_ORDER.index(out.dtype), arg,
                  int(keepdim)])
    arrays = {"x": stored(x), "out": stored(out)}
    if once is not None:
        arrays["once"] = stored(once)
    save(f"c{i}", **arrays)


def reduction(op, x, dims, keepdim):
    """Case: op over dims (() = every dim) with keepdim, checked, then saved."""
    d = dims if dims else tuple(range(x.dim()))
    if op == "prod":
        if dims:
            out = x
            for k in sorted(d, reverse=True):  # torch's prod takes one dim at a time
                out = torch.prod(out, k, keepdim=keepdim)
        else:
            out = torch.prod(x)
    else:
        fn = {"sum": torch.sum, "mean": torch.mean, "amax": torch.amax, "amin": torch.amin,
              "logsumexp": torch.logsumexp}[op]
        out = fn(x, d, keepdim=keepdim)
    once = check_reduction(op, x, list(d), out)
    add(op, x, sum(1 << k for k in dims), keepdim, out, once)


def main():
    shape = (3, 4, 5)
    dim_sets = [(), (0,), (1,), (2,), (0, 2), (1, 2)]
    for dt in INTS + [torch.int64, torch.bool]:
        for dims in dim_sets:
            for keepdim in (False, True):
                reduction("sum", make(dt, shape), dims, keepdim)
        for dims in [(), (1,), (0, 2)]:
            reduction("prod", make(dt, shape, "small"), dims, False)
        reduction("prod", make(dt, shape), (), False)  # wraps for every integer dtype
    for dt in HALVES + COMPLEX:
        for dims in dim_sets:
            for keepdim in (False, True):
                reduction("sum", make(dt, shape), dims, keepdim)
                reduction("mean", make(dt, shape), dims, keepdim)
        # Long sums: float16 accumulation would stop at 2048 + ...; float32 does not.
        reduction("sum", make(dt, (2, 3000)), (1,), False)
        reduction("sum", make(dt, (3000, 3)), (0,), True)
        reduction("mean", make(dt, (2, 1000)), (1,), False)
        reduction("sum", torch.ones(5000, dtype=dt), (), False)
        reduction("sum", make(dt, (0, 3)), (0,), False)
        reduction("mean", make(dt, (0, 3)), (0,), False)
    for dt in COMPLEX:
        for dims in [(), (1,), (0, 2)]:
            reduction("prod", make(dt, shape, "small"), dims, False)
    for dt in INTS + HALVES:
        for op in ("amax", "amin"):
            for dims in dim_sets:
                reduction(op, make(dt, shape, "ties"), dims, dims == (1,))
            if dt in HALVES:
                reduction(op, make(dt, shape, "special"), (2,), False)
                reduction(op, make(dt, shape, "special"), (), False)
        for op in ("argmax", "argmin"):
            for dim in (None, 0, 1, 2):
                for kind in ("ties", "special") if dt in HALVES else ("ties",):
                    x = make(dt, shape, kind)
                    out = getattr(torch, op)(x, dim, keepdim=dim == 1)
                    check_arg(op, x, dim, out)
                    add(op, x, -1 if dim is None else dim, dim == 1, out)
    for dt in INTS:
        for dims in [(), (1,), (0, 2)]:
            reduction("logsumexp", make(dt, shape, "small"), dims, False)
    for dt in INTS + [torch.bool, torch.bfloat16] + COMPLEX:
        for op in ("cumsum", "cumprod"):
            for dim in (0, 1, 2):
                x = make(dt, shape, "small" if op == "cumprod" else "plain")
                out = getattr(torch, op)(x, dim)
                check_scan(op, x, dim, out)
                add(op, x, dim, False, out)
        x = make(dt, (40, 3), "plain")  # int8..int32 cumprod wraps int64
        out = torch.cumprod(x, 0)
        check_scan("cumprod", x, 0, out)
        add("cumprod", x, 0, False, out)
    save("index", index=np.array(index, dtype=np.int64))
    print(f"reduction_dtypes: {len(index)} cases; torch's float16 / bfloat16 sums and means "
          f"are within {WORST[0]:g} units in the last place of the once-rounded values")


if __name__ == "__main__":
    main()
