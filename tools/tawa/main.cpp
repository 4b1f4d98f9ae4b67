// tawa: the command line. Exit status: 0 ok, 1 user error (a located diagnostic), 2 internal error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <iostream>
#include <random>
#include <thread>

#include "driver/Check.h"
#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "driver/Target.h"
#include "driver/Launch.h"
#include "frontend/Frontend.h"
#include "ProfileCli.h"
#include "tune/TuneCommand.h"
#include "driver/Spec.h"
#include "ir/Printer.h"
#include "transforms/LowerAref.h"
#include "transforms/PassManager.h"
#include "tawa/tawa.h"

using namespace tawa;

namespace {

const char* kOptExamples = R"(
Examples:
  tawa opt examples/matmul_ptr.tir
  tawa opt examples/softmax.tir --passes canonicalize --print-after-all --time-passes
  tawa opt kernel.py --kernel matmul_kernel --spec 'a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=512, N:i32=512, K:i32=512, BLOCK_M=64'
)";

const char* kRunExamples = R"(
SPEC entries (comma separated):
  name:*dtype[dims]   pointer to a fresh buffer; dims are integers or names of scalars in the spec
  name:*dtype[dims] in LO..HI
                      its random values drawn from [LO, HI) (labels, indices: y:*i32[B] in 0..V)
  name:*dtype[dims] = values(v0, v1, ...)
                      its elements in row-major order (dims may be left out: as many as values)
  name:*i64 = addresses(a, b, ...)
                      an array of pointers: the addresses of buffers a, b, ... (which need not be
                      parameters), as each backend places them (grouped GEMMs)
  name:*dtype[dims] strides(s0, s1, ...)
                      also the scalars s0:i32=stride(name, 0), s1:i32=stride(name, 1), ...: one name
                      per dimension, '_' for a stride the kernel does not take
  name:tensordesc<dtype[block]>[dims]
                      host tensor descriptor (Triton's TensorDescriptor) with that block over a
                      fresh row-major buffer, e.g. a_desc:tensordesc<fp16[128,64]>[M,K] (`in LO..HI`
                      after it draws the buffer's values from a range, as for a buffer)
  name:dtype=value    runtime scalar (i32, i64, u32, fp32, ...)
  NAME=VALUE          constexpr: integer, float, True/False, 'string', None, or a dtype like tl.float16
  ...=dim(a, i), ...=stride(a, i)
                      a scalar's or constexpr's value from buffer a: its i-th dimension, or its
                      row-major stride in elements (stride_am:i32=stride(a, 0), M:i32=dim(a, 0))
GRID: 1 to 3 comma-separated integer expressions over the spec's names with cdiv, min, max,
  + - * // % and parentheses. Buffers not loaded are filled with seeded random values: floats in
  [-1, 1], signed integers in [-64, 64] and unsigned ones in [1, 128], never zero, unless
  `in LO..HI` says otherwise.

Examples:
  tawa run examples/matmul_ptr.tir \
    --spec 'a:*fp16[M,K] strides(stride_am, stride_ak), b:*fp16[K,N] strides(stride_bk, stride_bn),
            c:*fp16[M,N] strides(stride_cm, stride_cn), M:i32=200, N:i32=136, K:i32=100' \
    --grid 'cdiv(M, 64) * cdiv(N, 64)' --save out/
  tawa run examples/softmax.tir --spec 'out:*fp32[37,100], x:*fp32[37,100], in_stride:i32=100,
    out_stride:i32=100, n_cols:i32=100' --grid 37 --load x=x.npy
  tawa run grouped.py --kernel grouped_gemm --spec 'a_ptrs:*i64 = addresses(a0, a1),
    b_ptrs:*i64 = addresses(b0, b1), c_ptrs:*i64 = addresses(c0, c1), a0:*fp16[128,64],
    b0:*fp16[64,96], c0:*fp32[128,96], a1:*fp16[64,32], b1:*fp16[32,48], c1:*fp32[64,48],
    dims:*i32 = values(128,96,64, 64,48,32), BM=64, BN=64, BK=32' --grid '4, 2' --save out/
)";

std::string describe(const exec::Buffer& b) {
  double sum = 0, asum = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    double v = b.get(i);
    sum += v;
    asum += std::fabs(v);
  }
  std::string shape;
  for (size_t i = 0; i < b.shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(b.shape[i]);
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %-6s [%s]  sum %.6g  mean|x| %.6g", b.name.c_str(),
                std::string(ir::scalarName(b.dtype)).c_str(), shape.c_str(), sum, b.numel() ? asum / static_cast<double>(b.numel()) : 0.0);
  return line;
}

struct Common {
  std::string file, kernel, spec;
  std::vector<std::string> importDirs;
};

