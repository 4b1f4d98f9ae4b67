// Tuning a tawa kernel (`tawa tune FILE --kernel K --spec ...`): its static features from the tile
// IR, its parameter space (tile sizes and the warp-specialization options) with the Hopper limits as
// constraints, and the MaSiF search over kernels tuned earlier (the record's programs of kind
// "kernel"). Each configuration is measured by `tawa run --backend cuda --check none`, so tuning
// needs a GPU; `--dry-run` shows features, neighbours and the plan without one, and `--import` puts
// results measured elsewhere into the record.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "driver/Spec.h"
#include "ir/IR.h"
#include "tune/Features.h"
#include "tune/Tuner.h"

namespace tawa::tune {

// Features of a kernel (before warp specialization), all named "kernel.*": log(1 + count) of dot,
// elementwise, reduction, transcendental, load and store ops; loop count and nesting depth; the dot
// operands' dtype (one-hot; the loads' when there is no dot); log(1 + flops per byte loaded) of one
// iteration of the innermost loop (dots count 2*M*N*K, elementwise ops one per element) at the
// spec's tile sizes; and the problem shape (log of the largest buffer dimension and of all buffer
// elements). The kind is "kernel", so kernels are neighbours of kernels only.
Features kernelFeatures(const ir::Func& kernel, const driver::Spec& spec);

// The space of a kernel as SPACE.json text. Tile sizes: every integer constexpr of the spec whose
// name starts with BLOCK or TILE, as powers of two 16..256; for a kernel with no tile.dot and no
// descriptor (a SIMT kernel, driver::simtOnly) from the spec's size, rounded up to a power of two,
// to 4x that (at most 4096), since its block may have to cover a whole row. With a dot inside a loop (the kernels
// warp specialization applies to) also depth (D, 1..6), mma_depth (P, 0..3, below D), consumers
// (1, 2), persistent (0, or 132 programs: the SMs of an H100/H200) and group_m (0, 4, 8, 16; only
// when persistent). Constraints, from the tile shapes the kernel's loads and dots take as functions
// of the tile sizes (found by compiling it once with distinct probe sizes):
//   shared memory: depth x (bytes of the tiles loaded per loop iteration) + (bytes of the tiles
//     stored through descriptors, staged in shared memory) <= 227 KB;
//   accumulators: (dot M x dot N) / (128 x consumers) fp32 registers per thread <= 168 (of the
//     consumers' 232, leaving room for addresses and operands);
//   wgmma: the dot's M tile a multiple of 64 per consumer warp group.
// The "default" is the spec's own tile sizes with D = 2, P = 1, one consumer, not persistent.
std::string kernelSpaceJson(const std::string& path, const std::string& kernel, const driver::Spec& spec);

struct KernelTuneArgs {
  std::string file, kernel, spec, grid, db, importPath;
  bool printFeatures = false;  // print the kernel's static features (JSON) and stop
  // The search and its measurements, as `tawa tune` builds them for every mode (method, budget, seed,
  // neighbours, repetitions, dry run, fresh); tuneKernel adds the kernel mode's own settings.
  TuneOptions search;
};

// The kernel mode of `tawa tune`; returns the exit status. Throws UserError on bad input, and when
// there is no GPU to measure on (unless dry-run or import).
int tuneKernel(const KernelTuneArgs& a, std::ostream& out);

}  // namespace tawa::tune
