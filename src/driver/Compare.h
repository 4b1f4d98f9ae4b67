// Comparing a backend's result with the executor's: what `tawa run --backend cuda|emu`, the library
// API's run(check) and check(emu) share. Requires buffers of the same shape and type (the
// reference's copy); guarantees a verdict per buffer within the output type's tolerance, and the
// first buffer out of tolerance as a UserError naming its first bad element, both values and the
// tolerance. Runs on the host, after the launch.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/exec/Executor.h"
#include "driver/Spec.h"

namespace tawa::driver {

// Tolerance of a comparison against the executor: |got - ref| <= rtol * |ref| + atol, where atol is
// rtol times the reference's root mean square (so values that cancel to near zero still compare).
// rtol grows with the output type's rounding step (a few units in the last place, since the GPU
// sums in a different order); integers compare exactly.
double relativeTolerance(ir::Scalar s);

struct Comparison {
  bool ok = true;
  int64_t elements = 0, mismatches = 0;
  int64_t firstBad = -1;           // flat index of the first element out of tolerance
  double got = 0, want = 0;        // its values
  double maxAbsErr = 0, relL2 = 0; // ||got - ref|| / ||ref||
  double rtol = 0, atol = 0;
};
// `precision`: the type whose rounding sets the tolerance (by default the reference's dtype); for an
// integer buffer, a float type makes it compare within that float's tolerance and one unit (integers
// converted from computed floats), where it would compare exactly.
Comparison compareBuffers(const exec::Buffer& got, const exec::Buffer& ref, std::optional<ir::Scalar> precision = std::nullopt);

// Each buffer of `got` against `want` (compareBuffers), a line per buffer to `out` ("  check NAME:
// matches the CPU executor (...)"); the first out of tolerance is a UserError at `at` naming its
// first bad element, both values and the tolerance. `who` names the result's source in it ("GPU",
// "emulated CUDA kernel"); `hint` goes with it.
// With `kernel`, each buffer is compared at the precision of what the kernel stores into it
// (storedPrecision): an f32 buffer written with values computed in f16 (`acc.to(tl.float16)` stored
// through an f32 pointer) carries f16's rounding, which another summation order moves by a unit.
void checkBuffers(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& want, const std::string& who,
                  const Location& at, const std::string& hint, std::ostream& out, const ir::Func* kernel = nullptr);

// For each pointer argument of `kernel` (by name) that a store or descriptor store writes, the
// coarsest float type the stored values pass through on their way there: the stored type and the
// type of each float the kernel computes them from (ir::opsBehind: a cast's result, a dot's, any
// arithmetic's; not loaded data). For integers stored, that of the floats computed on the way, where
// one is converted to an integer there (`(acc * s).to(tl.int8)`); else none (compared exactly).
std::map<std::string, ir::Scalar> storedPrecision(const ir::Func& kernel);

// The pointer arguments of `kernel` (by name) that float atomics add into (tile.atomic add, a reduce-add
// tile.desc_store): their sums depend on the order the adds run in, on a GPU as on the emulator.
std::set<std::string> orderDependentBuffers(const ir::Func& kernel);

// Where `got` (a later schedule's buffers) differs from `first`: bit for bit, except the buffers
// `orderDependent` names, compared within their type's tolerance (compareBuffers); nullopt when none does.
std::optional<std::string> scheduleDifference(const std::vector<exec::Buffer>& got, const std::vector<exec::Buffer>& first,
                                              const std::set<std::string>& orderDependent);

// FLOPs of one launch for kernels that hold a tile.dot (any level): 2*M*N*K from the spec's
// integer entries named M, N and K (any case). nullopt when the kernel has no dot or a name lacks.
std::optional<double> dotFlops(const ir::Module& m, const Spec& spec);

}  // namespace tawa::driver
