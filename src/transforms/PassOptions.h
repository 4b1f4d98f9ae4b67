// Options of the warp-specialization pipeline, shared by its passes (each reads what it needs).
#pragma once

#include <iosfwd>
#include <string>

namespace tawa::transforms {

struct PassOptions {
  int depth = 0;           // aref depth D: slots in each ring; 0 lets warp-specialize choose (the
                           // spec's num_stages hint within the shared memory, else 2)
  int mmaDepth = 1;        // MMA depth P: async MMA groups left in flight before a slot is released
  int consumers = 0;       // consumer warp groups: 1, 2 (cooperative, splitting the M tile), or 0 to
                           // let the passes choose (consumerGroupsFor in WarpSpecialize.h)
  int persistent = 0;      // > 0: make the kernel persistent on this many programs (e.g. #SMs)
  int groupM = 0;          // persistent tile order: > 0 groups this many rows of tiles (0: row-major)
  int producerRegs = 0;    // setmaxnreg budgets (a multiple of 8 in 24..256); 0: chosen by
  int consumerRegs = 0;    // producerRegsFor and consumerRegsFor (below)
  bool keepProgramOrder = false;  // program-order: launch programs in their order as written (ProgramOrder.h)
  bool sharedRing = false;  // warp-specialize: one aref for all of a loop's loads (not one per value read apart)
  std::string fault;       // lower-aref: break the lowering on purpose (see LowerAref.h)
  std::ostream* explain = nullptr;  // where passes say what they decided and why
};

// The producer warp group's setmaxnreg budget: as asked, else 40 beside one consumer and 32 beside
// two (FlashAttention-3 gives its producer 24-32 beside two consumers): the producer holds addresses,
// loop counters and, for tile maps, one 16-byte chunk at a time, and ptxas compiles tawa's producers
// within 32 without spills (tests/lit/ws/auto_choices.test), while two consumers' accumulators need
// every register they can get (attention at 128x128, head dim 128, spills 76 B at 232 and none at 240).
// A producer whose threads copy tile maps stays within 32 as long as ptxas does not unroll the copy's
// chunk loop (tile_load_generic in primitives.cuh).
inline int producerRegsFor(const PassOptions& o, int consumers) {
  if (o.producerRegs > 0) return o.producerRegs;
  return consumers > 1 ? 32 : 40;
}

// Each consumer warp group's setmaxnreg budget: as asked, else the most that `consumers` groups and the
// producer share in the 512 registers per thread of four warp groups' worth (64K registers for 128
// threads each, setmaxnreg's largest count being 256): 256 for one consumer, 240 for two beside a
// 32-register producer.
inline int consumerRegsFor(const PassOptions& o, int consumers) {
  if (o.consumerRegs > 0) return o.consumerRegs;
  const int share = (512 - producerRegsFor(o, consumers)) / (consumers > 1 ? consumers : 1) / 8 * 8;
  return share < 256 ? share : 256;
}

// The command line's --depth value: "auto" becomes 0; 1 to 8 stay. The error message for anything
// else ("" when valid).
inline std::string depthFlag(std::string& v) {
  if (v == "auto") v = "0";
  return v.size() == 1 && v[0] >= '0' && v[0] <= '8' ? "" : "must be auto or 1 to 8, got '" + v + "'";
}

// The command line's --consumers value: "auto" becomes 0; "1" and "2" stay. Returns the error message
// for anything else ("" when valid), as a CLI11 validator does.
inline std::string consumersFlag(std::string& v) {
  if (v == "auto") v = "0";
  return v == "0" || v == "1" || v == "2" ? "" : "must be auto, 1 or 2, got '" + v + "'";
}

}  // namespace tawa::transforms
