#include "backends/cuda/Compiler.h"

#include "backends/cuda/BuildCache.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>

#include "ir/Diagnostic.h"

namespace tawa::cuda {

namespace fs = std::filesystem;

namespace {

Location where(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }


// Runs a shell command with its output in `log`; returns the exit status.
int run(const std::string& cmd, const fs::path& log) {
  int rc = std::system((cmd + " > " + shellQuote(log.string()) + " 2>&1").c_str());
  return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


}  // namespace

const Toolkit& findToolkit() {
  static std::mutex mu;
  static Toolkit tk;
  std::lock_guard<std::mutex> lock(mu);
  if (!tk.nvcc.empty()) return tk;
  const char* home = std::getenv("CUDA_HOME");
  fs::path root = home && *home ? fs::path(home) : fs::path("/usr/local/cuda");
  fs::path nvcc = root / "bin" / "nvcc", ptxas = root / "bin" / "ptxas";
  if (access(nvcc.c_str(), X_OK) != 0 || access(ptxas.c_str(), X_OK) != 0)
    throw UserError(where(root.string()), "no CUDA toolkit: " + nvcc.string() + " or " + ptxas.string() + " is missing",
                    "install the CUDA 12.4+ toolkit there, or point CUDA_HOME at it");
  Toolkit t;
  t.root = root.string();
  t.nvcc = nvcc.string();
  t.ptxas = ptxas.string();
  t.version = capture(shellQuote(t.nvcc) + " --version") + capture(shellQuote(t.ptxas) + " --version");
  tk = t;
  return tk;
}

std::string primitivesDir() {
  if (const char* d = std::getenv("TAWA_CUDA_INCLUDE"); d && *d) return d;
  return fs::path(__FILE__).parent_path().string();
}

std::vector<ResourceUsage> parsePtxasVerbose(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex props(R"(Function properties for ([^\s]+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<ResourceUsage> out;
  std::string propsFor;
  std::istringstream in(log);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, entry)) {
      out.emplace_back();
      out.back().kernel = m[1];
      propsFor.clear();
    } else if (std::regex_search(line, m, props)) {
      propsFor = m[1];
    } else if (std::regex_search(line, m, frame)) {
      // Stack and spills belong to the kernel being compiled (not to a device function it calls).
      if (!out.empty() && propsFor == out.back().kernel) {
        out.back().stack = std::stoll(m[1]);
        out.back().spillStores = std::stoll(m[2]);
        out.back().spillLoads = std::stoll(m[3]);
      }
    } else if (std::regex_search(line, m, used) && !out.empty()) {
      out.back().registers = std::stoi(m[1]);
      if (std::regex_search(line, m, bars)) out.back().barriers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) out.back().staticSmem = std::stoll(m[1]);
    }
  }
  return out;
}

CompiledModule compile(const std::string& source, const CompileOptions& opt) {
  const Toolkit& tk = findToolkit();
  fs::path inc = primitivesDir();
  bool ok = false;
  std::string header = readFile(inc / "primitives.cuh", &ok);
  if (!ok)
    throw UserError(where((inc / "primitives.cuh").string()), "cannot read the CUDA primitives header",
                    "set TAWA_CUDA_INCLUDE to the folder holding primitives.cuh");
  std::string flags;
  for (const auto& f : opt.nvccFlags) flags += " " + f;
  flags += " -arch=" + opt.arch;

  CompiledModule cm;
  cm.key = contentHash(source + '\0' + flags + '\0' + tk.version + '\0' + header);
  fs::path root = cacheRoot(opt.cacheDir) / "cuda";
  fs::path dir = root / cm.key;
  cm.dir = dir.string();
  cm.sourcePath = (dir / "kernel.cu").string();
  cm.ptxPath = (dir / "kernel.ptx").string();
  cm.cubinPath = (dir / "kernel.cubin").string();
  auto load = [&](bool hit) {
    cm.ptx = readFile(cm.ptxPath);
    cm.ptxasLog = readFile(dir / "ptxas.log");
    cm.usage = parsePtxasVerbose(cm.ptxasLog);
    cm.cacheHit = hit;
  };
  if (opt.useCache && fs::exists(dir / "kernel.cubin") && fs::exists(dir / "ptxas.log")) {
    load(true);
    return cm;
  }

  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw UserError(where(root.string()), "cannot create the cache directory: " + ec.message());
  std::random_device rd;
  fs::path tmp = root / ("tmp-" + cm.key.substr(0, 8) + "-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(tmp, ec);
  if (ec) throw UserError(where(tmp.string()), "cannot create a build directory: " + ec.message());
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code e;
      if (!p.empty()) fs::remove_all(p, e);
    }
  } cleanup{tmp};
  // The build reads the very header that was hashed: a copy travels with the entry.
  writeFile(tmp / "primitives.cuh", header);
  writeFile(tmp / "kernel.cu", source);

  auto t0 = std::chrono::steady_clock::now();
  std::string nvcc = shellQuote(tk.nvcc) + flags + " -ptx -I" + shellQuote(tmp.string()) + " " + shellQuote((tmp / "kernel.cu").string()) + " -o " +
                     shellQuote((tmp / "kernel.ptx").string());
  int rc = run(nvcc, tmp / "nvcc.log");
  cm.nvccSeconds = secondsSince(t0);
  if (rc != 0)
    throw UserError(where((tmp / "kernel.cu").string()), "nvcc failed (exit " + std::to_string(rc) + "):\n" +
                                                             tailOf(readFile(tmp / "nvcc.log"), 4000));
  t0 = std::chrono::steady_clock::now();
  std::string ptxas = shellQuote(tk.ptxas) + " -arch=" + opt.arch + " -O3 -v " + shellQuote((tmp / "kernel.ptx").string()) + " -o " +
                      shellQuote((tmp / "kernel.cubin").string());
  rc = run(ptxas, tmp / "ptxas.log");
  cm.ptxasSeconds = secondsSince(t0);
  if (rc != 0)
    throw UserError(where((tmp / "kernel.ptx").string()), "ptxas failed (exit " + std::to_string(rc) + "):\n" +
                                                              tailOf(readFile(tmp / "ptxas.log"), 4000));

  // Publish: one rename. If another process published the same key first, theirs is as good.
  fs::rename(tmp, dir, ec);
  if (ec) {
    if (!fs::exists(dir / "kernel.cubin"))
      throw UserError(where(dir.string()), "cannot publish the compiled kernel: " + ec.message());
  } else {
    cleanup.p.clear();
  }
  load(false);
  return cm;
}

}  // namespace tawa::cuda
