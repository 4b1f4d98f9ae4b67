#include "driver/Target.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>
#include <iostream>
#include <map>
#include <set>
#include <optional>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "backends/cuda/SimtEmitter.h"
#include "driver/Check.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "transforms/PassManager.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::driver {

using namespace cuda;  // the emitters' types

namespace {

Location flag(const std::string& name) { return Location::at(std::make_shared<const std::string>(name), 0, 0); }

// Whether every argument `v` reads has a value in the spec.
bool known(const HostValue& v, const std::vector<bool>& has) {
  if (v.op) return known(v.parts[0], has) && known(v.parts[1], has);
  return v.arg < 0 || (static_cast<size_t>(v.arg) < has.size() && has[static_cast<size_t>(v.arg)]);
}

// The integer arguments the spec gives values for (ints), and which (has).
void specValues(const ir::Func& kernel, const driver::Spec& spec, std::vector<int64_t>& ints, std::vector<bool>& has) {
  ints.assign(kernel.numArgs(), 0);
  has.assign(kernel.numArgs(), false);
  for (size_t i = 0; i < kernel.numArgs(); ++i) {
    const driver::SpecEntry* e = spec.find(kernel.arg(i)->nameHint);
    if (!e || e->kind == driver::SpecEntry::Kind::Buffer || !e->hasValue) continue;
    if (const auto* v = std::get_if<int64_t>(&e->value)) ints[i] = *v, has[i] = true;
  }
}

// The tensor maps TMA cannot take with the spec's values (param -> why), among those whose extents
// and strides the spec gives; buffers are taken as 16-byte aligned (the launch checks its own).
std::map<std::string, std::string> obstaclesInSpec(const EmitResult& er, const std::vector<int64_t>& ints, const std::vector<bool>& has) {
  std::map<std::string, std::string> out;
  for (const TensorMapSpec& m : er.tensorMaps) {
    bool all = known(m.rowStride, has) && known(m.colStride, has);
    for (const SliceDim& d : m.slices) all = all && known(d.stride, has);
    if (!all || !m.generic.empty()) continue;
    // Column windows that move with a program id: the launch's grid bounds them (the launch decides).
    TensorMapSpec unmoved = m;
    std::erase_if(unmoved.columns, [](const ColumnWindow& w) { return !w.programs.empty(); });
    if (std::string why = tmaObstacle(unmoved, ints, 0, nullptr); !why.empty()) out.emplace(m.param, why);
  }
  return out;
}

}  // namespace

EmitResult withSpecTileMaps(const EmitResult& r, const ir::Func& kernel, const driver::Spec& spec, std::ostream* explain) {
  if (!r.reemit) return r;
  std::vector<int64_t> ints;
  std::vector<bool> has;
  specValues(kernel, spec, ints, has);
  std::map<std::string, std::string> generic = obstaclesInSpec(r, ints, has);
  if (generic.empty()) return r;
  std::set<std::string> transposed;
  for (const TensorMapSpec& m : r.tensorMaps) {
    auto g = generic.find(m.param);
    if (g == generic.end()) continue;
    // (Extents the spec does not give: the launch decides.)
    if (known(m.rows, has) && known(m.cols, has) && loadTransposed(m, ints, 0, g->second, nullptr)) {
      std::cerr << transposedNote(m, g->second);
      transposed.insert(m.param);
      generic.erase(g);
      continue;
    }
    std::cerr << tileMapNote(m, g->second);
    if (explain)
      *explain << "@" << kernel.name << ": tensor map " << m.param << ": " << g->second
               << " (with the spec's values): its tiles are moved by threads, not TMA (the producer warp group's 128 threads "
               << "for ring slots, 128 threads of a consumer for its own tiles and stores), slower than TMA\n";
  }
  return r.reemit(generic, transposed);
}

EmitResult emitForTarget(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                         const transforms::PassOptions& ws, const EmitOptions& emitOpt, driver::LoadedKernel& lk, bool* simt) {
  lk = driver::loadKernel(file, kernel, spec);
  return withSpecTileMaps(emitForTarget(lk, ws, emitOpt, simt), *lk.kernel, spec, ws.explain);
}

