#include "transforms/Canonicalize.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/Builder.h"
#include "ir/Clone.h"
#include "ir/Elementwise.h"
#include "ir/Numerics.h"

namespace tawa::transforms {

using namespace ir;

namespace {

class Canonicalizer {
 public:
  explicit Canonicalizer(Func& f) : f_(f) {}

  void run() {
    do {
      changed_ = false;
      uses_.clear();
      flipped_.clear();  // (its values are dead by the next sweep, which removes them)
      countUses(f_.body, uses_);
      sweep(f_.body);
    } while (changed_);
  }

 private:
  static std::optional<AttrValue> constOf(const Value* v) {
    const Op* d = v->definingOp();
    if (!d || d->kind() != OpKind::Constant) return std::nullopt;
    return d->attrs.at("value");
  }
  // Two constants of one value (floats bit for bit: -0.0 is not 0.0).
  static bool sameConstant(const Value* a, const Value* b) {
    auto x = constOf(a), y = constOf(b);
    if (!x || !y || a->type() != b->type() || !(*x == *y)) return false;
    auto* f = std::get_if<double>(&*x);
    return !f || std::signbit(*f) == std::signbit(std::get<double>(*y));
  }
  static bool isIntConst(const Value* v, int64_t want) {
    auto c = constOf(v);
    return c && std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) == want;
  }
  static bool isFloatConst(const Value* v, double want) {
    auto c = constOf(v);
    return c && std::holds_alternative<double>(*c) && std::get<double>(*c) == want;
  }

  void replace(Value* from, Value* to) {
    replaceAllUsesWith(f_.body, from, to);
    changed_ = true;
  }
  // Replaces op's single result by a new constant of the same type, then erases op.
  void foldTo(Op* op, AttrValue v) {
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(op);
    Value* c = b.op1(OpKind::Constant, {}, op->result()->type(), {{"value", std::move(v)}});
    c->nameHint = op->result()->nameHint;
    replace(op->result(), c);
    op->parent->erase(op);
  }
  // Replaces op by an op of another kind on other operands, of the same result type.
  void respell(Op* op, OpKind kind, std::vector<Value*> operands) {
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(op);
    Value* r = b.op1(kind, std::move(operands), op->result()->type());
    r->nameHint = op->result()->nameHint;
    forwardTo(op, r);
  }
  void forwardTo(Op* op, Value* v) {
    replace(op->result(), v);
    op->parent->erase(op);
  }

  // Triton's epilogue subtiling: x (M x N) reshaped to M x P x H, permuted to M x H x P, and split
  // (tl.split: element c along the last axis, reshaped to M x H) is columns c*H .. c*H + H - 1 of x:
  // one tile.slice of x, which the CUDA backend takes from the accumulator's registers.
  bool columnSlice(Op* op) {
    const Value* r = op->result();
    const Op* sl = op->operand(0)->definingOp();
    if (!sl || sl->kind() != OpKind::Slice || sl->result()->type().rank() != 3 || sl->intAttr("axis") != 2 ||
        sl->result()->type().shape[2] != 1 || r->type().rank() != 2)
      return false;
    const Op* pm = sl->operand(0)->definingOp();
    if (!pm || pm->kind() != OpKind::Permute || pm->arrayAttr("order") != std::vector<int64_t>{0, 2, 1}) return false;
    const Op* rs = pm->operand(0)->definingOp();
    if (!rs || rs->kind() != OpKind::Reshape || rs->operand(0)->type().rank() != 2) return false;
    Value* x = rs->operand(0);
    const auto& mph = rs->result()->type().shape;  // M x P x H
    if (x->type().shape[0] != mph[0] || r->type().shape != std::vector<int64_t>{mph[0], mph[2]}) return false;
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(op);
    Value* c = b.op1(OpKind::Slice, {x}, r->type(), {{"axis", int64_t{1}}, {"start", sl->intAttr("start") * mph[2]}});
    c->nameHint = r->nameHint;
    forwardTo(op, c);
    return true;
  }

  void sweep(Block& b) {
    std::vector<Op*> snapshot;
    for (auto& op : b.ops()) snapshot.push_back(op.get());
    for (Op* op : snapshot) {
      for (auto& r : op->regions()) sweep(*r);
      visit(op);
    }
  }

  bool dead(const Op* op) const {
    if (!isPure(op->kind())) return false;
    for (auto& r : op->results())
      if (uses_.count(r.get())) return false;
    return true;
  }

