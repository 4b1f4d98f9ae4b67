#include "backends/cuda/Driver.h"

#include <algorithm>

#include <dlfcn.h>
#include <limits>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <ostream>

namespace tawa::cuda {

namespace {

Location where() { return Location::at(std::make_shared<const std::string>("<cuda>"), 0, 0); }

int64_t valueOf(const HostValue& h, const std::vector<int64_t>& intArgs, const std::string& param, const char* what) {
  if (h.op) {
    valueOf(h.parts[0], intArgs, param, what);  // the same checks on every argument it reads
    valueOf(h.parts[1], intArgs, param, what);
    return h.eval(intArgs);
  }
  if (h.arg < 0) return h.constant;
  if (static_cast<size_t>(h.arg) >= intArgs.size())
    throw UserError(where(), "tensor map " + param + ": its " + what + " comes from argument #" + std::to_string(h.arg) +
                                 ", which the launch does not have");
  return intArgs[static_cast<size_t>(h.arg)];
}

// A failed open, remembered so that every later call reports the same reason.
struct OpenState {
  std::once_flag once;
  std::string error;  // empty after a successful open
};
OpenState& openState() {
  static OpenState s;
  return s;
}

}  // namespace

int tensorMapDataType(ir::Scalar s) {
  using ir::Scalar;
  switch (s) {
    case Scalar::F16: return drv::kTmaFloat16;
    case Scalar::BF16: return drv::kTmaBfloat16;
    case Scalar::F32: return drv::kTmaFloat32;
    case Scalar::F64: return drv::kTmaFloat64;
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::I8:
    case Scalar::U8: return drv::kTmaUint8;
    case Scalar::I16:
    case Scalar::U16: return drv::kTmaUint16;
    case Scalar::I32: return drv::kTmaInt32;
    case Scalar::U32: return drv::kTmaUint32;
    case Scalar::I64: return drv::kTmaInt64;
    case Scalar::U64: return drv::kTmaUint64;
    case Scalar::I1: break;
  }
  throw UserError(where(), "TMA cannot move elements of type " + std::string(ir::scalarName(s)));
}

TensorMapArgs tensorMapArgs(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base,
                            const std::array<int64_t, 3>& grid) {
  const std::string& p = s.param;
  TensorMapArgs a;
  a.dataType = tensorMapDataType(s.elem);
  int64_t elemBytes = ir::byteWidth(s.elem);
  int64_t rows = valueOf(s.rows, intArgs, p, "row count");
  int64_t rowStride = valueOf(s.rowStride, intArgs, p, "row stride");
  // Unmasked columns whose windows lie within a row (tmaObstacle checked them): whole rows.
  int64_t cols = s.rowCols ? rowStride : valueOf(s.cols, intArgs, p, "column count");
  int64_t colStride = valueOf(s.colStride, intArgs, p, "column stride");
  // Located at the kernel source the descriptor comes from (the user's load or make_desc).
  auto bad = [&](const std::string& why, const std::string& fix = {}) -> UserError {
    return UserError(s.loc.known() ? s.loc : where(), "tensor map " + p + ": " + why, fix);
  };
  if (rows <= 0 || cols <= 0)
    throw bad("the tensor is " + std::to_string(rows) + "x" + std::to_string(cols) + "; both extents must be positive");
  if (colStride != 1)
    throw bad("the inner (column) stride is " + std::to_string(colStride) + "; TMA needs contiguous rows (stride 1)",
              "pass an array contiguous along the dimension this access walks fastest (a copy: numpy.ascontiguousarray, "
              "tensor.contiguous())");
  if (rowStride < cols)
    throw bad("the row stride " + std::to_string(rowStride) + " is smaller than the row length " + std::to_string(cols));
  if ((rowStride * elemBytes) % 16 != 0)
    throw bad("the row stride is " + std::to_string(rowStride * elemBytes) + " bytes; TMA needs a multiple of 16",
              "pad the rows so that each starts 16-byte aligned (a row stride that is a multiple of " +
                  std::to_string(16 / std::max<int64_t>(1, elemBytes)) + " elements)");
  if (base % 16 != 0) throw bad("the base address is not 16-byte aligned");
  if (s.boxRows <= 0 || s.boxCols <= 0 || s.boxRows > 256 || s.boxCols > 256)
    throw bad("the box is " + std::to_string(s.boxRows) + "x" + std::to_string(s.boxCols) + "; each side must be 1..256");
  if ((s.boxCols * elemBytes) % 16 != 0)
    throw bad("a box row is " + std::to_string(s.boxCols * elemBytes) + " bytes; TMA needs a multiple of 16");
  switch (s.swizzleBytes) {
    case 0: a.swizzle = drv::kTmaSwizzleNone; break;
    case 32: a.swizzle = drv::kTmaSwizzle32B; break;
    case 64: a.swizzle = drv::kTmaSwizzle64B; break;
    case 128: a.swizzle = drv::kTmaSwizzle128B; break;
    default: throw bad("swizzle of " + std::to_string(s.swizzleBytes) + " bytes; TMA has 32, 64 and 128");
  }
  if (s.swizzleBytes && s.boxCols * elemBytes > s.swizzleBytes)
    throw bad("a box row of " + std::to_string(s.boxCols * elemBytes) + " bytes exceeds the " + std::to_string(s.swizzleBytes) +
              "-byte swizzle span");
  if (s.slices.size() > 3) throw bad("a tensor map has at most 5 dimensions; this one has " + std::to_string(s.rank()));
  a.base = base;
  a.rank = static_cast<uint32_t>(s.rank());
  a.globalDim[0] = static_cast<uint64_t>(cols);
  a.globalDim[1] = static_cast<uint64_t>(rows);
  a.globalStrides[0] = static_cast<uint64_t>(rowStride * elemBytes);
  a.boxDim[0] = static_cast<uint32_t>(s.boxCols);
  a.boxDim[1] = static_cast<uint32_t>(s.boxRows);
  // Each slice dimension: extent from the grid, stride at least the span of what it contains.
  int64_t span = rows * rowStride;
  for (size_t i = 0; i < s.slices.size(); ++i) {
    const SliceDim& d = s.slices[i];
    int64_t stride = valueOf(d.stride, intArgs, p, "slice stride");
    int64_t extent = d.gridAxis >= 0 && d.gridAxis < 3 ? grid[static_cast<size_t>(d.gridAxis)] : 0;
    if (extent <= 0 || extent > (int64_t{1} << 32))
      throw bad("slice dimension " + std::to_string(i + 2) + " takes its extent from the grid's axis " + std::to_string(d.gridAxis) +
                ", which is " + std::to_string(extent));
    if (stride < span)
      throw bad("the slice stride " + std::to_string(stride) + " is smaller than the " + std::to_string(span) +
                " elements of one slice (slices would overlap)");
    if ((stride * elemBytes) % 16 != 0 || stride * elemBytes >= (int64_t{1} << 40))
      throw bad("the slice stride is " + std::to_string(stride * elemBytes) + " bytes; TMA needs a multiple of 16 below 2^40");
    a.globalDim[i + 2] = static_cast<uint64_t>(extent);
    a.globalStrides[i + 1] = static_cast<uint64_t>(stride * elemBytes);
    a.boxDim[i + 2] = 1;
    span = stride * extent;
  }
  return a;
}

// Whether the kernel's value of a loop bound is the host's: every intermediate of the expression fits
// in 32 bits (the kernel computes in i32, or i64, and wraps) and no division is by zero.
bool exactBound(const HostValue& h, const std::vector<int64_t>& intArgs, const std::string& param) {
  const int64_t v = valueOf(h, intArgs, param, "loop bound");
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) return false;
  if (!h.op) return true;
  if (h.op == '/' && h.parts[1].eval(intArgs) == 0) return false;
  return exactBound(h.parts[0], intArgs, param) && exactBound(h.parts[1], intArgs, param);
}

