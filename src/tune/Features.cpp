#include "tune/Features.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ir/Diagnostic.h"
#include "tune/Measure.h"
#include "tune/SpaceJson.h"

namespace tawa::tune {

namespace {

// Instruction classes, by opcode.
const std::map<std::string, std::string>& opcodeClass() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> r;
    for (auto* o : {"add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor"}) r[o] = "int_arith";
    for (auto* o : {"udiv", "sdiv", "urem", "srem"}) r[o] = "int_div";
    for (auto* o : {"fadd", "fsub", "fmul", "fneg"}) r[o] = "fp_arith";
    for (auto* o : {"fdiv", "frem"}) r[o] = "fp_div";
    r["load"] = "load";
    r["store"] = "store";
    r["alloca"] = "alloca";
    r["getelementptr"] = "address";
    for (auto* o : {"atomicrmw", "cmpxchg", "fence"}) r[o] = "atomic";
    for (auto* o : {"icmp", "fcmp"}) r[o] = "compare";
    for (auto* o : {"br", "switch", "indirectbr"}) r[o] = "branch";
    r["phi"] = "phi";
    r["select"] = "select";
    for (auto* o : {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "ptrtoint",
                    "inttoptr", "bitcast", "addrspacecast"})
      r[o] = "cast";
    for (auto* o : {"extractelement", "insertelement", "shufflevector"}) r[o] = "vector";
    r["call"] = "call";
    r["invoke"] = "call";
    r["ret"] = "return";
    return r;
  }();
  return m;
}

const std::vector<std::string>& classes() {
  static const std::vector<std::string> c = {"int_arith", "int_div", "fp_arith", "fp_div",  "load",   "store",  "alloca",
                                             "address",   "atomic",  "compare",  "branch",  "phi",    "select", "cast",
                                             "vector",    "call",    "math",     "return",  "other"};
  return c;
}

bool isSkeletonFunction(const std::string& mangled) {
  // Clang mangles a lambda's closure type as Ul<parameters>E<n>_ (or $_<n> at namespace scope).
  size_t ul = mangled.find("Ul");
  return mangled.find("$_") != std::string::npos || (ul != std::string::npos && mangled.find("E_", ul) != std::string::npos);
}

std::string guessKind(const std::string& ir) {
  // The most specific skeleton first: a pipeline or a graph also contains parallel_for-like machinery.
  if (ir.find("parallel_pipeline") != std::string::npos) return "parallel_pipeline";
  if (ir.find("5graph") != std::string::npos && ir.find("flow") != std::string::npos) return "flow_graph";
  if (ir.find("start_scan") != std::string::npos || ir.find("sum_node") != std::string::npos) return "parallel_scan";
  if (ir.find("quick_sort") != std::string::npos) return "parallel_sort";
  if (ir.find("start_reduce") != std::string::npos || ir.find("start_deterministic_reduce") != std::string::npos)
    return "parallel_reduce";
  if (ir.find("start_for") != std::string::npos) return "parallel_for";
  return "other";
}

struct Counts {
  std::map<std::string, double> byClass;
  double total = 0, loops = 0, functions = 0, vectorTyped = 0;
};

void countFunction(const std::vector<std::string>& body, Counts& c) {
  c.functions += 1;
  for (auto& line : body) {
    if (line.size() < 3 || line[0] != ' ' || line[1] != ' ') continue;
    size_t p = 2;
    while (p < line.size() && line[p] == ' ') ++p;
    if (p >= line.size() || line[p] == ';' || line[p] == '!') continue;
    if (line[p] == '%') {
      size_t eq = line.find(" = ", p);
      if (eq == std::string::npos) continue;
      p = eq + 3;
    }
    std::string word;
    std::istringstream ws(line.substr(p));
    ws >> word;
    if (word == "tail" || word == "musttail" || word == "notail") ws >> word;
    std::string cls = "other";
    auto it = opcodeClass().find(word);
    if (it != opcodeClass().end()) cls = it->second;
    if (cls == "call") {
      auto at = line.find('@', p);
      if (at != std::string::npos) {
        std::string callee = line.substr(at + 1);
        callee = callee.substr(0, callee.find('('));
        if (callee.rfind("llvm.lifetime", 0) == 0 || callee.rfind("llvm.dbg", 0) == 0 ||
            callee.rfind("llvm.experimental.noalias", 0) == 0)
          continue;
        std::string base = callee.rfind("llvm.", 0) == 0 ? callee.substr(5) : callee;
        base = base.substr(0, base.find('.'));
        static const std::set<std::string> math = {"sqrt", "exp", "log", "fmuladd", "fma", "pow", "sin", "cos", "fabs", "erf",
                                                   "erfc", "sqrtf", "expf", "logf", "powf", "sinf", "cosf", "erff"};
        if (math.count(base)) cls = "math";
      }
    }
    if (line.find("!llvm.loop") != std::string::npos) c.loops += 1;
    if (line.find(" x ") != std::string::npos && line.find('<') != std::string::npos) c.vectorTyped += 1;
    c.byClass[cls] += 1;
    c.total += 1;
  }
}

