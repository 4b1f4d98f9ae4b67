#include "driver/Launch.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <filesystem>
#include <random>

#include <tbb/parallel_for.h>

#include "driver/Grid.h"
#include "driver/Npy.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "frontend/Frontend.h"

namespace tawa::driver {

namespace {
Location fileLoc(const std::string& path) { return Location::at(std::make_shared<const std::string>(path), 0, 0); }
bool endsWith(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Floats uniform in [-1, 1], signed integers in [-64, 64] and unsigned ones in [1, 128], never zero
// (an element a kernel fails to write keeps a value the reference overwrote); i1 buffers 0 or 1. A spec's `in LO..HI` draws from [LO, HI)
// instead, zero included when it lies there. Chunk c of the buffer named N draws from its own
// generator, seeded from (seed, N, c).
void fillRandom(exec::Buffer& buf, uint64_t seed, const std::optional<FillRange>& range) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  uint64_t nameHash = 1469598103934665603ull;  // FNV-1a of the name
  for (unsigned char ch : buf.name) nameHash = (nameHash ^ ch) * 1099511628211ull;
  const uint64_t base = splitmix(seed ^ splitmix(nameHash));
  const int64_t n = buf.numel(), chunks = (n + kChunk - 1) / kChunk;
  const bool isFloat = ir::isFloat(buf.dtype), isBool = buf.dtype == ir::Scalar::I1, isUnsigned = ir::isUnsigned(buf.dtype);
  tbb::parallel_for(int64_t{0}, chunks, [&](int64_t c) {
    std::mt19937_64 rng(splitmix(base + static_cast<uint64_t>(c)));
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> integer(-64, 64);
    if (range) {
      std::uniform_real_distribution<double> inRange(range->lo, range->hi);
      std::uniform_int_distribution<int64_t> intInRange(static_cast<int64_t>(range->lo), static_cast<int64_t>(range->hi) - 1);
      for (int64_t i = c * kChunk, end = std::min(n, i + kChunk); i < end; ++i) {
        if (isFloat) buf.setFloat(i, inRange(rng));
        else buf.setInt(i, intInRange(rng));
      }
      return;
    }
    for (int64_t i = c * kChunk, end = std::min(n, i + kChunk); i < end; ++i) {
      if (isFloat) {
        double v;
        do v = real(rng);
        while (v == 0);
        buf.setFloat(i, v);
        if (buf.getFloat(i) == 0) buf.setFloat(i, 0.5);  // fp8 underflow: keep inputs non-zero
      } else if (isBool) {
        buf.setInt(i, static_cast<int64_t>(rng() & 1));
      } else {
        int64_t v;
        do v = integer(rng);
        while (v == 0);
        buf.setInt(i, isUnsigned && v < 0 ? v + 129 : v);  // unsigned: -64..-1 become 65..128
      }
    }
  });
}
}  // namespace

LoadedKernel loadKernel(const std::string& path, const std::string& name, const Spec& spec) {
  if (!std::filesystem::exists(path)) throw UserError(fileLoc(path), "no such file");
  LoadedKernel lk;
  if (endsWith(path, ".py")) {
    std::string k = name;
    if (k.empty()) {
      auto all = frontend::listKernels(path);
      if (all.empty()) throw UserError(fileLoc(path), "no @triton.jit function in this file");
      if (all.size() > 1) {
        std::string list;
        for (auto& n : all) list += (list.empty() ? "" : ", ") + n;
        throw UserError(fileLoc(path), "the file has several kernels; choose one with --kernel", "kernels: " + list);
      }
      k = all[0];
    }
    lk.module = frontend::compileTriton(path, k, spec);
    lk.kernel = lk.module->lookup(k);
  } else if (endsWith(path, ".tir")) {
    lk.module = ir::parseFile(path);
    ir::verify(*lk.module);
    if (lk.module->funcs.empty()) throw UserError(fileLoc(path), "the file defines no function");
    if (name.empty()) {
      lk.kernel = lk.module->funcs.front().get();
    } else {
      lk.kernel = lk.module->lookup(name);
      if (!lk.kernel) {
        std::string list;
        for (auto& f : lk.module->funcs) list += (list.empty() ? "@" : ", @") + f->name;
        throw UserError(fileLoc(path), "no function named '" + name + "'", "functions in this file: " + list);
      }
    }
  } else {
    throw UserError(fileLoc(path), "unknown kind of file: expected a .tir or .py file");
  }
  return lk;
}

std::vector<std::string> loadedNames(const std::vector<std::string>& loads) {
  std::vector<std::string> names;
  for (const auto& l : loads)
    if (auto eq = l.find('='); eq != std::string::npos && eq > 0) names.push_back(l.substr(0, eq));
  return names;
}

namespace {

// Buffers the spec sizes past this machine's memory are the spec's error, said before allocating
// (std::bad_alloc would be an internal error; an overcommitted allocation, a kill later). `total`
// carries the bytes of the buffers before this one.
void checkBufferFits(const SpecEntry& e, const std::string& name, const std::vector<int64_t>& shape, uint64_t& total) {
  uint64_t bytes = ir::byteWidth(e.dtype);
  bool overflow = false;
  for (int64_t d : shape) overflow = overflow || d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  overflow = overflow || __builtin_add_overflow(total, bytes, &total);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  if (overflow || (memory && total > memory)) {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    throw UserError(e.loc, "buffer '" + name + "' (" + dims + " " + std::string(ir::scalarName(e.dtype)) + ") needs " +
                               (overflow ? std::string("more than 2^64") : std::to_string(bytes)) + " bytes" +
                               (overflow || total == bytes ? "" : ", " + std::to_string(total) + " with the buffers before it") +
                               ": more than this machine's " + std::to_string(memory) + " bytes of memory",
                    "give the buffers smaller shapes in --spec");
  }
}

// Buffer `e` with its contents: the spec's values(...), else random ones from `seed` (none for a
// buffer that --load replaces next, nor for an array of pointers, which bind() fills).
exec::Buffer makeBuffer(const Spec& spec, const SpecEntry& e, uint64_t seed, const std::vector<std::string>& loaded) {
  exec::Buffer buf(e.name, e.dtype, spec.shapeOf(e));
  if (std::find(loaded.begin(), loaded.end(), e.name) != loaded.end() || !e.addresses.empty()) return buf;
  if (!e.values) {
    fillRandom(buf, seed, e.fill);
    return buf;
  }
  if (static_cast<int64_t>(e.values->size()) != buf.numel())
    throw UserError(e.loc, "buffer '" + e.name + "' has " + std::to_string(buf.numel()) + " elements but values() gives " +
                               std::to_string(e.values->size()),
                    "give one value per element, in row-major order");
  for (size_t i = 0; i < e.values->size(); ++i) {
    if (ir::isFloat(e.dtype)) buf.setFloat(static_cast<int64_t>(i), (*e.values)[i]);
    else buf.setInt(static_cast<int64_t>(i), static_cast<int64_t>((*e.values)[i]));
  }
  return buf;
}

}  // namespace

Bound bind(const ir::Func& kernel, const Spec& spec, const std::string& grid, uint64_t seed,
           const std::vector<std::string>& loaded) {
  Bound b;
  // Every buffer's size is checked before the first is allocated and filled (filling one that fits
  // takes long when the next one does not).
  uint64_t totalBytes = 0;
  for (const auto& e : spec.entries)  // what an array of pointers names must be a buffer of the spec
    for (size_t k = 0; k < e.addresses.size(); ++k) {
      const SpecEntry* t = spec.find(e.addresses[k]);
      if (!t || t->kind != SpecEntry::Kind::Buffer || t->descriptor)
        throw UserError(e.addressLocs[k], "'" + e.addresses[k] + "' in the addresses of '" + e.name + "' is no buffer of the spec",
                        "give it as a buffer, e.g. " + e.addresses[k] + ":*fp16[M, K]");
    }
  for (size_t k = 0; k < kernel.numArgs(); ++k) {
    const SpecEntry* e = spec.find(kernel.arg(k)->nameHint);
    if (e && kernel.arg(k)->type().isPtr() && e->kind == SpecEntry::Kind::Buffer && e->dtype == kernel.arg(k)->type().scalar)
      checkBufferFits(*e, kernel.arg(k)->nameHint, spec.shapeOf(*e), totalBytes);
  }
  std::vector<bool> used(spec.entries.size(), false);
  for (size_t k = 0; k < kernel.numArgs(); ++k) {
    const ir::Value* p = kernel.arg(k);
    const std::string& pname = p->nameHint;
    const SpecEntry* e = spec.find(pname);
    const ir::Type& t = p->type();
    if (!e)
      throw UserError(kernel.loc, "kernel parameter '" + pname + "' (" + t.str() + ") has no entry in the spec",
                      t.isPtr() ? "add e.g. " + pname + ":*" + std::string(ir::scalarName(t.scalar)) + "[N]"
                                : "add e.g. " + pname + ":" + t.str() + "=VALUE");
    used[static_cast<size_t>(e - spec.entries.data())] = true;
    if (t.isPtr()) {
      if (e->kind != SpecEntry::Kind::Buffer)
        throw UserError(e->loc, "'" + pname + "' is a pointer parameter; give it as " + pname + ":*" +
                                    std::string(ir::scalarName(t.scalar)) + "[dims]");
      if (e->dtype != t.scalar)
        throw UserError(e->loc, "buffer '" + pname + "' is " + std::string(ir::scalarName(e->dtype)) + " but the kernel takes " + t.str());
      b.args.push_back(exec::Arg::buf(static_cast<int>(b.buffers.size())));
      b.buffers.push_back(makeBuffer(spec, *e, seed, loaded));
    } else if (t.isScalar()) {
      if (e->kind == SpecEntry::Kind::Buffer)
        throw UserError(e->loc, "'" + pname + "' is a scalar parameter (" + t.str() + "), not a pointer");
      const ConstValue& v = e->value;
      if (t.elemIsFloat()) {
        if (auto* d = std::get_if<double>(&v)) b.args.push_back(exec::Arg::real(*d));
        else if (auto* i = std::get_if<int64_t>(&v)) b.args.push_back(exec::Arg::real(static_cast<double>(*i)));
        else throw UserError(e->loc, "'" + pname + "' is " + t.str() + " and needs a number");
      } else {
        if (auto* i = std::get_if<int64_t>(&v)) b.args.push_back(exec::Arg::integer(*i));
        else if (auto* bl = std::get_if<bool>(&v)) b.args.push_back(exec::Arg::integer(*bl));
        else throw UserError(e->loc, "'" + pname + "' is " + t.str() + " and needs an integer");
      }
    } else {
      throw UserError(kernel.loc, "parameter '" + pname + "' has type " + t.str() + ", which a launch cannot pass");
    }
  }
  // Buffers that are no parameter but whose addresses an array of pointers holds (the matrices of a
  // grouped GEMM) come after the parameters' buffers.
  std::set<std::string> addressed;
  for (const auto& e : spec.entries) addressed.insert(e.addresses.begin(), e.addresses.end());
  for (size_t k = 0; k < spec.entries.size(); ++k) {
    const SpecEntry& e = spec.entries[k];
    if (!used[k] && e.kind == SpecEntry::Kind::Buffer && addressed.count(e.name) && !e.descriptor) {
      checkBufferFits(e, e.name, spec.shapeOf(e), totalBytes);
      b.buffers.push_back(makeBuffer(spec, e, seed, loaded));
      used[k] = true;
    }
    if (!used[k] && e.kind != SpecEntry::Kind::Constexpr)
      throw UserError(e.loc, "spec entry '" + e.name + "' names no parameter of '@" + kernel.name + "'",
                      e.kind == SpecEntry::Kind::Buffer ? "a buffer that is no parameter is given only for an array of pointers: "
                                                          "P:*i64 = addresses(" + e.name + ", ...)"
                                                        : std::string());
  }
  for (size_t i = 0; i < b.buffers.size(); ++i) {  // arrays of pointers: which buffers they point to
    const SpecEntry* e = spec.find(b.buffers[i].name);
    if (!e || e->addresses.empty()) continue;
    if (static_cast<int64_t>(e->addresses.size()) != b.buffers[i].numel())
      throw UserError(e->loc, "buffer '" + e->name + "' has " + std::to_string(b.buffers[i].numel()) + " elements but addresses() names " +
                                  std::to_string(e->addresses.size()) + " buffers",
                      "leave the dims out: " + e->name + ":*" + std::string(ir::scalarName(e->dtype)) + " = addresses(...)");
    for (const std::string& n : e->addresses) {
      auto it = std::find_if(b.buffers.begin(), b.buffers.end(), [&](const exec::Buffer& x) { return x.name == n; });
      b.buffers[i].addressesOf.push_back(static_cast<int>(it - b.buffers.begin()));  // there (checked first)
    }
  }
  exec::writeVirtualAddresses(b.buffers);
  b.grid = evalGrid(grid, spec.intValues());
  return b;
}

void loadAll(Bound& b, const std::vector<std::string>& loads) {
  for (const auto& l : loads) {
    auto eq = l.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError(Location::at(std::make_shared<const std::string>("--load"), 0, 0), "expected NAME=FILE.npy, got '" + l + "'");
    loadInto(b, l.substr(0, eq), l.substr(eq + 1));
  }
}

void loadInto(Bound& b, const std::string& name, const std::string& npyPath) {
  auto it = std::find_if(b.buffers.begin(), b.buffers.end(), [&](auto& x) { return x.name == name; });
  if (it == b.buffers.end()) throw UserError(fileLoc(npyPath), "--load names '" + name + "', which is no buffer of the spec");
  NpyArray a = readNpy(npyPath);
  if (!npyDescrMatches(a.descr, it->dtype))
    throw UserError(fileLoc(npyPath), "dtype " + a.descr + " does not match buffer '" + name + "' (" +
                                          std::string(ir::scalarName(it->dtype)) + ", saved as " + npyDescr(it->dtype) + ")");
  if (a.shape != it->shape) {
    auto str = [](const std::vector<int64_t>& s) {
      std::string r = "[";
      for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
      return r + "]";
    };
    throw UserError(fileLoc(npyPath), "shape " + str(a.shape) + " does not match buffer '" + name + "' " + str(it->shape));
  }
  it->data = std::move(a.data);
}

void saveAll(const Bound& b, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UserError(fileLoc(dir), "cannot create directory: " + ec.message());
  for (auto& buf : b.buffers) writeNpy(dir + "/" + buf.name + ".npy", NpyArray{npyDescr(buf.dtype), buf.shape, buf.data});
}

}  // namespace tawa::driver