void addCommon(CLI::App* c, Common& o) {
  c->add_option("FILE", o.file, "kernel file: .tir (tile IR) or .py (Triton)")->required();
  c->add_option("--kernel,-k", o.kernel, "kernel (function) name; default: the file's first");
  c->add_option("--spec", o.spec, "launch spec (argument types, shapes, constexprs)");
  c->add_option("-I", o.importDirs, frontend::kImportDirHelp)->each([](const std::string& d) { frontend::addImportDir(d); })->check(CLI::ExistingDirectory);
}

struct WsFlags {
  transforms::PassOptions opt;
  bool explain = false;
  bool profile = false;  // compile --target, run --backend cuda|emu: instrument the CUDA kernel
  int profileCapacity = 256;
  std::string profileTrace;
  bool noPingPong = false;  // compile --target, run --backend cuda|emu
};

void addCudaFlags(CLI::App* c, WsFlags& w, bool trace) {
  c->add_flag("--profile", w.profile,
              "instrument the CUDA kernel: the elected thread of each warp group records tawa's scopes (waits, TMA, MMA, "
              "softmax, epilogue) with clock64 into a shared-memory ring, copied to a global buffer at the end");
  c->add_option("--profile-capacity", w.profileCapacity, "with --profile: events per warp group (older ones are lost, and counted)")
      ->default_val(256)
      ->check(CLI::Range(1, 65536));
  if (trace) c->add_option("--profile-trace", w.profileTrace, "with --profile: the Chrome trace file (default: KERNEL.trace.json)");
  c->add_flag("--no-ping-pong", w.noPingPong,
              "attention with two cooperative consumers: do not make them take turns issuing their MMAs (FlashAttention-3's "
              "inter-warpgroup ping-pong, on by default)");
}

Location flagLoc(const std::string& f) { return Location::at(std::make_shared<const std::string>(f), 0, 0); }

// Writes a compiled artifact to `out`, or to stdout for "" / "-".
void writeOut(const std::string& out, const std::string& text, bool binary) {
  if (out.empty() || out == "-") {
    std::cout << text;
    return;
  }
  std::ofstream f(out, binary ? std::ios::binary : std::ios::out);
  f << text;
  if (!f) throw UserError(flagLoc(out), "cannot write file");
}

void addWsFlags(CLI::App* c, WsFlags& w) {
  c->add_option("--depth,-D", w.opt.depth, "aref depth D: slots per ring, 1 to 8, or auto (the spec's num_stages within the shared memory, else 2)")
      ->transform(CLI::Validator(transforms::depthFlag, "auto|1..8"))
      ->default_str("auto");
  c->add_option("--mma-depth,-P", w.opt.mmaDepth, "MMA depth P: async MMA groups in flight before a slot is released")
      ->default_val(1)
      ->check(CLI::Range(0, 4));
  c->add_option("--consumers", w.opt.consumers,
                "consumer warp groups: 1, 2 cooperative ones splitting the M tile, or auto (two where one cannot hold the "
                "accumulator in its registers, or the spec says num_warps=8; --explain says which)")
      ->transform(CLI::Validator(transforms::consumersFlag, "auto|1|2"))
      ->default_str("auto");
  c->add_option("--persistent", w.opt.persistent, "make the kernel persistent on N programs (e.g. 132, the SMs of an H100)")
      ->default_val(0)
      ->check(CLI::Range(0, 1 << 20));
  c->add_option("--group-m", w.opt.groupM, "persistent tile order: groups of G rows of tiles (0: row-major)")
      ->default_val(0)
      ->check(CLI::Range(0, 1 << 16));
  // setmaxnreg takes 24 to 256 registers per thread, in steps of 8 (PTX ISA).
  const CLI::Validator regs(
      [](std::string& v) {
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        return end != v.c_str() && *end == 0 && n >= 24 && n <= 256 && n % 8 == 0 ? std::string()
                                                                                  : "must be 24 to 256, a multiple of 8 (setmaxnreg)";
      },
      "24..256, multiple of 8");
  // auto: 0 in PassOptions (producerRegsFor and consumerRegsFor choose).
  const auto regsOrAuto = [regs](std::string& v) {
    if (v == "auto") return (v = "0", std::string());
    std::string e = regs(v);
    return e.empty() ? e : "must be auto, or 24 to 256 and a multiple of 8 (setmaxnreg)";
  };
  c->add_option("--producer-regs", w.opt.producerRegs, "setmaxnreg budget of the producer; auto: 40 beside one consumer, 32 beside two")
      ->default_str("auto")
      ->transform(CLI::Validator(regsOrAuto, "auto|24..256, multiple of 8"));
  c->add_option("--consumer-regs", w.opt.consumerRegs,
                "setmaxnreg budget of each consumer; auto: what the producer leaves of 512, at most 256 (256 for one consumer, 240 "
                "for two)")
      ->default_str("auto")
      ->transform(CLI::Validator(regsOrAuto, "auto|24..256, multiple of 8"));
  c->add_flag("--keep-program-order", w.opt.keepProgramOrder,
              "launch programs in their order as written (by default a kernel whose loop runs longer for a larger "
              "program_id(0), as causal attention's, launches its programs longest first)");
  c->add_flag("--shared-ring", w.opt.sharedRing,
              "one aref ring for all of a loop's loads (by default each value read apart, such as attention's K and V, "
              "has its own, released after its own last use): to measure what that is worth");
  c->add_flag("--explain", w.explain,
              "say which role each op went to and why, and what could not be done (and, from the front end, which of a "
              "name's module-level bindings was taken)")
      ->each([](const std::string&) { frontend::setExplain(&std::cerr); });
}

