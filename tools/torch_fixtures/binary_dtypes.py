"""torch 1.13's binary ops (ops/binary.h) on the dtypes beyond float32, float64, int64 and
bool, for ops/binary_test.cc: add, sub, mul, div, maximum, minimum, the comparisons, the
logical ops, where, clamp, the in-place add_/sub_/mul_/div_ and the forms with a Python
scalar, on every new dtype and on mixed pairs (promotion).

Each case is <op>.<dtype of a>.<dtype of b> (b is a Python scalar's kind for the scalar
forms, "bounds" for clamp) with files a, b and out. ft's .npy loader reads float64, int64
and bool only, so values are stored as float64 (exact for every value of float16, bfloat16,
int8..int32, uint8 and float32) and complex values as [..., 2] float64 arrays (real, imag).

torch adds and subtracts complex values as a + alpha * b with alpha = +-1 (a complex
product), so an infinite part of b makes the other part NaN; the oracle does the same.
Every torch result is first checked against an oracle written here without torch: Python
integers wrapped to the width, numpy float32 arithmetic rounded once to float16 (numpy) or
bfloat16 (a bit-level round to nearest even, below), and complex products and quotients by
torch's vectorized formulas in numpy ((ac-bd) + (ad+bc)i; ((ac+bd) + (bc-ad)i) / (c*c+d*d)).
Arrays are 64 long, a multiple of every vector width, so torch takes its vectorized path for
whole arrays: its scalar tail rounds complex products differently (see the C++ test).
"""
import numpy as np
import torch

import common


# ft's default dtype (common.py sets float64 for the other families): integer division and
# integer tensors with float scalars give float32.
torch.set_default_dtype(torch.float32)
N = 64
INTS = {torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.uint8: 8, torch.int64: 64}
SIGNED = {torch.int8: True, torch.int16: True, torch.int32: True, torch.uint8: False,
          torch.int64: True}
NEW = [torch.complex64, torch.complex128, torch.bfloat16, torch.float16, torch.int8,
       torch.int16, torch.int32, torch.uint8]
MIXED = [(torch.int8, torch.uint8), (torch.uint8, torch.int8), (torch.int8, torch.int32),
         (torch.int16, torch.float16), (torch.float16, torch.bfloat16),
         (torch.bfloat16, torch.float32), (torch.int32, torch.float16),
         (torch.float16, torch.float64), (torch.complex64, torch.float64),
         (torch.complex64, torch.int8), (torch.bfloat16, torch.complex64),
         (torch.uint8, torch.bool), (torch.int8, torch.int64), (torch.float16, torch.complex128),
         (torch.int32, torch.complex64), (torch.uint8, torch.float32)]


# ft's DType enum order (tensor/dtype.h): out.npy's dtype is saved as its index here.
FT_ORDER = [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64,
            torch.complex128, torch.bfloat16, torch.float16, torch.int8, torch.int16,
            torch.int32, torch.uint8]


def save(case, a, b, out):
    common.save(case, a=a, b=b, out=stored(out), dtype=np.array(FT_ORDER.index(out.dtype)))


def name(dtype):
    return str(dtype).replace("torch.", "")


# ---- Inputs ----
def values(dtype, seed):
    g = np.random.default_rng(seed)
    if dtype in INTS:
        bits = INTS[dtype]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if SIGNED[dtype] else (0, 255)
        v = list(g.integers(lo, hi, size=N - 8, endpoint=True)) + [lo, hi, 0, 1, -1 % (hi + 1)
                                                                   if not SIGNED[dtype] else -1,
                                                                   2, lo + 1, hi - 1]
        return torch.tensor([int(x) for x in v], dtype=torch.int64).to(dtype)
    if dtype == torch.bool:
        return torch.tensor(g.integers(0, 1, size=N, endpoint=True).astype(bool))
    scale = {torch.float16: 300.0, torch.bfloat16: 1e20, torch.float32: 1e3,
             torch.float64: 1e3, torch.complex64: 1e20, torch.complex128: 1e160}[dtype]
    mag = g.standard_normal(N) * np.where(g.random(N) < 0.2, scale, 3.0)
    special = [np.inf, -np.inf, np.nan, 0.0, 1e-7, -2.5, 65504.0, 1.0]
    mag[:len(special)] = special
    if dtype.is_complex:
        im = g.standard_normal(N) * np.where(g.random(N) < 0.2, scale, 3.0)
        im[8:12] = [np.nan, np.inf, 0.0, -0.0]
        return torch.complex(torch.tensor(mag), torch.tensor(im)).to(dtype)
    return torch.tensor(mag).to(dtype)


