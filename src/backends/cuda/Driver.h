// The CUDA driver API, opened at run time with dlopen("libcuda.so.1") and never linked, so one tawa
// binary compiles, tests and runs on machines with no GPU. Only the few driver types and entry
// points that tawa needs are declared here (their values as the driver API documents them), so no
// CUDA header is needed to build this file either.
//   Without the library: UserError "no CUDA driver (libcuda.so.1 not found)"; with the library but
//   no device: UserError "no CUDA device". Every CUresult is checked; a failure is a UserError that
//   names the call and the driver's own name and description of the error.
//   The library is $TAWA_LIBCUDA when that is set (that file only), else libcuda.so.1 on the
//   loader's path, then in the places container images mount the driver (/usr/local/nvidia/lib64, ...).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "backends/cuda/Emitter.h"

namespace tawa::cuda {

// ---- driver API types (opaque handles and the enum values tawa passes)
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

// The 128-byte opaque tensor map that cuTensorMapEncodeTiled fills (CU_TENSOR_MAP_NUM_QWORDS = 16).
struct alignas(64) CUtensorMapHost {
  uint64_t opaque[16];
};
static_assert(sizeof(CUtensorMapHost) == 128, "a CUtensorMap is 128 bytes");

namespace drv {
constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorStubLibrary = 34;        // CUDA_ERROR_STUB_LIBRARY
constexpr CUresult kErrorInsufficientDriver = 35; // CUDA_ERROR_INSUFFICIENT_DRIVER
constexpr CUresult kErrorNoDevice = 100;          // CUDA_ERROR_NO_DEVICE
constexpr int kAttrMultiprocessorCount = 16;      // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCcMajor = 75;                  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;                  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrMaxSmemOptin = 97;             // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kFuncAttrMaxDynamicSmem = 8;        // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// CUtensorMapDataType
constexpr int kTmaUint8 = 0, kTmaUint16 = 1, kTmaUint32 = 2, kTmaInt32 = 3, kTmaUint64 = 4, kTmaInt64 = 5,
              kTmaFloat16 = 6, kTmaFloat32 = 7, kTmaFloat64 = 8, kTmaBfloat16 = 9;
constexpr int kTmaInterleaveNone = 0;             // CU_TENSOR_MAP_INTERLEAVE_NONE
// CUtensorMapSwizzle: NONE, 32B, 64B, 128B
constexpr int kTmaSwizzleNone = 0, kTmaSwizzle32B = 1, kTmaSwizzle64B = 2, kTmaSwizzle128B = 3;
constexpr int kTmaL2Promotion128B = 2;            // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
constexpr int kTmaOobFillNone = 0;                // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (out of bounds reads zeros)
}  // namespace drv

// The arguments of one cuTensorMapEncodeTiled call for a row-major tensor of rank 2 to 5. Dimension
// 0 is the inner (contiguous) one, as the driver API orders them; entries past `rank` are unused.
struct TensorMapArgs {
  int dataType = drv::kTmaFloat16;
  uint32_t rank = 2;
  CUdeviceptr base = 0;
  std::array<uint64_t, 5> globalDim{};      // {cols, rows, slices...}
  std::array<uint64_t, 4> globalStrides{};  // {row stride, slice strides...} in bytes; the inner stride is implied
  std::array<uint32_t, 5> boxDim{};         // {boxCols, boxRows, 1...}
  std::array<uint32_t, 5> elementStrides{1, 1, 1, 1, 1};
  int interleave = drv::kTmaInterleaveNone;
  int swizzle = drv::kTmaSwizzleNone;
  int l2Promotion = drv::kTmaL2Promotion128B;
  int oobFill = drv::kTmaOobFillNone;
};

// The cuTensorMapEncodeTiled data type of an element type (fp8 travels as bytes). UserError for
// types TMA cannot move.
int tensorMapDataType(ir::Scalar s);
// Builds the arguments for one tensor map of an emitted kernel from the host values of its shape
// and strides (`intArgs[i]`: the integer value of IR argument i), the device address of its base
// buffer and the launch's logical grid (program ids: the extent of slice dimensions), and checks
// what the driver would reject (16-byte aligned base and strides, unit inner stride, box at most 256
// per dimension and inside the swizzle span) and slices that overlap, as a UserError naming the
// parameter.
TensorMapArgs tensorMapArgs(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base,
                            const std::array<int64_t, 3>& grid);
// Why TMA cannot take map `s` with these arguments ("" when it can): a column stride other than 1,
// rows that overlap (a base moved by a column offset past the row), a row or slice stride that is not
// a multiple of 16 bytes (or not below 2^40), a base not 16-byte aligned. A copy by threads (a tile
// map) takes any of these: it addresses base + row * row_stride + col * col_stride as the kernel does.
// `grid`: the launch's logical grid, which bounds column windows that move with a program id
// (ColumnWindow::programs); without it such a window is an obstacle.
std::string tmaObstacle(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base,
                        const std::array<int64_t, 3>* grid);
// The note a tile map gets: "FILE:LINE:COL: note: tensor map P: WHY: its tiles are moved by threads ...\n".
std::string tileMapNote(const TensorMapSpec& s, const std::string& why);
// For a map TMA cannot take (`why`): whether it is loaded through its transposed map instead (a
// TensorMapSpec::transposable one whose columns are strided: rows and columns, and their strides,
// swapped; wgmma reads the slot in the other major order), else `why` extended with the transposed
// map's obstacle where that was tried. The note that says it is loaded so.
bool loadTransposed(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base, std::string& why,
                    const std::array<int64_t, 3>* grid);
std::string transposedNote(const TensorMapSpec& s, const std::string& why);
// `er` as a launch with these arguments needs it: emitted again (EmitResult::reemit) with the tensor
// maps TMA cannot take as tile maps, each said on `note` (when given) as a located note; `er` itself
// when TMA takes every map. `baseOf(arg)`: the address of IR buffer argument `arg` (0: not known);
// `grid`: the launch's logical grid (tmaObstacle).
EmitResult withTileMaps(const EmitResult& er, const std::vector<int64_t>& intArgs, const std::function<uint64_t(int)>& baseOf,
                        std::ostream* note, const std::array<int64_t, 3>* grid);

// What the process can see of the GPU side, found without throwing.
struct GpuAvailability {
  bool ok = false;
  std::string reason;  // when !ok: "no CUDA driver (libcuda.so.1 not found)", "no CUDA device", ...
};
GpuAvailability probeGpu();

struct DeviceInfo {
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int multiprocessors = 0;
  int maxSmemOptin = 0;  // bytes of dynamic shared memory a block may opt in to
  int driverVersion = 0; // e.g. 13000
};

// The driver, opened once per process; device 0 with its primary context current on this thread.
class Driver {
 public:
  // Opens libcuda and device 0 (first call), or throws the UserError saying what is missing.
  static Driver& get();

