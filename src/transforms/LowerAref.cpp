#include "transforms/LowerAref.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Builder.h"

namespace tawa::transforms {

using namespace ir;

Value* arefPayload(Value* v, bool* transposed) {
  Op* d = v->definingOp();
  bool t = d && d->kind() == OpKind::Permute && v->type().rank() == 2 && d->arrayAttr("order") == std::vector<int64_t>{1, 0};
  if (t) v = d->operand(0), d = v->definingOp();
  if (transposed) *transposed = t;
  return d && d->kind() == OpKind::ArefGet ? v : nullptr;
}

const std::vector<std::string>& lowerArefFaults() {
  static const std::vector<std::string> faults = {"skip-release", "wrong-phase", "depth-off-by-one", "missing-expect-tx",
                                                  "early-release"};
  return faults;
}

namespace {

struct Lowered {
  int64_t id, depth, modulus;
  std::vector<Value*> rings;
  Value *full, *empty;
};

class Lowerer {
 public:
  Lowerer(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    std::vector<Op*> creates;
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::ArefCreate) creates.push_back(op.get());
    if (creates.empty()) return;
    for (Op* c : creates) allocate(c);
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::WgRegion) lowerRegion(*op);
    for (Op* c : creates) f_.body.erase(c);
  }

 private:
  bool fault(const char* f) const { return opt_.fault == f; }

  void allocate(Op* create) {
    Builder b(&f_.body, create->loc());
    b.setInsertionPointBefore(create);
    const Type& t = create->result()->type();
    Lowered l;
    l.id = static_cast<int64_t>(arefs_.size());
    l.depth = t.shape[0];
    l.modulus = fault("depth-off-by-one") ? l.depth + 1 : l.depth;
    int64_t consumers = create->hasAttr("consumers") ? create->intAttr("consumers") : 1;
    for (size_t k = 0; k < t.members.size(); ++k) {
      Value* r = b.op1(OpKind::SmemAlloc, {}, Type::smemOf(l.depth, t.members[k]), {{"aref", l.id}});
      r->nameHint = "ring" + std::to_string(l.id) + "_" + std::to_string(k);
      l.rings.push_back(r);
    }
    l.full = b.op1(OpKind::MbarInit, {}, Type::mbarOf(l.depth), {{"aref", l.id}, {"kind", std::string("full")}, {"count", int64_t{1}}});
    l.full->nameHint = "full" + std::to_string(l.id);
    l.empty = b.op1(OpKind::MbarInit, {}, Type::mbarOf(l.depth),
                    {{"aref", l.id}, {"kind", std::string("empty")}, {"count", consumers}});
    l.empty->nameHint = "empty" + std::to_string(l.id);
    arefs_[create->result()] = l;
  }

  Value* c(Builder& b, int64_t v, const Type& t) { return b.constInt(v, t); }
  Value* slotOf(Builder& b, const Lowered& l, Value* i) {
    Value* s = b.op1(OpKind::Rem, {i, c(b, l.modulus, i->type())}, i->type());
    s->nameHint = "slot";
    return s;
  }
  Value* parityOf(Builder& b, const Lowered& l, Value* i, bool invert) {
    Value* round = b.op1(OpKind::Div, {i, c(b, l.modulus, i->type())}, i->type());
    Value* p = b.op1(OpKind::And, {round, c(b, 1, i->type())}, i->type());
    if (invert) p = b.op1(OpKind::Xor, {p, c(b, 1, i->type())}, i->type());
    p->nameHint = "phase";
    return p;
  }

