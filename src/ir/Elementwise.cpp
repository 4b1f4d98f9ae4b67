#include "ir/Elementwise.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ir/Numerics.h"

namespace tawa::ir {

namespace {
int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
double nanOr(double a, double b, double r) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : r;
}
}  // namespace

bool propagatesNan(const Op& op) { return op.hasAttr("propagate_nan") && op.intAttr("propagate_nan") != 0; }

// IEEE 754-2019 maximum/minimum (propagate_nan=ALL: llvm.maximum, max.NaN) and maximumNumber/
// minimumNumber (the default: a NaN yields the other operand). Both order -0 below +0, as
// llvm.maximum requires and as maxNum allows: min(+0, -0) is -0 whichever operand comes first.
double floatMax(double a, double b, bool propagateNan) {
  if (a == b) return std::signbit(a) ? b : a;
  return propagateNan ? nanOr(a, b, std::max(a, b)) : std::fmax(a, b);
}
double floatMin(double a, double b, bool propagateNan) {
  if (a == b) return std::signbit(a) ? a : b;
  return propagateNan ? nanOr(a, b, std::min(a, b)) : std::fmin(a, b);
}

double evalFloatBinary(OpKind k, Scalar s, double a, double b, bool propagateNan) {
  double r = 0;
  switch (k) {
    case OpKind::Add: r = a + b; break;
    case OpKind::Sub: r = a - b; break;
    case OpKind::Mul: r = a * b; break;
    case OpKind::Div: r = a / b; break;
    case OpKind::Rem: r = std::fmod(a, b); break;
    case OpKind::Max: r = floatMax(a, b, propagateNan); break;
    case OpKind::Min: r = floatMin(a, b, propagateNan); break;
    default: TAWA_ASSERT(false, "verified float binary op");
  }
  return roundFloat(s, r);
}

int64_t evalIntBinary(OpKind k, Scalar s, int64_t a, int64_t b) {
  int bits = bitWidth(s);
  int64_t r = 0;
  switch (k) {
    case OpKind::Add: r = wrapAdd(a, b); break;
    case OpKind::Sub: r = wrapSub(a, b); break;
    case OpKind::Mul: r = wrapMul(a, b); break;
    case OpKind::Div:
    case OpKind::FloorDiv:
    case OpKind::Rem:
      TAWA_ASSERT(b != 0, "caller rejects a zero divisor");
      if (isUnsigned(s)) {  // the operands are zero-extended (u64: bit patterns): divide as unsigned
        const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
        r = static_cast<int64_t>(k == OpKind::Rem ? ua % ub : ua / ub);
      } else if (b == -1) {  // avoid INT64_MIN / -1; the result wraps as on the GPU
        r = k == OpKind::Rem ? 0 : wrapSub(0, a);
      } else if (k == OpKind::Rem) {
        r = a % b;  // sign of the dividend, like C
      } else {
        r = a / b;  // truncation, like C and Triton's `//`
        if (k == OpKind::FloorDiv && a % b != 0 && ((a < 0) != (b < 0))) --r;
      }
      break;
    case OpKind::Max: r = lessThan(s, a, b) ? b : a; break;
    case OpKind::Min: r = lessThan(s, b, a) ? b : a; break;
    case OpKind::And: r = a & b; break;
    case OpKind::Or: r = a | b; break;
    case OpKind::Xor: r = a ^ b; break;
    // Shift amounts of the width or more saturate, as PTX's shl/shr clamp them.
    case OpKind::Shl: r = (b < 0 || b >= bits) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b); break;
    case OpKind::Shr:  // arithmetic for signed types, logical for unsigned ones (zero-extended here)
      if (isUnsigned(s)) r = (b < 0 || b >= bits) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
      else r = (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : a >> b;
      break;
    default: TAWA_ASSERT(false, "verified integer binary op");
  }
  return wrapInt(s, r);
}

