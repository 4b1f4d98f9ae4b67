#include "transforms/Pipeline.h"

#include "ir/Clone.h"
#include "transforms/LowerAref.h"

#include <algorithm>
#include <map>
#include <set>
#include <limits>
#include <ostream>

namespace tawa::transforms {

using namespace ir;

namespace {

// Whether `v` (a dot's result inside `body`) is used only as the loop's yielded value, which in
// turn is used only as the accumulator of dots or after the loop.
bool onlyCarried(const Value* v, const Block& body, std::string& why) {
  const Op* yield = body.terminator();
  int idx = -1;
  bool ok = true;
  walk(body, [&](const Op* op) {
    for (size_t k = 0; k < op->numOperands(); ++k) {
      if (op->operand(k) != v) continue;
      if (op == yield) idx = static_cast<int>(k);
      else ok = false, why = std::string(op->name()) + " at " + op->loc().str() + " reads the MMA result in the same iteration";
    }
  });
  if (!ok || idx < 0) {
    if (ok) why = "the MMA result is not carried to the next iteration";
    return false;
  }
  const Value* arg = body.arg(static_cast<size_t>(idx) + 1);
  walk(body, [&](const Op* op) {
    for (size_t k = 0; k < op->numOperands(); ++k)
      if (op->operand(k) == arg && !(op->kind() == OpKind::Dot && k == 2) && op != yield)
        ok = false, why = std::string(op->name()) + " at " + op->loc().str() + " reads the accumulator before the next MMA";
  });
  return ok;
}

// Attention: the PV MMA of iteration j - 1 is moved into iteration j, right after the QK^T MMA of
// iteration j, so that it overlaps j's softmax; the loop carries P and V of the previous iteration
// and a flag, and keeps V's slot until that MMA has run (hence D >= 2). The last PV runs after the
// loop. Returns the new loop, or null with the reason in `why` (the loop is then unchanged).
Op* overlapPv(Op* loop, std::string& why) {
  Block& body = *loop->region(0);
  Op* yield = body.terminator();
  Op *get = nullptr, *consumed = nullptr, *pv = nullptr, *qk = nullptr;
  if (std::none_of(body.ops().begin(), body.ops().end(), [](auto& op) { return op->kind() == OpKind::ArefGet; }))
    return why = "the loop does not get aref slots", nullptr;
  // PV: a dot accumulating into a loop-carried value, with B straight from an aref (V's, which it
  // releases: K has an aref of its own, released after QK^T, or shares V's).
  size_t k = 0;
  for (auto& op : body.ops()) {
    if (op->kind() != OpKind::Dot || op->numOperands() != 3) continue;
    Op* from = op->operand(1)->definingOp();
    for (size_t y = 0; y < yield->numOperands(); ++y)
      if (yield->operand(y) == op->result() && from && from->kind() == OpKind::ArefGet) pv = op.get(), k = y, get = from;
  }
  if (!pv) return why = "no MMA accumulates a loaded tile into a loop-carried value", nullptr;
  for (auto& op : body.ops())
    if (op->kind() == OpKind::ArefConsumed && op->operand(0) == get->operand(0)) consumed = op.get();
  if (!consumed) return why = "V's slot is not released in the loop body", nullptr;
  if (get->operand(0)->type().shape[0] < 2) return why = "overlapping PV with the next QK^T holds two slots: needs aref depth >= 2", nullptr;
  for (auto& op : body.ops())
    if (op->kind() == OpKind::Dot && op.get() != pv) {
      qk = op.get();
      break;
    }
  if (!qk) return why = "no other MMA in the loop to overlap with", nullptr;
  // Attention's forward loop runs two MMAs. With more (attention backward's four: dV and dK beside
  // the two score products), P and V's slot held into the next iteration live across the others,
  // which costs registers (spills) for an overlap those MMAs give already.
  const auto dots = std::count_if(body.ops().begin(), body.ops().end(), [](auto& op) { return op->kind() == OpKind::Dot; });
  if (dots > 2)
    return why = "the loop runs " + std::to_string(dots) + " MMAs, not attention's forward two (QK^T and PV): P and V's slot "
                 "held into the next iteration would live across the others",
           nullptr;
  // The accumulator's chain (e.g. acc * alpha) must come after QK^T and feed only PV.
  Value* acc = body.arg(k + 1);
  std::set<const Op*> chain;
  bool afterQk = false, ok = true;
  for (auto& op : body.ops()) {
    if (op.get() == qk) afterQk = true;
    bool uses = false;
    for (Value* v : op->operands)
      uses = uses || v == acc || (v->definingOp() && chain.count(v->definingOp()));
    if (!uses || op.get() == pv) continue;
    if (op.get() == yield || !isPure(op->kind()) || !afterQk) ok = false;
    chain.insert(op.get());
  }
  std::map<const Value*, int> uses;
  countUses(body, uses);
  for (const Op* c : chain)
    for (auto& r : c->results())
      if (r.get() != pv->operand(2) && uses[r.get()] > 0) ok = false;
  if (!ok || uses[pv->result()] != 1) return why = "the accumulator is used outside the rescale-then-PV chain", nullptr;
  // The aref index is the iteration number (k - lb) / step, so the last one is trips - 1; or a
  // counter the loop carries (persistent kernels), so the last one is its final value - 1.
  Value* idx = consumed->operand(1);
  Op* div = idx->definingOp();
  Op* sub = div && div->kind() == OpKind::Div ? div->operand(0)->definingOp() : nullptr;
  bool counter = idx->ownerBlock() == &body && idx->index() > 0;
  if (!counter && (!sub || sub->kind() != OpKind::Sub || sub->operand(0) != body.arg(0)))
    return why = "the aref index is neither the loop's iteration number nor a counter it carries", nullptr;

  Builder b(loop->parent, loop->loc());
  b.setInsertionPointBefore(loop);
  const Type &pt = pv->operand(0)->type(), &vt = pv->operand(1)->type(), &at = pv->result()->type();
  Type i1 = Type::scalarOf(Scalar::I1);
  std::vector<Value*> ops(loop->operands.begin(), loop->operands.end());
  std::vector<Type> types;
  for (auto& r : loop->results()) types.push_back(r->type());
  auto zero = [&](Builder& bb, const Type& t) { return t.elemIsFloat() ? bb.constFloat(0.0, t) : bb.constInt(0, t); };
  ops.push_back(zero(b, pt));
  ops.push_back(zero(b, vt));
  ops.push_back(b.constInt(0, i1));
  types.push_back(pt);
  types.push_back(vt);
  types.push_back(i1);
  Op* nl = b.create(OpKind::For, ops, types, loop->attrs);
  nl->attrs["pv_overlap"] = true;
  Block* nb = nl->addRegion();
  ValueMap map;
  for (auto& a : body.args()) map[a.get()] = nb->addArg(a->type(), a->nameHint);
  Value* pPrev = nb->addArg(pt, "p_prev");
  Value* vPrev = nb->addArg(vt, "v_prev");
  Value* have = nb->addArg(i1, "have_prev");
  Builder lb(nb, loop->loc());
  // The previous iteration's PV, and the release of its slot: if there was one.
  auto finishPrevious = [&](Builder& at_, Value* flag, Value* p, Value* v, Value* accIn, Value* index) {
    at_.setLoc(pv->loc());
    Op* iff = at_.create(OpKind::If, {flag}, {at});
    Block* t = iff->addRegion();
    Builder tb(t, pv->loc());
    Value* r = tb.op1(OpKind::Dot, {p, v, accIn}, at, pv->attrs);
    r->nameHint = pv->result()->nameHint;
    tb.setLoc(consumed->loc());
    tb.create(OpKind::ArefConsumed, {consumed->operand(0), index}, {});
    tb.create(OpKind::Yield, {r}, {});
    Block* e = iff->addRegion();
    Builder(e, pv->loc()).create(OpKind::Yield, {accIn}, {});
    iff->result()->nameHint = "acc_done";
    return iff->result();
  };
  for (auto& op : body.ops()) {
    if (op.get() == pv || op.get() == consumed) continue;
    if (op.get() == yield) {
      std::vector<Value*> ys;
      for (size_t y = 0; y < yield->numOperands(); ++y) ys.push_back(y == k ? mapped(map, pv->operand(2)) : mapped(map, yield->operand(y)));
      ys.push_back(mapped(map, pv->operand(0)));
      ys.push_back(mapped(map, pv->operand(1)));
      ys.push_back(lb.constInt(1, i1));
      lb.setLoc(yield->loc());
      lb.create(OpKind::Yield, ys, {});
      continue;
    }
    cloneOp(lb, *op, map);
    if (op.get() == qk) {
      Value* i = mapped(map, idx);
      Value* prevIdx = lb.op1(OpKind::Sub, {i, lb.constInt(1, i->type())}, i->type());
      map[acc] = finishPrevious(lb, have, pPrev, vPrev, map.at(acc), prevIdx);
    }
  }
  // After the loop: the last PV.
  auto& blk = loop->parent->ops();
  auto pos = std::find_if(blk.begin(), blk.end(), [&](auto& o) { return o.get() == loop; });
  Builder ab(loop->parent, loop->loc());
  ab.setInsertionPointBefore(std::next(pos)->get());
  const Type& it = idx->type();
  Value *lo = loop->operand(0), *hi = loop->operand(1), *st = loop->operand(2);
  Value* span = ab.op1(OpKind::Add, {ab.op1(OpKind::Sub, {hi, lo}, it), ab.op1(OpKind::Sub, {st, ab.constInt(1, it)}, it)}, it);
  size_t n = loop->numResults();
  Value* last = ab.op1(OpKind::Sub, {counter ? nl->result(static_cast<size_t>(idx->index() - 1)) : ab.op1(OpKind::Div, {span, st}, it),
                                     ab.constInt(1, it)},
                       it);
  Value* accOut = finishPrevious(ab, nl->result(n + 2), nl->result(n), nl->result(n + 1), nl->result(k), last);
  for (size_t y = 0; y < n; ++y) replaceAllUsesWith(*loop->parent, loop->result(y), y == k ? accOut : nl->result(y));
  loop->parent->erase(loop);
  return nl;
}

}  // namespace

void pipeline(Module& m, const PassOptions& opt) {
  auto say = [&](const std::string& s) {
    if (opt.explain) *opt.explain << s << "\n";
  };
  for (auto& f : m.funcs)
    for (auto& region : f->body.ops()) {
      if (region->kind() != OpKind::WgRegion || region->strAttr("role") != "consumer") continue;
      std::vector<Op*> loops;  // the consumer's loops, a persistent tile loop's inner loop included
      walk(*region->region(0), [&](Op* op) {
        if (op->kind() == OpKind::For) loops.push_back(op);
      });
      // Inner loops first: rewriting a loop replaces it, so its parent must still be live.
      for (auto lit = loops.rbegin(); lit != loops.rend(); ++lit) {
        Op* op = *lit;
        Block& body = *op->region(0);
        int dots = 0, async = 0;
        int64_t depth = std::numeric_limits<int64_t>::max();
        std::string why;
        const Op* computedB = nullptr;  // a tile.dot whose B is computed in registers, not read from a slot
        for (auto& inner : body.ops()) {
          if (inner->kind() != OpKind::Dot) continue;
          // A and B from one slot (as lower-aref makes them one wgmma straight from the ring).
          Value *pa = arefPayload(inner->operand(0)), *pb = arefPayload(inner->operand(1));
          if (pa && ir::computedTile(inner->operand(1)) && !computedB) computedB = inner.get();
          if (!pa || !pb || pa->definingOp() != pb->definingOp()) continue;
          const Op* get = pa->definingOp();
          ++dots;
          depth = std::min(depth, get->operand(0)->type().shape[0]);
          std::string reason;
          if (inner->numOperands() == 3 && onlyCarried(inner->result(), body, reason)) {
            inner->attrs["async"] = true;
            ++async;
          } else {
            why = reason.empty() ? "the MMA has no accumulator" : reason;
          }
        }
        if (dots == 0) {
          std::string reason;
          if (Op* nl = overlapPv(op, reason))
            say("@" + f->name + ": consumer loop at " + nl->loc().str() +
                ": the PV MMA of iteration j-1 now follows the QK^T MMA of iteration j (overlapping its softmax); "
                "V's slot j-1 is released after it");
          else if (computedB)  // a GEMM whose B the consumer computes (dequantized weights): not attention
            say("@" + f->name + ": consumer loop at " + op->loc().str() + ": MMA depth 0: B of the tile.dot at " +
                computedB->loc().str() + " is computed in registers and staged by the consumer in one buffer, which its next "
                "staging overwrites only after the MMA reading it completed");
          else if (reason != "the loop does not get aref slots")
            say("@" + f->name + ": consumer loop at " + op->loc().str() + ": PV not overlapped: " + reason);
          continue;
        }
        int64_t p = async == dots ? opt.mmaDepth : 0;
        // A slot is released P iterations late, and the producer runs at most D slots ahead: P < D.
        if (p >= depth) {
          why = "MMA depth " + std::to_string(p) + " needs more than " + std::to_string(depth) +
                " aref slot(s); it is lowered to " + std::to_string(depth - 1);
          p = depth - 1;
        }
        op->attrs["mma_depth"] = p;
        say("@" + f->name + ": consumer loop at " + op->loc().str() + ": MMA depth " + std::to_string(p) +
            (p == opt.mmaDepth ? "" : " (" + why + ")"));
      }
    }
}

}  // namespace tawa::transforms
