#include "backends/exec/Executor.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstring>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "backends/exec/Scheduler.h"
#include "ir/Elementwise.h"
#include "ir/Numerics.h"
#include "profile/Recorder.h"

namespace tawa::exec {

using namespace tawa::ir;
using ir::Block;
using ir::Func;
using ir::Op;
using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

// ---- buffers

Buffer::Buffer(std::string n, Scalar t, std::vector<int64_t> s) : name(std::move(n)), dtype(t), shape(std::move(s)) {
  data.assign(static_cast<size_t>(numel() * ir::byteWidth(dtype)), 0);
}
int64_t Buffer::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}
double Buffer::getFloat(int64_t i) const { return loadFloat(dtype, &data[static_cast<size_t>(i * ir::byteWidth(dtype))]); }
int64_t Buffer::getInt(int64_t i) const { return loadInt(dtype, &data[static_cast<size_t>(i * ir::byteWidth(dtype))]); }
void Buffer::setFloat(int64_t i, double v) { storeFloat(dtype, &data[static_cast<size_t>(i * ir::byteWidth(dtype))], v); }
void Buffer::setInt(int64_t i, int64_t v) { storeInt(dtype, &data[static_cast<size_t>(i * ir::byteWidth(dtype))], v); }
double Buffer::get(int64_t i) const { return ir::isFloat(dtype) ? getFloat(i) : static_cast<double>(getInt(i)); }

namespace {

constexpr int kAddrShift = 40;
constexpr int64_t kOffsetMask = (int64_t{1} << kAddrShift) - 1;

// A runtime value: a scalar is a one-element tile. Floats live in `f`, integers, i1 and pointers
// (virtual addresses) in `i`, a descriptor's base, shape and strides in `d`.
struct Object {
  virtual ~Object() = default;
};
// The completion state of one group of async MMAs (nv.wgmma ... nv.wgmma_commit).
struct MmaToken {
  bool done = false;
  Location issuedAt;
};
struct RV {
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<int64_t> d;
  std::shared_ptr<Object> obj;      // arefs, mbarrier arrays, shared-memory rings
  std::shared_ptr<MmaToken> token;  // set on the result of an async MMA until its group completes
};

// ws level: an aref of depth D. Iteration i uses slot i mod D in round i div D; a slot is full for
// round r once put, and empty for round r + 1 once every consumer group has released it.
struct ArefObj : Object {
  int64_t depth = 1, consumers = 1;
  std::vector<std::vector<RV>> slot;
  std::vector<int64_t> putRound, emptyRound, releases;
  std::vector<std::set<int>> holders;
  std::string name;
};

// nv level: an array of mbarriers with the hardware's phase, arrival and transaction counting.
struct MbarObj : Object {
  struct Bar {
    int64_t pending = 0, tx = 0, phase = 0;  // phase: number of completed phases
    std::set<std::string> arrivedFrom;
  };
  int64_t count = 1, arefId = -1;
  std::string kind, name;
  std::vector<Bar> bars;
};

// nv level: a ring of shared-memory slots.
struct SmemObj : Object {
  int64_t arefId = -1;
  std::vector<RV> slot;
};

// Per-program shadow state of each lowered aref's slots, for race detection: which warp groups
// hold a slot (passed its full barrier, not yet arrived on its empty barrier) and whether its data
// has landed.
struct SlotShadow {
  std::vector<std::set<int>> holders;
  std::vector<bool> full;
};
struct ProgramState {
  std::mutex mu;
  std::map<int64_t, SlotShadow> shadows;
  std::vector<std::string> roles;  // "producer (warp group 0)", ...
  SlotShadow& shadow(int64_t arefId, size_t depth) {
    auto& sh = shadows[arefId];
    if (sh.full.size() < depth) sh.holders.resize(depth), sh.full.resize(depth, false);
    return sh;
  }
};

bool floatElems(const Type& t) { return t.elemIsFloat(); }

// Slot numbering of every value of a function, so that an invocation's environment is a vector.
struct Plan {
  std::unordered_map<const Value*, int> slot;
  void number(const Block& b) {
    for (auto& a : b.args()) slot.emplace(a.get(), static_cast<int>(slot.size()));
    for (auto& op : b.ops()) {
      for (auto& r : op->results()) slot.emplace(r.get(), static_cast<int>(slot.size()));
      for (auto& reg : op->regions()) number(*reg);
    }
  }
};

class Interp {
 public:
  Interp(const ir::Module& m, std::vector<Buffer>& bufs, const std::unordered_map<const Func*, Plan>& plans,
         std::array<int64_t, 3> pid, std::array<int64_t, 3> grid, uint64_t seed)
      : m_(m), bufs_(bufs), plans_(plans), pid_(pid), grid_(grid), seed_(seed) {}

  std::vector<RV> call(const Func& f, std::vector<RV> args) {
    Frame fr{&plans_.at(&f), std::vector<RV>(plans_.at(&f).slot.size())};
    for (size_t k = 0; k < args.size(); ++k) fr.env[static_cast<size_t>(fr.plan->slot.at(f.arg(k)))] = std::move(args[k]);
    std::vector<RV> out;
    runBlock(f.body, fr, out);
    return out;
  }
  void profileInto(profile::ProgramRecorder* p) { prof_ = p; }

 private:
  struct Frame {
    const Plan* plan;
    std::vector<RV> env;
    RV& at(const Value* v) { return env[static_cast<size_t>(plan->slot.at(v))]; }
  };

  [[noreturn]] void fail(const Op& op, const std::string& msg) {
    throw UserError(op.loc(), msg + " (in '" + std::string(op.name()) + "', program (" + std::to_string(pid_[0]) + ", " +
                                  std::to_string(pid_[1]) + ", " + std::to_string(pid_[2]) + "))");
  }

  // Runs a block; the terminator's operand values are returned in `out`.
  const Op* runBlock(const Block& b, Frame& fr, std::vector<RV>& out) {
    for (auto it = b.ops().begin(); it != b.ops().end(); ++it) {
      const Op& op = **it;
      if (op.kind() == OpKind::WgRegion) {
        std::vector<const Op*> groups;
        for (; it != b.ops().end() && (*it)->kind() == OpKind::WgRegion; ++it) groups.push_back(it->get());
        --it;
        runWarpGroups(groups, fr);
        continue;
      }
      if (ir::isTerminator(op.kind())) {
        // Values defined in this block are dead once it ends, so they move out instead of copying
        // (a loop body's tiles are handed to the next iteration without a copy).
        out.clear();
        for (size_t k = 0; k < op.numOperands(); ++k) {
          const Value* v = op.operand(k);
          bool local = v->definingOp() ? v->definingOp()->parent == &b : v->ownerBlock() == &b;
          bool repeated = std::find(op.operands.begin(), op.operands.begin() + static_cast<long>(k), v) !=
                          op.operands.begin() + static_cast<long>(k);
          out.push_back(local && !repeated ? std::move(fr.at(v)) : fr.at(v));
        }
        return &op;
      }
      exec(op, fr);
    }
    return nullptr;
  }

  // ---- element access helpers
  static std::vector<int64_t> strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
    return s;
  }

  // Resolves a virtual address to (buffer, byte offset); fails with a located error when the
  // access is outside every buffer or misaligned.
  std::pair<Buffer*, size_t> resolve(const Op& op, int64_t addr, Scalar elem, const char* what) {
    int64_t b = (addr >> kAddrShift) - 1, off = addr & kOffsetMask;
    if (off >= (int64_t{1} << (kAddrShift - 1))) ++b, off -= int64_t{1} << kAddrShift;  // negative offset
    int esize = ir::byteWidth(elem);
    if (b < 0 || b >= static_cast<int64_t>(bufs_.size()))
      fail(op, std::string("out-of-bounds ") + what + ": the address points into no buffer");
    Buffer& buf = bufs_[static_cast<size_t>(b)];
    if (off % esize != 0)
      fail(op, std::string("misaligned ") + what + " of buffer '" + buf.name + "' at byte offset " + std::to_string(off));
    if (off < 0 || off >= static_cast<int64_t>(buf.data.size()))
      fail(op, std::string("out-of-bounds ") + what + ": element " + std::to_string(off / esize) + " of buffer '" +
                   buf.name + "', which holds " + std::to_string(buf.numel()) + " elements");
    return {&buf, static_cast<size_t>(off)};
  }