def stored(t):
    """A tensor as the float64 (or [..., 2] for complex) array saved."""
    if t.is_complex():
        return torch.view_as_real(t.to(torch.complex128)).numpy()
    if t.dtype in (torch.bool, torch.int64):
        return t.numpy()  # int64 stays int64 (float64 would round it)
    return t.to(torch.float64).numpy()


# ---- The independent oracle (no torch) ----
def bf16_round(x32):
    """float32 -> bfloat16 (round to nearest even; NaN stays NaN), returned as float32."""
    x32 = np.asarray(x32, dtype=np.float32)
    w = x32.view(np.uint32).astype(np.uint64)
    r = ((w + 0x7FFF + ((w >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x32), np.float32(np.nan), out)


def wrap(v, dtype):
    bits = INTS[dtype]
    v = int(v) % (1 << bits)
    if SIGNED[dtype] and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


class Vals:
    """Values of one dtype as the oracle computes with them: a list of Python ints (integer
    dtypes and bool), a float32/float64 array (16-bit floats are exact in float32) or a
    complex64/complex128 array."""

    def __init__(self, kind, dtype, v):
        self.kind, self.dtype, self.v = kind, dtype, v


def mkc(re, im, dtype=np.complex128):
    """A complex array from its parts (1j * inf would give a NaN real part)."""
    z = np.empty(np.shape(re), dtype=dtype)
    z.real, z.imag = re, im
    return z


def to_vals(a_np, dtype):
    """Stored values (float64 or [..., 2]) converted to `dtype` as torch's casts do."""
    if a_np.dtype == np.int64 and (dtype in INTS or dtype == torch.bool):
        return Vals("i", dtype, [wrap(int(x), dtype) if dtype in INTS else int(x != 0)
                                 for x in a_np])
    if a_np.ndim == 2:
        z = mkc(a_np[:, 0], a_np[:, 1])
    else:
        z = a_np.astype(np.complex128)
    if dtype.is_complex:
        return Vals("c", dtype, z.astype(np.complex64 if dtype == torch.complex64
                                        else np.complex128))
    re = z.real
    if dtype == torch.bool:
        return Vals("i", dtype, [int(x != 0) for x in z])
    if dtype in INTS:
        assert np.all(np.isfinite(re)) and np.all(re == np.trunc(re))
        return Vals("i", dtype, [wrap(int(x), dtype) for x in re])
    if dtype == torch.float64:
        return Vals("f", dtype, re.astype(np.float64))
    f32 = re.astype(np.float32)
    if dtype == torch.float16:
        return Vals("f", dtype, f32.astype(np.float16).astype(np.float32))
    if dtype == torch.bfloat16:
        return Vals("f", dtype, bf16_round(f32))
    return Vals("f", dtype, f32)


def round_to(x, dtype):
    if dtype == torch.float16:
        return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)
    if dtype == torch.bfloat16:
        return bf16_round(x)
    return x


def oracle(op, a, b, compute):
    """op over Vals a and b already converted to `compute`; returns a float64 / bool / complex
    array of the result values."""
    with np.errstate(all="ignore"):
        if op in ("eq", "ne", "lt", "le", "gt", "ge"):
            x, y = (np.array(a.v, dtype=object), np.array(b.v, dtype=object)) \
                if a.kind == "i" else (a.v, b.v)
            r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                 "ge": x >= y}[op]
            return np.asarray(r, dtype=bool)
        if op in ("logical_and", "logical_or"):
            x, y = np.asarray(a.v) != 0, np.asarray(b.v) != 0
            return np.logical_and(x, y) if op == "logical_and" else np.logical_or(x, y)
        if a.kind == "i":
            if compute == torch.bool:
                f = {"add": lambda p, q: p | q, "mul": lambda p, q: p & q,
                     "maximum": max, "minimum": min}[op]
                return np.array([f(p, q) for p, q in zip(a.v, b.v)], dtype=bool)
            f = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q,
                 "mul": lambda p, q: p * q, "maximum": max, "minimum": min}[op]
            return np.array([wrap(f(p, q), compute) for p, q in zip(a.v, b.v)], dtype=object)
        if a.kind == "c":
            x, y = a.v, b.v
            p, q, c, d = x.real, x.imag, y.real, y.imag
            if op in ("add", "sub"):  # torch's a + alpha * b, alpha = 1 or -1 (complex)
                al = 1.0 if op == "add" else -1.0
                return mkc(p + (al * c - 0.0 * d), q + (al * d + 0.0 * c), x.dtype)
            if op == "mul":
                return mkc(p * c - q * d, p * d + q * c, x.dtype)
            if op == "div":
                den = c * c + d * d
                return mkc((p * c + q * d) / den, (q * c - p * d) / den, x.dtype)
            raise ValueError(op)
        x, y = a.v, b.v
        if op == "maximum":
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, np.maximum(x, y))
        elif op == "minimum":
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, np.minimum(x, y))
        else:
            r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y}[op]
        return round_to(r, compute).astype(np.float64)


