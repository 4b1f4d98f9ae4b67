#include "ir/MathFns.h"

#include <cmath>

#include "ir/IR.h"

namespace tawa::ir {

const std::vector<MathFn>& mathFns() {
  // clang-format off
  static const std::vector<MathFn> fns = {
      {"acos",  1, [](double x, double, double) { return std::acos(x); }, false},
      {"acosh", 1, [](double x, double, double) { return std::acosh(x); }, false},
      {"asin",  1, [](double x, double, double) { return std::asin(x); }, false},
      {"asinh", 1, [](double x, double, double) { return std::asinh(x); }, false},
      {"atan",  1, [](double x, double, double) { return std::atan(x); }, false},
      {"atanh", 1, [](double x, double, double) { return std::atanh(x); }, false},
      {"cbrt",  1, [](double x, double, double) { return std::cbrt(x); }, false},
      {"ceil",  1, [](double x, double, double) { return std::ceil(x); }, true},
      {"cosh",  1, [](double x, double, double) { return std::cosh(x); }, false},
      {"erf",   1, [](double x, double, double) { return std::erf(x); }, false},
      {"erfc",  1, [](double x, double, double) { return std::erfc(x); }, false},
      {"exp10", 1, [](double x, double, double) { return std::pow(10.0, x); }, false},
      {"expm1", 1, [](double x, double, double) { return std::expm1(x); }, false},
      {"floor", 1, [](double x, double, double) { return std::floor(x); }, true},
      {"lgamma", 1, [](double x, double, double) { return std::lgamma(x); }, false},
      {"log10", 1, [](double x, double, double) { return std::log10(x); }, false},
      {"log1p", 1, [](double x, double, double) { return std::log1p(x); }, false},
      {"rint",  1, [](double x, double, double) { return std::nearbyint(x); }, true},  // to nearest even
      {"round", 1, [](double x, double, double) { return std::round(x); }, true},      // halves away from zero
      {"sinh",  1, [](double x, double, double) { return std::sinh(x); }, false},
      {"tan",   1, [](double x, double, double) { return std::tan(x); }, false},
      {"tanh",  1, [](double x, double, double) { return std::tanh(x); }, false},
      {"tgamma", 1, [](double x, double, double) { return std::tgamma(x); }, false},
      {"trunc", 1, [](double x, double, double) { return std::trunc(x); }, true},
      {"atan2", 2, [](double y, double x, double) { return std::atan2(y, x); }, false},
      {"copysign", 2, [](double x, double y, double) { return std::copysign(x, y); }, true},
      {"hypot", 2, [](double x, double y, double) { return std::hypot(x, y); }, false},
      {"pow",   2, [](double x, double y, double) { return std::pow(x, y); }, false},
      // x * y + z rounded once (the f64 result; narrower ones are rounded once by evalMath)
      {"fma",   3, [](double x, double y, double z) { return std::fma(x, y, z); }, true},
  };
  // clang-format on
  return fns;
}

const MathFn* mathFn(std::string_view name) {
  for (const MathFn& f : mathFns())
    if (f.name == name) return &f;
  return nullptr;
}

const MathFn& verifiedMathFn(const Op& op) {
  const MathFn* f = mathFn(op.strAttr("fn"));
  TAWA_ASSERT(f, "verified tile.math function");
  return *f;
}

std::string mathFnNames() {
  std::string names;
  for (const MathFn& f : mathFns()) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

}  // namespace tawa::ir