// GPU device code (an nvptx or spir target triple): log(1 + n) of its shared-memory references
// (instructions naming addrspace(3)), constant-memory references (addrspace(4) on nvptx, 2 on spir),
// barriers (llvm.nvvm.barrier0 / bar.sync, OpenCL's barrier / work_group_barrier), thread and block index reads
// (llvm.nvvm.read.ptx.sreg.*, get_global_id and its kin), and whether it is OpenCL. Nothing for CPU code.
void addGpuFeatures(const std::string& ir, const std::vector<std::pair<std::string, std::vector<std::string>>>& fns, Features& f) {
  const bool nvptx = ir.find("target triple = \"nvptx") != std::string::npos;
  const bool spir = ir.find("target triple = \"spir") != std::string::npos;
  if (!nvptx && !spir) return;
  const std::string constant = nvptx ? "addrspace(4)" : "addrspace(2)";
  double shared = 0, constants = 0, barriers = 0, index = 0;
  for (auto& [name, body] : fns)
    for (auto& line : body) {
      if (line.size() < 3 || line[0] != ' ') continue;
      if (line.find("addrspace(3)") != std::string::npos) shared += 1;
      if (line.find(constant) != std::string::npos) constants += 1;
      if (line.find("call") == std::string::npos) continue;
      if (line.find("@llvm.nvvm.barrier") != std::string::npos || line.find("@llvm.nvvm.bar.") != std::string::npos ||
          line.find("@_Z7barrierj") != std::string::npos ||
          line.find("@_Z18work_group_barrierj") != std::string::npos)
        barriers += 1;
      for (const char* idx : {"@llvm.nvvm.read.ptx.sreg.", "@_Z13get_global_idj", "@_Z12get_local_idj", "@_Z12get_group_idj",
                              "@_Z14get_local_sizej", "@_Z14get_num_groupsj", "@_Z15get_global_sizej"})
        if (line.find(idx) != std::string::npos) index += 1;
    }
  f["gpu.log_shared_refs"] = std::log1p(shared);
  f["gpu.log_constant_refs"] = std::log1p(constants);
  f["gpu.log_barriers"] = std::log1p(barriers);
  f["gpu.log_index_reads"] = std::log1p(index);
  f["gpu.opencl"] = spir ? 1.0 : 0.0;
}

// What CUDA device code needs from CUDA's headers, which clang 14's CUDA mode cannot read in CUDA 13
// (so -nocudainc): the qualifiers, the index variables, __syncthreads and common math, declared only
// (the IR is counted, never linked). Included before the source.
const char* kCudaShim = R"(#pragma once
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __syncthreads() __nvvm_bar_sync(0)
#define __ldg(p) (*(p))
extern "C" {
__device__ float expf(float); __device__ double exp(double); __device__ float logf(float); __device__ double log(double);
__device__ float sqrtf(float); __device__ double sqrt(double); __device__ float rsqrtf(float); __device__ float powf(float, float);
__device__ double pow(double, double); __device__ float sinf(float); __device__ float cosf(float); __device__ double sin(double);
__device__ double cos(double); __device__ float fabsf(float); __device__ double fabs(double); __device__ float floorf(float);
__device__ float ceilf(float); __device__ double floor(double); __device__ double ceil(double); __device__ float tanhf(float);
__device__ float erff(float); __device__ float fminf(float, float); __device__ float fmaxf(float, float); __device__ float __expf(float);
__device__ float __logf(float); __device__ float __fdividef(float, float); __device__ float exp2f(float); __device__ float log2f(float);
}
static __device__ __inline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __inline__ int max(int a, int b) { return a > b ? a : b; }
)";

