#include "backends/cuda/LaunchArgs.h"

#include <cstring>
#include <memory>

#include "ir/Diagnostic.h"

namespace tawa::cuda {

namespace {

Location where(const std::string& what = "<cuda>") { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

}  // namespace

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
  if (p.hostValue) {  // a tile map's extent or stride (int64_t), a row shift's quotient (int32_t)
    const int64_t v = p.value.eval(integerArgs(args));
    if (p.cType == "int32_t") {
      const auto v32 = static_cast<int32_t>(v);
      std::memcpy(slot, &v32, sizeof v32);
    } else {
      std::memcpy(slot, &v, sizeof v);
    }
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

}  // namespace tawa::cuda
