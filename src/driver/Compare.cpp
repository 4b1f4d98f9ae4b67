#include "driver/Compare.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <set>

#include "backends/emu/Emulator.h"
#include "ir/Diagnostic.h"

namespace tawa::driver {

namespace {

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

Comparison compareBuffers(const exec::Buffer& got, const exec::Buffer& ref, std::optional<ir::Scalar> precision) {
  Comparison c;
  c.elements = ref.numel();
  TAWA_ASSERT(got.numel() == ref.numel() && got.dtype == ref.dtype, "a result buffer has the reference's shape and type");
  bool isFloat = ir::isFloat(ref.dtype);
  // The scale of the reference: the root mean square of its finite elements (a NaN or an infinity
  // in the data must not make the tolerance NaN or infinite, which would accept any result).
  double sumSq = 0, errSq = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < c.elements; ++i)
    if (std::isfinite(ref.get(i))) sumSq += ref.get(i) * ref.get(i), ++finite;
  double rms = finite ? std::sqrt(sumSq / static_cast<double>(finite)) : 0;
  // Integers converted from floats the kernel computes (`(acc * s).to(tl.int8)`) compare within those
  // floats' tolerance and one unit: another summation order moves a value across a rounding boundary.
  const bool fromFloat = precision && ir::isFloat(*precision);
  c.rtol = relativeTolerance(fromFloat ? *precision : ref.dtype);
  c.atol = isFloat ? c.rtol * rms : fromFloat ? c.rtol * rms + 1 : 0;
  for (int64_t i = 0; i < c.elements; ++i) {
    double g = got.get(i), r = ref.get(i);
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

std::map<std::string, ir::Scalar> storedPrecision(const ir::Func& kernel) {
  using ir::OpKind;
  std::map<std::string, ir::Scalar> out;
  auto coarser = [](ir::Scalar a, ir::Scalar b) { return relativeTolerance(b) > relativeTolerance(a) ? b : a; };
  ir::walk(const_cast<ir::Block&>(kernel.body), [&](ir::Op* op) {
    if ((op->kind() != OpKind::Store && op->kind() != OpKind::DescStore) || op->numOperands() < 2) return;
    const ir::Value* v = op->operand(1);
    if (!v->type().isData() || v->type().scalar == ir::Scalar::I1) return;
    // An integer stored value counts only the floats computed on its way and converted to integers
    // (none: compared exactly).
    std::optional<ir::Scalar> p;
    if (ir::isFloat(v->type().scalar)) p = v->type().scalar;
    // A float computed on the way in a coarser type (`acc.to(tl.float16)` stored through an f32
    // pointer, an f16 intermediate between two dots, an f16 sum) carries that type's rounding: a unit
    // of it, moved by another summation order before it, reaches the stored value. Loaded data does
    // not count: both sides read the same values.
    bool converted = ir::isFloat(v->type().scalar);  // for an integer: a float converted to an integer on the way
    ir::opsBehind(const_cast<ir::Value*>(v), kernel.body, [&](const ir::Op& d) {
      if (d.kind() == OpKind::Cast && ir::isFloat(d.operand(0)->type().scalar) && !ir::isFloat(d.result()->type().scalar)) converted = true;
      for (const auto& r : d.results())
        if (ir::isFloat(r->type().scalar)) p = p ? coarser(*p, r->type().scalar) : r->type().scalar;
    });
    if (!p || !converted) return;
    // The pointer arguments the address comes from (not through loads: a loaded address names none).
    std::set<const ir::Value*> args;
    ir::argsBehind(op->operand(0), kernel.body, args);
    for (const ir::Value* a : args)
      if (a->type().isPtrLike()) {
        auto [it, fresh] = out.emplace(a->nameHint, *p);
        if (!fresh) it->second = coarser(it->second, *p);
      }
  });
  return out;
}

std::set<std::string> orderDependentBuffers(const ir::Func& kernel) {
  using ir::OpKind;
  std::set<std::string> out;
  ir::walk(const_cast<ir::Block&>(kernel.body), [&](ir::Op* op) {
    const bool add = (op->kind() == OpKind::Atomic && op->hasAttr("kind") && op->strAttr("kind") == "add") ||
                     (op->kind() == OpKind::DescStore && op->hasAttr("reduce"));
    if (!add || op->numOperands() < 2 || !ir::isFloat(op->operand(1)->type().scalar)) return;
    std::set<const ir::Value*> args;
    ir::argsBehind(op->operand(0), kernel.body, args);
    for (const ir::Value* a : args)
      if (a->type().isPtrLike()) out.insert(a->nameHint);
  });
  return out;
}

std::optional<std::string> scheduleDifference(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& first,
                                              const std::set<std::string>& orderDependent) {
  if (got.size() != first.size()) return emu::firstDifference(got, first);
  for (size_t i = 0; i < got.size(); ++i) {
    if (orderDependent.count(first[i].name) && ir::isFloat(first[i].dtype)) {
      Comparison c = compareBuffers(got[i], first[i]);
      if (!c.ok)
        return first[i].name + indexStr(first[i], c.firstBad) + " is " + num("%.9g", c.got) + ", not " + num("%.9g", c.want) +
               " (float atomics add into it: beyond the tolerance " + num("%.3g", c.rtol) + "*|x| + " + num("%.3g", c.atol) +
               " that another order of the adds may move it by)";
      continue;
    }
    if (got[i].data != first[i].data) return emu::firstDifference({got[i]}, {first[i]});  // copies only where they differ
  }
  return std::nullopt;
}

void checkBuffers(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want, const std::string& who,
                  const Location& at, const std::string& hint, std::ostream& out, const ir::Func* kernel) {
  const std::map<std::string, ir::Scalar> stored = kernel ? storedPrecision(*kernel) : std::map<std::string, ir::Scalar>{};
  for (size_t i = 0; i < want.size(); ++i) {
    auto p = stored.find(want[i].name);
    std::optional<ir::Scalar> precision;
    if (p != stored.end() && relativeTolerance(p->second) > relativeTolerance(want[i].dtype)) precision = p->second;
    Comparison c = compareBuffers(got[i], want[i], precision);
    std::string stats = std::string(ir::scalarName(want[i].dtype)) + (precision ? (ir::isFloat(want[i].dtype) ? " holding " : " converted from ") + std::string(ir::scalarName(*precision)) + " values" : "") +
                        ", max |err| " + num("%.3g", c.maxAbsErr) + ", ||err||/||ref|| " +
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

}  // namespace tawa::driver
