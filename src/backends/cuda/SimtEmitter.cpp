#include "backends/cuda/SimtEmitter.h"

#include "ir/Elementwise.h"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tawa::cuda {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

namespace {

// Threads per program: enough that the largest tile is about 32 entries per thread, 128 to 1024.
// A 128x128 accumulator held by 128 threads (128 entries each, beside its operands') spilled 5 KB
// in Triton's grouped GEMM; by 512 threads (32 each), 0.5 KB.
int threadsFor(const ir::Func& f) {
  int64_t largest = 0;
  ir::walk(f.body, [&](const Op* op) {
    for (size_t r = 0; r < op->numResults(); ++r)
      if (op->result(r)->type().isTile()) largest = std::max(largest, op->result(r)->type().numel());
  });
  int threads = 128;
  while (threads < 1024 && threads * 32 < largest) threads *= 2;
  return threads;
}

bool isHalf(Scalar s) { return s == Scalar::F16 || s == Scalar::BF16; }
bool isFp8(Scalar s) { return s == Scalar::F8E4M3 || s == Scalar::F8E5M2; }

class SimtEmitter {
 public:
  SimtEmitter(const ir::Func& f, const EmitOptions& opt) : f_(f), opt_(opt), threads_(threadsFor(f)), warps_(threads_ / 32) {}

  EmitResult run() {
    EmitResult er;
    er.kernelName = opt_.kernelName.empty() ? f_.name : opt_.kernelName;
    er.threads = threads_;
    if (opt_.profile)
      throw UserError(f_.loc, "--profile records the roles of a warp-specialized kernel; '@" + f_.name +
                                  "' has no warp-specialized form (it is emitted as a SIMT kernel)",
                      "profile it with tawa profile --backend exec, or drop --profile");
    std::ostringstream sig;
    for (size_t i = 0; i < f_.numArgs(); ++i) {
      const Value* a = f_.arg(i);
      KernelParam p;
      p.name = nameFor(a);
      p.irArg = static_cast<int>(i);
      if (a->type().isPtr()) {
        p.cType = cOf(a->type().scalar, f_.loc) + "*";
        p.pointer = true;
      } else if (a->type().isScalar()) {
        p.cType = cOf(a->type().scalar, f_.loc);
      } else {
        throw UserError(f_.loc, "argument %" + (a->nameHint.empty() ? std::to_string(i) : a->nameHint) +
                                    " is not a scalar or a pointer; the SIMT path passes only those");
      }
      sig << (i ? ", " : "") << p.cType << " " << p.name;
      er.params.push_back(p);
    }
    if (opt_.includeHeader) out_ << "#include \"primitives.cuh\"\n\n";
    out_ << "// " << f_.name << ": a SIMT kernel (no warp-specialized form), one block of " << threads_
         << " threads per program; tile element e lives in thread e % " << threads_ << ", entry e / " << threads_ << ".\n";
    out_ << "extern \"C\" __global__ __launch_bounds__(" << threads_ << ", 1) void " << er.kernelName << "(" << sig.str() << ") {\n";
    ++indent_;
    line("using namespace tawa;");
    line("const int tid = thread_idx();");
    line("float* red = reinterpret_cast<float*>(dynamic_smem_1024());  // cross-warp reduction scratch");
    line("unsigned char* stage = reinterpret_cast<unsigned char*>(dynamic_smem_1024()) + " + std::to_string(scratchBytes()) +
         ";  // tiles that change layout");
    line("(void)red;");
    line("(void)stage;");
    emitBlock(f_.body);
    --indent_;
    out_ << "}\n";
    er.source = out_.str();
    // Alignment slack, the cross-warp reduction scratch (a word per warp), and the largest tile staged
    // in shared memory to change its layout (broadcast, permute, reductions and scans along an axis).
    er.smemBytes = 1024 + scratchBytes() + after(stageBytes_);
    return er;
  }

 private:
  // ---- names and output

  std::string nameFor(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string s = "r_";
    for (char c : v->nameHint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s == "r_") s += std::to_string(counter_++);
    return names_[v] = unique(s);
  }
  // `base`, or base_1, base_2, ... : a name no other variable has.
  std::string unique(const std::string& base) {
    std::string s = base;
    for (int n = 1; taken_.count(s); ++n) s = base + "_" + std::to_string(n);
    taken_.insert(s);
    return s;
  }
  std::string cOf(Scalar s, const Location& loc) {
    if (isFp8(s)) return s == Scalar::F8E4M3 ? "tawa::fp8e4m3" : "tawa::fp8e5m2";  // its bits: loads, stores, conversions
    std::string c = cScalarType(s);
    if (c.empty())
      throw UserError(loc, std::string("the SIMT path has no ") + std::string(ir::scalarName(s)) + " arithmetic",
                      "fp8 element types go through wgmma in warp-specialized kernels");
    return c;
  }
  std::string elemC(const Type& t, const Location& loc) {
    if (t.isPtr() || (t.isTile() && t.elemIsPtr)) return cOf(t.scalar, loc) + "*";
    return cOf(t.scalar, loc);
  }
  void line(const std::string& s) { out_ << std::string(2 * static_cast<size_t>(indent_), ' ') << s << "\n"; }
  void at(const Op& op) {
    if (opt_.lineDirectives) out_ << lines_.next(op.loc());
  }

  // ---- tiles

  // Entries per thread of a tile value (1 for scalars). A tile of any rank is laid out by its
  // row-major element index e: element e lives in thread e % T, entry e / T (T = threads_).
  int64_t entries(const Type& t, const Op&) {
    if (!t.isTile()) return 1;
    return (t.numel() + threads_ - 1) / threads_;
  }
  // Whether entry k of this thread is an element of an N-element tile (always, when N % T == 0).
  std::string inTile(const Type& t) const {
    if (!t.isTile() || t.numel() % threads_ == 0) return "";
    return "tid + " + std::to_string(threads_) + " * k < " + std::to_string(t.numel());
  }
  // Row-major strides of a shape.
  static std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape) {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
    return st;
  }
  // The C expression of element e's index along dimension d of `shape`, e = tid + T * k.
  std::string indexAlong(const std::vector<int64_t>& shape, size_t d) const {
    const auto st = stridesOf(shape);
    std::string e = "(tid + " + std::to_string(threads_) + " * k)";
    if (st[d] != 1) e = "(" + e + " / " + std::to_string(st[d]) + ")";
    return d == 0 ? e : "(" + e + " % " + std::to_string(shape[d]) + ")";
  }
  // `body` for each entry k of a tile of type t, under `cond` when not empty.
  void perEntry(const Type& t, const Op& op, const std::string& cond, const std::string& body) {
    line("TAWA_UNROLL for (int k = 0; k < " + std::to_string(entries(t, op)) + "; ++k) " +
         (cond.empty() ? body : "if (" + cond + ") " + body));
  }
  // The condition for entry k to take part: inside the tile (inTile) and, when given, the mask.
  std::string guarded(const Type& t, const std::string& mask) const {
    std::string guard = inTile(t);
    return guard.empty() ? mask : mask.empty() ? guard : "(" + guard + ") && " + mask;
  }
  // The expression of operand v inside an entry loop over k (a scalar is the same in every entry).
  std::string ref(const Value* v) { return v->type().isTile() ? nameFor(v) + "[k]" : nameFor(v); }
  std::string declare(const Value* v, const Op& op, const std::string& name = {}) {
    std::string n = name.empty() ? nameFor(v) : name;
    return v->type().isTile() ? elemC(v->type(), op.loc()) + " " + n + "[" + std::to_string(entries(v->type(), op)) + "]"
                              : elemC(v->type(), op.loc()) + " " + n;
  }
  // An immutable scalar: `const T name`, or `T* const name` for a pointer.
  std::string constant(const Value* v, const Op& op) {
    return v->type().isPtr() ? elemC(v->type(), op.loc()) + " const " + nameFor(v) : "const " + declare(v, op);
  }
  // result = expr (expr written in terms of ref(operand) and `k`), entry by entry for tiles.
  void define(const Op& op, const std::string& expr) {
    const Value* r = op.result();
    if (!r->type().isTile()) {
      line(constant(r, op) + " = " + expr + ";");
      return;
    }
    line(declare(r, op) + ";");
    perEntry(r->type(), op, "", nameFor(r) + "[k] = " + expr + ";");
  }
  // Copies value `from` into the variable of `to` (same type): carried loop values and if results.
  void assign(const Value* to, const std::string& toName, const Value* from, const Op& op) {
    copy(to->type(), toName, nameFor(from), op);
  }
  void copy(const Type& t, const std::string& toName, const std::string& fromName, const Op& op) {
    if (!t.isTile()) {
      line(toName + " = " + fromName + ";");
      return;
    }
    perEntry(t, op, "", toName + "[k] = " + fromName + "[k];");
  }