  // Element access through a pointer; the common case (an in-bounds, aligned address in a
  // non-negative offset range) is checked inline, everything else goes through resolve().
  uint8_t* elemPtr(const Op& op, int64_t addr, Scalar elem, const char* what) {
    int64_t b = (addr >> kAddrShift) - 1, off = addr & kOffsetMask, es = ir::byteWidth(elem);
    if (b >= 0 && b < static_cast<int64_t>(bufs_.size()) && off % es == 0 &&
        off < static_cast<int64_t>(bufs_[static_cast<size_t>(b)].data.size()))
      return &bufs_[static_cast<size_t>(b)].data[static_cast<size_t>(off)];
    auto [buf, o] = resolve(op, addr, elem, what);
    return &buf->data[o];
  }
  void readElem(const Op& op, RV& r, size_t k, int64_t addr, Scalar elem, bool isF) {
    const uint8_t* p = elemPtr(op, addr, elem, "load");
    if (isF) r.f[k] = loadFloat(elem, p);
    else r.i[k] = loadInt(elem, p);
  }
  // One element of a tile.atomic: read, combine, write under the element's lock (the grid's programs
  // run in parallel; a lock per address stripe makes the read-modify-write atomic among them).
  // Returns the old value in r[k]. Floats: add rounds once to the element type; max and min
  // propagate NaN as tl.maximum does; cas compares the stored bits.
  // The lock of an atomic update of the element at p (tile.atomic, a reduce-add block store).
  static std::mutex& atomicStripe(const uint8_t* p) {
    static std::array<std::mutex, 64> stripes;
    return stripes[(reinterpret_cast<uintptr_t>(p) >> 3) % stripes.size()];
  }
  void atomicElem(const Op& op, const std::string& kind, RV& r, size_t k, int64_t addr, Scalar elem, bool isF, const RV& v,
                  const RV* cmp) {
    uint8_t* p = elemPtr(op, addr, elem, "atomic");
    std::lock_guard<std::mutex> lock(atomicStripe(p));
    if (isF) {
      const double old = loadFloat(elem, p);
      r.f[k] = old;
      if (kind == "cas") {
        uint8_t want[8] = {};
        storeFloat(elem, want, cmp->f[k]);
        if (std::memcmp(want, p, static_cast<size_t>(ir::byteWidth(elem))) != 0) return;
      }
      storeFloat(elem, p, combineFloat(kind, old, v.f[k], true));
      return;
    }
    const int64_t old = loadInt(elem, p);
    r.i[k] = old;
    if (kind == "cas" && old != loadIntOf(elem, cmp->i[k])) return;
    storeInt(elem, p, combineInt(kind, elem, old, v.i[k]));
  }
  // The one combining rule of tile.reduce, tile.scan and tile.atomic (kinds sum or add, prod, max,
  // min, and, or, xor; xchg and cas take the new value), on the values the executor computes in:
  // floats in double, max and min ignoring a NaN operand as tl.maximum does by default, or propagating
  // it (the caller rounds to the element type); integers in 64 bits, wrapping (the caller wraps to the
  // element type).
  static double combineFloat(const std::string& kind, double a, double b, bool propagateNan) {
    if (kind == "sum" || kind == "add") return a + b;
    if (kind == "prod") return a * b;
    if (kind == "xchg" || kind == "cas") return b;
    return kind == "max" ? floatMax(a, b, propagateNan) : floatMin(a, b, propagateNan);
  }
  static int64_t combineInt(const std::string& kind, Scalar s, int64_t a, int64_t b) {
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    if (kind == "sum" || kind == "add") return static_cast<int64_t>(ua + ub);
    if (kind == "prod") return static_cast<int64_t>(ua * ub);
    if (kind == "max") return lessThan(s, a, b) ? b : a;  // unsigned types order as unsigned
    if (kind == "min") return lessThan(s, b, a) ? b : a;
    if (kind == "and") return a & b;
    if (kind == "or") return a | b;
    if (kind == "xor") return a ^ b;
    return b;  // xchg, cas
  }
  // An integer as the element type holds it (the compared value of a cas, wrapped like a store).
  static int64_t loadIntOf(Scalar elem, int64_t x) {
    uint8_t b[8] = {};
    storeInt(elem, b, x);
    return loadInt(elem, b);
  }
  void writeElem(const Op& op, const RV& v, size_t k, int64_t addr, Scalar elem, bool isF) {
    uint8_t* p = elemPtr(op, addr, elem, "store");
    if (isF) storeFloat(elem, p, v.f[k]);
    else storeInt(elem, p, v.i[k]);
  }

  // A block access through a tensor descriptor, with TMA semantics: out-of-bounds elements read
  // as zero and are not written. `v` is the value stored (null for a load).
  // `gathered` (a load through a 2-D descriptor with a tile of rows): row i of the block is row
  // (*gathered)[i] of the tensor, off[0] unused.
  RV blockAccess(const Op& op, const RV& d, const Type& dt, const std::vector<int64_t>& off, const RV* v,
                 const std::vector<int64_t>* gathered = nullptr) {
    bool store = v != nullptr;
    const bool reduce = store && op.hasAttr("reduce");
    size_t rank = dt.shape.size();
    Type tile = Type::tileOf(dt.shape, Type::scalarOf(dt.scalar));
    bool isF = floatElems(tile);
    int64_t es = ir::byteWidth(dt.scalar);
    RV r;
    if (!store) r = sized(tile);
    if (auto o = op.attrs.find("other"); !store && o != op.attrs.end()) {  // a 1-D load's `other` (BlockAccess)
      if (isF) std::fill(r.f.begin(), r.f.end(), roundFloat(dt.scalar, std::get<double>(o->second)));
      else std::fill(r.i.begin(), r.i.end(), wrapInt(dt.scalar, std::get<int64_t>(o->second)));
    }
    // The descriptor's base decides the buffer; every in-bounds element must lie inside it.
    auto [buf, baseOff] = resolve(op, d.d[0], dt.scalar, store ? "store" : "load");
    const int64_t size = static_cast<int64_t>(buf->data.size());
    // Row by row: the in-bounds part of each innermost row is one strided run of elements.
    const int64_t cols = dt.shape[rank - 1], colStride = d.d[2 * rank] * es;
    const int64_t c0 = std::clamp<int64_t>(-off[rank - 1], 0, cols);
    const int64_t c1 = std::clamp<int64_t>(d.d[rank] - off[rank - 1], c0, cols);
    const int64_t rows = tile.numel() / cols;
    std::vector<int64_t> idx(rank, 0);
    for (int64_t row = 0; row < rows; ++row) {
      bool inside = c1 > c0;
      int64_t elem = 0;
      for (size_t a = 0; a + 1 < rank; ++a) {
        int64_t g = gathered && a == 0 ? (*gathered)[static_cast<size_t>(idx[0])] : off[a] + idx[a];
        if (g < 0 || g >= d.d[1 + a]) inside = false;
        elem += g * d.d[1 + rank + a];
      }
      for (size_t a = rank - 1; a-- > 0;) {  // next row, row-major
        if (++idx[a] < dt.shape[a]) break;
        idx[a] = 0;
      }
      if (!inside) continue;  // TMA semantics: zero fill on load, clipped on store
      elem += (off[rank - 1] + c0) * d.d[2 * rank];
      int64_t first = static_cast<int64_t>(baseOff) + elem * es, last = first + (c1 - c0 - 1) * colStride;
      for (int64_t byte : {first, last})  // the run is linear: its ends bound it
        if (byte < 0 || byte >= size) resolve(op, d.d[0] + (byte - static_cast<int64_t>(baseOff)), dt.scalar, store ? "store" : "load");
      uint8_t* p = &buf->data[static_cast<size_t>(first)];
      size_t k0 = static_cast<size_t>(row * cols + c0);
      if (store && reduce) {  // {reduce = "add"}: each element added atomically, as tile.atomic adds it
        for (int64_t c = 0; c < c1 - c0; ++c, p += colStride) {
          std::lock_guard<std::mutex> lock(atomicStripe(p));
          const size_t k = k0 + static_cast<size_t>(c);
          if (isF) storeFloat(dt.scalar, p, combineFloat("add", loadFloat(dt.scalar, p), v->f[k], true));
          else storeInt(dt.scalar, p, combineInt("add", dt.scalar, loadInt(dt.scalar, p), v->i[k]));
        }
      } else if (store) {
        for (int64_t c = 0; c < c1 - c0; ++c, p += colStride) {
          if (isF) storeFloat(dt.scalar, p, v->f[k0 + static_cast<size_t>(c)]);
          else storeInt(dt.scalar, p, v->i[k0 + static_cast<size_t>(c)]);
        }
      } else if (isF) {
        loadFloats(dt.scalar, p, colStride, c1 - c0, &r.f[k0]);
      } else {
        for (int64_t c = 0; c < c1 - c0; ++c, p += colStride) r.i[k0 + static_cast<size_t>(c)] = loadInt(dt.scalar, p);
      }
    }
    return r;
  }
  RV loadBlock(const Op& op, const RV& d, const Type& dt, const std::vector<int64_t>& off,
               const std::vector<int64_t>* gathered = nullptr) {
    return blockAccess(op, d, dt, off, nullptr, gathered);
  }
  void storeBlock(const Op& op, const RV& d, const Type& dt, const std::vector<int64_t>& off, const RV& v) {
    blockAccess(op, d, dt, off, &v);
  }

