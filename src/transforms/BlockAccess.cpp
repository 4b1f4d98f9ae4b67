#include "transforms/BlockAccess.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>

#include "ir/Builder.h"
#include "ir/Clone.h"

namespace tawa::transforms {

using namespace ir;

namespace {

// ---- symbolic integer polynomials
//
// A monomial is a sorted list of atom ids; ids below kIndexVars are the position index i_d of tile
// dimension d, the others are scalar atoms (a value, or the trip index of a loop).
constexpr int kIndexVars = 16;
using Mono = std::vector<int>;

struct Sym {
  std::map<Mono, int64_t> t;  // monomial -> non-zero coefficient

  static Sym constant(int64_t c) {
    Sym s;
    if (c) s.t[{}] = c;
    return s;
  }
  static Sym atom(int id) {
    Sym s;
    s.t[{id}] = 1;
    return s;
  }
  void addTerm(const Mono& m, int64_t c) {
    if (!c) return;
    int64_t& x = t[m];
    x += c;
    if (!x) t.erase(m);
  }
  Sym operator+(const Sym& o) const {
    Sym r = *this;
    for (auto& [m, c] : o.t) r.addTerm(m, c);
    return r;
  }
  Sym scaled(int64_t k) const {
    Sym r;
    for (auto& [m, c] : t) r.addTerm(m, c * k);
    return r;
  }
  Sym operator-(const Sym& o) const { return *this + o.scaled(-1); }
  Sym operator*(const Sym& o) const {
    Sym r;
    for (auto& [m1, c1] : t)
      for (auto& [m2, c2] : o.t) {
        Mono m = m1;
        m.insert(m.end(), m2.begin(), m2.end());
        std::sort(m.begin(), m.end());
        r.addTerm(m, c1 * c2);
      }
    return r;
  }
  bool operator==(const Sym& o) const { return t == o.t; }
  std::optional<int64_t> constValue() const {
    if (t.empty()) return 0;
    if (t.size() == 1 && t.begin()->first.empty()) return t.begin()->second;
    return std::nullopt;
  }
  bool hasIndex() const {
    for (auto& [m, c] : t)
      for (int a : m)
        if (a < kIndexVars) return true;
    return false;
  }
  // Renumbers index variables: f(d) is the new dimension, or -1 when i_d is always 0 there.
  Sym remapped(const std::function<int(int)>& f) const {
    Sym r;
    for (auto& [m, c] : t) {
      Mono n;
      bool zero = false;
      for (int a : m) {
        if (a >= kIndexVars) n.push_back(a);
        else if (int d = f(a); d < 0) zero = true;
        else n.push_back(d);
      }
      if (zero) continue;
      std::sort(n.begin(), n.end());
      r.addTerm(n, c);
    }
    return r;
  }
};

// Lanes of a tile that may differ from the original program: those with i_dim >= rel.
struct Taint {
  int dim;
  Sym rel;
  bool operator==(const Taint& o) const { return dim == o.dim && rel == o.rel; }
};
using Taints = std::vector<Taint>;

void addTaints(Taints& into, const Taints& from) {
  for (auto& t : from)
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
}
Taints remapTaints(const Taints& ts, const std::function<int(int)>& f) {
  Taints r;
  for (auto& t : ts)
    if (int d = f(t.dim); d >= 0) r.push_back({d, t.rel});
  return r;
}

struct IntV {
  Sym s;
  Taints taints;
};
struct PtrV {
  Value* base = nullptr;
  Sym off;  // in elements
  Taints taints;
};
struct PredV {
  std::vector<Sym> conj;  // each: poly < 0
  Taints taints;
};

// A recognized access, ready to rewrite.
struct Plan {
  Op* op = nullptr;
  bool store = false;
  bool reduce = false;  // a tl.atomic_add become a reduce-add block store
  Value* base = nullptr;
  Sym rest;                            // moved into the base
  bool wide = false;                   // the address is computed in 64 bits: so is `rest`
  std::vector<Sym> start, bound, stride;
  std::vector<std::vector<Sym>> alsoBound;  // per dimension, further bounds: the extent is the least (`(h < a) & (h < b)`)
  std::vector<bool> masked;
  std::optional<AttrValue> other;      // a 1-D load's constant `other` (tile.desc_load {other}): its out-of-bounds value
  Value* gather = nullptr;             // gathered rows: the index tile whose values are the rows (analyzeGather)
  std::vector<Sym> rowConj;            // with `gather`: mask conjuncts on the rows alone (poly < 0), folded into the rows
  bool transposed = false;             // with `gather`: the columns were gathered; the block is loaded as its transpose, then permuted
};

std::string at(const Op& op) { return std::string(op.name()) + " at " + op.loc().str(); }

class BlockAccess {
 public:
  BlockAccess(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    std::vector<Op*> accesses;
    walk(f_.body, [&](Op* op) {
      for (size_t k = 0; k < op->numOperands(); ++k) users_[op->operand(k)].push_back({op, k});
      if ((op->kind() == OpKind::Load || op->kind() == OpKind::Store) && op->operand(0)->type().isTile())
        accesses.push_back(op);
      if (op->kind() == OpKind::Atomic && op->operand(0)->type().isTile() && op->strAttr("kind") == "add") accesses.push_back(op);
    });
    int pos = 0;
    for (auto& op : f_.body.ops()) topPos_[op.get()] = pos++;
    std::vector<Plan> plans;
    for (Op* op : accesses) {
      why_.clear();
      if (auto p = analyze(op)) plans.push_back(std::move(*p));
      else say("block-access: " + at(*op) + ": not rewritten: " + why_);
    }
    if (plans.empty()) return;
    materializeAssumptions();
    for (auto& p : plans) rewrite(p);
    removeDeadCode();
    untieNestedCarriedPointers();
    removeDeadCarriedPointers();
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << s << "\n";
  }
  // False, with the reason `w` for explain (the first one given).
  bool refuse(const std::string& w) {
    if (why_.empty()) why_ = w;
    return false;
  }
  template <class T>
  std::optional<T> fail(const std::string& w) {
    if (why_.empty()) why_ = w;
    return std::nullopt;
  }

  // ---- atoms
  // The atom of a scalar the analysis does not expand. Value numbering: the result of a pure op whose
  // operands have the same symbolic values as those of an earlier atom's op of the same kind and
  // attributes is that atom, when the earlier value dominates this one (so either may stand for both
  // where an access is rebuilt). `tile // n` written once for the loads and again for the store is
  // then one atom, and the store's mask can be compared with the loads' clamps.
  int atomOf(Value* v) {
    auto it = valueAtom_.find(v);
    if (it != valueAtom_.end()) return it->second;
    auto key = atomKey(v);
    if (key)
      for (auto& [k, id] : atomKeys_) {
        if (!(k == *key)) continue;
        Value*& rep = atoms_[static_cast<size_t>(id - kIndexVars)].v;
        if (dominates(rep, v)) return valueAtom_[v] = id;
        if (dominates(v, rep)) {  // the earlier of the two stands for both
          rep = v;
          return valueAtom_[v] = id;
        }
      }
    int id = kIndexVars + static_cast<int>(atoms_.size());
    atoms_.push_back({v, nullptr});
    valueAtom_[v] = id;
    if (key) atomKeys_.push_back({std::move(*key), id});
    return id;
  }
  struct AtomKey {
    OpKind kind;
    std::map<std::string, AttrValue> attrs;
    std::vector<std::map<Mono, int64_t>> operands;
    bool operator==(const AtomKey&) const = default;
  };
  std::optional<AtomKey> atomKey(Value* v) {
    const Op* d = v->definingOp();
    if (!d || !isPure(d->kind()) || !d->regions().empty() || d->numResults() != 1 || !v->type().isScalar()) return std::nullopt;
    AtomKey k{d->kind(), d->attrs, {}};
    k.attrs.erase("assume_min");  // a hint on the value, not a difference in it
    const std::string why = why_;  // a failed operand is no reason to report for the access
    for (Value* o : d->operands) {
      auto s = o->type().isScalar() && o->type().elemIsInt() ? scalarSym(o) : std::nullopt;
      if (!s) {
        why_ = why;
        return std::nullopt;
      }
      k.operands.push_back(s->t);
    }
    return k;
  }
  // Whether the op defining `a` comes before the op defining `b` in a block that holds b's op or one
  // of its ancestors (structured control flow: then a's value is visible at b).
  static bool dominates(const Value* a, const Value* b) {
    const Op* da = a->definingOp();
    const Op* cur = b->definingOp();
    if (!da || !cur) return false;
    while (cur) {
      const Block* blk = cur->parent;
      if (!blk) return false;
      if (blk == da->parent) {
        for (const auto& op : blk->ops()) {
          if (op.get() == da) return true;
          if (op.get() == cur) return false;
        }
        return false;
      }
      cur = blk->parentOp;
    }
    return false;
  }
  int tripOf(Op* loop) {
    auto it = tripAtom_.find(loop);
    if (it != tripAtom_.end()) return it->second;
    int id = kIndexVars + static_cast<int>(atoms_.size());
    atoms_.push_back({nullptr, loop});
    tripAtom_[loop] = id;
    return id;
  }
  // ---- gathered rows (analyzeGather only): an index tile the analysis does not expand (a tile.load of
  // token ids, `ids // top_k`) whose shape varies along one dimension d is the gather atom (v, d):
  // its values, laid along d. Shape ops move d (shaped). Gather atoms never leave analyzeGather,
  // which accepts them only where it can rebuild what they stand for.
  std::optional<int> gatherAtom(Value* v) {
    const Type& t = v->type();
    int dim = -1;
    for (int d = 0; d < t.rank(); ++d)
      if (t.shape[static_cast<size_t>(d)] != 1) {
        if (dim >= 0) return std::nullopt;
        dim = d;
      }
    if (dim < 0) return std::nullopt;
    return gatherAtomOf(v, dim);
  }
  int gatherAtomOf(Value* v, int dim) {
    auto [it, fresh] = gatherAtoms_.try_emplace({v, dim}, 0);
    if (fresh) {
      it->second = kIndexVars + static_cast<int>(atoms_.size());
      atoms_.push_back({v, nullptr, dim});
    }
    return it->second;
  }
  // In gather mode, a mask tile the analysis cannot read as bounds (`ids != pad`, an i8 flag tested,
  // a `where`) that varies along one dimension is the conjunct `-G < 0` of its gather atom G (the
  // tile as 0 or 1): analyzeGather folds such a conjunct on the rows into the gathered rows exactly.
  std::optional<PredV> rowPredicate(Value* v) {
    auto g = gatherAtom(v);
    if (!g) return std::nullopt;
    return PredV{{Sym::constant(0) - Sym::atom(*g)}, {}};
  }
  // Gather mode for a scope: the values evaluated in it (with gather atoms) are forgotten after it.
  struct GatherMode {
    BlockAccess& a;
    bool mode;
    std::map<const Value*, IntV> ints;
    std::map<const Value*, PtrV> ptrs;
    explicit GatherMode(BlockAccess& b) : a(b), mode(b.gatherMode_), ints(b.ints_), ptrs(b.ptrs_) { a.gatherMode_ = true; }
    ~GatherMode() {
      a.gatherMode_ = mode;
      a.ints_ = std::move(ints);
      a.ptrs_ = std::move(ptrs);
    }
  };
  bool isGather(int id) const { return id >= kIndexVars && atoms_[static_cast<size_t>(id - kIndexVars)].gatherDim >= 0; }
  // s after a shape op that renumbers dimensions by f: its index variables and its gather atoms' dimensions.
  Sym shaped(const Sym& s, const std::function<int(int)>& f) {
    Sym r = s.remapped(f);
    if (gatherAtoms_.empty()) return r;
    Sym out;
    for (auto& [m, c] : r.t) {
      Mono n;
      for (int a : m) {
        if (!isGather(a)) {
          n.push_back(a);
          continue;
        }
        const AtomInfo info = atoms_[static_cast<size_t>(a - kIndexVars)];
        const int d = f(info.gatherDim);
        if (d < 0) gatherBroken_ = true;
        n.push_back(d < 0 ? a : gatherAtomOf(info.v, d));
      }
      std::sort(n.begin(), n.end());
      out.addTerm(n, c);
    }
    return out;
  }

