// Named passes and the pipeline driver. The registry below is the one flat list of passes; a
// pipeline is a comma-separated list of names (`--passes canonicalize`). With TAWA_VERIFY_EACH (on
// in test builds) the verifier runs after every pass and a failure names the pass that broke the IR.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

struct PassInfo {
  std::string name;
  std::string summary;
  std::function<void(ir::Module&, const PassOptions&)> run;
};

// Every pass tawa has, in pipeline order.
const std::vector<PassInfo>& registeredPasses();

struct PassTiming {
  std::string name;
  double ms;
};

class PassManager {
 public:
  // Parses "a,b,c"; an unknown name is a UserError listing the known passes.
  void addPipeline(const std::string& list);
  void add(const std::string& name);
  bool empty() const { return passes_.empty(); }

  std::ostream* printAfterAll = nullptr;  // dumps the IR after each pass here
  PassOptions options;
  bool verifyEach =
#ifdef TAWA_VERIFY_EACH
      true;
#else
      false;
#endif

  void run(ir::Module& m);
  const std::vector<PassTiming>& timings() const { return timings_; }
  // "===-- pass timing --===" report with per-pass milliseconds and the total.
  void printTimings(std::ostream& os) const;

 private:
  std::vector<const PassInfo*> passes_;
  std::vector<PassTiming> timings_;
};

}  // namespace tawa::transforms
