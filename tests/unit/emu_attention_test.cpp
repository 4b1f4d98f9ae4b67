// The CPU emulator on the emitted fused-attention kernel (examples/attention.py, the FlashAttention
// shape: a producer loads Q once and streams K and V through arefs, the consumer computes QK^T with
// wgmma from shared memory, the online softmax on the accumulator fragments (quad shuffles, exp2),
// and PV with wgmma taking P from registers). Fresh random Q, K, V; the reference is a naive softmax
// in double. Sequences of 256 keys with 64-key blocks and D = 2 wrap every ring twice. A mutation of
// the A-from-registers fragment order must give wrong numbers; so must a ping-pong without its
// first turn deadlock.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "backends/cuda/Emitter.h"
#include "backends/emu/Emulator.h"
#include "driver/Check.h"
#include "driver/Spec.h"
#include "ir/Diagnostic.h"

using namespace tawa;

namespace {

struct Attn {
  int dim = 64, blockM = 64, blockN = 64, depth = 2;
  bool causal = false;
  int consumers = 1;  // 2: split-consumers gives each cooperative consumer half of the query rows
  std::string name() const {
    return "attn_d" + std::to_string(dim) + "_m" + std::to_string(blockM) + "_n" + std::to_string(blockN) + "_D" +
           std::to_string(depth) + (causal ? "_causal" : "") + (consumers == 2 ? "_coop" : "");
  }
};

constexpr int kZ = 1, kH = 2, kS = 256;
constexpr double kScale = 0.0883883;

cuda::EmitResult emitAttention(const Attn& a, bool pingPong = true) {
  std::string spec = "Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=" + std::to_string(kZ) +
                     ", H:i32=" + std::to_string(kH) + ", R=" + std::to_string(kZ * kH * kS) + ", D=" + std::to_string(a.dim) +
                     ", N_CTX=" + std::to_string(kS) + ", HEAD_DIM=" + std::to_string(a.dim) + ", BLOCK_M=" + std::to_string(a.blockM) +
                     ", BLOCK_N=" + std::to_string(a.blockN) + ", CAUSAL=" + (a.causal ? "True" : "False");
  transforms::PassOptions ws;
  ws.depth = a.depth;
  ws.consumers = a.consumers;
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/attention.py", "attn_fwd", driver::parseSpec(spec), ws, "nv");
  cuda::EmitOptions o;
  o.kernelName = a.name() + (pingPong ? "" : "_nopp");
  o.pingPong = pingPong;
  return cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
}

struct AttnRun {
  std::vector<double> out, want;
};

// Q, K, V: `heads` slices of [S, D] f16, fresh random values; Out filled with 777 (no element may keep it).
std::vector<exec::Buffer> attentionBuffers(int64_t heads, int64_t S, int64_t D, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<exec::Buffer> bufs;
  for (const char* n : {"Q", "K", "V", "Out"}) bufs.emplace_back(n, ir::Scalar::F16, std::vector<int64_t>{heads * S, D});
  for (int i = 0; i < 3; ++i)
    for (int64_t j = 0; j < bufs[static_cast<size_t>(i)].numel(); ++j) bufs[static_cast<size_t>(i)].setFloat(j, 2.0 * u(rng));
  for (int64_t j = 0; j < bufs[3].numel(); ++j) bufs[3].setFloat(j, 777.0);
  return bufs;
}

// The scores of query row i of head bh against keys 0..last, q . k_j * scale, in double, and their
// maximum.
std::vector<double> rowScores(const std::vector<exec::Buffer>& bufs, int64_t bh, int64_t i, int64_t last, int64_t S, int64_t D,
                              double* mx) {
  std::vector<double> p(static_cast<size_t>(last + 1));
  *mx = -INFINITY;
  for (int64_t j = 0; j <= last; ++j) {
    double s = 0;
    for (int64_t d = 0; d < D; ++d) s += bufs[0].getFloat((bh * S + i) * D + d) * bufs[1].getFloat((bh * S + j) * D + d);
    p[static_cast<size_t>(j)] = s * kScale;
    *mx = std::max(*mx, p[static_cast<size_t>(j)]);
  }
  return p;
}

// The reference: softmax(Q K^T * scale [causal]) V per head, in double, from the f16 inputs as stored.
std::vector<double> naiveAttention(const std::vector<exec::Buffer>& bufs, int64_t heads, int64_t S, int64_t D, bool causal) {
  std::vector<double> want(static_cast<size_t>(heads * S * D), 0.0);
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      int64_t qi = bh * S + i, last = causal ? i : S - 1;
      double mx = 0, sum = 0;
      std::vector<double> p = rowScores(bufs, bh, i, last, S, D, &mx);
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j <= last; ++j)
        for (int64_t d = 0; d < D; ++d)
          want[static_cast<size_t>(qi * D + d)] += p[static_cast<size_t>(j)] / sum * bufs[2].getFloat((bh * S + j) * D + d);
    }
  return want;
}

