#include "backends/cuda/Compiler.h"

#include "backends/cuda/BuildCache.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
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

// libnvrtc, opened once: the toolkit's lib64 first, then the loader's search path.
struct Nvrtc {
  using Prog = void*;
  int (*create)(Prog*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Prog, int, const char* const*) = nullptr;
  int (*ptxSize)(Prog, size_t*) = nullptr;
  int (*ptx)(Prog, char*) = nullptr;
  int (*logSize)(Prog, size_t*) = nullptr;
  int (*log)(Prog, char*) = nullptr;
  int (*destroy)(Prog*) = nullptr;
  int (*version)(int*, int*) = nullptr;
  std::string ver, error;
};

const Nvrtc& nvrtc(const std::string& root) {
  static std::once_flag once;
  static Nvrtc n;
  std::call_once(once, [&] {
    void* h = nullptr;
    std::string tried;
    // libnvrtc opens its builtins library by soname when it compiles; on a machine whose loader does
    // not know the toolkit's lib64 that fails ("failed to open libnvrtc-builtins.so.13.0"). Loaded
    // first from the toolkit tawa found, the soname is already resolved then.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root + "/lib64", ec)) {
      std::string f = e.path().filename().string();
      if (f.rfind("libnvrtc-builtins.so.", 0) == 0 && f.find(".alt.") == std::string::npos && std::count(f.begin(), f.end(), '.') == 3)
        dlopen(e.path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
    for (const std::string& name : {root + "/lib64/libnvrtc.so.13", root + "/lib64/libnvrtc.so", std::string("libnvrtc.so.13"),
                                    std::string("libnvrtc.so")}) {
      if ((h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      tried += (tried.empty() ? "" : ", ") + name;
    }
    if (!h) {
      n.error = "libnvrtc not found (tried " + tried + ")";
      return;
    }
    auto sym = [&](auto& fn, const char* s) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, s));
      if (!fn && n.error.empty()) n.error = std::string("libnvrtc lacks ") + s;
    };
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.ptxSize, "nvrtcGetPTXSize");
    sym(n.ptx, "nvrtcGetPTX");
    sym(n.logSize, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.version, "nvrtcVersion");
    int major = 0, minor = 0;
    if (n.error.empty() && n.version(&major, &minor) == 0) n.ver = std::to_string(major) + "." + std::to_string(minor);
    else if (n.error.empty()) n.error = "nvrtcVersion failed";
  });
  return n;
}

// CUDA C++ -> PTX with NVRTC, primitives.cuh handed over as an in-memory header. Returns false with
// the program log in *log when the source does not compile.
bool nvrtcToPtx(const Nvrtc& n, const std::string& source, const std::string& header, const std::string& arch,
                const std::string& includeDir, std::string* ptx, std::string* log) {
  Nvrtc::Prog prog = nullptr;
  const char* headers[] = {header.c_str()};
  const char* names[] = {"primitives.cuh"};
  if (n.create(&prog, source.c_str(), "kernel.cu", 1, headers, names) != 0) {
    *log = "nvrtcCreateProgram failed";
    return false;
  }
  std::string archOpt = "--gpu-architecture=compute_" + arch.substr(arch.rfind('_') + 1), inc = "-I" + includeDir;
  const char* opts[] = {archOpt.c_str(), "-std=c++17", inc.c_str()};
  int rc = n.compile(prog, 3, opts);
  size_t size = 0;
  n.logSize(prog, &size);
  log->assign(size, '\0');
  if (size) n.log(prog, log->data());
  while (!log->empty() && log->back() == '\0') log->pop_back();
  if (rc == 0) {
    n.ptxSize(prog, &size);
    ptx->assign(size, '\0');
    n.ptx(prog, ptx->data());
    while (!ptx->empty() && ptx->back() == '\0') ptx->pop_back();
  }
  n.destroy(&prog);
  return rc == 0;
}


}  // namespace

std::string nvrtcVersion(std::string* why) {
  const Nvrtc& n = nvrtc(findToolkit().root);
  if (why) *why = n.error;
  return n.ver;
}

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

