#include "ir/IR.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>

namespace tawa {

std::string Location::str() const {
  if (!file) return "<unknown>";
  if (line <= 0) return *file;
  return *file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

std::string UserError::format() const {
  std::string s = loc.str() + ": error: " + what();
  if (!hint.empty()) s += "\n  hint: " + hint;
  return s;
}

void assertFailed(const char* cond, const char* what, const char* file, int line) {
  throw InternalError(std::string("internal error: ") + what + " (" + cond + ") at " + file + ":" +
                      std::to_string(line));
}

namespace ir {

namespace {
struct OpInfo {
  std::string_view name;
  unsigned traits;
};
constexpr OpInfo kOps[] = {
#define OP(E_, N, T_) {N, T_},
#include "ir/Ops.def"
#undef OP
};
}  // namespace

std::string_view opName(OpKind k) { return kOps[static_cast<size_t>(k)].name; }
unsigned opTraits(OpKind k) { return kOps[static_cast<size_t>(k)].traits; }
bool lookupOpKind(std::string_view name, OpKind* out) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].name == name) {
      *out = static_cast<OpKind>(i);
      return true;
    }
  return false;
}

// ---- types

namespace {
struct ScalarInfo {
  Scalar s;
  std::string_view name;
  int bits;
  bool isFloat;
};
constexpr std::array<ScalarInfo, 15> kScalars = {{
    {Scalar::I1, "i1", 1, false},        {Scalar::I8, "i8", 8, false},
    {Scalar::I16, "i16", 16, false},     {Scalar::I32, "i32", 32, false},
    {Scalar::I64, "i64", 64, false},     {Scalar::F8E4M3, "f8e4m3", 8, true},
    {Scalar::F8E5M2, "f8e5m2", 8, true}, {Scalar::F16, "f16", 16, true},
    {Scalar::BF16, "bf16", 16, true},    {Scalar::F32, "f32", 32, true},
    {Scalar::F64, "f64", 64, true},      {Scalar::U8, "u8", 8, false},
    {Scalar::U16, "u16", 16, false},     {Scalar::U32, "u32", 32, false},
    {Scalar::U64, "u64", 64, false},
}};
static_assert([] {
  for (size_t k = 0; k < kScalars.size(); ++k)
    if (static_cast<size_t>(kScalars[k].s) != k) return false;
  return true;
}(), "kScalars is indexed by Scalar");
const ScalarInfo& info(Scalar s) { return kScalars[static_cast<size_t>(s)]; }
}  // namespace

std::string_view scalarName(Scalar s) { return info(s).name; }
std::optional<Scalar> parseScalar(std::string_view name) {
  for (const auto& i : kScalars)
    if (i.name == name) return i.s;
  return std::nullopt;
}
bool isFloat(Scalar s) { return info(s).isFloat; }
bool isInt(Scalar s) { return !info(s).isFloat; }
bool isUnsigned(Scalar s) { return s == Scalar::U8 || s == Scalar::U16 || s == Scalar::U32 || s == Scalar::U64; }
int bitWidth(Scalar s) { return info(s).bits; }

Type Type::tileOf(std::vector<int64_t> shape, const Type& elem) {
  TAWA_ASSERT(elem.isScalar() || elem.isPtr(), "tile elements are scalars or pointers");
  return Type{TypeKind::Tile, elem.scalar, elem.isPtr(), std::move(shape), {}};
}

Type Type::smemOf(int64_t depth, const Type& tile) {
  std::vector<int64_t> s{depth};
  s.insert(s.end(), tile.shape.begin(), tile.shape.end());
  return Type{TypeKind::Smem, tile.scalar, false, std::move(s), {}};
}

Type Type::slotType() const {
  TAWA_ASSERT(kind == TypeKind::Smem, "slotType of a smem ring");
  return tileOf(std::vector<int64_t>(shape.begin() + 1, shape.end()), scalarOf(scalar));
}

