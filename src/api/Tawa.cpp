// The library API (include/tawa/tawa.h) over the front end, the passes and the backends. It owns the
// order in which a kernel becomes each artifact; the backends only emit, compile and launch.
//   Requires: nothing beyond the header's contract.
//   Guarantees: every UserError raised underneath leaves as a tawa::Error with its location; a run
//   that fails leaves the caller's arrays as they were (the backends work on copies, written back
//   only after the launch returned).
#include "tawa/tawa.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "backends/cuda/GpuLaunch.h"
#include "backends/cuda/ProfileBuffer.h"
#include "backends/cuda/LaunchArgs.h"
#include "driver/Target.h"
#include "backends/emu/Emulator.h"
#include "backends/exec/Executor.h"
#include "driver/Check.h"
#include "driver/Compare.h"
#include "driver/Launch.h"
#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "profile/CostModel.h"
#include "profile/ProfileCommand.h"
#include "tune/Record.h"
#include "tune/Workers.h"
#include "transforms/LowerAref.h"
#include "transforms/PassManager.h"
#include "transforms/WarpSpecialize.h"

#ifndef TAWA_VERSION
#define TAWA_VERSION "unknown"
#endif

namespace tawa {

namespace {

Diagnostic diagnosticOf(const UserError& e) {
  Diagnostic d;
  if (e.loc.known()) d.file = *e.loc.file, d.line = e.loc.line, d.col = e.loc.col;
  d.message = e.what();
  d.hint = e.hint;
  return d;
}

// Runs f, turning the core's UserError into the API's Error.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const UserError& e) {
    throw Error(diagnosticOf(e), e.format());
  }
}

bool isEmitterFault(const std::string& inject) {
  const auto& faults = cuda::emitterFaults();
  return !inject.empty() && std::find(faults.begin(), faults.end(), inject) != faults.end();
}

transforms::PassOptions passOptions(const Options& o, std::ostream* explain) {
  transforms::PassOptions p;
  p.depth = o.depth;
  p.mmaDepth = o.mmaDepth;
  p.consumers = o.consumers;
  p.persistent = o.persistent;
  p.groupM = o.groupM;
  p.producerRegs = o.producerRegs;
  p.consumerRegs = o.consumerRegs;
  p.keepProgramOrder = o.keepProgramOrder;
  p.sharedRing = o.sharedRing;
  p.fault = isEmitterFault(o.inject) ? "" : o.inject;  // the emitter's own faults break the CUDA kernel, not the lowering
  p.explain = o.explain ? o.explain : explain;
  return p;
}

Location apiLoc(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

// A fresh copy of a printed module (locations kept), verified; its kernel the one named `name`.
driver::LoadedKernel reparse(const std::string& text, const std::string& name) {
  driver::LoadedKernel lk;
  lk.module = ir::parseModule(text, "<tawa ir>");
  ir::verify(*lk.module);
  lk.kernel = name.empty() ? (lk.module->funcs.empty() ? nullptr : lk.module->funcs.front().get()) : lk.module->lookup(name);
  if (!lk.kernel) throw UserError(apiLoc("<tawa ir>"), "the IR defines no function" + (name.empty() ? "" : " named '" + name + "'"));
  return lk;
}

}  // namespace

Error::Error(Diagnostic d, std::string text)
    : std::runtime_error(!text.empty() ? text
                                       : (d.file.empty() ? std::string() : d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.col) + ": ") +
                                             "error: " + d.message + (d.hint.empty() ? "" : "\n  hint: " + d.hint)),
      diag_(std::move(d)) {}

struct Kernel::Impl {
  driver::Spec spec;
  Options opt;
  std::string name;
  std::string tileText;  // the canonicalized tile IR, printed with locations
  std::string path;      // the source (empty for a kernel made from IR text)
  driver::LoadedKernel tile;
  bool simt = false;
  std::string explain;   // the front end's decisions; the passes' are appended when they run

  mutable std::mutex mu;  // the lazily made stages below
  mutable std::optional<std::string> wsText, nvText;
  mutable std::optional<cuda::EmitResult> emitted, emittedProfiled;  // the latter: instrumented for profile() on the GPU
  mutable bool emittedSimt = false;  // the CUDA kernel is a SIMT one (no tile.dot, or the SIMT fallback of one)
  mutable std::optional<cuda::CompiledModule> compiled;
  mutable std::string passExplain;
  // Loaded on GPU 0, by the tensor maps the launch's arguments make tile maps ("" for none).
  mutable std::map<std::string, std::unique_ptr<cuda::GpuKernel>> gpu;

  // After `tile` was loaded: canonicalizes it and records what the later stages start from.
  void loaded() {
    transforms::PassManager pm;
    pm.add("canonicalize");
    pm.run(*tile.module);
    name = tile.kernel->name;
    simt = driver::simtOnly(*tile.kernel);
    tileText = ir::print(*tile.module);
  }

  // A fresh copy of the kernel as loaded (canonicalized) for a later stage: loaded from the source
  // again, so that the front end's names are kept exactly and the emitted code is the CLI's; parsed
  // from the IR text instead when there is no source or it no longer gives the same IR (the file
  // was edited since): every stage comes from the kernel that load() saw.
  driver::LoadedKernel fresh() const {
    if (path.empty()) return reparse(tileText, name);
    std::ostream* const before = frontend::explainStream();
    frontend::setExplain(nullptr);  // said once, at load
    driver::LoadedKernel lk;
    try {
      lk = driver::loadKernel(path, name, spec);
    } catch (const UserError&) {
      frontend::setExplain(before);
      return reparse(tileText, name);
    }
    frontend::setExplain(before);
    transforms::PassManager pm;
    pm.add("canonicalize");
    pm.run(*lk.module);
    if (ir::print(*lk.module) != tileText) return reparse(tileText, name);
    return lk;
  }

  std::string stageText(const std::string& stage) const {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = stage == "ws" ? wsText : nvText;
    if (!slot) {
      std::ostringstream why;
      auto lk = driver::specialize(fresh(), passOptions(opt, &why), stage);
      slot = ir::print(*lk.module);
      if (passExplain.empty()) passExplain = why.str();
    }
    return *slot;
  }

