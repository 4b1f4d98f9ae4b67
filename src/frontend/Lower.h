// Lowers one @triton.jit kernel to tile IR by abstract interpretation of its syntax tree.
//
// Values are compile-time constants (Python ints, floats, bools, strings, None, dtypes, tuples) or
// IR values (scalars, pointers, tiles, descriptors). Constant expressions follow Python; tile
// expressions follow Triton (broadcasting, type promotion with Python scalars as weak types,
// pointer arithmetic, f16 math in f32). `if` on a constant is folded; on a runtime scalar it becomes
// tile.if, `for ... in range/tl.range` a tile.for, `tl.static_range` is unrolled, `while` a
// tile.while; every live variable reassigned inside a region is carried through it. Calls to other
// jit functions are inlined with their constant arguments bound (specialization).
//
// Requires: a scanned file (PyParser.h) and a launch spec naming every parameter without a default.
// Guarantees: a module with one function, `kernel`, whose arguments are the non-constexpr
// parameters in order (named after them), every op located at the .py expression that produced it.
// Anything outside the subset is a UserError at the construct's file:line:col. The module is not
// verified here (Frontend.cpp does that).
#pragma once

#include <memory>
#include <string>

#include "driver/Spec.h"
#include "frontend/PyParser.h"
#include "ir/IR.h"

namespace tawa::frontend {

std::unique_ptr<ir::Module> lowerKernel(SourceFile& file, const std::string& kernel, const driver::Spec& spec);

}  // namespace tawa::frontend
