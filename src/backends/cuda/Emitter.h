// emit-cuda: prints a readable CUDA C++ kernel for sm_90a from nv-level IR, written only against
// primitives.cuh (so the same text later compiles as host C++ against the CPU emulator).
//   requires: verified nv-level IR as warp-specialize + pipeline [+ split-consumers] + lower-aref
//     produce it: a pure prologue, nv.smem_alloc rings and nv.mbarrier_init arrays at the top level,
//     one producer and one or two consumer wg.regions, tile.return. The producer issues TMA loads of
//     2-D descriptors. A consumer either multiplies f16/bf16 slots (or fp8 e4m3/e5m2 slots, B then
//     K-major: fp8 wgmma has no transpose) with nv.wgmma into f32 accumulators, or s8/u8 slots (K-major
//     too) into s32 accumulators held in int32_t registers, for which no setmaxnreg is emitted (ptxas
//     keeps them within the smallest budget and spilled them at the producer's) (GEMM), or computes
//     on tiles (attention): tile.desc_load into its own buffer (one TMA box, one mbarrier); tile.dot
//     as asynchronous wgmma (A from shared memory or from an f16/bf16 register tile, B from shared
//     memory, N- or K-major, or computed in registers: a quantized weight tile, written by the
//     consumer into a swizzled staging buffer of its own, K-major for s8, fenced for the async proxy
//     and read by the wgmma), each group waited for where its result is first used and slot
//     releases after it deferred until then; a slot tile (or its transpose) that arithmetic uses is
//     read into registers at once; elementwise arithmetic, tile.reduce along axis 1 (quad
//     shuffles), expand_dims/broadcast on register tiles in the accumulator fragment layout, row
//     vectors and lazy index expressions (constants, splats, aranges); loops carrying tiles and slot
//     indices; tile.if yielding tiles. It stores with nv.tma_store or tile.desc_store. Descriptor
//     bases may be moved by whole rows and columns (pointer kernels after block-access): the tensor
//     map covers the whole tensor and TMA coordinates are shifted. A base moved by one slice of the
//     descriptor's rows per program id (ptr + program_id(a) * rows * row_stride: attention's heads)
//     gets a third map dimension of grid-axis-a slices, indexed by that program id (3-D copies);
//     an unmasked column dimension spans the row stride. A 1-D descriptor (block-access makes one
//     for a row vector stored with tl.store, such as attention's logsumexp) gets no tensor map: its
//     base pointer argument becomes a `T* const` parameter, and a consumer writes the row vector
//     from its registers, the first thread of each quad per row, inside the descriptor's extent.
//     A tensor map TMA cannot take at the launch (EmitOptions::genericMaps: a row stride or base not
//     16-byte aligned, a column stride other than 1; every map with TAWA_NO_TMA=1) is a tile map
//     instead: its base, extents and strides are kernel parameters and threads move its tiles
//     (tile_load_generic / tile_store_generic): all 128 threads of the producer warp group run its
//     loop and copy a phase's tile-map slots in TMA's swizzled layout, each fencing
//     (fence.proxy.async) and then arriving on the full barrier (its count 128 higher; the
//     arrive.expect_tx expects only the TMA bytes, thread 0 issuing it and the TMA loads); a consumer's own tile is copied by its 128 threads
//     (fence, named barrier, one arrival); an epilogue store is written by the consumer's 128 threads
//     from the staging after a named barrier.
//     A scalar tl.store in a consumer (a flag in the epilogue), or a scalar atomic whose old value is
//     unused (a counter), writes through its pointer argument, moved by scalar offsets, passed as a
//     `T* const` parameter too: one thread of the warp group (an atomic between its fences).
//   guarantees: one `extern "C" __global__ __launch_bounds__(128 * regions, 1)` kernel whose
//     parameters are one `const __grid_constant__ CUtensorMap` per tile.make_desc used by TMA (a tile
//     map's base pointer, int64 extents and strides, slice count and stride in its place), every
//     scalar argument and the pointer arguments of 1-D descriptors, scalar stores and atomics in the kernel's order, then
//     (persistent kernels) the logical grid; one dynamic shared-memory buffer
//     (rings with the TMA swizzle matching the wgmma descriptors, consumers' own buffers, staging for
//     the epilogue, mbarriers) aligned to 1024 bytes; the roles as one if/else on the warp-group
//     index; register tiles as arrays indexed by constants only; `#line` directives back to the
//     kernel source. Anything else is a UserError located at the op.
//   The result also says how the host must build each tensor map and launch the kernel.
//   With EmitOptions::profile the kernel also records the scopes tawa inserted (profile::Scope:
//   waits on empty and full slots, TMA issue, MMA issue and wait, softmax, epilogue, TMA store,
//   release) with tawa::clock64, one 16-byte event per scope instance from the elected thread of each
//   warp group, into a ring of `profileCapacity` events per warp group in shared memory (after a
//   32-byte header holding the event count and the start times, so that profiling keeps a single
//   32-bit register, the open scope's start, live across the kernel), and copies
//   the rings to a global buffer (one more kernel parameter, EmitResult::profile) when each warp
//   group ends; the producer's setmaxnreg budget grows by 8 registers when the register file allows
//   (without it, a persistent producer at 40 registers spills). Without it the text is exactly what
//   it was without profiling.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tawa::cuda {

