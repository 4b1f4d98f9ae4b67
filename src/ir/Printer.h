// Prints a module in tawa's MLIR-style text format. The parser reads exactly what this writes:
// parse(print(m)) prints to the same text.
#pragma once

#include <ostream>
#include <string>

#include "ir/IR.h"

namespace tawa::ir {

struct PrintOptions {
  bool locations = true;  // print loc("file":line:col) after each op
};

void print(const Module& m, std::ostream& os, const PrintOptions& opt = {});
std::string print(const Module& m, const PrintOptions& opt = {});
std::string printAttr(const AttrValue& a);

}  // namespace tawa::ir
