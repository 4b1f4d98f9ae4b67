#include "transforms/OneShotLoop.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include "ir/Builder.h"
#include "ir/Clone.h"

namespace tawa::transforms {

using namespace ir;

namespace {

std::string at(const Op& op) { return std::string(op.name()) + " at " + op.loc().str(); }

class OneShotLoop {
 public:
  OneShotLoop(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    bool loopLoads = false;
    walk(f_.body, [&](Op* op) {
      if (op->kind() != OpKind::For) return;
      walk(*op, [&](Op* in) { loopLoads = loopLoads || in->kind() == OpKind::DescLoad; });
    });
    if (loopLoads) return;  // warp-specialize has a loop of block loads to stream
    countUses(f_.body, uses_);
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::Dot && wrap(op.get())) return;
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << "one-shot-loop: @" << f_.name << ": " << s << "\n";
  }

  // The top-level ops computing the dot's A and B that move into the loop with it: block loads and
  // pure tile ops whose every use is one of these ops or the dot. False when no load moves.
  bool wrap(Op* dot) {
    std::set<Op*> moved;
    std::vector<Value*> work{dot->operand(0), dot->operand(1)};
    while (!work.empty()) {
      Value* v = work.back();
      work.pop_back();
      Op* d = v->definingOp();
      if (!d || d->parent != &f_.body || moved.count(d)) continue;
      if (d->kind() != OpKind::DescLoad && !(isPure(d->kind()) && d->regions().empty() && d->numResults() == 1 && d->result()->type().isTile()))
        continue;
      moved.insert(d);
      if (d->kind() == OpKind::DescLoad) continue;  // its descriptor and offsets stay outside
      for (Value* o : d->operands) work.push_back(o);
    }
    // Keep only what is used by moved ops and the dot alone (a tile also read elsewhere stays).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Op* d : std::vector<Op*>(moved.begin(), moved.end())) {
        int inside = 0;
        walk(f_.body, [&](Op* user) {
          if (user == dot || moved.count(user))
            inside += static_cast<int>(std::count(user->operands.begin(), user->operands.end(), d->result()));
        });
        if (inside != uses_[d->result()]) moved.erase(d), changed = true;
      }
    }
    const int loads = static_cast<int>(std::count_if(moved.begin(), moved.end(), [](Op* d) { return d->kind() == OpKind::DescLoad; }));
    if (loads == 0) {
      say(at(*dot) + ": not wrapped: no block load feeds it alone");
      return false;
    }
    // The loop, where the dot was; the moved ops in their order.
    std::vector<Op*> order;
    for (auto& op : f_.body.ops())
      if (moved.count(op.get())) order.push_back(op.get());
    Builder b(&f_.body, dot->loc());
    b.setInsertionPointBefore(dot);
    const Type& rt = dot->result()->type();
    const Type i32 = Type::scalarOf(Scalar::I32);
    Value* init = dot->numOperands() == 3 ? dot->operand(2) : b.op1(OpKind::Constant, {}, rt, {{"value", rt.elemIsFloat() ? AttrValue{0.0} : AttrValue{int64_t{0}}}});
    Value* zero = b.constInt(0, i32);
    Value* one = b.constInt(1, i32);
    Op* loop = b.create(OpKind::For, {zero, one, one, init}, {rt});
    Block* body = loop->addRegion();
    body->addArg(i32, "once");
    Value* acc = body->addArg(rt, dot->result()->nameHint.empty() ? "acc" : dot->result()->nameHint + "_acc");
    Builder ib(body, dot->loc());
    ValueMap map;
    for (Op* op : order) cloneOp(ib, *op, map);
    ib.setLoc(dot->loc());
    Value* r = ib.op1(OpKind::Dot, {mapped(map, dot->operand(0)), mapped(map, dot->operand(1)), acc}, rt, dot->attrs);
    ib.create(OpKind::Yield, {r}, {});
    loop->result(0)->nameHint = dot->result()->nameHint;
    replaceAllUsesWith(f_.body, dot->result(), loop->result(0));
    f_.body.erase(dot);
    for (auto it = order.rbegin(); it != order.rend(); ++it) f_.body.erase(*it);
    say(at(*loop) + ": wrapped the tl.dot and its " + std::to_string(loads) +
        " block load(s) in a loop of one trip: warp-specialize streams them like a K loop of one step");
    return true;
  }

  Func& f_;
  const PassOptions& opt_;
  std::map<const Value*, int> uses_;
};

}  // namespace

void oneShotLoop(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) OneShotLoop(*f, opt).run();
}

}  // namespace tawa::transforms
