// tawa profile: the cost model's virtual clocks against hand-computed schedules, the Chrome trace's
// validity, lost-event counting, and every advice rule (one case that fires it, one that does not).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "TempDir.h"
#include "backends/cuda/Driver.h"
#include "driver/Spec.h"
#include "ProfileCli.h"
#include "profile/ProfileCommand.h"

using namespace tawa;
using namespace tawa::profile;

namespace {

const std::string kGemm = std::string(TAWA_SOURCE_DIR) + "/examples/matmul_desc.tir";

std::string gemmSpec(int k) {
  return "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=64, N:i32=64, K:i32=" + std::to_string(k) +
         ", stride_am:i32=" + std::to_string(k) + ", stride_ak:i32=1, stride_bk:i32=64, stride_bn:i32=1, stride_cm:i32=64, stride_cn:i32=1";
}

// Round numbers for hand computation: 1 SM at 1 GHz with 16 B/clk, TMA latency 700, issue 40,
// arrive 20, wait wake-up 30, wgmma issue 20 and wait 10, 4096 flop/clk (a 64x64x32 MMA: 64
// cycles), scalar ops free, cast 64/clk, shared memory 128 B/clk.
CostModel roundModel() {
  CostModel m;
  m.sms = 1;
  m.clockGHz = 1;
  m.hbmBytesPerSec = 16e9;
  m.scalarOp = 0;
  return m;
}

ProfileResult runGemm(int k, int depth, CostModel m = roundModel(), size_t cap = 4096, uint64_t seed = 1, int64_t mn = 64) {
  ProfileOptions o;
  o.ws.depth = depth;
  o.ws.mmaDepth = 1;
  o.model = m;
  o.eventsPerBlock = cap;
  o.seed = seed;
  std::string spec = gemmSpec(k);
  if (mn != 64) {
    spec = "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=" + std::to_string(mn) + ", N:i32=" + std::to_string(mn) +
           ", K:i32=" + std::to_string(k) + ", stride_am:i32=" + std::to_string(k) + ", stride_ak:i32=1, stride_bk:i32=" +
           std::to_string(mn) + ", stride_bn:i32=1, stride_cm:i32=" + std::to_string(mn) + ", stride_cn:i32=1";
  }
  return profileKernel(kGemm, "", driver::parseSpec(spec), mn == 64 ? "1, 1" : "cdiv(M, 64), cdiv(N, 64)", o);
}

double scope(const GroupTotals& g, Scope s) { return g.scope[static_cast<size_t>(s)]; }

}  // namespace

TEST(ProfileCostModel, H200Numbers) {
  CostModel m = CostModel::h200();
  EXPECT_DOUBLE_EQ(m.mmaCycles(64, 64, 32, ir::Scalar::F16), 64.0);  // 2*M*N*K / 4096
  EXPECT_DOUBLE_EQ(m.mmaCycles(64, 64, 32, ir::Scalar::F8E4M3), 32.0);
  EXPECT_NEAR(m.bytesPerClkPerSM(), 18.37, 0.01);  // 4.8 TB/s / 132 SMs / 1.98 GHz
  EXPECT_NEAR(m.peakFlops() / 1e12, 1070.5, 0.5);  // 132 x 4096 x 1.98 GHz
  EXPECT_NEAR(m.peakBytes() / 1e9, 4800, 1e-9);
}

TEST(ProfileCalendar, PlacesRequestsInTheEarliestGap) {
  Calendar c;
  EXPECT_EQ(c.book(100, 50), 100);  // [100, 150)
  EXPECT_EQ(c.book(0, 50), 0);      // fits before
  EXPECT_EQ(c.book(20, 50), 50);    // the gap [50, 100) fits exactly
  EXPECT_EQ(c.book(10, 30), 150);   // no gap left before 150
}

