#include "transforms/DerivePointers.h"

#include <map>
#include <ostream>
#include <vector>

#include "ir/Builder.h"
#include "ir/Clone.h"

namespace tawa::transforms {

using namespace ir;

namespace {

std::string at(const Op& op) { return std::string(op.name()) + " at " + op.loc().str(); }

class DerivePointers {
 public:
  DerivePointers(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    std::vector<Op*> loops;  // inner loops first: rebuilding an outer loop copies them as they are then
    walk(f_.body, [&](Op* op) {
      if (op->kind() == OpKind::For) loops.push_back(op);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) derive(*it);
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << "derive-pointers: @" << f_.name << ": " << s << "\n";
  }

  void derive(Op* loop) {
    std::map<const Value*, int> uses;
    countUses(f_.body, uses);
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    if (!yield || yield->kind() != OpKind::Yield) return;
    std::map<size_t, Value*> drop;  // derived slots: nothing reads their arguments any more
    std::set<const Op*> advances;   // their addptr, where only the yield reads it
    Value* trip = nullptr;          // i64 (iv - lb) / step, made once per loop
    Op* first = body.ops().front().get();  // the derived addresses go before the body's first op
    for (size_t k = 0; k < loop->numResults(); ++k) {
      Value* arg = body.arg(k + 1);
      const Type& t = arg->type();
      // A tile of pointers, or one pointer (SageAttention's `K_scale_ptr += 1`: a scalar load).
      if (!(t.isTile() ? t.elemIsPtr : t.isPtr())) continue;
      const std::string slot = std::string(t.isTile() ? "the tile of pointers " : "the pointer ") +
                               (arg->nameHint.empty() ? "#" + std::to_string(k) : "'" + arg->nameHint + "'") + " carried by " + at(*loop);
      Op* adv = yield->operand(k)->definingOp();
      bool divides = false;  // the step divides (AutoGPTQ's `(BK // (32 // bits)) * stride_bk`)
      if (!adv || adv->kind() != OpKind::AddPtr || adv->operand(0) != arg || !invariant(adv->operand(1), loop, divides)) {
        if (yield->operand(k) != arg)
          say(slot + ": left carried: not advanced as addptr(itself, a step the loop does not change)");
        continue;
      }
      if (uses.count(loop->result(k))) {
        say(slot + ": left carried: the loop's result is used after it");
        continue;
      }
      const Type i64 = Type::scalarOf(Scalar::I64);
      const Type offs = t.withElement(i64);
      Builder before(loop->parent, adv->loc());
      before.setInsertionPointBefore(loop);
      Builder top(&body, adv->loc());
      top.setInsertionPointBefore(first);
      // A step computed with a division is made at the top of the body, where the loop made it
      // each trip (before the loop it would also run when the loop makes no trip: a division by
      // zero where the kernel made none); any other step before the loop.
      Builder& at = divides ? top : before;
      Value* step = hoist(at, adv->operand(1), loop);
      if (step->type().scalar != Scalar::I64) step = at.op1(OpKind::Cast, {step}, step->type().withElement(i64));
      if (!step->type().isTile() && t.isTile()) step = at.op1(OpKind::Splat, {step}, offs);
      if (!trip) trip = tripNumber(top, loop);
      Value* off = top.op1(OpKind::Mul, {t.isTile() ? top.op1(OpKind::Splat, {trip}, offs) : trip, step}, offs);
      Value* now = top.op1(OpKind::AddPtr, {loop->operand(3 + k), off}, t);
      now->nameHint = arg->nameHint;
      replaceAllUsesWith(body, arg, now);
      drop[k] = nullptr;
      if (uses[yield->operand(k)] == 1) advances.insert(adv);
      say(slot + ": derived from the trip number (initial value + trip * step), no longer carried");
    }
    if (drop.empty()) return;
    Op* nl = rebuildForWithout(loop, drop, advances);
    for (size_t k = 0, n = 0; k < loop->numResults(); ++k)
      if (!drop.count(k)) replaceAllUsesWith(f_.body, loop->result(k), nl->result(n++));
    loop->parent->erase(loop);
    // What computed the dropped advances' steps (moved before the loop).
    eraseUnused(*nl->region(0), [](const Op& op) { return isPure(op.kind()); });
  }

  // Whether v has the same value in every trip of `loop`: defined before it, or computed inside by
  // pure ops from such values (the step's constant, made in the body). `divides`: a division or a
  // remainder is among those ops (which could trap: the caller keeps them in the body).
  static bool invariant(const Value* v, const Op* loop, bool& divides, int depth = 8) {
    if (!definedInside(v, loop)) return true;
    const Op* d = v->definingOp();
    if (!d || depth == 0 || !isPure(d->kind()) || !d->regions().empty() || d->numResults() != 1) return false;
    if (d->kind() == OpKind::Div || d->kind() == OpKind::FloorDiv || d->kind() == OpKind::Rem) divides = true;
    for (const Value* o : d->operands)
      if (!invariant(o, loop, divides, depth - 1)) return false;
    return true;
  }
  // An invariant v made before the loop: itself, or a copy of the ops computing it inside.
  static Value* hoist(Builder& before, Value* v, const Op* loop) {
    if (!definedInside(v, loop)) return v;
    ValueMap map;
    for (Value* o : v->definingOp()->operands) map[o] = hoist(before, o, loop);
    return cloneOp(before, *v->definingOp(), map)->result();
  }

  // The trip number of the loop's current iteration as an i64: (iv - lb) / step (exact: iv - lb is a
  // multiple of the step, a negative one included), without the subtraction or division where lb is
  // 0 or the step 1.
  static Value* tripNumber(Builder& b, Op* loop) {
    Value* iv = loop->region(0)->arg(0);
    const Type it = iv->type();
    Value* t = iv;
    if (intConstant(loop->operand(0)) != 0) t = b.op1(OpKind::Sub, {t, loop->operand(0)}, it);
    if (intConstant(loop->operand(2)) != 1) t = b.op1(OpKind::Div, {t, loop->operand(2)}, it);
    if (it.scalar != Scalar::I64) t = b.op1(OpKind::Cast, {t}, Type::scalarOf(Scalar::I64));
    if (t != iv) t->nameHint = "trip";  // (an i64 index from 0 by 1 is the trip number itself, its name kept)
    return t;
  }

  Func& f_;
  const PassOptions& opt_;
};

}  // namespace

void derivePointers(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) DerivePointers(*f, opt).run();
}

}  // namespace tawa::transforms