  static Op* loopOfIv(const Value* v) {
    Block* b = v->ownerBlock();
    if (v->definingOp() || !b || !b->parentOp || b->parentOp->kind() != OpKind::For || v->index() != 0) return nullptr;
    return b->parentOp;
  }

  // A scalar carried by a tile.for that each iteration advances by a value from outside the loop
  // (yield = c + s): init + t * s, t the trip index; one it yields unchanged is its initial value (Triton's persistent tutorial keeps its epilogue's
  // tile index so, one step behind the loop's own).
  std::optional<Sym> carriedCounter(Value* v) {
    const Block* body = v->ownerBlock();
    const Op* loop = body ? body->parentOp : nullptr;
    if (v->definingOp() || !loop || loop->kind() != OpKind::For || v->index() == 0 || !v->type().isScalar()) return std::nullopt;
    const auto k = static_cast<size_t>(v->index() - 1);
    const Op* yield = body->terminator();
    if (!yield || k >= yield->numOperands()) return std::nullopt;
    if (yield->operand(k) == v) return scalarSym(loop->operand(3 + k));  // carried unchanged: its initial value
    const Op* add = yield->operand(k)->definingOp();
    if (!add || add->kind() != OpKind::Add || add->parent != body) return std::nullopt;
    Value* step = add->operand(0) == v ? add->operand(1) : add->operand(1) == v ? add->operand(0) : nullptr;
    if (!step) return std::nullopt;
    if (!intConstant(step)) {  // a constant may be written in the loop; anything else must come from outside it
      for (const Op* d = step->definingOp(); d; d = d->parent ? d->parent->parentOp : nullptr)
        if (d == loop) return std::nullopt;
      if (step->ownerBlock() == body) return std::nullopt;
    }
    auto init = scalarSym(loop->operand(3 + k));
    auto s = scalarSym(step);
    if (!init || !s) return std::nullopt;
    return *init + Sym::atom(tripOf(const_cast<Op*>(loop))) * *s;
  }

  // An index tile carried by a tile.for and advanced by the same loop-invariant amount in every lane
  // (vLLM's scaled_mm: `offsets_k += BLOCK_SIZE_K`, read by the K mask): init + t * step, t the trip
  // index, as carriedCounter for a scalar.
  std::optional<IntV> carriedTile(Value* v) {
    const Block* body = v->ownerBlock();
    Op* loop = body ? body->parentOp : nullptr;
    if (!loop || loop->kind() != OpKind::For || v->index() == 0)
      return fail<IntV>("an index tile carried by a loop other than a tile.for");
    const auto k = static_cast<size_t>(v->index() - 1);
    const Op* yield = body->terminator();
    if (!yield || k >= yield->numOperands()) return fail<IntV>("an index tile carried by a loop");
    Value* init = loop->operand(3 + k);
    if (yield->operand(k) == v) return evalInt(init);  // carried unchanged
    const Op* add = yield->operand(k)->definingOp();
    Value* step = !add || add->kind() != OpKind::Add || add->parent != body ? nullptr
                  : add->operand(0) == v                                     ? add->operand(1)
                  : add->operand(1) == v                                     ? add->operand(0)
                                                                             : nullptr;
    if (!step) return fail<IntV>("the index tile carried by " + at(*loop) + " is not advanced as itself + step");
    auto a = evalInt(init);
    if (!a) return std::nullopt;
    auto b = evalInt(step);
    if (!b) return std::nullopt;
    if (b->s.hasIndex() || !b->taints.empty())
      return fail<IntV>("the step of the index tile carried by " + at(*loop) + " differs between lanes");
    for (auto& [m, c] : b->s.t)
      for (int id : m) {
        const AtomInfo& info = atoms_[static_cast<size_t>(id - kIndexVars)];
        const Value* w = info.v;
        bool inside = info.loop == loop;
        for (const Block* blk = !w ? nullptr : w->definingOp() ? w->definingOp()->parent : w->ownerBlock(); blk && !inside;
             blk = blk->parentOp ? blk->parentOp->parent : nullptr)
          inside = blk->parentOp == loop;
        if (inside)
          return fail<IntV>("the step of the index tile carried by " + at(*loop) + " changes within the loop");
      }
    return IntV{a->s + Sym::atom(tripOf(loop)) * b->s, a->taints};
  }

  // ---- sign analysis: is a scalar provably >= 0? (i32 kernel arguments are assumed to be.) Through
  // a lower bound, so that `x + c1 - c2` with c1 >= c2 (how tl.cdiv lowers: (x + d) - 1) is known
  // non-negative too.
  bool nonNeg(const Value* v) {
    auto lb = lowerBound(v, 0);
    return lb && *lb >= 0;
  }
  // A lower bound of a scalar's value, or nullopt when none is known. Bounds stay far from int64's
  // limits (the IR's integers are at most 64-bit; the analysis gives up on anything larger).
  static std::optional<int64_t> sane(std::optional<int64_t> x) {
    constexpr int64_t kLimit = int64_t{1} << 40;
    if (!x || *x > kLimit || *x < -kLimit) return std::nullopt;
    return x;
  }
  std::optional<int64_t> lowerBound(const Value* v, int depth) {
    if (depth > 64) return std::nullopt;
    if (auto c = intConstant(v)) return sane(*c);
    const Op* d = v->definingOp();
    if (!d) {
      if (v->ownerBlock() == &f_.body) return v->type().elemIsInt() ? std::optional<int64_t>(0) : std::nullopt;
      // An induction variable is at least its lower bound when its step is non-negative.
      if (Op* loop = loopOfIv(v)) {
        auto step = lowerBound(loop->operand(2), depth + 1);
        return step && *step >= 0 ? lowerBound(loop->operand(0), depth + 1) : std::nullopt;
      }
      return std::nullopt;
    }
    // tl.assume(x >= c) left its bound on x's defining op (the front end's `assume_min`).
    if (auto a = d->attrs.find("assume_min"); a != d->attrs.end())
      if (auto* m = std::get_if<int64_t>(&a->second)) {
        auto derived = lowerBoundOf(*d, depth);
        return derived ? std::max(*derived, *m) : *m;
      }
    return lowerBoundOf(*d, depth);
  }
  std::optional<int64_t> lowerBoundOf(const Op& op, int depth) {
    const Op* d = &op;
    auto lb = [&](size_t i) { return lowerBound(d->operand(i), depth + 1); };
    switch (d->kind()) {
      case OpKind::ProgramId: case OpKind::NumPrograms: return 0;
      case OpKind::Add: {
        auto a = lb(0), b = lb(1);
        return a && b ? sane(*a + *b) : std::nullopt;
      }
      case OpKind::Sub: {  // a - c for a constant c
        auto a = lb(0);
        auto c = intConstant(d->operand(1));
        return a && c ? sane(*a - *c) : std::nullopt;
      }
      case OpKind::Mul: {
        auto a = lb(0), b = lb(1);
        return a && b && *a >= 0 && *b >= 0 ? sane(*a * *b) : std::nullopt;
      }
      case OpKind::Div: case OpKind::FloorDiv: {  // of non-negative values: non-negative; else |a / b| <= |a|
        auto a = lb(0), b = lb(1);
        if (a && b && *a >= 0 && *b >= 0) return 0;
        return magnitude(d->operand(0), depth);
      }
      case OpKind::Rem: {  // C's remainder has the dividend's sign, and |a % b| <= |a|
        auto a = lb(0);
        return a && *a >= 0 ? std::optional<int64_t>(0) : magnitude(d->operand(0), depth);
      }
      case OpKind::Min: {
        auto a = lb(0), b = lb(1);
        return a && b ? std::optional<int64_t>(std::min(*a, *b)) : std::nullopt;
      }
      case OpKind::Max: {
        auto a = lb(0), b = lb(1);
        if (a && b) return std::max(*a, *b);
        return a ? a : b;
      }
      case OpKind::Select: {
        auto a = lb(1), b = lb(2);
        return a && b ? std::optional<int64_t>(std::min(*a, *b)) : std::nullopt;
      }
      case OpKind::Cast:  // an integer widened keeps its value
        return isWidening(*d) ? lb(0) : std::nullopt;
      default: return std::nullopt;
    }
  }
  // -max|v| from v's bounds (a lower bound of a quotient or remainder of v), or nullopt.
  std::optional<int64_t> magnitude(const Value* v, int depth) {
    auto lo = lowerBound(v, depth + 1);
    auto hi = lo ? upperBound(v, depth + 1) : std::nullopt;
    return lo && hi ? std::optional<int64_t>(-std::max(std::abs(*lo), std::abs(*hi))) : std::nullopt;
  }
  static bool isWidening(const Op& cast) {
    const Scalar from = cast.operand(0)->type().scalar, to = cast.result()->type().scalar;
    return ir::isInt(from) && ir::isInt(to) && !ir::isUnsigned(from) && !ir::isUnsigned(to) && bitWidth(from) <= bitWidth(to) &&
           from != Scalar::I1;
  }
  // An upper bound of a scalar integer's value, or nullopt (the counterpart of lowerBound, for i64
  // index values FlagGems computes from widened program ids: `pid_n = (pid % width) // group`). A
  // quotient or remainder is at most its dividend in magnitude whatever the divisor's sign (dividing by
  // zero is undefined).
  std::optional<int64_t> upperBound(const Value* v, int depth) {
    if (depth > 64) return std::nullopt;
    if (auto c = intConstant(v)) return sane(*c);
    const Op* d = v->definingOp();
    constexpr int64_t i32Max = 2147483647;
    if (!d) {
      if (v->ownerBlock() == &f_.body && v->type().scalar == Scalar::I32) return i32Max;  // an i32 argument
      if (Op* loop = loopOfIv(v)) {  // below the loop's bound when its step is positive
        auto step = lowerBound(loop->operand(2), depth + 1);
        return step && *step > 0 ? upperBound(loop->operand(1), depth + 1) : std::nullopt;
      }
      return std::nullopt;
    }
    auto ub = [&](size_t i) { return upperBound(d->operand(i), depth + 1); };
    auto lb = [&](size_t i) { return lowerBound(d->operand(i), depth + 1); };
    switch (d->kind()) {
      case OpKind::ProgramId: case OpKind::NumPrograms: return d->intAttr("axis") == 0 ? i32Max : 65535;  // the grid's limits
      case OpKind::Cast: return isWidening(*d) ? ub(0) : std::nullopt;
      case OpKind::Add: {
        auto a = ub(0), b = ub(1);
        return a && b ? sane(*a + *b) : std::nullopt;
      }
      case OpKind::Sub: {
        auto a = ub(0), b = lb(1);
        return a && b ? sane(*a - *b) : std::nullopt;
      }
      case OpKind::Mul: {
        auto a = ub(0), b = ub(1), la = lb(0), lbb = lb(1);
        return a && b && la && lbb && *la >= 0 && *lbb >= 0 ? sane(*a * *b) : std::nullopt;
      }
      case OpKind::Div: case OpKind::FloorDiv: case OpKind::Rem: {  // |a / b| and |a % b| are at most |a| (b != 0)
        const auto mag = magnitude(d->operand(0), depth);
        if (!mag) return std::nullopt;
        int64_t m = -*mag;
        if (auto la = lb(0); d->kind() == OpKind::Rem && la && *la >= 0)  // then also below a non-negative divisor
          if (auto b = ub(1), lbb = lb(1); b && lbb && *lbb >= 0) m = std::min(m, *b - 1);
        return m;
      }
      case OpKind::Min: {
        auto a = ub(0), b = ub(1);
        if (a && b) return std::min(*a, *b);
        return a ? a : b;
      }
      case OpKind::Max: {
        auto a = ub(0), b = ub(1);
        return a && b ? std::optional<int64_t>(std::max(*a, *b)) : std::nullopt;
      }
      case OpKind::Select: {
        auto a = ub(1), b = ub(2);
        return a && b ? std::optional<int64_t>(std::max(*a, *b)) : std::nullopt;
      }
      default: return std::nullopt;
    }
  }
  bool nonNegMono(const Mono& m, int64_t c) {
    if (c < 0) return false;
    for (int a : m) {
      if (a < kIndexVars) continue;
      const auto& info = atoms_[static_cast<size_t>(a - kIndexVars)];
      if (info.v && !nonNeg(info.v) && !assumed_.count(a)) return false;
    }
    return true;
  }
  // A wrapped offset `(start + arange) % M` is exact on its first M - start lanes when start >= 0.
  // Where the analysis cannot prove it (a program id remapped by grouped ordering, tl.swizzle2d: only
  // the launch's grid bounds it), the scalars it rests on are assumed non-negative, and the rewrite
  // reads them through tile.assume, which stops the program where one is negative (the executor's
  // error, a trap on the device). False when a term is negative or rests on a non-integer value.
  bool assume(const Sym& start, const Op& rem) {
    std::set<int> need;
    for (auto& [m, c] : start.t) {
      if (c < 0) return false;
      for (int a : m) {
        if (a < kIndexVars) continue;
        const auto& info = atoms_[static_cast<size_t>(a - kIndexVars)];
        if (!info.v || nonNeg(info.v) || assumed_.count(a)) continue;
        if (!info.v->type().isScalar() || !info.v->type().elemIsInt()) return false;
        need.insert(a);
      }
    }
    for (int a : need) {
      assumed_.emplace(a, &rem);
      const Value* v = atoms_[static_cast<size_t>(a - kIndexVars)].v;
      say("block-access: assuming " + (v->nameHint.empty() ? std::string("a value") : "'" + v->nameHint + "'") +
          (v->definingOp() ? " (" + at(*v->definingOp()) + ")" : std::string()) + " >= 0 for " + at(rem) +
          ", checked where the program runs (tile.assume)");
    }
    return true;
  }
  // The assumptions made, as tile.assume right after each value; the rewrite reads the checked value.
  void materializeAssumptions() {
    for (auto& [a, rem] : assumed_) {
      AtomInfo& info = atoms_[static_cast<size_t>(a - kIndexVars)];
      Value* v = info.v;
      Op* def = v->definingOp();
      Block* blk = def ? def->parent : const_cast<Block*>(v->ownerBlock());
      Builder b(blk, rem->loc());
      Op* next = nullptr;
      if (def) {
        for (auto it = blk->ops().begin(); it != blk->ops().end(); ++it)
          if (it->get() == def) {
            next = std::next(it)->get();
            break;
          }
      } else {
        next = blk->ops().front().get();
      }
      b.setInsertionPointBefore(next);
      Value* r = b.op1(OpKind::Assume, {v}, v->type(),
                       {{"min", int64_t{0}}, {"why", std::string("the start of the offset wrapped by '%' at ") + rem->loc().str() +
                                                          ", read as a block (a negative start reads before the tensor)"}});
      r->nameHint = v->nameHint;
      if (def && topPos_.count(def)) topPos_[r->definingOp()] = topPos_.at(def);
      valueAtom_[r] = a;
      info.v = r;
    }
  }

