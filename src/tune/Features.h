// Static features of a program, the coordinates the tuner measures resemblance in.
//
// For GPU kernels (CUDA or OpenCL device code): the same counts over the device IR, and gpu.* features
// (shared and constant memory references, barriers, index reads, OpenCL or not).
// For C++ programs: counts from the LLVM IR of `clang++ -O1 -emit-llvm` (instruction classes, memory
// operations, loops, calls), taken over the functions handed to the skeleton (every function whose
// mangled name involves a lambda closure; all defined functions when there is none), plus the skeleton
// kind as a one-hot vector. Counts enter as log(1 + n) and as shares of all instructions, so that a
// program's size does not drown its character.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tawa::tune {

using Features = std::map<std::string, double>;

// The skeleton kinds the one-hot part knows.
const std::vector<std::string>& skeletonKinds();

// Features of textual LLVM IR. `kind` (parallel_for, parallel_reduce, ...) is used when not empty;
// otherwise it is guessed from the TBB entry points the IR instantiates. Throws tawa::UserError,
// located in `origin` (the file the IR came from), when the text has no function definition or one
// that is not closed: not LLVM IR, or cut short.
Features featuresFromLlvmIr(const std::string& ir, const std::string& kind = {}, const std::string& origin = "<llvm-ir>");
// Compiles `source` with clang++ -O1 -emit-llvm (extraFlags appended) and takes its features. Throws
// tawa::UserError (located at the source) when clang++ is missing or the compile fails.
Features featuresFromSource(const std::string& source, const std::string& kind = {}, const std::string& extraFlags = {});
// GPU device code: CUDA (.cu, .cuh: clang++ -x cuda --cuda-device-only for sm_80, without CUDA's
// headers, which clang 14 cannot read in CUDA 13; a shim declares what kernels use) or OpenCL (.cl:
// clang -x cl for spir64), counted as LLVM IR, plus the gpu.* features (featuresFromLlvmIr).
Features featuresFromGpuSource(const std::string& source, const std::string& extraFlags = {});
// A features file: .json ({"name": number, ...}, a manifest), .ll (LLVM IR), CUDA (.cu) or OpenCL (.cl)
// device code, or C/C++ source. `defines` (-DNAME=VALUE ...) go to the compiler: a kernel's tunable
// parameters at their defaults.
Features featuresFromFile(const std::string& path, const std::string& kind = {}, const std::string& defines = {});
// The kind named by the one-hot features, or "unknown".
std::string kindOf(const Features& f);

}  // namespace tawa::tune
