// `tawa profile`: warp-specializes a kernel (driver::specialize, stage "nv"), runs it on the CPU
// executor with a profile::Recorder, writes a Chrome trace and prints the per-role summary, the
// roofline position and advice. On the executor every figure is modelled by the cost model.
//
//   std::function<int()> profileAction;
//   tawa::profile::addProfileCommand(app, profileAction);   // before app.parse
//   if (profileAction) return profileAction();               // after parsing, inside the try block
//
// The action is set only when `profile` was parsed. It prints user errors itself and returns 1.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "driver/Spec.h"
#include "profile/Recorder.h"
#include "profile/Summary.h"
#include "transforms/PassOptions.h"

namespace tawa::profile {

struct ProfileOptions {
  transforms::PassOptions ws;
  size_t eventsPerBlock = 4096;
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

// Specializes, runs with the recorder and summarizes. UserError for bad kernels, specs or grids.
ProfileResult profileKernel(const std::string& path, const std::string& kernel, const driver::Spec& spec,
                            const std::string& grid, const ProfileOptions& opt);

void addProfileCommand(CLI::App& app, std::function<int()>& action);

}  // namespace tawa::profile
