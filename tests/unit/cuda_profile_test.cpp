// --profile in the CUDA backend: kernels emitted with it compile for sm_90a with no spills (GEMM:
// one consumer, cooperative, persistent; attention: head dims 64 and 128, causal or not), compute
// on the CPU emulator exactly what they compute without it, and their records decode into the
// profile's events: tracks named by role, each track's events ordered and not overlapping, the
// Chrome trace valid JSON, and a ring too small for the events loses exactly the hand-counted
// number. On the emulator every time is modelled (its clock is the cost model's).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Emitter.h"
#include "backends/cuda/ProfileBuffer.h"
#include "backends/emu/Emulator.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "driver/Spec.h"

using namespace tawa;

namespace {

const std::string kGemmSpec =
    "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=64, N:i32=128, K:i32=64, stride_am:i32=64, stride_ak:i32=1, "
    "stride_bk:i32=128, stride_bn:i32=1, stride_cm:i32=128, stride_cn:i32=1";

std::string attnSpec(int dim, bool causal, int nctx = 128) {
  return "Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=1, H:i32=2, R=" + std::to_string(2 * nctx) +
         ", D=" + std::to_string(dim) + ", N_CTX=" + std::to_string(nctx) + ", HEAD_DIM=" + std::to_string(dim) +
         ", BLOCK_M=64, BLOCK_N=64, CAUSAL=" + (causal ? "True" : "False");
}

struct Run {
  cuda::EmitResult er;
  std::vector<exec::Buffer> buffers;
  std::vector<profile::BlockTrace> traces;
};

// Specializes, emits (with or without --profile), runs on the emulator and decodes the records.
Run runEmu(const std::string& file, const std::string& kernel, const std::string& spec, const std::string& grid, bool prof,
           int capacity = 256, int sms = 132) {
  transforms::PassOptions ws;
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/" + file, kernel, driver::parseSpec(spec), ws, "nv");
  cuda::EmitOptions eo;
  eo.profile = prof;
  eo.profileCapacity = capacity;
  Run r;
  r.er = cuda::emitCudaKernel(*nv.module, *nv.kernel, eo);
  auto bound = driver::bind(*nv.kernel, driver::parseSpec(spec), grid, 7);
  r.buffers = bound.buffers;
  emu::Options o;
  o.model.sms = sms;
  emu::LaunchStats st = emu::launch(r.er, bound.args, r.buffers, bound.grid, o);
  if (prof)
    r.traces = cuda::decodeProfile(r.er.profile, st.profile.data(), st.profile.size(), cuda::launchGrid(r.er, bound.grid),
                                   profile::CostModel::h200().clockGHz);
  return r;
}

void expectSameBuffers(const Run& a, const Run& b) {
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) EXPECT_EQ(a.buffers[i].data, b.buffers[i].data) << a.buffers[i].name;
}

// Per track (block, warp group): events ordered by start and not overlapping.
void expectOrderedTracks(const std::vector<profile::BlockTrace>& traces) {
  for (const auto& t : traces) {
    std::map<int, double> last;
    for (const auto& e : t.events) {
      EXPECT_LE(e.start, e.end) << profile::scopeName(e.scope);
      auto it = last.find(e.wg);
      if (it != last.end()) {
        EXPECT_GE(e.start, it->second) << "block " << t.block << " wg " << e.wg << " " << profile::scopeName(e.scope);
      }
      last[e.wg] = e.end;
    }
  }
}

}  // namespace

TEST(CudaProfile, TextWithoutProfileIsUnchangedAndWithItInstrumented) {
  transforms::PassOptions ws;
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/matmul_desc.tir", "", driver::parseSpec(kGemmSpec), ws, "nv");
  cuda::EmitOptions off, on;
  on.profile = true;
  auto a = cuda::emitCudaKernel(*nv.module, *nv.kernel);
  auto b = cuda::emitCudaKernel(*nv.module, *nv.kernel, off);
  auto c = cuda::emitCudaKernel(*nv.module, *nv.kernel, on);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.source.find("prof_"), std::string::npos);
  EXPECT_EQ(a.profile.capacity, 0);
  EXPECT_NE(c.source.find("uint8_t* const prof_out"), std::string::npos);
  EXPECT_NE(c.source.find("tawa::prof_record("), std::string::npos);
  EXPECT_NE(c.source.find("tawa::prof_flush("), std::string::npos);
  EXPECT_EQ(c.profile.capacity, 256);
  EXPECT_EQ(c.profile.warpGroups, 2);
  EXPECT_EQ(c.profile.roles, (std::vector<std::string>{"producer", "consumer"}));
  ASSERT_FALSE(c.params.empty());
  EXPECT_TRUE(c.params.back().profileBuffer);
  EXPECT_EQ(c.smemBytes, a.smemBytes + 2 * (32 + 256 * 16));  // one ring per warp group (already 16-aligned here)
}