  // ---- symbolic evaluation
  std::optional<Sym> scalarSym(Value* v) {
    auto r = evalInt(v);
    if (!r) return std::nullopt;
    return r->s;
  }

  std::optional<IntV> evalInt(Value* v) {
    if (auto it = ints_.find(v); it != ints_.end()) return it->second;
    auto r = evalIntUncached(v);
    if (r) ints_[v] = *r;
    return r;
  }
  std::optional<IntV> evalIntUncached(Value* v) {
    const Type& ty = v->type();
    if (!ty.isData() || (ty.scalar != Scalar::I32 && ty.scalar != Scalar::I64))
      return fail<IntV>("index arithmetic in " + ty.str() + " (only i32 and i64 index tiles are analyzed)");
    Op* d = v->definingOp();
    // 64-bit index arithmetic (`offs.to(tl.int64) * stride`, written so that large offsets do not
    // wrap): its leaves must be 32-bit values widened (`.to(tl.int64)`) or constants; the polynomial
    // is exact, and the part that moves the descriptor's base is materialized in 64 bits (Plan::wide).
    if (ty.scalar == Scalar::I64) {
      if (d && d->kind() == OpKind::Cast) {
        const Scalar from = d->operand(0)->type().scalar;
        if (from != Scalar::I32 && from != Scalar::I64)
          return fail<IntV>(at(*d) + " widens a " + std::string(scalarName(from)) + " value (only i32 index values are widened)");
        return evalInt(d->operand(0));
      }
      // An i64 kernel argument (`stride: tl.int64`, mamba's chunked kernels) stands for itself: it
      // may scale the position (a 64-bit stride) or move the base (materialized in 64 bits), never
      // be a coordinate or a bound unless it is bounded to 32 bits (narrow(), checked on the plan).
      if (!d && !ty.isTile() && v->ownerBlock() == &f_.body) return IntV{Sym::atom(atomOf(v)), {}};
      if (Op* loop = loopOfIv(v))  // a trip index is 32-bit
        return fail<IntV>("the index of " + at(*loop) + " is 64-bit (its bounds are i64 values): its trip count is not bounded to 32 bits");
      if (!d && ty.isTile()) return carriedTile(v);
      if (!d || (!ty.isTile() && d->kind() != OpKind::Constant && !isElementwise(d->kind())))
        return fail<IntV>("an i64 index value that is not computed from i32 values widened with .to(tl.int64)" +
                          (d ? " (" + at(*d) + ")" : std::string()));
    }
    if (!d) {
      if (ty.isTile()) return carriedTile(v);
      if (Op* loop = loopOfIv(v))
        if (auto st = intConstant(loop->operand(2)); st && *st != 0) {  // iv = lb + step * t
          auto lb = scalarSym(loop->operand(0));
          if (!lb) return std::nullopt;
          return IntV{*lb + Sym::atom(tripOf(loop)).scaled(*st), {}};
        }
      if (auto c = carriedCounter(v)) return IntV{*c, {}};
      return IntV{Sym::atom(atomOf(v)), {}};
    }
    auto bin = [&](auto f) -> std::optional<IntV> {
      auto a = evalInt(d->operand(0));
      if (!a) return std::nullopt;
      auto b = evalInt(d->operand(1));
      if (!b) return std::nullopt;
      IntV r{f(a->s, b->s), a->taints};
      addTaints(r.taints, b->taints);
      return r;
    };
    switch (d->kind()) {
      case OpKind::Constant:
        return IntV{Sym::constant(std::get<int64_t>(d->attrs.at("value"))), {}};
      case OpKind::Arange:
        return IntV{Sym::constant(d->intAttr("start")) + Sym::atom(0), {}};
      case OpKind::Splat:
        return evalInt(d->operand(0));
      case OpKind::Add: return bin([](const Sym& a, const Sym& b) { return a + b; });
      case OpKind::Sub: return bin([](const Sym& a, const Sym& b) { return a - b; });
      case OpKind::Mul: return bin([](const Sym& a, const Sym& b) { return a * b; });
      case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::Permute: {
        auto a = evalInt(d->operand(0));
        if (!a) return std::nullopt;
        auto f = shapeMap(*d);
        return IntV{shaped(a->s, f), remapTaints(a->taints, f)};
      }
      default:
        break;
    }
    if (!ty.isTile()) {
      // An i64 scalar that is not a polynomial of widened i32 values stands for itself where its
      // value provably fits in 32 bits (the descriptor's coordinates are 32-bit).
      if (ty.scalar == Scalar::I64 && !fits32(v))
        return fail<IntV>("the i64 index value of " + at(*d) + " is not computed from widened i32 values, nor bounded to 32 bits");
      return IntV{Sym::atom(atomOf(v)), {}};
    }
    // In gather mode an index tile that is not such a clamp (`tl.where(valid, ids, 0)`) is a gather atom.
    if (gatherMode_ && (d->kind() == OpKind::Rem || d->kind() == OpKind::Min || d->kind() == OpKind::Select)) {
      const std::string saved = why_;
      const bool wasGatherMode = gatherMode_;
      gatherMode_ = false;  // the clamp's own analysis, as outside gather mode
      auto c = clampOf(v, d);
      gatherMode_ = wasGatherMode;
      if (c) return c;
      why_ = saved;
      if (auto g = gatherAtom(v)) return IntV{Sym::atom(*g), {}};
      return clampOf(v, d);
    }
    return clampOf(v, d);
  }
  // `(s + arange(0, B)) % m` with m a constant multiple of B and s a non-negative multiple of B (vLLM's
  // and lmdeploy's MoE kernels: `(pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N`, N a constexpr): the
  // block never straddles a multiple of m, so it is `s % m + arange(0, B)`, no lane wrapped. The
  // scalar `s % m` is made next to the tile's remainder and stands for the block's start.
  std::optional<IntV> wholeBlocks(Op* d, const IntV& x, const IntV& m, int dim, const Sym& c) {
    const auto mc = m.s.constValue();
    const Type& t = d->result()->type();
    if (!mc || *mc <= 0 || !x.taints.empty() || !m.taints.empty() || dim >= t.rank()) return std::nullopt;
    const int64_t block = t.shape[static_cast<size_t>(dim)];
    if (*mc % block != 0 || !nonNegSym(c)) return std::nullopt;
    for (auto& [mono, k] : c.t)
      if (k % block != 0) return std::nullopt;
    // The start as a scalar: the splat in `splat(s) + arange`.
    const Op* add = d->operand(0)->definingOp();
    if (!add || add->kind() != OpKind::Add) return std::nullopt;
    Value* start = nullptr;
    for (Value* o : add->operands)
      if (const Op* sp = o->definingOp(); sp && sp->kind() == OpKind::Splat) start = sp->operand(0);
    if (!start) return std::nullopt;
    auto sv = evalInt(start);
    if (!sv || !(sv->s == c)) return std::nullopt;
    Builder b(d->parent, d->loc());
    b.setInsertionPointBefore(d);
    Value* r = b.op1(OpKind::Rem, {start, b.constInt(*mc, start->type())}, start->type());
    r->nameHint = start->nameHint.empty() ? "" : start->nameHint + "_mod";
    say("block-access: " + at(*d) + " wraps whole blocks (a constant multiple of the block, a start that is a multiple of it): "
        "the block starts at the start's remainder, no lane wraps");
    return IntV{Sym::atom(atomOf(r)) + (x.s - c), {}};
  }
  // Clamps of an offset `c + i_d`: exact on the lanes with i_d < rel.
  std::optional<IntV> clampOf(Value* v, Op* d) {
    switch (d->kind()) {
      case OpKind::Rem: case OpKind::Min: {
        auto x = evalInt(d->operand(0));
        if (!x) return std::nullopt;
        auto m = evalInt(d->operand(1));
        if (!m) return std::nullopt;
        int dim;
        Sym c;
        if (m->s.hasIndex() || !offsetForm(x->s, dim, c))
          return fail<IntV>(at(*d) + " is not a clamp of an offset `start + arange` by a scalar bound");
        if (d->kind() == OpKind::Rem)
          if (auto w = wholeBlocks(d, *x, *m, dim, c)) return w;
        if (d->kind() == OpKind::Rem && !nonNegSym(c) && !assume(c, *d))
          return fail<IntV>(at(*d) + " wraps an offset whose start is not provably non-negative");
        IntV r{x->s, x->taints};
        addTaints(r.taints, m->taints);
        addTaints(r.taints, {{dim, d->kind() == OpKind::Rem ? m->s - c : m->s - c + Sym::constant(1)}});
        return r;
      }
      case OpKind::Select: {
        auto cond = evalPred(d->operand(0));
        if (!cond) return std::nullopt;
        auto a = evalInt(d->operand(1));
        if (!a) return std::nullopt;
        int dim;
        Sym rel;
        if (cond->conj.size() != 1 || !boundForm(cond->conj[0], dim, rel) || !cond->taints.empty())
          return fail<IntV>(at(*d) + " is not a clamp `where(offs < bound, offs, _)` on one dimension");
        IntV r{a->s, a->taints};
        addTaints(r.taints, {{dim, rel}});
        return r;
      }
      default:
        if (gatherMode_)
          if (auto g = gatherAtom(v)) return IntV{Sym::atom(*g), {}};
        return fail<IntV>("the offsets use " + at(*d) + ", which the affine analysis does not model");
    }
  }

