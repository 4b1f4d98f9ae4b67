// Scalar numerics with the GPU's semantics, shared by the executor, constant folding and the tests.
// Floats are carried as double (every f8/f16/bf16/f32 value is exact in double) and rounded to their
// format after each operation: round to nearest even; f16/bf16/f32 overflow to infinity; fp8
// (e4m3fn, e5m2) conversions saturate to the largest finite value, as PTX's cvt.rn.satfinite does.
// Integers are carried as int64 and wrapped to their width after each operation: signed ones
// sign-extended, unsigned ones zero-extended (u64 as its bit pattern).
#pragma once

#include <cstdint>

#include "ir/Types.h"

namespace tawa::ir {

// Rounds x to the nearest value of float format s (s must be a float scalar).
double roundFloat(Scalar s, double x);
// Rounds to TF32 (10-bit mantissa), as the tensor cores read f32 operands in tf32 mode.
double roundTf32(double x);
// Wraps x to the range of integer type s: signed types sign-extend, u8/u16/u32 zero-extend, u64
// keeps the bit pattern (i1 gives 0 or 1).
int64_t wrapInt(Scalar s, int64_t x);

// Storage encodings: the bit pattern of a value in its format (low byteWidth(s) bytes used).
uint64_t encodeFloat(Scalar s, double x);  // x is rounded first
double decodeFloat(Scalar s, uint64_t bits);

// Float to integer conversion as cvt.rzi.sat: truncate toward zero, saturate to the type's range
// (unsigned: [0, 2^bits - 1]), NaN gives 0.
int64_t floatToInt(Scalar s, double x);

// Reads or writes element i of a buffer stored in format s.
double loadFloat(Scalar s, const uint8_t* p);
// Reads n elements starting at p, `stride` bytes apart (the executor's bulk path).
void loadFloats(Scalar s, const uint8_t* p, int64_t stride, int64_t n, double* out);
int64_t loadInt(Scalar s, const uint8_t* p);
void storeFloat(Scalar s, uint8_t* p, double x);
void storeInt(Scalar s, uint8_t* p, int64_t x);

}  // namespace tawa::ir
