// one-shot-loop: a tl.dot whose operands are block loads made once per program (no K loop: the whole
// contraction in one tile) gets a loop of one trip around those loads and the dot, so that
// warp-specialize streams them through an aref like a K loop of one step: the producer's TMA loads,
// the consumer's wgmma, the same epilogue. Without it such a kernel has nothing to pipeline and the
// CUDA backend falls back to its SIMT form.
//   requires: canonicalized tile IR after block-access.
//   guarantees: in a function where no tile.for holds a tile.desc_load (warp-specialize would find a
//     loop of its own), the first top-level tile.dot that reads, through pure tile ops used by
//     nothing else, at least one top-level tile.desc_load used by nothing else, is replaced by
//     `tile.for 0, 1, 1` carrying its accumulator (the dot's own, or zeros: the same sum) whose body
//     holds those loads, those ops and the dot; everything else is left where it was. `explain` says
//     what was wrapped, or why nothing was. The result verifies; it computes what the kernel did.
//   runs: after block-access, before warp-specialize.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void oneShotLoop(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