  // Folds an elementwise op whose operands are all constants.
  std::optional<AttrValue> foldElementwise(const Op* op) {
    std::vector<AttrValue> cs;
    for (auto* v : op->operands) {
      auto c = constOf(v);
      if (!c) return std::nullopt;
      cs.push_back(*c);
    }
    const Type& in = op->operand(0)->type();
    bool f = in.elemIsFloat();
    for (size_t k = 0; k < cs.size(); ++k) {  // a constant means its value rounded to its type
      Scalar s = op->operand(k)->type().scalar;
      if (auto* d = std::get_if<double>(&cs[k])) *d = roundFloat(s, *d);
      else if (auto* i = std::get_if<int64_t>(&cs[k])) *i = wrapInt(s, *i);
    }
    auto F = [&](size_t k) { return std::get<double>(cs[k]); };
    auto I = [&](size_t k) { return std::get<int64_t>(cs[k]); };
    switch (op->kind()) {
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Max: case OpKind::Min:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
      case OpKind::Div: case OpKind::FloorDiv: case OpKind::Rem:
        if (f) return evalFloatBinary(op->kind(), in.scalar, F(0), F(1), propagatesNan(*op));
        if (I(1) == 0 && (op->kind() == OpKind::Div || op->kind() == OpKind::FloorDiv || op->kind() == OpKind::Rem))
          return std::nullopt;  // the executor reports it, at run time, where it happens
        return evalIntBinary(op->kind(), in.scalar, I(0), I(1));
      case OpKind::Neg: case OpKind::Abs: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2:
      case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
        if (f) return evalFloatUnary(op->kind(), in.scalar, F(0));
        return evalIntUnary(op->kind(), in.scalar, I(0));
      case OpKind::Math:
        return evalMath(verifiedMathFn(*op), in.scalar, F(0), op->numOperands() > 1 ? F(1) : 0.0, op->numOperands() > 2 ? F(2) : 0.0);
      case OpKind::Cmp:
        return static_cast<int64_t>(f ? evalCmp(op->strAttr("pred"), F(0), F(1)) : evalCmp(op->strAttr("pred"), in.scalar, I(0), I(1)));
      case OpKind::Cast:
      case OpKind::Bitcast: {
        if (op->result()->type().isPtrLike()) return std::nullopt;  // an address made from an integer stays an op
        Scalar to = op->result()->type().scalar;
        const Elem x = f ? Elem{F(0), 0} : Elem{0, I(0)};
        Elem e = op->kind() == OpKind::Cast ? evalCast(in.scalar, to, x) : evalBitcast(in.scalar, to, x);
        if (isFloat(to)) return e.f;
        return e.i;
      }
      default:
        return std::nullopt;
    }
  }

