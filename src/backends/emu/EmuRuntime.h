// The host implementation of tawa's device primitives: the CPU emulator. primitives.cuh includes this
// header when it is compiled as host C++, so an emitted kernel compiles unchanged into a shared
// object that runs one block at a time on one OS thread, every CUDA thread a fiber (ucontext).
//
// Semantics modeled (PTX ISA 8.7):
//   - threads, warps (32), warp groups (128); block barriers and named barriers (id, thread count);
//     elect.sync as a warp rendezvous (the lowest lane is elected); shfl.sync.bfly and vote.sync
//     (ballot, all, any) over the full warp as a rendezvous exchanging every lane's value.
//   - mbarrier: expected arrival count, pending arrivals, tx-count, phase; try_wait.parity is true
//     once the phase of that parity has completed ((current phase & 1) != parity). arrive.expect_tx
//     adds bytes then arrives; a TMA copy's completion subtracts its box bytes. A phase completes when
//     no arrival is pending and the tx-count is zero.
//   - cp.async.bulk.tensor 2-D: queued, performed by an "async engine" between scheduler sweeps,
//     reading/writing through the tensor map (zero fill out of bounds on loads, clipping on stores;
//     cp.reduce.async.bulk.tensor .add adds f32 or s32 elements instead of writing them),
//     shared memory written in the swizzled layout (address bits [4,7) XOR bits [7,10) for 128B,
//     [4,6) ^ [7,9) for 64B, [4,5) ^ [7,8) for 32B, on shared-window addresses).
//   - wgmma: fence / mma_async / commit_group / wait_group per warp group. Operands are decoded from
//     the 64-bit descriptors (start, LBO, SBO, swizzle) into the canonical K-major / MN-major layouts.
//     Each op snapshots its operands at issue; the math runs when a wait_group needs its group. The
//     accumulator registers are poisoned from issue to completion (a write in between is reported,
//     a value read from them is reported when it reaches a conversion, a store, a shuffle or a math
//     primitive); the smem operands changing between issue and completion is reported. A from
//     registers (RS) is taken from each thread's four 32-bit registers at issue.
//   - asynchronous readers of shared memory, independent of timing: a wgmma reads its shared operands
//     from its issue until a wgmma.wait_group completes its group, a TMA store its source until a
//     cp.async.bulk.wait_group.read of its group. Every thread, mbarrier and named barrier carries a
//     vector clock of the completions it has observed (a wait_group observes its own; an arrive or a
//     TMA copy hands its thread's clock to the barrier's phase, a completed phase or barrier hands it
//     to the threads that wait on it). A write to shared memory (a TMA load's issue, st.shared) is a
//     race when a reader of those bytes has not been observed complete by the writer, i.e. when its
//     completion does not happen before the write, whatever the schedule did; both lines are reported.
//   - tile maps (tile_load_generic / tile_store_generic, for tiles TMA cannot take): each 16-byte chunk
//     of the box a thread copies is an st.shared at its swizzled address (checked as any write to
//     shared memory, generic-dirty until the thread fences); global memory by plain accesses; the
//     modelled clock charges the box's bytes at the SM's memory bandwidth (no latency modelled).
//   - fence.proxy.async: shared bytes written by st_shared_pair stay "generic-dirty" for their writer
//     until it fences; TMA stores and wgmma reading dirty bytes are reported.
//   - setmaxnreg: 24..256, multiple of 8 (compile time), uniform across the warp group, the block's
//     registers within the 64K register file.
//   - the *modelled* clock behind clock64 / globaltimer / smid (read only by kernels emitted with
//     --profile): each warp group has a virtual cycle counter, advanced by its thread 0 (the elected
//     thread that records) with the figures of tawa's cost model (TawaEmuCostModel, filled from
//     src/profile/CostModel.h): TMA issue, then a per-SM memory pipe (bytes / bandwidth) and the
//     latency until the copy lands; wgmma issue per tile MMA, the tensor core (one per SM, in issue
//     order) for 2*64*N*K / rate cycles per instruction; arrivals; waits advance to the modelled time
//     the awaited phase, MMA group or barrier completed, plus a wake-up cost; exp2, max/min,
//     conversions, shuffles and shared stores by their per-SM throughput. Plain C++ arithmetic in the
//     emitted code (+, -, *, /, indexing) is not charged. Block b runs on SM b % sms, an SM's blocks
//     back to back; globaltimer = (block start + cycles) / clock GHz. Nothing here is measured.
// Faults (deadlock, races, out-of-bounds or misaligned accesses, over-arrival, tx underflow, misuse)
// stop the launch and report block, thread and the kernel source line (the caller's __builtin_LINE,
// which follows the #line directives back to the user's kernel). A plain global pointer access
// outside its buffer (every buffer lies between PROT_NONE guards) and a fiber's stack overflow are
// caught as SIGSEGV and reported with block, thread and buffer, without a source line; an integer
// division by zero (SIGFPE, or SIGILL where the compiler made a constant one a trap) likewise.
#pragma once

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <type_traits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "EmuAbi.h"
#include "EmuNumerics.h"

#define TAWA_EMU_LOC const char *tawa_file = __builtin_FILE(), int tawa_line = __builtin_LINE()
#define TAWA_EMU_AT tawa_file, tawa_line