  void lowerRegion(Op& region) {
    bool producer = region.strAttr("role") == "producer";
    Block& body = *region.region(0);
    Builder b(&body, region.loc());
    if (!body.ops().empty()) b.setInsertionPointBefore(body.ops().front().get());
    b.create(OpKind::SetMaxNReg, {}, {},
             {{"regs", region.hasAttr("regs") ? region.intAttr("regs") : int64_t{producer ? producerRegsFor(opt_, 1) : consumerRegsFor(opt_, 1)}},
              {"action", std::string(producer ? "dec" : "inc")}});
    std::vector<Op*> todo;
    walk(body, [&](Op* op) {
      if (op->kind() == OpKind::ArefPut || op->kind() == OpKind::ArefGet || op->kind() == OpKind::ArefConsumed ||
          op->kind() == OpKind::DescStore)
        todo.push_back(op);
    });
    for (Op* op : todo) {
      switch (op->kind()) {
        case OpKind::ArefPut: lowerPut(op); break;
        case OpKind::ArefGet: lowerGet(op); break;
        case OpKind::ArefConsumed: lowerConsumed(op); break;
        default: lowerStore(op); break;
      }
    }
  }

  void lowerPut(Op* put) {
    const Lowered& l = arefs_.at(put->operand(0));
    Builder b(put->parent, put->loc());
    b.setInsertionPointBefore(put);
    Value* i = put->operand(1);
    Value* slot = slotOf(b, l, i);
    Value* par = parityOf(b, l, i, !fault("wrong-phase"));
    b.create(OpKind::MbarWait, {l.empty, slot, par}, {});
    int64_t bytes = 0;
    for (size_t k = 2; k < put->numOperands(); ++k) bytes += put->operand(k)->type().numel() * byteWidth(put->operand(k)->type().scalar);
    if (!fault("missing-expect-tx")) b.create(OpKind::MbarArriveExpectTx, {l.full, slot}, {}, {{"bytes", bytes}});
    std::vector<Op*> loads;
    for (size_t k = 2; k < put->numOperands(); ++k) {
      Op* load = put->operand(k)->definingOp();
      TAWA_ASSERT(load && load->kind() == OpKind::DescLoad && load->parent == put->parent,
                  "warp-specialize puts block loads of the same iteration into the aref");
      b.setLoc(load->loc());
      std::vector<Value*> ops{load->operand(0), l.rings[k - 2], slot, l.full};
      for (size_t o = 1; o < load->numOperands(); ++o) ops.push_back(load->operand(o));
      b.create(OpKind::TmaLoad, ops, {});
      loads.push_back(load);
    }
    put->parent->erase(put);
    for (Op* load : loads) load->parent->erase(load);
  }