  std::optional<PtrV> evalPtr(Value* v) {
    if (auto it = ptrs_.find(v); it != ptrs_.end()) return it->second;
    auto r = evalPtrUncached(v);
    if (r) ptrs_[v] = *r;
    return r;
  }
  std::optional<PtrV> evalPtrUncached(Value* v) {
    if (v->type().isPtr()) return PtrV{v, {}, {}};
    Op* d = v->definingOp();
    if (!d) return carriedPtr(v);
    switch (d->kind()) {
      case OpKind::Splat:
        return evalPtr(d->operand(0));
      case OpKind::AddPtr: {
        auto p = evalPtr(d->operand(0));
        if (!p) return std::nullopt;
        auto o = evalInt(d->operand(1));
        if (!o) return std::nullopt;
        PtrV r{p->base, p->off + o->s, p->taints};
        addTaints(r.taints, o->taints);
        return r;
      }
      case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::Permute: {
        auto p = evalPtr(d->operand(0));
        if (!p) return std::nullopt;
        auto f = shapeMap(*d);
        return PtrV{p->base, shaped(p->off, f), remapTaints(p->taints, f)};
      }
      case OpKind::For:
        return loopResultPtr(d, static_cast<size_t>(v->index()));
      default:
        return fail<PtrV>("the address comes from " + at(*d) + ", which is not splat/addptr/broadcast/expand_dims/permute");
    }
  }
  // Result #k of a tile.for that carries a pointer tile advanced by a fixed step (an inner K loop's
  // `a_ptrs += BK * stride_ak`, carried on by an outer loop, as liger's int2 GEMM does): init +
  // trips * step, for a loop whose trip count is a constant.
  std::optional<PtrV> loopResultPtr(Op* loop, size_t k) {
    auto init = evalPtr(loop->operand(3 + k));
    if (!init) return std::nullopt;
    auto step = carriedStep(loop, k);
    if (!step) return std::nullopt;
    auto lo = intConstant(loop->operand(0)), hi = intConstant(loop->operand(1)), st = intConstant(loop->operand(2));
    if (!lo || !hi || !st || *st <= 0)
      return fail<PtrV>("the address is the result of " + at(*loop) + ", whose trip count is not a constant");
    const int64_t trips = *hi > *lo ? (*hi - *lo + *st - 1) / *st : 0;
    return PtrV{init->base, init->off + Sym::constant(trips) * *step, init->taints};
  }
  // The step of pointer tile #k that `loop` carries: what its body yields must be addptr(itself,
  // step), the step the same in every lane and loop-invariant.
  std::optional<Sym> carriedStep(Op* loop, size_t k) {
    Block* body = loop->region(0);
    Value* arg = body->arg(k + 1);
    auto saved = ptrs_;
    auto savedInts = ints_;
    ptrs_[arg] = PtrV{arg, {}, {}};
    auto next = evalPtr(body->terminator()->operand(k));
    ptrs_ = std::move(saved);
    ints_ = std::move(savedInts);
    if (!next) return std::nullopt;
    if (next->base != arg || !next->taints.empty())
      return fail<Sym>("the loop-carried address #" + std::to_string(k) + " of " + at(*loop) + " is not advanced as addptr(itself, step)");
    if (next->off.hasIndex())
      return fail<Sym>("the step of the loop-carried address #" + std::to_string(k) + " of " + at(*loop) + " differs between lanes");
    if (!invariantIn(next->off, loop))
      return fail<Sym>("the step of the loop-carried address #" + std::to_string(k) + " of " + at(*loop) +
                       " changes from one iteration to the next");
    return next->off;
  }
  // A pointer tile carried by a tile.for, advanced by a position-independent, loop-invariant step:
  // at trip index t it is init + t * step.
  std::optional<PtrV> carriedPtr(Value* arg) {
    Block* body = arg->ownerBlock();
    Op* loop = body ? body->parentOp : nullptr;
    if (!loop || loop->kind() != OpKind::For || arg->index() == 0)
      return fail<PtrV>("the address is a block argument that is not a tile.for's loop-carried value");
    size_t k = static_cast<size_t>(arg->index() - 1);
    auto init = evalPtr(loop->operand(3 + k));
    if (!init) return std::nullopt;
    auto step = carriedStep(loop, k);
    if (!step) return std::nullopt;
    return PtrV{init->base, init->off + Sym::atom(tripOf(loop)) * *step, init->taints};
  }

  std::optional<PredV> evalPred(Value* v) {
    Op* d = v->definingOp();
    if (!d) return fail<PredV>("the mask is a block argument");
    switch (d->kind()) {
      case OpKind::Constant:
        if (std::get<int64_t>(d->attrs.at("value")) != 0) return PredV{};
        return fail<PredV>("the mask is constant false");
      case OpKind::And: {
        auto a = evalPred(d->operand(0));
        if (!a) return std::nullopt;
        auto b = evalPred(d->operand(1));
        if (!b) return std::nullopt;
        a->conj.insert(a->conj.end(), b->conj.begin(), b->conj.end());
        addTaints(a->taints, b->taints);
        return a;
      }
      case OpKind::Cmp: {
        const std::string saved = why_;
        auto a = evalInt(d->operand(0));
        auto b = a ? evalInt(d->operand(1)) : std::nullopt;
        if (!a || !b) {  // an i8 flag tested, say: in gather mode a predicate on the rows
          auto g = gatherMode_ ? rowPredicate(v) : std::nullopt;
          if (g) why_ = saved;
          return g;
        }
        const std::string& p = d->strAttr("pred");
        PredV r{{}, a->taints};
        addTaints(r.taints, b->taints);
        if (p == "lt") r.conj.push_back(a->s - b->s);
        else if (p == "le") r.conj.push_back(a->s - b->s - Sym::constant(1));
        else if (p == "gt") r.conj.push_back(b->s - a->s);
        else if (p == "ge") r.conj.push_back(b->s - a->s - Sym::constant(1));
        else if (auto g = gatherMode_ ? rowPredicate(v) : std::nullopt) return g;
        else return fail<PredV>("the mask compares with \"" + p + "\" (" + at(*d) + "): only <, <=, >, >= bound a block");
        return r;
      }
      case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::Permute: {
        auto a = evalPred(d->operand(0));
        if (!a) return std::nullopt;
        auto f = shapeMap(*d);
        for (auto& c : a->conj) c = shaped(c, f);
        a->taints = remapTaints(a->taints, f);
        return a;
      }
      case OpKind::Cast: {  // `tl.where(c, 1, 0).to(tl.int1)` (vLLM's prefix prefill): the mask c
        const Op* w = d->operand(0)->definingOp();
        auto constOf = [](const Value* x) -> std::optional<int64_t> {
          const Op* s = x->definingOp();
          return s && s->kind() == OpKind::Splat ? intConstant(s->operand(0)) : intConstant(x);
        };
        if (v->type().scalar == Scalar::I1 && w && w->kind() == OpKind::Select) {
          auto t = constOf(w->operand(1)), f = constOf(w->operand(2));
          if (t && f && *t != 0 && *f == 0) return evalPred(w->operand(0));
        }
        return fail<PredV>("the mask comes from " + at(*d) + " (only comparisons of index tiles combined with tile.and are understood)");
      }
      default:
        if (auto g = gatherMode_ ? rowPredicate(v) : std::nullopt) return g;
        return fail<PredV>("the mask comes from " + at(*d) + " (only comparisons of index tiles combined with tile.and are understood)");
    }
  }

