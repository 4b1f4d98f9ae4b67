#include "backends/cuda/GpuLaunch.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/LaunchArgs.h"

namespace tawa::cuda {

namespace {

Location where() { return Location::at(std::make_shared<const std::string>("<cuda>"), 0, 0); }

}  // namespace

void requireHopper(const Driver& d, const Location& at) {
  const DeviceInfo& dev = d.device();
  if (dev.ccMajor != 9 || dev.ccMinor != 0)
    throw UserError(at, "GPU 0 (" + dev.name + ") is sm_" + std::to_string(dev.ccMajor) + std::to_string(dev.ccMinor) +
                            "; the CUDA backend emits sm_90a code, which runs on Hopper (H100, H200) only",
                    "use --backend exec");
}

void packLaunchParams(Driver& d, const EmitResult& er, const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& grid,
                      const std::function<uint64_t(int)>& addressOf, CUdeviceptr profileBuffer, LaunchParams& out) {
  const std::vector<int64_t> intArgs = integerArgs(args);
  out.maps.clear();
  out.maps.reserve(er.tensorMaps.size());
  for (const auto& s : er.tensorMaps) {
    if (!s.generic.empty()) {  // a tile map: its base, extents and strides are scalar parameters
      out.maps.emplace_back();
      continue;
    }
    if (s.baseArg < 0 || static_cast<size_t>(s.baseArg) >= args.size() || args[static_cast<size_t>(s.baseArg)].kind != exec::Arg::Kind::Buffer)
      throw UserError(where(), "tensor map " + s.param + ": its base is not a buffer argument of the launch");
    const CUdeviceptr base = addressOf(args[static_cast<size_t>(s.baseArg)].buffer);
    out.maps.push_back(d.encodeTensorMap(tensorMapArgs(s, intArgs, base, grid), s.param));
  }
  out.scalars.assign(er.params.size(), 0);
  out.params.clear();
  for (size_t i = 0; i < er.params.size(); ++i) {
    const KernelParam& p = er.params[i];
    if (p.tensorMap >= 0) {
      out.params.push_back(&out.maps[static_cast<size_t>(p.tensorMap)]);
      continue;
    }
    if (p.profileBuffer) {
      TAWA_ASSERT(profileBuffer != 0, "a profiled kernel's launch has a buffer for its events");
      std::memcpy(&out.scalars[i], &profileBuffer, sizeof profileBuffer);
    } else {
      packScalarParam(p, args, grid, &out.scalars[i], "the GPU launcher", addressOf);
    }
    out.params.push_back(&out.scalars[i]);
  }
}

GpuKernel::GpuKernel(Driver& d, EmitResult er, const Location& at) : d_(d), er_(std::move(er)) {
  requireHopper(d_, at);
  if (er_.smemBytes > d_.device().maxSmemOptin)
    throw UserError(at, "the kernel needs " + std::to_string(er_.smemBytes) + " bytes of shared memory; " + d_.device().name + " allows " +
                            std::to_string(d_.device().maxSmemOptin) + " per block",
                    "lower the aref depth (--depth) or the block sizes");
  cm_ = compile(er_.source);
  std::ifstream f(cm_.cubinPath, std::ios::binary);
  if (!f) throw UserError(Location::at(std::make_shared<const std::string>(cm_.cubinPath), 0, 0), "cannot read the compiled cubin");
  const std::string cubin((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  module_ = d_.loadModule(cubin);
  try {
    fn_ = d_.function(module_, er_.kernelName);
    d_.setMaxDynamicSmem(fn_, static_cast<int>(er_.smemBytes));
  } catch (...) {
    try {
      d_.unloadModule(module_);
    } catch (...) {
    }
    throw;
  }
}

GpuKernel::~GpuKernel() {
  try {
    d_.unloadModule(module_);
  } catch (...) {  // a context already torn down at exit: nothing to free
  }
}

void GpuKernel::launch(const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& grid,
                       const std::function<uint64_t(int)>& addressOf, CUstream stream) {
  LaunchParams lp;
  packLaunchParams(d_, er_, args, grid, addressOf, 0, lp);
  launch(lp, grid, stream);
}

void GpuKernel::launch(LaunchParams& params, const std::array<int64_t, 3>& grid, CUstream stream) {
  d_.launch(fn_, launchGrid(er_, grid), er_.threads, static_cast<int>(er_.smemBytes), params.params, stream);
}

}  // namespace tawa::cuda