TEST(CudaProfile, BadCapacityIsAnError) {
  transforms::PassOptions ws;
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/matmul_desc.tir", "", driver::parseSpec(kGemmSpec), ws, "nv");
  cuda::EmitOptions o;
  o.profile = true;
  o.profileCapacity = 0;
  try {
    cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.format().find("capacity must be 1 to 65536"), std::string::npos) << e.format();
  }
}

TEST(CudaProfile, ProfiledKernelsCompileForSm90aWithoutSpills) {
  struct K {
    std::string file, kernel, spec, name;
    transforms::PassOptions ws;
  };
  std::vector<K> all;
  const std::string g128 =
      "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=4096, N:i32=4096, K:i32=4096, stride_am:i32=4096, stride_ak:i32=1, "
      "stride_bk:i32=4096, stride_bn:i32=1, stride_cm:i32=4096, stride_cn:i32=1";
  {
    K k{"matmul_desc_128.tir", "", g128, "prof_gemm128_c1", {}};
    k.ws.depth = 3;
    all.push_back(k);
    k.name = "prof_gemm128_c2";
    k.ws.consumers = 2;
    all.push_back(k);
    k.name = "prof_gemm128_pers";
    k.ws.consumers = 1;
    k.ws.persistent = 132;
    k.ws.groupM = 8;
    all.push_back(k);
  }
  for (int dim : {64, 128})
    for (bool causal : {false, true}) {
      K k{"attention.py", "attn_fwd", attnSpec(dim, causal, 4096), "prof_attn_d" + std::to_string(dim) + (causal ? "_causal" : ""), {}};
      all.push_back(k);
    }
  std::string tu = "#include \"primitives.cuh\"\n\n";
  for (const auto& k : all) {
    auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/" + k.file, k.kernel, driver::parseSpec(k.spec), k.ws, "nv");
    cuda::EmitOptions o;
    o.includeHeader = false;
    o.kernelName = k.name;
    o.profile = true;
    auto r = cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
    EXPECT_LE(r.smemBytes, 232448) << k.name;
    tu += r.source + "\n";
  }
  cuda::CompiledModule cm = cuda::compile(tu);
  EXPECT_EQ(cm.ptxasLog.find("arning"), std::string::npos) << cm.ptxasLog;
  for (const auto& k : all) {
    SCOPED_TRACE(k.name);
    auto u = std::find_if(cm.usage.begin(), cm.usage.end(), [&](const cuda::ResourceUsage& x) { return x.kernel == k.name; });
    ASSERT_NE(u, cm.usage.end());
    EXPECT_EQ(u->spillStores, 0);
    EXPECT_EQ(u->spillLoads, 0);
    EXPECT_EQ(u->stack, 0);
  }
  for (const char* insn : {"%clock64", "%globaltimer", "%smid", "wgmma.mma_async"}) EXPECT_NE(cm.ptx.find(insn), std::string::npos) << insn;
  EXPECT_EQ(cm.ptx.find(".local"), std::string::npos);
}