  // How a shape op renumbers dimensions: new dimension of old d, or -1 when i_d is 0 there.
  static std::function<int(int)> shapeMap(const Op& d) {
    const Type &in = d.operand(0)->type(), &out = d.result()->type();
    if (d.kind() == OpKind::ExpandDims) {
      int ax = static_cast<int>(d.intAttr("axis"));
      return [ax](int x) { return x >= ax ? x + 1 : x; };
    }
    if (d.kind() == OpKind::Broadcast) {
      std::vector<int64_t> from = in.isTile() ? in.shape : std::vector<int64_t>{}, to = out.shape;
      return [from, to](int x) {
        if (static_cast<size_t>(x) >= from.size()) return -1;
        return from[static_cast<size_t>(x)] == 1 && to[static_cast<size_t>(x)] != 1 ? -1 : x;
      };
    }
    std::vector<int64_t> order = d.arrayAttr("order");
    return [order](int x) {
      for (size_t k = 0; k < order.size(); ++k)
        if (order[k] == x) return static_cast<int>(k);
      return -1;
    };
  }
  // s == c + coef * i_d with c free of the position (coef 1 or -1).
  static bool offsetForm(const Sym& s, int& dim, Sym& c, int64_t coef = 1) {
    dim = -1;
    c = Sym{};
    for (auto& [m, k] : s.t) {
      int n = 0;
      for (int a : m) n += a < kIndexVars;
      if (n == 0) c.addTerm(m, k);
      else if (n == 1 && m.size() == 1 && k == coef && dim < 0) dim = m[0];
      else return false;
    }
    return dim >= 0;
  }
  // A mask conjunct `s < 0` that reads i_d < rel.
  static bool boundForm(const Sym& s, int& dim, Sym& rel) {
    Sym c;
    if (!offsetForm(s, dim, c)) return false;
    rel = c.scaled(-1);
    return true;
  }
  // A mask conjunct `s < 0` that reads i_d > c: s = c - i_d.
  static bool lowerForm(const Sym& s, int& dim, Sym& c) { return offsetForm(s, dim, c, -1); }
  bool nonNegSym(const Sym& s) {
    for (auto& [m, c] : s.t)
      if (!nonNegMono(m, c)) return false;
    return true;
  }
  // Every atom of s is defined outside `loop` (and is not its trip index).
  bool invariantIn(const Sym& s, Op* loop) {
    for (auto& [m, c] : s.t)
      for (int a : m) {
        if (a < kIndexVars) continue;
        const auto& info = atoms_[static_cast<size_t>(a - kIndexVars)];
        if (info.loop ? inside(info.loop, loop) : definedInside(info.v, loop)) return false;
      }
    return true;
  }

  // The pointer argument a pointer (scalar or tile) is computed from: through addptr, splat and the
  // shape ops, and a tile.for's carried value to its initial one; null when it comes from anything
  // else (a load, a bitcast).
  static Value* rootPointer(Value* v) {
    for (int steps = 0; steps < 10000 && v; ++steps) {
      if (Op* d = v->definingOp()) {
        switch (d->kind()) {
          case OpKind::AddPtr: case OpKind::Splat: case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::Permute:
          case OpKind::Reshape: case OpKind::MakeDesc:
            v = d->operand(0);
            continue;
          default: return nullptr;
        }
      }
      Block* body = v->ownerBlock();
      Op* loop = body ? body->parentOp : nullptr;
      if (!loop) return v;  // a function argument
      if (loop->kind() != OpKind::For || v->index() == 0) return nullptr;
      v = loop->operand(3 + static_cast<size_t>(v->index() - 1));
    }
    return nullptr;
  }

  // A tile tl.atomic_add may become a reduce-add block store (TMA's cp.reduce.async.bulk.tensor on the
  // GPU), which completes asynchronously and orders nothing: only when nothing could tell. Its old
  // values are unused; its element type is f32 or i32; nothing in the kernel reads or writes the
  // buffer it adds into otherwise (a load could see the adds incomplete); and every other atomic of
  // the kernel is as quiet: an add whose old values are unused, into a buffer nothing else touches (a
  // counter whose value is read, an exchange or a compare-and-swap could order the adds before another
  // program reads them). Distinct pointer arguments are taken not to overlap, as for every block access.
  bool reducible(Op* op) {
    const Scalar e = op->operand(1)->type().scalar;
    if (e != Scalar::F32 && e != Scalar::I32) return refuse("a block reduce-add takes f32 or i32 values, not " + std::string(ir::scalarName(e)));
    std::string why;
    if (!quietAdd(op, why)) return refuse(why);
    std::string other;
    walk(f_.body, [&](Op* o) {
      if (o != op && o->kind() == OpKind::Atomic && other.empty() && !quietAdd(o, other))
        other = "the kernel has another atomic, " + at(*o) + ", that could order the adds: " + other;
    });
    return other.empty() || refuse(other);
  }
  // An atomic add whose old values are unused, into a buffer (known by its pointer argument) that
  // the kernel accesses only with atomic adds; `why` says what it is not.
  bool quietAdd(Op* op, std::string& why) {
    if (op->strAttr("kind") != "add") return why = "it is an atomic " + op->strAttr("kind"), false;
    if (auto u = users_.find(op->result()); u != users_.end() && !u->second.empty()) return why = "the atomic's old values are used", false;
    Value* root = rootPointer(op->operand(0));
    if (!root) return why = "the atomic's address does not come from a pointer argument", false;
    walk(f_.body, [&](Op* o) {
      const bool access = o->kind() == OpKind::Load || o->kind() == OpKind::Store || o->kind() == OpKind::MakeDesc;
      if (!access || !why.empty()) return;
      Value* r = rootPointer(o->operand(0));
      if (r == root || !r) why = at(*o) + " also accesses the buffer the atomic adds into (or its address is not understood)";
    });
    return why.empty();
  }

  // ---- recognizing one access
  // Whether any integer the address `v` is computed from (through the ops that compute it and the
  // values loops carry: their initial and passed-on values) is 64-bit.
  bool computedInI64(Value* v) const {
    std::vector<Value*> work{v};
    std::set<const Value*> seen;
    while (!work.empty()) {
      Value* w = work.back();
      work.pop_back();
      if (!seen.insert(w).second) continue;
      if (w->type().isData() && w->type().scalar == Scalar::I64) return true;
      if (Op* d = w->definingOp()) {
        if (d->kind() == OpKind::For || d->kind() == OpKind::While)
          loopCarriedSources(*d, d->kind() == OpKind::For ? w->index() + 1 : w->index(), work);
        else if (d->kind() != OpKind::Load)
          work.insert(work.end(), d->operands.begin(), d->operands.end());
      } else if (Op* loop = w->ownerBlock()->parentOp; loop && (loop->kind() == OpKind::For || loop->kind() == OpKind::While)) {
        loopCarriedSources(*loop, w->index(), work);
      }
    }
    return false;
  }

  // Every atom of s holds a 32-bit value: an i32 value, a trip index, or an i64 one bounded to 32 bits
  // (a coordinate or an extent of a descriptor is 32-bit; an i64 kernel argument is not).
  bool narrow(const Sym& s) {
    for (auto& [m, c] : s.t)
      for (int id : m) {
        const Value* v = id >= kIndexVars ? atoms_[static_cast<size_t>(id - kIndexVars)].v : nullptr;
        if (v && v->type().scalar == Scalar::I64 && !fits32(v)) return false;
      }
    return true;
  }
  // Whether the bounds analysis shows v within int32's range.
  bool fits32(const Value* v) {
    const auto lo = lowerBound(v, 0), hi = upperBound(v, 0);
    return lo && hi && *lo >= std::numeric_limits<int32_t>::min() && *hi <= std::numeric_limits<int32_t>::max();
  }
  std::optional<Plan> narrowCoordinates(std::optional<Plan> p) {
    for (size_t d = 0; p && d < p->start.size(); ++d)
      if (!narrow(p->start[d]) || !narrow(p->bound[d]) ||
          (d < p->alsoBound.size() && !std::all_of(p->alsoBound[d].begin(), p->alsoBound[d].end(), [&](const Sym& x) { return narrow(x); })))
        return fail<Plan>("the start or the bound of dimension " + std::to_string(d) +
                          " is computed from an i64 value not bounded to 32 bits (a descriptor's coordinates and extents are 32-bit)");
    return p;
  }

  std::optional<Plan> analyze(Op* op) {
    if (auto p = narrowCoordinates(analyzeAffine(op))) return p;
    // Gathered rows are for the producer to stream: a load in a loop. Elsewhere (an epilogue's
    // residual read by scattered rows) the pointer load stays, for the consumer's threads.
    if (op->kind() != OpKind::Load || op->operand(0)->type().rank() != 2 || !inLoop(op)) return std::nullopt;
    const std::string affine = why_;
    why_.clear();
    gatherSeen_ = false;
    if (auto p = narrowCoordinates(analyzeGather(op))) return p;
    why_ = affine + (gatherSeen_ ? "; as gathered rows: " + why_ : "");
    return std::nullopt;
  }

  static bool inLoop(const Op* op) {
    for (const Block* b = op->parent; b && b->parentOp; b = b->parentOp->parent)
      if (b->parentOp->kind() == OpKind::For || b->parentOp->kind() == OpKind::While) return true;
    return false;
  }