  // The CUDA kernel as loaded; `profiled`: with --profile instrumentation (the same when loaded so).
  const cuda::EmitResult& emit(bool profiled = false) const {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = profiled && !opt.profile ? emittedProfiled : emitted;
    if (!slot) {
      std::ostringstream why;
      auto lk = fresh();
      cuda::EmitOptions eo;
      eo.pingPong = opt.pingPong;
      eo.profile = opt.profile || profiled;
      if (isEmitterFault(opt.inject)) eo.fault = opt.inject;
      eo.profileCapacity = opt.profileCapacity;
      bool simtKernel = false;
      cuda::EmitResult er = driver::emitForTarget(lk, passOptions(opt, &why), eo, &simtKernel);
      if (!eo.fault.empty()) {  // an emitter fault must change the kernel: compared with it emitted without
        auto plain = fresh();
        cuda::EmitOptions po = eo;
        po.fault.clear();
        if (driver::emitForTarget(plain, passOptions(opt, nullptr), po).source == er.source)
          throw UserError(Location::at(std::make_shared<const std::string>("--inject"), 0, 0),
                          "fault '" + eo.fault + "' changes nothing in the CUDA kernel emitted for @" + name +
                              ": a check with it would prove nothing",
                          "release-before-wait moves a release the emitter defers until an MMA completes (attention's PV MMA); a "
                          "GEMM's releases are placed by the pipeline pass: inject early-release there");
      }
      slot = driver::withSpecTileMaps(std::move(er), *lk.kernel, spec, &why);
      emittedSimt = simtKernel;
      if (passExplain.empty()) passExplain = why.str();
    }
    return *slot;
  }

  const cuda::CompiledModule& compile() const {
    const cuda::EmitResult& er = emit();
    std::lock_guard<std::mutex> lock(mu);
    if (!compiled) compiled = cuda::compile(er.source);
    return *compiled;
  }

  // Runs the kernel as written on the executor over `buffers`, in place.
  void runAsWritten(const std::vector<exec::Arg>& args, std::vector<exec::Buffer>& buffers, const std::array<int64_t, 3>& grid,
                    int threads = 0, uint64_t seed = 0) const {
    exec::LaunchOptions lo;
    lo.grid = grid;
    lo.threads = threads;
    lo.seed = seed;
    exec::launch(*tile.module, *tile.kernel, args, buffers, lo);
  }

  // The kernel loaded on GPU 0 for a launch with `args`, whose IR argument k is at device address
  // baseOf(k): the tensor maps TMA cannot take at those addresses and strides are tile maps.
  cuda::GpuKernel& gpuKernel(const std::vector<exec::Arg>& args, const std::function<uint64_t(int)>& baseOf, const std::array<int64_t, 3>& grid,
                             bool profiled = false) const {
    const cuda::EmitResult& er = emit(profiled);
    const std::vector<int64_t> ints = cuda::integerArgs(args);
    std::string tileMaps;  // the maps TMA cannot take at these addresses and this grid
    for (const auto& s : er.tensorMaps)
      if (s.generic.empty() && !cuda::tmaObstacle(s, ints, static_cast<cuda::CUdeviceptr>(baseOf(s.baseArg)), &grid).empty())
        tileMaps += s.param + " ";
    const std::string key = (profiled ? "profiled: " : "") + tileMaps;
    std::lock_guard<std::mutex> lock(mu);
    auto it = gpu.find(key);
    if (it == gpu.end()) {
      // GpuKernel checks the device (sm_90) and the shared memory before compiling.
      it = gpu.emplace(key, std::make_unique<cuda::GpuKernel>(cuda::Driver::get(), tileMaps.empty() ? er : cuda::withTileMaps(er, ints, baseOf, opt.explain, &grid),
                                                               tile.kernel->loc))
               .first;
    }
    return *it->second;
  }
};

namespace {

// An injected fault must be one the lowering or the emitter knows: an unknown one would make the
// passes fail, and the CUDA backend fall back to a SIMT kernel that then checks clean.
void checkInject(const std::string& inject) {
  if (inject.empty() || isEmitterFault(inject)) return;
  const auto& lowering = transforms::lowerArefFaults();
  if (std::find(lowering.begin(), lowering.end(), inject) != lowering.end()) return;
  std::string known;
  for (const auto& f : lowering) known += (known.empty() ? "" : ", ") + f;
  for (const auto& f : cuda::emitterFaults()) known += ", " + f + " (the emitted CUDA kernel)";
  throw UserError(Location::at(std::make_shared<const std::string>("--inject"), 0, 0), "unknown fault '" + inject + "'", "faults: " + known);
}

}  // namespace

Kernel Kernel::load(const std::string& path, const std::string& name, const std::string& spec, const Options& opt) {
  return guarded([&] {
    checkInject(opt.inject);
    auto impl = std::make_shared<Impl>();
    impl->spec = driver::parseSignature(spec);
    impl->opt = opt;
    std::ostringstream why;
    std::ostream* const before = frontend::explainStream();
    frontend::setExplain(opt.explain ? opt.explain : &why);
    try {
      impl->tile = driver::loadKernel(path, name, impl->spec);
    } catch (...) {
      frontend::setExplain(before);
      throw;
    }
    frontend::setExplain(before);
    impl->explain = why.str();
    impl->path = path;
    impl->loaded();
    return Kernel(impl);
  });
}

Kernel Kernel::fromIR(const std::string& irText, const std::string& spec, const Options& opt) {
  return guarded([&] {
    checkInject(opt.inject);
    auto impl = std::make_shared<Impl>();
    impl->spec = driver::parseSignature(spec);
    impl->opt = opt;
    impl->tile = reparse(irText, "");
    impl->loaded();
    return Kernel(impl);
  });
}

const std::string& Kernel::name() const { return impl_->name; }
bool Kernel::simt() const { return impl_->simt; }

std::vector<Param> Kernel::params() const {
  std::vector<Param> out;
  const ir::Func& f = *impl_->tile.kernel;
  for (size_t k = 0; k < f.numArgs(); ++k) {
    const ir::Type& t = f.arg(k)->type();
    out.push_back({f.arg(k)->nameHint, t.isPtr(), std::string(ir::scalarName(t.scalar))});
  }
  return out;
}

