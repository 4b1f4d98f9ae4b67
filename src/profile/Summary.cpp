#include "profile/Summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace tawa::profile {

namespace {

double at(const GroupTotals& g, Scope s) { return g.scope[static_cast<size_t>(s)]; }

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * x);
  return b;
}
std::string num(double x, int prec = 1) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}

}  // namespace

const RoleSummary* Summary::role(const std::string& r) const {
  for (auto& x : roles)
    if (x.role == r) return &x;
  return nullptr;
}

Summary summarize(const Recorder& rec, const std::string& kernel, const Params& params) {
  const CostModel& m = rec.model();
  Summary s;
  s.kernel = kernel;
  s.device = m.device;
  s.params = params;
  s.sms = m.sms;
  double blockTime = 0, tcBusy = 0, span = 0, gaps = 0;
  int64_t gapCount = 0;
  for (auto* p : rec.programs()) {
    ++s.programs;
    const double d = p->trace.duration;
    blockTime += d;
    s.flops += p->flops;
    s.bytes += p->bytesLoaded + p->bytesStored;
    s.mmas += p->mmas;
    s.events += static_cast<int64_t>(p->trace.events.size());
    s.lostEvents += p->trace.lost;
    if (s.params.blockM == 0 && p->mmas > 0) {
      s.params.blockM = p->mmaShape[0] * std::max(1, params.consumers);
      s.params.blockN = p->mmaShape[1];
      s.params.blockK = p->mmaShape[2];
    }
    if (s.params.stageBytes == 0) s.params.stageBytes = p->stageBytes;
    for (auto& g : p->groups) {
      auto it = std::find_if(s.roles.begin(), s.roles.end(), [&](const RoleSummary& r) { return r.role == g.role; });
      if (it == s.roles.end()) {
        s.roles.push_back(RoleSummary{});
        s.roles.back().role = g.role;
        it = s.roles.end() - 1;
      }
      RoleSummary& r = *it;
      ++r.groups;
      r.total += d;
      r.waitFull += at(g, Scope::WaitFull);
      r.waitEmpty += at(g, Scope::WaitEmpty);
      r.mmaWait += at(g, Scope::MmaWait);
      r.softmax += at(g, Scope::Softmax);
      r.epilogue += at(g, Scope::Epilogue) + at(g, Scope::TmaStore);
      double all = 0;
      for (double x : g.scope) all += x;
      r.busy += all - at(g, Scope::WaitFull) - at(g, Scope::WaitEmpty) - at(g, Scope::MmaWait);
      r.idle += d - g.end;
    }
    auto iv = p->mmaIntervals();
    for (auto& [b, e] : iv) tcBusy += e - b;
    if (!iv.empty()) {
      span += iv.back().second - iv.front().first;
      for (size_t k = 1; k < iv.size(); ++k) gaps += iv[k].first - iv[k - 1].second;
      gapCount += static_cast<int64_t>(iv.size()) - 1;
    }
  }
  s.kernelCycles = rec.kernelCycles();
  s.kernelUs = s.kernelCycles / m.cyclesPerUs();
  s.smsUsed = static_cast<int>(std::min<int64_t>(s.programs, m.sms));
  s.lastWaveSms = s.programs == 0 ? 0 : static_cast<double>(s.programs % m.sms == 0 ? m.sms : s.programs % m.sms);
  double secs = s.kernelUs * 1e-6;
  if (secs > 0) {
    s.tflops = s.flops / secs / 1e12;
    s.gbps = s.bytes / secs / 1e9;
  }
  s.peakTflops = m.peakFlops() / 1e12;
  s.peakGbps = m.peakBytes() / 1e9;
  s.ridge = m.peakFlops() / m.peakBytes();
  s.intensity = s.bytes > 0 ? s.flops / s.bytes : 0;
  s.memoryBound = s.intensity < s.ridge;
  s.attainableTflops = std::min(s.peakTflops, s.intensity * s.peakGbps / 1e3);
  s.rooflinePct = s.attainableTflops > 0 ? s.tflops / s.attainableTflops : 0;
  s.tcBusy = blockTime > 0 ? tcBusy / blockTime : 0;
  s.mmaGapShare = span > 0 ? gaps / span : 0;
  s.mmaGapMean = gapCount > 0 ? gaps / static_cast<double>(gapCount) : 0;
  return s;
}

