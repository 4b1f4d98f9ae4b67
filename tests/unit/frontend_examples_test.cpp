// End to end: the Triton kernels under examples/*.py are compiled by the front end, run by the CPU
// executor on fresh random inputs, and compared with naive double-precision references.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/MathFns.h"

using tawa::exec::Arg;
using tawa::exec::Buffer;
using tawa::ir::Scalar;

namespace {

std::string example(const std::string& name) { return std::string(TAWA_SOURCE_DIR) + "/examples/" + name; }

struct KernelRun {
  std::unique_ptr<tawa::ir::Module> m;
  std::vector<Buffer> bufs;
  std::vector<Arg> args;
};

// Fills a buffer with uniform values in [lo, hi) (rounded to its format); never all zero.
void fill(Buffer& b, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  for (int64_t i = 0; i < b.numel(); ++i) b.setFloat(i, d(rng));
  b.setFloat(0, 0.75);
}

void launch(KernelRun& r, const std::string& kernel, std::array<int64_t, 3> grid) {
  tawa::exec::LaunchOptions opt;
  opt.grid = grid;
  const tawa::ir::Func* f = r.m->lookup(kernel);
  ASSERT_NE(f, nullptr);
  tawa::exec::launch(*r.m, *f, r.args, r.bufs, opt);
}

// |got - want| <= atol + rtol * |want| for every element.
void expectClose(const Buffer& got, const std::vector<double>& want, double rtol, double atol) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.getFloat(i), w = want[static_cast<size_t>(i)];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (++bad <= 5) ADD_FAILURE() << got.name << "[" << i << "] = " << g << ", expected " << w;
    }
  }
  EXPECT_EQ(bad, 0) << got.name << ": " << bad << " of " << got.numel() << " elements differ";
}

unsigned freshSeed() { return std::random_device{}(); }

}  // namespace

TEST(FrontendExamples, VectorAdd) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t n = 1000;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(example("vector_add.py"), "add_kernel",
                                      tawa::driver::parseSpec("x_ptr:*fp32[N], y_ptr:*fp32[N], out_ptr:*fp32[N], "
                                                              "n_elements:i32=1000, N=1000, BLOCK_SIZE=256"));
  r.bufs = {Buffer("x", Scalar::F32, {n}), Buffer("y", Scalar::F32, {n}), Buffer("out", Scalar::F32, {n})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::integer(n)};
  launch(r, "add_kernel", {4, 1, 1});
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<float>(r.bufs[0].getFloat(i) + r.bufs[1].getFloat(i));
  expectClose(r.bufs[2], want, 1e-6, 0);
}

TEST(FrontendExamples, Softmax) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t R = 37, C = 100;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(example("softmax.py"), "softmax_kernel",
                                      tawa::driver::parseSpec("out_ptr:*fp32[R,C], in_ptr:*fp32[R,C], in_row_stride:i32=100, "
                                                              "out_row_stride:i32=100, n_rows:i32=37, n_cols:i32=100, R=37, "
                                                              "C=100, BLOCK_SIZE=128, NUM_STAGES=2"));
  r.bufs = {Buffer("out", Scalar::F32, {R, C}), Buffer("in", Scalar::F32, {R, C})};
  fill(r.bufs[1], rng, -4, 4);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::integer(C), Arg::integer(C), Arg::integer(R), Arg::integer(C)};
  launch(r, "softmax_kernel", {8, 1, 1});
  std::vector<double> want(R * C);
  for (int64_t i = 0; i < R; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < C; ++j) mx = std::max(mx, r.bufs[1].getFloat(i * C + j));
    for (int64_t j = 0; j < C; ++j) sum += std::exp(r.bufs[1].getFloat(i * C + j) - mx);
    for (int64_t j = 0; j < C; ++j) want[i * C + j] = std::exp(r.bufs[1].getFloat(i * C + j) - mx) / sum;
  }
  expectClose(r.bufs[0], want, 1e-5, 1e-7);
}

