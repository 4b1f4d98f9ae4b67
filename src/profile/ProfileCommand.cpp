#include "profile/ProfileCommand.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <iostream>

#include "backends/cuda/Driver.h"
#include "backends/cuda/ProfileBuffer.h"
#include "backends/cuda/Runner.h"
#include "backends/emu/Emulator.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostic.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::profile {

namespace {

// The tuner parameters the advice speaks of: D and the consumer groups as asked, P as the pipeline chose.
Params tunerParams(const ProfileOptions& opt, const ir::Func& kernel) {
  Params p;
  p.depth = std::max(1, transforms::ringDepth(kernel));
  p.consumers = std::max(1, transforms::consumerRegions(kernel));
  ir::walk(kernel.body, [&](const ir::Op* op) {
    if (op->hasAttr("mma_depth")) p.mmaDepth = static_cast<int>(op->intAttr("mma_depth"));
  });
  return p;
}

Location where(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

const char* kExamples = R"(
Every time, rate and share printed here is modelled: the CPU executor runs the warp-specialized
kernel and tawa's cost model of an H200-class SM (src/profile/CostModel.h) times each warp group's
ops (TMA latency and bandwidth, wgmma throughput, mbarrier costs, arithmetic). The trace is a
Chrome trace JSON: open it in https://ui.perfetto.dev or chrome://tracing.

Examples:
  tawa profile examples/matmul_desc.tir --spec 'a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=256, N:i32=256,
    K:i32=512, stride_am:i32=512, stride_ak:i32=1, stride_bk:i32=256, stride_bn:i32=1, stride_cm:i32=256,
    stride_cn:i32=1' --grid 'cdiv(M, 64), cdiv(N, 64)' --depth 3 -o gemm.trace.json
  tawa profile ... --json          # the same summary and advice as JSON on stdout
  tawa profile ... --backend emu   # the emitted CUDA kernel's own --profile records, on the CPU emulator
                                   # (its clock64 is modelled by the same cost model)
  tawa profile ... --backend cuda  # the same on GPU 0 (clock64 measured); without a GPU: exit 1
)";

double bufferBytes(const driver::Bound& input) {
  double bytes = 0;
  for (const auto& b : input.buffers) bytes += static_cast<double>(b.data.size());  // each buffer moved once
  return bytes;
}

}  // namespace

ProfileResult summarizeRecords(std::vector<BlockTrace> traces, const driver::LoadedKernel& ws, const driver::Spec& spec, double bytes,
                               double executedFlops, bool gpu, const ProfileOptions& opt) {
  const double flops = cuda::dotFlops(*ws.module, spec).value_or(executedFlops);
  ProfileResult res;
  res.recorder = std::make_unique<Recorder>(opt.model, static_cast<size_t>(opt.profileCapacity));
  const double n = std::max<double>(1, static_cast<double>(traces.size()));
  for (auto& t : traces) res.recorder->adopt(std::move(t), flops / n, bytes / n);
  res.recorder->finish();
  res.summary = summarize(*res.recorder, ws.kernel->name, tunerParams(opt, *ws.kernel));
  res.summary.timedBy = "the CPU emulator's clock (the --profile kernel's own records; tawa's cost model advances the clock)";
  if (gpu) {
    res.summary.modelled = false;
    res.summary.timedBy = "GPU 0's clock64 within blocks and %globaltimer between them (the --profile kernel's own records)";
  }
  res.summary.capacityFlag = "--profile-capacity";
  res.summary.tensorCoreSeen = false;
  res.advice = advise(res.summary);
  return res;
}