// Why the columns of window `w` (ColumnWindow) may leave a row of `rowStride` elements at this
// launch, or "" when every one lies within it.
std::string windowObstacle(const ColumnWindow& w, int64_t rowStride, const std::vector<int64_t>& intArgs, const std::string& param,
                           const std::array<int64_t, 3>* grid) {
  const std::string unbounded =
      "its columns are unmasked and the kernel's loop bounds could not be evaluated here, so its reads may run past the end of a row";
  // The program ids' part: from `low` to `high` over the grid's ids (each from 0 to its extent - 1).
  int64_t low = 0, high = 0;
  for (const auto& [axis, scale] : w.programs) {
    if (!grid || axis < 0 || axis > 2 || (*grid)[static_cast<size_t>(axis)] < 1)
      return "its columns are unmasked and move with the program id along axis " + std::to_string(axis) +
             ", whose range (the launch grid) is not known here, so its reads may run past the end of a row";
    const int64_t far = scale * ((*grid)[static_cast<size_t>(axis)] - 1);
    low += std::min<int64_t>(0, far), high += std::max<int64_t>(0, far);
  }
  if (!exactBound(w.lb, intArgs, param) || !exactBound(w.ub, intArgs, param) || !exactBound(w.step, intArgs, param) ||
      !exactBound(w.base, intArgs, param))
    return unbounded;
  const int64_t lb = w.lb.eval(intArgs), ub = w.ub.eval(intArgs), step = w.step.eval(intArgs), base = w.base.eval(intArgs);
  if (step == 0) return unbounded;
  if (step > 0 ? ub <= lb : ub >= lb) return "";  // the loop runs no iteration: nothing is read
  // The first and last index (a negative step counts down), and the columns at either end.
  const int64_t last = step > 0 ? lb + (ub - lb - 1) / step * step : lb - (lb - ub - 1) / -step * -step;
  const int64_t atFirst = w.scale * lb + w.offset + base, atLast = w.scale * last + w.offset + base;
  const int64_t first = std::min(atFirst, atLast) + low, end = std::max(atFirst, atLast) + high + w.width;
  if (first < 0 || end > rowStride)
    return "its columns are unmasked and the kernel accesses columns " + std::to_string(first) + " to " + std::to_string(end - 1) +
           (w.programs.empty() ? "" : " (over the program ids of this launch's grid)") + " of rows " + std::to_string(rowStride) +
           " elements apart, across the end of a row (a K that is not a multiple of the block, or rows closer than a block is "
           "wide" + (w.programs.empty() ? "" : ", or a grid larger than the columns") + "), which a TMA map of whole rows cannot address";
  return "";
}