struct EmitOptions {
  std::string kernelName;       // default: the IR function's name
  bool lineDirectives = true;   // #line back to the user's kernel source
  bool includeHeader = true;    // start with #include "primitives.cuh" (off: to concatenate kernels)
  bool profile = false;         // record per-warp-group scopes (see above)
  int profileCapacity = 256;    // events per warp group in the shared-memory ring (older ones are lost)
  bool pingPong = true;         // two cooperative attention consumers take turns issuing their MMAs
  std::string fault;            // break the emitted schedule on purpose (emitterFaults()), for tests of the emulator
  // Tensor maps TMA cannot take at this launch (param name -> why: a row stride or base not 16-byte
  // aligned, a column stride other than 1): their tiles are moved by threads instead (a "tile map",
  // passed as its base, extents and strides): the producer warp group's 128 threads load a ring slot in
  // TMA's swizzled layout, each fences its writes and arrives on the slot's full barrier (128 more
  // arrivals per phase); a consumer's own tile is loaded by its 128 threads; an epilogue store is
  // written by the consumer's 128 threads from the staging.
  std::map<std::string, std::string> genericMaps;
  // Tensor maps whose columns are not contiguous at this launch but whose rows are (a column-major B
  // operand: `b + k + n * K`), read by f16/bf16 wgmma as B: loaded through the transposed map (N x K,
  // K innermost) into a K-major slot, so that TMA takes them (TensorMapSpec::transposable).
  std::set<std::string> transposedMaps;
};

// Faults the emitter can inject: "release-before-wait" releases a ring slot (mbarrier arrive on its
// empty barrier) where the IR puts the release, without first waiting for (or deferring it past) the
// wgmma that still reads the slot: the order a race needs.
const std::vector<std::string>& emitterFaults();

// A host-side value the launch must supply: an IR function argument, a constant, or the sum,
// difference or product of two such values (e.g. a descriptor's row count Z * H * N_CTX).
struct HostValue {
  int arg = -1;                 // index of the IR function argument, or -1 for `constant` / `op`
  int64_t constant = 0;
  char op = 0;                  // '+', '-', '*' or '/' (exact: see TensorMapSpec::wholeRows) of parts[0] and parts[1]
  std::vector<HostValue> parts;
  std::string str() const;      // "arg#i", the constant, or "(a op b)"
  // The value at launch, given the integer value of every IR argument (others are never read).
  int64_t eval(const std::vector<int64_t>& intArgs) const;
};

// A dimension of a tensor map outside the descriptor's rows: a descriptor whose base moves by one
// whole slice per program (attention's `q + off_hz * n_ctx * 64`, the per-head [n_ctx, 64] slice)
// becomes a map over every slice, indexed by that program id, with a box of 1 along it. Its extent is
// the launch grid's along `gridAxis`, so TMA keeps the slice's own row bound.
struct SliceDim {
  HostValue stride;             // elements between consecutive slices
  int gridAxis = 0;             // the program id that picks the slice (and the extent: the grid's)
};

// The columns one access through a map reads or writes, for a map whose columns the kernel does not
// mask: `width` columns from scale * i + offset + base, for i in range(lb, ub, step) (a tile.for's
// induction variable, its bounds values the host computes, a negative step counting down; scale 0
// for a constant column; base a value the host computes, such as the K of a loop counting down
// that reads column K - i). `programs` adds scale * program_id(axis) for each (axis, scale): a
// split-K's `pid_z * BK + k`, or a column block `pid_n * BN` taken straight from a program id, over
// the ids of the launch grid (a launch that does not say its grid takes a tile map).
struct ColumnWindow {
  HostValue lb, ub, step, base;
  int64_t scale = 0, offset = 0, width = 0;
  std::vector<std::pair<int, int64_t>> programs;
};

// How to build one CUtensorMap parameter with cuTensorMapEncodeTiled (row-major, inner stride 1):
// 2-D, or 3-D to 5-D with slice dimensions outside the rows.
struct TensorMapSpec {
  std::string param;            // kernel parameter name
  ir::Scalar elem = ir::Scalar::F16;
  int baseArg = -1;             // IR pointer argument holding the global base address
  HostValue rows, cols;         // global extent, outer then inner dimension (elements)
  HostValue rowStride, colStride;  // strides in elements; colStride must be 1
  std::vector<SliceDim> slices; // dimensions 2, 3, ... of the map (at most 3; the emitter makes one)
  int64_t boxRows = 0, boxCols = 0;  // the box one TMA copy moves (boxCols is the inner dimension)
  std::string generic;          // non-empty: why TMA cannot take it; a tile map (EmitOptions::genericMaps), not a CUtensorMap
  int swizzleBytes = 0;         // 0 (none), 32, 64 or 128: CU_TENSOR_MAP_SWIZZLE_*
  bool rowCols = false;         // an unmasked column dimension (cols unbounded) whose accesses are all `columns`
  std::vector<ColumnWindow> columns;  // windows: TMA at launch only when every window lies within a row, with the row
                                // stride as its extent; otherwise a tile map at the kernel's addresses
  bool transposable = false;    // only an f16/bf16 wgmma's B slots are loaded through it, so that the launch may load it
                                // transposed (EmitOptions::transposedMaps) where its rows, not its columns, are contiguous
  std::vector<std::pair<std::string, HostValue>> wholeRows;  // (parameter, S / R): the base moves by multiples of S
                                // elements, folded into the row coordinate as S / R rows (that kernel parameter):
                                // TMA at launch only when R divides S
  Location loc;                 // the source the descriptor comes from (a make_desc, or the load block-access made one for)
  int rank() const { return 2 + static_cast<int>(slices.size()); }
};

