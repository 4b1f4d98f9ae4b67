// pipeline: chooses the MMA depth P of each consumer loop, so that the consumer issues the MMA of
// iteration k, waits until at most P MMA groups are in flight, and releases the slot of k - P.
//   requires: warp-specialized IR (wg.region consumer with a tile.for that gets aref slots).
//   guarantees: a tile.dot that reads aref payloads and whose result only flows, through the loop's
//     yield, into the next iteration's accumulator (and after the loop) is marked {async = true};
//     the consumer loop gets {mma_depth = P} with P = the requested depth when every such dot is
//     async, else 0, and `explain` says why. The IR's meaning is unchanged: lower-aref realizes it.
//   runs: after warp-specialize, before lower-aref.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void pipeline(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