// Thresholds of the advice rules (shares of a role's time).
constexpr double kWaitFullHigh = 0.20;      // loads-bound
constexpr double kBandwidthHigh = 0.70;     // bandwidth-bound: of the used SMs' bandwidth share
constexpr double kWaitEmptyHigh = 0.50;     // consumer-bound ...
constexpr double kWaitFullLow = 0.10;       // ... while consumers rarely wait on full
constexpr double kMmaWaitHigh = 0.15;       // mma-wait
constexpr double kSoftmaxHigh = 0.25;       // softmax
constexpr double kEpilogueHigh = 0.15;      // epilogue
constexpr double kLastWaveLow = 0.50;       // wave-tail

std::vector<Advice> advise(const Summary& s) {
  std::vector<Advice> out;
  const Params& p = s.params;
  const RoleSummary* cons = s.role("consumer");
  const RoleSummary* prod = s.role("producer");
  auto k = [](int64_t v) { return std::to_string(v); };
  const std::string how = s.modelled ? "modelled" : "measured";  // the times; thresholds are the cost model's either way
  if (cons && cons->share(cons->waitFull) >= kWaitFullHigh) {
    std::string t = "consumers wait on full " + pct(cons->share(cons->waitFull)) +
                    " of the time (" + how + "): loads cannot keep up — D " + k(p.depth) + " -> " + k(p.depth + 1);
    if (p.blockK > 0) t += ", or BLOCK_K " + k(p.blockK) + " -> " + k(2 * p.blockK) + " (fewer, larger copies per MMA)";
    out.push_back({"loads-bound", "D", t});
  }
  double bwShare = s.peakGbps * s.smsUsed / std::max(1, s.sms);
  if (s.memoryBound && bwShare > 0 && s.gbps >= kBandwidthHigh * bwShare) {
    std::string t = std::string("memory-bound (") + how + "): " + num(s.gbps, 0) + " GB/s is " + pct(s.gbps / bwShare) +
                    " of the bandwidth of the " + std::to_string(s.smsUsed) + " SM(s) in use, at " + num(s.intensity) +
                    " flop/byte (ridge " + num(s.ridge, 0) + ")";
    if (p.blockM > 0 && p.blockN > 0) {
      double now = static_cast<double>(p.blockM * p.blockN) / static_cast<double>(p.blockM + p.blockN);
      double next = static_cast<double>(p.blockM * 2 * p.blockN) / static_cast<double>(p.blockM + 2 * p.blockN);
      t += " — BLOCK_N " + k(p.blockN) + " -> " + k(2 * p.blockN) + " raises the reuse of each loaded byte by " +
           pct(next / now - 1);
    } else {
      t += " — larger BLOCK_M / BLOCK_N tiles reuse each loaded byte more";
    }
    out.push_back({"bandwidth-bound", "BLOCK_N", t});
  }
  if (prod && cons && p.depth >= 2 && prod->share(prod->waitEmpty) >= kWaitEmptyHigh &&
      cons->share(cons->waitFull) < kWaitFullLow) {
    std::string t = "the producer waits on empty " + pct(prod->share(prod->waitEmpty)) +
                    " of the time while consumers wait on full only " + pct(cons->share(cons->waitFull)) +
                    " (" + how + "): the consumers set the pace — D " + k(p.depth) + " -> " + k(p.depth - 1);
    if (p.stageBytes > 0) t += " frees " + num(p.stageBytes / 1024) + " KiB of shared memory";
    if (p.consumers == 1) t += "; or consumers 1 -> 2 to add compute";
    out.push_back({"consumer-bound", "D", t});
  }
  if (cons && p.mmaDepth == 0 && cons->share(cons->mmaWait) >= kMmaWaitHigh) {
    std::string t = "consumers wait on their own MMAs " + pct(cons->share(cons->mmaWait)) +
                    " of the time with P = 0 (" + how + "): each MMA is waited for before the next is issued — P 0 -> 1";
    if (p.depth < 2) t += " (needs D >= 2: D " + k(p.depth) + " -> 2)";
    out.push_back({"mma-wait", "P", t});
  }
  if (cons && p.consumers == 1 && cons->share(cons->softmax) >= kSoftmaxHigh) {
    out.push_back({"softmax", "consumers",
                   "softmax takes " + pct(cons->share(cons->softmax)) + " of consumer time between MMAs and the tensor core is busy " +
                       pct(s.tcBusy) + " of the block (" + how + ") — consumers 1 -> 2 lets one warp group's softmax overlap the "
                       "other's MMAs"});
  }
  // With the grid short of the SMs, fewer and larger programs would make that worse: the grid
  // rule below speaks instead.
  bool underfilled = s.programs > 0 && s.programs < s.sms;
  if (cons && cons->share(cons->epilogue) >= kEpilogueHigh && !underfilled) {
    std::string t = "the epilogue takes " + pct(cons->share(cons->epilogue)) + " of consumer time (" + how + "): each program does little work";
    if (p.blockN > 0) t += " — BLOCK_N " + k(p.blockN) + " -> " + k(2 * p.blockN) + " halves the number of epilogues";
    t += ", or a persistent grid (" + std::to_string(s.sms) + " programs) overlaps each epilogue with the next tile's loads";
    out.push_back({"epilogue", "BLOCK_N", t});
  }
  if (s.programs > 0 && s.programs < s.sms) {
    std::string t = "the grid fills " + std::to_string(s.programs) + " of " + std::to_string(s.sms) + " SMs (" +
                    pct(static_cast<double>(s.programs) / s.sms) + "): at most that share of the modelled device ceilings";
    std::string param = "BLOCK_M";
    if (p.blockM > 64) t += " — BLOCK_M " + k(p.blockM) + " -> " + k(p.blockM / 2) + " doubles the programs";
    else if (p.blockN > 8) t += " — BLOCK_N " + k(p.blockN) + " -> " + k(p.blockN / 2) + " doubles the programs (or split K)", param = "BLOCK_N";
    else t += " — split K to give more programs work";
    out.push_back({"grid", param, t});
  } else if (s.programs > s.sms && s.lastWaveSms / s.sms < kLastWaveLow) {
    int64_t waves = (s.programs + s.sms - 1) / s.sms;
    double eff = static_cast<double>(s.programs) / static_cast<double>(waves * s.sms);
    out.push_back({"wave-tail", "BLOCK_N",
                   "the last of " + std::to_string(waves) + " waves runs on " + num(s.lastWaveSms, 0) + " of " +
                       std::to_string(s.sms) + " SMs: wave efficiency " + pct(eff) +
                       " (" + how + ") — choose BLOCK_M / BLOCK_N so the programs are a multiple of " + std::to_string(s.sms) +
                       ", or a persistent grid"});
  }
  return out;
}

