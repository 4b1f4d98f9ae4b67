#include "backends/emu/Emulator.h"

#include "backends/cuda/BuildCache.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <iostream>
#include <regex>
#include <sstream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/LaunchArgs.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/ProfileBuffer.h"
#include "backends/emu/EmuAbi.h"
#include "profile/CostModel.h"

namespace tawa::emu {

using cuda::capture;
using cuda::cacheRoot;
using cuda::contentHash;
using cuda::tailOf;
using cuda::readFile;
using cuda::shellQuote;
using cuda::writeFile;

namespace fs = std::filesystem;

namespace {

Location where(const std::string& what = "<emu>") { return Location::at(std::make_shared<const std::string>(what), 0, 0); }



// A `#line N "file"` directive names the line right after it; the lines below count up from N. The
// emitter writes one directive per op, so the later lines of an op's code would name the source lines
// below the op's. For the emulator, whose diagnostics name the line of each primitive's caller
// (__builtin_LINE), every line of code is pinned to its op: the directive is repeated before it.
std::string pinLines(const std::string& source) {
  std::istringstream in(source);
  std::string out, line, directive;
  bool fresh = false;
  while (std::getline(in, line)) {
    size_t p = line.find_first_not_of(' ');
    if (p != std::string::npos && line.compare(p, 6, "#line ") == 0) {
      directive = line.substr(p);
      fresh = true;
    } else if (!directive.empty() && !fresh) {
      out += directive + "\n";
    } else {
      fresh = false;
    }
    out += line + "\n";
  }
  return out;
}

// The launcher appended to the emitted source: unpacks the parameters and runs the grid.
std::string launcher(const cuda::EmitResult& er) {
  std::ostringstream s;
  s << "\n#line 1 \"<tawa-emu-launcher>\"\n"
    << "static void tawa_emu_body(void* const* a) {\n  " << er.kernelName << "(";
  for (size_t i = 0; i < er.params.size(); ++i) {
    const auto& p = er.params[i];
    std::string ty = p.tensorMap >= 0 ? "CUtensorMap" : p.cType;
    if (p.profileBuffer || p.pointer) s << (i ? ",\n      " : "") << "*static_cast<" << ty << " const*>(a[" << i << "])";
    else s << (i ? ",\n      " : "") << "*static_cast<const " << ty << "*>(a[" << i << "])";
  }
  s << ");\n}\n"
    << "extern \"C\" __attribute__((visibility(\"default\"))) int tawa_emu_entry(TawaEmuLaunch* l, void* const* a) {\n"
    << "  return tawa::emu::runGrid(l, &tawa_emu_body, a);\n}\n";
  return s.str();
}

struct Headers {
  fs::path cudaDir, emuDir;
  std::string primitives, runtime, abi, numerics;
};

const Headers& headers() {
  static std::mutex mu;
  static Headers h;
  std::lock_guard<std::mutex> lock(mu);
  if (!h.primitives.empty()) return h;
  Headers x;
  x.cudaDir = cuda::primitivesDir();
  x.emuDir = x.cudaDir / ".." / "emu";
  bool ok1 = false, ok2 = false, ok3 = false, ok4 = false;
  x.primitives = readFile(x.cudaDir / "primitives.cuh", &ok1);
  x.runtime = readFile(x.emuDir / "EmuRuntime.h", &ok2);
  x.abi = readFile(x.emuDir / "EmuAbi.h", &ok3);
  x.numerics = readFile(x.emuDir / "EmuNumerics.h", &ok4);
  if (!ok1 || !ok2 || !ok3 || !ok4)
    throw UserError(where(x.cudaDir.string()), "cannot read primitives.cuh or the emulator's headers in ../emu/",
                    "set TAWA_CUDA_INCLUDE to the folder holding primitives.cuh (with the emu folder beside it)");
  h = x;
  return h;
}

std::string compilerVersion(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto it = seen.find(cxx);
  if (it != seen.end()) return it->second;
  int rc = 0;
  std::string v = capture(shellQuote(cxx) + " --version", &rc);
  if (rc != 0) throw UserError(where(cxx), "the host C++ compiler '" + cxx + "' does not run: " + tailOf(v, 400), "set CXX");
  return seen[cxx] = v;
}

}  // namespace

CompiledKernel compile(const cuda::EmitResult& er, const Options& opt) {
  const Headers& h = headers();
  std::string cxx = opt.cxx;
  if (cxx.empty()) {
    const char* e = std::getenv("CXX");
    cxx = e && *e ? e : "c++";
  }
  std::string flags = "-std=c++17 " + opt.optLevel +
                      " -fPIC -shared -fvisibility=hidden -fno-strict-aliasing -Wall -Wextra -Wno-unused-parameter -Wno-unused-variable -Wno-psabi";
  std::string source = pinLines(er.source);
  if (source.find("#include \"primitives.cuh\"") == std::string::npos) source = "#include \"primitives.cuh\"\n" + source;
  source += launcher(er);

  CompiledKernel ck;
  ck.key = contentHash(source + '\0' + flags + '\0' + compilerVersion(cxx) + '\0' + h.primitives + '\0' + h.runtime + '\0' + h.abi + '\0' + h.numerics);
  fs::path root = cacheRoot(opt.cacheDir) / "emu";
  fs::path dir = root / ck.key;
  ck.soPath = (dir / "kernel.so").string();

  static std::mutex mu;
  static std::map<std::string, void*> opened;
  auto open = [&]() {
    std::lock_guard<std::mutex> lock(mu);
    auto it = opened.find(ck.key);
    if (it != opened.end()) {
      ck.entry = it->second;
      return;
    }
    void* so = dlopen(ck.soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!so) throw UserError(where(ck.soPath), std::string("cannot open the emulated kernel: ") + dlerror());
    void* e = dlsym(so, "tawa_emu_entry");
    if (!e) throw UserError(where(ck.soPath), "the emulated kernel has no entry point tawa_emu_entry");
    opened[ck.key] = e;
    ck.entry = e;
  };

  if (opt.useCache && fs::exists(dir / "kernel.so")) {
    ck.cacheHit = true;
    open();
    return ck;
  }
  cuda::StagingDir staging(root, ck.key);
  const fs::path& tmp = staging.path();
  std::error_code ec;
  fs::create_directories(tmp / "cuda", ec);
  fs::create_directories(tmp / "emu", ec);
  if (ec) throw UserError(where(tmp.string()), "cannot create a build directory: " + ec.message());
  // The build reads the very headers that were hashed: copies travel with the entry.
  writeFile(tmp / "cuda" / "primitives.cuh", h.primitives);
  writeFile(tmp / "emu" / "EmuRuntime.h", h.runtime);
  writeFile(tmp / "emu" / "EmuAbi.h", h.abi);
  writeFile(tmp / "emu" / "EmuNumerics.h", h.numerics);
  writeFile(tmp / "kernel.cpp", source);
  auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  std::string log = capture(shellQuote(cxx) + " " + flags + " -I" + shellQuote((tmp / "cuda").string()) + " " + shellQuote((tmp / "kernel.cpp").string()) +
                                " -o " + shellQuote((tmp / "kernel.so").string()),
                            &rc);
  ck.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0)
    throw UserError(where((tmp / "kernel.cpp").string()),
                    "compiling the kernel as host C++ for the emulator failed (exit " + std::to_string(rc) + "):\n" + tailOf(log, 4000));
  writeFile(tmp / "compile.log", log);
  staging.publish(dir, "kernel.so", "the emulated kernel");
  open();
  return ck;
}