namespace {

// --backend cuda: the runner compiles, launches once checked against the executor, and decodes the
// kernel's records (clock64 measured).
ProfileResult profileOnGpu(const std::string& path, const std::string& kernel, const driver::Spec& spec, const std::string& grid,
                           const ProfileOptions& opt) {
  cuda::Driver::get();  // without a driver or a GPU: the runner's error, before any work
  auto ws = driver::specialize(path, kernel, spec, opt.ws, "nv");
  auto input = driver::bind(*ws.kernel, spec, grid, opt.dataSeed);
  std::vector<BlockTrace> traces;
  cuda::GpuRunOptions g;
  g.file = path, g.kernel = kernel, g.grid = grid, g.seed = opt.dataSeed, g.ws = opt.ws, g.threads = opt.threads;
  g.reps = 1, g.warmup = 0;
  g.profile = true, g.profileCapacity = opt.profileCapacity, g.profileTraces = &traces;
  g.spec = opt.specText;
  std::ostringstream log;
  cuda::runOnGpu(g, log);
  return summarizeRecords(std::move(traces), ws, spec, bufferBytes(input), 0, true, opt);
}

}  // namespace

ProfileResult profileBound(const driver::LoadedKernel& ws, const driver::Spec& spec, driver::Bound& input, const ProfileOptions& opt) {
  if (opt.backend == "emu") {  // the kernel's own --profile records on the emulator (modelled clock)
    cuda::EmitOptions eo;
    eo.profile = true;
    eo.profileCapacity = opt.profileCapacity;
    cuda::EmitResult er = cuda::emitCudaKernel(*ws.module, *ws.kernel, eo);
    emu::Options o;
    o.model = opt.model;
    emu::LaunchStats st = emu::launch(er, input.args, input.buffers, input.grid, o);
    auto traces = cuda::decodeProfile(er.profile, st.profile.data(), st.profile.size(), cuda::launchGrid(er, input.grid), opt.model.clockGHz);
    // the work of the wgmma it ran serves when the spec does not say M, N and K
    return summarizeRecords(std::move(traces), ws, spec, bufferBytes(input), st.mmaFlops, false, opt);
  }
  if (opt.backend != "exec")
    throw UserError(where("--backend"), "unknown backend '" + opt.backend + "'", "backends: exec, emu, cuda");
  ProfileResult res;
  res.recorder = std::make_unique<Recorder>(opt.model, opt.eventsPerBlock);
  exec::LaunchOptions lo;
  lo.grid = input.grid;
  lo.seed = opt.seed;
  lo.threads = opt.threads;
  lo.recorder = res.recorder.get();
  exec::launch(*ws.module, *ws.kernel, input.args, input.buffers, lo);
  res.recorder->finish();
  res.summary = summarize(*res.recorder, ws.kernel->name, tunerParams(opt, *ws.kernel));
  res.advice = advise(res.summary);
  return res;
}

ProfileResult profileKernel(const std::string& path, const std::string& kernel, const driver::Spec& spec,
                            const std::string& grid, const ProfileOptions& opt) {
  if (opt.backend == "cuda") return profileOnGpu(path, kernel, spec, grid, opt);
  if (opt.backend != "exec" && opt.backend != "emu")
    throw UserError(where("--backend"), "unknown backend '" + opt.backend + "'", "backends: exec, emu, cuda");
  auto ws = driver::specialize(path, kernel, spec, opt.ws, "nv");
  auto input = driver::bind(*ws.kernel, spec, grid, opt.dataSeed);
  return profileBound(ws, spec, input, opt);
}

void writeTrace(std::ostream& os, const ProfileResult& res, const std::string& backend) {
  TraceMeta meta;
  meta.kernel = res.summary.kernel;
  meta.device = res.summary.device;
  meta.cyclesPerUs = res.recorder->model().cyclesPerUs();
  if (backend == "emu")
    meta.note = "modelled: the kernel's own --profile records, timed by the CPU emulator's clock (tawa's cost model), not by a GPU";
  if (backend == "cuda") {
    meta.modelled = false;
    meta.note = "measured on GPU 0: clock64 within a block, %globaltimer between blocks; cycles shown at 1.98 GHz";
  }
  writeChromeTrace(os, res.recorder->traces(), meta);
}