  // C = acc + A B with f32 accumulation (Eigen's float GEMM); A is M x K, B is K x N, the result
  // has op's result type. f32 inputs are rounded to tf32 when the op asks for it, as tensor cores do.
  RV matmul(const Op& op, const RV& a, const RV& b, const RV* acc, size_t kdim) {
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Type& rt = op.result()->type();
    auto M = static_cast<int64_t>(rt.shape[0]), N = static_cast<int64_t>(rt.shape[1]), K = static_cast<int64_t>(kdim);
    if (!floatElems(rt)) {  // int8 x int8 -> int32: exact products, the sum wrapping as the MMA's s32 does
      RV r;
      r.i.assign(static_cast<size_t>(M * N), 0);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          uint64_t s = acc ? static_cast<uint64_t>(acc->i[static_cast<size_t>(m * N + n)]) : 0;
          for (int64_t k = 0; k < K; ++k)
            s += static_cast<uint64_t>(a.i[static_cast<size_t>(m * K + k)] * b.i[static_cast<size_t>(k * N + n)]);
          r.i[static_cast<size_t>(m * N + n)] = wrapInt(rt.scalar, static_cast<int64_t>(s));
        }
      return r;
    }
    bool tf32 = op.hasAttr("input_precision") && op.strAttr("input_precision") == "tf32";
    Mat A(M, K), B(K, N), C(M, N);
    for (int64_t k = 0; k < M * K; ++k) A.data()[k] = static_cast<float>(tf32 ? roundTf32(a.f[k]) : a.f[k]);
    for (int64_t k = 0; k < K * N; ++k) B.data()[k] = static_cast<float>(tf32 ? roundTf32(b.f[k]) : b.f[k]);
    if (acc) {
      for (int64_t k = 0; k < M * N; ++k) C.data()[k] = static_cast<float>(acc->f[k]);
    } else {
      C.setZero();
    }
    C.noalias() += A * B;  // f32 accumulation
    RV r;
    r.f.resize(static_cast<size_t>(M * N));
    if (rt.scalar == Scalar::F32) std::copy(C.data(), C.data() + M * N, r.f.begin());  // exact
    else
      for (int64_t k = 0; k < M * N; ++k) r.f[k] = roundFloat(rt.scalar, C.data()[k]);
    return r;
  }

  // A tile of type rt whose element at multi-index x is a's element at sum_d x[d] * srcStride[d].
  static RV gather(const RV& a, const Type& rt, const std::vector<int64_t>& srcStride, int64_t srcOffset = 0) {
    auto rs = strides(rt.shape);
    RV r = sized(rt);
    for (int64_t k = 0, n = rt.numel(); k < n; ++k) {
      int64_t src = srcOffset, rem = k;
      for (int d = 0; d < rt.rank(); ++d) {
        src += (rem / rs[d]) * srcStride[static_cast<size_t>(d)];
        rem %= rs[d];
      }
      if (!a.f.empty()) r.f[k] = a.f[src];
      else r.i[k] = a.i[src];
    }
    return r;
  }
  static RV intScalar(int64_t v) {
    RV r;
    r.i.push_back(v);
    return r;
  }
  static RV sized(const Type& t) {
    RV r;
    if (floatElems(t)) r.f.resize(static_cast<size_t>(t.numel()));
    else r.i.resize(static_cast<size_t>(t.numel()));
    return r;
  }

  RV binary(const Op& op, Frame& fr) {
    const RV &a = fr.at(op.operand(0)), &b = fr.at(op.operand(1));
    const Type& t = op.operand(0)->type();
    RV r;
    if (floatElems(t)) {
      r.f.resize(a.f.size());
      const bool prop = propagatesNan(op);
      for (size_t k = 0; k < a.f.size(); ++k) r.f[k] = evalFloatBinary(op.kind(), t.scalar, a.f[k], b.f[k], prop);
    } else {
      r.i.resize(a.i.size());
      for (size_t k = 0; k < a.i.size(); ++k) r.i[k] = evalIntBinary(op.kind(), t.scalar, a.i[k], b.i[k]);
    }
    return r;
  }
  RV unary(const Op& op, Frame& fr) {
    const RV& a = fr.at(op.operand(0));
    const Type& t = op.operand(0)->type();
    RV r;
    if (floatElems(t)) {
      r.f.resize(a.f.size());
      for (size_t k = 0; k < a.f.size(); ++k) r.f[k] = evalFloatUnary(op.kind(), t.scalar, a.f[k]);
    } else {
      r.i.resize(a.i.size());
      for (size_t k = 0; k < a.i.size(); ++k) r.i[k] = evalIntUnary(op.kind(), t.scalar, a.i[k]);
    }
    return r;
  }

  RV math(const Op& op, Frame& fr) {
    const RV& a = fr.at(op.operand(0));
    const RV* b = op.numOperands() > 1 ? &fr.at(op.operand(1)) : nullptr;
    const RV* c = op.numOperands() > 2 ? &fr.at(op.operand(2)) : nullptr;
    const MathFn& f = verifiedMathFn(op);  // looked up once, not per element
    const Scalar s = op.result()->type().scalar;
    RV r;
    r.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k) r.f[k] = evalMath(f, s, a.f[k], b ? b->f[k] : 0.0, c ? c->f[k] : 0.0);
    return r;
  }

  std::string who() const {
    std::string w = ps_ && self_ >= 0 ? ps_->roles[static_cast<size_t>(self_)] : std::string("the kernel");
    if (iter_ >= 0) w += " at iteration " + std::to_string(iter_);
    return w;
  }

  // Runs a function's warp-group regions as concurrent threads under a seeded scheduler.
  void runWarpGroups(const std::vector<const Op*>& groups, Frame& fr) {
    Scheduler sched(seed_ ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(1 + pid_[0] + 4096 * (pid_[1] + 4096 * pid_[2]))));
    ProgramState ps;
    for (size_t g = 0; g < groups.size(); ++g)
      ps.roles.push_back(groups[g]->strAttr("role") + " (warp group " + std::to_string(g) + ")");
    std::vector<std::function<void(int)>> bodies;
    if (prof_) {
      std::vector<std::string> roles;
      for (auto* g : groups) roles.push_back(g->strAttr("role"));
      prof_->beginGroups(roles);
    }
    for (size_t g = 0; g < groups.size(); ++g)
      bodies.push_back([&, g](int self) {
        Interp sub(m_, bufs_, plans_, pid_, grid_, seed_);
        sub.sched_ = &sched;
        sub.self_ = self;
        sub.ps_ = &ps;
        sub.prof_ = prof_;
        std::vector<RV> out;
        sub.runBlock(*groups[g]->region(0), fr, out);
        if (!sub.groups_.empty() || sub.openGroup_)
          sub.fail(*groups[g], ps.roles[static_cast<size_t>(self)] + " ended with async MMAs in flight (missing nv.wgmma_wait)");
        if (prof_) prof_->endGroup(self);
      });
    sched.run(bodies);
  }

  template <class T>
  T& object(const Op& op, Frame& fr, size_t k) {
    auto* o = dynamic_cast<T*>(fr.at(op.operand(k)).obj.get());
    TAWA_ASSERT(o != nullptr, "verified operand holds its object");
    return *o;
  }
  void sync(const Op& op, std::function<bool()> ready, std::function<std::string()> describe) {
    TAWA_ASSERT(sched_ != nullptr, "verified synchronization runs inside a warp group");
    std::string me = who();
    std::string at = op.loc().str();
    sched_->wait(self_, std::move(ready), [me, at, d = std::move(describe)] { return me + ": " + d() + " (" + at + ")"; },
                 op.loc());
  }
  static MbarObj::Bar& barAt(MbarObj& m, int64_t idx) { return m.bars[static_cast<size_t>(idx)]; }
  void checkIndex(const Op& op, int64_t idx, size_t n, const char* what) {
    if (idx < 0 || idx >= static_cast<int64_t>(n))
      fail(op, who() + ": out-of-bounds " + what + " index " + std::to_string(idx) + " (the ring has " + std::to_string(n) +
                   "; slot indices are i mod D)");
  }
  // One arrival (and, for expect-tx, expected bytes) on a barrier; completes the phase when both
  // the arrivals and the transaction bytes are done.
  static void completeIfDone(MbarObj::Bar& b, int64_t count) {
    if (b.pending == 0 && b.tx == 0) {
      ++b.phase;
      b.pending = count;
      b.arrivedFrom.clear();
    }
  }

  // Warp-specialized and nv-level ops; returns false for the ordinary tile ops.
  bool execSync(const Op& op, Frame& fr) {
    auto set = [&](RV v) { fr.at(op.result()) = std::move(v); };
    switch (op.kind()) {
      case OpKind::ArefCreate: {
        auto a = std::make_shared<ArefObj>();
        const Type& t = op.result()->type();
        a->depth = t.shape[0];
        a->consumers = op.hasAttr("consumers") ? op.intAttr("consumers") : 1;
        auto d = static_cast<size_t>(a->depth);
        a->slot.resize(d);
        a->putRound.assign(d, 0), a->emptyRound.assign(d, 0), a->releases.assign(d, 0), a->holders.resize(d);
        a->name = "%" + op.result()->nameHint;
        set(RV{{}, {}, {}, a, nullptr});
        return true;
      }
      case OpKind::ArefPut:
      case OpKind::ArefGet:
      case OpKind::ArefConsumed: {
        auto& a = object<ArefObj>(op, fr, 0);
        int64_t i = fr.at(op.operand(1)).i[0];
        if (i < 0) fail(op, "negative aref iteration index " + std::to_string(i));
        auto s = static_cast<size_t>(i % a.depth);
        int64_t round = i / a.depth;
        std::string where = "slot " + std::to_string(s) + " of aref " + a.name + " (round " + std::to_string(round) + ")";
        if (op.kind() == OpKind::ArefPut) {
          sync(op, [&a, s, round] { return a.emptyRound[s] == round; },
               [where] { return "aref.put waits for " + where + " to be empty; aref.consumed in the consumer releases it"; });
          a.slot[s].clear();
          for (size_t k = 2; k < op.numOperands(); ++k) a.slot[s].push_back(fr.at(op.operand(k)));
          a.putRound[s] = round + 1;
        } else if (op.kind() == OpKind::ArefGet) {
          sync(op, [&a, s, round] { return a.putRound[s] == round + 1 && a.emptyRound[s] == round; },
               [where] { return "aref.get waits for " + where + " to be full; aref.put in the producer fills it"; });
          a.holders[s].insert(self_);
          for (size_t k = 0; k < op.numResults(); ++k) fr.at(op.result(k)) = a.slot[s][k];
        } else {
          if (!a.holders[s].count(self_) || a.putRound[s] != round + 1)
            fail(op, who() + " releases " + where + ", which it does not hold");
          a.holders[s].erase(self_);
          if (++a.releases[s] == a.consumers) a.releases[s] = 0, a.emptyRound[s] = round + 1;
          sched_->yield(self_);
        }
        return true;
      }
      case OpKind::WgRegion:
        TAWA_ASSERT(false, "runBlock runs warp-group regions");
      case OpKind::SmemAlloc: {
        auto r = std::make_shared<SmemObj>();
        r->arefId = op.hasAttr("aref") ? op.intAttr("aref") : -1;
        r->slot.resize(static_cast<size_t>(op.result()->type().shape[0]));
        set(RV{{}, {}, {}, r, nullptr});
        return true;
      }
      case OpKind::MbarInit: {
        auto m = std::make_shared<MbarObj>();
        m->count = op.intAttr("count");
        m->arefId = op.hasAttr("aref") ? op.intAttr("aref") : -1;
        m->kind = op.hasAttr("kind") ? op.strAttr("kind") : "";
        m->name = "%" + op.result()->nameHint;
        m->bars.resize(static_cast<size_t>(op.result()->type().shape[0]));
        for (auto& b : m->bars) b.pending = m->count;
        set(RV{{}, {}, {}, m, nullptr});
        return true;
      }
      case OpKind::MbarArrive:
      case OpKind::MbarArriveExpectTx: {
        auto& m = object<MbarObj>(op, fr, 0);
        int64_t idx = fr.at(op.operand(1)).i[0];
        checkIndex(op, idx, m.bars.size(), "mbarrier");
        if (m.kind == "empty" && ps_) {  // a consumer releases its slot
          std::lock_guard<std::mutex> lock(ps_->mu);
          auto& sh = ps_->shadow(m.arefId, m.bars.size());
          if (!sh.holders[static_cast<size_t>(idx)].count(self_))
            fail(op, who() + " releases slot " + std::to_string(idx) + " of " + m.name + ", which it does not hold");
          for (auto& r : mmaReads_)
            if (r.arefId == m.arefId && r.slot == idx && !r.token->done)
              fail(op, who() + " releases slot " + std::to_string(idx) + " while the async MMA issued at " +
                           r.token->issuedAt.str() + " still reads it (release only after nv.wgmma_wait)");
          sh.holders[static_cast<size_t>(idx)].erase(self_);
        }
        auto& b = barAt(m, idx);
        if (op.kind() == OpKind::MbarArriveExpectTx) b.tx += op.intAttr("bytes");
        --b.pending;
        b.arrivedFrom.insert(ps_ ? ps_->roles[static_cast<size_t>(self_)] : "?");
        int64_t phase = b.phase;
        completeIfDone(b, m.count);
        if (prof_) prof_->arrive(self_, op, iter_, &m, idx, b.phase != phase, m.kind);
        sched_->yield(self_);
        return true;
      }
      case OpKind::MbarWait: {
        auto& m = object<MbarObj>(op, fr, 0);
        int64_t idx = fr.at(op.operand(1)).i[0], parity = fr.at(op.operand(2)).i[0] & 1;
        checkIndex(op, idx, m.bars.size(), "mbarrier");
        auto& b = barAt(m, idx);
        std::string what = m.kind == "full"  ? "the producer's expect-tx arrival and its TMA copies landing"
                           : m.kind == "empty" ? "the consumers' releases (nv.mbarrier_arrive)"
                                               : "arrivals";
        sync(op, [&b, parity] { return (b.phase & 1) != parity; },
             [&b, &m, idx, parity, what, round = iter_ < 0 ? -1 : iter_ / static_cast<int64_t>(m.bars.size())] {
               std::string d = "waits on " + m.name + "[" + std::to_string(idx) + "] for the phase of parity " + std::to_string(parity) +
                               " to complete (completed phases: " + std::to_string(b.phase) + ", arrivals still expected: " +
                               std::to_string(b.pending) + " of " + std::to_string(m.count) + ", transaction bytes outstanding: " +
                               std::to_string(b.tx) + "); it completes with " + what;
               if (m.kind == "empty" && round >= 0 && parity == (round & 1))
                 d += "; but in round " + std::to_string(round) + " a producer must wait on empty with the phase inverted "
                      "(parity (i div D) mod 2 xor 1), so this wait is one phase behind";
               return d;
             });
        if (m.kind == "full" && ps_) {
          std::lock_guard<std::mutex> lock(ps_->mu);
          ps_->shadow(m.arefId, m.bars.size()).holders[static_cast<size_t>(idx)].insert(self_);
        }
        if (prof_) prof_->wait(self_, op, iter_, &m, idx, m.kind);
        return true;
      }
      case OpKind::TmaLoad: {
        const Type& dt = op.operand(0)->type();
        RV desc = fr.at(op.operand(0));
        auto& ring = object<SmemObj>(op, fr, 1);
        int64_t slot = fr.at(op.operand(2)).i[0];
        auto& m = object<MbarObj>(op, fr, 3);
        checkIndex(op, slot, ring.slot.size(), "shared-memory slot");
        checkIndex(op, slot, m.bars.size(), "mbarrier");
        std::vector<int64_t> off;
        const bool gather = op.operand(4)->type().isTile();  // gathered rows: their values, read now
        std::vector<int64_t> rows = gather ? fr.at(op.operand(4)).i : std::vector<int64_t>{};
        for (size_t k = 4; k < op.numOperands(); ++k) off.push_back(gather && k == 4 ? 0 : fr.at(op.operand(k)).i[0]);
        {
          std::lock_guard<std::mutex> lock(ps_->mu);
          auto& sh = ps_->shadow(ring.arefId, ring.slot.size());
          auto& holders = sh.holders[static_cast<size_t>(slot)];
          if (!holders.empty())
            fail(op, who() + " overwrites slot " + std::to_string(slot) + " while " + ps_->roles[static_cast<size_t>(*holders.begin())] +
                         " still holds it (the copy must wait for the slot's empty barrier)");
          sh.full[static_cast<size_t>(slot)] = false;
        }
        int64_t bytes = Type::tileOf(dt.shape, Type::scalarOf(dt.scalar)).numel() * ir::byteWidth(dt.scalar);
        SmemObj* r = &ring;
        MbarObj* bar = &m;
        ProgramState* ps = ps_;
        profile::ProgramRecorder* prof = prof_;
        double landsAt = prof ? prof->tmaLoad(self_, op, iter_, slot) : 0;
        // The copy lands later, possibly after this warp group has finished: it owns its context.
        auto ctx = std::make_shared<Interp>(m_, bufs_, plans_, pid_, grid_, seed_);
        ctx->ps_ = ps_, ctx->self_ = self_, ctx->iter_ = iter_;
        sched_->post([ctx, &op, desc, dt, off, rows, gather, r, bar, slot, bytes, ps, prof, landsAt] {
          r->slot[static_cast<size_t>(slot)] = ctx->loadBlock(op, desc, dt, off, gather ? &rows : nullptr);
          {
            std::lock_guard<std::mutex> lock(ps->mu);
            ps->shadow(r->arefId, r->slot.size()).full[static_cast<size_t>(slot)] = true;
          }
          auto& b = bar->bars[static_cast<size_t>(slot)];
          b.tx -= bytes;
          if (b.tx < 0)
            ctx->fail(op, "transaction-count underflow on " + bar->name + "[" + std::to_string(slot) + "]: the TMA copy delivered " +
                         std::to_string(bytes) + " bytes that no arrive.expect_tx announced");
          int64_t phase = b.phase;
          completeIfDone(b, bar->count);
          if (prof) prof->landed(bar, slot, landsAt, b.phase != phase);
        });
        sched_->yield(self_);
        return true;
      }
      case OpKind::TmaStore: {
        std::vector<int64_t> off;
        for (size_t k = 2; k < op.numOperands(); ++k) off.push_back(fr.at(op.operand(k)).i[0]);
        storeBlock(op, fr.at(op.operand(0)), op.operand(0)->type(), off, fr.at(op.operand(1)));
        return true;
      }
      case OpKind::SmemLoad: {
        auto& ring = object<SmemObj>(op, fr, 0);
        int64_t slot = fr.at(op.operand(1)).i[0];
        checkSlotFull(op, ring, slot);
        set(ring.slot[static_cast<size_t>(slot)]);
        return true;
      }
      case OpKind::Wgmma: {
        auto& ra = object<SmemObj>(op, fr, 0);
        auto& rb = object<SmemObj>(op, fr, 2);
        int64_t sa = fr.at(op.operand(1)).i[0], sb = fr.at(op.operand(3)).i[0];
        checkSlotFull(op, ra, sa);
        checkSlotFull(op, rb, sb);
        // Computed at issue from the slots' present contents; the result stays invisible until the
        // group completes, and releasing a slot it reads before then is reported as a race.
        // {trans_a} / {trans_b}: the operand is the transpose of its slot's tile.
        auto operand = [&](const RV& slotValue, size_t ring, const char* attr) {
          if (!op.hasAttr(attr) || !std::get<bool>(op.attrs.at(attr))) return slotValue;
          const Type st = op.operand(ring)->type().slotType();
          return gather(slotValue, st.withShape({st.shape[1], st.shape[0]}), {1, st.shape[1]});
        };
        const RV aOp = operand(ra.slot[static_cast<size_t>(sa)], 0, "trans_a");
        const RV bOp = operand(rb.slot[static_cast<size_t>(sb)], 2, "trans_b");
        const size_t aElems = aOp.f.empty() ? aOp.i.size() : aOp.f.size();  // integer slots hold .i
        RV r = matmul(op, aOp, bOp, &fr.at(op.operand(4)), aElems / static_cast<size_t>(op.result()->type().shape[0]));
        if (!openGroup_) openGroup_ = std::make_shared<MmaToken>(MmaToken{false, op.loc()});
        r.token = openGroup_;
        mmaReads_.push_back({ra.arefId, sa, openGroup_});
        mmaReads_.push_back({rb.arefId, sb, openGroup_});
        set(std::move(r));
        return true;
      }
      case OpKind::WgmmaCommit:
        if (openGroup_) groups_.push_back(std::move(openGroup_));
        openGroup_ = nullptr;
        return true;
      case OpKind::WgmmaWait: {
        auto keep = static_cast<size_t>(op.intAttr("pending"));
        while (groups_.size() > keep) {
          groups_.front()->done = true;
          groups_.pop_front();
        }
        std::erase_if(mmaReads_, [](const MmaRead& r) { return r.token->done; });
        return true;
      }
      case OpKind::FenceProxyAsync:
      case OpKind::SetMaxNReg:
        return true;  // ordering and register budgets are checked by the verifier and the emulator
      default:
        return false;
    }
  }

  // Times an op on the profile's cost model; barrier waits and arrivals and TMA loads are timed
  // where they complete.
  void profileOp(const Op& op, Frame& fr) {
    switch (op.kind()) {
      case OpKind::MbarWait: case OpKind::MbarArrive: case OpKind::MbarArriveExpectTx: case OpKind::TmaLoad:
        return;
      case OpKind::Wgmma: case OpKind::SmemLoad:
        prof_->op(self_, op, iter_, fr.at(op.operand(1)).i[0]);
        return;
      default:
        prof_->op(self_, op, iter_, -1);
    }
  }

  void checkSlotFull(const Op& op, SmemObj& ring, int64_t slot) {
    checkIndex(op, slot, ring.slot.size(), "shared-memory slot");
    std::lock_guard<std::mutex> lock(ps_->mu);
    auto& sh = ps_->shadow(ring.arefId, ring.slot.size());
    if (!sh.full[static_cast<size_t>(slot)])
      fail(op, who() + " reads slot " + std::to_string(slot) + " before it is full (its TMA copy has not landed)");
    if (!sh.holders[static_cast<size_t>(slot)].count(self_))
      fail(op, who() + " reads slot " + std::to_string(slot) + " without holding it (no wait on its full barrier)");
  }

  void exec(const Op& op, Frame& fr) {
    auto set = [&](RV v) { fr.at(op.result()) = std::move(v); };
    for (size_t k = 0; k < op.numOperands(); ++k) {
      const RV& v = fr.at(op.operand(k));
      if (v.token && !v.token->done && !(op.kind() == OpKind::Wgmma && k == 4))
        fail(op, "reads the result of the async MMA issued at " + v.token->issuedAt.str() +
                     " before nv.wgmma_wait completed it");
    }
    if (prof_ && self_ >= 0) profileOp(op, fr);
    if (execSync(op, fr)) return;
    switch (op.kind()) {
      case OpKind::Return:
      case OpKind::Yield:
      case OpKind::Condition:
        TAWA_ASSERT(false, "terminators are handled by runBlock");
      case OpKind::ArefCreate: case OpKind::ArefPut: case OpKind::ArefGet: case OpKind::ArefConsumed:
      case OpKind::WgRegion: case OpKind::SmemAlloc: case OpKind::MbarInit: case OpKind::MbarArrive:
      case OpKind::MbarArriveExpectTx: case OpKind::MbarWait: case OpKind::TmaLoad: case OpKind::TmaStore:
      case OpKind::SmemLoad: case OpKind::Wgmma: case OpKind::WgmmaCommit: case OpKind::WgmmaWait:
      case OpKind::FenceProxyAsync: case OpKind::SetMaxNReg:
        TAWA_ASSERT(false, "execSync runs the warp-specialized and nv-level ops");
      case OpKind::Barrier:
        return;  // a program (or warp group) runs its ops in order: they are ordered already
      case OpKind::Atomic: {
        const std::string& kind = op.strAttr("kind");
        const bool cas = kind == "cas";
        const RV& p = fr.at(op.operand(0));
        const RV& v = fr.at(op.operand(cas ? 2 : 1));
        const RV* cmp = cas ? &fr.at(op.operand(1)) : nullptr;
        const RV* mask = !cas && op.numOperands() > 2 ? &fr.at(op.operand(2)) : nullptr;
        const Type& rt = op.result()->type();
        const bool isF = floatElems(rt);
        RV r = sized(rt);  // masked-off elements read 0
        for (size_t k = 0; k < p.i.size(); ++k)
          if (!mask || mask->i[k]) atomicElem(op, kind, r, k, p.i[k], rt.scalar, isF, v, cmp);
        set(std::move(r));
        return;
      }
      case OpKind::Call: {
        const Func* f = m_.lookup(op.strAttr("callee"));
        std::vector<RV> args;
        for (auto* v : op.operands) args.push_back(fr.at(v));
        auto res = call(*f, std::move(args));
        for (size_t k = 0; k < op.numResults(); ++k) fr.at(op.result(k)) = std::move(res[k]);
        return;
      }
      case OpKind::Assume: {
        const int64_t x = fr.at(op.operand(0)).i[0];
        if (!isUnsigned(op.operand(0)->type().scalar) && x < op.intAttr("min"))
          fail(op, "a value assumed to be at least " + std::to_string(op.intAttr("min")) + " is " + std::to_string(x) +
                       (op.hasAttr("why") ? " (" + op.strAttr("why") + ")" : std::string()));
        set(fr.at(op.operand(0)));
        return;
      }
      case OpKind::ProgramId: set(intScalar(pid_[static_cast<size_t>(op.intAttr("axis"))])); return;
      case OpKind::NumPrograms: set(intScalar(grid_[static_cast<size_t>(op.intAttr("axis"))])); return;
      case OpKind::Constant: {
        const Type& t = op.result()->type();
        RV r;
        auto& v = op.attrs.at("value");
        if (floatElems(t)) r.f.assign(static_cast<size_t>(t.numel()), roundFloat(t.scalar, std::get<double>(v)));
        else r.i.assign(static_cast<size_t>(t.numel()), wrapInt(t.scalar, std::get<int64_t>(v)));
        set(std::move(r));
        return;
      }
      case OpKind::Arange: {
        RV r;
        for (int64_t k = op.intAttr("start"); k < op.intAttr("end"); ++k) r.i.push_back(k);
        set(std::move(r));
        return;
      }
      case OpKind::Splat: {
        const RV& a = fr.at(op.operand(0));
        auto n = static_cast<size_t>(op.result()->type().numel());
        RV r;
        if (!a.f.empty()) r.f.assign(n, a.f[0]);
        else r.i.assign(n, a.i[0]);
        set(std::move(r));
        return;
      }
      case OpKind::Broadcast: {  // dimensions of size 1 are read with stride 0
        const Type& at = op.operand(0)->type();
        auto as = strides(at.shape);
        for (int d = 0; d < at.rank(); ++d)
          if (at.shape[d] == 1) as[d] = 0;
        set(gather(fr.at(op.operand(0)), op.result()->type(), as));
        return;
      }
      case OpKind::ExpandDims:
      case OpKind::Reshape:
        set(fr.at(op.operand(0)));  // row-major data is unchanged
        return;
      case OpKind::Permute: {  // result dimension d reads source dimension order[d]
        const auto& order = op.arrayAttr("order");
        auto as = strides(op.operand(0)->type().shape);
        std::vector<int64_t> src;
        for (auto o : order) src.push_back(as[static_cast<size_t>(o)]);
        set(gather(fr.at(op.operand(0)), op.result()->type(), src));
        return;
      }
      case OpKind::Slice: {  // the source's strides, from element `start` along the axis
        auto as = strides(op.operand(0)->type().shape);
        set(gather(fr.at(op.operand(0)), op.result()->type(), as, op.intAttr("start") * as[static_cast<size_t>(op.intAttr("axis"))]));
        return;
      }
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Max: case OpKind::Min:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
        set(binary(op, fr));
        return;
      case OpKind::Div:
      case OpKind::FloorDiv:
      case OpKind::Rem:
        if (!floatElems(op.operand(0)->type()))
          for (auto d : fr.at(op.operand(1)).i)
            if (d == 0) fail(op, std::string("integer ") + (op.kind() == OpKind::Rem ? "remainder" : "division") + " by zero");
        set(binary(op, fr));
        return;
      case OpKind::Cmp: {
        const std::string& p = op.strAttr("pred");
        const RV &a = fr.at(op.operand(0)), &b = fr.at(op.operand(1));
        RV r;
        if (floatElems(op.operand(0)->type())) {
          for (size_t k = 0; k < a.f.size(); ++k) r.i.push_back(evalCmp(p, a.f[k], b.f[k]));
        } else {
          const Scalar s = op.operand(0)->type().scalar;
          for (size_t k = 0; k < a.i.size(); ++k) r.i.push_back(evalCmp(p, s, a.i[k], b.i[k]));
        }
        set(std::move(r));
        return;
      }
      case OpKind::Select: {
        const RV &c = fr.at(op.operand(0)), &a = fr.at(op.operand(1)), &b = fr.at(op.operand(2));
        RV r = a;
        for (size_t k = 0; k < c.i.size(); ++k) {
          if (c.i[k]) continue;
          if (!r.f.empty()) r.f[k] = b.f[k];
          else r.i[k] = b.i[k];
        }
        set(std::move(r));
        return;
      }
      case OpKind::Neg: case OpKind::Not: case OpKind::Abs: case OpKind::Exp: case OpKind::Exp2:
      case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
        set(unary(op, fr));
        return;
      case OpKind::Math:
        set(math(op, fr));
        return;
      case OpKind::Cast:
      case OpKind::Bitcast: {  // a conversion of the value, or a reading of its bits
        const Type &st = op.operand(0)->type(), &dt = op.result()->type();
        const RV& a = fr.at(op.operand(0));
        if (st.isPtrLike() || dt.isPtrLike()) {  // pointers are byte addresses (also as 64-bit integers)
          set(RV(a));
          return;
        }
        RV r = sized(dt);
        bool sf = floatElems(st), df = floatElems(dt);
        const auto conv = op.kind() == OpKind::Cast ? evalCast : evalBitcast;
        for (size_t k = 0; k < static_cast<size_t>(dt.numel()); ++k) {
          Elem e = conv(st.scalar, dt.scalar, sf ? Elem{a.f[k], 0} : Elem{0, a.i[k]});
          if (df) r.f[k] = e.f;
          else r.i[k] = e.i;
        }
        set(std::move(r));
        return;
      }
      case OpKind::AddPtr: {
        const RV &p = fr.at(op.operand(0)), &o = fr.at(op.operand(1));
        int64_t es = ir::byteWidth(op.operand(0)->type().scalar);
        RV r;
        r.i.resize(p.i.size());
        for (size_t k = 0; k < p.i.size(); ++k) r.i[k] = p.i[k] + o.i[k] * es;
        set(std::move(r));
        return;
      }
      case OpKind::Load: {
        const Type& rt = op.result()->type();
        const RV& p = fr.at(op.operand(0));
        const RV* mask = op.numOperands() > 1 ? &fr.at(op.operand(1)) : nullptr;
        const RV* other = op.numOperands() > 2 ? &fr.at(op.operand(2)) : nullptr;
        bool isF = floatElems(rt);
        RV r = sized(rt);  // masked lanes without `other` read 0
        for (size_t k = 0; k < p.i.size(); ++k) {
          if (mask && !mask->i[k]) {
            if (other) {
              if (isF) r.f[k] = other->f[k];
              else r.i[k] = other->i[k];
            }
            continue;
          }
          readElem(op, r, k, p.i[k], rt.scalar, isF);
        }
        set(std::move(r));
        return;
      }
      case OpKind::Store: {
        const RV &p = fr.at(op.operand(0)), &v = fr.at(op.operand(1));
        const RV* mask = op.numOperands() > 2 ? &fr.at(op.operand(2)) : nullptr;
        const Type& vt = op.operand(1)->type();
        for (size_t k = 0; k < p.i.size(); ++k)
          if (!mask || mask->i[k]) writeElem(op, v, k, p.i[k], vt.scalar, floatElems(vt));
        return;
      }
      case OpKind::MakeDesc: {
        RV r;
        for (auto* v : op.operands) r.d.push_back(fr.at(v).i[0]);
        set(std::move(r));
        return;
      }
      case OpKind::DescLoad:
      case OpKind::DescStore: {
        bool store = op.kind() == OpKind::DescStore;
        std::vector<int64_t> off;
        const bool gather = !store && op.operand(1)->type().isTile();  // gathered rows (the verifier checked the form)
        for (size_t a = 1 + store; a < op.numOperands(); ++a) off.push_back(gather && a == 1 ? 0 : fr.at(op.operand(a)).i[0]);
        if (store) storeBlock(op, fr.at(op.operand(0)), op.operand(0)->type(), off, fr.at(op.operand(1)));
        else set(loadBlock(op, fr.at(op.operand(0)), op.operand(0)->type(), off, gather ? &fr.at(op.operand(1)).i : nullptr));
        return;
      }
      case OpKind::Dot: {
        const RV* acc = op.numOperands() == 3 ? &fr.at(op.operand(2)) : nullptr;
        set(matmul(op, fr.at(op.operand(0)), fr.at(op.operand(1)), acc, static_cast<size_t>(op.operand(0)->type().shape[1])));
        return;
      }
      case OpKind::Scan: {
        // Sequential along the axis (reversed: from its end); floats combine in double and round to
        // the element type at every step, as each step of Triton's scan is an op of that type.
        const Type& at = op.operand(0)->type();
        RV r = fr.at(op.operand(0));
        const int64_t axis = op.intAttr("axis");
        const bool rev = op.intAttr("reverse") != 0;
        const std::string& kind = op.strAttr("kind");
        int64_t n = at.shape[static_cast<size_t>(axis)], inner = 1, outer = 1;
        for (int64_t d = axis + 1; d < at.rank(); ++d) inner *= at.shape[d];
        for (int64_t d = 0; d < axis; ++d) outer *= at.shape[d];
        const bool isF = floatElems(at);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t in = 0; in < inner; ++in)
            for (int64_t s = 1; s < n; ++s) {
              const int64_t k = rev ? n - 1 - s : s, prev = rev ? k + 1 : k - 1;
              const size_t at_k = static_cast<size_t>((o * n + k) * inner + in), at_p = static_cast<size_t>((o * n + prev) * inner + in);
              if (isF) r.f[at_k] = roundFloat(at.scalar, combineFloat(kind, r.f[at_p], r.f[at_k], propagatesNan(op)));
              else r.i[at_k] = wrapInt(at.scalar, combineInt(kind, at.scalar, r.i[at_p], r.i[at_k]));
            }
        set(std::move(r));
        return;
      }
      case OpKind::Reduce: {
        const Type &at = op.operand(0)->type(), &rt = op.result()->type();
        const RV& a = fr.at(op.operand(0));
        int64_t axis = op.intAttr("axis");
        const std::string& kind = op.strAttr("kind");
        int64_t n = at.shape[static_cast<size_t>(axis)], inner = 1, outer = 1;
        for (int64_t d = axis + 1; d < at.rank(); ++d) inner *= at.shape[d];
        for (int64_t d = 0; d < axis; ++d) outer *= at.shape[d];
        bool isF = floatElems(at);
        RV r = sized(rt);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t in = 0; in < inner; ++in) {
            size_t base = static_cast<size_t>(o * n * inner + in), dst = static_cast<size_t>(o * inner + in);
            if (isF) {
              double acc = a.f[base];
              for (int64_t k = 1; k < n; ++k) acc = combineFloat(kind, acc, a.f[base + static_cast<size_t>(k * inner)], propagatesNan(op));
              r.f[dst] = roundFloat(at.scalar, acc);
            } else {
              int64_t acc = a.i[base];
              for (int64_t k = 1; k < n; ++k) acc = wrapInt(at.scalar, combineInt(kind, at.scalar, acc, a.i[base + static_cast<size_t>(k * inner)]));
              r.i[dst] = acc;
            }
          }
        set(std::move(r));
        return;
      }
      case OpKind::For: {
        int64_t lb = fr.at(op.operand(0)).i[0], ub = fr.at(op.operand(1)).i[0], step = fr.at(op.operand(2)).i[0];
        if (step == 0) fail(op, "loop step must not be zero");
        const Block& body = *op.region(0);
        std::vector<RV> iter;
        for (size_t k = 3; k < op.numOperands(); ++k) iter.push_back(fr.at(op.operand(k)));
        std::vector<RV> out;
        Scalar ivTy = op.operand(0)->type().scalar;
        int64_t outerIter = iter_;
        for (int64_t iv = lb; step > 0 ? iv < ub : iv > ub; iv += step) {  // a negative step counts down
          iter_ = (iv - lb) / step;
          fr.at(body.arg(0)) = intScalar(wrapInt(ivTy, iv));
          for (size_t k = 0; k < iter.size(); ++k) fr.at(body.arg(k + 1)) = std::move(iter[k]);
          runBlock(body, fr, out);
          iter.swap(out);
        }
        iter_ = outerIter;
        for (size_t k = 0; k < iter.size(); ++k) fr.at(op.result(k)) = std::move(iter[k]);
        return;
      }
      case OpKind::If: {
        std::vector<RV> out;
        runBlock(*op.region(fr.at(op.operand(0)).i[0] ? 0 : 1), fr, out);
        for (size_t k = 0; k < out.size(); ++k) fr.at(op.result(k)) = std::move(out[k]);
        return;
      }
      case OpKind::While: {
        const Block &before = *op.region(0), &after = *op.region(1);
        std::vector<RV> args, out;
        for (auto* v : op.operands) args.push_back(fr.at(v));
        constexpr int64_t kMaxTrips = 100'000'000;
        for (int64_t trip = 0;; ++trip) {
          if (trip == kMaxTrips) fail(op, "while loop did not terminate after " + std::to_string(kMaxTrips) + " iterations");
          for (size_t k = 0; k < args.size(); ++k) fr.at(before.arg(k)) = std::move(args[k]);
          runBlock(before, fr, out);
          bool go = out[0].i[0] != 0;
          out.erase(out.begin());
          if (!go) {
            for (size_t k = 0; k < out.size(); ++k) fr.at(op.result(k)) = std::move(out[k]);
            return;
          }
          for (size_t k = 0; k < out.size(); ++k) fr.at(after.arg(k)) = std::move(out[k]);
          runBlock(after, fr, args);
        }
      }
    }
    fail(op, "has no executor rule");
  }

  const ir::Module& m_;
  std::vector<Buffer>& bufs_;
  const std::unordered_map<const Func*, Plan>& plans_;
  std::array<int64_t, 3> pid_, grid_;
  uint64_t seed_;
  // Inside a warp group: its scheduler, index and role, the current loop iteration (for reports),
  // the program's shared state, and its async MMAs (reads of slots by groups not yet waited for).
  Scheduler* sched_ = nullptr;
  int self_ = -1;
  int64_t iter_ = -1;
  ProgramState* ps_ = nullptr;
  struct MmaRead {
    int64_t arefId, slot;
    std::shared_ptr<MmaToken> token;
  };
  std::vector<MmaRead> mmaReads_;
  std::shared_ptr<MmaToken> openGroup_;
  std::deque<std::shared_ptr<MmaToken>> groups_;
  profile::ProgramRecorder* prof_ = nullptr;  // profiling: this program's recorder
};

}  // namespace

