// Numerical tests of the hand-written tile-IR kernels in examples/: each kernel is parsed, verified
// and run on the CPU executor with fresh random inputs (uniform in [-1, 1], never zero), and every
// output element is compared with an independent reference written as naive loops in double
// precision over the buffers' rounded input values. Outputs are prefilled with NaN, so an element
// the kernel forgets to write fails the comparison, and padding it must not touch is checked to
// stay NaN. Tolerances follow the output dtype: f16 about 1e-2 (absolute part scaled by sqrt(K)
// for GEMM sums), f32 about 1e-5 relative.
//
// The seed of each test is drawn from std::random_device and printed on failure; set
// TAWA_TEST_SEED=<n> in the environment to replay one.
//
// Error tests: an undersized input buffer must make the kernel's first access past its end a
// tawa::UserError that says "out of bounds" and points at that op's line in the .tir file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/exec/Executor.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace {

using tawa::exec::Arg;
using tawa::exec::Buffer;
using tawa::exec::LaunchOptions;
using tawa::ir::Scalar;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string examplePath(const std::string& file) { return std::string(TAWA_SOURCE_DIR) + "/examples/" + file; }

struct Kernel {
  std::string path;
  std::unique_ptr<tawa::ir::Module> module;
  const tawa::ir::Func* func = nullptr;
};

// Parses and verifies examples/<file>; the kernel is the function named `func`.
Kernel loadKernel(const std::string& file, const std::string& func) {
  Kernel k;
  k.path = examplePath(file);
  try {
    k.module = tawa::ir::parseFile(k.path);
    tawa::ir::verify(*k.module);
  } catch (const tawa::UserError& e) {
    ADD_FAILURE() << e.format();
    throw;
  }
  k.func = k.module->lookup(func);
  if (!k.func) throw std::runtime_error(k.path + " has no function @" + func);
  return k;
}

// 1-based line of the first line of `path` that contains `needle` (0 when none).
int lineOf(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(needle) != std::string::npos) return n;
  return 0;
}

uint32_t freshSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  std::random_device rd;
  return rd();
}

// Fills `b` with values uniform in [-1, 1], redrawing any that round to zero in its format.
void fillRandom(Buffer& b, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < b.numel(); ++i) {
    do b.setFloat(i, dist(rng));
    while (b.getFloat(i) == 0.0);
  }
}

void fillNaN(Buffer& b) {
  for (int64_t i = 0; i < b.numel(); ++i) b.setFloat(i, kNaN);
}

std::vector<double> values(const Buffer& b) {
  std::vector<double> v(static_cast<size_t>(b.numel()));
  for (int64_t i = 0; i < b.numel(); ++i) v[static_cast<size_t>(i)] = b.getFloat(i);
  return v;
}

double roundToF32(double x) { return static_cast<double>(static_cast<float>(x)); }

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Collects element comparisons |got - want| <= atol + rtol * |want| and reports the first few
// mismatches.
class Comparison {
 public:
  Comparison(std::string what, double atol, double rtol) : what_(std::move(what)), atol_(atol), rtol_(rtol) {}

  void check(const std::string& where, double got, double want) {
    ++checked_;
    double err = std::fabs(got - want);
    double tol = atol_ + rtol_ * std::fabs(want);
    if (err <= tol) return;  // false for NaN
    if (bad_ < 8) report_ << "\n  " << where << ": got " << got << ", want " << want << " (|err| " << err << " > tol " << tol << ")";
    ++bad_;
  }
  // Padding that must not be written: it keeps its NaN fill.
  void untouched(const std::string& where, double got) {
    ++checked_;
    if (std::isnan(got)) return;
    if (bad_ < 8) report_ << "\n  " << where << ": padding was written (" << got << ")";
    ++bad_;
  }
  void expectAllClose() const {
    EXPECT_GT(checked_, 0) << what_ << ": nothing compared";
    EXPECT_EQ(bad_, 0) << what_ << ": " << bad_ << " of " << checked_ << " element(s) differ (atol " << atol_
                       << ", rtol " << rtol_ << ")" << report_.str();
  }