// Compiles `source` to textual LLVM IR with `cmd` (a clang command line missing its output), returns it.
std::string compileToIr(const std::string& source, const std::string& cmd, const std::string& what, const std::string& hint) {
  auto where = Location::at(std::make_shared<const std::string>(source), 0, 0);
  if (!std::ifstream(source)) throw UserError(where, "cannot read the source file for its features");
  std::string tmp = "/tmp/tawa-tune-features-" + std::to_string(::getpid()) + ".ll";
  RunResult r = runOnce(cmd + " -o '" + tmp + "'", 300);
  if (!r.ok) {
    std::remove(tmp.c_str());
    // The compiler's first error in the source itself, located there.
    const std::string key = source + ":";
    for (size_t at = r.detail.find(key); at != std::string::npos; at = r.detail.find(key, at + 1)) {
      int line = 0, col = 0, used = 0;
      if (std::sscanf(r.detail.c_str() + at + key.size(), "%d:%d: error: %n", &line, &col, &used) < 2 || !used) continue;
      size_t b = at + key.size() + static_cast<size_t>(used), e = r.detail.find('\n', b);
      throw UserError(Location::at(std::make_shared<const std::string>(source), line, col),
                      what + ": " + r.detail.substr(b, e == std::string::npos ? std::string::npos : e - b), hint);
    }
    throw UserError(where, what + " failed (" + r.detail + ")", hint);
  }
  std::ifstream f(tmp);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(tmp.c_str());
  if (ss.str().find("\ndefine ") == std::string::npos)
    throw UserError(where, "it defines no function (its LLVM IR from " + what + " has none): nothing to take features from");
  return ss.str();
}

std::string clang(const char* name) {
  return std::string("\"$(command -v ") + name + "-14 || command -v " + name + " || echo " + name + ")\"";
}

}  // namespace

Features featuresFromGpuSource(const std::string& source, const std::string& extraFlags) {
  const bool cl = source.size() >= 3 && source.compare(source.size() - 3, 3, ".cl") == 0;
  // CUDA: the shim, and empty stand-ins for the CUDA headers a kernel file includes, in a folder of
  // its own, removed however the compile ends.
  struct ShimDir {
    std::string path;
    ~ShimDir() {
      if (!path.empty()) std::filesystem::remove_all(path);
    }
  } shim;
  std::string cmd;
  if (cl) {
    cmd = clang("clang") + " -x cl -cl-std=CL2.0 -Xclang -finclude-default-header --target=spir64 -O1 -emit-llvm -S -w '" + source +
          "' " + extraFlags;
  } else {
    shim.path = "/tmp/tawa-tune-cuda-" + std::to_string(::getpid());
    std::filesystem::create_directories(shim.path);
    std::ofstream(shim.path + "/tawa_cuda_shim.h") << kCudaShim;
    for (const char* h : {"cuda_runtime.h", "cuda.h", "device_launch_parameters.h", "cuda_runtime_api.h"})
      std::ofstream(shim.path + "/" + h) << "#pragma once\n";
    cmd = clang("clang++") + " -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -O1 -emit-llvm -S -w -I'" +
          shim.path + "' -include tawa_cuda_shim.h '" + source + "' " + extraFlags;
  }
  std::string ir = compileToIr(source, cmd, cl ? "clang -x cl -O1 -emit-llvm" : "clang++ -x cuda --cuda-device-only -O1 -emit-llvm",
                               "features of GPU kernels need clang (Debian: clang-14); the kernel's tunable parameters are defined "
                               "(-DNAME=VALUE) from the space's default; or pass --features FILE.json");
  return featuresFromLlvmIr(ir, "other", source);
}

const std::vector<std::string>& skeletonKinds() {
  static const std::vector<std::string> k = {"parallel_for", "parallel_reduce", "parallel_scan", "parallel_pipeline",
                                             "flow_graph",   "parallel_sort",   "other"};
  return k;
}