CASE = ""


def same(torch_out, want):
    got = stored(torch_out)
    if got.ndim == 2:
        want = np.stack([np.real(want), np.imag(want)], axis=-1).astype(np.float64)
    want = np.asarray(want, dtype=got.dtype)
    both_nan = np.isnan(got) & np.isnan(want) if got.dtype == np.float64 else False
    ok = (got == want) | both_nan
    if not np.all(ok):
        bad = np.argwhere(~ok)[:3]
        raise AssertionError(f"{CASE}: {bad.T}: torch {got[tuple(bad.T)]!r} oracle {want[tuple(bad.T)]!r}")


# ---- Cases ----
TORCH_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
             "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq,
             "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
             "logical_and": torch.logical_and, "logical_or": torch.logical_or}
ORDERED = {"maximum", "minimum", "lt", "le", "gt", "ge"}


def supported(op, compute):
    if compute.is_complex and op in ORDERED:
        return False
    if compute == torch.bool and op == "sub":
        return False
    return True


def compute_dtype(op, ta, tb):
    c = torch.result_type(ta, tb)
    if op == "div" and not (c.is_floating_point or c.is_complex):
        c = torch.float32
    return c


def binary_case(op, da, db, seed):
    ta, tb = values(da, seed), values(db, seed + 1)
    c = compute_dtype(op, ta, tb)
    if not supported(op, c) or (da == torch.bool and op == "sub") or (
            db == torch.bool and op == "sub"):
        return
    global CASE
    CASE = f"{op}.{name(da)}.{name(db)}"
    out = TORCH_OPS[op](ta, tb)
    want = oracle(op, to_vals(stored(ta), c), to_vals(stored(tb), c), c)
    same(out, want)
    save(f"{op}.{name(da)}.{name(db)}", a=stored(ta), b=stored(tb), out=out)


def scalar_case(op, da, scalar, seed):
    """tensor op Python scalar (torch wraps the scalar; ft: ops/binary.h's Scalar forms)."""
    ta = values(da, seed)
    kind = {bool: "bool", int: "int", float: "float", complex: "complex"}[type(scalar)]
    c = torch.result_type(ta, scalar)
    if op == "div" and not (c.is_floating_point or c.is_complex):
        c = torch.float32
    if not supported(op, c) or (op == "sub" and (da == torch.bool or kind == "bool")):
        return
    if c == torch.complex32:
        return  # float16 with a complex scalar: ft has no complex32 (tensor/dtype.h)
    global CASE
    CASE = f"{op}_scalar.{name(da)}.{kind}"
    out = TORCH_OPS[op](ta, scalar)
    sv = np.array([complex(scalar).real, complex(scalar).imag]) if kind == "complex" \
        else np.array(float(scalar))
    b_vals = to_vals(np.tile(sv, (N, 1)) if kind == "complex" else np.full(N, sv), c)
    want = oracle(op, to_vals(stored(ta), c), b_vals, c)
    same(out, want)
    save(f"{op}_scalar.{name(da)}.{kind}", a=stored(ta), b=sv, out=out)


