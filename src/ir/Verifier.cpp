#include "ir/Verifier.h"

#include <algorithm>
#include <set>

#include "ir/MathFns.h"

namespace tawa::ir {

namespace {

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

class Verifier {
 public:
  explicit Verifier(const Module& m) : m_(m) {}

  void run() {
    for (auto& f : m_.funcs) {
      func_ = f.get();
      visible_.clear();
      for (auto& a : f->body.args()) visible_.insert(a.get());
      verifyBlock(f->body);
      const Op* t = f->body.terminator();
      if (!t || t->kind() != OpKind::Return)
        throw UserError(f->loc, "function '@" + f->name + "' must end with 'tile.return'");
    }
  }

 private:
  [[noreturn]] void err(const Op& op, const std::string& msg) {
    throw UserError(op.loc(), "'" + std::string(op.name()) + "' " + msg);
  }
  void need(bool c, const Op& op, const std::string& msg) {
    if (!c) err(op, msg);
  }
  void numOperands(const Op& op, size_t lo, size_t hi) {
    size_t n = op.numOperands();
    if (n < lo || n > hi)
      err(op, "expects " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                  " operand(s), got " + std::to_string(n));
  }
  void numResults(const Op& op, size_t n) {
    if (op.numResults() != n)
      err(op, "must have " + std::to_string(n) + " result(s), has " + std::to_string(op.numResults()));
  }
  void intAttr(const Op& op, const char* k) {
    auto it = op.attrs.find(k);
    need(it != op.attrs.end() && std::holds_alternative<int64_t>(it->second), op,
         std::string("needs an integer attribute '") + k + "'");
  }
  // A block store's optional {reduce = "add"}: it adds into memory (TMA's reduce-add) instead of writing, f32 or i32 only.
  void reduceAttr(const Op& op, Scalar elem) {
    if (!op.hasAttr("reduce")) return;
    need(strAttrOr(op, "reduce") == "add", op, "'reduce' must be \"add\"");
    need(elem == Scalar::F32 || elem == Scalar::I32, op, "a reduce-add store takes f32 or i32 elements, not " + std::string(scalarName(elem)));
  }
  // A string attribute's value, or "" when it is missing or not a string.
  static std::string strAttrOr(const Op& op, const char* k) {
    auto it = op.attrs.find(k);
    return it != op.attrs.end() && std::holds_alternative<std::string>(it->second) ? std::get<std::string>(it->second) : "";
  }
  const Type& ty(const Op& op, size_t i) const { return op.operand(i)->type(); }
  static bool isIntScalar(const Type& t) { return t.isScalar() && t.elemIsInt() && t.scalar != Scalar::I1; }
  // Whether operand k of a block load is its gathered rows: a tile<R x i32> for a rank-2 descriptor of
  // R-row blocks (row i of the block is row rows[i] of the tensor; one outside its extent reads zeros).
  // A tile operand there that is not one is an error.
  bool gatheredRows(const Op& op, const Type& desc, size_t k) {
    const Type& r = ty(op, k);
    if (!r.isTile()) return false;
    need(desc.shape.size() == 2 && r.rank() == 1 && r.shape[0] == desc.shape[0] && r.scalar == Scalar::I32, op,
         "gathered rows must be a tile<" + std::to_string(desc.shape.empty() ? 0 : desc.shape[0]) +
             "xi32> of a 2-D descriptor's block rows, got " + r.str());
    return true;
  }
  static std::vector<int64_t> shapeOf(const Type& t) { return t.isTile() ? t.shape : std::vector<int64_t>{}; }

  void verifyBlock(const Block& b) {
    std::vector<const Value*> added;
    size_t i = 0, n = b.ops().size();
    for (auto& op : b.ops()) {
      ++i;
      for (size_t k = 0; k < op->numOperands(); ++k) {
        const Value* v = op->operand(k);
        need(v != nullptr, *op, "has a null operand");
        if (!visible_.count(v))
          err(*op, "operand #" + std::to_string(k) + " does not dominate this use (its definition is not visible here)");
      }
      if (isTerminator(op->kind()) && i != n) err(*op, "is a terminator and must be the last op of its region");
      for (auto& r : op->regions()) {
        std::vector<const Value*> args;
        for (auto& a : r->args()) visible_.insert(a.get()), args.push_back(a.get());
        verifyBlock(*r);
        for (auto* a : args) visible_.erase(a);
      }
      verifyOp(*op);
      checkTileSize(*op);
      for (auto& r : op->results()) visible_.insert(r.get()), added.push_back(r.get());
    }
    for (auto* v : added) visible_.erase(v);
  }

  void sameTypes(const Op& op) {
    for (size_t k = 1; k < op.numOperands(); ++k)
      if (!(ty(op, k) == ty(op, 0)))
        err(op, "operands must have the same type, got " + ty(op, 0).str() + " and " + ty(op, k).str() +
                    " (broadcast explicitly with tile.splat / tile.broadcast)");
  }

