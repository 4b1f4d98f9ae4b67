// The tile IR: values in SSA form, ops with attributes and nested single-block regions, functions
// and modules. Control flow is structured (tile.for / tile.if / tile.while), so every region is one
// block whose arguments are its induction variable and loop-carried values.
//
// Ownership: a Module owns its Funcs, a Func its body Block, a Block its ops and arguments, an Op its
// results and regions. Values are referenced by raw pointer; they live as long as their definer.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Types.h"

namespace tawa::ir {

enum class OpKind : uint16_t {
#define OP(E, N, T) E,
#include "ir/Ops.def"
#undef OP
};

enum OpTrait : unsigned { P = 1, E = 2, T = 4 };

std::string_view opName(OpKind k);
unsigned opTraits(OpKind k);
bool lookupOpKind(std::string_view name, OpKind* out);
inline bool isPure(OpKind k) { return opTraits(k) & P; }
inline bool isElementwise(OpKind k) { return opTraits(k) & E; }
inline bool isTerminator(OpKind k) { return opTraits(k) & T; }

class Op;
class Block;

// An SSA value: an op result or a block argument.
class Value {
 public:
  Value(Type t, Op* def, Block* owner, int index) : type_(std::move(t)), def_(def), owner_(owner), index_(index) {}
  const Type& type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  Op* definingOp() const { return def_; }   // null for a block argument
  Block* ownerBlock() const { return owner_; }  // the block of a block argument
  int index() const { return index_; }
  // A readable name from the source (`acc`, `offs_m`); the printer keeps it when unambiguous.
  std::string nameHint;

 private:
  Type type_;
  Op* def_;
  Block* owner_;
  int index_;
};

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

class Block {
 public:
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Value* addArg(Type t, std::string hint = {});
  const std::vector<std::unique_ptr<Value>>& args() const { return args_; }
  Value* arg(size_t i) const { return args_.at(i).get(); }

  std::list<std::unique_ptr<Op>>& ops() { return ops_; }
  const std::list<std::unique_ptr<Op>>& ops() const { return ops_; }
  Op* terminator() const;  // the last op, when it is a terminator
  Op* parentOp = nullptr;  // null for a function body

  Op* append(std::unique_ptr<Op> op);
  // Removes and destroys `op` (its results must be unused).
  void erase(Op* op);

 private:
  std::vector<std::unique_ptr<Value>> args_;
  std::list<std::unique_ptr<Op>> ops_;
};

class Op {
 public:
  Op(OpKind kind, Location loc) : kind_(kind), loc_(std::move(loc)) {}
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  OpKind kind() const { return kind_; }
  std::string_view name() const { return opName(kind_); }
  const Location& loc() const { return loc_; }
  void setLoc(Location l) { loc_ = std::move(l); }

  std::vector<Value*> operands;
  Value* operand(size_t i) const { return operands.at(i); }
  size_t numOperands() const { return operands.size(); }

  Value* addResult(Type t, std::string hint = {});
  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }
  Value* result(size_t i = 0) const { return results_.at(i).get(); }
  size_t numResults() const { return results_.size(); }

  Block* addRegion();
  const std::vector<std::unique_ptr<Block>>& regions() const { return regions_; }
  Block* region(size_t i) const { return regions_.at(i).get(); }
  void swapRegions(size_t a, size_t b) { std::swap(regions_.at(a), regions_.at(b)); }

  std::map<std::string, AttrValue> attrs;
  bool hasAttr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t intAttr(const std::string& k) const;  // asserts presence and kind
  double floatAttr(const std::string& k) const;
  const std::string& strAttr(const std::string& k) const;
  const std::vector<int64_t>& arrayAttr(const std::string& k) const;

  Block* parent = nullptr;

 private:
  OpKind kind_;
  Location loc_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<std::unique_ptr<Block>> regions_;
};

class Func {
 public:
  std::string name;
  Location loc;
  std::vector<Type> resultTypes;
  std::map<std::string, AttrValue> attrs;  // e.g. num_warps, recorded launch options
  Block body;
  Value* arg(size_t i) const { return body.arg(i); }
  size_t numArgs() const { return body.args().size(); }
};

class Module {
 public:
  std::vector<std::unique_ptr<Func>> funcs;
  Func* lookup(const std::string& name) const;
  Func* addFunc(std::string name, Location loc);
};