// The library API's options from the warp-specialization and CUDA flags.
tawa::Options kernelOptions(const WsFlags& w) {
  tawa::Options ko;
  ko.depth = w.opt.depth, ko.mmaDepth = w.opt.mmaDepth, ko.consumers = w.opt.consumers, ko.persistent = w.opt.persistent;
  ko.groupM = w.opt.groupM, ko.producerRegs = w.opt.producerRegs, ko.consumerRegs = w.opt.consumerRegs;
  ko.keepProgramOrder = w.opt.keepProgramOrder, ko.sharedRing = w.opt.sharedRing;
  ko.pingPong = !w.noPingPong, ko.profile = w.profile, ko.profileCapacity = w.profileCapacity;
  if (w.explain) ko.explain = &std::cerr;
  return ko;
}

int cmdOpt(const Common& o, const std::string& passes, bool printAfterAll, bool timePasses, bool noLoc, const std::string& out,
           WsFlags& w) {
  driver::Spec spec = driver::parseSpec(o.spec);
  auto lk = driver::loadKernel(o.file, o.kernel, spec);
  transforms::PassManager pm;
  pm.options = w.opt;
  if (w.explain) pm.options.explain = &std::cerr;
  pm.addPipeline(passes);
  if (printAfterAll) pm.printAfterAll = &std::cerr;
  pm.run(*lk.module);
  ir::PrintOptions po;
  po.locations = !noLoc;
  if (out.empty() || out == "-") {
    ir::print(*lk.module, std::cout, po);
  } else {
    std::ofstream f(out);
    if (!f) throw UserError(Location::at(std::make_shared<const std::string>(out), 0, 0), "cannot write file");
    ir::print(*lk.module, f, po);
  }
  if (timePasses) pm.printTimings(std::cerr);
  return 0;
}

// A launch's buffers as the executor's, to describe and save them.
driver::Bound asBuffers(tawa::Inputs in) {
  driver::Bound out;
  for (auto& h : in.buffers) {
    exec::Buffer b(h.name, *driver::parseDtypeName(h.dtype), h.shape);
    b.data = std::move(h.data);
    out.buffers.push_back(std::move(b));
  }
  return out;
}

// `tawa run --backend emu`: the CUDA kernel on the CPU emulator, through the library API, checked
// against the executor unless --check none.
int runOnEmu(const Common& o, const std::string& grid, const std::vector<std::string>& loads, const std::string& save, uint64_t seed,
             int threads, const WsFlags& w, const std::string& checkMode) {
  if (checkMode != "exec" && checkMode != "none")
    throw UserError(flagLoc("--check"), "unknown check '" + checkMode + "'", "exec (compare with the CPU executor) or none");
  driver::parseSpec(o.spec);  // the spec's own errors, as a launch needs it (shapes and values given)
  const tawa::Kernel k = tawa::Kernel::load(o.file, o.kernel, o.spec, kernelOptions(w));
  tawa::Inputs in = k.inputs(grid, seed, loads);
  tawa::RunOptions ro;
  ro.seed = seed, ro.threads = threads, ro.check = checkMode == "exec", ro.profileTrace = w.profileTrace;
  const tawa::RunStats st = k.run(tawa::Backend::Emu, in.args, in.grid, ro);
  const tawa::Pipeline p = k.pipeline(true);
  const auto& g = in.grid;
  char line[512];
  std::snprintf(line, sizeof line, "ran @%s on the CPU emulator of the CUDA backend: grid (%lld, %lld, %lld) of %d threads, %lld B shared memory; ",
                k.name().c_str(), static_cast<long long>(g[0]), static_cast<long long>(g[1]), static_cast<long long>(g[2]), p.threads,
                static_cast<long long>(p.smemBytes));
  std::cout << line;
  if (p.simt)
    std::cout << "SIMT kernel (no warp-specialized form)\n";
  else
    std::cout << "D = " << p.depth << ", P = " << w.opt.mmaDepth << ", " << p.consumers << " consumer group(s)\n";
  if (p.persistent) std::cout << "persistent: " << st.blocks << " block(s) walk the grid's " << g[0] * g[1] * g[2] << " tile(s)\n";
  std::snprintf(line, sizeof line, "compiled as host C++ in %.2f s%s; emulated in %.3f s (%llu fiber switches, %llu wgmma, %llu TMA)\n",
                st.compileSeconds, st.cacheHit ? " (from the cache)" : "", st.seconds, static_cast<unsigned long long>(st.switches),
                static_cast<unsigned long long>(st.mmaOps), static_cast<unsigned long long>(st.tmaOps));
  std::cout << line << st.notes << st.comparisons;
  if (!save.empty()) {
    const driver::Bound out = asBuffers(std::move(in));
    driver::saveAll(out, save);
    std::cout << "saved " << out.buffers.size() << " buffer(s) from the emulator to " << save << "/\n";
  }
  std::snprintf(line, sizeof line, "result: kernel=%s backend=emu check=%s emulated_s=%.6f\n", k.name().c_str(),
                ro.check ? "ok" : "skipped", st.seconds);
  std::cout << line;
  return 0;
}

