#include "transforms/PassManager.h"

#include <ostream>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/BlockAccess.h"
#include "transforms/Canonicalize.h"
#include "transforms/DerivePointers.h"
#include "transforms/LowerAref.h"
#include "transforms/OneShotLoop.h"
#include "transforms/ProgramOrder.h"
#include "transforms/Pipeline.h"
#include "transforms/SplitConsumers.h"
#include "transforms/WarpSpecialize.h"

namespace tawa::transforms {

const std::vector<PassInfo>& registeredPasses() {
  static const std::vector<PassInfo> passes = {
      {"canonicalize", "fold constants and constexpr arithmetic, forward identities, remove dead code",
       [](ir::Module& m, const PassOptions&) { canonicalize(m); }},
      {"block-access", "rewrite pointer-arithmetic block loads and stores (and split-K atomic adds) into tensor-descriptor accesses",
       [](ir::Module& m, const PassOptions& o) { blockAccess(m, o); }},
      {"derive-pointers", "compute a tile of pointers a loop advances by a fixed step from the trip number instead of carrying it",
       [](ir::Module& m, const PassOptions& o) { derivePointers(m, o); }},
      {"one-shot-loop", "wrap a tl.dot of block loads made once per program in a loop of one trip, for warp-specialize",
       [](ir::Module& m, const PassOptions& o) { oneShotLoop(m, o); }},
      {"program-order", "launch programs whose loop grows with program_id(0) longest first (causal attention)",
       [](ir::Module& m, const PassOptions& o) { programOrder(m, o); }},
      {"warp-specialize", "split the main loop into a TMA producer and consumer warp groups joined by arefs",
       [](ir::Module& m, const PassOptions& o) { warpSpecialize(m, o); }},
      {"pipeline", "choose the MMA depth: async MMAs left in flight before a slot is released",
       [](ir::Module& m, const PassOptions& o) { pipeline(m, o); }},
      {"split-consumers", "split a single consumer warp group's rows between two cooperative ones (--consumers 2)",
       [](ir::Module& m, const PassOptions& o) { splitConsumers(m, o); }},
      {"lower-aref", "lower arefs to shared-memory rings, mbarriers, TMA and async MMA (nv level)",
       [](ir::Module& m, const PassOptions& o) { lowerAref(m, o); }},
  };
  return passes;
}

void PassManager::add(const std::string& name) {
  for (auto& p : registeredPasses())
    if (p.name == name) {
      passes_.push_back(&p);
      return;
    }
  std::string known;
  for (auto& p : registeredPasses()) known += (known.empty() ? "" : ", ") + p.name;
  throw UserError(Location::at(std::make_shared<const std::string>("<passes>"), 1, 1),
                  "unknown pass '" + name + "'", "known passes: " + known);
}

void PassManager::addPipeline(const std::string& list) {
  size_t b = 0;
  while (b <= list.size()) {
    size_t e = list.find(',', b);
    if (e == std::string::npos) e = list.size();
    std::string name = list.substr(b, e - b);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) add(name);
    b = e + 1;
  }
}

void PassManager::run(ir::Module& m) {
  timings_.clear();
  for (const PassInfo* p : passes_) {
    auto t0 = std::chrono::steady_clock::now();
    p->run(m, options);
    auto t1 = std::chrono::steady_clock::now();
    timings_.push_back({p->name, std::chrono::duration<double, std::milli>(t1 - t0).count()});
    if (verifyEach) {
      try {
        ir::verify(m);
      } catch (const UserError& e) {
        throw InternalError("pass '" + p->name + "' produced invalid IR: " + e.format());
      }
    }
    if (printAfterAll) {
      *printAfterAll << "// -----// IR Dump After " << p->name << " //----- //\n";
      ir::print(m, *printAfterAll);
      *printAfterAll << "\n";
    }
  }
}

void PassManager::printTimings(std::ostream& os) const {
  double total = 0;
  for (auto& t : timings_) total += t.ms;
  os << "===-- pass timing (wall clock) --===\n";
  char line[160];
  for (auto& t : timings_) {
    std::snprintf(line, sizeof line, "  %9.3f ms  %5.1f%%  %s\n", t.ms, total > 0 ? 100 * t.ms / total : 0.0, t.name.c_str());
    os << line;
  }
  std::snprintf(line, sizeof line, "  %9.3f ms  100.0%%  total\n", total);
  os << line;
}

}  // namespace tawa::transforms