 private:
  std::string what_;
  double atol_, rtol_;
  int64_t checked_ = 0, bad_ = 0;
  std::ostringstream report_;
};

std::string idx(std::initializer_list<int64_t> is) {
  std::string s = "[";
  bool first = true;
  for (auto i : is) s += (first ? "" : ", ") + std::to_string(i), first = false;
  return s + "]";
}

// Runs `body` and checks it throws a UserError that says "out of bounds" and is located at line
// `line` of `path`.
template <class F>
void expectOutOfBounds(F&& body, const std::string& path, int line) {
  ASSERT_GT(line, 0) << "the op to blame was not found in " << path;
  try {
    body();
    ADD_FAILURE() << "expected an out-of-bounds UserError, the kernel ran to completion";
  } catch (const tawa::UserError& e) {
    std::string msg = e.what();
    std::string lower = msg;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_TRUE(lower.find("out of bounds") != std::string::npos || lower.find("out-of-bounds") != std::string::npos)
        << "message: " << e.format();
    ASSERT_TRUE(e.loc.known()) << "no location: " << e.format();
    EXPECT_EQ(*e.loc.file, path) << e.format();
    EXPECT_EQ(e.loc.line, line) << e.format();
  }
}

// ---------------------------------------------------------------------------------------------
// The example files as text

TEST(ExampleFiles, ParseVerifyAndRoundTrip) {
  int n = 0;
  for (auto& entry : std::filesystem::directory_iterator(std::string(TAWA_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".tir") continue;
    ++n;
    std::string path = entry.path().string();
    SCOPED_TRACE(path);
    try {
      auto m = tawa::ir::parseFile(path);
      tawa::ir::verify(*m);
      std::string once = tawa::ir::print(*m);
      auto again = tawa::ir::parseModule(once, path);
      tawa::ir::verify(*again);
      EXPECT_EQ(tawa::ir::print(*again), once);
    } catch (const tawa::UserError& e) {
      ADD_FAILURE() << e.format();
    }
  }
  EXPECT_GE(n, 5);
}

// ---------------------------------------------------------------------------------------------
// GEMM: matmul_ptr.tir (pointer arithmetic, 1-D grouped grid) and matmul_desc.tir (descriptors,
// 2-D grid). C[M,N] f16 = A[M,K] f16 @ B[K,N] f16. A and C are row-major; B is row-major or, with
// bColMajor, stored transposed (stride_bk = 1, stride_bn = K).

enum class GemmKind { Ptr, Desc };

struct GemmRun {
  int64_t M, N, K;
  bool bColMajor = false;
};

void runGemm(GemmKind kind, const GemmRun& g) {
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED), M,N,K = " + std::to_string(g.M) + "," +
               std::to_string(g.N) + "," + std::to_string(g.K) + (g.bColMajor ? ", B column-major" : ""));
  std::mt19937 rng(seed);
  Kernel k = kind == GemmKind::Ptr ? loadKernel("matmul_ptr.tir", "matmul_ptr") : loadKernel("matmul_desc.tir", "matmul_desc");
  const int64_t M = g.M, N = g.N, K = g.K;
  std::vector<Buffer> bufs;
  bufs.emplace_back("A", Scalar::F16, std::vector<int64_t>{M, K});
  bufs.emplace_back("B", Scalar::F16, g.bColMajor ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
  bufs.emplace_back("C", Scalar::F16, std::vector<int64_t>{M, N});
  fillRandom(bufs[0], rng);
  fillRandom(bufs[1], rng);
  fillNaN(bufs[2]);
  const int64_t sbk = g.bColMajor ? 1 : N, sbn = g.bColMajor ? K : 1;
  std::vector<Arg> args = {Arg::buf(0),        Arg::buf(1),       Arg::buf(2),         Arg::integer(M),
                           Arg::integer(N),    Arg::integer(K),   Arg::integer(K),     Arg::integer(1),
                           Arg::integer(sbk),  Arg::integer(sbn), Arg::integer(N),     Arg::integer(1)};
  LaunchOptions opt;
  if (kind == GemmKind::Ptr) opt.grid = {cdiv(M, 64) * cdiv(N, 64), 1, 1};
  else opt.grid = {cdiv(M, 64), cdiv(N, 64), 1};
  try {
    tawa::exec::launch(*k.module, *k.func, args, bufs, opt);
  } catch (const tawa::UserError& e) {
    FAIL() << e.format();
  }

  auto A = values(bufs[0]), B = values(bufs[1]);
  Comparison cmp("C", 1e-3 * std::sqrt(static_cast<double>(K)), 1e-2);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p) s += A[i * K + p] * B[p * sbk + j * sbn];
      cmp.check("C" + idx({i, j}), bufs[2].getFloat(i * N + j), s);
    }
  cmp.expectAllClose();
}

