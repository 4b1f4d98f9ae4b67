// The plain-C boundary between tawa (the host process) and an emitted kernel compiled as host C++
// against the CPU emulator (EmuRuntime.h) into a shared object. Both sides include this header; it
// holds only standard-layout structs, so the two sides need not agree on anything but this file.
//   - TawaEmuTensorMap: what cuTensorMapEncodeTiled would take for a tiled map of rank 2 to 5 (base,
//     extents, strides, box, element size, swizzle), stored in the 128 bytes of a host CUtensorMap.
//   - TawaEmuLaunch: one launch (grid, block, shared memory, seed, names of the mbarrier arrays and
//     the global buffers for diagnostics) in, statistics and the first error out.
//   - TawaEmuCostModel: the figures of tawa's cost model (src/profile/CostModel.h) that drive the
//     emulator's *modelled* clock (tawa::clock64 / globaltimer on the CPU), filled in by the host.
//   - the entry point every kernel object exports: int tawa_emu_entry(TawaEmuLaunch*, void* const* args),
//     args[i] pointing at the value of kernel parameter i; returns 0, or 1 with L->error filled.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TAWA_EMU_ABI_VERSION 5u
#define TAWA_EMU_MAP_MAGIC 0x54415741454d5531ull  // "TAWAEMU1"

struct TawaEmuTensorMap {
  uint64_t magic;          // TAWA_EMU_MAP_MAGIC: a map built by the emulator's encoder
  uint8_t* base;           // global base address (host memory)
  uint64_t bufferBytes;    // size of the buffer behind base: every access is checked against it
  uint32_t rank;           // 2 to 5
  uint32_t elemBytes;      // 1, 2, 4 or 8
  uint64_t dims[5];        // extents in elements, inner (contiguous) first
  uint64_t strideBytes[4]; // byte strides of dimensions 1, 2, ... (dimension 0 is contiguous)
  uint32_t box[5];         // box extents in elements, inner first
  uint32_t swizzleBytes;   // 0, 32, 64 or 128
};

// The modelled clock's figures (cycles of an SM; see src/profile/CostModel.h for their sources).
struct TawaEmuCostModel {
  double clockGHz;         // SM clock: modelled %globaltimer = (block start + cycles) / clockGHz ns
  int32_t sms;             // block b runs on SM b % sms, an SM's blocks back to back
  double tmaLatency;       // global -> shared latency of a TMA copy
  double tmaIssue;         // issuing one cp.async.bulk.tensor
  double bytesPerClk;      // the SM's share of memory bandwidth (its TMA copies take turns)
  double flopsPerClk;      // tensor core, f16/bf16 dense (fp8 x2)
  double mmaIssue;         // per tile MMA (wgmma.fence ... commit)
  double mmaWait;          // wgmma.wait_group on completed groups
  double arrive;           // mbarrier arrive / arrive.expect_tx
  double waitWake;         // after the awaited phase completed
  double aluPerClk;        // fp32 results per clock per SM (max/min, shared stores per byte)
  double mufuPerClk;       // exp2 per clock per SM
  double cvtPerClk;        // conversions per clock per SM
  double smemBytesPerClk;  // shared-memory stores
};

struct TawaEmuLaunch {
  uint32_t abiVersion;     // TAWA_EMU_ABI_VERSION
  int32_t grid[3];
  int32_t threads;         // per block (a multiple of 128: whole warp groups)
  int64_t smemBytes;       // dynamic shared memory per block
  uint64_t seed;           // 0: round-robin scheduling; else a seeded shuffle of the threads each sweep
  // mbarrier arrays by byte offset from the 1024-aligned base of dynamic shared memory (for messages)
  int32_t nBarArrays;
  const char* const* barNames;
  const int64_t* barOffsets;
  const int32_t* barCounts;
  TawaEmuCostModel model;  // the modelled clock (read only by kernels emitted with --profile)
  // The launch's global buffers, for messages: each lies between two PROT_NONE guards of guardBytes,
  // so a plain pointer access outside it faults, and the runtime reports which buffer it missed.
  int32_t nBuffers;
  const char* const* bufferNames;
  const uint64_t* bufferBases;
  const uint64_t* bufferBytes;
  uint64_t guardBytes;
  // out
  char* error;             // the first fault (deadlock, race, misuse), NUL-terminated
  size_t errorCap;
  char* errorFile;         // kernel source file:line of the fault (through #line), when known
  size_t errorFileCap;
  int32_t errorLine;
  uint64_t switches;       // fiber switches
  uint64_t mmaOps;         // wgmma.mma_async instructions (per warp group)
  uint64_t tmaOps;         // cp.async.bulk.tensor copies
  double mmaFlops;         // the work of those wgmma: 2 * 64 * N * K each (per warp group)
};

typedef int (*TawaEmuEntry)(struct TawaEmuLaunch* launch, void* const* args);