std::string tmaObstacle(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base, const std::array<int64_t, 3>* grid) {
  const std::string& p = s.param;
  const int64_t elemBytes = ir::byteWidth(s.elem);
  const int64_t colStride = valueOf(s.colStride, intArgs, p, "column stride");
  const int64_t rowStride = valueOf(s.rowStride, intArgs, p, "row stride");
  if (colStride != 1) return "its inner (column) stride is " + std::to_string(colStride) + ", and TMA needs contiguous rows";
  // An empty tensor (a K of 0: Triton runs the kernel, whose loop then runs no iteration or loads
  // nothing but masked-off zeros): no tensor map encodes it, a tile map reads nothing.
  const int64_t rows = valueOf(s.rows, intArgs, p, "row count"), cols = s.rowCols ? rowStride : valueOf(s.cols, intArgs, p, "column count");
  if (rows <= 0 || cols <= 0)
    return "it is empty (" + std::to_string(rows) + "x" + std::to_string(cols) + "), and a TMA map needs positive extents";
  if (s.rowCols)
    for (const ColumnWindow& w : s.columns)
      if (std::string why = windowObstacle(w, rowStride, intArgs, p, grid); !why.empty()) return why;
  if (cols == std::numeric_limits<int32_t>::max())
    return "its columns are unmasked, so the kernel may read past the end of a row (a K that is not a multiple of the block, "
           "a base moved by a column offset, rows closer than their length), which a TMA map of whole rows cannot address";
  else if (rowStride < cols)
    return "its rows overlap (the row stride " + std::to_string(rowStride) + " is smaller than the row length " + std::to_string(cols) +
           ": a base moved by a column offset past the row), which TMA cannot address";
  if ((rowStride * elemBytes) % 16 != 0)
    return "its row stride is " + std::to_string(rowStride * elemBytes) + " bytes, and TMA needs a multiple of 16";
  if (base % 16 != 0) return "its base address is not 16-byte aligned, as TMA needs";
  for (const auto& [param, quotient] : s.wholeRows) {
    const int64_t a = valueOf(quotient.parts[0], intArgs, p, "base offset stride"), r = valueOf(quotient.parts[1], intArgs, p, "row stride");
    if (r == 0 || a % r != 0)
      return "its base moves by multiples of " + std::to_string(a) + " elements, not a whole number of its rows (" + std::to_string(r) +
             " elements apart)";
    if (a / r > std::numeric_limits<int32_t>::max() || a / r < std::numeric_limits<int32_t>::min())
      return "its base moves by multiples of " + std::to_string(a / r) + " rows, past TMA's 32-bit coordinates";
  }
  for (const SliceDim& d : s.slices) {
    const int64_t stride = valueOf(d.stride, intArgs, p, "slice stride") * elemBytes;
    if (stride % 16 != 0 || stride >= (int64_t{1} << 40))
      return "its slice stride is " + std::to_string(stride) + " bytes, and TMA needs a multiple of 16 below 2^40";
  }
  return "";
}

