#include "backends/cuda/Emitter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ir/Elementwise.h"
#include "ir/Numerics.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "profile/Events.h"

namespace tawa::cuda {

using namespace ir;

std::string HostValue::str() const {
  if (op) return "(" + parts[0].str() + " " + op + " " + parts[1].str() + ")";
  return arg >= 0 ? "arg#" + std::to_string(arg) : std::to_string(constant);
}

int64_t HostValue::eval(const std::vector<int64_t>& intArgs) const {
  if (op) {
    int64_t a = parts[0].eval(intArgs), b = parts[1].eval(intArgs);
    if (op == '/') return b != 0 ? a / b : 0;  // exact where it is used: tmaObstacle checks a % b at launch
    return op == '+' ? a + b : op == '-' ? a - b : a * b;
  }
  if (arg < 0) return constant;
  return static_cast<size_t>(arg) < intArgs.size() ? intArgs[static_cast<size_t>(arg)] : 0;
}

namespace {

constexpr int64_t kSmemLimit = 232448;  // sm_90: at most 227 KB of shared memory per block
constexpr int64_t kAlign = 1024;        // the repeating unit of the 128B swizzle

[[noreturn]] void unsupported(const Op& op, const std::string& what, const std::string& hint = {}) {
  throw UserError(op.loc(), "the CUDA backend cannot emit this '" + std::string(op.name()) + "': " + what, hint);
}

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// A row-major tile in shared memory as TMA writes it with a swizzle: split into column chunks one
// swizzle span wide (chunkCols elements), each chunk `rows` rows of `swizzle` bytes, chunks one
// after another. Chunks start on 1024-byte boundaries when the slot does, so the swizzle pattern
// (a function of the shared-window address bits) is the same for TMA and wgmma.
struct TileLayout {
  int64_t rows = 0, cols = 0, elemBytes = 0, swizzle = 0, chunkCols = 0, chunks = 0, chunkBytes = 0, slotBytes = 0;
};

std::optional<TileLayout> swizzledLayout(const Type& tile) {
  if (tile.rank() != 2) return std::nullopt;
  TileLayout l;
  l.rows = tile.shape[0];
  l.cols = tile.shape[1];
  l.elemBytes = byteWidth(tile.scalar);
  int64_t rowBytes = l.cols * l.elemBytes;
  if (rowBytes >= 128 && rowBytes % 128 == 0) l.swizzle = 128;
  else if (rowBytes == 64 || rowBytes == 32) l.swizzle = rowBytes;
  else return std::nullopt;
  if (l.rows % 8 != 0 || l.rows > 256) return std::nullopt;
  l.chunkCols = l.swizzle / l.elemBytes;
  l.chunks = l.cols / l.chunkCols;
  l.chunkBytes = l.rows * l.swizzle;
  l.slotBytes = alignUp(l.chunks * l.chunkBytes, kAlign);
  return l;
}

// A tile of 16-byte rows (AWQ's packed words at 32-column blocks: 4 x i32), for a slot only threads
// read: TMA copies it unswizzled (`swizzle` 16: rows 16 bytes apart, the XOR pattern the identity);
// no wgmma reads such a layout.
std::optional<TileLayout> narrowLayout(const Type& tile) {
  if (tile.rank() != 2 || tile.shape[1] * byteWidth(tile.scalar) != 16 || tile.shape[0] % 8 != 0 || tile.shape[0] > 256)
    return std::nullopt;
  TileLayout l;
  l.rows = tile.shape[0];
  l.cols = tile.shape[1];
  l.elemBytes = byteWidth(tile.scalar);
  l.swizzle = 16;
  l.chunkCols = l.cols;
  l.chunks = 1;
  l.chunkBytes = l.rows * 16;
  l.slotBytes = alignUp(l.chunkBytes, kAlign);
  return l;
}
// The swizzle a tensor map copies layout `l` with (0: none).
int mapSwizzle(const TileLayout& l) { return l.swizzle == 16 ? 0 : static_cast<int>(l.swizzle); }

// Bits 62-63 of a wgmma matrix descriptor.
int swizzleMode(int64_t bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : 0; }

// The wgmma matrix descriptor of an operand tile stored at `base` in layout `l` (rows of one swizzle
// span, chunked by columns), starting at K index `k` and M/N index `mn`. K-major (K runs along the
// stored rows): K index k lies in chunk k / chunkCols at byte (k % chunkCols) * elem of each row, and
// `mn` is a number of rows down (a 64-row block of A); LBO unused (16). MN-major (the stored rows are
// K): `k` rows down, and `mn` (a multiple of the chunk width) chunks across; LBO one chunk. SBO is 8
// rows either way.
// The descriptor is the slot's own (the same expression for every MMA on the slot, computed once)
// plus the offset in 16-byte units: the start address field holds address >> 4 and a shared-memory
// address stays below 2^18, so the sum never carries out of it (CUTLASS's and FlashAttention-3's
// descriptor iterators do the same; rebuilt per MMA, ptxas made ~2x the uniform instructions).
std::string smemDesc(const std::string& base, const TileLayout& l, bool kMajor, int64_t k, int64_t mn) {
  int64_t off = kMajor ? k / l.chunkCols * l.chunkBytes + (k % l.chunkCols) * l.elemBytes + mn * l.swizzle
                       : mn / l.chunkCols * l.chunkBytes + k * l.swizzle;
  TAWA_ASSERT(off % 16 == 0, "a wgmma operand starts on a 16-byte boundary");
  std::string d = "tawa::wgmma_smem_desc(" + base + ", " + std::to_string(kMajor ? 16 : l.chunkBytes) + ", " + std::to_string(8 * l.swizzle) +
                  ", " + std::to_string(swizzleMode(l.swizzle)) + ")";
  return off ? "(" + d + " + " + std::to_string(off / 16) + ")" : d;
}

struct Ring {
  std::string name;
  Type tile;
  int64_t depth = 0, offset = 0;
  TileLayout layout;
  int64_t aref = -1;  // the aref whose slots it holds (its empty barrier releases them)
  // The B operand of an 8-bit or tf32 wgmma: the PTX ISA has no transpose for them, so the KxN slot
  // is held K-major, as its NxK transpose (layout of that), loaded through a tensor map with K innermost.
  bool kMajor = false;  // also: an f16/bf16 slot loaded through a transposed map (EmitOptions::transposedMaps), A or B
  // The A operand of 16 or 32 rows: its slot is laid out with wgmma's 64 rows, and the copies fill
  // the first boxRows (the rest is read by wgmma into accumulator rows that are never stored).
  int64_t boxRows = 0;
};

bool isFp8(Scalar s) { return s == Scalar::F8E4M3 || s == Scalar::F8E5M2; }
// wgmma's 8-bit operands (fp8 e4m3/e5m2, s8, u8): k32 steps, both operands K-major.
bool byteOperand(Scalar s) { return isFp8(s) || s == Scalar::I8 || s == Scalar::U8; }
// Operands wgmma reads K-major only (no transpose immediate): the 8-bit ones and f32 (tf32, k8).
bool kMajorOnly(Scalar s) { return byteOperand(s) || s == Scalar::F32; }
struct Bars {
  std::string name;
  int64_t n = 0, count = 0, offset = 0;
  std::string kind;
  int64_t aref = -1;
  int64_t laneArrivals = 0;  // full barriers of slots the producer's threads fill: 128 (one per thread) per phase
};
// A tile held in registers in the wgmma accumulator fragment layout: M/64 blocks of N/2 values per
// thread. A row vector (tile<M>, e.g. a reduction along axis 1) is held the same way with the two
// rows of each 64-row block that the thread's accumulator registers cover (`row`; perThread = 2),
// replicated over the four threads of a quad.
struct Frag {
  std::string name;
  Scalar elem = Scalar::F32;
  int64_t mBlocks = 0, perThread = 0;
  bool row = false;
  int64_t rows = 0;  // a tile of 16 or 32 rows: its one 64-row block is padded (rows past it are never stored)
};
// Where an element expression is evaluated: inside the loops over a 2-D fragment (mi, ri) or over
// a row vector (mi, h). `row`/`col` name the element's coordinates in the tile, `slot` indexes this
// thread's entry of a row vector ("[mi][h]").
struct Ctx {
  std::string row, col, slot;
  std::string z = "";  // a 3-D index expression's third coordinate (tl.interleave's join, reshaped back to 2-D)
};
// The coordinates of an element of a tile of `rank` dimensions, in order, and back.
std::vector<std::string> coordsOf(const Ctx& c, size_t rank) {
  std::vector<std::string> v = {c.row, c.col, c.z};
  v.resize(rank);
  return v;
}
Ctx ctxOf(const std::vector<std::string>& v) {
  Ctx c;
  if (v.size() > 0) c.row = v[0];
  if (v.size() > 1) c.col = v[1];
  if (v.size() > 2) c.z = v[2];
  return c;
}
// A tile that is never materialized: a function of the element's coordinates (constants, splats,
// aranges, broadcasts of row vectors, and elementwise ops on those).
using Lazy = std::function<std::string(const Ctx&)>;
// A tile in shared memory (an aref slot or a consumer's own TMA buffer), read by wgmma in place.
struct View {
  std::string base;          // C++ expression: the slot's first byte
  TileLayout layout;
  Type tile;                 // as stored (rows x cols, row-major with the TMA swizzle)
  const Value* ring = nullptr;  // the nv.smem_alloc, or null for a consumer's own buffer
  std::string slot;          // slot index expression (ring views)
  bool transposed = false;   // a tile.permute of the stored tile
};
// A consumer's own buffer for a tile.desc_load it issues itself (e.g. Q): one TMA box, one mbarrier.
struct Private {
  std::string name, bar, phase;
  TileLayout layout;
  Type tile;
  int64_t offset = 0, barOffset = 0;
  int region = 0;
};
struct Staging {
  std::string name;
  int64_t offset = 0, rows = 0, cols = 0, elemBytes = 0;
  bool reused = false;  // an earlier store of the same warp group used this buffer (an epilogue's subtiles)
  bool kMajor = false;  // an operand staging laid out as the NxK transpose of its KxN tile (an s8 B)
  // An operand staging both cooperative consumers write, each its half of B's columns (`part`: 0 or
  // 1), and both read: consumer 1's refers to consumer 0's buffer (`sharedWith`), allocated once.
  bool shared = false;
  int part = 0;
  const Op* sharedWith = nullptr;
  // A TMA store's staging is laid out as TMA reads a swizzled box (TileLayout: column chunks one
  // swizzle span wide, 16-byte units XOR-ed by the row), one copy per chunk: the accumulator
  // fragment's pairs, eight rows to a warp's quarter, then fall in different banks (row-major, the
  // eight rows of a 128- or 256-byte row pitch all hit the same four banks). Tile maps keep it
  // row-major (their threads read it so).
  std::optional<TileLayout> layout;
};

const std::set<std::string>& reservedNames() {
  static const std::set<std::string> r = {
      "smem", "wg", "mi", "ri", "row", "col", "tawa", "int", "float", "double", "bool", "char", "long", "short", "unsigned",
      "signed", "void", "auto", "const", "static", "extern", "for", "while", "do", "if", "else", "switch", "case", "default",
      "break", "continue", "return", "goto", "new", "delete", "this", "class", "struct", "union", "enum", "namespace", "using",
      "template", "typename", "operator", "true", "false", "nullptr", "sizeof", "register", "volatile", "inline", "asm",
      "private", "public", "protected", "friend", "virtual", "explicit", "mutable", "typedef", "try", "catch", "throw",
      "and", "or", "not", "xor", "bitand", "bitor", "compl", "min", "max", "int8_t", "int16_t", "int32_t", "int64_t",
      "uint8_t", "uint32_t", "uint64_t", "h", "j", "x", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "CUtensorMap"};
  return r;
}

class Emitter {
 public:
  Emitter(const Func& f, const EmitOptions& o) : f_(f), opt_(o) {}

  EmitResult run() {
    countUses(f_.body, uses_);
    findDeferredSums();
    res_.kernelName = opt_.kernelName.empty() ? sanitize(f_.name) : opt_.kernelName;
    taken_.insert(res_.kernelName);
    taken_.insert("keep_order");
    if (opt_.profile)
      for (const char* n : {"prof_out", "prof_smem", "prof_ring", "prof_t", "prof_rec"}) taken_.insert(n);
    collect();
    layoutSmem();
    res_.threads = 128 * static_cast<int>(regions_.size());

    // The body first: names are assigned as it is printed, and the signature needs them.
    indent_ = 1;
    emitPrologue();
    syncPrologueReads();
    emitRoles();
    std::string body = out_.str();
    out_.str("");
    indent_ = 0;
    emitBanner();
    out_ << "extern \"C\" __global__ void __launch_bounds__(" << res_.threads << ", 1) " << res_.kernelName << "(";
    for (size_t i = 0; i < res_.params.size(); ++i) {
      const auto& p = res_.params[i];
      out_ << (i ? ",\n    " : "\n    ")
           << (p.tensorMap >= 0 ? "const __grid_constant__ CUtensorMap "
               : p.profileBuffer || p.pointer ? p.cType + " const "
                                              : "const " + p.cType + " ")
           << p.name;
    }
    out_ << ") {\n" << body << "}\n";
    res_.source = (opt_.includeHeader ? std::string("#include \"primitives.cuh\"\n\n") : std::string()) + out_.str();
    return res_;
  }

 private:
  // ---- names

  std::string sanitize(const std::string& hint) {
    std::string s;
    for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
    return s;
  }
  std::string fresh(const std::string& hint) {
    std::string base = sanitize(hint), s = base;
    for (int n = 1; taken_.count(s) || reservedNames().count(s); ++n) s = base + "_" + std::to_string(n);
    taken_.insert(s);
    return s;
  }
  std::string nameFor(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    return names_[v] = fresh(v->nameHint.empty() ? "v" + std::to_string(counter_++) : v->nameHint);
  }

  // ---- output

  void line(const std::string& s) {
    out_ << std::string(2 * static_cast<size_t>(indent_), ' ') << s << "\n";
    if (s.rfind("tawa::bar_sync(", 0) == 0) unsyncedWaits_.clear();  // every thread of the warp group is past its waits
  }
  void at(const Op& op) {
    if (opt_.lineDirectives) out_ << lines_.next(op.loc());
  }

  // ---- values

  static const Op* tileConstant(const Value* v) {
    const Op* d = v->definingOp();
    return d && d->kind() == OpKind::Constant && v->type().isTile() ? d : nullptr;
  }
  std::string literal(const Op& c) { return literal(c, c.result()->type(), c.attrs.at("value")); }
  // The C++ literal of value `a` of t's element type (`c`: where an error is located).
  std::string literal(const Op& c, const Type& t, const AttrValue& a) {
    if (isFp8(t.scalar))  // held as its bits (regType)
      return "static_cast<uint8_t>(" + std::to_string(encodeFloat(t.scalar, std::get<double>(a))) + ")";
    if (t.elemIsFloat()) {
      double d = std::get<double>(a);
      if (std::isnan(d) || std::isinf(d)) {  // NaN (a quiet one) and infinities, in f32 and narrowed (exactly)
        const std::string f = std::isnan(d) ? "tawa::nan_f32()" : d < 0 ? "(-tawa::inf_f32())" : "tawa::inf_f32()";
        if (t.scalar == Scalar::F16) return "tawa::to_f16(" + f + ")";
        if (t.scalar == Scalar::BF16) return "tawa::to_bf16(" + f + ")";
        if (t.scalar == Scalar::F64) return "static_cast<double>(" + f + ")";
        if (t.scalar != Scalar::F32) unsupported(c, "a NaN or infinite " + std::string(scalarName(t.scalar)) + " constant is not emitted");
        return f;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, t.scalar == Scalar::F64 ? "%.17g" : "%.9g", d);
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      if (t.scalar == Scalar::F16) return "tawa::to_f16(" + s + "f)";
      if (t.scalar == Scalar::BF16) return "tawa::to_bf16(" + s + "f)";
      return t.scalar == Scalar::F32 ? s + "f" : s;
    }
    int64_t i = std::get<int64_t>(a);
    if (t.scalar == Scalar::I1) return i ? "true" : "false";
    if (isUnsigned(t.scalar)) return "static_cast<" + cScalarType(t.scalar) + ">(" + std::to_string(static_cast<uint64_t>(i)) + "ULL)";
    std::string s = std::to_string(i);
    if (t.scalar == Scalar::I64) s += "LL";
    return i < 0 ? "(" + s + ")" : s;
  }
  // A scalar operand as an expression: constants inline, everything else by name.
  std::string ex(const Value* v) {
    const Op* d = v->definingOp();
    if (d && d->kind() == OpKind::Constant && v->type().isScalar()) return literal(*d);
    auto it = names_.find(v);
    TAWA_ASSERT(it != names_.end(), "every scalar is named before its use (the IR is verified)");
    return it->second;
  }
  // `halves`: f16 and bf16 scalars too (loaded, and converted to and from f32; no arithmetic on them).
  void needScalar(const Op& op, const Type& t, bool halves = false) {
    const bool half = t.scalar == Scalar::F16 || t.scalar == Scalar::BF16;
    if (!t.isScalar() || cScalarType(t.scalar).empty() || (t.elemIsFloat() && t.scalar != Scalar::F32 && !(halves && half)))
      unsupported(op, "only integer and f32 scalar arithmetic is emitted so far, got " + t.str());
  }
  Frag& frag(const Op& op, const Value* v) {
    auto it = frags_.find(v);
    if (it == frags_.end())
      unsupported(op, "operand of type " + v->type().str() + " is not an MMA accumulator held in registers",
                  "the CUDA backend emits tiles only as wgmma accumulators (and their casts) so far");
    return it->second;
  }
  // Tiles of 16 or 32 rows take one 64-row block of the layout, padded.
  static bool paddedRows(int64_t m) { return m == 16 || m == 32; }
  Frag fragShape(const Op& op, const Type& t) {
    if (!t.isTile() || t.rank() != 2 || (t.shape[0] % 64 != 0 && !paddedRows(t.shape[0])) || t.shape[1] % 8 != 0)
      unsupported(op, "a register tile must be MxN with M 16, 32 or a multiple of 64 and N a multiple of 8 (the wgmma accumulator "
                      "layout), got " + t.str());
    Frag fr;
    fr.elem = t.scalar;
    fr.mBlocks = std::max<int64_t>(1, t.shape[0] / 64);
    fr.perThread = t.shape[1] / 2;
    if (paddedRows(t.shape[0])) fr.rows = t.shape[0];
    return fr;
  }
  // Declares a register tile; fills it from a tile constant or copies another fragment when given.
  Frag declareFrag(const Op& op, const Type& t, const std::string& name) {
    Frag fr = fragShape(op, t);
    fr.name = name;
    std::string ty = regType(fr.elem);
    if (ty.empty()) unsupported(op, "element type " + std::string(scalarName(fr.elem)) + " has no register form yet");
    line(ty + " " + fr.name + "[" + std::to_string(fr.mBlocks) + "][" + std::to_string(fr.perThread) + "];");
    if (fr.elem == Scalar::F32 || fr.elem == Scalar::I32) accumulators_.back().push_back(fr);
    return fr;
  }
  void forEachReg(const Frag& fr, const std::string& stmt) {
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(fr.mBlocks) + "; ++mi)");
    line("TAWA_UNROLL");
    line("  for (int ri = 0; ri < " + std::to_string(fr.perThread) + "; ++ri) " + stmt);
  }
  void fill(const Frag& fr, const Op& c) { forEachReg(fr, fr.name + "[mi][ri] = " + literal(c) + ";"); }
  void copy(const Frag& to, const Frag& from) { forEachReg(to, to.name + "[mi][ri] = " + from.name + "[mi][ri];"); }

  // ---- collection and shared-memory layout

  HostValue hostValue(const Op& op, const Value* v) {
    if (auto h = hostExpr(v, false)) return *h;
    unsupported(op, "descriptor shapes and strides must be kernel arguments, constants, or sums and products of them",
                "the host builds the tensor map from them before the launch");
  }
  // A value the host computes at launch: a kernel argument, an integer constant, or the sum,
  // difference or product of such values computed at the kernel's top level (with `div`, also their
  // truncating quotient, tile.div: a loop bound's cdiv); nullopt otherwise.
  std::optional<HostValue> hostExpr(const Value* v, bool div) const {
    HostValue h;
    if (kernelArg(v)) {
      h.arg = v->index();
      return h;
    }
    const Op* d = v->definingOp();
    if (!d || !v->type().isScalar() || !v->type().elemIsInt()) return std::nullopt;
    if (d->kind() == OpKind::Constant) {
      h.constant = std::get<int64_t>(d->attrs.at("value"));
      return h;
    }
    const char k = d->kind() == OpKind::Add ? '+' : d->kind() == OpKind::Sub ? '-' : d->kind() == OpKind::Mul ? '*'
                   : div && d->kind() == OpKind::Div ? '/' : 0;
    if (!k || d->parent != &f_.body) return std::nullopt;
    auto a = hostExpr(d->operand(0), div), b = hostExpr(d->operand(1), div);
    if (!a || !b) return std::nullopt;
    h.op = k;
    h.parts = {*a, *b};
    return h;
  }