TEST(FrontendExamples, LayerNorm) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t R = 7, C = 300;
  const double eps = 1e-5;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(
      example("layer_norm.py"), "layer_norm_fwd",
      tawa::driver::parseSpec("X:*fp32[R,C], Y:*fp32[R,C], W:*fp32[C], B:*fp32[C], Mean:*fp32[R], Rstd:*fp32[R], "
                              "row_stride:i32=300, N:i32=300, eps:fp32=1e-5, R=7, C=300, BLOCK_SIZE=128"));
  r.bufs = {Buffer("X", Scalar::F32, {R, C}), Buffer("Y", Scalar::F32, {R, C}), Buffer("W", Scalar::F32, {C}),
            Buffer("B", Scalar::F32, {C}),    Buffer("Mean", Scalar::F32, {R}),  Buffer("Rstd", Scalar::F32, {R})};
  fill(r.bufs[0], rng, -2, 3);
  fill(r.bufs[2], rng);
  fill(r.bufs[3], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3), Arg::buf(4), Arg::buf(5),
            Arg::integer(C), Arg::integer(C), Arg::real(eps)};
  launch(r, "layer_norm_fwd", {R, 1, 1});
  std::vector<double> y(R * C), mean(R), rstd(R);
  for (int64_t i = 0; i < R; ++i) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < C; ++j) m += r.bufs[0].getFloat(i * C + j);
    m /= C;
    for (int64_t j = 0; j < C; ++j) v += std::pow(r.bufs[0].getFloat(i * C + j) - m, 2);
    v /= C;
    mean[i] = m;
    rstd[i] = 1 / std::sqrt(v + static_cast<float>(eps));
    for (int64_t j = 0; j < C; ++j)
      y[i * C + j] = (r.bufs[0].getFloat(i * C + j) - m) * rstd[i] * r.bufs[2].getFloat(j) + r.bufs[3].getFloat(j);
  }
  expectClose(r.bufs[1], y, 1e-5, 1e-5);
  expectClose(r.bufs[4], mean, 1e-5, 1e-6);
  expectClose(r.bufs[5], rstd, 1e-5, 0);
}

namespace {

std::vector<double> matmulRef(const Buffer& a, const Buffer& b, int64_t M, int64_t N, int64_t K) {
  std::vector<double> c(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += a.getFloat(i * K + k) * b.getFloat(k * N + j);
      c[i * N + j] = s;
    }
  return c;
}

}  // namespace

TEST(FrontendExamples, MatmulGroupedPointerArithmetic) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 100, N = 72, K = 90;  // not multiples of the 32-wide blocks: masks matter
  KernelRun r;
  r.m = tawa::frontend::compileTriton(
      example("matmul.py"), "matmul_kernel",
      tawa::driver::parseSpec("a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=100, N:i32=72, K:i32=90, "
                              "stride_am:i32=90, stride_ak:i32=1, stride_bk:i32=72, stride_bn:i32=1, stride_cm:i32=72, "
                              "stride_cn:i32=1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2"));
  r.bufs = {Buffer("a", Scalar::F16, {M, K}), Buffer("b", Scalar::F16, {K, N}), Buffer("c", Scalar::F16, {M, N})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0),     Arg::buf(1),     Arg::buf(2),     Arg::integer(M), Arg::integer(N), Arg::integer(K),
            Arg::integer(K), Arg::integer(1), Arg::integer(N), Arg::integer(1), Arg::integer(N), Arg::integer(1)};
  launch(r, "matmul_kernel", {4 * 3, 1, 1});
  expectClose(r.bufs[2], matmulRef(r.bufs[0], r.bufs[1], M, N, K), 1e-2, 1e-2);
}

TEST(FrontendExamples, MatmulTensorDescriptors) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 100, N = 80, K = 96;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(example("matmul_desc.py"), "matmul_desc_kernel",
                                      tawa::driver::parseSpec("a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], "
                                                              "M:i32=100, N:i32=80, K:i32=96, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32"));
  r.bufs = {Buffer("a", Scalar::F16, {M, K}), Buffer("b", Scalar::F16, {K, N}), Buffer("c", Scalar::F16, {M, N})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::integer(M), Arg::integer(N), Arg::integer(K)};
  launch(r, "matmul_desc_kernel", {2, 2, 1});
  expectClose(r.bufs[2], matmulRef(r.bufs[0], r.bufs[1], M, N, K), 1e-2, 1e-2);
}

TEST(FrontendExamples, MatmulPersistent) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 100, N = 72, K = 90;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(
      example("matmul_persistent.py"), "matmul_persistent_kernel",
      tawa::driver::parseSpec("a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=100, N:i32=72, K:i32=90, "
                              "BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2, NUM_SMS=3"));
  r.bufs = {Buffer("a", Scalar::F16, {M, K}), Buffer("b", Scalar::F16, {K, N}), Buffer("c", Scalar::F16, {M, N})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::integer(M), Arg::integer(N), Arg::integer(K)};
  launch(r, "matmul_persistent_kernel", {3, 1, 1});
  expectClose(r.bufs[2], matmulRef(r.bufs[0], r.bufs[1], M, N, K), 1e-2, 1e-2);
}