// "FILE:LINE:COL: note: tensor map P: WHY" (the start of every note about a map).
static std::string mapNote(const TensorMapSpec& s, const std::string& why) {
  return (s.loc.known() ? s.loc.str() : std::string("<cuda>")) + ": note: tensor map " + s.param + ": " + why;
}

std::string tileMapNote(const TensorMapSpec& s, const std::string& why) {
  return mapNote(s, why) + ": its tiles are moved by threads instead (ordinary loads and shared-memory stores, slower than TMA)\n";
}

// Why TMA cannot take the transposed map of a transposable one ("" when it can).
static std::string transposedObstacle(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base,
                                      const std::array<int64_t, 3>* grid) {
  TensorMapSpec t = s;
  std::swap(t.rows, t.cols);
  std::swap(t.rowStride, t.colStride);
  return tmaObstacle(t, intArgs, base, grid);
}

bool loadTransposed(const TensorMapSpec& s, const std::vector<int64_t>& intArgs, CUdeviceptr base, std::string& why,
                    const std::array<int64_t, 3>* grid) {
  if (!s.transposable || valueOf(s.colStride, intArgs, s.param, "column stride") == 1) return false;
  const std::string t = transposedObstacle(s, intArgs, base, grid);
  if (t.empty()) return true;
  why += "; nor its transpose: " + t;
  return false;
}

std::string transposedNote(const TensorMapSpec& s, const std::string& why) {
  return mapNote(s, why) + ", but its rows are: TMA loads it transposed, and wgmma reads the slot in the other major order (a K-major "
         "B, an M-major A)\n";
}

