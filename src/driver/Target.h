// Which CUDA kernel a tile kernel becomes, for `tawa compile --target sm_90a` and the library API:
// the warp-specialization pipeline run (driver::specialize) and the warp-specialized emitter, or the
// SIMT emitter for a kernel without a warp-specialized form (or, with a warning, one the pipeline
// cannot take). Requires a loaded kernel as written; guarantees an EmitResult from one of the two
// emitters, or the pipeline's located error. Runs on the host, once per kernel and options; the
// backend (backends/cuda) only emits what this chooses.
#pragma once

#include <iosfwd>
#include <string>

#include "backends/cuda/Emitter.h"
#include "driver/Launch.h"
#include "transforms/PassOptions.h"

namespace tawa::driver {

// The CUDA kernel for FILE's kernel `kernel`, and in `lk` the module it was emitted from. A kernel
// with a tile.dot or tensor descriptors is warp-specialized (warp-specialize, pipeline,
// split-consumers, lower-aref; an error when that fails) and emitted by emitCudaKernel; any other
// (row-wise and element-wise kernels) is canonicalized and emitted as a SIMT kernel
// (emitSimtKernel), which the warp-specialization options (--consumers, --persistent, ...) do not
// apply to: asking for one of them there is an error. `simt` (optional) says which path it took.
cuda::EmitResult emitForTarget(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                         const transforms::PassOptions& ws, const cuda::EmitOptions& emitOpt, driver::LoadedKernel& lk,
                         bool* simt = nullptr);
// The same for a kernel already loaded (`lk`, not yet transformed; replaced by the module emitted from).
cuda::EmitResult emitForTarget(driver::LoadedKernel& lk, const transforms::PassOptions& ws, const cuda::EmitOptions& emitOpt,
                         bool* simt = nullptr);

// `r` emitted again with the tensor maps TMA cannot take with the spec's values (a row stride that is
// not a multiple of 16 bytes, ...) as tile maps, each said as a note on stderr and on `explain`;
// `r` itself when the spec leaves them open (the launch decides then) or TMA takes them all. The
// first overload of emitForTarget does this; callers of the second one with a spec call it.
cuda::EmitResult withSpecTileMaps(const cuda::EmitResult& r, const ir::Func& kernel, const driver::Spec& spec, std::ostream* explain);

// The errors of a bad --target, --emit or -o, before anything is emitted.
void checkTargetOptions(const std::string& target, const std::string& emit, const std::string& out);

}  // namespace tawa::driver
