// Numerics against independent definitions: the compiler's own _Float16 conversion, bf16 rounding
// by integer arithmetic on f32 bits, hand-computed fp8 values, and exhaustive bit-pattern round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "ir/Elementwise.h"
#include "ir/MathFns.h"
#include "ir/Numerics.h"

using namespace tawa::ir;

namespace {

uint32_t seed() {
  static uint32_t s = std::random_device{}();
  return s;
}

TEST(Numerics, F16MatchesHardwareConversion) {
  SCOPED_TRACE("seed " + std::to_string(seed()));
  std::mt19937_64 rng(seed());
  std::uniform_real_distribution<double> mag(-30, 17);
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(1.0 + std::uniform_real_distribution<double>(0, 1)(rng), static_cast<int>(mag(rng)));
    if (rng() & 1) x = -x;
    double want = static_cast<double>(static_cast<_Float16>(x));
    ASSERT_EQ(roundFloat(Scalar::F16, x), want) << "x = " << x;
  }
}

TEST(Numerics, F16TiesToEvenOverflowAndSubnormals) {
  EXPECT_EQ(roundFloat(Scalar::F16, 1 + 0x1p-11), 1.0);                // tie, even is 1.0
  EXPECT_EQ(roundFloat(Scalar::F16, 1 + 3 * 0x1p-11), 1 + 0x1p-9);     // tie, even is 1+2^-9
  EXPECT_EQ(roundFloat(Scalar::F16, 65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(roundFloat(Scalar::F16, 65520.0)));          // tie past the largest: inf
  EXPECT_EQ(roundFloat(Scalar::F16, 0x1p-25), 0.0);                    // half the smallest subnormal
  EXPECT_EQ(roundFloat(Scalar::F16, 3 * 0x1p-25), 0x1p-23);
}

TEST(Numerics, Bf16MatchesIntegerRounding) {
  SCOPED_TRACE("seed " + std::to_string(seed()));
  std::mt19937 rng(seed());
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f) || std::isinf(f)) continue;
    uint32_t r = bits + 0x7fff + ((bits >> 16) & 1);  // round to nearest even on the top 16 bits
    r &= 0xffff0000u;
    float want;
    std::memcpy(&want, &r, 4);
    ASSERT_EQ(roundFloat(Scalar::BF16, f), static_cast<double>(want)) << "bits " << bits;
  }
}

TEST(Numerics, Fp8HandValues) {
  EXPECT_EQ(roundFloat(Scalar::F8E4M3, 0.3), 0.3125);
  EXPECT_EQ(roundFloat(Scalar::F8E4M3, 500.0), 448.0);    // satfinite
  EXPECT_EQ(roundFloat(Scalar::F8E4M3, -1e9), -448.0);
  EXPECT_EQ(roundFloat(Scalar::F8E4M3, 0x1p-9), 0x1p-9);  // smallest subnormal
  EXPECT_EQ(roundFloat(Scalar::F8E4M3, 0x1p-11), 0.0);
  EXPECT_EQ(roundFloat(Scalar::F8E5M2, 1.1), 1.0);
  EXPECT_EQ(roundFloat(Scalar::F8E5M2, 1.125), 1.0);      // tie, even mantissa
  EXPECT_EQ(roundFloat(Scalar::F8E5M2, 1.375), 1.5);      // tie, even mantissa
  EXPECT_EQ(roundFloat(Scalar::F8E5M2, 1e6), 57344.0);
  EXPECT_EQ(decodeFloat(Scalar::F8E4M3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(decodeFloat(Scalar::F8E4M3, 0x7f)));
  EXPECT_TRUE(std::isinf(decodeFloat(Scalar::F8E5M2, 0x7c)));
}

// NaN stored into each format keeps a NaN encoding: e4m3fn's only NaNs are S.1111.111 (its
// S.1111.110 is the finite 448); the others take a quiet NaN (top mantissa bit), never an infinity.
TEST(Numerics, NaNEncodingsPerFormat) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(encodeFloat(Scalar::F8E4M3, nan), 0x7fu);
  EXPECT_EQ(encodeFloat(Scalar::F8E4M3, -nan), 0xffu);
  EXPECT_EQ(encodeFloat(Scalar::F8E5M2, nan), 0x7eu);
  EXPECT_EQ(encodeFloat(Scalar::F16, nan), 0x7e00u);
  EXPECT_EQ(encodeFloat(Scalar::BF16, nan), 0x7fc0u);
  for (Scalar s : {Scalar::F16, Scalar::BF16, Scalar::F8E4M3, Scalar::F8E5M2}) {
    EXPECT_TRUE(std::isnan(decodeFloat(s, encodeFloat(s, nan)))) << static_cast<int>(s);
    EXPECT_TRUE(std::isnan(decodeFloat(s, encodeFloat(s, -nan)))) << static_cast<int>(s);
    EXPECT_TRUE(std::isnan(roundFloat(s, nan))) << static_cast<int>(s);
    uint8_t bytes[2] = {0, 0};
    uint64_t bits = encodeFloat(s, nan);
    std::memcpy(bytes, &bits, s == Scalar::F8E4M3 || s == Scalar::F8E5M2 ? 1 : 2);
    EXPECT_TRUE(std::isnan(loadFloat(s, bytes))) << static_cast<int>(s);
  }
}