void printSummary(std::ostream& os, const Summary& s, const std::vector<Advice>& advice) {
  os << "profile @" << s.kernel << " on " << s.device
     << (s.modelled ? ": every figure is modelled by " + s.timedBy + ", not measured\n"
                    : ": times measured by " + s.timedBy + "; device ceilings and advice thresholds are the cost model's\n");
  os << "  " << s.programs << " program(s) on " << s.smsUsed << " of " << s.sms << " SMs; kernel " << num(s.kernelUs, 2)
     << " us (" << num(s.kernelCycles, 0) << " cycles) " << (s.modelled ? "modelled" : "measured") << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %6s %6s %10s %11s %9s %8s %9s %6s\n", "role", "groups", "busy", "wait full",
                "wait empty", "MMA wait", "softmax", "epilogue", "idle");
  os << line;
  for (auto& r : s.roles) {
    std::snprintf(line, sizeof line, "  %-10s %6d %6s %10s %11s %9s %8s %9s %6s\n", r.role.c_str(), r.groups,
                  pct(r.share(r.busy)).c_str(), pct(r.share(r.waitFull)).c_str(), pct(r.share(r.waitEmpty)).c_str(),
                  pct(r.share(r.mmaWait)).c_str(), pct(r.share(r.softmax)).c_str(), pct(r.share(r.epilogue)).c_str(),
                  pct(r.share(r.idle)).c_str());
    os << line;
  }
  if (s.tensorCoreSeen)
    os << "  tensor core (" << (s.modelled ? "modelled" : "measured") << "): busy " << pct(s.tcBusy) << " of block time; MMA issue gaps: " << pct(s.mmaGapShare)
       << " of the span from first to last MMA idle, " << num(s.mmaGapMean) << " cycles between MMAs on average (" << s.mmas
       << " MMAs)\n";
  else
    os << "  tensor core: not observed (the kernel records MMA issue and MMA wait scopes, not the tensor core itself)\n";
  const std::string how = s.modelled ? "modelled" : "measured";
  os << "  throughput (" << how << "): " << num(s.tflops, 2) << " TFLOP/s (" << pct(s.peakTflops > 0 ? s.tflops / s.peakTflops : 0)
     << " of the " << num(s.peakTflops, 0) << " TFLOP/s ceiling), " << num(s.gbps, 1) << " GB/s ("
     << pct(s.peakGbps > 0 ? s.gbps / s.peakGbps : 0) << " of " << num(s.peakGbps, 0) << " GB/s)\n";
  os << "  roofline (" << how << "): " << num(s.intensity) << " flop/byte, ridge " << num(s.ridge, 0) << ": "
     << (s.memoryBound ? "memory-bound" : "compute-bound") << ", at " << pct(s.rooflinePct) << " of the attainable "
     << num(s.attainableTflops, 1) << " TFLOP/s\n";
  os << "  events: " << s.events << " recorded, " << s.lostEvents << " lost"
     << (s.lostEvents ? " (a block's buffer was full: raise " + s.capacityFlag + ")" : std::string()) << "\n";
  if (advice.empty()) {
    os << "advice: none — no rule fired on the " << how << " summary\n";
    return;
  }
  os << "advice (from the " << how << " summary):\n";
  for (auto& a : advice) os << "  - [" << a.param << "] " << a.text << "\n";
}