  void lowerGet(Op* get) {
    const Lowered& l = arefs_.at(get->operand(0));
    Builder b(get->parent, get->loc());
    b.setInsertionPointBefore(get);
    Value* i = get->operand(1);
    Value* slot = slotOf(b, l, i);
    Value* par = parityOf(b, l, i, false);
    b.create(OpKind::MbarWait, {l.full, slot, par}, {});
    Op* loop = get->parent->parentOp;
    int64_t p = loop && loop->hasAttr("mma_depth") ? loop->intAttr("mma_depth") : 0;
    // Dots of two payload tiles (either possibly the transpose of one: B then read K-major, A
    // M-major) become async MMAs straight from the slots.
    auto ofGet = [&](Value* v) {
      Value* payload = arefPayload(v);
      return payload && payload->definingOp() == get;
    };
    std::vector<Op*> users;
    walk(*get->parent, [&](Op* op) {
      if (op->kind() == OpKind::Dot && ofGet(op->operand(0)) && ofGet(op->operand(1))) users.push_back(op);
    });
    std::set<Op*> permutes;
    for (Op* dot : users) {
      Builder d(dot->parent, dot->loc());
      d.setInsertionPointBefore(dot);
      const Type& rt = dot->result()->type();  // a zero accumulator of the result's type (i32 for s8 operands)
      Value* acc = dot->numOperands() == 3 ? dot->operand(2) : rt.elemIsInt() ? d.constInt(0, rt) : d.constFloat(0.0, rt);
      std::map<std::string, AttrValue> attrs;
      auto payload = [&](size_t k, const char* attr) {
        bool transposed = false;
        const Value* v = arefPayload(dot->operand(k), &transposed);
        if (transposed) attrs[attr] = true, permutes.insert(dot->operand(k)->definingOp());
        return v;
      };
      const Value* av = payload(0, "trans_a");
      const Value* bv = payload(1, "trans_b");
      // How an f32 dot reads its operands ("tf32", "tf32x3", "ieee"): the backend picks the instruction by it.
      if (dot->hasAttr("input_precision")) attrs["input_precision"] = dot->strAttr("input_precision");
      Value* r = d.op1(OpKind::Wgmma,
                       {l.rings[static_cast<size_t>(av->index())], slot, l.rings[static_cast<size_t>(bv->index())], slot, acc},
                       dot->result()->type(), attrs);
      r->nameHint = dot->result()->nameHint;
      d.create(OpKind::WgmmaCommit, {}, {});
      d.create(OpKind::WgmmaWait, {}, {}, {{"pending", dot->hasAttr("async") ? p : int64_t{0}}});
      replaceAllUsesWith(f_.body, dot->result(), r);
      dot->parent->erase(dot);
    }
    // A transpose that only fed such MMAs goes with them.
    for (Op* perm : permutes) {
      bool used = false;
      walk(f_.body, [&](Op* op) {
        for (Value* v : op->operands) used = used || v == perm->result();
      });
      if (!used) perm->parent->erase(perm);
    }
    // Any other use reads the slot into registers once, right after the wait.
    b.setInsertionPointBefore(get);
    for (size_t k = 0; k < get->numResults(); ++k) {
      bool used = false;
      walk(f_.body, [&](Op* op) {
        for (Value* v : op->operands) used = used || v == get->result(k);
      });
      if (!used) continue;
      Value* v = b.op1(OpKind::SmemLoad, {l.rings[k], slot}, get->result(k)->type());
      v->nameHint = get->result(k)->nameHint;
      replaceAllUsesWith(f_.body, get->result(k), v);
    }
    get->parent->erase(get);
  }

