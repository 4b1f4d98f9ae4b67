#include "backends/cuda/Runner.h"

#include "backends/cuda/ProfileBuffer.h"
#include "profile/CostModel.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <ostream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "backends/cuda/GpuLaunch.h"
#include "backends/cuda/Target.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "transforms/PassManager.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::cuda {

namespace {

Location where(const std::string& what = "<cuda>") { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

std::string num(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string indexStr(const exec::Buffer& b, int64_t flat) {
  std::string s;
  for (size_t d = b.shape.size(); d-- > 0;) {
    int64_t e = b.shape[d];
    s = (d ? ", " : "") + std::to_string(flat % e) + s;
    flat /= e;
  }
  return "[" + s + "]";
}

// Device buffers freed on every exit path.
struct DeviceBuffers {
  Driver& d;
  std::vector<CUdeviceptr> ptrs;
  explicit DeviceBuffers(Driver& drv) : d(drv) {}
  ~DeviceBuffers() {
    for (CUdeviceptr p : ptrs) try {
        d.free(p);
      } catch (...) {
      }
  }
};

struct Events {
  Driver& d;
  std::vector<CUevent> ev;
  explicit Events(Driver& drv) : d(drv) {}
  ~Events() {
    for (CUevent e : ev) try {
        d.destroyEvent(e);
      } catch (...) {
      }
  }
};

}  // namespace

double relativeTolerance(ir::Scalar s) {
  using ir::Scalar;
  switch (s) {
    case Scalar::F64: return 1e-9;
    case Scalar::F32: return 1e-4;   // f32 results of f32 accumulation in another order
    case Scalar::F16: return 4e-3;   // 2^-10 per unit in the last place: four of them
    case Scalar::BF16: return 3e-2;  // 2^-7: four units
    case Scalar::F8E4M3: return 1.3e-1;
    case Scalar::F8E5M2: return 2.6e-1;
    default: return 0;               // integers: exact
  }
}

Comparison compareBuffers(const exec::Buffer& gpu, const exec::Buffer& ref) {
  Comparison c;
  c.elements = ref.numel();
  TAWA_ASSERT(gpu.numel() == ref.numel() && gpu.dtype == ref.dtype, "the GPU's copy of a buffer has the reference's shape and type");
  bool isFloat = ir::isFloat(ref.dtype);
  double sumSq = 0, errSq = 0;
  for (int64_t i = 0; i < c.elements; ++i) sumSq += ref.get(i) * ref.get(i);
  double rms = c.elements ? std::sqrt(sumSq / static_cast<double>(c.elements)) : 0;
  c.rtol = relativeTolerance(ref.dtype);
  c.atol = isFloat ? c.rtol * rms : 0;
  for (int64_t i = 0; i < c.elements; ++i) {
    double g = gpu.get(i), r = ref.get(i);
    bool bad;
    if (std::isnan(r) || std::isnan(g)) {
      bad = std::isnan(r) != std::isnan(g);
    } else if (std::isinf(r) || std::isinf(g)) {
      bad = g != r;
    } else {
      double e = std::fabs(g - r);
      c.maxAbsErr = std::max(c.maxAbsErr, e);
      errSq += e * e;
      bad = e > c.rtol * std::fabs(r) + c.atol;
    }
    if (bad) {
      if (c.firstBad < 0) {
        c.firstBad = i;
        c.got = g;
        c.want = r;
      }
      ++c.mismatches;
    }
  }
  c.relL2 = sumSq > 0 ? std::sqrt(errSq / sumSq) : std::sqrt(errSq);
  c.ok = c.mismatches == 0;
  return c;
}

double checkAgainstExecutor(const std::string& file, const std::string& kernel, const driver::Spec& spec,
                            const std::vector<exec::Arg>& args, const std::vector<exec::Buffer>& initial,
                            const std::array<int64_t, 3>& grid, const std::vector<exec::Buffer>& got, size_t expectArgs,
                            int threads, uint64_t seed, const std::string& who, const Location& at, const std::string& hint,
                            std::ostream& out) {
  auto ref = driver::loadKernel(file, kernel, spec);
  transforms::PassManager pm;
  pm.add("canonicalize");
  pm.run(*ref.module);
  if (ref.kernel->numArgs() != expectArgs)
    throw InternalError("the specialized kernel has " + std::to_string(expectArgs) + " arguments, the kernel as written " +
                        std::to_string(ref.kernel->numArgs()));
  std::vector<exec::Buffer> want = initial;
  exec::LaunchOptions lo;
  lo.grid = grid;
  lo.threads = threads;
  lo.seed = seed;
  auto r0 = std::chrono::steady_clock::now();
  exec::launch(*ref.module, *ref.kernel, args, want, lo);
  double refS = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  checkBuffers(got, want, who, at, hint, out);
  return refS;
}

void checkBuffers(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want, const std::string& who,
                  const Location& at, const std::string& hint, std::ostream& out) {
  for (size_t i = 0; i < want.size(); ++i) {
    Comparison c = compareBuffers(got[i], want[i]);
    std::string stats = std::string(ir::scalarName(want[i].dtype)) + ", max |err| " + num("%.3g", c.maxAbsErr) + ", ||err||/||ref|| " +
                        num("%.3g", c.relL2) + ", tolerance " + num("%.3g", c.rtol) + "*|ref| + " + num("%.3g", c.atol);
    if (!c.ok)
      throw UserError(at, "the " + who + "'s result differs from the CPU executor's: buffer " + want[i].name + ", " +
                              std::to_string(c.mismatches) + " of " + std::to_string(c.elements) + " element(s) out of tolerance; first at " +
                              indexStr(want[i], c.firstBad) + ": " + who + " " + num("%.6g", c.got) + ", executor " + num("%.6g", c.want) +
                              " (" + stats + ")",
                      hint);
    out << "  check " << want[i].name << ": matches the CPU executor (" << stats << ")\n";
  }
}

std::vector<int64_t> integerArgs(const std::vector<exec::Arg>& args) {
  std::vector<int64_t> ints(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == exec::Arg::Kind::Int) ints[i] = args[i].i;
  return ints;
}

void packScalarParam(const KernelParam& p, const std::vector<exec::Arg>& args, const std::array<int64_t, 3>& logicalGrid,
                     uint64_t* slot, const char* who, const std::function<uint64_t(int)>& bufferAddress) {
  if (p.gridAxis >= 0) {  // a persistent kernel's logical grid
    auto v = static_cast<int32_t>(logicalGrid[static_cast<size_t>(p.gridAxis)]);
    std::memcpy(slot, &v, sizeof v);
    return;
  }
  if (p.hostValue) {  // a tile map's extent or stride
    const int64_t v = p.value.eval(integerArgs(args));
    std::memcpy(slot, &v, sizeof v);
    return;
  }
  TAWA_ASSERT(p.irArg >= 0 && static_cast<size_t>(p.irArg) < args.size(), "a scalar kernel parameter names an IR argument");
  const exec::Arg& a = args[static_cast<size_t>(p.irArg)];
  if (p.pointer) {  // a SIMT kernel's buffer, by its address
    *slot = bufferAddress(a.buffer);
    return;
  }
  double fv = a.kind == exec::Arg::Kind::Float ? a.f : static_cast<double>(a.i);
  auto put = [&](auto v) { std::memcpy(slot, &v, sizeof v); };
  if (p.cType == "float") put(static_cast<float>(fv));
  else if (p.cType == "double") put(fv);
  else if (p.cType == "int32_t") put(static_cast<int32_t>(a.i));
  else if (p.cType == "int64_t") put(static_cast<int64_t>(a.i));
  else if (p.cType == "int16_t") put(static_cast<int16_t>(a.i));
  else if (p.cType == "int8_t" || p.cType == "bool") put(static_cast<int8_t>(a.i));
  else if (p.cType == "uint32_t") put(static_cast<uint32_t>(a.i));
  else if (p.cType == "uint64_t") put(static_cast<uint64_t>(a.i));
  else if (p.cType == "uint16_t") put(static_cast<uint16_t>(a.i));
  else if (p.cType == "uint8_t") put(static_cast<uint8_t>(a.i));
  else throw UserError(where(), std::string(who) + " cannot pass parameter '" + p.name + "' of type " + p.cType);
}

std::optional<double> dotFlops(const ir::Module& m, const driver::Spec& spec) {
  bool hasDot = false;
  for (const auto& f : m.funcs)
    ir::walk(f->body, [&](const ir::Op* op) {
      if (op->kind() == ir::OpKind::Dot || op->kind() == ir::OpKind::Wgmma) hasDot = true;
    });
  if (!hasDot) return std::nullopt;
  auto vals = spec.intValues();
  auto find = [&](char n) -> std::optional<double> {
    for (const auto& [k, v] : vals)
      if (k.size() == 1 && std::toupper(static_cast<unsigned char>(k[0])) == n) return static_cast<double>(v);
    return std::nullopt;
  };
  auto M = find('M'), N = find('N'), K = find('K');
  if (!M || !N || !K) return std::nullopt;
  return 2.0 * *M * *N * *K;
}

int runOnGpu(const GpuRunOptions& o, std::ostream& out) {
  if (o.spec.empty()) throw UserError(where("<spec>"), "tawa run needs --spec");
  if (o.grid.empty()) throw UserError(where("<grid>"), "tawa run needs --grid");
  if (o.check != "exec" && o.check != "none")
    throw UserError(where("--check"), "unknown check '" + o.check + "'", "exec (compare with the CPU executor) or none");
  if (o.reps < 1 || o.warmup < 0) throw UserError(where("--reps"), "need at least one timed launch and no negative warm-up");

  // The driver and the device first: without them nothing else is worth doing.
  Driver& d = Driver::get();
  const DeviceInfo& dev = d.device();
  requireHopper(d, where());

  driver::Spec spec = driver::parseSpec(o.spec);
  auto t0 = std::chrono::steady_clock::now();
  EmitOptions eo;
  eo.profile = o.profile;
  eo.profileCapacity = o.profileCapacity;
  eo.pingPong = o.pingPong;
  driver::LoadedKernel nv;
  bool simt = false;
  EmitResult er = emitForTarget(o.file, o.kernel, spec, o.ws, eo, nv, &simt);
  const auto tBind = std::chrono::steady_clock::now();
  auto bound = driver::bind(*nv.kernel, spec, o.grid, o.seed, driver::loadedNames(o.loads));
  driver::loadAll(bound, o.loads);
  t0 += std::chrono::steady_clock::now() - tBind;  // making the inputs is not compiling
  const std::vector<int64_t> intArgs = integerArgs(bound.args);
  // Tensor maps TMA cannot take with these arguments become tile maps (device buffers are 256-byte aligned).
  er = withTileMaps(er, intArgs, [](int) -> uint64_t { return 0; }, &std::cerr);
  GpuKernel gk(d, er, nv.kernel->loc);  // compiled (or from the cache), its shared memory checked, loaded
  const CompiledModule& cm = gk.compiled();
  double compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Buffers on the device, with the same initial contents as the reference's (random, never
  // zeros: an element the kernel fails to write keeps a value the executor overwrote).
  DeviceBuffers dbuf(d);
  int64_t totalBytes = 0;
  for (const auto& b : bound.buffers) {
    dbuf.ptrs.push_back(d.alloc(b.data.size()));
    d.copyToDevice(dbuf.ptrs.back(), b.data.data(), b.data.size());
    totalBytes += static_cast<int64_t>(b.data.size());
  }
  for (size_t i = 0; i < bound.buffers.size(); ++i)  // arrays of pointers hold device addresses
    if (!bound.buffers[i].addressesOf.empty()) {
      auto bytes = exec::addressBytes(bound.buffers[i], bound.buffers.size(), [&](int b) { return static_cast<uint64_t>(dbuf.ptrs.at(static_cast<size_t>(b))); });
      d.copyToDevice(dbuf.ptrs[i], bytes.data(), bytes.size());
    }

  // Kernel parameters: tensor maps by value, then the scalars in the kernel's order.
  const std::array<int64_t, 3> g = launchGrid(er, bound.grid);  // persistent kernels: fewer blocks than the spec's grid
  std::vector<uint8_t> profileBytes;
  CUdeviceptr profileBuf = 0;
  if (std::any_of(er.params.begin(), er.params.end(), [](const KernelParam& p) { return p.profileBuffer; })) {
    profileBytes.assign(static_cast<size_t>(er.profile.bytesPerBlock() * g[0] * g[1] * g[2]), 0);  // --profile: the events, zeroed
    dbuf.ptrs.push_back(profileBuf = d.alloc(profileBytes.size()));
    d.copyToDevice(profileBuf, profileBytes.data(), profileBytes.size());
  }
  LaunchParams lp;
  packLaunchParams(d, er, bound.args, bound.grid, [&](int b) { return static_cast<uint64_t>(dbuf.ptrs.at(static_cast<size_t>(b))); },
                   profileBuf, lp);

  int64_t blocks = g[0] * g[1] * g[2];
  out << "ran @" << nv.kernel->name << " on GPU 0 (" << dev.name << ", sm_" << dev.ccMajor << dev.ccMinor << ", "
      << dev.multiprocessors << " SMs, driver " << dev.driverVersion / 1000 << "." << (dev.driverVersion % 1000) / 10
      << ") through the CUDA backend: grid (" << g[0] << ", " << g[1] << ", " << g[2] << ") = " << blocks << " block(s) of "
      << er.threads << " threads, " << er.smemBytes << " B dynamic shared memory; "
      << (simt ? std::string("SIMT kernel (no warp-specialized form)")
               : "D = " + std::to_string(transforms::ringDepth(*nv.kernel)) + ", P = " + std::to_string(o.ws.mmaDepth) + ", " +
                     std::to_string(transforms::consumerRegions(*nv.kernel)) + " consumer group(s)")
      << "; seed " << o.seed << "\n";
  out << "compiled in " << num("%.2f", compileS) << " s" << (cm.cacheHit ? " (cubin from the cache: " : " (into ") << cm.dir
      << ")\n";
  for (const auto& u : cm.usage)
    out << "  " << u.kernel << ": " << u.registers << " registers, " << u.stack << " B stack, " << u.spillStores
        << " B spill stores, " << u.spillLoads << " B spill loads\n";

  // One checked launch.
  gk.launch(lp, bound.grid, nullptr);
  d.synchronize();
  std::vector<exec::Buffer> gpu = bound.buffers;
  for (size_t i = 0; i < gpu.size(); ++i)  // an array of pointers keeps the executor's addresses
    if (gpu[i].addressesOf.empty()) d.copyToHost(gpu[i].data.data(), dbuf.ptrs[i], gpu[i].data.size());
  if (o.profile) {
    d.copyToHost(profileBytes.data(), profileBuf, profileBytes.size());
    if (o.profileTraces)
      *o.profileTraces = decodeProfile(er.profile, profileBytes.data(), profileBytes.size(), g, profile::CostModel::h200().clockGHz);
    else
      writeProfileTrace(er, profileBytes, g, profile::CostModel::h200().clockGHz, false,
                      "measured on GPU 0: clock64 within a block, %globaltimer between blocks; cycles shown at 1.98 GHz",
                      o.profileTrace.empty() ? er.kernelName + ".trace.json" : o.profileTrace, out);
  }

  std::string checkWord = "skipped";
  if (o.check == "exec") {
    double refS = checkAgainstExecutor(o.file, o.kernel, spec, bound.args, bound.buffers, bound.grid, gpu, nv.kernel->numArgs(), o.threads,
                                       o.seed, "GPU", where(), "tawa check FILE with the same spec and flags runs the warp-specialized kernel on the CPU",
                                       out);
    out << "checked against the CPU executor (" << num("%.2f", refS) << " s)\n";
    checkWord = "ok";
  }
  if (!o.save.empty()) {
    driver::Bound saved;
    saved.buffers = gpu;
    driver::saveAll(saved, o.save);
    out << "saved " << gpu.size() << " buffer(s) from the GPU to " << o.save << "/\n";
  }

  // Timing: warm-up launches, then each timed launch between two events; the median is reported.
  for (int i = 0; i < o.warmup; ++i) gk.launch(lp, bound.grid, nullptr);
  d.synchronize();
  Events ev(d);
  for (int i = 0; i < 2 * o.reps; ++i) ev.ev.push_back(d.createEvent());
  for (int i = 0; i < o.reps; ++i) {
    d.record(ev.ev[static_cast<size_t>(2 * i)]);
    gk.launch(lp, bound.grid, nullptr);
    d.record(ev.ev[static_cast<size_t>(2 * i + 1)]);
  }
  d.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < o.reps; ++i) ms.push_back(d.elapsedMs(ev.ev[static_cast<size_t>(2 * i)], ev.ev[static_cast<size_t>(2 * i + 1)]));
  std::sort(ms.begin(), ms.end());
  double med = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  auto flops = dotFlops(*nv.module, spec);
  double gbps = static_cast<double>(totalBytes) / (med * 1e-3) / 1e9;
  out << "time: median " << num("%.4f", med) << " ms over " << o.reps << " launch(es) (min " << num("%.4f", ms.front()) << ", max "
      << num("%.4f", ms.back()) << ") after " << o.warmup << " warm-up(s)";
  if (flops) out << "; " << num("%.1f", *flops / (med * 1e-3) / 1e12) << " TFLOP/s (2*M*N*K)";
  out << "; " << num("%.1f", gbps) << " GB/s (" << totalBytes << " B: every buffer once)\n";
  // One line for scripts.
  out << "result: kernel=" << nv.kernel->name << " backend=cuda check=" << checkWord << " median_ms=" << num("%.6f", med)
      << " tflops=" << (flops ? num("%.3f", *flops / (med * 1e-3) / 1e12) : std::string("n/a")) << " gbps=" << num("%.3f", gbps)
      << "\n";
  return 0;
}

}  // namespace tawa::cuda