Pipeline Kernel::pipeline(bool emitted) const {
  return guarded([&] {
    Pipeline p;
    if (emitted) {
      const cuda::EmitResult& er = impl_->emit();
      p.threads = er.threads, p.smemBytes = er.smemBytes, p.persistent = er.persistentPrograms > 0, p.pingPong = er.pingPong;
    }
    p.simt = impl_->simt || (emitted && impl_->emittedSimt);  // a tl.dot kernel the passes cannot take falls back to SIMT code
    if (p.simt) return p;
    const auto nv = reparse(impl_->stageText("nv"), impl_->name);
    p.depth = transforms::ringDepth(*nv.kernel);
    p.consumers = transforms::consumerRegions(*nv.kernel);
    ir::walk(nv.kernel->body, [&](const ir::Op* op) {
      if (op->hasAttr("mma_depth")) p.mmaDepth = static_cast<int>(op->intAttr("mma_depth"));
      if (op->hasAttr("pv_overlap")) p.pvOverlap = true;
    });
    return p;
  });
}

std::string Kernel::ir(const std::string& stage) const {
  return guarded([&] {
    if (stage == "tile") return impl_->tileText;
    if (stage == "ws" || stage == "nv") return impl_->stageText(stage);
    throw UserError(apiLoc("stage"), "unknown stage '" + stage + "'",
                    "stages: tile (as written), ws (warp-specialized), nv (arefs lowered to mbarriers)");
  });
}

std::string Kernel::cuda() const {
  return guarded([&] { return impl_->emit().source; });
}
std::string Kernel::ptx() const {
  return guarded([&] { return impl_->compile().ptx; });
}
std::string Kernel::cubin() const {
  return guarded([&] {
    std::ifstream f(impl_->compile().cubinPath, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  });
}
std::string Kernel::resources() const {
  return guarded([&] {
    const auto& er = impl_->emit();
    std::string out;
    for (const auto& u : impl_->compile().usage) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%s (sm_90a): %d registers, %lld B stack, %lld B spill stores, %lld B spill loads, %lld B static + %lld B "
                    "dynamic shared memory, %d threads\n",
                    u.kernel.c_str(), u.registers, static_cast<long long>(u.stack), static_cast<long long>(u.spillStores),
                    static_cast<long long>(u.spillLoads), static_cast<long long>(u.staticSmem), static_cast<long long>(er.smemBytes),
                    er.threads);
      out += line;
    }
    return out;
  });
}

std::string Kernel::compileReport() const {
  return guarded([&] {
    const auto& cm = impl_->compile();
    auto secs = [](double s) { return std::to_string(s).substr(0, 5); };
    return cm.cacheHit ? "compiled: cached in " + cm.dir + "\n"
                       : "compiled in " + secs(cm.nvccSeconds + cm.ptxasSeconds) + " s (" + cm.frontend + " " + secs(cm.nvccSeconds) +
                             " s, ptxas " + secs(cm.ptxasSeconds) + " s) into " + cm.dir + "\n";
  });
}

std::string Kernel::explanation() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string s = impl_->explain + impl_->passExplain;
  if (impl_->simt && impl_->passExplain.empty())
    s += "@" + impl_->name + ": no tile.dot and no tensor descriptor: the CUDA backend emits it as a SIMT kernel\n";
  return s;
}

namespace {

// The executor's view of the caller's arguments: a buffer holding a copy of each array (written back
// by the caller when the launch succeeded), the scalars converted to the parameters' types.
struct Bound {
  std::vector<exec::Buffer> buffers;
  std::vector<exec::Arg> args;
  std::vector<const Array*> arrays;  // per buffer, the caller's array it copies
};

// Writes each buffer back into the caller's array it copies (after a launch that succeeded); an
// array of pointers keeps the caller's addresses.
void writeBack(const Bound& b, const std::vector<exec::Buffer>& buffers) {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].addressesOf.empty()) std::memcpy(b.arrays[i]->data, buffers[i].data.data(), buffers[i].data.size());
}

// The caller's array `a` as the executor's buffer `name` (a copy), checked against element type `want`.
exec::Buffer copyIn(const Array& a, ir::Scalar want, const std::string& name, const std::string& who, const Location& at) {
  auto dt = driver::parseDtypeName(a.dtype);
  if (!dt) throw UserError(at, who + ": unknown dtype '" + a.dtype + "'");
  if (*dt != want)
    throw UserError(at, who + " is " + a.dtype + " but the kernel was specialized for " + std::string(ir::scalarName(want)));
  if (a.elements < 1 || !a.data) throw UserError(at, who + " is empty or null");
  int64_t product = 1;
  for (int64_t d : a.shape) product *= d;
  if (!a.shape.empty() && product != a.elements)
    throw UserError(at, who + " has shape of " + std::to_string(product) + " elements but " + std::to_string(a.elements) + " elements");
  exec::Buffer buf(name, want, a.shape.empty() ? std::vector<int64_t>{a.elements} : a.shape);
  std::memcpy(buf.data.data(), a.data, buf.data.size());
  return buf;
}

// The launch's argument count and grid, checked.
void checkLaunch(const ir::Func& f, const std::vector<Arg>& args, const std::array<int64_t, 3>& grid) {
  if (args.size() != f.numArgs())
    throw UserError(f.loc, "'@" + f.name + "' takes " + std::to_string(f.numArgs()) + " argument(s), got " + std::to_string(args.size()));
  for (int d = 0; d < 3; ++d)
    if (grid[d] < 1) throw UserError(apiLoc("grid"), "grid dimension " + std::to_string(d) + " is " + std::to_string(grid[d]) + ", not positive");
}

std::string argName(const ir::Func& f, size_t k) { return "argument " + std::to_string(k) + " ('" + f.arg(k)->nameHint + "')"; }

// Scalar argument k, `a`, as the executor takes a parameter of type `t` (its name made only for an error).
exec::Arg scalarArg(const ir::Type& t, const Arg& a, const ir::Func& f, size_t k, const Location& at) {
  if (std::holds_alternative<Array>(a)) throw UserError(at, argName(f, k) + " is a scalar (" + t.str() + "), not an array");
  if (t.elemIsFloat()) {
    if (auto* d = std::get_if<double>(&a)) return exec::Arg::real(*d);
    return exec::Arg::real(static_cast<double>(std::get<int64_t>(a)));
  }
  auto* i = std::get_if<int64_t>(&a);
  if (!i) throw UserError(at, argName(f, k) + " is " + t.str() + " and needs an integer");
  return exec::Arg::integer(*i);
}

