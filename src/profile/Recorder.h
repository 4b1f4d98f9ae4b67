// Records a kernel run on the CPU executor as profile events timed by the cost model (virtual
// clocks). Each warp group has a clock that the ops it runs advance by their cost:
//   - an mbarrier wait ends at max(own clock, the virtual time the awaited phase completed) + the
//     wake-up cost; a phase completes at the latest of its arrivals and transaction bytes;
//   - a TMA copy lands at issue + its turn on the SM's memory pipe (bytes / per-SM bandwidth) +
//     latency, and contributes its bytes to the barrier at that time;
//   - an MMA runs at max(issue, tensor core free) for 2*M*N*K/4096 cycles; its group completes when
//     its last MMA does, and nv.wgmma_wait advances the clock to the completion of the groups it
//     retires.
// Ops are classified into the scopes of Events.h; consecutive ops of one scope, iteration and slot
// merge into one event. Blocks start at 0 on their own axis; finish() places them on their SMs
// (programs handed out in program order, each to the SM that frees first: the lowest-numbered among
// equals; an SM's programs back to back).
//
// Threads: program(...) may be called concurrently; one ProgramRecorder is used by one program's
// warp groups, which the executor's scheduler runs one at a time.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/IR.h"
#include "profile/CostModel.h"
#include "profile/Events.h"

namespace tawa::profile {

// Busy intervals of one resource (the tensor core, the memory pipe): a request is placed at the
// earliest gap of its length at or after its ready time, so the warp groups' real (scheduler)
// order does not decide who goes first.
class Calendar {
 public:
  double book(double ready, double length);
  const std::vector<std::pair<double, double>>& intervals() const { return busy_; }

 private:
  std::vector<std::pair<double, double>> busy_;  // sorted, disjoint
};

// Cycle totals of one warp group, per scope.
struct GroupTotals {
  std::string role;
  std::array<double, static_cast<size_t>(Scope::Count)> scope{};
  double end = 0;  // its clock when it finished
};

class ProgramRecorder {
 public:
  ProgramRecorder(const CostModel& m, int64_t block, std::array<int64_t, 3> pid, int sm, size_t capacity);

  // The executor's hooks.
  void beginGroups(const std::vector<std::string>& roles);
  void endGroup(int wg);
  void op(int wg, const ir::Op& op, int64_t iter, int64_t slot);  // any op not timed below
  void wait(int wg, const ir::Op& op, int64_t iter, const void* bar, int64_t idx, const std::string& kind);
  void arrive(int wg, const ir::Op& op, int64_t iter, const void* bar, int64_t idx, bool completed, const std::string& kind);
  double tmaLoad(int wg, const ir::Op& op, int64_t iter, int64_t slot);  // returns when it lands
  void landed(const void* bar, int64_t idx, double at, bool completed);

  // Results.
  BlockTrace trace;
  std::vector<GroupTotals> groups;
  std::vector<std::pair<double, double>> mmaIntervals() const { return tensorCore_.intervals(); }
  double flops = 0, bytesLoaded = 0, bytesStored = 0;
  int64_t mmas = 0;
  std::array<int64_t, 3> mmaShape{0, 0, 0};  // M, N, K of the first wgmma
  double stageBytes = 0;                      // bytes of TMA per iteration of the first loop (one slot)
  double finish();                            // closes open events; returns the block's duration
  bool placed = false;                        // adopted: timed and placed by the backend that ran it

 private:
  struct Group {
    double clock = 0;
    bool consumer = false, issuedMma = false, open = false;
    Event cur;
    std::deque<double> mmaGroups;  // completion times of committed groups in flight
    double openGroup = -1;         // completion of the group being built (-1: none)
  };
  struct Bar {
    double pending = 0, completedAt = 0;
  };
  void charge(int wg, Scope s, const ir::Op& op, int64_t iter, int64_t slot, double cycles);
  void flush(Group& g);
  Scope classify(const Group& g, const ir::Op& op);
  bool inMainLoop(const ir::Op& op);

  const CostModel& m_;
  std::vector<Group> g_;
  std::map<std::pair<const void*, int64_t>, Bar> bars_;
  Calendar tensorCore_, memPipe_;
  std::unordered_map<const ir::Op*, bool> loopHasMma_;
  int64_t firstStageIter_ = -1;
};

class Recorder {
 public:
  explicit Recorder(CostModel m = CostModel::h200(), size_t eventsPerBlock = 4096) : model_(std::move(m)), capacity_(eventsPerBlock) {}
  const CostModel& model() const { return model_; }

  // The recorder of program `linear` (thread-safe).
  ProgramRecorder* program(int64_t linear, std::array<int64_t, 3> pid);
  // A block timed by the backend that ran it (the CUDA backend's --profile buffer, decoded: GPU
  // clocks, or the emulator's modelled clock): per-warp-group scope totals come from its events,
  // and finish() keeps its offset and duration. flops and bytes: this block's share of the launch.
  ProgramRecorder* adopt(BlockTrace trace, double flops, double bytes);
  // After the launch: closes every block and places it on its SM's time axis.
  void finish();

  // After finish(): blocks in program order.
  std::vector<ProgramRecorder*> programs() const;
  std::vector<BlockTrace> traces() const;
  double kernelCycles() const { return kernelCycles_; }
  int64_t lostEvents() const;

 private:
  CostModel model_;
  size_t capacity_;
  std::mutex mu_;
  std::map<int64_t, std::unique_ptr<ProgramRecorder>> programs_;
  double kernelCycles_ = 0;
};

}  // namespace tawa::profile
