// The per-element meaning of the elementwise ops: the executable definition that the CPU executor
// applies to every element and that constant folding applies to constants, so the two never differ.
// Float results are rounded to their format and integer results wrapped to their width (Numerics.h).
#pragma once

#include <cstdint>
#include <string>

#include "ir/IR.h"
#include "ir/MathFns.h"

namespace tawa::ir {

// Binary ops: Add, Sub, Mul, Div, FloorDiv, Rem, Max, Min (floats and ints), And, Or, Xor, Shl,
// Shr (ints). Unsigned element types divide, take max/min and shift right (logically) as unsigned.
// For integer Div/FloorDiv/Rem the caller rejects a zero divisor first.
// Float max and min ignore a NaN operand (IEEE maxNum, tl.maximum's default) unless propagateNan.
double evalFloatBinary(OpKind k, Scalar s, double a, double b, bool propagateNan = false);
// The NaN rule of a max/min op: its {propagate_nan = 1}.
bool propagatesNan(const Op& op);
// Max and min of two floats (unrounded) under that rule: a NaN operand yields the other, or NaN.
double floatMax(double a, double b, bool propagateNan);
double floatMin(double a, double b, bool propagateNan);
int64_t evalIntBinary(OpKind k, Scalar s, int64_t a, int64_t b);
// Unary ops: Neg, Abs (floats and ints), Not (ints), Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos (floats).
double evalFloatUnary(OpKind k, Scalar s, double a);
// tile.math {fn}: the function `f` of ir/MathFns.h (b is ignored for one-operand functions).
double evalMath(const MathFn& f, Scalar s, double a, double b, double c = 0.0);
int64_t evalIntUnary(OpKind k, Scalar s, int64_t a);
// tile.cmp with pred "eq" | "ne" | "lt" | "le" | "gt" | "ge" (NaN compares false except "ne").
bool evalCmp(const std::string& pred, double a, double b);
// Integers compare as element type s holds them: unsigned types as unsigned.
bool evalCmp(const std::string& pred, Scalar s, int64_t a, int64_t b);
// a < b for integers of element type s (the order of max, min and comparisons).
bool lessThan(Scalar s, int64_t a, int64_t b);

// tile.cast of one element: `from`/`to` are the element types, the value is in f (floats) or i.
struct Elem {
  double f = 0;
  int64_t i = 0;
};
Elem evalCast(Scalar from, Scalar to, Elem v);
// tile.bitcast of one element: its bits in format `from` read in format `to` (same width).
Elem evalBitcast(Scalar from, Scalar to, Elem v);

}  // namespace tawa::ir