def inplace_case(op, da, db, seed):
    ta, tb = values(da, seed), values(db, seed + 1)
    if not torch.can_cast(compute_dtype(op, ta, tb), da):
        return
    if op == "sub" and torch.bool in (da, db):
        return
    if op == "div" and not (da.is_floating_point or da.is_complex):
        return
    global CASE
    CASE = f"{op}_.{name(da)}.{name(db)}"
    out = getattr(ta.clone(), op + "_")(tb)
    c = compute_dtype(op, ta, tb)
    want = oracle(op, to_vals(stored(ta), c), to_vals(stored(tb), c), c)
    if c != da:  # computed in a wider dtype of the same category, then cast to self's
        w = np.asarray(want)
        if np.iscomplexobj(w):
            w = np.stack([w.real, w.imag], axis=-1).astype(np.float64)
        w = w.astype(np.int64) if w.dtype == object else w.astype(np.float64)
        want = to_vals(w, da).v
    same(out, want)
    save(f"{op}_.{name(da)}.{name(db)}", a=stored(ta), b=stored(tb), out=out)


def where_case(da, db, seed):
    ta, tb = values(da, seed), values(db, seed + 1)
    cond = torch.arange(N) % 3 == 0
    out = torch.where(cond, ta, tb)
    c = torch.result_type(ta, tb)
    x, y = to_vals(stored(ta), c).v, to_vals(stored(tb), c).v
    same(out, np.where(cond.numpy(), np.asarray(x), np.asarray(y)))
    save(f"where.{name(da)}.{name(db)}", a=stored(ta), b=stored(tb), out=out)


def clamp_case(da, lo, hi, seed):
    ta = values(da, seed)
    out = torch.clamp(ta, lo, hi)
    c = out.dtype
    x = to_vals(stored(ta), c)
    lo_c, hi_c = (to_vals(np.array([float(v)]), c).v[0] for v in (lo, hi))
    if x.kind == "i":
        want = np.array([min(max(v, lo_c), hi_c) for v in x.v], dtype=object)
    else:
        with np.errstate(invalid="ignore"):
            want = np.where(np.isnan(x.v), np.nan, np.minimum(np.maximum(x.v, lo_c), hi_c))
    same(out, want)
    kind = "int" if isinstance(lo, int) else "float"
    save(f"clamp.{name(da)}.{kind}", a=stored(ta), b=np.array([float(lo), float(hi)]),
         out=out)


def main():
    seed = 1
    pairs = [(d, d) for d in NEW] + MIXED
    for op in TORCH_OPS:
        for da, db in pairs:
            seed += 2
            binary_case(op, da, db, seed)
    for op in ("add", "sub", "mul", "div", "eq", "lt"):
        for da in NEW:
            for s in (True, 7, 300, -3, 0.1, 2.5e10, 1.5 - 2j):
                seed += 2
                scalar_case(op, da, s, seed)
    for op in ("add", "sub", "mul", "div"):
        for da, db in pairs + [(torch.int8, torch.int16), (torch.float16, torch.float32),
                               (torch.complex64, torch.complex128)]:
            seed += 2
            inplace_case(op, da, db, seed)
    for da, db in pairs:
        seed += 2
        where_case(da, db, seed)
    for da in [torch.bfloat16, torch.int8, torch.int16, torch.int32, torch.uint8]:
        seed += 2
        clamp_case(da, -5, 100, seed)
        if da == torch.bfloat16:
            clamp_case(da, -0.1, 2.7, seed)


if __name__ == "__main__":
    main()
