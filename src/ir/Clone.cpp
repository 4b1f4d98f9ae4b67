#include "ir/Clone.h"

namespace tawa::ir {

Op* cloneOp(Builder& b, const Op& op, ValueMap& map) {
  std::vector<Value*> operands;
  for (auto* v : op.operands) operands.push_back(mapped(map, v));
  std::vector<Type> types;
  for (auto& r : op.results()) types.push_back(r->type());
  Location saved = b.loc();
  b.setLoc(op.loc());
  Op* c = b.create(op.kind(), std::move(operands), std::move(types), op.attrs);
  b.setLoc(saved);
  for (size_t k = 0; k < op.numResults(); ++k) {
    c->result(k)->nameHint = op.result(k)->nameHint;
    map[op.result(k)] = c->result(k);
  }
  for (auto& r : op.regions()) {
    Block* nb = c->addRegion();
    for (auto& a : r->args()) map[a.get()] = nb->addArg(a->type(), a->nameHint);
    Builder inner(nb, op.loc());
    for (auto& o : r->ops()) cloneOp(inner, *o, map);
  }
  return c;
}

}  // namespace tawa::ir
