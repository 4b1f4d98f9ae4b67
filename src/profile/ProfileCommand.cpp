#include "profile/ProfileCommand.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <iostream>

#include "backends/cuda/ProfileBuffer.h"
#include "backends/emu/Emulator.h"
#include "driver/Check.h"
#include "driver/Compare.h"
#include "driver/Launch.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostic.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::profile {

namespace {

// The tuner parameters the advice speaks of: D and the consumer groups as asked, P as the pipeline chose.
Params tunerParams(const ProfileOptions& opt, const ir::Func& kernel) {
  Params p;
  p.depth = std::max(1, transforms::ringDepth(kernel));
  p.consumers = std::max(1, transforms::consumerRegions(kernel));
  ir::walk(kernel.body, [&](const ir::Op* op) {
    if (op->hasAttr("mma_depth")) p.mmaDepth = static_cast<int>(op->intAttr("mma_depth"));
  });
  return p;
}

Location where(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }


double bufferBytes(const driver::Bound& input) {
  double bytes = 0;
  for (const auto& b : input.buffers) bytes += static_cast<double>(b.data.size());  // each buffer moved once
  return bytes;
}

}  // namespace

ProfileResult summarizeRecords(std::vector<BlockTrace> traces, const driver::LoadedKernel& ws, const driver::Spec& spec, double bytes,
                               double executedFlops, bool gpu, const ProfileOptions& opt) {
  const double flops = driver::dotFlops(*ws.module, spec).value_or(executedFlops);
  ProfileResult res;
  res.recorder = std::make_unique<Recorder>(opt.model, static_cast<size_t>(opt.profileCapacity));
  const double n = std::max<double>(1, static_cast<double>(traces.size()));
  for (auto& t : traces) res.recorder->adopt(std::move(t), flops / n, bytes / n);
  res.recorder->finish();
  res.summary = summarize(*res.recorder, ws.kernel->name, tunerParams(opt, *ws.kernel));
  res.summary.timedBy = "the CPU emulator's clock (the --profile kernel's own records; tawa's cost model advances the clock)";
  if (gpu) {
    res.summary.modelled = false;
    res.summary.timedBy = "GPU 0's clock64 within blocks and %globaltimer between them (the --profile kernel's own records)";
  }
  res.summary.capacityFlag = "--profile-capacity";
  res.summary.tensorCoreSeen = false;
  res.advice = advise(res.summary);
  return res;
}

ProfileResult profileBound(const driver::LoadedKernel& ws, const driver::Spec& spec, driver::Bound& input, const ProfileOptions& opt) {
  if (opt.backend == "emu") {  // the kernel's own --profile records on the emulator (modelled clock)
    cuda::EmitOptions eo;
    eo.profile = true;
    eo.profileCapacity = opt.profileCapacity;
    cuda::EmitResult er = cuda::emitCudaKernel(*ws.module, *ws.kernel, eo);
    emu::Options o;
    o.model = opt.model;
    emu::LaunchStats st = emu::launch(er, input.args, input.buffers, input.grid, o);
    auto traces = cuda::decodeProfile(er.profile, st.profile.data(), st.profile.size(), cuda::launchGrid(er, input.grid), opt.model.clockGHz);
    // the work of the wgmma it ran serves when the spec does not say M, N and K
    return summarizeRecords(std::move(traces), ws, spec, bufferBytes(input), st.mmaFlops, false, opt);
  }
  if (opt.backend != "exec")
    throw UserError(where("--backend"), "unknown backend '" + opt.backend + "'", "backends: exec, emu");
  ProfileResult res;
  res.recorder = std::make_unique<Recorder>(opt.model, opt.eventsPerBlock);
  exec::LaunchOptions lo;
  lo.grid = input.grid;
  lo.seed = opt.seed;
  lo.threads = opt.threads;
  lo.recorder = res.recorder.get();
  exec::launch(*ws.module, *ws.kernel, input.args, input.buffers, lo);
  res.recorder->finish();
  res.summary = summarize(*res.recorder, ws.kernel->name, tunerParams(opt, *ws.kernel));
  res.advice = advise(res.summary);
  return res;
}

ProfileResult profileKernel(const std::string& path, const std::string& kernel, const driver::Spec& spec,
                            const std::string& grid, const ProfileOptions& opt) {
  if (opt.backend != "exec" && opt.backend != "emu")  // the GPU's profile is tawa::Kernel::profile(Backend::Cuda), on the caller's buffers
    throw UserError(where("--backend"), "unknown backend '" + opt.backend + "'", "backends: exec, emu");
  auto ws = driver::specialize(path, kernel, spec, opt.ws, "nv");
  auto input = driver::bind(*ws.kernel, spec, grid, opt.dataSeed);
  return profileBound(ws, spec, input, opt);
}

void writeTrace(std::ostream& os, const ProfileResult& res, const std::string& backend) {
  TraceMeta meta;
  meta.kernel = res.summary.kernel;
  meta.device = res.summary.device;
  meta.cyclesPerUs = res.recorder->model().cyclesPerUs();
  if (backend == "emu")
    meta.note = "modelled: the kernel's own --profile records, timed by the CPU emulator's clock (tawa's cost model), not by a GPU";
  if (backend == "cuda") {
    meta.modelled = false;
    meta.note = "measured on GPU 0: clock64 within a block, %globaltimer between blocks; cycles shown at 1.98 GHz";
  }
  writeChromeTrace(os, res.recorder->traces(), meta);
}

}  // namespace tawa::profile
