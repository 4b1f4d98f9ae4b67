#include "transforms/ProgramOrder.h"

#include <map>
#include <optional>
#include <ostream>
#include <vector>

#include "ir/Builder.h"

namespace tawa::transforms {

using namespace ir;

namespace {

// How a scalar varies with program_id(0): not at all, increasing, decreasing (both weakly), or in a
// way this analysis does not follow.
enum class Trend { Constant, Increasing, Decreasing, Unknown };

Trend negate(Trend t) {
  return t == Trend::Increasing ? Trend::Decreasing : t == Trend::Decreasing ? Trend::Increasing : t;
}
Trend plus(Trend a, Trend b) {
  if (a == Trend::Constant) return b;
  if (b == Trend::Constant || a == b) return a;
  return Trend::Unknown;
}

class Orderer {
 public:
  Orderer(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    std::vector<Op*> pids;  // every tile.program_id {axis = 0}: all of them are reversed, or none
    const Op* blocker = nullptr;
    walk(f_.body, [&](Op* op) {
      if (op->kind() == OpKind::ProgramId && op->intAttr("axis") == 0) pids.push_back(op);
      if (!blocker && (op->kind() == OpKind::Atomic || op->kind() == OpKind::Barrier || op->kind() == OpKind::While ||
                       op->kind() == OpKind::WgRegion))
        blocker = op;
    });
    if (pids.empty()) return;
    if (blocker)
      return say("launch order kept: " + std::string(blocker->name()) + " at " + blocker->loc().str() +
                 (blocker->kind() == OpKind::WgRegion ? " (already warp-specialized)" : " could observe the programs' order"));
    for (auto& op : f_.body.ops()) {
      if (op->kind() != OpKind::For) continue;
      Trend lb = trend(op->operand(0)), ub = trend(op->operand(1));
      const std::optional<int64_t> step = intConstant(op->operand(2));
      const bool positive = step && *step > 0;
      bool grows = positive && ((ub == Trend::Increasing && (lb == Trend::Constant || lb == Trend::Decreasing)) ||
                                (ub == Trend::Constant && lb == Trend::Decreasing));
      if (!grows) continue;
      for (Op* pid : pids) reverse(*pid);
      say("programs along grid axis 0 launch in reverse order, longest first: the loop at " + op->loc().str() +
          " runs more iterations for a larger tile.program_id {axis = 0} (--keep-program-order keeps the order as written)");
      return;
    }
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << "program-order: @" << f_.name << ": " << s << "\n";
  }

  Trend trend(const Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    Trend t = compute(v);
    memo_[v] = t;
    return t;
  }
  // The trend of x * c or x / c for a nonzero integer constant c, given x's.
  static Trend scaled(Trend x, int64_t c) { return c < 0 ? negate(x) : x; }
  Trend compute(const Value* v) {
    const Op* d = v->definingOp();
    if (!d) return Trend::Constant;  // a kernel argument or a block argument outside the grid's reach
    if (d->kind() == OpKind::ProgramId) return d->intAttr("axis") == 0 ? Trend::Increasing : Trend::Constant;
    if (!v->type().isScalar()) return Trend::Unknown;
    switch (d->kind()) {
      case OpKind::Constant: return Trend::Constant;
      case OpKind::Add: return plus(trend(d->operand(0)), trend(d->operand(1)));
      case OpKind::Sub: return plus(trend(d->operand(0)), negate(trend(d->operand(1))));
      case OpKind::Mul:
        for (size_t k = 0; k < 2; ++k)
          if (auto c = intConstant(d->operand(1 - k)); c && *c != 0) return scaled(trend(d->operand(k)), *c);
        break;
      case OpKind::Div:
      case OpKind::FloorDiv:
        if (auto c = intConstant(d->operand(1)); c && *c != 0) return scaled(trend(d->operand(0)), *c);
        break;
      default: break;
    }
    // Anything else: constant when nothing it reads varies with the program id.
    for (const Value* o : d->operands)
      if (trend(o) != Trend::Constant) return Trend::Unknown;
    return d->regions().empty() ? Trend::Constant : Trend::Unknown;
  }

  // Every use of `pid` reads num_programs(0) - 1 - pid.
  void reverse(Op& pid) {
    Builder b(pid.parent, pid.loc());
    auto& ops = pid.parent->ops();
    for (auto it = ops.begin(); it != ops.end(); ++it)
      if (it->get() == &pid) {
        auto next = std::next(it);
        if (next != ops.end()) b.setInsertionPointBefore(next->get());
        break;
      }
    const Type& t = pid.result()->type();
    Value* n = b.op1(OpKind::NumPrograms, {}, t, {{"axis", int64_t{0}}});
    Value* last = b.op1(OpKind::Sub, {n, b.constInt(1, t)}, t);
    Value* reversed = b.op1(OpKind::Sub, {last, pid.result()}, t);
    reversed->nameHint = pid.result()->nameHint.empty() ? "pid_reversed" : pid.result()->nameHint + "_reversed";
    Op* keep = reversed->definingOp();
    // Replace the uses, then give the new sub its operand back.
    replaceAllUsesWith(f_.body, pid.result(), reversed);
    keep->operands[1] = pid.result();
  }

  Func& f_;
  const PassOptions& opt_;
  std::map<const Value*, Trend> memo_;
};

}  // namespace

void programOrder(Module& m, const PassOptions& opt) {
  if (opt.keepProgramOrder || opt.persistent > 0) return;
  for (auto& f : m.funcs) Orderer(*f, opt).run();
}

}  // namespace tawa::transforms