namespace {

void attention(bool causal) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + (causal ? " causal" : " non-causal"));
  std::mt19937 rng(seed);
  const int64_t Z = 1, H = 2, S = 128, D = 64;
  const int64_t rows = Z * H * S;
  const double scale = 0.125;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(
      example("attention.py"), "attn_fwd",
      tawa::driver::parseSpec("Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=1, "
                              "H:i32=2, R=256, D=64, N_CTX=128, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=32, CAUSAL=" +
                              std::string(causal ? "True" : "False")));
  r.bufs = {Buffer("Q", Scalar::F16, {rows, D}), Buffer("K", Scalar::F16, {rows, D}), Buffer("V", Scalar::F16, {rows, D}),
            Buffer("Out", Scalar::F16, {rows, D})};
  for (int k = 0; k < 3; ++k) fill(r.bufs[k], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3), Arg::real(scale), Arg::integer(Z), Arg::integer(H)};
  launch(r, "attn_fwd", {S / 64, Z * H, 1});
  std::vector<double> want(rows * D);
  const Buffer &q = r.bufs[0], &kb = r.bufs[1], &v = r.bufs[2];
  for (int64_t bh = 0; bh < Z * H; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      int64_t qi = bh * S + i;
      std::vector<double> p(S, 0.0);
      double mx = -INFINITY;
      int64_t last = causal ? i : S - 1;
      for (int64_t j = 0; j <= last; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += q.getFloat(qi * D + d) * kb.getFloat((bh * S + j) * D + d);
        p[j] = s * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j <= last; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j <= last; ++j) o += p[j] * v.getFloat((bh * S + j) * D + d);
        want[qi * D + d] = o / sum;
      }
    }
  expectClose(r.bufs[3], want, 2e-2, 1e-2);
}

}  // namespace

TEST(FrontendExamples, AttentionCausal) { attention(true); }
TEST(FrontendExamples, AttentionNonCausal) { attention(false); }

// tl.split / tl.join (tests/lit/frontend/Inputs/split_join.py) on fresh random values with -0, both
// infinities and a NaN among them: the halves come out bit for bit.
namespace {
std::string splitJoinFile() { return std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/split_join.py"; }
uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
void fillSpecial(Buffer& b, std::mt19937& rng) {
  fill(b, rng, -4.0, 4.0);
  const double special[] = {-0.0, INFINITY, -INFINITY, NAN, 0.0};
  for (size_t i = 0; i < 5; ++i) b.setFloat(static_cast<int64_t>(3 * i + 1), special[i]);
}
}  // namespace

TEST(FrontendExamples, SplitJoinSwapsPairs) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t B = 64;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(splitJoinFile(), "swap_pairs", tawa::driver::parseSpec("x_ptr:*fp32[128], y_ptr:*fp32[128], B=64"));
  r.bufs = {Buffer("x", Scalar::F32, {2 * B}), Buffer("y", Scalar::F32, {2 * B})};
  fillSpecial(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1)};
  launch(r, "swap_pairs", {1, 1, 1});
  for (int64_t i = 0; i < B; ++i) {
    const float lo = static_cast<float>(r.bufs[0].getFloat(2 * i)), hi = static_cast<float>(r.bufs[0].getFloat(2 * i + 1));
    EXPECT_EQ(bitsOf(static_cast<float>(r.bufs[1].getFloat(2 * i))), bitsOf(hi)) << "pair " << i;
    EXPECT_EQ(bitsOf(static_cast<float>(r.bufs[1].getFloat(2 * i + 1))), bitsOf(lo * 2.0f)) << "pair " << i;
  }
}

