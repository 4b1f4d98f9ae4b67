// `tawa profile`: the kernel profiled per warp group, its summary, advice and Chrome trace, through
// the library API (tawa::Kernel::profile on the inputs Kernel::inputs makes; --backend cuda on
// copies of them made on GPU 0 by tawa::toDevice).
#include "ProfileCli.h"

#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostic.h"
#include "profile/ProfileCommand.h"
#include "tawa/tawa.h"
#include "transforms/PassOptions.h"

namespace tawa::cli {

namespace {

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

struct Flags {
  std::string file, kernel, spec, grid, out;
  std::vector<std::string> importDirs;
  bool json = false;
  profile::ProfileOptions opt;
};

// What the action prints and writes, from either path.
struct Report {
  std::string kernel, summary, json, trace;
};

Report profileThroughApi(const Flags& f) {
  tawa::Options ko;
  ko.depth = f.opt.ws.depth, ko.mmaDepth = f.opt.ws.mmaDepth, ko.consumers = f.opt.ws.consumers;
  ko.keepProgramOrder = f.opt.ws.keepProgramOrder, ko.sharedRing = f.opt.ws.sharedRing;
  ko.profileCapacity = f.opt.profileCapacity;
  ko.profileEvents = static_cast<int>(f.opt.eventsPerBlock);
  if (f.opt.backend == "cuda") tawa::gpu();  // without a driver or a Hopper GPU: its error, before any work
  const tawa::Kernel k = tawa::Kernel::load(f.file, f.kernel, f.spec, ko);
  tawa::Inputs in = k.inputs(f.grid, f.opt.dataSeed);
  tawa::RunOptions ro;
  ro.seed = f.opt.seed, ro.threads = f.opt.threads;
  tawa::ProfileReport rep;
  if (f.opt.backend == "cuda") {  // on buffers made on GPU 0 from the same inputs
    const tawa::DeviceInputs dev = tawa::toDevice(in);
    rep = k.profile(tawa::Backend::Cuda, dev.args, dev.grid, ro);
  } else {
    rep = k.profile(f.opt.backend == "emu" ? tawa::Backend::Emu : tawa::Backend::Exec, in.args, in.grid, ro);
  }
  return {k.name(), std::move(rep.summary), std::move(rep.json), std::move(rep.trace)};
}

int run(Flags& f) {
  if (f.opt.backend != "exec" && f.opt.backend != "emu" && f.opt.backend != "cuda")
    throw UserError(where("--backend"), "unknown backend '" + f.opt.backend + "'", "backends: exec, emu, cuda");
  if (f.spec.empty()) throw UserError(where("<spec>"), "tawa profile needs --spec");
  if (f.grid.empty()) throw UserError(where("<grid>"), "tawa profile needs --grid");
  driver::parseSpec(f.spec);  // the spec's own errors, as a launch needs it (shapes and values given)
  const Report r = profileThroughApi(f);
  const std::string out = f.out.empty() ? r.kernel + ".trace.json" : f.out;
  {
    std::ofstream os(out);
    if (!os) throw UserError(where(out), "cannot write the trace file");
    os << r.trace;
  }
  if (f.json) {
    auto j = nlohmann::json::parse(r.json);
    j["trace"] = out;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << r.summary << (f.opt.backend == "cuda" ? "trace: " : "trace (modelled): ") << out
              << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  return 0;
}

}  // namespace

void addProfileCommand(CLI::App& app, std::function<int()>& action) {
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
  c->add_flag("--keep-program-order", f->opt.ws.keepProgramOrder, "launch programs in their order as written (as tawa compile)");
  c->add_flag("--shared-ring", f->opt.ws.sharedRing, "one aref ring for all of a loop's loads (as tawa compile)");
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
    action = [f]() -> int { return reportErrors([&] { return run(*f); }); };
  });
}

int reportErrors(const std::function<int()>& command) {
  try {
    return command();
  } catch (const UserError& e) {
    std::cerr << e.format() << "\n";
    return 1;
  } catch (const tawa::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const InternalError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace tawa::cli