  // Checks a region's terminator kind and operand types.
  void terminator(const Op& op, const Block& r, OpKind want, const std::vector<Type>& types, size_t skip = 0) {
    const Op* t = r.terminator();
    if (!t || t->kind() != want)
      err(op, "region must end with '" + std::string(opName(want)) + "'");
    if (t->numOperands() != types.size() + skip)
      err(*t, "yields " + std::to_string(t->numOperands() - skip) + " value(s) but its parent expects " +
                  std::to_string(types.size()));
    for (size_t k = 0; k < types.size(); ++k)
      if (!(t->operand(k + skip)->type() == types[k]))
        err(*t, "value #" + std::to_string(k) + " has type " + t->operand(k + skip)->type().str() + " but " +
                    types[k].str() + " is expected");
  }
  // Synchronization belongs to a warp group's program.
  void insideWarpGroup(const Op& op) {
    for (const Block* b = op.parent; b && b->parentOp; b = b->parentOp->parent)
      if (b->parentOp->kind() == OpKind::WgRegion) return;
    err(op, "must be inside a wg.region");
  }
  std::vector<Type> resultTypes(const Op& op) {
    std::vector<Type> r;
    for (auto& v : op.results()) r.push_back(v->type());
    return r;
  }
  std::vector<Type> argTypes(const Block& b, size_t from = 0) {
    std::vector<Type> r;
    for (size_t k = from; k < b.args().size(); ++k) r.push_back(b.arg(k)->type());
    return r;
  }