  // Gathered rows (a mixture-of-experts projection's tokens): a 2-D load whose address is
  // `base + G[:, None] * S0 + C + i_1 * S1`, G an index tile the affine analysis does not expand
  // (loaded token ids, `ids // top_k`, in i32 or i64) and the rest affine as above, with a mask whose
  // conjuncts each bound the columns (`offset < bound`) or concern the rows alone (any comparison of
  // G, other index tiles along the rows, and the row position): tile.desc_load of a descriptor with
  // unbounded rows at row stride S0, its row operand the tile G where the row conjuncts hold and -1
  // (outside the tensor: zeros) where they do not. `other` must be zero; offsets must not be clamped.
  std::optional<Plan> analyzeGather(Op* op) {
    gatherBroken_ = false;
    std::optional<PtrV> ptr;
    std::optional<PredV> mask = PredV{};
    int g = -1;
    bool two = false;
    {
      GatherMode on(*this);
      ptr = evalPtr(op->operand(0));
      for (auto& [m, c] : ptr ? ptr->off.t : std::map<Mono, int64_t>{})
        for (int a : m)
          if (isGather(a)) two = two || (g >= 0 && g != a), g = a;
      gatherSeen_ = g >= 0;
      if (gatherSeen_ && op->numOperands() > 1) mask = evalPred(op->operand(1));
    }
    if (!ptr || g < 0 || !mask) return std::nullopt;  // no index tile: the affine analysis's reason stands
    if (two) return fail<Plan>("the address uses two index tiles");
    const AtomInfo gi = atoms_[static_cast<size_t>(g - kIndexVars)];
    if (gatherBroken_ || gi.gatherDim < 0 || gi.gatherDim > 1) return fail<Plan>("the index tile's values are not laid along the rows or the columns");
    // Gathered columns (vLLM's MoE with SWAP_AB loads A^T, its tokens along the columns): the block's
    // transpose has gathered rows. The analysis below reads the transpose: positions swapped.
    const bool transposed = gi.gatherDim == 1;
    if (transposed) {
      auto swap = [](int d) { return 1 - d; };
      ptr->off = ptr->off.remapped(swap);
      for (auto& c : mask->conj) c = c.remapped(swap);
    }
    if (!ptr->taints.empty() || !mask->taints.empty()) return fail<Plan>("the offsets are clamped (% or where)");
    if (op->numOperands() > 2 && !isZero(op->operand(2))) return fail<Plan>("'other' is not zero (gathered rows outside the mask read zeros)");
    Plan p;
    p.op = op;
    p.base = ptr->base;
    p.wide = computedInI64(op->operand(0));
    p.gather = gi.v;
    p.transposed = transposed;
    p.start.resize(2);
    p.bound.resize(2);
    p.stride.resize(2);
    p.masked.assign(2, false);
    Sym C;
    for (auto& [m, c] : ptr->off.t) {
      Mono rest;
      int gathers = 0, nidx = 0, idx = -1;
      for (int a : m) {
        if (a < kIndexVars) idx = a, ++nidx;
        else if (isGather(a)) ++gathers;
        else rest.push_back(a);
      }
      if (gathers > 1 || (gathers && nidx)) return fail<Plan>("the address multiplies the gathered rows by the position or by themselves");
      if (gathers) p.stride[0].addTerm(rest, c);
      else if (nidx == 0) C.addTerm(m, c);
      else if (nidx == 1 && idx == 1) p.stride[1].addTerm(rest, c);
      else return fail<Plan>("the address moves with the row position besides the gathered rows");
    }
    if (p.stride[1].t.empty()) return fail<Plan>("the address does not move along the columns (no stride)");
    std::optional<Sym> colRel;
    std::vector<Sym> lower;
    for (auto& c : mask->conj) {
      bool rows = false, cols = false;
      for (auto& [m, k] : c.t)
        for (int a : m) {
          if (isGather(a) && atoms_[static_cast<size_t>(a - kIndexVars)].gatherDim != gi.gatherDim)
            return fail<Plan>("a mask conjunct uses an index tile laid along the other dimension than the gathered one");
          rows = rows || a == 0 || isGather(a);
          cols = cols || a == 1;
        }
      if (rows && cols) return fail<Plan>("a mask conjunct mixes the rows and the columns");
      if (rows) {
        p.rowConj.push_back(c);
        continue;
      }
      int dim;
      Sym r;
      if (boundForm(c, dim, r)) {
        if (colRel && !(*colRel == r)) return fail<Plan>("the columns are bounded twice by different bounds");
        colRel = r;
      } else if (lowerForm(c, dim, r)) {
        lower.push_back(r);
      } else {
        return fail<Plan>("a mask conjunct is not of the form `offset < bound` on the columns");
      }
    }
    startCoordinates(C, p, 1);
    for (auto& c : lower)
      if (!atZero(c, p.start[1]))
        return fail<Plan>("a mask conjunct bounds the columns from below other than at 0 (offset >= 0)");
    p.masked[1] = colRel.has_value();
    p.bound[0] = Sym::constant(std::numeric_limits<int32_t>::max());
    p.bound[1] = colRel ? p.start[1] + *colRel : Sym::constant(std::numeric_limits<int32_t>::max());
    return p;
  }

  std::optional<Plan> analyzeAffine(Op* op) {
    const bool reduce = op->kind() == OpKind::Atomic;
    if (reduce && !reducible(op)) return std::nullopt;
    bool store = op->kind() == OpKind::Store || reduce;
    const Type& pt = op->operand(0)->type();
    int rank = pt.rank();
    if (rank > kIndexVars) return fail<Plan>("rank " + std::to_string(rank) + " is too large");
    auto ptr = evalPtr(op->operand(0));
    if (!ptr) return std::nullopt;
    Value* maskV = store ? (op->numOperands() > 2 ? op->operand(2) : nullptr) : (op->numOperands() > 1 ? op->operand(1) : nullptr);
    PredV mask;
    if (maskV) {
      auto m = evalPred(maskV);
      if (!m) return std::nullopt;
      mask = std::move(*m);
    }
    std::optional<AttrValue> other;
    if (!store && op->numOperands() > 2 && !isZero(op->operand(2))) {
      // A 1-D load (a bias, a row statistic) is read element by element wherever it is emitted, so a
      // constant `other` fills its outside; a 2-D block goes through TMA, which fills zeros.
      const Op* c = op->operand(2)->definingOp();
      if (rank != 1 || !c || c->kind() != OpKind::Constant)
        return fail<Plan>("'other' is not zero (a descriptor fills out-of-bounds elements with zero; a 1-D load may take a constant)");
      other = c->attrs.at("value");
    }
    if (!mask.taints.empty()) return fail<Plan>("the mask is computed from clamped offsets");

    Plan p;
    p.op = op;
    p.store = store;
    p.other = other;
    p.reduce = reduce;
    p.base = ptr->base;
    p.wide = computedInI64(op->operand(0));
    p.start.resize(static_cast<size_t>(rank));
    p.bound.resize(static_cast<size_t>(rank));
    p.alsoBound.resize(static_cast<size_t>(rank));
    p.stride.resize(static_cast<size_t>(rank));
    p.masked.assign(static_cast<size_t>(rank), false);
    // Split the address into C + sum_d i_d * S_d.
    Sym C;
    for (auto& [m, c] : ptr->off.t) {
      int dim = -1, n = 0;
      Mono rest;
      for (int a : m) {
        if (a < kIndexVars) dim = a, ++n;
        else rest.push_back(a);
      }
      if (n == 0) C.addTerm(m, c);
      else if (n == 1) p.stride[static_cast<size_t>(dim)].addTerm(rest, c);
      else return fail<Plan>("the address is not affine in the position (it multiplies offsets of two dimensions)");
    }
    for (int d = 0; d < rank; ++d)
      if (p.stride[static_cast<size_t>(d)].t.empty())
        return fail<Plan>("the address does not move along dimension " + std::to_string(d) + " (no stride)");
    // The bounds from the mask: i_d < R_d (and < R'_d ..., for a dimension bounded more than once).
    std::vector<std::optional<Sym>> rel(static_cast<size_t>(rank));
    std::vector<std::vector<Sym>> moreRel(static_cast<size_t>(rank));
    std::vector<std::pair<int, Sym>> lower;  // `start + i_d >= 0` conjuncts: i_d > c, checked below
    for (auto& c : mask.conj) {
      int dim;
      Sym r;
      if (!boundForm(c, dim, r)) {
        if (lowerForm(c, dim, r)) {
          lower.emplace_back(dim, r);
          continue;
        }
        return fail<Plan>("a mask conjunct is not of the form `offset < bound` on one dimension (offset = start + arange)");
      }
      auto& slot = rel[static_cast<size_t>(dim)];
      auto& more = moreRel[static_cast<size_t>(dim)];
      if (slot && !(*slot == r) && std::find(more.begin(), more.end(), r) == more.end()) more.push_back(r);
      if (!slot) slot = r;
    }
    // Clamps: dropped when the mask already excludes their lanes; for a load, a clamp on an
    // unmasked dimension becomes that dimension's bound (checked against the stores below).
    Taints leftover;
    for (auto& t : ptr->taints) {
      auto& slot = rel[static_cast<size_t>(t.dim)];
      if (!moreRel[static_cast<size_t>(t.dim)].empty())
        return fail<Plan>("dimension " + std::to_string(t.dim) + " is clamped and bounded twice by different bounds");
      if (slot) {
        if (!atMost(*slot, t.rel))
          return fail<Plan>("dimension " + std::to_string(t.dim) + " is clamped and masked with different bounds");
        continue;
      }
      if (store) return fail<Plan>("the stored offsets are clamped (% or where) without a mask on the same bound");
      if (std::any_of(leftover.begin(), leftover.end(), [&](const Taint& o) { return o.dim == t.dim && !(o.rel == t.rel); }))
        return fail<Plan>("dimension " + std::to_string(t.dim) + " is clamped twice with different bounds");
      addTaints(leftover, {t});
    }
    if (!leftover.empty()) {
      std::string w;
      if (!onlyMaskedStores(op->result(), leftover, w))
        return fail<Plan>("the clamp (% or where) reads wrapped rows, and they may reach memory: " + w);
      for (auto& t : leftover) rel[static_cast<size_t>(t.dim)] = t.rel;
    }
    startCoordinates(C, p, 0);
    // A lower bound is the descriptor's own (TMA fills and clips coordinates below 0) exactly when
    // it reads start_d + i_d >= 0, i.e. i_d > -start_d - 1 (block pointers' boundary_check).
    for (auto& [d, c] : lower)
      if (!atZero(c, p.start[static_cast<size_t>(d)]))
        return fail<Plan>("a mask conjunct bounds dimension " + std::to_string(d) + " from below other than at 0 (offset >= 0)");
    for (int d = 0; d < rank; ++d) {
      auto& r = rel[static_cast<size_t>(d)];
      p.masked[static_cast<size_t>(d)] = r.has_value();
      p.bound[static_cast<size_t>(d)] =
          r ? p.start[static_cast<size_t>(d)] + *r : Sym::constant(std::numeric_limits<int32_t>::max());
      for (auto& m : moreRel[static_cast<size_t>(d)]) p.alsoBound[static_cast<size_t>(d)].push_back(p.start[static_cast<size_t>(d)] + m);
    }
    return p;
  }

  // Whether a conjunct `i_d > c` reads start_d + i_d >= 0: the descriptor's own lower bound.
  static bool atZero(const Sym& c, const Sym& start) {
    return (c + start + Sym::constant(1)).constValue() == std::optional<int64_t>(0);
  }

  // Start coordinates: the terms of C that are non-negative multiples of one stride (of dimension
  // `first` or later) go to p.start, the others to p.rest (moved into the base).
  void startCoordinates(const Sym& C, Plan& p, int first) {
    const int rank = static_cast<int>(p.stride.size());
    for (auto& [m, c] : C.t) {
      int best = -1;
      Mono q;
      int64_t qc = 0;
      for (int d = first; d < rank; ++d) {
        const Sym& s = p.stride[static_cast<size_t>(d)];
        if (s.t.size() != 1) continue;
        auto& [sm, sc] = *s.t.begin();
        if (c % sc != 0) continue;
        Mono left = m;
        bool divides = true;
        for (int a : sm) {
          auto it = std::find(left.begin(), left.end(), a);
          if (it == left.end()) {
            divides = false;
            break;
          }
          left.erase(it);
        }
        if (!divides || !nonNegMono(left, c / sc)) continue;
        if (best >= 0) {  // prefer the stride with more atoms, then the larger constant
          auto& [bm, bc] = *p.stride[static_cast<size_t>(best)].t.begin();
          if (sm.size() < bm.size() || (sm.size() == bm.size() && std::abs(sc) <= std::abs(bc))) continue;
        }
        best = d, q = left, qc = c / sc;
      }
      if (best >= 0) p.start[static_cast<size_t>(best)].addTerm(q, qc);
      else p.rest.addTerm(m, c);
    }
  }