namespace tawa {
namespace emu {

// ---- state

constexpr uint32_t kWindowBase = 1040;  // shared-window address of the dynamic buffer (not 1024-aligned on purpose)
constexpr uint32_t kPoison = 0x7fbadbadu;  // a NaN: accumulator registers while a wgmma owns them
constexpr size_t kStackBytes = 256 * 1024;

enum class WaitKind { None, Mbar, NamedBar, Warp, Shfl, Wgmma, BulkRead };

struct Wait {
  WaitKind kind = WaitKind::None;
  uint32_t addr = 0;     // mbarrier window address
  uint32_t parity = 0;
  int id = 0;            // named barrier id, warp, warp group
  uint64_t gen = 0;      // generation / group count needed
  const char* file = "";
  int line = 0;
};

// A vector clock over the asynchronous readers of shared memory ("streams": the wgmma groups of each
// warp group, then the TMA-store groups of each thread that issues stores): entry s is how many of
// stream s's groups are known complete.
using Seen = std::vector<uint64_t>;
inline void join(Seen& a, const Seen& b) {
  if (a.size() < b.size()) a.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
}
inline uint64_t seenOf(const Seen& a, size_t s) { return s < a.size() ? a[s] : 0; }
inline void observe(Seen& a, size_t s, uint64_t n) {
  if (a.size() <= s) a.resize(s + 1, 0);
  a[s] = std::max(a[s], n);
}
// A barrier phase (or generation) completes: what its arrivals observed becomes what its waiters do.
inline void handOver(Seen& pend, Seen& done) {
  join(done, pend);
  pend.clear();
}

struct Mbar {
  Seen pend, done;                 // clocks handed over by the current phase's arrivals, by completed phases
  uint32_t expected = 0;
  int64_t pending = 0, tx = 0;
  uint64_t phase = 0;
  double last = 0;                 // modelled: latest arrival or landed copy of the current phase
  double doneAt[2] = {0, 0};       // modelled: when the last phase of each parity completed
};

struct NamedBar {
  Seen pend, done;                  // clocks of this generation's arrivals, of completed generations
  int count = 0, arrived = 0;
  uint64_t gen = 0;
  double maxAt = 0, releaseAt = 0;  // modelled: latest arrival of this generation, and of the last one
};

// A warp's shuffle exchange: lanes deposit into the buffer of the current generation's parity and
// read their partner's value once all 32 have arrived (two buffers: a lane cannot reach the next
// shuffle's deposit before every lane has read this one's).
struct Shfl {
  float v[2][32] = {};
  int arrived = 0;
  uint64_t gen = 0;
};

struct Fiber {
  ucontext_t ctx;
  char* stack = nullptr;
  int tid = 0;
  bool done = false, blocked = false;
  Wait wait;
  // wgmma
  uint64_t mmaIssued = 0, groupsCommitted = 0;
  bool fenced = false;                           // wgmma.fence since the last wait_group
  std::map<float*, int> inflight;                // accumulator register array -> accumulator id
  // fence.proxy.async
  std::vector<std::pair<uint32_t, uint32_t>> dirty;  // [offset, end) written by st_shared_pair
  // bulk (TMA store) groups
  uint64_t bulkCommitted = 0;
  std::vector<size_t> bulkOps;                   // async ops of this thread, with their group in AsyncOp::group
  uint64_t setmaxnregSeq = 0;
  Seen seen;                                     // completions of asynchronous readers this thread has observed
  const char* atFile = nullptr;                  // the source line of the copy this thread is in (a fault there is located)
  int atLine = 0;
};

struct MmaOp {
  uint64_t descA = 0, descB = 0;
  bool aRegs = false;                           // A from registers (RS): op.a filled by every thread at issue
  int n = 0, transB = 0, scaleD = 1, elem = 0;  // elem: 0 f16, 1 bf16, 2 e4m3, 3 e5m2, 4 s8, 5 u8, 6 tf32 (8-bit: k32; s8/u8: s32 D; tf32: k8)
  int transA = 0;                               // 1: A read M-major (f16/bf16 from shared memory)
  int acc = -1;
  bool fresh = false;
  int issued = 0;
  uint64_t group = 0;                           // the wgmma group it belongs to (commits before its issue)
  std::vector<float> a, b;                      // 64xK and Kxn snapshots at issue (K: kSteps(elem))
  const char* file = "";
  int line = 0;
  double end = 0;                               // modelled: when the tensor core finishes it
};

struct Acc {
  int n = 0;
  std::vector<float> value;                     // 64 x n
  std::vector<float*> regs;                     // per warp-group thread
  int pendingOps = 0;
  int gathered = 0;
};

struct WarpGroup {
  std::vector<MmaOp> ops;
  std::vector<uint64_t> groupEnd;               // op index after the last op of group g
  std::vector<int> commits;                     // threads that committed group g
  uint64_t groupsDone = 0;
  std::vector<Acc> accs;
  std::vector<std::pair<int, int>> maxnreg;     // per setmaxnreg sequence: (value, threads seen)
  int regs = 0;                                 // current per-thread budget (0: unknown)
  std::vector<double> groupDoneAt;              // modelled: completion of committed group g
};

struct AsyncOp {
  bool store = false, done = false;
  int reduce = 0;                               // store: 0 writes, 1 adds f32, 2 adds s32 (cp.reduce.async.bulk.tensor .add)
  TawaEmuTensorMap map;
  int c[5] = {};                                // coordinates, inner first (rank of the map)
  uint32_t smem = 0, bar = 0;                   // window addresses
  int tid = 0;
  uint64_t group = 0;
  std::vector<uint8_t> snapshot;                // store: the staging at issue
  Seen seen;                                    // load: the issuing thread's clock, handed to the mbarrier
  const char* file = "";
  int line = 0;
  double landed = 0;                            // modelled: load lands / store has read its source
};

struct Runtime {
  TawaEmuLaunch* L = nullptr;
  void (*body)(void* const*) = nullptr;
  void* const* args = nullptr;
  int bx = 0, by = 0, bz = 0, threads = 0;
  std::vector<uint8_t> smem;
  std::vector<uint16_t> dirtyOwner;             // tid + 1 of the unfenced generic writer of each byte
  // Asynchronous readers of shared memory, per stream (see Seen) and 16-byte chunk: 1 + the newest
  // group of the stream that reads the chunk (0: none), and where that reader was issued.
  struct Readers {
    std::vector<uint64_t> group;
    std::vector<uint32_t> site;
  };
  std::vector<Readers> readers;
  std::vector<std::pair<const char*, int>> sites;
  std::vector<int> bulkStream;                  // per thread: its TMA-store stream, or -1
  std::vector<Fiber> fibers;
  Fiber* cur = nullptr;
  ucontext_t sched;
  std::unordered_map<uint32_t, Mbar> mbars;
  NamedBar bars[16];
  std::vector<NamedBar> warps;                  // elect.sync rendezvous
  std::vector<Shfl> shfl;                       // shfl.sync exchanges, per warp
  std::vector<WarpGroup> wgs;
  std::vector<AsyncOp> async;
  size_t asyncNext = 0;
  bool failed = false;
  std::mt19937_64 rng;
  // the modelled clock
  std::vector<double> wgClock;                  // per warp group: cycles since the block's start
  double tcFree = 0, pipeFree = 0;              // the SM's tensor core and memory pipe
  double blockStart = 0;                        // cycles on the kernel's axis
  std::vector<double> smFree;                   // per SM: when its last block ended
  // a memory fault in the kernel's code (see runGrid)
  sigjmp_buf faultJmp;
  void* faultAddr = nullptr;
  int faultSig = 0;
};

inline Runtime& rt() {
  static Runtime r;
  return r;
}

// ---- diagnostics

inline std::string barName(uint32_t addr) {
  Runtime& r = rt();
  uint32_t alignedBase = (kWindowBase + 1023u) & ~1023u;
  int64_t off = static_cast<int64_t>(addr) - alignedBase;
  for (int i = 0; i < r.L->nBarArrays; ++i) {
    int64_t o = r.L->barOffsets[i];
    if (off >= o && off < o + 8 * r.L->barCounts[i] && (off - o) % 8 == 0)
      return std::string(r.L->barNames[i]) + "[" + std::to_string((off - o) / 8) + "]";
  }
  return "mbarrier at smem+" + std::to_string(off);
}

inline std::string who(int tid) {
  return "thread " + std::to_string(tid) + " (warp group " + std::to_string(tid / 128) + ", warp " + std::to_string(tid / 32) +
         ", lane " + std::to_string(tid % 32) + ")";
}

inline void setError(const std::string& msg, const char* file, int line) {
  Runtime& r = rt();
  if (r.failed) return;
  r.failed = true;
  std::string full = "block (" + std::to_string(r.bx) + ", " + std::to_string(r.by) + ", " + std::to_string(r.bz) + "): " + msg;
  std::snprintf(r.L->error, r.L->errorCap, "%s", full.c_str());
  std::snprintf(r.L->errorFile, r.L->errorFileCap, "%s", file ? file : "");
  r.L->errorLine = line;
}

// Reports a fault and abandons the launch: from a fiber, control never returns to it.
[[noreturn]] inline void failHere(const std::string& msg, const char* file, int line);

inline void fail(const std::string& msg, const char* file, int line) {
  Runtime& r = rt();
  if (r.cur) failHere(who(r.cur->tid) + ": " + msg, file, line);
  setError(msg, file, line);
}

inline void failHere(const std::string& msg, const char* file, int line) {
  Runtime& r = rt();
  setError(msg, file, line);
  Fiber* f = r.cur;
  f->done = true;
  swapcontext(&f->ctx, &r.sched);
  std::abort();  // never resumed
}

inline Fiber& self() { return *rt().cur; }
// For the duration of a thread copy (tile_load_generic, tile_store_generic), a fault of this thread
// is located at the copy's source line (Fiber::atFile); after it, no more.
struct CopyAt {
  CopyAt(const char* file, int line) { self().atFile = file, self().atLine = line; }
  ~CopyAt() { self().atFile = nullptr, self().atLine = 0; }
  CopyAt(const CopyAt&) = delete;
  CopyAt& operator=(const CopyAt&) = delete;
};

// ---- the modelled clock (see the header comment); thread 0 of each warp group keeps its clock
inline double& wgClock() { return rt().wgClock[static_cast<size_t>(self().tid / 128)]; }
inline bool clockKeeper() { return (self().tid & 127) == 0; }
inline void charge(double cycles) {
  if (clockKeeper()) wgClock() += cycles;
}
inline void advanceTo(double t) {
  if (clockKeeper()) wgClock() = std::max(wgClock(), t);
}
inline const TawaEmuCostModel& model() { return rt().L->model; }
// tl.maximum / tl.minimum of two values, as the executor's floatMax / floatMin: a NaN operand gives
// NaN with propagateNan (max.NaN, min.NaN) and the other operand without it (max, min: maxNum);
// -0 is below +0 either way.
template <class T> T maxOf(T a, T b, bool propagateNan) {
  if (std::isnan(a) || std::isnan(b)) return propagateNan ? std::numeric_limits<T>::quiet_NaN() : std::isnan(a) ? b : a;
  return a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
}
template <class T> T minOf(T a, T b, bool propagateNan) {
  if (std::isnan(a) || std::isnan(b)) return propagateNan ? std::numeric_limits<T>::quiet_NaN() : std::isnan(a) ? b : a;
  return a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
}

inline bool ready(const Wait& w);

// Suspends the current fiber until `w` holds.
inline void block(const Wait& w) {
  Runtime& r = rt();
  if (ready(w)) return;
  Fiber* f = r.cur;
  f->blocked = true;
  f->wait = w;
  swapcontext(&f->ctx, &r.sched);
  f->blocked = false;
  f->wait = Wait{};
}

// ---- shared memory

inline uint8_t* smemBase() { return rt().smem.data(); }
inline uint32_t windowOf(const void* p, size_t bytes, const char* what, const char* file, int line) {
  Runtime& r = rt();
  const uint8_t* b = r.smem.data();
  const uint8_t* q = static_cast<const uint8_t*>(p);
  if (q < b || q + bytes > b + r.smem.size()) {
    fail(std::string(what) + ": address is outside the block's " + std::to_string(r.smem.size()) + " bytes of shared memory", file, line);
    return 0;
  }
  return kWindowBase + static_cast<uint32_t>(q - b);
}
inline uint8_t* atWindow(uint32_t addr, size_t bytes, const char* what, const char* file, int line) {
  Runtime& r = rt();
  if (addr < kWindowBase || addr - kWindowBase + bytes > r.smem.size()) {
    fail(std::string(what) + ": shared-window address " + std::to_string(addr) + " (+" + std::to_string(bytes) +
             " bytes) is outside the block's shared memory [" + std::to_string(kWindowBase) + ", " +
             std::to_string(kWindowBase + r.smem.size()) + ")",
         file, line);
    return nullptr;
  }
  return r.smem.data() + (addr - kWindowBase);
}
// The first byte in [addr, addr + n) still holding an unfenced generic write, or -1.
inline int64_t firstDirty(uint32_t addr, size_t n) {
  Runtime& r = rt();
  size_t off = addr - kWindowBase;
  for (size_t i = 0; i < n && off + i < r.dirtyOwner.size(); ++i)
    if (r.dirtyOwner[off + i]) return static_cast<int64_t>(i);
  return -1;
}

// ---- asynchronous readers of shared memory (see Seen)

constexpr uint32_t kReadChunk = 16;
inline std::string streamName(size_t s) {
  Runtime& r = rt();
  if (s < r.wgs.size()) return "a wgmma.mma_async of warp group " + std::to_string(s);
  for (size_t t = 0; t < r.bulkStream.size(); ++t)
    if (r.bulkStream[t] == static_cast<int>(s)) return "a TMA store of " + who(static_cast<int>(t));
  return "an asynchronous read";
}
// The TMA-store stream of the current thread (made on its first store).
inline size_t bulkStreamOf(int tid) {
  Runtime& r = rt();
  int& s = r.bulkStream[static_cast<size_t>(tid)];
  if (s < 0) s = static_cast<int>(std::max(r.readers.size(), r.wgs.size()));
  return static_cast<size_t>(s);
}
inline uint32_t readSite(const char* file, int line) {
  rt().sites.emplace_back(file, line);
  return static_cast<uint32_t>(rt().sites.size() - 1);
}
// Group `group` of stream `s` reads [addr, addr + n) until it completes.
inline void markRead(size_t s, uint64_t group, uint32_t site, uint32_t addr, size_t n) {
  Runtime& r = rt();
  if (r.readers.size() <= s) r.readers.resize(s + 1);
  Runtime::Readers& rd = r.readers[s];
  size_t chunks = (r.smem.size() + kReadChunk - 1) / kReadChunk;
  if (rd.group.empty()) rd.group.assign(chunks, 0), rd.site.assign(chunks, 0);
  size_t off = addr - kWindowBase;
  for (size_t c = off / kReadChunk; c <= (off + n - 1) / kReadChunk && c < chunks; ++c)
    if (rd.group[c] <= group + 1) rd.group[c] = group + 1, rd.site[c] = site;
}
// A write of [addr, addr + n) by a thread that has observed `writer`: every asynchronous reader of
// those bytes must be known complete, or the write may land while it still reads them.
inline void checkWrite(uint32_t addr, size_t n, const Seen& writer, const char* what, const char* file, int line) {
  Runtime& r = rt();
  if (n == 0 || addr < kWindowBase) return;
  size_t off = addr - kWindowBase;
  for (size_t s = 0; s < r.readers.size(); ++s) {
    const Runtime::Readers& rd = r.readers[s];
    for (size_t c = off / kReadChunk; c <= (off + n - 1) / kReadChunk && c < rd.group.size(); ++c) {
      if (rd.group[c] <= seenOf(writer, s)) continue;
      auto [rf, rl] = r.sites[rd.site[c]];
      bool mma = s < r.wgs.size();
      fail(std::string(what) + " writes shared memory (smem window address " + std::to_string(kWindowBase + c * kReadChunk) +
               ") that " + streamName(s) + " issued at " + rf + ":" + std::to_string(rl) + " may still be reading: the " +
               (mma ? "wgmma.wait_group" : "cp.async.bulk.wait_group.read") +
               " that completes it does not happen before this write (a buffer released or reused before the asynchronous "
               "operation reading it completed)",
           file, line);
      return;
    }
  }
}

// ---- mbarrier

inline Mbar* mbarAt(uint64_t* bar, const char* op, const char* file, int line, uint32_t* addrOut) {
  uint32_t addr = windowOf(bar, 8, op, file, line);
  if (addr % 8) fail(std::string(op) + ": mbarrier address " + std::to_string(addr) + " is not 8-byte aligned", file, line);
  auto it = rt().mbars.find(addr);
  if (it == rt().mbars.end()) fail(std::string(op) + " on " + barName(addr) + ", which was never initialized (mbarrier.init)", file, line);
  if (addrOut) *addrOut = addr;
  return &it->second;
}

inline void mbarComplete(Mbar& m, uint32_t addr, const char* file, int line) {
  if (m.pending != 0) return;
  if (m.tx < 0) {
    fail("mbarrier transaction-count underflow on " + barName(addr) + ": all arrivals of phase " + std::to_string(m.phase) +
             " are in but the tx-count is " + std::to_string(m.tx) + " (more bytes completed than expect_tx announced)",
         file, line);
    return;
  }
  if (m.tx > 0) return;
  handOver(m.pend, m.done);
  m.doneAt[m.phase & 1u] = m.last;
  m.last = 0;
  ++m.phase;
  m.pending = m.expected;
}

inline void mbarArrive(uint32_t addr, Mbar& m, const char* file, int line) {
  if (m.pending == 0)
    fail("mbarrier over-arrival on " + barName(addr) + ": phase " + std::to_string(m.phase) +
             " has no pending arrival left (it waits for " + std::to_string(m.tx) + " transaction bytes)",
         file, line);
  --m.pending;
  if (rt().cur) m.last = std::max(m.last, wgClock());
  if (rt().cur) join(m.pend, self().seen);
  mbarComplete(m, addr, file, line);
}

// ---- wgmma operand decoding

struct Desc {
  uint32_t start = 0, lbo = 0, sbo = 0, base = 0, mode = 0, swz = 0;
};
inline Desc decode(uint64_t d, const char* which, const char* file, int line) {
  Desc x;
  x.start = static_cast<uint32_t>(d & 0x3fffu) << 4;
  x.lbo = static_cast<uint32_t>((d >> 16) & 0x3fffu) << 4;
  x.sbo = static_cast<uint32_t>((d >> 32) & 0x3fffu) << 4;
  x.base = static_cast<uint32_t>((d >> 49) & 7u);
  x.mode = static_cast<uint32_t>(d >> 62);
  x.swz = x.mode == 1 ? 128 : x.mode == 2 ? 64 : x.mode == 3 ? 32 : 0;
  uint64_t reserved = d & ((3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3ffull << 52));
  if (reserved) fail(std::string("wgmma matrix descriptor of ") + which + " has reserved bits set", file, line);
  if (x.base) fail(std::string("wgmma matrix descriptor of ") + which + ": a non-zero base offset is not modeled by the emulator", file, line);
  return x;
}
// Byte offset (before swizzling) of element (mn, k) of a canonical layout. kMajor: K contiguous.
inline uint32_t canonical(const Desc& d, bool kMajor, int mn, int k, int esize) {
  uint32_t um = static_cast<uint32_t>(mn), uk = static_cast<uint32_t>(k), e = static_cast<uint32_t>(esize);
  if (kMajor) {
    if (!d.swz) return (um % 8) * 16 + (um / 8) * d.sbo + (uk * e / 16) * d.lbo + (uk * e) % 16;
    return (um % 8) * d.swz + (um / 8) * d.sbo + uk * e;
  }
  if (!d.swz) return (um * e / 16) * d.sbo + (um * e) % 16 + (uk % 8) * 16 + (uk / 8) * d.lbo;
  uint32_t perAtom = d.swz / e;
  return (um / perAtom) * d.lbo + (um % perAtom) * e + (uk % 8) * d.swz + (uk / 8) * d.sbo;
}
// The K extent of one wgmma: 16 for f16/bf16, 32 for 8-bit types, 8 for tf32; and the element size in bytes.
constexpr int kTf32 = 6;
inline int kSteps(int elem) { return elem == kTf32 ? 8 : elem >= 2 ? 32 : 16; }
inline int elemSize(int elem) { return elem == kTf32 ? 4 : elem >= 2 ? 1 : 2; }
inline bool intElem(int elem) { return elem == 4 || elem == 5; }
// Calls f(mn, k, a) with the shared-window address a of every element (mn, k) of a mnCount x kCount
// operand that a descriptor describes.
template <class F>
inline void forEachElement(const Desc& d, bool kMajor, int mnCount, int kCount, int es, F&& f) {
  for (int mn = 0; mn < mnCount; ++mn)
    for (int k = 0; k < kCount; ++k) f(mn, k, swizzle(d.start + canonical(d, kMajor, mn, k, es), d.swz));
}
// Gathers a rows x cols operand (element (mn, k)) through a descriptor; checks bounds, alignment and proxy fences.
inline void gather(const Desc& d, bool kMajor, int mnCount, int kCount, int elem, std::vector<float>& out, bool transposeOut,
                   const char* which, const char* file, int line) {
  if (d.start % 16) fail(std::string("wgmma operand ") + which + ": start address is not 16-byte aligned", file, line);
  out.assign(static_cast<size_t>(mnCount * kCount), 0.0f);
  const int es = elemSize(elem);
  forEachElement(d, kMajor, mnCount, kCount, es, [&](int mn, int k, uint32_t a) {
    const uint8_t* p = atWindow(a, static_cast<uint32_t>(es), (std::string("wgmma operand ") + which).c_str(), file, line);
    if (rt().dirtyOwner[a - kWindowBase])
      fail(std::string("wgmma reads operand ") + which + " at shared-window address " + std::to_string(a) +
               ", written by " + who(rt().dirtyOwner[a - kWindowBase] - 1) +
               " with a generic store and no fence.proxy.async since (the async proxy may not see it)",
           file, line);
    float v;
    if (elem == kTf32) {
      // An f32 in tf32 mode: modelled as the tensor cores are taken to read it, its 13 low mantissa
      // bits dropped (tawa's copies round the operands first, so nothing is dropped on its path).
      uint32_t bits;
      std::memcpy(&bits, p, 4);
      if ((bits & 0x7f800000u) != 0x7f800000u) bits &= ~0x1fffu;
      std::memcpy(&v, &bits, 4);
    } else if (es == 1) {
      v = elem == 2   ? e4m3BitsToF32(*p)
          : elem == 3 ? e5m2BitsToF32(*p)
          : elem == 4 ? static_cast<float>(static_cast<int8_t>(*p))  // integers up to 255 are exact floats
                      : static_cast<float>(*p);
    } else {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      v = elem ? bf16BitsToF32(bits) : f16BitsToF32(bits);
    }
    out[transposeOut ? static_cast<size_t>(k * mnCount + mn) : static_cast<size_t>(mn * kCount + k)] = v;
  });
}

// Register i of warp-group thread t in the m64nNk16 f32 accumulator fragment (primitives.cuh's one
// definition, which the device uses too).
inline void fragment(int t, int i, int& row, int& col) {
  row = layout::acc_row(t, i);
  col = layout::acc_col(t, i);
}

inline void snapshotOperands(MmaOp& op, std::vector<float>& a, std::vector<float>& b) {
  int kc = kSteps(op.elem);
  if (op.aRegs) a = op.a;  // registers: deposited by each thread at issue
  else gather(decode(op.descA, "A", op.file, op.line), op.transA == 0, 64, kc, op.elem, a, false, "A", op.file, op.line);
  gather(decode(op.descB, "B", op.file, op.line), op.transB == 0, op.n, kc, op.elem, b, true, "B", op.file, op.line);
}

inline void executeOp(WarpGroup& g, MmaOp& op, int wg) {
  std::vector<float> a, b;
  snapshotOperands(op, a, b);
  // Compared bit for bit: operands may hold NaNs (user data), which never compare equal as floats.
  auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  };
  if (!same(a, op.a) || !same(b, op.b))
    fail("the shared memory read by a wgmma.mma_async of warp group " + std::to_string(wg) +
             " changed between its issue and its completion (a slot was released or overwritten while the MMA was in flight)",
         op.file, op.line);
  Acc& acc = g.accs[static_cast<size_t>(op.acc)];
  int n = op.n, kc = kSteps(op.elem);
  const bool ints = intElem(op.elem);  // s8/u8: the accumulator slots hold s32 bits, summed exactly (wrapping)
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < n; ++j) {
      float& d = acc.value[static_cast<size_t>(m * n + j)];
      if (ints) {
        int64_t s = 0;
        for (int k = 0; k < kc; ++k)
          s += static_cast<int64_t>(op.a[static_cast<size_t>(m * kc + k)]) * static_cast<int64_t>(op.b[static_cast<size_t>(k * n + j)]);
        int32_t old;
        std::memcpy(&old, &d, 4);
        const uint32_t r = static_cast<uint32_t>(op.scaleD ? old : 0) + static_cast<uint32_t>(s);
        std::memcpy(&d, &r, 4);
        continue;
      }
      double s = 0;
      for (int k = 0; k < kc; ++k) s += static_cast<double>(op.a[static_cast<size_t>(m * kc + k)]) * op.b[static_cast<size_t>(k * n + j)];
      d = static_cast<float>((op.scaleD ? static_cast<double>(d) : 0.0) + s);
    }
  if (--acc.pendingOps > 0) return;
  // Completion: the accumulator goes back to the registers of the 128 threads.
  Runtime& r = rt();
  for (int t = 0; t < 128; ++t) {
    float* regs = acc.regs[static_cast<size_t>(t)];
    for (int i = 0; i < n / 2; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &regs[i], 4);
      if (bits != kPoison)
        fail(who(wg * 128 + t) + " wrote accumulator register " + std::to_string(i) +
                 " between wgmma.mma_async and the wgmma.wait_group that completes it",
             op.file, op.line);
      int row, col;
      fragment(t, i, row, col);
      std::memcpy(&regs[i], &acc.value[static_cast<size_t>(row * n + col)], 4);  // bits: f32, or s32
    }
    r.fibers[static_cast<size_t>(wg * 128 + t)].inflight.erase(regs);
  }
}