  void collect() {
    // The descriptors gathered rows are loaded through (collectHostDesc reads it).
    walk(f_.body, [&](const Op* op) {
      if (op->kind() == OpKind::TmaLoad && op->operand(4)->type().isTile()) gatheredDescs_.insert(op->operand(0));
    });
    // Scalar reads: their pointers are emitted as C pointers. So are the bases of tiles of pointers
    // (an access block-access could not make a block one: rows scattered through an index tile),
    // each element's address computed where a consumer uses it (emitTileOp refuses the producer's).
    walk(f_.body, [&](const Op* op) {
      if (op->kind() == OpKind::Splat && op->result()->type().isTile() && op->result()->type().elemIsPtr && !passPointer(op->operand(0)))
        unsupported(*op, "a tile of pointers is emitted from a pointer argument (or an address read in the kernel) moved by scalar offsets");
      if (op->kind() == OpKind::Load && op->numResults() == 1 && op->result()->type().isScalar() && !passPointer(op->operand(0)))
        unsupported(*op, "a scalar load's pointer must be a kernel argument, or an address read in the kernel, moved by scalar offsets");
      // A pointer's bits (`if bias_ptr:` compares them with 0, vLLM's optional bias)
      if (op->kind() == OpKind::Bitcast && op->operand(0)->type().isPtr() && !passPointer(op->operand(0)))
        unsupported(*op, "a pointer read as an integer must be a kernel argument, or an address read in the kernel, moved by scalar offsets");
    });
    for (const auto& up : f_.body.ops()) {
      const Op& op = *up;
      switch (op.kind()) {
        case OpKind::MakeDesc: collectDesc(op); break;
        case OpKind::SmemAlloc: {
          Ring r;
          r.name = nameFor(op.result());
          r.depth = op.result()->type().shape[0];
          r.tile = op.result()->type().slotType();
          auto l = swizzledLayout(r.tile);
          if (!l && onlyThreadsRead(op.result())) l = narrowLayout(r.tile);
          if (!l)
            unsupported(op, "slot " + r.tile.str() +
                                " has no TMA/wgmma layout: rows must be a multiple of 8 (at most 256) and a row 32, 64 or a "
                                "multiple of 128 bytes");
          r.layout = *l;
          if (op.hasAttr("aref")) r.aref = op.intAttr("aref");
          rings_[op.result()] = r;
          ringOrder_.push_back(op.result());
          break;
        }
        case OpKind::MbarInit: {
          Bars b;
          b.name = nameFor(op.result());
          b.n = op.result()->type().shape[0];
          b.count = op.intAttr("count");
          b.kind = op.hasAttr("kind") ? op.strAttr("kind") : "";
          if (op.hasAttr("aref")) b.aref = op.intAttr("aref");
          bars_[op.result()] = b;
          barOrder_.push_back(op.result());
          break;
        }
        case OpKind::WgRegion: regions_.push_back(&op); break;
        case OpKind::Return:
          if (op.numOperands() != 0) unsupported(op, "a kernel returns nothing");
          break;
        default: break;  // the prologue is checked as it is emitted
      }
    }
    if (regions_.size() < 2 || regions_[0]->strAttr("role") != "producer")
      throw UserError(regions_.empty() ? f_.loc : regions_.front()->loc(),
                      "the CUDA backend emits a producer warp group followed by consumer warp groups (found " +
                          std::to_string(regions_.size()) + " wg.region(s))",
                      "warp-specialize the kernel first (tawa compile --emit nv)");
    for (size_t w = 1; w < regions_.size(); ++w)
      if (regions_[w]->strAttr("role") != "consumer")
        throw UserError(regions_[w]->loc(), "the CUDA backend emits one producer warp group, then consumers");
    // Each consumer warp group that releases a ring's slots releases each slot once: one arrival per
    // such warp group (all of them, or one for a tile split between cooperative consumers).
    std::map<const Value*, int64_t> releasers;
    for (size_t w = 1; w < regions_.size(); ++w) {
      std::set<const Value*> mine;
      walk(*regions_[w]->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::MbarArrive) mine.insert(op->operand(0));
      });
      for (const Value* v : mine) ++releasers[v];
    }
    for (const Value* v : barOrder_)
      if (const Bars& b = bars_.at(v); b.kind == "empty" && b.count != releasers[v])
        throw UserError(v->definingOp()->loc(), "this barrier expects " + std::to_string(b.count) +
                                                    " releases per phase, but " + std::to_string(releasers[v]) +
                                                    " consumer warp group(s) release it");
    // 8-bit and tf32 B operands are held K-major: the slot of a KxN tile is laid out as its NxK
    // transpose (a transposed B, {trans_b}, is an NxK slot already).
    std::set<const Value*> transposedB;
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::Wgmma && transB(*op)) transposedB.insert(op->operand(2));
      });
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::Wgmma && rings_.count(op->operand(0)) && isInt(rings_.at(op->operand(0)).tile.scalar))
          integerMma_ = true;
      });
    // The descriptors each ring is loaded through (top-level ones: collect() has seen them).
    std::map<const Value*, std::set<const Value*>> ringDescs;
    walk(*regions_[0]->region(0), [&](const Op* op) {
      if (op->kind() == OpKind::TmaLoad) ringDescs[op->operand(1)].insert(op->operand(0));
    });
    auto transposedLoads = [&](const Value* ring) {  // its maps are loaded transposed at this launch
      const auto& ds = ringDescs[ring];
      bool all = !ds.empty(), any = false;
      for (const Value* d : ds) {
        auto it = descs_.find(d);
        bool t = it != descs_.end() && opt_.transposedMaps.count(allMaps_[static_cast<size_t>(it->second)].param);
        all = all && t, any = any || t;
      }
      if (any && !all) unsupported(*ring->definingOp(), "a slot loaded through both a transposed and an untransposed tensor map");
      return all;
    };
    markTransposable();
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() != OpKind::Wgmma || !rings_.count(op->operand(2)) || transB(*op)) return;
        Ring& ring = rings_.at(op->operand(2));
        if (ring.kMajor || !(kMajorOnly(ring.tile.scalar) || transposedLoads(op->operand(2)))) return;
        if (transposedB.count(op->operand(2)))
          unsupported(*op, "an 8-bit or tf32 slot read by wgmma both as B and as the transpose of B is not emitted");
        auto l = swizzledLayout(ring.tile.withShape({ring.tile.shape[1], ring.tile.shape[0]}));
        if (!l)
          unsupported(*op, "the " + std::string(byteOperand(ring.tile.scalar) ? "8-bit" : "tf32") + " B slot " + ring.tile.str() +
                               " is held K-major (NxK) and has no TMA/wgmma layout: N must be a multiple of 8 (at most 256) and "
                               "a row of K elements 32, 64 or a multiple of 128 bytes");
        ring.kMajor = true;
        ring.layout = *l;
      });
    // An f16/bf16 A slot loaded through transposed maps (a column-major A) holds the KxM transpose of
    // its tile, which wgmma reads M-major (as the transpose of a loaded KxM tile, {trans_a}).
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() != OpKind::Wgmma || !rings_.count(op->operand(0)) || transA(*op)) return;
        Ring& ring = rings_.at(op->operand(0));
        if (ring.kMajor || kMajorOnly(ring.tile.scalar) || !transposedLoads(op->operand(0))) return;
        auto l = swizzledLayout(ring.tile.withShape({ring.tile.shape[1], ring.tile.shape[0]}));
        if (!l || ring.tile.shape[0] % 64 != 0) unsupported(*op, "the A slot " + ring.tile.str() + " has no M-major wgmma layout");
        ring.kMajor = true;
        ring.layout = *l;
      });
    // The slots a tf32 wgmma reads: their f32 tiles are copied by threads and rounded to tf32 on the
    // way (tile_load_generic<..., TF32>), so that the tensor cores multiply exactly what the
    // executor's tf32 dot does (TMA copies the bits as they are, and how the tensor cores treat an
    // f32's 13 low mantissa bits is not something tawa relies on). Nothing else may read such a slot.
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() != OpKind::Wgmma || !rings_.count(op->operand(0)) || rings_.at(op->operand(0)).tile.scalar != Scalar::F32) return;
        tf32Rings_.insert(op->operand(0));
        tf32Rings_.insert(op->operand(2));
      });
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::SmemLoad && tf32Rings_.count(op->operand(0)))
          unsupported(*op, "a slot that a tf32 wgmma reads (rounded to tf32 as it is copied) is also read into registers");
      });
    // An A slot of 16 or 32 rows takes wgmma's 64 rows in shared memory (see Ring::boxRows).
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        const Value* slot = nullptr;
        if (op->kind() == OpKind::Wgmma && !transA(*op)) slot = op->operand(0);
        if (const Op* d = op->kind() == OpKind::Dot ? op->operand(0)->definingOp() : nullptr; d && d->kind() == OpKind::SmemLoad)
          slot = d->operand(0);  // a slot tile.dot reads as its A (FlagAttention's `tl.dot(q, I)` at 32 rows)
        if (!slot || !rings_.count(slot)) return;
        Ring& ring = rings_.at(slot);
        if (ring.boxRows || ring.kMajor || !paddedRows(ring.layout.rows)) return;
        auto l = swizzledLayout(ring.tile.withShape({64, ring.tile.shape[1]}));
        if (!l) return;
        ring.boxRows = ring.layout.rows;
        ring.layout = *l;
      });
    // Descriptors: the box and swizzle follow the slot they are copied into, or the staging tile.
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::Dot) {  // A made in registers (attention's P): see keepAfterWork
          const Op* d = op->operand(0)->definingOp();
          while (d && d->kind() == OpKind::Permute) d = d->operand(0)->definingOp();
          if (!d || (d->kind() != OpKind::SmemLoad && d->kind() != OpKind::DescLoad)) keepOrder_ = true;
        }
        if (op->kind() == OpKind::MakeDesc) {
          collectDesc(*op);
        } else if (op->kind() == OpKind::TmaLoad) {
          const Ring& ring = rings_.at(op->operand(1));
          setBox(*op, op->operand(0), ring.boxRows ? ring.boxRows : ring.layout.rows, ring.layout.chunkCols, mapSwizzle(ring.layout),
                 ring.kMajor);
          if (tf32Rings_.count(op->operand(1))) tf32Maps_.insert(descs_.at(op->operand(0)));
          // Gathered rows (block-access): copied by threads, row by row; into a 16- or 32-row A slot's
          // first rows as TMA would copy its box (the rest is padding wgmma reads and no row keeps).
          if (op->operand(4)->type().isTile()) {
            if (ring.kMajor)
              unsupported(*op, "gathered rows are copied into a row-major slot (not an 8-bit or tf32 B, which is held K-major)");
            gatherMaps_.insert(descs_.at(op->operand(0)));
          }
        } else if (op->kind() == OpKind::Dot && regionIndex(op) > 0 && ir::computedTile(op->operand(1))) {
          // B computed in registers (a dequantized weight tile): the consumer writes it into a buffer
          // of its own, laid out as TMA lays out a swizzled KxN box, which its wgmma then reads.
          // An 8-bit B (s8, fp8: vLLM's MoE with SWAP_AB computes fp8 activations in registers) is held
          // K-major, as wgmma reads 8-bit operands: laid out as its NxK transpose.
          const Type& t = op->operand(1)->type();
          const bool eightBit = t.scalar == Scalar::I8 || t.scalar == Scalar::F8E4M3 || t.scalar == Scalar::F8E5M2;
          const bool kMajor = eightBit && t.rank() == 2;
          auto l = swizzledLayout(kMajor ? t.withShape({t.shape[1], t.shape[0]}) : t);
          if (!l || (t.scalar != Scalar::F16 && t.scalar != Scalar::BF16 && !kMajor))
            unsupported(*op, "a B operand computed in registers is staged in shared memory for wgmma as an f16, bf16, s8 or fp8 tile with "
                             "rows (of K for 8-bit types) of 32, 64 or a multiple of 128 bytes, got " + t.str());
          if (kMajor && t.scalar == Scalar::I8) integerMma_ = true;
          Staging st;
          st.kMajor = kMajor;
          st.name = fresh((op->operand(1)->nameHint.empty() ? std::string("b") : op->operand(1)->nameHint) + "_operand");
          st.rows = t.shape[0];
          st.cols = t.shape[1];
          st.elemBytes = byteWidth(t.scalar);
          st.layout = l;
          operandStagings_[op] = st;
          operandStagingOrder_.push_back(op);
        } else if (op->kind() == OpKind::DescLoad && !vecDescs_.count(op->operand(0))) {
          const Type& t = op->result()->type();
          int w = regionIndex(op);
          if (w == 0) unsupported(*op, "a tile.desc_load left in the producer is not emitted (the producer fills aref slots)");
          // A tile of 16 or 32 rows read only as tile.dot's A (FlagAttention's paged attention: a
          // query group's Q) takes wgmma's 64 rows, as an A slot does: the box fills the first rows.
          const bool padded = t.rank() == 2 && paddedRows(t.shape[0]) && onlyDotA(op->result());
          auto l = swizzledLayout(padded ? t.withShape({64, t.shape[1]}) : t);
          if (!l)
            unsupported(*op, "tile " + t.str() +
                                 " has no TMA/wgmma layout: rows must be a multiple of 8 (at most 256) and a row 32, 64 or a "
                                 "multiple of 128 bytes");
          Private pv;
          std::string hint = op->result()->nameHint.empty() ? "tile" : op->result()->nameHint;
          pv.name = fresh(hint + "_buf");
          pv.bar = fresh(hint + "_full");
          pv.phase = fresh(hint + "_phase");
          pv.layout = *l;
          pv.tile = t;
          pv.region = w;
          setBox(*op, op->operand(0), t.shape[0], l->chunkCols, static_cast<int>(l->swizzle));
          privates_[op] = pv;
          privateOrder_.push_back(op);
        } else if ((op->kind() == OpKind::Store || op->kind() == OpKind::Atomic) && op->operand(0)->type().isPtr()) {
          collectScalarStore(*op);
        } else if (op->kind() == OpKind::TmaStore && vecDescs_.count(op->operand(0))) {
          // a row vector stored from registers (emitVecStore): no staging
        } else if (op->kind() == OpKind::TmaStore) {
          const Type& t = op->operand(1)->type();
          Staging s;
          s.name = fresh(op->operand(0)->nameHint.empty() ? "stage" : op->operand(0)->nameHint + "_stage");
          s.rows = t.shape[0];
          s.cols = t.shape[1];
          s.elemBytes = byteWidth(t.scalar);
          if (s.rows > 256 || s.cols > 256 || (s.cols * s.elemBytes) % 16 != 0)
            unsupported(*op, "the epilogue stores the tile with one TMA box: at most 256x256 with rows a multiple of 16 bytes, got " +
                                 t.str());
          setBox(*op, op->operand(0), s.rows, s.cols, 0);
          stagings_[op] = s;
          stagingOrder_.push_back(op);
        }
      });
    shareOperandStagings();
    // Tensor maps TMA cannot take at this launch: their tiles are moved by threads (tile maps).
    const char* noTma = std::getenv("TAWA_NO_TMA");  // every map a tile map: for tests and for telling TMA faults apart
    for (auto& s : allMaps_) {
      auto g = opt_.genericMaps.find(s.param);
      if (s.boxRows == 0) continue;
      if (!s.generic.empty()) continue;  // a device tile map
      if (gatherMaps_.count(static_cast<int>(&s - allMaps_.data())))
        s.generic = "its rows are gathered through an index tile, where TMA copies a box of consecutive rows";
      else if (g != opt_.genericMaps.end()) s.generic = g->second;
      else if (tf32Maps_.count(static_cast<int>(&s - allMaps_.data())))
        s.generic = "its f32 tiles are operands of a tf32 wgmma, rounded to tf32 as threads copy them, where TMA would copy the bits unrounded";
      else if (noTma && std::string(noTma) == "1") s.generic = "TAWA_NO_TMA=1 is set";
      else continue;
      if (s.slices.size() > 1)
        throw UserError(s.loc, "tensor map " + s.param + ": " + s.generic + ", and a copy by threads takes at most one slice dimension");
    }
    // Epilogue staging for TMA stores: swizzled, where the tile has a swizzled layout and the map is
    // used by stores alone (its box is then one chunk).
    {
      std::set<const Value*> loaded;
      for (const Op* r : regions_)
        walk(*r->region(0), [&](const Op* op) {
          if (op->kind() == OpKind::TmaLoad || op->kind() == OpKind::DescLoad) loaded.insert(op->operand(0));
        });
      // Decided once per descriptor (its stores share one box: setBox made them the same shape).
      std::map<const Value*, std::optional<TileLayout>> byDesc;
      for (const Op* op : stagingOrder_) {
        auto [it, fresh] = byDesc.emplace(op->operand(0), std::nullopt);
        if (fresh) {
          TensorMapSpec& m = allMaps_[static_cast<size_t>(descs_.at(op->operand(0)))];
          auto l = swizzledLayout(op->operand(1)->type());
          if (m.generic.empty() && !loaded.count(op->operand(0)) && l && !m.swizzleBytes) {
            it->second = l;
            m.boxCols = l->chunkCols;
            m.swizzleBytes = static_cast<int>(l->swizzle);
          }
        }
        stagings_.at(op).layout = it->second;
      }
    }
    // A phase of a full barrier is one arrive.expect_tx and the TMA loads after it in its block: the
    // producer warp group's 128 threads copy that phase's tile-map loads, then each arrives once (128
    // arrivals per phase).
    std::set<const Value*> laneBars, tmaBars;
    walk(*regions_[0]->region(0), [&](const Op* op) {
      if (op->kind() != OpKind::MbarArriveExpectTx) return;
      const Op* last = nullptr;  // the phase's last tile-map load
      for (auto it = std::find_if(op->parent->ops().begin(), op->parent->ops().end(), [&](const auto& o) { return o.get() == op; });
           ++it != op->parent->ops().end();) {
        const Op* l = it->get();
        if (l->kind() == OpKind::MbarArriveExpectTx && l->operand(0) == op->operand(0)) break;
        if (l->kind() != OpKind::TmaLoad || l->operand(3) != op->operand(0) || !tileMap(l->operand(0))) continue;
        const Type& t = rings_.at(l->operand(1)).tile;
        laneBytes_[op] += t.shape[0] * t.shape[1] * byteWidth(t.scalar);
        last = l;
      }
      if (last) phaseEnds_.insert(last);
      else tmaOnlyPhases_.insert(op);
      (last ? laneBars : tmaBars).insert(op->operand(0));
    });
    // A barrier some of whose phases the threads fill (tile maps) counts their 128 arrivals in every
    // phase: in a phase of TMA loads only (a later loop whose loads take TMA, sharing the ring of one
    // whose loads do not), every thread arrives right after the expect_tx.
    std::erase_if(tmaOnlyPhases_, [&](const Op* op) { return !laneBars.count(op->operand(0)); });
    walk(*regions_[0]->region(0), [&](const Op* op) {
      if (op->kind() != OpKind::TmaLoad || !tileMap(op->operand(0))) return;
      if (!laneBars.count(op->operand(3))) unsupported(*op, "a tile-map load needs the slot's arrive.expect_tx before it in its block");
    });
    for (const Value* b : laneBars) bars_.at(b).laneArrivals = 128;
    producerGroup_ = !laneBars.empty();
    // Parameters: the tensor maps that TMA uses (in make_desc order), then every scalar argument
    // in the kernel's order; pointers reach the kernel through the tensor maps only, but for the
    // buffers of 1-D descriptors and those a scalar store writes.
    for (auto& s : allMaps_) {
      if (s.boxRows == 0) continue;
      if (!s.generic.empty()) {
        if (!deviceMaps_.count(static_cast<int>(&s - allMaps_.data()))) addTileMapParams(s);
        res_.tensorMaps.push_back(s);
        continue;
      }
      KernelParam p;
      p.name = s.param;
      p.cType = "CUtensorMap";
      p.tensorMap = static_cast<int>(res_.tensorMaps.size());
      res_.tensorMaps.push_back(s);
      res_.params.push_back(p);
      for (const auto& [name, quotient] : s.wholeRows) {
        KernelParam qp;
        qp.name = name;
        qp.cType = "int32_t";  // TMA coordinates are 32-bit (tmaObstacle checks that it fits)
        qp.hostValue = true;
        qp.value = quotient;
        res_.params.push_back(qp);
      }
    }
    for (size_t i = 0; i < f_.numArgs(); ++i) {
      const Value* a = f_.arg(i);
      // A pointer is passed by its address only as the buffer of a 1-D descriptor.
      const bool pointer = a->type().isPtr();
      if (pointer && !scalarPtrs_.count(a) &&
          std::none_of(vecDescs_.begin(), vecDescs_.end(), [&](const auto& d) { return d.second.arg == static_cast<int>(i); }))
        continue;
      if ((!pointer && !a->type().isScalar()) || (!pointer && cScalarType(a->type().scalar).empty()))
        throw UserError(f_.loc, "the CUDA backend cannot pass argument #" + std::to_string(i) + " of type " + a->type().str());
      KernelParam p;
      p.name = nameFor(a);
      p.cType = pointer ? ptrType(a->type().scalar) + "*" : cScalarType(a->type().scalar);
      p.irArg = static_cast<int>(i);
      p.pointer = pointer;
      res_.params.push_back(p);
    }
    if (auto it = f_.attrs.find("persistent_programs"); it != f_.attrs.end() && std::holds_alternative<int64_t>(it->second)) {
      res_.persistentPrograms = std::get<int64_t>(it->second);
      static const char* axes[] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d) {
        KernelParam p;
        p.name = gridParams_[d] = fresh(std::string("grid_") + axes[d]);
        p.cType = "int32_t";
        p.gridAxis = d;
        res_.params.push_back(p);
      }
    }
    if (opt_.profile) {
      if (opt_.profileCapacity < 1 || opt_.profileCapacity > 65536)
        throw UserError(f_.loc, "the profile's capacity must be 1 to 65536 events per warp group, got " + std::to_string(opt_.profileCapacity));
      KernelParam p;
      p.name = "prof_out";
      p.cType = "uint8_t*";
      p.profileBuffer = true;
      res_.params.push_back(p);
      res_.profile.capacity = opt_.profileCapacity;
      res_.profile.warpGroups = static_cast<int>(regions_.size());
      for (const Op* r : regions_) res_.profile.roles.push_back(r->strAttr("role"));
      res_.profile.file = f_.loc.known() ? *f_.loc.file : "";
    }
  }

  // ---- tile maps: a tensor map TMA cannot take, passed as its base (a buffer's address), extents and
  // strides (int64, evaluated by the host), and for a rank-3 map the slice count (the grid's extent
  // along its axis) and stride; the tile_*_generic primitives take them in this order.
  void addTileMapParams(const TensorMapSpec& s) {
    std::vector<std::string>& names = tileMapArgs_[s.param];
    KernelParam base;
    base.name = fresh(s.param + "_base");
    base.cType = "void*";
    base.irArg = s.baseArg;
    base.pointer = true;
    res_.params.push_back(base);
    names.push_back(base.name);
    auto value = [&](const char* suffix, const HostValue& v) {
      KernelParam p;
      p.name = fresh(s.param + suffix);
      p.cType = "int64_t";
      p.hostValue = true;
      p.value = v;
      res_.params.push_back(p);
      names.push_back(p.name);
    };
    value("_cols", s.cols);
    value("_rows", s.rows);
    value("_col_stride", s.colStride);
    value("_row_stride", s.rowStride);
    if (s.slices.empty()) {
      names.push_back("1");
      names.push_back("0");
      return;
    }
    KernelParam n;
    n.name = fresh(s.param + "_slices");
    n.cType = "int32_t";
    n.gridAxis = s.slices[0].gridAxis;
    res_.params.push_back(n);
    names.push_back(n.name);
    value("_slice_stride", s.slices[0].stride);
  }
  // The C type a pointer to `s` points at (fp8 as its bytes).
  static std::string ptrType(Scalar s) { return isFp8(s) ? "uint8_t" : cScalarType(s); }
  // A register tile's element: an fp8 one holds its bits (loaded, selected, staged for wgmma as
  // they are; no arithmetic: elementwise() refuses it).
  static std::string regType(Scalar s) { return ptrType(s); }
  // The map of descriptor `desc` when its tiles are moved by threads, else null.
  const TensorMapSpec* tileMap(const Value* desc) const {
    auto it = descs_.find(desc);
    if (it == descs_.end()) return nullptr;
    const TensorMapSpec& s = allMaps_[static_cast<size_t>(it->second)];
    return s.generic.empty() ? nullptr : &s;
  }
  // "base, cols, rows, col_stride, row_stride, slices, slice_stride" of a tile map.
  std::string tileMapArgs(const TensorMapSpec& s) {
    const int index = static_cast<int>(&s - allMaps_.data());
    if (auto d = deviceMaps_.find(index); d != deviceMaps_.end()) {
      const Op& op = *d->second;  // make_desc(base, rows, cols, row_stride, col_stride)
      size_t rows = 1, cols = 2, rowStride = 3, colStride = 4;
      if (transposed_.count(index)) {  // walked column by column (an 8-bit B held K-major)
        std::swap(rows, cols);
        std::swap(rowStride, colStride);
      }
      return ex(op.operand(0)) + ", " + ex(op.operand(cols)) + ", " + ex(op.operand(rows)) + ", " + ex(op.operand(colStride)) + ", " +
             ex(op.operand(rowStride)) + ", 1, 0";
    }
    std::string out;
    for (const std::string& n : tileMapArgs_.at(s.param)) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  // The row function of a load of gathered rows: box row `gi` is the tensor row the index tile holds
  // there, each thread evaluating the tile's element where it copies (a lazy tile: 1-D loads of
  // buffers the kernel only reads, aranges, splats, elementwise ops), moved by the map's row shift
  // unless it is negative (a masked-off row: -1, zeros).
  std::string gatheredRow(const Op& op) {
    auto it = lazies_.find(op.operand(4));
    if (it == lazies_.end())
      unsupported(op, "the gathered rows' index tile must be computed by elementwise ops on aranges, splats and 1-D loads of buffers "
                      "the kernel only reads");
    const std::string g = "static_cast<long long>(" + it->second(Ctx{"gi", "", ""}) + ")";
    const std::string moved = coord(op.operand(0), 0, "g");
    return "[&](int gi) { const long long g = " + g + "; return " + (moved == "g" ? std::string("g") : "g < 0 ? -1LL : static_cast<long long>" + moved) + "; }";
  }
  // A tile map's box at (col, row) copied into `dst` (layout l: one call per swizzle chunk) by the
  // warp group's 128 threads; `row` the first row, or with `gather` a row function ([&](int gi) ...).
  void emitTileLoad(const TensorMapSpec& map, const TileLayout& l, const std::string& dst, const std::string& col,
                    const std::string& row, const Value* desc, bool gather = false) {
    const bool tf32 = tf32Maps_.count(static_cast<int>(&map - allMaps_.data()));
    for (int64_t j = 0; j < l.chunks; ++j)
      line(std::string(gather ? "tawa::tile_gather_generic<" : "tawa::tile_load_generic<") + std::to_string(byteWidth(map.elem)) + ", " + std::to_string(map.boxCols) + ", " +
           std::to_string(map.boxRows) + ", " + std::to_string(map.swizzleBytes) + (tf32 ? ", true" : "") + ">(" + dst +
           (j ? " + " + std::to_string(j * l.chunkBytes) : "") + ", " + tileMapArgs(map) + ", " + col +
           (j ? " + " + std::to_string(j * l.chunkCols) : "") + ", " + row + ", " + sliceCoord(desc) +
           ", tawa::warpgroup_thread_idx(), 128);");
  }
  // The slice coordinate of a copy on `desc` (its program id), or 0.
  std::string sliceCoord(const Value* desc) {
    auto it = sliceIndex_.find(desc);
    return it == sliceIndex_.end() || it->second.empty() ? "0" : ex(it->second[0]);
  }

  // ---- descriptors on a moved base (block-access turns `ptr + offs_m * s0 + offs_n * s1` with masks
  // into make_desc(ptr + r * s0 + c * s1, M - r, N - c, s0, s1) for the program's block r, c): the
  // tensor map covers the whole tensor (M x N from ptr) and each TMA coordinate is shifted by (r, c).
  // Bounds are the same: the moved descriptor's extent ends where the tensor's does.

  // A product of SSA values and an integer constant; sums of them describe offsets and extents.
  struct Product {
    std::vector<const Value*> factors;  // sorted
    int64_t constant = 1;
    std::vector<std::string> params;    // kernel parameters the host computes (a row shift's quotient, TensorMapSpec::wholeRows)
  };
  bool sumOfProducts(const Value* v, std::vector<Product>& out, int64_t sign = 1) {
    const Op* d = v->definingOp();
    if (d && v->type().isScalar() && v->type().elemIsInt()) {
      switch (d->kind()) {
        case OpKind::Constant: out.push_back({{}, sign * std::get<int64_t>(d->attrs.at("value")), {}}); return true;
        case OpKind::Cast:  // an integer widened (`.to(tl.int64)`): the same value
          if (d->operand(0)->type().isScalar() && d->operand(0)->type().elemIsInt() &&
              byteWidth(d->operand(0)->type().scalar) <= byteWidth(v->type().scalar))
            return sumOfProducts(d->operand(0), out, sign);
          break;
        case OpKind::Add: return sumOfProducts(d->operand(0), out, sign) && sumOfProducts(d->operand(1), out, sign);
        case OpKind::Sub: return sumOfProducts(d->operand(0), out, sign) && sumOfProducts(d->operand(1), out, -sign);
        case OpKind::Mul: {
          std::vector<Product> a, b;
          if (!sumOfProducts(d->operand(0), a) || !sumOfProducts(d->operand(1), b)) return false;
          for (const Product& x : a)
            for (const Product& y : b) {
              Product p{x.factors, sign * x.constant * y.constant, {}};
              p.factors.insert(p.factors.end(), y.factors.begin(), y.factors.end());
              std::sort(p.factors.begin(), p.factors.end());
              out.push_back(p);
            }
          return true;
        }
        default: break;
      }
    }
    out.push_back({{v}, sign, {}});
    return true;
  }
  // Sums like terms and drops zeros.
  static std::vector<Product> simplify(std::vector<Product> t) {
    std::map<std::pair<std::vector<const Value*>, std::vector<std::string>>, int64_t> m;
    for (const Product& p : t) m[{p.factors, p.params}] += p.constant;
    std::vector<Product> out;
    for (const auto& [f, c] : m)
      if (c) out.push_back({f.first, c, f.second});
    return out;
  }
  // term / stride, when the stride (a value or a constant) divides it.
  static bool divideBy(const Product& term, const Value* stride, Product& q) {
    q = term;
    const Op* d = stride->definingOp();
    if (d && d->kind() == OpKind::Constant) {
      int64_t c = std::get<int64_t>(d->attrs.at("value"));
      if (c == 0 || term.constant % c != 0) return false;
      q.constant /= c;
      return true;
    }
    auto it = std::find(q.factors.begin(), q.factors.end(), stride);
    if (it == q.factors.end()) return false;
    q.factors.erase(it);
    return true;
  }
  // An argument of the kernel itself: a value known at launch, the same for every program.
  bool kernelArg(const Value* v) const { return !v->definingOp() && v->ownerBlock() == &f_.body; }
  bool launchInvariant(const Product& p) const {
    return std::all_of(p.factors.begin(), p.factors.end(), [&](const Value* f) { return kernelArg(f); });
  }
  HostValue hostProducts(const Op& op, const std::vector<Product>& terms) {
    HostValue sum;
    bool first = true;
    for (const Product& p : terms) {
      HostValue prod;
      prod.constant = p.constant;
      for (const Value* f : p.factors) {
        if (!kernelArg(f))
          unsupported(op, "the tensor behind this descriptor has an extent that depends on the program id",
                      "TMA needs the whole tensor's extent at launch: a base may move by the program's block (rows from r, "
                      "with extent M - r) or by one slice of the descriptor's rows per program id (ptr + program_id * rows * row_stride)");
        HostValue a;
        a.arg = f->index();
        HostValue m;
        m.op = '*';
        m.parts = {prod, a};
        prod = m;
      }
      if (first) {
        sum = prod;
      } else {
        HostValue s;
        s.op = '+';
        s.parts = {sum, prod};
        sum = s;
      }
      first = false;
    }
    return sum;
  }
  void rebase(const Op& op, const Op& addptr, TensorMapSpec& s) {
    const Value* base = addptr.operand(0);
    if (!kernelArg(base))
      unsupported(op, "the base of a descriptor must be a pointer argument of the kernel, or one moved by whole rows and columns");
    s.baseArg = base->index();
    std::vector<Product> off, shift[2];
    if (!sumOfProducts(addptr.operand(1), off)) unsupported(op, "cannot analyze the descriptor's base offset");
    const Op* rc = op.operand(1)->definingOp();
    const bool unboundedRows = rc && rc->kind() == OpKind::Constant &&
                               std::get<int64_t>(rc->attrs.at("value")) == std::numeric_limits<int32_t>::max();
    for (const Product& t : simplify(off)) {
      Product q;
      // A program-dependent term that is not whole rows is a batch or head offset (as a column shift
      // by a column stride of 1 its extent would depend on the program): rows, when R divides it.
      if (divideBy(t, op.operand(3), q)) shift[0].push_back(q);
      else if (unboundedRows && !launchInvariant(t) && rowQuotient(op, t, q)) shift[0].push_back(q);
      else if (divideBy(t, op.operand(4), q)) shift[1].push_back(q);
      else if (unboundedRows && rowQuotient(op, t, q)) shift[0].push_back(q);
      else unsupported(op, "the descriptor's base is not moved by whole rows and columns (an offset term is not a multiple of a stride)");
    }
    // The tensor's extents: the descriptor's plus the shift; they must not depend on the program.
    // A block's shift cancels against its extent (M - r rows from row r: M rows). A shift by whole
    // slices of the descriptor's rows that does not cancel (n_ctx rows from row off_hz * n_ctx: one
    // attention head) becomes a slice dimension outside the rows, indexed by the program id.
    // Unbounded rows (block-access found no row mask) stay unbounded: the rows a program reads are
    // its coordinates, shifted.
    HostValue* ext[2] = {&s.rows, &s.cols};
    for (int d = 0; d < 2; ++d) {
      std::vector<Product> e;
      sumOfProducts(op.operand(1 + d), e);
      if (!(d == 0 && unboundedRows)) e.insert(e.end(), shift[d].begin(), shift[d].end());
      e = simplify(e);
      if (d == 0) sliceRows(op, s, e, shift[0]);
      *ext[d] = hostProducts(op, e);
      shifts_[op.result()][d] = simplify(shift[d]);
    }
  }
  // A base offset term t = P * S, S a kernel argument that is not the row stride R (attention's
  // `q + bh * stride_bh`, a batch or head offset by its own stride): moved to the row coordinate as
  // P * (S / R) rows, the quotient a kernel parameter the host computes, provided R divides S at the
  // launch (tmaObstacle; otherwise the map is copied by threads from the moved base). `q` is P with
  // the quotient's parameter. Only for unbounded rows, whose extent the shift leaves unbounded.
  bool rowQuotient(const Op& op, const Product& t, Product& q) {
    for (const Value* f : t.factors) {
      if (!kernelArg(f) || !f->type().isScalar() || !f->type().elemIsInt()) continue;
      q = t;
      q.factors.erase(std::find(q.factors.begin(), q.factors.end(), f));
      HostValue quotient;
      quotient.op = '/';
      quotient.parts = {hostValue(op, f), hostValue(op, op.operand(3))};
      const std::string name = fresh(nameFor(op.result()) + "_rows_per_" + nameFor(f));
      q.params.push_back(name);
      std::sort(q.params.begin(), q.params.end());
      pendingQuotients_.push_back({name, quotient});
      return true;
    }
    return false;
  }
  // Moves the program-dependent terms of the row extent `e` (and of the row shift) into a slice
  // dimension when they are exactly program_id(a) * (the descriptor's row count); leaves them (for
  // hostProducts to reject) otherwise.
  void sliceRows(const Op& op, TensorMapSpec& s, std::vector<Product>& e, std::vector<Product>& shift) {
    std::vector<Product> moving, rest;
    for (const Product& t : e) (launchInvariant(t) ? rest : moving).push_back(t);
    if (moving.empty()) return;
    std::vector<Product> index;
    for (const Product& t : moving) {
      Product q;
      if (!divideBy(t, op.operand(1), q)) return;
      index.push_back(q);
    }
    index = simplify(index);
    if (index.size() != 1 || index[0].constant != 1 || index[0].factors.size() != 1) return;
    const std::optional<int> axis = programAxis(index[0].factors[0]);
    if (!axis) return;
    SliceDim sd;
    sd.gridAxis = *axis;
    sd.stride.op = '*';
    sd.stride.parts = {hostValue(op, op.operand(1)), hostValue(op, op.operand(3))};
    s.slices.push_back(sd);
    sliceIndex_[op.result()].push_back(index[0].factors[0]);
    for (Product t : moving) {
      t.constant = -t.constant;
      shift.push_back(t);
    }
    e = rest;
  }
  // The coordinates of a TMA copy on `desc` after its column and row: one program id per slice dimension.
  std::string sliceCoords(const Value* desc) {
    std::string out;
    if (auto it = sliceIndex_.find(desc); it != sliceIndex_.end())
      for (const Value* v : it->second) out += ", " + ex(v);
    return out;
  }
  // A TMA coordinate on descriptor `desc` along dimension d (0 rows, 1 columns), shifted when its base moved.
  std::string coord(const Value* desc, int d, const std::string& c) {
    auto it = shifts_.find(desc);
    if (it == shifts_.end() || it->second[d].empty()) return c;
    std::string e = c;
    for (const Product& p : it->second[d]) {
      std::string t = std::to_string(p.constant < 0 ? -p.constant : p.constant);
      for (const Value* f : p.factors) t += " * " + ex(f);
      for (const std::string& q : p.params) t += " * " + q;
      e += (p.constant < 0 ? " - " : " + ") + t;
    }
    return "(" + e + ")";
  }

  // transposed: the tensor map walks the descriptor's columns as rows (K innermost for an fp8 B), so
  // its column stride (the descriptor's row stride) must be 1 at launch.
  void setBox(const Op& op, const Value* desc, int64_t rows, int64_t cols, int swizzle, bool transposed = false) {
    auto it = descs_.find(desc);
    if (it == descs_.end()) unsupported(op, "the descriptor must come from a tile.make_desc at the top of the kernel");
    TensorMapSpec& s = allMaps_[static_cast<size_t>(it->second)];
    if (s.boxRows && (s.boxRows != rows || s.boxCols != cols || s.swizzleBytes != swizzle || transposed_.count(it->second) != transposed))
      unsupported(op, "descriptor '" + s.param + "' is used with two different boxes (a TMA load and a store?)");
    if (transposed && !transposed_.count(it->second)) {
      transposed_.insert(it->second);
      std::swap(s.rows, s.cols);
      std::swap(s.rowStride, s.colStride);
      // The column windows were the untransposed map's columns, its rows now. Its columns are the
      // untransposed rows: where those are unmasked, their windows (the row coordinates), or none (a
      // tile map at the kernel's addresses). Checking the old windows against the new row stride let
      // an 8-bit B read past K through TMA (zeros, where the kernel reads the next row), 2026-12-07.
      s.rowCols = false;
      s.columns.clear();
      const Op* md = desc->definingOp();
      if (const Op* c = md ? md->operand(1)->definingOp() : nullptr; c && c->kind() == OpKind::Constant &&
                                                                     std::get<int64_t>(c->attrs.at("value")) == std::numeric_limits<int32_t>::max() &&
                                                                     !(shifts_.count(desc) && !shifts_.at(desc)[0].empty()))
        s.rowCols = windows(*md, 0, s.columns);
    }
    s.boxRows = rows;
    s.boxCols = cols;
    s.swizzleBytes = swizzle;
  }

  // TensorMapSpec::transposable: a top-level host map whose only uses are producer loads into slots
  // that f16/bf16 wgmma reads as its untransposed B, or as its untransposed A of whole 64-row blocks,
  // and nothing else; rows bounded (a transposed map's columns must be), no slices or row shifts.
  void markTransposable() {
    std::set<const Value*> eligible, otherRings;  // eligible: the slots a transposed map may fill (A or B)
    auto b16 = [&](const Value* ring) {
      return rings_.count(ring) && (rings_.at(ring).tile.scalar == Scalar::F16 || rings_.at(ring).tile.scalar == Scalar::BF16);
    };
    std::set<const Value*> asA, asB;
    for (const Op* r : regions_)
      walk(*r->region(0), [&](const Op* op) {
        if (op->kind() == OpKind::Wgmma) {
          (b16(op->operand(2)) && !transB(*op) ? eligible : otherRings).insert(op->operand(2));
          (b16(op->operand(0)) && !transA(*op) && rings_.at(op->operand(0)).tile.shape[0] % 64 == 0 ? eligible : otherRings)
              .insert(op->operand(0));
          asA.insert(op->operand(0)), asB.insert(op->operand(2));
        } else if (op->kind() == OpKind::SmemLoad) {
          otherRings.insert(op->operand(0));
        }
      });
    for (const Value* r : asA)
      if (asB.count(r)) otherRings.insert(r);  // one slot read as A and as B
    // Per descriptor: its producer loads, each into an eligible slot (else the count is negative),
    // against every use it has anywhere.
    std::map<const Value*, int> slotLoads, uses;
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      for (size_t k = 0; k < o->numOperands(); ++k) ++uses[o->operand(k)];
    });
    walk(*regions_[0]->region(0), [&](const Op* op) {
      if (op->kind() != OpKind::TmaLoad) return;
      if (eligible.count(op->operand(1)) && !otherRings.count(op->operand(1))) ++slotLoads[op->operand(0)];
      else slotLoads[op->operand(0)] = -(1 << 20);
    });
    for (const auto& [d, n] : slotLoads) {
      auto it = descs_.find(d);
      if (it == descs_.end() || n <= 0 || uses[d] != n || deviceMaps_.count(it->second)) continue;
      TensorMapSpec& s = allMaps_[static_cast<size_t>(it->second)];
      const Op* md = d->definingOp();
      const auto rows = md ? intConstant(md->operand(1)) : std::nullopt;
      if (!s.generic.empty() || s.rowCols || !s.slices.empty() || !s.wholeRows.empty() ||
          (rows && *rows == std::numeric_limits<int32_t>::max()))
        continue;
      s.transposable = true;
    }
  }

  // A tile.make_desc (at the top or inside a warp group): one tensor map of the launch, or, when the
  // host cannot build one (shapes computed in the kernel, a base not moved by whole rows and columns),
  // a device tile map: threads move its tiles with addresses computed in the kernel.
  void collectDesc(const Op& op) {
    const Type& d = op.result()->type();
    if (d.rank() == 1) return collectVecDesc(op);
    if (d.rank() != 2) unsupported(op, "only 1-D and 2-D tensor descriptors are emitted so far");
    pendingQuotients_.clear();
    try {
      collectHostDesc(op);
    } catch (const UserError& e) {
      shifts_.erase(op.result());
      sliceIndex_.erase(op.result());
      pendingQuotients_.clear();
      collectDeviceDesc(op, e);
    }
  }
  // The base of a device tile map is a kernel argument, or an address read in the kernel, moved by
  // scalar offsets: passed to the kernel (or read) and moved as C pointers (scalarPtrs_); extents and
  // strides are the descriptor's own operands.
  void collectDeviceDesc(const Op& op, const UserError& why) {
    if (!passPointer(op.operand(0))) throw why;
    TensorMapSpec s;
    s.param = nameFor(op.result());
    s.loc = op.loc();
    s.elem = op.result()->type().scalar;
    s.generic = "the host cannot build its tensor map: " + std::string(why.what()).substr(std::string(why.what()).find(": ") + 2);
    deviceMaps_[static_cast<int>(allMaps_.size())] = &op;
    descs_[op.result()] = static_cast<int>(allMaps_.size());
    allMaps_.push_back(s);
  }
  void collectHostDesc(const Op& op) {
    const Type& d = op.result()->type();
    const Value* base = op.operand(0);
    TensorMapSpec s;
    s.param = nameFor(op.result());
    s.loc = op.loc();
    s.elem = d.scalar;
    s.rowStride = hostValue(op, op.operand(3));
    s.colStride = hostValue(op, op.operand(4));
    if (const Op* ap = base->definingOp(); ap && ap->kind() == OpKind::AddPtr && (ap->parent == op.parent || ap->parent == &f_.body)) {
      rebase(op, *ap, s);  // a base moved by whole rows and columns: the tensor's map, shifted coordinates
    } else {
      if (!kernelArg(base))
        unsupported(op, "the base of a descriptor must be a pointer argument of the kernel, or one moved by whole rows and columns");
      s.baseArg = base->index();
      s.rows = hostValue(op, op.operand(1));
      s.cols = hostValue(op, op.operand(2));
    }
    // An unmasked column dimension keeps the extent block-access gives it (INT32_MAX): nothing bounds
    // the columns the program reads, which may run past its row (a K not a multiple of the block, a
    // base moved by a column offset, rows closer than their length). Such a map's rows overlap, so
    // its tiles are moved by threads, at exactly the addresses the kernel reads. (Clamping the extent
    // to the row stride whatever the columns read, as this did before 2026-12-06, read zeros past it:
    // silently wrong.) Where every access's columns are a window the host can bound (a constant
    // column, attention's head dimension loaded whole; or `k * BK` over a K loop whose bounds are
    // kernel arguments: a K that is a multiple of the block), the map is exact when, checked at
    // launch, every window lies within a row: TMA then reads what the kernel's addresses read.
    const bool columnShift = shifts_.count(op.result()) && !shifts_.at(op.result())[1].empty();  // a base moved by columns
    if (const Op* c = op.operand(2)->definingOp(); !columnShift && c && c->kind() == OpKind::Constant &&
                                                   std::get<int64_t>(c->attrs.at("value")) == std::numeric_limits<int32_t>::max() &&
                                                   columnWindows(op, s.columns)) {
      s.rowCols = true;  // the TMA map's extent is the row stride; a tile map's stays unbounded (the kernel's addresses)
    }
    if (!pendingQuotients_.empty()) {
      // At a launch where a quotient is not exact (or TMA cannot take the map for another reason)
      // the map is copied by threads from the base the kernel moves itself; so are gathered rows
      // (never TMA).
      if (gatheredDescs_.count(op.result()))
        unsupported(op, "its rows are gathered through an index tile from a base the kernel moves by a runtime multiple of a stride");
      if (opt_.genericMaps.count(s.param))
        unsupported(op, "the descriptor's base moves by a runtime multiple of a stride that is not a whole number of its rows at this launch");
      s.wholeRows = std::move(pendingQuotients_);
      pendingQuotients_.clear();
    }
    descs_[op.result()] = static_cast<int>(allMaps_.size());
    allMaps_.push_back(s);
  }

  // The column windows of every access through the rank-2 descriptor `md` (ColumnWindow), or false
  // when one access's columns are not such a window.
  bool columnWindows(const Op& md, std::vector<ColumnWindow>& out) const { return windows(md, 1, out); }
  // The same along dimension `dim` of the descriptor (0: its rows, the columns of its transposed map).
  bool windows(const Op& md, int dim, std::vector<ColumnWindow>& out) const {
    if (md.result()->type().rank() != 2) return false;
    bool all = true;
    out.clear();
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      for (size_t k = 0; k < o->numOperands(); ++k) {
        if (o->operand(k) != md.result()) continue;
        size_t first = o->kind() == OpKind::TmaLoad ? 4 : o->kind() == OpKind::TmaStore || o->kind() == OpKind::DescStore ? 2
                                                                                          : o->kind() == OpKind::DescLoad  ? 1
                                                                                                                           : 0;
        ColumnWindow w;
        if (k != 0 || first == 0 || o->numOperands() != first + 2 || !affineColumn(o->operand(first + static_cast<size_t>(dim)), w)) {
          all = false;
          continue;
        }
        // The tile's extent along `dim`: the slot's (a TMA load), the stored tile's, the loaded tile's.
        const Type& t = o->kind() == OpKind::TmaLoad ? o->operand(1)->type()
                        : o->kind() == OpKind::DescLoad ? o->result()->type()
                                                        : o->operand(1)->type();
        w.width = t.shape[t.shape.size() - (dim == 1 ? 1 : 2)];
        out.push_back(w);
      }
    });
    return all && !out.empty();
  }
  // `v` as scale * i + offset (constants) over the induction variable i of a tile.for whose bounds
  // the host computes (hostExpr, with cdiv's quotient), or as a constant (scale 0, one iteration).
  bool affineColumn(const Value* v, ColumnWindow& w) const {
    // (Each leaf starts the window afresh: an operand tried before may have left a part.)
    if (auto c = intConstant(v)) {
      w = ColumnWindow{};
      w.lb.constant = 0, w.ub.constant = 1, w.step.constant = 1;
      w.scale = 0, w.offset = *c;
      return true;
    }
    if (auto axis = programAxis(v)) {  // a column block taken straight from a program id
      w = ColumnWindow{};
      w.lb.constant = 0, w.ub.constant = 1, w.step.constant = 1;
      w.scale = 0, w.offset = 0;
      w.programs = {{*axis, 1}};
      return true;
    }
    const Op* d = v->definingOp();
    if (!d) {
      const Block* b = v->ownerBlock();
      const Op* loop = b ? b->parentOp : nullptr;
      if (!loop || loop->kind() != OpKind::For || v->index() != 0) return false;
      auto lb = hostExpr(loop->operand(0), true), ub = hostExpr(loop->operand(1), true), step = hostExpr(loop->operand(2), true);
      if (!lb || !ub || !step) return false;
      w = ColumnWindow{};
      w.lb = *lb, w.ub = *ub, w.step = *step;
      w.scale = 1, w.offset = 0;
      return true;
    }
    if (d->kind() != OpKind::Add && d->kind() != OpKind::Sub && d->kind() != OpKind::Mul) return false;
    auto combine = [](char op, HostValue a, HostValue b) {
      HostValue h;
      h.op = op;
      h.parts = {std::move(a), std::move(b)};
      return h;
    };
    for (int x = 0; x < 2; ++x) {
      const Value* other = d->operand(static_cast<size_t>(1 - x));
      if (d->kind() == OpKind::Mul) {
        auto c = intConstant(other);
        if (!c || !affineColumn(d->operand(static_cast<size_t>(x)), w)) continue;
        HostValue hc;
        hc.constant = *c;
        w.scale *= *c, w.offset *= *c, w.base = combine('*', w.base, hc);
        for (auto& pr : w.programs) pr.second *= *c;
        return true;
      }
      // a + b, a - b: one side affine in i, the other a constant, a value the host computes (a loop
      // counting down from K reads column K - i) or program ids' multiples (split-K's `pid_z * BK`),
      // or a sum of those.
      HostValue h;
      std::vector<std::pair<int, int64_t>> programs;
      if (!offsetExpr(other, h, programs) || !affineColumn(d->operand(static_cast<size_t>(x)), w)) continue;
      if (d->kind() == OpKind::Sub && x == 1) {  // h - (affine): the affine part negated
        w.scale = -w.scale, w.offset = -w.offset;
        for (auto& pr : w.programs) pr.second = -pr.second;
        w.base = combine('-', h, w.base);
      } else {
        if (d->kind() == OpKind::Sub)
          for (auto& pr : programs) pr.second = -pr.second;
        w.base = combine(d->kind() == OpKind::Add ? '+' : '-', w.base, h);
      }
      w.programs.insert(w.programs.end(), programs.begin(), programs.end());
      return true;
    }
    return false;
  }
  // `v` as h + sum of scale * program_id(axis): a value the host computes, a program id's multiple,
  // or sums and differences of those.
  bool offsetExpr(const Value* v, HostValue& h, std::vector<std::pair<int, int64_t>>& programs) const {
    if (auto e = hostExpr(v, false)) {
      h = *e;
      return true;
    }
    if (auto pr = programMultiple(v)) {
      h = HostValue{};
      programs.push_back(*pr);
      return true;
    }
    const Op* d = v->definingOp();
    if (!d || (d->kind() != OpKind::Add && d->kind() != OpKind::Sub) || !v->type().isScalar()) return false;
    HostValue a, b;
    std::vector<std::pair<int, int64_t>> pb;
    if (!offsetExpr(d->operand(0), a, programs) || !offsetExpr(d->operand(1), b, pb)) return false;
    for (auto& pr : pb) programs.emplace_back(pr.first, d->kind() == OpKind::Sub ? -pr.second : pr.second);
    h = HostValue{};
    h.op = d->kind() == OpKind::Add ? '+' : '-';
    h.parts = {a, b};
    return true;
  }

  // The axis of `v` when it is a program id (the kernel's, at its top level).
  std::optional<int> programAxis(const Value* v) const {
    const Op* d = v->definingOp();
    if (!d || d->kind() != OpKind::ProgramId || d->parent != &f_.body) return std::nullopt;
    return static_cast<int>(d->intAttr("axis"));
  }
  // `v` as scale * program_id(axis) (a program id, or its product with an integer constant).
  std::optional<std::pair<int, int64_t>> programMultiple(const Value* v) const {
    if (auto a = programAxis(v)) return std::make_pair(*a, int64_t{1});
    const Op* d = v->definingOp();
    if (!d || d->kind() != OpKind::Mul) return std::nullopt;
    for (int x = 0; x < 2; ++x)
      if (auto a = programAxis(d->operand(static_cast<size_t>(x))))
        if (auto c = intConstant(d->operand(static_cast<size_t>(1 - x)))) return std::make_pair(*a, *c);
    return std::nullopt;
  }

  // A 1-D descriptor (block-access makes one for a per-row statistic such as attention's logsumexp,
  // `tl.store(m_ptrs, m_i)`): no tensor map; a consumer stores the row vector straight from its
  // registers (emitVecStore). Its base is a pointer argument, possibly moved by a scalar offset; the
  // argument becomes a pointer parameter of the kernel.
  void collectVecDesc(const Op& op) {
    VecDesc v;
    const Value* base = op.operand(0);
    // A base moved by scalar offsets, one or more (`Req_to_tokens + stride * req + start`).
    while (const Op* ap = base->definingOp()) {
      if (ap->kind() != OpKind::AddPtr || !ap->result()->type().isPtr()) break;
      v.offset.push_back(ap->operand(1));
      base = ap->operand(0);
    }
    if (!kernelArg(base) || !base->type().isPtr())
      unsupported(op, "the base of a 1-D descriptor must be a pointer argument of the kernel, or one moved by scalar offsets");
    v.arg = base->index();
    v.extent = op.operand(1);
    v.stride = op.operand(2);
    vecDescs_[op.result()] = v;
  }

  // The index of the wg.region holding op.
  // A scalar store (tl.store of one value through a scalar pointer, e.g. a flag in the epilogue):
  // its pointer is an argument moved by scalar offsets; that argument is passed to the kernel, and
  // the pointer chain is emitted as C pointers (scalarPtrs_). Only consumers store (the producer
  // loads); split-consumers leaves such a store to the first consumer alone.
  void collectScalarStore(const Op& op) {
    if (regionIndex(&op) < 1 && !single_) unsupported(op, "a scalar store or atomic in the producer warp group is not emitted");
    if (op.kind() == OpKind::Atomic && uses_[op.result()] > 0) {
      // Its old value reaches the whole warp group through 8 bytes of shared memory.
      if (regions_.size() > 2)
        unsupported(op, "the old value a scalar atomic returns is not emitted with cooperative consumers",
                    "one consumer warp group (--consumers 1), or an atomic whose result is unused");
      atomicOld_[&op] = 0;
      atomicOrder_.push_back(&op);
    }
    if (!passPointer(op.operand(0)))
      unsupported(op, "a scalar store's or atomic's pointer must be a kernel argument, or an address read in the kernel, moved by scalar offsets");
  }
  // A pointer that is a kernel argument, or an address read in the kernel (an int64 made a pointer:
  // an array of pointers' element), moved by scalar offsets: the argument is passed to the kernel and
  // the chain of addptrs (and the cast) emitted as C pointers (scalarPtrs_). False, recording
  // nothing, otherwise.
  bool passPointer(const Value* p) {
    std::vector<const Value*> chain;
    for (;; p = p->definingOp()->operand(0)) {
      chain.push_back(p);
      const Op* d = p->definingOp();
      if (!d) break;
      if (d->kind() == OpKind::Bitcast && d->operand(0)->type().isScalar() && d->operand(0)->type().elemIsInt()) {
        scalarPtrs_.insert(chain.begin(), chain.end());
        return true;
      }
      if (d->kind() != OpKind::AddPtr || !d->operand(0)->type().isPtr() || !d->operand(1)->type().isScalar()) return false;
    }
    if (!kernelArg(p)) return false;
    scalarPtrs_.insert(chain.begin(), chain.end());
    return true;
  }

  int regionIndex(const Op* op) const {
    const Op* r = op;
    while (r && r->kind() != OpKind::WgRegion) r = r->parent ? r->parent->parentOp : nullptr;
    for (size_t w = 0; w < regions_.size(); ++w)
      if (regions_[w] == r) return static_cast<int>(w);
    return -1;
  }

  void layoutSmem() {
    int64_t off = 0;
    for (const Value* v : ringOrder_) {
      Ring& r = rings_.at(v);
      r.offset = off;
      off += r.depth * r.layout.slotBytes;
    }
    for (const Op* op : privateOrder_) {
      Private& pv = privates_.at(op);
      pv.offset = off;
      off += pv.layout.slotBytes;
    }
    for (const Op* op : operandStagingOrder_) {
      Staging& st = operandStagings_.at(op);
      if (st.sharedWith) continue;  // consumer 1's half of consumer 0's buffer
      st.offset = off;
      off += st.layout->slotBytes;
    }
    // The stores of one warp group take turns in one staging buffer per size (each waits until the
    // TMA engine has read the one before: emitTmaStore), as Triton's epilogue subtiling intends.
    std::map<std::pair<int, int64_t>, int64_t> stagingAt;
    for (const Op* op : stagingOrder_) {
      Staging& s = stagings_.at(op);
      const int64_t bytes = alignUp(s.rows * s.cols * s.elemBytes, kAlign);
      auto [it, fresh] = stagingAt.emplace(std::make_pair(regionIndex(op), bytes), off);
      s.offset = it->second;
      s.reused = !fresh;
      if (fresh) off += bytes;
    }
    for (const Value* v : barOrder_) {
      Bars& b = bars_.at(v);
      b.offset = off;
      off += 8 * b.n;
    }
    for (const Op* op : privateOrder_) {
      privates_.at(op).barOffset = off;
      off += 8;
    }
    for (const Op* op : atomicOrder_) {
      atomicOld_.at(op) = off;
      off += 8;
    }
    if (keepOrder_) {
      off = alignUp(off, 16);
      keepOffset_ = off;
      off += static_cast<int64_t>(regions_.size() - 1) * 128 * 4;  // a word per consumer thread
    }
    if (opt_.profile) {
      off = alignUp(off, 16);
      profOffset_ = off;
      off += static_cast<int64_t>(regions_.size()) * profRingBytes();
    }
    smemUsed_ = off;
    res_.smemBytes = off + kAlign;
    if (res_.smemBytes > kSmemLimit) {
      const Op* first = ringOrder_.empty() ? nullptr : ringOrder_.front()->definingOp();
      throw UserError(first ? first->loc() : f_.loc,
                      "the kernel needs " + std::to_string(res_.smemBytes) + " bytes of shared memory; sm_90a allows " +
                          std::to_string(kSmemLimit) + " per block",
                      "lower the aref depth (--depth) or the block sizes");
    }
  }

  // ---- text

  void emitBanner() {
    const Op& prod = *regions_[0];
    const Op& cons = *regions_[1];
    std::string consumers = regions_.size() == 2 ? "warp group 1: consumer" : "warp groups 1-" + std::to_string(regions_.size() - 1) + ": cooperative consumers";
    int64_t depth = 0;  // the streamed rings' (a tile loaded once has a ring of one slot)
    for (const auto& r : ringOrder_) depth = std::max(depth, rings_.at(r).depth);
    int64_t p = -1;
    walk(*cons.region(0), [&](const Op* op) {
      if (op->kind() == OpKind::For && op->hasAttr("mma_depth") && p < 0) p = op->intAttr("mma_depth");
    });
    line("// Generated by tawa from @" + f_.name + (f_.loc.known() ? " (" + f_.loc.str() + ")" : "") + " for sm_90a.");
    line("// Warp group 0: producer (" +
         std::string(producerGroup_ ? "its 128 threads copy the tile maps' slots, thread 0 issues TMA loads"
                                   : "one elected thread issues TMA loads") +
         "; setmaxnreg " + std::to_string(prod.intAttr("regs")) + "); " + consumers + " (wgmma; setmaxnreg " +
         std::to_string(cons.intAttr("regs")) + ").");
    line("// Rings of D = " + std::to_string(depth) + " slots" + (p >= 0 ? ", MMA depth P = " + std::to_string(p) : std::string()) +
         "; dynamic shared memory " + std::to_string(res_.smemBytes) + " bytes (" + std::to_string(smemUsed_) +
         " used, 1024 for alignment).");
    bool threadStore = false, reduce = false, swizzled = false;
    for (const Op* op : stagingOrder_)
      threadStore = threadStore || tileMap(op->operand(0)), reduce = reduce || op->hasAttr("reduce"),
      swizzled = swizzled || stagings_.at(op).layout.has_value();
    line(std::string("// Epilogue: accumulators -> shared staging (") + (swizzled ? "TMA's swizzled layout" : "row-major, unswizzled") + ") -> " +
         (threadStore ? (reduce ? "global, added by the warp group's threads (atomicAdd)." : "global, stored by the warp group's threads.")
                      : (reduce ? "TMA reduce-add (tl.atomic_add)." : "TMA store.")));
    for (const auto& s : res_.tensorMaps)
      line("// " + std::string(s.generic.empty() ? "Tensor map " : "Tile map ") + s.param + ": " + std::string(scalarName(s.elem)) +
           ", box " + std::to_string(s.boxRows) + "x" + std::to_string(s.boxCols) +
           (s.swizzleBytes ? ", " + std::to_string(s.swizzleBytes) + "B swizzle" : ", no swizzle") + sliceNote(s) +
           (s.rowCols ? "; columns unmasked, read in " + std::to_string(s.columns.size()) +
                            " window(s) that the launch checks lie within a row (else moved by threads)"
                      : "") +
           (s.generic.empty() ? "." : "; moved by threads, not TMA (" + s.generic + ")."));
  }

  static std::string sliceNote(const TensorMapSpec& s) {
    if (s.slices.empty()) return "";
    std::string n = "; " + std::to_string(s.rank()) + "-D, a slice per program id along grid axis";
    for (size_t i = 0; i < s.slices.size(); ++i) n += (i ? ", " : " ") + std::to_string(s.slices[i].gridAxis);
    return n;
  }

  void emitPrologue() {
    line("uint8_t* smem = tawa::dynamic_smem_1024();");
    for (const Value* v : ringOrder_) {
      const Ring& r = rings_.at(v);
      const auto& l = r.layout;
      line("uint8_t* " + r.name + " = smem + " + std::to_string(r.offset) + ";  // " + std::to_string(r.depth) + " x " +
           r.tile.str() + ", " + std::to_string(l.slotBytes) + " B per slot: " + std::to_string(l.chunks) + " chunk(s) of " +
           std::to_string(l.rows) + "x" + std::to_string(l.chunkCols) + ", " +
           (l.swizzle == 16 ? std::string("16-byte rows, unswizzled") : std::to_string(l.swizzle) + "B swizzle"));
    }
    for (const Op* op : privateOrder_) {
      const Private& pv = privates_.at(op);
      const auto& l = pv.layout;
      line("uint8_t* " + pv.name + " = smem + " + std::to_string(pv.offset) + ";  // " + pv.tile.str() + " loaded by consumer " +
           std::to_string(pv.region - 1) + " itself: " + std::to_string(l.chunks) + " chunk(s) of " + std::to_string(l.rows) + "x" +
           std::to_string(l.chunkCols) + ", " + std::to_string(l.swizzle) + "B swizzle");
    }
    for (const Op* op : stagingOrder_) {
      const Staging& s = stagings_.at(op);
      line("uint8_t* " + s.name + " = smem + " + std::to_string(s.offset) + ";  // epilogue staging, " + std::to_string(s.rows) +
           "x" + std::to_string(s.cols) +
           (s.layout ? ", " + std::to_string(s.layout->chunks) + " chunk(s) of " + std::to_string(s.layout->chunkCols) + " columns, " +
                           std::to_string(s.layout->swizzle) + "B swizzle"
                     : " row-major"));
    }
    for (const Op* op : operandStagingOrder_) {
      const Staging& st = operandStagings_.at(op);
      if (st.sharedWith) continue;
      line("uint8_t* " + st.name + " = smem + " + std::to_string(st.offset) + ";  // B of a wgmma, written by " +
           (st.shared ? std::string("both consumers (half of its columns each)") : "consumer " + std::to_string(regionIndex(op) - 1)) +
           " from registers: " + std::to_string(st.rows) + "x" + std::to_string(st.cols) + ", " +
           std::to_string(st.layout->chunks) + " chunk(s) of " + std::to_string(st.layout->chunkCols) + " columns, " +
           std::to_string(st.layout->swizzle) + "B swizzle");
    }
    for (const Value* v : barOrder_) {
      const Bars& b = bars_.at(v);
      line("uint64_t* " + b.name + " = reinterpret_cast<uint64_t*>(smem + " + std::to_string(b.offset) + ");  // " +
           std::to_string(b.n) + " mbarriers" + (b.kind.empty() ? "" : " (" + b.kind + ")") + ", " +
           std::to_string(b.count + b.laneArrivals) + " arrival(s) per phase" +
           (b.laneArrivals ? " (" + std::to_string(b.laneArrivals) + " from the producer's threads)" : ""));
    }
    for (const Op* op : privateOrder_) {
      const Private& pv = privates_.at(op);
      line("uint64_t* " + pv.bar + " = reinterpret_cast<uint64_t*>(smem + " + std::to_string(pv.barOffset) + ");  // " + pv.name +
           " is full (1 arrival + tx per phase)");
    }
    if (keepOrder_)
      line("float* keep_order = reinterpret_cast<float*>(smem + " + std::to_string(keepOffset_) +
           ");  // a word per consumer thread: a row vector's sum stored before an MMA wait (keepAfterWork)");
    if (opt_.profile)
      line("uint8_t* prof_smem = smem + " + std::to_string(profOffset_) + ";  // --profile: " + std::to_string(regions_.size()) +
           " ring(s), one per warp group: 32 B header + " + std::to_string(opt_.profileCapacity) + " events x 16 B");
    if (!barOrder_.empty() || !privateOrder_.empty()) {
      line("if (tawa::thread_idx() == 0) {");
      ++indent_;
      for (const Value* v : barOrder_) {
        const Bars& b = bars_.at(v);
        at(*v->definingOp());
        line("for (int s = 0; s < " + std::to_string(b.n) + "; ++s) tawa::mbarrier_init(&" + b.name + "[s], " +
             std::to_string(b.count + b.laneArrivals) + ");");
      }
      for (const Op* op : privateOrder_) {
        at(*op);
        line("tawa::mbarrier_init(" + privates_.at(op).bar + ", 1);");
      }
      line("tawa::fence_mbarrier_init();");
      --indent_;
      line("}");
      line("tawa::syncthreads();");
    }
    accumulators_.emplace_back();
    for (const auto& up : f_.body.ops()) {
      const Op& op = *up;
      switch (op.kind()) {
        case OpKind::MakeDesc:
        case OpKind::SmemAlloc:
        case OpKind::MbarInit:
        case OpKind::WgRegion:
        case OpKind::Return: break;
        case OpKind::AddPtr:
          // A moved descriptor base: the tensor map is built on the host, the shift goes into the
          // TMA coordinates; a device tile map's base is moved here. Any other use of a pointer is
          // rejected where it is used.
          if (!op.result()->type().isPtr()) emitTileOp(op);
          else emitOp(op);
          break;
        case OpKind::Bitcast:
          if (op.result()->type().isPtr()) emitOp(op);  // an address read in the kernel
          else emitScalar(op);
          break;
        default:
          if (op.numResults() == 1 && op.result()->type().isTile()) {
            prologueTile_ = true;
            emitTileOp(op);
            prologueTile_ = false;
          } else {
            emitScalar(op);
          }
          break;
      }
    }
  }

  // Scalars the prologue reads that the kernel may later write (a flag a program sets for itself):
  // every thread reads them before any warp group starts its role, or one thread's write could
  // reach the others' reads and send them down different branches (waiting for each other forever).
  void syncPrologueReads() {
    bool reads = false, writes = false;
    for (const auto& up : f_.body.ops()) reads = reads || (up->kind() == OpKind::Load && up->result()->type().isScalar());
    walk(f_.body, [&](const Op* o) {
      writes = writes || ((o->kind() == OpKind::Store || o->kind() == OpKind::Atomic) && o->operand(0)->type().isPtr());
    });
    if (reads && writes) line("tawa::syncthreads();  // the prologue's scalar reads, before any role's scalar write");
  }

  // Whether a consumer region has a ping-pong loop (its region index is set while emitting it).
  bool usesPingPong(const Op& region) {
    bool any = false;
    walk(*region.region(0), [&](const Op* o) { any = any || (o->kind() == OpKind::For && pingPong(*o)); });
    return any;
  }

  void emitRoles() {
    line("const int wg = tawa::warpgroup_idx();");
    for (size_t w = 0; w < regions_.size(); ++w) {
      const Op& r = *regions_[w];
      at(r);
      bool producer = r.strAttr("role") == "producer";
      region_ = static_cast<int>(w);
      if (w == 0) line("if (wg == 0) {  // producer");
      else if (w + 1 < regions_.size()) line("} else if (wg == " + std::to_string(w) + ") {  // consumer " + std::to_string(w - 1));
      else line("} else {  // consumer " + std::to_string(w - 1));
      ++indent_;
      accumulators_.emplace_back();
      const Block& b = *r.region(0);
      auto it = b.ops().begin();
      // setmaxnreg is warp-group wide; the producer's remaining work runs on one elected thread.
      for (; it != b.ops().end() && (*it)->kind() == OpKind::SetMaxNReg; ++it) emitOp(**it);
      for (const Op* op : privateOrder_)
        if (privates_.at(op).region == static_cast<int>(w)) line("uint32_t " + privates_.at(op).phase + " = 0;");
      if (w == 2 && usesPingPong(r)) {
        line("tawa::bar_arrive(" + std::to_string(kPingPongBar) + ", 256);  // ping-pong: consumer 0 takes the first turn");
        res_.pingPong = true;
      }
      if (producer) {
        line(producerGroup_ ? "{  // every thread copies tile maps; thread 0 issues TMA and arrivals"
                           : "if (tawa::warp_idx_in_warpgroup() == 0 && tawa::elect_one_sync()) {");
        ++indent_;
      }
      single_ = producer;
      profBegin(static_cast<int>(w));
      for (; it != b.ops().end(); ++it)
        if ((*it)->kind() != OpKind::Yield) emitOp(**it);
      if (!pending_.empty()) waitAll(r);
      profEnd(static_cast<int>(w));
      single_ = false;
      if (producer) {
        --indent_;
        line("}");
      }
      accumulators_.pop_back();
      --indent_;
    }
    line("}");
  }

  // ---- --profile: scopes timed with tawa::clock64 by the elected thread of each warp group

  // Whether the code being emitted runs on one thread only (the producer's elected thread, when no
  // tile map needs the whole warp group).
  bool soleThread() const { return single_ && !producerGroup_; }
  std::string profRec() const { return soleThread() ? "" : "if (prof_rec) "; }
  int64_t profRingBytes() const { return 32 + 16 * static_cast<int64_t>(opt_.profileCapacity); }
  // --profile keeps the ring's address and the open scope's start live through the producer's
  // loops: its budget grows by 8 registers when the register file (64K) still holds every warp group.
  int64_t profProducerRegs(int64_t regs) const {
    int64_t others = 0;
    for (size_t w = 1; w < regions_.size(); ++w) others += regions_[w]->intAttr("regs");
    return 128 * (regs + 8 + others) <= 65536 ? regs + 8 : regs;
  }

  void profBegin(int w) {
    if (!opt_.profile) return;
    line("// --profile: this warp group's event ring; " + std::string(soleThread() ? "this thread" : "its thread 0") + " records");
    if (!soleThread()) line("const bool prof_rec = tawa::warpgroup_thread_idx() == 0;");
    line("uint8_t* const prof_ring = prof_smem + " + std::to_string(static_cast<int64_t>(w) * profRingBytes()) + ";");
    line(profRec() + "tawa::prof_begin(prof_ring);");
    line("uint32_t prof_t = 0;  // the open scope's start (low 32 bits of clock64)");
    profActive_ = true;
    profAfterLoop_ = false;
  }
  void profEnd(int w) {
    if (!profActive_) return;
    profClose();
    line(profRec() + "tawa::prof_flush(prof_out, " + std::to_string(w) + ", " + std::to_string(regions_.size()) + ", prof_ring, " +
         std::to_string(opt_.profileCapacity) + ");");
    profActive_ = false;
  }
  // Starts timing scope s at op (closing the open one) unless the same scope instance is open.
  // slot "": keep the open scope's slot (an op that continues it, e.g. the commit after the MMAs).
  void profMark(const Op& op, profile::Scope s, const std::string& slot = "-1") {
    if (!profActive_) return;
    std::string iter = profIter_.empty() ? "-1" : profIter_.back();
    if (prof_.open && prof_.scope == s && prof_.iter == iter && (slot.empty() || slot == prof_.slot)) return;
    profClose();
    line("prof_t = static_cast<uint32_t>(tawa::clock64());");
    prof_.open = true;
    prof_.scope = s;
    prof_.iter = iter;
    prof_.slot = slot.empty() ? "-1" : slot;
    prof_.line = op.loc().known() ? op.loc().line : 0;
  }
  void profClose() {
    if (!prof_.open) return;
    prof_.open = false;
    line(profRec() + "tawa::prof_record(prof_ring, " + std::to_string(opt_.profileCapacity) + ", prof_t, " +
         std::to_string(static_cast<int>(prof_.scope)) + ", " + prof_.iter + ", " + prof_.slot + ", " + std::to_string(prof_.line) +
         ");  // " + profile::scopeName(prof_.scope));
  }
  // The scope an op of a role starts; ops that start none (scalars, fences) continue the open one.
  void profScopeOf(const Op& op) {
    using profile::Scope;
    switch (op.kind()) {
      case OpKind::For:
      case OpKind::While:
      case OpKind::If: return profClose();
      case OpKind::MbarWait:
        return profMark(op, bars_.at(op.operand(0)).kind == "empty" ? Scope::WaitEmpty : Scope::WaitFull, ex(op.operand(1)));
      case OpKind::MbarArrive:
        return profMark(op, bars_.at(op.operand(0)).kind == "empty" ? Scope::Release : Scope::TmaIssue, ex(op.operand(1)));
      case OpKind::MbarArriveExpectTx: return profMark(op, Scope::TmaIssue, ex(op.operand(1)));
      case OpKind::TmaLoad: return profMark(op, Scope::TmaIssue, ex(op.operand(2)));
      case OpKind::Wgmma: return profMark(op, Scope::MmaIssue, ex(op.operand(1)));
      case OpKind::WgmmaCommit: return profMark(op, Scope::MmaIssue, "");
      case OpKind::WgmmaWait: return profMark(op, Scope::MmaWait);
      case OpKind::TmaStore: return profMark(op, Scope::TmaStore);
      default: return;
    }
  }
  // Register-tile arithmetic: softmax in a loop that issues MMAs, epilogue after the main loop.
  void profTile(const Op& op) {
    if (!profActive_) return;
    using profile::Scope;
    if (!profLoopMma_.empty() && profLoopMma_.back()) profMark(op, Scope::Softmax);
    else profMark(op, profAfterLoop_ ? Scope::Epilogue : Scope::Compute);
  }

  // Emits a block's ops (not its yield); `around(op, after)`, when given, runs before and after each.
  void emitBlock(const Block& b, const std::function<void(const Op&, bool)>& around = {}) {
    accumulators_.emplace_back();
    for (const auto& op : b.ops()) {
      if (op->kind() == OpKind::Yield || op->kind() == OpKind::Condition) continue;
      if (around) around(*op, false);
      emitOp(*op);
      if (around) around(*op, true);
    }
    accumulators_.pop_back();
  }

  // One thread of the warp group does it (arrivals count warp groups; TMA is issued once).
  void oneThread(const std::string& stmt) {
    line(soleThread() ? stmt : "if (tawa::warpgroup_thread_idx() == 0) " + stmt);
  }

  void emitScalar(const Op& op) {
    static const std::map<OpKind, const char*> bin = {
        {OpKind::Add, "+"}, {OpKind::Sub, "-"}, {OpKind::Mul, "*"}, {OpKind::Div, "/"}, {OpKind::Rem, "%"},
        {OpKind::And, "&"}, {OpKind::Or, "|"},  {OpKind::Xor, "^"}, {OpKind::Shl, "<<"}, {OpKind::Shr, ">>"}};
    static const std::map<std::string, const char*> cmp = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                           {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
    if (op.numResults() != 1) unsupported(op, "not emitted yet");
    const Type& t = op.result()->type();
    std::string e;
    switch (op.kind()) {
      case OpKind::Constant: return;  // inlined at its uses
      case OpKind::Assume:
        e = "tawa::assume_at_least(" + ex(op.operand(0)) + ", " + std::to_string(op.intAttr("min")) + "LL)";
        break;
      case OpKind::ProgramId:
      case OpKind::NumPrograms: {
        static const char* axes[] = {"x", "y", "z"};
        if (op.kind() == OpKind::NumPrograms && res_.persistentPrograms > 0) e = gridParams_[op.intAttr("axis")];  // the logical grid
        else e = std::string(op.kind() == OpKind::ProgramId ? "tawa::block_idx_" : "tawa::grid_dim_") + axes[op.intAttr("axis")] + "()";
        break;
      }
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
        needScalar(op, t);
        if (t.elemIsFloat() && op.kind() != OpKind::Add && op.kind() != OpKind::Sub && op.kind() != OpKind::Mul &&
            op.kind() != OpKind::Div)
          unsupported(op, "not emitted for f32 scalars");
        if (op.kind() == OpKind::Div && t.scalar == Scalar::F32)  // div.full.f32, as Triton's `/`
          e = "tawa::div_full(" + ex(op.operand(0)) + ", " + ex(op.operand(1)) + ")";
        else
          e = ex(op.operand(0)) + " " + bin.at(op.kind()) + " " + ex(op.operand(1));
        break;
      case OpKind::Max:
      case OpKind::Min: {
        needScalar(op, t);
        std::string a = ex(op.operand(0)), b = ex(op.operand(1));
        if (t.elemIsFloat())
          e = std::string(op.kind() == OpKind::Max ? "tawa::max" : "tawa::min") + (propagatesNan(op) ? "_nan(" : "_num(") + a + ", " + b + ")";
        else e = a + (op.kind() == OpKind::Max ? " > " : " < ") + b + " ? " + a + " : " + b;
        break;
      }
      case OpKind::FloorDiv: {
        needScalar(op, t);
        if (t.elemIsFloat()) unsupported(op, "not emitted for f32 scalars");
        std::string a = ex(op.operand(0)), b = ex(op.operand(1));
        e = a + " / " + b + " - ((" + a + " % " + b + " != 0) && ((" + a + " < 0) != (" + b + " < 0)))";
        break;
      }
      case OpKind::Cmp:
        needScalar(op, op.operand(0)->type());
        e = ex(op.operand(0)) + " " + cmp.at(op.strAttr("pred")) + " " + ex(op.operand(1));
        break;
      case OpKind::Select:
        needScalar(op, t);
        e = ex(op.operand(0)) + " ? " + ex(op.operand(1)) + " : " + ex(op.operand(2));
        break;
      case OpKind::Cast: {
        const Scalar from = op.operand(0)->type().scalar;
        const bool halfFrom = from == Scalar::F16 || from == Scalar::BF16, halfTo = t.scalar == Scalar::F16 || t.scalar == Scalar::BF16;
        needScalar(op, t, halfTo && from == Scalar::F32);
        needScalar(op, op.operand(0)->type(), halfFrom && t.scalar == Scalar::F32);
        if (halfFrom && t.scalar == Scalar::F32) e = "tawa::to_f32(" + ex(op.operand(0)) + ")";  // exact
        else if (halfTo && from == Scalar::F32) e = std::string(t.scalar == Scalar::F16 ? "tawa::to_f16(" : "tawa::to_bf16(") + ex(op.operand(0)) + ")";
        else e = "static_cast<" + cScalarType(t.scalar) + ">(" + ex(op.operand(0)) + ")";
        break;
      }
      case OpKind::Load:
        // A scalar read (a problem's size, an address in an array of pointers, an f16 scale): each thread reads it.
        // A masked one reads only where its mask holds (else `other`, zero without one).
        needScalar(op, t, true);
        e = "*" + ex(op.operand(0));
        if (op.numOperands() > 1)
          e = "(" + ex(op.operand(1)) + " ? " + e + " : " +
              (op.numOperands() > 2 ? ex(op.operand(2)) : cScalarType(t.scalar) + "{}") + ")";
        break;
      case OpKind::Bitcast:  // to a pointer: emitOp
        needScalar(op, t);
        if (op.operand(0)->type().isPtr()) {  // an address's bits (the verifier allows 64-bit integers only)
          e = "static_cast<" + cScalarType(t.scalar) + ">(reinterpret_cast<unsigned long long>(" + ex(op.operand(0)) + "))";
          break;
        }
        needScalar(op, op.operand(0)->type());
        e = "tawa::bitcast<" + cScalarType(t.scalar) + ">(" + ex(op.operand(0)) + ")";
        break;
      // A scalar's unary functions (`tl.sqrt(8.0 * pid + 1.0)` making a triangular tile index): as a tile
      // element's, through the same primitives.
      case OpKind::Neg: case OpKind::Not: case OpKind::Abs: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
      case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos: case OpKind::Math: {
        needScalar(op, t);
        std::vector<std::string> a;
        for (const Value* v : op.operands) needScalar(op, v->type()), a.push_back(ex(v));
        e = elementwise(op, a);
        break;
      }
      default: unsupported(op, "not emitted yet", "the CUDA backend covers the warp-specialized GEMM so far");
    }
    at(op);
    line("const " + cScalarType(t.scalar) + " " + nameFor(op.result()) + " = " + e + ";");
  }

  void emitOp(const Op& op) {
    ensureReady(op);
    if (profActive_) profScopeOf(op);
    switch (op.kind()) {
      case OpKind::SetMaxNReg: {
        at(op);
        int64_t regs = op.intAttr("regs");
        if (opt_.profile && single_ == false && region_ == 0 && op.strAttr("action") == "dec") regs = profProducerRegs(regs);
        if (integerMma_) {
          // ptxas (CUDA 13) keeps an integer wgmma's s32 accumulators within the smallest setmaxnreg
          // budget of the kernel: at the producer's 40 registers they spill. Without setmaxnreg every
          // warp group keeps the launch's allocation.
          line("// setmaxnreg." + op.strAttr("action") + " " + std::to_string(regs) + " not emitted: integer wgmma accumulators");
          return;
        }
        line("tawa::setmaxnreg_" + op.strAttr("action") + "<" + std::to_string(regs) + ">();");
        return;
      }
      case OpKind::For: return emitFor(op);
      case OpKind::While: return emitWhile(op);
      case OpKind::If: return emitIf(op);
      case OpKind::MakeDesc: return;  // a tensor map of the launch (collect)
      case OpKind::AddPtr:
        if (op.result()->type().isPtr()) {
          if (!scalarPtrs_.count(op.result())) return;  // a moved descriptor base: folded into the TMA coordinates
          at(op);  // a scalar store's pointer
          line(ptrType(op.result()->type().scalar) + "* const " + nameFor(op.result()) + " = " + ex(op.operand(0)) + " + " +
               ex(op.operand(1)) + ";");
          return;
        }
        break;
      case OpKind::Atomic:
        if (op.operand(0)->type().isPtr()) return emitScalarAtomic(op);
        return emitPointerAtomic(op);
      case OpKind::Bitcast:
        if (op.result()->type().isPtr() && op.operand(0)->type().isScalar()) {
          if (!scalarPtrs_.count(op.result())) return;  // an address nothing here reads through
          at(op);
          const std::string pt = ptrType(op.result()->type().scalar);
          line(pt + "* const " + nameFor(op.result()) + " = reinterpret_cast<" + pt + "*>(" + ex(op.operand(0)) + ");");
          return;
        }
        break;
      case OpKind::Store:
        if (op.operand(0)->type().isPtr()) {
          // One thread of the warp group writes it (Triton's every thread writes the same value),
          // after every thread of the group has made its earlier reads: a flag they loaded must not
          // change under them (they would branch apart).
          needScalar(op, op.operand(1)->type());
          at(op);
          if (!soleThread() && region_ >= 1) line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // the group's earlier reads first");
          oneThread("*" + ex(op.operand(0)) + " = " + ex(op.operand(1)) + ";");
          return;
        }
        return emitPointerStore(op);
      case OpKind::MbarWait: {
        at(op);
        const Bars& b = bars_.at(op.operand(0));
        line("tawa::mbarrier_wait_parity(&" + b.name + "[" + ex(op.operand(1)) + "], static_cast<uint32_t>(" + ex(op.operand(2)) +
             "));");
        if (b.kind == "full" && region_ >= 1 && !single_) unsyncedWaits_.insert(b.aref);
        return;
      }
      case OpKind::MbarArrive: {
        at(op);
        const Bars& bars = bars_.at(op.operand(0));
        const std::string& bar = bars.name;
        bool broken = opt_.fault == "release-before-wait";
        if (auto rv = releaseVars_.find(&op); rv != releaseVars_.end() && !pending_.empty() && !broken) {
          // The slot is still read by the MMA just issued: release it once that group has completed.
          line(rv->second + " = " + ex(op.operand(1)) + ";  // released after its wgmma completes");
          pending_.back().then.push_back("if (" + rv->second + " >= 0 && tawa::warpgroup_thread_idx() == 0) tawa::mbarrier_arrive(&" +
                                         bar + "[" + rv->second + "]);");
          return;
        }
        // A slot a staged B is read from where it is written (makesOnlyStagedB): released after that.
        if (bars.kind == "empty" && lazySlotArefs_.count(bars.aref)) {
          releasesAfterStaging_.push_back(&op);
          return;
        }
        // A release hands the slot back to the producer: every MMA still reading one of the aref's
        // slots completes first (wgmma reads shared memory until its wait_group).
        if (bars.kind == "empty" && !broken) waitForReaders(op, bars.aref);
        // One thread releases for its warp group: every thread must be past its wait for the slot's
        // phase first, or the producer refills the slot, the phase comes round to the same parity
        // and a late thread waits for a phase that has gone (a slot a cooperative consumer waits
        // for and releases unread: the other half's A). A wgmma that read the slot, completed, or
        // a barrier of the warp group since the wait says so; else a barrier here.
        if (bars.kind == "empty" && region_ >= 1 && !single_ && unsyncedWaits_.count(bars.aref))
          line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // every thread is past its wait for the slot it releases");
        oneThread("tawa::mbarrier_arrive(&" + bar + "[" + ex(op.operand(1)) + "]);");
        return;
      }
      case OpKind::MbarArriveExpectTx: {
        at(op);
        const Bars& b = bars_.at(op.operand(0));
        auto lb = laneBytes_.find(&op);
        const int64_t bytes = op.intAttr("bytes") - (lb == laneBytes_.end() ? 0 : lb->second);  // the threads' copies arrive instead
        if (bytes == 0) oneThread("tawa::mbarrier_arrive(&" + b.name + "[" + ex(op.operand(1)) + "]);  // the threads' copies arrive too");
        else oneThread("tawa::mbarrier_arrive_expect_tx(&" + b.name + "[" + ex(op.operand(1)) + "], " + std::to_string(bytes) + ");");
        if (tmaOnlyPhases_.count(&op))
          line("tawa::mbarrier_arrive(&" + b.name + "[" + ex(op.operand(1)) + "]);  // no tile map in this phase: every thread arrives now");
        return;
      }
      case OpKind::TmaLoad: return emitTmaLoad(op);
      case OpKind::TmaStore: return emitTmaStore(op);
      case OpKind::Wgmma: return emitWgmma(op);
      case OpKind::WgmmaCommit:
        at(op);
        line("tawa::wgmma_commit_group();");
        return;
      case OpKind::WgmmaWait:
        at(op);
        line("tawa::wgmma_wait_group<" + std::to_string(op.intAttr("pending")) + ">();");
        fenceAccumulators();
        return;
      case OpKind::Barrier: {
        // tl.debug_barrier(): Triton's program is the consumers here (the producer only loads), so
        // their threads meet at a named barrier of their own.
        if (single_ || region_ < 1) unsupported(op, "tl.debug_barrier() in the producer warp group is not emitted");
        const size_t consumers = regions_.size() - 1;
        at(op);
        line("tawa::bar_sync(" + std::to_string(kConsumersBar) + ", " + std::to_string(128 * consumers) +
             ");  // tl.debug_barrier(): every consumer thread");
        return;
      }
      case OpKind::FenceProxyAsync: {
        // Before a TMA store the fence belongs after the staging writes, which the store emits.
        const Op* next = nextOp(op);
        if (next && next->kind() == OpKind::TmaStore) return;
        at(op);
        line("tawa::fence_proxy_async_shared_cta();");
        return;
      }
      default: break;
    }
    if (op.numResults() == 1 && op.result()->type().isTile()) return emitTileOp(op);
    if (op.numResults() == 1 && op.result()->type().isScalar() && op.regions().empty()) return emitScalar(op);
    unsupported(op, "not emitted yet", "the CUDA backend covers the warp-specialized GEMM so far");
  }

  // A scalar atomic whose old value is unused (collectScalarStore checked): one thread of the warp
  // group applies it, between the fences its memory order asks for.
  void emitScalarAtomic(const Op& op) {
    const Value* v = op.operand(1);
    needScalar(op, v->type());
    const int width = byteWidth(v->type().scalar);
    if (width != 4 && width != 8) unsupported(op, "scalar atomics on " + std::to_string(width) + "-byte elements are not emitted here");
    const std::string& kind = op.strAttr("kind");
    const std::string scope = std::to_string(op.strAttr("scope") == "cta" ? 0 : op.strAttr("scope") == "sys" ? 2 : 1);
    static const std::map<std::string, std::string> ops = {{"add", "Add"}, {"max", "Max"}, {"min", "Min"}, {"and", "And"},
                                                           {"or", "Or"},   {"xor", "Xor"}, {"xchg", "Xchg"}};
    std::string call;
    if (kind == "cas") call = "tawa::atomic_cas<" + scope + ">(" + ex(op.operand(0)) + ", " + ex(v) + ", " + ex(op.operand(2)) + ")";
    else call = "tawa::atomic<tawa::AtomicOp::" + ops.at(kind) + ", " + scope + ">(" + ex(op.operand(0)) + ", " + ex(v) + ")";
    const std::string& sem = op.strAttr("sem");
    const std::string fence = "tawa::fence_acq_rel<" + scope + ">();";
    at(op);
    line(std::string(single_ ? "{" : "if (tawa::warpgroup_thread_idx() == 0) {") + "  // one thread applies a scalar atomic");
    if (sem == "release" || sem == "acq_rel") line("  " + fence + "  // sem " + sem);
    auto old = atomicOld_.find(&op);
    if (old == atomicOld_.end()) {
      line("  " + call + ";");
      if (sem == "acquire" || sem == "acq_rel") line("  " + fence);
      line("}");
      return;
    }
    // The old value: one thread writes it to shared memory, the warp group reads it after a named
    // barrier, and a second barrier keeps the next write (in a loop) after every read.
    const std::string ty = cScalarType(v->type().scalar), slot = "reinterpret_cast<" + ty + "*>(smem + " + std::to_string(old->second) + ")";
    line("  const " + ty + " old = " + call + ";");
    if (sem == "acquire" || sem == "acq_rel") line("  " + fence);
    line("  *" + slot + " = old;");
    line("}");
    line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // the old value is in shared memory");
    line("const " + ty + " " + nameFor(op.result()) + " = *" + slot + ";");
    line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // every thread has read it");
  }

  // Whether an integer scalar is positive by construction: a positive constant, a program count, or
  // a sum, product or min of such (a persistent kernel's step, min(N, num_tiles)), or a max with one.
  static bool knownPositive(const Value* v, int depth = 8) {
    const Op* d = v->definingOp();
    if (!d || depth == 0) return false;
    switch (d->kind()) {
      case OpKind::Constant: {
        auto it = d->attrs.find("value");
        return it != d->attrs.end() && std::holds_alternative<int64_t>(it->second) && std::get<int64_t>(it->second) > 0;
      }
      case OpKind::NumPrograms: return true;
      case OpKind::Add: case OpKind::Mul: case OpKind::Min:
        return knownPositive(d->operand(0), depth - 1) && knownPositive(d->operand(1), depth - 1);
      case OpKind::Max: return knownPositive(d->operand(0), depth - 1) || knownPositive(d->operand(1), depth - 1);
      default: return false;
    }
  }

  static const Op* nextOp(const Op& op) {
    const auto& ops = op.parent->ops();
    for (auto it = ops.begin(); it != ops.end(); ++it)
      if (it->get() == &op) return std::next(it) == ops.end() ? nullptr : std::next(it)->get();
    return nullptr;
  }

  void fenceAccumulators() {
    for (const auto& scope : accumulators_)
      for (const Frag& fr : scope)
        for (int64_t mb = 0; mb < fr.mBlocks; ++mb) line("tawa::fence_operands(" + fr.name + "[" + std::to_string(mb) + "]);");
  }

  void emitFor(const Op& op) {
    const Block& body = *op.region(0);
    at(op);
    std::vector<std::string> carried;
    std::vector<bool> isTile;
    const Op* yield = body.terminator();
    for (size_t k = 0; k < op.numResults(); ++k) {
      const Value *init = op.operand(3 + k), *arg = body.arg(1 + k), *res = op.result(k);
      if (res->type().isTile() && yield && viewSource(yield->operand(k))) {
        // A shared-memory slot carried to the next iteration: the loop carries its slot index.
        const Op* src = viewSource(yield->operand(k));
        const Ring& r = rings_.at(src->operand(0));
        std::string n = fresh((arg->nameHint.empty() ? "carried" : arg->nameHint) + "_slot");
        std::string init0 = "0";
        if (auto iv = views_.find(init); iv != views_.end()) {
          if (iv->second.ring != src->operand(0)) unsupported(op, "a loop carries slots of two different rings in one value");
          init0 = iv->second.slot;
        } else if (!lazies_.count(init)) {
          unsupported(op, "a loop-carried shared-memory slot must start from another slot or a placeholder constant");
        }
        line("int " + n + " = " + init0 + ";  // slot of " + r.name + " carried from the previous iteration");
        View v;
        v.layout = r.layout;
        v.tile = r.tile;
        v.ring = src->operand(0);
        v.slot = n;
        v.base = r.name + " + " + n + " * " + std::to_string(r.layout.slotBytes);
        for (const Op* d = yield->operand(k)->definingOp(); d && d->kind() == OpKind::Permute; d = d->operand(0)->definingOp())
          v.transposed = !v.transposed;
        views_[arg] = v;
        views_[res] = v;
        names_[arg] = n;
        carried.push_back(n);
        isTile.push_back(false);
        viewCarried_.insert(arg);
      } else if (res->type().isTile()) {
        // The loop's storage takes the result's name, or the body argument's when the result has none.
        if (res->nameHint.empty() && !arg->nameHint.empty()) names_[res] = fresh(arg->nameHint);
        Frag fr = declareTile(op, res->type(), nameFor(res));
        assignTile(op, fr, init);
        if (deferredCarried_.count({&op, k})) {  // the quad's parts of a row sum: the first thread holds the start
          line("if (tawa::lane_idx() % 4 != 0) {  // " + fr.name + ": a row sum kept as the quad's four parts through the loop");
          line("  TAWA_UNROLL for (int mi = 0; mi < " + std::to_string(fr.mBlocks) + "; ++mi) " + fr.name + "[mi][0] = " + fr.name +
               "[mi][1] = 0.0f;");
          line("}");
        }
        frags_[arg] = fr;
        frags_[res] = fr;
        names_[arg] = fr.name;
        carried.push_back(fr.name);
        isTile.push_back(true);
      } else {
        needScalar(op, res->type());
        std::string n = nameFor(res);
        line(cScalarType(res->type().scalar) + " " + n + " = " + ex(init) + ";");
        names_[arg] = n;
        carried.push_back(n);
        isTile.push_back(false);
      }
    }
    const Value* iv = body.arg(0);
    needScalar(op, iv->type());
    std::string i = nameFor(iv);
    // A step not known to be positive may count down (range(hi, lo, -s)).
    const bool up = knownPositive(op.operand(2));
    const std::string st = ex(op.operand(2)), ub = ex(op.operand(1));
    line("for (" + cScalarType(iv->type().scalar) + " " + i + " = " + ex(op.operand(0)) + "; " +
         (up ? i + " < " + ub : "(" + st + " > 0 ? " + i + " < " + ub + " : " + i + " > " + ub + ")") + "; " + i + " += " + st + ") {");
    ++indent_;
    if (profActive_) {
      profIter_.push_back("static_cast<int32_t>((" + i + " - " + ex(op.operand(0)) + ") / " + ex(op.operand(2)) + ")");
      bool mma = false;
      for (const auto& o : body.ops()) mma = mma || o->kind() == OpKind::Wgmma || o->kind() == OpKind::Dot;
      profLoopMma_.push_back(mma);
    }
    if (pingPong(op)) {
      // Two cooperative consumers take turns issuing their MMAs (FlashAttention-3's inter-warpgroup
      // ping-pong): each waits for its turn before QK^T and hands the turn over after issuing PV, so
      // that one's softmax runs while the other's MMAs use the tensor cores.
      const int own = kPingPongBar + region_ - 1, other = kPingPongBar + 2 - region_;
      bool turn = false;
      emitBlock(body, [&](const Op& o, bool after) {
        if (!after && !turn && o.kind() == OpKind::Dot) {
          line("tawa::bar_sync(" + std::to_string(own) + ", 256);  // ping-pong: this warp group's turn to issue its MMAs");
          turn = true;
        } else if (after && turn && o.kind() == OpKind::If && containsDot(o)) {
          line("tawa::bar_arrive(" + std::to_string(other) + ", 256);  // ping-pong: the other warp group's turn");
          turn = false;
        }
      });
    } else {
      emitBlock(body);
    }
    const Op* y = body.terminator();
    if (y) {
      waitAll(*y);  // the next iteration starts with nothing in flight
      at(*y);
      std::vector<std::string> temps;
      for (size_t k = 0; k < carried.size(); ++k) {
        const Value* v = y->operand(k);
        if (isTile[k]) {
          assignTile(*y, frags_.at(body.arg(1 + k)), v);
          temps.emplace_back();
        } else if (viewCarried_.count(body.arg(1 + k))) {
          const View& now = views_.at(v);
          if (now.ring != views_.at(body.arg(1 + k)).ring) unsupported(*y, "a loop carries slots of two different rings in one value");
          if (now.slot != carried[k]) {
            std::string t = fresh(carried[k] + "_next");
            line("const int " + t + " = " + now.slot + ";");
            temps.push_back(t);
          } else {
            temps.emplace_back();
          }
        } else if (ex(v) != carried[k]) {
          std::string t = fresh(carried[k] + "_next");
          line("const " + cScalarType(v->type().scalar) + " " + t + " = " + ex(v) + ";");
          temps.push_back(t);
        } else {
          temps.emplace_back();
        }
      }
      for (size_t k = 0; k < carried.size(); ++k)
        if (!temps[k].empty()) line(carried[k] + " = " + temps[k] + ";");
    }
    if (profActive_) {
      profClose();
      profIter_.pop_back();
      profLoopMma_.pop_back();
      profAfterLoop_ = true;
    }
    --indent_;
    line("}");
    for (size_t k = 0; k < op.numResults(); ++k)
      if (deferredCarried_.count({&op, k})) {  // the row sums: the quad's parts folded once
        const Frag& fr = frags_.at(op.result(k));
        line("TAWA_UNROLL for (int mi = 0; mi < " + std::to_string(fr.mBlocks) + "; ++mi)");
        line("  TAWA_UNROLL for (int h = 0; h < 2; ++h) {  // " + fr.name + ": the quad's parts of each row sum, added");
        line("    " + fr.name + "[mi][h] += tawa::shfl_xor(" + fr.name + "[mi][h], 1);");
        line("    " + fr.name + "[mi][h] += tawa::shfl_xor(" + fr.name + "[mi][h], 2);");
        line("  }");
      }
  }

  // Row sums carried by a loop as `l = l * a + tl.sum(p, 1)` (attention's softmax denominator), with
  // l read nowhere else in the loop: each thread keeps its own part of every row's sum through the
  // loop (a is the same in the four threads of a quad, so scaling the parts scales the sum) and the
  // quad adds its four parts once after the loop, instead of two shuffles per iteration
  // (FlashAttention-3 does the same). Records the reductions (deferredSums_) and carried values.
  void findDeferredSums() {
    walk(const_cast<Block&>(f_.body), [&](Op* loop) {
      if (loop->kind() != OpKind::For) return;
      const Block& body = *loop->region(0);
      const Op* yield = body.terminator();
      if (!yield) return;
      for (size_t k = 0; k < loop->numResults(); ++k) {
        const Value* arg = body.arg(k + 1);
        const Type& t = arg->type();
        if (!t.isTile() || t.rank() != 1 || t.scalar != Scalar::F32 || uses_[arg] != 1) continue;
        const Op* add = yield->operand(k)->definingOp();
        if (!add || add->kind() != OpKind::Add || add->parent != &body || uses_[add->result()] != 1) continue;
        for (int side = 0; side < 2; ++side) {
          const Op* mul = add->operand(side)->definingOp();
          const Op* red = add->operand(1 - side)->definingOp();
          if (!mul || !red || mul->kind() != OpKind::Mul || red->kind() != OpKind::Reduce || mul->parent != &body ||
              red->parent != &body || uses_[mul->result()] != 1 || uses_[red->result()] != 1 || red->strAttr("kind") != "sum" ||
              red->intAttr("axis") != 1 || (mul->operand(0) != arg && mul->operand(1) != arg) || mul->operand(0) == mul->operand(1))
            continue;
          deferredSums_.insert(red);
          deferredCarried_.insert({loop, k});
          break;
        }
      }
    });
  }

  // A tile.while over scalars (a persistent grouped GEMM's walk over one problem's tiles): the values
  // it carries live in variables declared before it, which its test's and its body's arguments and
  // its results name; the test runs at the top of each iteration and what it passes on is what the
  // body (or, on exit, the code after the loop) reads.
  void emitWhile(const Op& op) {
    const Block &test = *op.region(0), &body = *op.region(1);
    const Op* cond = test.terminator();
    const Op* yield = body.terminator();
    if (!cond || cond->kind() != OpKind::Condition || !yield || op.numResults() != op.numOperands())
      unsupported(op, "a tile.while that passes on other values than it carries is not emitted yet");
    at(op);
    std::vector<std::string> carried;
    for (size_t k = 0; k < op.numResults(); ++k) {
      const Value* res = op.result(k);
      if (res->type().isTile()) unsupported(op, "a tile.while carrying tiles is not emitted yet");
      needScalar(op, res->type());
      std::string n = nameFor(res);
      line(cScalarType(res->type().scalar) + " " + n + " = " + ex(op.operand(k)) + ";");
      names_[test.arg(k)] = n;
      names_[body.arg(k)] = n;
      carried.push_back(n);
    }
    line("while (true) {");
    ++indent_;
    emitBlock(test);
    assignScalars(*cond, 1, carried);
    line("if (!(" + ex(cond->operand(0)) + ")) break;");
    emitBlock(body);
    waitAll(*yield);  // the next iteration starts with nothing in flight
    at(*yield);
    assignScalars(*yield, 0, carried);
    --indent_;
    line("}");
  }
  // vars[k] = t's operand first + k, for every k at once (a value may read another's old value).
  void assignScalars(const Op& t, size_t first, const std::vector<std::string>& vars) {
    std::vector<std::string> temps;
    for (size_t k = 0; k < vars.size(); ++k) {
      const Value* v = t.operand(first + k);
      temps.emplace_back();
      if (ex(v) == vars[k]) continue;
      temps.back() = fresh(vars[k] + "_next");
      line("const " + cScalarType(v->type().scalar) + " " + temps.back() + " = " + ex(v) + ";");
    }
    for (size_t k = 0; k < vars.size(); ++k)
      if (!temps[k].empty()) line(vars[k] + " = " + temps[k] + ";");
  }

  // Named barriers 3 and 4: the turns of two cooperative consumers in attention's loops (1 and 2
  // are the consumers' epilogue barriers).
  static constexpr int kPingPongBar = 3;     // and 4: one per consumer
  static constexpr int kConsumersBar = 5;    // all consumer threads (tl.debug_barrier)
  static constexpr int kSharedOperandBar = 6;  // both consumers, around a B operand they stage together
  // An attention loop (PV overlapped) in one of exactly two consumer warp groups, whose QK^T and
  // PV MMAs are issued at its top level: the consumers take turns (see emitFor).
  bool pingPong(const Op& loop) const {
    if (!opt_.pingPong || single_ || region_ < 1 || regions_.size() != 3 || !loop.hasAttr("pv_overlap")) return false;
    bool dot = false, pv = false;
    for (const auto& o : loop.region(0)->ops()) {
      dot = dot || o->kind() == OpKind::Dot;
      pv = pv || (dot && o->kind() == OpKind::If && containsDot(*o));
    }
    return pv;
  }
  static bool containsDot(const Op& op) {
    bool dot = false;
    walk(op, [&](const Op* o) { dot = dot || o->kind() == OpKind::Dot; });
    return dot;
  }

  void emitIf(const Op& op) {
    std::vector<std::string> results;
    std::vector<bool> isTile;
    for (size_t k = 0; k < op.numResults(); ++k) {
      const Type& t = op.result(k)->type();
      if (t.isTile()) {
        if (single_ || prologueTile_) unsupported(op, "a tile.if yielding tiles is emitted in consumer warp groups only");
        Frag fr = declareTile(op, t, nameFor(op.result(k)));
        frags_[op.result(k)] = fr;
        results.push_back(fr.name);
        isTile.push_back(true);
        continue;
      }
      needScalar(op, t);
      std::string n = nameFor(op.result(k));
      line(cScalarType(t.scalar) + " " + n + ";");
      results.push_back(n);
      isTile.push_back(false);
    }
    at(op);
    // Asynchronous MMAs in a branch: a slot release after one waits for it through a variable set
    // in the branch; the result a branch yields is accumulated in the tile.if's own storage.
    for (size_t r = 0; r < 2; ++r) {
      bool dot = false;
      for (const auto& o : op.region(r)->ops()) {
        if (o->kind() == OpKind::Dot) dot = true;
        if (o->kind() == OpKind::MbarArrive && dot && !single_) {
          std::string v = fresh("release");
          line("int " + v + " = -1;  // a slot the branch's MMA reads, released once it completes");
          releaseVars_[o.get()] = v;
        }
      }
      if (const Op* y = op.region(r)->terminator())
        for (size_t k = 0; k < op.numResults(); ++k)
          if (const Op* d = y->operand(k)->definingOp(); d && d->kind() == OpKind::Dot && d->parent == op.region(r) && isTile[k])
            yieldInto_[y->operand(k)] = frags_.at(op.result(k));
    }
    line("if (" + ex(op.operand(0)) + ") {");
    // Both paths must leave the same number of groups in flight. The then path may complete the
    // oldest `waited` groups of `before` and issue `thenGroups` new ones; the else path completes
    // what it issues and those `waited` groups (running their deferred releases), then commits one
    // empty group for each new group of the then path. After the tile.if the then path's state holds.
    const std::vector<Group> before = pending_;
    size_t thenGroups = 0, waited = 0;
    for (size_t r = 0; r < 2; ++r) {
      const Block& b = *op.region(r);
      bool empty = b.ops().size() == 1 && results.empty();
      if (r == 1) {
        if (empty && thenGroups == 0 && waited == 0) break;
        line("} else {");
      }
      ++indent_;
      std::vector<Group> thenState = pending_;
      if (r == 1) pending_ = before;
      emitBlock(b);
      if (const Op* y = b.terminator())
        for (size_t k = 0; k < results.size(); ++k) {
          if (isTile[k]) assignTile(*y, frags_.at(op.result(k)), y->operand(k));
          else line(results[k] + " = " + ex(y->operand(k)) + ";");
        }
      if (r == 0) {
        // The then path kept a suffix before[waited..] of the old groups (waits complete the oldest).
        waited = before.size();
        for (size_t w = 0; w <= before.size(); ++w) {
          size_t keep = before.size() - w;
          bool match = keep <= pending_.size();
          for (size_t i = 0; match && i < keep; ++i) match = pending_[i].writes[0].name == before[w + i].writes[0].name;
          if (match) {
            waited = w;
            break;
          }
        }
        thenGroups = pending_.size() - (before.size() - waited);
      } else {
        size_t elseNew = pending_.size() - before.size();
        if (elseNew > 0 || waited > 0) {
          line("tawa::wgmma_wait_group<0>();  // this path completes what the other path completed or did not issue");
          for (size_t i = 0; i < pending_.size(); ++i) {
            for (const Frag& f : pending_[i].writes)
              for (int64_t mb = 0; mb < f.mBlocks; ++mb) line("tawa::fence_operands(" + f.name + "[" + std::to_string(mb) + "]);");
            bool keptByThen = i >= waited && i < before.size();  // its releases run when it is waited for after the tile.if
            if (!keptByThen)
              for (const std::string& t : pending_[i].then) line(t);
          }
        }
        // The fence the other branch's MMAs had: where the two paths meet, ptxas finds a warpgroup.arrive
        // on both (without it, it inserts one at the join and says so: its C7519 note).
        if (thenGroups > 0) line("tawa::wgmma_fence();");
        for (size_t g = 0; g < thenGroups; ++g) line("tawa::wgmma_commit_group();  // empty: matches the other branch's MMA group");
        pending_ = thenState;
      }
      if (profActive_) profClose();
      --indent_;
    }
    line("}");
  }

  // ---- tiles in a consumer: register fragments, row vectors, lazy element expressions, smem views

  static Ctx fragCtx() { return Ctx{"row", "col", "[mi][(ri >> 1) & 1]"}; }
  static Ctx rowCtx() { return Ctx{"row", "", "[mi][h]"}; }
  static bool mentions(const std::string& s, const std::string& id) {
    for (size_t p = s.find(id); p != std::string::npos; p = s.find(id, p + 1)) {
      bool l = p == 0 || !(std::isalnum(static_cast<unsigned char>(s[p - 1])) || s[p - 1] == '_');
      size_t e = p + id.size();
      bool r = e >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_');
      if (l && r) return true;
    }
    return false;
  }

  // The element expression of a tile operand (or a scalar) in context c.
  std::string elem(const Op& op, const Value* v, const Ctx& c) {
    if (v->type().isScalar()) return ex(v);
    if (auto it = lazies_.find(v); it != lazies_.end()) return it->second(c);
    if (auto it = frags_.find(v); it != frags_.end()) {
      const Frag& fr = it->second;
      if (fr.row) {
        if (c.slot.empty())
          unsupported(op, "a row vector held in registers (a reduction along axis 1) cannot be laid along the columns of a tile");
        return fr.name + c.slot;
      }
      if (c.col.empty()) unsupported(op, "a 2-D register tile is used where a row vector is expected");
      return fr.name + "[mi][ri]";
    }
    if (views_.count(v))
      unsupported(op, "reading a shared-memory tile into registers is not emitted yet",
                  "shared-memory tiles are read by tile.dot (wgmma) in place");
    unsupported(op, "operand of type " + v->type().str() + " has no register form in the CUDA backend");
  }

  // Writes fr (a 2-D fragment or a row vector) element by element from e.
  void writeFrag(const Frag& fr, const std::function<std::string(const Ctx&)>& e) {
    if (fr.row && fr.elem == Scalar::F32) lastRow_ = fr, lastRowSeq_ = ++seq_;
    Ctx c = fr.row ? rowCtx() : fragCtx();
    std::string body = e(c);
    bool r = mentions(body, "row"), col = mentions(body, "col");
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(fr.mBlocks) + "; ++mi) {");
    line("TAWA_UNROLL");
    if (fr.row) {
      line("  for (int h = 0; h < 2; ++h) {");
      if (r) line("    const int row = 64 * mi + tawa::wgmma_acc_row(2 * h);");
      line("    " + fr.name + "[mi][h] = " + body + ";");
    } else {
      line("  for (int ri = 0; ri < " + std::to_string(fr.perThread) + "; ++ri) {");
      if (r) line("    const int row = 64 * mi + tawa::wgmma_acc_row(ri);");
      if (col) line("    const int col = tawa::wgmma_acc_col(ri);");
      line("    " + fr.name + "[mi][ri] = " + body + ";");
    }
    line("  }");
    line("}");
  }

  // Declares register storage for a tile value: a 2-D fragment or (rank 1) a row vector.
  Frag declareTile(const Op& op, const Type& t, const std::string& name) {
    // A 1-D tile, or an Mx1 one (`scale[:, None]` loaded as such: one value per row), is a row vector.
    if (t.isTile() && (t.rank() == 1 || (t.rank() == 2 && t.shape[1] == 1 && t.shape[0] > 1))) {
      if (t.shape[0] % 64 != 0 && !paddedRows(t.shape[0]))
        unsupported(op, "a row vector in registers must have 16, 32 or a multiple of 64 rows (the wgmma accumulator layout), got " +
                            t.str());
      Frag fr;
      fr.name = name;
      fr.elem = t.scalar;
      fr.mBlocks = std::max<int64_t>(1, t.shape[0] / 64);
      if (paddedRows(t.shape[0])) fr.rows = t.shape[0];
      fr.perThread = 2;
      fr.row = true;
      std::string ty = regType(fr.elem);
      if (ty.empty()) unsupported(op, "element type " + std::string(scalarName(fr.elem)) + " has no register form yet");
      line(ty + " " + fr.name + "[" + std::to_string(fr.mBlocks) + "][2];");
      return fr;
    }
    return declareFrag(op, t, name);
  }
  // Initializes storage `to` from a tile value: a lazy expression or another fragment.
  void assignTile(const Op& op, const Frag& to, const Value* from) {
    if (auto it = lazies_.find(from); it != lazies_.end()) return writeFrag(to, it->second);
    const Frag& fr = frag(op, from);
    if (fr.name == to.name) return;
    if (fr.row != to.row || fr.mBlocks != to.mBlocks || fr.perThread != to.perThread) unsupported(op, "register tiles of different shapes");
    forEachReg(to, to.name + "[mi][ri] = " + fr.name + "[mi][ri];");
  }

  static bool floatElem(Scalar s) { return s == Scalar::F32; }

  // f16/bf16 arithmetic (Triton computes `0.5 * r` on an f16 tile in f16): each operation in f32 on
  // the widened operands, rounded back. That is IEEE's correctly rounded f16/bf16 result for + - *
  // (f32's 24 bits are at least 2p + 2 for p = 11 and 8, so rounding twice changes nothing), and
  // exact for max, min, negation, absolute value and comparisons: what the executor computes (in
  // double, rounded per operation). Division (f32's div.full is not correctly rounded) is not here.
  static bool halfArith(OpKind k) {
    return k == OpKind::Add || k == OpKind::Sub || k == OpKind::Mul || k == OpKind::Max || k == OpKind::Min || k == OpKind::Neg ||
           k == OpKind::Abs || k == OpKind::Cmp;
  }
  // The C++ operator of a tile.cmp predicate.
  static const char* cmpOperator(const std::string& pred) {
    static const std::map<std::string, const char*> cmp = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                           {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
    return cmp.at(pred);
  }
  std::string halfElementwise(const Op& op, const std::vector<std::string>& a, Scalar in) {
    std::vector<std::string> w;
    for (const std::string& x : a) w.push_back("tawa::to_f32(" + x + ")");
    const std::string round = in == Scalar::F16 ? "tawa::to_f16(" : "tawa::to_bf16(";
    auto bin = [&](const char* o) { return "(" + w[0] + " " + o + " " + w[1] + ")"; };
    switch (op.kind()) {
      case OpKind::Add: return round + bin("+") + ")";
      case OpKind::Sub: return round + bin("-") + ")";
      case OpKind::Mul: return round + bin("*") + ")";
      case OpKind::Max:
        return round + std::string(propagatesNan(op) ? "tawa::max_nan(" : "tawa::max_num(") + w[0] + ", " + w[1] + "))";
      case OpKind::Min:
        return round + std::string(propagatesNan(op) ? "tawa::min_nan(" : "tawa::min_num(") + w[0] + ", " + w[1] + "))";
      case OpKind::Neg: return round + "(-" + w[0] + "))";
      case OpKind::Abs: return round + "tawa::abs_f32(" + w[0] + "))";
      case OpKind::Cmp: return bin(cmpOperator(op.strAttr("pred")));
      default: break;
    }
    unsupported(op, "not emitted for " + std::string(scalarName(in)) + " tiles yet");
  }

  // The C++ expression of one element of an elementwise op, given its operands' element expressions.
  std::string elementwise(const Op& op, const std::vector<std::string>& a) {
    Scalar in = op.operand(op.kind() == OpKind::Select ? 1 : 0)->type().scalar;
    Scalar out = op.result()->type().scalar;
    bool fl = isFloat(in), i1 = in == Scalar::I1;
    if ((in == Scalar::F16 || in == Scalar::BF16) && halfArith(op.kind())) return halfElementwise(op, a, in);
    if (fl && !floatElem(in) && op.kind() != OpKind::Cast && op.kind() != OpKind::Bitcast && op.kind() != OpKind::Select)
      unsupported(op, "arithmetic on " + std::string(scalarName(in)) + " tiles is not emitted; compute in f32 and cast");
    auto bin = [&](const char* o) { return "(" + a[0] + " " + o + " " + a[1] + ")"; };
    switch (op.kind()) {
      case OpKind::Add: return bin("+");
      case OpKind::Sub: return bin("-");
      case OpKind::Mul: return bin("*");
      case OpKind::Div:  // f32: div.full.f32, as Triton's `/`
        return in == Scalar::F32 ? "tawa::div_full(" + a[0] + ", " + a[1] + ")" : bin("/");
      case OpKind::Rem:
        if (fl) break;
        return bin("%");
      case OpKind::Max:  // floats: maxNum (tl.maximum's default) or NaN-propagating ({propagate_nan = 1})
        return fl ? std::string(propagatesNan(op) ? "tawa::max_nan(" : "tawa::max_num(") + a[0] + ", " + a[1] + ")"
                  : "(" + a[0] + " > " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
      case OpKind::Min:
        return fl ? std::string(propagatesNan(op) ? "tawa::min_nan(" : "tawa::min_num(") + a[0] + ", " + a[1] + ")"
                  : "(" + a[0] + " < " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
      case OpKind::And: return bin(i1 ? "&&" : "&");
      case OpKind::Or: return bin(i1 ? "||" : "|");
      case OpKind::Xor: return bin(i1 ? "!=" : "^");
      case OpKind::Shl:
        if (fl) break;
        return bin("<<");
      case OpKind::Shr:
        if (fl) break;
        return bin(">>");
      case OpKind::Cmp: return bin(cmpOperator(op.strAttr("pred")));
      case OpKind::Select: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      case OpKind::Neg: return "(-" + a[0] + ")";
      case OpKind::Not: return i1 ? "(!" + a[0] + ")" : "(~" + a[0] + ")";
      // f32 functions, each through its primitive: e^x as 2^(x log2 e), ln x as log2(x) ln 2; sin and cos
      // with range reduction (sin.approx is accurate only near zero).
      case OpKind::Exp2: case OpKind::Exp: case OpKind::Log2: case OpKind::Log: case OpKind::Sqrt: case OpKind::Rsqrt:
      case OpKind::Sin: case OpKind::Cos: {
        if (!fl) break;
        static const std::map<OpKind, std::pair<const char*, const char*>> fn = {
            {OpKind::Exp2, {"tawa::exp2_approx(", ")"}},       {OpKind::Exp, {"tawa::exp2_approx(", " * 1.44269504f)"}},
            {OpKind::Log2, {"tawa::lg2_approx(", ")"}},        {OpKind::Log, {"(tawa::lg2_approx(", ") * 0.693147181f)"}},
            {OpKind::Sqrt, {"tawa::sqrt_rn(", ")"}},           {OpKind::Rsqrt, {"tawa::rsqrt_approx(", ")"}},
            {OpKind::Sin, {"tawa::sin_f32(", ")"}},            {OpKind::Cos, {"tawa::cos_f32(", ")"}}};
        const auto& [open, close] = fn.at(op.kind());
        return open + a[0] + close;
      }
      case OpKind::Abs:
        return fl ? "tawa::abs_f32(" + a[0] + ")" : "(" + a[0] + " < 0 ? -" + a[0] + " : " + a[0] + ")";
      case OpKind::Math:  // a libdevice function: CUDA's math library through its primitive
      {
        std::string e = "tawa::math_" + op.strAttr("fn") + "(" + a[0];
        for (size_t k = 1; k < a.size(); ++k) e += ", " + a[k];
        return e + ")";
      }
      case OpKind::Cast: {
        if (in == Scalar::F32 && out == Scalar::F16) return "tawa::to_f16(" + a[0] + ")";
        if (in == Scalar::F32 && out == Scalar::BF16) return "tawa::to_bf16(" + a[0] + ")";
        if ((in == Scalar::F16 || in == Scalar::BF16) && out == Scalar::F32) return "tawa::to_f32(" + a[0] + ")";
        // f16 <-> bf16 through f32 (exact): one rounding, to the result type.
        if (in == Scalar::F16 && out == Scalar::BF16) return "tawa::to_bf16(tawa::to_f32(" + a[0] + "))";
        if (in == Scalar::BF16 && out == Scalar::F16) return "tawa::to_f16(tawa::to_f32(" + a[0] + "))";
        if (in == out) return a[0];
        if (!isFloat(out) && !isFloat(in)) return "static_cast<" + cScalarType(out) + ">(" + a[0] + ")";
        if (out == Scalar::F32 && !isFloat(in)) return "static_cast<float>(" + a[0] + ")";
        // An integer to f16 through f32: exact up to 2^24, past f16's largest finite value (65504). To
        // bf16 only from integers of 16 bits or fewer (exact in f32: one rounding, as cvt.rn.bf16 does).
        if ((out == Scalar::F16 || (out == Scalar::BF16 && bitWidth(in) <= 16)) && !isFloat(in) && in != Scalar::I1)
          return std::string(out == Scalar::F16 ? "tawa::to_f16(" : "tawa::to_bf16(") + "static_cast<float>(" + a[0] + "))";
        // Wider integers to bf16 with one rounding (through f32 it would round twice past 2^24).
        if (out == Scalar::BF16 && !isFloat(in) && in != Scalar::I1) return "tawa::int_to_bf16(" + a[0] + ")";
        // A float to an integer: toward zero, saturated, NaN to 0 (cvt.rzi, as the executor); to i1, x != 0.
        if ((in == Scalar::F32 || in == Scalar::F16 || in == Scalar::BF16) && !isFloat(out)) {
          const std::string x = in == Scalar::F32 ? a[0] : "tawa::to_f32(" + a[0] + ")";
          if (out == Scalar::I1) return "(" + x + " != 0.0f)";
          return "tawa::float_to_int<" + cScalarType(out) + ">(" + x + ")";
        }
        unsupported(op, "casts from " + std::string(scalarName(in)) + " to " + std::string(scalarName(out)) + " are not emitted yet");
      }
      case OpKind::Bitcast: return "tawa::bitcast<" + cScalarType(out) + ">(" + a[0] + ")";
      default: break;
    }
    unsupported(op, "not emitted for " + std::string(scalarName(in)) + " tiles yet");
  }

  void emitTileOp(const Op& op) {
    const Value* res = op.result();
    const Type& t = res->type();
    if (!t.isData()) {
      // Tiles of pointers: lazy addresses, in consumers (collect passed their base); loads and stores
      // through them read and write each register's element.
      const bool ptrs = t.isTile() && t.elemIsPtr && !single_;  // the prologue's too: lazy, consumers evaluate them
      if (ptrs && op.kind() == OpKind::Splat) {
        lazies_[res] = [e = ex(op.operand(0))](const Ctx&) { return e; };
        return;
      }
      if (ptrs && op.kind() == OpKind::AddPtr && lazyOrScalar(op.operand(0)) && lazyOrScalar(op.operand(1))) {
        lazies_[res] = [this, &op](const Ctx& c) { return "(" + elem(op, op.operand(0), c) + " + " + elem(op, op.operand(1), c) + ")"; };
        return;
      }
      if (!ptrs || (op.kind() != OpKind::ExpandDims && op.kind() != OpKind::Broadcast) || !lazies_.count(op.operand(0)))
        unsupported(op, "tiles of pointers are emitted in consumer warp groups only, as addresses computed from a pointer and index "
                        "tiles (splat, addptr, expand_dims, broadcast): the CUDA backend moves blocks with tensor descriptors (TMA)",
                    "load through tl.make_tensor_descriptor, or let block-access turn the pointer arithmetic into descriptors");
    }
    switch (op.kind()) {
      case OpKind::Constant: {
        std::string lit = literal(op);
        lazies_[res] = [lit](const Ctx&) { return lit; };
        return;
      }
      case OpKind::Splat: {
        std::string e = ex(op.operand(0));
        lazies_[res] = [e](const Ctx&) { return e; };
        return;
      }
      case OpKind::Arange: {
        int64_t start = op.intAttr("start");
        lazies_[res] = [start](const Ctx& c) { return start ? "(" + c.row + " + " + std::to_string(start) + ")" : c.row; };
        return;
      }
      case OpKind::ExpandDims: {
        const Value* src = op.operand(0);
        if (src->type().rank() == 2 && lazies_.count(src)) {
          // A 2-D index expression made 3-D (tl.interleave joins two tiles along a new last axis):
          // the element at the result's coordinates less the new one.
          Lazy f = lazies_.at(src);
          const size_t axis = static_cast<size_t>(op.intAttr("axis"));
          lazies_[res] = [f, axis](const Ctx& c) {
            std::vector<std::string> v = coordsOf(c, 3);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(axis));
            return f(ctxOf(v));
          };
          return;
        }
        if (src->type().rank() != 1) unsupported(op, "only tile<N> -> tile<Nx1> or tile<1xN> is emitted, and 2-D index expressions made 3-D");
        if (op.intAttr("axis") == 1) {  // indexed by the row
          if (auto it = lazies_.find(src); it != lazies_.end()) {
            lazies_[res] = it->second;
          } else {
            const Frag& fr = frag(op, src);
            if (!fr.row) unsupported(op, "expected a row vector");
            lazies_[res] = rowRegister(op, fr.name);
          }
        } else {  // indexed by the column
          auto it = lazies_.find(src);
          if (it == lazies_.end())
            unsupported(op, "a row vector held in registers (a reduction along axis 1) cannot be laid along the columns of a tile");
          Lazy f = it->second;
          lazies_[res] = [f](const Ctx& c) { return f(Ctx{c.col, "", ""}); };
        }
        return;
      }
      case OpKind::Reshape: {
        // An index expression (aranges, constants, splats and their arithmetic) made in another shape:
        // element (row, col) is the source's at the same row-major position (AWQ's unpacking order,
        // a 4x2 index tile reshaped to 8). tile<N> <-> tile<Nx1> is the same element at each row.
        const Value* src = op.operand(0);
        const Type& st = src->type();
        auto it = lazies_.find(src);
        if (it == lazies_.end() || !st.isTile() || st.rank() > 3 || t.rank() > 3)
          unsupported(op, "only a reshape of an index expression of at most 3 dimensions (aranges, constants, splats, a slot's tile "
                          "and their arithmetic) is emitted");
        if (st.shape[0] == t.shape[0] && st.numel() == t.numel() && st.rank() + t.rank() == 3) {
          lazies_[res] = it->second;
          return;
        }
        Lazy f = it->second;
        const std::vector<int64_t> from = st.shape, to = t.shape;
        lazies_[res] = [f, from, to](const Ctx& c) {
          // The row-major position; a dimension of extent 1 contributes 0 (its coordinate is any).
          const std::vector<std::string> at = coordsOf(c, to.size());
          std::string pos;
          int64_t stride = 1;
          for (size_t d = to.size(); d-- > 0; stride *= to[d]) {
            if (to[d] == 1) continue;
            const std::string term = stride == 1 ? "(" + at[d] + ")" : "(" + at[d] + ") * " + std::to_string(stride);
            pos = pos.empty() ? term : term + " + " + pos;
          }
          if (pos.empty()) pos = "0";
          pos = "(" + pos + ")";
          std::vector<std::string> source(from.size());
          stride = 1;
          for (size_t d = from.size(); d-- > 0; stride *= from[d]) {
            std::string x = stride == 1 ? pos : "(" + pos + " / " + std::to_string(stride) + ")";
            source[d] = d == 0 ? x : "(" + x + " % " + std::to_string(from[d]) + ")";
          }
          return f(ctxOf(source));
        };
        return;
      }
      case OpKind::Broadcast: {
        const Value* src = op.operand(0);
        if (auto it = lazies_.find(src); it != lazies_.end()) {
          lazies_[res] = it->second;  // the expression already depends on the coordinate it varies along
          return;
        }
        if (src->type().shape == t.shape && frags_.count(src)) {
          frags_[res] = frags_.at(src);
          return;
        }
        // An Mx1 row vector in registers (one value per row) over the columns: each element reads its
        // row's register, as expand_dims of a 1-D row vector does.
        if (auto f = frags_.find(src); f != frags_.end() && f->second.row && src->type().rank() == 2 && src->type().shape[1] == 1) {
          lazies_[res] = rowRegister(op, f->second.name);
          return;
        }
        unsupported(op, "only broadcasts of row vectors, constants and index expressions are emitted");
      }
      case OpKind::Slice: {  // columns of a register tile (an epilogue subtile): a range of each thread's registers
        const Value* src = op.operand(0);
        const int64_t start = op.intAttr("start");
        if (t.rank() != 2 || op.intAttr("axis") != 1) unsupported(op, "only a slice of a 2-D tile's columns is emitted");
        if (auto it = lazies_.find(src); it != lazies_.end()) {
          Lazy f = it->second;
          lazies_[res] = [f, start](const Ctx& c) { return f(Ctx{c.row, c.col.empty() ? c.col : "(" + c.col + " + " + std::to_string(start) + ")", c.slot}); };
          return;
        }
        if (start % 8 != 0)
          unsupported(op, "a column slice of a register tile starts at a multiple of 8 columns (the wgmma accumulator layout), not " +
                              std::to_string(start));
        const Frag& fr = frag(op, src);
        if (fr.row) unsupported(op, "expected a 2-D register tile");
        at(op);
        // Columns c of the slice are columns start + c of the source: 8 columns are 4 registers of a thread.
        Frag out = declareFrag(op, t, nameFor(res));
        out.rows = fr.rows;
        forEachReg(out, out.name + "[mi][ri] = " + fr.name + "[mi][ri + " + std::to_string(start / 2) + "];");
        frags_[res] = out;
        return;
      }
      case OpKind::Permute: {
        // The transpose of a tile computed lazily (a dequantized NxK weight tile transposed as B):
        // its element (r, c) is the source's (c, r). Not of one that reads registers by their place in
        // a thread's fragment (a row vector computed in registers): another thread holds the transposed one.
        if (auto lz = lazies_.find(op.operand(0)); lz != lazies_.end() && t.rank() == 2) {
          if (lz->second(Ctx{"r", "c", "@fragment@"}).find("@fragment@") != std::string::npos)
            unsupported(op, "the transpose of a tile computed from register fragments is not emitted (another thread holds each "
                            "transposed element)",
                        "transpose the loaded tile instead (tl.trans(x).to(...)), which reads shared memory");
          lazies_[res] = [src = lz->second](const Ctx& c) { return src(Ctx{c.col, c.row, c.slot}); };
          return;
        }
        auto it = views_.find(op.operand(0));
        if (it == views_.end() || t.rank() != 2)
          unsupported(op, "only the transpose of a shared-memory tile (a wgmma operand) or of a tile computed element by element from "
                          "one is emitted");
        View v = it->second;
        v.transposed = !v.transposed;
        views_[res] = v;
        // The transpose of a slot's tile computed with (weights stored N x K, dequantized as B): read
        // into registers at once, as the slot itself would be.
        if (computedFrom(res) && v.ring)
          readIntoRegisters(op, v, "every thread has read its part of " + rings_.at(v.ring).name + " (the slot may be released)");
        return;
      }
      case OpKind::SmemLoad: {
        const Ring& r = rings_.at(op.operand(0));
        View v;
        v.layout = r.layout;
        v.tile = r.tile;
        v.ring = op.operand(0);
        v.slot = ex(op.operand(1));
        v.base = r.name + " + " + v.slot + " * " + std::to_string(r.layout.slotBytes);
        if (r.kMajor) unsupported(op, "an fp8 slot read by tile.dot is not emitted yet");
        views_[res] = v;
        // Read other than by tile.dot (a quantized weight tile dequantized in registers): where it
        // only makes a staged B, read where the staging writes B (its release deferred until then);
        // else into registers at once, before the slot's release.
        if (makesOnlyStagedB(res)) {
          const Type tile = res->type();
          lazies_[res] = [v, tile](const Ctx& c) { return slotElement(v, tile, c); };
          lazySlotArefs_.insert(r.aref);
        } else if (computedFrom(res)) {
          readIntoRegisters(op, v, "every thread has read its part of " + r.name + " (the slot may be released)");
        }
        return;
      }
      case OpKind::DescLoad: return vecDescs_.count(op.operand(0)) ? emitVecLoad(op) : emitDescLoad(op);
      case OpKind::Load: return emitPointerLoad(op);
      case OpKind::Dot: return emitDot(op);
      case OpKind::Reduce: return emitReduce(op);
      default: break;
    }
    if (!isElementwise(op.kind())) unsupported(op, "not emitted yet");
    bool allLazy = true;
    for (const Value* v : op.operands) allLazy = allLazy && (v->type().isScalar() || lazies_.count(v));
    if (allLazy) {
      std::vector<Lazy> fs;
      for (const Value* v : op.operands) fs.push_back(lazies_.count(v) ? lazies_.at(v) : Lazy([e = ex(v)](const Ctx&) { return e; }));
      // An integer narrower than 32 bits is cut back to its type after each op, as a register of that
      // type holds it (C++ computes `(q << 4) >> 4` on an int8_t in int: without the cut, no wrap).
      const Scalar rs = t.scalar;
      const bool narrow = isInt(rs) && rs != Scalar::I1 && bitWidth(rs) < 32;
      const std::string ct = narrow ? cScalarType(rs) : "";
      lazies_[res] = [fs, &op, this, ct](const Ctx& c) {
        std::vector<std::string> a;
        for (const Lazy& f : fs) a.push_back(f(c));
        const std::string e = elementwise(op, a);
        return ct.empty() ? e : "static_cast<" + ct + ">(" + e + ")";
      };
      return;
    }
    if (prologueTile_ || single_) unsupported(op, "tile arithmetic on registers is emitted in consumer warp groups only");
    profTile(op);
    at(op);
    Frag fr = declareTile(op, t, nameFor(res));
    writeFrag(fr, [&](const Ctx& c) {
      std::vector<std::string> a;
      for (const Value* v : op.operands) a.push_back(elem(op, v, c));
      return elementwise(op, a);
    });
    frags_[res] = fr;
  }

  bool lazyOrScalar(const Value* v) const { return v->type().isScalar() || lazies_.count(v); }
  // A zero of an element type, as C++ (what a masked-off load reads without an `other`).
  static std::string zeroOf(Scalar s) {
    return s == Scalar::F16 ? "tawa::to_f16(0.0f)" : s == Scalar::BF16 ? "tawa::to_bf16(0.0f)" : regType(s) + "(0)";
  }
  // A stored tile that is a constant or an index expression (a MoE kernel's zeros for an empty
  // expert, a guard's else branch storing zeros): written into registers first, where it is stored.
  void holdInRegisters(const Op& op, const Value* v) {
    if (frags_.count(v) || !lazies_.count(v) || single_ || prologueTile_) return;
    Frag held = declareTile(op, v->type(), fresh(nameFor(v) + "_regs"));
    writeFrag(held, lazies_.at(v));
    frags_[v] = held;
  }

  // tile.load through a tile of pointers (lazy addresses) in a consumer: each thread reads its
  // registers' elements into a fragment (a row vector for a 1-D tile), where the load is: a gathered
  // bias, a MoE kernel's routing weights.
  void emitPointerLoad(const Op& op) {
    if (single_ || prologueTile_ || !lazies_.count(op.operand(0)))
      unsupported(op, "a load through a tile of pointers is emitted in consumer warp groups only, its addresses computed from a "
                      "pointer and index tiles");
    const Type& t = op.result()->type();
    if (t.rank() > 2 || regType(t.scalar).empty()) unsupported(op, "a load through pointers of " + t.str() + " is not emitted");
    // One row (a quantized GEMM's scales or zeros for the block's columns, broadcast over K), or a
    // 1-D tile laid only along the columns of tiles (`scale[None, :]`: a block-quantized GEMM's column
    // scales, loaded in the K loop at `rn // G`): no register form in the accumulator layout (its row
    // vectors run along the rows), so a lazy tile, each element read where it is used, from buffers
    // the kernel never writes (so that reading later than the load reads the same).
    const bool oneRow = t.rank() == 2 && t.shape[0] == 1 && t.shape[1] > 1;
    if (oneRow || (t.rank() == 1 && alongColumns(op.result()) && readsOnlyUnwritten(op))) {
      if (!readsOnlyUnwritten(op))
        unsupported(op, "a 1xN load through pointers is read where its elements are used, which needs a buffer the kernel never writes");
      const Op* load = &op;
      lazies_[op.result()] = [this, load](const Ctx& c) { return pointerRead(*load, c); };
      return;
    }
    // A tile that only makes a staged B (weights a mask keeps off TMA, transposed or converted on
    // the way), from a buffer the kernel never writes: read element by element where the staging
    // writes B, as a slot is (makesOnlyStagedB), never held in registers.
    if (t.rank() == 2 && makesOnlyStagedB(op.result()) && readsOnlyUnwritten(op)) {
      const Op* load = &op;
      lazies_[op.result()] = [this, load, t](const Ctx& c) { return withinRows(t, c, pointerRead(*load, c)); };
      return;
    }
    profTile(op);
    at(op);
    Frag fr = declareTile(op, t, nameFor(op.result()));
    writeFrag(fr, [&](const Ctx& c) { return withinRows(t, c, pointerRead(op, c)); });
    frags_[op.result()] = fr;
  }
  // Each element of a 2-D tile laid out from row vector `name` in registers: its row's register (in a
  // fragment's context; a tile's columns have none).
  Lazy rowRegister(const Op& op, const std::string& name) {
    return [name, &op, this](const Ctx& c) {
      if (c.slot.empty()) unsupported(op, "a row vector held in registers cannot be laid along the columns of a tile");
      return name + c.slot;
    };
  }
  // Whether a use of the 1-D tile `v` lays it along the columns of a 2-D tile (expand_dims on axis
  // 0). (Its uses along the rows then read it lazily too: vLLM's paged prefix-prefill reads a block
  // table entry along the columns of K^T and along the rows of V.)
  // Through 1-D elementwise ops (`.to(tl.int64)` of the entry).
  bool alongColumns(const Value* v) const {
    std::set<const Value*> reach{v};
    bool any = false, grew = true;
    while (grew && !any) {
      grew = false;
      walk(const_cast<Block&>(f_.body), [&](Op* o) {
        for (const Value* x : o->operands) {
          if (!reach.count(x)) continue;
          any = any || (o->kind() == OpKind::ExpandDims && o->intAttr("axis") == 0);
          if (isElementwise(o->kind()) && o->numResults() == 1 && o->result()->type().rank() == 1)
            grew = reach.insert(o->result()).second || grew;
        }
      });
    }
    return any;
  }
  // The element a tile.load through pointers reads in context c: the address's element where the
  // mask holds, else `other` (zero without one).
  std::string pointerRead(const Op& load, const Ctx& c) {
    const std::string at = "*" + elem(load, load.operand(0), c);
    if (load.numOperands() < 2) return at;
    return "((" + elem(load, load.operand(1), c) + ") ? " + at + " : " +
           (load.numOperands() > 2 ? elem(load, load.operand(2), c) : zeroOf(load.result()->type().scalar)) + ")";
  }
  // tile.atomic through a tile of pointers in a consumer (a split-K GEMM adding its partial C): each
  // thread applies the read-modify-write to its registers' elements, under the mask, with the
  // fences its `sem` asks for around them, as the SIMT path does. Its old values are not emitted.
  void emitPointerAtomic(const Op& op) {
    const std::string& kind = op.strAttr("kind");
    if (kind == "cas") unsupported(op, "a tile atomic_cas in a warp-specialized kernel is not emitted");
    if (uses_[op.result()] > 0) unsupported(op, "the old values a tile atomic returns are not emitted in a warp-specialized kernel");
    if (single_ || !lazies_.count(op.operand(0)))
      unsupported(op, "an atomic through a tile of pointers is emitted in consumer warp groups only, its addresses computed from a "
                      "pointer and index tiles");
    const int width = byteWidth(op.result()->type().scalar);
    if (width != 2 && width != 4 && width != 8) unsupported(op, "atomics take 2-, 4- and 8-byte elements");
    const Value* v = op.operand(1);
    profTile(op);
    at(op);
    holdInRegisters(op, v);
    auto f = frags_.find(v);
    if (f == frags_.end() || f->second.row) unsupported(op, "an atomic through a tile of pointers applies a 2-D tile held in registers");
    const Frag& fr = f->second;
    static const std::map<std::string, std::string> ops = {{"add", "Add"}, {"max", "Max"}, {"min", "Min"}, {"and", "And"},
                                                           {"or", "Or"},   {"xor", "Xor"}, {"xchg", "Xchg"}};
    const std::string& sem = op.strAttr("sem");
    const std::string scope = std::to_string(op.strAttr("scope") == "cta" ? 0 : op.strAttr("scope") == "sys" ? 2 : 1);
    const std::string fence = "tawa::fence_acq_rel<" + scope + ">();";
    const Ctx c = fragCtx();
    const std::string mask = op.numOperands() > 2 ? elem(op, op.operand(2), c) : "", addr = elem(op, op.operand(0), c),
                      value = elem(op, v, c);
    const std::string body = (mask.empty() ? "" : "if (" + mask + ") ") + "tawa::atomic<tawa::AtomicOp::" + ops.at(kind) + ", " + scope +
                             ">(" + addr + ", " + value + ");";
    if (sem == "release" || sem == "acq_rel") line(fence + "  // sem " + sem);
    eachElement(fr, body);
    if (sem == "acquire" || sem == "acq_rel") line(fence);
  }
  // Whether `load` reads only buffers the kernel never writes: its address comes from pointer
  // arguments that no store, atomic or block store addresses (ir::writtenArgs), and the kernel makes no
  // call.
  bool readsOnlyUnwritten(const Op& load) {
    if (!writtenArgsFound_) {
      writtenArgsFound_ = true;
      writesAnywhere_ = ir::writtenArgs(f_.body, writtenArgs_);
    }
    return !writesAnywhere_ && ir::readsOnlyUnwritten(load.operand(0), f_.body, writtenArgs_);
  }
  // tile.store through a tile of pointers in a consumer: each thread stores its registers' elements
  // (rows scattered through an index tile, as a MoE kernel's C), under the mask.
  void emitPointerStore(const Op& op) {
    const Value* v = op.operand(1);
    if (single_ || !lazies_.count(op.operand(0)))
      unsupported(op, "a store through a tile of pointers is emitted in consumer warp groups only, its addresses computed from a "
                      "pointer and index tiles");
    profTile(op);
    at(op);
    holdInRegisters(op, v);
    auto f = frags_.find(v);
    if (f == frags_.end()) unsupported(op, "a store through a tile of pointers stores a tile held in registers");
    const Frag& fr = f->second;
    Ctx c = fr.row ? rowCtx() : fragCtx();
    const std::string mask = op.numOperands() > 2 ? elem(op, op.operand(2), c) : "", addr = elem(op, op.operand(0), c),
                      value = elem(op, v, c);
    eachElement(fr, (mask.empty() ? "" : "if (" + mask + ") ") + "*" + addr + " = " + value + ";");
  }
  // Runs `body` for each of this thread's elements of register tile `fr` (a 2-D fragment or a row
  // vector), with `row` and `col` declared where it uses them; the padded rows of a 16- or 32-row tile
  // are skipped.
  void eachElement(const Frag& fr, const std::string& body) {
    const bool r = mentions(body, "row") || fr.rows, col = mentions(body, "col");
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(fr.mBlocks) + "; ++mi) {");
    line("TAWA_UNROLL");
    line(fr.row ? "  for (int h = 0; h < 2; ++h) {" : "  for (int ri = 0; ri < " + std::to_string(fr.perThread) + "; ++ri) {");
    if (r) line(std::string("    const int row = 64 * mi + tawa::wgmma_acc_row(") + (fr.row ? "2 * h" : "ri") + ");");
    if (col && !fr.row) line("    const int col = tawa::wgmma_acc_col(ri);");
    if (fr.rows) line("    if (row >= " + std::to_string(fr.rows) + ") continue;  // the padded rows of a " + std::to_string(fr.rows) + "-row tile");
    line("    " + body);
    line("  }");
    line("}");
  }

  // tile.reduce along axis 1 of a fragment: each thread folds its registers of each of its two rows,
  // then the quad (lanes 4q..4q+3, which share those rows) folds with two butterfly shuffles.
  void emitReduce(const Op& op) {
    const Value* src = op.operand(0);
    auto it = frags_.find(src);
    if (op.intAttr("axis") == 0 && src->type().rank() == 2 && it != frags_.end() && !it->second.row) return emitColumnSums(op, it->second);
    if (op.intAttr("axis") != 1 || src->type().rank() != 2 || it == frags_.end() || it->second.row)
      unsupported(op, "only reductions along axis 1 of a register tile (an MMA result or arithmetic on one) are emitted");
    const Frag& in = it->second;
    // f16 and bf16 tiles are combined in f32 and rounded once at the end (the executor rounds its
    // exact combination once; Triton adds in the element type).
    const bool half = in.elem == Scalar::F16 || in.elem == Scalar::BF16;
    if (in.elem != Scalar::F32 && !half) unsupported(op, "reductions are emitted for f32, f16 and bf16 tiles only");
    auto rd = [&](const std::string& e) { return half ? "tawa::to_f32(" + e + ")" : e; };
    std::string kind = op.strAttr("kind");
    auto fold = [&](const std::string& a, const std::string& b) {
      if (kind == "sum") return a + " + " + b;
      const std::string rule = propagatesNan(op) ? "_nan(" : "_num(";
      if (kind == "max") return "tawa::max" + rule + a + ", " + b + ")";
      if (kind == "min") return "tawa::min" + rule + a + ", " + b + ")";
      unsupported(op, "reduction kind '" + kind + "' is not emitted");
    };
    profTile(op);
    at(op);
    Frag out = declareTile(op, op.result()->type(), nameFor(op.result()));
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(out.mBlocks) + "; ++mi) {");
    line("TAWA_UNROLL");
    line("  for (int h = 0; h < 2; ++h) {  // this thread's rows 8h + lane/4 of each 16-row warp slice");
    line("    float x = " + rd(in.name + "[mi][2 * h]") + ";");
    line("    x = " + fold("x", rd(in.name + "[mi][2 * h + 1]")) + ";");
    if (in.perThread > 4) {
      line("TAWA_UNROLL");
      line("    for (int j = 1; j < " + std::to_string(in.perThread / 4) + "; ++j) {");
      line("      x = " + fold("x", rd(in.name + "[mi][4 * j + 2 * h]")) + ";");
      line("      x = " + fold("x", rd(in.name + "[mi][4 * j + 2 * h + 1]")) + ";");
      line("    }");
    }
    if (deferredSums_.count(&op)) {
      line("    // this thread's part of the row sum: the loop carries the quad's parts, summed after it");
    } else {
      line("    x = " + fold("x", "tawa::shfl_xor(x, 1)") + ";");
      line("    x = " + fold("x", "tawa::shfl_xor(x, 2)") + ";");
    }
    line("    " + out.name + "[mi][h] = " + (!half ? "x" : in.elem == Scalar::F16 ? "tawa::to_f16(x)" : "tawa::to_bf16(x)") + ";");
    line("  }");
    line("}");
    frags_[op.result()] = out;
  }

  // tile.reduce (a sum) along axis 0 of a fragment, for a reduce-add store of it only (a bias
  // gradient's `tl.atomic_add(db + cols, tl.sum(acc, 0))`; any other use finds no fragment and is
  // refused): each thread sums its rows of each of its columns, and the eight lanes that share
  // columns fold them with three butterfly shuffles; lanes 0..3 of each warp then hold the warp's
  // partial sums, which emitVecStore adds atomically (a warp group's four warps: four adds a column).
  void emitColumnSums(const Op& op, const Frag& in) {
    if (op.strAttr("kind") != "sum") unsupported(op, "a reduction along axis 0 of a register tile is emitted for sums only");
    if (in.elem != Scalar::F32) unsupported(op, "column sums are emitted for f32 tiles only");
    const int64_t groups = in.perThread / 4;  // groups of 8 columns; each thread holds 2 of each
    profTile(op);
    at(op);
    const std::string name = nameFor(op.result());
    line("float " + name + "[" + std::to_string(groups) + "][2];  // sums over this warp's rows of each column it holds");
    line("TAWA_UNROLL");
    line("for (int j = 0; j < " + std::to_string(groups) + "; ++j) {");
    line("TAWA_UNROLL");
    line("  for (int p = 0; p < 2; ++p) {");
    line("    float x = 0.0f;");
    line("TAWA_UNROLL");
    line("    for (int mi = 0; mi < " + std::to_string(in.mBlocks) + "; ++mi) {");
    if (in.rows) {  // a padded block: the rows past the tile are no part of it
      line("      if (64 * mi + tawa::wgmma_acc_row(4 * j + p) < " + std::to_string(in.rows) + ") x += " + in.name + "[mi][4 * j + p];");
      line("      if (64 * mi + tawa::wgmma_acc_row(4 * j + 2 + p) < " + std::to_string(in.rows) + ") x += " + in.name + "[mi][4 * j + 2 + p];");
    } else {
      line("      x += " + in.name + "[mi][4 * j + p] + " + in.name + "[mi][4 * j + 2 + p];");
    }
    line("    }");
    line("    x += tawa::shfl_xor(x, 4);");
    line("    x += tawa::shfl_xor(x, 8);");
    line("    x += tawa::shfl_xor(x, 16);");
    line("    " + name + "[j][p] = x;");
    line("  }");
    line("}");
    columnSums_[op.result()] = {name, groups};
  }

  // tile.desc_load in a consumer: one thread expects the bytes and issues the TMA box into the
  // consumer's own buffer; the warp group waits on its mbarrier and then reads it in place.
  void emitDescLoad(const Op& op) {
    if (single_ || prologueTile_) unsupported(op, "a tile.desc_load is emitted in consumer warp groups only");
    if (op.operand(1)->type().isTile()) unsupported(op, "gathered rows are copied by the producer (a block load in the K loop)");
    const Private& pv = privates_.at(&op);
    const TensorMapSpec& map = allMaps_[static_cast<size_t>(descs_.at(op.operand(0)))];
    const auto& l = pv.layout;
    profMark(op, profile::Scope::TmaIssue);
    at(op);
    std::string row = coord(op.operand(0), 0, ex(op.operand(1))), col = coord(op.operand(0), 1, ex(op.operand(2)));
    if (tileMap(op.operand(0))) {
      // Moved by the warp group's 128 threads, each fencing its writes for the wgmma; the named
      // barrier gathers them before the one arrival that completes the buffer's phase.
      line("// " + pv.tile.str() + " -> " + pv.name);
      emitTileLoad(map, l, pv.name, col, row, op.operand(0));
      line("tawa::fence_proxy_async_shared_cta();");
      line("tawa::bar_sync(" + std::to_string(region_) + ", 128);");
      line("if (tawa::warpgroup_thread_idx() == 0) tawa::mbarrier_arrive(" + pv.bar + ");");
    } else {
    line("if (tawa::warpgroup_thread_idx() == 0) {  // " + pv.tile.str() + " -> " + pv.name);
    line("  tawa::mbarrier_arrive_expect_tx(" + pv.bar + ", " + std::to_string(pv.tile.shape[0] * l.cols * l.elemBytes) + ");");
    for (int64_t j = 0; j < l.chunks; ++j)
      line("  tawa::cp_async_bulk_tensor_" + std::to_string(map.rank()) + "d_global_to_shared(" + pv.name +
           (j ? " + " + std::to_string(j * l.chunkBytes) : "") + ", &" + map.param + ", " + col +
           (j ? " + " + std::to_string(j * l.chunkCols) : "") + ", " + row + sliceCoords(op.operand(0)) + ", " + pv.bar + ");");
    line("}");
    }
    profMark(op, profile::Scope::WaitFull);
    line("tawa::mbarrier_wait_parity(" + pv.bar + ", " + pv.phase + ");");
    line(pv.phase + " ^= 1u;");
    View v;
    v.base = pv.name;
    v.layout = l;
    v.tile = pv.tile;
    views_[op.result()] = v;
    // Used other than as a tile.dot operand in shared memory (a residual tile added to the
    // accumulator in the epilogue): read into registers at once.
    if (usedOutsideDots(op.result())) readIntoRegisters(op, v, "every thread has read " + pv.name + " (it may be loaded again)");
  }
  // A shared-memory tile read into registers at once, each thread its accumulator-fragment elements
  // from the swizzled buffer, then the warp group's barrier, so that no thread loads the buffer again
  // (the next tile of a loop) or releases its slot before every thread has read it.
  // A transposed view (tl.trans of a slot's tile) reads element (row, col) at the stored (col, row).
  void readIntoRegisters(const Op& op, const View& v, const std::string& comment) {
    const Type& t = op.result()->type();
    if (t.rank() != 2 || (t.shape[0] % 64 != 0 && !paddedRows(t.shape[0])) || !v.layout.swizzle)
      unsupported(op, "a tile read into registers from shared memory needs 16 or 32 rows or whole 64-row blocks in a swizzled layout, got " +
                          t.str());
    Frag f = declareFrag(op, t, fresh(nameFor(op.result()) + "_regs"));
    writeFrag(f, [&](const Ctx& c) { return slotElement(v, t, c); });
    line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // " + comment);
    frags_[op.result()] = f;
  }
  // Element (c.row, c.col) of tile `t` held in shared memory as view `v` (its transpose: read at the
  // stored (col, row)); the padded rows of a 16- or 32-row tile are zeros, never read.
  static std::string slotElement(const View& v, const Type& t, const Ctx& c) {
    const std::string r = "(" + c.row + ")", k = "(" + c.col + ")";
    return withinRows(t, c, "tawa::ld_shared<" + cScalarType(t.scalar) + ">(" + v.base + " + " +
                                (v.transposed ? swizzledOffset(v.layout, k, r) : swizzledOffset(v.layout, r, k)) + ")");
  }
  // `read` where c's row is one of tile t's: a 16- or 32-row tile (a K block of B) pads its 64-row
  // block, and an element of a row past it reads nothing (zero).
  static std::string withinRows(const Type& t, const Ctx& c, const std::string& read) {
    return t.shape[0] % 64 ? "((" + c.row + ") < " + std::to_string(t.shape[0]) + " ? " + read + " : " + zeroOf(t.scalar) + ")" : read;
  }
  // The byte offset, in a tile stored in layout `l` (TMA's swizzled chunks), of element (row, col):
  // chunk col / chunkCols, row `row` of it, swizzled as TMA writes and reads it.
  static std::string swizzledOffset(const TileLayout& l, const std::string& row, const std::string& col) {
    const std::string cc = std::to_string(l.chunkCols);
    return "tawa::layout::swizzle_offset<" + std::to_string(l.swizzle) + ">(" + col + " / " + cc + " * " + std::to_string(l.chunkBytes) +
           " + " + row + " * " + std::to_string(l.swizzle) + " + " + col + " % " + cc + " * " + std::to_string(l.elemBytes) + ")";
  }
  // Whether a slot's tile (or a tile loaded through pointers) `v` only makes the B of tile.dots whose
  // B is staged (operandStagings_): through elementwise ops, transposes and table lookups used nowhere
  // else, all in v's block. Its elements are then read from the
  // slot where the staging writes B, and B never occupies registers.
  bool makesOnlyStagedB(const Value* v) const {
    const Block* blk = v->definingOp()->parent;
    std::vector<const Value*> work{v};
    std::set<const Value*> seen;
    bool staged = false, ok = true;
    while (ok && !work.empty()) {
      const Value* x = work.back();
      work.pop_back();
      if (!seen.insert(x).second) continue;
      walk(const_cast<Block&>(f_.body), [&](Op* o) {
        if (!ok || std::find(o->operands.begin(), o->operands.end(), x) == o->operands.end()) return;
        if (o->parent != blk) return void(ok = false);
        if (o->kind() == OpKind::Dot && o->operand(1) == x && o->operand(0) != x && operandStagings_.count(o)) return void(staged = true);
        // Through elementwise ops, transposes, and a table lookup: addresses computed from it
        // (`lut + nibble`) and the load through them (a 4-bit code's value, nf4).
        // Shape ops too (AWQ's tl.interleave of the packed words: expand_dims, broadcast, select, reshape).
        const bool through = isElementwise(o->kind()) || o->kind() == OpKind::Permute || o->kind() == OpKind::AddPtr ||
                             o->kind() == OpKind::ExpandDims || o->kind() == OpKind::Broadcast || o->kind() == OpKind::Reshape ||
                             (o->kind() == OpKind::Load && o->operand(0) == x);
        if (through && o->numResults() == 1 && o->result()->type().isTile()) return work.push_back(o->result());
        ok = false;
      });
    }
    return ok && staged;
  }
  // Whether a slot's tile `v` is an operand of arithmetic, a cast or a reduction (which read registers),
  // not only of tile.dot, its transposes and the loops that carry it (which keep it in shared memory).
  bool computedFrom(const Value* v) const {
    bool regs = false;
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      if (regs || std::find(o->operands.begin(), o->operands.end(), v) == o->operands.end()) return;
      regs = isElementwise(o->kind()) || o->kind() == OpKind::Reduce || o->kind() == OpKind::Scan;
    });
    return regs;
  }
  // Whether `v` has a use other than as an operand of tile.dot (which reads shared memory in place).
  // Whether only threads read ring `ring`'s slots: no wgmma reads a slot, and no tile.dot reads a
  // slot's tile in place (its tiles are read into registers, or into a staged B).
  bool onlyThreadsRead(const Value* ring) const {
    bool mma = false;
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      if (o->kind() == OpKind::Wgmma && (o->operand(0) == ring || o->operand(1) == ring)) mma = true;
      if (o->kind() == OpKind::Dot)
        for (size_t k = 0; k < 2; ++k) {
          const Op* d = o->operand(k)->definingOp();
          while (d && d->kind() == OpKind::Permute) d = d->operand(0)->definingOp();
          if (d && d->kind() == OpKind::SmemLoad && d->operand(0) == ring) mma = true;
        }
    });
    return !mma;
  }
  // Every use of v is as the A operand of a tile.dot.
  bool onlyDotA(const Value* v) const {
    bool other = false, any = false;
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      for (size_t k = 0; k < o->numOperands(); ++k)
        if (o->operand(k) == v) (o->kind() == OpKind::Dot && k == 0 ? any : other) = true;
    });
    return any && !other;
  }
  bool usedOutsideDots(const Value* v) const {
    bool other = false;
    walk(const_cast<Block&>(f_.body), [&](Op* o) {
      for (size_t k = 0; k < o->numOperands(); ++k)
        if (o->operand(k) == v && !(o->kind() == OpKind::Dot && k < 2)) other = true;
    });
    return other;
  }

  // tile.dot on a consumer: A from shared memory (a view, K-major) or from registers (an f16/bf16
  // fragment: its registers 8kk..8kk+7 are the A fragment of k-step kk), B from shared memory (a
  // stored KxN tile, N-major, or the transpose of a stored NxK tile, K-major). Issued, committed
  // and waited for at once: the result is in registers when the statement ends.
  void emitDot(const Op& op) {
    if (single_ || prologueTile_) unsupported(op, "wgmma is a warp-group operation and runs in consumer warp groups only");
    const Value *va = op.operand(0), *vb = op.operand(1);
    auto ib = views_.find(vb);
    const Staging* staged = operandStagings_.count(&op) && !views_.count(vb) ? &operandStagings_.at(&op) : nullptr;
    if (ib == views_.end() && !(staged && (frags_.count(vb) || lazies_.count(vb))))
      unsupported(op, "the B operand of tile.dot must be a tile in shared memory (an aref slot or a tile.desc_load) or a register tile");
    const View& b = staged ? stageOperand(op, *staged, vb) : ib->second;
    const View* a = views_.count(va) ? &views_.at(va) : nullptr;
    const Frag* af = (!a && frags_.count(va)) ? &frags_.at(va) : nullptr;
    if (!a && !af) unsupported(op, "the A operand of tile.dot must be a tile in shared memory or a register tile");
    if (a && a->transposed) unsupported(op, "a transposed A operand is not emitted (A is read K-major)");
    Scalar in = b.tile.scalar;
    // 8-bit operands (k32 steps; s8 sums in i32, fp8 in f32): A a shared-memory tile (K-major as
    // loaded), B staged K-major.
    const bool ints = in == Scalar::I8 && staged && a;
    const bool fp8 = isFp8(in) && a && !a->transposed && b.transposed;  // both K-major (a staged B is held so)
    if ((in != Scalar::F16 && in != Scalar::BF16 && !ints && !fp8) || (a ? a->tile.scalar : af->elem) != in)
      unsupported(op, "tile.dot on a consumer is emitted for f16 and bf16 operands (both the same), s8 ones with B computed in "
                      "registers, and fp8 ones both K-major, so far");
    if (af && af->row) unsupported(op, "the A operand is a row vector");
    const Type& at = va->type();
    const int64_t kStep = ints || fp8 ? 32 : 16;
    int64_t m = at.shape[0], k = at.shape[1], n = op.result()->type().shape[1];
    static const std::set<int64_t> ns = {16, 32, 64, 128, 256};
    // A of 16 or 32 rows: one m64 wgmma over a padded A (a register tile's padded block, or a slot
    // laid out with 64 rows); the result's rows past m are padding too, never stored.
    const bool paddedA = paddedRows(m) && (af ? af->rows == m : a->layout.rows == 64);
    if ((m % 64 != 0 && !paddedA) || k % kStep != 0 || !ns.count(n))
      unsupported(op, "needs M a multiple of 64 (or 16 or 32 rows of a padded A), K of " + std::to_string(kStep) +
                          " and N in {16, 32, 64, 128, 256}, got " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    if (op.result()->type().scalar != (ints ? Scalar::I32 : Scalar::F32))
      unsupported(op, ints ? "an s8 tile.dot accumulates in i32" : "accumulates in f32 only so far");
    const std::string zeroSum = ints ? "0" : "0.0f";
    checkAccumulatorBudget(op, m, n, "result",
                           "use smaller blocks, or 128-row blocks split between two consumers (--consumers 2; where they were asked "
                           "for, --explain says why the rows were not split)");
    profMark(op, profile::Scope::MmaIssue, b.slot.empty() ? "-1" : b.slot);
    this->at(op);
    Frag acc;
    const Value* accIn = op.numOperands() > 2 ? op.operand(2) : nullptr;
    if (auto y = yieldInto_.find(op.result()); y != yieldInto_.end()) {
      acc = y->second;  // the enclosing tile.if yields this result: accumulate in its storage
      if (accIn) assignTile(op, acc, accIn);
      else writeFrag(acc, [&](const Ctx&) { return zeroSum; });
    } else if (accIn && frags_.count(accIn) && uses_[accIn] == 1) {
      acc = frags_.at(accIn);  // accumulate in place: nothing else reads the old value
    } else {
      acc = declareFrag(op, op.result()->type(), nameFor(op.result()));
      if (accIn) assignTile(op, acc, accIn);
      else writeFrag(acc, [&](const Ctx&) { return zeroSum; });
    }
    frags_[op.result()] = acc;
    names_[op.result()] = acc.name;
    std::string ty = in == Scalar::F16 ? "f16" : in == Scalar::BF16 ? "bf16" : in == Scalar::F8E4M3 ? "e4m3" : in == Scalar::F8E5M2 ? "e5m2" : "s8";
    // B: a stored KxN tile is N-major (transpose flag 1); the transpose of a stored NxK tile is K-major (0).
    bool bKMajor = b.transposed;
    const TileLayout& lb = b.layout;
    if ((bKMajor ? lb.rows : lb.cols) != n || (bKMajor ? lb.cols : lb.rows) != k)
      unsupported(op, "operand shapes do not match the shared-memory tile");
    line("{  // " + std::to_string(m) + "x" + std::to_string(n) + " " + (accIn ? "+" : "") + "= " + std::to_string(m) + "x" +
         std::to_string(k) + " * " + std::to_string(k) + "x" + std::to_string(n) + ": " + std::to_string(k / kStep * acc.mBlocks) +
         " x wgmma m64n" + std::to_string(n) + "k" + std::to_string(kStep) + " (A " + (a ? "K-major in shared memory" : "in registers") + ", B " +
         (bKMajor ? "K-major" : "N-major") + ")");
    ++indent_;
    std::string bs = fresh("b_tile"), as;
    line("const uint8_t* " + bs + " = " + b.base + ";");
    if (a) {
      as = fresh("a_tile");
      line("const uint8_t* " + as + " = " + a->base + ";");
    }
    // A in registers: its f16/bf16 pairs packed into 32-bit words before the fence. Packed after it,
    // the moves that make them would write registers an MMA reads after the last warpgroup.arrive,
    // and ptxas would add one before each MMA (its C7519 note), serializing them.
    std::string packed;
    if (af) {
      packed = fresh("a_regs");
      const int64_t words = k / 16 * 4;
      line("uint32_t " + packed + "[" + std::to_string(acc.mBlocks) + "][" + std::to_string(words) + "];");
      for (int64_t mb = 0; mb < acc.mBlocks; ++mb) {
        const std::string r = af->name + "[" + std::to_string(mb) + "]";
        line("TAWA_UNROLL for (int w = 0; w < " + std::to_string(words) + "; ++w) " + packed + "[" + std::to_string(mb) +
             "][w] = tawa::pack_pair(" + r + "[2 * w], " + r + "[2 * w + 1]);");
      }
    }
    for (int64_t mb = 0; mb < acc.mBlocks; ++mb) line("tawa::fence_operands(" + acc.name + "[" + std::to_string(mb) + "]);");
    line("tawa::wgmma_fence();");
    for (int64_t kk = 0; kk < k / kStep; ++kk) {
      std::string db = smemDesc(bs, lb, bKMajor, kk * kStep, 0);
      for (int64_t mb = 0; mb < acc.mBlocks; ++mb) {
        std::string call;
        if (ints || fp8) {  // the 8-bit forms have no transpose flags: both operands K-major
          std::string da = smemDesc(as, a->layout, true, kk * kStep, mb * 64);
          call = "tawa::wgmma_mma_async_m64n" + std::to_string(n) + "k32_" + (ints ? "s32_" : "f32_") + ty + "(" + acc.name + "[" +
                 std::to_string(mb) + "], " + da + ", " + db + ", 1);";
        } else if (a) {
          std::string da = smemDesc(as, a->layout, true, kk * 16, mb * 64);
          call = "tawa::wgmma_mma_async_m64n" + std::to_string(n) + "k16_f32_" + ty + "<" + (bKMajor ? "0" : "1") + ">(" + acc.name +
                 "[" + std::to_string(mb) + "], " + da + ", " + db + ", 1);";
        } else {
          // k-step kk's A fragment is registers 8kk..8kk+7 of the fragment: packed words 4kk..4kk+3.
          const std::string w = packed + "[" + std::to_string(mb) + "][" + std::to_string(4 * kk);
          call = "tawa::wgmma_mma_async_rs_m64n" + std::to_string(n) + "k16_f32_" + ty + "<" + (bKMajor ? "0" : "1") + ">(" +
                 acc.name + "[" + std::to_string(mb) + "], " + w + "], " + packed + "[" + std::to_string(mb) + "][" +
                 std::to_string(4 * kk + 1) + "], " + packed + "[" + std::to_string(mb) + "][" + std::to_string(4 * kk + 2) + "], " +
                 packed + "[" + std::to_string(mb) + "][" + std::to_string(4 * kk + 3) + "], " + db + ", 1);";
        }
        line(call);
      }
    }
    line("tawa::wgmma_commit_group();  // waited for where the result is first used");
    --indent_;
    line("}");
    std::set<const Value*> reads;
    if (a && a->ring) reads.insert(a->ring);
    if (b.ring) reads.insert(b.ring);
    pending_.push_back(Group{{acc}, {}, reads, ++seq_, af != nullptr, staged ? staged->name : std::string()});
    for (const Value* ring : reads) unsyncedWaits_.erase(rings_.at(ring).aref);  // its completion needs every warp's issue
  }

  // Two cooperative consumers compute the same B (they split the M tile; B is KxN): the k-th staged
  // B of consumer 1 shares the k-th of consumer 0's buffer, each consumer computing and writing half
  // of its columns (half the work, half the shared memory). Not inside ping-pong loops, whose
  // consumers run half an iteration apart; before or after one both run the same code (FlagAttention's
  // piecewise attention's `tl.dot(q, I)` before its loop), and share.
  void shareOperandStagings() {
    if (regions_.size() != 3) return;
    std::vector<const Op*> byRegion[3];
    for (const Op* op : operandStagingOrder_) byRegion[regionIndex(op)].push_back(op);
    auto inPingPong = [](const Op* op) {
      for (const Block* b = op->parent; b && b->parentOp; b = b->parentOp->parent)
        if (b->parentOp->kind() == OpKind::For && b->parentOp->hasAttr("pv_overlap")) return true;
      return false;
    };
    if (byRegion[1].size() != byRegion[2].size()) return;
    for (size_t k = 0; k < byRegion[1].size(); ++k) {
      Staging& a = operandStagings_.at(byRegion[1][k]);
      Staging& b = operandStagings_.at(byRegion[2][k]);
      if (byRegion[1][k]->operand(1)->type() != byRegion[2][k]->operand(1)->type() || a.kMajor != b.kMajor ||
          inPingPong(byRegion[1][k]) != inPingPong(byRegion[2][k]))
        return;
    }
    for (size_t k = 0; k < byRegion[1].size(); ++k) {
      if (inPingPong(byRegion[1][k])) continue;
      Staging& a = operandStagings_.at(byRegion[1][k]);
      Staging& b = operandStagings_.at(byRegion[2][k]);
      a.shared = b.shared = true;
      b.part = 1;
      b.sharedWith = byRegion[1][k];
      b.name = a.name;
    }
  }

  // B computed in registers (fragment `w`, KxN in the accumulator layout), written into its staging
  // buffer as TMA would lay out the KxN box (swizzled column chunks): the wgmma reads it N-major like a
  // loaded slot. The MMAs that read the buffer before must have completed (their wait first); each
  // thread fences its generic writes for the async proxy, and the warp group's barrier makes every
  // thread's part visible before any of its warps issues the wgmma.
  // B held lazily (computed from a slot read where it is used: makesOnlyStagedB) is computed element by
  // element as it is written, so it never occupies registers; the slot releases deferred until then
  // follow the warp group's barrier (every thread has read its part).
  const View& stageOperand(const Op& op, const Staging& st, const Value* vb) {
    int newest = -1;
    for (size_t i = 0; i < pending_.size(); ++i)
      if (pending_[i].staged == st.name) newest = static_cast<int>(i);
    completeThrough(op, newest);
    const TileLayout& l = *st.layout;
    const Frag w = frags_.count(vb) ? frags_.at(vb) : fragShape(op, vb->type());
    const bool lazy = !frags_.count(vb);
    // Shared by both consumers: neither overwrites it before the other's MMAs reading it completed
    // (each waited for its own above), and each writes half of each thread's columns.
    const std::string both = std::to_string(kSharedOperandBar) + ", 256";
    if (st.shared) line("tawa::bar_sync(" + both + ");  // both consumers' MMAs reading " + st.name + " have completed");
    const int half = st.shared ? w.perThread / 2 : 0;
    if (st.shared && !st.kMajor && half % 2)
      unsupported(op, "a B operand two consumers stage together needs an even number of columns per thread in each half, got " +
                          std::to_string(w.perThread));
    auto at = [&](const std::string& col, const std::string& ri) {
      return lazy ? elem(op, vb, Ctx{"row", col, "[mi][(" + ri + " >> 1) & 1]"}) : w.name + "[mi][" + ri + "]";
    };
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(w.mBlocks) + "; ++mi) {  // B -> " + st.name + (st.kMajor ? " (K-major: its NxK transpose)" : "") +
         (lazy ? ", computed element by element" : ""));
    // Element by element with no register of a fragment read (each element a function of its row and
    // column alone), the columns need not be unrolled whole: a few at a time keep the live values few.
    const bool noFragments = lazy && at("col", "ri").find("[mi][") == std::string::npos;
    line(noFragments ? "TAWA_UNROLL_4" : "TAWA_UNROLL");
    line("  for (int ri = " + std::to_string(st.part * half) + "; ri < " + std::to_string(st.shared ? (st.part + 1) * half : w.perThread) +
         "; ri += " + (st.kMajor ? "1" : "2") + ") {" + (st.shared ? "  // consumer " + std::to_string(st.part) + "'s half" : ""));
    line("    const int row = 64 * mi + tawa::wgmma_acc_row(ri);");
    line("    const int col = tawa::wgmma_acc_col(ri);");
    if (w.rows) line("    if (row >= " + std::to_string(w.rows) + ") continue;  // a padded block: rows past the tile are not part of B");
    if (st.kMajor)  // element (k, n) at row n, column k of the transpose: one byte each
      line("    tawa::st_shared_byte(" + st.name + " + " + swizzledOffset(l, "col", "row") + ", " + at("col", "ri") + ");");
    else
      line("    tawa::st_shared_pair(" + st.name + " + " + swizzledOffset(l, "row", "col") + ", " + at("col", "ri") + ", " +
           at("(col + 1)", "(ri + 1)") + ");");
    line("  }");
    line("}");
    line("tawa::fence_proxy_async_shared_cta();  // this thread's writes, before the wgmma reading them (async proxy)");
    if (st.shared) line("tawa::bar_sync(" + both + ");  // every thread of both consumers has written its part of " + st.name);
    else line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // every thread has written its part of " + st.name);
    for (const Op* rel : releasesAfterStaging_) {  // the slots B was read from, now read by every thread
      const Bars& bars = bars_.at(rel->operand(0));
      waitForReaders(*rel, bars.aref);
      oneThread("tawa::mbarrier_arrive(&" + bars.name + "[" + ex(rel->operand(1)) + "]);  // released after B was staged");
    }
    releasesAfterStaging_.clear();
    lazySlotArefs_.clear();
    View v;
    v.base = st.name;
    v.layout = l;
    v.tile = op.operand(1)->type();
    v.transposed = st.kMajor;  // read K-major, as the transpose of a stored NxK tile
    return stagedViews_[&op] = v;
  }

  // An MxN f32 result lives in registers of one consumer warp group; the budget leaves 40 of its
  // setmaxnreg registers for addresses and descriptors.
  void checkAccumulatorBudget(const Op& op, int64_t m, int64_t n, const std::string& what, const std::string& hint) {
    int64_t regs = m * n / 128;
    int64_t budget = regions_[static_cast<size_t>(region_)]->intAttr("regs") - 40;
    if (regs > budget)
      unsupported(op, "the " + std::to_string(m) + "x" + std::to_string(n) + " " + what + " needs " + std::to_string(regs) +
                          " registers per thread of one consumer warp group (budget " + std::to_string(budget) + ")",
                  hint);
  }

  // ---- waits of asynchronous tile.dot groups

  // Waits until every group writing one of `frags` has completed (and so every older group): the
  // wait leaves the newer groups in flight. Completed groups' registers are fenced, their deferred
  // releases run.
  void waitFor(const Op& op, const std::set<std::string>& frags) {
    int newest = -1;
    for (size_t i = 0; i < pending_.size(); ++i)
      for (const Frag& f : pending_[i].writes)
        if (frags.count(f.name)) newest = static_cast<int>(i);
    completeThrough(op, newest);
  }
  // Before the slots of aref `aref` are released (-1: an empty barrier of unknown aref): every group
  // reading a ring of it, or any ring when the aref is unknown.
  void waitForReaders(const Op& op, int64_t aref) {
    int newest = -1;
    for (size_t i = 0; i < pending_.size(); ++i)
      for (const Value* ring : pending_[i].reads)
        if (aref < 0 || rings_.at(ring).aref < 0 || rings_.at(ring).aref == aref) newest = static_cast<int>(i);
    completeThrough(op, newest);
  }
  // Waits until groups 0..newest of pending_ have completed (none when newest < 0).
  void completeThrough(const Op& op, int newest) {
    if (newest < 0) return;
    keepAfterWork(newest);
    profMark(op, profile::Scope::MmaWait, "-1");
    line("tawa::wgmma_wait_group<" + std::to_string(pending_.size() - 1 - static_cast<size_t>(newest)) + ">();");
    for (int i = 0; i <= newest; ++i) {
      for (const Frag& f : pending_[static_cast<size_t>(i)].writes)
        for (int64_t mb = 0; mb < f.mBlocks; ++mb) line("tawa::fence_operands(" + f.name + "[" + std::to_string(mb) + "]);");
      for (const std::string& t : pending_[static_cast<size_t>(i)].then) line(t);
    }
    pending_.erase(pending_.begin(), pending_.begin() + newest + 1);
  }
  // Before waiting for groups 0..newest: when one of them is a register-A MMA group and a row vector
  // was computed since its issue, the sum of this thread's entries of it goes to its keep_order word
  // (never read: the store only pins the wait after the work it depends on; see keepOrder_).
  void keepAfterWork(int newest) {
    if (!keepOrder_ || !lastRow_ || region_ <= 0) return;
    bool overlapped = false;
    for (int i = 0; i <= newest; ++i)
      overlapped |= pending_[static_cast<size_t>(i)].registerA && pending_[static_cast<size_t>(i)].seq < lastRowSeq_;
    if (!overlapped) return;
    std::string sum;
    for (int64_t mi = 0; mi < lastRow_->mBlocks; ++mi)
      for (int h = 0; h < 2; ++h)
        sum += (sum.empty() ? "" : " + ") + lastRow_->name + "[" + std::to_string(mi) + "][" + std::to_string(h) + "]";
    line("keep_order[" + std::to_string(region_ - 1) + " * 128 + tawa::warpgroup_thread_idx()] = " + sum +
         ";  // keeps the wait below after " + lastRow_->name);
  }
  void waitAll(const Op& op) {
    std::set<std::string> all;
    for (const Group& g : pending_)
      for (const Frag& f : g.writes) all.insert(f.name);
    waitFor(op, all);
  }
  // Before an op: the register tiles it reads (or overwrites) must be complete; a consumer's own TMA
  // load may overwrite a buffer an MMA still reads: everything completes first.
  void ensureReady(const Op& op) {
    if (pending_.empty()) return;
    if (op.kind() == OpKind::DescLoad && !vecDescs_.count(op.operand(0))) return waitAll(op);
    std::set<std::string> used;
    for (const Value* v : op.operands)
      if (auto it = frags_.find(v); it != frags_.end()) used.insert(it->second.name);
    waitFor(op, used);
  }

  // A tile value that is a shared-memory view through tile.permute / nv.smem_load (for loop-carried slots).
  const Op* viewSource(const Value* v) const {
    const Op* d = v->definingOp();
    while (d && d->kind() == OpKind::Permute) d = d->operand(0)->definingOp();
    return d && d->kind() == OpKind::SmemLoad ? d : nullptr;
  }

  void emitTmaLoad(const Op& op) {
    const TensorMapSpec& map = allMaps_[static_cast<size_t>(descs_.at(op.operand(0)))];
    const Ring& r = rings_.at(op.operand(1));
    const Bars& b = bars_.at(op.operand(3));
    const auto& l = r.layout;
    at(op);
    const bool gather = op.operand(4)->type().isTile();
    std::string slot = ex(op.operand(2)), row = gather ? gatheredRow(op) : coord(op.operand(0), 0, ex(op.operand(4))),
                col = coord(op.operand(0), 1, ex(op.operand(5)));
    if (r.kMajor) std::swap(row, col);  // the tensor map is transposed: K is its inner coordinate
    TAWA_ASSERT(!gather || tileMap(op.operand(0)), "gathered rows are a tile map's (gatherMaps_)");
    std::string dst = r.name + " + " + slot + " * " + std::to_string(l.slotBytes);
    if (tileMap(op.operand(0))) {
      // The producer's 128 threads copy the slot's chunks (TMA's swizzled layout), each fences its
      // generic writes for the wgmma that reads them (async proxy) and arrives on the full barrier.
      emitTileLoad(map, l, dst, col, row, op.operand(0), gather);
      line("tawa::fence_proxy_async_shared_cta();  // this thread's writes, before the wgmma reading them (async proxy)");
      if (phaseEnds_.count(&op)) line("tawa::mbarrier_arrive(&" + b.name + "[" + slot + "]);  // this thread's part of the phase is written");
      return;
    }
    for (int64_t j = 0; j < l.chunks; ++j)
      oneThread("tawa::cp_async_bulk_tensor_" + std::to_string(map.rank()) + "d_global_to_shared(" + dst +
                (j ? " + " + std::to_string(j * l.chunkBytes) : "") + ", &" + map.param + ", " + col +
                (j ? " + " + std::to_string(j * l.chunkCols) : "") + ", " + row + sliceCoords(op.operand(0)) + ", &" + b.name + "[" +
                slot + "]);");
  }

  // nv.wgmma {trans_b = true}: B is the transpose of its slot's NxK tile; {trans_a}: A of its KxM tile.
  static bool flag(const Op& op, const char* attr) {
    auto it = op.attrs.find(attr);
    return it != op.attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
  }
  static bool transB(const Op& op) { return flag(op, "trans_b"); }
  static bool transA(const Op& op) { return flag(op, "trans_a"); }

  void emitWgmma(const Op& op) {
    if (single_) unsupported(op, "wgmma is a warp-group operation and cannot run in the producer");
    const Ring &ra = rings_.at(op.operand(0)), &rb = rings_.at(op.operand(2));
    const TileLayout &la = ra.layout, &lb = rb.layout;
    // Completed before either slot's release (the IR waits for it), it was issued by every warp.
    unsyncedWaits_.erase(ra.aref);
    unsyncedWaits_.erase(rb.aref);
    Scalar in = ra.tile.scalar;
    bool fp8 = kMajorOnly(in);  // fp8, s8, u8 (k32 steps) and tf32 (k8): K-major operands
    const bool ints = in == Scalar::I8 || in == Scalar::U8;
    if ((in != Scalar::F16 && in != Scalar::BF16 && !fp8) || rb.tile.scalar != in)
      unsupported(op, "wgmma from shared memory is emitted for f16, bf16, f32 (tf32), f8e4m3, f8e5m2, i8 and u8 operands (both the same), got " +
                          ra.tile.str() + " and " + rb.tile.str());
    if (in == Scalar::F32 && (!op.hasAttr("input_precision") || op.strAttr("input_precision") != "tf32"))
      unsupported(op, "an f32 tl.dot with input_precision=\"" + (op.hasAttr("input_precision") ? op.strAttr("input_precision") : std::string("?")) +
                          "\" has no wgmma form (wgmma reads f32 operands as tf32 only)");
    const std::string kind = in == Scalar::F32 ? "tf32" : "8-bit";
    // ra.kMajor on an f16/bf16 A: loaded through a transposed map, the slot holds KxM (read M-major).
    bool tb = transB(op), ta = transA(op) || (ra.kMajor && !fp8);
    if (fp8 && ta) unsupported(op, "a transposed " + kind + " A operand is not emitted: " + kind + " wgmma reads A K-major only");
    if ((fp8 && ra.kMajor) || (fp8 && !tb && !rb.kMajor))
      unsupported(op, "a " + kind + " slot is used both as the A and the B operand of wgmma: B is held K-major, A cannot share it");
    // f16/bf16: k16 steps, B N-major (the slot as loaded); 8-bit: k32 steps and tf32 k8 (32 bytes of
    // K either way), B K-major (the slot's transpose). A transposed B ({trans_b}: the slot is NxK) is
    // K-major as loaded, for any type.
    int64_t kStep = in == Scalar::F32 ? 8 : fp8 ? 32 : 16;
    bool bKMajor = fp8 || tb || rb.kMajor;  // rb.kMajor: loaded through a transposed map (EmitOptions::transposedMaps)
    // A transposed ({trans_a}: the slot is KxM) is read M-major.
    int64_t m = ta ? la.cols : la.rows, k = ta ? la.rows : la.cols, n = bKMajor ? lb.rows : lb.cols;
    static const std::set<int64_t> ns = {16, 32, 64, 128, 256};
    if (m % 64 != 0 || k % kStep != 0 || !ns.count(n))
      unsupported(op, "needs M a multiple of 64, K of " + std::to_string(kStep) + " and N in {16, 32, 64, 128, 256}, got " +
                          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    const Value* accIn = op.operand(4);
    const Type& accTy = op.result()->type();
    if (accTy.scalar != (ints ? Scalar::I32 : Scalar::F32))
      unsupported(op, ints ? "an integer wgmma accumulates in i32" : "accumulates in f32 only so far");
    checkAccumulatorBudget(op, m, n, "accumulator",
                           "use a smaller block, or two cooperative consumer warp groups (--consumers 2; where they were asked for, "
                           "--explain says why the rows were not split)");
    at(op);
    Frag acc;
    if (const Op* c = tileConstant(accIn)) {
      acc = declareFrag(op, accTy, nameFor(op.result()));
      fill(acc, *c);
    } else {
      const Frag& from = frag(op, accIn);
      if (uses_[accIn] == 1) {
        acc = from;  // accumulate in place: nothing else reads the old value
      } else {
        acc = declareFrag(op, accTy, nameFor(op.result()));
        copy(acc, from);
      }
    }
    frags_[op.result()] = acc;
    names_[op.result()] = acc.name;
    std::string ty = in == Scalar::F16    ? "f16"
                     : in == Scalar::BF16 ? "bf16"
                     : in == Scalar::F8E4M3 ? "e4m3"
                     : in == Scalar::F8E5M2 ? "e5m2"
                     : in == Scalar::I8     ? "s8"
                     : in == Scalar::F32    ? "tf32"
                                            : "u8";
    line("{  // " + std::to_string(m) + "x" + std::to_string(n) + " += " + std::to_string(m) + "x" + std::to_string(k) + " * " +
         std::to_string(k) + "x" + std::to_string(n) + ": " + std::to_string(k / kStep * (m / 64)) + " x wgmma m64n" +
         std::to_string(n) + "k" + std::to_string(kStep) + (ta ? " (A M-major" : " (A K-major") + (bKMajor ? ", B K-major)" : ", B N-major)"));
    ++indent_;
    std::string a = fresh("a_slot"), b = fresh("b_slot");
    line("const uint8_t* " + a + " = " + ra.name + " + " + ex(op.operand(1)) + " * " + std::to_string(la.slotBytes) + ";");
    line("const uint8_t* " + b + " = " + rb.name + " + " + ex(op.operand(3)) + " * " + std::to_string(lb.slotBytes) + ";");
    for (int64_t mb = 0; mb < acc.mBlocks; ++mb) line("tawa::fence_operands(" + acc.name + "[" + std::to_string(mb) + "]);");
    line("tawa::wgmma_fence();");
    for (int64_t kk = 0; kk < k / kStep; ++kk) {
      // B K-major (an NxK slot) is addressed like A, all N rows in one descriptor; N-major (KxN), k-step
      // kk starts kk * kStep rows down. A K-major: each 64-row block 64 rows down; M-major (a KxM
      // slot): each 64-column block in its own chunks.
      std::string db = smemDesc(b, lb, bKMajor, kk * kStep, 0);
      for (int64_t mb = 0; mb < acc.mBlocks; ++mb) {
        std::string da = smemDesc(a, la, !ta, kk * kStep, mb * 64);
        std::string form = fp8 ? "(" : std::string("<") + (bKMajor ? "0" : "1") + (ta ? ", 1" : "") + ">(";
        line("tawa::wgmma_mma_async_m64n" + std::to_string(n) + "k" + std::to_string(kStep) + (ints ? "_s32_" : "_f32_") + ty + form +
             acc.name + "[" +
             std::to_string(mb) + "], " + da + ", " + db + ", 1);");
      }
    }
    for (int64_t mb = 0; mb < acc.mBlocks; ++mb) line("tawa::fence_operands(" + acc.name + "[" + std::to_string(mb) + "]);");
    --indent_;
    line("}");
  }

  // A row vector (a reduction of an accumulator along its rows) through a 1-D descriptor: each row
  // is held by the four threads of a quad; the first of them writes it to global memory, inside the
  // descriptor's extent (rows past it are not stored, as TMA would clip them).
  void emitVecStore(const Op& op) {
    const bool reduce = op.hasAttr("reduce");  // a tl.atomic_add of the row vector: each element added atomically
    const VecDesc& d = vecDescs_.at(op.operand(0));
    if (auto cs = columnSums_.find(op.operand(1)); cs != columnSums_.end()) return emitColumnSumsAdd(op, cs->second);
    const Frag& v = frag(op, op.operand(1));
    if (!v.row) unsupported(op, "a 1-D store takes a row vector of the accumulator (a reduction along its rows)");
    const Type& elem = op.operand(0)->type();
    if (v.elem != elem.scalar)
      unsupported(op, "the row vector is " + std::string(ir::scalarName(v.elem)) + " and the descriptor " +
                          std::string(ir::scalarName(elem.scalar)), "cast the vector to the stored type first");
    at(op);
    line(std::string("{  // a row vector -> global memory from registers: the first thread of each quad ") +
         (reduce ? "adds its rows (atomically)" : "writes its rows"));
    ++indent_;
    line("const int64_t start = static_cast<int64_t>(" + ex(op.operand(2)) + ");");
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(v.mBlocks) + "; ++mi) {");
    line("TAWA_UNROLL");
    line("  for (int h = 0; h < 2; ++h) {");
    line("    const int64_t i = start + 64 * mi + tawa::wgmma_acc_row(2 * h);");
    // A padded block (16 or 32 rows): the rows past the tile are not stored.
    const std::string inTile = v.rows ? " && 64 * mi + tawa::wgmma_acc_row(2 * h) < " + std::to_string(v.rows) : "";
    line("    if ((tawa::lane_idx() & 3) == 0" + inTile + " && i < static_cast<int64_t>(" + ex(d.extent) + "))");
    const std::string at = vecStoreElement(op.operand(0));
    if (reduce) line("      tawa::atomic<tawa::AtomicOp::Add, 1>(&" + at + ", " + v.name + "[mi][h]);");
    else line("      " + at + " = " + v.name + "[mi][h];");
    line("  }");
    line("}");
    --indent_;
    line("}");
  }

  // Element `i` (a variable of the emitted loop) of the vector of 1-D descriptor `desc`, as the stores
  // address it.
  std::string vecStoreElement(const Value* desc) {
    const auto& d = vecDescs_.at(desc);
    const std::string off = vecOffset(d, "0");
    return nameFor(f_.arg(static_cast<size_t>(d.arg))) + "[" + off + " + i * static_cast<int64_t>(" + ex(d.stride) + ")]";
  }

  // The reduce-add store of column sums (emitColumnSums): lanes 0..3 of each warp add theirs.
  void emitColumnSumsAdd(const Op& op, const std::pair<std::string, int64_t>& sums) {
    const auto& d = vecDescs_.at(op.operand(0));
    if (!op.hasAttr("reduce"))
      unsupported(op, "a reduction along axis 0 of a register tile is emitted only when it is added atomically (tl.atomic_add)");
    if (op.operand(0)->type().scalar != Scalar::F32) unsupported(op, "column sums are f32: store them through an f32 pointer");
    at(op);
    line("{  // column sums -> global memory: lanes 0..3 of each warp add their warp's sums (atomically), the");
    line("   // warps one after another, so that a block's adds land in one order");
    ++indent_;
    line("const int64_t start = static_cast<int64_t>(" + ex(op.operand(2)) + ");");
    line("for (int w = 0; w < 4; ++w) {");
    line("  if (tawa::warpgroup_thread_idx() / 32 == w && tawa::lane_idx() < 4) {");
    line("TAWA_UNROLL");
    line("    for (int j = 0; j < " + std::to_string(sums.second) + "; ++j) {");
    line("TAWA_UNROLL");
    line("      for (int p = 0; p < 2; ++p) {");
    line("        const int64_t i = start + tawa::wgmma_acc_col(4 * j + p);");
    line("        if (i < static_cast<int64_t>(" + ex(d.extent) + "))");
    line("          tawa::atomic<tawa::AtomicOp::Add, 1>(&" + vecStoreElement(op.operand(0)) + ", " + sums.first + "[j][p]);");
    line("      }");
    line("    }");
    line("  }");
    line("  tawa::bar_sync(" + std::to_string(region_) + ", 128);");
    line("}");
    --indent_;
    line("}");
  }

  // A 1-D tile.desc_load in a consumer (block-access makes one of a masked vector load such as a
  // GEMM epilogue's bias, `tl.load(bias_ptr + cols, mask=cols < N)`): no TMA and no buffer; every
  // element is read from global memory where the fragment uses it, zero outside the descriptor's
  // extent as a TMA box would be.
  // A 1-D block load is a lazy tile: each thread reads the elements it uses where it uses them
  // (the producer too: the index tile of gathered rows, whose buffer the kernel only reads).
  void emitVecLoad(const Op& op) {
    const VecDesc& d = vecDescs_.at(op.operand(0));
    const Type& t = op.result()->type();
    if (t.rank() != 1) unsupported(op, "a 1-D descriptor loads 1-D tiles");
    const std::string ptr = nameFor(f_.arg(static_cast<size_t>(d.arg)));
    const std::string off = vecOffset(d, "int64_t{0}");
    const std::string start = "static_cast<int64_t>(" + ex(op.operand(1)) + ")", extent = "static_cast<int64_t>(" + ex(d.extent) + ")",
                      stride = "static_cast<int64_t>(" + ex(d.stride) + ")";
    std::string zero = zeroOf(t.scalar);
    if (auto o = op.attrs.find("other"); o != op.attrs.end()) {  // a constant `other` (BlockAccess): the outside's value
      if (std::holds_alternative<double>(o->second) != t.elemIsFloat())
        unsupported(op, "a 1-D load's 'other' must be a constant of its element type");
      zero = literal(op, t, o->second);
    }
    if (cScalarType(t.scalar).empty()) unsupported(op, "a 1-D load of " + t.str() + " is not emitted");
    lazies_[op.result()] = [=](const Ctx& c) {
      const std::string i = "(" + start + " + (" + c.row + "))";
      return "(" + i + " >= 0 && " + i + " < " + extent + " ? " + ptr + "[" + off + " + " + i + " * " + stride + "] : " + zero + ")";
    };
  }

  void emitTmaStore(const Op& op) {
    if (vecDescs_.count(op.operand(0))) return emitVecStore(op);
    const TensorMapSpec& map = allMaps_[static_cast<size_t>(descs_.at(op.operand(0)))];
    const Staging& s = stagings_.at(&op);
    holdInRegisters(op, op.operand(1));
    const Frag& v = frag(op, op.operand(1));
    if (single_) unsupported(op, "the epilogue store runs in a consumer warp group");
    at(op);
    line("{  // registers -> staging (accumulator fragment layout) -> global");
    ++indent_;
    bool inLoop = false;
    for (const Block* blk = op.parent; blk && blk->parentOp && blk->parentOp->kind() != OpKind::WgRegion; blk = blk->parentOp->parent)
      inLoop = inLoop || blk->parentOp->kind() == OpKind::For;
    // The previous store (of the last iteration, or of this epilogue) must have read the staging:
    // its thread 0 waited for that.
    if (inLoop || s.reused)
      line("tawa::bar_sync(" + std::to_string(region_) + ", 128);" + std::string(inLoop ? "" : "  // the store before has read the staging"));
    line("TAWA_UNROLL");
    line("for (int mi = 0; mi < " + std::to_string(v.mBlocks) + "; ++mi) {");
    line("TAWA_UNROLL");
    line("  for (int ri = 0; ri < " + std::to_string(v.perThread) + "; ri += 2) {");
    line("    const int row = 64 * mi + tawa::wgmma_acc_row(ri);");
    line("    const int col = tawa::wgmma_acc_col(ri);");
    if (v.rows) line("    if (row >= " + std::to_string(v.rows) + ") continue;  // a padded block: rows past the tile are not stored");
    if (const auto& l = s.layout) {
      line("    tawa::st_shared_pair(" + s.name + " + " + swizzledOffset(*l, "row", "col") + ", " + v.name + "[mi][ri], " + v.name +
           "[mi][ri + 1]);");
    } else {
      line("    tawa::st_shared_pair(" + s.name + " + (row * " + std::to_string(s.cols) + " + col) * " + std::to_string(s.elemBytes) + ", " +
           v.name + "[mi][ri], " + v.name + "[mi][ri + 1]);");
    }
    line("  }");
    line("}");
    // {reduce = "add"} (a tl.atomic_add block-access made a block): the box is added into memory
    // (TMA's reduce-add, or threads' atomicAdd for a tile map), element type f32 or i32.
    const bool reduce = op.hasAttr("reduce");
    const std::string red = reduce ? std::string(op.operand(1)->type().scalar == Scalar::F32 ? "float" : "int32_t") : "";
    if (const TensorMapSpec* tm = tileMap(op.operand(0))) {
      line("tawa::bar_sync(" + std::to_string(region_) + ", 128);  // this warp group has written the staging");
      line((reduce ? "tawa::tile_reduce_add_generic<" + red : "tawa::tile_store_generic<" + std::to_string(byteWidth(tm->elem))) + ", " +
           std::to_string(tm->boxCols) + ", " +
           std::to_string(tm->boxRows) + ">(" + tileMapArgs(*tm) + ", " + coord(op.operand(0), 1, ex(op.operand(3))) + ", " +
           coord(op.operand(0), 0, ex(op.operand(2))) + ", " + sliceCoord(op.operand(0)) + ", " + s.name +
           ", tawa::warpgroup_thread_idx(), 128);");
      --indent_;
      line("}");
      return;
    }
    line("tawa::fence_proxy_async_shared_cta();  // the staging writes, before the TMA engine reads them");
    line("tawa::bar_sync(" + std::to_string(region_) + ", 128);                 // this warp group has written its part (bar 0 is the block's)");
    line("if (tawa::warpgroup_thread_idx() == 0) {");
    const int64_t chunks = s.layout ? s.layout->chunks : 1;
    for (int64_t j = 0; j < chunks; ++j)  // one copy per swizzle chunk
      line("  tawa::" + (reduce ? "cp_reduce_add_async_bulk_tensor_" + std::to_string(map.rank()) + "d_shared_to_global<" + red + ">(&"
                               : "cp_async_bulk_tensor_" + std::to_string(map.rank()) + "d_shared_to_global(&") + map.param + ", " +
           coord(op.operand(0), 1, ex(op.operand(3))) + (j ? " + " + std::to_string(j * s.layout->chunkCols) : "") + ", " +
           coord(op.operand(0), 0, ex(op.operand(2))) + sliceCoords(op.operand(0)) + ", " + s.name +
           (j ? " + " + std::to_string(j * s.layout->chunkBytes) : "") + ");");
    line("  tawa::cp_async_bulk_commit_group();");
    line("  tawa::cp_async_bulk_wait_group_read<0>();  // the staging stays valid until the copy has read it");
    line("}");
    --indent_;
    line("}");
  }

  const Func& f_;
  const EmitOptions& opt_;
  EmitResult res_;
  std::ostringstream out_;
  int indent_ = 0;
  bool single_ = false;
  int counter_ = 0;
  LineDirectives lines_;
  int64_t smemUsed_ = 0;
  std::map<const Value*, int> uses_;
  std::set<const Op*> deferredSums_;                  // row sums left as each thread's part (findDeferredSums)
  std::set<std::pair<const Op*, size_t>> deferredCarried_;  // (loop, carried index) holding such parts
  std::map<const Value*, std::string> names_;
  std::set<std::string> taken_;
  std::map<const Value*, int> descs_;  // make_desc -> index into allMaps_
  struct VecDesc {
    int arg = -1;                      // the pointer argument
    std::vector<const Value*> offset;  // elements the base is moved by (a sum; empty: none)
    const Value* extent = nullptr;     // elements
    const Value* stride = nullptr;     // elements between consecutive entries
  };
  // The elements a 1-D descriptor's base is moved by, in 64 bits (`none` when it is not moved).
  std::string vecOffset(const VecDesc& d, const std::string& none) {
    if (d.offset.empty()) return none;
    std::string sum;
    for (const Value* o : d.offset) sum += (sum.empty() ? "" : " + ") + std::string("static_cast<int64_t>(") + ex(o) + ")";
    return d.offset.size() == 1 ? sum : "(" + sum + ")";
  }
  std::map<const Value*, VecDesc> vecDescs_;  // 1-D make_desc -> its parts
  std::set<const Value*> scalarPtrs_;          // pointer arguments and scalar addptrs that scalar stores and atomics write through
  std::vector<TensorMapSpec> allMaps_;
  std::set<int> transposed_;  // allMaps_ indices of tensor maps built transposed (fp8 B)
  std::set<const Value*> tf32Rings_;  // rings a tf32 wgmma reads
  std::set<const Value*> gatheredDescs_;  // the descriptors of loads of gathered rows (nv.tma_load with a tile of rows)
  std::set<int> gatherMaps_;          // allMaps_ indices of the maps whose loads gather rows (tile maps: copied by threads)
  std::set<int> tf32Maps_;            // allMaps_ indices of the maps copied into them (rounded by the copying threads)
  std::map<std::string, std::vector<std::string>> tileMapArgs_;  // a tile map's parameters (tileMapArgs)
  bool producerGroup_ = false;  // the producer runs on all its 128 threads: they copy tiles TMA cannot take
  // Arefs whose full barrier this consumer warp group waited for with no barrier of the group, nor a
  // wgmma reading the slot, since (a release of such a slot first syncs the group: see MbarArrive).
  std::set<int64_t> unsyncedWaits_;
  bool integerMma_ = false;     // an nv.wgmma of s8/u8 operands: no setmaxnreg (see SetMaxNReg)
  std::map<const Op*, int64_t> atomicOld_;  // a scalar atomic whose old value is read -> its 8 bytes of shared memory
  std::vector<const Op*> atomicOrder_;
  std::map<int, const Op*> deviceMaps_;  // allMaps_ index -> its make_desc, for tile maps addressed in the kernel
  std::map<const Op*, int64_t> laneBytes_;       // an arrive.expect_tx -> the bytes of its phase the threads copy
  std::set<const Op*> tmaOnlyPhases_;            // expect_tx of a phase without tile maps on a barrier the threads also fill
  std::set<const Op*> phaseEnds_;                // the last tile-map load of each phase: the threads arrive after it
  int region_ = 0;  // the warp group being emitted
  std::map<const Value*, Ring> rings_;
  std::vector<const Value*> ringOrder_;
  std::map<const Value*, Bars> bars_;
  std::vector<const Value*> barOrder_;
  std::map<const Op*, Staging> stagings_;
  std::set<const Value*> writtenArgs_;  // readsOnlyUnwritten's: the pointer arguments the kernel writes through
  bool writtenArgsFound_ = false, writesAnywhere_ = false;
  std::map<const Op*, Staging> operandStagings_;  // a tile.dot's B computed in registers: its shared-memory copy
  std::map<const Op*, View> stagedViews_;         // ... and the view its wgmma reads
  std::set<int64_t> lazySlotArefs_;                // arefs whose slot a staged B reads where it is written (makesOnlyStagedB)
  std::vector<const Op*> releasesAfterStaging_;    // their releases, emitted after the staging (stageOperand)
  std::vector<const Op*> operandStagingOrder_;
  std::vector<const Op*> stagingOrder_;
  std::vector<const Op*> regions_;
  std::map<const Value*, Frag> frags_;
  std::map<const Value*, std::pair<std::string, int64_t>> columnSums_;  // emitColumnSums: name, groups of 8 columns
  std::vector<std::vector<Frag>> accumulators_;
  std::map<const Value*, Lazy> lazies_;
  std::map<const Value*, View> views_;
  std::map<const Op*, Private> privates_;
  std::vector<const Op*> privateOrder_;
  bool prologueTile_ = false;  // emitting the prologue: tiles there must stay lazy
  std::set<const Value*> viewCarried_;  // loop arguments that carry a slot index
  std::string gridParams_[3];           // persistent kernels: the logical grid's parameters
  std::map<const Value*, std::array<std::vector<Product>, 2>> shifts_;  // descriptors on a moved base
  std::vector<std::pair<std::string, HostValue>> pendingQuotients_;  // rowQuotient's, for the descriptor being collected
  std::map<const Value*, std::vector<const Value*>> sliceIndex_;        // their slice dimensions' program ids
  // Asynchronous tile.dot: committed wgmma groups not waited for yet, oldest first, each with the
  // register tiles it writes and what runs once it has completed (deferred slot releases).
  struct Group {
    std::vector<Frag> writes;
    std::vector<std::string> then;
    std::set<const Value*> reads;  // the rings (nv.smem_alloc) whose slots its MMAs read
    uint64_t seq = 0;              // when it was issued (seq_)
    bool registerA = false;        // its MMAs read A from registers
    std::string staged;            // the operand staging buffer its MMAs read B from (operandStagings_), if any
  };
  // Register-A MMAs (attention's PV) are waited for after the work that overlaps them (the softmax);
  // ptxas would hoist that wait above the work, since the instructions after it (the rescale of O) need
  // only values computed before it. keepAfterWork stores the newest row vector (the row sums, which
  // need every exponential) to shared memory right before the wait: the wait stays after that store.
  bool keepOrder_ = false;
  int64_t keepOffset_ = 0;
  uint64_t seq_ = 0;
  std::optional<Frag> lastRow_;
  uint64_t lastRowSeq_ = 0;
  std::vector<Group> pending_;
  std::map<const Op*, std::string> releaseVars_;  // mbarrier arrives deferred through a variable set in a tile.if
  std::map<const Value*, Frag> yieldInto_;        // a dot whose result a tile.if yields accumulates into its storage
  // --profile: the scope being timed in the role being emitted (one event per scope instance)
  bool profActive_ = false;
  int64_t profOffset_ = 0;
  struct ProfOpen {
    bool open = false;
    profile::Scope scope = profile::Scope::Compute;
    std::string iter, slot;
    int line = 0;
  } prof_;
  std::vector<std::string> profIter_;   // iteration index of each enclosing loop
  std::vector<bool> profLoopMma_;       // whether that loop's body issues MMAs itself
  bool profAfterLoop_ = false;          // a loop of this role has ended
};

}  // namespace

