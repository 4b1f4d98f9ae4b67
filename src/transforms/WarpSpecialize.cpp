#include "transforms/WarpSpecialize.h"

#include <ostream>
#include <set>

#include "ir/Clone.h"

namespace tawa::transforms {

using namespace ir;

namespace {

class Specializer {
 public:
  Specializer(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    Op* loop = findLoop();
    if (!loop) return;
    std::string why;
    if (!analyze(loop, why)) {
      say("@" + f_.name + ": not specialized: " + why);
      return;
    }
    rewrite(loop);
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << s << "\n";
  }
  static std::string at(const Op& op) { return std::string(op.name()) + " at " + op.loc().str(); }

  Op* findLoop() {
    if (!f_.resultTypes.empty()) {
      say("@" + f_.name + ": not specialized: it returns values; only kernels (functions without results) are specialized");
      return nullptr;
    }
    for (auto& op : f_.body.ops()) {
      if (op->kind() == OpKind::WgRegion) {
        say("@" + f_.name + ": already warp-specialized");
        return nullptr;
      }
      if (op->kind() != OpKind::For) continue;
      for (auto& inner : op->region(0)->ops())
        if (inner->kind() == OpKind::DescLoad) return op.get();
    }
    say("@" + f_.name + ": not specialized: no top-level tile.for loads blocks (tile.desc_load) in its body; "
        "pointer loads need the block-access analysis first");
    return nullptr;
  }

  // Decides the role of every op of the loop body: the producer takes the loads and the backward
  // slice of their operands (loop-carried values included); the consumer takes every other op.
  bool analyze(Op* loop, std::string& why) {
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    std::vector<Op*> work;
    for (auto& op : body.ops())
      if (op->kind() == OpKind::DescLoad) loads_.push_back(op.get()), work.push_back(op.get());
    // Backward slice of the loads, through loop-carried arguments and their yielded values.
    while (!work.empty()) {
      Op* op = work.back();
      work.pop_back();
      if (!producer_.insert(op).second) continue;
      for (Value* v : op->operands) {
        if (v->ownerBlock() == &body && v->index() > 0) {  // a loop-carried argument
          auto k = static_cast<size_t>(v->index() - 1);
          if (producerCarried_.insert(k).second) {
            Value* next = yield->operand(k);
            if (Op* d = next->definingOp(); d && d->parent == &body) work.push_back(d);
          }
        }
        Op* d = v->definingOp();
        if (!d || d->parent != &body) continue;
        if (d->kind() == OpKind::DescLoad) {
          why = "the address of " + at(*op) + " depends on loaded data (" + at(*d) + ")";
          return false;
        }
        if (!isPure(d->kind())) {
          why = "the address of " + at(*op) + " depends on " + at(*d) + ", which has side effects";
          return false;
        }
        work.push_back(d);
      }
    }
    for (auto& op : body.ops())
      if (!producer_.count(op.get()) && op->kind() != OpKind::DescLoad && op.get() != yield) consumerOps_.insert(op.get());
    // Address arithmetic that the consumer also uses is computed by both (it is pure and cheap).
    std::vector<Op*> need;
    for (Op* op : consumerOps_) need.push_back(op);
    for (size_t k = 0; k < yield->numOperands(); ++k)
      if (!producerCarried_.count(k))
        if (Op* d = yield->operand(k)->definingOp(); d && producer_.count(d)) need.push_back(d), shared_.insert(d);
    while (!need.empty()) {
      Op* op = need.back();
      need.pop_back();
      for (Value* v : op->operands) {
        if (v->ownerBlock() == &body && v->index() > 0 && producerCarried_.count(static_cast<size_t>(v->index() - 1))) {
          why = at(*op) + " in the consumer uses loop-carried address arithmetic that the producer advances (not supported yet)";
          return false;
        }
        Op* d = v->definingOp();
        if (d && d->parent == &body && producer_.count(d) && d->kind() != OpKind::DescLoad && shared_.insert(d).second)
          need.push_back(d);
      }
    }
    for (size_t k = 0; k < yield->numOperands(); ++k)
      if (!producerCarried_.count(k)) consumerCarried_.insert(k);
      else if (Op* d = yield->operand(k)->definingOp(); d && consumerOps_.count(d)) {
        why = "loop-carried value #" + std::to_string(k) + " feeds the loads but is computed from consumer work";
        return false;
      }
    for (auto& op : f_.body.ops()) {
      if (op.get() == loop) {
        afterLoop_ = true;
        continue;
      }
      if (!afterLoop_) continue;
      for (Value* v : op->operands)
        if (v->definingOp() == loop && producerCarried_.count(static_cast<size_t>(v->index())) &&
            !consumerCarried_.count(static_cast<size_t>(v->index()))) {
          why = "the loop result #" + std::to_string(v->index()) + " used by " + at(*op) + " is only computed by the producer";
          return false;
        }
    }
    return true;
  }

