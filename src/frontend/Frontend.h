// The Triton front end: reads an ordinary .py file, finds its @triton.jit functions and lowers one
// kernel, specialized by a launch spec (constexpr values, argument dtypes), to tile IR. No Python
// runs. Anything outside the supported subset is a UserError at the .py file's line:col naming the
// construct, with a hint where one is known.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "driver/Spec.h"
#include "ir/IR.h"

namespace tawa::frontend {

// Compiles `kernel` from the Python file at `path`. The result holds one function named `kernel`
// (callees are inlined or emitted as further functions) whose parameters are the kernel's
// non-constexpr parameters, in order, typed by the spec (`*fp16` -> ptr<f16>, `i32` -> i32, ...),
// each named (nameHint) as in the Python source. Constexpr parameters are bound from the spec's
// constexpr entries (or their Python defaults). Launch options in the spec (num_warps, num_stages)
// are recorded as function attributes. Every op carries its .py file:line:col.
std::unique_ptr<ir::Module> compileTriton(const std::string& path, const std::string& kernel, const driver::Spec& spec);

// The names of all @triton.jit functions in the file (for --kernel defaults and error hints).
std::vector<std::string> listKernels(const std::string& path);

// The parameters of jit function `kernel` as written (no spec needed): what a Python launcher binds
// call arguments to. UserError when the file has no such function or it does not parse.
struct ParamInfo {
  std::string name;
  bool isConstexpr = false, hasDefault = false;
};
std::vector<ParamInfo> signature(const std::string& path, const std::string& kernel);

// Where imports of other .py files (helpers in the kernel's own package, `from mypkg.utils import
// tl_extra as tle`) are looked up after the kernel's directory and its package root: the directories
// given here (the CLI's -I DIR), then those of PYTHONPATH. Set once, before compiling.
void setImportPath(std::vector<std::string> dirs);
void addImportDir(const std::string& dir);
// The -I DIR option of the commands that read kernels (repeatable; a directory that must exist).
inline constexpr const char* kImportDirHelp =
    "directory to look up the .py modules a kernel imports in (repeatable; after the kernel's own "
    "directory and package, before PYTHONPATH)";
std::vector<std::string> importPath();

// Where the front end says what it decided about the source (tawa's --explain): which of a name's
// module-level bindings it took (`if`/`else` or `try`/`except` at module level) and why. Null: silent.
void setExplain(std::ostream* out);
std::ostream* explainStream();

}  // namespace tawa::frontend