std::string cScalarType(Scalar s) {
  switch (s) {
    case Scalar::I1: return "bool";
    case Scalar::I8: return "int8_t";
    case Scalar::I16: return "int16_t";
    case Scalar::I32: return "int32_t";
    case Scalar::I64: return "int64_t";
    case Scalar::U8: return "uint8_t";
    case Scalar::U16: return "uint16_t";
    case Scalar::U32: return "uint32_t";
    case Scalar::U64: return "uint64_t";
    case Scalar::F16: return "tawa::f16";
    case Scalar::BF16: return "tawa::bf16";
    case Scalar::F32: return "float";
    case Scalar::F64: return "double";
    case Scalar::F8E4M3:
    case Scalar::F8E5M2: return "";
  }
  return "";
}

const std::vector<std::string>& emitterFaults() {
  static const std::vector<std::string> faults = {"release-before-wait"};
  return faults;
}

std::string LineDirectives::next(const Location& loc) {
  if (!loc.known() || loc.line <= 0 || (file == *loc.file && line == loc.line)) return "";
  file = *loc.file;
  line = loc.line;
  std::string f;
  for (char c : file) f += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return "#line " + std::to_string(line) + " \"" + f + "\"\n";
}

std::array<int64_t, 3> launchGrid(const EmitResult& er, const std::array<int64_t, 3>& logical) {
  if (er.persistentPrograms <= 0) return logical;
  return {std::min(er.persistentPrograms, logical[0] * logical[1] * logical[2]), 1, 1};
}

EmitResult emitCudaKernel(const Module& m, const Func& kernel, const EmitOptions& opt) {
  // One kernel per call; calls to other functions are not emitted yet.
  EmitResult r = Emitter(kernel, opt).run();
  if (r.tensorMaps.empty()) return r;
  // The module as text (parse(print(m)) is m, locations included), for emitting it again with tile maps.
  r.reemit = [text = ir::print(m), name = kernel.name, opt](const std::map<std::string, std::string>& generic,
                                                            const std::set<std::string>& transposed) {
    std::unique_ptr<Module> copy = ir::parseModule(text, "<tawa ir>");
    EmitOptions o = opt;
    for (const auto& [param, why] : generic) o.genericMaps.emplace(param, why);
    o.transposedMaps.insert(transposed.begin(), transposed.end());
    return emitCudaKernel(*copy, *copy->lookup(name), o);
  };
  return r;
}

std::string emitCuda(const Module& m, const Func& kernel, const EmitOptions& opt) { return emitCudaKernel(m, kernel, opt).source; }

}  // namespace tawa::cuda