// D = 2, P = 1, K = 64 (two blocks of 32), one program. By hand from roundModel():
//   producer: it0 wait empty 0..30, expect_tx 30..50, TMA A 50..90 (pipe 90..346, lands 1046),
//             TMA B 90..130 (pipe 346..602, lands 1302) -> full[0] at 1302;
//             it1 wait empty 130..160, expect_tx ..180, A ..220 (pipe 602..858), B ..260 (pipe 858..1114,
//             lands 1814) -> full[1] at 1814. Ends at 260.
//   consumer: it0 wait full 0..1332, wgmma 1332..1352 (MMA 1352..1416), wait(1) ..1362;
//             it1 wait full 1362..1844, wgmma ..1864 (MMA 1864..1928), wait(1) retires 1416 ..1874,
//             release slot 0 ..1894; after the loop wait(0) to 1928 + 10 = 1938, drain release ..1958,
//             cast 4096/64 = 64 ..2022, TMA store: stage 8192/128 + issue 40 -> 2126, pipe 2126..2638,
//             + 700 -> 3338.
TEST(ProfileSchedule, GemmTwoBlocksDepth2) {
  auto r = runGemm(64, 2);
  auto progs = r.recorder->programs();
  ASSERT_EQ(progs.size(), 1u);
  auto& p = *progs[0];
  ASSERT_EQ(p.groups.size(), 2u);
  const auto &prod = p.groups[0], &cons = p.groups[1];
  EXPECT_EQ(prod.role, "producer");
  EXPECT_EQ(cons.role, "consumer");
  EXPECT_DOUBLE_EQ(p.trace.duration, 3338);
  EXPECT_DOUBLE_EQ(prod.end, 260);
  EXPECT_DOUBLE_EQ(scope(prod, Scope::WaitEmpty), 60);
  EXPECT_DOUBLE_EQ(scope(prod, Scope::TmaIssue), 200);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::WaitFull), 1332 + 482);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::MmaIssue), 40);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::MmaWait), 10 + 10 + 44);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::Release), 40);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::Epilogue), 64);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::TmaStore), 1316);
  EXPECT_EQ(p.mmas, 2);
  EXPECT_DOUBLE_EQ(p.flops, 2.0 * 2 * 64 * 64 * 32);
  EXPECT_DOUBLE_EQ(p.bytesLoaded, 4 * 4096);
  EXPECT_DOUBLE_EQ(p.bytesStored, 8192);

  // The summary's shares are these numbers over the block's 3338 cycles.
  const auto& s = r.summary;
  const RoleSummary* c = s.role("consumer");
  const RoleSummary* q = s.role("producer");
  ASSERT_TRUE(c && q);
  EXPECT_DOUBLE_EQ(c->share(c->waitFull), 1814.0 / 3338);
  EXPECT_DOUBLE_EQ(c->share(c->epilogue), 1380.0 / 3338);
  EXPECT_DOUBLE_EQ(q->share(q->waitEmpty), 60.0 / 3338);
  EXPECT_DOUBLE_EQ(q->share(q->idle), (3338.0 - 260) / 3338);
  EXPECT_DOUBLE_EQ(s.kernelCycles, 3338);
  EXPECT_DOUBLE_EQ(s.tcBusy, 128.0 / 3338);
  EXPECT_DOUBLE_EQ(s.mmaGapMean, 1864 - 1416);
  EXPECT_EQ(s.params.blockK, 32);
  EXPECT_EQ(s.params.blockN, 64);
  EXPECT_EQ(s.params.mmaDepth, 1);
}

// D = 1 (the pipeline pass then chooses P = 0), K = 64. By hand:
//   consumer it0: wait full 0..1332, wgmma ..1352 (MMA 1352..1416), wait(0) ..1426, release ..1446;
//   producer it1: wait empty 130..1476 (the release at 1446 + 30), expect_tx ..1496, A ..1536
//             (pipe 1536..1792), B ..1576 (pipe 1792..2048, lands 2748);
//   consumer it1: wait full 1446..2778, wgmma ..2798 (MMA ..2862), wait(0) ..2872, release ..2892,
//             cast ..2956, store: 2956 + 64 + 40 = 3060, pipe 3060..3572, + 700 = 4272.
TEST(ProfileSchedule, GemmTwoBlocksDepth1) {
  auto r = runGemm(64, 1);
  auto& p = *r.recorder->programs()[0];
  const auto &prod = p.groups[0], &cons = p.groups[1];
  EXPECT_DOUBLE_EQ(p.trace.duration, 4272);
  EXPECT_DOUBLE_EQ(prod.end, 1576);
  EXPECT_DOUBLE_EQ(scope(prod, Scope::WaitEmpty), 30 + 1346);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::WaitFull), 1332 + 1332);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::MmaWait), 74 + 74);
  EXPECT_DOUBLE_EQ(scope(cons, Scope::TmaStore), 1316);
  EXPECT_EQ(r.summary.params.mmaDepth, 0);
}

