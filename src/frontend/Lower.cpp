#include "frontend/Lower.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>

#include "frontend/Frontend.h"
#include "ir/Builder.h"
#include "ir/Elementwise.h"
#include "ir/MathFns.h"

namespace tawa::frontend {

namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Block;

// ---- values of the abstract interpreter

struct Val {
  enum class K { Undef, None, Int, Float, Bool, Str, Dtype, Tuple, IR, Func, Module, TlFunc, Builtin, Method, TypeRef, BlockPtr };
  K k = K::None;
  int64_t i = 0;
  double f = 0;
  std::string s;  // Str; Func/Module/TlFunc/Builtin/Method/TypeRef: the name; Undef: why
  Scalar dt = Scalar::F32;
  bool dtPtr = false;          // Dtype: a pointer type to dt
  bool dtBlock = false;        // Dtype: the block type of a tensor (`x.type`) of dt elements, shape blockShape
  std::vector<int64_t> blockShape;  // Dtype (dtBlock), BlockPtr: the block's shape
  std::vector<Val> elems;      // Tuple; Method: elems[0] is self; BlockPtr: shape, strides, offsets (rank each)
  ir::Value* v = nullptr;      // IR; BlockPtr: the base pointer
  SourceFile* src = nullptr;   // Func: the file that defines it; Module: an imported .py file (null: triton's)
  Pos where;                   // Undef: where the name became undefined
  // Int/Float/Bool bound by an assignment (`s = 0.1`): Triton makes it a scalar tensor of to_tensor's
  // type (dt: i32, u32 or i64; f32, or f64 for a value f32 cannot hold; i1), which takes part in type
  // promotion as that type, not as a weak constant (`x_f16 * s` computes in f32). It stays a constant
  // here (usable where a compile-time value is needed, which Triton would refuse).
  bool strong = false;

  static Val none() { return Val{}; }
  static Val integer(int64_t x) {
    Val r;
    r.k = K::Int;
    r.i = x;
    return r;
  }
  static Val real(double x) {
    Val r;
    r.k = K::Float;
    r.f = x;
    return r;
  }
  static Val boolean(bool x) {
    Val r;
    r.k = K::Bool;
    r.i = x;
    return r;
  }
  static Val str(std::string x) {
    Val r;
    r.k = K::Str;
    r.s = std::move(x);
    return r;
  }
  static Val dtype(Scalar s, bool ptr = false) {
    Val r;
    r.k = K::Dtype;
    r.dt = s;
    r.dtPtr = ptr;
    return r;
  }
  static Val ir(ir::Value* x) {
    Val r;
    r.k = K::IR;
    r.v = x;
    return r;
  }
  static Val named(K k, std::string n) {
    Val r;
    r.k = k;
    r.s = std::move(n);
    return r;
  }
  static Val tuple(std::vector<Val> e) {
    Val r;
    r.k = K::Tuple;
    r.elems = std::move(e);
    return r;
  }
  bool isIR() const { return k == K::IR; }
  bool isNum() const { return k == K::Int || k == K::Float || k == K::Bool; }
  bool isConst() const {
    if (k == K::Tuple) {
      for (auto& e : elems)
        if (!e.isConst()) return false;
      return true;
    }
    return k == K::None || isNum() || k == K::Str || k == K::Dtype;
  }
  bool operator==(const Val& o) const {
    if (k != o.k) return false;
    switch (k) {
      case K::Undef:
      case K::None: return true;
      case K::Int:
      case K::Bool: return i == o.i;
      case K::Float: return f == o.f || (std::isnan(f) && std::isnan(o.f));
      case K::Dtype: return dt == o.dt && dtPtr == o.dtPtr && dtBlock == o.dtBlock && blockShape == o.blockShape;
      case K::Tuple: return elems == o.elems;
      case K::IR: return v == o.v;
      case K::Method: return s == o.s && elems == o.elems;
      case K::Func:
      case K::Module: return s == o.s && src == o.src;
      case K::BlockPtr: return v == o.v && elems == o.elems && blockShape == o.blockShape;
      case K::Str:
      case K::TlFunc:
      case K::Builtin:
      case K::TypeRef: return s == o.s;
    }
    return false;
  }
};

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + "]";
}

std::optional<Scalar> dtypeByName(const std::string& n) {
  static const std::pair<const char*, Scalar> table[] = {
      {"float16", Scalar::F16},    {"bfloat16", Scalar::BF16},  {"float32", Scalar::F32}, {"float64", Scalar::F64},
      {"float8e4nv", Scalar::F8E4M3}, {"float8e5", Scalar::F8E5M2}, {"int1", Scalar::I1},   {"int8", Scalar::I8},
      {"int16", Scalar::I16},      {"int32", Scalar::I32},      {"int64", Scalar::I64},   {"float8_e4m3fn", Scalar::F8E4M3},
      {"float8_e5m2", Scalar::F8E5M2}, {"uint8", Scalar::U8}, {"uint16", Scalar::U16}, {"uint32", Scalar::U32},
      {"uint64", Scalar::U64}};
  for (auto& [name, s] : table)
    if (n == name) return s;
  return std::nullopt;
}

std::string tritonDtypeName(Scalar s) {
  switch (s) {
    case Scalar::I1: return "int1";
    case Scalar::I8: return "int8";
    case Scalar::I16: return "int16";
    case Scalar::I32: return "int32";
    case Scalar::I64: return "int64";
    case Scalar::F8E4M3: return "float8e4nv";
    case Scalar::F8E5M2: return "float8e5";
    case Scalar::F16: return "float16";
    case Scalar::BF16: return "bfloat16";
    case Scalar::F32: return "float32";
    case Scalar::F64: return "float64";
    case Scalar::U8: return "uint8";
    case Scalar::U16: return "uint16";
    case Scalar::U32: return "uint32";
    case Scalar::U64: return "uint64";
  }
  return "?";
}

// Names assigned (as targets) anywhere in a statement list, nested blocks included.
void assignedNames(const Body& body, std::vector<std::string>& out) {
  std::function<void(const Expr&)> target = [&](const Expr& e) {
    if (e.kind == Expr::Kind::Name) {
      if (std::find(out.begin(), out.end(), e.name) == out.end()) out.push_back(e.name);
    } else {
      for (auto& k : e.kids)
        if (k) target(*k);
    }
  };
  for (auto& s : body) {
    switch (s->kind) {
      case Stmt::Kind::Assign:
      case Stmt::Kind::AugAssign:
      case Stmt::Kind::AnnAssign:
      case Stmt::Kind::For:
        for (auto& t : s->targets) target(*t);
        break;
      case Stmt::Kind::Expr:
      case Stmt::Kind::If:
      case Stmt::Kind::While:
      case Stmt::Kind::Return:
      case Stmt::Kind::Pass:
      case Stmt::Kind::Assert:
      case Stmt::Kind::Raise: break;
    }
    assignedNames(s->body, out);
    assignedNames(s->orelse, out);
  }
}

struct Frame {
  const FunctionDef* fn = nullptr;
  std::unordered_map<std::string, Val> vars;
  bool returned = false;
  Val result;
  int runtimeDepth = 0;    // nesting of runtime regions (tile.for/if/while) in this function
  int loopFrom = INT_MAX;  // read index where the outermost enclosing runtime loop starts
  // The unfinished statement lists around the current one (folded ifs, early exits), innermost
  // last: what an early exit's other region must still run.
  std::vector<std::pair<const Body*, size_t>> tails;
};

// Binds call arguments to parameter names.
struct Args {
  std::vector<Val> pos;
  std::vector<Pos> posAt;
  std::vector<std::pair<std::string, Val>> kw;
  std::vector<Pos> kwAt;
  Pos at;
};

class Lowerer {
 public:
  Lowerer(SourceFile& file, const driver::Spec& spec) : file_(&file), root_(file), spec_(spec), b_(nullptr) {}

  std::unique_ptr<ir::Module> run(const std::string& kernel) {
    pickJitDefs(*file_);
    const FunctionDef* fn = &requireFunction(*file_, kernel);
    m_ = std::make_unique<ir::Module>();
    func_ = m_->addFunc(kernel, loc(fn->pos));
    b_ = ir::Builder(&func_->body, loc(fn->pos));
    Frame fr;
    fr.fn = fn;
    struct DescParam {
      std::string name;
      const driver::SpecEntry* entry;
      ir::Value* base;
    };
    std::vector<DescParam> descParams;  // parameters the spec passes as host tensor descriptors
    for (auto& p : fn->params) {
      const driver::SpecEntry* e = nullptr;
      for (auto& se : spec_.entries)
        if (se.name == p.name) e = &se;
      if (!e) {
        if (!p.defaultValue) {
          std::string how;
          if (auto d = fromDecorators(kernel, p.name, how)) {
            std::fprintf(stderr, "%s: note: %s\n", loc(p.pos).str().c_str(), how.c_str());
            fr.vars[p.name] = *d;
            continue;
          }
          throw UserError(loc(p.pos), "the spec has no entry for parameter '" + p.name + "' of kernel '" + kernel + "'" + how,
                          p.isConstexpr ? "add " + p.name + "=VALUE to --spec"
                                        : "add " + p.name + ":TYPE=VALUE (or " + p.name + ":*TYPE[DIMS] for a pointer) to --spec");
        }
        Frame empty;
        empty.fn = fn;
        frames_.push_back(&empty);
        Val d = eval(*p.defaultValue);
        frames_.pop_back();
        fr.vars[p.name] = d;
        continue;
      }
      switch (e->kind) {
        case driver::SpecEntry::Kind::Buffer: {
          if (p.isConstexpr)
            throw UserError(loc(p.pos), "parameter '" + p.name + "' is tl.constexpr but the spec passes a pointer");
          ir::Value* a = func_->body.addArg(Type::ptrTo(e->dtype), p.name);
          fr.vars[p.name] = Val::ir(a);
          if (e->descriptor) descParams.push_back({p.name, e, a});
          break;
        }
        case driver::SpecEntry::Kind::Scalar:
          if (p.isConstexpr) {
            fr.vars[p.name] = fromConst(e->value);
          } else {
            ir::Value* a = func_->body.addArg(Type::scalarOf(e->dtype), p.name);
            fr.vars[p.name] = Val::ir(a);
          }
          break;
        case driver::SpecEntry::Kind::Constexpr: fr.vars[p.name] = fromConst(e->value); break;
      }
    }
    // Host tensor descriptors (name:tensordesc<dtype[block]>[dims]): the kernel receives the buffer's
    // pointer, and the descriptor is made at its entry, row-major, its extents the spec's dims (a dim
    // that names a runtime scalar parameter is that parameter).
    for (auto& [name, e, ptr] : descParams) {
      b_.setInsertionPointToEnd(&func_->body);
      b_.setLoc(e->loc);
      const auto shape = spec_.shapeOf(*e);
      std::vector<int64_t> block = spec_.blockOf(*e);
      std::vector<ir::Value*> extents;
      for (size_t i = 0; i < e->dims.size(); ++i) {
        const auto* dimName = std::get_if<std::string>(&e->dims[i]);
        auto var = dimName ? fr.vars.find(*dimName) : fr.vars.end();
        if (var != fr.vars.end() && var->second.isIR() && var->second.v->type().isScalar() && var->second.v->type().elemIsInt())
          extents.push_back(var->second.v);
        else
          extents.push_back(b_.constInt(shape[i], Type::scalarOf(Scalar::I32)));
      }
      std::vector<ir::Value*> strides(extents.size());
      strides.back() = b_.constInt(1, Type::scalarOf(Scalar::I32));
      for (size_t i = extents.size() - 1; i-- > 0;)
        strides[i] = b_.op1(OpKind::Mul, {strides[i + 1], extents[i + 1]}, Type::scalarOf(Scalar::I32));
      std::vector<ir::Value*> ops = {ptr};
      ops.insert(ops.end(), extents.begin(), extents.end());
      ops.insert(ops.end(), strides.begin(), strides.end());
      ir::Value* d = b_.op1(OpKind::MakeDesc, ops, Type::descOf(e->dtype, block));
      d->nameHint = name;
      fr.vars[name] = Val::ir(d);
    }
    for (auto& se : spec_.entries)
      if (se.kind == driver::SpecEntry::Kind::Constexpr &&
          (se.name == "num_warps" || se.name == "num_stages" || se.name == "num_ctas" || se.name == "maxnreg") &&
          std::holds_alternative<int64_t>(se.value)) {
        bool isParam = false;
        for (auto& p : fn->params) isParam = isParam || p.name == se.name;
        if (!isParam) func_->attrs[se.name] = std::get<int64_t>(se.value);
      }
    frames_.push_back(&fr);
    exec(fn->body, true);
    frames_.pop_back();
    if (fr.returned && fr.result.k != Val::K::None)
      throw UserError(loc(fn->pos), "kernel '" + kernel + "' returns a value; a kernel must return nothing",
                      "store results with tl.store");
    b_.setInsertionPointToEnd(&func_->body);
    b_.setLoc(loc(fn->pos));
    b_.create(OpKind::Return, {}, {});
    return std::move(m_);
  }

 private:
  // A constexpr the spec does not give, from the kernel's decorators: @triton.heuristics's lambda
  // when it reads `args['x'] is None` or `is not None` of a spec entry (None or not), else
  // @triton.autotune's first triton.Config that sets it to a literal. `how` says what was taken, or
  // (when nothing could be) which decorator sets the name.
  std::optional<Val> fromDecorators(const std::string& kernel, const std::string& name, std::string& how) {
    const SourceFile::Jit* j = file_->find(kernel);
    if (!j) return std::nullopt;
    const DecoratorSays d = decoratorSays(*file_, *j, name);
    const std::string line = std::to_string(d.line);
    switch (d.kind) {
      case DecoratorSays::Kind::Nothing: return std::nullopt;
      case DecoratorSays::Kind::Unread:
        how = d.decorator == "triton.heuristics"
                  ? " (@triton.heuristics at line " + line + " computes it; tawa evaluates only `args['x'] is None` and `is not None`)"
                  : " (@triton.autotune at line " + line + " tunes it, and its first config sets no literal value)";
        return std::nullopt;
      case DecoratorSays::Kind::IsNone: {
        const driver::SpecEntry* e = spec_.find(d.arg);
        if (!e) {
          how = " (@triton.heuristics at line " + line + " computes it from '" + d.arg + "', which the spec does not give)";
          return std::nullopt;
        }
        const bool isNone = e->kind == driver::SpecEntry::Kind::Constexpr && std::holds_alternative<driver::NoneValue>(e->value);
        const bool v = d.negate ? !isNone : isNone;
        how = "'" + name + "' = " + (v ? "True" : "False") + " from @triton.heuristics at line " + line + " ('" + d.arg + "' is " +
              (isNone ? "None" : "given") + ")";
        return Val::boolean(v);
      }
      case DecoratorSays::Kind::Literal: {
        const Token& lit = *d.literal;
        Val v = lit.kind == Tok::Int     ? Val::integer(std::stoll(lit.text, nullptr, 0))
                : lit.kind == Tok::Float ? Val::real(std::stod(lit.text))
                                         : Val::boolean(lit.isName("True"));
        how = "'" + name + "' = " + lit.text + " from the first triton.Config of @triton.autotune at line " + line + " (give " + name +
              "=VALUE in --spec to choose another)";
        return v;
      }
    }
    return std::nullopt;
  }

  // ---- helpers
  Location loc(Pos p) const { return file_->loc(p); }
  [[noreturn]] void fail(Pos p, const std::string& msg, const std::string& hint = {}) const {
    throw UserError(loc(p), msg, hint);
  }
  void at(Pos p) { b_.setLoc(loc(p)); }
  Frame& frame() { return *frames_.back(); }

