#include "transforms/SplitConsumers.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include "ir/Builder.h"
#include "ir/Clone.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::transforms {

namespace {

using namespace ir;

class Splitter {
 public:
  Splitter(Func& f, const PassOptions& o) : f_(f), opt_(o) {}

  void run() {
    std::vector<Op*> regions;
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::WgRegion) regions.push_back(op.get());
    if (regions.size() != 2 || regions[1]->strAttr("role") != "consumer") return;  // none, or already cooperative
    Op* cons = regions[1];
    prod_ = regions[0];
    std::string why;
    if (!analyze(*cons, why)) {
      say("@" + f_.name + ": one consumer warp group instead of two: " + why);
      return;
    }
    rewrite(*cons);
    say("@" + f_.name + ": two cooperative consumer warp groups: rows [0, " + std::to_string(half_) + ") and [" +
        std::to_string(half_) + ", " + std::to_string(2 * half_) + ") of each " + std::to_string(2 * half_) + "-row block (" +
        std::to_string(marked_.size()) + " row-indexed values halved); setmaxnreg " + std::to_string(consumerRegsFor(opt_, 2)) +
        " each, producer " + std::to_string(producerRegsFor(opt_, 2)));
  }

 private:
  void say(const std::string& s) {
    if (opt_.explain) *opt_.explain << s << "\n";
  }
  static std::string at(const Op& op) { return "'" + std::string(op.name()) + "' at " + op.loc().str(); }

  // ---- union-find over values that must share their row dimension