// Three blocks: deeper rings never slow the modelled kernel down, and the modelled times do not
// depend on the scheduler's interleaving.
TEST(ProfileSchedule, GemmThreeBlocksDepthAndSeeds) {
  double d1 = runGemm(96, 1).summary.kernelCycles;
  double d2 = runGemm(96, 2).summary.kernelCycles;
  double d3 = runGemm(96, 3).summary.kernelCycles;
  EXPECT_LT(d2, d1);
  EXPECT_LE(d3, d2);
  for (uint64_t seed : {2u, 3u, 7u, 11u}) EXPECT_DOUBLE_EQ(runGemm(96, 2, roundModel(), 4096, seed).summary.kernelCycles, d2);
}

TEST(ProfileSchedule, ProgramsShareSMsInOrder) {
  // 4 programs on 1 SM run back to back: the kernel takes 4 blocks' time.
  auto r = runGemm(64, 2, roundModel(), 4096, 1, 128);
  auto progs = r.recorder->programs();
  ASSERT_EQ(progs.size(), 4u);
  double t = 0;
  for (auto* p : progs) {
    EXPECT_DOUBLE_EQ(p->trace.offset, t);
    t += p->trace.duration;
  }
  EXPECT_DOUBLE_EQ(r.summary.kernelCycles, t);
}

TEST(ProfileTrace, IsValidChromeTraceJson) {
  auto r = runGemm(96, 2, CostModel::h200(), 4096, 1, 128);
  std::ostringstream os;
  TraceMeta meta;
  meta.kernel = r.summary.kernel;
  meta.cyclesPerUs = r.recorder->model().cyclesPerUs();
  writeChromeTrace(os, r.recorder->traces(), meta);
  auto j = nlohmann::json::parse(os.str());
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::pair<int64_t, int64_t>, std::string> names;
  std::set<int64_t> processes;
  int complete = 0;
  for (auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name"));
    auto key = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") names[key] = e["args"]["name"].get<std::string>();
      if (e["name"] == "process_name") processes.insert(key.first);
      continue;
    }
    ASSERT_EQ(e["ph"], "X");
    ++complete;
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number());
    EXPECT_GT(e["dur"].get<double>(), 0);
    ASSERT_TRUE(e["args"].contains("iteration") && e["args"].contains("slot") && e["args"].contains("source"));
    EXPECT_NE(e["args"]["source"].get<std::string>().find("matmul_desc.tir:"), std::string::npos);
    EXPECT_TRUE(e["args"]["modelled"].get<bool>());
    tracks[key].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  EXPECT_GT(complete, 0);
  EXPECT_EQ(processes.size(), 4u);  // one process per block
  for (auto& [key, evs] : tracks) {
    ASSERT_TRUE(names.count(key)) << "track without a name";
    EXPECT_TRUE(names[key].rfind("producer", 0) == 0 || names[key].rfind("consumer", 0) == 0) << names[key];
    for (size_t k = 1; k < evs.size(); ++k) {
      EXPECT_LE(evs[k - 1].first, evs[k].first) << "ordered";
      EXPECT_LE(evs[k - 1].second, evs[k].first + 1e-9) << "non-overlapping";
    }
  }
  EXPECT_EQ(j["otherData"]["lost_events"], 0);
}

TEST(ProfileTrace, TooSmallBufferReportsExactLoss) {
  auto full = runGemm(96, 2);
  auto& all = full.recorder->programs()[0]->trace.events;
  ASSERT_GT(all.size(), 5u);
  size_t cap = all.size() - 5;
  auto small = runGemm(96, 2, roundModel(), cap);
  auto& p = *small.recorder->programs()[0];
  EXPECT_EQ(p.trace.events.size(), cap);
  EXPECT_EQ(p.trace.lost, 5);
  EXPECT_EQ(small.recorder->lostEvents(), 5);
  EXPECT_EQ(small.summary.lostEvents, 5);
  // The summary does not depend on the buffer: it comes from the clocks.
  EXPECT_DOUBLE_EQ(small.summary.kernelCycles, full.summary.kernelCycles);
  std::ostringstream os;
  printSummary(os, small.summary, small.advice);
  EXPECT_NE(os.str().find(std::to_string(cap) + " recorded, 5 lost"), std::string::npos) << os.str();
  std::ostringstream tj;
  writeChromeTrace(tj, small.recorder->traces(), TraceMeta{});
  EXPECT_EQ(nlohmann::json::parse(tj.str())["otherData"]["lost_events"], 5);
  EXPECT_EQ(toJson(small.summary, small.advice)["lost_events"], 5);
}

