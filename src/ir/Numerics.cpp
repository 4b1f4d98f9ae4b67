#include "ir/Numerics.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace tawa::ir {


namespace {

struct Format {
  int ebits, mbits, bias;
  bool hasInf;       // IEEE-style infinities (f16, bf16, f32, e5m2); e4m3fn has none
  bool saturate;     // fp8 conversions clamp to the largest finite value
  double maxFinite;
};

Format formatOf(Scalar s) {
  switch (s) {
    case Scalar::F8E4M3: return {4, 3, 7, false, true, 448.0};
    case Scalar::F8E5M2: return {5, 2, 15, true, true, 57344.0};
    case Scalar::F16: return {5, 10, 15, true, false, 65504.0};
    case Scalar::BF16: return {8, 7, 127, true, false, 3.3895313892515355e38};
    case Scalar::F32: return {8, 23, 127, true, false, 3.4028234663852886e38};
    default: return {11, 52, 1023, true, false, std::numeric_limits<double>::max()};
  }
}

// Rounds |a| (finite, > 0) to the format's grid, nearest-even or nearest-away.
double roundMagnitude(const Format& f, double a, bool away) {
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;
  int minExp = 1 - f.bias;
  if (exp < minExp) exp = minExp;  // subnormal range: fixed quantum
  double quantum = std::ldexp(1.0, exp - f.mbits);
  double q = a / quantum;  // exact: scaling by a power of two
  double r = away ? std::floor(q + 0.5) : std::nearbyint(q);
  return r * quantum;
}

}  // namespace

double roundFloat(Scalar s, double x) {
  if (s == Scalar::F64) return x;
  if (s == Scalar::F32) return static_cast<double>(static_cast<float>(x));
  Format f = formatOf(s);
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return f.saturate || !f.hasInf ? std::copysign(f.maxFinite, x) : x;
  if (x == 0) return x;
  double r = roundMagnitude(f, std::fabs(x), false);
  if (r > f.maxFinite) r = f.saturate || !f.hasInf ? f.maxFinite : std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}

double roundTf32(double x) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  Format f{8, 10, 127, true, false, 3.4028234663852886e38};
  double r = roundMagnitude(f, std::fabs(x), true);
  return std::copysign(r, x);
}

int64_t wrapInt(Scalar s, int64_t x) {
  switch (s) {
    case Scalar::I1: return x & 1;
    case Scalar::I8: return static_cast<int8_t>(x);
    case Scalar::I16: return static_cast<int16_t>(x);
    case Scalar::I32: return static_cast<int32_t>(static_cast<uint32_t>(x));
    case Scalar::U8: return static_cast<uint8_t>(x);
    case Scalar::U16: return static_cast<uint16_t>(x);
    case Scalar::U32: return static_cast<uint32_t>(x);
    default: return x;
  }
}

int64_t floatToInt(Scalar s, double x) {
  if (std::isnan(x)) return 0;
  if (s == Scalar::I1) return x != 0;
  int bits = bitWidth(s);
  double t = std::trunc(x);
  if (isUnsigned(s)) {
    if (t <= 0) return 0;
    if (t >= std::ldexp(1.0, bits)) return bits == 64 ? -1 : static_cast<int64_t>(std::ldexp(1.0, bits) - 1);
    return static_cast<int64_t>(static_cast<uint64_t>(t));
  }
  double hi = std::ldexp(1.0, bits - 1) - 1, lo = -std::ldexp(1.0, bits - 1);
  if (t >= hi) return bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  if (t <= lo) return static_cast<int64_t>(lo);
  return static_cast<int64_t>(t);
}

uint64_t encodeFloat(Scalar s, double x) {
  x = roundFloat(s, x);
  if (s == Scalar::F64) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    return b;
  }
  if (s == Scalar::F32) {
    float v = static_cast<float>(x);
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  Format f = formatOf(s);
  uint64_t sign = std::signbit(x) ? 1ull << (f.ebits + f.mbits) : 0;
  uint64_t expMask = (1ull << f.ebits) - 1;
  if (std::isnan(x)) {
    // canonical NaN: all exponent bits and all (e4m3fn) or the top (others) mantissa bits
    uint64_t mant = f.hasInf ? 1ull << (f.mbits - 1) : (1ull << f.mbits) - 1;
    return sign | (expMask << f.mbits) | mant;
  }
  if (std::isinf(x)) return sign | (expMask << f.mbits);
  double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  int exp = e - 1;
  if (exp < 1 - f.bias) {  // subnormal
    uint64_t mant = static_cast<uint64_t>(std::ldexp(a, f.bias - 1 + f.mbits));
    return sign | mant;
  }
  uint64_t biased = static_cast<uint64_t>(exp + f.bias);
  uint64_t mant = static_cast<uint64_t>(std::ldexp(a, -exp) * std::ldexp(1.0, f.mbits)) - (1ull << f.mbits);
  return sign | (biased << f.mbits) | mant;
}

