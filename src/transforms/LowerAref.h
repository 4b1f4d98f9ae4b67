// lower-aref: lowers asynchronous references to the nv level: shared-memory rings, mbarriers, TMA
// copies and async MMAs — the mbarrier protocol of DESIGN.md's aref semantics.
//   requires: warp-specialized IR (after warp-specialize, optionally pipeline) whose aref payloads
//     are produced by tile.desc_load ops in the producer.
//   guarantees: each aref.create of depth D becomes one nv.smem_alloc ring of D slots per payload
//     member and two mbarrier arrays: `full` (1 arrival: the producer's arrive.expect_tx, plus the
//     copies' transaction bytes) and `empty` (one arrival per consumer warp group). Iteration i uses
//     slot i mod D and phase (i div D) mod 2; the producer waits on empty with the phase inverted,
//     announces the slot's bytes and issues one TMA copy per member; the consumer waits on full.
//     A tile.dot of two payload tiles of one aref.get (either possibly transposed: arefPayload)
//     becomes nv.wgmma {trans_a, trans_b} from the slots + commit + wait(P) with P the
//     loop's mma_depth (0 without pipeline); the release of iteration i's slot becomes an arrive on
//     empty after the last use — for P > 0 the slot of iteration i - P inside the loop, and the last
//     P slots after a final wait(0). Other uses of payload tiles read the slot (nv.smem_load).
//     tile.desc_store in the consumer becomes fence.proxy.async + nv.tma_store. Each region starts
//     with its setmaxnreg. The result runs on the executor with the exact barrier semantics.
//   faults (PassOptions::fault, for `tawa check --inject`): skip-release (no arrive on empty),
//     wrong-phase (the producer waits on empty without inverting the phase), depth-off-by-one (slots
//     computed modulo D + 1 over rings of D), missing-expect-tx (no arrive.expect_tx), early-release
//     (the slot is released right after the MMA is issued, before its wait).
//   runs: last, after warp-specialize and pipeline.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void lowerAref(ir::Module& m, const PassOptions& opt);
const std::vector<std::string>& lowerArefFaults();

// The payload value of an aref.get that `v` is, directly or through a 2-D transpose
// (tile.permute {order = [1, 0]}, with *transposed set), or null. The rule by which lower-aref makes
// a tile.dot an nv.wgmma straight from the slots, and by which pipeline marks it asynchronous.
ir::Value* arefPayload(ir::Value* v, bool* transposed = nullptr);

}  // namespace tawa::transforms