// aRegs: A from registers, this thread's four 32-bit registers (two 16-bit elements each, low half
// first) in the accumulator-fragment layout of a 64x16 tile; descA is then unused.
template <int N>
inline void mmaAsync(float (&d)[N], uint64_t descA, uint64_t descB, int scaleD, int transB, int elem, const char* file, int line,
                     const uint32_t* aRegs = nullptr, int transA = 0) {
  Runtime& r = rt();
  Fiber& f = self();
  int wg = f.tid / 128, t = f.tid % 128;
  WarpGroup& g = r.wgs[static_cast<size_t>(wg)];
  uint64_t k = f.mmaIssued++;
  auto mine = f.inflight.find(&d[0]);
  if (k == g.ops.size()) {
    MmaOp op;
    op.descA = descA, op.descB = descB, op.n = N * 2, op.transB = transB, op.transA = transA, op.scaleD = scaleD, op.elem = elem;
    op.aRegs = aRegs != nullptr;
    if (op.aRegs) op.a.assign(64 * 16, 0.0f);
    op.file = file, op.line = line;
    op.group = f.groupsCommitted;
    {
      // Its shared-memory operands are read from now until a wait_group completes its group.
      uint32_t site = readSite(file, line);
      const int es = elemSize(elem);
      auto mark = [&](uint64_t desc, bool kMajor, int mnCount, const char* which) {
        forEachElement(decode(desc, which, file, line), kMajor, mnCount, kSteps(elem), es, [&](int, int, uint32_t a) {
          if (a >= kWindowBase) markRead(static_cast<size_t>(wg), op.group, site, a, static_cast<size_t>(es));
        });
      };
      if (!op.aRegs) mark(descA, transA == 0, 64, "A");
      mark(descB, transB == 0, op.n, "B");
    }
    double start = std::max(wgClock(), r.tcFree);
    // fp8/int8 at twice the f16 rate, tf32 at half of it.
    r.tcFree = op.end = start + 2.0 * 64 * op.n * kSteps(elem) / (model().flopsPerClk * (elem == kTf32 ? 0.5 : elem >= 2 ? 2 : 1));
    if (mine != f.inflight.end()) {
      op.acc = mine->second;
    } else {
      op.fresh = true;
      op.acc = static_cast<int>(g.accs.size());
      Acc a;
      a.n = N * 2;
      a.value.assign(static_cast<size_t>(64 * N * 2), 0.0f);
      a.regs.assign(128, nullptr);
      g.accs.push_back(a);
    }
    g.ops.push_back(op);
    g.accs[static_cast<size_t>(op.acc)].pendingOps++;
    r.L->mmaOps++;
    r.L->mmaFlops += 2.0 * 64 * op.n * kSteps(elem);
  }
  MmaOp& op = g.ops[k];
  if (op.descA != descA || op.descB != descB || op.n != N * 2 || op.scaleD != scaleD || op.transB != transB || op.transA != transA ||
      op.elem != elem ||
      op.aRegs != (aRegs != nullptr))
    fail("wgmma.mma_async #" + std::to_string(k) + " of warp group " + std::to_string(wg) +
             " is not uniform across the warp group (descriptors, shape, scale-d or types differ from another thread's)",
         file, line);
  bool fresh = mine == f.inflight.end();
  if (fresh != op.fresh || (!fresh && mine->second != op.acc))
    fail("wgmma.mma_async #" + std::to_string(k) + ": the accumulator registers do not match the other threads' (in flight for some, not others)",
         file, line);
  if (fresh) {
    if (!f.fenced) fail("wgmma.mma_async with accumulator registers not ordered by a wgmma.fence since they were last accessed", file, line);
    Acc& acc = g.accs[static_cast<size_t>(op.acc)];
    acc.regs[static_cast<size_t>(t)] = &d[0];
    for (int i = 0; i < N; ++i) {
      int row, col;
      fragment(t, i, row, col);
      std::memcpy(&acc.value[static_cast<size_t>(row * N * 2 + col)], &d[i], 4);  // bits: f32, or s32
      std::memcpy(&d[i], &kPoison, 4);
    }
    f.inflight[&d[0]] = op.acc;
  }
  if (aRegs)
    for (int j = 0; j < 8; ++j) {
      int row, col;
      fragment(t, j, row, col);
      uint16_t bits = static_cast<uint16_t>(aRegs[j / 2] >> (16 * (j % 2)));
      op.a[static_cast<size_t>(row * 16 + col)] = elem ? bf16BitsToF32(bits) : f16BitsToF32(bits);
    }
  // The warp group's op starts once its last thread has issued it: the operands are read from then on.
  if (++op.issued == 128) snapshotOperands(op, op.a, op.b);
}

// ---- scheduler

inline bool ready(const Wait& w) {
  Runtime& r = rt();
  switch (w.kind) {
    case WaitKind::None: return true;
    case WaitKind::Mbar: {
      const Mbar& m = r.mbars.at(w.addr);
      return (m.phase & 1u) != w.parity;
    }
    case WaitKind::NamedBar: return r.bars[w.id].gen != w.gen;
    case WaitKind::Warp: return r.warps[static_cast<size_t>(w.id)].gen != w.gen;
    case WaitKind::Shfl: return r.shfl[static_cast<size_t>(w.id)].gen != w.gen;
    case WaitKind::Wgmma: {
      const WarpGroup& g = r.wgs[static_cast<size_t>(w.id)];
      if (g.commits.size() < w.gen) return false;
      for (uint64_t i = g.groupsDone; i < w.gen; ++i)
        if (g.commits[i] < 128) return false;
      return true;
    }
    case WaitKind::BulkRead: return true;
  }
  return true;
}

inline std::string describeWait(const Fiber& f) {
  Runtime& r = rt();
  const Wait& w = f.wait;
  std::string at = std::string(" at ") + w.file + ":" + std::to_string(w.line);
  switch (w.kind) {
    case WaitKind::Mbar: {
      const Mbar& m = r.mbars.at(w.addr);
      return "wait on " + barName(w.addr) + " for the phase of parity " + std::to_string(w.parity) + at + "; it is in phase " +
             std::to_string(m.phase) + " with " + std::to_string(m.pending) + " of " + std::to_string(m.expected) +
             " arrival(s) pending and tx-count " + std::to_string(m.tx);
    }
    case WaitKind::NamedBar:
      return "wait at named barrier " + std::to_string(w.id) + at + " (" + std::to_string(r.bars[w.id].arrived) + " of " +
             std::to_string(r.bars[w.id].count) + " threads arrived)";
    case WaitKind::Warp:
      return "wait in elect.sync" + at + " for the other lanes of warp " + std::to_string(w.id) + " (" +
             std::to_string(r.warps[static_cast<size_t>(w.id)].arrived) + " of 32 arrived)";
    case WaitKind::Shfl:
      return "wait in shfl.sync" + at + " for the other lanes of warp " + std::to_string(w.id) + " (" +
             std::to_string(r.shfl[static_cast<size_t>(w.id)].arrived) + " of 32 arrived)";
    case WaitKind::Wgmma:
      return "wait in wgmma.wait_group" + at + " for wgmma group " + std::to_string(w.gen - 1) +
             " to be committed by all 128 threads of warp group " + std::to_string(w.id);
    default: return "wait" + at;
  }
}

inline void runAsync(AsyncOp& op);

inline void runPendingAsync() {
  Runtime& r = rt();
  for (; r.asyncNext < r.async.size() && !r.failed; ++r.asyncNext)
    if (!r.async[r.asyncNext].done) runAsync(r.async[r.asyncNext]);
}

inline void fiberMain() {
  Runtime& r = rt();
  r.body(r.args);
  Fiber* f = r.cur;
  if (!f->inflight.empty())
    failHere(who(f->tid) + " exited with wgmma accumulators still in flight (no wgmma.wait_group completed them)", "", 0);
  f->done = true;
  swapcontext(&f->ctx, &r.sched);
}

inline void deadlock() {
  Runtime& r = rt();
  std::string msg = "deadlock: no thread can make progress";
  std::vector<std::pair<std::string, int>> lines;
  for (const Fiber& f : r.fibers)
    if (!f.done) lines.emplace_back(describeWait(f), f.tid);
  // Ranges of consecutive threads with the same wait.
  const char* file = "";
  int line = 0;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1].first == lines[i].first && lines[j + 1].second == lines[j].second + 1) ++j;
    msg += "\n  threads " + std::to_string(lines[i].second) + "-" + std::to_string(lines[j].second) + " " + lines[i].first;
    if (i == 0) {
      file = r.fibers[static_cast<size_t>(lines[i].second)].wait.file;
      line = r.fibers[static_cast<size_t>(lines[i].second)].wait.line;
    }
    i = j + 1;
  }
  int finished = 0;
  for (const Fiber& f : r.fibers) finished += f.done;
  msg += "\n  (" + std::to_string(finished) + " thread(s) have exited)";
  setError(msg, file, line);
}