namespace {

// The launch's buffers, each copied for the launch into its own mapping between two PROT_NONE guards
// of kGuardBytes, its last byte against the upper guard. The emitted code dereferences global pointers
// directly (SIMT kernels, pointer epilogues); an access outside a buffer then faults in a guard, which
// the runtime reports, instead of writing into tawa's heap. The data is copied back on destruction.
class GuardedBuffers {
 public:
  static constexpr uint64_t kGuardBytes = uint64_t{256} << 20;

  explicit GuardedBuffers(std::vector<exec::Buffer>& buffers) : buffers_(buffers) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (auto& b : buffers_) {
      Region r;
      r.bytes = b.data.size();
      size_t inner = (r.bytes + page - 1) / page * page;
      if (inner == 0) inner = page;
      r.total = 2 * kGuardBytes + inner;
      void* m = mmap(nullptr, r.total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (m == MAP_FAILED) throw UserError(where("<emu>"), "cannot map guarded memory for buffer " + b.name);
      r.map = static_cast<uint8_t*>(m);
      regions_.push_back(r);  // unmapped by the destructor from here on
      if (mprotect(r.map + kGuardBytes, inner, PROT_READ | PROT_WRITE) != 0)
        throw UserError(where("<emu>"), "cannot map guarded memory for buffer " + b.name);
      regions_.back().data = r.map + kGuardBytes + (inner - r.bytes);
      if (r.bytes) std::memcpy(regions_.back().data, b.data.data(), r.bytes);
    }
    for (size_t i = 0; i < buffers_.size(); ++i)  // arrays of pointers hold these copies' addresses
      if (!buffers_[i].addressesOf.empty()) {
        auto bytes = exec::addressBytes(buffers_[i], buffers_.size(), [&](int b) { return reinterpret_cast<uintptr_t>(data(static_cast<size_t>(b))); });
        std::memcpy(regions_[i].data, bytes.data(), bytes.size());
      }
  }
  ~GuardedBuffers() {
    for (size_t i = 0; i < regions_.size(); ++i) {
      // An array of pointers keeps the executor's addresses (the kernel reads it; any run compares alike).
      if (regions_[i].data && regions_[i].bytes && buffers_[i].addressesOf.empty())
        std::memcpy(buffers_[i].data.data(), regions_[i].data, regions_[i].bytes);
      munmap(regions_[i].map, regions_[i].total);
    }
  }
  GuardedBuffers(const GuardedBuffers&) = delete;
  GuardedBuffers& operator=(const GuardedBuffers&) = delete;

