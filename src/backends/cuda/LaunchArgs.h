// A launch's arguments as an emitted kernel takes them: what the GPU launcher (GpuLaunch) and the
// CPU emulator share. Requires an EmitResult's parameter list and the launch's arguments as the
// executor takes them (exec::Arg); guarantees each scalar parameter's bytes in an 8-byte slot, as
// cuLaunchKernel reads them. Runs on the host, per launch.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cuda/Emitter.h"
#include "backends/exec/Executor.h"

namespace tawa::cuda {

// The integer value of every argument of a launch (0 for buffers and floats), as HostValue::eval and
// the tensor maps' checks read them.
std::vector<int64_t> integerArgs(const std::vector<exec::Arg>& args);

// The value of a scalar kernel parameter (an IR argument of the launch, converted to the parameter's
// C type; a tile map's extent or stride; a persistent kernel's logical grid extent; or a SIMT kernel's buffer, as the address
// `bufferAddress(buffer index)` gives) in the low bytes of an 8-byte `slot`, as cuLaunchKernel and
// the emulator take it. `who` names the launcher in the error for a type it cannot pass.
void packScalarParam(const KernelParam& p, const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& logicalGrid,
                     uint64_t* slot, const char* who, const std::function<uint64_t(int)>& bufferAddress);

}  // namespace tawa::cuda
