// Numerics against independent definitions: the compiler's own _Float16 conversion, bf16 rounding
// by integer arithmetic on f32 bits, hand-computed fp8 values, and exhaustive bit-pattern round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

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

}  // namespace