TEST(ExampleMatmulPtr, NonMultipleSizes) { runGemm(GemmKind::Ptr, {200, 136, 100}); }
TEST(ExampleMatmulPtr, BlockMultipleSizes) { runGemm(GemmKind::Ptr, {128, 128, 64}); }
// More than GROUP_M = 8 block rows: a full group of 8 and a partial group of 2.
TEST(ExampleMatmulPtr, TwoProgramGroups) { runGemm(GemmKind::Ptr, {600, 136, 40}); }
TEST(ExampleMatmulPtr, ColumnMajorB) { runGemm(GemmKind::Ptr, {200, 136, 100, true}); }
TEST(ExampleMatmulDesc, NonMultipleSizes) { runGemm(GemmKind::Desc, {200, 136, 100}); }
TEST(ExampleMatmulDesc, BlockMultipleSizes) { runGemm(GemmKind::Desc, {128, 128, 64}); }

// A has one row too few: the loads of the last block row are in the M and K masks but past the
// buffer's end.
void gemmShortA(GemmKind kind) {
  const bool ptr = kind == GemmKind::Ptr;
  Kernel k = ptr ? loadKernel("matmul_ptr.tir", "matmul_ptr") : loadKernel("matmul_desc.tir", "matmul_desc");
  const int64_t M = 200, N = 136, K = 100;
  std::mt19937 rng(freshSeed());
  std::vector<Buffer> bufs;
  bufs.emplace_back("A", Scalar::F16, std::vector<int64_t>{M - 1, K});
  bufs.emplace_back("B", Scalar::F16, std::vector<int64_t>{K, N});
  bufs.emplace_back("C", Scalar::F16, std::vector<int64_t>{M, N});
  fillRandom(bufs[0], rng);
  fillRandom(bufs[1], rng);
  std::vector<Arg> args = {Arg::buf(0),     Arg::buf(1),     Arg::buf(2),     Arg::integer(M),
                           Arg::integer(N), Arg::integer(K), Arg::integer(K), Arg::integer(1),
                           Arg::integer(N), Arg::integer(1), Arg::integer(N), Arg::integer(1)};
  LaunchOptions opt;
  opt.grid = ptr ? std::array<int64_t, 3>{cdiv(M, 64) * cdiv(N, 64), 1, 1} : std::array<int64_t, 3>{cdiv(M, 64), cdiv(N, 64), 1};
  int line = lineOf(k.path, ptr ? "%a_blk = tile.load" : "%a_blk = tile.desc_load");
  expectOutOfBounds([&] { tawa::exec::launch(*k.module, *k.func, args, bufs, opt); }, k.path, line);
}

TEST(ExampleMatmulPtr, ShortBufferIsOutOfBounds) { gemmShortA(GemmKind::Ptr); }
TEST(ExampleMatmulDesc, ShortBufferIsOutOfBounds) { gemmShortA(GemmKind::Desc); }