AttnRun runAttention(const cuda::EmitResult& er, const Attn& a, uint64_t seed) {
  auto bufs = attentionBuffers(kZ * kH, kS, a.dim, seed);
  std::vector<exec::Arg> args = {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::buf(2),    exec::Arg::buf(3),
                                 exec::Arg::real(kScale), exec::Arg::integer(kZ), exec::Arg::integer(kH)};
  AttnRun r;
  r.want = naiveAttention(bufs, kZ * kH, kS, a.dim, a.causal);
  emu::launch(er, args, bufs, {kS / a.blockM, kZ * kH, 1});
  for (int64_t j = 0; j < bufs[3].numel(); ++j) r.out.push_back(bufs[3].getFloat(j));
  return r;
}

// f16 output, P rounded to f16 before PV: |out - want| <= 1e-2 * |want| + 1e-2 * rms(want).
int64_t mismatches(const AttnRun& r, std::string* first) {
  double ss = 0;
  for (double w : r.want) ss += w * w;
  double rtol = 1e-2, atol = rtol * std::sqrt(ss / static_cast<double>(r.want.size()));
  int64_t bad = 0;
  for (size_t i = 0; i < r.out.size(); ++i)
    if (!(std::fabs(r.out[i] - r.want[i]) <= rtol * std::fabs(r.want[i]) + atol)) {
      if (!bad && first) *first = "element " + std::to_string(i) + ": got " + std::to_string(r.out[i]) + ", want " + std::to_string(r.want[i]);
      ++bad;
    }
  return bad;
}

uint64_t freshSeed() { return std::random_device{}(); }

void expectCorrect(const Attn& a, bool pingPong = true) {
  SCOPED_TRACE(a.name() + (pingPong ? "" : " without ping-pong"));
  uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto er = emitAttention(a, pingPong);
  // The FlashAttention-3 structure is in the text: P feeds wgmma from registers, rows reduce by shuffles.
  EXPECT_NE(er.source.find("tawa::wgmma_mma_async_rs_m64n" + std::to_string(a.dim) + "k16_f32_f16<1>"), std::string::npos);
  EXPECT_NE(er.source.find("tawa::shfl_xor(x, 2)"), std::string::npos);
  EXPECT_NE(er.source.find("tawa::exp2_approx"), std::string::npos);
  // PV of the previous block stays in flight while the softmax of this one runs (FlashAttention-3's
  // intra-warpgroup overlap); its slot is released once it completes.
  EXPECT_NE(er.source.find("tawa::wgmma_wait_group<1>();"), std::string::npos);
  // The producer loads Q once into the ring of its own depth-1 aref (aref 0; with two cooperative
  // consumers, one aref per half: 0 and 1), K and V stream through the next two, one each: K's slot
  // goes back as soon as QK^T has completed, V's once the PV MMA that reads it has. The consumer
  // has no buffer of its own for Q.
  const std::string k = std::to_string(a.consumers), v = std::to_string(a.consumers + 1);
  EXPECT_NE(er.source.find("tawa::mbarrier_arrive(&empty" + k + "[slot"), std::string::npos);
  EXPECT_NE(er.source.find("tawa::mbarrier_arrive(&empty" + v + "[release"), std::string::npos);
  EXPECT_EQ(er.source.find("tawa::mbarrier_arrive(&empty" + k + "[release"), std::string::npos);
  for (int h = 0; h < a.consumers; ++h)
    EXPECT_NE(er.source.find("(ring" + std::to_string(h) + "_0 + slot"), std::string::npos) << h;
  EXPECT_EQ(er.source.find("q_buf"), std::string::npos);
  // Two cooperative consumers take turns issuing their MMAs (named barriers 3 and 4; consumer 1
  // gives consumer 0 the first turn); one consumer has nobody to take turns with.
  bool turns = a.consumers == 2 && pingPong;
  EXPECT_EQ(er.pingPong, turns);
  EXPECT_EQ(er.source.find("tawa::bar_sync(3, 256);  // ping-pong") != std::string::npos, turns);
  EXPECT_EQ(er.source.find("tawa::bar_arrive(4, 256);  // ping-pong") != std::string::npos, turns);
  EXPECT_EQ(er.source.find("tawa::bar_sync(4, 256);  // ping-pong") != std::string::npos, turns);
  EXPECT_EQ(er.source.find("tawa::bar_arrive(3, 256);  // ping-pong: consumer 0 takes the first turn") != std::string::npos, turns);
  AttnRun r = runAttention(er, a, seed);
  std::string first;
  EXPECT_EQ(mismatches(r, &first), 0) << first;
}

