// Warp specialization checked on the CPU: the descriptor-form GEMM (one consumer, two cooperative
// consumers, and the persistent Triton kernel) and the pointer-form attention forward (causal and
// not, through block-access), specialized and lowered to mbarriers for every aref
// depth D in 1..4 and MMA depth P in 0..2, in f16 and bf16, must agree bit for bit with the kernel as
// written over 16 interleavings each, on fresh random inputs; and the executor's aref semantics
// must report a deadlock and a foreign release at the aref level.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "backends/exec/Executor.h"
#include "driver/Check.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "TempDir.h"

using namespace tawa;

namespace {

std::string readFile(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An example kernel with its element type replaced (f16 -> bf16).
std::string kernelFor(const std::string& dtype, const std::string& name = "matmul_desc") {
  std::string src = readFile(std::string(TAWA_SOURCE_DIR) + "/examples/" + name + ".tir");
  if (dtype == "f16") return std::string(TAWA_SOURCE_DIR) + "/examples/" + name + ".tir";
  for (size_t p = 0; (p = src.find("xf16>", p)) != std::string::npos; p += 6) src.replace(p, 5, "x" + dtype + ">");
  for (size_t p = 0; (p = src.find("ptr<f16>", p)) != std::string::npos; p += 8) src.replace(p, 8, "ptr<" + dtype + ">");
  auto path = tawa::test::tempDir() / (name + "_" + dtype + ".tir");
  std::ofstream(path) << src;
  return path.string();
}

struct Config {
  std::string dtype;
  int depth, mmaDepth, consumers;
  bool persistent = false;
  int attention = -1;  // -1: a GEMM; 0 / 1: attention forward, non-causal / causal
  bool pointerForm = false;  // examples/matmul_ptr.tir (pointer arithmetic, grouped ordering)
  int makePersistent = 0;    // > 0: warp-specialize --persistent N (the pass makes the tile loop)
};

// examples/matmul_persistent_desc.py (a Triton kernel) with its output type replaced.
std::string persistentFor(const std::string& dtype) {
  std::string path = std::string(TAWA_SOURCE_DIR) + "/examples/matmul_persistent_desc.py";
  if (dtype == "f16") return path;
  std::string src = readFile(path);
  for (size_t p = 0; (p = src.find("tl.float16", p)) != std::string::npos; p += 11) src.replace(p, 10, "tl.bfloat16");
  auto out = tawa::test::tempDir() / ("persistent_" + dtype + ".py");
  std::ofstream(out) << src;
  return out.string();
}

void PrintTo(const Config& c, std::ostream* os) {
  *os << c.dtype << " D=" << c.depth << " P=" << c.mmaDepth << " consumers=" << c.consumers
      << (c.makePersistent ? " persistent=" + std::to_string(c.makePersistent) : std::string());
}

class WsCheck : public ::testing::TestWithParam<Config> {};

TEST_P(WsCheck, AgreesWithTheUnspecializedKernelOverSixteenInterleavings) {
  const Config& c = GetParam();
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("data seed " + std::to_string(seed));
  std::string dt = c.dtype == "f16" ? "fp16" : "bf16";
  // Sizes that are not block multiples, so the descriptors' zero fill and clipping matter.
  auto spec = driver::parseSpec("a:*" + dt + "[M,K], b:*" + dt + "[K,N], c:*" + dt +
                                "[M,N], M:i32=160, N:i32=136, K:i32=200, stride_am:i32=200, stride_ak:i32=1, "
                                "stride_bk:i32=136, stride_bn:i32=1, stride_cm:i32=136, stride_cn:i32=1");
  transforms::PassOptions opt;
  opt.depth = c.depth;
  opt.mmaDepth = c.mmaDepth;
  opt.consumers = c.consumers;
  opt.persistent = c.makePersistent;
  opt.groupM = c.makePersistent ? 2 : 0;
  if (c.pointerForm) {
    auto rep = driver::check(kernelFor(c.dtype, "matmul_ptr"), "", spec, "cdiv(M, 64) * cdiv(N, 64)", opt, 16, seed);
    EXPECT_EQ(rep.programs, 9);
    EXPECT_EQ(rep.mmaDepth, std::min(c.mmaDepth, c.depth - 1));
    return;
  }
  if (c.attention >= 0) {
    // Pointer-form attention (block-access turns its loads into block loads): 3 query blocks,
    // n_ctx not a multiple of the key block, 3 batch-heads.
    auto aspec = driver::parseSpec("q:*" + dt + "[3,150,64], k:*" + dt + "[3,150,64], v:*" + dt + "[3,150,64], o:*" + dt +
                                   "[3,150,64], sm_scale:fp32=0.125, n_ctx:i32=150, causal:i32=" + std::to_string(c.attention));
    auto rep = driver::check(kernelFor(c.dtype, "attention"), "", aspec, "cdiv(n_ctx, 64), 3", opt, 16, seed);
    EXPECT_EQ(rep.programs, 9);
    return;
  }
  if (c.persistent) {
    // A Triton kernel: 5 programs walk 12 output tiles in grouped order.
    auto pspec = driver::parseSpec("a_ptr:*" + dt + "[M,K], b_ptr:*" + dt + "[K,N], c_ptr:*" + dt +
                                   "[M,N], M:i32=160, N:i32=136, K:i32=200, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, "
                                   "GROUP_M=2, NUM_SMS=5");
    auto rep = driver::check(persistentFor(c.dtype), "matmul_persistent_desc_kernel", pspec, "NUM_SMS", opt, 16, seed);
    EXPECT_EQ(rep.programs, 5);
    EXPECT_EQ(rep.mmaDepth, std::min(c.mmaDepth, c.depth - 1));
    return;
  }
  // Two cooperative consumers split a 128-row tile; one consumer runs the 64x64x32 example.
  bool coop = c.consumers == 2;
  auto rep = driver::check(kernelFor(c.dtype, coop ? "matmul_desc_128" : "matmul_desc"), "", spec,
                           coop ? "cdiv(M, 128), cdiv(N, 128)" : "cdiv(M, 64), cdiv(N, 64)", opt, 16, seed);
  EXPECT_EQ(rep.seeds, 16);
  EXPECT_EQ(rep.programs, coop ? 4 : 9);
  EXPECT_EQ(rep.mmaDepth, std::min(c.mmaDepth, c.depth - 1));
}

std::vector<Config> configs() {
  std::vector<Config> v;
  for (int consumers : {1, 2})
    for (const char* t : {"f16", "bf16"})
      for (int d = 1; d <= 4; ++d)
        for (int p = 0; p <= 2; ++p) v.push_back({t, d, p, consumers});
  for (const char* t : {"f16", "bf16"})
    for (int d = 1; d <= 4; ++d)
      for (int p = 0; p <= 2; ++p) v.push_back({t, d, p, 1, true});
  for (int causal : {0, 1})
    for (const char* t : {"f16", "bf16"})
      for (int d = 1; d <= 4; ++d)
        for (int p = 0; p <= 2; ++p) v.push_back({t, d, p, 1, false, causal});
  for (const char* t : {"f16", "bf16"})
    for (int d = 1; d <= 4; ++d)
      for (int p = 0; p <= 2; ++p) v.push_back({t, d, p, 1, false, -1, true});
  // Made persistent by the pass (5 programs for 9 or more tiles, grouped by 2 rows).
  for (const char* t : {"f16", "bf16"})
    for (int d = 2; d <= 3; ++d) {
      v.push_back({t, d, 1, 1, false, -1, false, 5});
      v.push_back({t, d, 1, 1, false, -1, true, 5});
      v.push_back({t, d, 1, 1, false, 1, false, 5});
      v.push_back({t, d, 1, 2, false, -1, false, 5});  // and cooperative: two consumers per tile
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Kernels, WsCheck, ::testing::ValuesIn(configs()), [](const auto& param_info) {
  const auto& c = param_info.param;
  std::string form = c.makePersistent ? std::string("MadePersistent") +
                                           (c.pointerForm ? "Ptr_" : c.attention == 1 ? "AttentionCausal_" : c.consumers == 2 ? "CoopDesc_" : "Desc_")
                     : c.pointerForm ? "PointerForm_" : c.attention == 1 ? "AttentionCausal_" : c.attention == 0 ? "Attention_" : c.persistent ? "Persistent_"
                     : c.consumers == 2 ? "Cooperative_" : "";
  return form + param_info.param.dtype + "_D" +
         std::to_string(param_info.param.depth) + "_P" + std::to_string(param_info.param.mmaDepth);
});

// A producer/consumer pair at the aref level, parameterized by what the consumer does.
std::string arefKernel(const std::string& consumerRelease) {
  return R"(tile.func @k(%out: ptr<i32>) {
  %c0 = tile.constant {value = 0} : i32
  %c1 = tile.constant {value = 1} : i32
  %c4 = tile.constant {value = 4} : i32
  %ar = aref.create {consumers = 1} : aref<2, i32>
  wg.region {num_warps = 4, regs = 40, role = "producer"} {
    tile.for %c0, %c4, %c1 {
    ^bb0(%i: i32):
      %v = tile.mul %i, %c4 : i32
      aref.put %ar, %i, %v
      tile.yield
    }
    tile.yield
  }
  wg.region {num_warps = 4, regs = 232, role = "consumer"} {
    %s = tile.for %c0, %c4, %c1, %c0 : i32 {
    ^bb0(%j: i32, %acc: i32):
      %v2 = aref.get %ar, %j : i32
      %n = tile.add %acc, %v2 : i32
)" + consumerRelease + R"(
      tile.yield %n
    }
    tile.store %out, %s
    tile.yield
  }
  tile.return
}
)";
}

void runAref(const std::string& text, std::vector<exec::Buffer>& bufs, uint64_t seed) {
  auto m = ir::parseModule(text, "aref.tir");
  ir::verify(*m);
  exec::LaunchOptions lo;
  lo.seed = seed;
  exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0)}, bufs, lo);
}

