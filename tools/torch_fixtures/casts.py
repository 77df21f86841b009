"""torch's casting copy (src.to(dst)) over every ordered pair of the twelve dtypes, for
tensor/cast_test.cc.

For each source dtype S, chosen values that probe conversions: signed zeros, ones,
fractions on both sides of every rounding rule (truncation toward zero, ties to even), NaNs
of both signs, infinities, the values at and just past the limits of every integer dtype,
the edges of float16's and bfloat16's range, subnormals of every floating format, and for
complex sources parts that are zero, nonzero and NaN. A value is built in float64 (or as a
Python int for the integer dtypes, which float64 cannot hold past 2^53) and cast into S
by torch, so only values S holds are kept; NaN patterns are written bit by bit.

Storage: ft's .npy loader reads float64, int64 and bool only, so every element is saved as
its raw bit pattern, [n, 2] int64: column 0 the little-endian bits zero-extended into
int64 (a complex number's real part), column 1 a complex number's imaginary part, else 0.
casts.<S>.npy holds S's values, casts.<S>.to.<D>.npy torch's result for each.

torch 1.13's float -> integer results out of the integer's range are undefined behavior in
C++ and depend on the code path, so each result is taken from four paths: the whole set
as one contiguous tensor, as a strided (non-contiguous) one, each value alone (torch's
scalar loop) and each value repeated 64 times (its vectorized loop). A value whose paths
disagree for any D is left out of S's values (so the files keep one layout and the test
needs no exceptions), and the script prints it. On torch 1.13 (x86-64, at every
ATEN_CPU_CAPABILITY: default, avx2, avx512) no path disagrees.

Two differences are not disagreements, because the test compares NaN results as "both NaN":
the NaN payloads of floating results, and bfloat16's NaN, which torch's vectorized cast
writes as 0xFFFF and its scalar one as 0x7FC0 (which one a cast takes varies with the
source dtype and the layout). bfloat16 NaN results of a conversion are saved as 0x7FC0, ft's
NaN (dtypes.py, canonical_nans); bfloat16 to bfloat16 converts nothing and keeps the bits.

One column is not torch 1.13's: complex -> bool, where torch 1.13 has a bug since fixed
(complex_to_bool).
"""
import warnings

import numpy as np
import torch

from common import OUT, save  # noqa: F401  (OUT: where save writes)

# ft's DType enum order (tensor/dtype.h) with DTypeName's spellings.
DTYPES = [("float32", torch.float32), ("float64", torch.float64), ("int64", torch.int64),
          ("bool", torch.bool), ("complex64", torch.complex64),
          ("complex128", torch.complex128), ("bfloat16", torch.bfloat16),
          ("float16", torch.float16), ("int8", torch.int8), ("int16", torch.int16),
          ("int32", torch.int32), ("uint8", torch.uint8)]
FLOATING = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32, torch.float64: 64}
INTEGER_BITS = {torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64,
                torch.uint8: 8}
# The integer dtype of each width: floating bits are read through a view of it.
INT_OF_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
VECTOR_REPEAT = 64

# Integers at and just past the limits of every integer dtype, and around the integers that
# float16, bfloat16, float32 and float64 hold exactly (2^11, 2^8, 2^24, 2^53) and their
# ties; 65504 and 65520 (float16's largest finite value and the tie past it).
LIMITS = [127, 128, -128, -129, 255, 256, -255, -256, 32767, 32768, -32768, -32769, 65535,
          65536, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**32 + 5,
          2**63 - 1, -2**63, 257, 259, 2049, 2051, 2**24 + 1, 2**24 + 3, 2**53 + 1,
          2**53 + 3, 2**62, 65504, 65520, 100000]

# float64 values, cast into each floating source: the limits above (rounded by float64
# where it must, 2^63 - 1 becomes 2^63), the largest double below 2^63 and 2^64, fractions
# toward zero and at ties, the range edges of float16, bfloat16 and float32 and past them,
# and subnormals of every format with the values either side of their smallest.
FRACTIONS = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.7, -0.7, 0.99, -0.99, 127.5, 128.5,
             -128.5, -129.5, 255.5, 256.5, -0.25, 1e-10]
RANGE = [1e5, -1e5, 3e38, -3e38, 3.3895313892515355e38, 3.4028234663852886e38, 3.5e38,
         1e39, -1e39, 1e300, 2.0**63 - 1024, 2.0**64, -2.0**64, 65519.0, 65536.0]
SUBNORMALS = [2.0**-24, -2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 2.0**-14 - 2.0**-24,
              2.0**-14, 2.0**-133, -2.0**-133, 2.0**-126 - 2.0**-133, 2.0**-126, 2.0**-149,
              -2.0**-149, 2.0**-150, 2.0**-126 - 2.0**-149, 2.0**-1074, -2.0**-1074,
              2.0**-1022 - 2.0**-1074]
SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, float("inf"), float("-inf")]

# NaN bit patterns of each floating format: quiet of both signs, a quiet one with a payload,
# and for bfloat16 torch's own vectorized NaN, 0xFFFF.
NANS = {torch.float16: [0x7E00, 0xFE00, 0x7E01],
        torch.bfloat16: [0x7FC0, 0xFFC0, 0x7FC1, 0xFFFF],
        torch.float32: [0x7FC00000, 0xFFC00000, 0x7FC00001],
        torch.float64: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001]}

# Complex values (real, imaginary): a zero, nonzero or NaN imaginary part ((0, 1) is true
# as bool), the real parts that probe the real casts, infinities in either part.
COMPLEX = [(0.0, 0.0), (-0.0, -0.0), (0.0, -0.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 2.0),
           (0.5, -0.5), (2.5, 1e5), (1.5, 0.0), (-0.7, 0.7), (-2.5, -3.0), (127.0, 1.0),
           (128.0, 0.0), (-129.0, 0.0), (255.0, -1.0), (256.0, 0.0), (32768.0, 0.0),
           (-32769.0, 0.0), (2.0**31, 0.0), (-2.0**31 - 1, 0.0), (65504.0, 65520.0),
           (3e38, -1.0), (1e39, 0.0), (2.0**-24, 2.0**-25), (2.0**-149, 2.0**-133),
           (2.0**-1074, 0.0), (float("nan"), 0.0), (0.0, float("nan")),
           (float("nan"), float("nan")), (-float("nan"), 1.0), (float("inf"), 0.0),
           (-float("inf"), 1.0), (0.0, float("inf")), (1.0, -float("inf"))]


def element_bits(t):
    """The [n, 2] int64 bit patterns of a 1-D tensor's elements (module docstring)."""
    n = t.numel()
    out = np.zeros((n, 2), dtype=np.int64)
    if t.is_complex():
        parts = torch.view_as_real(t.contiguous())  # [n, 2] of float32 / float64
        ints = parts.view(INT_OF_WIDTH[parts.element_size()]).numpy()
        width = 8 * parts.element_size()
        out[:, :] = ints.astype(np.int64) & ((1 << width) - 1) if width < 64 else ints
        return out
    ints = t.contiguous().view(INT_OF_WIDTH[t.element_size()]).numpy().astype(np.int64)
    width = 8 * t.element_size()
    out[:, 0] = ints & ((1 << width) - 1) if width < 64 else ints
    return out


def from_bits(bits, dtype):
    """The 1-D tensor of `dtype` whose element patterns are bits ([n, 2] int64)."""
    if dtype.is_complex:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        width = 4 if dtype == torch.complex64 else 8
        ints = bits.astype(np.uint64).astype(f"<u{width}").view(f"<i{width}")
        parts = torch.from_numpy(np.ascontiguousarray(ints)).view(real)
        return torch.view_as_complex(parts.contiguous())
    size = torch.empty((), dtype=dtype).element_size()
    ints = bits[:, 0].astype(np.uint64).astype(f"<u{size}").view(f"<i{size}" if size > 1
                                                                  else "<u1")
    t = torch.from_numpy(np.ascontiguousarray(ints))
    return t.view(dtype) if dtype != torch.bool else t.to(torch.bool)


def is_nan_bits(bits, dtype):
    """Which patterns of column(s) `bits` (int64) are NaNs of the floating `dtype`."""
    exp, man = {torch.float16: (0x7C00, 0x03FF), torch.bfloat16: (0x7F80, 0x007F),
                torch.float32: (0x7F800000, 0x007FFFFF),
                torch.float64: (0x7FF0000000000000, 0x000FFFFFFFFFFFFF)}[dtype]
    return ((bits & exp) == exp) & ((bits & man) != 0)


def part_dtype(dtype):
    """The floating format of each column's bits, or None for the non-floating dtypes."""
    if dtype == torch.complex64:
        return torch.float32
    if dtype == torch.complex128:
        return torch.float64
    return dtype if dtype in FLOATING else None


def canonical(bits, dtype):
    """bits with bfloat16 NaNs written as 0x7FC0, ft's NaN (module docstring)."""
    if dtype != torch.bfloat16:
        return bits
    out = bits.copy()
    out[:, 0] = np.where(is_nan_bits(bits[:, 0], dtype), 0x7FC0, bits[:, 0])
    return out