void addProfileCommand(CLI::App& app, std::function<int()>& action) {
  struct Flags {
    std::string file, kernel, spec, grid, backend = "exec", out;
    std::vector<std::string> importDirs;
    bool json = false;
    ProfileOptions opt;
  };
  auto f = std::make_shared<Flags>();
  auto* c = app.add_subcommand("profile", "warp-specialize a kernel, run it on the CPU executor timed by a cost model "
                                          "(modelled), write a Chrome trace and print where each role waited, with advice");
  c->add_option("FILE", f->file, "kernel file: .tir (tile IR) or .py (Triton)")->required();
  c->add_option("--kernel,-k", f->kernel, "kernel (function) name; default: the file's first");
  c->add_option("--spec", f->spec, "launch spec (argument types, shapes, constexprs), as for tawa run");
  c->add_option("-I", f->importDirs, frontend::kImportDirHelp)->each([](const std::string& d) { frontend::addImportDir(d); })->check(CLI::ExistingDirectory);
  c->add_option("--grid", f->grid, "launch grid, as for tawa run");
  c->add_option("--backend", f->opt.backend,
                 "exec: the CPU executor timed by the cost model; emu: the kernel's own --profile records on the CPU emulator "
                 "(modelled clock); cuda: the same on GPU 0")
      ->default_val("exec");
  c->add_option("-o", f->out, "trace file (Chrome trace JSON); default: KERNEL.trace.json");
  c->add_flag("--json", f->json, "print the summary and advice as JSON on stdout");
  c->add_option("--depth,-D", f->opt.ws.depth, "aref depth D: slots per ring, 1 to 8, or auto (as tawa compile)")
      ->transform(CLI::Validator(transforms::depthFlag, "auto|1..8"))
      ->default_str("auto");
  c->add_option("--mma-depth,-P", f->opt.ws.mmaDepth, "MMA depth P: async MMA groups in flight before a slot is released")
      ->default_val(1)
      ->check(CLI::Range(0, 4));
  c->add_option("--consumers", f->opt.ws.consumers, "consumer warp groups: 1, 2 cooperative ones, or auto (as tawa compile)")
      ->transform(CLI::Validator(transforms::consumersFlag, "auto|1|2"))
      ->default_str("auto");
  c->add_option("--events-per-block", f->opt.eventsPerBlock, "capacity of each block's event buffer (lost events are counted)")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 24));
  c->add_option("--profile-capacity", f->opt.profileCapacity,
                "emu, cuda: events per warp group in the kernel's shared-memory ring (older events are lost, and counted)")
      ->default_val(256)
      ->check(CLI::Range(1, 65536));
  c->add_option("--seed", f->opt.seed, "scheduler seed of the executor run")->default_val(1);
  c->add_option("--data-seed", f->opt.dataSeed, "seed of the random inputs")->default_val(1);
  c->add_option("--threads", f->opt.threads, "worker threads for the executor (0, the default: all cores)")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  c->footer(kExamples);
  c->callback([f, &action] {
    action = [f]() -> int {
      try {
        if (f->opt.backend != "exec" && f->opt.backend != "emu" && f->opt.backend != "cuda")
          throw UserError(where("--backend"), "unknown backend '" + f->opt.backend + "'", "backends: exec, emu, cuda");
        if (f->spec.empty()) throw UserError(where("<spec>"), "tawa profile needs --spec");
        if (f->grid.empty()) throw UserError(where("<grid>"), "tawa profile needs --grid");
        auto spec = driver::parseSpec(f->spec);
        f->opt.specText = f->spec;
        auto res = profileKernel(f->file, f->kernel, spec, f->grid, f->opt);
        std::string out = f->out.empty() ? res.summary.kernel + ".trace.json" : f->out;
        {
          std::ofstream os(out);
          if (!os) throw UserError(where(out), "cannot write the trace file");
          writeTrace(os, res, f->opt.backend);
        }
        if (f->json) {
          auto j = toJson(res.summary, res.advice);
          j["trace"] = out;
          std::cout << j.dump(2) << "\n";
        } else {
          printSummary(std::cout, res.summary, res.advice);
          std::cout << (f->opt.backend == "cuda" ? "trace: " : "trace (modelled): ") << out << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
        }
        return 0;
      } catch (const UserError& e) {
        std::cerr << e.format() << "\n";
        return 1;
      }
    };
  });
}

}  // namespace tawa::profile
