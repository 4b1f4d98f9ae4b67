#include "driver/Check.h"

#include <cmath>
#include <sstream>
#include <string>

#include "transforms/PassManager.h"

namespace tawa::driver {

bool simtOnly(const ir::Func& kernel) {
  bool simt = true;
  ir::walk(kernel.body, [&](const ir::Op* op) {
    switch (op->kind()) {
      case ir::OpKind::Dot:
      case ir::OpKind::MakeDesc:
      case ir::OpKind::DescLoad:
      case ir::OpKind::DescStore:
      case ir::OpKind::WgRegion: simt = false; break;
      default: break;
    }
  });
  return simt;
}

LoadedKernel specialize(const std::string& path, const std::string& kernel, const Spec& spec,
                        const transforms::PassOptions& opt, const std::string& stage) {
  return specialize(loadKernel(path, kernel, spec), opt, stage);
}

LoadedKernel specialize(LoadedKernel lk, const transforms::PassOptions& opt, const std::string& stage) {
  const bool simt = simtOnly(*lk.kernel);  // as written: block-access may add descriptors
  transforms::PassManager pm;
  pm.options = opt;
  std::ostringstream said;  // the passes' explanations, kept for the error's reason (and passed on)
  pm.options.explain = &said;
  pm.addPipeline(stage == "nv" ? "canonicalize,block-access,derive-pointers,one-shot-loop,program-order,warp-specialize,pipeline,split-consumers,lower-aref"
                               : "canonicalize,block-access,derive-pointers,one-shot-loop,program-order,warp-specialize,pipeline,split-consumers");
  try {
    pm.run(*lk.module);
  } catch (...) {
    if (opt.explain) *opt.explain << said.str();
    throw;
  }
  if (opt.explain) *opt.explain << said.str();
  bool specialized = false;
  for (auto& op : lk.kernel->body.ops()) specialized = specialized || op->kind() == ir::OpKind::WgRegion;
  if (!specialized) {
    // The reason: the first pointer access block-access left as it was (its whole line), then
    // warp-specialize's (the passes run in that order).
    std::string access, ws, line;
    for (std::istringstream in(said.str()); std::getline(in, line);) {
      if (access.empty() && line.find("not rewritten: ") != std::string::npos) access = line;
      if (auto k = line.find("not specialized: "); ws.empty() && k != std::string::npos) ws = line.substr(k);
    }
    const std::string reason = access + (!access.empty() && !ws.empty() ? "; " : "") + ws;
    throw UserError(lk.kernel->loc,
                    "could not warp-specialize '@" + lk.kernel->name + "'" + (reason.empty() ? std::string() : ": " + reason),
                    simt ? "it has no tile.dot and no tensor descriptor, so nothing for a producer to stream; "
                           "tawa compile --target sm_90a emits it as a SIMT kernel, and tawa run --backend emu runs that"
                         : "run with --explain for the passes' whole account");
  }
  return lk;
}

CheckReport check(const std::string& path, const std::string& kernel, const Spec& spec, const std::string& grid,
                  const transforms::PassOptions& opt, int seeds, uint64_t dataSeed) {
  auto ref = loadKernel(path, kernel, spec);
  transforms::PassManager canon;
  canon.add("canonicalize");
  canon.run(*ref.module);
  auto input = driver::bind(*ref.kernel, spec, grid, dataSeed);
  return checkSpecialized(ref, specialize(path, kernel, spec, opt, "nv"), input, seeds);
}

CheckReport checkSpecialized(const LoadedKernel& ref, const LoadedKernel& ws, const Bound& input, int seeds) {
  auto expected = input;
  exec::LaunchOptions lo;
  lo.grid = input.grid;
  exec::launch(*ref.module, *ref.kernel, expected.args, expected.buffers, lo);

  CheckReport rep;
  rep.kernel = ws.kernel->name;
  rep.seeds = seeds;
  rep.programs = lo.grid[0] * lo.grid[1] * lo.grid[2];
  ir::walk(ws.kernel->body, [&](const ir::Op* op) {
    if (op->hasAttr("mma_depth")) rep.mmaDepth = op->intAttr("mma_depth");
    if (op->hasAttr("pv_overlap")) rep.pvOverlap = true;
  });
  for (int s = 1; s <= seeds; ++s) {
    auto run = input;
    lo.seed = static_cast<uint64_t>(s);
    try {
      exec::launch(*ws.module, *ws.kernel, run.args, run.buffers, lo);
    } catch (const UserError& e) {
      throw UserError(e.loc, "interleaving seed " + std::to_string(s) + ": " + e.what(), e.hint);
    }
    for (size_t b = 0; b < run.buffers.size(); ++b) {
      const auto &got = run.buffers[b], &want = expected.buffers[b];
      if (got.data == want.data) continue;
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < got.numel(); ++i)
        if (got.get(i) != want.get(i) && !(std::isnan(got.get(i)) && std::isnan(want.get(i)))) {
          if (first < 0) first = i;
          ++bad;
        }
      if (bad == 0) continue;
      throw UserError(ws.kernel->loc, "interleaving seed " + std::to_string(s) + ": buffer '" + got.name +
                                          "' differs from the unspecialized kernel in " + std::to_string(bad) +
                                          " element(s), first at element " + std::to_string(first) + " (" +
                                          std::to_string(got.get(first)) + " instead of " + std::to_string(want.get(first)) + ")");
    }
  }
  return rep;
}

}  // namespace tawa::driver