  uint8_t* data(size_t i) const { return regions_.at(i).data; }

 private:
  struct Region {
    uint8_t* map = nullptr;
    uint8_t* data = nullptr;
    size_t bytes = 0, total = 0;
  };
  std::vector<exec::Buffer>& buffers_;
  std::vector<Region> regions_;
};

}  // namespace

LaunchStats launch(const cuda::EmitResult& emitted, const std::vector<exec::Arg>& args, std::vector<exec::Buffer>& buffers,
                   std::array<int64_t, 3> grid, const Options& opt) {
  LaunchStats st;
  GuardedBuffers guarded(buffers);
  const std::vector<int64_t> intArgs = cuda::integerArgs(args);
  // Tensor maps TMA cannot take with these arguments become tile maps (the kernel emitted again).
  const cuda::EmitResult er = cuda::withTileMaps(emitted, intArgs, [&](int a) -> uint64_t {
    if (a < 0 || static_cast<size_t>(a) >= args.size() || args[static_cast<size_t>(a)].kind != exec::Arg::Kind::Buffer) return 0;
    return reinterpret_cast<uintptr_t>(guarded.data(static_cast<size_t>(args[static_cast<size_t>(a)].buffer)));
  }, opt.notes, &grid);
  CompiledKernel ck = compile(er, opt);
  st.cacheHit = ck.cacheHit;
  st.compileSeconds = ck.compileSeconds;

  // Tensor maps: the driver's checks (shared with the GPU launcher), then the emulator's own encoding.
  struct alignas(64) MapBytes {
    unsigned char b[128];
  };  // a host CUtensorMap
  std::vector<MapBytes> maps(er.tensorMaps.size());
  for (size_t m = 0; m < er.tensorMaps.size(); ++m) {
    const auto& s = er.tensorMaps[m];
    if (!s.generic.empty()) continue;  // a tile map: its base, extents and strides are scalar parameters
    if (s.baseArg < 0 || static_cast<size_t>(s.baseArg) >= args.size() || args[static_cast<size_t>(s.baseArg)].kind != exec::Arg::Kind::Buffer)
      throw UserError(where(), "tensor map " + s.param + ": its base is not a buffer argument of the launch");
    const size_t bi = static_cast<size_t>(args[static_cast<size_t>(s.baseArg)].buffer);
    exec::Buffer& buf = buffers.at(bi);
    auto base = reinterpret_cast<uintptr_t>(guarded.data(bi));
    cuda::TensorMapArgs a = cuda::tensorMapArgs(s, intArgs, static_cast<cuda::CUdeviceptr>(base), grid);
    TawaEmuTensorMap t{};
    t.magic = TAWA_EMU_MAP_MAGIC;
    t.base = guarded.data(bi);
    t.bufferBytes = buf.data.size();
    t.rank = a.rank;
    t.elemBytes = static_cast<uint32_t>(ir::byteWidth(s.elem));
    t.swizzleBytes = static_cast<uint32_t>(s.swizzleBytes);
    uint64_t extent = a.globalDim[0] * t.elemBytes;  // bytes from the base to the last element's end
    bool unbounded = false;  // a dimension no mask bounds (block-access gives it INT32_MAX): only what is read counts
    for (uint32_t d = 0; d < a.rank; ++d) {
      t.dims[d] = a.globalDim[d];
      t.box[d] = a.boxDim[d];
      unbounded = unbounded || a.globalDim[d] == static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
      if (d > 0) {
        t.strideBytes[d - 1] = a.globalStrides[d - 1];
        extent += (t.dims[d] - 1) * t.strideBytes[d - 1];
      }
    }
    // A map of fixed extents must lie inside its buffer; an unbounded one may reach past it, as on
    // the GPU, where only the boxes read matter: every element a copy reads is checked against the
    // buffer as it is read (an out-of-bounds read is an error there).
    if (!unbounded && extent > t.bufferBytes)
      throw UserError(where(), "tensor map " + s.param + " covers " + std::to_string(extent) + " bytes but its buffer " + buf.name +
                                   " has " + std::to_string(t.bufferBytes));
    static_assert(sizeof(TawaEmuTensorMap) <= sizeof(MapBytes), "the emulator's tensor map fits in a CUtensorMap");
    std::memset(&maps[m], 0, sizeof(MapBytes));
    std::memcpy(&maps[m], &t, sizeof t);
  }
  std::vector<uint64_t> scalars(er.params.size(), 0);
  std::vector<void*> params;
  const std::array<int64_t, 3> run = cuda::launchGrid(er, grid);  // persistent kernels: fewer blocks
  uint8_t* profileBase = nullptr;
  for (size_t i = 0; i < er.params.size(); ++i) {
    const cuda::KernelParam& p = er.params[i];
    if (p.tensorMap >= 0) {
      params.push_back(&maps[static_cast<size_t>(p.tensorMap)]);
      continue;
    }
    if (p.profileBuffer) {  // the profile's global buffer, zeroed, one record per block and warp group
      int64_t bytes = er.profile.bytesPerBlock();
      bool over = false;
      for (int64_t d : run) over = over || __builtin_mul_overflow(bytes, d, &bytes);
      if (over || bytes > (int64_t{1} << 32))
        throw UserError(where("<grid>"), "the profile's event buffer for " + std::to_string(run[0]) + " x " + std::to_string(run[1]) + " x " +
                                             std::to_string(run[2]) + " blocks would take " +
                                             (over ? std::string("more than 2^63") : std::to_string(bytes)) + " bytes (at most 4 GiB)",
                        "profile a smaller grid, or lower --profile-capacity");
      st.profile.assign(static_cast<size_t>(bytes), 0);
      profileBase = st.profile.data();
      std::memcpy(&scalars[i], &profileBase, sizeof profileBase);
      params.push_back(&scalars[i]);
      continue;
    }
    // A SIMT kernel's buffer: its host address is the emulated device address.
    cuda::packScalarParam(p, args, grid, &scalars[i], "the emulator", [&](int b) {
      return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(guarded.data(static_cast<size_t>(b))));
    });
    params.push_back(&scalars[i]);
  }

  // Names of the mbarrier arrays, from the emitted prologue, for diagnostics.
  static const std::regex barDecl(R"(uint64_t\* (\w+) = reinterpret_cast<uint64_t\*>\(smem \+ (\d+)\);\s*//\s*(\d+) mbarriers)");
  std::vector<std::string> names;
  std::vector<int64_t> offsets;
  std::vector<int32_t> counts;
  for (auto it = std::sregex_iterator(er.source.begin(), er.source.end(), barDecl); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
    offsets.push_back(std::stoll((*it)[2]));
    counts.push_back(std::stoi((*it)[3]));
  }
  std::vector<const char*> namePtrs;
  for (const auto& n : names) namePtrs.push_back(n.c_str());

  for (int d = 0; d < 3; ++d)
    if (grid[static_cast<size_t>(d)] < 1 || grid[static_cast<size_t>(d)] > (1 << 30))
      throw UserError(where("<grid>"), "grid dimension " + std::to_string(d) + " is " + std::to_string(grid[static_cast<size_t>(d)]));
  std::vector<char> error(16384, 0), errorFile(1024, 0);
  TawaEmuLaunch L{};
  L.abiVersion = TAWA_EMU_ABI_VERSION;
  for (int d = 0; d < 3; ++d) L.grid[d] = static_cast<int32_t>(run[static_cast<size_t>(d)]);
  L.threads = er.threads;
  L.smemBytes = er.smemBytes;
  L.seed = opt.seed;
  {
    const profile::CostModel& m = opt.model;
    L.model = TawaEmuCostModel{m.clockGHz, m.sms, m.tmaLatency, m.tmaIssue, m.bytesPerClkPerSM(), m.flopsPerClkPerSM, m.mmaIssue,
                               m.mmaWait, m.arrive, m.waitWake, m.aluPerClk, m.mufuPerClk, m.cvtPerClk, m.smemBytesPerClk};
  }
  std::vector<const char*> bufferNames;
  std::vector<uint64_t> bufferBases, bufferBytes;
  for (size_t b = 0; b < buffers.size(); ++b) {
    bufferNames.push_back(buffers[b].name.c_str());
    bufferBases.push_back(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(guarded.data(b))));
    bufferBytes.push_back(buffers[b].data.size());
  }
  L.nBuffers = static_cast<int32_t>(buffers.size());
  L.bufferNames = bufferNames.data();
  L.bufferBases = bufferBases.data();
  L.bufferBytes = bufferBytes.data();
  L.guardBytes = GuardedBuffers::kGuardBytes;
  L.nBarArrays = static_cast<int32_t>(names.size());
  L.barNames = namePtrs.data();
  L.barOffsets = offsets.data();
  L.barCounts = counts.data();
  L.error = error.data();
  L.errorCap = error.size();
  L.errorFile = errorFile.data();
  L.errorFileCap = errorFile.size();

  auto t0 = std::chrono::steady_clock::now();
  int rc = reinterpret_cast<TawaEmuEntry>(ck.entry)(&L, params.data());
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.blocks = run[0] * run[1] * run[2];
  st.switches = L.switches;
  st.mmaOps = L.mmaOps;
  st.mmaFlops = L.mmaFlops;
  st.tmaOps = L.tmaOps;
  if (rc != 0) {
    std::string file = errorFile.data();
    Location loc = file.empty() ? where("<emu:" + er.kernelName + ">")
                                : Location::at(std::make_shared<const std::string>(file), L.errorLine, 1);
    throw UserError(loc, "the CPU emulator stopped kernel " + er.kernelName + ": " + std::string(error.data()),
                    "the emulator runs the emitted CUDA C++ with the documented semantics of each instruction");
  }
  return st;
}