EmitResult withTileMaps(const EmitResult& er, const std::vector<int64_t>& intArgs, const std::function<uint64_t(int)>& baseOf,
                        std::ostream* note, const std::array<int64_t, 3>* grid) {
  std::map<std::string, std::string> generic;
  std::set<std::string> transposed;
  for (const TensorMapSpec& s : er.tensorMaps) {
    if (!s.generic.empty()) continue;
    const auto base = static_cast<CUdeviceptr>(baseOf(s.baseArg));
    std::string why = tmaObstacle(s, intArgs, base, grid);
    if (why.empty()) continue;
    if (loadTransposed(s, intArgs, base, why, grid)) {
      if (note) *note << transposedNote(s, why);
      transposed.insert(s.param);
      continue;
    }
    if (note) *note << tileMapNote(s, why);
    generic.emplace(s.param, why);
  }
  if (generic.empty() && transposed.empty()) return er;
  TAWA_ASSERT(er.reemit, "a warp-specialized kernel with tensor maps can be emitted again");
  return er.reemit(generic, transposed);
}

GpuAvailability probeGpu() {
  try {
    Driver::get();
    return {true, ""};
  } catch (const UserError& e) {
    return {false, e.what()};
  }
}

Driver& Driver::get() {
  static Driver d;
  OpenState& st = openState();
  std::call_once(st.once, [&] {
    try {
      d.open();
    } catch (const UserError& e) {
      st.error = e.what();
      if (!e.hint.empty()) st.error += "\n  hint: " + e.hint;
    }
  });
  if (!st.error.empty()) {
    auto nl = st.error.find("\n  hint: ");
    if (nl == std::string::npos) throw UserError(where(), st.error);
    throw UserError(where(), st.error.substr(0, nl), st.error.substr(nl + 9));
  }
  return d;
}

