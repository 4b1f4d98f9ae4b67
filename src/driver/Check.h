// `tawa check`: warp-specializes and lowers a kernel, runs the result on the executor under many
// scheduler seeds (interleavings of its warp groups and of its TMA completions), and compares every
// buffer, bit for bit, with the kernel as written. A deadlock, slot race, out-of-bounds access or
// differing result is a UserError that names the seed and what was detected.
#pragma once

#include <cstdint>
#include <string>

#include "driver/Launch.h"
#include "transforms/PassOptions.h"

namespace tawa::driver {

struct CheckReport {
  std::string kernel;
  int seeds = 0;
  int64_t programs = 0;
  int64_t mmaDepth = 0;  // the MMA depth the pipeline pass chose
  bool pvOverlap = false;  // attention: PV of iteration j-1 overlapped with iteration j
};

// True when the kernel has nothing for a producer warp group to stream into consumers: no tile.dot
// and no tensor descriptor (row-wise and element-wise kernels). The CUDA backend emits such a kernel
// as a SIMT kernel (driver::emitForTarget).
bool simtOnly(const ir::Func& kernel);

// The warp-specialization pipeline up to `stage` ("ws" or "nv"); UserError when the kernel could
// not be specialized (with the reason when opt.explain is set, and the SIMT path when simtOnly).
LoadedKernel specialize(const std::string& path, const std::string& kernel, const Spec& spec,
                        const transforms::PassOptions& opt, const std::string& stage);
// The same for a kernel already loaded (and not yet transformed).
LoadedKernel specialize(LoadedKernel lk, const transforms::PassOptions& opt, const std::string& stage);

CheckReport check(const std::string& path, const std::string& kernel, const Spec& spec, const std::string& grid,
                  const transforms::PassOptions& opt, int seeds, uint64_t dataSeed);
// check() on given inputs: `ref` the kernel as written (canonicalized), `ws` its specialization
// (stage "nv"), `input` the launch's arguments, initial buffers and grid (left unchanged).
CheckReport checkSpecialized(const LoadedKernel& ref, const LoadedKernel& ws, const Bound& input, int seeds);

}  // namespace tawa::driver
