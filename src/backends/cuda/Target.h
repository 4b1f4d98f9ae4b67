// `tawa compile --target sm_90a`: emits CUDA C++ for a kernel (warp-specialized, or SIMT when it has
// no warp-specialized form), and compiles it when asked for PTX, a cubin or the resource report.
#pragma once

#include <iosfwd>
#include <string>

#include "backends/cuda/Emitter.h"
#include "driver/Launch.h"
#include "transforms/PassOptions.h"

namespace tawa::cuda {

// The CUDA kernel for FILE's kernel `kernel`, and in `lk` the module it was emitted from. A kernel
// with a tile.dot or tensor descriptors is warp-specialized (warp-specialize, pipeline,
// split-consumers, lower-aref; an error when that fails) and emitted by emitCudaKernel; any other
// (row-wise and element-wise kernels) is canonicalized and emitted as a SIMT kernel
// (emitSimtKernel), which the warp-specialization options (--consumers, --persistent, ...) do not
// apply to: asking for one of them there is an error. `simt` (optional) says which path it took.
EmitResult emitForTarget(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                         const transforms::PassOptions& ws, const EmitOptions& emitOpt, driver::LoadedKernel& lk,
                         bool* simt = nullptr);
// The same for a kernel already loaded (`lk`, not yet transformed; replaced by the module emitted from).
EmitResult emitForTarget(driver::LoadedKernel& lk, const transforms::PassOptions& ws, const EmitOptions& emitOpt,
                         bool* simt = nullptr);

// `r` emitted again with the tensor maps TMA cannot take with the spec's values (a row stride that is
// not a multiple of 16 bytes, ...) as tile maps, each said as a note on stderr and on `explain`;
// `r` itself when the spec leaves them open (the launch decides then) or TMA takes them all. The
// first overload of emitForTarget does this; callers of the second one with a spec call it.
EmitResult withSpecTileMaps(const EmitResult& r, const ir::Func& kernel, const driver::Spec& spec, std::ostream* explain);

// The errors of a bad --target, --emit or -o, before anything is emitted.
void checkTargetOptions(const std::string& target, const std::string& emit, const std::string& out);

}  // namespace tawa::cuda