double evalFloatUnary(OpKind k, Scalar s, double a) {
  double r = 0;
  switch (k) {
    case OpKind::Neg: r = -a; break;
    case OpKind::Abs: r = std::fabs(a); break;
    case OpKind::Exp: r = std::exp(a); break;
    case OpKind::Exp2: r = std::exp2(a); break;
    case OpKind::Log: r = std::log(a); break;
    case OpKind::Log2: r = std::log2(a); break;
    case OpKind::Sqrt: r = std::sqrt(a); break;
    case OpKind::Rsqrt: r = 1.0 / std::sqrt(a); break;
    case OpKind::Sin: r = std::sin(a); break;
    case OpKind::Cos: r = std::cos(a); break;
    default: TAWA_ASSERT(false, "verified float unary op");
  }
  return roundFloat(s, r);
}

double evalMath(const MathFn& f, Scalar s, double a, double b, double c) {
  if (f.arity == 3 && s != Scalar::F64) {
    // fma of f32 (or narrower) operands rounded once: their product is exact in double; the sum
    // rounded to odd there (toward zero, the last bit set where inexact) keeps enough bits below
    // the narrower format's last one to round it once to nearest even.
    const double p = a * b, sum = p + c;
    if (!std::isfinite(sum)) return roundFloat(s, f.eval(a, b, c));
    const double big = std::fabs(p) >= std::fabs(c) ? p : c, small = big == p ? c : p;
    const double err = small - (sum - big);  // sum + err == p + c exactly (two-sum of ordered operands)
    double r = sum;
    if (err != 0) {
      uint64_t bits;
      std::memcpy(&bits, &r, 8);
      if ((bits & 1u) == 0) r = std::nextafter(r, err > 0 ? INFINITY : -INFINITY);  // even: its odd neighbour
    }
    return roundFloat(s, r);
  }
  return roundFloat(s, f.eval(a, b, c));
}

int64_t evalIntUnary(OpKind k, Scalar s, int64_t a) {
  switch (k) {
    case OpKind::Neg: return wrapInt(s, wrapSub(0, a));
    case OpKind::Abs: return wrapInt(s, a < 0 && !isUnsigned(s) ? wrapSub(0, a) : a);
    case OpKind::Not: return wrapInt(s, ~a);
    default: TAWA_ASSERT(false, "verified integer unary op");
  }
  return 0;
}

template <class T>
static bool cmpImpl(const std::string& p, T a, T b) {
  if (p == "eq") return a == b;
  if (p == "ne") return a != b;
  if (p == "lt") return a < b;
  if (p == "le") return a <= b;
  if (p == "gt") return a > b;
  return a >= b;
}
bool evalCmp(const std::string& pred, double a, double b) { return cmpImpl(pred, a, b); }
bool evalCmp(const std::string& pred, Scalar s, int64_t a, int64_t b) {
  return isUnsigned(s) ? cmpImpl(pred, static_cast<uint64_t>(a), static_cast<uint64_t>(b)) : cmpImpl(pred, a, b);
}
bool lessThan(Scalar s, int64_t a, int64_t b) { return isUnsigned(s) ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b; }

Elem evalCast(Scalar from, Scalar to, Elem v) {
  bool sf = isFloat(from), df = isFloat(to);
  Elem r;
  if (to == Scalar::I1) r.i = sf ? v.f != 0 : v.i != 0;
  else if (sf && df) r.f = roundFloat(to, v.f);
  else if (sf) r.i = floatToInt(to, v.f);
  else if (df) r.f = roundFloat(to, from == Scalar::U64 ? static_cast<double>(static_cast<uint64_t>(v.i)) : static_cast<double>(v.i));
  else r.i = wrapInt(to, v.i);
  return r;
}

Elem evalBitcast(Scalar from, Scalar to, Elem v) {
  const int bits = bitWidth(from);
  uint64_t b = isFloat(from) ? encodeFloat(from, v.f) : static_cast<uint64_t>(v.i);
  if (bits < 64) b &= (uint64_t{1} << bits) - 1;
  Elem r;
  if (isFloat(to)) r.f = decodeFloat(to, b);
  else r.i = wrapInt(to, static_cast<int64_t>(b));
  return r;
}

}  // namespace tawa::ir