// Rounding to fp8 against a definition independent of Numerics.cpp's arithmetic: the nearest of the
// format's finite values (found by scanning all 256 patterns, decoded from their bit fields here),
// ties to the even pattern, anything past the largest finite value saturating to it (cvt.rn.satfinite),
// NaN staying NaN. Random values across every binade, both signs, with ties and specials mixed in.
double decodeFp8Here(bool e4m3, uint32_t b) {
  int sign = (b >> 7) & 1, ebits = e4m3 ? 4 : 5, mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  int exp = static_cast<int>((b >> mbits) & ((1u << ebits) - 1)), mant = static_cast<int>(b & ((1u << mbits) - 1));
  if (e4m3 && exp == 15 && mant == 7) return std::numeric_limits<double>::quiet_NaN();
  if (!e4m3 && exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : (sign ? -1.0 : 1.0) * INFINITY;
  double v = exp == 0 ? std::ldexp(mant, 1 - bias - mbits) : std::ldexp((1 << mbits) + mant, exp - bias - mbits);
  return sign ? -v : v;
}
TEST(Numerics, Fp8RoundingMatchesNearestPatternSearch) {
  SCOPED_TRACE("seed " + std::to_string(seed()));
  std::mt19937_64 rng(seed());
  for (bool e4m3 : {true, false}) {
    Scalar s = e4m3 ? Scalar::F8E4M3 : Scalar::F8E5M2;
    std::vector<std::pair<double, uint32_t>> finite;
    double maxFinite = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      double v = decodeFp8Here(e4m3, b);
      if (std::isfinite(v)) finite.emplace_back(v, b), maxFinite = std::max(maxFinite, v);
    }
    EXPECT_EQ(maxFinite, e4m3 ? 448.0 : 57344.0);
    for (int i = 0; i < 20000; ++i) {
      double x;
      switch (i % 5) {
        case 0:  // a value halfway between two neighbours (a tie), or right next to one
          x = (finite[rng() % finite.size()].first + finite[rng() % finite.size()].first) / 2;
          break;
        case 1: x = std::ldexp(std::uniform_real_distribution<double>(1, 2)(rng), static_cast<int>(rng() % 40) - 24); break;
        case 2: x = std::uniform_real_distribution<double>(-2 * maxFinite, 2 * maxFinite)(rng); break;
        case 3: x = i % 15 == 3 ? INFINITY : std::ldexp(1.0, static_cast<int>(rng() % 60) - 30); break;
        default: x = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), -(static_cast<int>(rng() % 12))); break;
      }
      if (rng() & 1) x = -x;
      double want;
      if (std::fabs(x) >= maxFinite) {
        want = std::copysign(maxFinite, x);
      } else {
        double best = 0, bestErr = INFINITY;
        uint32_t bestBits = 0;
        for (auto [v, b] : finite) {
          double err = std::fabs(v - x);
          if (err < bestErr || (err == bestErr && (b & 1) == 0 && (bestBits & 1) == 1)) best = v, bestErr = err, bestBits = b;
        }
        want = best == 0 ? std::copysign(0.0, x) : best;
      }
      double got = roundFloat(s, x);
      ASSERT_EQ(got, want) << (e4m3 ? "e4m3 " : "e5m2 ") << "x = " << x;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << "x = " << x;
      ASSERT_EQ(decodeFloat(s, encodeFloat(s, got)), want) << "x = " << x;
    }
  }
}

