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
  int producerRegs = 40;   // setmaxnreg budgets (a multiple of 8 in 24..256)
  int consumerRegs = 0;    // 0: chosen by consumerRegsFor (below)
  std::string fault;       // lower-aref: break the lowering on purpose (see LowerAref.h)
  std::ostream* explain = nullptr;  // where passes say what they decided and why
};

// Each consumer warp group's setmaxnreg budget: as asked, else the most that `consumers` groups and the
// producer share in the 512 registers per thread of four warp groups' worth (64K registers for 128
// threads each, setmaxnreg's largest count being 256): 256 for one consumer, 232 for two beside a
// 40-register producer.
inline int consumerRegsFor(const PassOptions& o, int consumers) {
  if (o.consumerRegs > 0) return o.consumerRegs;
  const int share = (512 - o.producerRegs) / (consumers > 1 ? consumers : 1) / 8 * 8;
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