  void lowerConsumed(Op* consumed) {
    const Lowered& l = arefs_.at(consumed->operand(0));
    Value* i = consumed->operand(1);
    Op* loop = consumed->parent->parentOp;
    int64_t p = loop && loop->kind() == OpKind::For && loop->hasAttr("mma_depth") ? loop->intAttr("mma_depth") : 0;
    if (fault("skip-release")) {
      consumed->parent->erase(consumed);
      return;
    }
    Builder b(consumed->parent, consumed->loc());
    b.setInsertionPointBefore(consumed);
    if (fault("early-release")) {
      // Released as soon as the MMA is issued: before the wait that guarantees it has read the slot.
      Op* first = nullptr;
      for (auto& op : consumed->parent->ops())
        if (op->kind() == OpKind::WgmmaCommit) {
          first = op.get();
          break;
        }
      if (first) {
        auto& ops = consumed->parent->ops();
        auto it = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == first; });
        b.setInsertionPointBefore(std::next(it)->get());
      }
      b.create(OpKind::MbarArrive, {l.empty, slotOf(b, l, i)}, {});
      consumed->parent->erase(consumed);
      return;
    }
    if (p == 0) {
      b.create(OpKind::MbarArrive, {l.empty, slotOf(b, l, i)}, {});
      consumed->parent->erase(consumed);
      return;
    }
    // MMA depth P: this iteration releases the slot of iteration i - P (its MMA has completed: at
    // most P groups are in flight after the wait); the last P slots are released after the loop.
    const Type it = i->type();
    const Location loc = consumed->loc();
    // The aref index is either the loop's own iteration number, or (persistent kernels) a counter
    // carried through the tile loop; then the local iteration number decides, and the drain after
    // the loop releases the indices just below the counter's final value.
    Block& body = *loop->region(0);
    bool counter = i->ownerBlock() == &body && i->index() > 0;
    // The loop's own integer type (its bounds and induction variable) may differ from the counter's
    // (i32): arithmetic on the bounds is done in it, then converted.
    const Type lt = loop->operand(0)->type();
    auto toIt = [&](Builder& bb, Value* v) { return lt == it ? v : bb.op1(OpKind::Cast, {v}, it); };
    Value* local = i;
    if (counter) {
      Value* d = b.op1(OpKind::Sub, {body.arg(0), loop->operand(0)}, lt);
      local = toIt(b, b.op1(OpKind::Div, {d, loop->operand(2)}, lt));
    }
    Value* ready = b.op1(OpKind::Cmp, {local, c(b, p, it)}, Type::scalarOf(Scalar::I1), {{"pred", std::string("ge")}});
    Op* iff = b.create(OpKind::If, {ready}, {});
    Block* then = iff->addRegion();
    Builder tb(then, loc);
    Value* j = tb.op1(OpKind::Sub, {i, c(tb, p, it)}, it);
    tb.create(OpKind::MbarArrive, {l.empty, slotOf(tb, l, j)}, {});
    tb.create(OpKind::Yield, {}, {});
    Block* els = iff->addRegion();
    Builder(els, loc).create(OpKind::Yield, {}, {});
    consumed->parent->erase(consumed);

    auto& ops = loop->parent->ops();
    auto pos = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == loop; });
    Builder a(loop->parent, loc);
    a.setInsertionPointBefore(std::next(pos)->get());
    a.create(OpKind::WgmmaWait, {}, {}, {{"pending", int64_t{0}}});
    Value *lb = loop->operand(0), *ub = loop->operand(1), *st = loop->operand(2);
    Value* span = a.op1(OpKind::Add, {a.op1(OpKind::Sub, {ub, lb}, lt), a.op1(OpKind::Sub, {st, c(a, 1, lt)}, lt)}, lt);
    Value* trips = toIt(a, a.op1(OpKind::Max, {a.op1(OpKind::Div, {span, st}, lt), c(a, 0, lt)}, lt));
    trips->nameHint = "trips";
    Value* end = trips;
    Value* from = a.op1(OpKind::Max, {a.op1(OpKind::Sub, {trips, c(a, p, it)}, it), c(a, 0, it)}, it);
    if (counter) {
      end = loop->result(static_cast<size_t>(i->index() - 1));
      from = a.op1(OpKind::Sub, {end, a.op1(OpKind::Min, {trips, c(a, p, it)}, it)}, it);
    }
    Op* drain = a.create(OpKind::For, {from, end, c(a, 1, it)}, {});
    Block* db = drain->addRegion();
    Value* jj = db->addArg(it, "j");
    Builder dbld(db, loc);
    dbld.create(OpKind::MbarArrive, {l.empty, slotOf(dbld, l, jj)}, {});
    dbld.create(OpKind::Yield, {}, {});
  }

  void lowerStore(Op* store) {
    Builder b(store->parent, store->loc());
    b.setInsertionPointBefore(store);
    b.create(OpKind::FenceProxyAsync, {}, {});
    b.create(OpKind::TmaStore, store->operands, {}, store->attrs);  // a reduce-add store stays one
    store->parent->erase(store);
  }

  Func& f_;
  const PassOptions& opt_;
  std::map<const Value*, Lowered> arefs_;
};

}  // namespace

void lowerAref(Module& m, const PassOptions& opt) {
  if (!opt.fault.empty() &&
      std::find(lowerArefFaults().begin(), lowerArefFaults().end(), opt.fault) == lowerArefFaults().end()) {
    std::string known;
    for (auto& f : lowerArefFaults()) known += (known.empty() ? "" : ", ") + f;
    throw UserError(Location::at(std::make_shared<const std::string>("--inject"), 0, 0), "unknown fault '" + opt.fault + "'",
                    "faults: " + known);
  }
  for (auto& f : m.funcs) Lowerer(*f, opt).run();
}

}  // namespace tawa::transforms
