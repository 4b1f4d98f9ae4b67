// `tawa run --backend cuda`: compiles a kernel for sm_90a (warp-specialize, pipeline, lower-aref,
// emit, nvcc + ptxas), binds the launch spec to fresh seeded buffers (or .npy files), builds the
// tensor maps from the bound buffers, launches on GPU 0 with the spec's grid (for a persistent
// kernel, the grid given), copies every buffer back and checks it against the CPU executor's run of
// the same kernel as written (tolerance by dtype), then times the launch with CUDA events (median
// of N after warm-up) and prints time, TFLOP/s (for kernels with tile.dot: 2*M*N*K from the spec's
// M, N, K) and GB/s (every buffer moved once).
//   Without a driver or a device this is the UserError of Driver::get(), raised before any work.
//   A mismatch is a UserError (exit 1) naming the buffer, the count, the first bad element and the
//   tolerance.
#pragma once

#include <cstdint>
#include <array>
#include <iosfwd>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/Emitter.h"
#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "profile/Events.h"
#include "transforms/PassOptions.h"

namespace tawa::cuda {

struct GpuRunOptions {
  std::string file, kernel, spec, grid;
  std::vector<std::string> loads;  // NAME=FILE.npy
  std::string save;                // directory for the GPU's buffers after the run ("" = none)
  uint64_t seed = 0;               // random inputs
  transforms::PassOptions ws;      // D, P, consumers, register budgets
  int warmup = 3;                  // launches before timing
  int reps = 20;                   // timed launches (median reported)
  std::string check = "exec";      // "exec": compare with the CPU executor; "none": skip
  int threads = 0;                 // executor threads for the reference (0: all cores)
  bool profile = false;            // emit with --profile and write the trace of the checked launch
  int profileCapacity = 256;       // events per warp group
  bool pingPong = true;            // EmitOptions::pingPong
  std::string emitFault;           // EmitOptions::fault (tawa check --backend emu --inject)
  std::string profileTrace;        // trace file ("" : KERNEL.trace.json)
  // tawa profile --backend cuda: the decoded events of the checked launch go here instead of a trace file.
  std::vector<profile::BlockTrace>* profileTraces = nullptr;
};

// Tolerance of a comparison against the executor: |gpu - ref| <= rtol * |ref| + atol, where atol is
// rtol times the reference's root mean square (so values that cancel to near zero still compare).
// rtol grows with the output type's rounding step (a few units in the last place, since the GPU
// sums in a different order); integers compare exactly.
double relativeTolerance(ir::Scalar s);

struct Comparison {
  bool ok = true;
  int64_t elements = 0, mismatches = 0;
  int64_t firstBad = -1;           // flat index of the first element out of tolerance
  double got = 0, want = 0;        // its values
  double maxAbsErr = 0, relL2 = 0; // ||gpu - ref|| / ||ref||
  double rtol = 0, atol = 0;
};
Comparison compareBuffers(const exec::Buffer& gpu, const exec::Buffer& ref);

// Runs the kernel as written (file, kernel, spec; canonicalized) on the CPU executor from the
// launch's initial buffers `initial`, compares each buffer of `got` with it (compareBuffers) and
// prints a line per buffer ("  check NAME: matches the CPU executor (...)"). The first buffer out
// of tolerance is a UserError at `at` naming its first bad element, both values and the tolerance;
// `who` names the result's source in it ("GPU", "emulated CUDA kernel"); `hint` goes with it.
// `expectArgs` is the specialized kernel's argument count, which the kernel as written must share.
// Returns the executor's seconds.
double checkAgainstExecutor(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                            const std::vector<exec::Arg>& args, const std::vector<exec::Buffer>& initial,
                            const std::array<int64_t, 3>& grid, const std::vector<exec::Buffer>& got, size_t expectArgs,
                            int threads, uint64_t seed, const std::string& who, const Location& at, const std::string& hint,
                            std::ostream& out);

// checkAgainstExecutor's comparison, for a reference already run: each buffer of `got` against
// `want`, a line per buffer to `out`, the first out of tolerance a UserError at `at`.
void checkBuffers(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want, const std::string& who,
                  const Location& at, const std::string& hint, std::ostream& out);

// FLOPs of one launch for kernels that hold a tile.dot (any level): 2*M*N*K from the spec's
// integer entries named M, N and K (any case). nullopt when the kernel has no dot or a name lacks.
std::optional<double> dotFlops(const ir::Module& m, const driver::Spec& spec);

// The integer value of every argument of a launch (0 for buffers and floats), as HostValue::eval and
// the tensor maps' checks read them.
std::vector<int64_t> integerArgs(const std::vector<exec::Arg>& args);

// The value of a scalar kernel parameter (an IR argument of the launch, converted to the parameter's
// C type; a tile map's extent or stride; a persistent kernel's logical grid extent; or a SIMT kernel's buffer, as the address
// `bufferAddress(buffer index)` gives) in the low bytes of an 8-byte `slot`, as cuLaunchKernel and
// the emulator take it. `who` names the launcher in the error for a type it cannot pass.
void packScalarParam(const KernelParam& p, const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& logicalGrid,
                     uint64_t* slot, const char* who, const std::function<uint64_t(int)>& bufferAddress);

// Runs as described above, printing to `out`; returns the exit status (0). Throws UserError.
int runOnGpu(const GpuRunOptions& opt, std::ostream& out);

}  // namespace tawa::cuda