Bound bindArgs(const ir::Func& f, const std::vector<Arg>& args, const std::array<int64_t, 3>& grid) {
  const Location at = f.loc;
  checkLaunch(f, args, grid);
  Bound b;
  for (size_t k = 0; k < args.size(); ++k) {
    const ir::Value* p = f.arg(k);
    const ir::Type& t = p->type();
    const std::string who = argName(f, k);
    if (t.isPtr()) {
      const Array* a = std::get_if<Array>(&args[k]);
      if (!a) throw UserError(at, who + " is a pointer to " + std::string(ir::scalarName(t.scalar)) + ": pass an array");
      if (!a->pointees.empty() && static_cast<int64_t>(a->pointees.size()) != a->elements)
        throw UserError(at, who + " holds " + std::to_string(a->elements) + " addresses but names " + std::to_string(a->pointees.size()) +
                                " arrays they point to");
      if (!a->pointees.empty() && !ir::holdsAddress(t.scalar))
        throw UserError(at, who + " names arrays it points to, so it must hold 64-bit integers, not " + std::string(ir::scalarName(t.scalar)));
      b.args.push_back(exec::Arg::buf(static_cast<int>(b.buffers.size())));
      b.buffers.push_back(copyIn(*a, t.scalar, p->nameHint, who, at));
      b.arrays.push_back(a);
    } else if (t.isScalar()) {
      b.args.push_back(scalarArg(t, args[k], f, k, at));
    } else {
      throw UserError(at, who + " has type " + t.str() + ", which a launch cannot pass");
    }
  }
  // The arrays that arrays of pointers point to: buffers after the arguments' (one per caller array:
  // an array also passed directly, or named twice, is one buffer).
  const size_t direct = b.buffers.size();
  for (size_t i = 0; i < direct; ++i) {
    const Array& a = *b.arrays[i];
    for (size_t j = 0; j < a.pointees.size(); ++j) {
      const Array& q = a.pointees[j];
      auto same = std::find_if(b.arrays.begin(), b.arrays.end(), [&](const Array* x) { return x->data == q.data; });
      if (same != b.arrays.end()) {
        b.buffers[i].addressesOf.push_back(static_cast<int>(same - b.arrays.begin()));
        continue;
      }
      auto dt = driver::parseDtypeName(q.dtype);
      const std::string name = q.name.empty() ? b.buffers[i].name + "[" + std::to_string(j) + "]" : q.name;
      if (!dt) throw UserError(at, "array " + name + ": unknown dtype '" + q.dtype + "'");
      if (!q.pointees.empty()) throw UserError(at, "array " + name + " is itself an array of pointers: one level is supported");
      b.buffers[i].addressesOf.push_back(static_cast<int>(b.buffers.size()));
      b.buffers.push_back(copyIn(q, *dt, name, "array " + name, at));
      b.arrays.push_back(&q);
    }
  }
  // The arrays of pointers hold the executor's addresses, as driver::bind leaves them: every backend
  // starts from (and a check compares) the same bytes; the caller's own addresses are never written.
  exec::writeVirtualAddresses(b.buffers);
  return b;
}

// A GPU launch's arguments: buffer k is the caller's device array at addresses[k], never copied.
struct DeviceBound {
  std::vector<exec::Arg> args;
  std::vector<uint64_t> addresses;
  // The device address of buffer b; of IR argument k's buffer (0 for a scalar).
  std::function<uint64_t(int)> addressOf() const {
    return [this](int b) { return addresses.at(static_cast<size_t>(b)); };
  }
  std::function<uint64_t(int)> baseOf() const {
    return [this](int k) -> uint64_t {
      const exec::Arg& a = args.at(static_cast<size_t>(k));
      return a.kind == exec::Arg::Kind::Buffer ? addresses.at(static_cast<size_t>(a.buffer)) : 0;
    };
  }
};

DeviceBound bindDevice(const ir::Func& f, const std::vector<Arg>& args, const std::array<int64_t, 3>& grid) {
  const Location at = f.loc;
  checkLaunch(f, args, grid);
  DeviceBound b;
  for (size_t k = 0; k < args.size(); ++k) {
    const ir::Type& t = f.arg(k)->type();
    const auto who = [&] { return argName(f, k); };  // for errors only: a launch makes no strings
    if (t.isPtr()) {
      const Array* a = std::get_if<Array>(&args[k]);
      if (!a) throw UserError(at, who() + " is a pointer to " + std::string(ir::scalarName(t.scalar)) + ": pass an array");
      auto dt = driver::parseDtypeName(a->dtype);
      if (!dt) throw UserError(at, who() + ": unknown dtype '" + a->dtype + "'");
      if (*dt != t.scalar)
        throw UserError(at, who() + " is " + a->dtype + " but the kernel was specialized for " + std::string(ir::scalarName(t.scalar)));
      if (a->elements < 1 || !a->data) throw UserError(at, who() + " is empty or null");
      if (!a->pointees.empty() && static_cast<int64_t>(a->pointees.size()) != a->elements)
        throw UserError(at, who() + " holds " + std::to_string(a->elements) + " addresses but names " + std::to_string(a->pointees.size()) +
                                " arrays they point to");
      if (!a->pointees.empty() && !ir::holdsAddress(t.scalar))
        throw UserError(at, who() + " names arrays it points to, so it must hold 64-bit integers, not " + std::string(ir::scalarName(t.scalar)));
      b.args.push_back(exec::Arg::buf(static_cast<int>(b.addresses.size())));
      b.addresses.push_back(reinterpret_cast<uint64_t>(a->data));
    } else if (t.isScalar()) {
      b.args.push_back(scalarArg(t, args[k], f, k, at));
    } else {
      throw UserError(at, who() + " has type " + t.str() + ", which a launch cannot pass");
    }
  }
  return b;
}

}  // namespace