  void verifyOp(const Op& op) {
    switch (op.kind()) {
      case OpKind::Call: {
        auto it = op.attrs.find("callee");
        need(it != op.attrs.end() && std::holds_alternative<std::string>(it->second), op, "needs a callee");
        const Func* f = m_.lookup(std::get<std::string>(it->second));
        need(f != nullptr, op, "calls unknown function '@" + std::get<std::string>(it->second) + "'");
        need(f != func_, op, "calls its own function: recursion is not supported");
        need(op.numOperands() == f->numArgs(), op, "passes " + std::to_string(op.numOperands()) + " argument(s) to '@" +
                                                       f->name + "', which takes " + std::to_string(f->numArgs()));
        for (size_t k = 0; k < op.numOperands(); ++k)
          need(ty(op, k) == f->arg(k)->type(), op, "argument #" + std::to_string(k) + " has type " + ty(op, k).str() +
                                                     " but '@" + f->name + "' takes " + f->arg(k)->type().str());
        need(resultTypes(op) == f->resultTypes, op, "result types do not match '@" + f->name + "'");
        return;
      }
      case OpKind::Return: {
        need(op.parent == &func_->body, op, "may only end the function body");
        numResults(op, 0);
        need(op.numOperands() == func_->resultTypes.size(), op,
             "returns " + std::to_string(op.numOperands()) + " value(s) but the function declares " +
                 std::to_string(func_->resultTypes.size()));
        for (size_t k = 0; k < op.numOperands(); ++k)
          need(ty(op, k) == func_->resultTypes[k], op, "value #" + std::to_string(k) + " has type " + ty(op, k).str() +
                                                         ", the function returns " + func_->resultTypes[k].str());
        return;
      }
      case OpKind::ProgramId:
      case OpKind::NumPrograms: {
        numOperands(op, 0, 0);
        numResults(op, 1);
        intAttr(op, "axis");
        int64_t a = op.intAttr("axis");
        need(a >= 0 && a <= 2, op, "axis must be 0, 1 or 2, got " + std::to_string(a));
        need(op.result()->type() == Type::scalarOf(Scalar::I32), op, "result must be i32");
        return;
      }
      case OpKind::Assume: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        intAttr(op, "min");
        need(ty(op, 0).isScalar() && ty(op, 0).elemIsInt(), op, "assumes a bound of an integer scalar");
        need(op.result()->type() == ty(op, 0), op, "result must have the operand's type");
        return;
      }
      case OpKind::Constant: {
        numOperands(op, 0, 0);
        numResults(op, 1);
        const Type& t = op.result()->type();
        need(t.isScalar() || (t.isTile() && !t.elemIsPtr), op, "result must be a scalar or a tile of scalars");
        auto it = op.attrs.find("value");
        need(it != op.attrs.end(), op, "needs a 'value' attribute");
        if (t.elemIsFloat())
          need(std::holds_alternative<double>(it->second), op, "of float type needs a float value (write 1.0, not 1)");
        else
          need(std::holds_alternative<int64_t>(it->second), op, "of integer type needs an integer value");
        return;
      }
      case OpKind::Arange: {
        numOperands(op, 0, 0);
        numResults(op, 1);
        intAttr(op, "start");
        intAttr(op, "end");
        int64_t s = op.intAttr("start"), e = op.intAttr("end");
        need(e > s, op, "needs end > start");
        need(op.result()->type() == Type::tileOf({e - s}, Type::scalarOf(Scalar::I32)), op,
             "result must be tile<" + std::to_string(e - s) + "xi32>");
        return;
      }
      case OpKind::Splat: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type& r = op.result()->type();
        need(ty(op, 0).isScalar() || ty(op, 0).isPtr(), op, "operand must be a scalar or pointer");
        need(r.isTile() && r.element() == ty(op, 0), op, "result must be a tile of " + ty(op, 0).str());
        return;
      }
      case OpKind::Broadcast: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type &a = ty(op, 0), &r = op.result()->type();
        need(a.isTile() && r.isTile() && a.element() == r.element(), op, "maps a tile to a tile of the same element");
        need(a.rank() == r.rank(), op, "cannot change the rank (use tile.expand_dims first)");
        for (int d = 0; d < a.rank(); ++d)
          need(a.shape[d] == r.shape[d] || a.shape[d] == 1, op,
               "cannot broadcast shape " + shapeStr(a.shape) + " to " + shapeStr(r.shape) + ": dimension " +
                   std::to_string(d) + " is neither equal nor 1");
        return;
      }
      case OpKind::ExpandDims: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        intAttr(op, "axis");
        const Type& a = ty(op, 0);
        need(a.isTile(), op, "operand must be a tile");
        int64_t ax = op.intAttr("axis");
        need(ax >= 0 && ax <= a.rank(), op, "axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(a.rank()));
        auto s = a.shape;
        s.insert(s.begin() + ax, 1);
        need(op.result()->type() == a.withShape(s), op, "result must be " + a.withShape(s).str());
        return;
      }
      case OpKind::Reshape: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type &a = ty(op, 0), &r = op.result()->type();
        need(a.isTile() && r.isTile() && a.element() == r.element(), op, "maps a tile to a tile of the same element");
        need(a.numel() == r.numel(), op, "cannot reshape " + shapeStr(a.shape) + " to " + shapeStr(r.shape) + ": element counts differ");
        return;
      }
      case OpKind::Permute: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type& a = ty(op, 0);
        need(a.isTile(), op, "operand must be a tile");
        auto it = op.attrs.find("order");
        need(it != op.attrs.end() && std::holds_alternative<std::vector<int64_t>>(it->second), op, "needs an 'order' array");
        auto order = std::get<std::vector<int64_t>>(it->second);
        auto sorted = order;
        std::sort(sorted.begin(), sorted.end());
        bool perm = static_cast<int>(order.size()) == a.rank();
        for (size_t k = 0; perm && k < sorted.size(); ++k) perm = sorted[k] == static_cast<int64_t>(k);
        need(perm, op, "order " + shapeStr(order) + " is not a permutation of the " + std::to_string(a.rank()) + " dimensions");
        std::vector<int64_t> s;
        for (auto o : order) s.push_back(a.shape[o]);
        need(op.result()->type() == a.withShape(s), op, "result must be " + a.withShape(s).str());
        return;
      }
      case OpKind::Slice: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type &a = ty(op, 0), &r = op.result()->type();
        need(a.isTile() && r.isTile() && r.rank() == a.rank() && r.element() == a.element(), op,
             "slices a tile into a tile of the same rank and element");
        auto ax = op.attrs.find("axis"), st = op.attrs.find("start");
        need(ax != op.attrs.end() && std::holds_alternative<int64_t>(ax->second) && st != op.attrs.end() &&
                 std::holds_alternative<int64_t>(st->second),
             op, "needs integer 'axis' and 'start' attributes");
        const int64_t axis = std::get<int64_t>(ax->second), start = std::get<int64_t>(st->second);
        need(axis >= 0 && axis < a.rank(), op, "axis " + std::to_string(axis) + " is outside the operand's " + std::to_string(a.rank()) + " dimensions");
        for (int64_t d = 0; d < a.rank(); ++d)
          if (d != axis) need(r.shape[d] == a.shape[d], op, "only dimension " + std::to_string(axis) + " may change: result must be " + a.str() + " there");
        need(start >= 0 && start + r.shape[axis] <= a.shape[axis], op,
             "elements " + std::to_string(start) + " .. " + std::to_string(start + r.shape[axis] - 1) + " lie outside the " +
                 std::to_string(a.shape[axis]) + " along axis " + std::to_string(axis));
        return;
      }
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::Max: case OpKind::Min: case OpKind::FloorDiv:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr: {
        numOperands(op, 2, 2);
        numResults(op, 1);
        sameTypes(op);
        const Type& a = ty(op, 0);
        need(a.isData(), op, "does not apply to " + a.str() + (a.isPtrLike() ? " (use tile.addptr for addresses)" : ""));
        bool intOnly = op.kind() == OpKind::And || op.kind() == OpKind::Or || op.kind() == OpKind::Xor ||
                       op.kind() == OpKind::Shl || op.kind() == OpKind::Shr || op.kind() == OpKind::FloorDiv;
        if (intOnly) need(a.elemIsInt(), op, "needs integer operands, got " + a.str());
        need(op.result()->type() == a, op, "result must have the operands' type " + a.str());
        return;
      }
      case OpKind::Cmp: {
        numOperands(op, 2, 2);
        numResults(op, 1);
        sameTypes(op);
        auto it = op.attrs.find("pred");
        static const std::set<std::string> preds = {"eq", "ne", "lt", "le", "gt", "ge"};
        need(it != op.attrs.end() && std::holds_alternative<std::string>(it->second) &&
                 preds.count(std::get<std::string>(it->second)),
             op, "needs pred = \"eq\", \"ne\", \"lt\", \"le\", \"gt\" or \"ge\"");
        need(ty(op, 0).isData() || ty(op, 0).isPtrLike(), op, "compares scalars, tiles and pointers, not " + ty(op, 0).str());
        need(op.result()->type() == ty(op, 0).withElement(Type::scalarOf(Scalar::I1)), op, "result must be i1 of the operands' shape");
        return;
      }
      case OpKind::Select: {
        numOperands(op, 3, 3);
        numResults(op, 1);
        const Type &c = ty(op, 0), &a = ty(op, 1);
        need(c.isI1(), op, "condition must be i1, got " + c.str());
        need(ty(op, 2) == a, op, "branches must have the same type, got " + a.str() + " and " + ty(op, 2).str());
        need(shapeOf(c) == shapeOf(a), op, "condition shape " + shapeStr(shapeOf(c)) + " differs from " + shapeStr(shapeOf(a)));
        need(op.result()->type() == a, op, "result must be " + a.str());
        return;
      }
      case OpKind::Neg: case OpKind::Abs: case OpKind::Not:
      case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt:
      case OpKind::Sin: case OpKind::Cos: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type& a = ty(op, 0);
        need(a.isData(), op, "does not apply to " + a.str());
        if (op.kind() == OpKind::Not) need(a.elemIsInt(), op, "needs integer or i1 operands");
        else if (op.kind() != OpKind::Neg && op.kind() != OpKind::Abs)
          need(a.elemIsFloat(), op, "needs floating-point operands, got " + a.str() + " (cast with tile.cast)");
        need(op.result()->type() == a, op, "result must have the operand's type " + a.str());
        return;
      }
      case OpKind::Math: {
        auto it = op.attrs.find("fn");
        const MathFn* f = it != op.attrs.end() && std::holds_alternative<std::string>(it->second)
                              ? mathFn(std::get<std::string>(it->second)) : nullptr;
        if (!f) err(op, "needs fn = one of " + mathFnNames());
        numOperands(op, static_cast<size_t>(f->arity), static_cast<size_t>(f->arity));
        numResults(op, 1);
        if (f->arity >= 2) sameTypes(op);
        const Type& a = ty(op, 0);
        need(a.isData() && a.elemIsFloat(), op, std::string(f->name) + " needs floating-point operands, got " + a.str() + " (cast with tile.cast)");
        need(op.result()->type() == a, op, "result must have the operand's type " + a.str());
        return;
      }
      case OpKind::Cast: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type &a = ty(op, 0), &r = op.result()->type();
        need(a.isData() && r.isData(), op, "converts between scalar element types only");
        need(shapeOf(a) == shapeOf(r), op, "cannot change the shape");
        return;
      }
      case OpKind::Bitcast: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        const Type &a = ty(op, 0), &r = op.result()->type();
        // A 64-bit integer and a pointer convert both ways (Triton's int_to_ptr and ptr_to_int:
        // pointers loaded from an array of addresses, an address's alignment computed).
        auto address = [](const Type& t) { return t.isData() && holdsAddress(t.scalar); };
        need((a.isData() && r.isData()) || (a.isPtrLike() && r.isPtrLike()) || (address(a) && r.isPtrLike()) ||
                 (a.isPtrLike() && address(r)),
             op, "reinterprets scalar elements as scalars, pointers as pointers, or 64-bit integers and pointers as each other");
        need(shapeOf(a) == shapeOf(r), op, "cannot change the shape");
        need(a.isPtrLike() || r.isPtrLike() || bitWidth(a.scalar) == bitWidth(r.scalar), op,
             "keeps the width: " + std::string(scalarName(a.scalar)) + " has " + std::to_string(bitWidth(a.scalar)) + " bits, " +
                 std::string(scalarName(r.scalar)) + " " + std::to_string(bitWidth(r.scalar)));
        return;
      }
      case OpKind::AddPtr: {
        numOperands(op, 2, 2);
        numResults(op, 1);
        const Type &p = ty(op, 0), &o = ty(op, 1);
        need(p.isPtrLike(), op, "first operand must be a pointer or tile of pointers, got " + p.str());
        need(o.elemIsInt() && o.scalar != Scalar::I1, op,
             "offset must be an integer, got " + o.str());
        need(shapeOf(p) == shapeOf(o), op, "pointer shape " + shapeStr(shapeOf(p)) + " differs from offset shape " + shapeStr(shapeOf(o)));
        need(op.result()->type() == p, op, "result must be " + p.str());
        return;
      }
      case OpKind::Load: {
        numOperands(op, 1, 3);
        numResults(op, 1);
        const Type& p = ty(op, 0);
        need(p.isPtrLike(), op, "address must be a pointer or tile of pointers, got " + p.str());
        Type val = p.withElement(Type::scalarOf(p.scalar));
        need(op.result()->type() == val, op, "result must be " + val.str());
        if (op.numOperands() >= 2)
          need(ty(op, 1) == p.withElement(Type::scalarOf(Scalar::I1)), op, "mask must be i1 of the address shape, got " + ty(op, 1).str());
        if (op.numOperands() == 3)
          need(ty(op, 2) == val, op, "'other' must be " + val.str() + ", got " + ty(op, 2).str());
        return;
      }
      case OpKind::Store: {
        numOperands(op, 2, 3);
        numResults(op, 0);
        const Type& p = ty(op, 0);
        need(p.isPtrLike(), op, "address must be a pointer or tile of pointers, got " + p.str());
        Type val = p.withElement(Type::scalarOf(p.scalar));
        need(ty(op, 1) == val, op, "value must be " + val.str() + ", got " + ty(op, 1).str());
        if (op.numOperands() == 3)
          need(ty(op, 2) == p.withElement(Type::scalarOf(Scalar::I1)), op, "mask must be i1 of the address shape, got " + ty(op, 2).str());
        return;
      }
      case OpKind::Atomic: {
        // kind: add | max | min | and | or | xor | xchg | cas; sem: relaxed | acquire | release |
        // acq_rel; scope: cta | gpu | sys (Triton's names and defaults: acq_rel, gpu).
        numResults(op, 1);
        const std::string kind = strAttrOr(op, "kind");
        static const std::set<std::string> kinds = {"add", "max", "min", "and", "or", "xor", "xchg", "cas"};
        need(kinds.count(kind) != 0, op, "kind must be add, max, min, and, or, xor, xchg or cas, got \"" + kind + "\"");
        static const std::set<std::string> sems = {"relaxed", "acquire", "release", "acq_rel"}, scopes = {"cta", "gpu", "sys"};
        need(sems.count(strAttrOr(op, "sem")) != 0, op, "sem must be relaxed, acquire, release or acq_rel");
        need(scopes.count(strAttrOr(op, "scope")) != 0, op, "scope must be cta, gpu or sys");
        const bool cas = kind == "cas";
        if (cas) numOperands(op, 3, 3);
        else numOperands(op, 2, 3);
        const Type& p = ty(op, 0);
        need(p.isPtrLike(), op, "address must be a pointer or tile of pointers, got " + p.str());
        Type val = p.withElement(Type::scalarOf(p.scalar));
        need(ty(op, 1) == val, op, std::string(cas ? "compared value" : "value") + " must be " + val.str() + ", got " + ty(op, 1).str());
        if (cas) need(ty(op, 2) == val, op, "new value must be " + val.str() + ", got " + ty(op, 2).str());
        else if (op.numOperands() == 3)
          need(ty(op, 2) == p.withElement(Type::scalarOf(Scalar::I1)), op, "mask must be i1 of the address shape, got " + ty(op, 2).str());
        need(op.result()->type() == val, op, "result must be " + val.str() + " (the old values)");
        if (kind == "and" || kind == "or" || kind == "xor")
          need(isInt(p.scalar) && p.scalar != Scalar::I1, op, "atomic " + kind + " needs integer elements, got " + val.str());
        if (kind == "cas") need(p.scalar != Scalar::I1, op, "atomic cas needs 8- to 64-bit elements");
        need(p.scalar != Scalar::F8E4M3 && p.scalar != Scalar::F8E5M2, op, "no atomics on fp8 elements");
        return;
      }
      case OpKind::MakeDesc: {
        numResults(op, 1);
        const Type& d = op.result()->type();
        need(d.isDesc(), op, "result must be a tdesc type");
        size_t rank = d.shape.size();
        numOperands(op, 1 + 2 * rank, 1 + 2 * rank);
        need(ty(op, 0) == Type::ptrTo(d.scalar), op, "base must be ptr<" + std::string(scalarName(d.scalar)) + ">, got " + ty(op, 0).str());
        for (size_t k = 1; k < op.numOperands(); ++k)
          need(isIntScalar(ty(op, k)), op, "shape and stride operands must be integer scalars");
        return;
      }
      case OpKind::DescLoad:
      case OpKind::DescStore: {
        bool store = op.kind() == OpKind::DescStore;
        need(op.numOperands() >= 1 && ty(op, 0).isDesc(), op, "first operand must be a tensor descriptor");
        const Type& d = ty(op, 0);
        size_t rank = d.shape.size();
        numOperands(op, 1 + store + rank, 1 + store + rank);
        numResults(op, store ? 0 : 1);
        for (size_t k = 1 + store; k < op.numOperands(); ++k)
          if (!(k == 1 && gatheredRows(op, d, 1))) need(isIntScalar(ty(op, k)), op, "offsets must be integer scalars");
        Type block = Type::tileOf(d.shape, Type::scalarOf(d.scalar));
        const Type& v = store ? ty(op, 1) : op.result()->type();
        need(v == block, op, std::string(store ? "value" : "result") + " must be " + block.str() + ", got " + v.str());
        if (store) reduceAttr(op, d.scalar);
        else need(!op.hasAttr("reduce"), op, "a load takes no 'reduce'");
        return;
      }
      case OpKind::Dot: {
        numOperands(op, 2, 3);
        numResults(op, 1);
        const Type &a = ty(op, 0), &b = ty(op, 1), &r = op.result()->type();
        need(a.isTile() && b.isTile() && a.rank() == 2 && b.rank() == 2, op, "operands must be 2-D tiles");
        const bool ints = a.scalar == Scalar::I8 && b.scalar == Scalar::I8;  // int8 x int8 -> int32
        need((a.elemIsFloat() && b.elemIsFloat()) || ints, op, "operands must be f16, bf16, fp8, f32 or i8 tiles");
        need(a.scalar == b.scalar, op, "operands must have the same element type, got " + a.str() + " and " + b.str());
        need(a.shape[1] == b.shape[0], op, "inner dimensions differ: " + a.str() + " times " + b.str());
        need(a.shape[1] >= 16, op, "needs K >= 16 (a k-step of the MMA; M and N may be smaller, padded by the backends)");
        need(r.isTile() && r.shape == std::vector<int64_t>{a.shape[0], b.shape[1]} && (ints ? r.scalar == Scalar::I32 : r.elemIsFloat()), op,
             std::string("result must be ") + (ints ? "an i32" : "a float") + " tile of shape [" + std::to_string(a.shape[0]) + ", " +
                 std::to_string(b.shape[1]) + "]");
        if (op.numOperands() == 3) need(ty(op, 2) == r, op, "accumulator must have the result type " + r.str());
        return;
      }
      case OpKind::Reduce: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        intAttr(op, "axis");
        const Type& a = ty(op, 0);
        need(a.isTile() && !a.elemIsPtr, op, "operand must be a tile of scalars");
        auto it = op.attrs.find("kind");
        need(it != op.attrs.end() && std::holds_alternative<std::string>(it->second), op, "needs kind = \"sum\", \"max\" or \"min\"");
        auto& k = std::get<std::string>(it->second);
        const bool bitwise = k == "and" || k == "or" || k == "xor";
        need(k == "sum" || k == "max" || k == "min" || bitwise, op,
             "kind must be \"sum\", \"max\", \"min\", \"and\", \"or\" or \"xor\", got \"" + k + "\"");
        if (bitwise) need(a.elemIsInt() && a.scalar != Scalar::I1, op, "a bitwise reduction needs integer elements, got " + a.str());
        int64_t ax = op.intAttr("axis");
        need(ax >= 0 && ax < a.rank(), op, "axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(a.rank()));
        auto s = a.shape;
        s.erase(s.begin() + ax);
        need(op.result()->type() == a.withShape(s), op, "result must be " + a.withShape(s).str());
        return;
      }
      case OpKind::Scan: {
        numOperands(op, 1, 1);
        numResults(op, 1);
        intAttr(op, "axis");
        intAttr(op, "reverse");
        const Type& a = ty(op, 0);
        need(a.isTile() && !a.elemIsPtr && a.scalar != Scalar::I1, op, "operand must be a tile of numbers");
        const std::string k = strAttrOr(op, "kind");
        need(k == "sum" || k == "prod" || k == "max" || k == "min", op, "kind must be \"sum\", \"prod\", \"max\" or \"min\", got \"" + k + "\"");
        const int64_t ax = op.intAttr("axis");
        need(ax >= 0 && ax < a.rank(), op, "axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(a.rank()));
        need(op.result()->type() == a, op, "result must be " + a.str());
        return;
      }
      case OpKind::For: {
        need(op.numOperands() >= 3, op, "needs lower bound, upper bound and step");
        need(isIntScalar(ty(op, 0)) && ty(op, 1) == ty(op, 0) && ty(op, 2) == ty(op, 0), op,
             "bounds and step must be integer scalars of one type");
        need(op.regions().size() == 1, op, "needs one body region");
        std::vector<Type> inits;
        for (size_t k = 3; k < op.numOperands(); ++k) inits.push_back(ty(op, k));
        need(resultTypes(op) == inits, op, "result types must match the initial values' types");
        const Block& body = *op.region(0);
        need(body.args().size() == 1 + inits.size() && body.arg(0)->type() == ty(op, 0) && argTypes(body, 1) == inits, op,
             "body takes the induction variable and one argument per initial value, of the same types");
        terminator(op, body, OpKind::Yield, inits);
        return;
      }
      case OpKind::If: {
        numOperands(op, 1, 1);
        need(ty(op, 0) == Type::scalarOf(Scalar::I1), op, "condition must be a scalar i1, got " + ty(op, 0).str());
        need(op.regions().size() == 2, op, "needs a then and an else region");
        for (auto& r : op.regions()) {
          need(r->args().empty(), op, "regions take no arguments");
          terminator(op, *r, OpKind::Yield, resultTypes(op));
        }
        return;
      }
      case OpKind::While: {
        need(op.regions().size() == 2, op, "needs a before and an after region");
        std::vector<Type> inits;
        for (size_t k = 0; k < op.numOperands(); ++k) inits.push_back(ty(op, k));
        const Block &before = *op.region(0), &after = *op.region(1);
        need(argTypes(before) == inits, op, "before region takes one argument per initial value, of the same types");
        const Op* c = before.terminator();
        need(c && c->kind() == OpKind::Condition, op, "before region must end with 'tile.condition'");
        need(c->numOperands() >= 1 && c->operand(0)->type() == Type::scalarOf(Scalar::I1), *c, "first operand must be a scalar i1");
        std::vector<Type> forwarded;
        for (size_t k = 1; k < c->numOperands(); ++k) forwarded.push_back(c->operand(k)->type());
        need(resultTypes(op) == forwarded, op, "results must match the values passed by 'tile.condition'");
        need(argTypes(after) == forwarded, op, "after region takes the values passed by 'tile.condition'");
        terminator(op, after, OpKind::Yield, inits);
        return;
      }
      case OpKind::Yield:
      case OpKind::Condition: {
        numResults(op, 0);
        const Op* p = op.parent ? op.parent->parentOp : nullptr;
        need(p != nullptr, op, "must end a region of tile.for, tile.if or tile.while");
        if (op.kind() == OpKind::Condition)
          need(p->kind() == OpKind::While && op.parent == p->region(0), op, "may only end the before region of tile.while");
        else
          need(p->kind() != OpKind::While || op.parent == p->region(1), op, "cannot end the before region of tile.while");
        return;
      }
      case OpKind::ArefCreate: {
        numOperands(op, 0, 0);
        numResults(op, 1);
        need(op.result()->type().isAref(), op, "result must be an aref type");
        return;
      }
      case OpKind::ArefPut:
      case OpKind::ArefGet:
      case OpKind::ArefConsumed: {
        need(op.numOperands() >= 2 && ty(op, 0).isAref() && isIntScalar(ty(op, 1)), op,
             "takes an aref and an integer iteration index first");
        insideWarpGroup(op);
        const auto& members = ty(op, 0).members;
        if (op.kind() == OpKind::ArefPut) {
          numResults(op, 0);
          need(op.numOperands() == 2 + members.size(), op, "puts one value per payload member (" + std::to_string(members.size()) + ")");
          for (size_t k = 0; k < members.size(); ++k)
            need(ty(op, 2 + k) == members[k], op, "value #" + std::to_string(k) + " has type " + ty(op, 2 + k).str() + ", the aref holds " + members[k].str());
        } else {
          numOperands(op, 2, 2);
          if (op.kind() == OpKind::ArefGet) need(resultTypes(op) == members, op, "results must be the aref's payload types");
          else numResults(op, 0);
        }
        return;
      }
      case OpKind::WgRegion: {
        numOperands(op, 0, 0);
        numResults(op, 0);
        need(op.parent == &func_->body, op, "must be at the top level of a function");
        auto it = op.attrs.find("role");
        need(it != op.attrs.end() && std::holds_alternative<std::string>(it->second) &&
                 (std::get<std::string>(it->second) == "producer" || std::get<std::string>(it->second) == "consumer"),
             op, "needs role = \"producer\" or \"consumer\"");
        intAttr(op, "num_warps");
        need(op.intAttr("num_warps") == 4, op, "a warp group has 4 warps");
        need(op.regions().size() == 1 && op.region(0)->args().empty(), op, "needs one region without arguments");
        terminator(op, *op.region(0), OpKind::Yield, {});
        return;
      }
      case OpKind::SmemAlloc:
        numOperands(op, 0, 0);
        numResults(op, 1);
        need(op.result()->type().isSmem(), op, "result must be a smem type");
        return;
      case OpKind::MbarInit:
        numOperands(op, 0, 0);
        numResults(op, 1);
        need(op.result()->type().isMBar(), op, "result must be an mbar type");
        intAttr(op, "count");
        need(op.intAttr("count") >= 1, op, "needs count >= 1");
        return;
      case OpKind::MbarArrive:
      case OpKind::MbarArriveExpectTx:
      case OpKind::MbarWait: {
        bool wait = op.kind() == OpKind::MbarWait;
        numOperands(op, wait ? 3 : 2, wait ? 3 : 2);
        numResults(op, 0);
        need(ty(op, 0).isMBar() && isIntScalar(ty(op, 1)) && (!wait || isIntScalar(ty(op, 2))), op,
             wait ? "takes an mbar, an index and a parity" : "takes an mbar and an index");
        if (op.kind() == OpKind::MbarArriveExpectTx) intAttr(op, "bytes");
        insideWarpGroup(op);
        return;
      }
      case OpKind::TmaLoad: {
        need(op.numOperands() >= 4 && ty(op, 0).isDesc() && ty(op, 1).isSmem() && isIntScalar(ty(op, 2)) && ty(op, 3).isMBar(), op,
             "takes a descriptor, a smem ring, a slot, an mbar and the offsets");
        numOperands(op, 4 + ty(op, 0).shape.size(), 4 + ty(op, 0).shape.size());
        numResults(op, 0);
        for (size_t k = 4; k < op.numOperands(); ++k)
          if (!(k == 4 && gatheredRows(op, ty(op, 0), 4))) need(isIntScalar(ty(op, k)), op, "offsets must be integer scalars");
        need(ty(op, 1).slotType() == Type::tileOf(ty(op, 0).shape, Type::scalarOf(ty(op, 0).scalar)), op,
             "slot type " + ty(op, 1).slotType().str() + " differs from the descriptor's block");
        insideWarpGroup(op);
        return;
      }
      case OpKind::TmaStore: {
        need(op.numOperands() >= 2 && ty(op, 0).isDesc(), op, "takes a descriptor, a value and the offsets");
        numOperands(op, 2 + ty(op, 0).shape.size(), 2 + ty(op, 0).shape.size());
        numResults(op, 0);
        need(ty(op, 1) == Type::tileOf(ty(op, 0).shape, Type::scalarOf(ty(op, 0).scalar)), op, "value must be the descriptor's block");
        reduceAttr(op, ty(op, 0).scalar);
        return;
      }
      case OpKind::SmemLoad:
        numOperands(op, 2, 2);
        numResults(op, 1);
        need(ty(op, 0).isSmem() && isIntScalar(ty(op, 1)), op, "takes a smem ring and a slot");
        need(op.result()->type() == ty(op, 0).slotType(), op, "result must be " + ty(op, 0).slotType().str());
        return;
      case OpKind::Wgmma: {
        numOperands(op, 5, 5);
        numResults(op, 1);
        need(ty(op, 0).isSmem() && isIntScalar(ty(op, 1)) && ty(op, 2).isSmem() && isIntScalar(ty(op, 3)), op,
             "takes A and B as (smem ring, slot) pairs and an accumulator");
        Type a = ty(op, 0).slotType(), b = ty(op, 2).slotType(), c = ty(op, 4);
        // {trans_a = true} / {trans_b = true}: A / B is the transpose of its slot's tile (KxM / NxK).
        auto trans = [&](const char* attr) {
          auto it = op.attrs.find(attr);
          if (it == op.attrs.end()) return false;
          need(std::holds_alternative<bool>(it->second), op, std::string(attr) + " must be true or false");
          return std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
        };
        if (trans("trans_a") && a.rank() == 2) a = a.withShape({a.shape[1], a.shape[0]});
        if (trans("trans_b") && b.rank() == 2) b = b.withShape({b.shape[1], b.shape[0]});
        need(a.rank() == 2 && b.rank() == 2 && a.shape[1] == b.shape[0] && a.scalar == b.scalar, op, "A and B slots do not multiply");
        const bool ints = isInt(a.scalar);  // i8/u8 x i8/u8 -> i32 (wgmma .s32.s8.s8)
        need(c.isTile() && (ints ? c.scalar == Scalar::I32 : c.elemIsFloat()) && c.shape == std::vector<int64_t>{a.shape[0], b.shape[1]},
             op, "accumulator shape differs");
        need(op.result()->type() == c, op, "result must be the accumulator type");
        insideWarpGroup(op);
        return;
      }
      case OpKind::Barrier:
      case OpKind::WgmmaCommit:
      case OpKind::FenceProxyAsync:
        numOperands(op, 0, 0);
        numResults(op, 0);
        return;
      case OpKind::WgmmaWait:
        numOperands(op, 0, 0);
        numResults(op, 0);
        intAttr(op, "pending");
        need(op.intAttr("pending") >= 0, op, "needs pending >= 0");
        return;
      case OpKind::SetMaxNReg: {
        numOperands(op, 0, 0);
        numResults(op, 0);
        intAttr(op, "regs");
        int64_t r = op.intAttr("regs");
        need(r % 8 == 0 && r >= 24 && r <= 256, op, "regs must be a multiple of 8 in [24, 256], got " + std::to_string(r));
        auto it = op.attrs.find("action");
        need(it != op.attrs.end() && std::holds_alternative<std::string>(it->second) &&
                 (std::get<std::string>(it->second) == "inc" || std::get<std::string>(it->second) == "dec"),
             op, "needs action = \"inc\" or \"dec\"");
        insideWarpGroup(op);
        return;
      }
    }
    err(op, "has no verifier rule");
  }

  const Module& m_;
  const Func* func_ = nullptr;
  std::set<const Value*> visible_;
};

}  // namespace

void checkTileSize(const Op& op) {
  for (auto& r : op.results()) {
    if (!r->type().isTile()) continue;
    int64_t n = 1;
    bool over = false;
    for (int64_t d : r->type().shape) over = over || __builtin_mul_overflow(n, d, &n) || n > kMaxTileElements;
    if (over)
      throw UserError(op.loc(), "'" + std::string(op.name()) + "' makes a tile of type " + r->type().str() + ": more than " +
                                    std::to_string(kMaxTileElements) + " elements (Triton's limit too)",
                      "use smaller block sizes");
  }
}

void checkTileSizes(const Module& m) {
  for (auto& f : m.funcs) walk(static_cast<const Block&>(f->body), [](const Op* op) { checkTileSize(*op); });
}

void verify(const Module& m) { Verifier(m).run(); }

}  // namespace tawa::ir