// ---------------------------------------------------------------------------------------------
// Softmax: out[M, n] f32 = softmax of each row of x[M, n] f32. Rows are strided (in_stride and
// out_stride larger than n, and different), so the padding of out must stay untouched.

void runSoftmax(int64_t M, int64_t n, int64_t inStride, int64_t outStride) {
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED), M = " + std::to_string(M) + ", n = " + std::to_string(n));
  std::mt19937 rng(seed);
  Kernel k = loadKernel("softmax.tir", "softmax");
  std::vector<Buffer> bufs;
  bufs.emplace_back("out", Scalar::F32, std::vector<int64_t>{M, outStride});
  bufs.emplace_back("x", Scalar::F32, std::vector<int64_t>{M, inStride});
  fillNaN(bufs[0]);
  fillRandom(bufs[1], rng);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::integer(inStride), Arg::integer(outStride), Arg::integer(n)};
  LaunchOptions opt;
  opt.grid = {M, 1, 1};
  try {
    tawa::exec::launch(*k.module, *k.func, args, bufs, opt);
  } catch (const tawa::UserError& e) {
    FAIL() << e.format();
  }

  auto X = values(bufs[1]);
  Comparison cmp("out", 1e-9, 1e-5);
  for (int64_t r = 0; r < M; ++r) {
    double mx = -INFINITY;
    for (int64_t c = 0; c < n; ++c) mx = std::max(mx, X[r * inStride + c]);
    double sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += std::exp(X[r * inStride + c] - mx);
    for (int64_t c = 0; c < outStride; ++c) {
      double got = bufs[0].getFloat(r * outStride + c);
      if (c < n) cmp.check("out" + idx({r, c}), got, std::exp(X[r * inStride + c] - mx) / sum);
      else cmp.untouched("out" + idx({r, c}), got);
    }
  }
  cmp.expectAllClose();
}

TEST(ExampleSoftmax, MaskedRow) { runSoftmax(37, 100, 107, 103); }
TEST(ExampleSoftmax, FullBlockRow) { runSoftmax(37, 128, 128, 130); }

TEST(ExampleSoftmax, ShortBufferIsOutOfBounds) {
  Kernel k = loadKernel("softmax.tir", "softmax");
  const int64_t M = 37, n = 100;
  std::mt19937 rng(freshSeed());
  std::vector<Buffer> bufs;
  bufs.emplace_back("out", Scalar::F32, std::vector<int64_t>{M, n});
  bufs.emplace_back("x", Scalar::F32, std::vector<int64_t>{M * n - 1});
  fillRandom(bufs[1], rng);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::integer(n), Arg::integer(n), Arg::integer(n)};
  LaunchOptions opt;
  opt.grid = {M, 1, 1};
  expectOutOfBounds([&] { tawa::exec::launch(*k.module, *k.func, args, bufs, opt); }, k.path,
                    lineOf(k.path, "%xv = tile.load"));
}

// ---------------------------------------------------------------------------------------------
// Layer norm: Y[M, N] f16 (row stride `stride`), Mean[M], Rstd[M] f32 from X[M, N] f16 (same row
// stride), W[N], B[N] f32 and eps.