TEST(FrontendExamples, SplitJoinColumnHalvesOfAnEpilogue) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 4, B = 32;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(splitJoinFile(), "column_halves",
                                      tawa::driver::parseSpec("x_ptr:*fp32[4,64], y_ptr:*fp32[4,64], M=4, B=32"));
  r.bufs = {Buffer("x", Scalar::F32, {M, 2 * B}), Buffer("y", Scalar::F32, {M, 2 * B})};
  fillSpecial(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1)};
  launch(r, "column_halves", {1, 1, 1});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < B; ++j) {
      const float left = static_cast<float>(r.bufs[0].getFloat(i * 2 * B + j));
      const float right = static_cast<float>(r.bufs[0].getFloat(i * 2 * B + B + j));
      EXPECT_EQ(bitsOf(static_cast<float>(r.bufs[1].getFloat(i * 2 * B + j))), bitsOf(left)) << i << ", " << j;
      EXPECT_EQ(bitsOf(static_cast<float>(r.bufs[1].getFloat(i * 2 * B + B + j))), bitsOf(right * 3.0f)) << i << ", " << j;
    }
}

// tl.randint4x / tl.rand (tests/lit/frontend/Inputs/random.py) against Philox 4x32-10 written here
// from its definition (Salmon et al., SC'11), checked first on Random123's known answer for a zero
// counter and key, then for fresh random seeds (negative ones included) at 64 offsets.
namespace {
std::string randomFile() { return std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/random.py"; }
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1), static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
         static_cast<uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}
std::vector<uint32_t> tawaPhilox(int64_t seed, int64_t n) {
  KernelRun r;
  r.m = tawa::frontend::compileTriton(randomFile(), "philox_words",
                                      tawa::driver::parseSpec("out_ptr:*i32[" + std::to_string(4 * n) + "], seed:i32=0, B=" + std::to_string(n)));
  r.bufs = {Buffer("out", Scalar::I32, {4 * n})};
  r.args = {Arg::buf(0), Arg::integer(seed)};
  launch(r, "philox_words", {1, 1, 1});
  std::vector<uint32_t> words;
  for (int64_t i = 0; i < 4 * n; ++i) words.push_back(static_cast<uint32_t>(static_cast<int32_t>(r.bufs[0].getInt(i))));
  return words;
}
}  // namespace

TEST(FrontendExamples, RandomPhiloxKnownAnswer) {
  auto words = tawaPhilox(0, 64);
  EXPECT_EQ(words[0], 0x6627e8d5u);
  EXPECT_EQ(words[1], 0xe169c58du);
  EXPECT_EQ(words[2], 0xbc57ac4cu);
  EXPECT_EQ(words[3], 0x9b00dbd8u);
}

TEST(FrontendExamples, RandomPhiloxAndUniformFloats) {
  std::mt19937 rng(freshSeed());
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  for (int32_t seed : {any(rng), -any(rng) / 2 - 1, 12345}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const int64_t n = 64;
    auto words = tawaPhilox(seed, n);
    const auto seed64 = static_cast<uint64_t>(static_cast<int64_t>(seed));
    for (int64_t i = 0; i < n; ++i) {
      auto want = philox4x32({static_cast<uint32_t>(i), 0, 0, 0}, static_cast<uint32_t>(seed64), static_cast<uint32_t>(seed64 >> 32), 10);
      for (int w = 0; w < 4; ++w) EXPECT_EQ(words[static_cast<size_t>(4 * i + w)], want[static_cast<size_t>(w)]) << "offset " << i << " word " << w;
    }
    // tl.rand: word 0 as int32, ~x where negative, times 4.6566127342e-10 in f32; in [0, 1).
    KernelRun r;
    r.m = tawa::frontend::compileTriton(randomFile(), "uniform", tawa::driver::parseSpec("out_ptr:*fp32[256], seed:i32=0, B=64"));
    r.bufs = {Buffer("out", Scalar::F32, {256})};
    r.args = {Arg::buf(0), Arg::integer(seed)};
    launch(r, "uniform", {4, 1, 1});
    for (int64_t i = 0; i < 256; ++i) {
      auto w = static_cast<int32_t>(philox4x32({static_cast<uint32_t>(i), 0, 0, 0}, static_cast<uint32_t>(seed64),
                                               static_cast<uint32_t>(seed64 >> 32), 10)[0]);
      const float want = static_cast<float>(w < 0 ? ~w : w) * 4.6566127342e-10f;
      const double got = r.bufs[0].getFloat(i);
      EXPECT_EQ(got, static_cast<double>(want)) << "offset " << i;
      EXPECT_TRUE(got >= 0.0 && got < 1.0) << got;
    }
  }
}

