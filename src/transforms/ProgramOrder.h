// program-order: programs whose work grows with their index along grid axis 0 (causal attention:
// program m runs m + 1 key blocks) are launched longest first. The GPU dispatches blocks in index
// order to whichever SM frees first, so with the shortest first the last wave holds the longest
// programs and the SMs idle while they finish; longest first (FlashAttention-3's scheduler for
// causal attention) ends on short ones.
//   requires: canonicalized tile IR, before warp-specialize (which may make the kernel persistent:
//     then the tile loop sets the order, and this pass leaves it alone).
//   guarantees: where the kernel's programs cannot observe their order (no tile.atomic, no
//     tile.barrier, no tile.while, no persistent option) and a top-level tile.for's trip count
//     grows with tile.program_id {axis = 0} (its upper bound an increasing function of it: sums,
//     differences, products and quotients by positive constants; its lower bound not increasing; a
//     positive constant step), every use of each tile.program_id {axis = 0} (a kernel may read it more than once) reads
//     num_programs(0) - 1 - program_id(0)
//     instead: program p computes what program P - 1 - p did, so every program's work and every
//     buffer is as before, only their launch order is reversed. `explain` says so, or why not.
//   runs: after canonicalize and block-access, before warp-specialize; PassOptions::keepProgramOrder
//     turns it off (--keep-program-order).
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void programOrder(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