inline void runBlock(char* stacks) {
  Runtime& r = rt();
  size_t nthreads = static_cast<size_t>(r.threads);
  r.fibers.assign(nthreads, Fiber{});
  r.smem.assign(static_cast<size_t>(r.L->smemBytes), 0);
  // Fresh shared memory holds garbage on a GPU: a pattern, so reads of unwritten smem are not zeros.
  for (size_t i = 0; i < r.smem.size(); ++i) r.smem[i] = static_cast<uint8_t>(0xA5 ^ (i * 131));
  r.dirtyOwner.assign(r.smem.size(), 0);
  r.readers.clear();
  r.sites.clear();
  r.bulkStream.assign(nthreads, -1);
  r.mbars.clear();
  for (auto& b : r.bars) b = NamedBar{};
  r.warps.assign((nthreads + 31) / 32, NamedBar{});
  r.shfl.assign((nthreads + 31) / 32, Shfl{});
  r.wgs.assign((nthreads + 127) / 128, WarpGroup{});
  r.async.clear();
  r.asyncNext = 0;
  r.wgClock.assign((nthreads + 127) / 128, 0.0);
  r.tcFree = r.pipeFree = 0;
  for (size_t i = 0; i < nthreads; ++i) {
    Fiber& f = r.fibers[i];
    f.tid = static_cast<int>(i);
    f.stack = stacks + i * (kStackBytes + 4096) + 4096;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiberMain, 0);
  }
  std::vector<size_t> order(nthreads);
  for (size_t i = 0; i < nthreads; ++i) order[i] = i;
  while (!r.failed) {
    bool alive = false, progress = false;
    if (r.L->seed) std::shuffle(order.begin(), order.end(), r.rng);
    for (size_t i : order) {
      Fiber& f = r.fibers[i];
      if (f.done) continue;
      alive = true;
      if (f.blocked && !ready(f.wait)) continue;
      r.cur = &f;
      swapcontext(&r.sched, &f.ctx);
      r.cur = nullptr;
      r.L->switches++;
      progress = true;
      if (r.failed) return;
    }
    if (!alive) break;
    if (r.asyncNext < r.async.size()) {
      runPendingAsync();
      progress = true;
    }
    if (!progress) {
      deadlock();
      return;
    }
  }
  runPendingAsync();
}

// SIGSEGV / SIGBUS / SIGFPE / SIGILL while a launch runs: back to runGrid, which reports the fault.
inline void onFault(int sig, siginfo_t* info, void*) {
  Runtime& r = rt();
  r.faultAddr = info->si_addr;
  r.faultSig = sig;
  siglongjmp(r.faultJmp, 1);
}

// What the faulting address was: outside which buffer and by how much, a thread's stack guard, or
// nothing of the launch's.
inline void reportFault(const char* stacks, size_t perThread) {
  Runtime& r = rt();
  const uint64_t a = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(r.faultAddr));
  std::string what;
  for (int i = 0; i < r.L->nBuffers && what.empty(); ++i) {
    const uint64_t base = r.L->bufferBases[i], bytes = r.L->bufferBytes[i], g = r.L->guardBytes;
    const std::string name = r.L->bufferNames[i];
    if (a >= base + bytes && a < base + bytes + g)
      what = "out-of-bounds global access: byte " + std::to_string(a - base) + " of buffer '" + name + "', which holds " +
             std::to_string(bytes) + " bytes";
    else if (a < base && base - a <= g)
      what = "out-of-bounds global access: " + std::to_string(base - a) + " byte(s) before the start of buffer '" + name + "'";
  }
  for (int i = 0; i < r.threads && what.empty(); ++i) {
    const uint64_t guard = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(stacks + static_cast<size_t>(i) * perThread));
    if (a >= guard && a < guard + 4096)
      what = "thread " + std::to_string(i) + " overflowed its stack of " + std::to_string(kStackBytes / 1024) + " KiB";
  }
  if (what.empty() && r.faultSig == SIGFPE) what = "integer division by zero (or of the most negative value by -1)";
  if (what.empty() && r.faultSig == SIGILL)
    what = "illegal instruction: the kernel did something undefined that the host compiler turned into a trap "
           "(such as an integer division by a constant zero)";
  if (what.empty()) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(a));
    what = std::string(r.faultSig == SIGBUS ? "bus error" : "invalid memory access") + " at address " + hex +
           ", in no buffer of the launch";
  }
  const char* file = r.cur ? r.cur->atFile : nullptr;
  const int line = r.cur ? r.cur->atLine : 0;
  if (r.cur) what = who(r.cur->tid) + ": " + what;
  r.cur = nullptr;
  setError(what, file ? file : "", line);
}

inline int runGrid(TawaEmuLaunch* L, void (*body)(void* const*), void* const* args) {
  Runtime& r = rt();
  r = Runtime{};
  r.L = L;
  r.body = body;
  r.args = args;
  r.threads = L->threads;
  r.rng.seed(L->seed);
  if (L->abiVersion != TAWA_EMU_ABI_VERSION) {
    setError("emulator ABI mismatch", "", 0);
    return 1;
  }
  if (L->threads <= 0 || L->threads % 128 || L->threads > 1024) {
    setError("a block must be whole warp groups of 128 threads, at most 1024; got " + std::to_string(L->threads), "", 0);
    return 1;
  }
  if (L->smemBytes < 0 || L->smemBytes + kWindowBase > 262144) {
    setError("dynamic shared memory of " + std::to_string(L->smemBytes) + " bytes does not fit the 18-bit descriptor window", "", 0);
    return 1;
  }
  size_t per = kStackBytes + 4096, total = per * static_cast<size_t>(L->threads);
  void* mem = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    setError("cannot map fiber stacks", "", 0);
    return 1;
  }
  char* stacks = static_cast<char*>(mem);
  r.smFree.assign(static_cast<size_t>(L->model.sms > 0 ? L->model.sms : 1), 0.0);
  for (int i = 0; i < L->threads; ++i) mprotect(stacks + static_cast<size_t>(i) * per, 4096, PROT_NONE);  // guard pages
  // A memory fault in the kernel's own code -- a plain global access outside its buffer (each buffer
  // lies between PROT_NONE guards, placed by the host), or a thread running into its stack's guard
  // page -- arrives as SIGSEGV or SIGBUS, an integer division by zero as SIGFPE (or SIGILL), on an
  // alternate stack: the handler jumps back here and the launch ends with a report instead of
  // corrupting or killing the process. The process's own handlers are restored afterwards.
  std::vector<char> altStack(64 * 1024);
  stack_t alt{}, oldAlt{};
  alt.ss_sp = altStack.data();
  alt.ss_size = altStack.size();
  sigaltstack(&alt, &oldAlt);
  struct sigaction sa{}, oldSegv{}, oldBus{}, oldFpe{}, oldIll{};
  sa.sa_sigaction = onFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &oldSegv);
  sigaction(SIGBUS, &sa, &oldBus);
  sigaction(SIGFPE, &sa, &oldFpe);
  sigaction(SIGILL, &sa, &oldIll);
  if (sigsetjmp(r.faultJmp, 1) == 0) {
    for (int z = 0; z < L->grid[2] && !r.failed; ++z)
      for (int y = 0; y < L->grid[1] && !r.failed; ++y)
        for (int x = 0; x < L->grid[0] && !r.failed; ++x) {
          r.bx = x, r.by = y, r.bz = z;
          int64_t linear = x + static_cast<int64_t>(L->grid[0]) * (y + static_cast<int64_t>(L->grid[1]) * z);
          double& sm = r.smFree[static_cast<size_t>(linear % static_cast<int64_t>(r.smFree.size()))];
          r.blockStart = sm;
          runBlock(stacks);
          double end = 0;
          for (double c : r.wgClock) end = std::max(end, c);
          sm = r.blockStart + end;
        }
  } else {
    reportFault(stacks, per);
  }
  sigaction(SIGSEGV, &oldSegv, nullptr);
  sigaction(SIGBUS, &oldBus, nullptr);
  sigaction(SIGFPE, &oldFpe, nullptr);
  sigaction(SIGILL, &oldIll, nullptr);
  sigaltstack(&oldAlt, nullptr);
  munmap(mem, total);
  r.fibers.clear();
  return r.failed ? 1 : 0;
}

// ---- TMA

inline const TawaEmuTensorMap& mapOf(const void* m, const char* file, int line) {
  const TawaEmuTensorMap* t = static_cast<const TawaEmuTensorMap*>(m);
  if (t->magic != TAWA_EMU_MAP_MAGIC) fail("cp.async.bulk.tensor through a tensor map the emulator did not encode", file, line);
  return *t;
}

inline uint64_t boxBytes(const TawaEmuTensorMap& m) {
  uint64_t n = m.elemBytes;
  for (uint32_t d = 0; d < m.rank; ++d) n *= m.box[d];
  return n;
}

// Element `i` of the box (inner dimension fastest, as TMA lays the box out in shared memory) at
// coordinates `c`: its global coordinates in g, and whether they lie inside the tensor.
inline bool boxElement(const TawaEmuTensorMap& m, const int* c, uint64_t i, int64_t* g) {
  bool in = true;
  for (uint32_t d = 0; d < m.rank; ++d) {
    g[d] = static_cast<int64_t>(c[d]) + static_cast<int64_t>(i % m.box[d]);
    i /= m.box[d];
    in = in && g[d] >= 0 && static_cast<uint64_t>(g[d]) < m.dims[d];
  }
  return in;
}

inline uint8_t* globalAt(const TawaEmuTensorMap& m, const int64_t* g, const char* file, int line) {
  uint64_t off = static_cast<uint64_t>(g[0]) * m.elemBytes;
  for (uint32_t d = 1; d < m.rank; ++d) off += static_cast<uint64_t>(g[d]) * m.strideBytes[d - 1];
  if (off + m.elemBytes > m.bufferBytes) {
    std::string at;
    for (uint32_t d = m.rank; d-- > 0;) at += std::to_string(g[d]) + (d ? ", " : "");
    fail("global access at element (" + at + ") of a tensor map lies outside its " + std::to_string(m.bufferBytes) + "-byte buffer",
         file, line);
    return nullptr;
  }
  return m.base + off;
}

inline void runAsync(AsyncOp& op) {
  Runtime& r = rt();
  op.done = true;
  const TawaEmuTensorMap& m = op.map;
  const uint64_t bytes = boxBytes(m), elems = bytes / m.elemBytes;
  int64_t g[5];
  if (!op.store) {
    for (uint64_t i = 0; i < elems; ++i) {
      bool in = boxElement(m, op.c, i, g);
      uint32_t a = swizzle(op.smem + static_cast<uint32_t>(i * m.elemBytes), m.swizzleBytes);
      uint8_t* dst = atWindow(a, m.elemBytes, "cp.async.bulk.tensor (load) destination", op.file, op.line);
      if (r.failed) return;
      if (in) {
        const uint8_t* src = globalAt(m, g, op.file, op.line);
        if (r.failed) return;
        std::memcpy(dst, src, m.elemBytes);
      } else {
        std::memset(dst, 0, m.elemBytes);  // out of bounds: zero-filled
      }
      std::memset(&r.dirtyOwner[a - kWindowBase], 0, m.elemBytes * sizeof(uint16_t));
    }
    Mbar& b = r.mbars.at(op.bar);
    b.last = std::max(b.last, op.landed);
    b.tx -= static_cast<int64_t>(bytes);
    join(b.pend, op.seen);
    mbarComplete(b, op.bar, op.file, op.line);
    return;
  }
  const uint8_t* src = atWindow(op.smem, static_cast<size_t>(bytes), "cp.async.bulk.tensor (store) source", op.file, op.line);
  if (r.failed) return;
  if (std::memcmp(src, op.snapshot.data(), op.snapshot.size()) != 0)
    fail("the shared memory source of a TMA store issued by " + who(op.tid) +
             " was overwritten before the store read it (no cp.async.bulk.wait_group.read before reuse)",
         op.file, op.line);
  if (op.reduce && m.elemBytes != 4) fail("cp.reduce.async.bulk.tensor .add on a map of " + std::to_string(m.elemBytes) + "-byte elements", op.file, op.line);
  for (uint64_t i = 0; i < elems; ++i) {
    if (!boxElement(m, op.c, i, g)) continue;  // out of bounds: skipped
    uint32_t a = swizzle(op.smem + static_cast<uint32_t>(i * m.elemBytes), m.swizzleBytes);
    uint8_t* dst = globalAt(m, g, op.file, op.line);
    if (r.failed) return;
    const uint8_t* from = r.smem.data() + (a - kWindowBase);
    if (op.reduce == 1) {  // blocks run one at a time: the read-modify-write is atomic
      float x, y;
      std::memcpy(&x, dst, 4), std::memcpy(&y, from, 4);
      x += y;
      std::memcpy(dst, &x, 4);
    } else if (op.reduce == 2) {
      uint32_t x, y;  // two's complement: the add wraps
      std::memcpy(&x, dst, 4), std::memcpy(&y, from, 4);
      x += y;
      std::memcpy(dst, &x, 4);
    } else {
      std::memcpy(dst, from, m.elemBytes);
    }
  }
}

// A cp.async.bulk.tensor of `rank` coordinates (inner first) on `map`, whose rank must match.
inline void issueTma(bool store, void* smemPtr, const void* map, int rank, const int* c, uint64_t* bar, const char* file, int line,
                     int reduce = 0) {
  Runtime& r = rt();
  Fiber& f = self();
  AsyncOp op;
  op.store = store;
  op.reduce = reduce;
  op.map = mapOf(map, file, line);
  if (op.map.rank != static_cast<uint32_t>(rank))
    fail("cp.async.bulk.tensor." + std::to_string(rank) + "d on a tensor map of rank " + std::to_string(op.map.rank), file, line);
  for (int d = 0; d < rank; ++d) op.c[d] = c[d];
  op.tid = f.tid, op.file = file, op.line = line;
  const TawaEmuTensorMap& m = op.map;
  size_t bytes = static_cast<size_t>(boxBytes(m));
  const char* what = store ? "cp.async.bulk.tensor (store) source" : "cp.async.bulk.tensor (load) destination";
  op.smem = windowOf(smemPtr, bytes, what, file, line);
  charge(model().tmaIssue);
  {
    double start = std::max(wgClock(), r.pipeFree);
    r.pipeFree = start + static_cast<double>(bytes) / model().bytesPerClk;
    op.landed = r.pipeFree + (store ? 0.0 : model().tmaLatency);
  }
  if (op.smem % 128) fail(std::string(what) + ": shared address " + std::to_string(op.smem) + " is not 128-byte aligned", file, line);
  if (m.swizzleBytes && m.box[0] * m.elemBytes != m.swizzleBytes)
    fail("a TMA box whose inner extent (" + std::to_string(m.box[0] * m.elemBytes) + " bytes) differs from its " +
             std::to_string(m.swizzleBytes) + "B swizzle span is not modeled by the emulator",
         file, line);
  if (store) {
    int64_t d = firstDirty(op.smem, bytes);
    if (d >= 0)
      fail("TMA store reads shared memory at smem window address " + std::to_string(op.smem + d) + " written by " +
               who(rt().dirtyOwner[op.smem - kWindowBase + static_cast<size_t>(d)] - 1) +
               " with a generic store and no fence.proxy.async since",
           file, line);
    op.snapshot.assign(r.smem.data() + (op.smem - kWindowBase), r.smem.data() + (op.smem - kWindowBase) + bytes);
    op.group = f.bulkCommitted;
    f.bulkOps.push_back(r.async.size());
    markRead(bulkStreamOf(f.tid), op.group, readSite(file, line), op.smem, bytes);
  } else {
    mbarAt(bar, "cp.async.bulk.tensor (load) completion mbarrier", file, line, &op.bar);
    checkWrite(op.smem, bytes, f.seen, "cp.async.bulk.tensor (load)", file, line);
    op.seen = f.seen;
  }
  r.async.push_back(std::move(op));
  r.L->tmaOps++;
}

}  // namespace emu

