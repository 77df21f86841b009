#!/usr/bin/python3
"""Writes the .npy fixtures of //interop:npy_test with NumPy itself.

Run from anywhere with Debian's NumPy (apt-get install python3-numpy):
    /usr/bin/python3 interop/testdata/make_fixtures.py
The files land beside this script and are committed; the test reads them through Bazel's
`data`. Regenerating must give the same bytes (every array here is fixed, not random), so
that a change shows up in `git diff`. Made with NumPy 1.24.2 (Debian 12).
"""

import os

import numpy as np
from numpy.lib import format as npy_format

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save(name, array, **kwargs):
    np.save(path(name), array, **kwargs)


def write_version(name, array, version):
    with open(path(name), "wb") as f:
        npy_format.write_array(f, array, version=version)


# The supported dtypes, C order (float32 [2, 3] is also the expected output of SaveNpy).
save("f4_2x3.npy", (np.arange(6, dtype="<f4") * 0.5 - 1).reshape(2, 3))
save("f8_1d.npy", np.array([0.1, -2.5, 1e300, 5e-324], dtype="<f8"))
save("i8_2x2.npy", np.array([[-3, 0], [2**40, 7]], dtype="<i8"))
save("b1_2x3.npy", np.array([[True, False, True], [False, False, True]]))
# 0-d and empty arrays.
save("f8_0d.npy", np.array(3.25, dtype="<f8"))
save("f4_0x3.npy", np.zeros((0, 3), dtype="<f4"))
# Fortran order: element [i, j, k] = 100 i + 10 j + k.
iota = (np.arange(2)[:, None, None] * 100 + np.arange(3)[None, :, None] * 10 +
        np.arange(4)[None, None, :])
save("f8_fortran_3x2.npy", np.asfortranarray(np.arange(6, dtype="<f8").reshape(3, 2)))
save("i8_fortran_2x3x4.npy", np.asfortranarray(iota.astype("<i8")))
# Big-endian: LoadNpy byte-swaps.
save("f8_big_endian.npy", np.array([1.5, -2.0, 3.0], dtype=">f8"))
save("i8_big_endian_fortran_2x3.npy",
     np.asfortranarray(np.array([[1, 2, 3], [-4, 5, 2**33]], dtype=">i8")))
save("f4_big_endian.npy", np.array([[0.25, 8.0]], dtype=">f4"))
# Format versions 2.0 and 3.0 (4-byte header length; 3.0 allows a UTF-8 header).
write_version("f4_v2.npy", np.array([1.0, 2.0, 3.0], dtype="<f4"), (2, 0))
write_version("f4_v3.npy", np.array([[4.0], [5.0]], dtype="<f4"), (3, 0))
# Unsupported dtypes.
save("object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
save("unicode.npy", np.array(["ab", "c"]))
save("structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i8")]))
save("u2.npy", np.arange(3, dtype="<u2"))
save("u8.npy", np.arange(3, dtype="<u8"))
save("f16.npy", np.arange(3, dtype=np.longdouble))  # '<f16' on x86-64
save("c32.npy", np.arange(3, dtype=np.clongdouble))  # '<c32'
save("v3.npy", np.zeros(2, dtype="V3"))

# ---- the dtypes of issue 43 (the test checks each against the closed form given here) ----
# Small arrays in every descr NumPy writes for them; the test also saves the same values
# with SaveNpy and compares the bytes with these files.
save("i4.npy", np.arange(3, dtype="<i4"))
save("u1.npy", np.arange(3, dtype="u1"))
# Element k of [2, 3]: complex(k - 2, k / 4).
k6 = np.arange(6)
save("c8_2x3.npy", (k6 - 2 + 0.25j * k6).astype("<c8").reshape(2, 3))
# Exact decimal literals shared with the C++ test, the extremes of float64, and -0 (built
# with complex(): Python's -0.0 + 0.0j is +0).
save("c16_1d.npy",
     np.array([complex(0.1, -2.5), complex(1e300, 5e-324), complex(-0.0, 0.0)], dtype="<c16"))