  // ---- arithmetic

  // The operand as float when the element is f16/bf16 (arithmetic runs in f32 and rounds back).
  std::string wide(const Value* v) {
    return isHalf(v->type().scalar) || isFp8(v->type().scalar) ? "to_f32(" + ref(v) + ")" : ref(v);
  }
  std::string narrow(Scalar s, const std::string& e) {
    if (s == Scalar::F16) return "to_f16(" + e + ")";
    if (s == Scalar::BF16) return "to_bf16(" + e + ")";
    if (s == Scalar::F8E4M3) return "to_fp8e4m3(" + e + ")";
    if (s == Scalar::F8E5M2) return "to_fp8e5m2(" + e + ")";
    return e;
  }
  // A C math function for element type s: the f-suffixed float one, or the double one for f64
  // (arithmetic on f16/bf16 runs in f32).
  static std::string math(const std::string& name, Scalar s) { return s == Scalar::F64 ? name : name + "f"; }
  static std::string floatLiteral(double v, Scalar s) {
    if (std::isnan(v)) return "(inf_f32() - inf_f32())";
    if (std::isinf(v)) return v > 0 ? "inf_f32()" : "(-inf_f32())";
    char buf[64];
    std::snprintf(buf, sizeof buf, s == Scalar::F64 ? "%.17g" : "%.9g", v);
    std::string t = buf;
    if (t.find_first_of(".eE") == std::string::npos) t += ".0";
    return s == Scalar::F64 ? t : t + "f";
  }

  void binary(const Op& op) {
    const Value* a = op.operand(0);
    const Value* b = op.operand(1);
    Scalar s = a->type().scalar;
    bool fl = ir::isFloat(s);
    std::string x = wide(a), y = wide(b), e;
    switch (op.kind()) {
      case OpKind::Add: e = "(" + x + " + " + y + ")"; break;
      case OpKind::Sub: e = "(" + x + " - " + y + ")"; break;
      case OpKind::Mul: e = "(" + x + " * " + y + ")"; break;
      case OpKind::Div:  // floats but f64: div.full.f32 on the f32 they are computed in, as Triton's `/`
        e = fl && s != Scalar::F64 ? "tawa::div_full(" + x + ", " + y + ")" : "(" + x + " / " + y + ")";
        break;
      case OpKind::Rem: e = fl ? math("fmod", s) + "(" + x + ", " + y + ")" : "(" + x + " % " + y + ")"; break;
      case OpKind::FloorDiv:
        if (fl) throw UserError(op.loc(), "tile.floordiv takes integers");
        e = "(" + x + " / " + y + " - ((" + x + " % " + y + " != 0) && ((" + x + " < 0) != (" + y + " < 0))))";
        break;
      case OpKind::Max:  // floats: maxNum (tl.maximum's default) or NaN-propagating ({propagate_nan = 1})
        e = fl ? std::string(ir::propagatesNan(op) ? "max_nan(" : "max_num(") + x + ", " + y + ")" : "(" + x + " > " + y + " ? " + x + " : " + y + ")";
        break;
      case OpKind::Min:
        e = fl ? std::string(ir::propagatesNan(op) ? "min_nan(" : "min_num(") + x + ", " + y + ")" : "(" + x + " < " + y + " ? " + x + " : " + y + ")";
        break;
      case OpKind::And: e = "(" + x + " & " + y + ")"; break;
      case OpKind::Or: e = "(" + x + " | " + y + ")"; break;
      case OpKind::Xor: e = "(" + x + " ^ " + y + ")"; break;
      case OpKind::Shl: e = "(" + x + " << " + y + ")"; break;
      case OpKind::Shr: e = "(" + x + " >> " + y + ")"; break;
      default: break;
    }
    if (fl && s != Scalar::F32 && s != Scalar::F64 && !isHalf(s))
      throw UserError(op.loc(), "the SIMT path has no " + std::string(ir::scalarName(s)) + " arithmetic");
    if (op.kind() == OpKind::And || op.kind() == OpKind::Or || op.kind() == OpKind::Xor || op.kind() == OpKind::Shl ||
        op.kind() == OpKind::Shr) {
      if (fl) throw UserError(op.loc(), std::string(op.name()) + " takes integers");
      if (s == Scalar::I1) e = "static_cast<bool>" + e;
    }
    define(op, narrow(s, e));
  }

  void unary(const Op& op) {
    const Value* a = op.operand(0);
    Scalar s = a->type().scalar;
    std::string x = wide(a), e;
    bool fl = ir::isFloat(s);
    auto need = [&]() {
      if (!fl) throw UserError(op.loc(), std::string(op.name()) + " takes a float operand");
    };
    auto call = [&](const char* name) { return math(name, s) + "(" + x + ")"; };
    switch (op.kind()) {
      case OpKind::Neg: e = "(-" + x + ")"; break;
      case OpKind::Not: e = s == Scalar::I1 ? "(!" + x + ")" : "(~" + x + ")"; break;
      case OpKind::Abs: e = fl ? call("fabs") : "(" + x + " < 0 ? -" + x + " : " + x + ")"; break;
      case OpKind::Exp: need(), e = call("exp"); break;
      case OpKind::Exp2: need(), e = call("exp2"); break;
      case OpKind::Log: need(), e = call("log"); break;
      case OpKind::Log2: need(), e = call("log2"); break;
      case OpKind::Sqrt: need(), e = call("sqrt"); break;
      case OpKind::Rsqrt: need(), e = "(1.0f / " + call("sqrt") + ")"; break;
      case OpKind::Sin: need(), e = call("sin"); break;
      case OpKind::Cos: need(), e = call("cos"); break;
      default: break;
    }
    define(op, narrow(s, e));
  }

  // A libdevice function (tile.math): its primitive, tawa::math_<fn>, in the operands' float type.
  void math(const Op& op) {
    Scalar s = op.result()->type().scalar;
    if (s != Scalar::F32 && s != Scalar::F64)
      throw UserError(op.loc(), "tile.math " + op.strAttr("fn") + " on the SIMT path takes f32 or f64, got " + std::string(ir::scalarName(s)));
    std::string e = "tawa::math_" + op.strAttr("fn") + "(" + wide(op.operand(0));
    for (size_t k = 1; k < op.numOperands(); ++k) e += ", " + wide(op.operand(k));
    define(op, e + ")");
  }

  void cast(const Op& op) {
    Scalar to = op.result()->type().scalar;
    std::string x = wide(op.operand(0));
    std::string e;
    const Scalar from = op.operand(0)->type().scalar;
    // Integers wider than 16 bits to bf16 with one rounding (through f32 it would round twice past
    // 2^24), and f64 to f16/bf16 likewise; floats to integers toward zero, saturated, NaN to 0 (cvt.rzi,
    // as the executor).
    if (to == Scalar::BF16 && !ir::isFloat(from) && from != Scalar::I1 && ir::bitWidth(from) > 16) e = "int_to_bf16(" + x + ")";
    else if (isHalf(to) && from == Scalar::F64) e = (to == Scalar::F16 ? "f64_to_f16(" : "f64_to_bf16(") + x + ")";
    else if (isFp8(to) && from == Scalar::F64) e = (to == Scalar::F8E4M3 ? "f64_to_fp8e4m3(" : "f64_to_fp8e5m2(") + x + ")";
    else if (isHalf(to) || isFp8(to)) e = narrow(to, "static_cast<float>(" + x + ")");
    else if (to == Scalar::I1) e = "(" + x + " != 0)";
    else if (ir::isFloat(from) && !ir::isFloat(to)) e = "float_to_int<" + cOf(to, op.loc()) + ">(" + x + ")";
    else e = "static_cast<" + cOf(to, op.loc()) + ">(" + x + ")";
    define(op, e);
  }

