#include "transforms/WarpSpecialize.h"

#include <ostream>
#include <algorithm>
#include <functional>
#include <memory>
#include <map>
#include <set>

#include "ir/Clone.h"

namespace tawa::transforms {

using namespace ir;

namespace {

// A load the producer streams through an aref: a 2-D (or higher) block load. A 1-D block load in
// the loop (a per-row statistic such as attention backward's logsumexp row, `tl.load(M + offs_m)`)
// stays with the consumer, which reads it from global memory where its registers use it (no slot
// of a 1-D tile has a TMA/wgmma layout).
bool streamed(const Op& op) { return op.kind() == OpKind::DescLoad && op.result()->type().rank() >= 2; }

// The roles of one loop's body: the loads, the producer's ops (the loads' backward slice), the
// consumer's ops, the address arithmetic both compute, and which loop-carried values each carries.
struct Roles {
  std::vector<Op*> loads;
  std::vector<std::vector<size_t>> groups;  // the loads (indices) each aref carries: groupLoads
  std::set<Op*> producer, consumerOps, shared;
  std::set<size_t> producerCarried, consumerCarried;
};

// A later top-level loop that loads blocks: the producer streams them too. A loop that loads tiles
// of the main loop's types continues the main loop's aref sequence (set 0); one whose tiles differ
// (attention backward's dQ loop after its dK/dV loop) gets arefs of its own, shared with the later
// loops of its types (`set`). `slice` is what its producer copy needs from the ops between the loops.
struct Follow {
  Op* loop = nullptr;
  Roles roles;
  std::vector<Op*> slice;
  size_t set = 0;
};

class Specializer {
 public:
  Specializer(Func& f, const PassOptions& opt) : f_(f), opt_(opt) {}

  void run() {
    if (opt_.persistent > 0 && !makePersistent()) return;
    Op* loop = findLoop();
    if (!loop) return;
    std::string why, chose;
    const int consumers = consumerGroupsFor(f_, opt_, &chose);
    if (opt_.consumers == 0) say("@" + f_.name + ": " + std::to_string(consumers) + " consumer warp group(s): " + chose);
    if (consumers == 2) {
      // Two cooperative consumers each run the epilogue on their half; a scalar atomic runs once, in
      // the first, so its old value cannot reach the second.
      if (const Op* a = atomicWithOldValue(f_))
        throw UserError(a->loc(), "the old value this scalar atomic returns is read, and two cooperative consumer warp groups "
                                  "would both need it (the atomic runs once, in the first)",
                        "--consumers 1 (with a smaller block if one warp group cannot hold the accumulator)");
      if (Op* split = splitRows(loop, why)) {
        loop = split;
        cooperative_ = true;
      } else {
        say("@" + f_.name + ": warp-specialize does not split the loop's rows (split-consumers may split the specialized program): " + why);
      }
    }
    if (!analyze(loop, why)) {
      say("@" + f_.name + ": not specialized: " + why);
      return;
    }
    if (!outer_ && !cooperative_) findFollows(loop);
    rewrite(loop);
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << s << "\n";
  }
  static std::string at(const Op& op) { return std::string(op.name()) + " at " + op.loc().str(); }

  // D as asked, else the num_stages hint (2 without one) lowered until the shared memory holds the rings (`payload`
  // per slot), the tiles loaded once (`preloads`), the epilogue's stored tiles (staged for TMA:
  // every tile.desc_store outside the main loop `loop`, after it or, in a persistent kernel, in the
  // tile loop around it; one consumer's stores take turns in one buffer per size, as the emitter
  // lays them out) and the B of each tile.dot computed in registers, in `loop` or not (the
  // consumers stage it for wgmma in a buffer of its own), with each slot's mbarriers and 2 KB for
  // the other barriers and alignment.
  int64_t chooseDepth(const std::vector<Type>& payload, const std::vector<Op*>& preloads, const Op* loop) {
    if (opt_.depth > 0) return opt_.depth;
    auto bytes = [](const Type& t) { return t.isTile() ? t.numel() * byteWidth(t.scalar) : int64_t{0}; };
    auto it = f_.attrs.find("num_stages");
    const bool hinted = it != f_.attrs.end() && std::holds_alternative<int64_t>(it->second) && std::get<int64_t>(it->second) >= 1;
    const int64_t hint = hinted ? std::get<int64_t>(it->second) : 2;
    int64_t stage = 0, fixed = 2048;
    for (const Type& t : payload) stage += bytes(t);
    for (const Op* op : preloads) fixed += bytes(op->result()->type());
    // The emitter gives the stores of one warp group one staging buffer per size (they take turns).
    // One consumer: every store of a size shares one (attention backward's dK, dV and dQ; counted
    // once a row offset before 2026-12-08: 32 KB too many, depth 4 where 5 fit). Two cooperative
    // consumers: still one per row offset, the halves' stores not told apart here.
    std::set<std::pair<const Value*, int64_t>> staged;
    walk(f_.body, [&](const Op* o) {
      if (o->kind() != OpKind::DescStore) return;
      for (const Block* b = o->parent; b && b->parentOp; b = b->parentOp->parent)
        if (b->parentOp == loop) return;
      if (staged.emplace(cooperative_ ? o->operand(2) : nullptr, bytes(o->operand(1)->type())).second) fixed += bytes(o->operand(1)->type());
    });
    // Before the loop too: FlagAttention's piecewise attention turns Q into the MMA layout with
    // `tl.dot(q, I)`, an identity computed in registers (two of them: 64 KB at D = 128).
    walk(f_.body, [&](const Op* o) {
      if (o->kind() == OpKind::Dot && computedTile(o->operand(1))) fixed += bytes(o->operand(1)->type());
    });
    // A tile the epilogue loads through a descriptor (a residual added to the result) lands in a
    // buffer of its own (lmdeploy's `_linear_add`: 64 KB at 128x256 f16, which three slots left no
    // room for); the later loops' loads are in `payload`.
    walk(f_.body, [&](const Op* o) {
      if (o->kind() != OpKind::DescLoad || o->result()->type().rank() < 2 ||
          std::find(preloads.begin(), preloads.end(), o) != preloads.end())
        return;
      for (const Block* b = o->parent; b && b->parentOp; b = b->parentOp->parent) {
        if (b->parentOp == loop) return;
        for (const Follow& fw : follows_)
          if (b->parentOp == fw.loop) return;
      }
      // Two cooperative consumers each load a tile neither half owns (a peeled K block's B).
      const bool shared = cooperative_ && !halfLoads_[0].count(o) && !halfLoads_[1].count(o);
      fixed += bytes(o->result()->type()) * (shared ? 2 : 1);
    });
    // Each slot also has its full and empty mbarriers (8 bytes each, at most one pair a slot's tile):
    // counted in the fit, not in the bytes said (the 2 KB besides covers the rest).
    const int64_t budget = 232448, perSlot = stage + 16 * static_cast<int64_t>(payload.size());
    const int64_t fits = stage > 0 ? (budget - fixed) / perSlot : hint;
    const int64_t d = std::max<int64_t>(1, std::min(hint, fits));
    say("@" + f_.name + ": aref depth " + std::to_string(d) +
        (hinted ? " (num_stages = " + std::to_string(hint) + " in the spec"
                : d < hint ? std::string(" (the default 2, lowered") : std::string(" (the default; num_stages in the spec or --depth choose another")) +
        (d < hint ? "; " + std::to_string(hint) + " slots of " + std::to_string(stage) + " bytes and " + std::to_string(fixed) +
                        " bytes besides do not fit in the " + std::to_string(budget) + " bytes of shared memory"
                  : "") +
        ")");
    return d;
  }