  void visit(Op* op) {
    if (dead(op)) {
      op->parent->erase(op);
      changed_ = true;
      return;
    }
    switch (op->kind()) {
      case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Permute:
      case OpKind::Slice:
        // A constant is a splat, so reshaping it gives the same splat of the new shape.
        if (auto c = constOf(op->operand(0))) foldTo(op, *c);
        else if (const Op* sp = op->operand(0)->definingOp(); sp && sp->kind() == OpKind::Splat && op->kind() != OpKind::Slice)
          respell(op, OpKind::Splat, {sp->operand(0)});  // a splat reshaped is a splat of the new shape
        else if (op->kind() == OpKind::Reshape && columnSlice(op)) return;
        else if (op->kind() == OpKind::Permute && transposeUp(op)) return;
        else if (op->kind() == OpKind::Reshape || op->kind() == OpKind::Permute) reorient(op);
        return;
      case OpKind::Arange:  // one element: its start
        if (op->intAttr("end") - op->intAttr("start") == 1) foldTo(op, op->intAttr("start"));
        return;
      case OpKind::Select:
        if (auto c = constOf(op->operand(0))) forwardTo(op, op->operand(std::get<int64_t>(*c) ? 1 : 2));
        else if (op->operand(1) == op->operand(2) || sameConstant(op->operand(1), op->operand(2))) forwardTo(op, op->operand(1));
        return;
      case OpKind::If:
        if (auto c = constOf(op->operand(0))) inlineRegion(op, op->region(std::get<int64_t>(*c) ? 0 : 1));
        else if (op->numResults() == 0 && op->regions().size() == 2 &&
                 ((op->region(0)->ops().size() == 1 && op->region(1)->ops().size() > 1) || (hasLoop(*op->region(1)) && !hasLoop(*op->region(0)))))
          flipEarlyReturn(op);
        else
          mergeLoads(op);
        return;
      case OpKind::Dot:
        halfDot(op);
        return;
      case OpKind::For: {
        // A loop that runs no iteration (lb >= ub counting up, lb <= ub counting down: Python's
        // `range(3, -1, -1)` runs 3, 2, 1, 0) is its initial values.
        auto lb = constOf(op->operand(0)), ub = constOf(op->operand(1)), step = constOf(op->operand(2));
        if (lb && ub && step && (std::get<int64_t>(*step) > 0 ? std::get<int64_t>(*lb) >= std::get<int64_t>(*ub)
                                                               : std::get<int64_t>(*lb) <= std::get<int64_t>(*ub))) {
          for (size_t k = 0; k < op->numResults(); ++k) replace(op->result(k), op->operand(3 + k));
          op->parent->erase(op);
          return;
        }
        dropUnchangedCarried(op);
        return;
      }
      default:
        break;
    }
    if (op->kind() == OpKind::Load) return scalarLoad(op);
    if (!isElementwise(op->kind()) || op->numResults() != 1) return;
    if (auto v = foldElementwise(op)) {
      foldTo(op, *v);
      return;
    }
    // Identities. Float x+0.0 is not one (-0.0 + 0.0 is +0.0), x*1.0 and x/1.0 are.
    bool isF = op->operand(0)->type().elemIsFloat();
    auto one = [&](const Value* v) { return isF ? isFloatConst(v, 1.0) : isIntConst(v, 1); };
    auto zero = [&](const Value* v) { return !isF && isIntConst(v, 0); };
    switch (op->kind()) {
      case OpKind::Add:
        if (zero(op->operand(1))) forwardTo(op, op->operand(0));
        else if (zero(op->operand(0))) forwardTo(op, op->operand(1));
        else accumulateDot(op);
        return;
      case OpKind::Sub:
        if (zero(op->operand(1))) forwardTo(op, op->operand(0));
        return;
      case OpKind::Mul:
        if (one(op->operand(1))) forwardTo(op, op->operand(0));
        else if (one(op->operand(0))) forwardTo(op, op->operand(1));
        else if (zero(op->operand(0)) || zero(op->operand(1))) foldTo(op, int64_t{0});  // integers only (0.0 * inf is NaN)
        return;
      case OpKind::Div:
      case OpKind::FloorDiv:
        if (one(op->operand(1))) forwardTo(op, op->operand(0));
        return;
      case OpKind::AddPtr:
        if (isIntConst(op->operand(1), 0)) forwardTo(op, op->operand(0));
        return;
      case OpKind::And:  // a mask and'ed with true (vLLM's `(tl.arange(0, 1) < 1)[None, :]`)
        if (op->result()->type().scalar != Scalar::I1) return;
        if (isIntConst(op->operand(1), 1)) forwardTo(op, op->operand(0));
        else if (isIntConst(op->operand(0), 1)) forwardTo(op, op->operand(1));
        return;
      default:
        return;
    }
  }

