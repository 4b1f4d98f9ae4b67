// The profile's summary: per-role shares of time (busy, waiting on full, waiting on empty, waiting
// on MMAs, softmax, epilogue), tensor-core issue gaps, achieved TFLOP/s and GB/s against the
// device's ceilings (roofline), and advice derived from them. On the executor every figure is
// modelled (the cost model's clock), and the text says so.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/Recorder.h"

namespace tawa::profile {

// The tuner parameters the advice speaks of (0: unknown).
struct Params {
  int depth = 0;       // D
  int mmaDepth = 0;    // P, as the pipeline pass chose it
  int consumers = 1;
  int64_t blockM = 0, blockN = 0, blockK = 0;  // the tile: M x N per block, K per iteration
  double stageBytes = 0;                       // shared memory of one aref slot (all operands)
};

struct RoleSummary {
  std::string role;
  int groups = 0;    // warp groups of this role, over all blocks
  double total = 0;  // cycles: block duration x warp groups
  double busy = 0, waitFull = 0, waitEmpty = 0, mmaWait = 0, softmax = 0, epilogue = 0, idle = 0;
  double share(double x) const { return total > 0 ? x / total : 0; }
};

struct Summary {
  std::string kernel, device;
  bool modelled = true;
  std::string timedBy = "tawa's cost model on the CPU executor";  // what produced the times
  std::string capacityFlag = "--events-per-block";                // raises the event buffers
  bool tensorCoreSeen = true;  // false: the trace has issue and wait scopes only (--profile kernels)
  Params params;
  int64_t programs = 0;
  int smsUsed = 0, sms = 132;
  double kernelCycles = 0, kernelUs = 0;
  double flops = 0, bytes = 0;
  double tflops = 0, gbps = 0;
  double peakTflops = 0, peakGbps = 0;          // the device's ceilings
  double intensity = 0, ridge = 0;              // flop per byte: the kernel's, and the roofline's knee
  double attainableTflops = 0, rooflinePct = 0;  // min(peak, intensity x bandwidth); achieved / attainable
  bool memoryBound = false;
  double lastWaveSms = 0;                       // programs in the last wave
  std::vector<RoleSummary> roles;
  int64_t mmas = 0;
  double tcBusy = 0;     // share of block time the tensor core computes
  double mmaGapShare = 0;  // idle share of the span from the first MMA's start to the last one's end
  double mmaGapMean = 0;   // cycles per gap between consecutive MMAs
  int64_t events = 0, lostEvents = 0;

  const RoleSummary* role(const std::string& r) const;
};

struct Advice {
  std::string rule;   // a stable name: loads-bound, bandwidth-bound, consumer-bound, ...
  std::string param;  // the tuner parameter it turns: D, P, consumers, BLOCK_K, BLOCK_N, ...
  std::string text;
};

Summary summarize(const Recorder& rec, const std::string& kernel, const Params& params);
// The advice rules, each tied to a tuner parameter and quantified; thresholds in Summary.cpp.
std::vector<Advice> advise(const Summary& s);

void printSummary(std::ostream& os, const Summary& s, const std::vector<Advice>& advice);
nlohmann::json toJson(const Summary& s, const std::vector<Advice>& advice);

}  // namespace tawa::profile
