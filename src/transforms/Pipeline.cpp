#include "transforms/Pipeline.h"

#include <algorithm>
#include <limits>
#include <ostream>

namespace tawa::transforms {

using namespace ir;

namespace {

// Whether `v` (a dot's result inside `body`) is used only as the loop's yielded value, which in
// turn is used only as the accumulator of dots or after the loop.
bool onlyCarried(const Value* v, const Block& body, const Op& loop, std::string& why) {
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
  (void)loop;
  return ok;
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
      for (Op* op : loops) {
        Block& body = *op->region(0);
        int dots = 0, async = 0;
        int64_t depth = std::numeric_limits<int64_t>::max();
        std::string why;
        for (auto& inner : body.ops()) {
          if (inner->kind() != OpKind::Dot) continue;
          bool fromAref = true;
          for (size_t k = 0; k < 2; ++k) {
            const Op* d = inner->operand(k)->definingOp();
            fromAref = fromAref && d && d->kind() == OpKind::ArefGet;
          }
          if (!fromAref) continue;
          ++dots;
          depth = std::min(depth, inner->operand(0)->definingOp()->operand(0)->type().shape[0]);
          std::string reason;
          if (inner->numOperands() == 3 && onlyCarried(inner->result(), body, *op, reason)) {
            inner->attrs["async"] = true;
            ++async;
          } else {
            why = reason.empty() ? "the MMA has no accumulator" : reason;
          }
        }
        if (dots == 0) continue;
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