int64_t virtualAddress(int index) { return (static_cast<int64_t>(index) + 1) << kAddrShift; }

std::vector<uint8_t> addressBytes(const Buffer& pointers, size_t numBuffers, const std::function<uint64_t(int)>& base) {
  if (!ir::holdsAddress(pointers.dtype))
    throw UserError(Location{}, "buffer '" + pointers.name + "' holds addresses, so its elements must be i64 or u64, not " +
                                    std::string(ir::scalarName(pointers.dtype)));
  if (static_cast<int64_t>(pointers.addressesOf.size()) != pointers.numel())
    throw UserError(Location{}, "buffer '" + pointers.name + "' has " + std::to_string(pointers.numel()) + " elements but " +
                                    std::to_string(pointers.addressesOf.size()) + " addresses");
  std::vector<uint8_t> bytes(pointers.addressesOf.size() * sizeof(uint64_t));
  for (size_t k = 0; k < pointers.addressesOf.size(); ++k) {
    const int b = pointers.addressesOf[k];
    if (b < 0 || static_cast<size_t>(b) >= numBuffers)
      throw UserError(Location{}, "buffer '" + pointers.name + "' holds the address of buffer #" + std::to_string(b) +
                                      ", which the launch does not have");
    const uint64_t a = base(b);
    std::memcpy(&bytes[k * sizeof a], &a, sizeof a);
  }
  return bytes;
}