Type Type::element() const {
  if (kind != TypeKind::Tile) return *this;
  return elemIsPtr ? ptrTo(scalar) : scalarOf(scalar);
}

Type Type::withShape(std::vector<int64_t> s) const {
  Type e = element();
  if (s.empty()) return e;
  return tileOf(std::move(s), e);
}

Type Type::withElement(const Type& elem) const {
  if (kind != TypeKind::Tile) return elem;
  return tileOf(shape, elem);
}

int64_t Type::numel() const {
  int64_t n = 1;
  if (kind == TypeKind::Tile)
    for (auto d : shape) n *= d;
  return n;
}

std::string Type::str() const {
  switch (kind) {
    case TypeKind::Scalar:
      return std::string(scalarName(scalar));
    case TypeKind::Ptr:
      return "ptr<" + std::string(scalarName(scalar)) + ">";
    case TypeKind::Aref: {
      std::string s = "aref<" + std::to_string(shape[0]);
      for (auto& m : members) s += ", " + m.str();
      return s + ">";
    }
    case TypeKind::MBar:
      return "mbar<" + std::to_string(shape[0]) + ">";
    case TypeKind::Tile:
    case TypeKind::Desc:
    case TypeKind::Smem: {
      std::string s = kind == TypeKind::Tile ? "tile<" : kind == TypeKind::Desc ? "tdesc<" : "smem<";
      for (auto d : shape) s += std::to_string(d) + "x";
      s += elemIsPtr ? "ptr<" + std::string(scalarName(scalar)) + ">" : std::string(scalarName(scalar));
      return s + ">";
    }
  }
  return "?";
}

namespace {
// Scans an element ("f16" or "ptr<f16>") at the start of `t`.
std::optional<Type> scanElement(std::string_view& t, std::string* err) {
  if (t.substr(0, 4) == "ptr<") {
    auto close = t.find('>');
    if (close == std::string_view::npos) {
      *err = "expected '>' to close 'ptr<'";
      return std::nullopt;
    }
    auto s = parseScalar(t.substr(4, close - 4));
    if (!s) {
      *err = "unknown scalar type '" + std::string(t.substr(4, close - 4)) + "'";
      return std::nullopt;
    }
    t.remove_prefix(close + 1);
    return Type::ptrTo(*s);
  }
  size_t n = 0;
  while (n < t.size() && (std::isalnum(static_cast<unsigned char>(t[n])))) ++n;
  auto s = parseScalar(t.substr(0, n));
  if (!s) {
    *err = "unknown type '" + std::string(t.substr(0, n)) + "'";
    return std::nullopt;
  }
  t.remove_prefix(n);
  return Type::scalarOf(*s);
}
}  // namespace