// tl.randn: Box-Muller on the first two Philox words, against the same formula evaluated here in
// double from this file's own Philox; and a rotary embedding (tl.sin, tl.cos, tl.split, tl.join)
// against a double reference on fresh random inputs.
TEST(FrontendExamples, RandomNormals) {
  std::mt19937 rng(freshSeed());
  const int32_t seed = static_cast<int32_t>(rng());
  SCOPED_TRACE("seed " + std::to_string(seed));
  KernelRun r;
  r.m = tawa::frontend::compileTriton(randomFile(), "normal", tawa::driver::parseSpec("out_ptr:*fp32[512], seed:i32=0, B=128"));
  r.bufs = {Buffer("out", Scalar::F32, {512})};
  r.args = {Arg::buf(0), Arg::integer(seed)};
  launch(r, "normal", {4, 1, 1});
  const auto seed64 = static_cast<uint64_t>(static_cast<int64_t>(seed));
  double sum = 0, sumsq = 0;
  for (int64_t i = 0; i < 512; ++i) {
    auto w = philox4x32({static_cast<uint32_t>(i), 0, 0, 0}, static_cast<uint32_t>(seed64), static_cast<uint32_t>(seed64 >> 32), 10);
    auto uniform = [](uint32_t x) {
      auto v = static_cast<int32_t>(x);
      return static_cast<double>(static_cast<float>(v < 0 ? ~v : v) * 4.6566127342e-10f);
    };
    const double u1 = std::max(1.0e-7, uniform(w[0])), u2 = uniform(w[1]);
    const double want = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    const double got = r.bufs[0].getFloat(i);
    EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want))) << "offset " << i;
    sum += got;
    sumsq += got * got;
  }
  EXPECT_LT(std::fabs(sum / 512), 0.2);               // a standard normal sample: mean near 0,
  EXPECT_NEAR(sumsq / 512, 1.0, 0.25);                // variance near 1
}

TEST(FrontendExamples, RotaryEmbeddingSinCosSplitJoin) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t R = 37, D = 64;
  const double logBase = std::log(10000.0);
  KernelRun r;
  r.m = tawa::frontend::compileTriton(std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/rotary.py", "rope",
                                      tawa::driver::parseSpec("x_ptr:*fp32[R,64], out_ptr:*fp32[R,64], rows:i32=37, R=37, D=64, "
                                                              "LOG_BASE=9.210340371976184"));
  r.bufs = {Buffer("x", Scalar::F32, {R, D}), Buffer("out", Scalar::F32, {R, D})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::integer(R)};
  launch(r, "rope", {R, 1, 1});
  std::vector<double> want(static_cast<size_t>(R * D));
  for (int64_t row = 0; row < R; ++row)
    for (int64_t i = 0; i < D / 2; ++i) {
      const double th = static_cast<double>(row) * std::exp(static_cast<double>(i) * (-2.0 * logBase / D));
      const double x0 = r.bufs[0].getFloat(row * D + 2 * i), x1 = r.bufs[0].getFloat(row * D + 2 * i + 1);
      want[static_cast<size_t>(row * D + 2 * i)] = x0 * std::cos(th) - x1 * std::sin(th);
      want[static_cast<size_t>(row * D + 2 * i + 1)] = x0 * std::sin(th) + x1 * std::cos(th);
    }
  expectClose(r.bufs[1], want, 1e-4, 1e-4);  // f32 angles up to 36 rad: their rounding dominates
}