  Value* iterationIndex(Builder& b, Value* iv, Op* loop, ValueMap& map) {
    Value* lb = mapped(map, loop->operand(0));
    Value* step = mapped(map, loop->operand(2));
    Value* d = b.op1(OpKind::Sub, {iv, lb}, iv->type());
    Value* i = b.op1(OpKind::Div, {d, step}, iv->type());
    i->nameHint = "i";
    return i;
  }

  void rewrite(Op* loop) {
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    Location loadLoc = loads_.front()->loc();
    // Split the function body: pure prologue stays; impure prologue ops and the epilogue move.
    std::vector<Op*> prologueImpure, epilogue;
    bool after = false;
    for (auto& op : f_.body.ops()) {
      if (op.get() == loop) {
        after = true;
        continue;
      }
      if (op->kind() == OpKind::Return) continue;
      if (after) epilogue.push_back(op.get());
      else if (!isPure(op->kind())) prologueImpure.push_back(op.get());
    }
    Builder top(&f_.body, loadLoc);
    top.setInsertionPointBefore(loop);
    std::vector<Type> payload;
    for (Op* l : loads_) payload.push_back(l->result()->type());
    Op* create = top.create(OpKind::ArefCreate, {}, {Type::arefOf(opt_.depth, payload)},
                            {{"consumers", int64_t{opt_.consumers}}});
    Value* aref = create->result();
    aref->nameHint = "aref";

    // ---- producer
    Op* prod = top.create(OpKind::WgRegion, {}, {},
                          {{"role", std::string("producer")}, {"num_warps", int64_t{4}}, {"regs", int64_t{opt_.producerRegs}}});
    prod->setLoc(loop->loc());
    {
      Block* pb = prod->addRegion();
      Builder b(pb, loop->loc());
      ValueMap map;
      std::vector<size_t> carried(producerCarried_.begin(), producerCarried_.end());
      Op* nl = makeLoop(b, loop, carried, map);
      Builder lb(nl->region(0), loadLoc);
      for (auto& op : body.ops())
        if (producer_.count(op.get())) cloneOp(lb, *op, map);
      Value* i = iterationIndex(lb, nl->region(0)->arg(0), loop, map);
      std::vector<Value*> putOps{aref, i};
      for (Op* l : loads_) putOps.push_back(map.at(l->result()));
      lb.create(OpKind::ArefPut, putOps, {});
      std::vector<Value*> ys;
      for (size_t k : carried) ys.push_back(mapped(map, yield->operand(k)));
      lb.setLoc(yield->loc());
      lb.create(OpKind::Yield, ys, {});
      b.create(OpKind::Yield, {}, {});
    }
    // ---- consumer
    Op* cons = top.create(OpKind::WgRegion, {}, {},
                          {{"role", std::string("consumer")}, {"num_warps", int64_t{4}}, {"regs", int64_t{opt_.consumerRegs}}});
    cons->setLoc(loop->loc());
    {
      Block* cb = cons->addRegion();
      Builder b(cb, loop->loc());
      ValueMap map;
      for (Op* op : prologueImpure) cloneOp(b, *op, map);
      std::vector<size_t> carried(consumerCarried_.begin(), consumerCarried_.end());
      Op* nl = makeLoop(b, loop, carried, map);
      Builder lb(nl->region(0), loadLoc);
      Value* i = iterationIndex(lb, nl->region(0)->arg(0), loop, map);
      Op* get = lb.create(OpKind::ArefGet, {aref, i}, payload);
      for (size_t k = 0; k < loads_.size(); ++k) {
        get->result(k)->nameHint = loads_[k]->result()->nameHint;
        map[loads_[k]->result()] = get->result(k);
      }
      for (auto& op : body.ops())
        if (consumerOps_.count(op.get()) || shared_.count(op.get())) cloneOp(lb, *op, map);
      lb.create(OpKind::ArefConsumed, {aref, i}, {});
      std::vector<Value*> ys;
      for (size_t k : carried) ys.push_back(mapped(map, yield->operand(k)));
      lb.setLoc(yield->loc());
      lb.create(OpKind::Yield, ys, {});
      for (size_t n = 0; n < carried.size(); ++n) map[loop->result(carried[n])] = nl->result(n);
      for (Op* op : epilogue) cloneOp(b, *op, map);
      b.create(OpKind::Yield, {}, {});
    }
    say("@" + f_.name + ": specialized the loop at " + loop->loc().str() + " (depth " + std::to_string(opt_.depth) + ")");
    for (Op* l : loads_) say("  producer: " + at(*l) + " (a block load: seeds the producer)");
    for (auto& op : body.ops())
      if (producer_.count(op.get()) && op->kind() != OpKind::DescLoad)
        say("  producer: " + at(*op) + (shared_.count(op.get()) ? " (address arithmetic, also computed by the consumer)"
                                                                  : " (address arithmetic of the loads)"));
    for (auto& op : body.ops())
      if (consumerOps_.count(op.get())) say("  consumer: " + at(*op) + " (uses loaded tiles or loop-carried results)");
    for (Op* op : prologueImpure) say("  consumer: " + at(*op) + " (a load before the loop, done by the consumer itself)");
    for (Op* op : epilogue) say("  consumer: " + at(*op) + " (after the loop: the epilogue)");
    say("  aref: " + std::to_string(loads_.size()) + " tile(s) per slot cross from producer to consumer");

    // Remove the original loop, epilogue and moved prologue ops (users first).
    for (auto it = epilogue.rbegin(); it != epilogue.rend(); ++it) f_.body.erase(*it);
    f_.body.erase(loop);
    for (auto it = prologueImpure.rbegin(); it != prologueImpure.rend(); ++it) f_.body.erase(*it);
  }