std::optional<Type> parseType(std::string_view text, std::string* err) {
  std::string dummy;
  if (!err) err = &dummy;
  std::string_view t = text;
  if (t.substr(0, 5) == "aref<" || t.substr(0, 5) == "mbar<") {
    bool aref = t[0] == 'a';
    if (t.back() != '>') {
      *err = "expected '>' to close '" + std::string(text) + "'";
      return std::nullopt;
    }
    std::string_view body = t.substr(5, t.size() - 6);
    std::vector<std::string_view> parts;
    int depth = 0;
    size_t b = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
      if (i == body.size() || (body[i] == ',' && depth == 0)) {
        std::string_view part = body.substr(b, i - b);
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
        parts.push_back(part);
        b = i + 1;
      } else if (body[i] == '<') {
        ++depth;
      } else if (body[i] == '>') {
        --depth;
      }
    }
    int64_t n = 0;
    auto [p, ec] = std::from_chars(parts[0].data(), parts[0].data() + parts[0].size(), n);
    if (ec != std::errc() || p != parts[0].data() + parts[0].size() || n <= 0) {
      *err = std::string(aref ? "an aref's depth" : "an mbarrier count") + " must be a positive integer in '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (!aref) {
      if (parts.size() != 1) {
        *err = "mbar<N> takes one count";
        return std::nullopt;
      }
      return Type::mbarOf(n);
    }
    std::vector<Type> members;
    for (size_t i = 1; i < parts.size(); ++i) {
      auto m = parseType(parts[i], err);
      if (!m) return std::nullopt;
      if (!m->isData()) {
        *err = "an aref's payload holds scalars and tiles, not " + m->str();
        return std::nullopt;
      }
      members.push_back(*m);
    }
    if (members.empty()) {
      *err = "an aref needs at least one payload type";
      return std::nullopt;
    }
    return Type::arefOf(n, std::move(members));
  }
  bool tile = t.substr(0, 5) == "tile<", desc = t.substr(0, 6) == "tdesc<", smem = t.substr(0, 5) == "smem<";
  std::optional<Type> result;
  if (tile || desc || smem) {
    t.remove_prefix(desc ? 6 : 5);
    std::vector<int64_t> shape;
    while (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) {
      int64_t d = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
      if (ec != std::errc() || p == t.data() + t.size() || *p != 'x') {
        *err = "expected 'x' after a dimension in '" + std::string(text) + "'";
        return std::nullopt;
      }
      if (d <= 0) {
        *err = "tile dimensions must be positive in '" + std::string(text) + "'";
        return std::nullopt;
      }
      shape.push_back(d);
      t.remove_prefix(static_cast<size_t>(p - t.data()) + 1);
    }
    if (shape.empty()) {
      *err = "a " + std::string(tile ? "tile" : "tdesc") + " type needs at least one dimension";
      return std::nullopt;
    }
    auto e = scanElement(t, err);
    if (!e) return std::nullopt;
    if (t.empty() || t[0] != '>') {
      *err = "expected '>' to close '" + std::string(text) + "'";
      return std::nullopt;
    }
    t.remove_prefix(1);
    if ((desc || smem) && e->isPtr()) {
      *err = std::string(desc ? "a tensor descriptor's" : "a shared-memory ring's") + " element must be a scalar";
      return std::nullopt;
    }
    if (smem && shape.size() < 2) {
      *err = "smem<DxSHAPExT> needs a depth and at least one dimension";
      return std::nullopt;
    }
    if (smem) result = Type::smemOf(shape[0], Type::tileOf(std::vector<int64_t>(shape.begin() + 1, shape.end()), *e));
    else result = desc ? Type::descOf(e->scalar, shape) : Type::tileOf(shape, *e);
  } else {
    result = scanElement(t, err);
    if (!result) return std::nullopt;
  }
  if (!t.empty()) {
    *err = "unexpected '" + std::string(t) + "' after type";
    return std::nullopt;
  }
  return result;
}

// ---- values, blocks, ops

Value* Block::addArg(Type t, std::string hint) {
  args_.push_back(std::make_unique<Value>(std::move(t), nullptr, this, static_cast<int>(args_.size())));
  args_.back()->nameHint = std::move(hint);
  return args_.back().get();
}

Op* Block::terminator() const {
  if (ops_.empty() || !isTerminator(ops_.back()->kind())) return nullptr;
  return ops_.back().get();
}

Op* Block::append(std::unique_ptr<Op> op) {
  op->parent = this;
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

void Block::erase(Op* op) {
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](auto& p) { return p.get() == op; });
  TAWA_ASSERT(it != ops_.end(), "erased op belongs to this block");
  ops_.erase(it);
}

Value* Op::addResult(Type t, std::string hint) {
  results_.push_back(std::make_unique<Value>(std::move(t), this, nullptr, static_cast<int>(results_.size())));
  results_.back()->nameHint = std::move(hint);
  return results_.back().get();
}

Block* Op::addRegion() {
  regions_.push_back(std::make_unique<Block>());
  regions_.back()->parentOp = this;
  return regions_.back().get();
}