// Every bit pattern decodes, re-encodes to itself, and the fast load path agrees with decodeFloat.
void exhaustive(Scalar s, uint32_t patterns) {
  for (uint32_t b = 0; b < patterns; ++b) {
    double v = decodeFloat(s, b);
    uint8_t bytes[2];
    std::memcpy(bytes, &b, 2);
    double fast = loadFloat(s, bytes);
    if (std::isnan(v)) {
      ASSERT_TRUE(std::isnan(fast)) << b;
      continue;
    }
    ASSERT_EQ(fast, v) << "pattern " << b;
    if (std::isinf(v) && s == Scalar::F8E5M2) {  // conversions to fp8 saturate (cvt.rn.satfinite)
      ASSERT_EQ(decodeFloat(s, encodeFloat(s, v)), std::copysign(57344.0, v));
      continue;
    }
    ASSERT_EQ(encodeFloat(s, v), b) << "pattern " << b;
  }
}
TEST(Numerics, ExhaustiveRoundTrips) {
  exhaustive(Scalar::F16, 65536);
  exhaustive(Scalar::BF16, 65536);
  exhaustive(Scalar::F8E4M3, 256);
  exhaustive(Scalar::F8E5M2, 256);
}

TEST(Numerics, IntegersWrapAndConversionsSaturate) {
  EXPECT_EQ(wrapInt(Scalar::I32, int64_t{1} << 31), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(wrapInt(Scalar::I8, 200), -56);
  EXPECT_EQ(wrapInt(Scalar::I1, 3), 1);
  EXPECT_EQ(floatToInt(Scalar::I32, 3e10), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(floatToInt(Scalar::I32, -2.9), -2);
  EXPECT_EQ(floatToInt(Scalar::I8, std::nan("")), 0);
  EXPECT_EQ(roundTf32(1 + 0x1p-11), 1 + 0x1p-10);  // tf32 rounds half away from zero
}

// Unsigned element types against C++'s own unsigned arithmetic, on fresh random bit patterns (the
// top bit set in half of them): the values the executor carries zero-extended (u64: as its bits).
template <class U>
void checkUnsigned(Scalar s, std::mt19937_64& rng) {
  const int bits = static_cast<int>(8 * sizeof(U));
  for (int i = 0; i < 20000; ++i) {
    const U a = static_cast<U>(rng()), b = static_cast<U>(rng() | 1), sh = static_cast<U>(rng() % bits);
    const auto carry = [](U x) { return static_cast<int64_t>(static_cast<uint64_t>(x)); };
    const auto got = [&](OpKind k, U x, U y) { return static_cast<U>(evalIntBinary(k, s, carry(x), carry(y))); };
    ASSERT_EQ(wrapInt(s, static_cast<int64_t>(rng())) >= 0 || bits == 64, true);
    ASSERT_EQ(got(OpKind::Div, a, b), static_cast<U>(a / b)) << +a << " / " << +b;
    ASSERT_EQ(got(OpKind::FloorDiv, a, b), static_cast<U>(a / b));
    ASSERT_EQ(got(OpKind::Rem, a, b), static_cast<U>(a % b));
    ASSERT_EQ(got(OpKind::Shr, a, sh), static_cast<U>(a >> sh)) << +a << " >> " << +sh;
    ASSERT_EQ(got(OpKind::Shl, a, sh), static_cast<U>(static_cast<uint64_t>(a) << sh));
    ASSERT_EQ(got(OpKind::Max, a, b), std::max(a, b));
    ASSERT_EQ(got(OpKind::Min, a, b), std::min(a, b));
    ASSERT_EQ(got(OpKind::Mul, a, b), static_cast<U>(static_cast<uint64_t>(a) * b));
    ASSERT_EQ(evalIntBinary(OpKind::Add, s, carry(a), carry(b)), carry(static_cast<U>(a + b)));  // carried zero-extended
    ASSERT_EQ(evalCmp("lt", s, carry(a), carry(b)), a < b);
    ASSERT_EQ(evalCmp("ge", s, carry(a), carry(b)), a >= b);
    ASSERT_EQ(evalIntUnary(OpKind::Abs, s, carry(a)), carry(a));
    ASSERT_EQ(evalCast(s, Scalar::F64, Elem{0, carry(a)}).f, static_cast<double>(a));
    const double f = static_cast<double>(rng() % 1000) / 1000.0 * 0.99 * std::ldexp(1.0, bits) + 0.5;  // in [0.5, 2^bits)
    ASSERT_EQ(static_cast<U>(floatToInt(s, f)), static_cast<U>(f)) << f;
  }
  EXPECT_EQ(floatToInt(s, -5.5), 0);                                   // saturates at 0
  EXPECT_EQ(static_cast<U>(floatToInt(s, 1e30)), static_cast<U>(~U{0}));  // and at the top
  EXPECT_EQ(static_cast<U>(wrapInt(s, -1)), static_cast<U>(~U{0}));
}

TEST(Numerics, UnsignedIntegersFollowCUnsignedArithmetic) {
  SCOPED_TRACE("seed " + std::to_string(seed()));
  std::mt19937_64 rng(seed());
  checkUnsigned<uint8_t>(Scalar::U8, rng);
  checkUnsigned<uint16_t>(Scalar::U16, rng);
  checkUnsigned<uint32_t>(Scalar::U32, rng);
  checkUnsigned<uint64_t>(Scalar::U64, rng);
  // The signed types keep signed division, arithmetic shifts and signed order.
  EXPECT_EQ(evalIntBinary(OpKind::Shr, Scalar::I32, -8, 1), -4);
  EXPECT_EQ(evalIntBinary(OpKind::Div, Scalar::I32, -7, 2), -3);
  EXPECT_TRUE(evalCmp("lt", Scalar::I32, -1, 0));
  EXPECT_FALSE(evalCmp("lt", Scalar::U32, 0xffffffff, 0));
}

TEST(Numerics, BitcastsKeepTheBits) {
  SCOPED_TRACE("seed " + std::to_string(seed()));
  std::mt19937_64 rng(seed());
  for (int i = 0; i < 20000; ++i) {
    const uint32_t w = static_cast<uint32_t>(rng());
    float f;
    std::memcpy(&f, &w, 4);
    if (std::isnan(f)) continue;  // NaN payloads are not kept through double
    const Elem asF = evalBitcast(Scalar::U32, Scalar::F32, Elem{0, static_cast<int64_t>(w)});
    ASSERT_EQ(asF.f, static_cast<double>(f));
    ASSERT_EQ(evalBitcast(Scalar::F32, Scalar::U32, asF).i, static_cast<int64_t>(w));
    ASSERT_EQ(evalBitcast(Scalar::F32, Scalar::I32, asF).i, static_cast<int32_t>(w));
    const uint16_t h = static_cast<uint16_t>(w);
    const Elem asH = evalBitcast(Scalar::I16, Scalar::F16, Elem{0, static_cast<int16_t>(h)});
    if (!std::isnan(asH.f)) {
      ASSERT_EQ(evalBitcast(Scalar::F16, Scalar::U16, asH).i, h);
    }
  }
  EXPECT_EQ(evalBitcast(Scalar::F32, Scalar::U32, Elem{1.0, 0}).i, 0x3f800000);
  EXPECT_EQ(evalBitcast(Scalar::I8, Scalar::U8, Elem{0, -1}).i, 255);
  EXPECT_EQ(evalBitcast(Scalar::U8, Scalar::I8, Elem{0, 200}).i, -56);
}

}  // namespace

// fma of f32 operands rounds the exact x * y + z once: here the exact value lies just below the
// midpoint between 1 + 2^-23 and 1 + 2^-22 (by 2^-70), so it rounds down; rounded to double first it
// would be the midpoint itself, and then ties-to-even would round up (two roundings).
TEST(Numerics, FmaRoundsOnce) {
  const tawa::ir::MathFn* fma = tawa::ir::mathFn("fma");
  ASSERT_NE(fma, nullptr);
  ASSERT_EQ(fma->arity, 3);
  const double a = 1.0 + 0x1p-23, b = (1.0 - 0x1p-23) * 0x1p-24, c = 1.0 + 0x1p-23;
  EXPECT_EQ(tawa::ir::evalMath(*fma, tawa::ir::Scalar::F32, a, b, c), 1.0 + 0x1p-23);
  EXPECT_EQ(tawa::ir::evalMath(*fma, tawa::ir::Scalar::F32, -a, b, -c), -(1.0 + 0x1p-23));
  // The product's rounding error, exact: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24.
  const double x = 1.0 + 0x1p-12;
  EXPECT_EQ(tawa::ir::evalMath(*fma, tawa::ir::Scalar::F32, x, x, -(1.0 + 0x1p-11)), 0x1p-24);
  // f64: std::fma's one rounding (1 + 2^-60 is not a double: the sum rounds to 1).
  EXPECT_EQ(tawa::ir::evalMath(*fma, tawa::ir::Scalar::F64, 0x1p-30, 0x1p-30, 1.0), 1.0);
}