TEST(WsExecutor, ArefLevelRunsUnderEverySeed) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    std::vector<exec::Buffer> bufs{{"out", ir::Scalar::I32, {1}}};
    runAref(arefKernel("      aref.consumed %ar, %j"), bufs, seed);
    EXPECT_EQ(bufs[0].getInt(0), 0 + 4 + 8 + 12);
  }
}

TEST(WsExecutor, MissingReleaseIsADeadlockNamingBothWaits) {
  std::vector<exec::Buffer> bufs{{"out", ir::Scalar::I32, {1}}};
  try {
    runAref(arefKernel(""), bufs, 1);
    FAIL() << "expected a deadlock";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("deadlock"), std::string::npos) << m;
    EXPECT_NE(m.find("producer (warp group 0) at iteration 2: aref.put waits for slot 0 of aref %ar (round 1) to be empty"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("consumer (warp group 1) at iteration 2: aref.get waits for slot 0 of aref %ar (round 1) to be full"),
              std::string::npos)
        << m;
    EXPECT_EQ(e.loc.line, 10);  // the producer's aref.put
  }
}

TEST(WsExecutor, ReleasingASlotNotHeldIsReported) {
  std::vector<exec::Buffer> bufs{{"out", ir::Scalar::I32, {1}}};
  // Releases iteration j + 1's slot, which it never got.
  std::string k = arefKernel("      %jn = tile.add %j, %c1 : i32\n      aref.consumed %ar, %jn");
  EXPECT_THROW(
      {
        try {
          runAref(k, bufs, 3);
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("which it does not hold"), std::string::npos) << e.what();
          throw;
        }
      },
      UserError);
}

}  // namespace