TEST(ExampleLayerNorm, MaskedChunks) {
  const int64_t M = 19, N = 300, stride = 305;
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED)");
  std::mt19937 rng(seed);
  Kernel k = loadKernel("layernorm.tir", "layernorm");
  const double eps = roundToF32(1e-5);
  std::vector<Buffer> bufs;
  bufs.emplace_back("X", Scalar::F16, std::vector<int64_t>{M, stride});
  bufs.emplace_back("Y", Scalar::F16, std::vector<int64_t>{M, stride});
  bufs.emplace_back("W", Scalar::F32, std::vector<int64_t>{N});
  bufs.emplace_back("B", Scalar::F32, std::vector<int64_t>{N});
  bufs.emplace_back("Mean", Scalar::F32, std::vector<int64_t>{M});
  bufs.emplace_back("Rstd", Scalar::F32, std::vector<int64_t>{M});
  fillRandom(bufs[0], rng);
  fillNaN(bufs[1]);
  fillRandom(bufs[2], rng);
  fillRandom(bufs[3], rng);
  fillNaN(bufs[4]);
  fillNaN(bufs[5]);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3), Arg::buf(4), Arg::buf(5),
                           Arg::integer(stride), Arg::integer(N), Arg::real(eps)};
  LaunchOptions opt;
  opt.grid = {M, 1, 1};
  try {
    tawa::exec::launch(*k.module, *k.func, args, bufs, opt);
  } catch (const tawa::UserError& e) {
    FAIL() << e.format();
  }

  auto X = values(bufs[0]), W = values(bufs[2]), Bv = values(bufs[3]);
  Comparison cy("Y", 1e-2, 1e-2), cmean("Mean", 1e-6, 1e-5), crstd("Rstd", 0, 1e-5);
  for (int64_t r = 0; r < M; ++r) {
    const double* x = &X[r * stride];
    double mean = 0;
    for (int64_t c = 0; c < N; ++c) mean += x[c];
    mean /= N;
    double var = 0;
    for (int64_t c = 0; c < N; ++c) var += (x[c] - mean) * (x[c] - mean);
    var /= N;
    double rstd = 1.0 / std::sqrt(var + eps);
    cmean.check("Mean" + idx({r}), bufs[4].getFloat(r), mean);
    crstd.check("Rstd" + idx({r}), bufs[5].getFloat(r), rstd);
    for (int64_t c = 0; c < stride; ++c) {
      double got = bufs[1].getFloat(r * stride + c);
      if (c < N) cy.check("Y" + idx({r, c}), got, (x[c] - mean) * rstd * W[c] + Bv[c]);
      else cy.untouched("Y" + idx({r, c}), got);
    }
  }
  cy.expectAllClose();
  cmean.expectAllClose();
  crstd.expectAllClose();
}

TEST(ExampleLayerNorm, ShortBufferIsOutOfBounds) {
  Kernel k = loadKernel("layernorm.tir", "layernorm");
  const int64_t M = 19, N = 300;
  std::mt19937 rng(freshSeed());
  std::vector<Buffer> bufs;
  bufs.emplace_back("X", Scalar::F16, std::vector<int64_t>{M * N - 1});
  bufs.emplace_back("Y", Scalar::F16, std::vector<int64_t>{M, N});
  bufs.emplace_back("W", Scalar::F32, std::vector<int64_t>{N});
  bufs.emplace_back("B", Scalar::F32, std::vector<int64_t>{N});
  bufs.emplace_back("Mean", Scalar::F32, std::vector<int64_t>{M});
  bufs.emplace_back("Rstd", Scalar::F32, std::vector<int64_t>{M});
  for (int b : {0, 2, 3}) fillRandom(bufs[b], rng);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3), Arg::buf(4), Arg::buf(5),
                           Arg::integer(N), Arg::integer(N), Arg::real(roundToF32(1e-5))};
  LaunchOptions opt;
  opt.grid = {M, 1, 1};
  // The first pass reads X first: its load is the first access past the end.
  expectOutOfBounds([&] { tawa::exec::launch(*k.module, *k.func, args, bufs, opt); }, k.path,
                    lineOf(k.path, "%x_h1 = tile.load"));
}

// ---------------------------------------------------------------------------------------------
// Attention: O = softmax(Q K^T * sm_scale [causal]) V over [ZH, n_ctx, 64] f16 tensors.

