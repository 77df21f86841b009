// ft/interop/npy.h  (target //interop:npy)
//
// NumPy's .npy files: LoadNpy reads one array into a new ft tensor, SaveNpy writes a tensor
// as one. For exchanging inputs, weights and expected results with Python (np.load/np.save).
//
// The format (numpy.lib.format): the magic "\x93NUMPY", a version byte pair, the header's
// length (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), the header (a
// Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), },
// padded with spaces and a '\n' so the data starts at a multiple of 64 bytes), then the raw
// elements.
//
// What is supported:
// - dtypes: every dtype of ft, each as the descr np.save writes for it:
//     bool '|b1'   uint8 '|u1'   int8 '|i1'   int16 '<i2'   int32 '<i4'   int64 '<i8'
//     float16 '<f2'   float32 '<f4'   float64 '<f8'   complex64 '<c8'   complex128 '<c16'
//     bfloat16 '<V2' (NumPy has none: see NOTE: [bfloat16 in .npy files] below)
//   LoadNpy also takes '?' for bool and any byte-order character on them. Anything else
//   (uint16/32/64, float128, complex256, strings, unicode, Python objects, structured or
//   datetime dtypes, void of another size) is refused with an ft::Error naming the descr
//   and a conversion to do in NumPy first (a.astype(np.int64)).
// - Byte order: little-endian ('<'), native ('=', '|'), and big-endian ('>'): LoadNpy
//   byte-swaps big-endian files into the machine's (little-endian) order (a complex element
//   part by part). SaveNpy always writes little-endian.
// - Values are copied bit for bit both ways: NaN payloads and signs, -0, float16 and bfloat16
//   subnormals survive a round trip; a bool byte other than 0 and 1 loads as true (1).
// - Load: versions 1.0, 2.0 and 3.0 (3.0 only differs by a UTF-8 header); C order and
//   Fortran order; 0-d arrays (shape ()) and empty ones (a 0 in the shape).
// - Save: version 1.0 (2.0 when the header would not fit 1.0's 65535 bytes), C order,
//   byte for byte what np.save writes for the same array.
//
// Invariants:
// - LoadNpy returns a new, contiguous (row-major) tensor that owns its memory: a Fortran
//   order file is reordered on load. Its dtype is the file's.
// - SaveNpy takes any dense tensor (non-contiguous, transposed, broadcast views included)
//   and writes its elements in C (row-major) order; the file's shape is the tensor's.
// - Errors are ft::Error with "LoadNpy: '<path>': ..." / "SaveNpy: '<path>': ..." and what
//   was found: a missing file, a bad magic string, an unknown version, a malformed header, an
//   unsupported dtype, data shorter than the shape needs (truncated). Nothing is returned
//   half-read; SaveNpy may leave a partial file behind when the disk fails mid-write.
//
// Example (mirrored by the test Npy.HeaderExample):
//   ft::Tensor w = ft::reshape(ft::arange(6.0), {2, 3});
//   ft::SaveNpy("/tmp/w.npy", ft::transpose(w, 0, 1));   // C order: [[0, 3], [1, 4], [2, 5]]
//   ft::Tensor back = ft::LoadNpy("/tmp/w.npy");          // float32 [3, 2], contiguous
//   // In Python: np.load("/tmp/w.npy") gives the same array.
//
// NOTE: [bfloat16 in .npy files]
// NumPy has no bfloat16. JAX (and TensorFlow) arrays of bfloat16 are NumPy arrays of
// ml_dtypes.bfloat16, a custom dtype of kind 'V' (void), for which np.save writes the descr
// '<V2' and the raw 2-byte patterns; np.load gives them back as 2-byte void elements
// (ml_dtypes issue 41), which `.view(ml_dtypes.bfloat16)` turns into bfloat16 again. ft
// follows that convention, the one torch and JAX users meet in files:
// - SaveNpy writes a bfloat16 tensor as '<V2' with its bit patterns, losslessly; in Python:
//   np.load(p).view(ml_dtypes.bfloat16), or, without ml_dtypes, the float32 values
//   (np.load(p).view('<u2').astype('<u4') << 16).view('<f4'). For a file NumPy reads as
//   floats, save ft::to(x, kFloat32) ('<f4', exact: every bfloat16 is a float32).
// - LoadNpy reads every 2-byte void descr as bfloat16: '<V2' (ml_dtypes, SaveNpy), '|V2'
//   (NumPy's own void, what a file of ml_dtypes bfloat16 becomes when loaded and saved again
//   without ml_dtypes) and '>V2' (byte-swapped). NumPy writes 2-byte void for nothing else
//   that ft users meet (Keras makes the same assumption); other void sizes are refused.
#ifndef FT_INTEROP_NPY_H_
#define FT_INTEROP_NPY_H_

#include <string>

#include "tensor/tensor.h"

namespace ft {

// LoadNpy reads the .npy file at `path` into a new contiguous tensor (see the header comment
// for the formats and dtypes read). Throws ft::Error ("LoadNpy: '<path>': ...") when the file
// cannot be opened or read, is not a .npy file (bad magic), has an unsupported version, a
// malformed header or an unsupported dtype, or holds fewer data bytes than its shape needs.
Tensor LoadNpy(const std::string& path);

// SaveNpy writes `t` to `path` (created or truncated) as a version 1.0, C-order,
// little-endian .npy file, byte for byte what np.save writes for the same array (bfloat16:
// '<V2', see NOTE: [bfloat16 in .npy files]). `t` may have any layout and any dtype. Throws
// ft::Error ("SaveNpy: ...") when t is undefined or a transform's wrapper (it has no
// storage: save outside the transform), or when the file cannot be opened or written.
void SaveNpy(const std::string& path, const Tensor& t);

}  // namespace ft

#endif  // FT_INTEROP_NPY_H_