// A mutation: the first `from` in the emitted text becomes `to`, and the kernel gets a name of its
// own (the emulator's build cache is keyed by the text anyway; the name keeps runs apart in
// diagnostics). False when the text has no `from`.
bool mutate(cuda::EmitResult& er, const std::string& from, const std::string& to, const std::string& suffix) {
  size_t p = er.source.find(from);
  if (p == std::string::npos) return false;
  er.source.replace(p, from.size(), to);
  std::string name = er.kernelName + suffix;
  for (size_t q = 0; (q = er.source.find(er.kernelName + "(", q)) != std::string::npos; q += name.size())
    er.source.replace(q, er.kernelName.size(), name);
  er.kernelName = name;
  return true;
}

// Runs a mutated kernel that must stop the emulator with a diagnostic containing `want`.
void expectEmulatorStops(const cuda::EmitResult& er, const Attn& a, const std::string& want) {
  try {
    runAttention(er, a, freshSeed());
    ADD_FAILURE() << "expected the emulator to stop with: " << want;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(EmuAttention, Dim64NonCausal) { expectCorrect({64, 64, 64, 2, false}); }
TEST(EmuAttention, Dim64Causal) { expectCorrect({64, 64, 64, 2, true}); }
TEST(EmuAttention, Dim128Causal) { expectCorrect({128, 64, 64, 2, true}); }
TEST(EmuAttention, Dim128Block128) { expectCorrect({128, 64, 128, 2, false}); }
TEST(EmuAttention, Dim64Rows128CausalDepth3) { expectCorrect({64, 128, 64, 3, true}); }
// FlashAttention-3's shape: 128-row query blocks split between two cooperative consumer warp groups.
TEST(EmuAttention, Dim128CooperativeCausal) {
  Attn a{128, 128, 64, 2, true, 2};
  EXPECT_EQ(emitAttention(a).threads, 384);
  expectCorrect(a);
}
TEST(EmuAttention, Dim64CooperativeBlock128) { expectCorrect({64, 128, 64, 3, false, 2}); }
TEST(EmuAttention, Dim64CooperativeCausalWithoutPingPong) { expectCorrect({64, 128, 64, 2, true, 2}, /*pingPong=*/false); }

TEST(EmuAttentionMutation, PingPongWithoutTheFirstTurn) {
  // If consumer 1 does not give consumer 0 the first turn, each waits for the other: the emulator
  // must report the deadlock at the named barrier, not hang or pass.
  Attn a{64, 128, 64, 2, false, 2};
  auto er = emitAttention(a);
  ASSERT_TRUE(mutate(er, "tawa::bar_arrive(3, 256);  // ping-pong: consumer 0 takes the first turn", "", "_noturn"));
  expectEmulatorStops(er, a, "named barrier 3");
}

TEST(EmuAttentionMutation, SwappedAFragmentRegisters) {
  // The A-from-registers operand of PV takes the fragment's packed words 4kk..4kk+3 in order; swapping
  // the first two (rows r and r+8) must give wrong numbers, not a pass.
  Attn a{64, 64, 64, 2, false};
  auto er = emitAttention(a);
  ASSERT_TRUE(mutate(er, "(acc_done[0], a_regs[0][0], a_regs[0][1], ", "(acc_done[0], a_regs[0][1], a_regs[0][0], ", "_swapped"))
      << er.source;
  AttnRun r = runAttention(er, a, freshSeed());
  EXPECT_GT(mismatches(r, nullptr), 0);
}

TEST(EmuAttentionMutation, ScoresReadBeforeTheirWait) {
  // Without the wgmma.wait_group<1> that completes QK^T (leaving PV in flight), the softmax reads the
  // score registers while the wgmma owns them: the emulator must stop with a diagnostic, not
  // compute with NaNs.
  Attn a{64, 64, 64, 2, false};
  auto er = emitAttention(a);
  ASSERT_TRUE(mutate(er, "tawa::wgmma_wait_group<1>();", "", "_nowait"));
  try {
    runAttention(er, a, freshSeed());
    FAIL() << "expected the emulator to stop";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a value read from wgmma accumulator registers before the wgmma.wait_group"), std::string::npos)
        << e.what();
    EXPECT_NE(e.loc.str().find("attention.py"), std::string::npos) << e.loc.str();  // located in the kernel source
  }
}

// ---- examples/attention.tir: the pointer form. Each program offsets its base pointers by its head
// (q + off_hz * n_ctx * 64) and masks rows past n_ctx. The CUDA backend gives each tensor map a third
// dimension, one [n_ctx, 64] slice per program id along grid axis 1, so that TMA keeps every
// head's own row bound: a sequence of 100 leaves the second query block 28 rows past the end of its
// head, which must load as zeros and must not be stored (for the last head they lie past the buffer,
// which the emulator reports).

namespace {

struct PointerRun {
  cuda::EmitResult er;
  int64_t heads, seq;
  bool causal;
};

PointerRun emitPointerForm(int64_t heads, int64_t seq, bool causal) {
  std::string spec = "q:*fp16[" + std::to_string(heads) + "," + std::to_string(seq) + ",64], k:*fp16[" + std::to_string(heads) + "," +
                     std::to_string(seq) + ",64], v:*fp16[" + std::to_string(heads) + "," + std::to_string(seq) + ",64], o:*fp16[" +
                     std::to_string(heads) + "," + std::to_string(seq) + ",64], sm_scale:fp32=0.125, n_ctx:i32=" + std::to_string(seq) +
                     ", causal:i32=" + (causal ? "1" : "0");
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/attention.tir", "", driver::parseSpec(spec), {}, "nv");
  cuda::EmitOptions o;
  o.kernelName = "attn_ptr_h" + std::to_string(heads) + "_s" + std::to_string(seq) + (causal ? "_causal" : "");
  return {cuda::emitCudaKernel(*nv.module, *nv.kernel, o), heads, seq, causal};
}

AttnRun runPointerForm(const PointerRun& p, uint64_t seed) {
  auto bufs = attentionBuffers(p.heads, p.seq, 64, seed);
  std::vector<exec::Arg> args = {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::buf(2), exec::Arg::buf(3),
                                 exec::Arg::real(kScale), exec::Arg::integer(p.seq), exec::Arg::integer(p.causal)};
  AttnRun r;
  r.want = naiveAttention(bufs, p.heads, p.seq, 64, p.causal);
  emu::launch(p.er, args, bufs, {(p.seq + 63) / 64, p.heads, 1});
  for (int64_t j = 0; j < bufs[3].numel(); ++j) r.out.push_back(bufs[3].getFloat(j));
  return r;
}

void expectPointerFormCorrect(int64_t heads, int64_t seq, bool causal) {
  uint64_t seed = freshSeed();
  SCOPED_TRACE("heads " + std::to_string(heads) + ", n_ctx " + std::to_string(seq) + (causal ? ", causal" : "") + ", seed " +
               std::to_string(seed));
  PointerRun p = emitPointerForm(heads, seq, causal);
  ASSERT_EQ(p.er.tensorMaps.size(), 4u);
  for (const auto& m : p.er.tensorMaps) {
    ASSERT_EQ(m.slices.size(), 1u) << m.param;
    EXPECT_EQ(m.slices[0].gridAxis, 1) << m.param;
  }
  EXPECT_NE(p.er.source.find("tawa::cp_async_bulk_tensor_3d_global_to_shared("), std::string::npos);
  EXPECT_NE(p.er.source.find("tawa::cp_async_bulk_tensor_3d_shared_to_global(&o_ptrs_desc"), std::string::npos);
  EXPECT_EQ(p.er.source.find("cp_async_bulk_tensor_2d"), std::string::npos);
  AttnRun r = runPointerForm(p, seed);
  std::string first;
  EXPECT_EQ(mismatches(r, &first), 0) << first;
}

}  // namespace

TEST(EmuAttentionPointerForm, ThreeHeadsPartialBlock) { expectPointerFormCorrect(3, 100, false); }
TEST(EmuAttentionPointerForm, ThreeHeadsPartialBlockCausal) { expectPointerFormCorrect(3, 100, true); }
TEST(EmuAttentionPointerForm, TwoHeadsCausalWholeBlocks) { expectPointerFormCorrect(2, 192, true); }

TEST(EmuAttentionMutation, PointerFormEveryProgramReadsHeadZero) {
  // The slice coordinate is what picks the head: K taken from head 0 for every program must give
  // wrong numbers for the other heads.
  PointerRun p = emitPointerForm(2, 128, false);
  ASSERT_TRUE(mutate(p.er, "&k_ptrs_desc, 0, start_n, off_hz,", "&k_ptrs_desc, 0, start_n, 0,", "_head0")) << p.er.source;
  AttnRun r = runPointerForm(p, freshSeed());
  EXPECT_GT(mismatches(r, nullptr), 0);
}

// ---- the training form: Out and the base-2 logsumexp of each query row (tests/lit/cuda/Inputs/
// attention_lse.py), a row vector that each consumer writes from its registers through a 1-D
// descriptor, after log2 of the row sums.
namespace {

void expectLseCorrect(int dim, bool causal) {
  SCOPED_TRACE("head dim " + std::to_string(dim) + (causal ? ", causal" : ""));
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::string spec = "Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], M:*fp32[R], sm_scale:fp32=0.125, Z:i32=" +
                           std::to_string(kZ) + ", H:i32=" + std::to_string(kH) + ", R=" + std::to_string(kZ * kH * kS) +
                           ", D=" + std::to_string(dim) + ", N_CTX=" + std::to_string(kS) + ", HEAD_DIM=" + std::to_string(dim) +
                           ", BLOCK_M=128, BLOCK_N=64, CAUSAL=" + (causal ? "True" : "False");
  transforms::PassOptions ws;
  ws.consumers = 2;
  auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/tests/lit/cuda/Inputs/attention_lse.py", "attn_fwd_lse",
                               driver::parseSpec(spec), ws, "nv");
  cuda::EmitOptions o;
  o.kernelName = "attn_lse_d" + std::to_string(dim) + (causal ? "_causal" : "");
  auto er = cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
  EXPECT_EQ(er.threads, 384);  // two cooperative consumers
  EXPECT_NE(er.source.find("float* const M"), std::string::npos) << "M reaches the kernel as a pointer";
  EXPECT_NE(er.source.find("tawa::lg2_approx("), std::string::npos);

  auto bufs = attentionBuffers(kZ * kH, kS, dim, seed);
  bufs.emplace_back("M", ir::Scalar::F32, std::vector<int64_t>{kZ * kH * kS});
  for (int64_t j = 0; j < bufs[4].numel(); ++j) bufs[4].setFloat(j, 777.0);
  std::vector<exec::Arg> args = {exec::Arg::buf(0),        exec::Arg::buf(1),       exec::Arg::buf(2),      exec::Arg::buf(3),
                                 exec::Arg::buf(4),        exec::Arg::real(kScale), exec::Arg::integer(kZ), exec::Arg::integer(kH)};
  AttnRun r;
  r.want = naiveAttention(bufs, kZ * kH, kS, dim, causal);
  emu::launch(er, args, bufs, {kS / 128, kZ * kH, 1});
  for (int64_t j = 0; j < bufs[3].numel(); ++j) r.out.push_back(bufs[3].getFloat(j));
  std::string first;
  EXPECT_EQ(mismatches(r, &first), 0) << first;
  // M[row] = log2(sum_j 2^(s_j log2 e)) = ln(sum_j e^(s_j)) / ln 2, s_j = q . k_j * scale, in double.
  int64_t bad = 0;
  for (int64_t bh = 0; bh < kZ * kH; ++bh)
    for (int64_t i = 0; i < kS; ++i) {
      const int64_t qi = bh * kS + i, last = causal ? i : kS - 1;
      double mx = 0, sum = 0;
      for (double x : rowScores(bufs, bh, i, last, kS, dim, &mx)) sum += std::exp(x - mx);
      const double want = (mx + std::log(sum)) / std::log(2.0), got = bufs[4].getFloat(qi);
      if (!(std::fabs(got - want) <= 1e-3 + 1e-4 * std::fabs(want)) && bad++ == 0)
        ADD_FAILURE() << "M[" << qi << "] is " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
}

}  // namespace

TEST(EmuAttentionLse, Dim64) { expectLseCorrect(64, false); }
TEST(EmuAttentionLse, Dim128Causal) { expectLseCorrect(128, true); }