TEST(ProfileSummary, PrintsEveryFigureAsModelled) {
  auto r = runGemm(64, 2, CostModel::h200());
  std::ostringstream os;
  printSummary(os, r.summary, r.advice);
  std::string out = os.str();
  EXPECT_NE(out.find("modelled"), std::string::npos);
  EXPECT_NE(out.find("throughput (modelled)"), std::string::npos);
  EXPECT_NE(out.find("roofline (modelled)"), std::string::npos);
  auto j = toJson(r.summary, r.advice);
  EXPECT_TRUE(j["modelled"].get<bool>());
  EXPECT_EQ(j["roles"].size(), 2u);
}

// ---- advice: each rule fires on a summary built for it and stays quiet on one just beside it.
namespace {

Summary base() {
  Summary s;
  s.kernel = "k";
  s.sms = 132;
  s.programs = 264;  // two full waves
  s.smsUsed = 132;
  s.lastWaveSms = 132;
  s.params.depth = 2;
  s.params.mmaDepth = 1;
  s.params.consumers = 1;
  s.params.blockM = 128, s.params.blockN = 128, s.params.blockK = 64;
  s.params.stageBytes = 32768;
  s.peakGbps = 4800;
  s.ridge = 223;
  s.intensity = 400;
  s.memoryBound = false;
  RoleSummary p, c;
  p.role = "producer", c.role = "consumer";
  p.groups = c.groups = 1;
  p.total = c.total = 1000;
  p.busy = 300, p.waitEmpty = 300, p.idle = 400;
  c.busy = 900, c.waitFull = 50, c.mmaWait = 50;
  s.roles = {p, c};
  return s;
}
RoleSummary& cons(Summary& s) { return s.roles[1]; }
RoleSummary& prod(Summary& s) { return s.roles[0]; }
bool fires(const Summary& s, const std::string& rule) {
  for (auto& a : advise(s))
    if (a.rule == rule) return true;
  return false;
}
std::string text(const Summary& s, const std::string& rule) {
  for (auto& a : advise(s))
    if (a.rule == rule) return a.param + ": " + a.text;
  return {};
}

}  // namespace

TEST(ProfileAdvice, QuietOnABalancedKernel) { EXPECT_TRUE(advise(base()).empty()); }

TEST(ProfileAdvice, LoadsBound) {
  Summary s = base();
  cons(s).waitFull = 380;
  EXPECT_EQ(text(s, "loads-bound"),
            "D: consumers wait on full 38% of the time (modelled): loads cannot keep up — D 2 -> 3, or BLOCK_K 64 -> 128 "
            "(fewer, larger copies per MMA)");
  cons(s).waitFull = 190;
  EXPECT_FALSE(fires(s, "loads-bound"));
}

TEST(ProfileAdvice, MeasuredTimesAreSaidToBeMeasured) {
  // On a GPU the shares come from clock64, not the cost model: the advice says so.
  Summary s = base();
  s.modelled = false;
  cons(s).waitFull = 380;
  EXPECT_NE(text(s, "loads-bound").find("38% of the time (measured)"), std::string::npos) << text(s, "loads-bound");
  std::ostringstream os;
  printSummary(os, s, advise(s));
  EXPECT_EQ(os.str().find("(modelled)"), std::string::npos) << os.str();
}

TEST(ProfileAdvice, BandwidthBound) {
  Summary s = base();
  s.memoryBound = true, s.intensity = 64, s.gbps = 4000;
  std::string t = text(s, "bandwidth-bound");
  EXPECT_NE(t.find("BLOCK_N: memory-bound (modelled): 4000 GB/s is 83% of the bandwidth of the 132 SM(s)"), std::string::npos) << t;
  EXPECT_NE(t.find("BLOCK_N 128 -> 256 raises the reuse of each loaded byte by 33%"), std::string::npos) << t;
  s.gbps = 3000;  // 62%
  EXPECT_FALSE(fires(s, "bandwidth-bound"));
  s.gbps = 4000, s.memoryBound = false;
  EXPECT_FALSE(fires(s, "bandwidth-bound"));
}