double decodeFloat(Scalar s, uint64_t bits) {
  if (s == Scalar::F64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (s == Scalar::F32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, 4);
    return v;
  }
  Format f = formatOf(s);
  bool neg = (bits >> (f.ebits + f.mbits)) & 1;
  uint64_t expMask = (1ull << f.ebits) - 1;
  uint64_t e = (bits >> f.mbits) & expMask, m = bits & ((1ull << f.mbits) - 1);
  double v;
  if (e == expMask && f.hasInf) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == expMask && !f.hasInf && m == (1ull << f.mbits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();  // e4m3fn: S.1111.111
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1ull << f.mbits)), static_cast<int>(e) - f.bias - f.mbits);
  }
  return neg ? -v : v;
}

namespace {
// Decoded values of every bit pattern of a 16- or 8-bit format: loads are table lookups.
template <Scalar S, size_t N>
const std::array<double, N>& decodeTable() {
  static const std::array<double, N> table = [] {
    std::array<double, N> t{};
    for (size_t b = 0; b < N; ++b) t[b] = decodeFloat(S, b);
    return t;
  }();
  return table;
}
}  // namespace

namespace {
inline double decodeF16(uint16_t b) {
  uint32_t sign = (b >> 15) & 1, e = (b >> 10) & 31, m = b & 1023;
  double v;
  if (e == 0) {
    v = m * 0x1p-24;  // subnormal (or zero)
  } else if (e == 31) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    uint32_t f = ((e + 112) << 23) | (m << 13);  // rebias 15 -> 127
    float x;
    std::memcpy(&x, &f, 4);
    v = x;
  }
  return sign ? -v : v;
}
inline double decodeBf16(uint16_t b) {
  uint32_t f = static_cast<uint32_t>(b) << 16;  // bf16 is the top half of an f32
  float x;
  std::memcpy(&x, &f, 4);
  return x;
}
template <class Decode>
void gather(const uint8_t* p, int64_t stride, int64_t n, double* out, Decode dec) {
  for (int64_t k = 0; k < n; ++k, p += stride) out[k] = dec(p);
}
}  // namespace

double loadFloat(Scalar s, const uint8_t* p) {
  double v;
  loadFloats(s, p, 0, 1, &v);
  return v;
}

void loadFloats(Scalar s, const uint8_t* p, int64_t stride, int64_t n, double* out) {
  switch (s) {
    case Scalar::F16:
      return gather(p, stride, n, out, [](const uint8_t* q) { uint16_t b; std::memcpy(&b, q, 2); return decodeF16(b); });
    case Scalar::BF16:
      return gather(p, stride, n, out, [](const uint8_t* q) { uint16_t b; std::memcpy(&b, q, 2); return decodeBf16(b); });
    case Scalar::F8E4M3:
      return gather(p, stride, n, out, [](const uint8_t* q) { return decodeTable<Scalar::F8E4M3, 256>()[*q]; });
    case Scalar::F8E5M2:
      return gather(p, stride, n, out, [](const uint8_t* q) { return decodeTable<Scalar::F8E5M2, 256>()[*q]; });
    case Scalar::F32:
      return gather(p, stride, n, out, [](const uint8_t* q) { float v; std::memcpy(&v, q, 4); return static_cast<double>(v); });
    default:
      return gather(p, stride, n, out, [](const uint8_t* q) { double v; std::memcpy(&v, q, 8); return v; });
  }
}

void storeFloat(Scalar s, uint8_t* p, double x) {
  uint64_t b = encodeFloat(s, x);
  std::memcpy(p, &b, static_cast<size_t>(byteWidth(s)));
}

int64_t loadInt(Scalar s, const uint8_t* p) {
  switch (s) {
    case Scalar::I1: return *p != 0;
    case Scalar::I8: return static_cast<int8_t>(*p);
    case Scalar::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case Scalar::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case Scalar::U8: return *p;
    case Scalar::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case Scalar::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { int64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void storeInt(Scalar s, uint8_t* p, int64_t x) {
  x = wrapInt(s, x);
  std::memcpy(p, &x, static_cast<size_t>(byteWidth(s)));  // little-endian: low bytes first
}

}  // namespace tawa::ir