void Driver::open() {
  // $TAWA_LIBCUDA, when set, is the one file tried (tests point it at nothing, or at the stub).
  std::string tried;
  if (const char* e = std::getenv("TAWA_LIBCUDA"); e && *e) {
    lib_ = dlopen(e, RTLD_NOW | RTLD_LOCAL);
    tried = std::string(" (TAWA_LIBCUDA=") + e + ")";
  } else {
    lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_)
      if (const char* why = dlerror(); why && !std::string_view(why).ends_with("No such file or directory"))
        tried = std::string(" (") + why + ")";  // found but not loadable: say why
    for (const char* p : {"/usr/local/nvidia/lib64/libcuda.so.1", "/usr/local/nvidia/lib/libcuda.so.1",
                          "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"})
      if (!lib_) lib_ = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib_)
    throw UserError(where(), "no CUDA driver (libcuda.so.1 not found)" + tried,
                    "install the NVIDIA driver, or set TAWA_LIBCUDA to its libcuda.so.1; without a GPU use --backend exec");
  auto sym = [&](auto& fn, const char* name, const char* fallback = nullptr) {
    void* p = dlsym(lib_, name);
    if (!p && fallback) p = dlsym(lib_, fallback);
    if (!p)
      throw UserError(where(), std::string("the CUDA driver has no ") + name + " (too old a driver?)",
                      "tawa needs a driver for CUDA 12 or newer");
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(cuInit_, "cuInit");
  sym(cuDriverGetVersion_, "cuDriverGetVersion");
  sym(cuGetErrorName_, "cuGetErrorName");
  sym(cuGetErrorString_, "cuGetErrorString");
  sym(cuDeviceGetCount_, "cuDeviceGetCount");
  sym(cuDeviceGet_, "cuDeviceGet");
  sym(cuDeviceGetName_, "cuDeviceGetName");
  sym(cuDeviceGetAttribute_, "cuDeviceGetAttribute");
  sym(cuDevicePrimaryCtxRetain_, "cuDevicePrimaryCtxRetain");
  sym(cuCtxSetCurrent_, "cuCtxSetCurrent");
  sym(cuCtxSynchronize_, "cuCtxSynchronize");
  sym(cuModuleLoadData_, "cuModuleLoadData");
  sym(cuModuleUnload_, "cuModuleUnload");
  sym(cuModuleGetFunction_, "cuModuleGetFunction");
  sym(cuFuncSetAttribute_, "cuFuncSetAttribute");
  sym(cuMemAlloc_, "cuMemAlloc_v2");
  sym(cuMemFree_, "cuMemFree_v2");
  sym(cuMemcpyHtoD_, "cuMemcpyHtoD_v2");
  sym(cuMemcpyDtoH_, "cuMemcpyDtoH_v2");
  sym(cuMemsetD8_, "cuMemsetD8_v2");
  sym(cuTensorMapEncodeTiled_, "cuTensorMapEncodeTiled");
  sym(cuLaunchKernel_, "cuLaunchKernel");
  sym(cuEventCreate_, "cuEventCreate");
  sym(cuEventDestroy_, "cuEventDestroy_v2", "cuEventDestroy");
  sym(cuEventRecord_, "cuEventRecord");
  sym(cuEventSynchronize_, "cuEventSynchronize");
  sym(cuEventElapsedTime_, "cuEventElapsedTime_v2", "cuEventElapsedTime");

  CUresult r = cuInit_(0);
  if (r == drv::kErrorNoDevice) throw UserError(where(), "no CUDA device", "the driver is installed but sees no GPU; use --backend exec");
  if (r == drv::kErrorStubLibrary)
    throw UserError(where(), "no CUDA driver (libcuda.so.1 is the toolkit's stub, not a driver)",
                    "take the toolkit's stubs folder off the library path; without a GPU use --backend exec");
  if (r == drv::kErrorInsufficientDriver)
    throw UserError(where(), "the CUDA driver is older than this program needs (" + errorText(r) + ")");
  check(r, "cuInit");
  int count = 0;
  check(cuDeviceGetCount_(&count), "cuDeviceGetCount");
  if (count <= 0) throw UserError(where(), "no CUDA device", "the driver is installed but sees no GPU; use --backend exec");
  check(cuDeviceGet_(&dev_, 0), "cuDeviceGet");
  char name[256] = {};
  check(cuDeviceGetName_(name, sizeof name - 1, dev_), "cuDeviceGetName");
  info_.name = name;
  check(cuDeviceGetAttribute_(&info_.ccMajor, drv::kAttrCcMajor, dev_), "cuDeviceGetAttribute(compute capability major)");
  check(cuDeviceGetAttribute_(&info_.ccMinor, drv::kAttrCcMinor, dev_), "cuDeviceGetAttribute(compute capability minor)");
  check(cuDeviceGetAttribute_(&info_.multiprocessors, drv::kAttrMultiprocessorCount, dev_),
        "cuDeviceGetAttribute(multiprocessor count)");
  check(cuDeviceGetAttribute_(&info_.maxSmemOptin, drv::kAttrMaxSmemOptin, dev_),
        "cuDeviceGetAttribute(max shared memory per block, opt-in)");
  check(cuDriverGetVersion_(&info_.driverVersion), "cuDriverGetVersion");
  check(cuDevicePrimaryCtxRetain_(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent_(ctx_), "cuCtxSetCurrent");
}

std::string Driver::errorText(CUresult r) const {
  const char* n = nullptr;
  const char* s = nullptr;
  if (!cuGetErrorName_ || cuGetErrorName_(r, &n) != drv::kSuccess || !n) n = "CUDA_ERROR_?";
  if (!cuGetErrorString_ || cuGetErrorString_(r, &s) != drv::kSuccess || !s) s = "no description";
  return std::string(n) + " (" + s + "; code " + std::to_string(r) + ")";
}

void Driver::check(CUresult r, const char* what) const {
  if (r == drv::kSuccess) return;
  throw UserError(where(), std::string(what) + " failed: " + errorText(r));
}

void Driver::current() {
  thread_local CUcontext made = nullptr;
  if (made == ctx_) return;
  check(cuCtxSetCurrent_(ctx_), "cuCtxSetCurrent");
  made = ctx_;
}

CUmodule Driver::loadModule(const std::string& cubin) {
  current();
  CUmodule m = nullptr;
  check(cuModuleLoadData_(&m, cubin.data()), "cuModuleLoadData");
  return m;
}

void Driver::unloadModule(CUmodule m) { check(cuModuleUnload_(m), "cuModuleUnload"); }

CUfunction Driver::function(CUmodule m, const std::string& name) {
  CUfunction f = nullptr;
  check(cuModuleGetFunction_(&f, m, name.c_str()), ("cuModuleGetFunction(" + name + ")").c_str());
  return f;
}

void Driver::setMaxDynamicSmem(CUfunction f, int bytes) {
  check(cuFuncSetAttribute_(f, drv::kFuncAttrMaxDynamicSmem, bytes), "cuFuncSetAttribute(max dynamic shared memory)");
}

CUdeviceptr Driver::alloc(size_t bytes) {
  current();
  CUdeviceptr p = 0;
  check(cuMemAlloc_(&p, bytes ? bytes : 1), ("cuMemAlloc(" + std::to_string(bytes) + " bytes)").c_str());
  return p;
}

void Driver::free(CUdeviceptr p) {
  current();
  if (p) check(cuMemFree_(p), "cuMemFree");
}

void Driver::copyToDevice(CUdeviceptr dst, const void* src, size_t bytes) {
  current();
  if (bytes) check(cuMemcpyHtoD_(dst, src, bytes), "cuMemcpyHtoD");
}

void Driver::copyToHost(void* dst, CUdeviceptr src, size_t bytes) {
  current();
  if (bytes) check(cuMemcpyDtoH_(dst, src, bytes), "cuMemcpyDtoH");
}

void Driver::fill(CUdeviceptr dst, uint8_t byte, size_t bytes) {
  current();
  if (bytes) check(cuMemsetD8_(dst, byte, bytes), "cuMemsetD8");
}

CUtensorMapHost Driver::encodeTensorMap(const TensorMapArgs& a, const std::string& param) {
  CUtensorMapHost m{};
  check(cuTensorMapEncodeTiled_(&m, a.dataType, a.rank, reinterpret_cast<void*>(static_cast<uintptr_t>(a.base)),
                                a.globalDim.data(), a.globalStrides.data(), a.boxDim.data(), a.elementStrides.data(),
                                a.interleave, a.swizzle, a.l2Promotion, a.oobFill),
        ("cuTensorMapEncodeTiled(" + param + ")").c_str());
  return m;
}

void Driver::launch(CUfunction f, const std::array<int64_t, 3>& grid, int threads, int smemBytes, std::vector<void*>& params,
                    CUstream stream) {
  current();
  for (int64_t g : grid)
    if (g <= 0 || g > 0x7fffffff) throw UserError(where(), "grid dimension " + std::to_string(g) + " is out of range");
  check(cuLaunchKernel_(f, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                        static_cast<unsigned>(threads), 1, 1, static_cast<unsigned>(smemBytes), stream, params.data(), nullptr),
        "cuLaunchKernel");
}

void Driver::synchronize() {
  current();
  check(cuCtxSynchronize_(), "the kernel (cuCtxSynchronize)");
}

CUevent Driver::createEvent() {
  CUevent e = nullptr;
  current();
  check(cuEventCreate_(&e, 0), "cuEventCreate");
  return e;
}

void Driver::destroyEvent(CUevent e) {
  if (e) check(cuEventDestroy_(e), "cuEventDestroy");
}

void Driver::record(CUevent e, CUstream stream) { current(); check(cuEventRecord_(e, stream), "cuEventRecord"); }

float Driver::elapsedMs(CUevent start, CUevent end) {
  check(cuEventSynchronize_(end), "cuEventSynchronize");
  float ms = 0;
  check(cuEventElapsedTime_(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

}  // namespace tawa::cuda
