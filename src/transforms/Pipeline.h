// pipeline: chooses the MMA depth P of each consumer loop, so that the consumer issues the MMA of
// iteration k, waits until at most P MMA groups are in flight, and releases the slot of k - P.
//   requires: warp-specialized IR (wg.region consumer with a tile.for that gets aref slots).
//   guarantees: a tile.dot whose A and B are payloads of one aref.get (either possibly transposed:
//     arefPayload in LowerAref.h, the rule lower-aref follows) and whose result only flows, through
//     the loop's yield, into the next iteration's accumulator (and after the loop) is marked
//     {async = true};
//     the consumer loop gets {mma_depth = P} with P = the requested depth when every such dot is
//     async, else 0, and `explain` says why. The IR's meaning is unchanged: lower-aref realizes it.
//     Attention (a loop whose MMAs are QK^T and PV, PV accumulating a loaded V into a carried
//     accumulator after a rescale): with D >= 2 the PV MMA of iteration j - 1 is moved right after
//     the QK^T MMA of iteration j, so that it overlaps j's softmax; the loop carries the previous
//     P and V and a flag, releases V's slot j - 1 after that MMA (the aref of PV's B; K's own aref,
//     which warp-specialize gives it, is released after QK^T), and the last PV runs after the loop.
//     The loop gets {pv_overlap = true}; this rewrite keeps results bit for bit.
//   runs: after warp-specialize, before lower-aref.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void pipeline(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