// tests/lit/frontend/Inputs/libdevice.py's every_fn: each libdevice function tawa has, on fresh
// random inputs, against the same function in double; and the kernel calls every function of the
// table (so a function added there is tested here too).
TEST(FrontendExamples, LibdeviceEveryFunctionAgainstDouble) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t n = 1000;
  // out[row, i] for x = x[i], u = |x| / 2 + 1/4, v = 2u, in the kernel's order.
  const std::vector<std::function<double(double, double, double)>> ref = {
      [](double, double u, double) { return std::acos(u); },
      [](double, double u, double) { return std::acosh(u + 1.0); },
      [](double, double u, double) { return std::asin(u); },
      [](double x, double, double) { return std::asinh(x); },
      [](double x, double, double) { return std::atan(x * 3.0); },
      [](double, double u, double) { return std::atanh(u); },
      [](double x, double, double) { return std::cbrt(x); },
      [](double x, double, double) { return std::ceil(x * 4.0); },
      [](double x, double, double) { return std::cosh(x); },
      [](double x, double, double) { return std::erf(x); },
      [](double x, double, double) { return std::erfc(x); },
      [](double x, double, double) { return std::pow(10.0, x); },
      [](double x, double, double) { return std::expm1(x); },
      [](double x, double, double) { return std::floor(x * 4.0); },
      [](double, double u, double) { return std::lgamma(u); },
      [](double, double u, double) { return std::log10(u); },
      [](double x, double, double) { return std::log1p(x); },
      [](double x, double, double) { return std::nearbyint(x * 4.0); },
      [](double x, double, double) { return std::round(x * 4.0); },
      [](double x, double, double) { return std::sinh(x); },
      [](double x, double, double) { return std::tan(x); },
      [](double x, double, double) { return std::tanh(x * 2.0); },
      [](double, double u, double) { return std::tgamma(u); },
      [](double x, double, double) { return std::trunc(x * 4.0); },
      [](double x, double, double v) { return std::atan2(x, v); },
      [](double x, double, double v) { return std::copysign(v, x); },
      [](double x, double, double v) { return std::hypot(x, v); },
      [](double x, double, double v) { return std::pow(v, x * 2.0); },
      [](double, double, double v) { return v * v; },
      [](double x, double u, double v) { return std::fma(x, u, v); },
  };
  const int64_t rows = static_cast<int64_t>(ref.size());
  KernelRun r;
  r.m = tawa::frontend::compileTriton(std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/libdevice.py", "every_fn",
                                      tawa::driver::parseSpec("x_ptr:*fp32[n], out_ptr:*fp32[o], n:i32=1000, o=" +
                                                              std::to_string(rows * n) + ", BLOCK=256"));
  std::set<std::string> called;
  tawa::ir::walk(static_cast<const tawa::ir::Block&>(r.m->lookup("every_fn")->body), [&](const tawa::ir::Op* op) {
    if (op->kind() == tawa::ir::OpKind::Math) called.insert(op->strAttr("fn"));
  });
  for (const tawa::ir::MathFn& f : tawa::ir::mathFns()) EXPECT_TRUE(called.count(std::string(f.name))) << f.name << " is not tested";
  r.bufs = {Buffer("x", Scalar::F32, {n}), Buffer("out", Scalar::F32, {rows * n})};
  fill(r.bufs[0], rng);
  fill(r.bufs[1], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::integer(n)};
  launch(r, "every_fn", {4, 1, 1});
  std::vector<double> want(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < n; ++i) {
    const double x = r.bufs[0].getFloat(i), u = std::fabs(x) * 0.5 + 0.25, v = 2.0 * u;
    for (int64_t f = 0; f < rows; ++f) want[static_cast<size_t>(f * n + i)] = ref[static_cast<size_t>(f)](x, u, v);
  }
  // f32 arguments and results: a few ulp of the result, and of u's rounding through the function.
  expectClose(r.bufs[1], want, 2e-6, 2e-6);
}

// GELU on f16 data: the exact form (tl.erf) and the tanh approximation (libdevice.tanh), computed in
// f32 and stored as f16.
TEST(FrontendExamples, LibdeviceGeluF16) {
  unsigned seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t n = 1000;
  KernelRun r;
  r.m = tawa::frontend::compileTriton(std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/libdevice.py", "gelu_kernel",
                                      tawa::driver::parseSpec("x_ptr:*fp16[n], exact_ptr:*fp16[n], approx_ptr:*fp16[n], "
                                                              "n:i32=1000, BLOCK=256"));
  r.bufs = {Buffer("x", Scalar::F16, {n}), Buffer("exact", Scalar::F16, {n}), Buffer("approx", Scalar::F16, {n})};
  fill(r.bufs[0], rng, -4.0, 4.0);
  fill(r.bufs[1], rng);
  fill(r.bufs[2], rng);
  r.args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::integer(n)};
  launch(r, "gelu_kernel", {4, 1, 1});
  std::vector<double> exact(static_cast<size_t>(n)), approx(static_cast<size_t>(n));
  const double pi = std::acos(-1.0);
  for (int64_t i = 0; i < n; ++i) {
    const double x = r.bufs[0].getFloat(i);
    exact[static_cast<size_t>(i)] = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    approx[static_cast<size_t>(i)] = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
  }
  expectClose(r.bufs[1], exact, 1e-3, 1e-3);  // f16 results: half an ulp is 2^-11 relative
  expectClose(r.bufs[2], approx, 1e-3, 1e-3);
}
