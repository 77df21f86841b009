"""torch's conversions to and from float16 and bfloat16, for tensor/half_test.cc, and its
type promotion over the twelve dtypes, for tensor/dtype_test.cc.

Every 16-bit pattern of each format is widened to float32 in full (the exhaustive table).
The large float32 sets (every tie between neighbouring 16-bit values with the floats on
either side of it, and 10^6 random bit patterns) are saved as the inputs' recipe plus a
64-bit FNV-1a hash of torch's results, because their results would be megabytes: the test
builds the same inputs, hashes ft's results, and runs its own rounding oracle over every
input to point at a mismatch. A small set of chosen edges (specials, NaN payloads, the
overflow and subnormal boundaries, doubles that round twice) is saved in full.
"""
import numpy as np
import torch

from common import OUT, save  # noqa: F401  (OUT: where save writes)

FORMATS = {"half": torch.float16, "bfloat16": torch.bfloat16}
MASK64 = (1 << 64) - 1


def fnv1a64(bits16):
    """FNV-1a (64-bit) over the little-endian bytes of a uint16 array."""
    h = 0xCBF29CE484222325
    for byte in np.asarray(bits16, dtype="<u2").tobytes():
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def as_int64(h):
    """A uint64 as the int64 with the same bits (the .npy loader reads int64)."""
    return h - (1 << 64) if h >= (1 << 63) else h


def to_bits(x32, fmt):
    """torch's x (a float32 array) cast to fmt, as uint16 bit patterns."""
    t = torch.from_numpy(np.ascontiguousarray(x32, dtype=np.float32)).to(FORMATS[fmt])
    return t.view(torch.int16).numpy().view(np.uint16)


def canonical_nans(bits16, fmt):
    """torch's bfloat16 NaN depends on the path: its vectorized cast gives 0xFFFF, its scalar
    conversion (a fill, tensor(), arithmetic on few elements) 0x7FC0. ft gives 0x7FC0 on
    every path, so before hashing a bfloat16 NaN is written as 0x7FC0: the hashes check
    every other bit exactly and, for NaN, that the result is a NaN. Half's NaN (0x7E00 with
    the sign) is the same on every path of torch and is hashed as it is."""
    if fmt != "bfloat16":
        return bits16
    nan = ((bits16 & 0x7F80) == 0x7F80) & ((bits16 & 0x007F) != 0)
    return np.where(nan, np.uint16(0x7FC0), bits16).astype(np.uint16)


def widened(fmt):
    """Every 16-bit pattern of fmt, widened to float32 by torch (index = pattern)."""
    patterns = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.int16)
    return torch.from_numpy(patterns).view(FORMATS[fmt]).float().numpy()


def ties(fmt, table):
    """For each pair of neighbouring finite non-negative values of fmt (and the largest
    finite value with the first value past it), the float32 midpoint and the floats just
    below and above it, then the same negated. The test builds the same list."""
    largest = 0x7BFF if fmt == "half" else 0x7F7F
    lo = table[: largest + 1].astype(np.float64)
    hi = np.append(table[1 : largest + 1].astype(np.float64),
                   65536.0 if fmt == "half" else 2.0**128)
    mid = ((lo + hi) / 2).astype(np.float32)  # exact: fewer bits than a float holds
    below = np.nextafter(mid, np.float32(-np.inf))
    above = np.nextafter(mid, np.float32(np.inf))
    pos = np.stack([below, mid, above], axis=1).reshape(-1)
    return np.concatenate([pos, -pos]).astype(np.float32)


def lcg_floats(n, seed):
    """n float32 values from random bit patterns: state = state * 6364136223846793005 +
    1442695040888963407 (mod 2^64), each value the state's upper 32 bits."""
    out = np.empty(n, dtype=np.uint32)
    state = seed
    for i in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) & MASK64
        out[i] = state >> 32
    return out.view(np.float32)