  const DeviceInfo& device() const { return info_; }

  // Throws a UserError "WHAT failed: CUDA_ERROR_NAME (description)" unless r is success.
  void check(CUresult r, const char* what) const;

  CUmodule loadModule(const std::string& cubin);  // cuModuleLoadData
  void unloadModule(CUmodule m);
  CUfunction function(CUmodule m, const std::string& name);
  void setMaxDynamicSmem(CUfunction f, int bytes);
  CUdeviceptr alloc(size_t bytes);
  void free(CUdeviceptr p);
  void copyToDevice(CUdeviceptr dst, const void* src, size_t bytes);
  void copyToHost(void* dst, CUdeviceptr src, size_t bytes);
  void fill(CUdeviceptr dst, uint8_t byte, size_t bytes);  // cuMemsetD8
  CUtensorMapHost encodeTensorMap(const TensorMapArgs& a, const std::string& param);
  // cuLaunchKernel on `stream` (nullptr: the legacy default stream); `params` points at each kernel
  // argument in order. Asynchronous: nothing waits for the kernel.
  void launch(CUfunction f, const std::array<int64_t, 3>& grid, int threads, int smemBytes, std::vector<void*>& params,
              CUstream stream = nullptr);
  void synchronize();
  CUevent createEvent();
  void destroyEvent(CUevent e);
  void record(CUevent e, CUstream stream = nullptr);  // on `stream` (nullptr: the legacy default stream)
  float elapsedMs(CUevent start, CUevent end);  // synchronizes on `end`

  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

 private:
  Driver() = default;
  void open();
  std::string errorText(CUresult r) const;
  // The device's primary context current on the calling thread (a launcher may run on any thread).
  void current();

  void* lib_ = nullptr;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  DeviceInfo info_;

  // Entry points (dlsym'd; the _v2 names where the driver API versioned them).
  CUresult (*cuInit_)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion_)(int*) = nullptr;
  CUresult (*cuGetErrorName_)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString_)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount_)(int*) = nullptr;
  CUresult (*cuDeviceGet_)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName_)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute_)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain_)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent_)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize_)() = nullptr;
  CUresult (*cuModuleLoadData_)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload_)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction_)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute_)(CUfunction, int, int) = nullptr;
  CUresult (*cuMemAlloc_)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree_)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD_)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH_)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8_)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuTensorMapEncodeTiled_)(CUtensorMapHost*, int, uint32_t, void*, const uint64_t*, const uint64_t*,
                                      const uint32_t*, const uint32_t*, int, int, int, int) = nullptr;
  CUresult (*cuLaunchKernel_)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**) = nullptr;
  CUresult (*cuEventCreate_)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy_)(CUevent) = nullptr;
  CUresult (*cuEventRecord_)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize_)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime_)(float*, CUevent, CUevent) = nullptr;
};

}  // namespace tawa::cuda