namespace {
std::string& primitivesOverride() {
  static std::string dir;
  return dir;
}
}  // namespace

void setPrimitivesDir(const std::string& dir) { primitivesOverride() = dir; }

std::string primitivesDir() {
  if (!primitivesOverride().empty()) return primitivesOverride();
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
  std::string frontend = opt.frontend, from = "CompileOptions::frontend";
  if (const char* e = std::getenv("TAWA_CUDA_FRONTEND"); frontend == "auto" && e && *e) frontend = e, from = "TAWA_CUDA_FRONTEND";
  if (frontend != "auto" && frontend != "nvrtc" && frontend != "nvcc")
    throw UserError(where(from), "unknown CUDA front end '" + frontend + "'", "nvrtc, nvcc or auto");
  const Nvrtc& rtc = nvrtc(tk.root);
  bool useNvrtc = frontend != "nvcc" && rtc.error.empty();
  if (frontend == "nvrtc" && !useNvrtc)
    throw UserError(where(from), "NVRTC is not available: " + rtc.error, "use nvcc (TAWA_CUDA_FRONTEND=nvcc)");

  CompiledModule cm;
  cm.frontend = useNvrtc ? "nvrtc" : "nvcc";
  cm.key = contentHash(source + '\0' + (useNvrtc ? "nvrtc " + rtc.ver + " -std=c++17" : flags) + '\0' + tk.version + '\0' + header +
                       '\0' + opt.arch);
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
    cm.frontend = readFile(dir / "frontend");
  };
  if (opt.useCache && fs::exists(dir / "kernel.cubin") && fs::exists(dir / "ptxas.log")) {
    load(true);
    return cm;
  }

  StagingDir staging(root, cm.key);
  const fs::path& tmp = staging.path();
  // The build reads the very header that was hashed: a copy travels with the entry.
  writeFile(tmp / "primitives.cuh", header);
  writeFile(tmp / "kernel.cu", source);

  auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  if (useNvrtc) {
    std::string ptx, log;
    bool built = nvrtcToPtx(rtc, source, header, opt.arch, (fs::path(tk.root) / "include").string(), &ptx, &log);
    cm.nvccSeconds = secondsSince(t0);
    writeFile(tmp / "nvrtc.log", log);
    if (!built) throw UserError(where((tmp / "kernel.cu").string()), "NVRTC failed:\n" + tailOf(log, 4000));
    writeFile(tmp / "kernel.ptx", ptx);
  } else {
    std::string nvcc = shellQuote(tk.nvcc) + flags + " -ptx -I" + shellQuote(tmp.string()) + " " + shellQuote((tmp / "kernel.cu").string()) +
                       " -o " + shellQuote((tmp / "kernel.ptx").string());
    rc = run(nvcc, tmp / "nvcc.log");
    cm.nvccSeconds = secondsSince(t0);
    if (rc != 0)
      throw UserError(where((tmp / "kernel.cu").string()), "nvcc failed (exit " + std::to_string(rc) + "):\n" +
                                                               tailOf(readFile(tmp / "nvcc.log"), 4000));
  }
  writeFile(tmp / "frontend", cm.frontend);
  t0 = std::chrono::steady_clock::now();
  std::string ptxas = shellQuote(tk.ptxas) + " -arch=" + opt.arch + " -O3 -v " + shellQuote((tmp / "kernel.ptx").string()) + " -o " +
                      shellQuote((tmp / "kernel.cubin").string());
  rc = run(ptxas, tmp / "ptxas.log");
  cm.ptxasSeconds = secondsSince(t0);
  if (rc != 0)
    throw UserError(where((tmp / "kernel.ptx").string()), "ptxas failed (exit " + std::to_string(rc) + "):\n" +
                                                              tailOf(readFile(tmp / "ptxas.log"), 4000));

  // Publish: one rename. If another process published the same key first, theirs is as good.
  staging.publish(dir, "kernel.cubin", "the compiled kernel");
  load(false);
  return cm;
}

}  // namespace tawa::cuda