Inputs Kernel::inputs(const std::string& grid, uint64_t seed, const std::vector<std::string>& loads) const {
  return guarded([&] {
    const driver::Spec& spec = impl_->spec;
    for (const auto& e : spec.entries) {
      if (e.kind == driver::SpecEntry::Kind::Buffer && e.dims.empty())
        throw UserError(e.loc, "buffer '" + e.name + "' has no shape; making inputs needs one",
                        "give its dims in brackets, e.g. " + e.name + ":*" + std::string(ir::scalarName(e.dtype)) + "[N]");
      if (e.kind == driver::SpecEntry::Kind::Scalar && !e.hasValue)
        throw UserError(e.loc, "scalar '" + e.name + "' has no value; making inputs needs one",
                        "give one, e.g. " + e.name + ":" + std::string(ir::scalarName(e.dtype)) + "=512");
    }
    auto bound = driver::bind(*impl_->tile.kernel, spec, grid, seed, driver::loadedNames(loads));
    driver::loadAll(bound, loads);
    Inputs in;
    in.grid = bound.grid;
    in.buffers.reserve(bound.buffers.size());
    for (auto& b : bound.buffers)
      in.buffers.push_back({b.name, std::string(ir::scalarName(b.dtype)), b.shape, std::move(b.data), b.addressesOf});
    const auto array = [&](size_t i) {
      HostBuffer& h = in.buffers[i];
      Array a{h.data.data(), h.dtype, static_cast<int64_t>(h.data.size() / static_cast<size_t>(ir::byteWidth(bound.buffers[i].dtype))), h.shape};
      a.name = h.name;
      return a;
    };
    for (const auto& a : bound.args) {
      if (a.kind == exec::Arg::Kind::Buffer) {
        Array arr = array(static_cast<size_t>(a.buffer));
        for (int q : in.buffers[static_cast<size_t>(a.buffer)].addressesOf) arr.pointees.push_back(array(static_cast<size_t>(q)));
        in.args.push_back(std::move(arr));
      } else if (a.kind == exec::Arg::Kind::Int) {
        in.args.push_back(a.i);
      } else {
        in.args.push_back(a.f);
      }
    }
    return in;
  });
}

namespace {

// CUDA events destroyed when they go out of scope.
struct DeviceEvents {
  cuda::Driver& d;
  std::vector<cuda::CUevent> ev;
  explicit DeviceEvents(cuda::Driver& drv) : d(drv) {}
  ~DeviceEvents() {
    for (cuda::CUevent e : ev) try {
        d.destroyEvent(e);
      } catch (...) {
      }
  }
  DeviceEvents(const DeviceEvents&) = delete;
  DeviceEvents& operator=(const DeviceEvents&) = delete;
};

int64_t arrayBytes(const Array& a, const Location& at) {
  auto dt = driver::parseDtypeName(a.dtype);
  if (!dt) throw UserError(at, "unknown dtype '" + a.dtype + "'");
  return a.elements * ir::byteWidth(*dt);
}

// Host copies of a GPU launch's device arrays (and of the pointees of its arrays of pointers), as
// arguments the host backends take: what a checked GPU launch compares. One copy per device address.
struct HostMirror {
  std::map<uint64_t, std::vector<uint8_t>> bytes;
  std::vector<Arg> args;

  HostMirror(const std::vector<Arg>& device, const Location& at) {
    // Each address's copy is sized for the largest array seen there before any Array points into it.
    const auto size = [&](const Array& a) {
      auto& v = bytes[reinterpret_cast<uint64_t>(a.data)];
      v.resize(std::max<size_t>(v.size(), static_cast<size_t>(arrayBytes(a, at))));
    };
    for (const Arg& x : device)
      if (const Array* a = std::get_if<Array>(&x)) {
        size(*a);
        for (const Array& q : a->pointees) size(q);
      }
    const auto mirror = [&](const Array& a) {
      Array h = a;
      h.data = bytes.at(reinterpret_cast<uint64_t>(a.data)).data();
      return h;
    };
    for (const Arg& x : device) {
      const Array* a = std::get_if<Array>(&x);
      if (!a) {
        args.push_back(x);
        continue;
      }
      Array h = mirror(*a);
      for (Array& q : h.pointees) q = mirror(q);
      args.push_back(std::move(h));
    }
  }
  // Reads every device array again.
  void download(cuda::Driver& d) {
    for (auto& [address, v] : bytes) d.copyToHost(v.data(), static_cast<cuda::CUdeviceptr>(address), v.size());
  }
  // Each array of pointers must hold the device addresses of the pointees it names.
  void checkAddresses(const std::vector<Arg>& device, const ir::Func& f) const {
    for (size_t k = 0; k < device.size(); ++k) {
      const Array* a = std::get_if<Array>(&device[k]);
      if (!a || a->pointees.empty()) continue;
      const std::vector<uint8_t>& v = bytes.at(reinterpret_cast<uint64_t>(a->data));
      for (size_t j = 0; j < a->pointees.size(); ++j) {
        uint64_t held = 0;
        std::memcpy(&held, v.data() + 8 * j, 8);
        if (held != reinterpret_cast<uint64_t>(a->pointees[j].data)) {
          char text[160];
          std::snprintf(text, sizeof text, "element %zu holds 0x%llx but the array it names is at 0x%llx", j,
                        static_cast<unsigned long long>(held), static_cast<unsigned long long>(reinterpret_cast<uint64_t>(a->pointees[j].data)));
          throw UserError(f.loc, argName(f, k) + ", an array of pointers on the GPU: " + text,
                          "write each pointee's device address into it (torch.tensor([t.data_ptr() ...], dtype=torch.int64, device='cuda'))");
        }
      }
    }
  }
};

// The bytes of a profiled kernel's event records for a launch over the logical grid `grid`.
size_t eventBytes(const cuda::EmitResult& er, const std::array<int64_t, 3>& grid) {
  const std::array<int64_t, 3> launched = cuda::launchGrid(er, grid);
  return static_cast<size_t>(er.profile.bytesPerBlock() * launched[0] * launched[1] * launched[2]);
}

cuda::CUdeviceptr devicePtr(const DeviceArray& a) { return static_cast<cuda::CUdeviceptr>(reinterpret_cast<uint64_t>(a.data())); }

// One launch of a kernel emitted with profile instrumentation, waited for: its event buffer is
// allocated and zeroed before it (after whatever the caller enqueued), read back and freed after it.
std::vector<uint8_t> launchRecorded(cuda::GpuKernel& gk, const DeviceBound& db, const std::array<int64_t, 3>& grid, cuda::CUstream stream) {
  const cuda::EmitResult& er = gk.emitted();
  DeviceArray events(eventBytes(er, grid));
  cuda::Driver& d = cuda::Driver::get();
  d.fill(devicePtr(events), 0, events.bytes());
  cuda::LaunchParams lp;
  cuda::packLaunchParams(d, er, db.args, grid, db.addressOf(), devicePtr(events), lp);
  d.synchronize();  // the zeroed buffer before the kernel, whichever stream it runs on
  gk.launch(lp, grid, stream);
  d.synchronize();
  std::vector<uint8_t> records(events.bytes());
  events.download(records.data());
  return records;
}

}  // namespace