  // a <= b for every value of the atoms (only when their difference is a constant).
  static bool atMost(const Sym& a, const Sym& b) {
    auto c = (a - b).constValue();
    return c && *c <= 0;
  }
  static bool isZero(const Value* v) {
    const Op* d = v->definingOp();
    if (!d || d->kind() != OpKind::Constant) return false;
    const AttrValue& a = d->attrs.at("value");
    if (auto* f = std::get_if<double>(&a)) return *f == 0.0 && !std::signbit(*f);
    return std::get<int64_t>(a) == 0;
  }

  // Forward walk from a load whose lanes i_d >= rel differ from the original: they may only reach
  // stores whose mask excludes them.
  bool onlyMaskedStores(Value* from, const Taints& taints, std::string& why) {
    std::map<const Value*, Taints> seen;
    std::vector<std::pair<Value*, Taints>> work{{from, taints}};
    auto push = [&](Value* v, const Taints& t) {
      Taints& s = seen[v];
      size_t before = s.size();
      addTaints(s, t);
      if (s.size() != before) work.push_back({v, s});
    };
    while (!work.empty()) {
      auto [v, ts] = work.back();
      work.pop_back();
      for (auto [u, k] : users_[v]) {
        auto dims = [&](const std::function<int(int)>& f) { return remapTaints(ts, f); };
        switch (u->kind()) {
          case OpKind::Dot:
            for (auto& t : ts)
              if ((k == 0 && t.dim != 0) || (k == 1 && t.dim != 1)) {
                why = at(*u) + " contracts over the clamped dimension";
                return false;
              }
            push(u->result(), ts);
            continue;
          case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::Permute:
            push(u->result(), dims(shapeMap(*u)));
            continue;
          case OpKind::Reduce: {
            int ax = static_cast<int>(u->intAttr("axis"));
            for (auto& t : ts)
              if (t.dim == ax) {
                why = at(*u) + " reduces along the clamped dimension";
                return false;
              }
            push(u->result(), dims([ax](int x) { return x > ax ? x - 1 : x; }));
            continue;
          }
          case OpKind::Yield: {
            Op* parent = u->parent->parentOp;
            if (!parent || (parent->kind() != OpKind::For && parent->kind() != OpKind::If)) break;
            if (parent->kind() == OpKind::For) {
              for (auto& t : ts)
                if (!invariantIn(t.rel, parent)) {
                  why = "the clamped bound changes across iterations of " + at(*parent);
                  return false;
                }
              push(u->parent->arg(k + 1), ts);
            }
            push(parent->result(k), ts);
            continue;
          }
          case OpKind::For: {  // the initial value of a carried value (an accumulator into an inner loop)
            if (k < 3) break;
            for (auto& t : ts)
              if (!invariantIn(t.rel, u)) {
                why = "the clamped bound changes across iterations of " + at(*u);
                return false;
              }
            push(u->region(0)->arg(k - 3 + 1), ts);
            push(u->result(k - 3), ts);
            continue;
          }
          case OpKind::Store:
          case OpKind::Atomic: {  // an atomic add of split-K partial sums (DeepSpeed's `_fp_matmul`), masked as a store
            if (k != 1 || (u->kind() == OpKind::Atomic && u->strAttr("kind") == "cas")) break;
            // In gather mode: a store whose rows are scattered through an index tile (a MoE kernel's
            // C) may still mask the clamped columns; gather atoms never bound a dimension here.
            std::string saved = why_;
            why_.clear();
            std::optional<PtrV> ptr;
            std::optional<PredV> mask = PredV{};
            {
              GatherMode on(*this);
              ptr = evalPtr(u->operand(0));
              if (u->numOperands() > 2) mask = evalPred(u->operand(2));
            }
            why_ = saved;
            if (!ptr || !mask) {
              why = "the mask or address of " + at(*u) + " is not understood";
              return false;
            }
            if (!ptr->taints.empty() || !mask->taints.empty()) {
              why = at(*u) + " writes through clamped offsets";
              return false;
            }
            for (auto& t : ts) {
              bool excluded = false;
              for (auto& c : mask->conj) {
                int dim;
                Sym r;
                if (boundForm(c, dim, r) && dim == t.dim && atMost(r, t.rel)) excluded = true;
              }
              if (!excluded) {
                why = at(*u) + " does not mask out the lanes past the clamp's bound on dimension " + std::to_string(t.dim);
                return false;
              }
            }
            continue;
          }
          default:
            if (isElementwise(u->kind()) && u->kind() != OpKind::AddPtr) {
              push(u->result(), ts);
              continue;
            }
            break;
        }
        why = "they flow into " + at(*u);
        return false;
      }
    }
    return true;
  }

  // ---- rewriting
  class Emitter {
   public:
    Emitter(BlockAccess& a, Builder& b) : a_(a), b_(b) {}
    Value* constant(int64_t v) { return b_.constInt(v, Type::scalarOf(t_)); }
    // The polynomial's value as an i32 scalar, or with `wide` as an i64 one (each atom widened first).
    Value* emit(const Sym& s0, bool wide = false) {
      t_ = wide ? Scalar::I64 : Scalar::I32;
      Sym s = substituteTrips(s0);
      Value *pos = nullptr, *neg = nullptr;
      for (auto& [m, c] : s.t) {
        Value* term = nullptr;
        for (int id : m) term = mul(term, widened(atom(id)));
        int64_t k = c < 0 ? -c : c;
        if (k != 1 || !term) term = mul(term, constant(k));
        Value*& acc = c < 0 ? neg : pos;
        acc = acc ? b_.op1(OpKind::Add, {acc, term}, ty()) : term;
      }
      if (!pos) pos = constant(0);
      Value* r = neg ? b_.op1(OpKind::Sub, {pos, neg}, ty()) : pos;
      t_ = Scalar::I32;
      return r;
    }

   private:
    static Type i32() { return Type::scalarOf(Scalar::I32); }
    Type ty() const { return Type::scalarOf(t_); }
    Value* widened(Value* v) { return v->type().scalar == t_ ? v : b_.op1(OpKind::Cast, {v}, ty()); }
    Value* mul(Value* a, Value* b) { return a ? b_.op1(OpKind::Mul, {a, b}, ty()) : b; }
    // step * t of a loop with a constant step reads better as (iv - lb).
    Sym substituteTrips(const Sym& s) {
      Sym r;
      for (auto& [m, c] : s.t) {
        int trip = -1;
        for (int id : m)
          if (id >= kIndexVars && a_.atoms_[static_cast<size_t>(id - kIndexVars)].loop) trip = trip == -1 ? id : -2;
        Op* loop = trip >= 0 ? a_.atoms_[static_cast<size_t>(trip - kIndexVars)].loop : nullptr;
        auto st = loop ? intConstant(loop->operand(2)) : std::nullopt;
        auto lb = loop ? a_.scalarSym(loop->operand(0)) : std::nullopt;
        if (!st || !lb || c % *st != 0) {
          r.addTerm(m, c);
          continue;
        }
        Mono rest = m;
        rest.erase(std::find(rest.begin(), rest.end(), trip));
        Sym term;
        term.addTerm(rest, c / *st);
        r = r + term * (Sym::atom(a_.atomOf(loop->region(0)->arg(0))) - *lb);
      }
      return r;
    }
    Value* atom(int id) {
      TAWA_ASSERT(id >= kIndexVars, "a materialized polynomial is free of the position");
      const auto& info = a_.atoms_[static_cast<size_t>(id - kIndexVars)];
      if (info.v) return info.v;
      Op* loop = info.loop;  // t = (iv - lb) / step
      Value* d = b_.op1(OpKind::Sub, {loop->region(0)->arg(0), loop->operand(0)}, i32());
      return b_.op1(OpKind::Div, {d, loop->operand(2)}, i32());
    }
    BlockAccess& a_;
    Builder& b_;
    Scalar t_ = Scalar::I32;
  };

  // v is visible right before the top-level op `anchor`: a function argument, or defined by an
  // earlier top-level op.
  bool visibleBefore(const Value* v, Op* anchor) {
    if (Op* d = v->definingOp()) {
      auto it = topPos_.find(d);
      return it != topPos_.end() && it->second < topPos_.at(anchor);
    }
    return v->ownerBlock() == &f_.body;
  }
  // Every atom of s is visible right before the top-level op `anchor`.
  bool visibleBefore(const Sym& s, Op* anchor) {
    for (auto& [m, c] : s.t)
      for (int id : m) {
        const auto& info = atoms_[static_cast<size_t>(id - kIndexVars)];
        if (info.loop || !visibleBefore(info.v, anchor)) return false;
      }
    return true;
  }

  void rewrite(const Plan& p) {
    Op* op = p.op;
    Op* top = op;
    while (top->parent != &f_.body) top = top->parent->parentOp;
    bool hoist = top != op && visibleBefore(p.base, top) && visibleBefore(p.rest, top);
    for (size_t d = 0; hoist && d < p.bound.size(); ++d) {
      hoist = visibleBefore(p.bound[d], top) && visibleBefore(p.stride[d], top);
      for (size_t k = 0; hoist && d < p.alsoBound.size() && k < p.alsoBound[d].size(); ++k) hoist = visibleBefore(p.alsoBound[d][k], top);
    }
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(hoist ? top : op);
    Emitter e(*this, b);
    Value* base = p.base;
    if (!p.rest.t.empty()) base = b.op1(OpKind::AddPtr, {base, e.emit(p.rest, p.wide)}, base->type());
    std::vector<Value*> ops{base};
    for (size_t d = 0; d < p.bound.size(); ++d) {
      Value* extent = e.emit(p.bound[d]);
      for (size_t k = 0; d < p.alsoBound.size() && k < p.alsoBound[d].size(); ++k)
        extent = b.op1(OpKind::Min, {extent, e.emit(p.alsoBound[d][k])}, extent->type());
      ops.push_back(extent);
    }
    for (auto& s : p.stride) ops.push_back(e.emit(s, !narrow(s)));  // an i64 stride argument stays 64-bit
    const Type& pt = op->operand(0)->type();
    const std::vector<int64_t> block = p.transposed ? std::vector<int64_t>{pt.shape[1], pt.shape[0]} : pt.shape;
    Value* desc = b.op1(OpKind::MakeDesc, ops, Type::descOf(pt.scalar, block));
    desc->nameHint = op->operand(0)->nameHint.empty() ? "" : op->operand(0)->nameHint + "_desc";
    b.setInsertionPointBefore(op);
    std::vector<Value*> offs;
    for (auto& s : p.start) offs.push_back(e.emit(s));
    if (p.gather) offs[0] = gatheredRows(b, e, p);
    std::string dims;
    for (size_t d = 0; d < p.masked.size(); ++d) dims += (d ? ", " : "") + std::string(p.masked[d] ? "masked" : "unbounded");
    say("block-access: " + at(*op) + ": rewritten as a block " + (p.reduce ? "reduce-add store" : p.store ? "store" : "load") + " of " +
        desc->type().str() +
        (p.gather ? " with rows gathered through " + (current(p.gather)->definingOp() ? at(*current(p.gather)->definingOp()) : std::string("an argument")) +
                        (p.rowConj.empty() ? "" : " (rows masked off read row -1: zeros)") +
                        (p.transposed ? ", then transposed (the columns were gathered)" : "")
                  : "") +
        " (dimensions: " + dims + "; descriptor " +
        (hoist ? "hoisted before " + at(*top) : std::string("made at the access")) + ")");
    if (p.store) {
      std::vector<Value*> sops{desc, op->operand(1)};
      sops.insert(sops.end(), offs.begin(), offs.end());
      std::map<std::string, AttrValue> attrs;
      if (p.reduce) attrs["reduce"] = std::string("add");
      b.create(OpKind::DescStore, sops, {}, attrs);
    } else {
      std::vector<Value*> lops{desc};
      lops.insert(lops.end(), offs.begin(), offs.end());
      Value* r = b.op1(OpKind::DescLoad, lops, op->result()->type().withShape(block));
      if (p.other) r->definingOp()->attrs["other"] = *p.other;
      if (p.transposed) r = b.op1(OpKind::Permute, {r}, op->result()->type(), {{"order", std::vector<int64_t>{1, 0}}});
      r->nameHint = op->result()->nameHint;
      replaceAllUsesWith(f_.body, op->result(), r);
      replaced_[op->result()] = r;  // an index tile another plan gathers through (current())
    }
    op->parent->erase(op);
  }