int64_t Op::intAttr(const std::string& k) const {
  auto it = attrs.find(k);
  TAWA_ASSERT(it != attrs.end() && std::holds_alternative<int64_t>(it->second), "verified op has integer attribute");
  return std::get<int64_t>(it->second);
}
double Op::floatAttr(const std::string& k) const {
  auto it = attrs.find(k);
  TAWA_ASSERT(it != attrs.end() && std::holds_alternative<double>(it->second), "verified op has float attribute");
  return std::get<double>(it->second);
}
const std::string& Op::strAttr(const std::string& k) const {
  auto it = attrs.find(k);
  TAWA_ASSERT(it != attrs.end() && std::holds_alternative<std::string>(it->second), "verified op has string attribute");
  return std::get<std::string>(it->second);
}
const std::vector<int64_t>& Op::arrayAttr(const std::string& k) const {
  auto it = attrs.find(k);
  TAWA_ASSERT(it != attrs.end() && std::holds_alternative<std::vector<int64_t>>(it->second),
              "verified op has array attribute");
  return std::get<std::vector<int64_t>>(it->second);
}

std::optional<int64_t> intConstant(const Value* v) {
  const Op* d = v->definingOp();
  if (!d || d->kind() != OpKind::Constant) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&d->attrs.at("value"))) return *i;
  return std::nullopt;
}

Func* Module::lookup(const std::string& name) const {
  for (auto& f : funcs)
    if (f->name == name) return f.get();
  return nullptr;
}

Func* Module::addFunc(std::string name, Location loc) {
  funcs.push_back(std::make_unique<Func>());
  funcs.back()->name = std::move(name);
  funcs.back()->loc = std::move(loc);
  return funcs.back().get();
}

void loopCarriedSources(Op& n, int index, std::vector<Value*>& out) {
  const bool isFor = n.kind() == OpKind::For;
  const int k = isFor ? index - 1 : index;
  if (k < 0 || static_cast<size_t>(k) >= n.numResults()) return;
  out.push_back(n.operand((isFor ? 3 : 0) + static_cast<size_t>(k)));
  for (auto& r : n.regions())
    if (const Op* t = r->terminator(); t && t->numOperands() > static_cast<size_t>(k) + (t->kind() == OpKind::Condition))
      out.push_back(t->operand(static_cast<size_t>(k) + (t->kind() == OpKind::Condition)));
}

namespace {
// What argsBehind and opsBehind share: from `v` back through the ops that compute it (their regions'
// ops too) and the values loops carry, calling `arg` on each argument of `body` reached and `def` on
// each op reached that defines a value (not a tile.for or tile.while: what it carries is followed).
// Loads end the walk (tile.desc_load always, tile.load unless `throughLoad` says to go on).
void walkBehind(Value* v, const Block& body, const std::function<void(Value*)>& arg, const std::function<void(const Op&)>& def,
                const std::function<bool(const Op&)>& throughLoad) {
  std::vector<Value*> work{v};
  std::set<const Value*> seen;
  while (!work.empty()) {
    Value* w = work.back();
    work.pop_back();
    if (!seen.insert(w).second) continue;
    if (Block* ob = w->ownerBlock()) {
      if (ob == &body) arg(w);
      else if (Op* n = ob->parentOp; n && (n->kind() == OpKind::For || n->kind() == OpKind::While))
        loopCarriedSources(*n, w->index(), work);
      continue;
    }
    Op* d = w->definingOp();
    if (d->kind() == OpKind::For || d->kind() == OpKind::While) {
      loopCarriedSources(*d, d->kind() == OpKind::For ? w->index() + 1 : w->index(), work);
      continue;
    }
    if ((d->kind() == OpKind::Load && !(throughLoad && throughLoad(*d))) || d->kind() == OpKind::DescLoad) continue;
    if (def) def(*d);
    walk(*d, [&](Op* o) { work.insert(work.end(), o->operands.begin(), o->operands.end()); });
  }
}
}  // namespace