void runAttention(int64_t ZH, int64_t nCtx, bool causal) {
  const int64_t D = 64;
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED), Z*H = " + std::to_string(ZH) +
               ", n_ctx = " + std::to_string(nCtx) + (causal ? ", causal" : ", not causal"));
  std::mt19937 rng(seed);
  Kernel k = loadKernel("attention.tir", "attention");
  // A scale between 0.1 and 1 (exact in f32): scores from about +-2 to +-20, so the softmax ranges
  // from nearly flat to sharply peaked.
  const double smScale = roundToF32(std::uniform_real_distribution<double>(0.1, 1.0)(rng));
  std::vector<Buffer> bufs;
  for (const char* name : {"Q", "K", "V", "O"}) bufs.emplace_back(name, Scalar::F16, std::vector<int64_t>{ZH, nCtx, D});
  for (int b = 0; b < 3; ++b) fillRandom(bufs[b], rng);
  fillNaN(bufs[3]);
  std::vector<Arg> args = {Arg::buf(0),         Arg::buf(1),          Arg::buf(2),
                           Arg::buf(3),         Arg::real(smScale),   Arg::integer(nCtx),
                           Arg::integer(causal ? 1 : 0)};
  LaunchOptions opt;
  opt.grid = {cdiv(nCtx, 64), ZH, 1};
  try {
    tawa::exec::launch(*k.module, *k.func, args, bufs, opt);
  } catch (const tawa::UserError& e) {
    FAIL() << e.format();
  }

  auto Q = values(bufs[0]), Kt = values(bufs[1]), V = values(bufs[2]);
  Comparison cmp("O", 1e-2, 1e-2);
  std::vector<double> s(static_cast<size_t>(nCtx));
  for (int64_t h = 0; h < ZH; ++h) {
    const double* q = &Q[h * nCtx * D];
    const double* kk = &Kt[h * nCtx * D];
    const double* v = &V[h * nCtx * D];
    for (int64_t m = 0; m < nCtx; ++m) {
      const int64_t nEnd = causal ? m + 1 : nCtx;
      double mx = -INFINITY;
      for (int64_t n = 0; n < nEnd; ++n) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += q[m * D + d] * kk[n * D + d];
        s[n] = dot * smScale;
        mx = std::max(mx, s[n]);
      }
      double sum = 0;
      for (int64_t n = 0; n < nEnd; ++n) sum += (s[n] = std::exp(s[n] - mx));
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t n = 0; n < nEnd; ++n) o += s[n] * v[n * D + d];
        cmp.check("O" + idx({h, m, d}), bufs[3].getFloat((h * nCtx + m) * D + d), o / sum);
      }
    }
  }
  cmp.expectAllClose();
}

TEST(ExampleAttention, NonCausal) { runAttention(3, 192, false); }
TEST(ExampleAttention, Causal) { runAttention(3, 192, true); }
TEST(ExampleAttention, NonCausalPartialBlocks) { runAttention(3, 100, false); }
TEST(ExampleAttention, CausalPartialBlocks) { runAttention(3, 100, true); }

TEST(ExampleAttention, ShortBufferIsOutOfBounds) {
  Kernel k = loadKernel("attention.tir", "attention");
  const int64_t ZH = 3, nCtx = 192, D = 64;
  std::mt19937 rng(freshSeed());
  std::vector<Buffer> bufs;
  bufs.emplace_back("Q", Scalar::F16, std::vector<int64_t>{ZH * nCtx * D - 1});
  for (const char* name : {"K", "V", "O"}) bufs.emplace_back(name, Scalar::F16, std::vector<int64_t>{ZH, nCtx, D});
  for (int b = 0; b < 3; ++b) fillRandom(bufs[b], rng);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3),
                           Arg::real(0.125), Arg::integer(nCtx), Arg::integer(0)};
  LaunchOptions opt;
  opt.grid = {cdiv(nCtx, 64), ZH, 1};
  expectOutOfBounds([&] { tawa::exec::launch(*k.module, *k.func, args, bufs, opt); }, k.path,
                    lineOf(k.path, "%q_blk = tile.load"));
}

}  // namespace
