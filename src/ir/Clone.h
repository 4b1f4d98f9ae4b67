// Deep copy of an op (with its regions) at a builder's insertion point. `map` translates operands:
// values found in it are replaced, others are used as they are; the copy's results and block
// arguments are added to it. The copy keeps the original's location, attributes and name hints.
#pragma once

#include <unordered_map>

#include "ir/Builder.h"

namespace tawa::ir {

using ValueMap = std::unordered_map<const Value*, Value*>;

Op* cloneOp(Builder& b, const Op& op, ValueMap& map);
inline Value* mapped(const ValueMap& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

}  // namespace tawa::ir
