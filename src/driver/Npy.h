// NumPy .npy files (format versions 1.0-3.0, C order, little-endian). Supported descrs: <f2 (f16),
// <f4 (f32), <f8 (f64), |b1 (i1), |i1 <i2 <i4 <i8. bf16 and fp8 have no NumPy dtype: they are
// written and read as their raw bit patterns, <u2 (bf16) and |u1 (fp8 e4m3 / e5m2).
// A malformed file is a UserError naming the file and what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Types.h"

namespace tawa::driver {

struct NpyArray {
  std::string descr;  // as in the file, e.g. "<f2"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian elements
};

NpyArray readNpy(const std::string& path);
void writeNpy(const std::string& path, const NpyArray& a);
// The descr tawa uses for a scalar type ("<f2" for f16, "<u2" for bf16, ...).
std::string npyDescr(ir::Scalar s);
// Whether a file's descr can hold a buffer of scalar type s.
bool npyDescrMatches(const std::string& descr, ir::Scalar s);

}  // namespace tawa::driver