nlohmann::json toJson(const Summary& s, const std::vector<Advice>& advice) {
  using nlohmann::json;
  json roles = json::array();
  for (auto& r : s.roles)
    roles.push_back({{"role", r.role}, {"groups", r.groups}, {"cycles", r.total}, {"busy", r.share(r.busy)},
                     {"wait_full", r.share(r.waitFull)}, {"wait_empty", r.share(r.waitEmpty)}, {"mma_wait", r.share(r.mmaWait)},
                     {"softmax", r.share(r.softmax)}, {"epilogue", r.share(r.epilogue)}, {"idle", r.share(r.idle)}});
  json adv = json::array();
  for (auto& a : advice) adv.push_back({{"rule", a.rule}, {"param", a.param}, {"text", a.text}});
  return {{"kernel", s.kernel},
          {"device", s.device},
          {"modelled", s.modelled},
          {"timed_by", s.timedBy},
          {"params", {{"D", s.params.depth}, {"P", s.params.mmaDepth}, {"consumers", s.params.consumers},
                      {"BLOCK_M", s.params.blockM}, {"BLOCK_N", s.params.blockN}, {"BLOCK_K", s.params.blockK}}},
          {"programs", s.programs},
          {"sms_used", s.smsUsed},
          {"kernel_cycles", s.kernelCycles},
          {"kernel_us", s.kernelUs},
          {"flops", s.flops},
          {"bytes", s.bytes},
          {"tflops", s.tflops},
          {"gbps", s.gbps},
          {"peak_tflops", s.peakTflops},
          {"peak_gbps", s.peakGbps},
          {"intensity", s.intensity},
          {"ridge", s.ridge},
          {"memory_bound", s.memoryBound},
          {"attainable_tflops", s.attainableTflops},
          {"roofline_fraction", s.rooflinePct},
          {"roles", roles},
          {"mmas", s.mmas},
          {"tensor_core_busy", s.tcBusy},
          {"mma_gap_share", s.mmaGapShare},
          {"mma_gap_mean_cycles", s.mmaGapMean},
          {"events", s.events},
          {"lost_events", s.lostEvents},
          {"advice", adv}};
}

}  // namespace tawa::profile
