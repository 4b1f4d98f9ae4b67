#include "ir/Clone.h"

#include "ir/Diagnostic.h"

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

namespace tawa::ir {

Op* rebuildForWithout(Op* loop, const std::map<size_t, Value*>& drop, const std::set<const Op*>& skip) {
  Block& body = *loop->region(0);
  Op* yield = body.terminator();
  Builder b(loop->parent, loop->loc());
  b.setInsertionPointBefore(loop);
  std::vector<Value*> operands{loop->operand(0), loop->operand(1), loop->operand(2)};
  std::vector<Type> types;
  for (size_t k = 0; k < loop->numResults(); ++k)
    if (!drop.count(k)) operands.push_back(loop->operand(3 + k)), types.push_back(loop->result(k)->type());
  Op* nl = b.create(OpKind::For, operands, types, loop->attrs);
  Block* nb = nl->addRegion();
  ValueMap map;
  map[body.arg(0)] = nb->addArg(body.arg(0)->type(), body.arg(0)->nameHint);
  for (size_t k = 0; k < loop->numResults(); ++k) {
    auto it = drop.find(k);
    if (it == drop.end()) map[body.arg(k + 1)] = nb->addArg(body.arg(k + 1)->type(), body.arg(k + 1)->nameHint);
    else if (it->second) map[body.arg(k + 1)] = it->second;
  }
  Builder inner(nb, loop->loc());
  for (auto& op : body.ops()) {
    if (op.get() == yield || skip.count(op.get())) continue;
    walk(*op, [&](Op* o) {
      for (Value* v : o->operands) {
        auto it = v->ownerBlock() == &body && v->index() > 0 ? drop.find(static_cast<size_t>(v->index() - 1)) : drop.end();
        TAWA_ASSERT(it == drop.end() || it->second, "a dropped loop slot's argument is read in the body");
      }
    });
    cloneOp(inner, *op, map);
  }
  std::vector<Value*> ys;
  for (size_t k = 0; k < loop->numResults(); ++k)
    if (!drop.count(k)) ys.push_back(mapped(map, yield->operand(k)));
  inner.setLoc(yield->loc());
  inner.create(OpKind::Yield, ys, {});
  for (size_t k = 0, n = 0; k < loop->numResults(); ++k)
    if (!drop.count(k)) nl->result(n++)->nameHint = loop->result(k)->nameHint;
  return nl;
}

}  // namespace tawa::ir
