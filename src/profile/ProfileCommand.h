// `tawa profile`'s library side: warp-specializes a kernel (driver::specialize, stage "nv"), runs it
// on the CPU executor with a profile::Recorder and summarizes each role, the roofline position and
// advice; on the executor every figure is modelled by the cost model. The emu backend emits the
// kernel's CUDA C++ with --profile (the kernel records its own scopes with tawa::clock64), runs it on
// the CPU emulator, whose clock is modelled by the same cost model, and decodes the kernel's buffer
// into the same events. On GPU 0 the library API (Kernel::profile(Backend::Cuda)) launches that
// kernel itself and summarizes its records here (summarizeRecords). The command line
// (tools/tawa/ProfileCli.cpp) reaches all of it through the library API.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/Launch.h"
#include "driver/Spec.h"
#include "profile/Recorder.h"
#include "profile/Summary.h"
#include "transforms/PassOptions.h"

namespace tawa::profile {

struct ProfileOptions {
  transforms::PassOptions ws;
  std::string backend = "exec";  // exec or emu (profileKernel, profileBound); cuda: writeTrace's note
  size_t eventsPerBlock = 4096;   // exec
  int profileCapacity = 256;      // emu, cuda: events per warp group in the kernel's ring
  uint64_t seed = 1;      // scheduler seed (the modelled times do not depend on it)
  uint64_t dataSeed = 1;  // random inputs
  int threads = 0;
  CostModel model = CostModel::h200();
};

struct ProfileResult {
  std::unique_ptr<Recorder> recorder;
  Summary summary;
  std::vector<Advice> advice;
};

// Specializes, runs with the recorder (exec) or the emulator (emu) and summarizes. UserError for bad kernels, specs or grids.
ProfileResult profileKernel(const std::string& path, const std::string& kernel, const driver::Spec& spec,
                            const std::string& grid, const ProfileOptions& opt);

// profileKernel's exec and emu backends on given inputs: `ws` the kernel specialized to stage "nv",
// `input` its arguments and buffers (written as the launch writes them), `spec` for the FLOPs of a
// kernel with a dot (its integer entries M, N, K).
ProfileResult profileBound(const driver::LoadedKernel& ws, const driver::Spec& spec, driver::Bound& input, const ProfileOptions& opt);

// The summary of a --profile kernel's own records (`traces`, decoded from its buffer) of a launch that
// moved `bytes` of arrays: `gpu` says the clock was GPU 0's (measured), else the emulator's (modelled);
// `executedFlops` serves when the spec does not say M, N and K.
ProfileResult summarizeRecords(std::vector<BlockTrace> traces, const driver::LoadedKernel& ws, const driver::Spec& spec, double bytes,
                               double executedFlops, bool gpu, const ProfileOptions& opt);

// The Chrome trace of a profile (with the note that says how `backend` timed it).
void writeTrace(std::ostream& os, const ProfileResult& res, const std::string& backend);

}  // namespace tawa::profile