  // ---- ops

  void emitBlock(const Block& b) {
    for (const auto& op : b.ops()) emitOp(*op);
  }

  void emitOp(const Op& op) {
    at(op);
    for (const auto& r : op.results()) entries(r->type(), op);  // 1-D tiles only: located error otherwise
    switch (op.kind()) {
      case OpKind::ProgramId:
      case OpKind::NumPrograms: {
        static const char* axes[] = {"x", "y", "z"};
        int64_t ax = op.intAttr("axis");
        if (ax < 0 || ax > 2) throw UserError(op.loc(), "axis must be 0, 1 or 2");
        define(op, std::string(op.kind() == OpKind::ProgramId ? "block_idx_" : "grid_dim_") + axes[ax] + "()");
        return;
      }
      case OpKind::Constant: {
        const Type& t = op.result()->type();
        const auto& v = op.attrs.at("value");
        std::string lit;
        if (const auto* d = std::get_if<double>(&v)) lit = ir::isFloat(t.scalar) ? floatLiteral(*d, t.scalar) : std::to_string(static_cast<int64_t>(*d));
        else if (const auto* i = std::get_if<int64_t>(&v))
          lit = ir::isFloat(t.scalar)      ? floatLiteral(static_cast<double>(*i), t.scalar)
                : ir::isUnsigned(t.scalar) ? std::to_string(static_cast<uint64_t>(*i)) + "ull"  // u64: the bit pattern
                                           : std::to_string(*i) + (t.scalar == Scalar::I64 ? "ll" : "");
        else if (const auto* bl = std::get_if<bool>(&v)) lit = *bl ? "true" : "false";
        else throw UserError(op.loc(), "a constant's value must be a number");
        if (t.scalar == Scalar::I1 && lit != "true" && lit != "false") lit = "(" + lit + " != 0)";
        define(op, narrow(t.scalar, lit));
        return;
      }
      case OpKind::Arange: {
        int64_t start = op.intAttr("start");
        define(op, "static_cast<int32_t>(" + std::to_string(start) + " + tid + " + std::to_string(threads_) + " * k)");
        return;
      }
      case OpKind::Splat: define(op, nameFor(op.operand(0))); return;
      case OpKind::ExpandDims:
      case OpKind::Reshape: define(op, ref(op.operand(0))); return;  // row-major order is unchanged: so is the layout
      case OpKind::Broadcast:
      case OpKind::Permute:
      case OpKind::Slice: relayout(op); return;
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::FloorDiv:
      case OpKind::Rem:
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::And:
      case OpKind::Or:
      case OpKind::Xor:
      case OpKind::Shl:
      case OpKind::Shr: binary(op); return;
      case OpKind::Cmp: {
        static const std::map<std::string, std::string> preds = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                                 {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
        auto it = preds.find(op.strAttr("pred"));
        if (it == preds.end()) throw UserError(op.loc(), "unknown comparison '" + op.strAttr("pred") + "'");
        define(op, "(" + wide(op.operand(0)) + " " + it->second + " " + wide(op.operand(1)) + ")");
        return;
      }
      case OpKind::Select:
        define(op, "(" + ref(op.operand(0)) + " ? " + ref(op.operand(1)) + " : " + ref(op.operand(2)) + ")");
        return;
      case OpKind::Neg:
      case OpKind::Not:
      case OpKind::Abs:
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Log:
      case OpKind::Log2:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Sin:
      case OpKind::Cos: unary(op); return;
      case OpKind::Math: math(op); return;
      case OpKind::Cast: cast(op); return;
      case OpKind::Assume:
        define(op, "tawa::assume_at_least(" + ref(op.operand(0)) + ", " + std::to_string(op.intAttr("min")) + "LL)");
        return;
      case OpKind::Bitcast:
        // Pointers to pointers, and 64-bit integers to pointers and back (an array of pointers read):
        // an address is an unsigned long long on the device and on the emulator's hosts.
        if (op.result()->type().isPtrLike()) define(op, "reinterpret_cast<" + elemC(op.result()->type(), op.loc()) + ">(" + ref(op.operand(0)) + ")");
        else if (op.operand(0)->type().isPtrLike())
          define(op, "static_cast<" + cOf(op.result()->type().scalar, op.loc()) + ">(reinterpret_cast<unsigned long long>(" + ref(op.operand(0)) + "))");
        else define(op, "tawa::bitcast<" + cOf(op.result()->type().scalar, op.loc()) + ">(" + ref(op.operand(0)) + ")");
        return;
      case OpKind::AddPtr: define(op, "(" + ref(op.operand(0)) + " + " + ref(op.operand(1)) + ")"); return;
      case OpKind::Load: load(op); return;
      case OpKind::MakeDesc: makeDesc(op); return;
      case OpKind::DescLoad:
      case OpKind::DescStore: descAccess(op); return;
      case OpKind::Store: store(op); return;
      case OpKind::Reduce: reduce(op); return;
      case OpKind::Scan: scan(op); return;
      case OpKind::Dot: dot(op); return;
      case OpKind::Atomic: atomic(op); return;
      case OpKind::Barrier:
        // Tile elements live in different threads: the block's barrier orders their global accesses.
        line("syncthreads();  // tl.debug_barrier()");
        return;
      case OpKind::For: forLoop(op); return;
      case OpKind::If: ifOp(op); return;
      case OpKind::While: whileLoop(op); return;
      case OpKind::Condition: return;  // handled by the enclosing tile.while
      case OpKind::Return:
        if (op.numOperands() != 0) throw UserError(op.loc(), "a kernel returns nothing");
        line("return;");
        return;
      case OpKind::Yield: return;  // handled by the enclosing op
      default:
        throw UserError(op.loc(), std::string(op.name()) + " has no SIMT form",
                        "the SIMT path (kernels without a warp-specialized form) takes 1-D element-wise, reduction, load/store and loop ops");
    }
  }

  void load(const Op& op) {
    const Value* ptr = op.operand(0);
    const Value* r = op.result();
    if (!r->type().isTile()) {
      // A masked one (`tl.load(p + pid - 1, mask=pid > 0, other=0)`) reads only where its mask holds.
      std::string e = "*" + nameFor(ptr);
      if (op.numOperands() > 1) {
        const Scalar s = r->type().scalar;
        const std::string other = op.numOperands() > 2 ? nameFor(op.operand(2))
                                  : s == Scalar::I1 ? "false" : narrow(s, ir::isFloat(s) ? "0.0f" : "0");
        e = "(" + nameFor(op.operand(1)) + " ? " + e + " : " + other + ")";
      }
      line(constant(r, op) + " = " + e + ";");
      return;
    }
    std::string cond = guarded(r->type(), op.numOperands() > 1 ? ref(op.operand(1)) : "");
    std::string other = op.numOperands() > 2 ? ref(op.operand(2)) : narrow(r->type().scalar, ir::isFloat(r->type().scalar) ? "0.0f" : "0");
    if (r->type().scalar == Scalar::I1 && op.numOperands() <= 2) other = "false";
    define(op, cond.empty() ? "*" + ref(ptr) : "(" + cond + " ? *" + ref(ptr) + " : " + other + ")");
  }

  // tile.make_desc: the descriptor's base, shape and strides as scalars; its blocks are read and
  // written through them with plain accesses (descAccess).
  void makeDesc(const Op& op) {
    const Value* d = op.result();
    const size_t rank = d->type().shape.size();
    const std::string n = nameFor(d);
    line(elemC(Type::ptrTo(d->type().scalar), op.loc()) + " const " + n + "_base = " + nameFor(op.operand(0)) + ";");
    for (size_t a = 0; a < rank; ++a) {
      line("const long long " + n + "_shape" + std::to_string(a) + " = " + nameFor(op.operand(1 + a)) + ";");
      line("const long long " + n + "_stride" + std::to_string(a) + " = " + nameFor(op.operand(1 + rank + a)) + ";");
    }
  }

  // tile.desc_load / tile.desc_store with TMA's semantics, element by element: an element outside
  // the descriptor's shape (either side) reads zero and is not stored.
  void descAccess(const Op& op) {
    const bool store = op.kind() == OpKind::DescStore;
    const Value* d = op.operand(0);
    if (d->definingOp() == nullptr || d->definingOp()->kind() != OpKind::MakeDesc)
      throw UserError(op.loc(), "the SIMT path reads blocks through a descriptor made by tile.make_desc in the kernel; this one is " +
                                    std::string(d->definingOp() ? "carried through control flow" : "an argument"));
    const Type& dt = d->type();
    const size_t rank = dt.shape.size();
    const Type tile = Type::tileOf(dt.shape, Type::scalarOf(dt.scalar));
    const std::string n = nameFor(d);
    // Gathered rows (a 2-D load with a tile<R x i32> of rows): each entry's row read from the staged tile.
    const std::string rows = !store && op.operand(1)->type().isTile() ? stageTile(op.operand(1), op) : "";
    std::string inside, at;
    for (size_t a = 0; a < rank; ++a) {
      const std::string c = a == 0 && !rows.empty()
                                ? "static_cast<long long>(" + rows + "[" + indexAlong(dt.shape, 0) + "])"
                                : "(static_cast<long long>(" + nameFor(op.operand(1 + (store ? 1 : 0) + a)) + ") + " + indexAlong(dt.shape, a) + ")";
      const std::string A = std::to_string(a);
      inside += (a ? " && " : "") + c + " >= 0 && " + c + " < " + n + "_shape" + A;
      at += (a ? " + " : "") + c + " * " + n + "_stride" + A;
    }
    const std::string cond = guarded(tile, "(" + inside + ")");
    if (store) {
      perEntry(tile, op, cond, n + "_base[" + at + "] = " + ref(op.operand(1)) + ";");
      return;
    }
    std::string zero = narrow(dt.scalar, ir::isFloat(dt.scalar) ? "0.0f" : "0");
    if (auto o = op.attrs.find("other"); o != op.attrs.end()) {  // a 1-D load's constant `other` (BlockAccess)
      if (const auto* f = std::get_if<double>(&o->second); f && ir::isFloat(dt.scalar)) zero = narrow(dt.scalar, floatLiteral(*f, dt.scalar));
      else if (const auto* i = std::get_if<int64_t>(&o->second); i && !ir::isFloat(dt.scalar)) zero = narrow(dt.scalar, std::to_string(*i));
      else throw UserError(op.loc(), "the 1-D load's 'other' does not match its element type", "");
    }
    define(op, "((" + cond + ") ? " + n + "_base[" + at + "] : " + zero + ")");
    if (!rows.empty()) unstage();
  }

  void store(const Op& op) {
    const Value* ptr = op.operand(0);
    const Value* v = op.operand(1);
    if (!ptr->type().isTile()) {
      if (op.numOperands() > 2) throw UserError(op.loc(), "a scalar store takes no mask");
      // Every thread's earlier accesses first, as for a scalar atomic: a flag the others loaded must
      // not change under them (a program overwriting the flag that chose its branch), or they would
      // branch apart and wait for each other forever.
      line("syncthreads();");
      line("if (tid == 0) *" + nameFor(ptr) + " = " + nameFor(v) + ";  // one thread stores a scalar");
      return;
    }
    perEntry(ptr->type(), op, guarded(ptr->type(), op.numOperands() > 2 ? ref(op.operand(2)) : ""),
             "*" + ref(ptr) + " = " + ref(v) + ";");
  }

  // tile.atomic: each tile element's RMW by the thread that holds it (masked-off ones read 0); a
  // scalar one once, by thread 0, its old value handed to every thread through the scratch.
  void atomic(const Op& op) {
    const std::string& kind = op.strAttr("kind");
    const Value* ptr = op.operand(0);
    const Value* r = op.result();
    const Scalar s = r->type().scalar;
    const int width = ir::byteWidth(s);
    if (width != 2 && width != 4 && width != 8)
      throw UserError(op.loc(), "the SIMT path has atomics on 2-, 4- and 8-byte elements; this one is " + std::string(ir::scalarName(s)),
                      "atomics on 8-bit integers and i1 are not emitted yet");
    if (width == 2 && kind == "cas")
      throw UserError(op.loc(), "the SIMT path has no compare-and-swap of " + std::string(ir::scalarName(s)) + " elements",
                      "atomic_cas takes 4- and 8-byte elements here");
    const std::string& sem = op.strAttr("sem");
    const std::string scope = std::to_string(op.strAttr("scope") == "cta" ? 0 : op.strAttr("scope") == "sys" ? 2 : 1);
    std::string call;
    if (kind == "cas") {
      call = "atomic_cas<" + scope + ">(" + ref(ptr) + ", " + ref(op.operand(1)) + ", " + ref(op.operand(2)) + ")";
    } else {
      static const std::map<std::string, std::string> ops = {{"add", "Add"}, {"max", "Max"}, {"min", "Min"}, {"and", "And"},
                                                             {"or", "Or"},   {"xor", "Xor"}, {"xchg", "Xchg"}};
      call = "atomic<AtomicOp::" + ops.at(kind) + ", " + scope + ">(" + ref(ptr) + ", " + ref(op.operand(1)) + ")";
    }
    const std::string fence = "fence_acq_rel<" + scope + ">();";
    const bool before = sem == "release" || sem == "acq_rel", after = sem == "acquire" || sem == "acq_rel";
    const std::string t = elemC(r->type(), op.loc()), n = nameFor(r);
    if (!r->type().isTile()) {
      line(t + " " + n + "_own = 0;");
      // Every thread's earlier accesses first: a scalar the others loaded before (a count read under
      // a lock) must not change under them, or they would branch apart.
      line("syncthreads();");
      line("if (tid == 0) {  // one thread applies a scalar atomic");
      if (before) line("  " + fence + "  // sem " + sem);
      line("  " + n + "_own = " + call + ";");
      if (after) line("  " + fence);
      line("  *reinterpret_cast<" + t + "*>(red) = " + n + "_own;");
      line("}");
      line("syncthreads();");
      line("const " + t + " " + n + " = *reinterpret_cast<const " + t + "*>(red);  // its old value, for every thread");
      line("syncthreads();  // the scratch is free again");
      return;
    }
    if (before) line(fence + "  // sem " + sem);
    line(declare(r, op) + ";");
    const std::string cond = guarded(ptr->type(), kind != "cas" && op.numOperands() > 2 ? ref(op.operand(2)) : "");
    perEntry(r->type(), op, "", n + "[k] = " + (cond.empty() ? call : "(" + cond + ") ? " + call + " : " + t + "{}") + ";");
    if (after) line(fence);
  }

  // ---- tiles that change layout: through shared memory

  // Writes every element of tile v to the staging area (row-major, its C element type) and waits
  // for the block; returns the staged array's name. The caller reads it and calls unstage().
  std::string stageTile(const Value* v, const Op& op, int64_t offset = 0) {
    const Type& t = v->type();
    const std::string c = elemC(t, op.loc());
    const int64_t bytes = stagedBytes(t);
    if (bytes > kMaxStage)
      throw UserError(op.loc(), std::string(op.name()) + " moves a " + t.str() + " tile (" + std::to_string(bytes) +
                                    " bytes) between threads through shared memory, which holds at most " + std::to_string(kMaxStage),
                      "use smaller blocks");
    if (offset + bytes > kMaxStage)
      throw UserError(op.loc(), std::string(op.name()) + " stages " + std::to_string(offset + bytes) +
                                    " bytes of tiles in shared memory, which holds at most " + std::to_string(kMaxStage),
                      "use smaller blocks");
    stageBytes_ = std::max(stageBytes_, offset + bytes);
    const std::string st = nameFor(v) + "_st" + std::to_string(counter_++);
    line(c + "* " + st + " = reinterpret_cast<" + c + "*>(stage" + (offset ? " + " + std::to_string(offset) : "") + ");");
    perEntry(t, op, inTile(t), st + "[tid + " + std::to_string(threads_) + " * k] = " + nameFor(v) + "[k];");
    line("syncthreads();  // the tile is in shared memory");
    return st;
  }
  void unstage() { line("syncthreads();  // the staging area is free again"); }
  static int64_t stagedBytes(const Type& t) { return t.numel() * (t.elemIsPtr ? 8 : std::max<int64_t>(1, ir::byteWidth(t.scalar))); }
  // Where the next staged tile starts after `bytes` of tiles: 16-byte aligned.
  static int64_t after(int64_t bytes) { return (bytes + 15) / 16 * 16; }
  static constexpr int64_t kMaxStage = 200 * 1024;  // the staging area's bytes at most

  // tile.dot in a kernel that could not be warp-specialized (no loop to pipeline, say): both
  // operands staged in shared memory. Operands and shapes the tensor cores take (mmaKind) run on them
  // through mma.sync (dotMma); otherwise each result
  // element is the sum over K of the products in f32 (i32 for integers), k in order, added to the
  // accumulator operand, rounded once to the result type: plain FMAs, correct for every kernel, slow.
  void dot(const Op& op) {
    const Value *a = op.operand(0), *b = op.operand(1);
    const Value* acc = op.numOperands() > 2 ? op.operand(2) : nullptr;
    const Type &at = a->type(), &bt = b->type(), &rt = op.result()->type();
    if (rt.shape.size() != 2 || at.shape.size() != 2 || bt.shape.size() != 2)
      throw UserError(op.loc(), "a tile.dot of rank " + std::to_string(rt.shape.size()) + " has no SIMT form", "a 2-D tl.dot");
    if (const Mma kind = mmaKind(op); kind != Mma::None) return dotMma(op, kind);
    const bool integer = !ir::isFloat(at.scalar);
    // f32 operands of a tf32 dot (Triton's default) are rounded as the tensor cores read them (and the executor models).
    const bool tf32 = readsTf32(op);
    const std::string accT = integer ? "int" : "float", K = std::to_string(at.shape[1]), N = std::to_string(rt.shape[1]);
    // An operand's element as the sum's type (rounded to tf32 where the dot reads tf32); the
    // accumulator's is never rounded: it is the running sum, kept in f32.
    auto value = [&](const std::string& e, Scalar sc, bool operand = true) {
      return integer         ? "static_cast<int>(" + e + ")"
             : isHalf(sc) || isFp8(sc) ? "to_f32(" + e + ")"  // fp8 products are exact in f32, as the wgmma's
             : operand && tf32 && sc == Scalar::F32 ? "round_tf32(" + e + ")"
                                                    : "static_cast<float>(" + e + ")";
    };
    const std::string sa = stageTile(a, op), sb = stageTile(b, op, after(stagedBytes(at)));
    // k (the product index) outermost and not unrolled, this thread's entries innermost: each entry's
    // sum still adds its products in k order from the accumulator, and the code holds one step's
    // FMAs, not all of them (NVRTC took minutes on 128x256 tiles unrolled whole).
    const std::string r = nameFor(op.result()), g = inTile(rt), E = std::to_string(entries(rt, op)), sum = unique(r + "_sum");
    const std::string skip = g.empty() ? "" : "if (!(" + g + ")) continue; ";
    line(declare(op.result(), op) + ";");
    line(accT + " " + sum + "[" + E + "];");
    line("TAWA_UNROLL for (int k = 0; k < " + E + "; ++k) " + sum + "[k] = " +
         (acc ? value(ref(acc), acc->type().scalar, false) : std::string(integer ? "0" : "0.0f")) + ";");
    line("for (int kk = 0; kk < " + K + "; ++kk) {");
    ++indent_;
    line("TAWA_UNROLL for (int k = 0; k < " + E + "; ++k) {");
    ++indent_;
    line(skip + "const int i = " + indexAlong(rt.shape, 0) + ", j = " + indexAlong(rt.shape, 1) + ";");
    line(sum + "[k] += " + value(sa + "[i * " + K + " + kk]", at.scalar) + " * " + value(sb + "[kk * " + N + " + j]", bt.scalar) + ";");
    --indent_;
    line("}");
    --indent_;
    line("}");
    const Scalar to = rt.scalar;
    line("TAWA_UNROLL for (int k = 0; k < " + E + "; ++k) " + r + "[k] = " +
         (isHalf(to) ? narrow(to, sum + "[k]") : "static_cast<" + cOf(to, op.loc()) + ">(" + sum + "[k])") + ";");
    unstage();
  }

  // Whether the dot reads its f32 operands as tf32 (Triton's default input_precision; "ieee" does not).
  static bool readsTf32(const Op& op) { return op.hasAttr("input_precision") && op.strAttr("input_precision") == "tf32"; }

  // The tensor-core instructions the SIMT dot runs on: m16n8k16 for f16 and bf16 operands (f32 sums)
  // and for 8-bit integers (i32 sums), m16n8k8 for f32 operands of a tf32 dot (f32 sums).
  enum class Mma { None, Half, Tf32, Int8 };
  // Which one the SIMT dot `op` takes: both operands of one of those kinds (8-bit integers: int8, the
  // front end's only integer dot), the result its sums' type, M a multiple of 16, N of 8, K of the instruction's depth,
  // and A, B and the 4-byte result fit the staging area; None otherwise (the FMA loops).
  Mma mmaKind(const Op& op) const {
    const Type &at = op.operand(0)->type(), &bt = op.operand(1)->type(), &rt = op.result()->type();
    const bool tf32 = readsTf32(op);
    const Mma kind = isHalf(at.scalar) && bt.scalar == at.scalar && rt.scalar == Scalar::F32                     ? Mma::Half
                     : at.scalar == Scalar::F32 && bt.scalar == Scalar::F32 && rt.scalar == Scalar::F32 && tf32 ? Mma::Tf32
                     : at.scalar == Scalar::I8 && bt.scalar == Scalar::I8 && rt.scalar == Scalar::I32            ? Mma::Int8
                                                                                                                  : Mma::None;
    if (kind == Mma::None) return kind;
    const int64_t M = rt.shape[0], N = rt.shape[1], K = at.shape[1];
    if (M % 16 || N % 8 || K % (kind == Mma::Tf32 ? 8 : 16)) return Mma::None;
    return after(stagedBytes(at)) + after(stagedBytes(bt)) + M * N * 4 <= kMaxStage ? kind : Mma::None;
  }

  // The tensor-core form of the SIMT dot: A (M x K) and B (K x N) staged row-major, the accumulator
  // (or zeros) written to an M x N array of sums (f32, or i32 for integers) after them; each warp takes
  // 16x8 tiles of the result in turn (tile t: rows 16 (t / (N/8)), columns 8 (t % (N/8))) and, for each
  // slice of K the instruction takes (16 deep, 8 for tf32), loads its lanes' fragments (primitives.cuh's
  // mma_* give the PTX layouts: two 16-bit elements to a register, one tf32, four 8-bit integers) and
  // issues mma.sync, adding into the tile; then every thread reads its own elements back. Float sums
  // are in the tensor core's order, not the FMA path's (the emulator adds each slice exactly, then
  // rounds); integer sums are exact (modulo 2^32, as the FMA path's).
  void dotMma(const Op& op, Mma kind) {
    const Value *a = op.operand(0), *b = op.operand(1);
    const Value* acc = op.numOperands() > 2 ? op.operand(2) : nullptr;
    const Type &at = a->type(), &bt = b->type(), &rt = op.result()->type();
    const int64_t M = rt.shape[0], N = rt.shape[1], K = at.shape[1];
    auto str = [](int64_t v) { return std::to_string(v); };
    const std::string Ns = str(N), Ks = str(K), T = str(threads_), tilesN = str(N / 8);
    const std::string sumT = kind == Mma::Int8 ? "int" : "float";
    const int64_t bOff = after(stagedBytes(at)), cOff = bOff + after(stagedBytes(bt));
    const std::string sa = stageTile(a, op), sb = stageTile(b, op, bOff);
    stageBytes_ = std::max(stageBytes_, cOff + M * N * 4);
    const std::string r = nameFor(op.result()), g = inTile(rt), c = unique(r + "_c");
    line(sumT + "* " + c + " = reinterpret_cast<" + sumT + "*>(stage + " + str(cOff) + ");  // the " +
         (kind == Mma::Int8 ? "i32" : "f32") + " result, row-major");
    perEntry(rt, op, g, c + "[tid + " + T + " * k] = " + (acc ? "static_cast<" + sumT + ">(" + ref(acc) + ")" : kind == Mma::Int8 ? std::string("0") : std::string("0.0f")) + ";");
    line("syncthreads();");
    line("for (int t = tid / 32; t < " + str(M / 16 * (N / 8)) + "; t += " + str(warps_) + ") {  // this warp's 16x8 tiles");
    ++indent_;
    line("const int lg = (tid & 31) >> 2, lq = tid & 3;");
    line(sumT + "* c0 = " + c + " + (t / " + tilesN + " * 16 + lg) * " + Ns + " + t % " + tilesN + " * 8 + 2 * lq;");
    line(sumT + "* c8 = c0 + " + str(8 * N) + ";");
    line(sumT + " d[4] = {c0[0], c0[1], c8[0], c8[1]};");
    line("for (int kk = 0; kk < " + Ks + "; kk += " + (kind == Mma::Tf32 ? "8" : "16") + ") {");
    ++indent_;
    const std::string row = "(t / " + tilesN + " * 16 + lg) * " + Ks + " + kk", col = "t % " + tilesN + " * 8 + lg";
    if (kind == Mma::Half) {
      line("const auto* a0 = " + sa + " + " + row + " + 2 * lq;");
      line("const auto* a8 = a0 + " + str(8 * K) + ";");
      line("const uint32_t af[4] = {pack_pair(a0[0], a0[1]), pack_pair(a8[0], a8[1]), pack_pair(a0[8], a0[9]), pack_pair(a8[8], a8[9])};");
      line("const auto* b0 = " + sb + " + (kk + 2 * lq) * " + Ns + " + " + col + ";");
      line("const uint32_t bf[2] = {pack_pair(b0[0], b0[" + Ns + "]), pack_pair(b0[" + str(8 * N) + "], b0[" + str(9 * N) + "])};");
      line(std::string(at.scalar == Scalar::BF16 ? "mma_16816_bf16" : "mma_16816_f16") + "(d, af, bf);");
    } else if (kind == Mma::Tf32) {
      line("const float* a0 = " + sa + " + " + row + " + lq;");
      line("const float* a8 = a0 + " + str(8 * K) + ";");
      line("const uint32_t af[4] = {tf32_word(a0[0]), tf32_word(a8[0]), tf32_word(a0[4]), tf32_word(a8[4])};");
      line("const float* b0 = " + sb + " + (kk + lq) * " + Ns + " + " + col + ";");
      line("const uint32_t bf[2] = {tf32_word(b0[0]), tf32_word(b0[" + str(4 * N) + "])};");
      line("mma_1688_tf32(d, af, bf);");
    } else {
      line("const auto* a0 = " + sa + " + " + row + " + 4 * lq;");
      line("const auto* a8 = a0 + " + str(8 * K) + ";");
      line("const uint32_t af[2] = {pack_quad(a0[0], a0[1], a0[2], a0[3]), pack_quad(a8[0], a8[1], a8[2], a8[3])};");
      line("const auto* b0 = " + sb + " + (kk + 4 * lq) * " + Ns + " + " + col + ";");
      line("const uint32_t bf[1] = {pack_quad(b0[0], b0[" + Ns + "], b0[" + str(2 * N) + "], b0[" + str(3 * N) + "])};");
      line("mma_16816_s8(d, af, bf);");
    }
    --indent_;
    line("}");
    line("c0[0] = d[0];");
    line("c0[1] = d[1];");
    line("c8[0] = d[2];");
    line("c8[1] = d[3];");
    --indent_;
    line("}");
    line("syncthreads();");
    line(declare(op.result(), op) + ";");
    perEntry(rt, op, g, r + "[k] = " + c + "[tid + " + T + " * k];");
    unstage();
  }

  // tile.broadcast (size-1 dimensions read with stride 0), tile.permute (result dimension d reads
  // source dimension order[d]) and tile.slice (the source's strides from its start): each element
  // read from the staged source at its index.
  void relayout(const Op& op) {
    const Value* a = op.operand(0);
    const Type &at = a->type(), &rt = op.result()->type();
    if (!at.isTile()) return define(op, nameFor(a));
    const auto as = stridesOf(at.shape);
    std::vector<int64_t> src(rt.shape.size(), 0);
    int64_t offset = 0;
    if (op.kind() == OpKind::Broadcast) {
      for (size_t d = 0; d < rt.shape.size(); ++d) src[d] = at.shape[d] == 1 ? 0 : as[d];
    } else if (op.kind() == OpKind::Slice) {  // the source's strides, from element `start` along the axis
      src = as;
      offset = op.intAttr("start") * as[static_cast<size_t>(op.intAttr("axis"))];
    } else {
      const auto& order = op.arrayAttr("order");
      for (size_t d = 0; d < rt.shape.size(); ++d) src[d] = as[static_cast<size_t>(order[d])];
    }
    std::string index;
    for (size_t d = 0; d < rt.shape.size(); ++d)
      if (src[d] != 0) index += (index.empty() ? "" : " + ") + indexAlong(rt.shape, d) + " * " + std::to_string(src[d]);
    if (offset) index = std::to_string(offset) + (index.empty() ? "" : " + " + index);
    if (index.empty()) index = "0";
    const std::string st = stageTile(a, op);
    const std::string g = inTile(rt);
    define(op, g.empty() ? st + "[" + index + "]" : "((" + g + ") ? " + st + "[" + index + "] : " + st + "[0])");
    unstage();
  }

  // A reduction or scan along `axis` of a tile of rank >= 2 (or a scan of any rank when `scan`):
  // each result element combines the staged source elements along the axis, in order (reversed from
  // the end for a reverse scan), so every schedule of the threads gives the same bits.
  void alongAxis(const Op& op, bool scan) {
    const Value* a = op.operand(0);
    const Type &at = a->type(), &rt = op.result()->type();
    const auto axis = static_cast<size_t>(op.intAttr("axis"));
    if (axis >= at.shape.size()) throw UserError(op.loc(), "axis " + std::to_string(axis) + " is outside the tile " + at.str());
    const Combiner c = combiner(op, at.scalar, op.strAttr("kind"), scan ? "scans" : "reduces");
    const auto as = stridesOf(at.shape);
    const int64_t n = at.shape[axis];
    // The staged index of the result element's line along the axis, without the axis term.
    std::string base;
    if (scan) {
      for (size_t d = 0; d < at.shape.size(); ++d)
        if (d != axis) base += (base.empty() ? "" : " + ") + indexAlong(at.shape, d) + " * " + std::to_string(as[d]);
    } else {
      for (size_t d = 0, rd = 0; d < at.shape.size(); ++d) {
        if (d == axis) continue;
        base += (base.empty() ? "" : " + ") + indexAlong(rt.shape, rd++) + " * " + std::to_string(as[d]);
      }
    }
    if (base.empty()) base = "0";
    const std::string st = stageTile(a, op), n_ = nameFor(op.result()), stride = std::to_string(as[axis]);
    const std::string g = inTile(rt);
    line(declare(op.result(), op) + ";");
    line("TAWA_UNROLL for (int k = 0; k < " + std::to_string(entries(rt, op)) + "; ++k) {");
    ++indent_;
    if (!g.empty()) line("if (!(" + g + ")) continue;");
    line("const int base = " + base + ";");
    line(c.type + " acc = " + c.id + ";");
    if (!scan) {
      line("for (int j = 0; j < " + std::to_string(n) + "; ++j) acc = " + c("acc", c.from(st + "[base + j * " + stride + "]")) + ";");
    } else {
      const std::string pos = indexAlong(at.shape, axis);
      if (op.intAttr("reverse") != 0)
        line("for (int j = " + std::to_string(n - 1) + "; j >= " + pos + "; --j) acc = " + c("acc", c.from(st + "[base + j * " + stride + "]")) + ";");
      else
        line("for (int j = 0; j <= " + pos + "; ++j) acc = " + c("acc", c.from(st + "[base + j * " + stride + "]")) + ";");
    }
    line(n_ + "[k] = " + c.back("acc") + ";");
    --indent_;
    line("}");
    unstage();
  }

  // The identity and the combining expression (of %a and %b) of a reduction or scan kind, computed
  // on f32, f64, 32- or 64-bit integer values; the C type and the scratch (`red`, a word or two per warp) as that
  // type; how an element becomes one (`in`) and a result goes back to the element type (`out`).
  // f16/bf16 max and min are computed in f32 (exact), and so are their sums and products, rounded
  // once at the end as the executor rounds its exact combination (scans round every prefix there, in
  // the element type: not emitted); 8- and 16-bit integers in 32 bits, truncated at the end (sums and
  // products wrap modulo 2^bits whatever the order, as the executor's step by step).
  struct Combiner {
    std::string type, id, comb, scratch, in = "%a", out = "%a";
    std::string operator()(const std::string& x, const std::string& y) const { return fill(comb, x, y); }
    std::string from(const std::string& x) const { return fill(in, x, ""); }
    std::string back(const std::string& x) const { return fill(out, x, ""); }
    static std::string fill(const std::string& pattern, const std::string& x, const std::string& y) {
      std::string s;
      for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern.compare(i, 2, "%a") == 0) s += x, ++i;
        else if (pattern.compare(i, 2, "%b") == 0) s += y, ++i;
        else s += pattern[i];
      }
      return s;
    }
  };
  Combiner combiner(const Op& op, Scalar elem, const std::string& kind, const char* what) {
    Scalar s = elem;
    std::string in = "%a", out = "%a";
    const bool scan = std::string(what) == "scans";
    if (isHalf(elem) && (kind == "max" || kind == "min" || (!scan && (kind == "sum" || kind == "prod")))) {
      s = Scalar::F32, in = "to_f32(%a)", out = narrow(elem, "%a");
    } else if (elem == Scalar::I8 || elem == Scalar::I16 || elem == Scalar::U8 || elem == Scalar::U16) {
      s = ir::isUnsigned(elem) ? Scalar::U32 : Scalar::I32;
      in = "static_cast<" + cOf(s, op.loc()) + ">(%a)", out = "static_cast<" + cOf(elem, op.loc()) + ">(%a)";
    }
    if (s != Scalar::F32 && s != Scalar::I32 && s != Scalar::U32 && s != Scalar::F64 && s != Scalar::I64 && s != Scalar::U64)
      throw UserError(op.loc(), std::string("the SIMT path ") + what + " f32, f64, 32- and 64-bit integer tiles, 8- and 16-bit integer ones, and " +
                                    (scan ? "takes the running max or min of" : "reduces") + " f16 and bf16 ones; this one is " +
                                    std::string(ir::scalarName(elem)) + (isHalf(elem) ? " (a " + kind + ": its order of roundings would differ)" : ""),
                      "cast the tile to f32 first");
    const bool f = s == Scalar::F32 || s == Scalar::F64, u = s == Scalar::U32 || s == Scalar::U64, prop = ir::propagatesNan(op);
    const bool wide = ir::bitWidth(s) == 64;
    Combiner c;
    c.type = cOf(s, op.loc());
    c.scratch = s == Scalar::F32 ? "red" : "reinterpret_cast<" + c.type + "*>(red)";  // a word per warp (two for 64 bits)
    // Identities: maxNum/minNum ignore a NaN operand, so NaN is theirs (a row of NaNs stays NaN, as the
    // executor's); NaN-propagating ones start from -inf / +inf; integers from their type's extremes.
    const std::string zero = wide ? "static_cast<" + c.type + ">(0)" : f ? "0.0f" : u ? "0u" : "0",
                      one = wide ? "static_cast<" + c.type + ">(1)" : f ? "1.0f" : u ? "1u" : "1";
    auto real = [&](const std::string& e) { return s == Scalar::F64 ? "static_cast<double>(" + e + ")" : e; };
    const std::string lowest = u ? zero : wide ? "INT64_MIN" : "(-2147483647 - 1)", highest = u ? (wide ? "UINT64_MAX" : "0xffffffffu") : wide ? "INT64_MAX" : "2147483647";
    if (kind == "sum") c.id = zero, c.comb = "(%a + %b)";
    else if (kind == "prod") c.id = one, c.comb = "(%a * %b)";
    else if (kind == "max")
      c.id = f ? real(prop ? "(-inf_f32())" : "nan_f32()") : lowest,
      c.comb = f ? (prop ? "max_nan(%a, %b)" : "max_num(%a, %b)") : "(%a > %b ? %a : %b)";
    else if (kind == "min")
      c.id = f ? real(prop ? "inf_f32()" : "nan_f32()") : highest,
      c.comb = f ? (prop ? "min_nan(%a, %b)" : "min_num(%a, %b)") : "(%a < %b ? %a : %b)";
    else if (!f && kind == "and") c.id = wide ? "static_cast<" + c.type + ">(~" + zero + ")" : u ? "0xffffffffu" : "(-1)", c.comb = "(%a & %b)";
    else if (!f && kind == "or") c.id = zero, c.comb = "(%a | %b)";
    else if (!f && kind == "xor") c.id = zero, c.comb = "(%a ^ %b)";
    else throw UserError(op.loc(), "unknown reduction '" + kind + "'");
    if ((s == Scalar::I32 || s == Scalar::I64) && (kind == "sum" || kind == "prod")) {  // signed sums wrap, as the executor's: unsigned arithmetic
      const std::string un = wide ? "uint64_t" : "uint32_t";
      c.comb = "static_cast<" + c.type + ">(static_cast<" + un + ">(%a) " + (kind == "sum" ? "+" : "*") + " static_cast<" + un + ">(%b))";
    }
    c.in = in, c.out = out;
    return c;
  }

  void reduce(const Op& op) {
    const Value* a = op.operand(0);
    const Value* r = op.result();
    if (a->type().isTile() && a->type().shape.size() >= 2) return alongAxis(op, false);
    if (!a->type().isTile() || a->type().shape.size() != 1 || r->type().isTile())
      throw UserError(op.loc(), "the SIMT path reduces a 1-D tile to a scalar");
    const Combiner c = combiner(op, a->type().scalar, op.strAttr("kind"), "reduces");
    std::string n = nameFor(r), acc = n + "_part";
    line(c.type + " " + acc + " = " + c.id + ";");
    perEntry(a->type(), op, inTile(a->type()), acc + " = " + c(acc, c.from(nameFor(a) + "[k]")) + ";");
    // The shuffle once per step, by every lane (a combining expression may name its operand twice).
    line("TAWA_UNROLL for (int m = 16; m >= 1; m /= 2) {");
    line("  const " + c.type + " o = shfl_xor(" + acc + ", m);");
    line("  " + acc + " = " + c(acc, "o") + ";");
    line("}");
    line("if ((tid & 31) == 0) " + c.scratch + "[tid / 32] = " + acc + ";");
    line("syncthreads();");
    const std::string w = c.scratch;
    line("const " + cOf(a->type().scalar, op.loc()) + " " + n + " = " + c.back(warpTree(c, w, 0, warps_)) + ";");
    line("syncthreads();  // the scratch is free for the next reduction");
  }

  // tile.scan of a 1-D tile: entry k of the T threads is the chunk of elements [Tk, Tk + T); each
  // chunk is scanned across the warp (shuffles up) and across the T / 32 warps (the scratch), then
  // combined with the carry of the chunks before it. A reverse scan mirrors it: chunks from the last,
  // shuffles down, the warps after.
  void scan(const Op& op) {
    const Value* a = op.operand(0);
    const Value* r = op.result();
    if (a->type().shape.size() != 1) return alongAxis(op, true);
    const bool rev = op.intAttr("reverse") != 0;
    const Combiner c = combiner(op, a->type().scalar, op.strAttr("kind"), "scans");
    const std::string n = nameFor(r), g = inTile(a->type()), w = c.scratch, e = std::to_string(entries(a->type(), op));
    line(declare(r, op) + ";");
    line(c.type + " " + n + "_carry = " + c.id + ";  // the combination of the chunks " + (rev ? "after" : "before"));
    line(rev ? "TAWA_UNROLL for (int k = " + e + " - 1; k >= 0; --k) {" : "TAWA_UNROLL for (int k = 0; k < " + e + "; ++k) {");
    ++indent_;
    line(c.type + " v = " + (g.empty() ? c.from(nameFor(a) + "[k]") : "(" + g + ") ? " + c.from(nameFor(a) + "[k]") + " : " + c.id) + ";");
    line("TAWA_UNROLL for (int d = 1; d < 32; d *= 2) {");
    line("  const " + c.type + " u = " + (rev ? "shfl_down(v, d);" : "shfl_up(v, d);"));
    line(rev ? "  if ((tid & 31) + d < 32) v = " + c("v", "u") + ";" : "  if ((tid & 31) >= d) v = " + c("u", "v") + ";");
    line("}");
    line("if ((tid & 31) == " + std::string(rev ? "0" : "31") + ") " + w + "[tid / 32] = v;");
    line("syncthreads();");
    line(c.type + " before = " + c.id + ";");
    line(rev ? "for (int p = " + std::to_string(warps_ - 1) + "; p > tid / 32; --p) before = " + c(w + "[p]", "before") + ";"
             : "for (int p = 0; p < tid / 32; ++p) before = " + c("before", w + "[p]") + ";");
    line("const " + c.type + " total = " + warpTree(c, w, 0, warps_) + ";");
    line("syncthreads();  // the scratch is free again");
    line(n + "[k] = " + c.back(c(n + "_carry", c("before", "v"))) + ";");
    line(n + "_carry = " + c(n + "_carry", "total") + ";");
    --indent_;
    line("}");
  }

  void forLoop(const Op& op) {
    const Block& body = *op.region(0);
    size_t carried = op.numOperands() - 3;
    // The carried values live in variables named after the loop's results.
    std::vector<std::string> vars;
    for (size_t i = 0; i < carried; ++i) {
      const Value* res = op.result(i);
      line(declare(res, op) + ";");
      vars.push_back(nameFor(res));
      assign(res, vars.back(), op.operand(3 + i), op);
    }
    std::string iv = nameFor(body.arg(0));
    std::string lb = nameFor(op.operand(0)), ub = nameFor(op.operand(1)), st = nameFor(op.operand(2));
    std::string ty = elemC(body.arg(0)->type(), op.loc());
    line("for (" + ty + " " + iv + " = " + lb + "; " + st + " > 0 ? " + iv + " < " + ub + " : " + iv + " > " + ub + "; " + iv +
         " += " + st + ") {");
    ++indent_;
    // Block arguments read the carried variables (copied: the body may define values from them
    // before the yield overwrites the variables).
    for (size_t i = 0; i < carried; ++i) {
      const Value* a = body.arg(1 + i);
      line(declare(a, op) + ";");
      assign(a, nameFor(a), op.result(i), op);
    }
    emitBlock(body);
    const Op* y = body.terminator();
    if (!y || y->kind() != OpKind::Yield || y->numOperands() != carried)
      throw UserError(op.loc(), "tile.for's body must end with a tile.yield of its carried values");
    for (size_t i = 0; i < carried; ++i) assign(op.result(i), vars[i], y->operand(i), op);
    --indent_;
    line("}");
  }

  // tile.while: `before` computes the condition (and the values it passes on) from the carried values;
  // `after` runs when it holds and yields the next carried values. The condition is a scalar, the same
  // in every thread (a scalar atomic's old value reaches all of them through the scratch), so the
  // threads leave the loop together.
  void whileLoop(const Op& op) {
    const Block &before = *op.region(0), &after = *op.region(1);
    const Op* cond = before.terminator();
    const Op* yield = after.terminator();
    if (!cond || cond->kind() != OpKind::Condition || !yield || yield->kind() != OpKind::Yield)
      throw UserError(op.loc(), "tile.while's regions must end with tile.condition and tile.yield");
    if (cond->operand(0)->type().isTile()) throw UserError(op.loc(), "tile.while takes a scalar condition");
    std::vector<std::string> carried, results;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Value* a = before.arg(i);
      const std::string v = unique(nameFor(a) + "_carried");
      line(declare(a, op, v) + ";");
      copy(a->type(), v, nameFor(op.operand(i)), op);
      carried.push_back(v);
    }
    for (size_t i = 0; i < op.numResults(); ++i) {
      line(declare(op.result(i), op) + ";");
      results.push_back(nameFor(op.result(i)));
    }
    line("while (true) {");
    ++indent_;
    for (size_t i = 0; i < carried.size(); ++i) {
      line(declare(before.arg(i), op) + ";");
      copy(before.arg(i)->type(), nameFor(before.arg(i)), carried[i], op);
    }
    emitBlock(before);
    for (size_t i = 0; i < results.size(); ++i) assign(op.result(i), results[i], cond->operand(1 + i), op);
    line("if (!" + nameFor(cond->operand(0)) + ") break;");
    for (size_t i = 0; i < results.size(); ++i) {
      line(declare(after.arg(i), op) + ";");
      assign(after.arg(i), nameFor(after.arg(i)), op.result(i), op);
    }
    emitBlock(after);
    for (size_t i = 0; i < carried.size(); ++i) copy(before.arg(i)->type(), carried[i], nameFor(yield->operand(i)), op);
    --indent_;
    line("}");
  }

  void ifOp(const Op& op) {
    std::vector<std::string> vars;
    for (size_t i = 0; i < op.numResults(); ++i) {
      line(declare(op.result(i), op) + ";");
      vars.push_back(nameFor(op.result(i)));
    }
    if (op.operand(0)->type().isTile()) throw UserError(op.loc(), "tile.if takes a scalar condition");
    for (size_t r = 0; r < op.regions().size(); ++r) {
      line(r == 0 ? "if (" + nameFor(op.operand(0)) + ") {" : "} else {");
      ++indent_;
      const Block& b = *op.region(r);
      emitBlock(b);
      const Op* y = b.terminator();
      if (op.numResults() && (!y || y->kind() != OpKind::Yield || y->numOperands() != op.numResults()))
        throw UserError(op.loc(), "each branch of tile.if must yield its results");
      for (size_t i = 0; i < op.numResults(); ++i) assign(op.result(i), vars[i], y->operand(i), op);
      --indent_;
    }
    line("}");
  }

  // The combination of the per-warp partial results scratch[lo .. lo + n), pairwise (four warps:
  // (w0 + w1) + (w2 + w3)): one fixed order, the same in every thread and every schedule.
  template <class C>
  static std::string warpTree(const C& c, const std::string& w, int lo, int n) {
    if (n == 1) return w + "[" + std::to_string(lo) + "]";
    return c(warpTree(c, w, lo, n / 2), warpTree(c, w, lo + n / 2, n / 2));
  }
  // Bytes of the cross-warp scratch: a 4-byte word per warp (two where a 64-bit value is reduced or
  // scanned), at least 16.
  int scratchBytes() const {
    bool wide = false;  // a 64-bit reduction or scan: 8 bytes per warp
    walk(f_.body, [&](const Op* op) {
      if ((op->kind() == OpKind::Reduce || op->kind() == OpKind::Scan) && ir::bitWidth(op->operand(0)->type().scalar) == 64) wide = true;
    });
    return std::max(16, (wide ? 8 : 4) * warps_);
  }

  const ir::Func& f_;
  EmitOptions opt_;
  const int threads_, warps_;
  std::ostringstream out_;
  int indent_ = 0;
  std::map<const Value*, std::string> names_;
  std::set<std::string> taken_;
  int counter_ = 0;
  int64_t stageBytes_ = 0;  // the largest tile staged in shared memory
  LineDirectives lines_;
};

}  // namespace

EmitResult emitSimtKernel(const ir::Module&, const ir::Func& kernel, const EmitOptions& opt) {
  return SimtEmitter(kernel, opt).run();
}

}  // namespace tawa::cuda