# Element k of [2, 3]: k / 2 - 1.
save("f2_2x3.npy", (k6 * 0.5 - 1).astype("<f2").reshape(2, 3))
save("i1_1d.npy", np.array([-128, -1, 0, 1, 127], dtype="|i1"))
save("i2_1d.npy", np.array([-32768, -1, 0, 256, 32767], dtype="<i2"))
save("i4_2x3.npy", np.array([[-2**31, -1, 0], [1, 2**24 + 1, 2**31 - 1]], dtype="<i4"))
save("u1_1x5.npy", np.array([[0, 1, 127, 128, 255]], dtype="|u1"))
save("c8_0d.npy", np.array(1.5 - 0.5j, dtype="<c8"))
save("i1_0.npy", np.zeros(0, dtype="|i1"))

# float16 bit patterns: zeros, subnormals (2^-24 and 1023 * 2^-24), the smallest normal
# 2^-14, 1, -2.5, the largest 65504, infinities, a quiet NaN, a signaling NaN with a
# payload and a negative NaN with a payload.
F2_BITS = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xC100, 0x7BFF, 0x7C00, 0xFC00,
           0x7E00, 0x7D01, 0xFE3F]
f2_bits = np.array(F2_BITS, dtype="<u2")
f2 = f2_bits.view("<f2")
assert f2[2] == 2.0**-24 and f2[3] == 1023 * 2.0**-24 and f2[4] == 2.0**-14
assert f2[7] == 65504 and np.isposinf(f2[8]) and np.isnan(f2[10:]).all()
save("f2_specials.npy", f2)

# bfloat16, as JAX / ml_dtypes write it: np.save of an ml_dtypes.bfloat16 array writes the
# descr '<V2' (the dtype's kind 'V' with native byte order) and the raw bit patterns.
# ml_dtypes is not installed here, so its header is written with NumPy's own header writer
# (what np.save calls) and checked to load as NumPy loads such files: 2-byte voids.
# Patterns: zeros, 1, -2.5, the largest 0x7F7F, the smallest subnormal, the smallest normal
# 2^-126, infinities, the quiet NaN 0x7FC0, a signaling NaN with a payload, a negative NaN.
V2_BITS = [0x0000, 0x8000, 0x3F80, 0xC020, 0x7F7F, 0x0001, 0x0080, 0x7F80, 0xFF80, 0x7FC0,
           0x7F81, 0xFFC1]


def save_v2(name, bits, descr, shape):
    data = np.array(bits, dtype="<u2").reshape(shape)
    if descr[0] == ">":
        data = data.astype(">u2")
    with open(path(name), "wb") as f:
        npy_format.write_array_header_1_0(
            f, {"descr": descr, "fortran_order": False, "shape": shape})
        f.write(data.tobytes())
    back = np.load(path(name))
    assert back.dtype == np.dtype("V2") and back.shape == shape
    assert (back.view(descr[0] + "u2").astype("<u2") == np.array(bits).reshape(shape)).all()


save_v2("bf16_ml_dtypes.npy", V2_BITS, "<V2", (12,))
save_v2("bf16_big_endian.npy", V2_BITS[:6], ">V2", (2, 3))
# What np.save writes for the void array np.load gave back (no ml_dtypes): '|V2'.
save("bf16_numpy_void.npy", np.array(V2_BITS[:4], dtype="<u2").view("V2"))

# Big-endian files of the new dtypes (LoadNpy byte-swaps; complex part by part).
save("c16_big_endian.npy", np.array([complex(1.5, -2), complex(-0.0, 3e-310)], dtype=">c16"))
save("c8_big_endian.npy", np.array([[0.25 + 8j], [-1 - 0.5j]], dtype=">c8"))
save("f2_big_endian.npy", np.array(F2_BITS, dtype=">u2").view(">f2"))
save("i2_big_endian.npy", np.array([-2, 258, 32767], dtype=">i2"))
save("i4_big_endian.npy", np.array([-2, 2**24 + 3, -2**31], dtype=">i4"))
# Fortran order: element [i, j, k] = 100 i + 10 j + k (real part), and -k (imaginary).
save("c16_fortran_2x3x4.npy",
     np.asfortranarray(iota.astype("<c16") - 1j * np.arange(4)[None, None, :]))
save("i2_fortran_2x3x4.npy", np.asfortranarray(iota.astype("<i2")))
# Truncated: the float32 [2, 3] file without its last 5 bytes.
with open(path("f4_2x3.npy"), "rb") as f:
    whole = f.read()
with open(path("truncated.npy"), "wb") as f:
    f.write(whole[:-5])