  const Value* find(const Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v) return v;
    return it->second = find(it->second);
  }
  void unite(const Value* a, const Value* b) {
    if (!a->type().isTile() || !b->type().isTile()) return;
    parent_.emplace(a, a);
    parent_.emplace(b, b);
    const Value *ra = find(a), *rb = find(b);
    if (ra != rb) parent_[ra] = rb;
  }

  // The ops that keep the row dimension tie their row-indexed operands and results together.
  void tie(Op& op) {
    switch (op.kind()) {
      case OpKind::Dot:
        unite(op.result(), op.operand(0));
        if (op.numOperands() > 2) unite(op.result(), op.operand(2));
        return;
      case OpKind::Reduce:
        if (op.intAttr("axis") == 1) unite(op.result(), op.operand(0));
        return;
      case OpKind::ExpandDims:
        if (op.intAttr("axis") == 1) unite(op.result(), op.operand(0));
        return;
      case OpKind::Broadcast:
        if (op.operand(0)->type().isTile() && op.operand(0)->type().rank() == 2 && op.operand(0)->type().shape[0] != 1)
          unite(op.result(), op.operand(0));
        return;
      case OpKind::For: {
        const Block& body = *op.region(0);
        const Op* y = body.terminator();
        for (size_t k = 0; k < op.numResults(); ++k) {
          unite(op.result(k), op.operand(3 + k));
          unite(op.result(k), body.arg(1 + k));
          if (y) unite(op.result(k), y->operand(k));
        }
        return;
      }
      case OpKind::If:
        for (size_t r = 0; r < 2; ++r)
          if (const Op* y = op.region(r)->terminator())
            for (size_t k = 0; k < op.numResults(); ++k) unite(op.result(k), y->operand(k));
        return;
      default:
        if (isElementwise(op.kind()) && op.numResults() == 1 && op.result()->type().isTile())
          for (Value* v : op.operands) unite(op.result(), v);
        return;
    }
  }

  bool analyze(Op& cons, std::string& why) {
    Block& body = *cons.region(0);
    consBody_ = &body;
    std::vector<const Value*> seeds;
    for (auto& op : f_.body.ops())
      if (op->kind() != OpKind::WgRegion) tie(*op);
    walk(body, [&](Op* op) {
      tie(*op);
      if (op->kind() == OpKind::DescStore) seeds.push_back(op->operand(1));
    });
    if (seeds.empty()) return why = "the consumer stores no block through a descriptor", false;
    // Each stored tile is indexed by the rows of a tile.dot's result (a block, or a row vector reduced
    // along its columns): a tile of column sums (reduced along the rows) has no rows to halve.
    std::set<const Value*> dotRows;
    walk(body, [&](Op* op) {
      if (op->kind() == OpKind::Dot) dotRows.insert(find(op->result()));
    });
    for (const Value* s : seeds)
      if (!dotRows.count(find(s)))
        return why = "the consumer stores a " + s->type().str() + " that is not indexed by the rows of a tile.dot's result", false;
    // Each half runs a copy of the consumer: an atomic would run twice.
    const Op* atomic = nullptr;
    walk(body, [&](Op* op) {
      if (op->kind() == OpKind::Atomic && !atomic) atomic = op;
    });
    if (atomic) return why = "the consumer has an atomic (" + at(*atomic) + "), which two copies of it would apply twice", false;
    std::set<const Value*> roots;
    for (const Value* s : seeds) roots.insert(find(s));
    for (const auto& [v, p] : parent_)
      if (roots.count(find(v))) marked_.insert(v);
    for (const Value* s : seeds) marked_.insert(s);
    int64_t m = seeds.front()->type().shape[0];
    for (const Value* s : seeds)
      if (s->type().shape[0] != m) return why = "the consumer stores blocks of different heights", false;
    if (m % 128 != 0) return why = "the stored block has " + std::to_string(m) + " rows, not a multiple of 128 (two halves of 64-row MMAs)", false;
    half_ = m / 2;

    // Every row-indexed value: M rows, made by an op that can be halved.
    for (const Value* v : marked_) {
      if (!v->type().isTile() || v->type().shape.empty() || v->type().shape[0] != m)
        return why = "a value tied to the stored rows has type " + v->type().str() + ", not " + std::to_string(m) + " rows", false;
      const Op* d = v->definingOp();
      if (!d) {
        const Op* owner = v->ownerBlock() ? v->ownerBlock()->parentOp : nullptr;
        if (!owner || owner->kind() != OpKind::For) return why = "a row-indexed block argument outside a tile.for", false;
        continue;
      }
      switch (d->kind()) {
        case OpKind::Constant: case OpKind::Splat: case OpKind::Dot: case OpKind::Reduce: case OpKind::ExpandDims:
        case OpKind::Broadcast: case OpKind::For: case OpKind::If:
          break;
        case OpKind::Arange:
          if (d->intAttr("end") - d->intAttr("start") != m) return why = "an arange of the wrong length at " + d->loc().str(), false;
          break;
        case OpKind::DescLoad:
          if (d->parent != &body) return why = "a row-indexed tile.desc_load outside the consumer's top level at " + d->loc().str(), false;
          if (!halfDesc(d->operand(0), why)) return false;
          break;
        case OpKind::ArefGet:
          if (d->parent != &body || !preloadPut(d->operand(0), why))
            return why.empty() ? why = "the row-indexed tile made by " + at(*d) + " cannot be split (the producer delivers it whole)" : why,
                   false;
          break;
        default:
          if (isElementwise(d->kind())) break;
          return why = "the row-indexed tile made by " + at(*d) + " cannot be split (unsupported op)", false;
      }
    }
    // Every use of a row-indexed value keeps it row-indexed (the ties above), or stores it.
    bool ok = true;
    auto checkUses = [&](Op* op) {
      if (!ok) return;
      for (size_t i = 0; i < op->numOperands(); ++i) {
        if (!marked_.count(op->operand(i))) continue;
        OpKind k = op->kind();
        bool fine = k == OpKind::Yield || isElementwise(k) || k == OpKind::For ||
                    (k == OpKind::Dot && (i == 0 || i == 2)) || (k == OpKind::Reduce && op->intAttr("axis") == 1) ||
                    (k == OpKind::ExpandDims && op->intAttr("axis") == 1) || k == OpKind::Broadcast ||
                    (k == OpKind::DescStore && i == 1 && op->parent == &body);
        if (fine && (k == OpKind::Broadcast || isElementwise(k) || k == OpKind::Dot || k == OpKind::Reduce || k == OpKind::ExpandDims))
          fine = op->numResults() == 1 && marked_.count(op->result());
        if (k == OpKind::DescStore && fine) fine = halfDesc(op->operand(0), why);
        if (!fine) {
          if (why.empty()) why = "a row-indexed tile is used by " + at(*op) + (k == OpKind::Dot ? " as the B operand" : "");
          ok = false;
          return;
        }
      }
    };
    walk(body, checkUses);
    for (auto& op : f_.body.ops())
      if (op->kind() != OpKind::WgRegion && ok) {
        bool usedByConsumer = false;
        for (const auto& r : op->results()) usedByConsumer = usedByConsumer || marked_.count(r.get());
        if (usedByConsumer) checkUses(op.get());
      }
    return ok;
  }

  // A row-indexed tile the producer loads once before its loop (warp-specialize's depth-1 aref of one
  // tile, put at the producer's top level from a tile.desc_load there): it can be split into two
  // half-height loads, one per consumer, each through an aref of its own.
  bool preloadPut(const Value* aref, std::string& why) {
    if (halfArefs_.count(aref)) return true;
    const Type& t = aref->type();
    const Op* create = aref->definingOp();
    if (!create || create->kind() != OpKind::ArefCreate || t.shape[0] != 1 || t.members.size() != 1) return false;
    Op* put = nullptr;
    int puts = 0;
    walk(*prod_->region(0), [&](Op* op) {
      if (op->kind() == OpKind::ArefPut && op->operand(0) == aref) put = op, ++puts;
    });
    if (puts != 1 || put->parent != prod_->region(0)) return false;
    const Op* load = put->operand(2)->definingOp();
    if (!load || load->kind() != OpKind::DescLoad || load->parent != put->parent) return false;
    if (!halfDesc(load->operand(0), why)) return false;
    halfArefs_[aref] = {};  // made in rewrite()
    preloadPuts_[aref] = put;
    return true;
  }

  // A half-height copy of a descriptor made at the top of the kernel, or at the consumer's top level
  // (where block-access puts the descriptor of a store after the loops, such as attention's
  // `tl.store(m_ptrs, m_i)`).
  bool halfDesc(const Value* desc, std::string& why) {
    if (halfDescs_.count(desc)) return true;
    const Op* d = desc->definingOp();
    if (!d || d->kind() != OpKind::MakeDesc || (d->parent != &f_.body && d->parent != consBody_))
      return why = "a row-indexed tile goes through a descriptor not made at the top of the kernel or of the consumer", false;
    halfDescs_[desc] = nullptr;  // made in rewrite()
    return true;
  }

  Type halve(const Type& t) const {
    std::vector<int64_t> s = t.shape;
    s[0] = half_;
    return t.isDesc() ? Type::descOf(t.scalar, s) : t.withShape(s);
  }

  void rewrite(Op& cons) {
    Builder b(&f_.body);
    // Half-height descriptors next to the originals (in the consumer for one made there: each half
    // gets its copy with the region's).
    for (auto& [desc, made] : halfDescs_) {
      Op* d = const_cast<Op*>(desc->definingOp());
      auto& ops = d->parent->ops();
      auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& p) { return p.get() == d; });
      b.setInsertionPointBefore(std::next(it)->get());
      b.setLoc(d->loc());
      Value* h = b.op1(OpKind::MakeDesc, d->operands, halve(desc->type()), d->attrs);
      h->nameHint = desc->nameHint.empty() ? "" : desc->nameHint + "_half";
      made = h;
    }
    // A tile the producer loads once and both halves read: two half-height loads, each put into an
    // aref of its own that one consumer gets and releases.
    for (auto& [aref, halves] : halfArefs_) {
      Op* create = const_cast<Op*>(aref->definingOp());
      b.setInsertionPointBefore(create);
      b.setLoc(create->loc());
      Op* put = preloadPuts_.at(aref);
      Op* load = put->operand(2)->definingOp();
      Builder pb(put->parent, load->loc());
      pb.setInsertionPointBefore(put);
      for (int64_t h = 0; h < 2; ++h) {
        Value* a = b.op1(OpKind::ArefCreate, {}, Type::arefOf(1, {halve(aref->type().members[0])}), {{"consumers", int64_t{1}}});
        a->nameHint = aref->nameHint + (h ? "_bot" : "_top");
        halves.push_back(a);
        pb.setLoc(load->loc());
        Op* half = pb.create(OpKind::DescLoad, load->operands, {halve(load->result()->type())}, load->attrs);
        half->result()->nameHint = load->result()->nameHint + (h ? "_bot" : "_top");
        toHalf(pb, *half, load->operand(0), 1, h, ValueMap{});
        pb.setInsertionPointBefore(put);
        pb.setLoc(put->loc());
        pb.create(OpKind::ArefPut, {a, put->operand(1), half->result()}, {});
      }
      put->parent->erase(put);
      load->parent->erase(load);
    }
    std::vector<Op*> before;  // row-indexed values made at the top, in order
    for (auto& op : f_.body.ops()) {
      if (op.get() == &cons) break;
      for (const auto& r : op->results())
        if (marked_.count(r.get()) && op->kind() != OpKind::WgRegion) {
          before.push_back(op.get());
          break;
        }
    }
    // The warp groups stay adjacent (they run together): copies of row-indexed values made at the top
    // go before the first region.
    Op* first = nullptr;
    for (auto& op : f_.body.ops())
      if (!first && op->kind() == OpKind::WgRegion) first = op.get();
    for (int64_t h = 0; h < 2; ++h) {
      ValueMap map;
      b.setInsertionPointBefore(first);
      b.setLoc(cons.loc());
      for (Op* op : before) fix(b, *op, *cloneOp(b, *op, map), h, map);
      b.setInsertionPointBefore(&cons);
      Op* region = cloneOp(b, cons, map);
      region->attrs["regs"] = int64_t{consumerRegsFor(opt_, 2)};  // two consumers share what one had, and the producer's part
      // Fix every copied op whose original makes or stores a row-indexed value.
      std::vector<std::pair<Op*, Op*>> pairs;
      collectPairs(*cons.region(0), *region->region(0), pairs);
      for (auto [orig, copy] : pairs) fix(b, *orig, *copy, h, map);
      for (auto& [v, c] : map)
        if (marked_.count(v) && c->type().isTile() && c->type().shape[0] != half_) c->setType(halve(c->type()));
    }
    f_.body.erase(&cons);
    for (auto& op : f_.body.ops())  // the producer gives up what the second consumer needs
      if (op->kind() == OpKind::WgRegion && op->strAttr("role") == "producer") op->attrs["regs"] = int64_t{producerRegsFor(opt_, 2)};
    for (auto& [aref, halves] : halfArefs_) f_.body.erase(const_cast<Op*>(aref->definingOp()));
    std::set<const Value*> perHalf;
    for (auto& [aref, halves] : halfArefs_) perHalf.insert(halves.begin(), halves.end());
    for (auto& op : f_.body.ops())
      if (op->kind() == OpKind::ArefCreate && !perHalf.count(op->result())) op->attrs["consumers"] = int64_t{2};
  }

  // Original and copied ops in the same order (the copy has the same structure).
  static void collectPairs(Block& a, Block& b, std::vector<std::pair<Op*, Op*>>& out) {
    auto ia = a.ops().begin();
    auto ib = b.ops().begin();
    for (; ia != a.ops().end() && ib != b.ops().end(); ++ia, ++ib) {
      out.emplace_back(ia->get(), ib->get());
      for (size_t r = 0; r < (*ia)->regions().size(); ++r) collectPairs(*(*ia)->region(r), *(*ib)->region(r), out);
    }
  }

  // Half h of a copied op: aranges shifted; desc_load / desc_store through the half descriptor at
  // rows moved by h * M/2 (result types are halved by the caller).
  void fix(Builder& b, const Op& orig, Op& copy, int64_t h, const ValueMap& map) {
    bool rowsOut = orig.numResults() == 1 && marked_.count(orig.result());
    if ((orig.kind() == OpKind::ArefGet || orig.kind() == OpKind::ArefConsumed) && halfArefs_.count(orig.operand(0))) {
      copy.operands[0] = halfArefs_.at(orig.operand(0))[static_cast<size_t>(h)];
    } else if (orig.kind() == OpKind::Arange && rowsOut) {
      int64_t start = orig.intAttr("start") + h * half_;
      copy.attrs["start"] = start;
      copy.attrs["end"] = start + half_;
    } else if ((orig.kind() == OpKind::DescLoad && rowsOut) || (orig.kind() == OpKind::DescStore && marked_.count(orig.operand(1)))) {
      toHalf(b, copy, orig.operand(0), orig.kind() == OpKind::DescLoad ? 1 : 2, h, map);
    }
  }

  // A desc_load / desc_store `op` (through `desc`) made to access half h: through the half-height
  // descriptor, its row operand (at rowIdx) moved by h * M/2 with an add inserted before it.
  void toHalf(Builder& b, Op& op, const Value* desc, size_t rowIdx, int64_t h, const ValueMap& map) {
    op.operands[0] = mapped(map, halfDescs_.at(desc));
    if (h == 0) return;
    b.setInsertionPointBefore(&op);
    b.setLoc(op.loc());
    Value* row = op.operand(rowIdx);
    op.operands[rowIdx] = b.op1(OpKind::Add, {row, b.constInt(h * half_, row->type())}, row->type());
  }

  Func& f_;
  const PassOptions& opt_;
  std::map<const Value*, const Value*> parent_;
  std::set<const Value*> marked_;
  std::map<const Value*, Value*> halfDescs_;
  Block* consBody_ = nullptr;  // the consumer region's block (analyze)
  std::map<const Value*, std::vector<Value*>> halfArefs_;  // a preloaded tile's aref -> its two halves' arefs
  std::map<const Value*, Op*> preloadPuts_;
  Op* prod_ = nullptr;
  int64_t half_ = 0;
};

}  // namespace

void splitConsumers(Module& m, const PassOptions& opt) {
  for (auto& f : m.funcs) {
    std::string why;
    if (consumerRegions(*f) != 1 || consumerGroupsFor(*f, opt, &why) != 2) continue;
    if (opt.consumers == 0 && opt.explain) *opt.explain << "@" << f->name << ": 2 consumer warp groups: " << why << "\n";
    Splitter(*f, opt).run();
  }
}

}  // namespace tawa::transforms