  // The row operand of a gathered load: tile<R x i32> of the index tile's values (reshaped to 1-D),
  // -1 where a row conjunct fails. The conjuncts are evaluated in i64 when an index tile is i64 (a
  // masked-off id past 2^31 must not pass the mask narrowed), and the rows narrowed after the
  // select: a row past 2^31 is outside what the analysis assumes.
  Value* gatheredRows(Builder& b, Emitter& e, const Plan& p) {
    const int64_t R = p.op->operand(0)->type().shape[p.transposed ? 1 : 0];
    const Type rt = Type::tileOf({R}, Type::scalarOf(Scalar::I32));
    bool wide = current(p.gather)->type().scalar == Scalar::I64;
    for (const Sym& c : p.rowConj)
      for (auto& [m, k] : c.t)
        for (int a : m) wide = wide || (isGather(a) && current(atoms_[static_cast<size_t>(a - kIndexVars)].v)->type().scalar == Scalar::I64);
    const Type wt = Type::tileOf({R}, Type::scalarOf(wide ? Scalar::I64 : Scalar::I32));
    auto rowsOf = [&](Value* v) {
      v = current(v);
      if (v->type().rank() != 1) {
        Value* f = flat(b, v, R);
        v = f ? f : b.op1(OpKind::Reshape, {v}, Type::tileOf({R}, Type::scalarOf(v->type().scalar)));
      }
      if (v->type() != wt) v = b.op1(OpKind::Cast, {v}, wt);
      return v;
    };
    auto narrow = [&](Value* v) { return v->type() == rt ? v : b.op1(OpKind::Cast, {v}, rt); };
    Value* rows = rowsOf(p.gather);
    if (p.rowConj.empty()) return narrow(rows);
    Value* live = nullptr;
    for (const Sym& c : p.rowConj) {
      Value* sum = nullptr;
      for (auto& [m, k] : c.t) {
        Sym scalar;
        Mono rest;
        std::vector<Value*> factors;
        for (int a : m) {
          if (a == 0) factors.push_back(rowsOf(b.op1(OpKind::Arange, {}, rt, {{"start", int64_t{0}}, {"end", R}})));
          else if (isGather(a)) factors.push_back(rowsOf(atoms_[static_cast<size_t>(a - kIndexVars)].v));
          else rest.push_back(a);
        }
        scalar.addTerm(rest, k);
        Value* term = factors.empty() || !(scalar == Sym::constant(1)) ? b.op1(OpKind::Splat, {e.emit(scalar, wide)}, wt) : nullptr;
        for (Value* f : factors) term = term ? b.op1(OpKind::Mul, {term, f}, wt) : f;
        sum = sum ? b.op1(OpKind::Add, {sum, term}, wt) : term;
      }
      Value* holds = b.op1(OpKind::Cmp, {sum, b.constInt(0, wt)}, Type::tileOf({R}, Type::scalarOf(Scalar::I1)), {{"pred", std::string("lt")}});
      live = live ? b.op1(OpKind::And, {live, holds}, holds->type()) : holds;
    }
    Value* r = narrow(b.op1(OpKind::Select, {live, rows, b.constInt(-1, wt)}, wt));
    r->nameHint = "gathered_rows";
    return r;
  }

  // A 1 x R or R x 1 index tile made 1-D from its roots (`offs_token[None, :] // top_k`: the div of
  // the 1-D tile), at b; null when an op of its DAG is not an expand_dims of a 1-D tile, a splat, a
  // constant or elementwise. (The backends lay a reshape to 1-D only from R x 1.)
  Value* flat(Builder& b, Value* v, int64_t R) {
    v = current(v);
    const Type& t = v->type();
    if (t.rank() == 1) return v;
    if (t.rank() != 2 || t.numel() != R) return nullptr;
    Op* d = v->definingOp();
    if (!d || d->numResults() != 1) return nullptr;
    const Type flatT = t.withShape({R});
    switch (d->kind()) {
      case OpKind::ExpandDims: return d->operand(0)->type().rank() == 1 ? current(d->operand(0)) : nullptr;
      case OpKind::Splat: case OpKind::Constant: return b.op1(d->kind(), d->operands, flatT, d->attrs);
      default: break;
    }
    if (!isElementwise(d->kind())) return nullptr;
    std::vector<Value*> args;
    for (Value* o : d->operands) {
      Value* f = o->type().isTile() ? flat(b, o, R) : o;
      if (!f) return nullptr;
      args.push_back(f);
    }
    return b.op1(d->kind(), args, flatT, d->attrs);
  }

  // A value an earlier rewrite replaced (a 1-D index load become a tile.desc_load) by what replaced it.
  Value* current(Value* v) const {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  void removeDeadCode() {
    bool changed = true;
    while (changed) {
      changed = false;
      std::map<const Value*, int> uses;
      countUses(f_.body, uses);
      std::vector<Op*> dead;
      walk(f_.body, [&](Op* op) {
        if (!isPure(op->kind())) return;
        for (auto& r : op->results())
          if (uses.count(r.get())) return;
        dead.push_back(op);
      });
      for (auto it = dead.rbegin(); it != dead.rend(); ++it) (*it)->parent->erase(*it), changed = true;
    }
  }

  // A pointer tile carried through a nest (liger's int2 GEMM: `a_ptrs` advanced by the inner K loop,
  // carried on by the outer loop) whose loads became block loads: outer slot k's argument only
  // initializes inner slot j (or is unused: `b_ptrs` set afresh each outer iteration), inner slot j's
  // result only the outer yield passes on, and the outer result is unused. The inner slot then starts
  // from the outer loop's initial value and the outer slot carries itself unchanged: both only
  // advance themselves, and removeDeadCarriedPointers drops them.
  void untieNestedCarriedPointers() {
    std::map<const Value*, int> uses;
    countUses(f_.body, uses);
    walk(f_.body, [&](Op* loop) {
      if (loop->kind() != OpKind::For) return;
      Block& body = *loop->region(0);
      Op* yield = body.terminator();
      for (size_t k = 0; k < loop->numResults(); ++k) {
        Value* arg = body.arg(k + 1);
        if (!arg->type().isPtrLike() || uses.count(loop->result(k)) || uses[arg] > 1) continue;
        Op* inner = yield->operand(k)->definingOp();
        if (!inner || inner->kind() != OpKind::For || inner->parent != &body || uses[yield->operand(k)] != 1) continue;
        const size_t j = static_cast<size_t>(yield->operand(k)->index());
        // The argument's one use initializes the inner slot, or it has none (`b_ptrs` set afresh at the
        // top of each outer iteration).
        if (uses[arg] == 1 && inner->operand(3 + j) != arg) continue;
        if (uses[arg] == 1) inner->operands[3 + j] = loop->operand(3 + k);
        yield->operands[k] = arg;
      }
    });
  }
  // A loop-carried pointer tile that only advances itself (argument used once, by the pure op the
  // yield returns, and no use of the loop's result) is dropped from its loop.
  void removeDeadCarriedPointers() {
    std::vector<Op*> loops;
    walk(f_.body, [&](Op* op) {
      if (op->kind() == OpKind::For) loops.push_back(op);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      Op* loop = *it;
      std::map<const Value*, int> uses;
      countUses(f_.body, uses);
      Block& body = *loop->region(0);
      Op* yield = body.terminator();
      std::map<size_t, Value*> dead;  // nothing reads their arguments
      std::set<const Op*> deadOps;
      for (size_t k = 0; k < loop->numResults(); ++k) {
        Value* arg = body.arg(k + 1);
        if (!arg->type().isPtrLike() || uses.count(loop->result(k))) continue;
        Value* next = yield->operand(k);
        Op* d = next->definingOp();
        bool self = next == arg && uses[arg] == 1;
        bool step = d && d->parent == &body && isPure(d->kind()) && uses[next] == 1 && uses[arg] == 1 &&
                    std::count(d->operands.begin(), d->operands.end(), arg) == 1;
        if (!self && !step) continue;
        dead[k] = nullptr;
        if (step) deadOps.insert(d);
      }
      if (dead.empty()) continue;
      Op* nl = rebuildForWithout(loop, dead, deadOps);
      for (size_t k = 0, n = 0; k < loop->numResults(); ++k)
        if (!dead.count(k)) replaceAllUsesWith(f_.body, loop->result(k), nl->result(n++));
      loop->parent->erase(loop);
      removeDeadCode();
    }
  }

  struct AtomInfo {
    Value* v;
    Op* loop;
    int gatherDim = -1;  // >= 0: a gather atom, the values of the index tile v laid along that dimension
  };

  Func& f_;
  const PassOptions& opt_;
  std::string why_;
  std::vector<AtomInfo> atoms_;
  std::map<int, const Op*> assumed_;  // atoms assumed non-negative -> the wrapping tile.rem that needed it
  std::map<const Value*, int> valueAtom_;
  std::map<const Op*, int> tripAtom_;
  bool gatherMode_ = false;                        // analyzeGather: index tiles the analysis cannot expand are gather atoms
  bool gatherBroken_ = false;                      // a gather atom's dimension was dropped by a shape op
  bool gatherSeen_ = false;                        // analyzeGather found an index tile in the address
  std::map<std::pair<const Value*, int>, int> gatherAtoms_;
  std::vector<std::pair<AtomKey, int>> atomKeys_;  // value numbering of atoms (atomOf)
  std::map<const Value*, IntV> ints_;
  std::map<const Value*, PtrV> ptrs_;
  std::map<const Value*, std::vector<std::pair<Op*, size_t>>> users_;
  std::map<const Op*, int> topPos_;
  std::map<const Value*, Value*> replaced_;  // rewritten loads' results -> the block loads that replaced them
};

}  // namespace

void blockAccess(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) BlockAccess(*f, opt).run();
}

}  // namespace tawa::transforms
