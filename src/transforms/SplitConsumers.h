// split-consumers: gives a warp-specialized kernel two cooperative consumer warp groups by splitting
// its one consumer's rows in half, when warp-specialize could not (it splits GEMM-like loops
// itself): each half computes the same program on M/2 rows of the block — fused attention's query
// rows, as FlashAttention-3 runs them — and both share the producer's arefs.
//   requires: ws-level IR (after warp-specialize and pipeline, before lower-aref) with one producer
//     and one consumer wg.region; consumerGroupsFor (WarpSpecialize.h) gives 2: options.consumers
//     == 2, or 0 and the kernel's accumulators or num_warps hint call for two. Otherwise it does
//     nothing.
//   analysis: the row-indexed values are those tied, through the ops that keep the row dimension
//     (elementwise ops, tile.dot's A operand and accumulator, reductions along axis 1, expand_dims
//     along axis 1, broadcasts of a row-indexed tile, loop-carried and tile.if values), to a tile
//     stored with tile.desc_store. Each must have M rows (the stored block's, a multiple of 128) and
//     come from a constant, splat, arange, tile.desc_load (its row coordinate is the block's), a
//     tile the producer loads once before its loop (warp-specialize's depth-1 aref of one tile, such
//     as attention's Q) or those ops; a row-indexed payload of the main aref, or any other op
//     touching one, leaves the kernel unchanged and `explain` says why.
//   guarantees: the consumer region is replaced by two, consumer h in [0, 2) computing rows
//     [h * M/2, (h + 1) * M/2): row-indexed types halved, aranges shifted, tile.desc_load and
//     tile.desc_store coordinates moved by h * M/2 rows through descriptors with half-height blocks
//     (made next to the original: at the top of the kernel, or at the consumer's top level where
//     block-access put the descriptor of a store after the loops), row-indexed values defined
//     before the regions copied into each
//     half; a tile the producer loads once is loaded as two half-height blocks, each put into an
//     aref of its own {consumers = 1} that one half gets and releases; every other aref.create gets
//     {consumers = 2}. The kernel computes the same values.
//   runs: after pipeline, before lower-aref.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void splitConsumers(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
