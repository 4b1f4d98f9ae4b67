// Launching an emitted kernel on GPU 0 over device memory somebody else owns (a torch tensor's
// data_ptr(), the CLI's own buffers), on a stream they choose.
//   Requires: an EmitResult whose tile maps were decided for these arguments (withTileMaps), the
//   launch's arguments as the executor takes them (exec::Arg; a buffer argument is an index that
//   `addressOf` turns into a device address), and a driver that opened (Driver::get()).
//   Guarantees: a launch encodes the tensor maps on the host and calls cuLaunchKernel once on the
//   given stream -- no allocation, no copy, no synchronization; the module is loaded once per
//   GpuKernel and unloaded with it. Every driver failure is the driver's located UserError.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "backends/exec/Executor.h"

namespace tawa::cuda {

// The parameters of one launch, in the kernel's order: the tensor maps by value, the scalars in
// 8-byte slots (values in their low bytes). `params` points into the other two.
struct LaunchParams {
  std::vector<CUtensorMapHost> maps;
  std::vector<uint64_t> scalars;
  std::vector<void*> params;
};

// Packs the parameters of `er` for a launch with `args` over the logical grid `grid`: each TMA
// tensor map encoded by the driver from its base buffer's device address and the integer arguments,
// each scalar converted to its C type; `profileBuffer` is the address of a profiled kernel's event
// records (0: the kernel has none). UserError for a tensor map whose base is not a buffer argument.
void packLaunchParams(Driver& d, const EmitResult& er, const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& grid,
                      const std::function<uint64_t(int)>& addressOf, CUdeviceptr profileBuffer, LaunchParams& out);

// One emitted kernel, compiled (cubin cache) and loaded on GPU 0, its dynamic shared memory set.
class GpuKernel {
 public:
  // Compiles and loads `er`; UserError when the device is not sm_90 or lacks the shared memory.
  GpuKernel(Driver& d, EmitResult er, const Location& at);
  ~GpuKernel();
  GpuKernel(const GpuKernel&) = delete;
  GpuKernel& operator=(const GpuKernel&) = delete;

  const EmitResult& emitted() const { return er_; }
  const CompiledModule& compiled() const { return cm_; }
  // Enqueues one launch on `stream` (nullptr: the legacy default stream) over the logical grid `grid`.
  void launch(const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& grid, const std::function<uint64_t(int)>& addressOf,
              CUstream stream);
  // The same with parameters packed beforehand (packLaunchParams), for launches repeated unchanged.
  void launch(LaunchParams& params, const std::array<int64_t, 3>& grid, CUstream stream);

 private:
  Driver& d_;
  EmitResult er_;
  CompiledModule cm_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
};

// Throws the UserError (at `at`) that says GPU 0 cannot run sm_90a code, unless it can.
void requireHopper(const Driver& d, const Location& at);

}  // namespace tawa::cuda