RunStats Kernel::run(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, const RunOptions& opt) const {
  return guarded([&] {
    const ir::Func& f = *impl_->tile.kernel;
    RunStats st;
    if (backend == Backend::Cuda) {
      const DeviceBound db = bindDevice(f, args, grid);
      const bool profiled = impl_->opt.profile;
      cuda::GpuKernel& gk = impl_->gpuKernel(db.args, db.baseOf(), grid, profiled);
      const cuda::EmitResult& er = gk.emitted();
      st.launched = cuda::launchGrid(er, grid);
      const auto stream = static_cast<cuda::CUstream>(opt.stream);
      if (!opt.check && !profiled) {  // the zero-copy launch: enqueued, never waited for
        gk.launch(db.args, grid, db.addressOf(), stream);
        return st;
      }
      // A checked or profiled launch: synchronous, its inputs and event records copied to the host.
      cuda::Driver& d = cuda::Driver::get();
      std::optional<HostMirror> host;
      d.synchronize();  // whatever the caller enqueued has written the inputs
      if (opt.check) {
        host.emplace(args, f.loc);
        host->download(d);
        host->checkAddresses(args, f);
      }
      std::optional<Bound> want;
      if (opt.check) want = bindArgs(f, host->args, grid);  // copies of the inputs, before the launch writes them
      if (!profiled) {
        gk.launch(db.args, grid, db.addressOf(), stream);
        d.synchronize();
      } else {
        const std::vector<uint8_t> records = launchRecorded(gk, db, grid, stream);
        std::ostringstream line;
        cuda::writeProfileTrace(er, records, st.launched, profile::CostModel::h200().clockGHz, false,
                                "measured on GPU 0: clock64 within a block, %globaltimer between blocks; cycles shown at 1.98 GHz",
                                opt.profileTrace.empty() ? er.kernelName + ".trace.json" : opt.profileTrace, line);
        st.notes = line.str();
      }
      if (opt.check) {
        host->download(d);
        const Bound got = bindArgs(f, host->args, grid);
        impl_->runAsWritten(want->args, want->buffers, grid, opt.threads, opt.seed);
        std::ostringstream lines;
        driver::checkBuffers(got.buffers, want->buffers, "GPU", f.loc,
                             "tawa check FILE with the same spec and flags runs the warp-specialized kernel on the CPU", lines, &f);
        st.comparisons = lines.str();
      }
      return st;
    }
    Bound b = bindArgs(f, args, grid);
    if (backend == Backend::Exec) {
      auto t0 = std::chrono::steady_clock::now();
      impl_->runAsWritten(b.args, b.buffers, grid, opt.threads, opt.seed);
      st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      std::vector<exec::Buffer> want;
      if (opt.check) want = b.buffers;  // the inputs, before the launch writes them
      emu::Options eo;
      eo.seed = opt.seed;
      eo.notes = impl_->opt.explain;  // the maps this launch moves by threads (as a GPU launch says them)
      const cuda::EmitResult& er = impl_->emit();
      auto ls = emu::launch(er, b.args, b.buffers, grid, eo);
      st.seconds = ls.seconds;
      st.compileSeconds = ls.compileSeconds;
      st.cacheHit = ls.cacheHit, st.blocks = ls.blocks, st.switches = ls.switches, st.mmaOps = ls.mmaOps, st.tmaOps = ls.tmaOps;
      if (impl_->opt.profile) {
        std::ostringstream line;
        cuda::writeProfileTrace(er, ls.profile, cuda::launchGrid(er, grid), eo.model.clockGHz, true,
                                "modelled: the kernel's own --profile records, timed by the CPU emulator's clock (tawa's cost model), "
                                "not by a GPU",
                                opt.profileTrace.empty() ? er.kernelName + ".trace.json" : opt.profileTrace, line);
        st.notes = line.str();
      }
      if (opt.check) {
        impl_->runAsWritten(b.args, want, grid, opt.threads, opt.seed);
        std::ostringstream lines;
        driver::checkBuffers(b.buffers, want, "emulated CUDA kernel", f.loc, "", lines, &f);
        st.comparisons = lines.str();
      }
    }
    writeBack(b, b.buffers);
    return st;
  });
}

CheckReport Kernel::check(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, int seeds) const {
  return guarded([&] {
    if (seeds < 1) throw UserError(apiLoc("seeds"), "seeds must be at least 1, got " + std::to_string(seeds));
    if (backend == Backend::Cuda)
      throw UserError(apiLoc("backend"), "check runs the pipeline on the CPU: backend exec or emu, on host arrays",
                      "pass host copies of the arrays (tensor.cpu())");
    const ir::Func& f = *impl_->tile.kernel;
    const Bound b = bindArgs(f, args, grid);
    CheckReport rep;
    rep.programs = grid[0] * grid[1] * grid[2];
    if (backend == Backend::Exec) {
      driver::Bound input;
      input.buffers = b.buffers, input.args = b.args, input.grid = grid;
      auto nv = reparse(impl_->stageText("nv"), impl_->name);
      auto r = driver::checkSpecialized(impl_->tile, nv, input, seeds);
      rep.seeds = r.seeds;  // what ran
      rep.pipeline = pipeline();
      rep.summary = "@" + impl_->name + ": the warp-specialized kernel (P = " + std::to_string(r.mmaDepth) + ") agrees bit for bit " +
                    "with the kernel as written under " + std::to_string(seeds) + " interleaving(s) of its warp groups on the executor; " +
                    "no deadlock, slot race or out-of-bounds access";
      return rep;
    }
    // The emulator: schedule 1 against the executor's run of the kernel as written (within the
    // dtype's tolerance), every later schedule bit for bit against schedule 1.
    std::vector<exec::Buffer> want = b.buffers;
    impl_->runAsWritten(b.args, want, grid);
    std::ostringstream lines;  // the comparison's per-buffer lines
    // Buffers float atomics add into: later schedules agree within the type's tolerance (the adds'
    // order is the schedule's, as on a GPU); every other buffer bit for bit.
    const std::set<std::string> added = driver::orderDependentBuffers(f);
    emu::runSchedules(
        impl_->emit(), b.args, b.buffers, grid, seeds, f.loc, true,
        [&](const std::vector<exec::Buffer>& got) { driver::checkBuffers(got, want, "emulated CUDA kernel (schedule 1)", f.loc, "", lines, &f); },
        [&](const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& first) { return driver::scheduleDifference(got, first, added); });
    std::string orderNote;
    for (const std::string& n : added) orderNote += (orderNote.empty() ? "" : ", ") + n;
    if (!orderNote.empty()) orderNote = " (" + orderNote + ", which float atomics add into: within the type's tolerance)";
    rep.seeds = seeds;
    rep.pipeline = pipeline(true);
    rep.comparisons = lines.str();
    rep.summary = "@" + impl_->name + ": " + std::to_string(seeds) + " schedule(s) of the emitted CUDA kernel agree bit for bit" + orderNote +
                  ", the first with the CPU executor; no deadlock, race, missing fence, out-of-bounds access or " +
                  "mbarrier misuse";
    return rep;
  });
}