  // ---- a tile's DAG made again in another shape, for two forms real kernels write:
  // - a vector tile turned over: an N x 1 tile reshaped or transposed to 1 x N (vLLM's scaled_mm
  //   reads its column scales as an N x 1 tile and uses `scale_b.T`). The elements keep their order,
  //   only the axis they lie along changes; the backends hold a 1 x N tile along the columns of the
  //   tiles it is broadcast to, which an N x 1 one is not. So it is computed 1 x N from the start.
  // - a tile of one element loaded (the same kernel's per-tensor scale: a 1 x 1 tile through
  //   `tl.arange(0, 1)`): a scalar load, splat to the tile. The backends' tiles have at least 16 rows.
  // Each op of the DAG down to its roots (an expand_dims or reshape of a 1-D tile, a splat, a
  // constant, a broadcast of a 1-element tile; for a scalar any shape op of a 1-element tile) is made
  // again right after the op it copies (a tile.load reads what the original reads, at the same point),
  // through elementwise ops and loads. Left alone when any op of the DAG is something else.
  static int vectorAxis(const Type& t) {  // the one axis longer than 1 of a 2-D tile, or -1
    if (!t.isTile() || t.rank() != 2 || (t.shape[0] == 1) == (t.shape[1] == 1)) return -1;
    return t.shape[0] == 1 ? 1 : 0;
  }
  struct Reshaped {
    std::vector<int64_t> shape;  // of the copies: {} for scalars
    std::map<const Value*, Value*> made;
    std::vector<Op*> order;  // the DAG's ops, operands first
  };
  void reorient(Op* op) {
    const Type& from = op->operand(0)->type();
    const Type& to = op->result()->type();
    const int fa = vectorAxis(from), ta = vectorAxis(to);
    if (fa < 0 || ta < 0 || fa == ta) return;
    Reshaped rs{to.shape, {}, {}};
    if (!reshapable(op->operand(0), rs)) return;
    forwardTo(op, remake(rs, op->operand(0), op->result()->nameHint));
    dropOriginals(rs, nullptr);
  }
  void scalarLoad(Op* op) {
    const Type t = op->result()->type();
    if (!t.isTile() || t.numel() != 1) return;
    Reshaped rs;
    if (!reshapable(op->result(), rs)) return;
    Value* s = remake(rs, op->result(), op->result()->nameHint);
    forwardTo(op, after(*s->definingOp()).op1(OpKind::Splat, {s}, t));
    dropOriginals(rs, op);
  }
  // A builder that inserts right after o (each op it makes after the previous one).
  static Builder after(Op& o) {
    Block* blk = o.parent;
    auto& ops = blk->ops();
    auto it = std::find_if(ops.begin(), ops.end(), [&](auto& p) { return p.get() == &o; });
    Builder b(blk, o.loc());
    if (++it == ops.end()) b.setInsertionPointToEnd(blk);
    else b.setInsertionPointBefore(it->get());
    return b;
  }
  Value* remake(Reshaped& rs, Value* root, const std::string& name) {
    for (Op* o : rs.order) rs.made[o->result()] = remade(*o, rs);
    Value* r = rs.made.at(root);
    if (!name.empty()) r->nameHint = name;
    changed_ = true;
    return r;
  }
  // The originals nothing else reads go, users first: loads too (their copies read the same
  // addresses at the same point). All precede the op being visited, so the sweep is past them;
  // `gone` was erased already.
  void dropOriginals(const Reshaped& rs, const Op* gone) {
    for (auto o = rs.order.rbegin(); o != rs.order.rend(); ++o) {
      if (*o == gone) continue;
      bool used = false;
      walk(f_.body, [&](Op* u) { used = used || std::count(u->operands.begin(), u->operands.end(), (*o)->result()); });
      if (!used) (*o)->parent->erase(*o);
    }
  }
  // Whether v's DAG can be made again in rs.shape; lists its ops in rs.order.
  bool reshapable(const Value* v, Reshaped& rs) {
    if (rs.made.count(v)) return true;
    Op* d = v->definingOp();
    const bool scalar = rs.shape.empty();
    if (!d || d->numResults() != 1 || !v->type().isTile() || (scalar ? v->type().numel() != 1 : vectorAxis(v->type()) < 0))
      return false;
    const Type* in = d->numOperands() ? &d->operand(0)->type() : nullptr;
    switch (d->kind()) {
      case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Broadcast: case OpKind::Permute:
        if (scalar ? !reshapable(d->operand(0), rs)
                   : d->kind() == OpKind::Broadcast ? in->numel() != 1 : d->kind() == OpKind::Permute || in->rank() != 1)
          return false;
        break;
      case OpKind::Splat: case OpKind::Constant:
        break;
      case OpKind::Load:
        for (auto* o : d->operands)
          if (!reshapable(o, rs)) return false;
        break;
      default:
        if (!isElementwise(d->kind())) return false;
        for (auto* o : d->operands)
          if (o->type().isTile() && !reshapable(o, rs)) return false;
        break;
    }
    rs.made[v] = nullptr;
    rs.order.push_back(d);
    return true;
  }
  Value* remade(Op& o, const Reshaped& rs) {
    const bool scalar = rs.shape.empty();
    if (scalar && o.kind() == OpKind::Splat) return o.operand(0);
    if (scalar && o.numOperands() == 1 && o.operand(0)->type().isTile() &&
        (o.kind() == OpKind::ExpandDims || o.kind() == OpKind::Reshape || o.kind() == OpKind::Broadcast || o.kind() == OpKind::Permute))
      return rs.made.at(o.operand(0));
    Builder b = after(o);
    const Type t = o.result()->type().withShape(rs.shape);
    Value* r;
    switch (o.kind()) {
      case OpKind::ExpandDims: case OpKind::Reshape:  // of a 1-D tile, into the vector's other axis
        r = b.op1(OpKind::ExpandDims, {o.operand(0)}, t, {{"axis", int64_t{rs.shape[0] == 1 ? 0 : 1}}});
        break;
      case OpKind::Broadcast: case OpKind::Splat: case OpKind::Constant:
        r = b.op1(o.kind(), o.operands, t, o.attrs);
        break;
      default: {
        std::vector<Value*> args;
        for (auto* a : o.operands) args.push_back(a->type().isTile() ? rs.made.at(a) : a);
        r = b.op1(o.kind(), args, t, o.attrs);
        break;
      }
    }
    r->nameHint = o.result()->nameHint;
    return r;
  }