std::string fixed(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

// `tawa run --backend cuda`: through the library API, on buffers this command makes on GPU 0 from
// the spec's fresh seeded inputs (or .npy files): one launch checked against the CPU executor
// (unless --check none; with --profile, its trace written), then warm-up and timed launches (CUDA
// events, the median reported) with TFLOP/s (2*M*N*K, for kernels with a dot) and GB/s (every
// buffer moved once). Without a driver or a Hopper GPU: exit 1 before any work.
int runOnGpu(const Common& o, const std::string& grid, const std::vector<std::string>& loads, const std::string& save, uint64_t seed,
             int threads, const WsFlags& w, int reps, int warmup, const std::string& checkMode) {
  if (checkMode != "exec" && checkMode != "none")
    throw UserError(flagLoc("--check"), "unknown check '" + checkMode + "'", "exec (compare with the CPU executor) or none");
  const tawa::GpuInfo dev = tawa::gpu();  // the driver and the device first: without them nothing else is worth doing
  driver::parseSpec(o.spec);  // the spec's own errors, as a launch needs it (shapes and values given)
  const tawa::Kernel k = tawa::Kernel::load(o.file, o.kernel, o.spec, kernelOptions(w));
  const std::string usage = k.resources();  // compiled before any device memory is taken
  tawa::Inputs in = k.inputs(grid, seed, loads);
  tawa::DeviceInputs dev_in = tawa::toDevice(in);
  int64_t totalBytes = 0;
  for (const auto& a : dev_in.arrays) totalBytes += static_cast<int64_t>(a.bytes());

  tawa::RunOptions ro;
  ro.seed = seed, ro.threads = threads, ro.check = checkMode == "exec", ro.profileTrace = w.profileTrace;
  const tawa::RunStats st = k.run(tawa::Backend::Cuda, dev_in.args, dev_in.grid, ro);
  const tawa::Pipeline p = k.pipeline(true);
  const auto& g = st.launched;
  std::cout << "ran @" << k.name() << " on GPU 0 (" << dev.name << ", sm_" << dev.ccMajor << dev.ccMinor << ", " << dev.multiprocessors
            << " SMs, driver " << dev.driverVersion / 1000 << "." << (dev.driverVersion % 1000) / 10 << ") through the CUDA backend: grid ("
            << g[0] << ", " << g[1] << ", " << g[2] << ") = " << g[0] * g[1] * g[2] << " block(s) of " << p.threads << " threads, "
            << p.smemBytes << " B dynamic shared memory; "
            << (p.simt ? std::string("SIMT kernel (no warp-specialized form)")
                       : "D = " + std::to_string(p.depth) + ", P = " + std::to_string(w.opt.mmaDepth) + ", " + std::to_string(p.consumers) +
                             " consumer group(s)")
            << "; seed " << seed << "\n";
  std::cout << k.compileReport() << usage << st.notes << st.comparisons;
  if (ro.check) std::cout << "checked against the CPU executor\n";
  if (!save.empty()) {
    dev_in.download(in);
    const driver::Bound out = asBuffers(std::move(in));
    driver::saveAll(out, save);
    std::cout << "saved " << out.buffers.size() << " buffer(s) from the GPU to " << save << "/\n";
  }

  std::vector<double> ms = k.bench(dev_in.args, dev_in.grid, warmup, reps);
  std::sort(ms.begin(), ms.end());
  const double med = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  const std::optional<double> flops = k.flops();
  const double gbps = static_cast<double>(totalBytes) / (med * 1e-3) / 1e9;
  std::cout << "time: median " << fixed("%.4f", med) << " ms over " << reps << " launch(es) (min " << fixed("%.4f", ms.front()) << ", max "
            << fixed("%.4f", ms.back()) << ") after " << warmup << " warm-up(s)";
  if (flops) std::cout << "; " << fixed("%.1f", *flops / (med * 1e-3) / 1e12) << " TFLOP/s (2*M*N*K)";
  std::cout << "; " << fixed("%.1f", gbps) << " GB/s (" << totalBytes << " B: every buffer once)\n";
  // One line for scripts.
  std::cout << "result: kernel=" << k.name() << " backend=cuda check=" << (ro.check ? "ok" : "skipped") << " median_ms=" << fixed("%.6f", med)
            << " tflops=" << (flops ? fixed("%.3f", *flops / (med * 1e-3) / 1e12) : std::string("n/a")) << " gbps=" << fixed("%.3f", gbps)
            << "\n";
  return 0;
}

int cmdRun(const Common& o, const std::string& grid, const std::vector<std::string>& loads, const std::string& save,
           uint64_t seed, std::string backend, int threads, WsFlags& w, int reps, int warmup, const std::string& checkMode) {
  if (o.spec.empty()) throw UserError(Location::at(std::make_shared<const std::string>("<spec>"), 1, 1), "tawa run needs --spec");
  if (grid.empty()) throw UserError(Location::at(std::make_shared<const std::string>("<grid>"), 1, 1), "tawa run needs --grid");
  std::string noGpu;  // why `tawa run` without --backend fell back to the executor
  if (backend.empty()) {
    auto av = cuda::probeGpu();
    backend = av.ok ? "cuda" : "exec";
    noGpu = av.reason;
  }
  if (backend == "cuda") return runOnGpu(o, grid, loads, save, seed, threads, w, reps, warmup, checkMode);
  if (backend == "emu") return runOnEmu(o, grid, loads, save, seed, threads, w, checkMode);
  if (backend != "exec")
    throw UserError(Location::at(std::make_shared<const std::string>("--backend"), 0, 0),
                    "unknown backend '" + backend + "'", "backends: cuda (GPU 0), emu (the CUDA code on the CPU emulator), exec (CPU executor)");
  if (w.profile)
    throw UserError(flagLoc("--profile"), "--profile instruments the CUDA kernel, which the executor does not run",
                    "use --backend emu or cuda, or tawa profile --backend exec");
  if (w.noPingPong)
    throw UserError(flagLoc("--no-ping-pong"), "--no-ping-pong changes the CUDA kernel, which the executor does not run",
                    "use --backend emu or cuda");
  driver::parseSpec(o.spec);  // the spec's own errors, as a launch needs it (shapes and values given)
  tawa::Options ko;
  if (w.explain) ko.explain = &std::cerr;
  const tawa::Kernel k = tawa::Kernel::load(o.file, o.kernel, o.spec, ko);
  tawa::Inputs in = k.inputs(grid, seed, loads);
  tawa::RunOptions ro;
  ro.threads = threads;
  ro.seed = seed;
  const double ms = k.run(tawa::Backend::Exec, in.args, in.grid, ro).seconds * 1e3;
  const auto& g = in.grid;
  unsigned cores = threads > 0 ? static_cast<unsigned>(threads) : std::max(1u, std::thread::hardware_concurrency());
  std::cout << "ran @" << k.name() << " on the CPU executor (" << (noGpu.empty() ? std::string("--backend exec") : "no GPU: " + noGpu) << "), grid (" << g[0] << ", "
            << g[1] << ", " << g[2] << ") = " << g[0] * g[1] * g[2] << " programs on " << cores
            << " thread(s), seed " << seed << ", " << ms << " ms\n";
  const driver::Bound out = asBuffers(std::move(in));
  for (auto& b : out.buffers) std::cout << describe(b) << "\n";
  if (!save.empty()) {
    driver::saveAll(out, save);
    std::cout << "saved " << out.buffers.size() << " buffer(s) to " << save << "/\n";
  }
  return 0;
}

int cmdCompile(const Common& o, WsFlags& w, const std::string& emit, const std::string& out, const std::string& target,
               bool resourceUsage) {
  if (!target.empty()) {
    driver::checkTargetOptions(target, emit, out);
    const tawa::Kernel k = tawa::Kernel::load(o.file, o.kernel, o.spec, kernelOptions(w));
    if (emit == "cuda") writeOut(out, k.cuda(), false);
    if (emit == "ptx") writeOut(out, k.ptx(), false);
    if (emit == "cubin") writeOut(out, k.cubin(), true);
    // The report goes to stdout, or to stderr when the artifact itself went there.
    if (resourceUsage) (out.empty() || out == "-" ? std::cerr : std::cout) << k.resources() << k.compileReport();
    return 0;
  }
  if (w.profile) throw UserError(flagLoc("--profile"), "--profile instruments CUDA code", "add --target sm_90a");
  if (w.noPingPong) throw UserError(flagLoc("--no-ping-pong"), "--no-ping-pong changes CUDA code", "add --target sm_90a");
  if (emit != "ws" && emit != "nv")
    throw UserError(Location::at(std::make_shared<const std::string>("--emit"), 0, 0), "unknown stage '" + emit + "'",
                    "stages: ws (after warp specialization), nv (after lowering the arefs)");
  driver::Spec spec = driver::parseSpec(o.spec);
  if (w.explain) w.opt.explain = &std::cerr;
  auto lk = driver::specialize(o.file, o.kernel, spec, w.opt, emit);
  if (out.empty() || out == "-") {
    ir::print(*lk.module, std::cout);
  } else {
    std::ofstream f(out);
    if (!f) throw UserError(Location::at(std::make_shared<const std::string>(out), 0, 0), "cannot write file");
    ir::print(*lk.module, f);
  }
  return 0;
}

int cmdCheck(const Common& o, WsFlags& w, const std::string& grid, int seeds, const std::string& inject, uint64_t dataSeed,
             const std::string& backend) {
  if (o.spec.empty()) throw UserError(Location::at(std::make_shared<const std::string>("<spec>"), 1, 1), "tawa check needs --spec");
  if (grid.empty()) throw UserError(Location::at(std::make_shared<const std::string>("<grid>"), 1, 1), "tawa check needs --grid");
  if (backend != "exec" && backend != "emu")
    throw UserError(flagLoc("--backend"), "tawa check has no backend '" + backend + "'",
                    "exec (the lowered IR on the CPU executor) or emu (the emitted CUDA kernel on the CPU emulator)");
  const auto& emitFaults = cuda::emitterFaults();
  bool emitFault = std::find(emitFaults.begin(), emitFaults.end(), inject) != emitFaults.end();
  if (emitFault && backend != "emu")
    throw UserError(flagLoc("--inject"), "fault '" + inject + "' breaks the emitted CUDA kernel, which tawa check runs only with --backend emu",
                    "add --backend emu");
  if (w.noPingPong && backend != "emu")
    throw UserError(flagLoc("--no-ping-pong"), "--no-ping-pong changes the CUDA kernel, which tawa check runs only with --backend emu",
                    "add --backend emu");
  driver::parseSpec(o.spec);  // the spec's own errors, as a launch needs it (shapes and values given)
  tawa::Options ko = kernelOptions(w);
  ko.inject = inject;
  if (backend == "exec")
    std::cout << "check " << o.file << ": warp-specialize (D = " << (w.opt.depth ? std::to_string(w.opt.depth) : "auto") << ", P = " << w.opt.mmaDepth
              << (inject.empty() ? "" : ", injected fault " + inject) << "), lower to mbarriers, run " << seeds
              << " interleaving(s); inputs from seed " << dataSeed << std::endl;
  const tawa::Kernel k = tawa::Kernel::load(o.file, o.kernel, o.spec, ko);
  tawa::Inputs in = k.inputs(grid, dataSeed);
  if (backend == "emu") {
    const tawa::Pipeline p = k.pipeline(true);
    std::cout << "check " << o.file << " on the CPU emulator of the CUDA backend: @" << k.name() << " emitted for sm_90a";
    if (p.simt)
      std::cout << " (SIMT kernel: no warp-specialized form)";
    else
      std::cout << " (D = " << p.depth << ", P = " << w.opt.mmaDepth << ", " << p.consumers << " consumer group(s)"
                << (p.pingPong ? ", the consumers taking turns (ping-pong)" : "") << (inject.empty() || emitFault ? "" : ", injected fault " + inject)
                << (emitFault ? ", injected emitter fault " + inject : "") << ")";
    std::cout << ", run under " << seeds << " thread schedule(s); inputs from seed " << dataSeed << std::endl;
    const tawa::CheckReport rep = k.check(tawa::Backend::Emu, in.args, in.grid, seeds);
    std::cout << rep.comparisons << "ok: " << rep.summary << "\n";
    return 0;
  }
  const tawa::CheckReport rep = k.check(tawa::Backend::Exec, in.args, in.grid, seeds);
  std::cout << "ok: @" << k.name() << " (MMA depth " << rep.pipeline.mmaDepth << (rep.pipeline.pvOverlap ? ", PV overlapped" : "") << "), "
            << rep.seeds << " seed(s) x " << rep.programs
            << " program(s): every seed agrees bit for bit with the unspecialized kernel; no deadlock, slot race or "
               "out-of-bounds access\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tawa: a compiler for tile-level GPU kernels (Triton or tile IR) into warp-specialized Hopper code"};
  app.require_subcommand(1);
  app.footer("Run 'tawa COMMAND --help' for a command's options and examples.");

  Common common;
  std::string passes, out;
  bool printAfterAll = false, timePasses = false, noLoc = false;
  auto* opt = app.add_subcommand("opt", "parse, verify and transform a kernel; print the resulting IR");
  addCommon(opt, common);
  std::string passList;  // the registered passes, in pipeline order, for --help
  for (const auto& p : transforms::registeredPasses()) passList += "\n    " + p.name + ": " + p.summary;
  opt->add_option("--passes", passes, "comma-separated pass pipeline (e.g. canonicalize); default: none. Passes:" + passList);
  opt->add_flag("--print-after-all", printAfterAll, "print the IR after each pass to stderr");
  opt->add_flag("--time-passes", timePasses, "print per-pass wall-clock time to stderr");
  opt->add_flag("--no-loc", noLoc, "omit loc(...) source locations from the output");
  opt->add_option("-o", out, "write the IR to this file instead of stdout");
  WsFlags optWs;
  addWsFlags(opt, optWs);
  opt->footer(kOptExamples);

  std::string grid, save, backend;
  std::vector<std::string> loads;
  uint64_t seed = 0;
  int threads = 0;
  auto* run = app.add_subcommand("run", "run a kernel over its grid on host buffers and report the results");
  Common runCommon;
  addCommon(run, runCommon);
  run->add_option("--grid", grid, "launch grid: 1-3 comma-separated expressions over the spec's names");
  run->add_option("--load", loads, "NAME=FILE.npy: initialize buffer NAME from a .npy file (repeatable)");
  run->add_option("--save", save, "write every pointer argument after the run as DIR/NAME.npy");
  auto* seedOpt = run->add_option("--seed", seed, "seed for the random inputs (default: fresh, printed)");
  run->add_option("--backend", backend,
                  "cuda (GPU 0: compiled for sm_90a, checked against the executor, timed) , emu (the same CUDA code on the CPU emulator of the device primitives) or exec (CPU executor); "
                  "default: cuda when a GPU is present, else exec");
  WsFlags runWs;
  addWsFlags(run, runWs);
  addCudaFlags(run, runWs, true);
  int reps = 20, warmup = 3;
  std::string checkMode = "exec";
  run->add_option("--reps", reps, "cuda: timed launches (the median is reported)")->default_val(20)->check(CLI::Range(1, 100000));
  run->add_option("--warmup", warmup, "cuda: launches before timing")->default_val(3)->check(CLI::Range(0, 100000));
  run->add_option("--check", checkMode, "cuda: exec (compare every buffer with the CPU executor) or none")->default_val("exec");
  run->add_option("--threads", threads, "worker threads for the executor (0 or none: all cores)")->check(CLI::Range(0, 4096));
  run->footer(kRunExamples);
  std::function<int()> tuneAction = tawa::tune::addTuneCommand(app);

  Common compileCommon;
  WsFlags compileWs;
  std::string emit = "ws", compileOut;
  auto* compile = app.add_subcommand("compile", "warp-specialize a kernel and print the IR after a stage");
  addCommon(compile, compileCommon);
  addWsFlags(compile, compileWs);
  addCudaFlags(compile, compileWs, false);
  compile->add_option("--emit", emit,
                      "ws: after warp specialization (arefs); nv: after lowering (mbarriers, TMA, wgmma); with --target: "
                      "cuda, ptx or cubin")
      ->default_val("ws");
  compile->add_option("-o", compileOut, "write the IR to this file instead of stdout");
  std::string compileTarget;
  bool resourceUsage = false;
  compile->add_option("--target", compileTarget, "compile for a GPU: sm_90a (with --emit cuda, ptx or cubin)");
  compile->add_flag("--resource-usage", resourceUsage, "compile and print registers, shared memory, spills and stack per kernel");
  compile->footer(R"(
Examples:
  tawa compile examples/matmul_desc.tir --emit ws --explain
  tawa compile examples/matmul_desc.tir --emit nv --depth 3 --mma-depth 1
  tawa compile examples/matmul_desc_128.tir --consumers 2 --target sm_90a --emit cubin -o gemm.cubin --resource-usage
  tawa compile examples/softmax.tir --target sm_90a --emit cuda --explain   # no tile.dot: a SIMT kernel
  tawa compile examples/matmul.py --kernel matmul_kernel --target sm_90a --emit cuda \
    --spec 'a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=512, N:i32=512, K:i32=190, stride_am:i32=190,
            stride_ak:i32=1, stride_bk:i32=512, stride_bn:i32=1, stride_cm:i32=512, stride_cn:i32=1, BLOCK_M=128,
            BLOCK_N=128, BLOCK_K=64, GROUP_M=8'   # rows of 380 bytes: A's tiles moved by threads (a note says so)

Tensor maps TMA cannot take (a row stride or base not 16-byte aligned, a column stride other than 1)
become tile maps, copied by threads; with the spec's values that is decided here, else at each launch.
TAWA_NO_TMA=1 makes every map a tile map (for tests, and to tell a TMA fault from the kernel's own);
TAWA_SIMT=1 emits the SIMT kernel even where warp specialization succeeds (for tests of that path, and
to tell a fault of the warp-specialized path from the kernel's own; a warning says so).
)");

  Common checkCommon;
  WsFlags checkWs;
  std::string checkGrid, inject;
  int seeds = 16;
  uint64_t checkSeed = 0;
  auto* check = app.add_subcommand("check", "warp-specialize and lower a kernel, run it on the CPU over many interleavings, "
                                            "and compare with the kernel as written");
  addCommon(check, checkCommon);
  addWsFlags(check, checkWs);
  check->add_option("--grid", checkGrid, "launch grid, as for tawa run");
  check->add_option("--seeds", seeds, "interleavings to explore (scheduler seeds 1..N)")->default_val(16)->check(CLI::Range(1, 100000));
  auto* checkSeedOpt = check->add_option("--data-seed", checkSeed, "seed of the random inputs (default: fresh, printed)");
  std::string faults;
  for (auto& f : transforms::lowerArefFaults()) faults += (faults.empty() ? "" : ", ") + f;
  std::string emitFaultList;
  for (auto& f : cuda::emitterFaults()) emitFaultList += (emitFaultList.empty() ? "" : ", ") + f;
  check->add_option("--inject", inject,
                    "break the lowering on purpose: " + faults + "; or, with --backend emu, the emitted CUDA kernel: " + emitFaultList);
  std::string checkBackend = "exec";
  check->add_option("--backend", checkBackend,
                    "exec: the lowered IR on the CPU executor over many interleavings; emu: the CUDA kernel emitted for sm_90a "
                    "(the consumers' ping-pong included) on the CPU emulator under many thread schedules")
      ->default_val("exec");
  check->add_flag("--no-ping-pong", checkWs.noPingPong,
                  "with --backend emu: attention with two cooperative consumers without the turns they take issuing their MMAs");
  check->footer(R"(
Exit status 0 only when every seed agrees with the unspecialized kernel and nothing was detected.

Examples:
  tawa check examples/matmul_desc.tir --spec 'a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=256, N:i32=192,
    K:i32=320, stride_am:i32=320, stride_ak:i32=1, stride_bk:i32=192, stride_bn:i32=1, stride_cm:i32=192,
    stride_cn:i32=1' --grid 'cdiv(M, 64), cdiv(N, 64)' --seeds 16 --depth 3 --mma-depth 1
  tawa check examples/matmul_desc.tir --spec '...' --grid '...' --inject skip-release
  # The CUDA kernel itself on the CPU emulator: two consumers taking turns (ping-pong), 8 schedules
  tawa check examples/attention.py --kernel attn_fwd --spec 'Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D],
    Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=1, H:i32=1, R=256, D=64, N_CTX=256, HEAD_DIM=64, BLOCK_M=128,
    BLOCK_N=64, CAUSAL=True' --grid '2, 1' --consumers 2 --backend emu --seeds 8
)");

  std::function<int()> profileAction;
  tawa::cli::addProfileCommand(app, profileAction);

  if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "opt" && std::string(argv[1]) != "run" && std::string(argv[1]) != "compile" && std::string(argv[1]) != "check" &&
      std::string(argv[1]) != "profile" && std::string(argv[1]) != "tune") {
    std::cerr << "tawa: unknown command '" << argv[1] << "' (commands: opt, run, compile, check, profile, tune; see tawa --help)\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 1;
  }
  if (seedOpt->count() == 0) seed = std::random_device{}();

  if (profileAction) return profileAction();
  return tawa::cli::reportErrors([&]() -> int {
    if (app.got_subcommand("tune")) return tuneAction();
    if (compile->parsed()) {
      if (!compileTarget.empty() && compile->get_option("--emit")->count() == 0) emit = "cuda";
      return cmdCompile(compileCommon, compileWs, emit, compileOut, compileTarget, resourceUsage);
    }
    if (check->parsed())
      return cmdCheck(checkCommon, checkWs, checkGrid, seeds, inject, checkSeedOpt->count() ? checkSeed : seed, checkBackend);
    if (opt->parsed()) return cmdOpt(common, passes, printAfterAll, timePasses, noLoc, out, optWs);
    if (run->parsed()) return cmdRun(runCommon, grid, loads, save, seed, backend, threads, runWs, reps, warmup, checkMode);
    return 0;
  });
}