TEST(EmuProfile, GemmSameNumbersOrderedTracksNamedByRole) {
  auto plain = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", false);
  auto prof = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", true);
  expectSameBuffers(plain, prof);
  ASSERT_EQ(prof.traces.size(), 2u);
  for (const auto& t : prof.traces) {
    EXPECT_EQ(t.roles, (std::vector<std::string>{"producer", "consumer"}));
    EXPECT_EQ(t.lost, 0);
    // Hand-counted for K = 64 (two iterations of BLOCK_K 32), D 2, P 1: the producer waits on
    // empty and issues TMA per iteration (4); the consumer waits on full, issues and waits for the
    // MMA per iteration, releases slot 0 in iteration 1 (7), then drains the MMA, releases slot 1,
    // converts (epilogue) and stores (11).
    EXPECT_EQ(t.events.size(), 15u);
    EXPECT_GT(t.duration, 0);
  }
  // Blocks 0 and 1 run on SMs 0 and 1, both from time 0 (the modelled %globaltimer).
  EXPECT_EQ(prof.traces[0].sm, 0);
  EXPECT_EQ(prof.traces[1].sm, 1);
  EXPECT_EQ(prof.traces[1].offset, 0);
  expectOrderedTracks(prof.traces);
  // On a one-SM device the second block starts when the first ends.
  auto oneSm = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", true, 256, 1);
  ASSERT_EQ(oneSm.traces.size(), 2u);
  EXPECT_EQ(oneSm.traces[1].sm, 0);
  EXPECT_NEAR(oneSm.traces[1].offset, oneSm.traces[0].duration, 2.0);  // globaltimer is whole nanoseconds
}

TEST(EmuProfile, AttentionSameNumbersWithSoftmaxScopes) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal);
    auto plain = runEmu("attention.py", "attn_fwd", attnSpec(64, causal), "2, 2", false);
    auto prof = runEmu("attention.py", "attn_fwd", attnSpec(64, causal), "2, 2", true);
    expectSameBuffers(plain, prof);
    ASSERT_EQ(prof.traces.size(), 4u);
    expectOrderedTracks(prof.traces);
    std::map<profile::Scope, int> seen;
    for (const auto& t : prof.traces) {
      EXPECT_EQ(t.lost, 0);
      for (const auto& e : t.events) seen[e.scope]++;
    }
    for (auto s : {profile::Scope::WaitEmpty, profile::Scope::TmaIssue, profile::Scope::WaitFull, profile::Scope::MmaIssue,
                   profile::Scope::MmaWait, profile::Scope::Softmax, profile::Scope::Release, profile::Scope::Epilogue,
                   profile::Scope::TmaStore})
      EXPECT_GT(seen[s], 0) << profile::scopeName(s);
  }
}

TEST(EmuProfile, TooSmallRingLosesExactlyTheHandCountedEvents) {
  // 15 events per block (4 producer, 11 consumer: see above); a ring of 3 per warp group keeps
  // 3 + 3 and loses (4 - 3) + (11 - 3) = 9 per block, 18 over the two blocks, and keeps the newest.
  auto prof = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", true, 3);
  ASSERT_EQ(prof.traces.size(), 2u);
  int64_t lost = 0;
  for (const auto& t : prof.traces) {
    lost += t.lost;
    EXPECT_EQ(t.lost, 9);
    ASSERT_EQ(t.events.size(), 6u);
    EXPECT_EQ(t.events[2].scope, profile::Scope::TmaIssue);  // the producer's last event
    EXPECT_EQ(t.events[5].scope, profile::Scope::TmaStore);  // the consumer's last event
    EXPECT_EQ(t.events[3].scope, profile::Scope::Release);   // its oldest kept one
  }
  EXPECT_EQ(lost, 18);
  expectOrderedTracks(prof.traces);
  auto full = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", true, 15);
  for (const auto& t : full.traces) EXPECT_EQ(t.lost, 0);
}

TEST(EmuProfile, ChromeTraceIsValidJsonWithRoleTracks) {
  auto prof = runEmu("matmul_desc.tir", "", kGemmSpec, "cdiv(M, 64), cdiv(N, 64)", true, 3);
  std::ostringstream os;
  profile::TraceMeta meta;
  meta.kernel = prof.er.kernelName;
  profile::writeChromeTrace(os, prof.traces, meta);
  auto j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["otherData"]["lost_events"], 18);
  std::set<std::string> tracks;
  int complete = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e["args"]["modelled"].get<bool>());
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  }
  EXPECT_EQ(complete, 12);
  EXPECT_EQ(tracks, (std::set<std::string>{"producer (warp group 0)", "consumer (warp group 1)"}));
}
