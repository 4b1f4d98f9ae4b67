// The floating-point functions of tile.math {fn = "..."}: the libdevice functions Triton kernels call
// (`from triton.language.extra import libdevice`; `libdevice.asin(x)`) and tl.erf / tl.floor /
// tl.ceil, beyond the ones with an op of their own (exp, log, sqrt, sin, ...).
//
// This table is the one list of them: the front end accepts exactly these names, the verifier checks
// the arity, the executor and constant folding evaluate them in double through `eval` (then round
// to the result's format), and the CUDA emitters call `tawa::math_<name>` from primitives.cuh (the
// device's CUDA math library, or <cmath> on the emulator), which has one overload per name for float
// and double.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tawa::ir {

class Op;

struct MathFn {
  std::string_view name;
  int arity;                               // 1, 2 or 3 operands (fma)
  double (*eval)(double, double, double);  // the arguments past the arity are ignored
  bool alu;                        // computed by ordinary ALU instructions (floor, ...), not the MUFU
};

const std::vector<MathFn>& mathFns();
// The entry for `name`, or nullptr.
const MathFn* mathFn(std::string_view name);
// The function of a verified tile.math op (its fn attribute names one).
const MathFn& verifiedMathFn(const Op& op);
// Every name, comma-separated, in the table's order (for messages).
std::string mathFnNames();

}  // namespace tawa::ir