  // Persistent form: the kernel body becomes a tile loop that program p runs for tiles p, p + P, ...
  // with P = min(persistent, grid size); the tile's program ids (row-major, or grouped by groupM
  // rows along axis 0) replace tile.program_id. Ops that do not depend on the program id stay
  // before the loop. The function records persistent_programs: the executor (and the launcher)
  // then runs P programs, and tile.num_programs still reports the launch grid.
  bool makePersistent() {
    if (!f_.resultTypes.empty()) return false;
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::WgRegion) return false;
    Block& body = f_.body;
    std::vector<Op*> original;
    for (auto& op : body.ops())
      if (op->kind() != OpKind::Return) original.push_back(op.get());
    if (original.empty()) return false;
    Type i32 = Type::scalarOf(Scalar::I32);
    Builder b(&body, f_.loc);
    b.setInsertionPointBefore(original.front());
    Value* np[3];
    for (int a = 0; a < 3; ++a) np[a] = b.op1(OpKind::NumPrograms, {}, i32, {{"axis", int64_t{a}}});
    Value* plane = b.op1(OpKind::Mul, {np[0], np[1]}, i32);
    Value* total = b.op1(OpKind::Mul, {plane, np[2]}, i32);
    total->nameHint = "num_tiles";
    Value* stride = b.op1(OpKind::Min, {b.constInt(opt_.persistent, i32), total}, i32);
    stride->nameHint = "programs";
    Value* start = b.op1(OpKind::ProgramId, {}, i32, {{"axis", int64_t{0}}});
    // Which original ops depend on the program id (they move into the tile loop).
    std::set<const Op*> inside;
    for (Op* op : original) {
      bool dep = op->kind() == OpKind::ProgramId || !isPure(op->kind()) || !op->regions().empty();
      for (Value* v : op->operands) dep = dep || (v->definingOp() && inside.count(v->definingOp()));
      if (dep) inside.insert(op);
    }
    b.setInsertionPointBefore(body.terminator());
    Op* loop = b.create(OpKind::For, {start, total, stride}, {});
    Block* lb = loop->addRegion();
    Value* t = lb->addArg(i32, "tile_id");
    Builder in(lb, f_.loc);
    Value* r = in.op1(OpKind::Rem, {t, plane}, i32);
    Value* pid[3];
    if (opt_.groupM > 0) {
      Value* g = in.constInt(opt_.groupM, i32);
      Value* perGroup = in.op1(OpKind::Mul, {g, np[1]}, i32);
      Value* first = in.op1(OpKind::Mul, {in.op1(OpKind::Div, {r, perGroup}, i32), g}, i32);
      Value* rows = in.op1(OpKind::Min, {in.op1(OpKind::Sub, {np[0], first}, i32), g}, i32);
      Value* within = in.op1(OpKind::Rem, {r, perGroup}, i32);
      pid[0] = in.op1(OpKind::Add, {first, in.op1(OpKind::Rem, {within, rows}, i32)}, i32);
      pid[1] = in.op1(OpKind::Div, {within, rows}, i32);
    } else {
      pid[0] = in.op1(OpKind::Rem, {r, np[0]}, i32);
      pid[1] = in.op1(OpKind::Div, {r, np[0]}, i32);
    }
    pid[2] = in.op1(OpKind::Div, {t, plane}, i32);
    for (int a = 0; a < 3; ++a) pid[a]->nameHint = "pid" + std::to_string(a);
    auto& ops = body.ops();
    for (Op* op : original) {
      if (!inside.count(op)) continue;
      auto it = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == op; });
      op->parent = lb;
      lb->ops().splice(lb->ops().end(), ops, it);
    }
    in.create(OpKind::Yield, {}, {});
    std::vector<Op*> ids;
    walk(*lb, [&](Op* op) {
      if (op->kind() == OpKind::ProgramId && op->result() != start) ids.push_back(op);
    });
    for (Op* id : ids) {
      replaceAllUsesWith(*lb, id->result(), pid[id->intAttr("axis")]);
      id->parent->erase(id);
    }
    f_.attrs["persistent_programs"] = int64_t{opt_.persistent};
    say("@" + f_.name + ": made persistent: min(" + std::to_string(opt_.persistent) + ", grid size) programs walk the tiles" +
        (opt_.groupM > 0 ? " in groups of " + std::to_string(opt_.groupM) + " rows" : " in row-major order"));
    return true;
  }

  Op* findLoop() {
    if (!f_.resultTypes.empty()) {
      say("@" + f_.name + ": not specialized: it returns values; only kernels (functions without results) are specialized");
      return nullptr;
    }
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::WgRegion) {
        say("@" + f_.name + ": already warp-specialized");
        return nullptr;
      }
    for (auto& op : f_.body.ops()) {
      std::string why;
      std::vector<Op*> nest;
      Op* loop = findNested(op.get(), nest, why);
      if (!why.empty()) {
        say("@" + f_.name + ": not specialized: " + why);
        return nullptr;
      }
      if (!loop) continue;
      nest_ = nest;
      outer_ = nest_.empty() ? nullptr : nest_.front();
      return loop;
    }
    say("@" + f_.name + ": not specialized: no tile.for (at the top level, or inside top-level tile loops, while loops and "
        "guards) loads blocks (tile.desc_load) in its body; pointer loads need the block-access analysis first");
    return nullptr;
  }

  // A guard whose else branch does work the consumer alone runs: it yields nothing and holds no
  // loop and no block load (a MoE kernel's `if expert == -1: store zeros; return`), so the producer,
  // which streams nothing there, passes it by.
  static bool elseOnlyConsumer(const Op& guard) {
    if (guard.numResults() != 0) return false;
    bool plain = true;
    walk(*guard.region(1), [&](const Op* o) {
      plain = plain && o->kind() != OpKind::For && o->kind() != OpKind::While && o->kind() != OpKind::DescLoad &&
              o->kind() != OpKind::WgRegion;
    });
    return plain;
  }

  // The main loop at or under `op`: a tile.for whose own body loads blocks, found first in the
  // deepest loop (a persistent kernel's tile loop around its K loop), with the ops around it
  // (`nest`, outermost first): tile.for and tile.while loops and guards (a tile.if whose else branch
  // does nothing but pass on values from before it, such as `if t < tiles:` around a loop that
  // advances t). A tile.if around such a loop whose else branch does work is refused (`why`).
  Op* findNested(Op* op, std::vector<Op*>& nest, std::string& why) {
    const bool isFor = op->kind() == OpKind::For, isWhile = op->kind() == OpKind::While, isIf = op->kind() == OpKind::If;
    if ((!isFor && !isWhile && !isIf) || op->regions().empty()) return nullptr;
    Block& body = *op->region(isWhile ? 1 : 0);
    nest.push_back(op);
    for (auto& in : body.ops())
      if (Op* found = findNested(in.get(), nest, why); found || !why.empty()) {
        if (found && isIf && op->regions().size() > 1 && op->region(1)->ops().size() > 1 && !elseOnlyConsumer(*op)) {
          why = "the loop at " + found->loc().str() + " is under the tile.if at " + op->loc().str() +
                ", which has an else branch (only a guard around the loop and its epilogue is taken: its else branch, if any, "
                "only passes values on, or yields nothing and loads no blocks)";
          return nullptr;
        }
        return found;
      }
    nest.pop_back();
    if (!isFor) return nullptr;
    for (auto& in : body.ops())
      if (streamed(*in)) return op;
    return nullptr;
  }

  // Decides the role of every op of the loop body: the producer takes the loads and the backward
  // slice of their operands (loop-carried values included); the consumer takes every other op.
  bool analyzeLoop(Op* loop, Roles& r, std::string& why) {
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    std::vector<Op*> work;
    for (auto& op : body.ops())
      if (streamed(*op)) r.loads.push_back(op.get()), work.push_back(op.get());
    // Backward slice of the loads, through loop-carried arguments and their yielded values.
    while (!work.empty()) {
      Op* op = work.back();
      work.pop_back();
      if (!r.producer.insert(op).second) continue;
      for (Value* v : op->operands) {
        if (v->ownerBlock() == &body && v->index() > 0) {  // a loop-carried argument
          auto k = static_cast<size_t>(v->index() - 1);
          if (r.producerCarried.insert(k).second) {
            Value* next = yield->operand(k);
            if (Op* d = next->definingOp(); d && d->parent == &body) work.push_back(d);
          }
        }
        Op* d = v->definingOp();
        if (!d || d->parent != &body) continue;
        // (A gathered block's index tile read in the loop from a buffer the kernel only reads, a
        // token's slot in a paged KV cache: findSharedReads lets the producer read it too.)
        if (d->kind() == OpKind::DescLoad && !sharedReads_.count(d)) {
          why = "the address of " + at(*op) + " depends on loaded data (" + at(*d) + ")";
          return false;
        }
        // A scalar read of a buffer the kernel only reads (a block-sparse index table) is made by the
        // producer, and by the consumer too where it uses it (findSharedReads).
        if (!pureOrRead(*d)) {
          why = "the address of " + at(*op) + " depends on " + at(*d) +
                (d->kind() != OpKind::Load ? ", which has side effects"
                 : d->hasAttr("volatile")  ? ", a volatile read (the producer, running ahead, could see another value)"
                                           : ", a read of a buffer the kernel writes through (the producer, running ahead, could see another value)");
          return false;
        }
        work.push_back(d);
      }
    }
    for (auto& op : body.ops())
      if (!r.producer.count(op.get()) && !streamed(*op) && op.get() != yield) r.consumerOps.insert(op.get());
    // Address arithmetic that the consumer also uses is computed by both (it is pure and cheap).
    std::vector<Op*> need;
    for (Op* op : r.consumerOps) need.push_back(op);
    for (size_t k = 0; k < yield->numOperands(); ++k)
      if (!r.producerCarried.count(k))
        if (Op* d = yield->operand(k)->definingOp(); d && r.producer.count(d)) need.push_back(d), r.shared.insert(d);
    while (!need.empty()) {
      Op* op = need.back();
      need.pop_back();
      for (Value* v : op->operands) {
        if (v->ownerBlock() == &body && v->index() > 0 && r.producerCarried.count(static_cast<size_t>(v->index() - 1))) {
          why = at(*op) + " in the consumer uses loop-carried address arithmetic that the producer advances (not supported yet)";
          return false;
        }
        Op* d = v->definingOp();
        if (d && d->parent == &body && r.producer.count(d) && !streamed(*d) && r.shared.insert(d).second)
          need.push_back(d);
      }
    }
    for (size_t k = 0; k < yield->numOperands(); ++k)
      if (!r.producerCarried.count(k)) r.consumerCarried.insert(k);
      else if (Op* d = yield->operand(k)->definingOp(); d && r.consumerOps.count(d)) {
        why = "loop-carried value #" + std::to_string(k) + " feeds the loads but is computed from consumer work";
        return false;
      }
    groupLoads(r, body, opt_.sharedRing);
    return true;
  }

  // One aref per independently consumed value: loads that one op reads together (directly or
  // through a transpose: a GEMM's A and B, read by one wgmma from one slot) share an aref; the
  // others get one each, so that each is released after its own last use (attention's K after
  // QK^T, V after PV) and the producer refills it while the other is still read. `shared`
  // (--shared-ring, to measure what the split is worth): one aref for all of them, as before.
  static void groupLoads(Roles& r, Block& body, bool shared) {
    std::map<const Value*, size_t> index;
    for (size_t k = 0; k < r.loads.size(); ++k) index[r.loads[k]->result()] = k;
    std::vector<size_t> parent(r.loads.size());
    for (size_t k = 0; k < parent.size(); ++k) parent[k] = k;
    auto find = [&](size_t k) {
      while (parent[k] != k) k = parent[k] = parent[parent[k]];
      return k;
    };
    walk(body, [&](Op* op) {
      std::vector<size_t> read;
      for (const Value* v : op->operands) {
        if (const Op* d = v->definingOp(); d && d->kind() == OpKind::Permute) v = d->operand(0);
        if (auto it = index.find(v); it != index.end()) read.push_back(it->second);
      }
      for (size_t k = 1; k < read.size(); ++k) parent[find(read[k])] = find(read[0]);
    });
    if (shared)
      for (size_t k = 1; k < parent.size(); ++k) parent[find(k)] = find(0);
    std::map<size_t, size_t> groupOf;  // root -> group, numbered in the order of the groups' first loads
    r.groups.clear();
    for (size_t k = 0; k < r.loads.size(); ++k) {
      auto [it, fresh] = groupOf.emplace(find(k), r.groups.size());
      if (fresh) r.groups.emplace_back();
      r.groups[it->second].push_back(k);
    }
  }
  // The tile types of each group of `r`'s loads (an aref's payload).
  static std::vector<std::vector<Type>> groupTypes(const Roles& r) {
    std::vector<std::vector<Type>> out;
    for (const auto& g : r.groups) {
      out.emplace_back();
      for (size_t k : g) out.back().push_back(r.loads[k]->result()->type());
    }
    return out;
  }

  // Later top-level loops whose bodies load blocks: the producer streams their tiles too. Loops
  // that load tiles of the main loop's types, read together as there (attention's causal diagonal
  // stage), go through the same arefs, the index carried on from the previous loop's; loops of other
  // types through arefs of their own, one set per payload (followSets_), each with its own index.
  // The first loop that cannot follows none, and explain says why.
  void findFollows(Op* loop) {
    followSets_ = {groupTypes(main_)};
    std::vector<Op*> between;  // top-level ops after the main loop, before the candidate
    bool after = false;
    for (auto& op : f_.body.ops()) {
      if (op.get() == loop) {
        after = true;
        continue;
      }
      if (!after) continue;
      bool loads = false;
      if (op->kind() == OpKind::For)
        for (auto& in : op->region(0)->ops()) loads = loads || streamed(*in);
      if (loads) {
        Follow fw;
        fw.loop = op.get();
        std::string why;
        if (!analyzeFollow(fw, between, why)) {
          followWhy_ = "  consumer: the loop at " + op->loc().str() + " and its loads (a later loop whose loads stay with the consumer: " +
                       why + ")";
          return;
        }
        const std::vector<std::vector<Type>> payload = groupTypes(fw.roles);
        fw.set = static_cast<size_t>(std::find(followSets_.begin(), followSets_.end(), payload) - followSets_.begin());
        if (fw.set == followSets_.size()) followSets_.push_back(payload);
        follows_.push_back(std::move(fw));
      }
      between.push_back(op.get());
    }
  }

  bool analyzeFollow(Follow& fw, const std::vector<Op*>& between, std::string& why) {
    Op* loop = fw.loop;
    if (!analyzeLoop(loop, fw.roles, why)) return false;
    if (!streamsUnwritten(loop, fw.roles, /*later=*/true, why)) return false;
    // What the producer's copy needs from outside the loop: its bounds, the initial values it
    // carries and the operands of its ops. Ops between the loops must be pure and not use a loop's
    // results; ops before the main loop must be pure (they stay at the top).
    std::vector<Value*> need{loop->operand(0), loop->operand(1), loop->operand(2)};
    for (size_t k : fw.roles.producerCarried) need.push_back(loop->operand(3 + k));
    for (Op* op : fw.roles.producer)
      for (Value* v : op->operands) need.push_back(v);
    std::set<Op*> slice;
    while (!need.empty()) {
      Value* v = need.back();
      need.pop_back();
      Op* d = v->definingOp();
      if (!d || d->parent != &f_.body || slice.count(d)) continue;
      bool isBetween = std::find(between.begin(), between.end(), d) != between.end();
      if (!isPure(d->kind()) || !d->regions().empty())
        return why = "its loads need " + at(*d) + ", which the producer cannot compute" +
                     (d->kind() == OpKind::For ? " (a loop's result)" : " (it has side effects)"),
               false;
      if (consumerPrologue_.count(d))
        return why = "its loads need " + at(*d) + ", computed before the main loop from " + at(*consumerPrologue_.at(d)) + ", " +
                     consumerOnly(*consumerPrologue_.at(d)),
               false;
      if (!isBetween) continue;  // a pure op before the main loop: it stays at the top
      slice.insert(d);
      for (Value* w : d->operands) need.push_back(w);
    }
    for (Op* op : between)
      if (slice.count(op)) fw.slice.push_back(op);
    return resultsReachTheConsumer(loop, fw.roles, why);
  }

  // A loop result that only the producer computes (an address it carries) cannot be used after
  // the loop: the consumer, which runs what follows, does not have it.
  bool resultsReachTheConsumer(Op* loop, const Roles& r, std::string& why) {
    bool after = false;
    for (auto& op : loop->parent->ops()) {
      if (op.get() == loop) {
        after = true;
        continue;
      }
      if (!after) continue;
      for (Value* v : op->operands)
        if (v->definingOp() == loop && !r.consumerCarried.count(static_cast<size_t>(v->index()))) {
          why = "the loop result #" + std::to_string(v->index()) + " used by " + at(*op) + " is only computed by the producer";
          return false;
        }
    }
    return true;
  }

  // The main loop's roles, then what a persistent kernel's tile loop and the ops after the loop need.
  bool analyze(Op* loop, std::string& why) {
    findSharedReads(loop);
    if (!prologueSplits(outer_ ? outer_ : loop, why)) return false;
    if (!analyzeLoop(loop, main_, why)) return false;
    if (!producerNeedsNoConsumerPrologue(loop, main_, why)) return false;
    if (!streamsUnwritten(loop, main_, /*later=*/false, why)) return false;
    if (outer_ && !analyzeNest(loop, why)) return false;
    return resultsReachTheConsumer(loop, main_, why);
  }

  // rewrite() keeps the pure ops before the top loop where they are (both roles use them) and moves
  // the others (loops, loads) into the consumer. A pure op that uses a moved op's result (a bias row
  // loaded, then scaled, before the K loop) moves with it (consumerPrologue_): the producer must not
  // need it (producerNeedsNoConsumerPrologue). In a persistent kernel's nest such a prologue is not
  // split.
  bool prologueSplits(Op* topLoop, std::string& why) {
    std::set<const Value*> moved;
    for (auto& op : f_.body.ops()) {
      if (op.get() == topLoop) break;
      if (!pureOrRead(*op)) {
        for (auto& r : op->results()) moved.insert(r.get());
        continue;
      }
      const Value* used = nullptr;  // a moved result the op uses, itself or in its regions
      walk(*op, [&](Op* o) {
        for (Value* w : o->operands)
          if (!used && moved.count(w)) used = w;
      });
      if (!used) continue;
      const Op* d = used->definingOp();
      if (!outer_ && !d->hasAttr("volatile")) {
        consumerPrologue_[op.get()] = consumerPrologue_.count(d) ? consumerPrologue_.at(d) : d;
        for (auto& r : op->results()) moved.insert(r.get());
        continue;
      }
      why = at(*op) + ", before the loop, uses the result of " + at(*d) +
            (d->hasAttr("volatile") ? ", a volatile read (each warp group reading it could see another value)"
                                    : ", which has side effects (or comes after one) or is a loop: the producer could not see it");
      return false;
    }
    return true;
  }
  // Why op `d` before the loop is the consumer's alone (prologueSplits moved it there).
  static std::string consumerOnly(const Op& d) {
    if (d.kind() == OpKind::Load && d.result()->type().isScalar())
      return "a read after the kernel's first write, of a buffer the kernel writes through (the producer, running ahead, could "
             "see another value)";
    if (d.kind() == OpKind::Load || d.kind() == OpKind::DescLoad) return "a tile load only the consumer makes";
    if (!d.regions().empty()) return "a loop or branch only the consumer runs";
    return "which has side effects (or comes after one), so only the consumer has it";
  }
  // The main loop's producer copy uses values from before the loop (its bounds, the initial values it
  // carries, its loads' operands): none may be computed by the consumer alone (consumerPrologue_).
  bool producerNeedsNoConsumerPrologue(Op* loop, const Roles& r, std::string& why) const {
    if (consumerPrologue_.empty()) return true;
    std::vector<Value*> need{loop->operand(0), loop->operand(1), loop->operand(2)};
    for (size_t k : r.producerCarried) need.push_back(loop->operand(3 + k));
    for (Op* op : r.producer) walk(*op, [&](Op* o) { need.insert(need.end(), o->operands.begin(), o->operands.end()); });
    std::set<const Op*> seen;
    while (!need.empty()) {
      Value* v = need.back();
      need.pop_back();
      Op* d = v->definingOp();
      if (!d || d->parent != &f_.body || !seen.insert(d).second) continue;
      if (consumerPrologue_.count(d))
        return why = "the producer needs " + at(*d) + ", computed before the loop from " + at(*consumerPrologue_.at(d)) + ", " +
                     consumerOnly(*consumerPrologue_.at(d)),
               false;
      walk(*d, [&](Op* o) { need.insert(need.end(), o->operands.begin(), o->operands.end()); });
    }
    return true;
  }

  // Scalar loads every role may read again (a problem's sizes, a pointer read from an array of
  // pointers; never a volatile one): those that come before the kernel's first write (and before the main loop `loop`), in
  // program order (within a program, the producer's reads come before anything the consumer writes),
  // and, anywhere, those from buffers the kernel only reads (readOnlyRead). Both see what the kernel
  // as written saw, so they count as pure where the prologue is split and in the producer's slices;
  // other reads after a store, an atomic or a region that may write stay impure.
  void findSharedReads(const Op* loop) {
    bool stop = false;
    std::function<void(Block&)> scan = [&](Block& blk) {
      for (auto& op : blk.ops()) {
        if (stop || op.get() == loop) return void(stop = true);
        if (op->kind() == OpKind::Load && op->numResults() == 1 && op->result()->type().isScalar() && !op->hasAttr("volatile")) {
          sharedReads_.insert(op.get());
          continue;
        }
        if (op->kind() == OpKind::If && op.get() == outer_) return scan(*op->region(0));  // the guard: into its branch
        if ((isPure(op->kind()) && op->regions().empty()) || op->kind() == OpKind::Load || op->kind() == OpKind::DescLoad) continue;
        return void(stop = true);
      }
    };
    scan(f_.body);
    findWrittenArgs();
    if (writesAnywhere_) return;
    walk(f_.body, [&](Op* op) {
      if (op->kind() == OpKind::Load && op->numResults() == 1 && op->result()->type().isScalar() && op->numOperands() == 1 &&
          !op->hasAttr("volatile") && readOnlyRead(*op))
        sharedReads_.insert(op);
    });
    // The index tiles of gathered rows (block-access): the 1-D block loads they are computed from,
    // of buffers the kernel only reads, are made where the producer needs them too (the emitter
    // reads such a tile's elements where they are used).
    walk(f_.body, [&](Op* op) {
      if (op->kind() != OpKind::DescLoad || op->numOperands() < 2 || !op->operand(1)->type().isTile()) return;
      std::vector<Value*> work{op->operand(1)};
      std::set<const Value*> seen;
      while (!work.empty()) {
        Value* v = work.back();
        work.pop_back();
        Op* d = v->definingOp();
        if (!seen.insert(v).second || !d) continue;
        if (d->kind() == OpKind::DescLoad && d->result()->type().rank() == 1 && readOnlyRead(*d)) sharedReads_.insert(d);
        else if (isPure(d->kind()) && d->regions().empty()) work.insert(work.end(), d->operands.begin(), d->operands.end());
      }
    });
  }

  // The pointer arguments through which the kernel writes: those a store, an atomic or a descriptor
  // store addresses, found back through the ops that compute the address and the loops that carry it.
  // An address read from memory (an array of pointers) names none of them: tawa takes the buffers the
  // arguments point to as distinct from those (the arguments a kernel only reads as read-only for
  // the launch, as `const __restrict__` says in CUDA). A call may write anything (writesAnywhere_).
  void findWrittenArgs() { writesAnywhere_ = ir::writtenArgs(f_.body, writtenArgs_) || writesAnywhere_; }
  void argsBehind(Value* v, std::set<const Value*>& args, const std::function<bool(const Op&)>& throughLoad = {}) const {
    ir::argsBehind(v, f_.body, args, throughLoad);
  }
  // A scalar load from read-only buffers: its address comes from kernel arguments that nothing writes
  // through, through pure ops and other such loads.
  bool readOnlyRead(const Op& load) const {
    std::set<const Value*> args;
    bool ok = true;
    argsBehind(load.operand(0), args, [&](const Op& d) {
      ok = ok && d.numOperands() == 1 && !d.hasAttr("volatile") && readOnlyRead(d);
      return true;
    });
    bool pointer = false;
    for (const Value* a : args)
      if (a->type().isPtr()) {
        if (writtenArgs_.count(a)) return false;
        pointer = true;
      }
    return ok && pointer;
  }
  bool pureOrRead(const Op& op) const { return isPure(op.kind()) || sharedReads_.count(&op); }
  // A tile load (a 1-D block load: a scale or bias row) from buffers the kernel only reads: each of
  // two cooperative consumers may make it (what one consumer alone does first cannot change it).
  bool readOnlyTileRead(const Op& op) const {
    return (op.kind() == OpKind::Load || op.kind() == OpKind::DescLoad) && op.numResults() == 1 && op.result()->type().isTile() &&
           !op.hasAttr("volatile") && !writesAnywhere_ && ir::readsOnlyUnwritten(op.operand(0), f_.body, writtenArgs_);
  }

  // The producer runs ahead of the consumer: D slots ahead in the loop, into the next tile's loads
  // while the consumer still runs this tile's epilogue (a loop around the main loop: a persistent
  // kernel's tiles), into a later loop while the consumer finishes the first. A block load of a
  // buffer the kernel writes could then read it before a write that comes first in program order (a
  // persistent kernel whose epilogue writes what a later tile loads: silently stale data). Refused
  // where a write can come first: a store, an atomic or a block store in the loop, or anywhere in
  // the kernel when a loop is around it or it is a later loop (`later`). Epilogue writes after the
  // only pass over the loads are fine.
  bool streamsUnwritten(Op* loop, const Roles& r, bool later, std::string& why) const {
    if (writtenArgs_.empty() && !writesAnywhere_) return true;
    bool aroundLoop = later;
    for (const Op* n : nest_) aroundLoop = aroundLoop || n->kind() == OpKind::For || n->kind() == OpKind::While;
    const Op* write = nullptr;
    walk(*loop->region(0), [&](const Op* o) {
      if (!write && (o->kind() == OpKind::Store || o->kind() == OpKind::DescStore || o->kind() == OpKind::Atomic || o->kind() == OpKind::Call))
        write = o;
    });
    if (!aroundLoop && !write) return true;
    for (Op* l : r.loads) {
      std::set<const Value*> args;
      argsBehind(l->operand(0), args);
      for (const Value* a : args)
        if (a->type().isPtr() && (writtenArgs_.count(a) || writesAnywhere_))
          return why = at(*l) + " reads a buffer the kernel also writes" +
                       (write ? " in the loop (" + at(*write) + ")" : later ? " before this later loop" : " in the loop around it") +
                       ": the producer, running ahead of the consumer, could read it before that write",
                 false;
    }
    return true;
  }
  bool guarded() const {
    return std::any_of(nest_.begin(), nest_.end(), [](const Op* n) { return n->kind() == OpKind::If; });
  }

  // The block of a nest op that holds the next op of the nest, or the main loop.
  static Block& nestBody(Op* n) { return *n->region(n->kind() == OpKind::While ? 1 : 0); }

  // The loops and guards around the main loop (nest_): what the producer needs of them. That is the
  // backward slice of the main loop's bounds, of the values its loads carry in and of its loads'
  // operands, and of every enclosing loop's control (a tile.for's bounds, a tile.while's test, a
  // guard's condition), through the values those loops carry, whose updates may come after the main
  // loop (a persistent grouped GEMM's next tile, its next problem's first tile). Each op of the slice
  // must be pure or a shared read. The consumer runs all of it.
  bool analyzeNest(Op* loop, std::string& why) {
    std::vector<Value*> need{loop->operand(0), loop->operand(1), loop->operand(2)};
    for (size_t k : main_.producerCarried) need.push_back(loop->operand(3 + k));
    for (Op* op : main_.producer)
      for (Value* v : op->operands) need.push_back(v);
    auto needOp = [&](Op* d) {
      if (!producerNest_.insert(d).second) return true;
      if (d->kind() == OpKind::Load && d->hasAttr("volatile"))
        return why = "the producer needs " + at(*d) + ", a volatile read (each warp group reading it could see another value)", false;
      if (d->kind() == OpKind::Load && !pureOrRead(*d))
        return why = "the producer needs " + at(*d) + ", a read after the kernel's first write from a buffer the kernel writes "
                     "through (the producer, running ahead, could read another value)",
               false;
      if (!pureOrRead(*d)) return why = "the producer needs " + at(*d) + ", which has side effects (or comes after one)", false;
      walk(*d, [&](Op* o) { need.insert(need.end(), o->operands.begin(), o->operands.end()); });
      return true;
    };
    // The producer's copy of the nest loop n carries its value #k: its initial value and its updates.
    auto carry = [&](Op* n, size_t k) {
      if (!nestCarried_[n].insert(k).second) return;
      if (n->kind() == OpKind::If) {  // a guard's result: what each branch yields
        need.push_back(n->region(0)->terminator()->operand(k));
        need.push_back(n->region(1)->terminator()->operand(k));
      } else if (n->kind() == OpKind::For) {
        need.push_back(n->operand(3 + k));
        need.push_back(n->region(0)->terminator()->operand(k));
      } else {  // a tile.while: the value its test passes on and the next iteration's too
        need.push_back(n->operand(k));
        need.push_back(n->region(0)->terminator()->operand(1 + k));
        need.push_back(n->region(1)->terminator()->operand(k));
      }
    };
    std::set<const Block*> blocks;
    for (Op* n : nest_) {
      blocks.insert(&nestBody(n));
      if (n->kind() == OpKind::For) need.insert(need.end(), n->operands.begin(), n->operands.begin() + 3);
      if (n->kind() == OpKind::If) need.push_back(n->operand(0));
      if (n->kind() != OpKind::While) continue;
      // A tile.while's test runs in both roles: its before region joins the slice.
      Block& before = *n->region(0);
      const Op* cond = before.terminator();
      if (!cond || cond->kind() != OpKind::Condition || n->numResults() != n->numOperands())
        return why = "the tile.while at " + n->loc().str() + " around the loop passes on other values than it carries (not supported yet)", false;
      blocks.insert(&before);
      for (auto& op : before.ops())
        if (op.get() != cond && !needOp(op.get())) return false;
      need.push_back(cond->operand(0));
    }
    while (!need.empty()) {
      Value* v = need.back();
      need.pop_back();
      if (Block* ob = v->ownerBlock(); ob && blocks.count(ob)) {
        Op* n = ob->parentOp;
        if (n->kind() == OpKind::For && v->index() > 0) carry(n, static_cast<size_t>(v->index() - 1));
        if (n->kind() == OpKind::While) carry(n, static_cast<size_t>(v->index()));
        continue;
      }
      Op* d = v->definingOp();
      if (!d || !blocks.count(d->parent)) continue;
      if (d == loop) return why = "the producer needs the loop's result #" + std::to_string(v->index()) + " (" + at(*d) + ")", false;
      if (std::find(nest_.begin(), nest_.end(), d) != nest_.end()) {
        carry(d, static_cast<size_t>(v->index()));
        continue;
      }
      if (!needOp(d)) return false;
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
    Location loadLoc = main_.loads.front()->loc();
    Op* topLoop = outer_ ? outer_ : loop;
    // Split the function body: pure prologue stays; impure prologue ops and the epilogue move.
    std::vector<Op*> prologueImpure, epilogue;
    bool after = false;
    for (auto& op : f_.body.ops()) {
      if (op.get() == topLoop) {
        after = true;
        continue;
      }
      if (op->kind() == OpKind::Return) continue;
      if (after) epilogue.push_back(op.get());
      else if (!pureOrRead(*op) || consumerPrologue_.count(op.get())) prologueImpure.push_back(op.get());
    }
    Builder top(&f_.body, loadLoc);
    top.setInsertionPointBefore(topLoop);
    // Block loads before the loop (attention's Q): the producer loads each once and hands it over
    // through its own aref of depth 1, which the consumer releases after its last use. In a
    // persistent kernel they belong to each tile and stay with the consumer.
    std::vector<Op*> preloads;
    if (!outer_)
      for (Op* op : prologueImpure)
        if (preloadable(*op)) preloads.push_back(op);
    const int64_t nConsumers = cooperative_ ? 2 : 1;
    std::map<const Op*, Value*> preArefs;
    for (Op* op : preloads) {
      top.setLoc(op->loc());
      Value* a = top.op1(OpKind::ArefCreate, {}, Type::arefOf(1, {op->result()->type()}), {{"consumers", nConsumers}});
      a->nameHint = "aref_" + (op->result()->nameHint.empty() ? std::string("pre") : op->result()->nameHint);
      preArefs[op] = a;
    }
    // The rings: the main loop's and those of the later loops that load other tiles.
    std::vector<const Roles*> setRoles{&main_};
    for (const Follow& fw : follows_)
      if (fw.set == setRoles.size()) setRoles.push_back(&fw.roles);
    std::vector<Type> payload;
    for (const Roles* r : setRoles)
      for (Op* l : r->loads) payload.push_back(l->result()->type());
    depth_ = chooseDepth(payload, preloads, loop);
    // One aref of depth D per group of loads read together (groupLoads), per set.
    std::vector<std::vector<Value*>> arefSets;
    std::set<std::string> names;  // a later loop's aref named as an earlier one (the same helper inlined twice) gets its set's number
    for (const Roles* r : setRoles) {
      std::vector<Value*>& set = arefSets.emplace_back();
      const std::vector<std::vector<Type>> members = groupTypes(*r);
      for (const auto& g : r->groups) {
        top.setLoc(r->loads[g.front()]->loc());
        Value* a = top.op1(OpKind::ArefCreate, {}, Type::arefOf(depth_, members[set.size()]), {{"consumers", nConsumers}});
        const std::string& hint = r->loads[g.front()]->result()->nameHint;
        std::string name = r->groups.size() == 1 && setRoles.size() == 1 ? "aref"
                           : hint.empty()                               ? "aref" + std::to_string(set.size())
                                                                        : "aref_" + hint;
        if (!names.insert(name).second) names.insert(name += "_" + std::to_string(arefSets.size() - 1));
        a->nameHint = name;
        set.push_back(a);
      }
    }
    const std::vector<Value*>& arefs = arefSets.front();
    top.setLoc(loadLoc);

    // ---- producer
    Op* prod = top.create(OpKind::WgRegion, {}, {},
                          {{"role", std::string("producer")}, {"num_warps", int64_t{4}}, {"regs", int64_t{producerRegsFor(opt_, static_cast<int>(nConsumers))}}});
    prod->setLoc(loop->loc());
    {
      Block* pb = prod->addRegion();
      Builder b(pb, loop->loc());
      ValueMap map;
      for (Op* op : preloads) {
        Op* load = cloneOp(b, *op, map);
        b.setLoc(op->loc());
        b.create(OpKind::ArefPut, {preArefs.at(op), b.constInt(0, Type::scalarOf(Scalar::I32)), load->result()}, {});
        b.setLoc(loop->loc());
      }
      auto inner = [&](Builder& ib, Value* c) {
        Op* nl = producerLoop(ib, loop, main_, arefs, map, c);
        return c ? nl->result(nl->numResults() - 1) : nullptr;
      };
      // Later loops that load the same tiles continue the aref's sequence; the others start their own.
      std::vector<Value*> counts(arefSets.size(), nullptr);
      counts[0] = nest_.empty() ? inner(b, firstCount(b)) : cloneNest(b, 0, loop, map, nestCounter(b), inner, /*producer=*/true);
      for (const Follow& fw : follows_) {
        for (Op* op : fw.slice) cloneOp(b, *op, map);
        Op* fl = producerLoop(b, fw.loop, fw.roles, arefSets[fw.set], map, setCount(b, counts, fw.set));
        counts[fw.set] = fl->result(fl->numResults() - 1);
      }
      b.setLoc(loop->loc());
      b.create(OpKind::Yield, {}, {});
    }
    // ---- consumers: one, or two cooperative ones that each own one half of the rows
    // Cooperative: one group per half of the accumulator (a carried tile); each group also carries
    // the scalars the consumer carries (block pointers' offsets, counters: every copy computes
    // them), and the epilogue's uses of those belong to the first group (`owned`).
    std::vector<std::set<size_t>> groups, owned;
    if (cooperative_) {
      // So do tiles of pointers the loop advances (torchao's block-scaled GEMM reads its column
      // scales through `b_s_ptrs += 1`): each group computes the same addresses; before 2026-12-07
      // such a tile got a group of its own, whose loop left the scale load's pointer undefined.
      std::set<size_t> scalars;
      for (size_t k : main_.consumerCarried)
        if (!loop->result(k)->type().isTile() || loop->result(k)->type().isPtrLike()) scalars.insert(k);
      // One group per row half (splitRows says which half each accumulator is), else per tile.
      std::map<int, size_t> groupOfHalf;
      for (size_t k : main_.consumerCarried) {
        if (scalars.count(k)) continue;
        const auto h = halfOfCarried_.find(k);
        if (h != halfOfCarried_.end() && groupOfHalf.count(h->second)) {
          const size_t g = groupOfHalf[h->second];
          groups[g].insert(k), owned[g].insert(k);
          continue;
        }
        if (h != halfOfCarried_.end()) groupOfHalf[h->second] = groups.size();
        groups.push_back(scalars), groups.back().insert(k);
        owned.push_back(owned.empty() ? scalars : std::set<size_t>{}), owned.back().insert(k);
      }
    }
    if (groups.empty()) groups.push_back(main_.consumerCarried), owned.push_back(main_.consumerCarried);
    for (size_t g = 0; g < groups.size(); ++g) {
      Op* cons = top.create(OpKind::WgRegion, {}, {},
                            {{"role", std::string("consumer")}, {"num_warps", int64_t{4}}, {"regs", int64_t{consumerRegsFor(opt_, static_cast<int>(nConsumers))}}});
      cons->setLoc(loop->loc());
      Block* cb = cons->addRegion();
      Builder b(cb, loop->loc());
      ValueMap map;
      for (Op* op : prologueImpure) {
        if (!preArefs.count(op)) {
          cloneOp(b, *op, map);
          continue;
        }
        b.setLoc(op->loc());
        Op* get = b.create(OpKind::ArefGet, {preArefs.at(op), b.constInt(0, Type::scalarOf(Scalar::I32))}, {op->result()->type()});
        get->result()->nameHint = op->result()->nameHint;
        map[op->result()] = get->result();
        b.setLoc(loop->loc());
      }
      auto inner = [&](Builder& ib, Value* c) {
        Op* nl = consumerLoop(ib, loop, main_, groups[g], arefs, map, c);
        return c ? nl->result(nl->numResults() - 1) : nullptr;
      };
      std::vector<Value*> counts(arefSets.size(), nullptr);
      counts[0] = nest_.empty() ? inner(b, firstCount(b))
                                : cloneNest(b, 0, loop, map, nestCounter(b), inner, /*producer=*/false,
                                            groups.size() == 1 ? nullptr : &owned[g], g == 0);
      auto release = [&](bool afterEpilogue) {
        for (Op* op : preloads)
          if (usedBy(op->result(), epilogue) == afterEpilogue) {
            b.setLoc(lastUseOf(op->result(), loop, epilogue));
            b.create(OpKind::ArefConsumed, {preArefs.at(op), b.constInt(0, Type::scalarOf(Scalar::I32))}, {});
          }
      };
      release(false);
      for (Op* op : epilogue) {
        auto fw = std::find_if(follows_.begin(), follows_.end(), [&](const Follow& x) { return x.loop == op; });
        if (fw != follows_.end()) {
          Op* fl = consumerLoop(b, op, fw->roles, fw->roles.consumerCarried, arefSets[fw->set], map, setCount(b, counts, fw->set));
          counts[fw->set] = fl->result(fl->numResults() - 1);
        } else if (epilogueBelongs(*op, loop, owned[g], groups.size() == 1, g == 0)) {
          cloneOp(b, *op, map);
        }
      }
      release(true);
      b.setLoc(loop->loc());
      b.create(OpKind::Yield, {}, {});
    }
    say("@" + f_.name + ": specialized the loop at " + loop->loc().str() + " (depth " + std::to_string(depth_) + ", " +
        (cooperative_ ? "two cooperative consumers, one per half of the rows)" : "one consumer)"));
    say("@" + f_.name + ": setmaxnreg: producer " + std::to_string(producerRegsFor(opt_, cooperative_ ? 2 : 1)) + ", consumer " +
        std::to_string(consumerRegsFor(opt_, cooperative_ ? 2 : 1)) +
        (opt_.consumerRegs > 0 ? " (as asked)" : " (what the producer leaves of 512 per thread" + std::string(cooperative_ ? ", halved)" : ", at most 256)")));
    for (Op* n : nest_) {
      std::string carried;
      if (auto it = nestCarried_.find(n); it != nestCarried_.end())
        for (size_t k : it->second) {
          const Value* v = n->kind() == OpKind::If ? n->result(k) : n->region(0)->arg(n->kind() == OpKind::For ? k + 1 : k);
          carried += (carried.empty() ? "" : ", ") + (v->nameHint.empty() ? "#" + std::to_string(k) : v->nameHint);
        }
      say("  producer and consumer: " + at(*n) + " (around the loop: each role runs its copy" +
          (carried.empty() ? "" : "; the producer's carries " + carried) + ")");
    }
    if (outer_)
      walk(*outer_, [&](Op* o) {
        if (sharedReads_.count(o) && (producerNest_.count(o) || main_.producer.count(o)))
          say("  producer and consumer: " + at(*o) + " (a scalar read that both roles make: " +
              (readOnlyRead(*o) ? "the kernel does not write through its address's arguments)" : "it comes before the kernel's first write)"));
      });
    for (Op* l : main_.loads) say("  producer: " + at(*l) + " (a block load: seeds the producer)");
    for (auto& op : body.ops())
      if (main_.producer.count(op.get()) && !streamed(*op))
        say("  producer: " + at(*op) +
            (op->kind() == OpKind::Load ? " (a read of a buffer the kernel only reads, made as the producer runs ahead" +
                                              std::string(main_.shared.count(op.get()) ? "; the consumer makes it too)" : ")")
             : main_.shared.count(op.get()) ? " (address arithmetic, also computed by the consumer)"
                                            : " (address arithmetic of the loads)"));
    for (auto& op : body.ops())
      if (main_.consumerOps.count(op.get()))
        say("  consumer: " + at(*op) +
            (op->kind() == OpKind::DescLoad ? " (a 1-D block load: the consumer reads it from global memory where it is used)"
                                            : " (uses loaded tiles or loop-carried results)"));
    for (Op* op : prologueImpure)
      say(preArefs.count(op) ? "  producer: " + at(*op) + " (a block load before the loop: loaded once, handed over through %" +
                                   preArefs.at(op)->nameHint + " of depth 1)"
                             : "  consumer: " + at(*op) + " (before the loop, done by the consumer itself)");
    for (Op* op : epilogue) {
      auto fw = std::find_if(follows_.begin(), follows_.end(), [&](const Follow& x) { return x.loop == op; });
      say(fw == follows_.end() ? "  consumer: " + at(*op) + " (after the loop: the epilogue)"
          : fw->set == 0
              ? "  producer and consumer: " + at(*op) +
                    " (a later loop loading the same tiles: the producer streams them through the same arefs, the index carrying on)"
              : "  producer and consumer: " + at(*op) + " (a later loop loading other tiles: the producer streams them through " +
                    (setRoles[fw->set] == &fw->roles ? "arefs of their own" : "the arefs of the loop at " + loopOfSet(fw->set)->loc().str() +
                                                                                  ", the index carrying on") +
                    ")");
    }
    if (!followWhy_.empty()) say(followWhy_);
    for (size_t s = 0; s < setRoles.size(); ++s) {
      const Roles& r = *setRoles[s];
      const std::vector<Value*>& set = arefSets[s];
      if (set.size() == 1 && setRoles.size() == 1)
        say("  aref: " + std::to_string(r.loads.size()) + " tile(s) per slot cross from producer to consumer");
      for (size_t a = 0; (set.size() > 1 || setRoles.size() > 1) && a < set.size(); ++a) {
        std::string tiles;
        for (size_t k : r.groups[a]) tiles += (tiles.empty() ? "" : ", ") + at(*r.loads[k]);
        say("  aref %" + set[a]->nameHint + ": " + tiles +
            (set.size() > 1 ? " (read by other ops than the other arefs' tiles: released after its own last use)" : ""));
      }
    }

    // Remove the original loop, epilogue and moved prologue ops (users first).
    for (auto it = epilogue.rbegin(); it != epilogue.rend(); ++it) f_.body.erase(*it);
    f_.body.erase(topLoop);
    for (auto it = prologueImpure.rbegin(); it != prologueImpure.rend(); ++it) f_.body.erase(*it);
  }

  // The first later loop of aref set `s` (s > 0): the one whose loads made the set.
  const Op* loopOfSet(size_t s) const {
    for (const Follow& fw : follows_)
      if (fw.set == s) return fw.loop;
    return nullptr;
  }

  // A block load before the loop that the producer can issue: a top-level tile.desc_load whose
  // operands are kernel arguments or pure top-level values (the producer sees those).
  bool preloadable(const Op& op) const {
    if (!streamed(op) || op.parent != &f_.body) return false;
    for (Value* v : op.operands)
      if (Op* d = v->definingOp(); d && (d->parent != &f_.body || !isPure(d->kind()) || consumerPrologue_.count(d))) return false;
    return true;
  }
  static bool usedBy(const Value* v, const std::vector<Op*>& ops) {
    bool used = false;
    for (Op* op : ops)
      walk(*op, [&](Op* o) {
        for (Value* w : o->operands) used = used || w == v;
      });
    return used;
  }
  // Where a preloaded tile is last read: the last epilogue op or loop-body op that reads it.
  static Location lastUseOf(const Value* v, Op* loop, const std::vector<Op*>& epilogue) {
    Location where = loop->loc();
    auto scan = [&](Op* top) {
      walk(*top, [&](Op* o) {
        for (Value* w : o->operands)
          if (w == v) where = o->loc();
      });
    };
    scan(loop);
    for (Op* op : epilogue) scan(op);
    return where;
  }

  // The loop-body ops a consumer group runs: the backward slices of its carried values (all
  // consumer ops when it is the only group).
  std::set<const Op*> groupOps(Block& body, const std::set<size_t>& carried) {
    std::set<const Op*> out;
    if (!cooperative_) {
      for (auto& op : body.ops()) out.insert(op.get());
      return out;
    }
    std::vector<const Op*> work;
    for (size_t k : carried)
      if (const Op* d = body.terminator()->operand(k)->definingOp(); d && d->parent == &body) work.push_back(d);
    while (!work.empty()) {
      const Op* op = work.back();
      work.pop_back();
      if (!out.insert(op).second) continue;
      for (Value* v : op->operands)
        if (const Op* d = v->definingOp(); d && d->parent == &body) work.push_back(d);
    }
    return out;
  }
  // Whether an epilogue op belongs to the group that carries `carried`: it depends (through earlier
  // epilogue ops) on one of the group's loop results, or it is a pure op that depends on none of the
  // loop's results (such as a store's column offset computed after the loop), which every group
  // computes for itself.
  bool epilogueBelongs(const Op& op, Op* loop, const std::set<size_t>& carried, bool only, bool first) {
    if (only || op.kind() == OpKind::Barrier) return true;  // a barrier: every consumer meets there
    std::vector<const Op*> work{&op};
    std::set<const Op*> seen;
    bool usesLoop = false, mine = false, othersTile = false;
    while (!work.empty()) {
      const Op* o = work.back();
      work.pop_back();
      if (!seen.insert(o).second) continue;
      // A half's load of a residual (splitRows) belongs to that half's group, as what it feeds does.
      for (int h = 0; h < 2; ++h)
        if (halfLoads_[h].count(o)) (h == (first ? 0 : 1) ? mine : othersTile) = true;
      std::vector<Value*> read;  // its operands and those of the ops in its regions
      walk(const_cast<Op&>(*o), [&](Op* in) { read.insert(read.end(), in->operands.begin(), in->operands.end()); });
      for (Value* v : read) {
        if (v->definingOp() == loop) {
          usesLoop = true;
          if (carried.count(static_cast<size_t>(v->index()))) mine = true;
          else if (v->type().isTile()) othersTile = true;  // another group's half
        } else if (const Op* d = v->definingOp(); d && d->parent == loop->parent) {
          work.push_back(d);
        }
      }
    }
    if (othersTile) return false;  // reads another group's half (its scalars are carried here too)
    if (mine) return true;
    if (usesLoop) return false;  // the other group's
    // Pure ops independent of the loop are computed by every group, and so are loads of buffers the
    // kernel only reads (a bias row both halves add); anything else (a store of something else, a
    // region) is done once, by the first group.
    return (isPure(op.kind()) && op.regions().empty()) || readOnlyTileRead(op) || first;
  }

  // Whether `v`, used at the top level of a loop body, is the same in every iteration: it does not
  // depend on the body's arguments, and the ops of the body it depends on are pure scalar ops without
  // regions and without a division or remainder by a non-constant (moving one out of a loop that may
  // not run could divide by zero where the kernel does not).
  static bool invariantIn(const Value* v, const Block& body, int depth = 16) {
    if (v->ownerBlock() == &body) return false;
    const Op* d = v->definingOp();
    if (!d || d->parent != &body) return true;
    if (depth == 0 || !isPure(d->kind()) || !d->regions().empty() || d->numResults() != 1 || !v->type().isScalar())
      return false;
    if (d->kind() == OpKind::Div || d->kind() == OpKind::FloorDiv || d->kind() == OpKind::Rem) {
      const Op* c = d->operand(1)->definingOp();
      if (!c || c->kind() != OpKind::Constant || c->attrs.at("value") == AttrValue{int64_t{0}}) return false;
    }
    for (const Value* o : d->operands)
      if (!invariantIn(o, body, depth - 1)) return false;
    return true;
  }
  // A copy at b's insertion point of the body ops that compute `v` (invariantIn(v, body) holds).
  static Value* hoistBefore(Builder& b, Value* v, const Block& body, ValueMap& copies) {
    const Op* d = v->definingOp();
    if (!d || d->parent != &body) return v;
    if (auto it = copies.find(v); it != copies.end()) return it->second;
    for (Value* o : d->operands) copies[o] = hoistBefore(b, o, body, copies);
    b.setLoc(d->loc());
    Op* c = cloneOp(b, *d, copies);
    return copies[v] = c->result();
  }
  // Whether a and b hold the same value (ir::sameValue: `pid_m * BLOCK_M` written once in the loop and
  // again in the epilogue), a counter that always equals its loop's induction variable counting as it.
  static bool sameValue(const Value* a, const Value* b, int depth = 16) {
    return ir::sameValue(a, b, depth, [](const Value* x, const Value* y, int d) { return derivedIv(x, y, d) || derivedIv(y, x, d); });
  }

  // Whether `v` is a counter that always equals the induction variable `iv` of its loop: v = c + s,
  // where c is carried by that loop, starts one step before the loop's lower bound (lb - s) and is
  // advanced to v each iteration, and s is the loop's step. (Triton's persistent-matmul tutorial
  // keeps such a counter, `tile_id_c`, for its epilogue.)
  static bool derivedIv(const Value* v, const Value* iv, int depth) {
    const Block* body = iv->ownerBlock();
    const Op* loop = body ? body->parentOp : nullptr;
    if (iv->definingOp() || !loop || loop->kind() != OpKind::For || iv->index() != 0) return false;
    const Op* add = v->definingOp();
    if (!add || add->kind() != OpKind::Add || add->parent != body) return false;
    const Value* c = add->operand(0);
    const Value* s = add->operand(1);
    if (c->ownerBlock() != body || c->definingOp() || c->index() == 0) std::swap(c, s);
    if (c->ownerBlock() != body || c->definingOp() || c->index() == 0) return false;
    const auto k = static_cast<size_t>(c->index() - 1);
    const Op* yield = body->terminator();
    if (!yield || k >= yield->numOperands() || yield->operand(k) != v) return false;
    const Op* init = loop->operand(3 + k)->definingOp();
    if (!init || init->kind() != OpKind::Sub) return false;
    return sameValue(s, loop->operand(2), depth - 1) && sameValue(init->operand(1), loop->operand(2), depth - 1) &&
           sameValue(init->operand(0), loop->operand(0), depth - 1);
  }

  // Cooperative form: rewrites a GEMM-like loop (tile.dots accumulating into loop-carried tiles, or
  // whose products elementwise ops add into them, each A loaded by rows through a descriptor at one
  // row offset or gathered through an index tile, the results stored through descriptors or
  // row-computed pointers) into two row halves, each with its own accumulators, loads and stores. The
  // rewritten tile IR computes the same thing; warp-specialize then gives each half its own consumer.
  // Several dots (a gated MLP's `x @ w1` and `x @ w3`, sharing A's tile or not) split together: each
  // half carries its rows of every accumulator.
  // A broadcast of one row to every row (a bias row for the block's columns, `bias[None, :]`) from a
  // value made in the epilogue's block or one around it: each half broadcasts the same row.
  static bool rowInvariant(const Op& d, const std::set<const Block*>& around) {
    if (d.kind() != OpKind::Broadcast || d.operand(0)->type().rank() != 2 || d.operand(0)->type().shape[0] != 1) return false;
    const Value* r = d.operand(0);
    const Block* where = r->definingOp() ? r->definingOp()->parent : r->ownerBlock();
    return where && around.count(where);
  }
  // A tile.dot without an accumulator whose product the loop adds into a carried tile through
  // elementwise ops, as block-scaled GEMMs write it (`acc += tl.dot(a, b) * a_s[:, None] *
  // b_s[None, :]`): the ops from the product to the yield (each the only user of the one before), one
  // of them reading the carried value (its only use). Sets the carried index `k`, the carried value
  // `acc` and the ops (scaled_[dot]); what else they read is checked by splitRows.
  bool scaledDot(Op* dot, Block& body, std::map<const Value*, int>& uses, size_t& k, Value*& acc, std::string& why) {
    auto fail = [&](const std::string& w) { return why = "the " + at(*dot) + " " + w, false; };
    if (dot->numOperands() != 2) return fail("has an accumulator that is not carried by the loop");
    Op* yield = body.terminator();
    std::vector<Op*>& chain = scaled_[dot];
    chain.clear();
    acc = nullptr;
    for (Value* v = dot->result();;) {
      if (uses[v] != 1) return fail("has no accumulator the loop carries, and its product has other uses (as attention's QK^T)");
      Op* user = nullptr;
      for (auto& op : body.ops())
        if (std::find(op->operands.begin(), op->operands.end(), v) != op->operands.end()) user = op.get();
      if (!user) return fail("has no accumulator the loop carries (its product is used in a nested region)");
      if (user == yield) {
        k = static_cast<size_t>(std::find(yield->operands.begin(), yield->operands.end(), v) - yield->operands.begin());
        break;
      }
      if (!isElementwise(user->kind()) || user->numResults() != 1 || !user->regions().empty() ||
          user->result()->type().shape != dot->result()->type().shape)
        return fail("has no accumulator the loop carries, and " + at(*user) + " is not an elementwise op on its product (as attention's QK^T)");
      for (Value* o : user->operands)
        if (o->ownerBlock() == &body && !o->definingOp() && o->index() > 0) {
          if (acc) return fail("has a product combined with two loop-carried values");
          acc = o;
        }
      chain.push_back(user);
      v = user->result();
    }
    if (!acc || acc != body.arg(k + 1))
      return fail("has no accumulator the loop carries: its product reaches the loop's yield without the value carried there");
    return true;
  }

  // A reshape between a BM-row vector and a BM x 1 column (block-access makes gathered rows so): row
  // i stays row i.
  static bool rowVector(const Op& reshape) {
    auto column = [](const Type& t) { return t.rank() == 1 || (t.rank() == 2 && t.shape[1] == 1); };
    const Type &from = reshape.operand(0)->type(), &to = reshape.result()->type();
    return from.rank() >= 1 && to.rank() >= 1 && from.shape[0] == to.shape[0] && column(from) && column(to);
  }

  // Returns the new loop, or null with the reason.
  Op* splitRows(Op* loop, std::string& why) {
    Block& body = *loop->region(0);
    Block& home = *loop->parent;  // the function body, or the body of the loop or guard around it
    std::set<const Block*> around;  // home and the blocks around it, up to the function body
    for (Block* b = &home; b; b = b->parentOp ? b->parentOp->parent : nullptr) around.insert(b);
    Op* yield = body.terminator();
    std::vector<Op*> dots;
    for (auto& op : body.ops())
      if (op->kind() == OpKind::Dot) dots.push_back(op.get());
    if (dots.empty()) return why = "no tile.dot with an accumulator in the loop", nullptr;
    // Per dot: its accumulator's index among the loop's carried values, A's load and its descriptor.
    std::vector<size_t> ks;
    std::vector<Op*> aLoads, aDescs;  // distinct, in program order
    Value* row = nullptr;       // A's row offset, or
    Value* gathered = nullptr;  // the index tile A's rows are gathered through
    bool hoist = false;
    int64_t bm = 0;
    std::map<const Value*, int> uses;
    countUses(f_.body, uses);
    for (Op* dot : dots) {
      size_t k = 0;
      Value* acc = nullptr;
      if (dot->numOperands() == 3) {
        acc = dot->operand(2);
        if (acc->ownerBlock() != &body || acc->index() == 0) return why = "the accumulator is not carried by the loop", nullptr;
        k = static_cast<size_t>(acc->index() - 1);
        if (yield->operand(k) != dot->result()) return why = "the loop does not carry the tile.dot's result", nullptr;
      } else if (!scaledDot(dot, body, uses, k, acc, why)) {
        return nullptr;
      }
      if (std::find(ks.begin(), ks.end(), k) != ks.end()) return why = "two tile.dots accumulate into one value", nullptr;
      ks.push_back(k);
      Op* la = dot->operand(0)->definingOp();
      if (!la || la->kind() != OpKind::DescLoad || la->parent != &body) return why = "A is not a block load in the loop", nullptr;
      Op* mda = la->operand(0)->definingOp();
      Value* r = la->operand(1);
      // A's descriptor: made at the top, in a loop or guard around the loop (a persistent kernel's
      // tile loop), or in the loop itself (as block-access makes it where its base moves with the
      // tile); its half is made next to it.
      if (!mda || mda->kind() != OpKind::MakeDesc || (!around.count(mda->parent) && mda->parent != &body))
        return why = "A's descriptor is made inside a nested region of the loop", nullptr;
      // A row offset written inside the K loop (Triton's persistent form: `a_desc.load([pid_m * BLOCK_M, k])`)
      // is computed before the loop instead, when it does not depend on the loop.
      // Rows gathered through an index tile (a MoE GEMM's token ids): each half gathers through its
      // half of the index tile (checked below to be computed from the block's rows).
      if (r->type().isTile()) {
        if (gathered && r != gathered) return why = "the tile.dots' A tiles are gathered through different index tiles", nullptr;
        gathered = r, bm = la->result()->type().shape[0];
      } else {
        const bool h = r->definingOp() && r->definingOp()->parent == &body;
        if (h ? !invariantIn(r, body) : r->ownerBlock() == &body || (r->definingOp() && r->definingOp()->parent != &home))
          return why = "A's row offset depends on the loop", nullptr;
        if (!row) row = r, hoist = h, bm = la->result()->type().shape[0];
        else if (r != row || la->result()->type().shape[0] != bm)
          return why = "the tile.dots' A tiles are loaded at different row offsets or heights", nullptr;
      }
      if (gathered && row) return why = "some tile.dots gather A's rows and others load them at a row offset", nullptr;
      Op* init = loop->operand(3 + k)->definingOp();
      if (!init || init->kind() != OpKind::Constant) return why = "the accumulator does not start from a constant", nullptr;
      if (uses[acc] != 1) return why = "A's tile or the accumulator has other uses in the loop", nullptr;
      if (std::find(aLoads.begin(), aLoads.end(), la) == aLoads.end()) aLoads.push_back(la);
      if (std::find(aDescs.begin(), aDescs.end(), mda) == aDescs.end()) aDescs.push_back(mda);
    }
    for (Op* la : aLoads)
      if (uses[la->result()] != std::count_if(dots.begin(), dots.end(), [&](Op* d) { return d->operand(0) == la->result(); }))
        return why = "A's tile or the accumulator has other uses in the loop", nullptr;
    if (bm % 128 != 0) return why = "the M tile (" + std::to_string(bm) + ") is not a multiple of 128 (two halves of 64-row MMAs)", nullptr;
    // After the loop: elementwise ops and casts on the result (an activation, the output type),
    // whose other operands are scalars, tile constants or splats, and column slices of those (an
    // epilogue subtile), a tl.dot into it (a peeled K block), stored by tile.desc_stores (through one
    // descriptor or several: each output) or through row-computed pointers.
    // Each half repeats that epilogue on its rows.
    std::vector<Value*> results;  // each dot's, in the dots' order
    for (size_t k : ks) results.push_back(loop->result(k));
    auto aResultShape = [&](const Value* v) {
      return std::any_of(results.begin(), results.end(), [&](const Value* r) { return r->type().shape == v->type().shape; });
    };
    std::vector<Op*> chain;   // in program order
    std::vector<Op*> stores;  // likewise
    std::set<const Op*> loadedTiles;  // tile.desc_loads of a residual the epilogue combines with the result
    std::vector<Op*> residualOps;     // the elementwise ops on them, each used once (erased after the split)
    // A tile the epilogue combines with the result that each half can make at half height: a tile
    // constant or splat; a tile of the result's shape loaded at A's row offset (a residual) in the
    // epilogue's block, used once; or an elementwise op on such tiles (and scalars), used once.
    // A tile computed from the block's rows made before the loop (`scale_ptr + rm[:, None]` and its
    // load: a per-row scale an int8 GEMM's epilogue applies): aranges of BM rows, expand_dims along
    // the rows, broadcasts of those, splats, elementwise ops and pointer loads; each half makes it
    // again from its own rows (the arange's start moved), and the full-height ops go if unused.
    // A tile.desc_load of BM rows through a descriptor made in the epilogue's block or around it (a
    // residual at A's row offset: rank 2, its column given; a 1-D row of scales, bitsandbytes'
    // x_factor, or the token ids a MoE GEMM gathers and scatters by: rank 1). Its row i is the block's
    // row i whatever its offset R: half h loads at R + h * BM / 2.
    auto loadAtRows = [&](const Op* d) {
      const Op* md = d->operand(0)->definingOp();
      return d->kind() == OpKind::DescLoad && d->numOperands() == 1 + static_cast<size_t>(d->result()->type().rank()) && md &&
             md->kind() == OpKind::MakeDesc && around.count(md->parent);
    };
    std::set<Op*> rowOps;
    std::function<bool(Value*, int)> rowDag = [&](Value* v, int depth) -> bool {
      if (!v->type().isTile()) return true;
      Op* d = v->definingOp();
      if (!d || depth == 0 || !around.count(d->parent) || d->numResults() != 1 || !d->regions().empty()) return false;
      const Type& t = v->type();
      if (d->kind() == OpKind::Constant || d->kind() == OpKind::Splat) return t.shape[0] == bm;
      if (t.shape[0] != bm) return false;
      bool ok = false;
      if (d->kind() == OpKind::Arange) ok = t.rank() == 1 && d->intAttr("start") == 0;
      else if (d->kind() == OpKind::DescLoad) ok = t.rank() == 1 && loadAtRows(d);
      else if (d->kind() == OpKind::ExpandDims) ok = d->intAttr("axis") == 1 && rowDag(d->operand(0), depth - 1);
      else if (d->kind() == OpKind::Reshape) ok = rowVector(*d) && rowDag(d->operand(0), depth - 1);
      else if (rowInvariant(*d, around)) return true;  // the same row for every row (`rn[None, :]` of a scattered store's columns)
      else if (d->kind() == OpKind::Broadcast) ok = d->operand(0)->type().shape[0] == bm && rowDag(d->operand(0), depth - 1);
      else if (isElementwise(d->kind()) || d->kind() == OpKind::AddPtr || d->kind() == OpKind::Load)
        ok = std::all_of(d->operands.begin(), d->operands.end(), [&](Value* o) { return !o->type().isTile() || (o->type().shape == t.shape && rowDag(o, depth - 1)); });
      if (ok) rowOps.insert(d);
      return ok;
    };
    std::function<bool(Value*, int)> halvable = [&](Value* v, int depth) -> bool {
      if (v->type().isScalar()) return true;
      Op* d = v->definingOp();
      if (!d || depth == 0) return false;
      if (d->kind() == OpKind::Constant || d->kind() == OpKind::Splat) return true;
      if (rowInvariant(*d, around)) return true;
      if (rowDag(v, 16)) return true;
      if (d->parent != &home || uses[v] != 1 || !aResultShape(v)) return false;
      if (d->kind() == OpKind::DescLoad) {
        if (v->type().rank() != 2 || !loadAtRows(d)) return false;
        loadedTiles.insert(d);
        return true;
      }
      if (!isElementwise(d->kind()) || d->numResults() != 1 || !d->regions().empty()) return false;
      for (Value* o : d->operands)
        if (!halvable(o, depth - 1)) return false;
      residualOps.push_back(d);
      return true;
    };
    // What a scaled dot's ops read besides its product and the accumulator: scalars, tile constants
    // and splats, a row broadcast to every row (`b_s[None, :]`: both halves read the same), and tiles
    // of the block's rows (`a_s[:, None]`: a 1-D load at A's row offset, through a descriptor made in
    // the loop or around it, expand_dims and broadcasts of it, elementwise ops; or rowDag's forms
    // before the loop), which each half makes from its own rows.
    std::set<const Op*> loopRowOps;
    std::function<bool(Value*, int)> loopRows = [&](Value* v, int depth) -> bool {
      if (!v->type().isTile()) return true;
      Op* d = v->definingOp();
      if (!d || depth == 0 || d->numResults() != 1 || !d->regions().empty()) return false;
      if (d->parent != &body) return rowDag(v, depth);
      const Type& t = v->type();
      if (t.shape[0] != bm) return false;
      bool ok = false;
      if (d->kind() == OpKind::Constant || d->kind() == OpKind::Splat) {
        ok = true;
      } else if (d->kind() == OpKind::DescLoad) {
        const Op* md = d->operand(0)->definingOp();
        ok = t.rank() == 1 && d->numOperands() == 2 && md && md->kind() == OpKind::MakeDesc &&
             (md->parent == &body || around.count(md->parent));
      } else if (d->kind() == OpKind::Arange) {
        ok = t.rank() == 1 && d->intAttr("start") == 0;
      } else if (d->kind() == OpKind::ExpandDims) {
        ok = d->intAttr("axis") == 1 && loopRows(d->operand(0), depth - 1);
      } else if (d->kind() == OpKind::Reshape) {
        ok = rowVector(*d) && loopRows(d->operand(0), depth - 1);
      } else if (d->kind() == OpKind::Broadcast) {
        ok = d->operand(0)->type().shape[0] == bm && loopRows(d->operand(0), depth - 1);
      } else if (isElementwise(d->kind()) || d->kind() == OpKind::AddPtr || d->kind() == OpKind::Load) {
        ok = std::all_of(d->operands.begin(), d->operands.end(),
                         [&](Value* o) { return !o->type().isTile() || (o->type().shape == t.shape && loopRows(o, depth - 1)); });
      }
      if (ok) loopRowOps.insert(d);
      return ok;
    };
    std::set<const Op*> chainOps;
    for (const auto& [dot, ops] : scaled_) {
      const Value* prev = dot->result();
      for (Op* op : ops) {
        for (Value* o : op->operands) {
          if (o == prev || (o->ownerBlock() == &body && !o->definingOp()) || !o->type().isTile()) continue;
          const Op* d = o->definingOp();
          const bool rowForAll = d->kind() == OpKind::Broadcast && d->operand(0)->type().rank() == 2 && d->operand(0)->type().shape[0] == 1;
          if (d->kind() != OpKind::Constant && d->kind() != OpKind::Splat && !rowForAll && !loopRows(o, 16))
            return why = "the product of " + at(*dot) + " is combined by " + at(*op) + " with a tile that is not a constant, a splat, a "
                         "row broadcast to every row or a tile of the block's rows", nullptr;
        }
        chainOps.insert(op);
        prev = op->result();
      }
    }
    if (gathered && !loopRows(gathered, 16))
      return why = "A's rows are gathered through an index tile that is not computed from the block's rows (a 1-D load of them, "
                   "aranges, elementwise ops)", nullptr;
    std::vector<Op*> epilogue;  // both, in program order
    std::set<const Value*> rowValues(results.begin(), results.end());
    for (auto& op : home.ops()) {
      bool usesRows = std::any_of(op->operands.begin(), op->operands.end(), [&](Value* v) { return rowValues.count(v) != 0; });
      if (!usesRows) continue;
      if (op->kind() == OpKind::DescStore) {
        // (at any row offset R: the block's row i goes to R + i, half h's from R + h * BM / 2)
        if (!rowValues.count(op->operand(1)) ||
            std::count_if(op->operands.begin(), op->operands.end(), [&](Value* v) { return rowValues.count(v) != 0; }) != 1)
          return why = "the result is not stored through a descriptor at A's row offset", nullptr;
        stores.push_back(op.get());
        epilogue.push_back(op.get());
        continue;
      }
      // A store through a tile of pointers computed from the block's rows (a MoE GEMM's scatter to the
      // rows its token ids name), its mask likewise: each half stores its rows.
      if (op->kind() == OpKind::Store) {
        if (!rowValues.count(op->operand(1)) || rowValues.count(op->operand(0)) || !rowDag(op->operand(0), 16) ||
            (op->numOperands() > 2 && (rowValues.count(op->operand(2)) || !rowDag(op->operand(2), 16))) || op->numOperands() > 3)
          return why = "the result is stored through pointers not computed from the block's rows", nullptr;
        epilogue.push_back(op.get());
        continue;
      }
      // A tl.dot after the loop into the result (a peeled last K block, FlagGems' mm and addmm): its A a
      // block load of the block's rows (each half loads its own), its B anything else (both halves read
      // the same tile, each its own load of a buffer the kernel only reads).
      if (op->kind() == OpKind::Dot && op->numOperands() == 3 && rowValues.count(op->operand(2)) && !rowValues.count(op->operand(0)) &&
          !rowValues.count(op->operand(1))) {
        Op* la = op->operand(0)->definingOp();
        Op* lb2 = op->operand(1)->definingOp();
        if (!la || !loadAtRows(la) || la->result()->type().rank() != 2 || la->result()->type().shape[0] != bm || uses[la->result()] != 1 ||
            la->parent != &home || !lb2 || (lb2->parent == &home && !readOnlyTileRead(*lb2) && !isPure(lb2->kind())))
          return why = "the tile.dot " + at(*op) + " after the loop does not read a block load of the block's rows as A", nullptr;
        loadedTiles.insert(la);
        chain.push_back(op.get());
        epilogue.push_back(op.get());
        rowValues.insert(op->result());
        continue;
      }
      const bool columns = op->kind() == OpKind::Slice && op->intAttr("axis") == 1;
      if ((!isElementwise(op->kind()) && !columns) || op->numResults() != 1 || !op->regions().empty())
        return why = "the result is used by " + at(*op) + " (an epilogue of elementwise ops, column slices and stores is split)", nullptr;
      for (Value* v : op->operands) {
        if (rowValues.count(v) || v->type().isScalar()) continue;
        if (!halvable(v, 8))
          return why = "the epilogue op " + at(*op) + " combines the result with a tile that is not a constant, a splat, a row "
                       "broadcast to every row, a tile loaded at A's row offset or elementwise ops on those", nullptr;
      }
      chain.push_back(op.get());
      epilogue.push_back(op.get());
      rowValues.insert(op->result());
    }
    if (std::none_of(epilogue.begin(), epilogue.end(), [](const Op* o) { return o->kind() == OpKind::DescStore || o->kind() == OpKind::Store; }))
      return why = "the result is not stored through a descriptor at A's row offset", nullptr;
    // The result and the epilogue's values are used by the epilogue only.
    auto usesInEpilogue = [&](const Value* v) {
      int n = 0;
      for (Op* o : epilogue) {
        const bool store = o->kind() == OpKind::DescStore || o->kind() == OpKind::Store;  // counts its stored value
        n += static_cast<int>(std::count(o->operands.begin() + (store ? 1 : 0), o->operands.begin() + (store ? 2 : o->numOperands()), v));
      }
      return n;
    };
    for (const Value* res : results)
      if (uses[res] != usesInEpilogue(res)) return why = "the loop's result is used outside the epilogue", nullptr;
    for (Op* op : chain)
      if (uses[op->result()] != usesInEpilogue(op->result()))
        return why = "a value of the epilogue (" + at(*op) + ") is used outside it", nullptr;
    // Each stored descriptor (C, and any other output the epilogue writes at A's row offset).
    std::vector<Op*> storeDescs;
    for (Op* st : stores) {
      Op* md = st->operand(0)->definingOp();
      if (!md || md->kind() != OpKind::MakeDesc || !around.count(md->parent))
        return why = "the descriptor " + at(*st) + " stores through is made inside a nested region", nullptr;
      if (std::find(storeDescs.begin(), storeDescs.end(), md) == storeDescs.end()) storeDescs.push_back(md);
    }

    // Halved descriptors: made at the top (before a persistent kernel's tile loop) when the original
    // is, else right before the original (C's made after the loop, as block-access makes it for a
    // pointer-form store; A's or C's in a tile loop; A's in the loop is handled in the copy below),
    // the second half's row offset and accumulator before the loop.
    Op* first = outer_ ? outer_ : loop;
    auto atTop = [&](const Op* md) {
      if (md->parent != &f_.body) return false;
      for (auto& op : f_.body.ops()) {
        if (op.get() == first) return false;
        if (op.get() == md) return true;
      }
      return false;
    };
    Builder tb(&f_.body, loop->loc());
    Builder b(&home, loop->loc());
    b.setInsertionPointBefore(loop);
    if (hoist) {
      ValueMap copies;
      row = hoistBefore(b, row, body, copies);
    }
    auto halfName = [](const Op* md, const char* unnamed) {
      const std::string& h = md->result()->nameHint;
      return (h.empty() ? std::string(unnamed) : h) + "_half";
    };
    auto halfOf = [](const Type& t) {
      auto s = t.shape;
      s[0] /= 2;
      return t.isDesc() ? Type::descOf(t.scalar, s) : t.withShape(s);
    };
    auto halfArange = [&](Builder& at, const Op& d, int h) {  // half h's rows of the block's arange
      const int64_t start = d.intAttr("start") + h * (bm / 2);
      return at.op1(OpKind::Arange, {}, halfOf(d.result()->type()), {{"start", start}, {"end", start + bm / 2}});
    };
    std::map<const Op*, Value*> aHalves;  // each A descriptor's half-height one
    for (Op* mda : aDescs) {
      if (mda->parent == &body) continue;  // made in the loop: its half next to its copy, below
      tb.setInsertionPointBefore(atTop(mda) ? first : mda);
      tb.setLoc(mda->loc());
      Value* h = tb.op1(OpKind::MakeDesc, mda->operands, halfOf(mda->result()->type()));
      h->nameHint = halfName(mda, "a_desc");
      aHalves[mda] = h;
    }
    std::map<const Value*, Value*> cHalves;  // each stored descriptor's half-height one
    for (Op* mdc : storeDescs) {
      tb.setInsertionPointBefore(atTop(mdc) ? first : mdc);
      tb.setLoc(mdc->loc());
      Value* cHalf = tb.op1(OpKind::MakeDesc, mdc->operands, halfOf(mdc->result()->type()));
      cHalf->nameHint = halfName(mdc, "c_desc");
      cHalves[mdc->result()] = cHalf;
    }
    b.setLoc(aLoads.front()->loc());
    Value* row2 = nullptr;
    if (row) {
      row2 = b.op1(OpKind::Add, {row, b.constInt(bm / 2, row->type())}, row->type());
      row2->nameHint = "row_half";
    }
    // Half h's offset of a load of the block's rows at `off`: off + h * BM / 2 (A's second half: row2).
    auto halfOffset = [&](Builder& at, Value* off, int h) -> Value* {
      if (h == 0) return off;
      if (row && sameValue(off, row)) return row2;
      return at.op1(OpKind::Add, {off, at.constInt(bm / 2, off->type())}, off->type());
    };
    // The new loop carries the top half of each accumulator where the original carried it, and the
    // bottom halves after the original's carried values, in the dots' order.
    std::map<size_t, Value*> accInits;
    for (size_t k : ks) {
      Op* init = loop->operand(3 + k)->definingOp();
      b.setLoc(init->loc());
      accInits[k] = b.op1(OpKind::Constant, {}, halfOf(loop->result(k)->type()), {{"value", init->attrs.at("value")}});
    }
    std::vector<Value*> ops{loop->operand(0), loop->operand(1), loop->operand(2)};
    std::vector<Type> types;
    for (size_t j = 0; j < loop->numResults(); ++j) {
      ops.push_back(accInits.count(j) ? accInits[j] : loop->operand(3 + j));
      types.push_back(accInits.count(j) ? halfOf(loop->result(j)->type()) : loop->result(j)->type());
    }
    for (size_t k : ks) ops.push_back(accInits[k]), types.push_back(halfOf(loop->result(k)->type()));
    b.setLoc(loop->loc());
    Op* nl = b.create(OpKind::For, ops, types, loop->attrs);
    Block* nb = nl->addRegion();
    ValueMap map;
    map[body.arg(0)] = nb->addArg(body.arg(0)->type(), body.arg(0)->nameHint);
    for (size_t j = 0; j < loop->numResults(); ++j)
      map[body.arg(j + 1)] = nb->addArg(types[j], body.arg(j + 1)->nameHint + (accInits.count(j) ? "_top" : ""));
    std::vector<Value*> accBots, bots(ks.size());  // per dot: its bottom accumulator (the block's argument), its bottom result
    std::map<const Value*, Value*> hm[2];  // a scaled dot's values in each half (its product, the accumulator, the ops on them)
    std::map<const Op*, Value*> loopHalfDescs;  // the half-height descriptor of a 1-D load at A's rows in a scaled dot's ops
    for (size_t d = 0; d < ks.size(); ++d) halfOfCarried_[ks[d]] = 0, halfOfCarried_[loop->numResults() + d] = 1;
    for (size_t d = 0; d < ks.size(); ++d)
      accBots.push_back(nb->addArg(types[loop->numResults() + d], body.arg(ks[d] + 1)->nameHint + "_bot"));
    Builder lb(nb, loop->loc());
    std::map<const Value*, std::pair<Value*, Value*>> aRows;  // each A tile's top and bottom half loads
    // A value of the block's rows in half h, on half-height tiles made in the loop: a scaled dot's
    // product, accumulator and the ops on them, its rows' scales, the shared row of column scales
    // broadcast to half height; the index tile gathered rows are read through.
    Builder pre(&home, loop->loc());  // a value made before the loop: its halves before the new loop too
    pre.setInsertionPointBefore(nl);
    std::function<Value*(Value*, int)> halfIn = [&](Value* v, int h) -> Value* {
      if (auto it = hm[h].find(v); it != hm[h].end()) return it->second;
      if (!v->type().isTile()) return mapped(map, v);
      const Op* d = v->definingOp();
      Builder& at = d->parent == &body ? lb : pre;
      Value* c;
      at.setLoc(d->loc());
      if (d->kind() == OpKind::Constant) {
        c = at.op1(OpKind::Constant, {}, halfOf(v->type()), d->attrs);
      } else if (d->kind() == OpKind::Splat || (d->kind() == OpKind::Broadcast && d->operand(0)->type().shape[0] == 1)) {
        c = at.op1(d->kind(), {mapped(map, d->operand(0))}, halfOf(v->type()), d->attrs);  // the same row (or scalar) in both halves
      } else if (d->kind() == OpKind::DescLoad) {  // this half's rows of a 1-D load of the block's rows
        const Op* md = d->operand(0)->definingOp();
        Value*& hd = loopHalfDescs[md];
        if (!hd) {
          std::vector<Value*> mo;
          for (Value* x : md->operands) mo.push_back(mapped(map, x));
          if (md->parent != &body) tb.setInsertionPointBefore(outer_ && atTop(md) ? first : nl), tb.setLoc(md->loc());  // before the new loop
          hd = (md->parent == &body ? lb : tb).op1(OpKind::MakeDesc, mo, halfOf(md->result()->type()));
          hd->nameHint = halfName(md, "s_desc");
        }
        at.setLoc(d->loc());
        c = at.op1(OpKind::DescLoad, {hd, halfOffset(at, mapped(map, d->operand(1)), h)}, halfOf(v->type()), d->attrs);
      } else if (d->kind() == OpKind::Arange) {  // this half's rows of the block
        c = halfArange(at, *d, h);
      } else {  // the same op at half height
        std::vector<Value*> hs;
        for (Value* o : d->operands) hs.push_back(halfIn(o, h));
        at.setLoc(d->loc());
        c = at.op1(d->kind(), hs, halfOf(v->type()), d->attrs);
      }
      if (!v->nameHint.empty()) c->nameHint = v->nameHint + (h ? "_bot" : "_top");
      return hm[h][v] = c;
    };

    for (auto& op : body.ops()) {
      const auto dot = std::find(dots.begin(), dots.end(), op.get());
      if (std::find(aDescs.begin(), aDescs.end(), op.get()) != aDescs.end()) {  // A's descriptor made in the loop: its half next to its copy
        cloneOp(lb, *op, map);
        std::vector<Value*> mo;
        for (Value* v : op->operands) mo.push_back(mapped(map, v));
        lb.setLoc(op->loc());
        Value* h = lb.op1(OpKind::MakeDesc, mo, halfOf(op->result()->type()));
        h->nameHint = halfName(op.get(), "a_desc");
        aHalves[op.get()] = h;
      } else if (std::find(aLoads.begin(), aLoads.end(), op.get()) != aLoads.end()) {
        Op* la = op.get();
        lb.setLoc(la->loc());
        std::vector<Value*> lo{aHalves.at(la->operand(0)->definingOp()), gathered ? halfIn(gathered, 0) : row};
        for (size_t o = 2; o < la->numOperands(); ++o) lo.push_back(mapped(map, la->operand(o)));
        lb.setLoc(la->loc());
        Value* top = lb.op1(OpKind::DescLoad, lo, halfOf(la->result()->type()));
        top->nameHint = la->result()->nameHint + "_top";
        lo[1] = gathered ? halfIn(gathered, 1) : row2;
        lb.setLoc(la->loc());
        Value* bot = lb.op1(OpKind::DescLoad, lo, halfOf(la->result()->type()));
        bot->nameHint = la->result()->nameHint + "_bot";
        aRows[la->result()] = {top, bot};
      } else if (dot != dots.end()) {
        const size_t d = static_cast<size_t>(dot - dots.begin());
        Op* o = op.get();
        lb.setLoc(o->loc());
        const auto& [top, bot] = aRows.at(o->operand(0));
        Value* b2 = mapped(map, o->operand(1));
        const bool scaled = o->numOperands() == 2;
        std::vector<Value*> topOps{top, b2}, botOps{bot, b2};
        if (!scaled) topOps.push_back(map.at(o->operand(2))), botOps.push_back(accBots[d]);
        Value* t = lb.op1(OpKind::Dot, topOps, halfOf(o->result()->type()), o->attrs);
        Value* u = lb.op1(OpKind::Dot, botOps, halfOf(o->result()->type()), o->attrs);
        if (!o->result()->nameHint.empty()) t->nameHint = o->result()->nameHint + "_top", u->nameHint = o->result()->nameHint + "_bot";
        if (scaled) {
          hm[0][o->result()] = t, hm[1][o->result()] = u;
          const Value* acc = body.arg(ks[d] + 1);
          hm[0][acc] = map.at(acc), hm[1][acc] = accBots[d];
        } else {
          map[o->result()] = t;
          bots[d] = u;
        }
      } else if (chainOps.count(op.get())) {
        // made per half at the yield
      } else if (op.get() == yield) {
        // Each scaled dot's ops once per half (halfIn).
        for (size_t d = 0; d < dots.size(); ++d) {
          auto sc = scaled_.find(dots[d]);
          if (sc == scaled_.end()) continue;
          Value* end = sc->second.back()->result();
          map[end] = halfIn(end, 0);
          bots[d] = halfIn(end, 1);
        }
        std::vector<Value*> ys;
        for (Value* v : yield->operands) ys.push_back(mapped(map, v));
        ys.insert(ys.end(), bots.begin(), bots.end());
        lb.setLoc(yield->loc());
        lb.create(OpKind::Yield, ys, {});
      } else {
        cloneOp(lb, *op, map);
      }
    }
    // The full-height copies the halves made unused (a scaled dot's row scales, the index tile of
    // gathered rows), last first.
    if (!scaled_.empty() || gathered)
      eraseUnused(*nb, [](const Op& op) {
        return op.numResults() == 1 && (isPure(op.kind()) || op.kind() == OpKind::Load || op.kind() == OpKind::DescLoad);
      });
    // The epilogue, once per half: its ops on half-height tiles, its tile constants and splats made
    // again at half height.
    // (before the last store: every store's column offset is computed by then)
    Op* lastStore = *std::find_if(epilogue.rbegin(), epilogue.rend(), [](const Op* o) { return o->kind() == OpKind::DescStore || o->kind() == OpKind::Store; });
    Builder eb(&home, lastStore->loc());
    eb.setInsertionPointBefore(lastStore);
    std::map<const Value*, Value*> halfDescs;  // a residual's descriptor -> its half (made next to it)
    std::vector<const Op*> halfDescLoads(loadedTiles.begin(), loadedTiles.end());  // and the 1-D ones among rowOps
    for (const Op* o : rowOps)
      if (o->kind() == OpKind::DescLoad) halfDescLoads.push_back(o);
    for (const Op* d : halfDescLoads) {
      Op* md = d->operand(0)->definingOp();
      if (halfDescs.count(md->result())) continue;
      if (auto made = loopHalfDescs.find(md); made != loopHalfDescs.end() && md->parent != &body) {  // made for the loop already
        halfDescs[md->result()] = made->second;
        continue;
      }
      tb.setInsertionPointBefore(atTop(md) ? first : md);
      tb.setLoc(md->loc());
      Value* hd = tb.op1(OpKind::MakeDesc, md->operands, halfOf(md->result()->type()));
      hd->nameHint = halfName(md, "r_desc");
      halfDescs[md->result()] = hd;
    }
    for (int h = 0; h < 2; ++h) {
      ValueMap em;
      for (const auto& [v, x] : hm[h])  // halves made before the loop (the gathered rows' ids) serve the epilogue too
        if (const Op* d = v->definingOp(); d && d->parent != &body && x->definingOp() && x->definingOp()->parent == &home) em[v] = x;
      for (size_t d = 0; d < ks.size(); ++d) em[results[d]] = h ? nl->result(loop->numResults() + d) : nl->result(ks[d]);
      std::function<Value*(Value*)> half = [&](Value* v) -> Value* {
        if (auto it = em.find(v); it != em.end()) return it->second;
        if (!v->type().isTile()) return v;  // a scalar (a pointer too): the same in both halves
        const Op* d = v->definingOp();  // a tile constant, a splat, a residual's load or elementwise ops on them (halvable)
        Value* c;
        if (d->kind() == OpKind::DescLoad) {  // this half's rows, run by this half's consumer (epilogueBelongs)
          eb.setLoc(d->loc());
          std::vector<Value*> at{halfDescs.at(d->operand(0)), halfOffset(eb, d->operand(1), h)};  // a 1-D one (rowDag) has no column
          if (d->numOperands() > 2) at.push_back(d->operand(2));
          c = eb.op1(OpKind::DescLoad, at, halfOf(v->type()), d->attrs);
          halfLoads_[h].insert(c->definingOp());
        } else if (d->kind() == OpKind::Arange) {  // this half's rows of the block (rowDag)
          eb.setLoc(d->loc());
          c = halfArange(eb, *d, h);
        } else if (d->kind() == OpKind::Broadcast && !rowInvariant(*d, around)) {  // an Mx1 tile over the columns
          eb.setLoc(d->loc());
          c = eb.op1(OpKind::Broadcast, {half(d->operand(0))}, halfOf(v->type()), d->attrs);
        } else if (rowInvariant(*d, around)) {  // the same row for every row: broadcast to half height
          eb.setLoc(d->loc());
          c = eb.op1(OpKind::Broadcast, {d->operand(0)}, halfOf(v->type()), d->attrs);
        } else {  // the same op at half height (a splat's scalar and a constant's nothing stay as they are)
          std::vector<Value*> hs;
          for (Value* o : d->operands) hs.push_back(half(o));
          eb.setLoc(d->loc());
          c = eb.op1(d->kind(), hs, halfOf(v->type()), d->attrs);
          if (d->kind() == OpKind::Load) halfLoads_[h].insert(c->definingOp());  // this half's rows, by its consumer
        }
        if (!v->nameHint.empty()) c->nameHint = v->nameHint + (h ? "_bot" : "_top");
        return em[v] = c;
      };
      for (Op* op : epilogue) {
        eb.setLoc(op->loc());
        if (op->kind() == OpKind::DescStore) {
          eb.create(OpKind::DescStore, {cHalves.at(op->operand(0)), em.at(op->operand(1)), halfOffset(eb, op->operand(2), h), op->operand(3)}, {}, op->attrs);
          continue;
        }
        if (op->kind() == OpKind::Dot) {  // a peeled K block: this half's rows of A, the whole B
          Value* r = eb.op1(OpKind::Dot, {half(op->operand(0)), op->operand(1), em.at(op->operand(2))}, halfOf(op->result()->type()), op->attrs);
          if (!op->result()->nameHint.empty()) r->nameHint = op->result()->nameHint + (h ? "_bot" : "_top");
          em[op->result()] = r;
          continue;
        }
        if (op->kind() == OpKind::Store) {  // through this half's pointers, under this half's mask
          std::vector<Value*> so{half(op->operand(0)), em.at(op->operand(1))};
          if (op->numOperands() > 2) so.push_back(half(op->operand(2)));
          eb.create(OpKind::Store, so, {}, op->attrs);
          continue;
        }
        std::vector<Value*> halfOps;
        for (Value* v : op->operands) halfOps.push_back(half(v));
        Value* r = eb.op1(op->kind(), halfOps, halfOf(op->result()->type()), op->attrs);
        if (!op->result()->nameHint.empty()) r->nameHint = op->result()->nameHint + (h ? "_bot" : "_top");
        em[op->result()] = r;
      }
    }
    for (size_t j = 0; j < loop->numResults(); ++j)
      if (!accInits.count(j)) replaceAllUsesWith(f_.body, loop->result(j), nl->result(j));
    // The original epilogue, then the tile constants and splats nothing uses any more.
    std::set<Op*> feeders;  // tile constants and splats (a residual's ops are erased below)
    for (Op* op : chain)
      for (Value* v : op->operands)
        if (!v->type().isScalar() && !rowValues.count(v) &&
            (v->definingOp()->kind() == OpKind::Constant || v->definingOp()->kind() == OpKind::Splat))
          feeders.insert(v->definingOp());
    for (auto it = epilogue.rbegin(); it != epilogue.rend(); ++it) home.erase(*it);
    home.erase(loop);
    // The residual's full-height ops (each used once, by the epilogue or the next of them), last first.
    for (auto it = residualOps.rbegin(); it != residualOps.rend(); ++it) home.erase(*it);
    for (const Op* d : loadedTiles) home.erase(const_cast<Op*>(d));
    std::map<const Value*, int> left;
    countUses(f_.body, left);
    for (Op* d : feeders)
      if (!left[d->result()]) d->parent->erase(d);
    // The full-height row computations nothing reads any more (their halves replaced them).
    for (bool erased = true; erased;) {
      erased = false;
      std::map<const Value*, int> now;
      countUses(f_.body, now);
      for (auto it = rowOps.begin(); it != rowOps.end();)
        if (feeders.count(*it)) {  // a constant or splat: erased above if unused
          it = rowOps.erase(it);
        } else if (!now[(*it)->result()]) {
          (*it)->parent->erase(*it);
          it = rowOps.erase(it);
          erased = true;
        } else {
          ++it;
        }
    }
    return nl;
  }

  // The aref index of the main loop when later loops continue its sequence: a counter from 0
  // (otherwise the iteration number, and no counter).
  Value* firstCount(Builder& b) {
    const bool continued = std::any_of(follows_.begin(), follows_.end(), [](const Follow& fw) { return fw.set == 0; });
    return continued ? b.constInt(0, Type::scalarOf(Scalar::I32)) : nullptr;
  }
  // The aref index a later loop of aref set `s` starts from: where the set's previous loop left it,
  // else 0 (`counts` holds each set's, null before its first loop).
  static Value* setCount(Builder& b, std::vector<Value*>& counts, size_t s) {
    if (!counts[s]) counts[s] = b.constInt(0, Type::scalarOf(Scalar::I32));
    return counts[s];
  }

  // The producer's copy of a loop: its control, the loads and their address slice, and a put of
  // each group's tiles into its aref at the aref index: the iteration number, or `counter` carried
  // through it.
  Op* producerLoop(Builder& b, Op* loop, const Roles& r, const std::vector<Value*>& arefs, ValueMap& map, Value* counter) {
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    std::vector<size_t> carried(r.producerCarried.begin(), r.producerCarried.end());
    Op* nl = makeLoop(b, loop, carried, map, counter);
    Builder lb(nl->region(0), r.loads.front()->loc());
    for (auto& op : body.ops())
      if (r.producer.count(op.get())) cloneOp(lb, *op, map);
    Value* i = counter ? nl->region(0)->args().back().get() : iterationIndex(lb, nl->region(0)->arg(0), loop, map);
    for (size_t g = 0; g < r.groups.size(); ++g) {
      std::vector<Value*> putOps{arefs[g], i};
      for (size_t k : r.groups[g]) putOps.push_back(map.at(r.loads[k]->result()));
      lb.setLoc(r.loads[r.groups[g].front()]->loc());
      lb.create(OpKind::ArefPut, putOps, {});
    }
    lb.setLoc(r.loads.front()->loc());
    std::vector<Value*> ys;
    for (size_t k : carried) ys.push_back(mapped(map, yield->operand(k)));
    if (counter) ys.push_back(lb.op1(OpKind::Add, {i, lb.constInt(1, i->type())}, i->type()));
    lb.setLoc(yield->loc());
    lb.create(OpKind::Yield, ys, {});
    return nl;
  }

  // A consumer's copy of a loop carrying `group` (all of the consumer's carried values, or one
  // cooperative half's): it runs its ops on the tiles, getting each aref's slot at the aref index
  // right before the first op that reads it and releasing it right after the last (an aref that
  // none of its ops reads: at the end of the body). The loop's results map to the copy's.
  Op* consumerLoop(Builder& b, Op* loop, const Roles& r, const std::set<size_t>& group, const std::vector<Value*>& arefs,
                   ValueMap& map, Value* counter) {
    Block& body = *loop->region(0);
    Op* yield = body.terminator();
    std::vector<size_t> carried(group.begin(), group.end());
    Op* nl = makeLoop(b, loop, carried, map, counter);
    Builder lb(nl->region(0), r.loads.front()->loc());
    Value* i = counter ? nl->region(0)->args().back().get() : iterationIndex(lb, nl->region(0)->arg(0), loop, map);
    std::set<const Op*> mine = groupOps(body, group);
    std::vector<Op*> ops;
    for (auto& op : body.ops())
      if ((r.consumerOps.count(op.get()) || r.shared.count(op.get())) && mine.count(op.get())) ops.push_back(op.get());
    // Which group each op (with what it nests) reads; an aref's first and last reader.
    std::map<const Value*, size_t> groupOf;
    for (size_t g = 0; g < r.groups.size(); ++g)
      for (size_t k : r.groups[g]) groupOf[r.loads[k]->result()] = g;
    const size_t none = ops.size();
    std::vector<size_t> first(r.groups.size(), none), last(r.groups.size(), none);
    for (size_t n = 0; n < ops.size(); ++n)
      walk(*ops[n], [&](const Op* o) {
        for (const Value* v : o->operands)
          if (auto it = groupOf.find(v); it != groupOf.end()) {
            if (first[it->second] == none) first[it->second] = n;
            last[it->second] = n;
            if (o->kind() == OpKind::Permute) groupOf[o->result()] = it->second;  // a transpose reads the slot where it is used
          }
      });
    const std::vector<std::vector<Type>> payload = groupTypes(r);
    auto get = [&](size_t g) {
      lb.setLoc(r.loads[r.groups[g].front()]->loc());
      Op* got = lb.create(OpKind::ArefGet, {arefs[g], i}, payload[g]);
      for (size_t m = 0; m < r.groups[g].size(); ++m) {
        const Value* load = r.loads[r.groups[g][m]]->result();
        got->result(m)->nameHint = load->nameHint;
        map[load] = got->result(m);
      }
    };
    auto consumed = [&](size_t g, const Location& at_) {
      lb.setLoc(at_);  // located at the payload's last use
      lb.create(OpKind::ArefConsumed, {arefs[g], i}, {});
    };
    for (size_t n = 0; n < ops.size(); ++n) {
      for (size_t g = 0; g < r.groups.size(); ++g)
        if (first[g] == n) get(g);
      cloneOp(lb, *ops[n], map);
      for (size_t g = 0; g < r.groups.size(); ++g)
        if (last[g] == n) consumed(g, ops[n]->loc());
    }
    for (size_t g = 0; g < r.groups.size(); ++g)
      if (first[g] == none) get(g), consumed(g, r.loads[r.groups[g].front()]->loc());
    std::vector<Value*> ys;
    for (size_t k : carried) ys.push_back(mapped(map, yield->operand(k)));
    if (counter) ys.push_back(lb.op1(OpKind::Add, {i, lb.constInt(1, i->type())}, i->type()));
    lb.setLoc(yield->loc());
    lb.create(OpKind::Yield, ys, {});
    for (size_t n = 0; n < carried.size(); ++n) map[loop->result(carried[n])] = nl->result(n);
    return nl;
  }

  // A copy of the loop control carrying the given loop-carried values.
  Op* makeLoop(Builder& b, Op* loop, const std::vector<size_t>& carried, ValueMap& map, Value* counter = nullptr) {
    std::vector<Value*> ops{mapped(map, loop->operand(0)), mapped(map, loop->operand(1)), mapped(map, loop->operand(2))};
    std::vector<Type> types;
    for (size_t k : carried) ops.push_back(mapped(map, loop->operand(3 + k))), types.push_back(loop->result(k)->type());
    if (counter) ops.push_back(counter), types.push_back(counter->type());
    Op* nl = b.create(OpKind::For, ops, types);
    nl->setLoc(loop->loc());
    for (size_t n = 0; n < carried.size(); ++n) nl->result(n)->nameHint = loop->result(carried[n])->nameHint;
    Block* nb = nl->addRegion();
    Block& body = *loop->region(0);
    map[body.arg(0)] = nb->addArg(body.arg(0)->type(), body.arg(0)->nameHint);
    for (size_t k : carried) map[body.arg(k + 1)] = nb->addArg(body.arg(k + 1)->type(), body.arg(k + 1)->nameHint);
    if (counter) {
      nb->addArg(counter->type(), "i");
      nl->result(nl->numResults() - 1)->nameHint = "count";
    }
    return nl;
  }

  // The aref index of a nest with loops: a counter of the main loop's iterations, carried through
  // every loop around it (a guard alone needs none: the iteration number is the index).
  Value* nestCounter(Builder& b) {
    bool loops = std::any_of(nest_.begin(), nest_.end(), [](const Op* n) { return n->kind() != OpKind::If; });
    return loops ? b.constInt(0, Type::scalarOf(Scalar::I32)) : nullptr;
  }
  // A role's copy of nest op `level` and what it holds, down to the main loop, which `inner` copies
  // (given the count so far; it returns the count after). The producer copies the slice its loads
  // need (analyzeNest) and carries only the values that slice uses; the consumer copies everything,
  // and, for one cooperative half (`group`), only the ops after the main loop or a loop around it that
  // the half's results feed (epilogueBelongs) and, before them, the pure ops and reads (the first half
  // also does the rest, once). Returns the count after the copy (null without a counter).
  using InnerCopy = std::function<Value*(Builder&, Value*)>;
  Value* cloneNest(Builder& b, size_t level, Op* loop, ValueMap& map, Value* count, const InnerCopy& inner, bool producer,
                   const std::set<size_t>* group = nullptr, bool firstGroup = true) {
    Op* n = nest_[level];
    Op* child = level + 1 < nest_.size() ? nest_[level + 1] : loop;
    auto body = [&](Builder& ib, Block& blk, Value* c) {
      bool after = false;
      for (auto& op : blk.ops()) {
        if (op.get() == blk.terminator()) continue;
        if (op.get() == child) {
          c = child == loop ? inner(ib, c) : cloneNest(ib, level + 1, loop, map, c, inner, producer, group, firstGroup);
          after = true;
        } else if (producer ? producerNest_.count(op.get()) > 0
                            : !group || (after ? epilogueBelongs(*op, loop, *group, false, firstGroup)
                                               : firstGroup || pureOrRead(*op) || readOnlyTileRead(*op))) {
          cloneOp(ib, *op, map);
        }
      }
      return c;
    };
    // The values the copy carries (a guard's: the results its branches yield): all for the consumer.
    std::vector<size_t> carried;
    if (!producer)
      for (size_t k = 0; k < n->numResults(); ++k) carried.push_back(k);
    else if (auto it = nestCarried_.find(n); it != nestCarried_.end())
      carried.assign(it->second.begin(), it->second.end());
    const bool isIf = n->kind() == OpKind::If;
    std::vector<Value*> ops;
    std::vector<Type> types;
    if (n->kind() == OpKind::For || isIf)
      for (size_t k = 0; k < (isIf ? 1u : 3u); ++k) ops.push_back(mapped(map, n->operand(k)));
    const size_t init = n->kind() == OpKind::For ? 3 : 0;
    for (size_t k : carried) {
      if (!isIf) ops.push_back(mapped(map, n->operand(init + k)));
      types.push_back(n->result(k)->type());
    }
    if (count) types.push_back(count->type());
    if (count && !isIf) ops.push_back(count);
    Op* c = b.create(n->kind(), ops, types, n->attrs);
    c->setLoc(n->loc());
    // A loop's copy: its arguments (a tile.for's index first, then the carried values and the count).
    auto args = [&](Block* nb, const Block& ob, size_t first) {
      if (first) map[ob.arg(0)] = nb->addArg(ob.arg(0)->type(), ob.arg(0)->nameHint);
      for (size_t k : carried) map[ob.arg(first + k)] = nb->addArg(ob.arg(first + k)->type(), ob.arg(first + k)->nameHint);
      return count ? nb->addArg(count->type(), "count") : nullptr;
    };
    Block& ob = nestBody(n);
    if (n->kind() == OpKind::While) {
      // The test, copied whole, passes on the copy's carried values and the count.
      const Block& test = *n->region(0);
      const Op* cond = test.terminator();
      Block* nb = c->addRegion();
      Value* cnt = args(nb, test, 0);
      Builder tb(nb, n->loc());
      for (auto& op : test.ops())
        if (op.get() != cond) cloneOp(tb, *op, map);
      std::vector<Value*> pass{mapped(map, cond->operand(0))};
      for (size_t k : carried) pass.push_back(mapped(map, cond->operand(1 + k)));
      if (cnt) pass.push_back(cnt);
      tb.setLoc(cond->loc());
      tb.create(OpKind::Condition, pass, {});
    }
    Block* nb = c->addRegion();
    Value* cnt = isIf ? count : args(nb, ob, n->kind() == OpKind::For ? 1 : 0);
    Builder ib(nb, n->loc());
    cnt = body(ib, ob, cnt);
    std::vector<Value*> ys;
    for (size_t k : carried) ys.push_back(mapped(map, ob.terminator()->operand(k)));
    if (cnt) ys.push_back(cnt);
    ib.setLoc(ob.terminator()->loc());
    ib.create(OpKind::Yield, ys, {});
    if (isIf) {  // the guard's else branch passes on what it yields (values from before it) and the count
      std::vector<Value*> pass;
      for (size_t k : carried) pass.push_back(mapped(map, n->region(1)->terminator()->operand(k)));
      if (count) pass.push_back(count);
      Builder eb(c->addRegion(), n->loc());
      // Work there (elseOnlyConsumer) is the consumer's, the first one's of two cooperative consumers.
      if (!producer && (!group || firstGroup))
        for (auto& op : n->region(1)->ops())
          if (op.get() != n->region(1)->terminator()) cloneOp(eb, *op, map);
      eb.setLoc(n->loc());
      eb.create(OpKind::Yield, pass, {});
    }
    for (size_t m = 0; m < carried.size(); ++m) map[n->result(carried[m])] = c->result(m);
    return count ? c->result(c->numResults() - 1) : nullptr;
  }

  Func& f_;
  const PassOptions& opt_;
  Roles main_;  // the main loop's roles
  std::vector<Follow> follows_;
  std::vector<std::vector<std::vector<Type>>> followSets_;  // the payload of each aref set (set 0: the main loop's)
  std::string followWhy_;  // why a later loop that loads keeps its loads in the consumer
  bool cooperative_ = false;
  std::set<const Op*> halfLoads_[2];  // each row half's residual loads (splitRows), run by that half's consumer
  std::map<const Op*, std::vector<Op*>> scaled_;  // splitRows: a dot without an accumulator -> the ops that add its product into one
  std::map<size_t, int> halfOfCarried_;  // splitRows' loop: each accumulator's row half (0 top, 1 bottom) by carried index
  int64_t depth_ = 2;                   // the main aref's depth D (chooseDepth)
  std::vector<Op*> nest_;               // the loops and guards around the main loop, outermost first
  Op* outer_ = nullptr;                 // nest_'s first (a persistent kernel's tile loop, a guard), or null
  // Pure ops before the loop computed from what only the consumer has, each with the op it comes from
  // (prologueSplits): they move into the consumer.
  std::map<const Op*, const Op*> consumerPrologue_;
  std::set<Op*> producerNest_;          // what the producer needs from the nest's bodies (analyzeNest)
  std::map<const Op*, std::set<size_t>> nestCarried_;  // the values each nest loop's producer copy carries
  std::set<const Op*> sharedReads_;     // scalar loads every role may repeat (findSharedReads)
  std::set<const Value*> writtenArgs_;  // the pointer arguments the kernel writes through (findWrittenArgs)
  bool writesAnywhere_ = false;         // a call may write any buffer
};

}  // namespace