  static Val fromConst(const driver::ConstValue& c) {
    return std::visit(
        [](auto&& v) -> Val {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>) return Val::integer(v);
          else if constexpr (std::is_same_v<V, double>) return Val::real(v);
          else if constexpr (std::is_same_v<V, bool>) return Val::boolean(v);
          else if constexpr (std::is_same_v<V, std::string>) return Val::str(v);
          else if constexpr (std::is_same_v<V, driver::NoneValue>) return Val::none();
          else return Val::dtype(v.scalar);
        },
        c);
  }

  std::string describe(const Val& v) const {
    switch (v.k) {
      case Val::K::Undef: return "an undefined value";
      case Val::K::None: return "None";
      case Val::K::Int: return "the constant " + std::to_string(v.i);
      case Val::K::Float: return "a float constant";
      case Val::K::Bool: return v.i ? "True" : "False";
      case Val::K::Str: return "the string \"" + v.s + "\"";
      case Val::K::Dtype:
        if (v.dtBlock) return "the block type " + shapeStr(v.blockShape) + " of " + (v.dtPtr ? "pointer<" + tritonDtypeName(v.dt) + ">" : tritonDtypeName(v.dt));
        return "the dtype " + (v.dtPtr ? "pointer<" + tritonDtypeName(v.dt) + ">" : tritonDtypeName(v.dt));
      case Val::K::Tuple: return "a tuple";
      case Val::K::IR: return "a value of type " + v.v->type().str();
      case Val::K::Func: return "the jit function '" + v.s + "'";
      case Val::K::Module: return "the module '" + v.s + "'";
      case Val::K::TlFunc: return "the function '" + (v.s.rfind("libdevice.", 0) == 0 ? v.s : "tl." + v.s) + "'";
      case Val::K::Builtin: return "the builtin '" + v.s + "'";
      case Val::K::Method: return "the method '" + v.s + "'";
      case Val::K::TypeRef: return "the type '" + v.s + "'";
      case Val::K::BlockPtr: return "a block pointer (tl.make_block_ptr) of block " + shapeStr(v.blockShape);
    }
    return "a value";
  }

  bool truthy(const Val& v, Pos p) {
    switch (v.k) {
      case Val::K::None: return false;
      case Val::K::Int:
      case Val::K::Bool: return v.i != 0;
      case Val::K::Float: return v.f != 0;
      case Val::K::Str: return !v.s.empty();
      case Val::K::Tuple: return !v.elems.empty();
      case Val::K::IR: fail(p, "a runtime value is used where a compile-time condition is needed");
      case Val::K::Undef: fail(p, v.s);
      default: return true;
    }
  }

  int64_t constInt(const Val& v, Pos p, const std::string& what) {
    if (v.k == Val::K::Int || v.k == Val::K::Bool) return v.i;
    if (v.isIR())
      fail(p, what + " must be a compile-time constant, but it is a runtime value of type " + v.v->type().str(),
           "pass it as a tl.constexpr parameter (NAME: tl.constexpr) or compute it from constexprs");
    fail(p, what + " must be an integer constant, got " + describe(v));
  }

  std::vector<int64_t> constShape(const Val& v, Pos p, const std::string& what) {
    std::vector<int64_t> s;
    if (v.k == Val::K::Tuple) {
      for (auto& e : v.elems) s.push_back(constInt(e, p, what + " entries"));
    } else {
      s.push_back(constInt(v, p, what));
    }
    for (auto d : s)
      if (d <= 0) fail(p, what + " must have positive dimensions, got " + shapeStr(s));
    return s;
  }

  // ---- IR construction helpers
  static std::vector<int64_t> shapeOf(const Type& t) { return t.isTile() ? t.shape : std::vector<int64_t>{}; }

  // A number bound by an assignment: strong, of to_tensor's type (tuples element by element).
  static Val strengthen(Val v) {
    if (v.k == Val::K::Tuple) {
      for (auto& e : v.elems) e = strengthen(e);
      return v;
    }
    if (v.strong || !(v.k == Val::K::Int || v.k == Val::K::Float || v.k == Val::K::Bool)) return v;
    v.strong = true;
    v.dt = v.k == Val::K::Float ? floatConstantType(v.f) : defaultScalar(v);
    return v;
  }
  // A strong constant as the scalar tensor Triton has: an IR scalar of its type.
  Val materialize(const Val& v, Pos p) { return v.strong && v.isNum() ? Val::ir(constant(v, v.dt, {}, p)) : v; }

  // to_tensor's type of a Python float: f32, or f64 for a value f32 cannot hold (0, infinities and NaN are f32).
  static Scalar floatConstantType(double x) {
    const double m = std::fabs(x);
    return std::isinf(m) || m == 0.0 || std::isnan(m) || (m >= 0x1p-126 && m <= 0x1.fffffep127) ? Scalar::F32 : Scalar::F64;
  }
  static Scalar defaultScalar(const Val& c) {
    if (c.k == Val::K::Bool) return Scalar::I1;
    if (c.k == Val::K::Float) return Scalar::F32;
    if (c.i >= INT32_MIN && c.i <= INT32_MAX) return Scalar::I32;
    return c.i > INT32_MAX && c.i <= static_cast<int64_t>(UINT32_MAX) ? Scalar::U32 : Scalar::I64;  // as Triton types an int
  }

  ir::Value* constant(const Val& c, Scalar s, const std::vector<int64_t>& shape, Pos p) {
    Type t = Type::scalarOf(s).withShape(shape);
    at(p);
    if (ir::isFloat(s)) return b_.constFloat(c.k == Val::K::Float ? c.f : static_cast<double>(c.i), t);
    if (c.k == Val::K::Float) {
      if (!std::isfinite(c.f)) fail(p, "cannot convert a non-finite float to an integer type");
      return b_.constInt(static_cast<int64_t>(c.f), t);
    }
    if (s == Scalar::I1) return b_.constInt(c.i != 0, t);
    return b_.constInt(c.i, t);
  }

  // Converts a value to IR (constants get Triton's default types: i32/i64, f32, i1).
  ir::Value* toIR(const Val& v, Pos p, const std::string& what = "operand") {
    if (v.isIR()) return v.v;
    if (v.isNum()) return constant(v, defaultScalar(v), {}, p);
    if (v.k == Val::K::Undef) fail(p, v.s);
    fail(p, what + " must be a number or a tensor, got " + describe(v));
  }

  ir::Value* cast(ir::Value* x, Scalar s, Pos p) {
    const Type& t = x->type();
    if (t.isPtrLike() || t.isDesc()) fail(p, "cannot convert " + t.str() + " to " + tritonDtypeName(s));
    if (t.scalar == s) return x;
    at(p);
    return b_.op1(OpKind::Cast, {x}, t.withElement(Type::scalarOf(s)));
  }

  std::vector<int64_t> broadcastShapes(std::vector<int64_t> a, std::vector<int64_t> b, Pos p) {
    while (a.size() < b.size()) a.insert(a.begin(), 1);
    while (b.size() < a.size()) b.insert(b.begin(), 1);
    std::vector<int64_t> r(a.size());
    for (size_t d = 0; d < a.size(); ++d) {
      if (a[d] == b[d] || b[d] == 1) r[d] = a[d];
      else if (a[d] == 1) r[d] = b[d];
      else fail(p, "incompatible shapes " + shapeStr(a) + " and " + shapeStr(b) + " (dimension " + std::to_string(d) + ")",
                "broadcasting needs equal dimensions or 1; add axes with x[:, None] / x[None, :]");
    }
    return r;
  }

  ir::Value* broadcastTo(ir::Value* x, const std::vector<int64_t>& shape, Pos p) {
    Type t = x->type();
    if (shapeOf(t) == shape) return x;
    at(p);
    if (!t.isTile()) {
      if (!t.isScalar() && !t.isPtr()) fail(p, "cannot broadcast a value of type " + t.str() + " to a tensor: only numbers and pointers broadcast");
      return b_.op1(OpKind::Splat, {x}, Type::tileOf(shape, t));
    }
    if (t.rank() > static_cast<int>(shape.size()))
      fail(p, "cannot broadcast shape " + shapeStr(t.shape) + " to " + shapeStr(shape));
    while (t.rank() < static_cast<int>(shape.size())) {
      auto s = t.shape;
      s.insert(s.begin(), 1);
      x = b_.op1(OpKind::ExpandDims, {x}, t.withShape(s), {{"axis", int64_t{0}}});
      t = x->type();
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (t.shape[d] != shape[d] && t.shape[d] != 1)
        fail(p, "cannot broadcast shape " + shapeStr(t.shape) + " to " + shapeStr(shape));
    if (t.shape == shape) return x;
    return b_.op1(OpKind::Broadcast, {x}, t.withShape(shape));
  }

  // Converts v to a value of element s and the given shape.
  ir::Value* coerce(const Val& v, Scalar s, const std::vector<int64_t>& shape, Pos p) {
    if (!v.isIR()) {
      if (!v.isNum()) fail(p, "expected a number or a tensor, got " + describe(v));
      return constant(v, s, shape, p);
    }
    return broadcastTo(cast(v.v, s, p), shape, p);
  }

  // Triton's computation type of two tensor element types (semantic.computation_type_impl): f64, else
  // f32, else f16 (any f16 operand: f16 with bf16 too), else bf16 only when both are, f32 for bf16 with
  // anything else; / and % (`divOrMod`) of f16 or bf16 compute in f32; two fp8 kinds meet in f16.
  static Scalar promote(Scalar a, Scalar b, bool divOrMod = false) {
    bool fa = ir::isFloat(a), fb = ir::isFloat(b);
    if (fa || fb) {
      if (a == Scalar::F64 || b == Scalar::F64) return Scalar::F64;
      if (a == Scalar::F32 || b == Scalar::F32) return Scalar::F32;
      if (a == Scalar::F16 || b == Scalar::F16) return divOrMod ? Scalar::F32 : Scalar::F16;
      if (a == Scalar::BF16 && b == Scalar::BF16) return divOrMod ? Scalar::F32 : Scalar::BF16;
      if (a == Scalar::BF16 || b == Scalar::BF16) return Scalar::F32;
      if (fa && fb) return a == b ? a : Scalar::F16;  // two fp8 kinds
      return fa ? a : b;  // fp8 with an integer (Triton refuses it): the fp8
    }
    if (a == b) return a;
    // Integers: the wider; at equal widths, or when the unsigned one is wider, the unsigned one
    // (Triton's integer_promote_impl).
    const bool ua = ir::isUnsigned(a), ub = ir::isUnsigned(b);
    const int wa = ir::bitWidth(a), wb = ir::bitWidth(b);
    if (ua == ub) return wa >= wb ? a : b;
    if (ua) return wa >= wb ? a : b;
    return wb >= wa ? b : a;
  }

  // Triton's checks of a binary operation whose result element is e: an unsigned result takes no
  // negative Python scalar, an integer result no Python int outside its range (both would wrap), and
  // /, // and % need operands of one signedness.
  void checkSignedness(const std::string& op, const Val& a, const Val& b, Scalar e, Pos p) {
    if (ir::isInt(e) && e != Scalar::I1 && (a.isIR() || b.isIR()))
      for (const Val* v : {&a, &b}) {
        if (v->k != Val::K::Int) continue;
        const int bits = ir::bitWidth(e);
        const bool uns = ir::isUnsigned(e);
        if (uns && v->i < 0)
          fail(p, "operator '" + op + "' between a " + tritonDtypeName(e) + " tensor and the negative scalar " + std::to_string(v->i) +
                      " (it would wrap around)",
               "cast one of them explicitly, e.g. x.to(tl.int64)");
        const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - (uns ? 0 : 1))) - 1;
        const int64_t lo = uns ? 0 : bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
        if (v->i < lo || v->i > hi)
          fail(p, "the scalar " + std::to_string(v->i) + " is out of range for " + tritonDtypeName(e) + " (operator '" + op + "', range " +
                      std::to_string(lo) + ".." + std::to_string(hi) + ")",
               "cast the tensor to a wider type first, e.g. x.to(tl.int32)");
      }
    if (!ir::isUnsigned(e)) return;
    if ((op == "/" || op == "//" || op == "%") && a.isIR() && b.isIR() && a.v->type().elemIsInt() && b.v->type().elemIsInt() &&
        ir::isUnsigned(a.v->type().scalar) != ir::isUnsigned(b.v->type().scalar))
      fail(p, "operator '" + op + "' between " + tritonDtypeName(a.v->type().scalar) + " and " + tritonDtypeName(b.v->type().scalar) +
                  ": the operands differ in signedness",
           "cast one of them so both are signed or both unsigned");
  }

  // The element of `tensorElem op constant` where the constant is a weak Python scalar: of a kind no
  // higher than the tensor's (bool < integer < float), the tensor's type (f32 for / and % of f16 or
  // bf16); else the constant's type joins it (a float: f32, or f64 for a value f32 cannot hold).
  static Scalar weakJoin(const Val& c, Scalar tensorElem, bool divOrMod) {
    bool tf = ir::isFloat(tensorElem);
    if (c.k == Val::K::Float && !tf) return floatConstantType(c.f);
    if (c.k != Val::K::Bool && tensorElem == Scalar::I1) return Scalar::I32;
    if (divOrMod && (tensorElem == Scalar::F16 || tensorElem == Scalar::BF16)) return Scalar::F32;
    return tensorElem;
  }

  // The type an operand takes part in promotion with: a tensor's element, a strong constant's type;
  // none for a weak (Python) constant.
  static std::optional<Scalar> typedElem(const Val& v) {
    if (v.isIR()) return v.v->type().scalar;
    if (v.strong && v.isNum()) return v.dt;
    return std::nullopt;
  }
  Scalar joinElem(const Val& a, const Val& b, bool divOrMod = false) {
    const auto ta = typedElem(a), tb = typedElem(b);
    if (ta && tb) return promote(*ta, *tb, divOrMod);
    if (ta) return weakJoin(b, *ta, divOrMod);
    if (tb) return weakJoin(a, *tb, divOrMod);
    return promote(defaultScalar(a), defaultScalar(b), divOrMod);
  }

  static std::vector<int64_t> shapeOfVal(const Val& v) { return v.isIR() ? shapeOf(v.v->type()) : std::vector<int64_t>{}; }

  void requireOperand(const Val& v, Pos p, const std::string& op) {
    if (v.isIR()) {
      const Type& t = v.v->type();
      if (t.isDesc()) fail(p, "operator '" + op + "' does not apply to a tensor descriptor");
      return;
    }
    if (v.isNum()) return;
    if (v.k == Val::K::Undef) fail(p, v.s);
    fail(p, "operator '" + op + "' does not apply to " + describe(v));
  }

  // ---- constant folding (Python semantics)
  Val constBinary(const std::string& op, const Val& a, const Val& b, Pos p) {
    if (a.k == Val::K::Str && b.k == Val::K::Str && op == "+") return Val::str(a.s + b.s);
    if (a.k == Val::K::Tuple && b.k == Val::K::Tuple && op == "+") {
      auto e = a.elems;
      e.insert(e.end(), b.elems.begin(), b.elems.end());
      return Val::tuple(e);
    }
    if (!a.isNum() || !b.isNum())
      fail(p, "operator '" + op + "' does not apply to " + describe(a) + " and " + describe(b));
    bool fl = a.k == Val::K::Float || b.k == Val::K::Float;
    if (op == "/" || fl) {
      double x = a.k == Val::K::Float ? a.f : static_cast<double>(a.i);
      double y = b.k == Val::K::Float ? b.f : static_cast<double>(b.i);
      if ((op == "/" || op == "//" || op == "%") && y == 0) fail(p, "division by zero in a constant expression");
      if (op == "+") return Val::real(x + y);
      if (op == "-") return Val::real(x - y);
      if (op == "*") return Val::real(x * y);
      if (op == "/") return Val::real(x / y);
      if (op == "//") return Val::real(std::floor(x / y));
      if (op == "%") {
        double r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Val::real(r);
      }
      if (op == "**") return Val::real(std::pow(x, y));
      fail(p, "operator '" + op + "' does not apply to floats");
    }
    int64_t x = a.i, y = b.i, r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
    else if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
    else if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
    else if (op == "//" || op == "%") {
      if (y == 0) fail(p, "division by zero in a constant expression");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      r = op == "//" ? q : m;
    } else if (op == "**") {
      if (y < 0) return Val::real(std::pow(static_cast<double>(x), static_cast<double>(y)));
      r = 1;
      for (int64_t k = 0; k < y && !overflow; ++k) overflow = __builtin_mul_overflow(r, x, &r);
    } else if (op == "&") r = x & y;
    else if (op == "|") r = x | y;
    else if (op == "^") r = x ^ y;
    else if (op == "<<") {
      if (y < 0 || y >= 63) fail(p, "shift count out of range in a constant expression");
      r = x << y;
    } else if (op == ">>") {
      if (y < 0) fail(p, "negative shift count");
      r = y >= 63 ? (x < 0 ? -1 : 0) : x >> y;
    } else fail(p, "operator '" + op + "' does not apply to integers");
    if (overflow) fail(p, "integer overflow in a constant expression (beyond 64 bits)");
    if (a.k == Val::K::Bool && b.k == Val::K::Bool && (op == "&" || op == "|" || op == "^")) return Val::boolean(r != 0);
    return Val::integer(r);
  }

  std::optional<bool> constCompare(const std::string& op, const Val& a, const Val& b, Pos p) {
    if (op == "is" || op == "is not") {
      bool same = (a.k == Val::K::None || b.k == Val::K::None) ? (a.k == b.k) : (a == b);
      return op == "is" ? same : !same;
    }
    if (op == "in" || op == "not in") {
      if (b.k != Val::K::Tuple) fail(p, "'in' needs a tuple or list on its right");
      bool found = false;
      for (auto& e : b.elems) {
        if (!e.isConst()) fail(p, "'in' over runtime values: not supported yet");
        found = found || equalConst(a, e);
      }
      return op == "in" ? found : !found;
    }
    if (a.isNum() && b.isNum()) {
      double x = a.k == Val::K::Float ? a.f : static_cast<double>(a.i);
      double y = b.k == Val::K::Float ? b.f : static_cast<double>(b.i);
      if (a.k != Val::K::Float && b.k != Val::K::Float) {
        int64_t xi = a.i, yi = b.i;
        if (op == "<") return xi < yi;
        if (op == "<=") return xi <= yi;
        if (op == ">") return xi > yi;
        if (op == ">=") return xi >= yi;
        if (op == "==") return xi == yi;
        if (op == "!=") return xi != yi;
      }
      if (op == "<") return x < y;
      if (op == "<=") return x <= y;
      if (op == ">") return x > y;
      if (op == ">=") return x >= y;
      if (op == "==") return x == y;
      if (op == "!=") return x != y;
    }
    if (op == "==" || op == "!=") {
      bool eq = equalConst(a, b);
      return op == "==" ? eq : !eq;
    }
    if (a.k == Val::K::Str && b.k == Val::K::Str) {
      if (op == "<") return a.s < b.s;
      if (op == "<=") return a.s <= b.s;
      if (op == ">") return a.s > b.s;
      if (op == ">=") return a.s >= b.s;
    }
    fail(p, "cannot compare " + describe(a) + " and " + describe(b) + " with '" + op + "'");
  }

  static bool equalConst(const Val& a, const Val& b) {
    if (a.isNum() && b.isNum()) {
      double x = a.k == Val::K::Float ? a.f : static_cast<double>(a.i);
      double y = b.k == Val::K::Float ? b.f : static_cast<double>(b.i);
      return x == y;
    }
    return a == b;
  }

  // ---- tile arithmetic (Triton semantics)
  Val binary(const std::string& op, const Val& a, const Val& b, Pos p) {
    // Two constants fold as Python does, unless one is strong (a scalar tensor in Triton): then as
    // tensors (Triton's types, C's division and remainder).
    if (!a.isIR() && !b.isIR() && (a.strong || b.strong) && a.isNum() && b.isNum())
      return binary(op, materialize(a, p), materialize(b, p), p);
    if (!a.isIR() && !b.isIR()) return constBinary(op, a, b, p);
    requireOperand(a, p, op);
    requireOperand(b, p, op);
    bool pa = a.isIR() && a.v->type().isPtrLike(), pb = b.isIR() && b.v->type().isPtrLike();
    if (pa || pb) return pointerArith(op, a, b, pa, p);
    if (op == "**") fail(p, "'**' on tensors: not supported yet", "multiply explicitly, or use tl.exp2(y * tl.log2(x))");
    if (op == "@") fail(p, "'@' on tensors: not supported yet", "use tl.dot(a, b)");
    Scalar e = joinElem(a, b, op == "/" || op == "%");
    checkSignedness(op, a, b, e, p);
    bool isBitwise = op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>";
    if (isBitwise && ir::isFloat(e))
      fail(p, "operator '" + op + "' needs integer operands, got " + tritonDtypeName(e));
    if (op == "/" && ir::isInt(e)) e = Scalar::F32;
    if (op == "//" && ir::isFloat(e))
      fail(p, "'//' on floating-point tensors: not supported yet", "divide with '/' and round explicitly");
    auto shape = broadcastShapes(shapeOfVal(a), shapeOfVal(b), p);
    ir::Value* x = coerce(a, e, shape, p);
    ir::Value* y = coerce(b, e, shape, p);
    OpKind k;
    if (op == "+") k = OpKind::Add;
    else if (op == "-") k = OpKind::Sub;
    else if (op == "*") k = OpKind::Mul;
    else if (op == "/" || op == "//") k = OpKind::Div;
    else if (op == "%") k = OpKind::Rem;
    else if (op == "&") k = OpKind::And;
    else if (op == "|") k = OpKind::Or;
    else if (op == "^") k = OpKind::Xor;
    else if (op == "<<") k = OpKind::Shl;
    else if (op == ">>") k = OpKind::Shr;
    else fail(p, "operator '" + op + "': not supported yet");
    at(p);
    return Val::ir(b_.op1(k, {x, y}, x->type()));
  }

  // A propagate_nan argument: tl.PropagateNan.ALL (true) or NONE (false, also when absent).
  bool propagateNanArg(const Val* v, Pos at, const std::string& qual) {
    if (!v || v->k == Val::K::None) return false;
    if (v->k == Val::K::Int && (v->i == 0 || v->i == 0xFFFF)) return v->i != 0;
    if (v->k == Val::K::Bool) return v->i != 0;
    fail(at, qual + "'s propagate_nan must be tl.PropagateNan.ALL or tl.PropagateNan.NONE, got " + describe(*v));
  }

  // tl.maximum / tl.minimum: floats take IEEE maxNum / minNum (a NaN operand yields the other), as
  // Triton's default PropagateNan.NONE; `propagateNan` (PropagateNan.ALL): a NaN operand yields NaN.
  Val minmax(OpKind k, const Val& a, const Val& b, Pos p, bool propagateNan = false) {
    if (!a.isIR() && !b.isIR()) {
      bool less = *constCompare("<", a, b, p);
      return k == OpKind::Max ? (less ? b : a) : (less ? a : b);
    }
    requireOperand(a, p, "maximum");
    requireOperand(b, p, "maximum");
    if ((a.isIR() && a.v->type().isPtrLike()) || (b.isIR() && b.v->type().isPtrLike()))
      fail(p, "maximum/minimum of pointers is not allowed");
    Scalar e = joinElem(a, b);
    checkSignedness(k == OpKind::Max ? "maximum" : "minimum", a, b, e, p);
    auto shape = broadcastShapes(shapeOfVal(a), shapeOfVal(b), p);
    ir::Value* x = coerce(a, e, shape, p);
    ir::Value* y = coerce(b, e, shape, p);
    at(p);
    std::map<std::string, ir::AttrValue> attrs;
    if (propagateNan && ir::isFloat(e)) attrs["propagate_nan"] = int64_t{1};
    return Val::ir(b_.op1(k, {x, y}, x->type(), attrs));
  }

  Val pointerArith(const std::string& op, const Val& a, const Val& b, bool ptrLeft, Pos p) {
    const Val& ptr = ptrLeft ? a : b;
    const Val& off = ptrLeft ? b : a;
    if (off.isIR() && off.v->type().isPtrLike())
      fail(p, "operator '" + op + "' between two pointers: not supported yet");
    if (!(op == "+" || (op == "-" && ptrLeft)))
      fail(p, "operator '" + op + "' does not apply to pointers", "pointers support '+' and '-' with integer offsets");
    bool offInt = off.isIR() ? off.v->type().elemIsInt() : (off.k == Val::K::Int || off.k == Val::K::Bool);
    if (!offInt)
      fail(p, "pointer " + op + " " + (off.isIR() ? off.v->type().str() : std::string("float")) + ": offsets must be integers",
           "convert the offset with .to(tl.int32)");
    auto shape = broadcastShapes(shapeOfVal(ptr), shapeOfVal(off), p);
    ir::Value* pv = broadcastTo(ptr.v, shape, p);
    ir::Value* ov;
    if (off.isIR()) {
      ov = off.v;
      if (ov->type().scalar == Scalar::I1) ov = cast(ov, Scalar::I32, p);
      ov = broadcastTo(ov, shape, p);
      if (op == "-") {
        at(p);
        ov = b_.op1(OpKind::Neg, {ov}, ov->type());
      }
    } else {
      Val c = off;
      if (op == "-") c.i = -c.i;
      Scalar cs = defaultScalar(c);
      ov = constant(c, cs == Scalar::I1 ? Scalar::I32 : cs, shape, p);  // ptr + True: an offset of 1, as for IR bools
    }
    at(p);
    return Val::ir(b_.op1(OpKind::AddPtr, {pv, ov}, pv->type()));
  }

  Val compare(const std::string& op, const Val& a, const Val& b, Pos p) {
    if (!a.isIR() && !b.isIR()) return Val::boolean(*constCompare(op, a, b, p));
    if (op == "is" || op == "is not") {
      bool same = a == b;
      return Val::boolean(op == "is" ? same : !same);
    }
    if (op == "in" || op == "not in") fail(p, "'" + op + "' with runtime values: not supported yet");
    requireOperand(a, p, op);
    requireOperand(b, p, op);
    static const std::map<std::string, std::string> preds = {{"<", "lt"}, {"<=", "le"}, {">", "gt"},
                                                             {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
    auto shape = broadcastShapes(shapeOfVal(a), shapeOfVal(b), p);
    ir::Value *x, *y;
    bool pa = a.isIR() && a.v->type().isPtrLike(), pb = b.isIR() && b.v->type().isPtrLike();
    if (pa || pb) {
      if (!(pa && pb) || a.v->type().scalar != b.v->type().scalar)
        fail(p, "cannot compare a pointer with " + describe(pa ? b : a));
      x = broadcastTo(a.v, shape, p);
      y = broadcastTo(b.v, shape, p);
    } else {
      Scalar e = joinElem(a, b);
      checkSignedness(op, a, b, e, p);
      x = coerce(a, e, shape, p);
      y = coerce(b, e, shape, p);
    }
    at(p);
    return Val::ir(b_.op1(OpKind::Cmp, {x, y}, x->type().withElement(Type::scalarOf(Scalar::I1)), {{"pred", preds.at(op)}}));
  }

  // A runtime truth value: i1 of the same shape.
  ir::Value* toBool(const Val& v, Pos p) {
    if (!v.isIR()) return constant(Val::boolean(truthy(v, p)), Scalar::I1, {}, p);
    ir::Value* x = v.v;
    const Type& t = x->type();
    if (t.isDesc()) fail(p, "a tensor descriptor has no truth value");
    if (t.isI1()) return x;
    if (t.isPtrLike() && t.isTile()) fail(p, "a tile of pointers has no truth value here");
    at(p);
    if (t.isPtrLike()) {  // `if bias_ptr:` (vLLM's scaled_mm): as Triton, the address is not null
      ir::Value* addr = b_.op1(OpKind::Bitcast, {x}, Type::scalarOf(Scalar::I64));
      return b_.op1(OpKind::Cmp, {addr, b_.constInt(0, addr->type())}, Type::scalarOf(Scalar::I1), {{"pred", std::string("ne")}});
    }
    ir::Value* zero = ir::isFloat(t.scalar) ? b_.constFloat(0.0, t) : b_.constInt(0, t);
    return b_.op1(OpKind::Cmp, {x, zero}, t.withElement(Type::scalarOf(Scalar::I1)), {{"pred", std::string("ne")}});
  }

  Val logical(const std::string& op, const Val& a, const Val& b, Pos p) {
    ir::Value* x = toBool(a, p);
    ir::Value* y = toBool(b, p);
    auto shape = broadcastShapes(shapeOf(x->type()), shapeOf(y->type()), p);
    x = broadcastTo(x, shape, p);
    y = broadcastTo(y, shape, p);
    at(p);
    return Val::ir(b_.op1(op == "and" ? OpKind::And : OpKind::Or, {x, y}, x->type()));
  }

  // ---- expressions
  Val lookup(const std::string& name, Pos p) {
    auto& vars = frame().vars;
    auto it = vars.find(name);
    if (it != vars.end()) {
      if (it->second.k == Val::K::Undef) fail(p, it->second.s);
      return it->second;
    }
    if (file_->find(name)) return funcIn(file_, name);
    if (auto ag = file_->annotatedGlobals.find(name); ag != file_->annotatedGlobals.end()) {
      const Token& at = file_->tokens[ag->second];
      fail(p, "global '" + name + "' is annotated tl.constexpr (line " + std::to_string(at.line) +
                  "); Triton lets a jit function read only globals made with tl.constexpr(...)",
           "write it as `" + name + " = tl.constexpr(<value>)`");
    }
    auto g = file_->globals.find(name);
    if (g != file_->globals.end()) {
      const std::string key = *file_->path + ":" + name;
      auto cached = globalCache_.find(key);
      if (cached != globalCache_.end()) return cached->second;
      if (ExprP e = parseGlobalValue(*file_, g->second))
        return moduleValue(key, std::move(e), p, "module-level constexpr '" + name + "' is not a compile-time constant");
    }
    if (auto b = file_->bindings.find(name); b != file_->bindings.end() && !b->second.empty()) {
      std::string why;
      const std::string pick = chooseBinding(b->second, why);
      if (std::ostream* out = explainStream(); out && b->second.size() > 1 && explained_.insert(*file_->path + "\n" + name).second)
        *out << loc(p).str() << ": explain: '" << name << "': taking " << pick << " of its " << b->second.size()
             << " module-level bindings (" << why << ")\n";
      if (pick.find('.') == std::string::npos && file_->find(pick)) return funcIn(file_, pick);
      return moduleMember(pick, p);
    }
    auto a = file_->aliases.find(name);
    if (a != file_->aliases.end()) return moduleMember(a->second, p);
    for (const auto& star : file_->starImports)  // `from m import *`: a name m defines
      if (SourceFile* m = findModule(star))
        if (m->find(name) || m->globals.count(name) || m->bindings.count(name)) return memberOf(m, name, p);
    static const std::set<std::string> builtins = {"range", "min", "max", "float", "int", "bool", "len", "isinstance",
                                                   "abs", "print", "enumerate", "zip", "list", "tuple", "str", "type",
                                                   "round", "sum", "any", "all", "divmod", "pow", "getattr", "hasattr"};
    if (builtins.count(name)) return Val::named(Val::K::Builtin, name);
    if (auto asg = file_->assigned.find(name); asg != file_->assigned.end()) return plainGlobal(name, asg->second, p);
    fail(p, "name '" + name + "' is not defined",
         "jit functions can read their parameters, their local variables, other @triton.jit functions and "
         "module-level tl.constexpr globals");
  }

  // tl.assume(x >= c), (x > c), (c <= x) or (c < x), for an integer scalar x computed in the kernel
  // and a constant c: the lower bound becomes the attribute `assume_min` of x's defining op, which
  // block-access's sign analysis reads (the tutorials' `tl.assume(pid_n >= 0)` after a grouped tile
  // order). Like Triton, tawa trusts the assumption and does not check it; conditions of other forms
  // are hints it does not use.
  static void recordAssumption(ir::Value* cond) {
    ir::Op* cmp = cond->definingOp();
    if (!cmp || cmp->kind() != OpKind::Cmp || !cond->type().isScalar() || !cmp->hasAttr("pred")) return;
    // The comparison is of scalars (its result is one), so a constant operand is a scalar constant.
    std::string pred = cmp->strAttr("pred");
    ir::Value* x = cmp->operand(0);
    auto c = ir::intConstant(cmp->operand(1));
    if (!c) {  // c OP x is x OP' c
      x = cmp->operand(1);
      c = ir::intConstant(cmp->operand(0));
      static const std::map<std::string, std::string> flip = {{"lt", "gt"}, {"le", "ge"}, {"gt", "lt"}, {"ge", "le"}};
      auto f = flip.find(pred);
      pred = f == flip.end() ? pred : f->second;
    }
    if (!c || !x->type().elemIsInt() || !x->definingOp()) return;
    int64_t lo;
    if (pred == "ge") lo = *c;
    else if (pred == "gt" && *c < std::numeric_limits<int64_t>::max()) lo = *c + 1;
    else return;
    auto& attrs = x->definingOp()->attrs;
    auto old = attrs.find("assume_min");
    if (old != attrs.end()) lo = std::max(lo, std::get<int64_t>(old->second));
    attrs["assume_min"] = lo;
  }

  // A module-level `NAME = <expression>` that is not tl.constexpr(...): Triton 3.6 raises NameError
  // where a jit function reads it unless TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, and then reads its
  // value. The same here: a located error naming the rule, or (with the variable set) the value as a
  // compile-time constant, where the expression is one this front end evaluates.
  Val plainGlobal(const std::string& name, size_t at, Pos p) {
    const char* allow = std::getenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS");
    if (!allow || std::string(allow) != "1")
      fail(p, "global '" + name + "' is not a tl.constexpr: Triton 3.6 lets a jit function read only globals made with "
                  "tl.constexpr(...) (its NameError 'Cannot access global variable')",
           "write `" + name + " = tl.constexpr(<value>)`, or set TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 as Triton allows");
    const std::string key = *file_->path + ":" + name;
    if (auto cached = globalCache_.find(key); cached != globalCache_.end()) return cached->second;
    ExprP e = at == std::string::npos ? nullptr : parseAssignedValue(*file_, at);
    if (!e) fail(p, "global '" + name + "' is bound more than once at module level (or by a statement tawa cannot read): its value is unknown here",
                 "make it `" + name + " = tl.constexpr(<value>)`");
    return moduleValue(key, std::move(e), p,
                       "global '" + name + "' (line " + std::to_string(file_->tokens[at].line) + ") is not a compile-time constant tawa can evaluate");
  }
  // A module-level expression's value, evaluated outside every jit frame, which must be a constant
  // (`notConstant` otherwise); cached under `key` (file:name), its expression kept alive beside it.
  Val moduleValue(const std::string& key, ExprP e, Pos p, const std::string& notConstant) {
    Frame empty;
    empty.fn = frame().fn;
    frames_.push_back(&empty);
    Val v = eval(*e);
    frames_.pop_back();
    if (!v.isConst()) fail(p, notConstant);
    globalCache_[key] = v;
    globalExprs_.push_back(std::move(e));
    return v;
  }

  // A dotted path such as "triton.language.float16" as a value.
  Val moduleMember(const std::string& path, Pos p) {
    static const std::set<std::string> modules = {"triton", "triton.language", "triton.language.math",
                                                  "triton.language.core", "triton.language.standard",
                                                  "triton.language.extra", "triton.language.extra.cuda",
                                                  "triton.language.extra.libdevice",
                                                  "triton.language.extra.cuda.libdevice"};
    if (modules.count(path) || path == "math" || path == "torch") return Val::named(Val::K::Module, path);
    auto dot = path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
    std::string leaf = path.substr(dot + 1);
    if (parent == "math") return mathMember(leaf, p);
    // A torch attribute (lmdeploy's `if y.dtype.element_ty == torch.float16`): an opaque constant
    // that equals nothing of Triton's, as a tl.dtype compared with a torch.dtype is False in Triton.
    if (parent == "torch") return Val::str("torch." + leaf);
    if (parent.rfind("triton", 0) == 0) {
      if (auto s = dtypeByName(leaf)) return Val::dtype(*s);
      if (leaf == "float8e4b15" || leaf == "float8e4b8" || leaf == "float8e5b16")
        fail(p, "dtype tl." + leaf + ": not supported yet");
      if (leaf == "constexpr" || leaf == "tensor" || leaf == "tensor_descriptor" || leaf == "dtype" ||
          leaf == "pointer_type" || leaf == "tuple" || leaf == "block_type")
        return Val::named(Val::K::TypeRef, leaf);
      if (leaf == "jit") return Val::named(Val::K::TlFunc, "triton.jit");
      if (parent.find("libdevice") != std::string::npos) return Val::named(Val::K::TlFunc, "libdevice." + leaf);
      return Val::named(Val::K::TlFunc, leaf);
    }
    return importedMember(path, p);
  }

  // Which of a name's module-level bindings Python would have made: those in branches known not to
  // be taken are out (their conditions read os.environ, Triton's version, constants); when all the
  // rest are known to run, the last of them (Python's last assignment); otherwise the first that
  // Triton 3.6 provides (`if version >= 3: from ...libdevice import tanh` / `else: from
  // triton.language.math import tanh`: only the first exists in 3.6).
  std::string chooseBinding(const std::vector<SourceFile::Binding>& all, std::string& why) { return chooseBinding(*file_, all, why); }
  std::string chooseBinding(SourceFile& file, const std::vector<SourceFile::Binding>& all, std::string& why) {
    auto branchTaken = [&](int id, int branch) -> std::optional<bool> {
      const auto& conds = file.ifs[static_cast<size_t>(id)];
      for (int k = 0; k <= branch; ++k) {
        const size_t c = conds[static_cast<size_t>(k)];
        if (c == SourceFile::kTry) return std::nullopt;
        std::optional<bool> v = c == SourceFile::kElse ? std::optional<bool>(true) : moduleCondition(file, c);
        if (!v) return std::nullopt;
        if (k < branch && *v) return false;  // an earlier branch is taken
        if (k == branch) return *v;
      }
      return std::nullopt;
    };
    std::vector<const SourceFile::Binding*> live;
    bool allKnown = true;
    for (const auto& b : all) {
      std::optional<bool> taken = true;
      for (auto [id, br] : b.branches) {
        auto t = branchTaken(id, br);
        if (t && !*t) {
          taken = false;
          break;
        }
        if (!t) taken = std::nullopt;
      }
      if (taken && !*taken) continue;
      if (!taken) allKnown = false;
      live.push_back(&b);
    }
    if (live.empty()) {
      why = "no branch is known to be taken: the last";
      return all.back().target;
    }
    if (allKnown) {
      why = live.size() == all.size() ? "every one runs: the last, as Python's last assignment"
                                      : "decided by conditions known at compile time: os.environ, Triton 3.6's version, constants";
      return live.back()->target;
    }
    for (const auto* b : live)
      if (provided(b->target)) {
        why = "a condition is not known at compile time (a try, a call): the first Triton 3.6 provides";
        return b->target;
      }
    why = "a condition is not known at compile time and Triton 3.6 provides none of them: the last";
    return live.back()->target;
  }

  // A jit function defined more than once in module-level if/try branches (`if TRITON3: @triton.jit
  // def softplus ... else: @triton.jit def softplus ...`): the one whose branches are taken, as for
  // imports (chooseBinding: conditions known at compile time decide; else the last); the others are
  // dropped from the file.
  void pickJitDefs(SourceFile& file) {
    std::map<std::string, std::vector<size_t>> byName;
    for (size_t k = 0; k < file.jit.size(); ++k) byName[file.jit[k].name].push_back(k);
    std::set<size_t> drop;
    for (const auto& [name, idx] : byName) {
      if (idx.size() < 2) continue;
      std::vector<SourceFile::Binding> defs;
      for (size_t k : idx) defs.push_back({std::to_string(k), file.jit[k].branches});
      std::string why;
      const size_t keep = std::stoul(chooseBinding(file, defs, why));
      for (size_t k : idx)
        if (k != keep) drop.insert(k);
      if (std::ostream* out = explainStream())
        *out << file.loc(file.jit[keep].pos).str() << ": explain: '" << name << "': taking this of its " << idx.size()
             << " definitions (" << why << ")\n";
    }
    for (auto it = drop.rbegin(); it != drop.rend(); ++it) file.jit.erase(file.jit.begin() + static_cast<std::ptrdiff_t>(*it));
  }

  // Whether a dotted path names something Triton 3.6 provides and tawa lowers: libdevice's functions
  // that tawa has, tl.math's functions, tl's names other than libdevice-only math (tl.tanh does not
  // exist); anything outside triton is taken to exist (it is resolved where it is used).
  static bool provided(const std::string& path) {
    if (path.rfind("triton", 0) != 0) return true;
    const size_t dot = path.rfind('.');
    if (dot == std::string::npos) return true;
    const std::string parent = path.substr(0, dot), leaf = path.substr(dot + 1);
    static const std::set<std::string> tlMath = {"umulhi", "exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "sqrt_rn",
                                                 "rsqrt", "abs", "fdiv", "div_rn", "erf", "floor", "ceil", "fma"};
    static const std::set<std::string> libdeviceOwn = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "fabs", "abs"};
    if (parent.find("libdevice") != std::string::npos) return libdeviceOwn.count(leaf) || ir::mathFn(leaf);
    if (parent == "triton.language.math") return tlMath.count(leaf) != 0;
    if (parent == "triton.language") return !ir::mathFn(leaf) || tlMath.count(leaf);
    return true;
  }

  // ---- other .py files (the kernel's own package, or the import path)

  static Val funcIn(SourceFile* f, const std::string& name) {
    Val v = Val::named(Val::K::Func, name);
    v.src = f;
    return v;
  }
  static Val moduleIn(SourceFile* f, const std::string& name) {
    Val v = Val::named(Val::K::Module, name);
    v.src = f;
    return v;
  }
  // While it lives, names and source locations are the file f's (a callee's, an imported module's).
  struct InFile {
    Lowerer* l;
    SourceFile* saved;
    InFile(Lowerer* lowerer, SourceFile* f) : l(lowerer), saved(lowerer->file_) {
      if (f) l->file_ = f;
    }
    ~InFile() { l->file_ = saved; }
  };
  // The directories a dotted module name is looked up in, as Python would: for `.a.b` the current
  // file's package (one level up per further dot); otherwise the kernel file's directory, the root
  // of each package that the current file lies in (the parent of its topmost directory with an
  // __init__.py), then the import path (-I DIR, repeatable, and PYTHONPATH).
  std::vector<std::filesystem::path> moduleRoots(std::string& dotted) const {
    namespace fs = std::filesystem;
    const fs::path here = fs::absolute(*file_->path).parent_path();
    std::vector<fs::path> roots;
    if (!dotted.empty() && dotted[0] == '.') {
      size_t dots = 0;
      while (dots < dotted.size() && dotted[dots] == '.') ++dots;
      fs::path base = here;
      for (size_t k = 1; k < dots; ++k) base = base.parent_path();
      dotted = dotted.substr(dots);
      roots.push_back(base);
      return roots;
    }
    roots.push_back(fs::absolute(*root_.path).parent_path());
    for (fs::path d = here; fs::exists(d / "__init__.py") && d.has_parent_path() && d != d.parent_path(); d = d.parent_path())
      if (!fs::exists(d.parent_path() / "__init__.py")) roots.push_back(d.parent_path());
    for (const auto& dir : importPath()) roots.push_back(fs::absolute(dir));
    return roots;
  }
  // The file of module `dotted` (a/b.py or a/b/__init__.py under a root), read once; null if none.
  SourceFile* findModule(std::string dotted) {
    namespace fs = std::filesystem;
    auto roots = moduleRoots(dotted);
    std::string rel = dotted;
    std::replace(rel.begin(), rel.end(), '.', '/');
    for (const auto& r : roots) {
      for (fs::path cand : {rel.empty() ? r / "__init__.py" : r / (rel + ".py"), r / rel / "__init__.py"}) {
        std::error_code ec;
        if (!fs::is_regular_file(cand, ec)) continue;
        const std::string key = fs::weakly_canonical(cand).string();
        auto it = modules_.find(key);
        if (it == modules_.end()) {
          std::ifstream in(key, std::ios::binary);
          std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          it = modules_.emplace(key, scanSource(cand.lexically_normal().string(), text)).first;
          pickJitDefs(*it->second);
        }
        return it->second.get();
      }
    }
    return nullptr;
  }
  // `a.b.c` where a.b (or a.b.c) is a module in a .py file: its member, or the module itself.
  Val importedMember(const std::string& path, Pos p) {
    std::vector<std::string> parts;
    size_t lead = 0;
    while (lead < path.size() && path[lead] == '.') ++lead;
    for (size_t at = lead, next; at <= path.size(); at = next + 1) {
      next = path.find('.', at);
      if (next == std::string::npos) next = path.size();
      parts.push_back(path.substr(at, next - at));
    }
    for (size_t cut = parts.size(); cut-- > 0;) {
      std::string mod = path.substr(0, lead);
      for (size_t k = 0; k <= cut; ++k) mod += (k ? "." : "") + parts[k];
      SourceFile* f = findModule(mod);
      if (!f) continue;
      Val v = moduleIn(f, mod);
      for (size_t k = cut + 1; k < parts.size(); ++k) v = attribute(v, parts[k], p);
      return v;
    }
    if (lead) {  // `from . import name`: the package's own __init__.py
      if (SourceFile* f = findModule(path.substr(0, lead))) return memberOf(f, parts.back(), p);
    }
    std::string dirs;
    std::string probe = path;
    for (const auto& r : moduleRoots(probe)) dirs += (dirs.empty() ? "" : ", ") + r.string();
    fail(p, "'" + path + "' is not triton's and no .py file provides it (searched " + dirs + ")",
         "add the directory that holds its package with -I DIR");
  }
  // A member of an imported file: a jit function, a module-level tl.constexpr, or a name that file
  // imports (followed in that file's own context).
  Val memberOf(SourceFile* f, const std::string& name, Pos p) {
    if (f->find(name)) return funcIn(f, name);
    // The name is resolved in the module's context; an error at the use (p) is the caller's.
    try {
      InFile in(this, f);
      return memberIn(f, name, p);
    } catch (UserError& e) {
      if (e.loc == f->loc(p)) e.loc = file_->loc(p);
      throw;
    }
  }
  Val memberIn(SourceFile* f, const std::string& name, Pos p) {
    // A global or a name the module binds: looked up as the module's own code would (no locals).
    if (f->globals.count(name) || f->annotatedGlobals.count(name) || f->bindings.count(name) || f->aliases.count(name)) {
      Frame empty;
      empty.fn = frame().fn;
      frames_.push_back(&empty);
      struct Pop {
        std::vector<Frame*>& fs;
        ~Pop() { fs.pop_back(); }
      } pop{frames_};
      return lookup(name, p);
    }
    namespace fs = std::filesystem;
    if (fs::path(*f->path).filename() == "__init__.py")  // `from pkg import sub`: pkg/sub.py
      if (SourceFile* sub = findModule("." + name)) return moduleIn(sub, name);
    fail(p, "module '" + *f->path + "' has no @triton.jit function, tl.constexpr global or import named '" + name + "'");
  }

  Val eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Name: return lookup(e.name, e.pos);
      case Expr::Kind::Int: return Val::integer(e.ival);
      case Expr::Kind::Float: return Val::real(e.fval);
      case Expr::Kind::Str: return Val::str(e.sval);
      case Expr::Kind::Bool: return Val::boolean(e.ival != 0);
      case Expr::Kind::None: return Val::none();
      case Expr::Kind::Tuple:
      case Expr::Kind::List: {
        std::vector<Val> el;
        for (auto& k : e.kids) el.push_back(eval(*k));
        return Val::tuple(std::move(el));
      }
      case Expr::Kind::Attribute: return attribute(eval(*e.kids[0]), e.name, e.pos);
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Subscript: return subscript(e);
      case Expr::Kind::Slice: fail(e.pos, "a slice is only allowed inside a subscript");
      case Expr::Kind::BinOp: {
        Val a = eval(*e.kids[0]);
        Val b = eval(*e.kids[1]);
        return binary(e.name, a, b, e.pos);
      }
      case Expr::Kind::UnaryOp: return unary(e.name, eval(*e.kids[0]), e.pos);
      case Expr::Kind::BoolOp: {
        Val acc = eval(*e.kids[0]);
        for (size_t k = 1; k < e.kids.size(); ++k) {
          if (!acc.isIR()) {
            bool t = truthy(acc, e.kids[k - 1]->pos);
            if (e.name == "and" ? !t : t) return acc;  // Python short-circuit on constants
            acc = eval(*e.kids[k]);
            continue;
          }
          Val next = eval(*e.kids[k]);
          acc = logical(e.name, acc, next, e.pos);
        }
        return acc;
      }
      case Expr::Kind::Compare: {
        Val left = eval(*e.kids[0]);
        Val result;
        for (size_t k = 0; k < e.ops.size(); ++k) {
          Val right = eval(*e.kids[k + 1]);
          Val c = compare(e.ops[k], left, right, e.pos);
          if (k == 0) result = c;
          else if (!result.isIR() && !c.isIR()) result = Val::boolean(truthy(result, e.pos) && truthy(c, e.pos));
          else result = logical("and", result, c, e.pos);
          if (!result.isIR() && !truthy(result, e.pos)) return result;
          left = right;
        }
        return result;
      }
      case Expr::Kind::IfExp: {
        Val c = eval(*e.kids[0]);
        if (!c.isIR()) return truthy(c, e.kids[0]->pos) ? eval(*e.kids[1]) : eval(*e.kids[2]);
        if (c.v->type().isTile())
          fail(e.pos, "the condition of a conditional expression must be a scalar, got " + c.v->type().str(),
               "use tl.where(cond, x, y) for elementwise selection");
        Val x = eval(*e.kids[1]);
        Val y = eval(*e.kids[2]);
        return select(c, x, y, e.pos);
      }
    }
    fail(e.pos, "unsupported expression");
  }

  Val select(const Val& c, const Val& x, const Val& y, Pos p) {
    if (!c.isIR()) return truthy(c, p) ? x : y;
    ir::Value* cond = toBool(c, p);
    ir::Value *xv, *yv;
    std::vector<int64_t> shape = broadcastShapes(shapeOf(cond->type()), broadcastShapes(shapeOfVal(x), shapeOfVal(y), p), p);
    bool px = x.isIR() && x.v->type().isPtrLike(), py = y.isIR() && y.v->type().isPtrLike();
    if (px || py) {
      if (!(px && py) || x.v->type().scalar != y.v->type().scalar)
        fail(p, "cannot select between " + describe(x) + " and " + describe(y));
      xv = broadcastTo(x.v, shape, p);
      yv = broadcastTo(y.v, shape, p);
    } else {
      requireOperand(x, p, "where");
      requireOperand(y, p, "where");
      Scalar e = joinElem(x, y);
      checkSignedness("where", x, y, e, p);
      xv = coerce(x, e, shape, p);
      yv = coerce(y, e, shape, p);
    }
    cond = broadcastTo(cond, shape, p);
    at(p);
    return Val::ir(b_.op1(OpKind::Select, {cond, xv, yv}, xv->type()));
  }

  Val unary(const std::string& op, const Val& a, Pos p) {
    if (op == "not") {
      if (!a.isIR()) return Val::boolean(!truthy(a, p));
      ir::Value* x = toBool(a, p);
      at(p);
      return Val::ir(b_.op1(OpKind::Not, {x}, x->type()));
    }
    if (!a.isIR() && a.strong && a.isNum() && op != "+") return unary(op, materialize(a, p), p);
    if (!a.isIR()) {
      if (op == "+" && a.isNum()) return a;
      if (op == "-" && a.k == Val::K::Float) return Val::real(-a.f);
      if (op == "-" && a.isNum()) {
        if (a.i == INT64_MIN) fail(p, "integer overflow in a constant expression");
        return Val::integer(-a.i);
      }
      if (op == "~" && (a.k == Val::K::Int || a.k == Val::K::Bool)) return Val::integer(~a.i);
      fail(p, "unary '" + op + "' does not apply to " + describe(a));
    }
    const Type& t = a.v->type();
    if (t.isPtrLike() || t.isDesc()) fail(p, "unary '" + op + "' does not apply to " + t.str());
    if (op == "+") return a;
    at(p);
    if (op == "-") return Val::ir(b_.op1(OpKind::Neg, {a.v}, t));
    if (ir::isFloat(t.scalar)) fail(p, "'~' needs an integer operand, got " + t.str());
    return Val::ir(b_.op1(OpKind::Not, {a.v}, t));
  }

  Val attribute(const Val& base, const std::string& name, Pos p) {
    if (name == "value" && base.isConst() && !base.strong) return base;  // a tl.constexpr's value (`dtype.value` of a constexpr argument)
    if (base.strong && base.isNum()) return attribute(materialize(base, p), name, p);  // a scalar tensor's: `zero.to(x.dtype)`
    switch (base.k) {
      case Val::K::Module: return base.src ? memberOf(base.src, name, p) : moduleMember(base.s + "." + name, p);
      case Val::K::BlockPtr:
        // Triton's type of a block pointer is a pointer to the block type: p.dtype.element_ty is the
        // element type, as for a plain pointer.
        if (name == "dtype" || name == "type") return Val::dtype(base.v->type().scalar, true);
        fail(p, "block pointer attribute '" + name + "': not supported yet", "block pointers have .dtype and .type");
      case Val::K::IR: {
        const Type& t = base.v->type();
        if (name == "dtype") return t.isDesc() ? Val::dtype(t.scalar) : Val::dtype(t.scalar, t.isPtrLike());
        if (name == "type" && !t.isDesc()) {
          // A scalar's type is its dtype; a tensor's is a block type (element_ty, scalar, shape).
          Val d = Val::dtype(t.scalar, t.isPtrLike());
          if (t.isTile()) {
            d.dtBlock = true;
            d.blockShape = t.shape;
          }
          return d;
        }
        if (name == "shape") {
          std::vector<Val> d;
          for (auto s : shapeOf(t)) d.push_back(Val::integer(s));
          return Val::tuple(d);
        }
        if (name == "block_shape" && t.isDesc()) {
          std::vector<Val> d;
          for (auto s : t.shape) d.push_back(Val::integer(s));
          return Val::tuple(d);
        }
        if (name == "T") return permute(base, {}, p, "'.T'");
        if (name == "numel") return Val::integer(t.numel());
        Val m = Val::named(Val::K::Method, name);
        m.elems.push_back(base);
        return m;
      }
      case Val::K::Dtype: {
        if (base.dtBlock) {
          if (name == "element_ty" || name == "scalar") return Val::dtype(base.dt, base.dtPtr);
          if (name == "shape") {
            std::vector<Val> d;
            for (auto x : base.blockShape) d.push_back(Val::integer(x));
            return Val::tuple(d);
          }
          if (name == "numel") {
            int64_t n = 1;
            for (auto x : base.blockShape) n *= x;
            return Val::integer(n);
          }
          fail(p, "the block type of a tensor has no attribute '" + name + "' here",
               "use .element_ty, .scalar or .shape");
        }
        if (name == "element_ty") {
          if (!base.dtPtr) fail(p, "'element_ty' applies to pointer dtypes only");
          return Val::dtype(base.dt);
        }
        if (name == "scalar") return base;
        if (name == "primitive_bitwidth") {
          if (base.dtPtr) return Val::integer(64);
          return Val::integer(ir::bitWidth(base.dt));
        }
        if (name == "name") return Val::str(tritonDtypeName(base.dt));
        if (name == "int_bitwidth" && !base.dtPtr && ir::isInt(base.dt)) return Val::integer(ir::bitWidth(base.dt));
        if (name == "int_bitwidth") fail(p, "dtype '" + tritonDtypeName(base.dt) + "' has no int_bitwidth (integer dtypes have)");
        Val m = Val::named(Val::K::Method, name);
        m.elems.push_back(base);
        return m;
      }
      default: break;
    }
    if (base.k == Val::K::TlFunc && base.s == "PropagateNan" && (name == "ALL" || name == "NONE"))
      return Val::integer(name == "ALL" ? 0xFFFF : 0);  // Triton's enum values
    if (base.k == Val::K::Undef) fail(p, base.s);
    fail(p, describe(base) + " has no attribute '" + name + "'");
  }

  Val subscript(const Expr& e) {
    Val base = eval(*e.kids[0]);
    if (base.k == Val::K::Tuple) {
      if (e.kids.size() != 2) fail(e.pos, "a tuple takes one index");
      const Expr& ix = *e.kids[1];
      int64_t n = static_cast<int64_t>(base.elems.size());
      if (ix.kind == Expr::Kind::Slice) {
        auto part = [&](size_t k, int64_t dflt) {
          if (!ix.kids[k]) return dflt;
          int64_t v = constInt(eval(*ix.kids[k]), ix.pos, "a tuple slice bound");
          if (v < 0) v += n;
          return std::clamp<int64_t>(v, 0, n);
        };
        int64_t step = ix.kids[2] ? constInt(eval(*ix.kids[2]), ix.pos, "a slice step") : 1;
        if (step != 1) fail(ix.pos, "tuple slices with a step: not supported yet");
        int64_t lo = part(0, 0), hi = part(1, n);
        std::vector<Val> out;
        for (int64_t k = lo; k < hi; ++k) out.push_back(base.elems[k]);
        return Val::tuple(out);
      }
      int64_t k = constInt(eval(ix), ix.pos, "a tuple index");
      if (k < 0) k += n;
      if (k < 0 || k >= n) fail(ix.pos, "tuple index " + std::to_string(k) + " out of range (size " + std::to_string(n) + ")");
      return base.elems[k];
    }
    if (!base.isIR() || base.v->type().isDesc() ) fail(e.pos, describe(base) + " cannot be subscripted");
    ir::Value* x = base.v;
    std::vector<int64_t> shape = shapeOf(x->type());
    // Each index: None adds an axis, ':' keeps one.
    int src = 0;
    std::vector<int> newAxes;
    int outRank = 0;
    for (size_t k = 1; k < e.kids.size(); ++k) {
      const Expr& ix = *e.kids[k];
      if (ix.kind == Expr::Kind::None) {
        newAxes.push_back(outRank++);
        continue;
      }
      if (ix.kind == Expr::Kind::Slice && !ix.kids[0] && !ix.kids[1] && !ix.kids[2]) {
        if (!x->type().isTile()) continue;  // Triton passes ':' over a 0-d tensor (`s[None, :]` is s as shape [1])
        if (src >= static_cast<int>(shape.size()))
          fail(ix.pos, "too many indices for a tensor of shape " + shapeStr(shape));
        ++src, ++outRank;
        continue;
      }
      fail(ix.pos, "indexing a tensor with values or partial slices: not supported yet",
           "tensors can be subscripted only with None and ':' (e.g. x[:, None])");
    }
    if (x->type().isTile() && src != static_cast<int>(shape.size()) && src != 0)
      fail(e.pos, "subscript has " + std::to_string(src) + " ':' but the tensor has rank " + std::to_string(shape.size()));
    at(e.pos);
    if (!x->type().isTile()) {
      if (newAxes.empty()) return base;
      x = b_.op1(OpKind::Splat, {x}, Type::tileOf({1}, x->type()));
      newAxes.erase(newAxes.begin());
    }
    for (int ax : newAxes) {
      Type t = x->type();
      auto s = t.shape;
      if (ax > t.rank()) ax = t.rank();
      s.insert(s.begin() + ax, 1);
      x = b_.op1(OpKind::ExpandDims, {x}, t.withShape(s), {{"axis", int64_t{ax}}});
    }
    return Val::ir(x);
  }

  // ---- calls
  Val call(const Expr& e) {
    Val callee = eval(*e.kids[0]);
    Args a;
    a.at = e.pos;
    for (size_t k = 1; k < e.kids.size(); ++k) {
      a.pos.push_back(eval(*e.kids[k]));
      a.posAt.push_back(e.kids[k]->pos);
    }
    for (auto& [name, ex] : e.keywords) {
      a.kw.emplace_back(name, eval(*ex));
      a.kwAt.push_back(ex->pos);
    }
    switch (callee.k) {
      case Val::K::Func: return inlineFunc(callee, a);
      case Val::K::TlFunc: return tlCall(callee.s, a, std::nullopt);
      case Val::K::Method: return tlCall(callee.s, a, callee.elems[0]);
      case Val::K::Builtin: return builtinCall(callee.s, a);
      case Val::K::TypeRef:
        if (callee.s == "constexpr") {
          if (a.pos.size() != 1) fail(e.pos, "tl.constexpr(...) takes one argument");
          return a.pos[0];
        }
        if (callee.s == "pointer_type") {  // tl.pointer_type(tl.uint8): a pointer dtype, for casts of pointers
          if (a.pos.size() != 1 || a.pos[0].k != Val::K::Dtype || a.pos[0].dtPtr || a.pos[0].dtBlock)
            fail(e.pos, "tl.pointer_type(...) takes one element dtype, e.g. tl.pointer_type(tl.uint8)");
          return Val::dtype(a.pos[0].dt, true);
        }
        fail(e.pos, "calling the type '" + callee.s + "': not supported yet");
      case Val::K::Dtype: {
        // tl.float32(x): a value converted to the dtype (a scalar constant becomes a typed scalar).
        if (callee.dtPtr) fail(e.pos, "calling a pointer dtype: not supported yet");
        if (a.pos.size() != 1 || !a.kw.empty())
          fail(e.pos, "calling the dtype " + tritonDtypeName(callee.dt) + " takes exactly one value");
        Args c;
        c.at = e.pos;
        c.pos.push_back(callee);
        c.posAt.push_back(e.kids[0]->pos);
        return castCall(a.pos[0], c);
      }
      default: fail(e.pos, describe(callee) + " is not callable");
    }
  }

  // Binds arguments to the named parameters (positional first); unknown keywords are an error.
  std::vector<std::optional<Val>> bind(const Args& a, const std::string& fn, const std::vector<std::string>& params,
                                       size_t required, std::vector<Pos>* where = nullptr) {
    std::vector<std::optional<Val>> out(params.size());
    std::vector<Pos> pos(params.size(), a.at);
    if (a.pos.size() > params.size())
      fail(a.posAt[params.size()], fn + "() takes at most " + std::to_string(params.size()) + " positional argument(s)");
    for (size_t k = 0; k < a.pos.size(); ++k) out[k] = a.pos[k], pos[k] = a.posAt[k];
    for (size_t k = 0; k < a.kw.size(); ++k) {
      auto it = std::find(params.begin(), params.end(), a.kw[k].first);
      if (it == params.end()) fail(a.kwAt[k], fn + "() got an unexpected keyword argument '" + a.kw[k].first + "'");
      size_t idx = static_cast<size_t>(it - params.begin());
      if (out[idx]) fail(a.kwAt[k], fn + "() got multiple values for argument '" + a.kw[k].first + "'");
      out[idx] = a.kw[k].second;
      pos[idx] = a.kwAt[k];
    }
    for (size_t k = 0; k < required; ++k)
      if (!out[k]) fail(a.at, fn + "() is missing its argument '" + params[k] + "'");
    if (where) *where = pos;
    return out;
  }

  // A jit function call, lowered in the context of the file that defines it (its names, imports and
  // source locations).
  Val inlineFunc(const Val& fn, const Args& a) {
    InFile in(this, fn.src);
    return inlineCall(fn.s, a);
  }

  Val inlineCall(const std::string& name, const Args& a) {
    const FunctionDef* fn = parseFunction(*file_, name);
    if (frames_.size() > 64) fail(a.at, "jit calls nest deeper than 64 levels (recursion is not supported)");
    Frame fr;
    fr.fn = fn;
    std::vector<std::string> names;
    for (auto& p : fn->params) names.push_back(p.name);
    size_t positional = 0;
    while (positional < fn->params.size() && !fn->params[positional].keywordOnly) ++positional;
    if (a.pos.size() > positional)
      fail(a.posAt[positional], name + "() takes " + std::to_string(positional) + " positional argument(s) but " +
                                    std::to_string(a.pos.size()) + " were given",
           positional < fn->params.size() ? "'" + fn->params[positional].name + "' and later parameters are keyword-only"
                                          : std::string());
    std::vector<Pos> where;
    auto bound = bind(a, name, names, 0, &where);
    for (size_t k = 0; k < fn->params.size(); ++k) {
      const Param& p = fn->params[k];
      Val v;
      if (bound[k]) {
        v = *bound[k];
      } else if (p.defaultValue) {
        Frame empty;
        empty.fn = fn;
        frames_.push_back(&empty);
        v = eval(*p.defaultValue);
        frames_.pop_back();
      } else {
        fail(a.at, name + "() is missing its argument '" + p.name + "'");
      }
      // As in Triton, a call specializes on its constant arguments, not on the callee's annotations:
      // a tl.constexpr-annotated parameter that receives a tensor (06-fused-attention passes its
      // offsets this way) simply binds that runtime value.
      fr.vars[p.name] = v;
    }
    frames_.push_back(&fr);
    exec(fn->body, true);
    frames_.pop_back();
    Val r = fr.returned ? fr.result : Val::none();
    if (const SourceFile::Jit* j = file_->find(name); j && j->constexprFn && !r.isConst())
      fail(a.at, "the @tl.constexpr function '" + name + "' returned " + describe(r) + ", not a value known at compile time",
           "Triton calls it while compiling: give it constexpr arguments (dtypes, numbers)");
    return r;
  }

  // Python's math module, for the compile-time constants a module-level global computes
  // (`_sqrt2pi = math.sqrt(2.0 / math.pi)`): its constants, and its functions of numbers (math.sqrt
  // and the like, evaluated in double as Python does; a tensor argument is an error).
  static const std::map<std::string, double (*)(double)>& mathFunctions() {
    static const std::map<std::string, double (*)(double)> fns = {
        {"sqrt", [](double x) { return std::sqrt(x); }},   {"exp", [](double x) { return std::exp(x); }},
        {"log2", [](double x) { return std::log2(x); }},   {"log10", [](double x) { return std::log10(x); }},
        {"sin", [](double x) { return std::sin(x); }},     {"cos", [](double x) { return std::cos(x); }},
        {"tan", [](double x) { return std::tan(x); }},     {"atan", [](double x) { return std::atan(x); }},
        {"tanh", [](double x) { return std::tanh(x); }},   {"erf", [](double x) { return std::erf(x); }},
        {"fabs", [](double x) { return std::fabs(x); }},   {"exp2", [](double x) { return std::exp2(x); }},
        {"log1p", [](double x) { return std::log1p(x); }}, {"expm1", [](double x) { return std::expm1(x); }}};
    return fns;
  }
  Val mathMember(const std::string& leaf, Pos p) {
    if (leaf == "pi") return Val::real(M_PI);
    if (leaf == "e") return Val::real(M_E);
    if (leaf == "tau") return Val::real(2 * M_PI);
    if (leaf == "inf") return Val::real(INFINITY);
    if (leaf == "nan") return Val::real(NAN);
    if (mathFunctions().count(leaf) || leaf == "log" || leaf == "pow" || leaf == "floor" || leaf == "ceil")
      return Val::named(Val::K::Builtin, "math." + leaf);
    fail(p, "math." + leaf + " is not supported (of Python's math module: pi, e, tau, inf, nan and its functions of numbers)");
  }
  Val mathCall(const std::string& fn, const Args& a) {
    const Pos p = a.at;
    std::vector<double> x;
    for (const Val& v : a.pos) {
      if (!v.isNum()) fail(p, "math." + fn + "() takes numbers known at compile time, got " + describe(v), "use tl." + fn + " on tensors");
      x.push_back(v.k == Val::K::Float ? v.f : static_cast<double>(v.i));
    }
    const size_t want = fn == "pow" ? 2 : 1;
    if (!a.kw.empty() || x.size() < want || x.size() > (fn == "log" ? 2 : want))
      fail(p, "math." + fn + "() takes " + std::to_string(want) + (fn == "log" ? " or 2" : "") + " argument(s)");
    if (fn == "floor" || fn == "ceil") return Val::integer(static_cast<int64_t>(fn == "floor" ? std::floor(x[0]) : std::ceil(x[0])));
    if (fn == "pow") return Val::real(std::pow(x[0], x[1]));
    if (fn == "log") return Val::real(x.size() == 2 ? std::log(x[0]) / std::log(x[1]) : std::log(x[0]));
    return Val::real(mathFunctions().at(fn)(x[0]));
  }

  Val builtinCall(const std::string& n, const Args& a) {
    Pos p = a.at;
    if (n.rfind("math.", 0) == 0) return mathCall(n.substr(5), a);
    auto one = [&]() -> const Val& {
      if (a.pos.size() != 1 || !a.kw.empty()) fail(p, n + "() takes exactly one argument");
      return a.pos[0];
    };
    if (n == "range") fail(p, "range() is only supported as the iterable of a for loop");
    if (n == "min" || n == "max") {
      std::vector<Val> items = a.pos;
      if (items.size() == 1 && items[0].k == Val::K::Tuple) items = items[0].elems;
      if (items.empty()) fail(p, n + "() needs arguments");
      Val acc = items[0];
      for (size_t k = 1; k < items.size(); ++k) acc = minmax(n == "max" ? OpKind::Max : OpKind::Min, acc, items[k], p);
      return acc;
    }
    if (n == "float") {
      const Val& v = one();
      if (v.k == Val::K::Str) {
        std::string s = v.s;
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        if (s == "inf" || s == "+inf" || s == "infinity") return Val::real(INFINITY);
        if (s == "-inf" || s == "-infinity") return Val::real(-INFINITY);
        if (s == "nan") return Val::real(NAN);
        char* end = nullptr;
        double d = std::strtod(v.s.c_str(), &end);
        if (end && *end == '\0' && !v.s.empty()) return Val::real(d);
        fail(p, "float() cannot convert \"" + v.s + "\"");
      }
      if (v.k == Val::K::Float) return v;
      if (v.isNum()) return Val::real(static_cast<double>(v.i));
      if (v.isIR()) return Val::ir(cast(v.v, Scalar::F32, p));
      fail(p, "float() of " + describe(v));
    }
    if (n == "int") {
      const Val& v = one();
      if (v.k == Val::K::Float) return Val::integer(static_cast<int64_t>(v.f));
      if (v.isNum()) return Val::integer(v.i);
      if (v.isIR()) return Val::ir(cast(v.v, Scalar::I32, p));
      fail(p, "int() of " + describe(v));
    }
    if (n == "bool") {
      const Val& v = one();
      if (v.isIR()) return Val::ir(toBool(v, p));
      return Val::boolean(truthy(v, p));
    }
    if (n == "abs") {
      const Val& v = one();
      if (v.k == Val::K::Float) return Val::real(std::fabs(v.f));
      if (v.isNum()) return Val::integer(v.i < 0 ? -v.i : v.i);
      return mathUnary("abs", v, p);
    }
    if (n == "len") {
      const Val& v = one();
      if (v.k == Val::K::Tuple) return Val::integer(static_cast<int64_t>(v.elems.size()));
      if (v.isIR() && v.v->type().isTile()) return Val::integer(v.v->type().shape[0]);
      fail(p, "len() of " + describe(v));
    }
    if (n == "isinstance") {
      if (a.pos.size() != 2) fail(p, "isinstance() takes two arguments");
      std::vector<Val> types = a.pos[1].k == Val::K::Tuple ? a.pos[1].elems : std::vector<Val>{a.pos[1]};
      const Val& v = a.pos[0];
      bool r = false;
      for (auto& t : types) {
        if (t.k == Val::K::TypeRef) {
          if (t.s == "tensor_descriptor") r = r || (v.isIR() && v.v->type().isDesc());
          else if (t.s == "tensor") r = r || (v.isIR() && !v.v->type().isDesc());
          else if (t.s == "constexpr") r = r || v.isConst();
          else if (t.s == "dtype") r = r || v.k == Val::K::Dtype;
          else if (t.s == "tuple") r = r || v.k == Val::K::Tuple;
        } else if (t.k == Val::K::Builtin) {
          if (t.s == "int") r = r || v.k == Val::K::Int || v.k == Val::K::Bool;
          else if (t.s == "float") r = r || v.k == Val::K::Float;
          else if (t.s == "bool") r = r || v.k == Val::K::Bool;
          else if (t.s == "str") r = r || v.k == Val::K::Str;
          else if (t.s == "tuple" || t.s == "list") r = r || v.k == Val::K::Tuple;
        } else {
          fail(a.posAt[1], "isinstance() needs a type such as tl.tensor_descriptor, got " + describe(t));
        }
      }
      return Val::boolean(r);
    }
    if (n == "pow") {
      // Python's pow on constants (a third, modulus argument is not in the subset).
      if (a.pos.size() != 2 || !a.kw.empty()) fail(p, "pow() takes exactly two arguments here");
      return binary("**", a.pos[0], a.pos[1], p);
    }
    fail(p, n + "() inside a jit function: not supported yet");
  }

  // ---- tl.* functions and tensor methods
  Val tlCall(std::string n, const Args& in, std::optional<Val> self) {
    Args a = in;
    if (self) {
      // Methods: x.to(...), x.sum(...), desc.load(...), dtype.is_fp16(), ...
      if (self->k == Val::K::Dtype) return dtypeMethod(*self, n, a);
      const Type& st = self->v->type();
      if (st.isDesc()) {
        if (n == "load") return descLoad(*self, a);
        if (n == "store") return descStore(*self, a);
        fail(a.at, "tensor descriptor method '" + n + "': not supported yet");
      }
      if ((n == "load" || n == "store") && st.isPtr()) {
        const std::string& name = self->v->nameHint;
        fail(a.at, "." + n + "() on " + (name.empty() ? "this value" : "'" + name + "'") + ", a pointer: tensor descriptors have .load and .store",
             "pass it as a host descriptor in --spec (" + (name.empty() ? "name" : name) + ":tensordesc<" +
                 std::string(ir::scalarName(st.scalar)) + "[BLOCK_M, BLOCK_K]>[M, K]), or make one in the kernel with tl.make_tensor_descriptor");
      }
      if (n == "to" || n == "cast") return castCall(*self, a);
      static const std::set<std::string> asMethod = {"sum", "max", "min", "cumsum", "cumprod", "argmax", "argmin", "reduce",
                                                     "associative_scan", "reshape", "view", "trans", "permute", "split", "flip", "histogram", "sort",
                                                     "expand_dims", "broadcast_to", "exp", "exp2", "log", "log2",
                                                     "sqrt", "rsqrt", "abs", "sigmoid", "sin", "cos"};
      if (!asMethod.count(n)) fail(a.at, "tensor method '" + n + "': not supported yet");
      a.pos.insert(a.pos.begin(), *self);
      a.posAt.insert(a.posAt.begin(), a.at);
    }
    std::string qual = "tl." + n;
    Pos p = a.at;
    if (n.rfind("libdevice.", 0) == 0) return libdeviceCall(n.substr(10), a);
    if (n == "erf" || n == "floor" || n == "ceil") {
      auto v = bind(a, qual, {"x"}, 1);
      return mathCall(qual, *ir::mathFn(n), {&*v[0]}, {p}, p);
    }
    if (n == "program_id" || n == "num_programs") {
      auto v = bind(a, qual, {"axis"}, 1);
      int64_t ax = constInt(*v[0], p, qual + "'s axis");
      if (ax < 0 || ax > 2) fail(p, qual + "'s axis must be 0, 1 or 2, got " + std::to_string(ax));
      at(p);
      return Val::ir(b_.op1(n == "program_id" ? OpKind::ProgramId : OpKind::NumPrograms, {}, Type::scalarOf(Scalar::I32),
                            {{"axis", ax}}));
    }
    if (n == "arange") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"start", "end"}, 2, &w);
      int64_t s = constInt(*v[0], w[0], "tl.arange's start");
      int64_t e = constInt(*v[1], w[1], "tl.arange's end");
      if (e <= s) fail(p, "tl.arange needs end > start, got " + std::to_string(s) + ", " + std::to_string(e));
      int64_t len = e - s;
      if ((len & (len - 1)) != 0)
        fail(p, "tl.arange's range must be a power of 2, got " + std::to_string(len), "round the block size up and mask");
      at(p);
      return Val::ir(b_.op1(OpKind::Arange, {}, Type::tileOf({len}, Type::scalarOf(Scalar::I32)), {{"start", s}, {"end", e}}));
    }
    if (n == "zeros" || n == "full") {
      std::vector<Pos> w;
      bool full = n == "full";
      auto v = full ? bind(a, qual, {"shape", "value", "dtype"}, 3, &w) : bind(a, qual, {"shape", "dtype"}, 2, &w);
      auto shape = constShape(*v[0], w[0], qual + "'s shape");
      const Val& dt = *v[full ? 2 : 1];
      if (dt.k != Val::K::Dtype || dt.dtPtr) fail(w[full ? 2 : 1], qual + "'s dtype must be a dtype such as tl.float32");
      Val value = full ? *v[1] : Val::integer(0);
      if (value.isIR()) {
        if (value.v->type().isTile()) fail(w[1], "tl.full's value must be a scalar");
        return Val::ir(broadcastTo(cast(value.v, dt.dt, p), shape, p));
      }
      if (!value.isNum()) fail(w[1], "tl.full's value must be a number, got " + describe(value));
      return Val::ir(constant(value, dt.dt, shape, p));
    }
    if (n == "zeros_like") {
      auto v = bind(a, qual, {"input"}, 1);
      if (!v[0]->isIR() || v[0]->v->type().isPtrLike() || v[0]->v->type().isDesc())
        fail(p, "tl.zeros_like needs a tensor of numbers, got " + describe(*v[0]));
      const Type& t = v[0]->v->type();
      return Val::ir(constant(Val::integer(0), t.scalar, shapeOf(t), p));
    }
    if (n == "clamp") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "min", "max", "propagate_nan"}, 3, &w);
      const bool prop = propagateNanArg(v[3] ? &*v[3] : nullptr, w[3], qual);
      return minmax(OpKind::Min, minmax(OpKind::Max, *v[0], *v[1], p, prop), *v[2], p, prop);
    }
    if (n == "_log2") {  // triton.language.standard._log2: floor(log2(i)) of a constexpr integer
      auto v = bind(a, qual, {"i"}, 1);
      int64_t i = constInt(*v[0], p, qual + "'s argument"), r = 0;
      while (i > 1) i >>= 1, ++r;
      return Val::integer(r);
    }
    if (n == "gdc_wait" || n == "gdc_launch_dependents") {
      // Programmatic dependent launch (griddepcontrol.wait / .launch_dependents): tawa launches no
      // kernel with that attribute, and without it the wait returns at once and the release changes
      // nothing, so both are no-ops on every backend.
      bind(a, qual, {}, 0);
      return Val::none();
    }
    if (n == "cdiv") {
      auto v = bind(a, qual, {"x", "div"}, 2);
      if (!v[0]->isIR() && !v[1]->isIR()) {
        Val s = constBinary("+", *v[0], *v[1], p);
        s = constBinary("-", s, Val::integer(1), p);
        return constBinary("//", s, *v[1], p);
      }
      Val s = binary("+", *v[0], *v[1], p);
      s = binary("-", s, Val::integer(1), p);
      return binary("//", s, *v[1], p);
    }
    if (n == "swizzle2d") {
      // (i, j) of a row-major size_i x size_j grid -> column-major within groups of size_g rows
      // (the last group may have fewer), as Triton's standard library defines it.
      auto v = bind(a, qual, {"i", "j", "size_i", "size_j", "size_g"}, 5);
      auto op = [&](const char* o, const Val& x, const Val& y) {
        return !x.isIR() && !y.isIR() ? constBinary(o, x, y, p) : binary(o, x, y, p);
      };
      Val ij = op("+", op("*", *v[0], *v[3]), *v[1]);
      Val sizeGj = op("*", *v[4], *v[3]);
      Val offI = op("*", op("//", ij, sizeGj), *v[4]);
      Val rows = op("-", *v[2], offI);
      Val sizeG = !rows.isIR() && !v[4]->isIR() ? (constCompare("<", rows, *v[4], p).value_or(false) ? rows : *v[4])
                                                : minmax(OpKind::Min, rows, *v[4], p);
      ij = op("%", ij, sizeGj);
      return Val::tuple({op("+", offI, op("%", ij, sizeG)), op("//", ij, sizeG)});
    }
    if (n == "next_power_of_2") {
      auto v = bind(a, qual, {"n"}, 1);
      int64_t x = constInt(*v[0], p, "next_power_of_2's argument");
      int64_t r = 1;
      while (r < x) r <<= 1;
      return Val::integer(r);
    }
    if (n == "make_block_ptr") return makeBlockPtr(a);
    if (n == "advance") return advance(a);
    if (n == "load") return load(a);
    if (n == "store") return store(a);
    if (n == "dot") return dot(a);
    if (n == "where") {
      auto v = bind(a, qual, {"condition", "x", "y"}, 3);
      return select(*v[0], *v[1], *v[2], p);
    }
    if (n == "maximum" || n == "minimum") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "y", "propagate_nan"}, 2, &w);
      return minmax(n == "maximum" ? OpKind::Max : OpKind::Min, *v[0], *v[1], p, propagateNanArg(v[2] ? &*v[2] : nullptr, w[2], qual));
    }
    if (n == "exp" || n == "exp2" || n == "log" || n == "log2" || n == "sqrt" || n == "rsqrt" || n == "abs" ||
        n == "sigmoid" || n == "sqrt_rn" || n == "sin" || n == "cos") {
      auto v = bind(a, qual, {"x"}, 1);
      return mathUnary(n == "sqrt_rn" ? "sqrt" : n, *v[0], p);
    }
    if (n == "fma") {  // x * y + z rounded once (tile.math fma); f16/bf16 in f32, rounded back
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "y", "z"}, 3, &w);
      return mathCall(qual, *ir::mathFn("fma"), {&*v[0], &*v[1], &*v[2]}, w, p);
    }
    if (n == "add" || n == "sub" || n == "mul") {  // sanitize_overflow is a debug check: integers wrap
      auto v = bind(a, qual, {"x", "y", "sanitize_overflow"}, 2);
      return binary(n == "add" ? "+" : n == "sub" ? "-" : "*", *v[0], *v[1], p);
    }
    if (n == "xor_sum" || n == "reduce_or") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"input", "axis", "keep_dims"}, n == "xor_sum" ? 1 : 2, &w);
      if (!v[0]->isIR() || !v[0]->v->type().elemIsInt() || v[0]->v->type().isI1())
        fail(w[0], qual + " reduces a tensor of integers, got " + describe(*v[0]));
      Args r;
      r.at = p;
      r.pos = {*v[0], v[1] ? *v[1] : Val::none()};
      r.posAt = {w[0], w[1]};
      if (v[2]) r.kw.push_back({"keep_dims", *v[2]}), r.kwAt.push_back(w[2]);
      return reduce(n == "xor_sum" ? "xor" : "or", r);
    }
    if (n == "ravel") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "can_reorder"}, 1, &w);
      if (!v[0]->isIR() || !v[0]->v->type().isTile()) fail(w[0], qual + " flattens a tensor, got " + describe(*v[0]));
      at(p);
      return Val::ir(reshapeTo(v[0]->v, {v[0]->v->type().numel()}, p));
    }
    if (n == "interleave") {  // join(a, b) with its new last axis folded into the one before
      std::vector<Pos> w;
      auto v = bind(a, qual, {"a", "b"}, 2, &w);
      Val j = join(*v[0], *v[1], p);
      auto s = j.v->type().shape;
      if (s.size() == 1) return j;
      s.pop_back();
      s.back() *= 2;
      return Val::ir(reshapeTo(j.v, s, p));
    }
    if (n == "cat") {  // along the first axis, in order (Triton allows any order: can_reorder=True)
      std::vector<Pos> w;
      auto v = bind(a, qual, {"input", "other", "can_reorder"}, 2, &w);
      if (!v[2] || !truthy(*v[2], w[2]))
        fail(p, "tl.cat needs can_reorder=True (Triton's cat may reorder elements and refuses without it)");
      for (int k = 0; k < 2; ++k)
        if (!v[k]->isIR() || !v[k]->v->type().isTile()) fail(w[k], qual + " concatenates tensors, got " + describe(*v[k]));
      if (v[0]->v->type().shape != v[1]->v->type().shape)
        fail(p, qual + " of tensors of shapes " + shapeStr(v[0]->v->type().shape) + " and " + shapeStr(v[1]->v->type().shape) +
                    ": not supported yet (only equal shapes)");
      Val j = join(*v[0], *v[1], p);  // [d0, ..., 2]
      const int64_t rank = j.v->type().rank();
      std::vector<int64_t> order{rank - 1};
      for (int64_t d = 0; d < rank - 1; ++d) order.push_back(d);
      ir::Value* t = permute(j, order, p, qual).v;  // [2, d0, ...]
      auto s = v[0]->v->type().shape;
      s[0] *= 2;
      return Val::ir(reshapeTo(t, s, p));
    }
    if (n == "softmax") {  // as Triton's standard.softmax: exp(x - max) / sum, along dim (0 when None)
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "dim", "keep_dims", "ieee_rounding"}, 1, &w);
      Args r;
      r.at = p;
      r.pos = {*v[0], v[1] && v[1]->k != Val::K::None ? *v[1] : Val::integer(0)};
      r.posAt = {w[0], w[1]};
      if (v[2]) r.kw.push_back({"keep_dims", *v[2]}), r.kwAt.push_back(w[2]);
      Val z = binary("-", *v[0], reduce("max", r, true), p);  // tl.max: f16 computes in f32, so does all that follows
      Val num = mathUnary("exp", z, p);
      r.pos[0] = num;
      return binary("/", num, reduce("sum", r, true), p);
    }
    if (n == "umulhi") {  // the high 32 bits of the unsigned 64-bit product, in the operands' type
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "y"}, 2, &w);
      requireOperand(*v[0], w[0], qual);
      requireOperand(*v[1], w[1], qual);
      Scalar e = joinElem(*v[0], *v[1]);
      if (e != Scalar::I32 && e != Scalar::U32)
        fail(p, qual + " takes 32-bit integers, got " + tritonDtypeName(e),
             ir::isInt(e) && ir::bitWidth(e) == 64 ? "64-bit operands are not supported yet" : "cast the operands to tl.uint32");
      auto shape = broadcastShapes(shapeOfVal(*v[0]), shapeOfVal(*v[1]), p);
      auto wide = [&](const Val& x, Pos at) { return cast(cast(coerce(x, e, shape, at), Scalar::U32, at), Scalar::U64, at); };
      ir::Value* x = wide(*v[0], w[0]);
      ir::Value* y = wide(*v[1], w[1]);
      at(p);
      ir::Value* prod = b_.op1(OpKind::Mul, {x, y}, x->type());
      ir::Value* hi = b_.op1(OpKind::Shr, {prod, b_.constInt(32, x->type())}, x->type());
      return Val::ir(cast(hi, e, p));
    }
    if (n == "fdiv" || n == "div_rn") {
      auto v = bind(a, qual, {"x", "y", "ieee_rounding"}, 2);
      return binary("/", *v[0], *v[1], p);
    }
    if (n == "sum" || n == "max" || n == "min") return reduce(n, a, true);
    if (n == "cumsum" || n == "cumprod") return scan(n, a);
    if (n == "associative_scan") return scan(n, a);
    if (n == "reduce") return reduceFn(a);
    if (n == "sort") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "dim", "descending"}, 1, &w);
      return sort(*v[0], w[0], v[1] ? &*v[1] : nullptr, v[1] ? w[1] : a.at, v[2] && truthy(*v[2], w[2]), qual);
    }
    if (n == "topk") {  // Triton's: the k largest along the last axis, in descending order
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "k", "dim"}, 2, &w);
      return topk(*v[0], w[0], constInt(*v[1], w[1], qual + "'s k"), w[1], v[2] ? &*v[2] : nullptr, v[2] ? w[2] : a.at, qual);
    }
    if (n == "load_tensor_descriptor" || n == "store_tensor_descriptor") {  // tl.load_tensor_descriptor(desc, offsets[, value])
      if (a.pos.empty() || !a.pos[0].isIR() || !a.pos[0].v->type().isDesc())
        fail(a.pos.empty() ? p : a.posAt[0], qual + " needs a tensor descriptor first");
      Args rest = a;
      Val desc = rest.pos.front();
      rest.pos.erase(rest.pos.begin());
      rest.posAt.erase(rest.posAt.begin());
      for (auto& kw : rest.kw)
        if (kw.first == "desc") fail(p, qual + " got the descriptor twice");
      return n == "load_tensor_descriptor" ? descLoad(desc, rest) : descStore(desc, rest);
    }
    if (n == "map_elementwise") {  // the scalar function inlined on whole tiles (its ops are elementwise)
      if (a.pos.empty() || a.pos[0].k != Val::K::Func) fail(a.pos.empty() ? p : a.posAt[0], qual + " needs a @triton.jit function first");
      Args rest = a;
      const Val fn = rest.pos.front();
      rest.pos.erase(rest.pos.begin());
      rest.posAt.erase(rest.posAt.begin());
      for (size_t k = 0; k < rest.kw.size(); ++k)
        if (rest.kw[k].first != "pack") fail(rest.kwAt[k], qual + "() got an unexpected keyword argument '" + rest.kw[k].first + "'");
      rest.kw.clear();
      rest.kwAt.clear();
      std::vector<int64_t> shape;
      for (size_t k = 0; k < rest.pos.size(); ++k) shape = broadcastShapes(shape, shapeOfVal(rest.pos[k]), rest.posAt[k]);
      for (size_t k = 0; k < rest.pos.size(); ++k)
        if (rest.pos[k].isIR() && !shape.empty()) rest.pos[k] = Val::ir(broadcastTo(rest.pos[k].v, shape, rest.posAt[k]));
      return inlineFunc(fn, rest);
    }
    if (n == "gather") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"src", "index", "axis"}, 3, &w);
      return gather(*v[0], w[0], *v[1], w[1], constInt(*v[2], w[2], qual + "'s axis"), w[2], qual);
    }
    if (n == "flip") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"x", "dim"}, 1, &w);
      return flip(*v[0], w[0], v[1] ? &*v[1] : nullptr, v[1] ? w[1] : a.at, qual);
    }
    if (n == "histogram") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"input", "num_bins", "mask"}, 2, &w);
      return histogram(*v[0], w[0], *v[1], w[1], v[2] ? &*v[2] : nullptr, v[2] ? w[2] : a.at, qual);
    }
    if (n == "argmax" || n == "argmin") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"input", "axis", "tie_break_left", "keep_dims"}, 2, &w);
      return argReduce(n == "argmax", *v[0], w[0], *v[1], w[1], !v[2] || truthy(*v[2], w[2]), v[3] && truthy(*v[3], w[3]), qual);
    }
    if (n == "multiple_of" || n == "max_contiguous" || n == "max_constancy") {
      auto v = bind(a, qual, {"input", "values"}, 2);
      return *v[0];
    }
    if (n == "assume") {
      auto v = bind(a, qual, {"cond"}, 1);
      if (v[0]->k == Val::K::IR) recordAssumption(v[0]->v);
      return Val::none();
    }
    if (n == "debug_barrier") {
      bind(a, qual, {}, 0);
      at(p);
      b_.create(OpKind::Barrier, {}, {});
      return Val::none();
    }
    if (n == "static_print") {  // printed while compiling, as Triton does
      std::string text;
      for (size_t k = 0; k < a.pos.size(); ++k) {
        const Val& v = a.pos[k];
        text += (k ? " " : "") + (v.k == Val::K::Str ? v.s : v.k == Val::K::Int ? std::to_string(v.i) : describe(v));
      }
      std::fprintf(stderr, "%s: static_print: %s\n", loc(p).str().c_str(), text.c_str());
      return Val::none();
    }
    if (n == "device_print")
      fail(p, "tl.device_print is not supported: tawa compiles no device printing",
           "remove the call, or guard it with a constexpr flag that is False in this spec");
    if (n == "device_assert") {
      // Compiled only in debug builds: checked for its form; a constant false condition fails now.
      std::vector<Pos> w;
      auto v = bind(a, qual, {"cond", "msg", "mask"}, 1, &w);
      if (!v[0]->isIR() && !truthy(*v[0], w[0])) {
        std::string msg = v[1] && v[1]->k == Val::K::Str ? v[1]->s : "";
        fail(p, "device_assert failed" + (msg.empty() ? std::string() : ": " + msg));
      }
      return Val::none();
    }
    if (n == "static_assert") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"cond", "msg"}, 1, &w);
      if (v[0]->isIR())
        fail(w[0], "tl.static_assert needs a compile-time condition, got a runtime value",
             "use constexpr values, or tl.device_assert for runtime checks");
      if (!truthy(*v[0], w[0])) {
        std::string msg = v[1] && v[1]->k == Val::K::Str ? v[1]->s : "";
        fail(p, "static_assert failed" + (msg.empty() ? std::string() : ": " + msg));
      }
      return Val::none();
    }
    if (n == "trans" || n == "permute") {
      if (a.pos.empty()) fail(p, qual + "() needs a tensor");
      Val x = a.pos[0];
      std::vector<int64_t> dims;
      for (size_t k = 1; k < a.pos.size(); ++k) {
        if (a.pos[k].k == Val::K::Tuple) {
          auto d = a.pos[k].elems;
          for (auto& e : d) dims.push_back(constInt(e, a.posAt[k], qual + "'s dims"));
        } else {
          dims.push_back(constInt(a.pos[k], a.posAt[k], qual + "'s dims"));
        }
      }
      for (size_t k = 0; k < a.kw.size(); ++k) {
        if (a.kw[k].first != "dims") fail(a.kwAt[k], qual + "() got an unexpected keyword argument '" + a.kw[k].first + "'");
        for (auto& e : a.kw[k].second.k == Val::K::Tuple ? a.kw[k].second.elems : std::vector<Val>{a.kw[k].second})
          dims.push_back(constInt(e, a.kwAt[k], qual + "'s dims"));
      }
      if (n == "permute" && dims.empty()) fail(p, "tl.permute needs the new order of the dimensions");
      return permute(x, dims, p, qual);
    }
    if (n == "randint" || n == "randint4x" || n == "rand" || n == "rand4x" || n == "randn" || n == "randn4x") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"seed", "offset", "n_rounds"}, 2, &w);
      int64_t rounds = v[2] && v[2]->k != Val::K::None ? constInt(*v[2], w[2], qual + "'s n_rounds") : 10;
      if (rounds < 1 || rounds > 64) fail(w[2], qual + "'s n_rounds must be 1 to 64, got " + std::to_string(rounds));
      auto c = philox(*v[0], w[0], *v[1], w[1], rounds, p);
      const bool four = n.size() > 2 && n.compare(n.size() - 2, 2, "4x") == 0;
      std::vector<Val> out;
      if (n == "randn" || n == "randn4x") {
        // Box-Muller on pairs of words (Triton's pair_uniform_to_normal): r cos(th), r sin(th) with u1
        // floored at 1e-7, th = 2 pi u2, r = sqrt(-2 log u1).
        for (size_t i = 0; i < (four ? 4u : 2u); i += 2) {
          ir::Value* u1 = uintToUniform(c[i], p);
          ir::Value* u2 = uintToUniform(c[i + 1], p);
          const Type& f = u1->type();
          at(p);
          u1 = b_.op1(OpKind::Max, {b_.constFloat(static_cast<double>(1.0e-7f), f), u1}, f);
          ir::Value* th = b_.op1(OpKind::Mul, {b_.constFloat(static_cast<double>(6.283185307179586f), f), u2}, f);
          ir::Value* r = b_.op1(OpKind::Sqrt, {b_.op1(OpKind::Mul, {b_.constFloat(-2.0, f), b_.op1(OpKind::Log, {u1}, f)}, f)}, f);
          out.push_back(Val::ir(b_.op1(OpKind::Mul, {r, b_.op1(OpKind::Cos, {th}, f)}, f)));
          out.push_back(Val::ir(b_.op1(OpKind::Mul, {r, b_.op1(OpKind::Sin, {th}, f)}, f)));
        }
      } else {
        const bool uniform = n == "rand" || n == "rand4x";
        // randint's words are tl.uint32, as Triton's (its `%`, `>>` and comparisons are unsigned).
        for (size_t i = 0; i < (four ? 4u : 1u); ++i) out.push_back(Val::ir(uniform ? uintToUniform(c[i], p) : cast(c[i], Scalar::U32, p)));
      }
      return four ? Val::tuple(out) : out[0];
    }
    if (n == "join") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"a", "b"}, 2, &w);
      return join(*v[0], *v[1], p);
    }
    if (n == "split") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"a"}, 1, &w);
      return split(*v[0], w[0]);
    }
    if (n == "reshape" || n == "view") {
      if (a.pos.empty()) fail(p, qual + "() needs a tensor");
      Val x = a.pos[0];
      std::vector<int64_t> shape;
      for (size_t k = 1; k < a.pos.size(); ++k) {
        auto s = constShape(a.pos[k], a.posAt[k], qual + "'s shape");
        shape.insert(shape.end(), s.begin(), s.end());
      }
      for (size_t k = 0; k < a.kw.size(); ++k) {
        if (a.kw[k].first == "can_reorder") continue;
        if (a.kw[k].first != "shape") fail(a.kwAt[k], qual + "() got an unexpected keyword argument '" + a.kw[k].first + "'");
        auto s = constShape(a.kw[k].second, a.kwAt[k], qual + "'s shape");
        shape.insert(shape.end(), s.begin(), s.end());
      }
      if (!x.isIR() || !x.v->type().isTile()) fail(p, qual + "() needs a tensor, got " + describe(x));
      const Type& t = x.v->type();
      int64_t numel = 1;
      for (auto d : shape) numel *= d;
      if (numel != t.numel())
        fail(p, "cannot reshape " + shapeStr(t.shape) + " to " + shapeStr(shape) + ": element counts differ");
      if (shape == t.shape) return x;
      at(p);
      return Val::ir(b_.op1(OpKind::Reshape, {x.v}, t.withShape(shape)));
    }
    if (n == "expand_dims") {
      std::vector<Pos> w;
      auto v = bind(a, qual, {"input", "axis"}, 2, &w);
      if (!v[0]->isIR()) fail(p, "tl.expand_dims needs a tensor");
      ir::Value* x = v[0]->v;
      std::vector<int64_t> axes = constShapeAllowZero(*v[1], w[1], "tl.expand_dims's axis");
      int outRank = x->type().rank() + static_cast<int>(axes.size());
      for (auto& ax : axes) {
        if (ax < 0) ax += outRank;
        if (ax < 0 || ax >= outRank) fail(w[1], "tl.expand_dims axis out of range");
      }
      std::sort(axes.begin(), axes.end());
      at(p);
      if (!x->type().isTile()) {
        x = b_.op1(OpKind::Splat, {x}, Type::tileOf({1}, x->type()));
        axes.erase(axes.begin());
      }
      for (auto ax : axes) {
        auto s = x->type().shape;
        s.insert(s.begin() + ax, 1);
        x = b_.op1(OpKind::ExpandDims, {x}, x->type().withShape(s), {{"axis", ax}});
      }
      return Val::ir(x);
    }
    if (n == "broadcast_to") {
      if (a.pos.empty() || !a.pos[0].isIR()) fail(p, "tl.broadcast_to needs a tensor");
      std::vector<int64_t> shape;
      for (size_t k = 1; k < a.pos.size(); ++k) {
        auto s = constShape(a.pos[k], a.posAt[k], "tl.broadcast_to's shape");
        shape.insert(shape.end(), s.begin(), s.end());
      }
      for (size_t k = 0; k < a.kw.size(); ++k) {
        auto s = constShape(a.kw[k].second, a.kwAt[k], "tl.broadcast_to's shape");
        shape.insert(shape.end(), s.begin(), s.end());
      }
      return Val::ir(broadcastTo(a.pos[0].v, shape, p));
    }
    if (n == "broadcast") {
      auto v = bind(a, qual, {"input", "other"}, 2);
      if (!v[0]->isIR() || !v[1]->isIR()) fail(p, "tl.broadcast needs two tensors");
      auto shape = broadcastShapes(shapeOf(v[0]->v->type()), shapeOf(v[1]->v->type()), p);
      return Val::tuple({Val::ir(broadcastTo(v[0]->v, shape, p)), Val::ir(broadcastTo(v[1]->v, shape, p))});
    }
    if (n == "cast") {
      if (a.pos.empty()) fail(p, "tl.cast needs a value");
      Val x = a.pos[0];
      Args rest = a;
      rest.pos.erase(rest.pos.begin());
      rest.posAt.erase(rest.posAt.begin());
      return castCall(x, rest);
    }
    if (n == "make_tensor_descriptor" || n == "_experimental_make_tensor_descriptor") return makeDesc(a);
    if (n == "constexpr") {
      auto v = bind(a, qual, {"value"}, 1);
      return *v[0];
    }
    if (n == "get_int_dtype") {  // triton.language.core's helper (Transformer Engine's permutation kernels call it)
      std::vector<Pos> w;
      auto v = bind(a, qual, {"bitwidth", "signed"}, 2, &w);
      const int64_t bits = constInt(*v[0], w[0], qual + "'s bitwidth");
      if (v[1]->isIR()) fail(w[1], qual + "'s signed must be a compile-time constant");
      const bool sign = truthy(*v[1], w[1]);
      switch (bits) {
        case 1: return Val::dtype(Scalar::I1);
        case 8: return Val::dtype(sign ? Scalar::I8 : Scalar::U8);
        case 16: return Val::dtype(sign ? Scalar::I16 : Scalar::U16);
        case 32: return Val::dtype(sign ? Scalar::I32 : Scalar::U32);
        case 64: return Val::dtype(sign ? Scalar::I64 : Scalar::U64);
        default: fail(w[0], "Unsupported bitwidth " + std::to_string(bits) + " and signedness " + (sign ? "True" : "False"),
                      "Triton's integer types are 1, 8, 16, 32 and 64 bits wide");
      }
    }
    if (n.rfind("atomic_", 0) == 0) return atomic(n.substr(7), qual, a);
    fail(p, qual + ": not supported yet");
  }

  // tl.atomic_add / _max / _min / _and / _or / _xor / _xchg (pointer, val, mask, sem, scope) and
  // tl.atomic_cas (pointer, cmp, val, sem, scope): the old values, scalar or tile. A scalar pointer
  // with a tile of values is broadcast (every element applies to the one address), as in Triton.
  Val atomic(const std::string& kind, const std::string& qual, const Args& a) {
    static const std::set<std::string> kinds = {"add", "max", "min", "and", "or", "xor", "xchg", "cas"};
    Pos p = a.at;
    if (!kinds.count(kind)) fail(p, qual + " is not a Triton atomic", "the atomics are atomic_add, _max, _min, _and, _or, _xor, _xchg and _cas");
    const bool cas = kind == "cas";
    std::vector<Pos> w;
    auto v = cas ? bind(a, qual, {"pointer", "cmp", "val", "sem", "scope"}, 3, &w)
                 : bind(a, qual, {"pointer", "val", "mask", "sem", "scope"}, 2, &w);
    ir::Value* ptr = requirePtr(*v[0], w[0], qual);
    const Scalar elem = ptr->type().scalar;
    if (elem == Scalar::I1 || elem == Scalar::F8E4M3 || elem == Scalar::F8E5M2)
      fail(w[0], qual + " on " + std::string(ir::scalarName(elem)) + " elements: Triton has no such atomic");
    if ((kind == "and" || kind == "or" || kind == "xor") && !ir::isInt(elem))
      fail(w[0], qual + " needs integer elements, the pointer is to " + tritonDtypeName(elem));
    // Operands after the pointer: values, broadcast together with it.
    std::vector<size_t> vals = cas ? std::vector<size_t>{1, 2} : std::vector<size_t>{1};
    std::vector<int64_t> shape = shapeOf(ptr->type());
    for (size_t i : vals) {
      const Val& x = *v[i];
      requireNumbers(x, w[i], qual + "'s " + (i == 1 && cas ? "cmp" : "val"));
      if (x.isIR()) shape = broadcastShapes(shape, shapeOf(x.v->type()), w[i]);
    }
    ptr = broadcastTo(ptr, shape, w[0]);
    std::vector<ir::Value*> ops = {ptr};
    for (size_t i : vals) ops.push_back(coerce(*v[i], elem, shape, w[i]));
    if (!cas && v[2] && v[2]->k != Val::K::None) {
      ir::Value* mask = requireMask(*v[2], w[2], qual);
      auto joint = broadcastShapes(shapeOf(mask->type()), shape, w[2]);
      if (joint != shape) fail(w[2], qual + "'s mask of shape " + shapeStr(shapeOf(mask->type())) + " does not fit the shape " + shapeStr(shape));
      ops.push_back(broadcastTo(mask, shape, w[2]));
    }
    auto word = [&](size_t i, const char* what, const std::string& dflt, const std::set<std::string>& ok) {
      if (!v[i] || v[i]->k == Val::K::None) return dflt;
      if (v[i]->k != Val::K::Str || !ok.count(v[i]->s)) {
        std::string list;
        for (const auto& s : ok) list += (list.empty() ? "" : ", ") + s;
        fail(w[i], qual + "'s " + what + " must be one of " + list + ", got " + describe(*v[i]));
      }
      return v[i]->s;
    };
    const std::string sem = word(3, "sem", "acq_rel", {"relaxed", "acquire", "release", "acq_rel"});
    const std::string scope = word(4, "scope", "gpu", {"cta", "gpu", "sys"});
    at(p);
    ir::Value* r = b_.op1(OpKind::Atomic, ops, ptr->type().withElement(Type::scalarOf(elem)),
                          {{"kind", kind}, {"sem", sem}, {"scope", scope}});
    return Val::ir(r);
  }

  std::vector<int64_t> constShapeAllowZero(const Val& v, Pos p, const std::string& what) {
    std::vector<int64_t> s;
    if (v.k == Val::K::Tuple)
      for (auto& e : v.elems) s.push_back(constInt(e, p, what));
    else
      s.push_back(constInt(v, p, what));
    return s;
  }

  Val dtypeMethod(const Val& d, const std::string& n, const Args& a) {
    if (!a.pos.empty() || !a.kw.empty()) fail(a.at, "dtype." + n + "() takes no arguments");
    Scalar s = d.dt;
    bool ptr = d.dtPtr;
    if (n == "is_ptr") return Val::boolean(ptr);
    if (ptr) return Val::boolean(false);
    if (n == "is_floating") return Val::boolean(ir::isFloat(s));
    if (n == "is_int") return Val::boolean(ir::isInt(s));
    if (n == "is_int_signed") return Val::boolean(ir::isInt(s) && !ir::isUnsigned(s));
    if (n == "is_int_unsigned") return Val::boolean(ir::isUnsigned(s));
    for (Scalar t : {Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64, Scalar::U8, Scalar::U16, Scalar::U32, Scalar::U64})
      if (n == "is_" + tritonDtypeName(t)) return Val::boolean(s == t);
    if (n == "is_fp16") return Val::boolean(s == Scalar::F16);
    if (n == "is_bf16") return Val::boolean(s == Scalar::BF16);
    if (n == "is_fp32") return Val::boolean(s == Scalar::F32);
    if (n == "is_fp64") return Val::boolean(s == Scalar::F64);
    if (n == "is_fp8") return Val::boolean(s == Scalar::F8E4M3 || s == Scalar::F8E5M2);
    if (n == "is_int1") return Val::boolean(s == Scalar::I1);
    fail(a.at, "dtype." + n + "(): not supported yet");
  }

  Val castCall(const Val& x, const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, ".to", {"dtype", "fp_downcast_rounding", "bitcast"}, 1, &w);
    const bool bitcast = v[2] && truthy(*v[2], w[2]);
    // Round-to-nearest-even is what a plain cast does; only the other modes are unsupported.
    if (v[1] && v[1]->k != Val::K::None && !(v[1]->k == Val::K::Str && v[1]->s == "rtne"))
      fail(a.at, "fp_downcast_rounding other than \"rtne\": not supported yet");
    const Val& d = *v[0];
    if (d.k != Val::K::Dtype) fail(a.at, "the target of .to() must be a dtype such as tl.float16, got " + describe(d));
    if (d.dtPtr) {  // a pointer to another element type at the same address (Triton's pointer cast), or
                    // the address held by a 64-bit integer (int_to_ptr: an array of pointers read)
      if (!x.isIR() || !(x.v->type().isPtrLike() || (x.v->type().isData() && ir::holdsAddress(x.v->type().scalar))))
        fail(a.at, "casting " + describe(x) + " to a pointer type: only pointers and 64-bit integers (addresses) convert to pointers",
             x.isIR() && x.v->type().elemIsInt() ? "an address is 64 bits wide: load it as tl.int64 (or convert with .to(tl.int64) first)"
                                                 : "pass the buffer as a pointer argument, or its address as an int64");
      at(a.at);
      return Val::ir(b_.op1(OpKind::Bitcast, {x.v}, x.v->type().withElement(Type::ptrTo(d.dt))));
    }
    if (x.isIR() && x.v->type().isPtrLike()) {  // ptr_to_int: the address as a 64-bit integer
      if (!ir::holdsAddress(d.dt))
        fail(a.at, "casting " + describe(x) + " to " + tritonDtypeName(d.dt) + ": a pointer converts only to a 64-bit integer",
             "write .to(tl.int64), then convert that integer");
      at(a.at);
      return Val::ir(b_.op1(OpKind::Bitcast, {x.v}, x.v->type().withElement(Type::scalarOf(d.dt))));
    }
    if (bitcast) {  // the bits, read as d (a Python number is first the tensor Triton makes of it)
      ir::Value* in = x.isIR() ? x.v : nullptr;
      if (!in) {
        if (!x.isNum()) fail(a.at, ".to() of " + describe(x));
        in = constant(x, defaultScalar(x), {}, a.at);
      }
      const Type& t = in->type();
      if (!t.isData()) fail(a.at, "a bitcast of " + t.str() + ": not supported yet");
      if (t.scalar == d.dt) return Val::ir(in);
      if (ir::bitWidth(t.scalar) != ir::bitWidth(d.dt))
        fail(a.at, "bitcast from " + tritonDtypeName(t.scalar) + " (" + std::to_string(ir::bitWidth(t.scalar)) + " bits) to " +
                       tritonDtypeName(d.dt) + " (" + std::to_string(ir::bitWidth(d.dt)) + " bits): the widths differ",
             "a bitcast keeps the width; convert the value with .to(" + tritonDtypeName(d.dt) + ") instead");
      at(a.at);
      return Val::ir(b_.op1(OpKind::Bitcast, {in}, t.withElement(Type::scalarOf(d.dt))));
    }
    if (!x.isIR()) {
      if (!x.isNum()) fail(a.at, ".to() of " + describe(x));
      return Val::ir(constant(x, d.dt, {}, a.at));
    }
    return Val::ir(cast(x.v, d.dt, a.at));
  }

  Val permute(const Val& x, std::vector<int64_t> dims, Pos p, const std::string& what) {
    if (!x.isIR() || !x.v->type().isTile()) fail(p, what + " needs a tensor, got " + describe(x));
    const Type& t = x.v->type();
    if (dims.empty()) {
      if (t.rank() != 2)
        fail(p, what + " without dimensions transposes a 2-D tensor, but this one has shape " + shapeStr(t.shape),
             "pass the new order, e.g. tl.permute(x, (0, 2, 1))");
      dims = {1, 0};
    }
    if (static_cast<int>(dims.size()) != t.rank())
      fail(p, what + ": the order " + shapeStr(dims) + " does not match rank " + std::to_string(t.rank()));
    auto sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k)
      if (sorted[k] != static_cast<int64_t>(k)) fail(p, what + ": " + shapeStr(dims) + " is not a permutation");
    std::vector<int64_t> s;
    for (auto d : dims) s.push_back(t.shape[d]);
    at(p);
    return Val::ir(b_.op1(OpKind::Permute, {x.v}, t.withShape(s), {{"order", dims}}));
  }

  // libdevice.<leaf>(...) (`from triton.language.extra import libdevice`): the functions with an op
  // of their own, or tile.math with one of ir/MathFns.h.
  Val libdeviceCall(const std::string& leaf, const Args& a) {
    std::string qual = "libdevice." + leaf;
    static const std::set<std::string> own = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "fabs", "abs"};
    if (own.count(leaf)) {
      auto v = bind(a, qual, {"arg0"}, 1);
      return mathUnary(leaf == "fabs" ? "abs" : leaf, *v[0], a.at, qual);
    }
    const ir::MathFn* f = ir::mathFn(leaf);
    if (!f) fail(a.at, qual + ": not supported yet", "tawa has libdevice's exp, exp2, log, log2, sqrt, rsqrt, sin, cos, fabs, " + ir::mathFnNames());
    std::vector<Pos> w;
    auto v = f->arity == 1   ? bind(a, qual, {"arg0"}, 1, &w)
             : f->arity == 2 ? bind(a, qual, {"arg0", "arg1"}, 2, &w)
                             : bind(a, qual, {"arg0", "arg1", "arg2"}, 3, &w);
    std::vector<const Val*> args;
    for (auto& x : v) args.push_back(&*x);
    return mathCall(qual, *f, args, w, a.at);
  }

  // tile.math {fn}: float operands (f16 and bf16 computed in f32 and rounded back, as Triton does),
  // two or three operands broadcast to one shape and type.
  Val mathCall(const std::string& qual, const ir::MathFn& f, const std::vector<const Val*>& v, const std::vector<Pos>& w, Pos p) {
    for (size_t k = 0; k < v.size(); ++k) {
      requireOperand(*v[k], w[k], qual);
      if (v[k]->isIR() && (v[k]->v->type().isPtrLike() || v[k]->v->type().isDesc()))
        fail(w[k], qual + " does not apply to " + v[k]->v->type().str());
    }
    Scalar e = v.size() == 1 ? (v[0]->isIR() ? v[0]->v->type().scalar : Scalar::F32) : joinElem(*v[0], *v[1]);
    if (v.size() > 2) e = v[2]->isIR() ? promote(e, v[2]->v->type().scalar) : weakJoin(*v[2], e, false);
    if (!ir::isFloat(e)) {
      if (std::any_of(v.begin(), v.end(), [](const Val* x) { return x->isIR(); }))
        fail(p, qual + " needs floating-point arguments, got " + std::string(ir::scalarName(e)), "convert first with .to(tl.float32)");
      e = Scalar::F32;
    }
    std::vector<int64_t> shape = shapeOfVal(*v[0]);
    for (size_t k = 1; k < v.size(); ++k) shape = broadcastShapes(shape, shapeOfVal(*v[k]), p);
    const Scalar wide = e == Scalar::F64 ? Scalar::F64 : Scalar::F32;
    std::vector<ir::Value*> ops;
    for (const Val* x : v) {
      ir::Value* y = coerce(*x, e, shape, p);
      ops.push_back(e == wide ? y : cast(y, wide, p));
    }
    at(p);
    ir::Value* r = b_.op1(OpKind::Math, ops, ops[0]->type(), {{"fn", std::string(f.name)}});
    return Val::ir(e == wide ? r : cast(r, e, p));
  }

  // `shown` is the name the messages use: tl.<n> unless the call was spelled otherwise
  // (libdevice.fabs for abs).
  Val mathUnary(const std::string& n, const Val& xv, Pos p, std::string shown = "") {
    if (shown.empty()) shown = "tl." + n;
    ir::Value* x = toIR(xv, p, shown + "'s argument");
    const Type& t = x->type();
    if (t.isPtrLike() || t.isDesc()) fail(p, shown + " does not apply to " + t.str());
    if (n == "abs") {
      at(p);
      return Val::ir(b_.op1(OpKind::Abs, {x}, t));
    }
    if (!ir::isFloat(t.scalar))
      fail(p, shown + " needs a floating-point argument, got " + t.str(), "convert it first with .to(tl.float32)");
    Scalar orig = t.scalar;
    bool widen = orig != Scalar::F32 && orig != Scalar::F64;
    ir::Value* y = widen ? cast(x, Scalar::F32, p) : x;
    at(p);
    const Type& yt = y->type();
    if (n == "sigmoid") {
      ir::Value* neg = b_.op1(OpKind::Neg, {y}, yt);
      ir::Value* e = b_.op1(OpKind::Exp, {neg}, yt);
      ir::Value* one = b_.constFloat(1.0, yt);
      ir::Value* den = b_.op1(OpKind::Add, {one, e}, yt);
      y = b_.op1(OpKind::Div, {one, den}, yt);
    } else {
      OpKind k = n == "exp" ? OpKind::Exp : n == "exp2" ? OpKind::Exp2 : n == "log" ? OpKind::Log
               : n == "log2" ? OpKind::Log2 : n == "sqrt" ? OpKind::Sqrt : n == "sin" ? OpKind::Sin
               : n == "cos" ? OpKind::Cos : OpKind::Rsqrt;
      y = b_.op1(k, {y}, yt);
    }
    return Val::ir(widen ? cast(y, orig, p) : y);
  }

  // ---- Triton's random numbers (triton/language/random.py): Philox 4x32 with n_rounds rounds on the
  // counter (offset's low 32 bits, its high 32 bits, 0, 0) and the key (seed's low and high 32 bits),
  // in i32/i64 IR arithmetic that wraps as the uint32 arithmetic it stands for.
  std::array<ir::Value*, 4> philox(const Val& seedV, Pos seedAt, const Val& offV, Pos offAt, int64_t rounds, Pos p) {
    ir::Value* off = toIR(offV, offAt, "the random offset");
    if (!off->type().elemIsInt() || (off->type().scalar != Scalar::I32 && off->type().scalar != Scalar::I64))
      fail(offAt, "the random offsets must be i32 or i64 integers, got " + off->type().str());
    ir::Value* seed = toIR(seedV, seedAt, "the random seed");
    if (!seed->type().isScalar() || !seed->type().elemIsInt())
      fail(seedAt, "the random seed must be an integer scalar, got " + seed->type().str());
    const Type i32 = off->type().withElement(Type::scalarOf(Scalar::I32));
    const Type i64 = off->type().withElement(Type::scalarOf(Scalar::I64));
    const Type s32 = Type::scalarOf(Scalar::I32), s64 = Type::scalarOf(Scalar::I64);
    at(p);
    ir::Value* seed64 = cast(seed, Scalar::I64, p);
    ir::Value* k0 = b_.op1(OpKind::Cast, {seed64}, s32);
    ir::Value* k1 = b_.op1(OpKind::Cast, {b_.op1(OpKind::Shr, {seed64, b_.constInt(32, s64)}, s64)}, s32);
    ir::Value* c0 = off->type().scalar == Scalar::I32 ? off : b_.op1(OpKind::Cast, {off}, i32);
    ir::Value* c1 = off->type().scalar == Scalar::I32 ? b_.constInt(0, i32)
                                                      : b_.op1(OpKind::Cast, {b_.op1(OpKind::Shr, {off, b_.constInt(32, i64)}, i64)}, i32);
    ir::Value* c2 = b_.constInt(0, i32);
    ir::Value* c3 = b_.constInt(0, i32);
    auto u32 = [](uint32_t x) { return static_cast<int64_t>(static_cast<int32_t>(x)); };
    ir::Value* mask = b_.constInt(0xffffffffLL, i64);
    // The high 32 bits of the unsigned product of a 32-bit constant and x.
    auto mulhi = [&](uint32_t m, ir::Value* x) {
      ir::Value* x64 = b_.op1(OpKind::And, {b_.op1(OpKind::Cast, {x}, i64), mask}, i64);
      ir::Value* prod = b_.op1(OpKind::Mul, {x64, b_.constInt(static_cast<int64_t>(m), i64)}, i64);
      ir::Value* hi = b_.op1(OpKind::And, {b_.op1(OpKind::Shr, {prod, b_.constInt(32, i64)}, i64), mask}, i64);
      return b_.op1(OpKind::Cast, {hi}, i32);
    };
    auto splat = [&](ir::Value* k) { return i32.isScalar() ? k : b_.op1(OpKind::Splat, {k}, i32); };
    constexpr uint32_t kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u, kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;
    for (int64_t r = 0; r < rounds; ++r) {
      ir::Value* n0 = b_.op1(OpKind::Xor, {b_.op1(OpKind::Xor, {mulhi(kRoundB, c2), c1}, i32), splat(k0)}, i32);
      ir::Value* n2 = b_.op1(OpKind::Xor, {b_.op1(OpKind::Xor, {mulhi(kRoundA, c0), c3}, i32), splat(k1)}, i32);
      ir::Value* n1 = b_.op1(OpKind::Mul, {c2, b_.constInt(u32(kRoundB), i32)}, i32);
      ir::Value* n3 = b_.op1(OpKind::Mul, {c0, b_.constInt(u32(kRoundA), i32)}, i32);
      c0 = n0, c1 = n1, c2 = n2, c3 = n3;
      k0 = b_.op1(OpKind::Add, {k0, b_.constInt(u32(kKeyA), s32)}, s32);
      k1 = b_.op1(OpKind::Add, {k1, b_.constInt(u32(kKeyB), s32)}, s32);
    }
    return {c0, c1, c2, c3};
  }
  // Triton's uint_to_uniform_float for 32 bits: x as int32, ~x where negative, times 4.6566127342e-10
  // in f32: a float in [0, 1).
  ir::Value* uintToUniform(ir::Value* x, Pos p) {
    at(p);
    const Type& t = x->type();
    ir::Value* neg = b_.op1(OpKind::Cmp, {x, b_.constInt(0, t)}, t.withElement(Type::scalarOf(Scalar::I1)), {{"pred", std::string("lt")}});
    ir::Value* y = b_.op1(OpKind::Select, {neg, b_.op1(OpKind::Not, {x}, t), x}, t);
    const Type f = t.withElement(Type::scalarOf(Scalar::F32));
    return b_.op1(OpKind::Mul, {b_.op1(OpKind::Cast, {y}, f), b_.constFloat(static_cast<double>(4.6566127342e-10f), f)}, f);
  }

  // A tile [1, ..., 1, 2] (rank dims) that is true in its first entry along the last axis: which half
  // of a joined pair an element is.
  ir::Value* firstOfPair(size_t rank, Pos p) {
    at(p);
    ir::Value* idx = indexAlong(2, rank - 1, rank);
    ir::Value* zero = b_.constInt(0, idx->type());
    return b_.op1(OpKind::Cmp, {idx, zero}, Type::tileOf(idx->type().shape, Type::scalarOf(Scalar::I1)), {{"pred", std::string("eq")}});
  }

  // 0 .. n-1 (i32) along axis d of a rank-`rank` tile of shape [1, .., n, .., 1], made by expand_dims
  // (as `rm[:, None]` writes it, which block-access models).
  ir::Value* indexAlong(int64_t n, size_t d, size_t rank) {
    ir::Value* idx = b_.op1(OpKind::Arange, {}, Type::tileOf({n}, Type::scalarOf(Scalar::I32)), {{"start", int64_t{0}}, {"end", n}});
    std::vector<int64_t> shape{n};
    for (size_t j = 0; j < d; ++j) {
      shape.insert(shape.begin(), 1);
      idx = b_.op1(OpKind::ExpandDims, {idx}, idx->type().withShape(shape), {{"axis", int64_t{0}}});
    }
    for (size_t j = d + 1; j < rank; ++j) {
      shape.push_back(1);
      idx = b_.op1(OpKind::ExpandDims, {idx}, idx->type().withShape(shape), {{"axis", static_cast<int64_t>(shape.size() - 1)}});
    }
    return idx;
  }

  // A reduction's result r (axis ax gone) with that axis back as 1: shape `kept`.
  ir::Value* withAxisBack(ir::Value* r, int64_t ax, const std::vector<int64_t>& kept) {
    if (!r->type().isTile()) return b_.op1(OpKind::Splat, {r}, Type::tileOf(kept, r->type()));
    return b_.op1(OpKind::ExpandDims, {r}, r->type().withShape(kept), {{"axis", ax}});
  }

  // tl.join(a, b): the two tensors (broadcast to one shape) side by side along a new last axis of 2;
  // built from expand_dims and a select, element for element exact.
  Val join(const Val& a, const Val& b, Pos p) {
    if (!a.isIR() || !b.isIR() || !a.v->type().isTile() || !b.v->type().isTile())
      fail(p, "tl.join joins two tensors, got " + describe(a) + " and " + describe(b));
    std::vector<int64_t> shape = broadcastShapes(a.v->type().shape, b.v->type().shape, p);
    auto widen = [&](const Val& x) {
      ir::Value* t = broadcastTo(x.v, shape, p);
      auto s = shape;
      s.push_back(1);
      at(p);
      return Val::ir(b_.op1(OpKind::ExpandDims, {t}, t->type().withShape(s), {{"axis", static_cast<int64_t>(shape.size())}}));
    };
    return select(Val::ir(firstOfPair(shape.size() + 1, p)), widen(a), widen(b), p);
  }

  // tl.split(x): x's last axis must be 2; its two halves, each with that axis gone: a tile.slice of
  // one element along it, reshaped (canonicalize turns Triton's epilogue subtiling, a reshape and a
  // permute before the split, into column slices of the accumulator).
  Val split(const Val& x, Pos p) {
    if (!x.isIR() || !x.v->type().isTile() || x.v->type().shape.back() != 2 || x.v->type().isPtrLike())
      fail(p, "tl.split needs a tensor of numbers whose last dimension is 2, got " + describe(x));
    const Type& t = x.v->type();
    const auto last = static_cast<int64_t>(t.shape.size() - 1);
    std::vector<int64_t> one = t.shape, rest(t.shape.begin(), t.shape.end() - 1);
    one.back() = 1;
    at(p);
    std::vector<Val> halves;
    for (int64_t h = 0; h < 2; ++h) {
      ir::Value* s = b_.op1(OpKind::Slice, {x.v}, t.withShape(one), {{"axis", last}, {"start", h}});
      halves.push_back(Val::ir(b_.op1(OpKind::Reshape, {s}, t.withShape(rest))));
    }
    return Val::tuple(halves);
  }

  // tl.sum / tl.max / tl.min (`standard`: as Triton's standard library writes them, max and min of
  // floats and integers narrower than 32 bits computed in f32 / i32), and the kinds tl.reduce maps to.
  Val reduce(const std::string& n, const Args& a, bool standard = false) {
    std::string qual = "tl." + n;
    std::vector<Pos> w;
    // Triton 3.6's signatures: sum(input, axis, keep_dims, dtype); max and min(input, axis,
    // return_indices, return_indices_tie_break_left, keep_dims).
    const bool isSum = n == "sum";
    std::vector<std::string> params = isSum ? std::vector<std::string>{"input", "axis", "keep_dims", "dtype"}
                                            : std::vector<std::string>{"input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"};
    auto v = bind(a, qual, params, 1, &w);
    const size_t kd = isSum ? 2 : 4;  // keep_dims
    Pos p = a.at;
    if (!v[0]->isIR() || !v[0]->v->type().isTile())
      fail(w[0], qual + " reduces a tensor, got " + describe(*v[0]));
    ir::Value* x = v[0]->v;
    if (x->type().isPtrLike()) fail(w[0], qual + " of pointers is not allowed");
    if (!isSum && v[2] && truthy(*v[2], w[2])) {
      // (values, indices): the reduction and its arg-reduction (the first index of the extreme:
      // tie_break_left's, and one of those tie_break_left=False allows).
      if (!v[1] || v[1]->k == Val::K::None) fail(p, qual + "(..., return_indices=True) needs an axis");
      bool keepDims = v[kd] && truthy(*v[kd], w[kd]);
      Args plain;
      plain.at = a.at;
      plain.pos = {*v[0], *v[1]};
      plain.posAt = {w[0], w[1]};
      if (v[kd]) plain.kw.push_back({"keep_dims", *v[kd]}), plain.kwAt.push_back(w[kd]);
      Val values = reduce(n, plain);
      return Val::tuple({values, argReduce(n == "max", *v[0], w[0], *v[1], w[1], true, keepDims, qual)});
    }
    bool keep = v[kd] && truthy(*v[kd], w[kd]);
    Scalar e = x->type().scalar;
    if (standard && (n == "max" || n == "min") && e != Scalar::I1 && ir::bitWidth(e) < 32)
      e = ir::isFloat(e) ? Scalar::F32 : Scalar::I32;
    if (n == "sum") {
      if (v[3] && v[3]->k != Val::K::None) {
        if (v[3]->k != Val::K::Dtype) fail(w[3], "tl.sum's dtype must be a dtype");
        e = v[3]->dt;
      } else if (ir::isInt(e) && ir::bitWidth(e) < 32) {
        e = ir::isUnsigned(e) ? Scalar::U32 : Scalar::I32;  // Triton's _pick_sum_dtype
      }
    }
    x = cast(x, e, p);
    at(p);
    std::string kind = n;
    auto origShape = x->type().shape;
    if (!v[1] || v[1]->k == Val::K::None) {
      int64_t total = x->type().numel();
      if (x->type().rank() != 1) x = b_.op1(OpKind::Reshape, {x}, x->type().withShape({total}));
      ir::Value* r = b_.op1(OpKind::Reduce, {x}, x->type().withShape({}), {{"kind", kind}, {"axis", int64_t{0}}});
      if (keep) {
        std::vector<int64_t> ones(origShape.size(), 1);
        r = b_.op1(OpKind::Splat, {r}, Type::tileOf(ones, r->type()));
      }
      return Val::ir(r);
    }
    int64_t ax = constInt(*v[1], w[1], qual + "'s axis");
    int rank = x->type().rank();
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank)
      fail(w[1], qual + "'s axis " + std::to_string(ax) + " is out of range for a tensor of shape " + shapeStr(origShape));
    auto s = origShape;
    s.erase(s.begin() + ax);
    ir::Value* r = b_.op1(OpKind::Reduce, {x}, x->type().withShape(s), {{"kind", kind}, {"axis", ax}});
    if (keep) {
      auto k = s;
      k.insert(k.begin() + ax, 1);
      r = withAxisBack(r, ax, k);
    }
    return Val::ir(r);
  }

  // tl.argmax / tl.argmin along an axis: the index of the first (tie_break_left) or last extreme,
  // as i32. A NaN counts as the extreme, as in Triton's combine (the first NaN's index). Built from
  // two reductions: the extreme, then the least (or greatest) index holding it.
  Val argReduce(bool isMax, const Val& in, Pos inAt, const Val& axisV, Pos axisAt, bool left, bool keepDims, const std::string& qual) {
    if (!in.isIR() || !in.v->type().isTile() || in.v->type().isPtrLike())
      fail(inAt, qual + " reduces a tensor of numbers, got " + describe(in));
    ir::Value* x = in.v;
    const Type& t = x->type();
    if (axisV.k == Val::K::None) fail(axisAt, qual + " needs an axis");
    int64_t ax = constInt(axisV, axisAt, qual + "'s axis");
    const int64_t rank = t.rank();
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) fail(axisAt, qual + "'s axis is out of range for a tensor of shape " + shapeStr(t.shape));
    if (t.scalar == Scalar::I1) x = cast(x, Scalar::I32, inAt);
    const Type& xt = x->type();
    at(inAt);
    auto kept = xt.shape;
    kept[static_cast<size_t>(ax)] = 1;
    auto s = xt.shape;
    s.erase(s.begin() + ax);
    ir::Value* ext = b_.op1(OpKind::Reduce, {x}, xt.withShape(s), {{"kind", std::string(isMax ? "max" : "min")}, {"axis", ax}, {"propagate_nan", int64_t{1}}});
    ir::Value* extB = s.empty() ? b_.op1(OpKind::Splat, {ext}, Type::tileOf(xt.shape, ext->type()))
                                : broadcastTo(withAxisBack(ext, ax, kept), xt.shape, inAt);
    const Type boolT = Type::tileOf(xt.shape, Type::scalarOf(Scalar::I1));
    ir::Value* hit = b_.op1(OpKind::Cmp, {x, extB}, boolT, {{"pred", std::string("eq")}});
    if (ir::isFloat(xt.scalar)) {
      ir::Value* xNan = b_.op1(OpKind::Cmp, {x, x}, boolT, {{"pred", std::string("ne")}});
      ir::Value* eNan = b_.op1(OpKind::Cmp, {extB, extB}, boolT, {{"pred", std::string("ne")}});
      hit = b_.op1(OpKind::Or, {hit, b_.op1(OpKind::And, {xNan, eNan}, boolT)}, boolT);
    }
    const int64_t n = xt.shape[static_cast<size_t>(ax)];
    ir::Value* idx = broadcastTo(indexAlong(n, static_cast<size_t>(ax), static_cast<size_t>(rank)), xt.shape, inAt);
    const Type it = Type::tileOf(xt.shape, Type::scalarOf(Scalar::I32));
    ir::Value* none = b_.constInt(left ? n : -1, it);
    ir::Value* cand = b_.op1(OpKind::Select, {hit, idx, none}, it);
    ir::Value* r = b_.op1(OpKind::Reduce, {cand}, it.withShape(s), {{"kind", std::string(left ? "min" : "max")}, {"axis", ax}});
    if (keepDims) r = withAxisBack(r, ax, kept);
    return Val::ir(r);
  }

  // tl.flip(x, dim=None): x reversed along dim (the last when None; its length a power of two, as
  // Triton requires). Element i of the result is the maximum over j of select(i + j == n - 1, x[j],
  // lowest): the one element chosen, exactly (-0.0, infinities and NaN included), from ops every
  // backend has.
  Val flip(const Val& in, Pos inAt, const Val* dimV, Pos dimAt, const std::string& qual) {
    bool isBool = false;
    ir::Value* x = numbers(in, inAt, qual + " flips", isBool);
    const Type& t = x->type();
    const int64_t rank = t.rank(), d = dimArg(t, dimV, dimAt, qual);
    const int64_t n = t.shape[static_cast<size_t>(d)];
    if (n & (n - 1)) fail(inAt, qual + " flips a dimension whose length is a power of two, got " + std::to_string(n));
    at(inAt);
    ir::Value* xb = spread(x, d, n, inAt);  // [..., i, j, ...]: the original dimension moves to d + 1
    const auto wide = xb->type().shape;
    ir::Value* i = broadcastTo(indexAlong(n, static_cast<size_t>(d), static_cast<size_t>(rank + 1)), wide, inAt);
    ir::Value* j = broadcastTo(indexAlong(n, static_cast<size_t>(d + 1), static_cast<size_t>(rank + 1)), wide, inAt);
    const Type it = Type::tileOf(wide, Type::scalarOf(Scalar::I32));
    ir::Value* sum = b_.op1(OpKind::Add, {i, j}, it);
    ir::Value* pick = b_.op1(OpKind::Cmp, {sum, b_.constInt(n - 1, it)}, Type::tileOf(wide, Type::scalarOf(Scalar::I1)),
                             {{"pred", std::string("eq")}});
    ir::Value* r = pickAlong(pick, xb, d + 1, inAt);
    return Val::ir(isBool ? cast(r, Scalar::I1, inAt) : r);
  }

  // The dimension a tl.flip / tl.sort works along: dim (None: the last), negative from the end.
  int64_t dimArg(const Type& t, const Val* dimV, Pos dimAt, const std::string& qual) {
    const int64_t rank = t.rank();
    int64_t d = rank - 1;
    if (dimV && dimV->k != Val::K::None) d = constInt(*dimV, dimAt, qual + "'s dim");
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) fail(dimAt, qual + "'s dim is out of range for a tensor of shape " + shapeStr(t.shape));
    return d;
  }
  // The tensor of numbers a flip or sort reorders (`what`: "tl.flip flips"), booleans as i32 (`isBool`
  // says so, for the cast back).
  ir::Value* numbers(const Val& in, Pos inAt, const std::string& what, bool& isBool) {
    if (!in.isIR() || !in.v->type().isTile() || in.v->type().isPtrLike()) fail(inAt, what + " a tensor of numbers, got " + describe(in));
    isBool = in.v->type().scalar == Scalar::I1;
    return isBool ? cast(in.v, Scalar::I32, inAt) : in.v;
  }
  // x with a new axis of n inserted at `at` and broadcast along it.
  ir::Value* spread(ir::Value* x, int64_t at, int64_t n, Pos p) {
    auto one = x->type().shape, wide = x->type().shape;
    one.insert(one.begin() + at, 1);
    wide.insert(wide.begin() + at, n);
    return broadcastTo(b_.op1(OpKind::ExpandDims, {x}, x->type().withShape(one), {{"axis", at}}), wide, p);
  }
  // The lowest value of t's element type (-inf for floats, 0 for unsigned integers), as a tile of t's
  // shape: what a select keeps out of a max.
  ir::Value* lowestOf(const Type& t) {
    if (ir::isFloat(t.scalar)) return b_.constFloat(-std::numeric_limits<double>::infinity(), t);
    if (ir::isUnsigned(t.scalar)) return b_.constInt(0, t);
    const int bits = ir::bitWidth(t.scalar);
    return b_.constInt(bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)), t);
  }
  // The one element of each line along `axis` of x where `mask` (broadcast to x) holds, picked by a
  // select against the lowest value and a NaN-keeping max: exact, -0, infinities and NaN included.
  // How flip, sort, gather, topk and the scans' carries pick.
  ir::Value* pickAlong(ir::Value* mask, ir::Value* x, int64_t axis, Pos p) {
    const Type& t = x->type();
    mask = broadcastTo(mask, t.shape, p);
    at(p);
    ir::Value* low = lowestOf(t);
    ir::Value* kept = b_.op1(OpKind::Select, {mask, x, low}, t);
    auto s = t.shape;
    s.erase(s.begin() + axis);
    return b_.op1(OpKind::Reduce, {kept}, t.withShape(s), {{"kind", std::string("max")}, {"axis", axis}, {"propagate_nan", int64_t{1}}});
  }

  // tl.sort(x, dim=None, descending=False): each element's rank along dim is the count of elements
  // before it in the order (smaller, or larger when descending; equal ones by position), and element i
  // of the result is the one of rank i, chosen by a max over a select as in flip (exact). O(n^2) in
  // the length of dim; NaN elements are not ordered.
  // Element [.., j] of the result is src's element [.., index[.., j], ..] along `axis` (the other
  // dimensions of src and index equal): a comparison of each index with every position, a select
  // against the type's lowest value and a max, as flip and sort pick elements (exact; O(n m) per row).
  Val gather(const Val& srcV, Pos srcAt, const Val& idxV, Pos idxAt, int64_t axis, Pos axisAt, const std::string& qual) {
    if (!srcV.isIR() || !srcV.v->type().isTile() || srcV.v->type().isPtrLike())
      fail(srcAt, qual + " gathers from a tensor of numbers, got " + describe(srcV));
    if (!idxV.isIR() || !idxV.v->type().isTile() || !idxV.v->type().elemIsInt() || idxV.v->type().isI1())
      fail(idxAt, qual + "'s index must be a tensor of integers, got " + describe(idxV));
    const Type &st = srcV.v->type(), &it = idxV.v->type();
    const int64_t rank = st.rank();
    if (it.rank() != rank) fail(idxAt, qual + "'s index must have the source's rank " + std::to_string(rank) + ", got " + it.str());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) fail(axisAt, qual + "'s axis is out of range for a tensor of shape " + shapeStr(st.shape));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && st.shape[static_cast<size_t>(d)] != it.shape[static_cast<size_t>(d)])
        fail(idxAt, qual + "'s index has shape " + shapeStr(it.shape) + " but the source " + shapeStr(st.shape) +
                        ": they must agree except along the axis");
    Pack s{{st.scalar == Scalar::I1 ? cast(srcV.v, Scalar::I8, srcAt) : srcV.v}, {st.scalar}};
    Pack ix{{idxV.v}, {it.scalar}};
    Flat fs, fi;
    ir::Value* src = flatten(s, axis, fs, srcAt).v[0];  // [B, n]
    ir::Value* idx = flatten(ix, axis, fi, idxAt).v[0];  // [B, m]
    const int64_t B = src->type().shape[0], n = src->type().shape[1], m = idx->type().shape[1];
    at(idxAt);
    auto widen = [&](ir::Value* x, int64_t ax) {
      auto one = x->type().shape;
      one.insert(one.begin() + ax, 1);
      return broadcastTo(b_.op1(OpKind::ExpandDims, {x}, x->type().withShape(one), {{"axis", ax}}), {B, m, n}, idxAt);
    };
    ir::Value* s3 = widen(src, 1);
    ir::Value* i3 = widen(idx, 2);
    ir::Value* pos = broadcastTo(cast(indexAlong(n, 2, 3), it.scalar, idxAt), {B, m, n}, idxAt);
    ir::Value* hit = b_.op1(OpKind::Cmp, {i3, pos}, i3->type().withElement(Type::scalarOf(Scalar::I1)), {{"pred", std::string("eq")}});
    return Val::ir(unflatten(pickAlong(hit, s3, 2, idxAt), fi, st.scalar, idxAt));
  }

  Val topk(const Val& in, Pos inAt, int64_t k, Pos kAt, const Val* dimV, Pos dimAt, const std::string& qual) {
    if (!in.isIR() || !in.v->type().isTile()) fail(inAt, qual + " needs a tensor, got " + describe(in));
    const auto shape = in.v->type().shape;
    const int64_t rank = static_cast<int64_t>(shape.size()), n = shape.back();
    if (dimV && dimV->k != Val::K::None) {
      int64_t d = constInt(*dimV, dimAt, qual + "'s dim");
      if (d != rank - 1 && d != -1) fail(dimAt, qual + " works along the last dimension only (as Triton's)");
    }
    if (k < 1 || k > n || (k & (k - 1))) fail(kAt, qual + "'s k must be a power of two from 1 to " + std::to_string(n) + ", got " + std::to_string(k));
    Val sorted = sort(in, inAt, nullptr, dimAt, true, qual);
    ir::Value* x = sorted.v;
    const Scalar orig = x->type().scalar;
    if (orig == Scalar::I1) x = cast(x, Scalar::I8, inAt);
    const int64_t B = x->type().numel() / n;
    x = reshapeTo(x, {B, n / k, k}, inAt);  // the first group of k is the top k
    at(inAt);
    ir::Value* first = b_.op1(OpKind::Cmp, {indexAlong(n / k, 1, 3), b_.constInt(0, Type::tileOf({1, n / k, 1}, Type::scalarOf(Scalar::I32)))},
                              Type::tileOf({1, n / k, 1}, Type::scalarOf(Scalar::I1)), {{"pred", std::string("eq")}});
    ir::Value* r = pickAlong(first, x, 1, inAt);
    auto out = shape;
    out.back() = k;
    return Val::ir(cast(reshapeTo(r, out, inAt), orig, inAt));
  }

  Val sort(const Val& in, Pos inAt, const Val* dimV, Pos dimAt, bool descending, const std::string& qual) {
    bool isBool = false;
    ir::Value* x = numbers(in, inAt, qual + " sorts", isBool);
    const Type& t = x->type();
    const int64_t d = dimArg(t, dimV, dimAt, qual), rank = t.rank(), n = t.shape[static_cast<size_t>(d)];
    if (n > 1024) fail(inAt, qual + " sorts along dimensions of at most 1024 elements, got " + std::to_string(n),
                       "tawa's sort compares every pair of elements");
    at(inAt);
    // Wide dims (..., j at d, k at d + 1, ...): element j's comparisons with every k.
    ir::Value* xj = spread(x, d + 1, n, inAt);
    ir::Value* xk = spread(x, d, n, inAt);
    const auto wide = xj->type().shape;
    const Type bt = Type::tileOf(wide, Type::scalarOf(Scalar::I1));
    ir::Value* jj = broadcastTo(indexAlong(n, static_cast<size_t>(d), static_cast<size_t>(rank + 1)), wide, inAt);
    ir::Value* kk = broadcastTo(indexAlong(n, static_cast<size_t>(d + 1), static_cast<size_t>(rank + 1)), wide, inAt);
    ir::Value* first = b_.op1(OpKind::Cmp, {xk, xj}, bt, {{"pred", std::string(descending ? "gt" : "lt")}});
    ir::Value* tie = b_.op1(OpKind::And, {b_.op1(OpKind::Cmp, {xk, xj}, bt, {{"pred", std::string("eq")}}),
                                          b_.op1(OpKind::Cmp, {kk, jj}, bt, {{"pred", std::string("lt")}})},
                            bt);
    ir::Value* before = cast(b_.op1(OpKind::Or, {first, tie}, bt), Scalar::I32, inAt);
    ir::Value* rankOf = b_.op1(OpKind::Reduce, {before}, t.withElement(Type::scalarOf(Scalar::I32)),
                               {{"kind", std::string("sum")}, {"axis", d + 1}});
    // Wide dims (..., i at d, j at d + 1, ...): result i takes the element j of rank i.
    ir::Value* rj = spread(rankOf, d, n, inAt);
    ir::Value* ii = broadcastTo(indexAlong(n, static_cast<size_t>(d), static_cast<size_t>(rank + 1)), wide, inAt);
    ir::Value* pick = b_.op1(OpKind::Cmp, {rj, ii}, bt, {{"pred", std::string("eq")}});
    ir::Value* r = pickAlong(pick, spread(x, d, n, inAt), d + 1, inAt);
    return Val::ir(isBool ? cast(r, Scalar::I1, inAt) : r);
  }

  // tl.histogram(input, num_bins, mask=None): the count of input elements equal to each of 0 .. num_bins - 1
  // (others are counted nowhere), as i32. Built from a comparison of the input against the bins (an
  // N x num_bins tile) summed along the input's axis.
  Val histogram(const Val& in, Pos inAt, const Val& binsV, Pos binsAt, const Val* mask, Pos maskAt, const std::string& qual) {
    if (!in.isIR() || !in.v->type().isTile() || in.v->type().rank() != 1 || !in.v->type().elemIsInt() ||
        in.v->type().scalar == Scalar::I1)
      fail(inAt, qual + " counts the values of a 1-D tensor of integers, got " + describe(in));
    const int64_t bins = constInt(binsV, binsAt, qual + "'s num_bins");
    if (bins < 1 || bins > 4096) fail(binsAt, qual + "'s num_bins must be 1 to 4096, got " + std::to_string(bins));
    ir::Value* x = cast(in.v, Scalar::I32, inAt);
    const int64_t n = x->type().shape[0];
    at(inAt);
    const std::vector<int64_t> shape{n, bins};
    ir::Value* col = spread(x, 1, bins, inAt);
    ir::Value* bin = broadcastTo(indexAlong(bins, 1, 2), shape, inAt);
    const Type boolT = Type::tileOf(shape, Type::scalarOf(Scalar::I1));
    ir::Value* hit = b_.op1(OpKind::Cmp, {col, bin}, boolT, {{"pred", std::string("eq")}});
    if (mask && mask->k != Val::K::None) {
      if (!mask->isIR() || !mask->v->type().isTile() || mask->v->type().shape != std::vector<int64_t>{n} ||
          mask->v->type().scalar != Scalar::I1)
        fail(maskAt, qual + "'s mask must be a tensor of booleans shaped like the input (" + std::to_string(n) + "), got " +
                         describe(*mask));
      hit = b_.op1(OpKind::And, {hit, spread(mask->v, 1, bins, maskAt)}, boolT);
    }
    ir::Value* ones = cast(hit, Scalar::I32, inAt);
    return Val::ir(b_.op1(OpKind::Reduce, {ones}, Type::tileOf({bins}, Type::scalarOf(Scalar::I32)),
                          {{"kind", std::string("sum")}, {"axis", int64_t{0}}}));
  }

  // The kind of a combine function (tl.reduce, tl.associative_scan): inlined on two fresh scalars in a
  // scratch block, one op of the two: + (sum), * (prod), tl.maximum / tl.minimum or a select of their
  // comparison (max, min), bitwise ones; "" for any other function or one over tuples.
  std::string combineKind(const Val& fn, Pos fnAt, Scalar elem, const std::string& qual) {
    if (fn.k != Val::K::Func) fail(fnAt, qual + "'s combine_fn must be a @triton.jit function, got " + describe(fn));
    ir::Block scratch;
    ir::Value* x = scratch.addArg(Type::scalarOf(elem), "a");
    ir::Value* y = scratch.addArg(Type::scalarOf(elem), "b");
    ir::Builder saved = b_;
    b_.setInsertionPointToEnd(&scratch);
    Args args;
    args.pos = {Val::ir(x), Val::ir(y)};
    args.posAt = {fnAt, fnAt};
    args.at = fnAt;
    Val r = inlineFunc(fn, args);
    b_ = saved;
    if (r.k == Val::K::Tuple) return "";
    const ir::Op* d = r.isIR() ? r.v->definingOp() : nullptr;
    auto pair = [&](const ir::Op* o, size_t i, size_t j) {
      return (o->operand(i) == x && o->operand(j) == y) || (o->operand(i) == y && o->operand(j) == x);
    };
    if (d && d->numOperands() == 2 && pair(d, 0, 1) && !ir::propagatesNan(*d)) {
      switch (d->kind()) {
        case OpKind::Add: return "sum";
        case OpKind::Mul: return "prod";
        case OpKind::Max: return "max";
        case OpKind::Min: return "min";
        case OpKind::And: return "and";
        case OpKind::Or: return "or";
        case OpKind::Xor: return "xor";
        default: break;
      }
    }
    if (d && d->kind() == OpKind::Select && !ir::isFloat(elem)) {  // tl.where(a > b, a, b) and its relatives (floats: NaN rules differ)
      const ir::Op* c = d->operand(0)->definingOp();
      if (c && c->kind() == OpKind::Cmp && pair(c, 0, 1) && pair(d, 1, 2)) {
        const std::string& pr = c->strAttr("pred");
        const bool firstWins = d->operand(1) == c->operand(0);  // where(p(u, v), u, v)
        if (pr == "gt" || pr == "ge") return firstWins ? "max" : "min";
        if (pr == "lt" || pr == "le") return firstWins ? "min" : "max";
      }
    }
    return "";  // another function: the general combination (generalReduce, generalScan)
  }

  // tl.reduce(input, axis, combine_fn, keep_dims=False)
  // ---- general reductions and scans: any associative @triton.jit combine function, over one tensor or
  // a tuple of tensors of one shape (Triton's tl.reduce / tl.associative_scan with tuples), built from
  // reshapes, permutes, split/join (select and max) and the combine function inlined on whole tiles.
  // The axis is moved last and the other axes flattened into a batch: tiles [B, n], n a power of two.
  // Elements combine in order (x0 . x1 . ... ), so the function need not commute.
  struct Pack {
    std::vector<ir::Value*> v;  // the members, one shape
    std::vector<Scalar> orig;   // their element types as given (i1 is carried as i8)
  };

  // The tensors of a tl.reduce / tl.associative_scan input: one tensor or a tuple of them.
  Pack packOf(const Val& in, Pos p, const std::string& qual) {
    std::vector<Val> members = in.k == Val::K::Tuple ? in.elems : std::vector<Val>{in};
    if (members.empty()) fail(p, qual + " needs at least one tensor, got an empty tuple");
    Pack r;
    for (const Val& m : members) {
      if (!m.isIR() || !m.v->type().isTile() || m.v->type().isPtrLike())
        fail(p, qual + " combines tensors of numbers, got " + describe(m));
      if (!r.v.empty() && m.v->type().shape != r.v[0]->type().shape)
        fail(p, qual + "'s tensors must have one shape, got " + shapeStr(r.v[0]->type().shape) + " and " + shapeStr(m.v->type().shape));
      r.orig.push_back(m.v->type().scalar);
      r.v.push_back(m.v->type().scalar == Scalar::I1 ? cast(m.v, Scalar::I8, p) : m.v);
    }
    for (int64_t d : r.v[0]->type().shape)
      if (d & (d - 1)) fail(p, qual + " with this combine_fn needs power-of-two dimensions, got " + shapeStr(r.v[0]->type().shape));
    return r;
  }

  // combine_fn(a..., b...) on whole tiles, one result per member, in the members' types.
  std::vector<ir::Value*> combineTiles(const Val& fn, Pos fnAt, const std::vector<ir::Value*>& x, const std::vector<ir::Value*>& y,
                                       const Pack& like, const std::string& qual) {
    Args args;
    args.at = fnAt;
    for (auto* t : x) args.pos.push_back(Val::ir(t)), args.posAt.push_back(fnAt);
    for (auto* t : y) args.pos.push_back(Val::ir(t)), args.posAt.push_back(fnAt);
    Val r = inlineFunc(fn, args);
    std::vector<Val> out = r.k == Val::K::Tuple ? r.elems : std::vector<Val>{r};
    if (out.size() != x.size())
      fail(fnAt, qual + "'s combine_fn '" + fn.s + "' returns " + std::to_string(out.size()) + " value(s) for " + std::to_string(x.size()) +
                     " input tensor(s)");
    std::vector<ir::Value*> res;
    for (size_t k = 0; k < out.size(); ++k) {
      const Type& t = x[k]->type();
      if (!out[k].isIR() && !out[k].isNum()) fail(fnAt, qual + "'s combine_fn '" + fn.s + "' returns " + describe(out[k]));
      ir::Value* v = out[k].isIR() ? out[k].v : constant(out[k], t.scalar, {}, fnAt);
      const Scalar want = like.orig[k] == Scalar::I1 ? Scalar::I1 : t.scalar;
      if (v->type().isPtrLike() || (v->type().scalar != want && !(want == Scalar::I1 && v->type().scalar == Scalar::I8)))
        fail(fnAt, qual + "'s combine_fn '" + fn.s + "' returns " + v->type().str() + " for an input of " + tritonDtypeName(like.orig[k]),
             "the combine function must return its inputs' types");
      res.push_back(broadcastTo(cast(v, t.scalar, fnAt), t.shape, fnAt));
    }
    return res;
  }

  // Reshape / permute helpers over tiles.
  ir::Value* reshapeTo(ir::Value* x, std::vector<int64_t> s, Pos p) {
    if (x->type().shape == s) return x;
    at(p);
    return b_.op1(OpKind::Reshape, {x}, x->type().withShape(std::move(s)));
  }
  // [B, n] -> (the even-indexed, the odd-indexed) [B, n/2], or with `halves` (first half, second half).
  std::pair<ir::Value*, ir::Value*> pairsOf(ir::Value* x, bool halves, Pos p) {
    const int64_t B = x->type().shape[0], n = x->type().shape[1];
    ir::Value* y = halves ? permute(Val::ir(reshapeTo(x, {B, 2, n / 2}, p)), {0, 2, 1}, p, "a general reduction").v
                          : reshapeTo(x, {B, n / 2, 2}, p);
    Val s = split(Val::ir(y), p);
    return {s.elems[0].v, s.elems[1].v};
  }
  // The element at column `col` of each row of [B, n], broadcast over the row.
  ir::Value* columnOf(ir::Value* x, int64_t col, Pos p) {
    const int64_t B = x->type().shape[0], n = x->type().shape[1];
    at(p);
    ir::Value* idx = indexAlong(n, 1, 2);
    ir::Value* hit = b_.op1(OpKind::Cmp, {idx, b_.constInt(col, idx->type())}, idx->type().withElement(Type::scalarOf(Scalar::I1)),
                            {{"pred", std::string("eq")}});
    ir::Value* r = pickAlong(hit, x, 1, p);
    return broadcastTo(b_.op1(OpKind::ExpandDims, {r}, r->type().withShape({B, 1}), {{"axis", int64_t{1}}}), {B, n}, p);
  }

  // Moves `axis` of every member last and flattens the rest: [B, n]; `undo` puts a [B, m] result back.
  struct Flat {
    std::vector<int64_t> shape;  // the original shape
    std::vector<int64_t> perm;   // the permutation that moved the axis last
    int64_t axis = 0;
  };
  Pack flatten(const Pack& in, int64_t axis, Flat& f, Pos p) {
    f.shape = in.v[0]->type().shape;
    f.axis = axis;
    const int64_t rank = static_cast<int64_t>(f.shape.size()), n = f.shape[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) f.perm.push_back(d);
    f.perm.push_back(axis);
    Pack r = in;
    for (auto*& v : r.v) {
      if (axis != rank - 1) v = permute(Val::ir(v), f.perm, p, "a general reduction").v;
      v = reshapeTo(v, {v->type().numel() / n, n}, p);
    }
    return r;
  }
  ir::Value* unflatten(ir::Value* x, const Flat& f, Scalar orig, Pos p) {  // a scan's [B, n] back
    std::vector<int64_t> moved;
    for (int64_t d : f.perm) moved.push_back(f.shape[static_cast<size_t>(d)]);
    x = reshapeTo(x, moved, p);
    if (f.axis != static_cast<int64_t>(f.shape.size()) - 1) {
      std::vector<int64_t> inv(f.perm.size());
      for (size_t k = 0; k < f.perm.size(); ++k) inv[static_cast<size_t>(f.perm[k])] = static_cast<int64_t>(k);
      x = permute(Val::ir(x), inv, p, "a general reduction").v;
    }
    return cast(x, orig, p);
  }

  Val generalReduce(const Val& in, Pos inAt, const Val& axisV, Pos axisAt, const Val& fn, Pos fnAt, bool keep, Pos p) {
    const std::string qual = "tl.reduce";
    Pack x = packOf(in, inAt, qual);
    const auto shape = x.v[0]->type().shape;
    const bool all = axisV.k == Val::K::None;
    int64_t ax = all ? 0 : constInt(axisV, axisAt, qual + "'s axis");
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) fail(axisAt, qual + "'s axis is out of range for a tensor of shape " + shapeStr(shape));
    if (all)
      for (auto*& v : x.v) v = reshapeTo(v, {v->type().numel()}, p);
    Flat f;
    Pack cur = flatten(x, all ? 0 : ax, f, p);
    while (cur.v[0]->type().shape[1] > 1) {  // combine neighbours: [B, n] -> [B, n/2]
      std::vector<ir::Value*> even, odd;
      for (auto* v : cur.v) {
        auto [e, o] = pairsOf(v, false, p);
        even.push_back(e), odd.push_back(o);
      }
      cur.v = combineTiles(fn, fnAt, even, odd, cur, qual);
      const int64_t B = cur.v[0]->type().shape[0];
      for (auto*& v : cur.v) v = reshapeTo(v, {B, v->type().numel() / B}, p);
    }
    std::vector<Val> out;
    for (size_t k = 0; k < cur.v.size(); ++k) {
      auto rest = all ? std::vector<int64_t>{} : shape;
      if (!all) rest.erase(rest.begin() + ax);
      ir::Value* r = cur.v[k];
      if (rest.empty()) {
        at(p);
        r = b_.op1(OpKind::Reduce, {reshapeTo(r, {1}, p)}, r->type().withShape({}), {{"kind", std::string("max")}, {"axis", int64_t{0}}, {"propagate_nan", int64_t{1}}});
      } else {
        r = reshapeTo(r, rest, p);
      }
      if (keep) {
        at(p);
        if (all) r = b_.op1(OpKind::Splat, {r}, Type::tileOf(std::vector<int64_t>(shape.size(), 1), r->type()));
        else {
          auto kept = rest;
          kept.insert(kept.begin() + ax, 1);
          r = withAxisBack(r, ax, kept);
        }
      }
      out.push_back(Val::ir(cast(r, x.orig[k], p)));
    }
    return out.size() == 1 ? out[0] : Val::tuple(out);
  }

  // An inclusive scan of [B, n] tiles: both halves scanned as one batch of 2B rows, then the last of
  // the first half combined into the second: out_j = out_{j-1} . x_j. Reverse, as Triton's (a forward
  // scan of the flipped axis): out_j = out_{j+1} . x_j, the first of the second half combined into
  // the first from the left.
  std::vector<ir::Value*> scanRows(const Pack& x, const Val& fn, Pos fnAt, bool rev, Pos p, const std::string& qual) {
    const int64_t B = x.v[0]->type().shape[0], n = x.v[0]->type().shape[1];
    if (n == 1) return x.v;
    Pack both = x;
    for (auto*& v : both.v) v = reshapeTo(v, {2 * B, n / 2}, p);
    std::vector<ir::Value*> s = scanRows(both, fn, fnAt, rev, p, qual);
    std::vector<ir::Value*> lo, hi, carry;
    for (auto* v : s) {
      auto [l, h] = pairsOf(reshapeTo(v, {B, n}, p), true, p);
      lo.push_back(l), hi.push_back(h);
      carry.push_back(columnOf(rev ? h : l, rev ? 0 : n / 2 - 1, p));
    }
    if (rev) lo = combineTiles(fn, fnAt, carry, lo, x, qual);
    else hi = combineTiles(fn, fnAt, carry, hi, x, qual);
    std::vector<ir::Value*> r;
    for (size_t k = 0; k < lo.size(); ++k) {
      ir::Value* j = join(Val::ir(lo[k]), Val::ir(hi[k]), p).v;                     // [B, n/2, 2]
      j = permute(Val::ir(j), {0, 2, 1}, p, qual).v;                                  // [B, 2, n/2]
      r.push_back(reshapeTo(j, {B, n}, p));
    }
    return r;
  }

  Val generalScan(const Val& in, Pos inAt, int64_t ax, const Val& fn, Pos fnAt, bool rev, Pos p) {
    const std::string qual = "tl.associative_scan";
    Pack x = packOf(in, inAt, qual);
    Flat f;
    Pack flat = flatten(x, ax, f, p);
    std::vector<ir::Value*> r = scanRows(flat, fn, fnAt, rev, p, qual);
    std::vector<Val> out;
    for (size_t k = 0; k < r.size(); ++k) out.push_back(Val::ir(unflatten(r[k], f, x.orig[k], p)));
    return out.size() == 1 ? out[0] : Val::tuple(out);
  }

  Val reduceFn(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.reduce", {"input", "axis", "combine_fn", "keep_dims"}, 3, &w);
    if (v[0]->k != Val::K::Tuple && (!v[0]->isIR() || !v[0]->v->type().isTile()))
      fail(w[0], "tl.reduce reduces a tensor or a tuple of tensors, got " + describe(*v[0]));
    if (v[2]->k != Val::K::Func) fail(w[2], "tl.reduce's combine_fn must be a @triton.jit function, got " + describe(*v[2]));
    const std::string kind = v[0]->k == Val::K::Tuple ? "" : combineKind(*v[2], w[2], v[0]->v->type().scalar, "tl.reduce");
    if (kind.empty() || kind == "prod")
      return generalReduce(*v[0], w[0], v[1] ? *v[1] : Val::none(), w[1], *v[2], w[2], v[3] && truthy(*v[3], w[3]), a.at);
    Args r;
    r.at = a.at;
    r.pos = {*v[0], *v[1]};
    r.posAt = {w[0], w[1]};
    if (v[3]) r.kw.push_back({"keep_dims", *v[3]}), r.kwAt.push_back(w[3]);
    return reduce(kind, r);
  }

  // tl.cumsum / tl.cumprod (input, axis=0, reverse=False[, dtype]) and tl.associative_scan(input,
  // axis, combine_fn, reverse=False): tile.scan. cumsum promotes bf16 to f32 and integers narrower than
  // 32 bits to i32, as Triton does.
  Val scan(const std::string& n, const Args& a) {
    const std::string qual = "tl." + n;
    std::vector<Pos> w;
    const bool general = n == "associative_scan";
    auto v = general ? bind(a, qual, {"input", "axis", "combine_fn", "reverse"}, 3, &w)
                     : bind(a, qual, {"input", "axis", "reverse", "dtype"}, 1, &w);
    const size_t revAt = general ? 3 : 2;
    if (general && v[2]->k != Val::K::Func) fail(w[2], qual + "'s combine_fn must be a @triton.jit function, got " + describe(*v[2]));
    const bool tuple = general && v[0]->k == Val::K::Tuple;
    if (!tuple && (!v[0]->isIR() || !v[0]->v->type().isTile() || v[0]->v->type().isPtrLike()))
      fail(w[0], qual + " scans a tensor of numbers" + (general ? " or a tuple of them" : "") + ", got " + describe(*v[0]));
    std::string kind = n == "cumsum" ? "sum" : "prod";
    if (general) {
      kind = tuple ? "" : combineKind(*v[2], w[2], v[0]->v->type().scalar, qual);
      if (kind.empty() || kind == "and" || kind == "or" || kind == "xor") {
        const auto& shape = tuple ? (v[0]->elems.empty() || !v[0]->elems[0].isIR() ? std::vector<int64_t>{} : v[0]->elems[0].v->type().shape)
                                  : v[0]->v->type().shape;
        const int64_t rank = static_cast<int64_t>(shape.size());
        int64_t ax = v[1] && v[1]->k != Val::K::None ? constInt(*v[1], w[1], qual + "'s axis") : 0;
        if (ax < 0) ax += rank;
        if (rank > 0 && (ax < 0 || ax >= rank)) fail(w[1], qual + "'s axis is out of range for a tensor of shape " + shapeStr(shape));
        return generalScan(*v[0], w[0], ax, *v[2], w[2], v[revAt] && truthy(*v[revAt], w[revAt]), a.at);
      }
    }
    ir::Value* x = v[0]->v;
    Scalar e = x->type().scalar;
    if (!general) {
      if (e == Scalar::BF16 && n == "cumsum") e = Scalar::F32;
      if (v[3] && v[3]->k != Val::K::None) {
        if (v[3]->k != Val::K::Dtype) fail(w[3], qual + "'s dtype must be a dtype");
        e = v[3]->dt;
      } else if (ir::isInt(e) && ir::bitWidth(e) < 32 && n == "cumsum") {
        e = ir::isUnsigned(e) ? Scalar::U32 : Scalar::I32;
      }
    }
    if (e == Scalar::I1) e = Scalar::I32;
    x = cast(x, e, w[0]);
    const int64_t rank = x->type().rank();
    int64_t ax = v[1] && v[1]->k != Val::K::None ? constInt(*v[1], w[1], qual + "'s axis") : 0;
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) fail(w[1], qual + "'s axis is out of range for a tensor of shape " + shapeStr(x->type().shape));
    const bool rev = v[revAt] && truthy(*v[revAt], w[revAt]);
    at(a.at);
    return Val::ir(b_.op1(OpKind::Scan, {x}, x->type(), {{"kind", kind}, {"axis", ax}, {"reverse", int64_t{rev ? 1 : 0}}}));
  }

  // A value stored or combined into memory: a number or a tensor of numbers (`what` names it).
  void requireNumbers(const Val& v, Pos p, const std::string& what) {
    if (v.isIR() && (v.v->type().isPtrLike() || v.v->type().isDesc())) fail(p, what + " must be numbers, got " + v.v->type().str());
    if (!v.isIR() && !v.isNum()) fail(p, what + " must be a number or a tensor, got " + describe(v));
  }

  ir::Value* requirePtr(const Val& v, Pos p, const std::string& what) {
    if (!v.isIR()) fail(p, what + " needs a pointer, got " + describe(v));
    const Type& t = v.v->type();
    if (t.isDesc()) fail(p, what + " got a tensor descriptor", "use desc.load([...]) / desc.store([...], value)");
    if (!t.isPtrLike()) fail(p, what + " needs a pointer or a tensor of pointers, got " + t.str());
    return v.v;
  }

  ir::Value* requireMask(const Val& v, Pos p, const std::string& what) {
    if (!v.isIR()) {
      if (v.k == Val::K::Bool) return constant(v, Scalar::I1, {}, p);
      fail(p, what + "'s mask must be a boolean tensor, got " + describe(v));
    }
    if (!v.v->type().isI1())
      fail(p, what + "'s mask must be a boolean tensor (i1), got " + v.v->type().str(), "build it with a comparison, e.g. offs < n");
    return v.v;
  }

  Val load(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.load", {"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                                 "eviction_policy", "volatile"}, 1, &w);
    Pos p = a.at;
    if (v[0]->k == Val::K::BlockPtr) {
      if (v[1] && v[1]->k != Val::K::None) fail(w[1], "tl.load of a block pointer takes boundary_check, not a mask");
      if (v[2] && v[2]->k != Val::K::None) fail(w[2], "tl.load of a block pointer takes padding_option, not 'other'");
      return blockLoad(*v[0], v[3] ? *v[3] : Val::none(), w[3], v[4] ? *v[4] : Val::none(), w[4], p);
    }
    ir::Value* ptr = requirePtr(*v[0], w[0], "tl.load");
    bool hasMask = v[1] && v[1]->k != Val::K::None;
    bool hasOther = v[2] && v[2]->k != Val::K::None;
    if (v[3] && v[3]->k != Val::K::None && !(v[3]->k == Val::K::Tuple && v[3]->elems.empty()))
      fail(w[3], "tl.load's boundary_check applies to block pointers: not supported yet");
    if (hasOther && !hasMask) fail(w[2], "tl.load: 'other' cannot be given without 'mask'");
    std::vector<ir::Value*> ops;
    if (hasMask) {
      ir::Value* mask = requireMask(*v[1], w[1], "tl.load");
      auto shape = broadcastShapes(shapeOf(ptr->type()), shapeOf(mask->type()), p);
      ptr = broadcastTo(ptr, shape, p);
      mask = broadcastTo(mask, shape, p);
      ops = {ptr, mask};
      if (hasOther) {
        const Val& o = *v[2];
        if (o.isIR() && (o.v->type().isPtrLike() || o.v->type().isDesc()))
          fail(w[2], "tl.load's 'other' must be a number or a tensor of numbers");
        if (!o.isIR() && !o.isNum()) fail(w[2], "tl.load's 'other' must be a number, got " + describe(o));
        ops.push_back(coerce(o, ptr->type().scalar, shape, w[2]));
      }
    } else {
      ops = {ptr};
    }
    at(p);
    Type result = ptr->type().withElement(Type::scalarOf(ptr->type().scalar));
    // volatile=True: the value may change under the kernel (another program or kernel writes it), so
    // no pass may read it twice or move the read.
    std::map<std::string, ir::AttrValue> attrs;
    if (v[7] && v[7]->k != Val::K::None && !v[7]->isIR() && truthy(*v[7], w[7])) attrs["volatile"] = int64_t{1};
    return Val::ir(b_.op1(OpKind::Load, ops, result, attrs));
  }

  // ---- block pointers (tl.make_block_ptr, tl.advance): a base pointer, and per dimension the
  // tensor's extent, its stride and the block's offset; a load or store through one is a tile of
  // addresses base + sum((offset_d + i_d) * stride_d), masked by its boundary_check dimensions
  // (0 <= offset_d + i_d < shape_d): block accesses by construction, which block-access recognizes.
  Val makeBlockPtr(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.make_block_ptr", {"base", "shape", "strides", "offsets", "block_shape", "order"}, 6, &w);
    Val bp;
    bp.k = Val::K::BlockPtr;
    bp.v = requirePtr(*v[0], w[0], "tl.make_block_ptr");
    if (!bp.v->type().isPtr()) fail(w[0], "tl.make_block_ptr's base must be a scalar pointer, got " + bp.v->type().str());
    bp.blockShape = constShape(*v[4], w[4], "tl.make_block_ptr's block_shape");
    const size_t r = bp.blockShape.size();
    const char* what[3] = {"shape", "strides", "offsets"};
    for (int part = 0; part < 3; ++part) {
      const Val& t = *v[1 + part];
      std::vector<Val> items = t.k == Val::K::Tuple ? t.elems : std::vector<Val>{t};
      if (items.size() != r)
        fail(w[1 + part], std::string("tl.make_block_ptr's ") + what[part] + " has " + std::to_string(items.size()) +
                              " entries but block_shape has " + std::to_string(r));
      for (const Val& x : items) {
        const bool intIR = x.isIR() && x.v->type().isScalar() && x.v->type().elemIsInt() && !x.v->type().isI1();
        if (!intIR && x.k != Val::K::Int && x.k != Val::K::Bool)
          fail(w[1 + part], std::string("tl.make_block_ptr's ") + what[part] + " must be integers, got " + describe(x));
        bp.elems.push_back(x);
      }
    }
    const Val& order = *v[5];
    if (order.k != Val::K::Tuple || order.elems.size() != r)
      fail(w[5], "tl.make_block_ptr's order must be a tuple of " + std::to_string(r) + " dimensions");
    return bp;
  }
  Val advance(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.advance", {"base", "offsets"}, 2, &w);
    if (v[0]->k != Val::K::BlockPtr) fail(w[0], "tl.advance moves a block pointer (tl.make_block_ptr), got " + describe(*v[0]));
    Val bp = *v[0];
    const size_t r = bp.blockShape.size();
    std::vector<Val> d = v[1]->k == Val::K::Tuple ? v[1]->elems : std::vector<Val>{*v[1]};
    if (d.size() != r) fail(w[1], "tl.advance's offsets have " + std::to_string(d.size()) + " entries for a block pointer of rank " + std::to_string(r));
    for (size_t k = 0; k < r; ++k) bp.elems[2 * r + k] = binary("+", bp.elems[2 * r + k], d[k], w[1]);
    return bp;
  }
  // The boundary_check dimensions (a tuple of constant dimensions, possibly empty).
  std::vector<bool> boundaryDims(const Val& bc, Pos at, size_t r, const std::string& what) {
    std::vector<bool> check(r, false);
    if (bc.k == Val::K::None) return check;
    std::vector<Val> items = bc.k == Val::K::Tuple ? bc.elems : std::vector<Val>{bc};
    for (const Val& d : items) {
      int64_t k = constInt(d, at, what + "'s boundary_check");
      if (k < 0 || k >= static_cast<int64_t>(r)) fail(at, what + "'s boundary_check names dimension " + std::to_string(k) + " of a rank-" + std::to_string(r) + " block");
      check[static_cast<size_t>(k)] = true;
    }
    return check;
  }
  // The block's addresses and, when some dimension is checked, its in-bounds mask.
  std::pair<ir::Value*, ir::Value*> blockAddresses(const Val& bp, const std::vector<bool>& check, Pos p) {
    const size_t r = bp.blockShape.size();
    at(p);
    Val addr = Val::ir(b_.op1(OpKind::Splat, {bp.v}, Type::tileOf(bp.blockShape, bp.v->type())));
    Val mask = Val::none();
    for (size_t d = 0; d < r; ++d) {
      const int64_t n = bp.blockShape[d];
      at(p);
      Val pos = binary("+", Val::ir(indexAlong(n, d, r)), bp.elems[2 * r + d], p);
      addr = binary("+", addr, binary("*", pos, bp.elems[r + d], p), p);
      if (check[d]) {
        Val in = logical("and", compare(">=", pos, Val::integer(0), p), compare("<", pos, bp.elems[d], p), p);
        mask = mask.k == Val::K::None ? in : logical("and", mask, in, p);
      }
    }
    ir::Value* a = broadcastTo(addr.v, bp.blockShape, p);
    ir::Value* m = mask.k == Val::K::None ? nullptr : broadcastTo(mask.v, bp.blockShape, p);
    return {a, m};
  }
  Val blockLoad(const Val& bp, const Val& bc, Pos bcAt, const Val& pad, Pos padAt, Pos p) {
    auto [addr, mask] = blockAddresses(bp, boundaryDims(bc, bcAt, bp.blockShape.size(), "tl.load"), p);
    const Scalar e = addr->type().scalar;
    std::string mode = pad.k == Val::K::Str ? pad.s : "";
    if (pad.k != Val::K::None && pad.k != Val::K::Str) fail(padAt, "tl.load's padding_option must be \"zero\" or \"nan\", got " + describe(pad));
    if (mode != "" && mode != "zero" && mode != "nan") fail(padAt, "tl.load's padding_option must be \"zero\" or \"nan\", got \"" + mode + "\"");
    if (mode == "nan" && !ir::isFloat(e)) fail(padAt, "tl.load's padding_option \"nan\" needs a floating-point block, this one is " + tritonDtypeName(e));
    const Type vt = addr->type().withElement(Type::scalarOf(e));
    at(p);
    if (!mask) return Val::ir(b_.op1(OpKind::Load, {addr}, vt));
    ir::Value* other = mode == "nan" ? b_.constFloat(std::numeric_limits<double>::quiet_NaN(), vt)
                                     : (ir::isFloat(e) ? b_.constFloat(0.0, vt) : b_.constInt(0, vt));
    return Val::ir(b_.op1(OpKind::Load, {addr, mask, other}, vt));
  }
  Val blockStore(const Val& bp, const Val& value, Pos valueAt, const Val& bc, Pos bcAt, Pos p) {
    auto [addr, mask] = blockAddresses(bp, boundaryDims(bc, bcAt, bp.blockShape.size(), "tl.store"), p);
    requireNumbers(value, valueAt, "tl.store's value");
    if (value.isIR() && value.v->type().isTile() && value.v->type().shape != bp.blockShape)
      fail(valueAt, "tl.store to a block pointer of block " + shapeStr(bp.blockShape) + " with a value of shape " + shapeStr(value.v->type().shape));
    std::vector<ir::Value*> ops = {addr, coerce(value, addr->type().scalar, bp.blockShape, valueAt)};
    if (mask) ops.push_back(mask);
    at(p);
    b_.create(OpKind::Store, ops, {});
    return Val::none();
  }

  Val store(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.store", {"pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}, 2, &w);
    Pos p = a.at;
    if (v[0]->k == Val::K::BlockPtr) {
      if (v[2] && v[2]->k != Val::K::None) fail(w[2], "tl.store to a block pointer takes boundary_check, not a mask");
      return blockStore(*v[0], *v[1], w[1], v[3] ? *v[3] : Val::none(), w[3], p);
    }
    ir::Value* ptr = requirePtr(*v[0], w[0], "tl.store");
    if (v[3] && v[3]->k != Val::K::None && !(v[3]->k == Val::K::Tuple && v[3]->elems.empty()))
      fail(w[3], "tl.store's boundary_check applies to block pointers: not supported yet");
    std::vector<int64_t> shape = shapeOf(ptr->type());
    const Val& val = *v[1];
    requireNumbers(val, w[1], "tl.store's value");
    if (shape.empty() && val.isIR() && val.v->type().isTile())
      fail(w[1], "tl.store: the value is a tensor of shape " + shapeStr(val.v->type().shape) + " but the pointer is a scalar",
           "build a tensor of pointers, e.g. ptr + tl.arange(0, BLOCK)");
    if (val.isIR()) broadcastShapes(shapeOf(val.v->type()), shape, w[1]);
    ir::Value* value = coerce(val, ptr->type().scalar, shape, w[1]);
    std::vector<ir::Value*> ops = {ptr, value};
    if (v[2] && v[2]->k != Val::K::None) {
      ir::Value* mask = requireMask(*v[2], w[2], "tl.store");
      auto ms = shapeOf(mask->type());
      auto joint = broadcastShapes(ms, shape, w[2]);
      if (joint != shape) fail(w[2], "tl.store's mask of shape " + shapeStr(ms) + " does not fit the pointer shape " + shapeStr(shape));
      ops.push_back(broadcastTo(mask, shape, w[2]));
    }
    at(p);
    b_.create(OpKind::Store, ops, {});
    return Val::none();
  }

  // A batched tl.dot, [B, M, K] x [B, K, N] (+ [B, M, N]) -> [B, M, N]: one 2-D tl.dot per batch
  // element (its operands sliced out along the first axis, the other arguments as given), the B
  // products joined back along a new first axis, in order (B a power of two, as Triton's shapes are).
  Val batchedDot(const std::vector<std::optional<Val>>& v, const std::vector<Pos>& w, Pos p) {
    const Type &tx = v[0]->v->type(), &ty = v[1]->v->type();
    const int64_t batch = tx.shape[0];
    if (ty.shape[0] != batch)
      fail(p, "batched tl.dot of batch sizes " + std::to_string(batch) + " and " + std::to_string(ty.shape[0]) + ": they must be equal");
    if (batch < 1 || (batch & (batch - 1)) != 0) fail(p, "batched tl.dot's batch size " + std::to_string(batch) + " must be a power of two");
    const bool hasAcc = v[2] && v[2]->k != Val::K::None;
    if (hasAcc && (!v[2]->isIR() || !v[2]->v->type().isTile() || v[2]->v->type().rank() != 3 || v[2]->v->type().shape[0] != batch))
      fail(w[2], "a batched tl.dot's accumulator must be a [" + std::to_string(batch) + ", M, N] tensor, got " + describe(*v[2]));
    auto element = [&](ir::Value* x, int64_t i) {  // x[i], of shape x.shape[1:]
      const Type& t = x->type();
      std::vector<int64_t> one = t.shape;
      one[0] = 1;
      at(p);
      ir::Value* slice = b_.op1(OpKind::Slice, {x}, t.withShape(one), {{"axis", int64_t{0}}, {"start", i}});
      return reshapeTo(slice, {t.shape[1], t.shape[2]}, p);
    };
    static const char* const kNames[] = {"input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"};
    std::vector<Val> parts;
    for (int64_t i = 0; i < batch; ++i) {
      Args one;
      one.at = p;
      one.pos = {Val::ir(element(v[0]->v, i)), Val::ir(element(v[1]->v, i))};
      one.posAt = {w[0], w[1]};
      for (size_t k = 2; k < v.size(); ++k) {
        if (!v[k] || v[k]->k == Val::K::None) continue;
        one.kw.push_back({kNames[k], k == 2 ? Val::ir(element(v[2]->v, i)) : *v[k]});
        one.kwAt.push_back(w[k]);
      }
      parts.push_back(dot(one));
    }
    // Pairwise joins, each along a new last axis moved to the front: [2, ...] then [4, ...], in order.
    while (parts.size() > 1) {
      std::vector<Val> next;
      for (size_t k = 0; k < parts.size(); k += 2) {
        Val j = join(parts[k], parts[k + 1], p);
        const int64_t rank = j.v->type().rank();
        std::vector<int64_t> order{rank - 1};
        for (int64_t d = 0; d < rank - 1; ++d) order.push_back(d);
        ir::Value* t = permute(j, order, p, "tl.dot").v;  // [2, (2^l,) M, N]
        std::vector<int64_t> shape = t->type().shape;
        if (shape.size() == 4) shape = {shape[0] * shape[1], shape[2], shape[3]};
        next.push_back(Val::ir(shape.size() == t->type().shape.size() ? t : reshapeTo(t, shape, p)));
      }
      parts = std::move(next);
    }
    Val r = parts[0];
    if (r.v->type().rank() == 2) r = Val::ir(reshapeTo(r.v, {1, r.v->type().shape[0], r.v->type().shape[1]}, p));  // a batch of one
    return r;
  }

  Val dot(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.dot", {"input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"},
                  2, &w);
    Pos p = a.at;
    for (int k = 0; k < 2; ++k)
      if (!v[k]->isIR() || !v[k]->v->type().isTile() || v[k]->v->type().isPtrLike())
        fail(w[k], "tl.dot needs tensors, got " + describe(*v[k]));
    if (v[3] && v[3]->k != Val::K::None && v[4] && v[4]->k != Val::K::None)
      fail(w[4], "tl.dot takes input_precision or allow_tf32, not both (Triton asserts \"Only one of input_precision and allow_tf32 can be "
                 "specified\")");
    ir::Value* x = v[0]->v;
    ir::Value* y = v[1]->v;
    const Type &tx = x->type(), &ty = y->type();
    if (tx.rank() == 3 && ty.rank() == 3) return batchedDot(v, w, p);
    if (tx.rank() != 2 || ty.rank() != 2) fail(p, "tl.dot needs 2-D tensors (or 3-D ones: a batch of products), got " + tx.str() + " and " + ty.str());
    if (tx.shape[1] != ty.shape[0])
      fail(p, "tl.dot of mismatched shapes " + shapeStr(tx.shape) + " and " + shapeStr(ty.shape) + ": the inner dimensions differ",
           "the first operand is [M, K] and the second [K, N]; transpose with tl.trans if needed");
    const bool ints = ir::isInt(tx.scalar) || ir::isInt(ty.scalar);
    if (ints && (tx.scalar != Scalar::I8 || ty.scalar != Scalar::I8))
      fail(p, "integer tl.dot takes int8 operands, got " + tritonDtypeName(tx.scalar) + " and " + tritonDtypeName(ty.scalar),
           "convert the operands with .to(tl.int8)");
    if (tx.scalar != ty.scalar)
      fail(p, "tl.dot operands must have the same dtype, got " + tritonDtypeName(tx.scalar) + " and " + tritonDtypeName(ty.scalar),
           "convert one operand with .to(...)");
    // Triton's bounds on NVIDIA targets: M and N any, K at least 16 (32 for 8-bit operands: a
    // k-step of the tensor cores); smaller M or N are padded there.
    const int64_t minK = ir::bitWidth(tx.scalar) == 8 ? 32 : 16;
    if (tx.shape[1] < minK)
      fail(p, "tl.dot needs K >= " + std::to_string(minK) + (minK == 32 ? " for 8-bit operands" : "") + ", got " + shapeStr(tx.shape) +
                  " x " + shapeStr(ty.shape),
           "use a K block of at least " + std::to_string(minK));
    Scalar out = ints ? Scalar::I32 : Scalar::F32;
    if (v[6] && v[6]->k != Val::K::None) {
      if (ints) {
        if (v[6]->k != Val::K::Dtype || v[6]->dtPtr || v[6]->dt != Scalar::I32) fail(w[6], "an integer tl.dot's out_dtype must be tl.int32");
      } else {
        if (v[6]->k != Val::K::Dtype || v[6]->dtPtr || !ir::isFloat(v[6]->dt)) fail(w[6], "tl.dot's out_dtype must be a float dtype");
        out = v[6]->dt;
      }
    }
    Type rt = Type::tileOf({tx.shape[0], ty.shape[1]}, Type::scalarOf(out));
    std::vector<ir::Value*> ops = {x, y};
    if (v[2] && v[2]->k != Val::K::None) {
      const Val& acc = *v[2];
      if (!acc.isIR() || !acc.v->type().isTile())
        fail(w[2], "tl.dot's accumulator must be a tensor, got " + describe(acc));
      const Type& at_ = acc.v->type();
      if (at_.shape != rt.shape)
        fail(w[2], "tl.dot's accumulator has shape " + shapeStr(at_.shape) + " but the product is " + shapeStr(rt.shape));
      if (ints ? at_.scalar != Scalar::I32 : !ir::isFloat(at_.scalar))
        fail(w[2], std::string("tl.dot's accumulator must be ") + (ints ? "an int32" : "a float") + " tensor, got " + at_.str());
      rt = at_;
      ops.push_back(acc.v);
    }
    std::map<std::string, ir::AttrValue> attrs;
    if (tx.scalar == Scalar::F32) {
      std::string prec = "tf32";
      if (v[4] && v[4]->k != Val::K::None && !truthy(*v[4], w[4])) prec = "ieee";
      if (v[3] && v[3]->k != Val::K::None) {
        if (v[3]->k != Val::K::Str) fail(w[3], "tl.dot's input_precision must be a string");
        prec = v[3]->s;
        if (prec != "tf32" && prec != "ieee" && prec != "tf32x3")
          fail(w[3], "tl.dot's input_precision must be \"tf32\", \"tf32x3\" or \"ieee\", got \"" + prec + "\"");
      }
      attrs["input_precision"] = prec;
    }
    at(p);
    return Val::ir(b_.op1(OpKind::Dot, ops, rt, attrs));
  }

  ir::Value* intScalar(const Val& v, Pos p, const std::string& what) {
    if (!v.isIR()) {
      if (v.k != Val::K::Int && v.k != Val::K::Bool) fail(p, what + " must be integers, got " + describe(v));
      return constant(v, defaultScalar(v) == Scalar::I1 ? Scalar::I32 : defaultScalar(v), {}, p);
    }
    const Type& t = v.v->type();
    if (!t.isScalar() || !t.elemIsInt()) fail(p, what + " must be integer scalars, got " + t.str());
    if (t.scalar == Scalar::I1) return cast(v.v, Scalar::I32, p);
    return v.v;
  }

  std::vector<Val> listOf(const Val& v, Pos p, const std::string& what) {
    if (v.k != Val::K::Tuple) fail(p, what + " must be a list or tuple, got " + describe(v));
    return v.elems;
  }

  Val makeDesc(const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "tl.make_tensor_descriptor", {"base", "shape", "strides", "block_shape", "padding_option"}, 4, &w);
    Pos p = a.at;
    if (!v[0]->isIR() || !v[0]->v->type().isPtr())
      fail(w[0], "tl.make_tensor_descriptor's base must be a scalar pointer, got " + describe(*v[0]));
    auto shape = listOf(*v[1], w[1], "shape");
    auto strides = listOf(*v[2], w[2], "strides");
    auto block = constShape(*v[3], w[3], "block_shape");
    if (shape.size() != block.size() || strides.size() != block.size())
      fail(p, "tl.make_tensor_descriptor: shape, strides and block_shape must have the same length (" +
                  std::to_string(shape.size()) + ", " + std::to_string(strides.size()) + ", " + std::to_string(block.size()) + ")");
    if (!strides.back().isIR() && strides.back().isNum() && strides.back().i != 1)
      fail(w[2], "tl.make_tensor_descriptor: the last stride must be 1");
    std::vector<ir::Value*> ops = {v[0]->v};
    for (auto& s : shape) ops.push_back(intScalar(s, w[1], "the descriptor's shape entries"));
    for (auto& s : strides) ops.push_back(intScalar(s, w[2], "the descriptor's strides"));
    at(p);
    return Val::ir(b_.op1(OpKind::MakeDesc, ops, Type::descOf(v[0]->v->type().scalar, block)));
  }

  std::vector<ir::Value*> offsets(const Val& desc, const Val& offs, Pos p) {
    auto list = offs.k == Val::K::Tuple ? offs.elems : std::vector<Val>{offs};
    size_t rank = desc.v->type().shape.size();
    if (list.size() != rank)
      fail(p, "the descriptor has rank " + std::to_string(rank) + " but " + std::to_string(list.size()) + " offset(s) were given");
    std::vector<ir::Value*> out;
    for (auto& o : list) out.push_back(intScalar(o, p, "descriptor offsets"));
    return out;
  }

  Val descLoad(const Val& desc, const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "desc.load", {"offsets"}, 1, &w);
    auto offs = offsets(desc, *v[0], w[0]);
    std::vector<ir::Value*> ops = {desc.v};
    ops.insert(ops.end(), offs.begin(), offs.end());
    at(a.at);
    const Type& d = desc.v->type();
    return Val::ir(b_.op1(OpKind::DescLoad, ops, Type::tileOf(d.shape, Type::scalarOf(d.scalar))));
  }

  Val descStore(const Val& desc, const Args& a) {
    std::vector<Pos> w;
    auto v = bind(a, "desc.store", {"offsets", "value"}, 2, &w);
    auto offs = offsets(desc, *v[0], w[0]);
    const Type& d = desc.v->type();
    const Val& val = *v[1];
    if (val.isIR() && (val.v->type().isPtrLike() || val.v->type().isDesc()))
      fail(w[1], "desc.store's value must be numbers");
    if (val.isIR() && val.v->type().isTile() && val.v->type().shape != d.shape)
      fail(w[1], "desc.store: the value has shape " + shapeStr(val.v->type().shape) + " but the block shape is " + shapeStr(d.shape));
    ir::Value* value = coerce(val, d.scalar, d.shape, w[1]);
    std::vector<ir::Value*> ops = {desc.v, value};
    ops.insert(ops.end(), offs.begin(), offs.end());
    at(a.at);
    b_.create(OpKind::DescStore, ops, {});
    return Val::none();
  }

  // ---- statements
  static bool endsInBareReturn(const Body& b) {
    return !b.empty() && b.back()->kind == Stmt::Kind::Return && !b.back()->value;
  }
  // Whether a bare `return` is reached through nested ifs (not loops) of b: `if a: if b: return`.
  static bool returnsThroughIfs(const Body& b) {
    for (const auto& s : b) {
      if (s->kind == Stmt::Kind::Return && !s->value) return true;
      if (s->kind == Stmt::Kind::If && (returnsThroughIfs(s->body) || returnsThroughIfs(s->orelse))) return true;
    }
    return false;
  }

  // `top`: the statement list is (a tail of) its function's body, reached only through ifs folded
  // on constants or through early exits, so an `if cond: ...; return` on a runtime condition can run
  // the rest of the function in the other region (an early exit).
  void exec(const Body& body, bool top = false) { execSeq(body, 0, body.size(), top); }

  void execSeq(const Body& body, size_t from, size_t to, bool top) {
    Frame& fr = frame();
    for (size_t i = from; i < to; ++i) {
      const Stmt& s = *body[i];
      if (top && s.kind == Stmt::Kind::If) {
        Val c = eval(*s.test);
        if (!c.isIR()) {
          // Folded: the chosen branch continues with the rest of this list (its early exits need it).
          fr.tails.emplace_back(&body, i + 1);
          exec(truthy(c, s.test->pos) ? s.body : s.orelse, true);
          fr.tails.pop_back();
        } else if (returnsThroughIfs(s.body) || returnsThroughIfs(s.orelse)) {
          // An early exit, or an if holding one deeper (`if a: if b: return`): each branch runs its
          // statements and, unless it returns, the rest of the function.
          earlyExit(s, c, body, i + 1);
          fr.returned = true;
          fr.result = Val::none();
          return;
        } else {
          execIfOn(s, c);
        }
      } else if (top && s.kind == Stmt::Kind::Return && fr.runtimeDepth > 0) {
        // The end of a path inside an early exit's region.
        if (s.value)
          fail(s.pos, "a function with an early 'return' (on a runtime condition) must not return a value: not supported yet",
               "store results with tl.store, or assign the result and return it once at the end");
        fr.returned = true;
        fr.result = Val::none();
        return;
      } else {
        execStmt(s);
      }
      if (fr.returned) return;
    }
  }

  // Runs all[from..] and then every pending tail (innermost first): the rest of the function.
  void runRest(const Body& all, size_t from) {
    Frame& fr = frame();
    auto saved = fr.tails;
    execSeq(all, from, all.size(), true);
    while (!fr.returned && !fr.tails.empty()) {
      auto [b, idx] = fr.tails.back();
      fr.tails.pop_back();
      execSeq(*b, idx, b->size(), true);
    }
    fr.tails = saved;
  }

  // `if cond: A [return] else: B [return]` followed by the rest of the function: tile.if(cond) with
  // each region running its branch and, unless the branch ends in `return`, the rest. Nothing is
  // live after it because the function ends there.
  void earlyExit(const Stmt& s, const Val& c, const Body& all, size_t restFrom) {
    if (c.v->type().isTile())
      fail(s.test->pos, "the condition of 'if' must be a scalar, got " + c.v->type().str(),
           "use tl.where for elementwise choices, or reduce the condition with tl.max/tl.min");
    ir::Value* cond = toBool(c, s.test->pos);
    at(s.pos);
    ir::Op* op = b_.create(OpKind::If, {cond}, {});
    Block* thenB = op->addRegion();
    Block* elseB = op->addRegion();
    ir::Block* outer = b_.block();
    Frame& fr = frame();
    auto before = fr.vars;
    ++fr.runtimeDepth;
    auto branch = [&](const Body& b, Block* region) {
      b_.setInsertionPointToEnd(region);
      fr.vars = before;
      fr.returned = false;
      bool exits = endsInBareReturn(b);
      fr.tails.emplace_back(&all, restFrom);
      execSeq(b, 0, exits ? b.size() - 1 : b.size(), true);
      fr.tails.pop_back();
      if (!exits && !fr.returned) runRest(all, restFrom);
      at(s.pos);
      b_.setInsertionPointToEnd(region);
      b_.create(OpKind::Yield, {}, {});
    };
    branch(s.body, thenB);
    branch(s.orelse, elseB);
    --fr.runtimeDepth;
    b_.setInsertionPointToEnd(outer);
    fr.vars = before;
  }

  void assign(const Expr& target, const Val& v, Pos p) {
    if (target.kind == Expr::Kind::Name) {
      if (v.k == Val::K::IR && v.v->nameHint.empty()) v.v->nameHint = target.name;
      frame().vars[target.name] = v;
      return;
    }
    if (target.kind == Expr::Kind::Tuple || target.kind == Expr::Kind::List) {
      if (v.k != Val::K::Tuple)
        fail(p, "cannot unpack " + describe(v) + " into " + std::to_string(target.kids.size()) + " names");
      if (v.elems.size() != target.kids.size())
        fail(p, "cannot unpack a tuple of " + std::to_string(v.elems.size()) + " values into " +
                    std::to_string(target.kids.size()) + " names");
      for (size_t k = 0; k < v.elems.size(); ++k) assign(*target.kids[k], v.elems[k], p);
      return;
    }
    fail(target.pos, "cannot assign to this expression");
  }

  void execStmt(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Kind::Pass: return;
      case Stmt::Kind::Assert: {
        // As in Triton: a runtime assert is a device assert, compiled only in debug builds (so here
        // it only has to type-check); one on a constant that is false fails the compilation.
        Val c = eval(*s.test);
        Val msg = s.value ? eval(*s.value) : Val::none();
        if (!c.isIR() && !truthy(c, s.test->pos))
          fail(s.pos, "assertion failed" + (msg.k == Val::K::Str && !msg.s.empty() ? ": " + msg.s : std::string()));
        return;
      }
      case Stmt::Kind::Raise:
        // Triton 3.6 has no form for it ("unsupported AST node type: Raise"); one in a branch a
        // compile-time condition rules out is never reached.
        fail(s.pos, "'raise' is reached in a jit function: Triton compiles no raise (one is allowed only in a branch a compile-time condition rules out)");
      case Stmt::Kind::Expr: eval(*s.value); return;
      case Stmt::Kind::Assign: {  // numbers bound here are scalar tensors in Triton (strengthen)
        Val v = strengthen(eval(*s.value));
        for (auto& t : s.targets) assign(*t, v, s.pos);
        return;
      }
      case Stmt::Kind::AugAssign: {
        Val cur = eval(*s.targets[0]);
        Val rhs = eval(*s.value);
        assign(*s.targets[0], strengthen(binary(s.op, cur, rhs, s.pos)), s.pos);
        return;
      }
      case Stmt::Kind::AnnAssign: {
        if (!s.value) return;
        Val v = eval(*s.value);
        const Expr& ann = *s.annotation;
        bool isConstexpr = (ann.kind == Expr::Kind::Attribute || ann.kind == Expr::Kind::Name) && ann.name == "constexpr";
        if (isConstexpr && !v.isConst())
          fail(s.value->pos, "'" + s.targets[0]->name + "' is annotated tl.constexpr but its value is not a compile-time constant (" +
                                 describe(v) + ")");
        assign(*s.targets[0], isConstexpr ? v : strengthen(v), s.pos);
        return;
      }
      case Stmt::Kind::Return: {
        if (frame().runtimeDepth > 0)
          fail(s.pos, "'return' inside a runtime loop or a runtime 'if': not supported yet",
               "assign the result to a variable and return it at the end of the function");
        frame().result = s.value ? eval(*s.value) : Val::none();
        frame().returned = true;
        return;
      }
      case Stmt::Kind::If: execIf(s); return;
      case Stmt::Kind::For: execFor(s); return;
      case Stmt::Kind::While: execWhile(s); return;
    }
  }

  bool liveFrom(const std::string& name, int from) {
    auto& reads = frame().fn->reads;
    auto it = reads.find(name);
    if (it == reads.end()) return false;
    return !it->second.empty() && it->second.back() >= from;
  }

  // Makes `v` an IR value of type `t` for a region's yield (constants adopt t).
  ir::Value* asCarried(const Val& v, const Type& t, const std::string& name, Pos p, const std::string& where) {
    if (v.k == Val::K::Undef) fail(p, v.s);
    if (!v.isIR()) {
      if (!v.isNum() || t.isPtrLike() || t.isDesc())
        fail(p, "'" + name + "' is " + describe(v) + " " + where + " but " + t.str() + " elsewhere");
      return constant(v, t.scalar, shapeOf(t), p);
    }
    if (!(v.v->type() == t))
      fail(p, "'" + name + "' has type " + t.str() + " before " + where + " but " + v.v->type().str() + " after it",
           "a loop-carried or branch-merged variable must keep its type; convert with .to(...) or broadcast explicitly");
    return v.v;
  }

  void execIf(const Stmt& s) { execIfOn(s, eval(*s.test)); }

  void execIfOn(const Stmt& s, const Val& c) {
    if (!c.isIR()) {
      exec(truthy(c, s.test->pos) ? s.body : s.orelse);
      return;
    }
    const Type& ct = c.v->type();
    if (ct.isTile())
      fail(s.test->pos, "the condition of 'if' must be a scalar, got " + ct.str(),
           "use tl.where for elementwise choices, or reduce the condition with tl.max/tl.min");
    ir::Value* cond = toBool(c, s.test->pos);
    at(s.pos);
    ir::Op* op = b_.create(OpKind::If, {cond}, {});
    Block* thenB = op->addRegion();
    Block* elseB = op->addRegion();
    ir::Block* outer = b_.block();
    auto before = frame().vars;
    Frame& fr = frame();
    ++fr.runtimeDepth;
    b_.setInsertionPointToEnd(thenB);
    exec(s.body);
    auto thenVars = fr.vars;
    fr.vars = before;
    b_.setInsertionPointToEnd(elseB);
    exec(s.orelse);
    auto elseVars = fr.vars;
    --fr.runtimeDepth;
    fr.vars = before;
    // Merge every name that either branch changed.
    std::vector<std::string> names;
    for (auto& [n, v] : thenVars) {
      auto b = before.find(n);
      if (b == before.end() || !(b->second == v)) names.push_back(n);
    }
    for (auto& [n, v] : elseVars) {
      auto b = before.find(n);
      if ((b == before.end() || !(b->second == v)) && std::find(names.begin(), names.end(), n) == names.end())
        names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    int from = fr.loopFrom != INT_MAX ? fr.loopFrom : s.readEnd;
    std::vector<std::string> yielded;
    std::vector<std::pair<Val, Val>> pairs;
    for (auto& n : names) {
      auto t = thenVars.find(n);
      auto e = elseVars.find(n);
      bool inThen = t != thenVars.end() && t->second.k != Val::K::Undef;
      bool inElse = e != elseVars.end() && e->second.k != Val::K::Undef;
      Val undef;
      undef.k = Val::K::Undef;
      if (!inThen || !inElse) {
        undef.s = "'" + n + "' is defined in only one branch of the 'if' at line " + std::to_string(s.pos.line) +
                  " (whose condition is a runtime value), so it is undefined after it";
        fr.vars[n] = undef;
        continue;
      }
      if (t->second == e->second) {
        fr.vars[n] = t->second;
        continue;
      }
      if (!liveFrom(n, from)) {
        undef.s = "'" + n + "' differs between the branches of the 'if' at line " + std::to_string(s.pos.line);
        fr.vars[n] = undef;
        continue;
      }
      yielded.push_back(n);
      pairs.emplace_back(t->second, e->second);
    }
    std::vector<ir::Value*> thenY, elseY;
    std::vector<Type> types;
    for (size_t k = 0; k < yielded.size(); ++k) {
      auto& [tv, ev] = pairs[k];
      Type ty;
      if (tv.isIR()) ty = tv.v->type();
      else if (ev.isIR()) ty = ev.v->type();
      else if (tv.isNum() && ev.isNum()) ty = Type::scalarOf(joinElem(tv, ev));
      else
        fail(s.pos, "'" + yielded[k] + "' is a different compile-time constant in each branch of an 'if' on a runtime value",
             "make the condition a constexpr");
      if (!tv.isIR() && ev.isIR() && tv.isNum() && ty.isScalar() && !ty.isPtrLike()) ty = ev.v->type();
      b_.setInsertionPointToEnd(thenB);
      thenY.push_back(asCarried(tv, ty, yielded[k], s.pos, "the 'if' (then branch)"));
      b_.setInsertionPointToEnd(elseB);
      elseY.push_back(asCarried(ev, ty, yielded[k], s.pos, "the 'if' (else branch)"));
      types.push_back(ty);
    }
    at(s.pos);
    b_.setInsertionPointToEnd(thenB);
    b_.create(OpKind::Yield, thenY, {});
    b_.setInsertionPointToEnd(elseB);
    b_.create(OpKind::Yield, elseY, {});
    b_.setInsertionPointToEnd(outer);
    for (size_t k = 0; k < yielded.size(); ++k) {
      ir::Value* r = op->addResult(types[k], yielded[k]);
      fr.vars[yielded[k]] = Val::ir(r);
    }
  }



  // Candidates carried through a loop: names the body assigns that exist before it and are live.
  std::vector<std::string> carriedNames(const Stmt& s, const Body& body) {
    std::vector<std::string> assigned;
    assignedNames(body, assigned);
    Frame& fr = frame();
    int from = std::min(fr.loopFrom, s.readBegin);
    std::vector<std::string> out;
    for (auto& n : assigned) {
      auto it = fr.vars.find(n);
      if (it == fr.vars.end() || it->second.k == Val::K::Undef) continue;
      if (!liveFrom(n, from)) continue;
      out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // A carried value: a variable, or ("name" kSlot "k") offset k of the block pointer in "name" (a
  // loop carries a block pointer's offsets; its base, shape and strides must stay as they are).
  static constexpr char kSlot = '\x01';
  Val& slot(Frame& fr, const std::string& key, Pos p) {
    const size_t cut = key.find(kSlot);
    if (cut == std::string::npos) return fr.vars[key];
    const std::string name = key.substr(0, cut);
    Val& bp = fr.vars[name];
    if (bp.k != Val::K::BlockPtr)
      fail(p, "'" + name + "' is a block pointer before the loop but " + describe(bp) + " in it",
           "advance it with tl.advance; keep other values in other names");
    const size_t r = bp.blockShape.size();
    return bp.elems[2 * r + std::stoul(key.substr(cut + 1))];
  }
  static std::string slotName(const std::string& key) {
    const size_t cut = key.find(kSlot);
    return cut == std::string::npos ? key : key.substr(0, cut) + "_off" + key.substr(cut + 1);
  }

  // Initial values of carried variables as IR; constants that are not numbers stay unchanged and
  // must not be reassigned (checked after the body).
  void splitCarried(const std::vector<std::string>& names, Pos p, std::vector<std::string>& carried,
                    std::vector<ir::Value*>& inits, std::vector<std::pair<std::string, Val>>& frozen) {
    for (auto& n : names) {
      Val v = frame().vars[n];
      if (v.k == Val::K::BlockPtr) {
        const size_t r = v.blockShape.size();
        Val shapeOnly = v;  // what must not change: all but the offsets
        for (size_t k = 0; k < r; ++k) {
          carried.push_back(n + kSlot + std::to_string(k));
          const Val& off = v.elems[2 * r + k];
          inits.push_back(off.isIR() ? off.v : constant(off, Scalar::I32, {}, p));
          inits.back()->nameHint = slotName(carried.back());
          shapeOnly.elems[2 * r + k] = Val::none();
        }
        frozen.emplace_back(n, shapeOnly);
        continue;
      }
      if (v.isIR()) {
        if (v.v->type().isDesc()) {
          frozen.emplace_back(n, v);
          continue;
        }
        carried.push_back(n);
        inits.push_back(v.v);
      } else if (v.isNum()) {
        carried.push_back(n);
        ir::Value* c = constant(v, defaultScalar(v), {}, p);
        c->nameHint = n;
        inits.push_back(c);
      } else {
        frozen.emplace_back(n, v);
      }
    }
  }

  void checkFrozen(const std::vector<std::pair<std::string, Val>>& frozen, Pos p) {
    for (auto& [n, v] : frozen) {
      Val now = frame().vars[n];
      if (v.k == Val::K::BlockPtr && now.k == Val::K::BlockPtr && now.blockShape == v.blockShape)
        for (size_t k = 0, r = v.blockShape.size(); k < r; ++k) now.elems[2 * r + k] = Val::none();  // offsets are carried
      if (!(now == v))
        fail(p, "'" + n + "' (" + describe(v) + ") is reassigned inside a loop with runtime bounds: not supported",
             "compute it before the loop, or unroll with tl.static_range");
    }
  }

  // Names first defined inside a runtime region are not visible after it.
  void hideNewNames(const std::unordered_map<std::string, Val>& before, const Body& body, Pos p, const char* what) {
    std::vector<std::string> assigned;
    assignedNames(body, assigned);
    for (auto& n : assigned) {
      if (before.count(n)) continue;
      Val u;
      u.k = Val::K::Undef;
      u.s = "'" + n + "' is defined inside the " + what + " at line " + std::to_string(p.line) +
            " and is not available after it";
      frame().vars[n] = u;
    }
  }

  void execFor(const Stmt& s) {
    const Expr& it = *s.value;
    if (it.kind != Expr::Kind::Call)
      fail(it.pos, "for loops must iterate over range(...), tl.range(...) or tl.static_range(...)");
    Val fn = eval(*it.kids[0]);
    bool isStatic = false, isRange = false;
    if (fn.k == Val::K::Builtin && fn.s == "range") isRange = true;
    if (fn.k == Val::K::TlFunc && fn.s == "range") isRange = true;
    if (fn.k == Val::K::TlFunc && fn.s == "static_range") isStatic = true;
    if (!isRange && !isStatic)
      fail(it.pos, "for loops over " + describe(fn) + ": not supported yet",
           "iterate over range(...), tl.range(...) or tl.static_range(...)");
    Args a;
    a.at = it.pos;
    for (size_t k = 1; k < it.kids.size(); ++k) {
      a.pos.push_back(eval(*it.kids[k]));
      a.posAt.push_back(it.kids[k]->pos);
    }
    for (auto& [name, ex] : it.keywords) {
      a.kw.emplace_back(name, eval(*ex));
      a.kwAt.push_back(ex->pos);
    }
    std::string fname = fn.k == Val::K::Builtin ? "range" : "tl." + fn.s;
    std::vector<std::string> params = {"arg1", "arg2", "step"};
    if (fn.k == Val::K::TlFunc && !isStatic)
      params.insert(params.end(), {"num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten",
                                   "warp_specialize", "disable_licm"});
    std::vector<Pos> w;
    auto v = bind(a, fname, params, 1, &w);
    Val lo = Val::integer(0), hi = *v[0], step = Val::integer(1);
    Pos loAt = w[0], hiAt = w[0], stepAt = a.at;
    if (v[1]) lo = *v[0], hi = *v[1], hiAt = w[1];
    if (v[2]) step = *v[2], stepAt = w[2];
    const Expr& target = *s.targets[0];
    if (isStatic) {
      int64_t l = constInt(lo, loAt, "tl.static_range's bounds");
      int64_t h = constInt(hi, hiAt, "tl.static_range's bounds");
      int64_t st = constInt(step, stepAt, "tl.static_range's step");
      if (st == 0) fail(stepAt, "tl.static_range's step must not be zero");
      int64_t count = 0;
      for (int64_t i = l; st > 0 ? i < h : i > h; i += st) {
        if (++count > 65536) fail(it.pos, "tl.static_range unrolls more than 65536 iterations");
        assign(target, Val::integer(i), s.pos);
        exec(s.body);
        if (frame().returned) return;
      }
      return;
    }
    if (target.kind != Expr::Kind::Name) fail(target.pos, "a range loop needs a single name as its target");
    // Bounds: integer scalars of one type.
    std::vector<Val> bounds = {lo, hi, step};
    std::vector<Pos> bAt = {loAt, hiAt, stepAt};
    Scalar bt = Scalar::I32;
    for (size_t k = 0; k < 3; ++k) {
      const Val& b = bounds[k];
      if (b.isIR()) {
        const Type& t = b.v->type();
        if (!t.isScalar() || !t.elemIsInt())
          fail(bAt[k], "range bounds must be integer scalars, got " + t.str());
        if (ir::bitWidth(t.scalar) > ir::bitWidth(bt)) bt = t.scalar;
      } else if (b.k == Val::K::Int || b.k == Val::K::Bool) {
        if (defaultScalar(b) == Scalar::I64) bt = Scalar::I64;
      } else {
        fail(bAt[k], "range bounds must be integers, got " + describe(b));
      }
    }
    if (!step.isIR() && step.i == 0) fail(stepAt, "range's step must not be zero");
    std::vector<ir::Value*> ops;
    for (size_t k = 0; k < 3; ++k) ops.push_back(coerce(bounds[k], bt, {}, bAt[k]));
    std::map<std::string, ir::AttrValue> attrs;
    for (size_t k = 3; k < params.size(); ++k) {
      if (!v[k] || v[k]->k == Val::K::None) continue;
      const Val& o = *v[k];
      if (o.k == Val::K::Bool) attrs[params[k]] = o.i != 0;
      else if (o.k == Val::K::Int) attrs[params[k]] = o.i;
      else fail(w[k], "tl.range's " + params[k] + " must be a constant integer or bool");
    }
    lowerLoop(s, ops, attrs, &target, nullptr);
  }

  void execWhile(const Stmt& s) { lowerLoop(s, {}, {}, nullptr, s.test.get()); }

  // tile.for (when `target` is set) or tile.while (when `test` is set).
  void lowerLoop(const Stmt& s, std::vector<ir::Value*> bounds, std::map<std::string, ir::AttrValue> attrs,
                 const Expr* target, const Expr* test) {
    Frame& fr = frame();
    auto names = carriedNames(s, s.body);
    std::vector<std::string> carried;
    std::vector<ir::Value*> inits;
    std::vector<std::pair<std::string, Val>> frozen;
    splitCarried(names, s.pos, carried, inits, frozen);
    auto before = fr.vars;
    std::vector<Type> types;
    for (auto* i : inits) types.push_back(i->type());
    ir::Block* outer = b_.block();
    int savedFrom = fr.loopFrom;
    fr.loopFrom = std::min(fr.loopFrom, s.readBegin);
    ++fr.runtimeDepth;
    at(s.pos);
    ir::Op* op;
    if (target) {
      std::vector<ir::Value*> ops = bounds;
      ops.insert(ops.end(), inits.begin(), inits.end());
      op = b_.create(OpKind::For, ops, types, attrs);
      Block* body = op->addRegion();
      ir::Value* iv = body->addArg(bounds[0]->type(), target->name);
      fr.vars[target->name] = Val::ir(iv);
      for (size_t k = 0; k < carried.size(); ++k) slot(fr, carried[k], s.pos) = Val::ir(body->addArg(types[k], slotName(carried[k])));
      b_.setInsertionPointToEnd(body);
      exec(s.body);
    } else {
      op = b_.create(OpKind::While, inits, types);
      Block* beforeB = op->addRegion();
      Block* afterB = op->addRegion();
      std::vector<ir::Value*> bargs;
      for (size_t k = 0; k < carried.size(); ++k) {
        bargs.push_back(beforeB->addArg(types[k], slotName(carried[k])));
        slot(fr, carried[k], s.pos) = Val::ir(bargs.back());
      }
      b_.setInsertionPointToEnd(beforeB);
      Val c = eval(*test);
      if (c.isIR() && c.v->type().isTile())
        fail(test->pos, "the condition of 'while' must be a scalar, got " + c.v->type().str());
      // The condition may not rebind carried names (it is an expression), so the args pass through.
      ir::Value* cond = toBool(c, test->pos);
      std::vector<ir::Value*> condOps = {cond};
      condOps.insert(condOps.end(), bargs.begin(), bargs.end());
      at(test->pos);
      b_.create(OpKind::Condition, condOps, {});
      for (size_t k = 0; k < carried.size(); ++k) slot(fr, carried[k], s.pos) = Val::ir(afterB->addArg(types[k], slotName(carried[k])));
      b_.setInsertionPointToEnd(afterB);
      exec(s.body);
    }
    std::vector<ir::Value*> yields;
    for (size_t k = 0; k < carried.size(); ++k)
      yields.push_back(asCarried(slot(fr, carried[k], s.pos), types[k], slotName(carried[k]), s.pos,
                                 target ? "the loop" : "the while loop"));
    at(s.pos);
    b_.create(OpKind::Yield, yields, {});
    checkFrozen(frozen, s.pos);
    --fr.runtimeDepth;
    fr.loopFrom = savedFrom;
    b_.setInsertionPointToEnd(outer);
    fr.vars = before;
    hideNewNames(before, s.body, s.pos, target ? "loop" : "while loop");
    if (target && !before.count(target->name)) {
      Val u;
      u.k = Val::K::Undef;
      u.s = "the loop variable '" + target->name + "' is not available after its loop";
      fr.vars[target->name] = u;
    }
    for (size_t k = 0; k < carried.size(); ++k) {
      op->result(k)->nameHint = slotName(carried[k]);
      slot(fr, carried[k], s.pos) = Val::ir(op->result(k));
    }
  }

  SourceFile* file_;  // the file whose code is being lowered (the kernel's, or an imported module's)
  SourceFile& root_;  // the kernel's file
  std::map<std::string, std::unique_ptr<SourceFile>> modules_;  // imported .py files, by path
  const driver::Spec& spec_;
  ir::Builder b_;
  std::unique_ptr<ir::Module> m_;
  ir::Func* func_ = nullptr;
  std::vector<Frame*> frames_;
  std::unordered_map<std::string, Val> globalCache_;
  std::set<std::string> explained_;  // (file, name) pairs whose module-level binding --explain has told
  std::vector<ExprP> globalExprs_;
};

}  // namespace

std::unique_ptr<ir::Module> lowerKernel(SourceFile& file, const std::string& kernel, const driver::Spec& spec) {
  return Lowerer(file, spec).run(kernel);
}

}  // namespace tawa::frontend