TEST(ProfileAdvice, ConsumerBound) {
  Summary s = base();
  prod(s).waitEmpty = 600;
  EXPECT_EQ(text(s, "consumer-bound"),
            "D: the producer waits on empty 60% of the time while consumers wait on full only 5% (modelled): the consumers "
            "set the pace — D 2 -> 1 frees 32.0 KiB of shared memory; or consumers 1 -> 2 to add compute");
  cons(s).waitFull = 120;  // consumers do wait: not consumer-bound
  EXPECT_FALSE(fires(s, "consumer-bound"));
}

TEST(ProfileAdvice, MmaWait) {
  Summary s = base();
  s.params.mmaDepth = 0;
  cons(s).mmaWait = 200;
  EXPECT_EQ(text(s, "mma-wait"), "P: consumers wait on their own MMAs 20% of the time with P = 0 (modelled): each MMA is "
                                 "waited for before the next is issued — P 0 -> 1");
  s.params.depth = 1;
  EXPECT_NE(text(s, "mma-wait").find("(needs D >= 2: D 1 -> 2)"), std::string::npos);
  s.params.mmaDepth = 1;  // already overlapped
  EXPECT_FALSE(fires(s, "mma-wait"));
}

TEST(ProfileAdvice, Softmax) {
  Summary s = base();
  cons(s).softmax = 400;
  s.tcBusy = 0.35;
  EXPECT_EQ(text(s, "softmax"), "consumers: softmax takes 40% of consumer time between MMAs and the tensor core is busy 35% "
                                "of the block (modelled) — consumers 1 -> 2 lets one warp group's softmax overlap the "
                                "other's MMAs");
  s.params.consumers = 2;
  EXPECT_FALSE(fires(s, "softmax"));
}

TEST(ProfileAdvice, Epilogue) {
  Summary s = base();
  cons(s).epilogue = 250;
  EXPECT_EQ(text(s, "epilogue"), "BLOCK_N: the epilogue takes 25% of consumer time (modelled): each program does little work "
                                 "— BLOCK_N 128 -> 256 halves the number of epilogues, or a persistent grid (132 programs) "
                                 "overlaps each epilogue with the next tile's loads");
  cons(s).epilogue = 100;
  EXPECT_FALSE(fires(s, "epilogue"));
}

TEST(ProfileAdvice, GridUnderfillsTheDevice) {
  Summary s = base();
  s.programs = 16, s.smsUsed = 16, s.lastWaveSms = 16;
  EXPECT_EQ(text(s, "grid"), "BLOCK_M: the grid fills 16 of 132 SMs (12%): at most that share of the modelled device "
                             "ceilings — BLOCK_M 128 -> 64 doubles the programs");
  s.programs = 132, s.smsUsed = 132, s.lastWaveSms = 132;
  EXPECT_FALSE(fires(s, "grid"));
}

TEST(ProfileAdvice, WaveTail) {
  Summary s = base();
  s.programs = 140, s.lastWaveSms = 8;
  EXPECT_EQ(text(s, "wave-tail"), "BLOCK_N: the last of 2 waves runs on 8 of 132 SMs: wave efficiency 53% (modelled) — choose "
                                  "BLOCK_M / BLOCK_N so the programs are a multiple of 132, or a persistent grid");
  s.programs = 250, s.lastWaveSms = 118;
  EXPECT_FALSE(fires(s, "wave-tail"));
}

TEST(ProfileCommand, BackendsEmuCudaAndUnknown) {
  // emu: the kernel's own --profile records on the CPU emulator (modelled clock); cuda without a
  // GPU: the runner's error, exit 1; an unknown backend: exit 1.
  struct Case {
    std::string backend;
    int rc;
    std::string text;  // in stdout (rc 0) or stderr (rc 1)
  };
  const bool gpu = cuda::probeGpu().ok;
  std::vector<Case> cases = {{"emu", 0, "modelled by the CPU emulator's clock"}, {"tpu", 1, "unknown backend 'tpu'"}};
  if (!gpu) cases.push_back({"cuda", 1, "<cuda>: error:"});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.backend);
    CLI::App app;
    std::function<int()> action;
    tawa::cli::addProfileCommand(app, action);
    std::string trace = (tawa::test::tempDir() / ("profile_backend_" + c.backend + ".json")).string();
    std::vector<std::string> args = {"tawa", "profile", kGemm, "--backend", c.backend, "--spec", gemmSpec(64), "--grid", "1", "-o", trace};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(action);
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    int rc = action();
    std::string out = testing::internal::GetCapturedStdout(), err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, c.rc) << out << err;
    EXPECT_NE((rc == 0 ? out : err).find(c.text), std::string::npos) << out << err;
  }
}
