// `tawa compile --target sm_90a`: emits CUDA C++ from a kernel already lowered to the nv level
// (warp-specialize, pipeline, lower-aref), and compiles it when asked for PTX, a cubin or the
// resource report.
#pragma once

#include <iosfwd>
#include <string>

#include "backends/cuda/Emitter.h"
#include "driver/Launch.h"

namespace tawa::cuda {

// emit: "cuda" (the .cu text), "ptx" or "cubin"; out: a file, or "" / "-" for stdout (not for a
// cubin). resourceUsage: also compile and print registers, shared memory, spills and stack per
// kernel (to stdout, or to stderr when the artifact itself goes to stdout). Returns the exit status;
// user errors (unknown target or stage, unsupported IR, missing toolkit) are thrown as UserError.
// emitOpt: e.g. --profile.
int compileForTarget(const driver::LoadedKernel& lk, const std::string& target, const std::string& emit,
                     const std::string& out, bool resourceUsage, const EmitOptions& emitOpt = {});

}  // namespace tawa::cuda