struct KernelParam {
  std::string name;             // in the emitted signature
  std::string cType;            // "CUtensorMap", "int32_t", ...
  int irArg = -1;               // scalar parameters: the IR function argument
  int tensorMap = -1;           // CUtensorMap parameters: index into EmitResult::tensorMaps
  int gridAxis = -1;            // persistent kernels: the logical grid's extent along this axis (int32)
  bool profileBuffer = false;   // `uint8_t* const`: the profile's global buffer (ProfileLayout), a raw device pointer
  bool pointer = false;         // irArg is a buffer, passed as its raw device address (cType "T*"): SIMT kernels, and a
                                // warp-specialized one's buffers of 1-D descriptors and tile maps
  bool hostValue = false;       // int64_t `value` evaluated at launch: a tile map's extent or stride
  HostValue value;
};

// The global buffer of a kernel emitted with --profile: for block b (linear in the launched grid,
// x fastest) and warp group w, a record at (b * warpGroups + w) * recordBytes():
//   header (32 bytes): u32 events recorded (all of them, kept or not), u32 SM (%smid),
//     u64 clock64 at the warp group's start (clk0), u64 %globaltimer (ns) at its start, and at its end;
//   then min(events, capacity) events of 16 bytes, ring slot i holding event i mod capacity:
//     u32 start, u32 end (clock64 - clk0), i32 iteration (-1: outside loops), u32 line | scope << 16 |
//     slot << 24 (profile::Scope; slot 255: none).
// The host zeroes it before the launch; events - capacity (when positive) were lost.
struct ProfileLayout {
  int capacity = 0;             // events per warp group (0: the kernel is not profiled)
  int warpGroups = 0;
  std::vector<std::string> roles;  // per warp group: "producer", "consumer"
  std::string file;             // the kernel's source file (events carry its line numbers)
  int64_t recordBytes() const { return 32 + 16 * static_cast<int64_t>(capacity); }
  int64_t bytesPerBlock() const { return recordBytes() * warpGroups; }
};

struct EmitResult {
  std::string source;           // CUDA C++ text
  std::string kernelName;
  int threads = 0;              // block size: 128 per warp group
  int64_t smemBytes = 0;        // dynamic shared memory to request (includes 1024 bytes of alignment slack)
  std::vector<KernelParam> params;
  std::vector<TensorMapSpec> tensorMaps;
  // A kernel made persistent by warp-specialize (--persistent N): it runs min(N, blocks of the
  // logical grid) blocks along x, which walk the logical grid; tile.num_programs reads the logical
  // grid from the gridAxis parameters.
  int64_t persistentPrograms = 0;
  ProfileLayout profile;        // capacity 0 unless emitted with EmitOptions::profile
  bool pingPong = false;        // two consumers take turns issuing their MMAs (named barriers 3 and 4)
  // The same kernel emitted again with these tensor maps (param -> why) moved by threads instead of
  // TMA (EmitOptions::genericMaps, added to the ones already so) and these loaded transposed
  // (EmitOptions::transposedMaps): what a launch calls when tmaObstacle finds a map TMA cannot take
  // with its arguments. Empty for SIMT kernels.
  std::function<EmitResult(const std::map<std::string, std::string>&, const std::set<std::string>&)> reemit;
};

// The grid to launch for a logical grid (the spec's): itself, or the persistent programs along x.
std::array<int64_t, 3> launchGrid(const EmitResult& er, const std::array<int64_t, 3>& logical);

EmitResult emitCudaKernel(const ir::Module& m, const ir::Func& kernel, const EmitOptions& opt = {});
std::string emitCuda(const ir::Module& m, const ir::Func& kernel, const EmitOptions& opt = {});

// Shared by the emitters: the C++ type of a scalar in emitted code ("" for fp8, which only wgmma
// reads), and the #line directives of one emitted text: `#line N "file"` (newline-terminated) when
// an op's location differs from the last one written.
std::string cScalarType(ir::Scalar s);
struct LineDirectives {
  std::string file;
  int line = 0;
  std::string next(const Location& loc);  // "" when unknown or unchanged
};

}  // namespace tawa::cuda