  // A value a tile.for carries unchanged (its yield passes the block argument back, as the front end
  // writes a variable an untaken constexpr branch of the body would assign) is its initial value in
  // every iteration and after the loop: the loop is rebuilt without it.
  void dropUnchangedCarried(Op* loop) {
    Block& body = *loop->region(0);
    Op* y = body.terminator();
    if (!y || y->kind() != OpKind::Yield || y->numOperands() != loop->numResults()) return;
    std::map<size_t, Value*> drop;  // inside, the argument is the initial value
    for (size_t k = 0; k < loop->numResults(); ++k)
      if (y->operand(k) == body.arg(k + 1)) drop[k] = loop->operand(3 + k);
    if (drop.empty()) return;
    Op* nl = rebuildForWithout(loop, drop);
    for (size_t k = 0, n = 0; k < loop->numResults(); ++k)
      replace(loop->result(k), drop.count(k) ? loop->operand(3 + k) : nl->result(n++));
    loop->parent->erase(loop);
  }

  // `acc + tl.dot(a, b)` (either order), the dot without an accumulator and used only here, is
  // tl.dot(a, b, acc): the MMA then accumulates into acc, as Triton combines the two. The sum is
  // rounded in another order (acc is the MMA's starting value, not added at the end).
  void accumulateDot(Op* op) {
    for (size_t k = 0; k < 2; ++k) {
      Op* d = op->operand(k)->definingOp();
      Value* acc = op->operand(1 - k);
      if (!d || d->kind() != OpKind::Dot || d->numOperands() != 2 || d->parent != op->parent || uses_[d->result()] != 1 ||
          acc->type() != d->result()->type() || acc == d->result())
        continue;
      Builder b(op->parent, op->loc());
      b.setInsertionPointBefore(op);
      Value* r = b.op1(OpKind::Dot, {d->operand(0), d->operand(1), acc}, op->result()->type(), d->attrs);
      r->nameHint = op->result()->nameHint;
      forwardTo(op, r);
      d->parent->erase(d);
      return;
    }
  }

  // A tile.dot with an f16 or bf16 result (`tl.dot(q, k, out_dtype=tl.float16)`: DeepSpeed's packed
  // flash attention) is an f32 dot rounded once: its accumulator widened exactly, the products summed
  // in f32, the sum rounded to the result type, as the executor computes it (Triton's MMA rounds its
  // f16 accumulator as it goes). The backends then need no 16-bit accumulators.
  void halfDot(Op* op) {
    const Type& t = op->result()->type();
    if (t.scalar != Scalar::F16 && t.scalar != Scalar::BF16) return;
    const Type wide = t.withElement(Type::scalarOf(Scalar::F32));
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(op);
    std::vector<Value*> ops{op->operand(0), op->operand(1)};
    if (op->numOperands() == 3) ops.push_back(b.op1(OpKind::Cast, {op->operand(2)}, wide));
    Value* r = b.op1(OpKind::Cast, {b.op1(OpKind::Dot, ops, wide, op->attrs)}, t);
    r->nameHint = op->result()->nameHint;
    forwardTo(op, r);
  }

