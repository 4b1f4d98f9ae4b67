// Compiles emitted CUDA C++ for sm_90a to PTX in-process with NVRTC (libnvrtc opened with dlopen;
// nvcc -ptx when NVRTC is missing or asked for), then assembles the PTX into a cubin with the
// standalone ptxas. (NVRTC's and nvJitLink's own sm_90a code generation crash on wgmma kernels on
// these machines, see DESIGN.md; PTX output and ptxas are sound.) Results go into a content-addressed
// cache: $XDG_CACHE_HOME/tawa/cuda/KEY (or ~/.cache/tawa/cuda/KEY), KEY = a hash of the source, the
// flags, the front end and its version, ptxas's version and primitives.cuh. A build happens in a
// private directory that is published with one atomic rename, so concurrent compilers never see a
// half-written entry. ptxas -v is parsed into per-kernel resource usage.
//   A missing toolkit is a UserError (exit 1): tests that need it fail loudly instead of skipping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tawa::cuda {

struct Toolkit {
  std::string root;      // $CUDA_HOME, else /usr/local/cuda
  std::string nvcc, ptxas;
  std::string version;   // `nvcc --version`, part of the cache key
};
// The toolkit, found once per process; throws UserError when nvcc or ptxas is missing.
const Toolkit& findToolkit();

// The directory holding primitives.cuh: the one setPrimitivesDir gave (an installed package's copy),
// else $TAWA_CUDA_INCLUDE, else this source tree's backend folder.
std::string primitivesDir();
void setPrimitivesDir(const std::string& dir);

struct ResourceUsage {
  std::string kernel;
  int registers = 0;
  int barriers = 0;
  int64_t staticSmem = 0;   // bytes; the dynamic buffer is EmitResult::smemBytes
  int64_t stack = 0;        // bytes of stack frame (local memory)
  int64_t spillStores = 0, spillLoads = 0;
};
// Parses `ptxas -v` output: one entry per kernel (entry function), in the order ptxas reports them.
std::vector<ResourceUsage> parsePtxasVerbose(const std::string& log);

struct CompileOptions {
  std::string arch = "sm_90a";
  // CUDA C++ -> PTX: "nvrtc", "nvcc", or "auto": $TAWA_CUDA_FRONTEND when set, else NVRTC when it loads, else nvcc.
  std::string frontend = "auto";
  std::vector<std::string> nvccFlags = {"-O3", "-std=c++17"};  // nvcc only; NVRTC gets -std=c++17
  std::string cacheDir;     // empty: the user's cache directory
  bool useCache = true;     // false: always compile (still publishes the result)
};

struct CompiledModule {
  std::string key, dir;     // cache key and the published directory
  std::string sourcePath, ptxPath, cubinPath;
  std::string ptx;          // the PTX text
  std::string ptxasLog;     // ptxas -v output (resource lines, warnings)
  std::vector<ResourceUsage> usage;
  bool cacheHit = false;
  std::string frontend;     // what made the PTX: "nvrtc" or "nvcc"
  double nvccSeconds = 0, ptxasSeconds = 0;  // front end (NVRTC or nvcc) and ptxas; 0 on a cache hit
};

// NVRTC's version ("13.0"), or "" when libnvrtc cannot be opened (the reason in *why).
std::string nvrtcVersion(std::string* why = nullptr);

// Compiles one translation unit (which may hold several kernels). Compile errors are UserErrors
// carrying the compiler's messages (they point into the kernel source through its #line directives).
CompiledModule compile(const std::string& source, const CompileOptions& opt = {});

}  // namespace tawa::cuda
