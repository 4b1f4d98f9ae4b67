// What `tawa run` does between the command line and the executor: load a kernel (.tir, or .py
// through the front end), bind a launch spec to its parameters, make the buffers (seeded random
// values, never zeros, or .npy files), run, and save the buffers. Every mistake in the spec, the
// grid or an input file is a located UserError.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "ir/IR.h"

namespace tawa::driver {

struct LoadedKernel {
  std::unique_ptr<ir::Module> module;
  ir::Func* kernel = nullptr;
};

// Reads FILE (.tir: parsed and verified; .py: compiled with the spec by the front end) and picks the
// kernel named `name` (empty: the file's only kernel, else its first, as a .tir file's entry).
LoadedKernel loadKernel(const std::string& path, const std::string& name, const Spec& spec);

struct Bound {
  std::vector<exec::Buffer> buffers;
  std::vector<exec::Arg> args;
  std::array<int64_t, 3> grid{1, 1, 1};
};

// Matches spec entries to the kernel's parameters by name, makes each buffer and fills it with
// random values from `seed` (floats uniform in [-1, 1], integers in [-64, 64], zero excluded),
// and evaluates the grid. Each buffer's values depend only on the seed and the buffer's name (fixed
// chunks, each with its own generator, filled in parallel: the same on any number of threads).
// Buffers named in `loaded` (those `--load` replaces next) are left zero: filling a 256 MiB buffer
// only to overwrite it cost tens of seconds.
Bound bind(const ir::Func& kernel, const Spec& spec, const std::string& grid, uint64_t seed,
           const std::vector<std::string>& loaded = {});
// The names of the buffers that --load arguments (NAME=FILE.npy) replace, for bind().
std::vector<std::string> loadedNames(const std::vector<std::string>& loads);
// Replaces buffer NAME's contents with a .npy file (shape and dtype must match the spec).
void loadInto(Bound& b, const std::string& name, const std::string& npyPath);
// loadInto for each --load argument NAME=FILE.npy; a malformed one is a UserError at "--load".
void loadAll(Bound& b, const std::vector<std::string>& loads);
// Writes every buffer to DIR/NAME.npy (creating DIR).
void saveAll(const Bound& b, const std::string& dir);

}  // namespace tawa::driver