// Replaces every use of `from` by `to` inside `scope` (recursively through regions).
void replaceAllUsesWith(Block& scope, Value* from, Value* to);

// The sources of a value loop `n` (a tile.for or tile.while) carries, appended to `out`: for block
// argument `index` of one of n's blocks (a tile.for's argument 0, its index, has none; to ask for a
// tile.for's result k, pass k + 1, a tile.while's, k), its initial operand and what each of n's
// regions passes on in its place.
void loopCarriedSources(Op& n, int index, std::vector<Value*>& out);
// The arguments of the function whose body is `body` that value `v` is computed from, added to
// `args`: back through the ops that compute it (their regions' ops too) and the values loops carry.
// Loaded values name none (a loaded address, an index tile read by a load offsetting the address's
// own base), unless `throughLoad` says to walk through that tile.load (and may look at it first).
void argsBehind(Value* v, const Block& body, std::set<const Value*>& args, const std::function<bool(const Op&)>& throughLoad = {});
// Each op that value `v` is computed from, as argsBehind walks back (loads end the walk: the op of a
// loaded value is not visited), given to `visit` once, `v`'s own defining op first.
void opsBehind(Value* v, const Block& body, const std::function<void(const Op&)>& visit);
// Whether tile `v` is computed in registers: by an elementwise op (arithmetic, a cast, a select), a
// load through pointers or the transpose of one of those; not a block load or a slot (nor what a loop
// or an if yields: attention's V of the previous iteration is a slot). A tile.dot's B so made is
// staged in shared memory by the consumers (warp-specialize counts its bytes; the emitter lays it out).
bool computedTile(const Value* v);
// The pointer arguments the function whose body is `body` writes through (those a store, an atomic,
// a block store or a TMA store addresses, found by argsBehind), added to `args`; returns whether a
// call may write any buffer.
bool writtenArgs(const Block& body, std::set<const Value*>& args);
// Whether the address `addr` (a pointer, a tile of pointers or a descriptor) reads only buffers of
// pointer arguments that `written` does not hold: at least one such argument is behind it.
bool readsOnlyUnwritten(Value* addr, const Block& body, const std::set<const Value*>& written);
// Whether a and b hold the same value: the same SSA value, `alsoSame` (a pass's own equalities), or
// the results of the same pure op (kind, attributes, result type; no regions) on operands that hold
// the same values in this sense, to `depth` ops deep (`pid_m * BLOCK_M` written twice).
bool sameValue(const Value* a, const Value* b, int depth = 16,
               const std::function<bool(const Value*, const Value*, int)>& alsoSame = {});
// Counts the uses of each value inside `scope`.
void countUses(const Block& scope, std::map<const Value*, int>& uses);
// Erases the ops of `block` (not of its nested regions) that have results, no regions, no result
// read anywhere in the block, and that `removable` accepts; again until none is left (their
// operands' ops may follow).
void eraseUnused(Block& block, const std::function<bool(const Op&)>& removable);
// Whether op is `loop` or lies inside one of its regions, at any depth.
bool inside(const Op* op, const Op* loop);
// Whether v is defined inside `loop` (an op in its regions at any depth, or one of their block
// arguments).
bool definedInside(const Value* v, const Op* loop);
// The integer a tile.constant holds (a scalar, or every element of a tile), or nullopt for anything
// else (another op, a float constant, a block argument).
std::optional<int64_t> intConstant(const Value* v);
// Visits every op under `b` in program order, parents before children.
template <class F>
void walk(Block& b, F&& f) {
  for (auto& op : b.ops()) {
    f(op.get());
    for (auto& r : op->regions()) walk(*r, f);
  }
}
template <class F>
void walk(const Block& b, F&& f) {
  for (const auto& op : b.ops()) {
    f(static_cast<const Op*>(op.get()));
    for (const auto& r : op->regions()) walk(static_cast<const Block&>(*r), f);
  }
}
// Visits `op` itself, then every op nested in its regions.
template <class F>
void walk(Op& op, F&& f) {
  f(&op);
  for (auto& r : op.regions()) walk(*r, f);
}
template <class F>
void walk(const Op& op, F&& f) {
  f(&op);
  for (const auto& r : op.regions()) walk(static_cast<const Block&>(*r), f);
}

}  // namespace tawa::ir