void runSchedules(const cuda::EmitResult& er, const std::vector<exec::Arg>& args, const std::vector<exec::Buffer>& initial,
                  std::array<int64_t, 3> grid, int seeds, const Location& at, bool nameSchedule,
                  const std::function<void(const std::vector<exec::Buffer>&)>& checkFirst, const ScheduleDifference& differs) {
  std::vector<exec::Buffer> first;
  for (int s = 1; s <= seeds; ++s) {
    std::vector<exec::Buffer> got = initial;
    Options eo;
    eo.seed = static_cast<uint64_t>(s);
    try {
      launch(er, args, got, grid, eo);  // a deadlock, race or bad access throws, located
    } catch (const UserError& e) {
      if (!nameSchedule) throw;
      throw UserError(e.loc, "schedule " + std::to_string(s) + ": " + e.what(), e.hint);
    }
    if (s == 1) {
      checkFirst(got);
      first = std::move(got);
      continue;
    }
    // Every schedule must give the very bits of the first (or what `differs` allows): a difference
    // is a race the emulator's detectors did not name (or a schedule-dependent reduction order).
    if (auto d = differs ? differs(got, first) : firstDifference(got, first))
      throw UserError(at, "schedule " + std::to_string(s) + " gives different results from schedule 1: " + *d,
                      "the kernel's result depends on the order its threads run in: a race");
  }
}

std::optional<std::string> firstDifference(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want) {
  for (size_t b = 0; b < got.size() && b < want.size(); ++b) {
    if (got[b].data == want[b].data) continue;
    size_t at = 0;
    while (at < got[b].data.size() && at < want[b].data.size() && got[b].data[at] == want[b].data[at]) ++at;
    const int64_t elem = static_cast<int64_t>(at / static_cast<size_t>(ir::byteWidth(got[b].dtype)));
    std::ostringstream msg;
    msg << got[b].name << "[" << elem << "] is ";
    if (elem < got[b].numel()) msg << got[b].get(elem);
    else msg << "missing";
    msg << ", not ";
    if (elem < want[b].numel()) msg << want[b].get(elem);
    else msg << "missing";
    return msg.str();
  }
  if (got.size() != want.size()) return "a different number of buffers: " + std::to_string(got.size()) + ", not " + std::to_string(want.size());
  return std::nullopt;
}

}  // namespace tawa::emu
