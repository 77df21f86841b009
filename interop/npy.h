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
// - dtypes: float32 ('<f4'), float64 ('<f8'), int64 ('<i8') and bool ('|b1'), ft's four
//   dtypes. Anything else (other int or float widths, unsigned, complex, strings, unicode,
//   Python objects, structured or datetime dtypes) is refused with an ft::Error naming the
//   descr: convert it in NumPy first (a.astype(np.int64)).
// - Byte order: little-endian ('<'), native ('=', '|'), and big-endian ('>'): LoadNpy
//   byte-swaps big-endian files into the machine's (little-endian) order. SaveNpy always
//   writes little-endian.
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
// little-endian .npy file. `t` may have any layout. Throws ft::Error ("SaveNpy: ...") when t
// is undefined or a transform's wrapper (it has no storage: save outside the transform), or
// when the file cannot be opened or written.
void SaveNpy(const std::string& path, const Tensor& t);

}  // namespace ft

#endif  // FT_INTEROP_NPY_H_