// ---- the primitives

inline int thread_idx() { return emu::self().tid; }
inline int block_idx_x() { return emu::rt().bx; }
inline int block_idx_y() { return emu::rt().by; }
inline int block_idx_z() { return emu::rt().bz; }
inline int grid_dim_x() { return emu::rt().L->grid[0]; }
inline int grid_dim_y() { return emu::rt().L->grid[1]; }
inline int grid_dim_z() { return emu::rt().L->grid[2]; }
inline int lane_idx() { return emu::self().tid & 31; }
template <class T>
inline T assume_at_least(T x, long long lo, TAWA_EMU_LOC) {
  const bool is_unsigned = static_cast<T>(-1) > static_cast<T>(0);
  if (!is_unsigned && static_cast<long long>(x) < lo)
    emu::fail("a value the compiler assumed to be at least " + std::to_string(lo) + " is " + std::to_string(static_cast<long long>(x)) +
                  " (tile.assume: the device would trap)",
              TAWA_EMU_AT);
  return x;
}
inline int warpgroup_idx() { return emu::self().tid / 128; }
inline int warpgroup_thread_idx() { return emu::self().tid & 127; }
inline int warp_idx_in_warpgroup() { return (emu::self().tid / 32) & 3; }

inline uint8_t* dynamic_smem_1024() {
  return emu::smemBase() + ((1024u - (emu::kWindowBase & 1023u)) & 1023u);
}
inline uint32_t smem_addr(const void* p, TAWA_EMU_LOC) { return emu::windowOf(p, 0, "smem_addr", TAWA_EMU_AT); }

namespace emu {
// An accumulator register is poisoned (kPoison, a signalling NaN) from wgmma issue to completion;
// arithmetic keeps the payload (quieted). The conversions, stores, shuffles and math primitives
// reject it: a read of an accumulator before its wgmma.wait_group is reported, not just a NaN.
inline void checkRead(float x, const char* what, const char* file, int line) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fbfffffu) == (kPoison & 0x7fbfffffu))
    fail(std::string("used, in ") + what + ", a value read from wgmma accumulator registers before the wgmma.wait_group that "
                                           "completes their wgmma.mma_async",
         file, line);
}
}  // namespace emu

inline f16 to_f16(float x, TAWA_EMU_LOC) {
  emu::checkRead(x, "a conversion to f16", TAWA_EMU_AT);
  emu::charge(128 / emu::model().cvtPerClk);
  return f16{emu::f32ToF16Bits(x)};
}
inline bf16 to_bf16(float x, TAWA_EMU_LOC) {
  emu::checkRead(x, "a conversion to bf16", TAWA_EMU_AT);
  emu::charge(128 / emu::model().cvtPerClk);
  return bf16{emu::f32ToBf16Bits(x)};
}
inline f16 f64_to_f16(double x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  emu::charge(128 / emu::model().cvtPerClk);
  return f16{emu::f64ToF16Bits(x)};
}
inline bf16 f64_to_bf16(double x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  emu::charge(128 / emu::model().cvtPerClk);
  return bf16{emu::f64ToBf16Bits(x)};
}
template <class I>
inline bf16 int_to_bf16(I x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  emu::charge(128 / emu::model().cvtPerClk);
  const bool negative = !(I(-1) > I(0)) && x < I(0);
  const uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(static_cast<long long>(x)) : static_cast<uint64_t>(x);
  return bf16{emu::intToBf16Bits(mag, negative)};
}
template <class I, class F>
inline I float_to_int(F x, TAWA_EMU_LOC) {
  if constexpr (std::is_same_v<F, float>) emu::checkRead(x, "a conversion to an integer", TAWA_EMU_AT);
  emu::charge(128 / emu::model().cvtPerClk);
  return emu::floatToIntSaturated<I>(x);
}
inline float to_f32(float x, TAWA_EMU_LOC) {
  emu::checkRead(x, "a conversion to f32", TAWA_EMU_AT);
  return x;
}
inline float to_f32(f16 x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  return emu::f16BitsToF32(x.bits);
}
inline float to_f32(bf16 x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  return emu::bf16BitsToF32(x.bits);
}
inline float to_f32(fp8e4m3 x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  return emu::e4m3BitsToF32(x.bits);
}
inline float to_f32(fp8e5m2 x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  return emu::e5m2BitsToF32(x.bits);
}
inline fp8e4m3 to_fp8e4m3(float x, TAWA_EMU_LOC) {
  emu::checkRead(x, "a conversion to fp8", TAWA_EMU_AT);
  emu::charge(128 / emu::model().cvtPerClk);
  return fp8e4m3{emu::toFp8Bits(x, false)};
}
inline fp8e5m2 to_fp8e5m2(float x, TAWA_EMU_LOC) {
  emu::checkRead(x, "a conversion to fp8", TAWA_EMU_AT);
  emu::charge(128 / emu::model().cvtPerClk);
  return fp8e5m2{emu::toFp8Bits(x, true)};
}
inline fp8e4m3 f64_to_fp8e4m3(double x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  emu::charge(128 / emu::model().cvtPerClk);
  return fp8e4m3{emu::toFp8Bits(x, false)};
}
inline fp8e5m2 f64_to_fp8e5m2(double x, TAWA_EMU_LOC) {
  (void)tawa_file, (void)tawa_line;
  emu::charge(128 / emu::model().cvtPerClk);
  return fp8e5m2{emu::toFp8Bits(x, true)};
}

namespace emu {
inline void stShared(void* p, const void* v, uint32_t bytes, const char* file, int line) {
  uint32_t a = windowOf(p, bytes, "st.shared", file, line);
  if (a % bytes) fail("st.shared of " + std::to_string(bytes) + " bytes at a misaligned shared address " + std::to_string(a), file, line);
  checkWrite(a, bytes, self().seen, "st.shared", file, line);
  std::memcpy(p, v, bytes);
  charge(128.0 * bytes / model().smemBytesPerClk);
  Fiber& f = self();
  uint32_t off = a - kWindowBase;
  for (uint32_t i = 0; i < bytes; ++i) rt().dirtyOwner[off + i] = static_cast<uint16_t>(f.tid + 1);
  if (!f.dirty.empty() && f.dirty.back().second == off) f.dirty.back().second = off + bytes;
  else f.dirty.emplace_back(off, off + bytes);
}
}  // namespace emu

// Tiles TMA cannot take, moved by threads (primitives.cuh): each 16-byte chunk of the box is one
// st.shared, checked and marked generic-dirty like any other; the global reads and writes are plain
// accesses of the launch's guarded buffers.
// tile_gather_generic: box row i from tensor row row_of(i) (primitives.cuh).
template <int EB, int BOX_C, int BOX_R, int SWZ, bool TF32 = false, class RowOf>
inline void tile_gather_generic(void* dst, const void* base, long long cols, long long rows, long long col_stride, long long row_stride,
                                long long slices, long long slice_stride, int c0, RowOf row_of, int c2, int t, int n, TAWA_EMU_LOC) {
  static_assert((BOX_C * EB) % 16 == 0, "a box row is whole 16-byte chunks");
  constexpr int kPer = 16 / EB, kChunksPerRow = BOX_C / kPer;
  const uint32_t s0 = emu::windowOf(dst, static_cast<size_t>(BOX_R) * BOX_C * EB, "a tile load's destination", TAWA_EMU_AT);
  const emu::CopyAt located(tawa_file, tawa_line);  // its global reads fault located
  const uint8_t* g = static_cast<const uint8_t*>(base) + static_cast<long long>(c2) * slice_stride * EB;
  const bool slice_in = c2 >= 0 && c2 < slices;
  for (int q = t; q < BOX_R * kChunksPerRow; q += n) {
    const long long r = row_of(q / kChunksPerRow);
    const long long c = static_cast<long long>(c0) + (q % kChunksPerRow) * kPer;
    uint8_t chunk[16] = {};
    for (int e = 0; e < kPer; ++e)
      if (slice_in && r >= 0 && r < rows && c + e >= 0 && c + e < cols)
        std::memcpy(chunk + e * EB, g + (r * row_stride + (c + e) * col_stride) * EB, EB);
    if constexpr (TF32) {  // f32 operands of a tf32 wgmma, rounded as they are written (primitives.cuh)
      static_assert(EB == 4, "tf32 rounding of f32 elements");
      for (int e = 0; e < kPer; ++e) {
        uint32_t w;
        std::memcpy(&w, chunk + e * 4, 4);
        w = tawa::numerics::round_tf32_bits(w);
        std::memcpy(chunk + e * 4, &w, 4);
      }
    }
    const uint32_t a = emu::swizzle(s0 + static_cast<uint32_t>(q) * 16u, SWZ);
    // Modelled: the n threads' chunks share the SM's memory bandwidth (the clock keeper copies 1/n).
    emu::charge(16.0 * n / emu::model().bytesPerClk);
    emu::stShared(static_cast<uint8_t*>(dst) + (a - s0), chunk, 16, TAWA_EMU_AT);
    if (emu::rt().failed) return;
  }
}
template <int EB, int BOX_C, int BOX_R, int SWZ, bool TF32 = false>
inline void tile_load_generic(void* dst, const void* base, long long cols, long long rows, long long col_stride, long long row_stride,
                              long long slices, long long slice_stride, int c0, int c1, int c2, int t, int n, TAWA_EMU_LOC) {
  tile_gather_generic<EB, BOX_C, BOX_R, SWZ, TF32>(dst, base, cols, rows, col_stride, row_stride, slices, slice_stride, c0,
                                                   [c1](int i) { return static_cast<long long>(c1) + i; }, c2, t, n, tawa_file, tawa_line);
}
template <int EB, int BOX_C, int BOX_R>
inline void tile_store_generic(void* base, long long cols, long long rows, long long col_stride, long long row_stride, long long slices,
                               long long slice_stride, int c0, int c1, int c2, const void* src, int t, int n, TAWA_EMU_LOC) {
  emu::windowOf(src, static_cast<size_t>(BOX_R) * BOX_C * EB, "a tile store's source", TAWA_EMU_AT);
  const emu::CopyAt located(tawa_file, tawa_line);  // its global writes fault located
  if (c2 < 0 || c2 >= slices) return;
  uint8_t* g = static_cast<uint8_t*>(base) + static_cast<long long>(c2) * slice_stride * EB;
  const uint8_t* s = static_cast<const uint8_t*>(src);
  for (int i = t; i < BOX_R * BOX_C; i += n) {
    const long long r = static_cast<long long>(c1) + i / BOX_C, c = static_cast<long long>(c0) + i % BOX_C;
    if (r >= 0 && r < rows && c >= 0 && c < cols) std::memcpy(g + (r * row_stride + c * col_stride) * EB, s + i * EB, EB);
  }
}

// The emulator's code of a reduce-add's element type: 1 f32, 2 s32 (AsyncOp::reduce).
template <class T>
constexpr int reduceKind() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, int32_t>, "a TMA reduce-add of f32 or s32");
  return std::is_same_v<T, float> ? 1 : 2;
}
template <class T, int BOX_C, int BOX_R>
inline void tile_reduce_add_generic(void* base, long long cols, long long rows, long long col_stride, long long row_stride, long long slices,
                                    long long slice_stride, int c0, int c1, int c2, const void* src, int t, int n, TAWA_EMU_LOC) {
  emu::windowOf(src, static_cast<size_t>(BOX_R) * BOX_C * sizeof(T), "a tile reduce-add's source", TAWA_EMU_AT);
  (void)reduceKind<T>();
  if (c2 < 0 || c2 >= slices) return;
  T* g = static_cast<T*>(base) + static_cast<long long>(c2) * slice_stride;
  const T* s = static_cast<const T*>(src);
  for (int i = t; i < BOX_R * BOX_C; i += n) {
    const long long r = static_cast<long long>(c1) + i / BOX_C, c = static_cast<long long>(c0) + i % BOX_C;
    if (r >= 0 && r < rows && c >= 0 && c < cols) {  // atomicAdd: blocks and their threads run one at a time
      T* p = g + r * row_stride + c * col_stride;
      if constexpr (std::is_same_v<T, float>) *p += s[i];
      else *p = static_cast<T>(static_cast<uint32_t>(*p) + static_cast<uint32_t>(s[i]));
    }
  }
}

