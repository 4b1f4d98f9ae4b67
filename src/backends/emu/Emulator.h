// The CPU emulator of the CUDA backend: runs the very CUDA C++ that emitCudaKernel prints, compiled as
// host C++ against the host implementation of primitives.cuh (EmuRuntime.h), so CI checks the CUDA
// backend's numbers without a GPU.
//   compile(): appends a small launcher (one exported entry point) to the emitted source, compiles it
//     with the host C++ compiler (-O2, shared object) into a content-addressed cache
//     ($XDG_CACHE_HOME/tawa/emu/KEY, KEY = hash of the source, flags, compiler version and the
//     emulator headers), published by one atomic rename, and opens it (dlopen, once per process).
//   launch(): builds one tensor map per EmitResult::tensorMaps entry from the host buffers (with the
//     checks cuTensorMapEncodeTiled makes, plus that the map stays inside its buffer), passes the
//     scalars, and runs the grid one block at a time, every thread a fiber. Buffers are updated in
//     place. A fault the emulator detects (deadlock, race, missing proxy fence, out-of-bounds or
//     misaligned access, mbarrier over-arrival, tx underflow, wgmma misuse) is a UserError located at
//     the kernel source line of the faulting primitive (through the emitted #line directives).
// The library API (src/api) runs and checks kernels on it: `tawa run --backend emu`, `tawa check
// --backend emu`, `backend="emu"` from Python.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/Emitter.h"
#include "backends/exec/Executor.h"
#include "profile/CostModel.h"

namespace tawa::emu {

struct Options {
  std::string cacheDir;    // empty: the user's cache directory (as the CUDA compiler's)
  std::string cxx;         // empty: $CXX, else "c++"
  std::string optLevel = "-O2";
  bool useCache = true;
  uint64_t seed = 0;       // 0: round-robin scheduling of the threads; else a seeded shuffle per sweep
  profile::CostModel model = profile::CostModel::h200();  // the modelled clock of --profile kernels
  std::ostream* notes = nullptr;  // where the launch says which tensor maps its threads move instead of TMA
};

struct CompiledKernel {
  std::string key, soPath;
  bool cacheHit = false;
  double compileSeconds = 0;  // 0 on a cache hit
  void* entry = nullptr;      // TawaEmuEntry
};

// Compiles (or finds in the cache) and opens the emulated kernel. Compile errors are UserErrors
// carrying the compiler's messages.
CompiledKernel compile(const cuda::EmitResult& er, const Options& opt = {});

struct LaunchStats {
  double seconds = 0;         // the emulated launch (not the compile)
  double compileSeconds = 0;
  bool cacheHit = false;
  int64_t blocks = 0;
  uint64_t switches = 0, mmaOps = 0, tmaOps = 0;
  double mmaFlops = 0;        // the work of the executed wgmma (2 * 64 * N * K each)
  std::vector<uint8_t> profile;  // kernels emitted with --profile: the global buffer (cuda::ProfileLayout), modelled clock
};

// Runs the kernel over `grid` with the IR function's arguments (`args`, buffers by index into
// `buffers`, which the launch reads and writes in place).
LaunchStats launch(const cuda::EmitResult& er, const std::vector<exec::Arg>& args, std::vector<exec::Buffer>& buffers,
                   std::array<int64_t, 3> grid, const Options& opt = {});

// Where a later schedule's buffers (`got`) differ from the first's beyond what the kernel lets its
// schedule change, or nullopt.
using ScheduleDifference = std::function<std::optional<std::string>(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& first)>;

// The library API's check on the emulator (`tawa check --backend emu`): runs the emitted kernel
// under schedules 1..seeds on fresh copies of `initial`; `checkFirst` judges schedule 1's buffers,
// and every later schedule must give their very bits (a UserError at `at` otherwise: a race), or,
// with `differs`, agree with them as it says (float atomics add in the schedule's order). With
// `nameSchedule` a fault the emulator reports is prefixed with the schedule it happened under.
void runSchedules(const cuda::EmitResult& er, const std::vector<exec::Arg>& args, const std::vector<exec::Buffer>& initial,
                  std::array<int64_t, 3> grid, int seeds, const Location& at, bool nameSchedule,
                  const std::function<void(const std::vector<exec::Buffer>&)>& checkFirst, const ScheduleDifference& differs = {});

// Where two runs' buffers first differ, bit for bit: "NAME[i] is X, not Y" (the values decoded), or
// nullopt when every buffer is identical.
std::optional<std::string> firstDifference(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want);

}  // namespace tawa::emu