void writeVirtualAddresses(std::vector<Buffer>& buffers) {
  for (auto& b : buffers)
    if (!b.addressesOf.empty())
      b.data = addressBytes(b, buffers.size(), [](int i) { return static_cast<uint64_t>(virtualAddress(i)); });
}

void launch(const ir::Module& m, const Func& kernel, const std::vector<Arg>& args, std::vector<Buffer>& buffers,
            const LaunchOptions& opt) {
  if (args.size() != kernel.numArgs())
    throw UserError(kernel.loc, "kernel '@" + kernel.name + "' takes " + std::to_string(kernel.numArgs()) +
                                    " arguments, " + std::to_string(args.size()) + " given");
  std::vector<RV> vals;
  for (size_t k = 0; k < args.size(); ++k) {
    const Type& t = kernel.arg(k)->type();
    const Arg& a = args[k];
    std::string what = "argument #" + std::to_string(k) + " ('" + kernel.arg(k)->nameHint + "') of '@" + kernel.name + "'";
    RV v;
    if (t.isPtr()) {
      if (a.kind != Arg::Kind::Buffer || a.buffer < 0 || a.buffer >= static_cast<int>(buffers.size()))
        throw UserError(kernel.loc, what + " is a pointer and needs a buffer");
      const Buffer& b = buffers[static_cast<size_t>(a.buffer)];
      if (b.dtype != t.scalar)
        throw UserError(kernel.loc, what + " points to " + std::string(ir::scalarName(t.scalar)) + " but buffer '" +
                                        b.name + "' holds " + std::string(ir::scalarName(b.dtype)));
      v.i.push_back(virtualAddress(a.buffer));
    } else if (t.isScalar() && t.elemIsFloat()) {
      if (a.kind == Arg::Kind::Buffer) throw UserError(kernel.loc, what + " is a scalar, not a pointer");
      v.f.push_back(roundFloat(t.scalar, a.kind == Arg::Kind::Float ? a.f : static_cast<double>(a.i)));
    } else if (t.isScalar()) {
      if (a.kind != Arg::Kind::Int) throw UserError(kernel.loc, what + " needs an integer value");
      v.i.push_back(wrapInt(t.scalar, a.i));
    } else {
      throw UserError(kernel.loc, what + " has type " + t.str() + ", which cannot be passed to a kernel");
    }
    vals.push_back(std::move(v));
  }
  for (auto& b : buffers)
    if (static_cast<int64_t>(b.data.size()) >= (int64_t{1} << (kAddrShift - 1)))
      throw UserError(kernel.loc, "buffer '" + b.name + "' is too large for the executor (512 GiB at most)");

  std::unordered_map<const Func*, Plan> plans;
  for (auto& f : m.funcs) plans[f.get()].number(f->body);

  auto g = opt.grid;
  int64_t total = g[0] * g[1] * g[2];
  bool persistent = false;
  // A persistent kernel (made by warp-specialize --persistent N) runs min(N, grid size) programs
  // along axis 0, which walk the launch grid themselves; num_programs still reports the grid.
  if (auto it = kernel.attrs.find("persistent_programs"); it != kernel.attrs.end() && std::holds_alternative<int64_t>(it->second))
    total = std::min(total, std::get<int64_t>(it->second)), persistent = true;
  // Programs run in parallel; when several fail, the error of the lowest program id is reported,
  // so that a run is as reproducible as each program is (programs above it are skipped).
  std::mutex errMu;
  std::atomic<int64_t> firstFail{total};
  std::exception_ptr firstError;
  auto body = [&](const tbb::blocked_range<int64_t>& r) {
    for (int64_t p = r.begin(); p != r.end(); ++p) {
      if (p > firstFail.load()) continue;
      std::array<int64_t, 3> pid{p % g[0], (p / g[0]) % g[1], p / (g[0] * g[1])};
      if (persistent) pid = {p, 0, 0};
      try {
        Interp in(m, buffers, plans, pid, g, opt.seed);
        if (opt.recorder) in.profileInto(opt.recorder->program(p, pid));
        in.call(kernel, vals);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errMu);
        if (p < firstFail.load()) firstFail = p, firstError = std::current_exception();
      }
    }
  };
  // A kernel with atomics (or reduce-add block stores, what block-access makes of them) runs its
  // programs one after another in program order: the atomics are safe among parallel programs too
  // (atomicStripe's locks), but what they return, and float sums, depend on the order, and the
  // executor is the reference that every backend is checked against.
  bool atomics = false;
  for (const auto& f : m.funcs)
    walk(f->body, [&](const Op* op) { atomics = atomics || op->kind() == OpKind::Atomic || op->hasAttr("reduce"); });
  if (atomics) {
    body(tbb::blocked_range<int64_t>(0, total, 1));
  } else if (opt.threads > 0) {
    tbb::task_arena arena(opt.threads);
    arena.execute([&] { tbb::parallel_for(tbb::blocked_range<int64_t>(0, total, 1), body); });
  } else {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, total, 1), body);
  }
  if (firstError) std::rethrow_exception(firstError);
}

}  // namespace tawa::exec