  // ---- a 2-D transpose moved toward its sources (vLLM's MoE with SWAP_AB accumulates C^T =
  // B^T A^T in the K loop and transposes the accumulator after it; fla's and FlagGems' kernels store
  // tl.trans of a result): T(T(x)) = x; T(f(x, y)) = f(T x, T y) for an elementwise f; T(x @ y + acc)
  // = T(y) @ T(x) + T(acc); T(broadcast x) = broadcast(T x); and T of a value a tile.for carries, used
  // only so after the loop, is carried transposed (T of the block argument inside, T of the yielded
  // value at the yield, which these rules move up the accumulation until it meets the first). The
  // accumulator then never needs transposing in registers: the transposes reach loaded operands (a
  // transposed shared-memory tile for wgmma) and vectors (turned over from their 1-D roots). An op
  // with other uses is moved through only when all of them end transposed (else it would be
  // computed twice, or transposed in registers).
  static bool isTranspose(const Op* o) {
    return o && o->kind() == OpKind::Permute && o->arrayAttr("order") == std::vector<int64_t>{1, 0};
  }
  bool transposeUp(Op* op) {
    if (!isTranspose(op)) return false;
    Value* x = op->operand(0);
    Op* d = x->definingOp();
    if (isTranspose(d)) {
      forwardTo(op, d->operand(0));
      return true;
    }
    if (!d) return false;
    if (d->kind() == OpKind::For) return transposeCarried(op);
    if (d->numResults() != 1) return false;
    if (uses_[x] != 1) return transposeShared(x);
    Builder b(op->parent, op->loc());
    b.setInsertionPointBefore(op);
    Value* r = transposedOf(b, d);
    if (!r) return false;
    forwardTo(op, r);
    return true;
  }
  // The transpose of d's result computed from d's operands transposed (the dot's swapped), made at
  // b; null for an op no rule moves a transpose through.
  static Value* transposedOf(Builder& b, Op* d) {
    const Type& xt = d->result()->type();
    const Type t = xt.withShape({xt.shape[1], xt.shape[0]});
    Value* r;
    if (d->kind() == OpKind::Dot && d->operand(0)->type().rank() == 2) {
      std::vector<Value*> ops{transpose(b, d->operand(1)), transpose(b, d->operand(0))};
      if (d->numOperands() > 2) ops.push_back(transpose(b, d->operand(2)));
      r = b.op1(OpKind::Dot, ops, t, d->attrs);
    } else if (d->kind() == OpKind::Broadcast && d->operand(0)->type().rank() == 2) {
      r = b.op1(OpKind::Broadcast, {transpose(b, d->operand(0))}, t);
    } else if (isElementwise(d->kind()) && d->kind() != OpKind::Load) {
      std::vector<Value*> ops;
      for (Value* o : d->operands) ops.push_back(o->type().isTile() ? transpose(b, o) : o);
      r = b.op1(d->kind(), ops, t, d->attrs);
    } else {
      return nullptr;
    }
    r->nameHint = d->result()->nameHint;
    return r;
  }
  // x read elsewhere too (FlagAttention's backward reads P as `tl.trans(p)` for dV and in
  // dS = P * (dP - delta), read as `tl.trans(ds)` for dK): when every read of x ends transposed,
  // directly or through elementwise ops of its shape (`endsTransposed`), x and those ops are made
  // again transposed (each right before the op it copies), and each of the transposes reads the copy
  // of its operand instead. The originals, unread, go as dead code.
  bool transposeShared(Value* x) {
    std::vector<Op*> ops, transposes;
    if (flipped_.count(x) || !endsTransposed(x, 4, ops, transposes)) return false;
    Op* d = x->definingOp();
    Builder b(d->parent, d->loc());
    b.setInsertionPointBefore(d);
    Value* r = transposedOf(b, d);
    if (!r) return false;
    std::map<const Value*, Value*> flip{{x, r}};
    std::vector<Op*> order;  // the elementwise ops in program order (each after its operands)
    walk(f_.body, [&](Op* o) {
      if (std::find(ops.begin(), ops.end(), o) != ops.end()) order.push_back(o);
    });
    for (Op* u : order) {
      Builder ub(u->parent, u->loc());
      ub.setInsertionPointBefore(u);
      std::vector<Value*> operands;
      for (Value* o : u->operands) operands.push_back(flip.count(o) ? flip.at(o) : o->type().isTile() ? transpose(ub, o) : o);
      const Type& ut = u->result()->type();
      Value* ur = ub.op1(u->kind(), operands, ut.withShape({ut.shape[1], ut.shape[0]}), u->attrs);
      ur->nameHint = u->result()->nameHint;
      flip[u->result()] = ur;
    }
    for (Op* t : transposes) replace(t->result(), flip.at(t->operand(0)));
    for (auto& [v, copy] : flip) flipped_.insert(v);
    return true;
  }
  // Whether every read of 2-D tile x is a 2-D transpose (added to `transposes`), or an elementwise
  // op of x's shape, not a load (added to `ops`), whose result's reads all are so, `depth` ops deep.
  bool endsTransposed(const Value* x, int depth, std::vector<Op*>& ops, std::vector<Op*>& transposes) {
    if (depth == 0 || x->type().rank() != 2) return false;
    std::vector<Op*> users;
    walk(f_.body, [&](Op* u) {
      if (std::find(u->operands.begin(), u->operands.end(), x) != u->operands.end()) users.push_back(u);
    });
    for (Op* u : users) {
      if (std::find(ops.begin(), ops.end(), u) != ops.end() || std::find(transposes.begin(), transposes.end(), u) != transposes.end())
        continue;
      if (isTranspose(u)) {
        transposes.push_back(u);
        continue;
      }
      if (!isElementwise(u->kind()) || u->kind() == OpKind::Load || u->numResults() != 1 ||
          u->result()->type().shape != x->type().shape)
        return false;
      ops.push_back(u);
      if (!endsTransposed(u->result(), depth - 1, ops, transposes)) return false;
    }
    return true;
  }
  // The 2-D transpose of v, made at b.
  static Value* transpose(Builder& b, Value* v) {
    const auto& s = v->type().shape;
    return b.op1(OpKind::Permute, {v}, v->type().withShape({s[1], s[0]}), {{"order", std::vector<int64_t>{1, 0}}});
  }
  // T of result k of a tile.for that nothing else uses: the loop carries T(value) instead.
  bool transposeCarried(Op* op) {
    Value* x = op->operand(0);
    Op* loop = x->definingOp();
    size_t k = 0;
    while (loop->result(k) != x) ++k;
    if (uses_[x] != 1) return false;
    Block& body = *loop->region(0);
    Op* y = body.terminator();
    if (!y || y->kind() != OpKind::Yield) return false;
    const Type t = op->result()->type();
    Builder b(loop->parent, loop->loc());
    b.setInsertionPointBefore(loop);
    std::vector<Value*> ops = loop->operands;
    ops[3 + k] = transpose(b, ops[3 + k]);
    std::vector<Type> types;
    for (size_t i = 0; i < loop->numResults(); ++i) types.push_back(i == k ? t : loop->result(i)->type());
    Op* nl = b.create(OpKind::For, ops, types, loop->attrs);
    Block* nb = nl->addRegion();
    ValueMap map;
    for (size_t i = 0; i < body.args().size(); ++i) {
      Value* a = nb->addArg(i == k + 1 ? t : body.arg(i)->type(), body.arg(i)->nameHint);
      map[body.arg(i)] = a;
    }
    Builder lb(nb, loop->loc());
    map[body.arg(k + 1)] = transpose(lb, nb->arg(k + 1));
    for (auto& o : body.ops()) {
      if (o.get() != y) {
        cloneOp(lb, *o, map);
        continue;
      }
      std::vector<Value*> ys;
      for (size_t i = 0; i < y->numOperands(); ++i) ys.push_back(mapped(map, y->operand(i)));
      lb.setLoc(y->loc());
      ys[k] = transpose(lb, ys[k]);
      lb.create(OpKind::Yield, ys, {});
    }
    for (size_t i = 0; i < loop->numResults(); ++i) {
      nl->result(i)->nameHint = loop->result(i)->nameHint;
      if (i != k) replace(loop->result(i), nl->result(i));
    }
    nl->result(k)->nameHint = op->result()->nameHint.empty() ? x->nameHint : op->result()->nameHint;
    forwardTo(op, nl->result(k));
    loop->parent->erase(loop);
    return true;
  }

