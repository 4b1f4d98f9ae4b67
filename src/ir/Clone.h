// Deep copy of an op (with its regions) at a builder's insertion point. `map` translates operands:
// values found in it are replaced, others are used as they are; the copy's results and block
// arguments are added to it. The copy keeps the original's location, attributes and name hints.
#pragma once

#include <map>
#include <set>
#include <unordered_map>

#include "ir/Builder.h"

namespace tawa::ir {

using ValueMap = std::unordered_map<const Value*, Value*>;

Op* cloneOp(Builder& b, const Op& op, ValueMap& map);
inline Value* mapped(const ValueMap& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

// `loop` (a tile.for) made again right before itself without the carried slots of `drop`: inside the
// new body a dropped slot's block argument reads drop[k] (a value defined before the loop; null where
// nothing in the body reads the argument, else an internal error), and the yield no longer passes
// it on. The body's ops in `skip` are not copied (a dropped slot's own advance: nothing else may use
// their results). Result n of the new loop is the n-th kept slot's; the caller replaces the old
// loop's results (a dropped one's by whatever it stands for) and erases the old loop.
Op* rebuildForWithout(Op* loop, const std::map<size_t, Value*>& drop, const std::set<const Op*>& skip = {});

}  // namespace tawa::ir