def nan_blind(bits, dtype):
    """bits with every NaN of a floating result (or part) replaced by one marker, for
    comparing paths the way the test compares results."""
    fmt = part_dtype(dtype)
    if fmt is None:
        return bits
    return np.where(is_nan_bits(bits, fmt), -1, bits)


def unique_rows(bits):
    """The rows of bits in first-seen order without repeats (a cast can merge values)."""
    seen, rows = set(), []
    for row in bits.tolist():
        if tuple(row) not in seen:
            seen.add(tuple(row))
            rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


def source_values(dtype):
    """The source values of `dtype` as a 1-D tensor (module docstring)."""
    if dtype == torch.bool:
        return torch.tensor([False, True])
    if dtype in INTEGER_BITS:
        width = INTEGER_BITS[dtype]
        lo, hi = (0, 2**width - 1) if dtype == torch.uint8 else (-2**(width - 1),
                                                                   2**(width - 1) - 1)
        ints = [0, 1, -1, 2, -2, 7, -7, 1000] + LIMITS
        kept = [v for v in dict.fromkeys(ints) if lo <= v <= hi]
        return torch.tensor(kept, dtype=dtype)
    if dtype.is_complex:
        values = torch.tensor([complex(re, im) for re, im in COMPLEX], dtype=torch.complex128)
        return from_bits(unique_rows(element_bits(values.to(dtype))), dtype)
    doubles = SPECIALS + FRACTIONS + [float(v) for v in LIMITS] + RANGE + SUBNORMALS
    doubles += [-v for v in doubles if v > 1]  # the negative side of the limits and range
    cast = element_bits(torch.tensor(doubles, dtype=torch.float64).to(dtype))
    nans = np.array([[b - (1 << 64) if b >= 1 << 63 else b, 0] for b in NANS[dtype]],
                    dtype=np.int64)
    return from_bits(unique_rows(np.concatenate([cast, nans])), dtype)


def paths(src, dst):
    """torch's src.to(dst) through each path, as [n, 2] bits: name -> bits."""
    n = src.numel()
    strided = torch.stack([src, src]).t().reshape(-1)[::2]  # stride 2, same values
    assert not strided.is_contiguous()
    assert np.array_equal(element_bits(strided), element_bits(src))
    results = {"contiguous": element_bits(src.to(dst)),
               "strided": element_bits(strided.to(dst)),
               "scalar": np.concatenate([element_bits(src[i:i + 1].clone().to(dst))
                                         for i in range(n)])}
    vector = []
    for i in range(n):
        many = element_bits(src[i:i + 1].repeat(VECTOR_REPEAT).to(dst))
        # The repeats are one value, so unequal results would be a bug in this script's
        # premise, not a path difference: stop.
        assert (nan_blind(many, dst) == nan_blind(many[:1], dst)).all(), (src[i], dst)
        vector.append(many[:1])
    results["vector"] = np.concatenate(vector)
    return results


def complex_to_bool(src):
    """A complex value is true when either part is nonzero: `z != 0`, bool(z) in Python, and
    torch since 2024 (pytorch/pytorch#120875, fixed by #121803). torch 1.13's casting copy
    takes the real part alone, so (0, 1) becomes False there; ft follows the fix, and this
    column is computed from the parts rather than taken from torch 1.13."""
    truth = ((src.real != 0) | (src.imag != 0)).numpy().astype(np.int64)
    return np.stack([truth, np.zeros_like(truth)], axis=1)


def main():
    # Complex -> real casts take the real part, as ft's do; torch warns about the discarded
    # imaginary part each time.
    warnings.filterwarnings("ignore", message="Casting complex values to real")
    for s_name, s in DTYPES:
        src = source_values(s)
        src_bits = element_bits(src)
        disagree = np.zeros(src.numel(), dtype=np.bool_)
        results = {}
        for d_name, d in DTYPES:
            by_path = paths(src, d)
            reference = by_path["contiguous"]
            for name, bits in by_path.items():
                differs = (nan_blind(bits, d) != nan_blind(reference, d)).any(axis=1)
                for i in np.flatnonzero(differs):
                    print(f"casts: torch's paths disagree, left out: {s_name} "
                          f"{src_bits[i].tolist()} -> {d_name}: {name} {bits[i].tolist()}, "
                          f"contiguous {reference[i].tolist()}")
                disagree |= differs
            # bfloat16 to bfloat16 converts nothing: its NaNs keep their bits.
            results[f"to.{d_name}"] = canonical(reference, d) if d != s else reference
            if s.is_complex and d == torch.bool:
                results["to.bool"] = complex_to_bool(src)
        keep = ~disagree
        save("casts", **{s_name: src_bits[keep]})
        save(f"casts.{s_name}", **{k: v[keep] for k, v in results.items()})


if __name__ == "__main__":
    main()