Features featuresFromLlvmIr(const std::string& ir, const std::string& kind, const std::string& origin) {
  std::istringstream in(ir);
  std::string line;
  std::vector<std::pair<std::string, std::vector<std::string>>> fns;
  bool inside = false;
  int lineNo = 0, openedAt = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!inside && line.rfind("define ", 0) == 0) {
      openedAt = lineNo;
      auto at = line.find(" @");
      std::string name;
      if (at != std::string::npos) {
        size_t e = line.find('(', at);
        name = line.substr(at + 2, e == std::string::npos ? std::string::npos : e - at - 2);
        if (!name.empty() && name.front() == '"') name = name.substr(1, name.size() - 2);
      }
      fns.push_back({name, {}});
      inside = true;
      continue;
    }
    if (inside) {
      if (line == "}") inside = false;
      else fns.back().second.push_back(line);
    }
  }
  auto file = std::make_shared<const std::string>(origin);
  if (inside)
    throw UserError(Location::at(file, openedAt, 1), "the function @" + fns.back().first + " is not closed (no '}' line before the end)",
                    "the IR was cut short; regenerate it with clang++ -O1 -S -emit-llvm");
  if (fns.empty())
    throw UserError(Location::at(file, 0, 0), "no function definition ('define ...') in it: is this textual LLVM IR?",
                    "features come from clang++ -O1 -S -emit-llvm output (.ll), a C++ source, or a .json of numbers");
  Counts chosen, all;
  for (auto& [name, body] : fns) {
    countFunction(body, all);
    if (isSkeletonFunction(name)) countFunction(body, chosen);
  }
  const Counts& c = chosen.total > 0 ? chosen : all;
  Features f;
  for (auto& cls : classes()) {
    double n = c.byClass.count(cls) ? c.byClass.at(cls) : 0;
    f["ir.log_" + cls] = std::log1p(n);
    f["ir.share_" + cls] = c.total > 0 ? n / c.total : 0;
  }
  f["ir.log_instructions"] = std::log1p(c.total);
  f["ir.log_loops"] = std::log1p(c.loops);
  f["ir.log_functions"] = std::log1p(c.functions);
  f["ir.share_vector_typed"] = c.total > 0 ? c.vectorTyped / c.total : 0;
  double mem = (c.byClass.count("load") ? c.byClass.at("load") : 0) + (c.byClass.count("store") ? c.byClass.at("store") : 0);
  double fp = (c.byClass.count("fp_arith") ? c.byClass.at("fp_arith") : 0) + (c.byClass.count("fp_div") ? c.byClass.at("fp_div") : 0) +
              (c.byClass.count("math") ? c.byClass.at("math") : 0);
  double in_ = c.byClass.count("int_arith") ? c.byClass.at("int_arith") : 0;
  f["ir.compute_per_memory"] = std::log1p((fp + in_) / std::max(1.0, mem));
  std::string k = kind.empty() ? guessKind(ir) : kind;
  for (auto& name : skeletonKinds()) f["kind." + name] = name == k ? 1.0 : 0.0;
  addGpuFeatures(ir, fns, f);
  return f;
}

Features featuresFromSource(const std::string& source, const std::string& kind, const std::string& extraFlags) {
  // Debian's clang-14 installs clang++-14; the plain name comes with the `clang` package.
  std::string ir = compileToIr(source, clang("clang++") + " -O1 -emit-llvm -S -std=c++20 -w '" + source + "' " + extraFlags,
                               "clang++ -O1 -emit-llvm",
                               "features of C++ programs need clang++ (Debian: clang-14); or pass --features FILE.json");
  return featuresFromLlvmIr(ir, kind, source);
}

Features featuresFromFile(const std::string& path, const std::string& kind, const std::string& defines) {
  auto ends = [&](const char* s) {
    std::string e = s;
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  auto where = Location::at(std::make_shared<const std::string>(path), 0, 0);
  if (ends(".json")) {
    std::ifstream in(path);
    if (!in) throw UserError(where, "cannot read the features file");
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json j = parseJsonText(text.str(), path);
    if (!j.is_object()) throw UserError(where, "a features file is a JSON object {\"name\": number, ...}");
    Features f;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_number()) throw UserError(where, "feature '" + it.key() + "' is not a number");
      f[it.key()] = it.value().get<double>();
    }
    return f;
  }
  if (ends(".ll")) {
    std::ifstream in(path);
    if (!in) throw UserError(where, "cannot read the LLVM IR file");
    std::stringstream ss;
    ss << in.rdbuf();
    return featuresFromLlvmIr(ss.str(), kind, path);
  }
  // Its own directory and the one above, so that a suite program's shared headers are found.
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  std::string flags = "-I'" + dir + "' -I'" + dir + "/..' " + defines;
  if (ends(".cu") || ends(".cuh") || ends(".cl")) return featuresFromGpuSource(path, flags);
  return featuresFromSource(path, kind, flags);
}

std::string kindOf(const Features& f) {
  for (auto& k : skeletonKinds()) {
    auto it = f.find("kind." + k);
    if (it != f.end() && it->second > 0.5) return k;
  }
  return "unknown";
}

}  // namespace tawa::tune
