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
save("i4.npy", np.arange(3, dtype="<i4"))
save("u1.npy", np.arange(3, dtype="u1"))
save("structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i8")]))
# Truncated: the float32 [2, 3] file without its last 5 bytes.
with open(path("f4_2x3.npy"), "rb") as f:
    whole = f.read()
with open(path("truncated.npy"), "wb") as f:
    f.write(whole[:-5])