template <class T>
inline T ld_shared(const void* p, TAWA_EMU_LOC) {
  const uint32_t a = emu::windowOf(p, sizeof(T), "ld.shared", TAWA_EMU_AT);
  if (a % sizeof(T)) emu::fail("ld.shared of " + std::to_string(sizeof(T)) + " bytes at a misaligned shared address " + std::to_string(a), TAWA_EMU_AT);
  emu::charge(128.0 * sizeof(T) / emu::model().smemBytesPerClk);
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}
inline void st_shared_pair(void* p, f16 a, f16 b, TAWA_EMU_LOC) {
  uint16_t v[2] = {a.bits, b.bits};
  emu::stShared(p, v, 4, TAWA_EMU_AT);
}
inline void st_shared_pair(void* p, bf16 a, bf16 b, TAWA_EMU_LOC) {
  uint16_t v[2] = {a.bits, b.bits};
  emu::stShared(p, v, 4, TAWA_EMU_AT);
}
inline void st_shared_pair(void* p, int32_t a, int32_t b, TAWA_EMU_LOC) {
  int32_t v[2] = {a, b};
  emu::stShared(p, v, 8, TAWA_EMU_AT);
}
template <class T>  // any other element type (8-, 16- or 64-bit integers): the pair in one store
inline void st_shared_pair(void* p, T a, T b, TAWA_EMU_LOC) {
  T v[2] = {a, b};
  emu::stShared(p, v, 2 * sizeof(T), TAWA_EMU_AT);
}
inline void st_shared_byte(void* p, int8_t v, TAWA_EMU_LOC) { emu::stShared(p, &v, 1, TAWA_EMU_AT); }
inline void st_shared_pair(void* p, float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "st.shared", TAWA_EMU_AT);
  emu::checkRead(b, "st.shared", TAWA_EMU_AT);
  float v[2] = {a, b};
  emu::stShared(p, v, 8, TAWA_EMU_AT);
}

inline void mbarrier_init(uint64_t* bar, uint32_t count, TAWA_EMU_LOC) {
  uint32_t a = emu::windowOf(bar, 8, "mbarrier.init", TAWA_EMU_AT);
  if (a % 8) emu::fail("mbarrier.init at a shared address that is not 8-byte aligned", TAWA_EMU_AT);
  if (count < 1 || count > (1u << 20) - 1) emu::fail("mbarrier.init with an arrival count outside [1, 2^20 - 1]", TAWA_EMU_AT);
  emu::Mbar m;
  m.expected = count;
  m.pending = count;
  emu::rt().mbars[a] = m;
}
inline void fence_mbarrier_init() {}
inline void mbarrier_arrive(uint64_t* bar, TAWA_EMU_LOC) {
  uint32_t a;
  emu::Mbar* m = emu::mbarAt(bar, "mbarrier.arrive", TAWA_EMU_AT, &a);
  emu::charge(emu::model().arrive);
  emu::mbarArrive(a, *m, TAWA_EMU_AT);
}
inline void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes, TAWA_EMU_LOC) {
  uint32_t a;
  emu::Mbar* m = emu::mbarAt(bar, "mbarrier.arrive.expect_tx", TAWA_EMU_AT, &a);
  emu::charge(emu::model().arrive);
  m->tx += bytes;
  if (m->tx > (1 << 20) - 1) emu::fail("mbarrier tx-count above 2^20 - 1 on " + emu::barName(a), TAWA_EMU_AT);
  emu::mbarArrive(a, *m, TAWA_EMU_AT);
}
// A try_wait that would fail suspends the thread until the phase completes (a time limit that never
// expires is one the PTX ISA allows); a phase that can never complete is reported as a deadlock.
inline bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity, TAWA_EMU_LOC) {
  uint32_t a;
  emu::mbarAt(bar, "mbarrier.try_wait.parity", TAWA_EMU_AT, &a);
  emu::Wait w;
  w.kind = emu::WaitKind::Mbar;
  w.addr = a;
  w.parity = parity & 1u;
  w.file = tawa_file;
  w.line = tawa_line;
  emu::block(w);
  emu::join(emu::self().seen, emu::rt().mbars.at(a).done);
  emu::advanceTo(emu::rt().mbars.at(a).doneAt[parity & 1u]);
  emu::charge(emu::model().waitWake);
  return true;
}
inline void mbarrier_wait_parity(uint64_t* bar, uint32_t parity, TAWA_EMU_LOC) { mbarrier_try_wait_parity(bar, parity, TAWA_EMU_AT); }

inline void cp_async_bulk_tensor_2d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar, TAWA_EMU_LOC) {
  const int c[] = {c0, c1};
  emu::issueTma(false, dst, map, 2, c, bar, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_3d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar,
                                                     TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2};
  emu::issueTma(false, dst, map, 3, c, bar, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_4d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3, uint64_t* bar,
                                                     TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3};
  emu::issueTma(false, dst, map, 4, c, bar, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_5d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                                     uint64_t* bar, TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3, c4};
  emu::issueTma(false, dst, map, 5, c, bar, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map, int c0, int c1, const void* src, TAWA_EMU_LOC) {
  const int c[] = {c0, c1};
  emu::issueTma(true, const_cast<void*>(src), map, 2, c, nullptr, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_3d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, const void* src, TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2};
  emu::issueTma(true, const_cast<void*>(src), map, 3, c, nullptr, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_4d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, const void* src,
                                                     TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3};
  emu::issueTma(true, const_cast<void*>(src), map, 4, c, nullptr, TAWA_EMU_AT);
}
inline void cp_async_bulk_tensor_5d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4, const void* src,
                                                     TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3, c4};
  emu::issueTma(true, const_cast<void*>(src), map, 5, c, nullptr, TAWA_EMU_AT);
}
// cp.reduce.async.bulk.tensor .add: the stores above, adding (T: float or int32_t, the map's type on a GPU).
template <class T>
inline void cp_reduce_add_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map, int c0, int c1, const void* src, TAWA_EMU_LOC) {
  const int c[] = {c0, c1};
  emu::issueTma(true, const_cast<void*>(src), map, 2, c, nullptr, TAWA_EMU_AT, reduceKind<T>());
}
template <class T>
inline void cp_reduce_add_async_bulk_tensor_3d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, const void* src,
                                                                TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2};
  emu::issueTma(true, const_cast<void*>(src), map, 3, c, nullptr, TAWA_EMU_AT, reduceKind<T>());
}
template <class T>
inline void cp_reduce_add_async_bulk_tensor_4d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, const void* src,
                                                                TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3};
  emu::issueTma(true, const_cast<void*>(src), map, 4, c, nullptr, TAWA_EMU_AT, reduceKind<T>());
}
template <class T>
inline void cp_reduce_add_async_bulk_tensor_5d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                                                const void* src, TAWA_EMU_LOC) {
  const int c[] = {c0, c1, c2, c3, c4};
  emu::issueTma(true, const_cast<void*>(src), map, 5, c, nullptr, TAWA_EMU_AT, reduceKind<T>());
}
inline void cp_async_bulk_commit_group() { emu::self().bulkCommitted++; }
// Performs this thread's stores of every group but the newest N (their sources are then free).
template <int N>
inline void cp_async_bulk_wait_group_read() {
  emu::Runtime& r = emu::rt();
  emu::Fiber& f = emu::self();
  std::vector<size_t> keep;
  for (size_t i : f.bulkOps) {
    emu::AsyncOp& op = r.async[i];
    if (op.done) continue;
    if (op.group + N < f.bulkCommitted) {
      emu::runAsync(op);
      emu::advanceTo(op.landed);
    } else {
      keep.push_back(i);
    }
  }
  f.bulkOps = keep;
  if (f.bulkCommitted > static_cast<uint64_t>(N)) emu::observe(f.seen, emu::bulkStreamOf(f.tid), f.bulkCommitted - N);
}
inline void fence_proxy_async_shared_cta() {
  emu::Fiber& f = emu::self();
  auto& owner = emu::rt().dirtyOwner;
  for (auto [b, e] : f.dirty)
    for (uint32_t i = b; i < e; ++i)
      if (owner[i] == f.tid + 1) owner[i] = 0;
  f.dirty.clear();
}

inline uint64_t wgmma_smem_desc(const void* start, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle_mode, TAWA_EMU_LOC) {
  return layout::smem_desc(smem_addr(start, TAWA_EMU_AT), lbo_bytes, sbo_bytes, swizzle_mode);
}
inline void wgmma_fence() {
  emu::self().fenced = true;
  emu::charge(emu::model().mmaIssue);
}
inline void wgmma_commit_group(TAWA_EMU_LOC) {
  emu::Fiber& f = emu::self();
  emu::WarpGroup& g = emu::rt().wgs[static_cast<size_t>(f.tid / 128)];
  uint64_t k = f.groupsCommitted++;
  if (k == g.groupEnd.size()) {
    double done = 0;
    for (uint64_t i = k ? g.groupEnd[k - 1] : 0; i < f.mmaIssued; ++i) done = std::max(done, g.ops[i].end);
    g.groupDoneAt.push_back(done);
    g.groupEnd.push_back(f.mmaIssued);
    g.commits.push_back(0);
  }
  if (g.groupEnd[k] != f.mmaIssued)
    emu::fail("wgmma.commit_group #" + std::to_string(k) + " closes a different set of wgmma.mma_async ops than in other threads of the warp group",
              TAWA_EMU_AT);
  g.commits[k]++;
}
template <int N>
inline void wgmma_wait_group(TAWA_EMU_LOC) {
  emu::Runtime& r = emu::rt();
  emu::Fiber& f = emu::self();
  int wg = f.tid / 128;
  f.fenced = false;
  emu::charge(emu::model().mmaWait);
  if (f.groupsCommitted <= static_cast<uint64_t>(N)) return;
  uint64_t need = f.groupsCommitted - N;
  emu::advanceTo(r.wgs[static_cast<size_t>(wg)].groupDoneAt[need - 1] + emu::model().mmaWait);
  emu::Wait w;
  w.kind = emu::WaitKind::Wgmma;
  w.id = wg;
  w.gen = need;
  w.file = tawa_file;
  w.line = tawa_line;
  emu::block(w);
  emu::WarpGroup& g = r.wgs[static_cast<size_t>(wg)];
  for (; g.groupsDone < need; ++g.groupsDone) {
    uint64_t b = g.groupsDone ? g.groupEnd[g.groupsDone - 1] : 0;
    for (uint64_t i = b; i < g.groupEnd[g.groupsDone]; ++i) emu::executeOp(g, g.ops[i], wg);
  }
  emu::observe(f.seen, static_cast<size_t>(wg), need);
}
inline void fence_operand(float&) {}
template <int N>
inline void fence_operands(float (&)[N]) {}
template <int N>
inline void fence_operands(int32_t (&)[N]) {}
inline int wgmma_acc_row(int i) { return layout::acc_row(warpgroup_thread_idx(), i); }
inline int wgmma_acc_col(int i) { return layout::acc_col(warpgroup_thread_idx(), i); }

#define TAWA_EMU_WGMMA(NN, TY, ELEM)                                                                             \
  template <int TransB, int TransA = 0>                                                                          \
  inline void wgmma_mma_async_m64n##NN##k16_f32_##TY(float(&d)[NN / 2], uint64_t desc_a, uint64_t desc_b, int scale_d, \
                                                       TAWA_EMU_LOC) {                                           \
    emu::mmaAsync<NN / 2>(d, desc_a, desc_b, scale_d, TransB, ELEM, TAWA_EMU_AT, nullptr, TransA);               \
  }
TAWA_EMU_WGMMA(16, f16, 0)
TAWA_EMU_WGMMA(32, f16, 0)
TAWA_EMU_WGMMA(64, f16, 0)
TAWA_EMU_WGMMA(128, f16, 0)
TAWA_EMU_WGMMA(256, f16, 0)
TAWA_EMU_WGMMA(16, bf16, 1)
TAWA_EMU_WGMMA(32, bf16, 1)
TAWA_EMU_WGMMA(64, bf16, 1)
TAWA_EMU_WGMMA(128, bf16, 1)
TAWA_EMU_WGMMA(256, bf16, 1)
#undef TAWA_EMU_WGMMA
// A from registers (RS).
#define TAWA_EMU_WGMMA_RS(NN, TY, ELEM)                                                                                     \
  template <int TransB>                                                                                                     \
  inline void wgmma_mma_async_rs_m64n##NN##k16_f32_##TY(float(&d)[NN / 2], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, \
                                                          uint64_t desc_b, int scale_d, TAWA_EMU_LOC) {                     \
    const uint32_t a[4] = {a0, a1, a2, a3};                                                                                 \
    emu::mmaAsync<NN / 2>(d, 0, desc_b, scale_d, TransB, ELEM, TAWA_EMU_AT, a);                                             \
  }
TAWA_EMU_WGMMA_RS(16, f16, 0)
TAWA_EMU_WGMMA_RS(32, f16, 0)
TAWA_EMU_WGMMA_RS(64, f16, 0)
TAWA_EMU_WGMMA_RS(128, f16, 0)
TAWA_EMU_WGMMA_RS(256, f16, 0)
TAWA_EMU_WGMMA_RS(16, bf16, 1)
TAWA_EMU_WGMMA_RS(32, bf16, 1)
TAWA_EMU_WGMMA_RS(64, bf16, 1)
TAWA_EMU_WGMMA_RS(128, bf16, 1)
TAWA_EMU_WGMMA_RS(256, bf16, 1)
#undef TAWA_EMU_WGMMA_RS
// fp8: both operands K-major (no transpose), k32.
#define TAWA_EMU_WGMMA_FP8(NN, TY, ELEM)                                                                                   \
  inline void wgmma_mma_async_m64n##NN##k32_f32_##TY(float(&d)[NN / 2], uint64_t desc_a, uint64_t desc_b, int scale_d, \
                                                       TAWA_EMU_LOC) {                                                     \
    emu::mmaAsync<NN / 2>(d, desc_a, desc_b, scale_d, 0, ELEM, TAWA_EMU_AT);                                               \
  }
// s8/u8 (s32 accumulators in int32_t registers: the same machinery on their bits).
#define TAWA_EMU_WGMMA_INT8(NN, TY, ELEM)                                                                                  \
  inline void wgmma_mma_async_m64n##NN##k32_s32_##TY(int32_t(&d)[NN / 2], uint64_t desc_a, uint64_t desc_b, int scale_d, \
                                                       TAWA_EMU_LOC) {                                                     \
    emu::mmaAsync<NN / 2>(reinterpret_cast<float(&)[NN / 2]>(d), desc_a, desc_b, scale_d, 0, ELEM, TAWA_EMU_AT);          \
  }