ProfileReport Kernel::profile(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, const RunOptions& opt) const {
  return guarded([&] {
    const ir::Func& f = *impl_->tile.kernel;
    if (impl_->simt)
      throw UserError(f.loc, "@" + impl_->name + " has no warp groups to profile (no tile.dot and no tensor descriptor: a SIMT kernel)",
                      "run it with run()");
    // The spec with the launch's scalar values, for the FLOPs of a kernel with a dot (M, N, K).
    driver::Spec spec = impl_->spec;
    for (size_t k = 0; k < args.size() && k < f.numArgs(); ++k)
      for (auto& e : spec.entries)
        if (e.kind == driver::SpecEntry::Kind::Scalar && e.name == f.arg(k)->nameHint) {
          if (auto* i = std::get_if<int64_t>(&args[k])) e.value = *i;
          if (auto* d = std::get_if<double>(&args[k])) e.value = *d;
        }
    profile::ProfileOptions po;
    po.backend = backend == Backend::Exec ? "exec" : backend == Backend::Emu ? "emu" : "cuda";
    po.ws = passOptions(impl_->opt, nullptr);
    po.seed = opt.seed ? opt.seed : 1;
    po.threads = opt.threads;
    po.profileCapacity = impl_->opt.profileCapacity;
    po.eventsPerBlock = static_cast<size_t>(std::max(1, impl_->opt.profileEvents));
    const auto report = [&](const profile::ProfileResult& res) {
      ProfileReport rep;
      std::ostringstream text, trace;
      profile::printSummary(text, res.summary, res.advice);
      profile::writeTrace(trace, res, po.backend);
      rep.summary = text.str();
      rep.json = profile::toJson(res.summary, res.advice).dump(2);
      rep.trace = trace.str();
      return rep;
    };
    if (backend == Backend::Cuda) {
      // The instrumented kernel on the caller's device arrays and stream; its event buffer is
      // allocated, zeroed, read back and freed here, and the launch waited for: a profile is one
      // synchronous launch.
      const DeviceBound db = bindDevice(f, args, grid);
      cuda::GpuKernel& gk = impl_->gpuKernel(db.args, db.baseOf(), grid, true);
      const cuda::EmitResult& er = gk.emitted();
      const std::vector<uint8_t> host = launchRecorded(gk, db, grid, static_cast<cuda::CUstream>(opt.stream));
      double moved = 0;  // every array once (bindDevice checked their dtypes)
      for (const auto& a : args)
        if (const auto* arr = std::get_if<Array>(&a)) moved += static_cast<double>(arrayBytes(*arr, f.loc));
      auto traces = cuda::decodeProfile(er.profile, host.data(), host.size(), cuda::launchGrid(er, grid), po.model.clockGHz);
      return report(profile::summarizeRecords(std::move(traces), reparse(impl_->stageText("nv"), impl_->name), spec, moved, 0, true, po));
    }
    Bound b = bindArgs(f, args, grid);
    const auto ws = reparse(impl_->stageText("nv"), impl_->name);  // the stage the other entry points use, made once
    driver::Bound input;
    input.buffers = std::move(b.buffers), input.args = b.args, input.grid = grid;
    auto res = profile::profileBound(ws, spec, input, po);
    ProfileReport rep = report(res);
    writeBack(b, input.buffers);
    return rep;
  });
}

std::vector<double> Kernel::bench(const std::vector<Arg>& args, std::array<int64_t, 3> grid, int warmup, int reps, const RunOptions& opt) const {
  return guarded([&] {
    if (reps < 1 || warmup < 0)
      throw UserError(apiLoc("bench"), "bench needs at least one timed launch and no negative warm-up (got reps " + std::to_string(reps) +
                                           ", warmup " + std::to_string(warmup) + ")");
    const ir::Func& f = *impl_->tile.kernel;
    const DeviceBound db = bindDevice(f, args, grid);
    cuda::GpuKernel& gk = impl_->gpuKernel(db.args, db.baseOf(), grid, impl_->opt.profile);
    const cuda::EmitResult& er = gk.emitted();
    cuda::Driver& d = cuda::Driver::get();
    std::optional<DeviceArray> events;  // a profiled kernel's records, never read
    if (impl_->opt.profile) events.emplace(eventBytes(er, grid));
    cuda::LaunchParams lp;
    cuda::packLaunchParams(d, er, db.args, grid, db.addressOf(), events ? devicePtr(*events) : 0, lp);
    const auto stream = static_cast<cuda::CUstream>(opt.stream);
    for (int i = 0; i < warmup; ++i) gk.launch(lp, grid, stream);
    DeviceEvents ev(d);
    for (int i = 0; i < 2 * reps; ++i) ev.ev.push_back(d.createEvent());
    for (int i = 0; i < reps; ++i) {
      d.record(ev.ev[static_cast<size_t>(2 * i)], stream);
      gk.launch(lp, grid, stream);
      d.record(ev.ev[static_cast<size_t>(2 * i + 1)], stream);
    }
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) ms.push_back(d.elapsedMs(ev.ev[static_cast<size_t>(2 * i)], ev.ev[static_cast<size_t>(2 * i + 1)]));
    return ms;
  });
}

std::optional<double> Kernel::flops() const { return driver::dotFlops(*impl_->tile.module, impl_->spec); }