def edges():
    """Chosen float32 edges: specials, NaNs with payloads and signs, and both formats'
    overflow, normal and subnormal boundaries with their neighbours."""
    bits = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0xFF7FFFFF,
            0x00000001, 0x807FFFFF, 0x00800000,
            0x7F800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0x7F802000, 0xFF800001]
    values = [65504.0, 65519.0, 65519.99, 65520.0, 65520.01, 65536.0, 1e5,
              2.0**-14, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 2.0**-26, 3 * 2.0**-25,
              2.0**-126, 2.0**-133, 2.0**-134, 1.5 * 2.0**-134, 2.0**-135, 3.0e38, 3.39e38,
              3.3895314e38, 3.3895316e38, 1 / 3, 0.1, 1.0, 1.0009765625, 1.00048828125]
    out = [np.array(bits, dtype=np.uint32).view(np.float32)]
    v = np.array(values, dtype=np.float32)
    for x in (v, -v):
        out += [x, np.nextafter(x, np.float32(np.inf)), np.nextafter(x, np.float32(-np.inf))]
    return np.concatenate(out).astype(np.float32)


def double_edges():
    """float64 values that round differently through float32 than directly: just past a
    tie of the 16-bit format by less than float32 can see (torch rounds twice)."""
    base = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 2048 + 1, 1 + 2.0**-8, 1 + 3 * 2.0**-8,
                     65520.0, 2.0**-25, 3 * 2.0**-25, 1e300, 1e-300], dtype=np.float64)
    return np.concatenate([base, base * (1 + 2.0**-40), base * (1 - 2.0**-40), -base])


def hash_of(x32, fmt):
    return as_int64(fnv1a64(canonical_nans(to_bits(x32, fmt), fmt)))


# ft's DType enum order (tensor/dtype.h), and the code torch's complex32 gets (ft has none).
FT_ORDER = [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64,
            torch.complex128, torch.bfloat16, torch.float16, torch.int8, torch.int16,
            torch.int32, torch.uint8]
COMPLEX32 = 100


def code(dtype):
    return COMPLEX32 if dtype == torch.complex32 else FT_ORDER.index(dtype)


def promotion():
    """promote_types and can_cast over every ordered pair; result_type of a dimensioned
    tensor with a zero-dim tensor (both orders give the same) and with a Python scalar of
    each kind (bool, int, float, complex). Under torch's own default dtype, float32, which is
    ft's (common.py sets float64 for the other families' fixtures)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    n = len(FT_ORDER)
    promote = np.zeros((n, n), dtype=np.int64)
    can_cast = np.zeros((n, n), dtype=np.bool_)
    zero_dim = np.zeros((n, n), dtype=np.int64)
    scalar = np.zeros((n, 4), dtype=np.int64)
    for i, a in enumerate(FT_ORDER):
        dimensioned = torch.ones(2, dtype=a)
        for j, b in enumerate(FT_ORDER):
            promote[i, j] = code(torch.promote_types(a, b))
            can_cast[i, j] = torch.can_cast(a, b)
            zero = torch.ones((), dtype=b)
            assert torch.result_type(dimensioned, zero) == torch.result_type(zero, dimensioned)
            zero_dim[i, j] = code(torch.result_type(dimensioned, zero))
        for k, s in enumerate([True, 2, 2.5, 2.5j]):
            scalar[i, k] = code(torch.result_type(dimensioned, s))
    torch.set_default_dtype(previous)
    save("promotion", promote=promote, can_cast=can_cast, zero_dim=zero_dim, scalar=scalar)


def main():
    promotion()
    random_inputs = lcg_floats(1_000_000, seed=42)
    for fmt in FORMATS:
        table = widened(fmt)
        e = edges()
        d = double_edges()
        d_bits = torch.from_numpy(d).to(FORMATS[fmt]).view(torch.int16).numpy().view(np.uint16)
        save(f"{fmt}",
             widened=table,
             edges=e,
             edges_rounded=to_bits(e, fmt).astype(np.int64),
             double_edges=d,
             double_edges_rounded=d_bits.astype(np.int64),
             ties_hash=np.array([hash_of(ties(fmt, table), fmt)]),
             random_hash=np.array([hash_of(random_inputs, fmt)]))


if __name__ == "__main__":
    main()