TAWA_EMU_WGMMA_INT8(16, s8, 4)
TAWA_EMU_WGMMA_INT8(32, s8, 4)
TAWA_EMU_WGMMA_INT8(64, s8, 4)
TAWA_EMU_WGMMA_INT8(128, s8, 4)
TAWA_EMU_WGMMA_INT8(256, s8, 4)
TAWA_EMU_WGMMA_INT8(16, u8, 5)
TAWA_EMU_WGMMA_INT8(32, u8, 5)
TAWA_EMU_WGMMA_INT8(64, u8, 5)
TAWA_EMU_WGMMA_INT8(128, u8, 5)
TAWA_EMU_WGMMA_INT8(256, u8, 5)
TAWA_EMU_WGMMA_FP8(16, e4m3, 2)
TAWA_EMU_WGMMA_FP8(32, e4m3, 2)
TAWA_EMU_WGMMA_FP8(64, e4m3, 2)
TAWA_EMU_WGMMA_FP8(128, e4m3, 2)
TAWA_EMU_WGMMA_FP8(256, e4m3, 2)
TAWA_EMU_WGMMA_FP8(16, e5m2, 3)
TAWA_EMU_WGMMA_FP8(32, e5m2, 3)
TAWA_EMU_WGMMA_FP8(64, e5m2, 3)
TAWA_EMU_WGMMA_FP8(128, e5m2, 3)
TAWA_EMU_WGMMA_FP8(256, e5m2, 3)
// tf32: both operands K-major, k8 (the same machinery, elem 6).
#define TAWA_EMU_WGMMA_TF32(NN)                                                                                         \
  inline void wgmma_mma_async_m64n##NN##k8_f32_tf32(float(&d)[NN / 2], uint64_t desc_a, uint64_t desc_b, int scale_d, \
                                                     TAWA_EMU_LOC) {                                                    \
    emu::mmaAsync<NN / 2>(d, desc_a, desc_b, scale_d, 0, emu::kTf32, TAWA_EMU_AT);                                   \
  }
TAWA_EMU_WGMMA_TF32(16)
TAWA_EMU_WGMMA_TF32(32)
TAWA_EMU_WGMMA_TF32(64)
TAWA_EMU_WGMMA_TF32(128)
TAWA_EMU_WGMMA_TF32(256)
#undef TAWA_EMU_WGMMA_TF32
#undef TAWA_EMU_WGMMA_FP8

// Register-fragment arithmetic: exact exp2 (the device's ex2.approx is within 2 ulp of it),
// max/min under both NaN rules (max.f32 ignores a NaN operand, max.NaN.f32 propagates it), shuffles
// as a warp rendezvous, 16-bit pairs packed low half first.
namespace emu {
// One thread's unary instruction on a register: the read is checked, the modelled clock charged at
// the unit's rate (`perClk` results per clock per SM, 128 threads), and the value computed exactly.
template <class F>
inline float unary(float x, const char* instr, double perClk, F f, const char* file, int line) {
  checkRead(x, instr, file, line);
  charge(128 / perClk);
  return f(x);
}
// The host's functions behind the primitives math_<name> (primitives.cuh): <cmath>, and exp10, which
// C++ lacks.
namespace libm {
using namespace std;
inline double exp10(double x) { return std::pow(10.0, x); }
}  // namespace libm
}  // namespace emu
inline float exp2_approx(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "ex2.approx", emu::model().mufuPerClk, [](float v) { return std::exp2(v); }, TAWA_EMU_AT);
}
// lg2.approx, sqrt.rn, rsqrt.approx and abs: exact on the host (the device's approximations are within
// about 2^-22 of these).
inline float lg2_approx(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "lg2.approx", emu::model().mufuPerClk, [](float v) { return std::log2(v); }, TAWA_EMU_AT);
}
inline float sqrt_rn(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "sqrt.rn", emu::model().mufuPerClk, [](float v) { return std::sqrt(v); }, TAWA_EMU_AT);
}
inline float rsqrt_approx(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "rsqrt.approx", emu::model().mufuPerClk, [](float v) { return 1.0f / std::sqrt(v); }, TAWA_EMU_AT);
}
inline float sin_f32(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "sin", emu::model().mufuPerClk, [](float v) { return std::sin(v); }, TAWA_EMU_AT);
}
inline float cos_f32(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "cos", emu::model().mufuPerClk, [](float v) { return std::cos(v); }, TAWA_EMU_AT);
}
inline float abs_f32(float x, TAWA_EMU_LOC) {
  return emu::unary(x, "abs", emu::model().aluPerClk, [](float v) { return std::fabs(v); }, TAWA_EMU_AT);
}
// div.full.f32: the host's correctly rounded quotient (the device's is within 2 ulp of it); charged as
// one special-function operation (a reciprocal) and a multiply.
inline float div_full(float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "div.full", TAWA_EMU_AT);
  emu::checkRead(b, "div.full", TAWA_EMU_AT);
  emu::charge(128 / emu::model().mufuPerClk + 128 / emu::model().aluPerClk);
  return a / b;
}
inline float max_nan(float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "max.NaN", TAWA_EMU_AT);
  emu::checkRead(b, "max.NaN", TAWA_EMU_AT);
  emu::charge(128 / emu::model().aluPerClk);
  return emu::maxOf(a, b, true);
}
inline float min_nan(float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "min.NaN", TAWA_EMU_AT);
  emu::checkRead(b, "min.NaN", TAWA_EMU_AT);
  emu::charge(128 / emu::model().aluPerClk);
  return emu::minOf(a, b, true);
}
// max.f32 / min.f32: a NaN operand yields the other (IEEE maxNum).
inline float max_num(float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "max", TAWA_EMU_AT);
  emu::checkRead(b, "max", TAWA_EMU_AT);
  emu::charge(128 / emu::model().aluPerClk);
  return emu::maxOf(a, b, false);
}
inline float min_num(float a, float b, TAWA_EMU_LOC) {
  emu::checkRead(a, "min", TAWA_EMU_AT);
  emu::checkRead(b, "min", TAWA_EMU_AT);
  emu::charge(128 / emu::model().aluPerClk);
  return emu::minOf(a, b, false);
}
inline double max_num(double a, double b) { return emu::maxOf(a, b, false); }
inline double min_num(double a, double b) { return emu::minOf(a, b, false); }
inline double max_nan(double a, double b) { return emu::maxOf(a, b, true); }
inline double min_nan(double a, double b) { return emu::minOf(a, b, true); }
inline float inf_f32() { return HUGE_VALF; }
inline float nan_f32() { return std::numeric_limits<float>::quiet_NaN(); }
inline uint32_t pack_pair(f16 lo, f16 hi) { return static_cast<uint32_t>(lo.bits) | (static_cast<uint32_t>(hi.bits) << 16); }
inline uint32_t pack_pair(bf16 lo, bf16 hi) { return static_cast<uint32_t>(lo.bits) | (static_cast<uint32_t>(hi.bits) << 16); }
namespace emu {
// One exchange of the warp: every lane deposits v; once all 32 have, each gets the 32 values.
inline const float* warpExchange(float v, const char* file, int line) {
  charge(4);  // the modelled clock: 32 shuffle results per clock per SM (128 / 32)
  Runtime& r = rt();
  int tid = self().tid, warp = tid / 32, lane = tid % 32;
  Shfl& x = r.shfl[static_cast<size_t>(warp)];
  uint64_t gen = x.gen;
  x.v[gen & 1][lane] = v;
  if (++x.arrived == 32) {
    x.arrived = 0;
    x.gen++;
  } else {
    Wait w;
    w.kind = WaitKind::Shfl;
    w.id = warp;
    w.gen = gen;
    w.file = file;
    w.line = line;
    block(w);
  }
  return x.v[gen & 1];
}
}  // namespace emu
inline float shfl_xor(float v, int mask, TAWA_EMU_LOC) {
  if (mask < 0 || mask > 31) emu::fail("shfl.sync.bfly with lane mask " + std::to_string(mask) + " outside [0, 31]", TAWA_EMU_AT);
  emu::checkRead(v, "shfl.sync", TAWA_EMU_AT);
  return emu::warpExchange(v, TAWA_EMU_AT)[(emu::self().tid % 32) ^ mask];
}

// shfl.sync.up: lane l gets lane l - delta's value, its own where l < delta (PTX: the source lane
// is out of range, so the value is the caller's).
inline float shfl_up(float v, int delta, TAWA_EMU_LOC) {
  if (delta < 0 || delta > 31) emu::fail("shfl.sync.up with delta " + std::to_string(delta) + " outside [0, 31]", TAWA_EMU_AT);
  emu::checkRead(v, "shfl.sync", TAWA_EMU_AT);
  const int lane = emu::self().tid % 32;
  const float* all = emu::warpExchange(v, TAWA_EMU_AT);
  return lane >= delta ? all[lane - delta] : v;
}
namespace emu {
// An integer shuffle: its bits exchanged as they are; lane `from` when it lies in the warp, else the
// caller's own value.
inline int32_t shuffleInt(int32_t v, int from, const char* file, int line) {
  float f;
  std::memcpy(&f, &v, 4);
  const float* all = warpExchange(f, file, line);
  int32_t r = v;
  if (from >= 0 && from < 32) std::memcpy(&r, &all[from], 4);
  return r;
}
}  // namespace emu
namespace emu {
// The lanes' N registers of one operand, each lane's words side by side: w[r][lane].
template <int N>
inline void exchangeWords(uint32_t (&w)[N][32], const uint32_t* regs, const char* file, int line) {
  for (int r = 0; r < N; ++r) {
    float f;
    std::memcpy(&f, &regs[r], 4);
    std::memcpy(w[r], warpExchange(f, file, line), 128);
  }
}
// This lane's four elements of the warp's 16x8 f32 tile D (rows g and g + 8, columns 2q and 2q + 1):
// each one's K products of elemA(row, k) and elemB(k, col) in double, added exactly, then to its C
// value, rounded once to f32 (as the emulator's wgmma does).
template <class EA, class EB>
inline void mmaSums(float* d, int K, const EA& elemA, const EB& elemB) {
  const int lane = self().tid % 32, g = lane / 4, q = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + 8 * (i / 2), col = 2 * q + i % 2;
    double s = 0;
    for (int k = 0; k < K; ++k) s += static_cast<double>(elemA(row, k)) * elemB(k, col);
    d[i] = static_cast<float>(static_cast<double>(d[i]) + s);
  }
}
// mma.sync.aligned.m16n8k16 with f32 accumulators (primitives.cuh gives the fragment layout): the
// warp's lanes hand over their A and B registers (six exchanges, so every lane of the warp must
// arrive, as on the GPU), and each lane computes its four elements of D: the 16 products of each
// element in double, added exactly, then to its C value and rounded once to f32 (as the emulator's
// wgmma does).
template <class T>
inline void mma16816(float* d, const uint32_t* a, const uint32_t* b, const char* file, int line) {
  uint32_t A[4][32], B[2][32];
  exchangeWords(A, a, file, line);
  exchangeWords(B, b, file, line);
  charge(8);  // the modelled clock: a few issue cycles of the warp
  auto half = [](uint32_t w, int hi) { return to_f32(T{static_cast<uint16_t>(hi ? w >> 16 : w & 0xffffu)}); };
  // A[row][col] is in lane (row % 8) * 4 + (col % 8) / 2, register row / 8 + 2 * (col / 8), half col % 2;
  // B[k][n] in lane n * 4 + (k % 8) / 2, register k / 8, half k % 2.
  auto elemA = [&](int row, int col) { return half(A[row / 8 + 2 * (col / 8)][(row % 8) * 4 + (col % 8) / 2], col % 2); };
  auto elemB = [&](int k, int n) { return half(B[k / 8][n * 4 + (k % 8) / 2], k % 2); };
  mmaSums(d, 16, elemA, elemB);
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (primitives.cuh gives the fragment layout): each
// operand word read as the tensor cores are taken to read a tf32, its 13 low mantissa bits dropped
// (tawa's SIMT path rounds the operands first, so nothing is dropped on it); each of the lane's four
// elements of D the 8 products in double, added exactly, then to its C value, rounded once.
inline void mma1688Tf32(float* d, const uint32_t* a, const uint32_t* b, const char* file, int line) {
  uint32_t A[4][32], B[2][32];
  exchangeWords(A, a, file, line);
  exchangeWords(B, b, file, line);
  charge(8);
  auto tf32 = [](uint32_t w) {
    if ((w & 0x7f800000u) != 0x7f800000u) w &= ~0x1fffu;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  };
  // A[row][col] is in lane (row % 8) * 4 + col % 4, register row / 8 + 2 * (col / 4);
  // B[k][n] in lane n * 4 + k % 4, register k / 4.
  auto elemA = [&](int row, int col) { return tf32(A[row / 8 + 2 * (col / 4)][(row % 8) * 4 + col % 4]); };
  auto elemB = [&](int k, int n) { return tf32(B[k / 4][n * 4 + k % 4]); };
  mmaSums(d, 8, elemA, elemB);
}
// mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32: signed 8-bit integers, four to a word (the first
// in the low byte); each element of D its C value plus the 16 products, wrapping modulo 2^32 as the
// instruction does without .satfinite.
inline void mma16816S8(int32_t* d, const uint32_t* a, const uint32_t* b, const char* file, int line) {
  uint32_t A[2][32], B[1][32];
  exchangeWords(A, a, file, line);
  exchangeWords(B, b, file, line);
  charge(8);
  auto byte = [](uint32_t w, int i) { return static_cast<int64_t>(static_cast<int8_t>(static_cast<uint8_t>(w >> (8 * i)))); };
  // A[row][col] is in lane (row % 8) * 4 + col / 4, register row / 8, byte col % 4;
  // B[k][n] in lane n * 4 + k / 4, byte k % 4.
  auto elemA = [&](int row, int col) { return byte(A[row / 8][(row % 8) * 4 + col / 4], col % 4); };
  auto elemB = [&](int k, int n) { return byte(B[0][n * 4 + k / 4], k % 4); };
  const int lane = self().tid % 32, g = lane / 4, q = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + 8 * (i / 2), col = 2 * q + i % 2;
    int64_t s = 0;
    for (int k = 0; k < 16; ++k) s += elemA(row, k) * elemB(k, col);
    d[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(d[i]) + s));
  }
}
}  // namespace emu
inline void mma_16816_f16(float* d, const uint32_t* a, const uint32_t* b, TAWA_EMU_LOC) { emu::mma16816<f16>(d, a, b, TAWA_EMU_AT); }
inline void mma_1688_tf32(float* d, const uint32_t* a, const uint32_t* b, TAWA_EMU_LOC) { emu::mma1688Tf32(d, a, b, TAWA_EMU_AT); }
inline void mma_16816_s8(int32_t* d, const uint32_t* a, const uint32_t* b, TAWA_EMU_LOC) { emu::mma16816S8(d, a, b, TAWA_EMU_AT); }
inline void mma_16816_bf16(float* d, const uint32_t* a, const uint32_t* b, TAWA_EMU_LOC) { emu::mma16816<bf16>(d, a, b, TAWA_EMU_AT); }
inline int32_t shfl_xor(int32_t v, int mask, TAWA_EMU_LOC) {
  if (mask < 0 || mask > 31) emu::fail("shfl.sync.bfly with lane mask " + std::to_string(mask) + " outside [0, 31]", TAWA_EMU_AT);
  return emu::shuffleInt(v, (emu::self().tid % 32) ^ mask, TAWA_EMU_AT);
}
inline int32_t shfl_up(int32_t v, int delta, TAWA_EMU_LOC) {
  if (delta < 0 || delta > 31) emu::fail("shfl.sync.up with delta " + std::to_string(delta) + " outside [0, 31]", TAWA_EMU_AT);
  return emu::shuffleInt(v, emu::self().tid % 32 - delta, TAWA_EMU_AT);
}
// shfl.sync.down: lane l gets lane l + delta's value, its own where l + delta > 31.
inline float shfl_down(float v, int delta, TAWA_EMU_LOC) {
  if (delta < 0 || delta > 31) emu::fail("shfl.sync.down with delta " + std::to_string(delta) + " outside [0, 31]", TAWA_EMU_AT);
  emu::checkRead(v, "shfl.sync", TAWA_EMU_AT);
  const int lane = emu::self().tid % 32;
  const float* all = emu::warpExchange(v, TAWA_EMU_AT);
  return lane + delta < 32 ? all[lane + delta] : v;
}
inline int32_t shfl_down(int32_t v, int delta, TAWA_EMU_LOC) {
  if (delta < 0 || delta > 31) emu::fail("shfl.sync.down with delta " + std::to_string(delta) + " outside [0, 31]", TAWA_EMU_AT);
  return emu::shuffleInt(v, emu::self().tid % 32 + delta, TAWA_EMU_AT);
}
// Unsigned words shuffle as their bits.
inline uint32_t shfl_xor(uint32_t v, int mask, TAWA_EMU_LOC) {
  return static_cast<uint32_t>(shfl_xor(static_cast<int32_t>(v), mask, TAWA_EMU_AT));
}
inline uint32_t shfl_up(uint32_t v, int delta, TAWA_EMU_LOC) {
  return static_cast<uint32_t>(shfl_up(static_cast<int32_t>(v), delta, TAWA_EMU_AT));
}
inline uint32_t shfl_down(uint32_t v, int delta, TAWA_EMU_LOC) {
  return static_cast<uint32_t>(shfl_down(static_cast<int32_t>(v), delta, TAWA_EMU_AT));
}
// 64-bit values (i64, u64 and f64 reductions and scans) shuffle as two words, as the device's
// shfl of a 64-bit type does.
namespace emu {
template <class T, class Shfl> T shuffleWide(T v, Shfl shfl) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const auto lo = static_cast<uint32_t>(shfl(static_cast<uint32_t>(bits)));
  const auto hi = static_cast<uint32_t>(shfl(static_cast<uint32_t>(bits >> 32)));
  bits = (static_cast<uint64_t>(hi) << 32) | lo;
  std::memcpy(&v, &bits, 8);
  return v;
}
}  // namespace emu
#define TAWA_EMU_SHFL_WIDE(T)                                                                                   \
  inline T shfl_xor(T v, int mask, TAWA_EMU_LOC) {                                                              \
    return emu::shuffleWide(v, [&](uint32_t w) { return shfl_xor(w, mask, TAWA_EMU_AT); });                      \
  }                                                                                                            \
  inline T shfl_up(T v, int delta, TAWA_EMU_LOC) {                                                              \
    return emu::shuffleWide(v, [&](uint32_t w) { return shfl_up(w, delta, TAWA_EMU_AT); });                      \
  }                                                                                                            \
  inline T shfl_down(T v, int delta, TAWA_EMU_LOC) {                                                            \
    return emu::shuffleWide(v, [&](uint32_t w) { return shfl_down(w, delta, TAWA_EMU_AT); });                    \
  }
