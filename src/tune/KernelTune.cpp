#include "tune/KernelTune.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backends/cuda/Driver.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "ir/Diagnostic.h"
#include "tune/Record.h"
#include "tune/SpaceJson.h"
#include "tune/Tuner.h"

namespace tawa::tune {

namespace {

Location where(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

bool isBlockName(const std::string& n) {
  std::string u;
  for (char c : n) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u.rfind("BLOCK", 0) == 0 || u.rfind("TILE", 0) == 0;
}

// The spec's tile-size constexprs, in spec order.
std::vector<std::string> blockParams(const driver::Spec& spec) {
  std::vector<std::string> out;
  for (auto& e : spec.entries)
    if (e.kind == driver::SpecEntry::Kind::Constexpr && std::holds_alternative<int64_t>(e.value) && isBlockName(e.name))
      out.push_back(e.name);
  return out;
}

bool isTranscendental(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::Exp || k == K::Exp2 || k == K::Log || k == K::Log2 || k == K::Sqrt || k == K::Rsqrt || k == K::Sin || k == K::Cos || k == K::Math;
}

int64_t elems(const ir::Type& t) {
  int64_t n = 1;
  for (auto d : t.shape) n *= d;
  return n;
}

// Ops of a kernel in walk order, with the number of loops around each.
struct Walked {
  const ir::Op* op;
  int loops;
};
void walkLoops(const ir::Block& b, int depth, std::vector<Walked>& out) {
  for (const auto& op : b.ops()) {
    out.push_back({op.get(), depth});
    int inner = depth + (op->kind() == ir::OpKind::For || op->kind() == ir::OpKind::While ? 1 : 0);
    for (const auto& r : op->regions()) walkLoops(*r, inner, out);
  }
}
std::vector<Walked> walked(const ir::Func& f) {
  std::vector<Walked> out;
  walkLoops(f.body, 0, out);
  return out;
}

}  // namespace

Features kernelFeatures(const ir::Func& kernel, const driver::Spec& spec) {
  Features f;
  int dots = 0, ew = 0, red = 0, trans = 0, loads = 0, stores = 0, loops = 0, depth = 0;
  double flops = 0, bytes = 0;  // of one iteration of the innermost loop
  int inner = 0;
  auto ops = walked(kernel);
  for (auto& w : ops) inner = std::max(inner, w.loops);
  std::optional<ir::Scalar> dotType, loadType;
  for (auto& w : ops) {
    const ir::Op* op = w.op;
    auto k = op->kind();
    depth = std::max(depth, w.loops + (k == ir::OpKind::For || k == ir::OpKind::While ? 1 : 0));
    bool innermost = w.loops == inner;
    if (k == ir::OpKind::For || k == ir::OpKind::While) ++loops;
    else if (k == ir::OpKind::Dot) {
      ++dots;
      auto& a = op->operand(0)->type();
      auto& r = op->result()->type();
      if (!dotType) dotType = a.scalar;
      if (innermost && a.shape.size() == 2 && r.shape.size() == 2) flops += 2.0 * r.shape[0] * r.shape[1] * a.shape[1];
    } else if (k == ir::OpKind::Reduce) {
      ++red;
      if (innermost) flops += static_cast<double>(elems(op->operand(0)->type()));
    } else if (k == ir::OpKind::Load || k == ir::OpKind::DescLoad) {
      ++loads;
      auto& t = op->result()->type();
      if (!loadType) loadType = t.scalar;
      if (innermost) bytes += static_cast<double>(elems(t) * ir::byteWidth(t.scalar));
    } else if (k == ir::OpKind::Store || k == ir::OpKind::DescStore) {
      ++stores;
    } else if (ir::isElementwise(k) && op->numResults() == 1 && op->result()->type().isData()) {
      ++ew;
      if (isTranscendental(k)) ++trans;
      if (innermost) flops += static_cast<double>(elems(op->result()->type()));
    }
  }
  auto lg = [](double n) { return std::log1p(n); };
  f["kernel.dots"] = lg(dots);
  f["kernel.elementwise"] = lg(ew);
  f["kernel.reductions"] = lg(red);
  f["kernel.transcendentals"] = lg(trans);
  f["kernel.loads"] = lg(loads);
  f["kernel.stores"] = lg(stores);
  f["kernel.loops"] = lg(loops);
  f["kernel.loop_depth"] = depth;
  f["kernel.intensity"] = lg(bytes > 0 ? flops / bytes : 0.0);
  auto dt = dotType ? dotType : loadType;
  for (auto s : {ir::Scalar::F8E4M3, ir::Scalar::F8E5M2, ir::Scalar::F16, ir::Scalar::BF16, ir::Scalar::F32, ir::Scalar::F64})
    f["kernel.dtype." + std::string(ir::scalarName(s))] = dt && *dt == s ? 1.0 : 0.0;
  double maxDim = 0, total = 0;
  for (auto& e : spec.entries) {
    if (e.kind != driver::SpecEntry::Kind::Buffer) continue;
    auto shape = spec.shapeOf(e);
    double n = 1;
    for (auto d : shape) {
      maxDim = std::max(maxDim, static_cast<double>(d));
      n *= static_cast<double>(d);
    }
    total += n;
  }
  f["kernel.problem.log_max_dim"] = lg(maxDim);
  f["kernel.problem.log_elements"] = lg(total);
  return f;
}

namespace {

// A tile's size in bytes as an expression over the tile-size parameters: each dimension that
// equals a probe size is that parameter's name, any other is the number itself.
std::string bytesExpr(const ir::Type& t, const std::map<int64_t, std::string>& probe) {
  std::string e;
  for (auto d : t.shape) {
    auto it = probe.find(d);
    e += (e.empty() ? "" : " * ") + (it != probe.end() ? it->second : std::to_string(d));
  }
  if (e.empty()) e = "1";
  return e + " * " + std::to_string(ir::byteWidth(t.scalar));
}

}  // namespace

std::string kernelSpaceJson(const std::string& path, const std::string& kernel, const driver::Spec& spec) {
  using nlohmann::json;
  auto blocks = blockParams(spec);
  // Compile once with distinct power-of-two sizes, so each tile dimension names its parameter.
  driver::Spec probeSpec = spec;
  std::map<int64_t, std::string> probe;
  int64_t v = 16;
  for (auto& e : probeSpec.entries)
    if (std::find(blocks.begin(), blocks.end(), e.name) != blocks.end() && e.kind == driver::SpecEntry::Kind::Constexpr) {
      e.value = v;
      probe[v] = e.name;
      v *= 2;
    }
  std::optional<driver::LoadedKernel> lk;
  if (!blocks.empty()) {
    try {
      lk = driver::loadKernel(path, kernel, probeSpec);
    } catch (const UserError&) {
      lk.reset();  // the kernel rejects the probe sizes: fall back to the spec's own
    }
  }
  if (!lk) {
    probe.clear();
    lk = driver::loadKernel(path, kernel, spec);
    for (auto& e : spec.entries)
      if (std::find(blocks.begin(), blocks.end(), e.name) != blocks.end()) {
        int64_t val = std::get<int64_t>(e.value);
        if (probe.count(val)) probe[val] = "";  // two parameters share the size: it names neither
        else probe[val] = e.name;
      }
    for (auto it = probe.begin(); it != probe.end();)
      it = it->second.empty() ? probe.erase(it) : std::next(it);
  }
  auto ops = walked(*lk->kernel);
  bool dotInLoop = false;
  std::vector<std::string> loopBytes, storeBytes, accRegs, wgmmaM;
  for (auto& w : ops) {
    auto k = w.op->kind();
    if (k == ir::OpKind::Dot && w.loops > 0) {
      dotInLoop = true;
      auto& r = w.op->result()->type();
      if (r.shape.size() == 2) {
        auto name = [&](int64_t d) {
          auto it = probe.find(d);
          return it != probe.end() ? it->second : std::to_string(d);
        };
        accRegs.push_back(name(r.shape[0]) + " * " + name(r.shape[1]));
        if (probe.count(r.shape[0])) wgmmaM.push_back(name(r.shape[0]) + " % (64 * consumers) == 0");
      }
    }
    if ((k == ir::OpKind::Load || k == ir::OpKind::DescLoad) && w.loops > 0) loopBytes.push_back(bytesExpr(w.op->result()->type(), probe));
    if (k == ir::OpKind::DescStore && w.op->numOperands() > 1) storeBytes.push_back(bytesExpr(w.op->operand(1)->type(), probe));
  }
  json j = json::object();
  json def = json::object();
  j["description"] = "tawa kernel " + kernel + " of " + path + ": tile sizes and warp-specialization options";
  // A kernel with no tile.dot and no descriptor runs as a SIMT kernel. Its block may have to cover
  // a whole row (softmax loads one block per row), so a smaller block would change what it
  // computes. The correctness check of each measurement compares with the executor running the
  // same configuration, so it could not tell. Such blocks are tuned only upwards: from the spec's
  // size (rounded up to a power of two) to 4x that, at most 4096 (32 entries per thread).
  const bool simt = driver::simtOnly(*lk->kernel);
  for (auto& b : blocks) {
    const int64_t given = std::get<int64_t>(spec.find(b)->value);
    if (simt) {
      int64_t lo = 1;
      while (lo < given && lo < 4096) lo *= 2;
      j[b] = {{"pow2", {lo, std::max(lo, std::min<int64_t>(4 * lo, 4096))}}};
      def[b] = lo;
      continue;
    }
    j[b] = {{"pow2", {16, 256}}};
    int64_t d = 16;  // the spec's size, or the nearest power of two in range
    while (d < 256 && d < given) d *= 2;
    def[b] = d;
  }
  json cons = json::array();
  if (dotInLoop) {
    j["depth"] = {{"min", 1}, {"max", 6}};
    j["mma_depth"] = {{"min", 0}, {"max", 3}};
    j["consumers"] = {1, 2};
    j["persistent"] = {0, 132};
    j["group_m"] = {0, 4, 8, 16};
    def["depth"] = 2;
    def["mma_depth"] = 1;
    def["consumers"] = 1;  // 2 when one consumer's accumulators would not fit the register budget below
    def["persistent"] = 0;
    def["group_m"] = 0;
    cons.push_back("mma_depth < depth");
    cons.push_back("group_m == 0 || persistent > 0");
    std::string smem;
    for (auto& b : loopBytes) smem += (smem.empty() ? "" : " + ") + b;
    if (smem.empty()) smem = "0";
    std::string total = "depth * (" + smem + ")";
    for (auto& b : storeBytes) total += " + " + b;
    cons.push_back(total + " <= 232448");
    // The accumulators of the loop's dots are live together (attention's S and O), so their f32
    // elements, split over the consumer warp groups' 128 threads each, share one budget of 168
    // registers per thread (of 255, the rest for operands, addresses and the softmax's values).
    if (!accRegs.empty()) {
      std::string sum;
      for (auto& a : accRegs) sum += (sum.empty() ? "" : " + ") + a;
      cons.push_back((accRegs.size() > 1 ? "(" + sum + ")" : sum) + " / (128 * consumers) <= 168");
    }
    for (auto& c : wgmmaM)
      if (std::find(cons.begin(), cons.end(), c) == cons.end()) cons.push_back(c);  // two dots, one M: once
  }
  j["constraints"] = cons;
  j["default"] = def;
  if (dotInLoop) {  // a default one consumer cannot hold (attention's 128-row tiles) takes two
    json noDefault = j;
    noDefault.erase("default");  // the space refuses a default that breaks a constraint
    Space sp = parseSpace(noDefault.dump(), "<kernel space>");
    auto legalWith = [&](int consumers) {
      json d = def;
      d["consumers"] = consumers;
      return sp.legal(sp.fromJson(d));
    };
    if (!legalWith(1) && legalWith(2)) j["default"]["consumers"] = 2;
  }
  return j.dump(1);
}

namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The tawa to run each configuration with: $TAWA_SELF when set (the GPU bundle's bin/tawa.sh sets it:
// started through the bundled loader, /proc/self/exe names the loader, not tawa), else this program.
std::string selfExe() {
  if (const char* s = std::getenv("TAWA_SELF"); s && *s) return s;
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tawa") : p.string();
}

std::string readText(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UserError(where(path), "cannot read the file");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `--import FILE.json`: {"results": [{"config": {...}, "ms": 0.123}, ...]} (or "seconds" instead of
// "ms"), results of this kernel measured elsewhere (`tawa run --backend cuda` on a GPU machine),
// recorded as measurements with origin "import".
int importResults(Record& rec, const TuneTarget& t, const std::string& path, std::ostream& out) {
  std::string text = readText(path);
  nlohmann::json j = parseJsonText(text, path);
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    throw UserError(where(path), "an import file is {\"results\": [{\"config\": {...}, \"ms\": 0.12}, ...]}");
  auto fail = [&](const std::string& at, const std::string& why) { throw UserError(jsonLocation(path, text, at), at + ": " + why); };
  int64_t id = registerTarget(rec, t);
  int n = 0;
  for (size_t i = 0; i < j["results"].size(); ++i) {
    auto& r = j["results"][i];
    std::string at = "/results/" + std::to_string(i);
    if (!r.is_object() || !r.contains("config") || !(r.contains("ms") || r.contains("seconds")))
      fail(at, "each result needs \"config\" and \"ms\" (or \"seconds\")");
    Config c;
    try {
      c = t.space.fromJson(r["config"]);
    } catch (const std::invalid_argument& e) {
      fail(at + "/config", e.what());
    }
    if (!t.space.legal(c))
      for (auto& k : t.space.constraints)
        if (!k.holds(c, t.space.params)) fail(at + "/config", "the configuration breaks the constraint '" + k.text() + "'");
    auto& fig = r.contains("ms") ? r["ms"] : r["seconds"];
    if (!fig.is_number() || fig.get<double>() <= 0) fail(at + (r.contains("ms") ? "/ms" : "/seconds"), "the figure must be a positive number");
    Measurement m;
    m.seconds = r.contains("ms") ? fig.get<double>() / 1000.0 : fig.get<double>();
    m.repetitions = {m.seconds};
    m.origin = "import";
    m.detail = "imported from " + path;
    rec.add(id, t.space.key(c), m);
    ++n;
  }
  out << "imported " << n << " measurement(s) of " << t.name << " into the record (recorded as measured on this machine, "
      << rec.machineDescription() << ")\n";
  return 0;
}

}  // namespace

int tuneKernel(const KernelTuneArgs& a, std::ostream& out) {
  if (a.kernel.empty()) throw UserError(where(a.file), "tuning a kernel needs --kernel NAME");
  if (a.spec.empty()) throw UserError(where(a.file), "tuning a kernel needs --spec (its arguments, shapes and tile sizes)");
  driver::Spec spec = driver::parseSpec(a.spec);
  auto lk = driver::loadKernel(a.file, a.kernel, spec);
  TuneTarget t;
  t.kind = "kernel";
  t.name = "kernel " + a.kernel + " (" + std::filesystem::path(a.file).filename().string() + ")";
  t.features = kernelFeatures(*lk.kernel, spec);
  if (a.printFeatures) {
    out << nlohmann::json(t.features).dump(1) << "\n";
    return 0;
  }
  t.spaceText = kernelSpaceJson(a.file, a.kernel, spec);
  if (nlohmann::json::parse(t.spaceText).size() <= 3)  // description, constraints, default: no parameter
    throw UserError(where(a.file), "kernel " + a.kernel + " has nothing to tune: no tile-size constexpr (BLOCK*, TILE*) in the spec and no dot in a loop",
                    "give its tile sizes in --spec, e.g. BLOCK_M=128");
  t.space = parseSpace(t.spaceText, "<kernel space>");
  // The measuring command: the spec with each tile size a placeholder, and the WS options as flags.
  std::string specT = a.spec;
  for (auto& p : t.space.params) {
    std::regex re("\\b" + p.name + "\\s*=\\s*[0-9]+");
    specT = std::regex_replace(specT, re, p.name + "={" + p.name + "}");
  }
  t.command = shellQuote(selfExe()) + " run " + shellQuote(a.file) + " --kernel " + shellQuote(a.kernel) + " --spec " + shellQuote(specT) +
              (a.grid.empty() ? "" : " --grid " + shellQuote(a.grid)) + " --backend cuda --check none";
  // The compile alone (for compile workers, tawa tune --compile-workers): it fills the CUDA build
  // cache (~/.cache/tawa/cuda, by content) that the run then finds, on the same machine or a shared
  // cache folder.
  t.prepare = shellQuote(selfExe()) + " compile " + shellQuote(a.file) + " --kernel " + shellQuote(a.kernel) + " --spec " + shellQuote(specT) +
              " --target sm_90a --emit cubin -o /dev/null";
  t.prepareRequired = false;
  if (t.space.paramIndex("depth") >= 0) {
    const std::string ws = " --depth {depth} --mma-depth {mma_depth} --consumers {consumers} --persistent {persistent} --group-m {group_m}";
    t.command += ws;
    t.prepare += ws;
  }

  Record rec(a.db);
  if (!a.importPath.empty()) return importResults(rec, t, a.importPath, out);
  if (!a.search.dryRun && a.grid.empty())
    throw UserError(where(a.file), "tuning a kernel runs it, and `tawa run` needs its launch grid: give --grid",
                    "the grid may name the tuned sizes, e.g. --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)'");
  // Measured here: this machine needs its GPU. On workers (a Ray cluster's GPU nodes), theirs do; a
  // worker without one fails each measurement with the runner's reason.
  if (!a.search.dryRun && !a.search.workers) {
    auto gpu = cuda::probeGpu();
    if (!gpu.ok)
      throw UserError(where(a.file), "tuning a kernel measures it on the GPU, and there is none: " + gpu.reason,
                      "--dry-run shows the features, neighbours and search plan without a GPU");
  }
  out << "tune: " << t.name << ", " << t.space.dims() << " parameters, " << t.space.cardinality()
      << " configurations before constraints; method " << a.search.method << ", budget " << a.search.budget << "; record " << a.db << "\n";
  out << "features:";
  for (auto& [k, v] : t.features) out << " " << k.substr(7) << "=" << std::setprecision(3) << v;
  out << "\nspace:";
  for (auto& p : t.space.params) {
    out << " " << p.name << "(";
    out << p.text(0) << (p.size() > 2 ? ".." : p.size() > 1 ? "," : "") << (p.size() > 1 ? p.text(static_cast<int>(p.size()) - 1) : "") << ")";
  }
  out << "\nconstraints:";
  for (auto& c : t.space.constraints) out << "\n  " << c.text();
  out << "\n";
  if (auto fb = t.space.fallback()) out << "default: " << t.space.key(*fb) << "\n";
  TuneOptions o = a.search;
  o.minMeasured = 8;  // a kernel's search measures at least this many configurations itself
  o.log = &out;
  TuneResult r = tune(rec, t, o);
  if (a.search.dryRun) return 0;
  if (!r.best || !std::isfinite(r.best->seconds)) {
    std::string eg = failureExample(rec, t, r);
    throw UserError(where(a.file), "every configuration of kernel " + a.kernel + " tried failed" + (eg.empty() ? "" : "; " + eg),
                    "the record's measurements.detail has each failure; run one configuration by hand (tawa run --backend cuda) to see all of its output");
  }
  out << "best " << std::setprecision(4) << r.best->seconds * 1000 << " ms after " << r.evaluations << " evaluations (" << r.measured
      << " measured, " << r.evaluations - r.measured << " from the record)\n";
  out << t.space.toJson(r.best->config).dump() << "\n";
  return 0;
}

}  // namespace tawa::tune