  // `if c: x = tl.load(p, m, o) else: x = tl.load(p)` (vLLM's prefix-prefill reads its K and V
  // blocks so: masked only where the block may run past the context) is one load at p with mask
  // `c ? m : true` (each region's mask, true without one) and `other` `c ? o : 0`: it reads what the
  // taken branch reads. Each region must hold only pure ops that cannot trap (no division or
  // remainder) and that one load, and yield it; the pointers must be computed alike. The pure ops
  // move before the tile.if.
  void mergeLoads(Op* ifOp) {
    if (ifOp->numResults() != 1 || ifOp->regions().size() != 2 || !ifOp->result()->type().isTile()) return;
    Op* loads[2] = {nullptr, nullptr};
    for (int r = 0; r < 2; ++r) {
      Block& b = *ifOp->region(r);
      for (auto& o : b.ops()) {
        const OpKind k = o->kind();
        if (k == OpKind::Yield) continue;
        if (k == OpKind::Load && !loads[r]) loads[r] = o.get();
        else if (!isPure(k) || !o->regions().empty() || k == OpKind::Div || k == OpKind::FloorDiv || k == OpKind::Rem ||
                 (loads[r] && std::count(o->operands.begin(), o->operands.end(), loads[r]->result())))  // moved out, it would lose the load
          return;
      }
      if (!loads[r] || b.terminator()->operand(0) != loads[r]->result()) return;
    }
    if (!sameValue(loads[0]->operand(0), loads[1]->operand(0))) return;
    // Hoist both regions' pure ops before the tile.if (their operands are defined outside or earlier).
    for (int r = 0; r < 2; ++r) {
      Block& b = *ifOp->region(r);
      std::vector<Op*> pure;
      for (auto& o : b.ops())
        if (o->kind() != OpKind::Yield && o->kind() != OpKind::Load) pure.push_back(o.get());
      for (Op* o : pure) {
        auto& ops = b.ops();
        auto it = std::find_if(ops.begin(), ops.end(), [&](auto& q) { return q.get() == o; });
        auto& outer = ifOp->parent->ops();
        auto at = std::find_if(outer.begin(), outer.end(), [&](auto& q) { return q.get() == ifOp; });
        o->parent = ifOp->parent;
        outer.splice(at, ops, it);
      }
    }
    Builder b(ifOp->parent, ifOp->loc());
    b.setInsertionPointBefore(ifOp);
    const Type t = ifOp->result()->type();
    const Type maskT = t.withElement(Type::scalarOf(Scalar::I1));
    Value* c = b.op1(OpKind::Splat, {ifOp->operand(0)}, maskT);
    auto part = [&](int r, size_t k, const Type& ty, AttrValue none) {
      return loads[r]->numOperands() > k ? loads[r]->operand(k) : b.op1(OpKind::Constant, {}, ty, {{"value", none}});
    };
    Value* mask = b.op1(OpKind::Select, {c, part(0, 1, maskT, int64_t{1}), part(1, 1, maskT, int64_t{1})}, maskT);
    const AttrValue zero = t.elemIsFloat() ? AttrValue{0.0} : AttrValue{int64_t{0}};
    Value* other = b.op1(OpKind::Select, {c, part(0, 2, t, zero), part(1, 2, t, zero)}, t);
    b.setLoc(loads[0]->loc());
    Value* r = b.op1(OpKind::Load, {loads[0]->operand(0), mask, other}, t, loads[0]->attrs);
    r->nameHint = ifOp->result()->nameHint;
    forwardTo(ifOp, r);
  }
  // Replaces a tile.if by the ops of one of its regions.
  // `if c: return` before the rest of a kernel (the front end's `if c {} else {rest}`) becomes
  // `if !c {rest} else {}`: a guard around the rest, which warp-specialize takes like `if t < tiles:`.
  // (So is `if c {work} else {rest with a loop}`: the branch with a loop comes first.)
  static bool hasLoop(Block& b) {
    bool any = false;
    walk(b, [&](Op* o) { any = any || o->kind() == OpKind::For || o->kind() == OpKind::While; });
    return any;
  }
  void flipEarlyReturn(Op* ifOp) {
    Builder b(ifOp->parent, ifOp->loc());
    b.setInsertionPointBefore(ifOp);
    Value* c = ifOp->operand(0);
    Value* t = b.op1(OpKind::Constant, {}, c->type(), {{"value", int64_t{1}}});
    ifOp->operands[0] = b.op1(OpKind::Xor, {c, t}, c->type());
    ifOp->swapRegions(0, 1);
    changed_ = true;
  }

  void inlineRegion(Op* ifOp, Block* r) {
    Block* parent = ifOp->parent;
    auto& ops = parent->ops();
    auto pos = std::find_if(ops.begin(), ops.end(), [&](auto& p) { return p.get() == ifOp; });
    Op* yield = r->terminator();
    std::vector<Value*> yielded = yield->operands;
    for (auto& op : r->ops())
      if (op.get() != yield) op->parent = parent;
    ops.splice(pos, r->ops(), r->ops().begin(), std::prev(r->ops().end()));
    for (size_t k = 0; k < ifOp->numResults(); ++k) replace(ifOp->result(k), yielded[k]);
    parent->erase(ifOp);
    changed_ = true;
  }

  Func& f_;
  bool changed_ = false;
  std::map<const Value*, int> uses_;
  std::set<const Value*> flipped_;  // values transposeShared made again transposed in this sweep
};

}  // namespace

void canonicalize(Module& m) {
  for (auto& f : m.funcs) Canonicalizer(*f).run();
}

}  // namespace tawa::transforms