TAWA_EMU_SHFL_WIDE(int64_t)
TAWA_EMU_SHFL_WIDE(uint64_t)
TAWA_EMU_SHFL_WIDE(double)
#undef TAWA_EMU_SHFL_WIDE
inline uint32_t ballot(bool p, TAWA_EMU_LOC) {
  const float* all = emu::warpExchange(p ? 1.0f : 0.0f, TAWA_EMU_AT);
  uint32_t b = 0;
  for (int l = 0; l < 32; ++l) b |= (all[l] != 0.0f ? 1u : 0u) << l;
  return b;
}
inline bool vote_all(bool p, TAWA_EMU_LOC) { return ballot(p, TAWA_EMU_AT) == 0xffffffffu; }
inline bool vote_any(bool p, TAWA_EMU_LOC) { return ballot(p, TAWA_EMU_AT) != 0u; }

namespace emu {
inline void setmaxnreg(int n, bool inc, const char* file, int line) {
  Runtime& r = rt();
  Fiber& f = self();
  int wg = f.tid / 128;
  WarpGroup& g = r.wgs[static_cast<size_t>(wg)];
  uint64_t k = f.setmaxnregSeq++;
  int v = inc ? n : -n;
  if (k == g.maxnreg.size()) g.maxnreg.emplace_back(v, 0);
  if (g.maxnreg[k].first != v)
    fail("setmaxnreg #" + std::to_string(k) + " is not uniform across warp group " + std::to_string(wg) + " (" +
             std::string(inc ? "inc " : "dec ") + std::to_string(n) + " here, " + std::to_string(std::abs(g.maxnreg[k].first)) +
             " in another thread)",
         file, line);
  if (++g.maxnreg[k].second < 128) return;
  if (g.regs && inc && n < g.regs) fail("setmaxnreg.inc to " + std::to_string(n) + " below the current " + std::to_string(g.regs), file, line);
  if (g.regs && !inc && n > g.regs) fail("setmaxnreg.dec to " + std::to_string(n) + " above the current " + std::to_string(g.regs), file, line);
  g.regs = n;
  int64_t total = 0;
  for (const WarpGroup& w : r.wgs) total += 128 * (w.regs ? w.regs : 24);
  if (total > 65536)
    fail("setmaxnreg: the warp groups' register budgets need at least " + std::to_string(total) +
             " registers; the register file holds 65536",
         file, line);
}
}  // namespace emu

template <int N>
inline void setmaxnreg_inc(TAWA_EMU_LOC) {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: the count must be a multiple of 8 in [24, 256]");
  emu::setmaxnreg(N, true, TAWA_EMU_AT);
}
template <int N>
inline void setmaxnreg_dec(TAWA_EMU_LOC) {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: the count must be a multiple of 8 in [24, 256]");
  emu::setmaxnreg(N, false, TAWA_EMU_AT);
}

namespace emu {
// One thread's arrival at named barrier `id` of `count` threads (bar.sync or bar.arrive); true when
// it completes the barrier's current generation, which then releases its waiting threads.
inline bool namedArrive(const char* what, int id, int count, const char* tawa_file, int tawa_line) {
  Runtime& r = rt();
  if (id < 0 || id > 15) fail(std::string(what) + " with barrier id " + std::to_string(id) + " outside [0, 15]", TAWA_EMU_AT);
  if (count <= 0 || count % 32 || count > r.threads)
    fail(std::string(what) + " with thread count " + std::to_string(count) + " (must be a positive multiple of 32, at most the block's " +
             std::to_string(r.threads) + ")",
         TAWA_EMU_AT);
  NamedBar& b = r.bars[id];
  if (b.arrived == 0) b.maxAt = 0;
  b.maxAt = std::max(b.maxAt, wgClock());
  if (b.arrived == 0) b.count = count;
  else if (b.count != count)
    fail(std::string(what) + " " + std::to_string(id) + " with thread count " + std::to_string(count) + " while other threads use " +
             std::to_string(b.count),
         TAWA_EMU_AT);
  join(b.pend, self().seen);
  if (++b.arrived < b.count) return false;
  handOver(b.pend, b.done);
  b.arrived = 0;
  b.gen++;
  b.releaseAt = b.maxAt;
  return true;
}
}  // namespace emu

// bar.arrive: counts this thread towards the barrier's `count` without waiting for the others.
inline void bar_arrive(int id, int count, TAWA_EMU_LOC) { emu::namedArrive("bar.arrive", id, count, TAWA_EMU_AT); }
inline void bar_sync(int id, int count, TAWA_EMU_LOC) {
  emu::Runtime& r = emu::rt();
  if (emu::namedArrive("bar.sync", id, count, TAWA_EMU_AT)) {
    emu::join(emu::self().seen, r.bars[id].done);
    emu::advanceTo(r.bars[id].releaseAt);
    return;
  }
  emu::NamedBar& b = r.bars[id];
  emu::Wait w;
  w.kind = emu::WaitKind::NamedBar;
  w.id = id;
  w.gen = b.gen;
  w.file = tawa_file;
  w.line = tawa_line;
  emu::block(w);
  emu::join(emu::self().seen, b.done);
  emu::advanceTo(b.releaseAt);
}
inline void syncthreads(TAWA_EMU_LOC) { bar_sync(0, emu::rt().threads, TAWA_EMU_AT); }
inline bool elect_one_sync(TAWA_EMU_LOC) {
  emu::Runtime& r = emu::rt();
  int tid = emu::self().tid, warp = tid / 32;
  emu::NamedBar& b = r.warps[static_cast<size_t>(warp)];
  emu::join(b.pend, emu::self().seen);
  if (++b.arrived == 32) {
    emu::handOver(b.pend, b.done);
    b.arrived = 0;
    b.gen++;
  } else {
    emu::Wait w;
    w.kind = emu::WaitKind::Warp;
    w.id = warp;
    w.gen = b.gen;
    w.file = tawa_file;
    w.line = tawa_line;
    emu::block(w);
  }
  emu::join(emu::self().seen, b.done);
  return tid % 32 == 0;
}

// ---- clocks and profile records: the *modelled* clock (see the header comment)

inline uint64_t clock64() { return static_cast<uint64_t>(emu::wgClock()); }
inline uint64_t globaltimer() { return static_cast<uint64_t>((emu::rt().blockStart + emu::wgClock()) / emu::model().clockGHz); }
inline uint32_t smid() {
  emu::Runtime& r = emu::rt();
  int64_t linear = r.bx + static_cast<int64_t>(r.L->grid[0]) * (r.by + static_cast<int64_t>(r.L->grid[1]) * r.bz);
  return static_cast<uint32_t>(linear % static_cast<int64_t>(r.smFree.size()));
}
inline void prof_begin(uint8_t* ring, TAWA_EMU_LOC) {
  emu::windowOf(ring, 32, "profile ring header", TAWA_EMU_AT);
  uint64_t head[4] = {0, clock64(), globaltimer(), 0};
  std::memcpy(ring, head, 32);
}
inline void prof_record(uint8_t* ring, uint32_t cap, uint32_t start, uint32_t scope, int32_t iter, int32_t slot, uint32_t line,
                        TAWA_EMU_LOC) {
  uint32_t n, c0;
  std::memcpy(&n, ring, 4);
  std::memcpy(&c0, ring + 8, 4);
  uint8_t* p = ring + 32u + 16u * (n % cap);
  emu::windowOf(p, 16, "profile record", TAWA_EMU_AT);
  uint32_t e[4] = {start - c0, static_cast<uint32_t>(clock64()) - c0, static_cast<uint32_t>(iter),
                   (line & 0xffffu) | ((scope & 0xffu) << 16) | ((static_cast<uint32_t>(slot) & 0xffu) << 24)};
  std::memcpy(p, e, 16);
  ++n;
  std::memcpy(ring, &n, 4);
}
inline void prof_flush(uint8_t* out, int wg, int nwg, const uint8_t* ring, uint32_t cap) {
  emu::Runtime& r = emu::rt();
  uint64_t b = static_cast<uint64_t>(r.bx) + static_cast<uint64_t>(r.L->grid[0]) * (r.by + static_cast<uint64_t>(r.L->grid[1]) * r.bz);
  uint8_t* dst = out + (b * static_cast<uint64_t>(nwg) + static_cast<uint64_t>(wg)) * (32u + 16u * cap);
  uint32_t n;
  std::memcpy(&n, ring, 4);
  uint32_t kept = n < cap ? n : cap;
  std::memcpy(dst + 32, ring + 32, 16u * kept);
  uint64_t gt1 = globaltimer();
  uint32_t head[2] = {n, smid()};
  std::memcpy(dst, head, 8);
  std::memcpy(dst + 8, ring + 8, 16);  // clk0, gt0
  std::memcpy(dst + 24, &gt1, 8);
}

}  // namespace tawa
