#include "frontend/Frontend.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "frontend/Lower.h"
#include "frontend/PyParser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tawa::frontend {

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UserError(Location::at(std::make_shared<const std::string>(path), 0, 0), "cannot open the Python file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::unique_ptr<ir::Module> compileTriton(const std::string& path, const std::string& kernel, const driver::Spec& spec) {
  auto file = scanSource(path, readFile(path));
  auto m = lowerKernel(*file, kernel, spec);
  ir::checkTileSizes(*m);  // block sizes too large for any tile: the kernel's (or its spec's) error
  try {
    ir::verify(*m);
  } catch (const UserError& e) {
    // The lowering must never produce invalid IR: this is a bug in the front end, not the kernel's.
    throw InternalError("internal error: the Triton front end produced invalid IR at " + e.loc.str() + ": " +
                        e.what() + "\n" + ir::print(*m));
  }
  return m;
}

namespace {
std::vector<std::string>& givenImportPath() {
  static std::vector<std::string> dirs;
  return dirs;
}
}  // namespace

void setImportPath(std::vector<std::string> dirs) { givenImportPath() = std::move(dirs); }

namespace {
std::ostream*& explainSink() {
  static std::ostream* out = nullptr;
  return out;
}
}  // namespace

void setExplain(std::ostream* out) { explainSink() = out; }
std::ostream* explainStream() { return explainSink(); }
void addImportDir(const std::string& dir) { givenImportPath().push_back(dir); }

std::vector<std::string> importPath() {
  std::vector<std::string> all = givenImportPath();
  if (const char* pp = std::getenv("PYTHONPATH"))
    for (std::string rest = pp; !rest.empty();) {
      const size_t colon = rest.find(':');
      if (colon) all.push_back(rest.substr(0, colon));
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
  return all;
}

std::vector<std::string> listKernels(const std::string& path) {
  auto file = scanSource(path, readFile(path));
  std::vector<std::string> names;
  for (auto& j : file->jit) names.push_back(j.name);
  return names;
}

std::vector<ParamInfo> signature(const std::string& path, const std::string& kernel) {
  auto file = scanSource(path, readFile(path));
  std::vector<ParamInfo> out;
  for (const auto& p : requireFunction(*file, kernel).params) out.push_back({p.name, p.isConstexpr, p.defaultValue != nullptr});
  return out;
}

}  // namespace tawa::frontend