  // A copy of the loop control carrying the given loop-carried values.
  Op* makeLoop(Builder& b, Op* loop, const std::vector<size_t>& carried, ValueMap& map) {
    std::vector<Value*> ops{mapped(map, loop->operand(0)), mapped(map, loop->operand(1)), mapped(map, loop->operand(2))};
    std::vector<Type> types;
    for (size_t k : carried) ops.push_back(mapped(map, loop->operand(3 + k))), types.push_back(loop->result(k)->type());
    Op* nl = b.create(OpKind::For, ops, types);
    nl->setLoc(loop->loc());
    for (size_t n = 0; n < carried.size(); ++n) nl->result(n)->nameHint = loop->result(carried[n])->nameHint;
    Block* nb = nl->addRegion();
    Block& body = *loop->region(0);
    map[body.arg(0)] = nb->addArg(body.arg(0)->type(), body.arg(0)->nameHint);
    for (size_t k : carried) map[body.arg(k + 1)] = nb->addArg(body.arg(k + 1)->type(), body.arg(k + 1)->nameHint);
    return nl;
  }

  Func& f_;
  const PassOptions& opt_;
  std::vector<Op*> loads_;
  std::set<Op*> producer_, consumerOps_, shared_;
  std::set<size_t> producerCarried_, consumerCarried_;
  bool afterLoop_ = false;
};

}  // namespace

void warpSpecialize(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) Specializer(*f, opt).run();
}

}  // namespace tawa::transforms
