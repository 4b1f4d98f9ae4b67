#include "backends/cuda/Target.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Emitter.h"

namespace tawa::cuda {

namespace {

Location flag(const std::string& name) { return Location::at(std::make_shared<const std::string>(name), 0, 0); }

void writeOut(const std::string& out, const std::string& text, bool binary) {
  if (out.empty() || out == "-") {
    std::cout << text;
    return;
  }
  std::ofstream f(out, binary ? std::ios::binary : std::ios::out);
  f << text;
  if (!f) throw UserError(flag(out), "cannot write file");
}

std::string readBinary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

int compileForTarget(const driver::LoadedKernel& lk, const std::string& target, const std::string& emit,
                     const std::string& out, bool resourceUsage, const EmitOptions& emitOpt) {
  if (target != "sm_90a")
    throw UserError(flag("--target"), "unknown target '" + target + "'", "targets: sm_90a (Hopper: H100, H200)");
  if (emit != "cuda" && emit != "ptx" && emit != "cubin")
    throw UserError(flag("--emit"), "unknown stage '" + emit + "' for --target " + target,
                    "stages: cuda (CUDA C++), ptx, cubin; or ws / nv without --target");
  if (emit == "cubin" && (out.empty() || out == "-"))
    throw UserError(flag("--emit"), "a cubin is binary: write it to a file with -o FILE");
  EmitResult er = emitCudaKernel(*lk.module, *lk.kernel, emitOpt);
  bool toStdout = out.empty() || out == "-";
  if (emit == "cuda") writeOut(out, er.source, false);
  if (emit == "cuda" && !resourceUsage) return 0;

  CompiledModule cm = compile(er.source);
  if (emit == "ptx") writeOut(out, cm.ptx, false);
  if (emit == "cubin") writeOut(out, readBinary(cm.cubinPath), true);
  if (resourceUsage) {
    std::ostream& os = toStdout ? std::cerr : std::cout;
    for (const auto& u : cm.usage) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%s (%s): %d registers, %lld B stack, %lld B spill stores, %lld B spill loads, %lld B static + %lld B "
                    "dynamic shared memory, %d threads\n",
                    u.kernel.c_str(), target.c_str(), u.registers, static_cast<long long>(u.stack),
                    static_cast<long long>(u.spillStores), static_cast<long long>(u.spillLoads),
                    static_cast<long long>(u.staticSmem), static_cast<long long>(er.smemBytes), er.threads);
      os << line;
    }
    os << (cm.cacheHit ? "compiled: cached in " + cm.dir + "\n"
                       : "compiled in " + std::to_string(cm.nvccSeconds + cm.ptxasSeconds).substr(0, 5) + " s (" + cm.frontend + " " +
                             std::to_string(cm.nvccSeconds).substr(0, 5) + " s, ptxas " +
                             std::to_string(cm.ptxasSeconds).substr(0, 5) + " s) into " + cm.dir + "\n");
  }
  return 0;
}

}  // namespace tawa::cuda