void warpSpecialize(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) {
    Specializer(*f, opt).run();
  }
}

const Op* atomicWithOldValue(const Func& f) {
  std::set<const Value*> read;
  walk(f.body, [&](const Op* op) { read.insert(op->operands.begin(), op->operands.end()); });
  const Op* found = nullptr;
  walk(f.body, [&](const Op* op) {
    if (!found && op->kind() == OpKind::Atomic && op->numResults() == 1 && read.count(op->result())) found = op;
  });
  return found;
}

int consumerGroupsFor(const Func& f, const PassOptions& opt, std::string* why) {
  auto say = [&](const std::string& s) {
    if (why) *why = s;
  };
  if (opt.consumers == 1 || opt.consumers == 2) return say("as asked (--consumers)"), opt.consumers;
  if (opt.consumers != 0) throw UserError(f.loc, "--consumers must be auto, 1 or 2, got " + std::to_string(opt.consumers));
  // The accumulators one consumer holds at once: the f32 (s32) results of the tile.dots of one loop
  // body, branches included (attention's S and O live together, PV under a branch once pipelined),
  // the loop whose sum is largest.
  struct Need {
    int64_t regs = 0, rows = 0;
    std::string shapes;
  };
  std::map<const Block*, Need> perBlock;
  walk(f.body, [&](const Op* op) {
    if (op->kind() != OpKind::Dot) return;
    const Type& t = op->result()->type();
    if (t.rank() != 2 || (t.scalar != Scalar::F32 && t.scalar != Scalar::I32)) return;  // f32 or s32 accumulators
    const Block* b = op->parent;
    while (b->parentOp && b->parentOp->kind() != OpKind::For) b = b->parentOp->parent;
    Need& n = perBlock[b];
    n.regs += t.shape[0] * t.shape[1] / 128;
    n.rows = std::max(n.rows, t.shape[0]);
    n.shapes += (n.shapes.empty() ? "" : " and ") + std::to_string(t.shape[0]) + "x" + std::to_string(t.shape[1]);
  });
  // A loop-carried f32 (s32) tile that no tile.dot accumulates into directly lives beside the dots'
  // results: a block-scaled GEMM's `acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]` holds the
  // product and the sum.
  walk(f.body, [&](const Op* op) {
    if (op->kind() != OpKind::For) return;
    const Block* body = op->region(0);
    auto it = perBlock.find(body);
    if (it == perBlock.end()) return;
    const Op* yield = body->terminator();
    for (size_t j = 0; j < op->numResults() && yield && j < yield->numOperands(); ++j) {
      const Type& t = op->result(j)->type();
      const Op* d = yield->operand(j)->definingOp();
      if (t.rank() != 2 || (t.scalar != Scalar::F32 && t.scalar != Scalar::I32) || (d && d->kind() == OpKind::Dot)) continue;
      it->second.regs += t.shape[0] * t.shape[1] / 128;
      it->second.shapes += " and " + std::to_string(t.shape[0]) + "x" + std::to_string(t.shape[1]) + " (carried)";
    }
  });
  int64_t rows = 0, regs = 0;
  std::string what;
  for (const auto& [b, n] : perBlock)
    if (n.regs > regs)
      regs = n.regs, rows = n.rows, what = "the " + n.shapes + (n.shapes.find(" and ") == std::string::npos ? " accumulator needs " : " accumulators need ");
  // (the budget of two consumers: what one could take alone is not counted on before choosing)
  const int64_t budget = consumerRegsFor(opt, 2) - 40;
  const Op* atomic = atomicWithOldValue(f);  // its old value reaches one consumer only
  if (atomic && regs > budget)
    return say("one: the old value of the scalar atomic at " + atomic->loc().str() + " is read, which one consumer alone can (" +
               what + std::to_string(regs) + " registers per thread, budget " + std::to_string(budget) + ")"),
           1;
  const bool splits = rows >= 128 && rows % 128 == 0 && !atomic;
  if (regs > budget && splits)
    return say(what + std::to_string(regs) + " registers per thread of one consumer warp group (budget " + std::to_string(budget) +
               "): two cooperative consumers, " + std::to_string(rows / 2) + " rows each"),
           2;
  if (auto it = f.attrs.find("num_warps"); it != f.attrs.end() && std::holds_alternative<int64_t>(it->second) &&
                                            std::get<int64_t>(it->second) == 8 && splits)
    return say("num_warps = 8 in the spec: two consumer warp groups of 4 warps, " + std::to_string(rows / 2) + " rows each"), 2;
  if (regs > budget) return say("one (the " + std::to_string(rows) + "-row accumulator does not split into two 64-row multiples)"), 1;
  return say(regs ? "one holds " + what.substr(0, what.rfind(" need")) + " (" + std::to_string(regs) + " of " + std::to_string(budget) +
                        " registers per thread)"
                  : "one (no MMA)"),
         1;
}

int ringDepth(const Func& f) {
  int d = 0;
  walk(f.body, [&](const Op* op) {
    if (op->kind() == OpKind::ArefCreate || op->kind() == OpKind::SmemAlloc)
      d = std::max(d, static_cast<int>(op->result()->type().shape[0]));
  });
  return d;
}

int consumerRegions(const Func& f) {
  int n = 0;
  for (auto& op : f.body.ops())
    if (op->kind() == OpKind::WgRegion && op->hasAttr("role") && op->strAttr("role") == "consumer") ++n;
  return n;
}

}  // namespace tawa::transforms