void argsBehind(Value* v, const Block& body, std::set<const Value*>& args, const std::function<bool(const Op&)>& throughLoad) {
  walkBehind(v, body, [&](Value* a) { args.insert(a); }, {}, throughLoad);
}

void opsBehind(Value* v, const Block& body, const std::function<void(const Op&)>& visit) {
  walkBehind(v, body, [](Value*) {}, visit, {});
}

void replaceAllUsesWith(Block& scope, Value* from, Value* to) {
  walk(scope, [&](Op* op) {
    for (auto& v : op->operands)
      if (v == from) v = to;
  });
}

bool sameValue(const Value* a, const Value* b, int depth, const std::function<bool(const Value*, const Value*, int)>& alsoSame) {
  if (a == b) return true;
  if (depth > 0 && alsoSame && alsoSame(a, b, depth)) return true;
  const Op* x = a->definingOp();
  const Op* y = b->definingOp();
  if (!x || !y || depth == 0 || x->kind() != y->kind() || !isPure(x->kind()) || !x->regions().empty() ||
      !y->regions().empty() || x->numResults() != 1 || y->numResults() != 1 || !(a->type() == b->type()) ||
      x->attrs != y->attrs || x->numOperands() != y->numOperands())
    return false;
  for (size_t i = 0; i < x->numOperands(); ++i)
    if (!sameValue(x->operand(i), y->operand(i), depth - 1, alsoSame)) return false;
  return true;
}

bool computedTile(const Value* v) {
  const Op* d = v->definingOp();
  if (d && d->kind() == OpKind::Permute) return computedTile(d->operand(0));
  return d && (isElementwise(d->kind()) || d->kind() == OpKind::Load);
}

bool writtenArgs(const Block& body, std::set<const Value*>& args) {
  bool anywhere = false;
  walk(body, [&](const Op* op) {
    if (op->kind() == OpKind::Call) anywhere = true;
    if (op->kind() == OpKind::Store || op->kind() == OpKind::DescStore || op->kind() == OpKind::TmaStore || op->kind() == OpKind::Atomic)
      argsBehind(op->operand(0), body, args);
  });
  return anywhere;
}

bool readsOnlyUnwritten(Value* addr, const Block& body, const std::set<const Value*>& written) {
  std::set<const Value*> args;
  argsBehind(addr, body, args);
  bool pointer = false;
  for (const Value* a : args)
    if (a->type().isPtr()) {
      if (written.count(a)) return false;
      pointer = true;
    }
  return pointer;
}

void countUses(const Block& scope, std::map<const Value*, int>& uses) {
  walk(scope, [&](const Op* op) {
    for (auto* v : op->operands) ++uses[v];
  });
}

void eraseUnused(Block& block, const std::function<bool(const Op&)>& removable) {
  for (bool erased = true; erased;) {
    erased = false;
    std::map<const Value*, int> uses;
    countUses(block, uses);
    std::vector<Op*> dead;
    for (auto& op : block.ops()) {
      bool read = op->numResults() == 0;
      for (auto& r : op->results()) read = read || uses.count(r.get());
      if (!read && op->regions().empty() && removable(*op)) dead.push_back(op.get());
    }
    for (auto it = dead.rbegin(); it != dead.rend(); ++it) block.erase(*it), erased = true;
  }
}

bool inside(const Op* op, const Op* loop) {
  for (const Op* p = op; p; p = p->parent ? p->parent->parentOp : nullptr)
    if (p == loop) return true;
  return false;
}

bool definedInside(const Value* v, const Op* loop) {
  if (const Op* d = v->definingOp()) return inside(d, loop);
  const Block* b = v->ownerBlock();
  return b && b->parentOp && inside(b->parentOp, loop);
}

}  // namespace ir
}  // namespace tawa
