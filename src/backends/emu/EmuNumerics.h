// Bit-exact f16 / bf16 conversions of the CPU emulator (round to nearest even, as cvt.rn does) and
// its swizzle function, shared by the host runtime (EmuRuntime.h) and the tests. Header-only, standard C++17.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tawa {
namespace emu {

// ---- f16 / bf16 bit conversions (round to nearest even)

inline uint16_t f32ToF16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                               // below 2^-14: subnormal or zero
    float a;
    std::memcpy(&a, &ax, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t e = (ax >> 23) - 112u, m = ax & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13), rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}
inline float f16BitsToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    float v = std::ldexp(static_cast<float>(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) x = sign | 0x7f800000u | (m << 13);
  else x = sign | ((e + 112u) << 23) | (m << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline uint16_t f32ToBf16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16BitsToF32(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// An f64 to f16 / bf16 bits with one rounding, as cvt.rn.f16.f64 and cvt.rn.bf16.f64: first to f32
// rounding to odd (toward zero, the last bit set where inexact), which keeps the 13 or 16 bits below
// the narrower format's last bit enough to round it once to nearest even.
inline float f64ToF32RoundOdd(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  if (std::fabs(d) > 3.4028234663852886e38) return d > 0 ? 3.40282347e38f : -3.40282347e38f;  // FLT_MAX: odd
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x |= 1u;
  std::memcpy(&f, &x, 4);
  return f;
}
inline uint16_t f64ToF16Bits(double d) { return f32ToF16Bits(f64ToF32RoundOdd(d)); }
inline uint16_t f64ToBf16Bits(double d) { return f32ToBf16Bits(f64ToF32RoundOdd(d)); }

// An integer's magnitude and sign to bf16 bits with one rounding (nearest even), as cvt.rn.bf16.s64:
// the magnitude rounded to 8 significant bits is exact in f32, whose upper half is then the bf16.
inline uint16_t intToBf16Bits(uint64_t mag, bool negative) {
  int shift = 0;
  for (uint64_t m = mag; m >= 256u; m >>= 1) ++shift;
  uint64_t q = mag >> shift;
  if (shift > 0) {
    const uint64_t rem = mag & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
  }
  const float f = std::ldexp(static_cast<float>(q), shift);
  return f32ToBf16Bits(negative ? -f : f);
}
// A float to integer type I as cvt.rzi does: toward zero, NaN to 0, values past I's range to its bound.
template <class I, class F>
I floatToIntSaturated(F x) {
  constexpr bool isUnsigned = I(-1) > I(0);
  constexpr int bits = 8 * static_cast<int>(sizeof(I));
  const F hi = isUnsigned ? F(2) * F(1ull << (bits - 1)) : F(1ull << (bits - 1));
  const F lo = isUnsigned ? F(0) : -hi;
  if (std::isnan(x)) return I(0);
  if (x <= lo) return isUnsigned ? I(0) : I(-static_cast<long long>((1ull << (bits - 1)) - 1) - 1);
  if (x >= hi) return I(isUnsigned ? ~0ull >> (64 - bits) : (1ull << (bits - 1)) - 1);
  return static_cast<I>(x);
}

// ---- fp8 decoding (wgmma inputs): e4m3 (bias 7, no infinities, S.1111.111 is NaN, max 448) and
// e5m2 (bias 15, IEEE-style: the upper byte of an f16)

inline float e4m3BitsToF32(uint8_t b) {
  uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
  float v;
  if ((b & 0x7fu) == 0x7fu) v = std::nanf("");
  else if (e == 0) v = std::ldexp(static_cast<float>(m), -9);  // subnormal: m * 2^-6 / 8
  else v = std::ldexp(static_cast<float>(8u + m), static_cast<int>(e) - 10);
  return (b & 0x80u) ? -v : v;
}
inline float e5m2BitsToF32(uint8_t b) { return f16BitsToF32(static_cast<uint16_t>(b << 8)); }
// A float (f32 or f64, exact in double) to e4m3 / e5m2 bits as cvt.rn.satfinite does: nearest, ties
// to even; magnitudes past the largest finite value (448, 57344), infinities included, to it; NaN to
// the format's NaN (S.1111.111, S.11111.10).
inline uint8_t toFp8Bits(double x, bool e5m2) {
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  const double maxFinite = e5m2 ? 57344.0 : 448.0;
  const uint8_t sign = std::signbit(x) ? 0x80u : 0u;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | (e5m2 ? 0x7eu : 0x7fu));
  const double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int exp = e - 1 < 1 - bias ? 1 - bias : e - 1;  // below the smallest normal: the subnormals' quantum
  double r = std::isinf(a) ? maxFinite : std::nearbyint(std::ldexp(a, mbits - exp));  // in quanta of 2^(exp - mbits)
  if (!std::isinf(a)) r = std::ldexp(r, exp - mbits);
  if (r > maxFinite) r = maxFinite;
  if (r == 0) return sign;  // rounded to zero
  std::frexp(r, &e);
  if (e - 1 < 1 - bias) return static_cast<uint8_t>(sign | static_cast<uint32_t>(std::ldexp(r, bias - 1 + mbits)));  // subnormal
  const uint32_t mant = static_cast<uint32_t>(std::ldexp(r, mbits - (e - 1))) - (1u << mbits);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(e - 1 + bias) << mbits | mant);
}

// The TMA / wgmma shared-memory swizzle of a shared-window address: the 16-byte chunk index (bits
// [4, 7)) XOR the 128-byte row index within the repeating pattern (bits [7, 10)), restricted to 3, 2
// or 1 bits for the 128B, 64B and 32B modes (patterns repeating every 1024, 512 and 256 bytes).
inline uint32_t swizzle(uint32_t addr, uint32_t bytes) {
  uint32_t bits = bytes == 128 ? 7u : bytes == 64 ? 3u : bytes == 32 ? 1u : 0u;
  return addr ^ (((addr >> 7) & bits) << 4);
}

}  // namespace emu
}  // namespace tawa
