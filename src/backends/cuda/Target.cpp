#include "backends/cuda/Target.h"

#include <cstdio>
#include <fstream>
#include <utility>
#include <iostream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Emitter.h"
#include "backends/cuda/SimtEmitter.h"
#include "driver/Check.h"
#include "transforms/PassManager.h"

namespace tawa::cuda {

namespace {

Location flag(const std::string& name) { return Location::at(std::make_shared<const std::string>(name), 0, 0); }

}  // namespace

EmitResult emitForTarget(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                         const transforms::PassOptions& ws, const EmitOptions& emitOpt, driver::LoadedKernel& lk, bool* simt) {
  lk = driver::loadKernel(file, kernel, spec);
  return emitForTarget(lk, ws, emitOpt, simt);
}

EmitResult emitForTarget(driver::LoadedKernel& lk, const transforms::PassOptions& ws, const EmitOptions& emitOpt, bool* simt) {
  transforms::PassManager pm;
  pm.add("canonicalize");
  pm.run(*lk.module);
  if (!driver::simtOnly(*lk.kernel)) {
    if (simt) *simt = false;
    lk = driver::specialize(std::move(lk), ws, "nv");  // its pipeline starts with canonicalize again (a no-op now)
    return emitCudaKernel(*lk.module, *lk.kernel, emitOpt);
  }
  if (simt) *simt = true;
  const transforms::PassOptions dflt;
  const char* flagName = ws.consumers == 2                  ? "--consumers"
                         : ws.persistent != dflt.persistent ? "--persistent"
                         : ws.groupM != dflt.groupM         ? "--group-m"
                         : ws.depth != dflt.depth           ? "--depth"
                         : ws.mmaDepth != dflt.mmaDepth     ? "--mma-depth"
                                                            : nullptr;
  if (flagName)
    throw UserError(flag(flagName), std::string(flagName) + " applies to warp-specialized kernels; '@" + lk.kernel->name +
                                        "' has no tile.dot or tensor descriptor, so it is emitted as a SIMT kernel",
                    "drop " + std::string(flagName));
  if (ws.explain)
    *ws.explain << "@" << lk.kernel->name << ": no tile.dot and no tensor descriptor, so nothing for a producer warp group to "
                << "stream into consumers: emitted as a SIMT kernel (one block of 128 threads per program)\n";
  return emitSimtKernel(*lk.module, *lk.kernel, emitOpt);
}

void checkTargetOptions(const std::string& target, const std::string& emit, const std::string& out) {
  if (target != "sm_90a")
    throw UserError(flag("--target"), "unknown target '" + target + "'", "targets: sm_90a (Hopper: H100, H200)");
  if (emit != "cuda" && emit != "ptx" && emit != "cubin")
    throw UserError(flag("--emit"), "unknown stage '" + emit + "' for --target " + target,
                    "stages: cuda (CUDA C++), ptx, cubin; or ws / nv without --target");
  if (emit == "cubin" && (out.empty() || out == "-"))
    throw UserError(flag("--emit"), "a cubin is binary: write it to a file with -o FILE");
}

}  // namespace tawa::cuda