GpuInfo gpu() {
  return guarded([] {
    cuda::Driver& d = cuda::Driver::get();
    cuda::requireHopper(d, apiLoc("<cuda>"));
    const cuda::DeviceInfo& dev = d.device();
    GpuInfo g;
    g.name = dev.name, g.ccMajor = dev.ccMajor, g.ccMinor = dev.ccMinor, g.multiprocessors = dev.multiprocessors;
    g.driverVersion = dev.driverVersion;
    return g;
  });
}

DeviceArray::DeviceArray(size_t bytes) : bytes_(bytes) {
  address_ = guarded([&] { return static_cast<uint64_t>(cuda::Driver::get().alloc(bytes)); });
}
DeviceArray::~DeviceArray() {
  if (!address_) return;
  try {
    cuda::Driver::get().free(static_cast<cuda::CUdeviceptr>(address_));
  } catch (...) {  // a context torn down by a fault: nothing left to free
  }
}
DeviceArray::DeviceArray(DeviceArray&& o) noexcept : address_(std::exchange(o.address_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceArray& DeviceArray::operator=(DeviceArray&& o) noexcept {
  if (this != &o) {
    DeviceArray gone(std::move(*this));
    address_ = std::exchange(o.address_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void DeviceArray::upload(const void* host) {
  guarded([&] {
    cuda::Driver::get().copyToDevice(static_cast<cuda::CUdeviceptr>(address_), host, bytes_);
    return 0;
  });
}
void DeviceArray::download(void* host) const {
  guarded([&] {
    cuda::Driver::get().copyToHost(host, static_cast<cuda::CUdeviceptr>(address_), bytes_);
    return 0;
  });
}

DeviceInputs toDevice(const Inputs& in) {
  DeviceInputs out;
  out.grid = in.grid;
  for (const HostBuffer& b : in.buffers) {
    out.arrays.emplace_back(b.data.size());
    if (b.addressesOf.empty()) out.arrays.back().upload(b.data.data());
  }
  for (size_t i = 0; i < in.buffers.size(); ++i) {  // arrays of pointers: the pointees' device addresses
    const HostBuffer& b = in.buffers[i];
    if (b.addressesOf.empty()) continue;
    std::vector<uint8_t> bytes(b.data.size(), 0);
    for (size_t j = 0; j < b.addressesOf.size() && 8 * j + 8 <= bytes.size(); ++j) {
      const auto address = reinterpret_cast<uint64_t>(out.arrays.at(static_cast<size_t>(b.addressesOf[j])).data());
      std::memcpy(bytes.data() + 8 * j, &address, 8);
    }
    out.arrays[i].upload(bytes.data());
  }
  // The arguments: each host array of the Inputs is the device array of the buffer it points into.
  const auto onDevice = [&](const Array& a) {
    for (size_t i = 0; i < in.buffers.size(); ++i)
      if (in.buffers[i].data.data() == a.data) {
        Array d = a;
        d.data = out.arrays[i].data();
        return d;
      }
    throw Error(Diagnostic{"", 0, 0, "toDevice: an argument's array is not one of the Inputs' buffers", ""});
  };
  for (const Arg& x : in.args) {
    const Array* a = std::get_if<Array>(&x);
    if (!a) {
      out.args.push_back(x);
      continue;
    }
    Array d = onDevice(*a);
    for (Array& q : d.pointees) q = onDevice(q);
    out.args.push_back(std::move(d));
  }
  return out;
}

void DeviceInputs::download(Inputs& in) const {
  for (size_t i = 0; i < in.buffers.size() && i < arrays.size(); ++i)
    if (in.buffers[i].addressesOf.empty()) arrays[i].download(in.buffers[i].data.data());
}

struct TuneRecord::Impl {
  std::unique_ptr<tune::Record> record;
};

TuneRecord::TuneRecord(const std::string& path, const std::string& device) : impl_(std::make_unique<Impl>()) {
  guarded([&] {
    impl_->record = std::make_unique<tune::Record>(path);
    if (!device.empty()) impl_->record->selectDevice(device);
    return 0;
  });
}
TuneRecord::~TuneRecord() = default;
TuneRecord::TuneRecord(TuneRecord&&) noexcept = default;

int64_t TuneRecord::program(const std::string& name, const std::string& kind, const std::string& space) {
  return guarded([&] { return impl_->record->program(name, kind, "", space); });
}

std::optional<double> TuneRecord::lookup(int64_t program, const std::string& config) {
  return guarded([&]() -> std::optional<double> {
    auto m = impl_->record->lookup(program, config);
    if (!m) return std::nullopt;
    return m->ok() ? m->seconds : std::numeric_limits<double>::infinity();
  });
}

void TuneRecord::add(int64_t program, const std::string& config, double seconds, const std::string& origin, const std::string& detail) {
  guarded([&] {
    tune::Measurement m;
    m.seconds = seconds;
    m.repetitions = {seconds};
    m.origin = origin;
    if (!detail.empty()) m.status = "failed", m.detail = detail;
    impl_->record->add(program, config, m);
    return 0;
  });
}

std::vector<std::pair<std::string, double>> TuneRecord::best(int64_t program, size_t top) {
  return guarded([&] { return impl_->record->best(program, top); });
}

std::string tuneWorkerIdentity(const std::string& name) { return tune::workerIdentity(name).dump(); }

std::string runTuneJob(const std::string& job, const std::string& identity) {
  return guarded([&] {
    nlohmann::json j, id;
    try {
      j = nlohmann::json::parse(job);
      id = nlohmann::json::parse(identity);
    } catch (const nlohmann::json::exception& e) {
      throw UserError(Location::at(std::make_shared<const std::string>("tuning job"), 0, 0), std::string("invalid JSON: ") + e.what());
    }
    return tune::runJob(j, id).dump();
  });
}

std::vector<SourceParam> signature(const std::string& path, const std::string& kernel) {
  return guarded([&] {
    std::vector<SourceParam> out;
    for (const auto& p : frontend::signature(path, kernel)) out.push_back({p.name, p.isConstexpr, p.hasDefault});
    return out;
  });
}

std::vector<std::string> kernels(const std::string& path) {
  return guarded([&] { return frontend::listKernels(path); });
}

void setPrimitivesDir(const std::string& dir) { cuda::setPrimitivesDir(dir); }

std::string version() { return TAWA_VERSION; }

}  // namespace tawa