namespace {

// Whether the SIMT path can take a kernel that has tile.dot: its loads and stores are pointer ones
// (no tensor descriptor, which only the warp-specialized path emits).
// A kernel as written (not already warp-specialized IR) may fall back to the SIMT path.
bool tileLevel(const ir::Func& kernel) {
  bool ok = true;
  ir::walk(kernel.body, [&](const ir::Op* op) { ok = ok && op->kind() != ir::OpKind::WgRegion; });
  return ok;
}

}  // namespace

EmitResult emitForTarget(driver::LoadedKernel& lk, const transforms::PassOptions& ws, const EmitOptions& emitOpt, bool* simt) {
  transforms::PassManager pm;
  pm.add("canonicalize");
  pm.run(*lk.module);
  const transforms::PassOptions dflt;
  const bool wsFlags = ws.consumers != dflt.consumers || ws.persistent != dflt.persistent || ws.groupM != dflt.groupM || ws.depth != dflt.depth ||
                       ws.mmaDepth != dflt.mmaDepth;
  if (!driver::simtOnly(*lk.kernel)) {
    if (simt) *simt = false;
    // A tile.dot or descriptor kernel that the warp-specialized path cannot take (no loop to pipeline,
    // an access block-access cannot take, a B operand computed in registers, a block under 64 rows, a
    // K loop nested in data-dependent control flow, ...) is still emitted: as a SIMT kernel with FMA
    // dots and plain block accesses, unless warp-specialization flags asked for more. When the SIMT
    // path cannot take it either, the warp-specialized path's error stands.
    std::string asLoaded;
    if (tileLevel(*lk.kernel) && !wsFlags) asLoaded = ir::print(*lk.module);
    const std::string name = lk.kernel->name;
    std::string why;
    std::optional<UserError> wsError;
    // TAWA_SIMT=1: the SIMT kernel even where the warp-specialized path takes the kernel (for tests of
    // the SIMT path, and to tell a fault of the warp-specialized path from the kernel's own).
    const char* forced = std::getenv("TAWA_SIMT");
    if (forced && std::string(forced) == "1" && !asLoaded.empty()) {
      why = "TAWA_SIMT=1 is set";
    } else {
      try {
        lk = driver::specialize(std::move(lk), ws, "nv");  // its pipeline starts with canonicalize again (a no-op now)
        EmitResult r = emitCudaKernel(*lk.module, *lk.kernel, emitOpt);
        // An explicit --consumers 2 the kernel's form cannot take (split-consumers says why) is not silent.
        if (ws.consumers == 2 && transforms::consumerRegions(*lk.kernel) == 1)
          std::cerr << lk.kernel->loc.str() << ": warning: --consumers 2 not taken: '@" << name
                    << "' runs one consumer warp group (--explain says why two cannot split its rows)\n";
        return r;
      } catch (const UserError& e) {
        if (asLoaded.empty()) throw;
        wsError = e;
        why = "the warp-specialized path stopped at " + e.loc.str() + ": " + e.what();
      }
    }
    lk.module = ir::parseModule(asLoaded, "<tawa ir>");
    lk.kernel = lk.module->lookup(name);
    EmitResult r;
    try {
      r = emitSimtKernel(*lk.module, *lk.kernel, emitOpt);
    } catch (const UserError&) {
      if (wsError) throw *wsError;
      throw;
    }
    if (simt) *simt = true;
    // Correct but slow: said on stderr whatever the flags, so that nobody times it unaware.
    std::cerr << lk.kernel->loc.str() << ": warning: '@" << name << "' is not warp-specialized (" << why
              << "): emitted as a SIMT kernel, without TMA or wgmma (its tl.dot on mma.sync where the operands allow, "
                 "else on FMA units: slow)\n";
    if (ws.explain)
      *ws.explain << "@" << name << ": not warp-specialized (" << why << "): emitted as a SIMT kernel (" << r.threads
                  << " threads per program) whose tile.dot stages its operands in shared memory and runs on mma.sync "
                  << "(f16/bf16, tf32 and 8-bit integer operands) or FMA loops in f32 (i32): correct, and slower than the warp-specialized form\n";
    return r;
  }
  if (simt) *simt = true;
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

}  // namespace tawa::driver
