// The library API (include/tawa/tawa.h): kernels loaded from Triton source, run on the caller's own
// arrays through the executor and the emulator against references computed here in double, each
// stage's artifact, and located errors.
#include "tawa/tawa.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "TempDir.h"
#include "ir/Numerics.h"

namespace {

const std::string kSrc = TAWA_SOURCE_DIR;

std::mt19937_64& rng() {
  static std::mt19937_64 g(std::random_device{}());
  return g;
}
double half(uint16_t bits) { return tawa::ir::decodeFloat(tawa::ir::Scalar::F16, bits); }
std::vector<float> randomFloats(size_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) do x = d(rng()); while (x == 0.f);
  return v;
}

TEST(Api, VectorAddRunsOnTheCallersArraysThroughExecAndEmu) {
  for (auto backend : {tawa::Backend::Exec, tawa::Backend::Emu}) {
    const int n = 1000 + static_cast<int>(rng()() % 3000);
    auto x = randomFloats(n), y = randomFloats(n);
    std::vector<float> out(n, 7.f);
    auto k = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                                "x_ptr:*fp32, y_ptr:*fp32, out_ptr:*fp32, n_elements:i32, BLOCK_SIZE=256");
    ASSERT_EQ(k.params().size(), 4u);
    EXPECT_EQ(k.params()[0].name, "x_ptr");
    EXPECT_TRUE(k.params()[0].pointer);
    EXPECT_EQ(k.params()[3].dtype, "i32");
    EXPECT_TRUE(k.simt());
    k.run(backend, {tawa::Array{x.data(), "fp32", n}, tawa::Array{y.data(), "fp32", n}, tawa::Array{out.data(), "fp32", n}, int64_t{n}},
          {(n + 255) / 256, 1, 1});
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(static_cast<double>(x[i]) + y[i])) << "element " << i;
  }
}

TEST(Api, MatmulStagesAndAStridedRunAgainstADoubleReference) {
  // Rows of A and B^T start 16-byte aligned (K and N multiples of 8), as TMA needs; M is any size.
  const int M = 64 + static_cast<int>(rng()() % 64), N = 64 + 8 * static_cast<int>(rng()() % 8), K = 32 + 8 * static_cast<int>(rng()() % 8);
  auto k = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel",
                              "a_ptr:*fp16, b_ptr:*fp16, c_ptr:*fp16, M:i32, N:i32, K:i32, stride_am:i32, stride_ak:i32, "
                              "stride_bk:i32, stride_bn:i32, stride_cm:i32, stride_cn:i32, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4");
  EXPECT_FALSE(k.simt());
  EXPECT_NE(k.ir("tile").find("tile.dot"), std::string::npos);
  EXPECT_NE(k.ir("ws").find("wg.region"), std::string::npos);
  EXPECT_NE(k.ir("nv").find("mbarrier"), std::string::npos);
  EXPECT_NE(k.cuda().find("__global__"), std::string::npos);
  EXPECT_NE(k.explanation().find("consumer"), std::string::npos) << k.explanation();
  // The executor gets B transposed: a [N, K] array read through its strides (as b.T would be in
  // Triton); the emulator's TMA path needs unit inner strides, so it gets B as a [K, N] array.
  std::vector<uint16_t> a(static_cast<size_t>(M) * K), bt(static_cast<size_t>(N) * K), b(bt.size());
  auto af = randomFloats(a.size()), bf = randomFloats(bt.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, af[i]));
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, bf[i]));
  for (int j = 0; j < N; ++j)
    for (int p = 0; p < K; ++p) b[static_cast<size_t>(p) * N + j] = bt[static_cast<size_t>(j) * K + p];
  for (auto backend : {tawa::Backend::Exec, tawa::Backend::Emu}) {
    std::vector<uint16_t> c(static_cast<size_t>(M) * N, 0x3C00);
    const bool transposed = backend == tawa::Backend::Exec;
    k.run(backend,
          {tawa::Array{a.data(), "fp16", M * K}, tawa::Array{transposed ? bt.data() : b.data(), "fp16", N * K},
           tawa::Array{c.data(), "fp16", M * N}, int64_t{M}, int64_t{N}, int64_t{K}, int64_t{K}, int64_t{1},
           int64_t{transposed ? 1 : N}, int64_t{transposed ? K : 1}, int64_t{N}, int64_t{1}},
          {((M + 63) / 64) * ((N + 63) / 64), 1, 1});
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double ref = 0;
        for (int p = 0; p < K; ++p) ref += half(a[i * K + p]) * half(bt[j * K + p]);
        const double got = half(c[i * N + j]);
        ASSERT_NEAR(got, ref, 2e-3 * std::sqrt(K) + 1e-3 * std::abs(ref)) << "C[" << i << "," << j << "] backend " << transposed;
      }
  }
}

TEST(Api, FromIRGivesTheSameKernel) {
  auto k = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                              "x_ptr:*fp32, y_ptr:*fp32, out_ptr:*fp32, n_elements:i32, BLOCK_SIZE=128");
  auto again = tawa::Kernel::fromIR(k.ir("tile"), "BLOCK_SIZE=128");
  EXPECT_EQ(again.name(), "add_kernel");
  EXPECT_EQ(again.ir("tile"), k.ir("tile"));
  EXPECT_EQ(again.cuda(), k.cuda());
}

TEST(Api, ErrorsAreLocated) {
  // A kernel that reads past its array: located at the load in the .py file.
  const auto dir = tawa::test::tempDir();
  const std::string path = (dir / "oob.py").string();
  std::ofstream(path) << "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, y):\n"
                         "    i = tl.arange(0, 64)\n    tl.store(y + i, tl.load(x + i))\n";
  auto k = tawa::Kernel::load(path, "k", "x:*fp32, y:*fp32");
  std::vector<float> x(32, 1.f), y(32, 5.f);
  try {
    k.run(tawa::Backend::Exec, {tawa::Array{x.data(), "fp32", 32}, tawa::Array{y.data(), "fp32", 32}}, {1, 1, 1});
    FAIL() << "no error";
  } catch (const tawa::Error& e) {
    EXPECT_EQ(e.diagnostic().file, path);
    EXPECT_EQ(e.diagnostic().line, 7);
    EXPECT_GT(e.diagnostic().col, 0);
  }
  EXPECT_EQ(y[0], 5.f) << "a failed run must leave the caller's arrays alone";
  // Wrong arguments: located at the kernel, naming the parameter.
  try {
    k.run(tawa::Backend::Exec, {tawa::Array{x.data(), "fp16", 32}, int64_t{3}}, {1, 1, 1});
    FAIL() << "no error";
  } catch (const tawa::Error& e) {
    EXPECT_EQ(e.diagnostic().file, path);
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  // A malformed kernel: the front end's location.
  const std::string bad = (dir / "bad.py").string();
  std::ofstream(bad) << "import triton\n\n@triton.jit\ndef k(x):\n    y = x +\n";
  try {
    tawa::Kernel::load(bad, "k", "x:*fp32");
    FAIL() << "no error";
  } catch (const tawa::Error& e) {
    EXPECT_EQ(e.diagnostic().file, bad);
    EXPECT_EQ(e.diagnostic().line, 5);
  }
  EXPECT_THROW(k.ir("llvm"), tawa::Error);
}

TEST(Api, SignatureReadsTheParametersAsWritten) {
  auto sig = tawa::signature(kSrc + "/examples/vector_add.py", "add_kernel");
  ASSERT_EQ(sig.size(), 5u);
  EXPECT_EQ(sig[4].name, "BLOCK_SIZE");
  EXPECT_TRUE(sig[4].constexpr_);
  EXPECT_FALSE(sig[0].constexpr_);
  EXPECT_THROW(tawa::signature(kSrc + "/examples/vector_add.py", "nope"), tawa::Error);
  EXPECT_EQ(tawa::kernels(kSrc + "/examples/vector_add.py"), std::vector<std::string>{"add_kernel"});
}

TEST(Api, TawaSpellingsOfTritonsModules) {
  const auto dir = tawa::test::tempDir();
  const std::string path = (dir / "own.py").string();
  std::ofstream(path) << "import tawa\nimport tawa.language as tl\n\n@tawa.jit\ndef scale(x, y, s, B: tl.constexpr):\n"
                         "    i = tl.program_id(0) * B + tl.arange(0, B)\n    tl.store(y + i, tl.load(x + i) * s)\n";
  auto k = tawa::Kernel::load(path, "scale", "x:*fp32, y:*fp32, s:fp32, B=32");
  auto x = randomFloats(64);
  std::vector<float> y(64);
  k.run(tawa::Backend::Exec, {tawa::Array{x.data(), "fp32", 64}, tawa::Array{y.data(), "fp32", 64}, 1.5}, {2, 1, 1});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], static_cast<float>(x[i] * 1.5));
}

}  // namespace

namespace {

TEST(Api, CheckRunsThePipelineUnderManySeedsAndCatchesABrokenLowering) {
  const std::string spec = "a_ptr:*fp16, b_ptr:*fp16, c_ptr:*fp16, M:i32, N:i32, K:i32, stride_am:i32, stride_ak:i32, "
                           "stride_bk:i32, stride_bn:i32, stride_cm:i32, stride_cn:i32, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=1";
  const int M = 64, N = 64, K = 128;
  std::vector<uint16_t> a(M * K), b(K * N), c(M * N, 0x3C00);
  auto af = randomFloats(a.size()), bf = randomFloats(b.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, af[i]));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, bf[i]));
  const std::vector<tawa::Arg> args = {tawa::Array{a.data(), "fp16", M * K}, tawa::Array{b.data(), "fp16", K * N},
                                       tawa::Array{c.data(), "fp16", M * N}, int64_t{M}, int64_t{N}, int64_t{K}, int64_t{K},
                                       int64_t{1}, int64_t{N}, int64_t{1}, int64_t{N}, int64_t{1}};
  auto k = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel", spec);
  for (auto backend : {tawa::Backend::Exec, tawa::Backend::Emu}) {
    auto rep = k.check(backend, args, {1, 1, 1}, 3);
    EXPECT_EQ(rep.seeds, 3);
    EXPECT_NE(rep.summary.find("agree"), std::string::npos) << rep.summary;
    // What ran: D 2 by default, P 1, one consumer; the emulator's comparison, buffer by buffer.
    EXPECT_EQ(rep.pipeline.depth, 2);
    EXPECT_EQ(rep.pipeline.mmaDepth, 1);
    EXPECT_EQ(rep.pipeline.consumers, 1);
    EXPECT_FALSE(rep.pipeline.simt);
    EXPECT_EQ(rep.comparisons.empty(), backend == tawa::Backend::Exec) << rep.comparisons;
    if (backend == tawa::Backend::Emu) {
      EXPECT_NE(rep.comparisons.find("check c_ptr: matches the CPU executor"), std::string::npos);
    }
  }
  for (uint16_t v : c) ASSERT_EQ(v, 0x3C00) << "check must not write the caller's arrays";
  tawa::Options deeper;
  deeper.depth = 3, deeper.mmaDepth = 0;
  const tawa::Pipeline p = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel", spec, deeper).pipeline();
  EXPECT_EQ(p.depth, 3);
  EXPECT_EQ(p.mmaDepth, 0);
  EXPECT_TRUE(tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel", "x_ptr:*fp32, y_ptr:*fp32, out_ptr:*fp32, n_elements:i32, "
                                 "BLOCK_SIZE=256").pipeline().simt);
  // An emitter fault goes to the emitter only (lit emu/release_order shows the emulator stopping it in
  // attention): the passes never see it, so the lowered IR checks clean. A GEMM's releases are placed
  // by the pipeline pass, so release-before-wait changes nothing in its CUDA kernel: an error, not a
  // check that would prove nothing.
  tawa::Options emitterFault;
  emitterFault.inject = "release-before-wait";
  auto racy = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel", spec, emitterFault);
  EXPECT_NO_THROW(racy.check(tawa::Backend::Exec, args, {1, 1, 1}, 2));
  try {
    racy.check(tawa::Backend::Emu, args, {1, 1, 1}, 2);
    FAIL() << "a fault that changes nothing was checked";
  } catch (const tawa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("changes nothing in the CUDA kernel emitted for @matmul_kernel"), std::string::npos) << e.what();
  }
  tawa::Options broken;
  broken.inject = "skip-release";
  auto bad = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel", spec, broken);
  try {
    bad.check(tawa::Backend::Exec, args, {1, 1, 1}, 8);
    FAIL() << "the broken lowering passed the check";
  } catch (const tawa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
    EXPECT_NE(e.diagnostic().file.find("matmul.py"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

TEST(Api, ProfileRunsTheKernelAndSummarizesEachRole) {
  const int n = 64 * 4;
  std::vector<uint16_t> a(n * 64), b(64 * 64), c(n * 64, 0);
  auto af = randomFloats(a.size()), bf = randomFloats(b.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, af[i]));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint16_t>(tawa::ir::encodeFloat(tawa::ir::Scalar::F16, bf[i]));
  auto k = tawa::Kernel::load(kSrc + "/examples/matmul.py", "matmul_kernel",
                              "a_ptr:*fp16, b_ptr:*fp16, c_ptr:*fp16, M:i32, N:i32, K:i32, stride_am:i32, stride_ak:i32, "
                              "stride_bk:i32, stride_bn:i32, stride_cm:i32, stride_cn:i32, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=1");
  auto rep = k.profile(tawa::Backend::Exec,
                       {tawa::Array{a.data(), "fp16", n * 64}, tawa::Array{b.data(), "fp16", 64 * 64}, tawa::Array{c.data(), "fp16", n * 64},
                        int64_t{n}, int64_t{64}, int64_t{64}, int64_t{64}, int64_t{1}, int64_t{64}, int64_t{1}, int64_t{64}, int64_t{1}},
                       {4, 1, 1});
  EXPECT_NE(rep.summary.find("modelled"), std::string::npos) << rep.summary;
  EXPECT_NE(rep.summary.find("producer"), std::string::npos) << rep.summary;
  EXPECT_NE(rep.json.find("\"advice\""), std::string::npos) << rep.json;
  EXPECT_NE(rep.trace.find("traceEvents"), std::string::npos);
  // The profiled launch computed C like any other.
  for (int i = 0; i < n; i += 37)
    for (int j = 0; j < 64; j += 13) {
      double ref = 0;
      for (int p = 0; p < 64; ++p) ref += half(a[i * 64 + p]) * half(b[p * 64 + j]);
      ASSERT_NEAR(half(c[i * 64 + j]), ref, 2e-2) << i << "," << j;
    }
}

}  // namespace

namespace {

TEST(Api, LaterStagesComeFromTheKernelAsLoadedEvenAfterTheFileChanges) {
  const auto dir = tawa::test::tempDir();
  const std::string path = (dir / "edited.py").string();
  auto write = [&](const char* factor) {
    std::ofstream(path) << "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, y, B: tl.constexpr):\n"
                           "    i = tl.program_id(0) * B + tl.arange(0, B)\n    tl.store(y + i, tl.load(x + i) * "
                        << factor << ")\n";
  };
  write("2.0");
  auto k = tawa::Kernel::load(path, "k", "x:*fp32, y:*fp32, B=64");
  write("3.0");  // edited after the load: the emulator must still run the kernel that was loaded
  auto x = randomFloats(64);
  std::vector<float> y(64);
  k.run(tawa::Backend::Emu, {tawa::Array{x.data(), "fp32", 64}, tawa::Array{y.data(), "fp32", 64}}, {1, 1, 1});
  for (int i = 0; i < 64; ++i) ASSERT_EQ(y[i], x[i] * 2.0f) << i;
}

}  // namespace

namespace {

TEST(Api, InputsAreTawaRunsSeededBuffersAndRunOnThem) {
  const std::string spec = "x_ptr:*fp32[1000], y_ptr:*fp32[1000], out_ptr:*fp32[1000], n_elements:i32=1000, BLOCK_SIZE=256";
  auto k = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel", spec);
  const uint64_t seed = rng()();
  tawa::Inputs a = k.inputs("cdiv(n_elements, BLOCK_SIZE)", seed), b = k.inputs("cdiv(n_elements, BLOCK_SIZE)", seed);
  ASSERT_EQ(a.buffers.size(), 3u);
  EXPECT_EQ(a.grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(a.buffers[0].data, b.buffers[0].data) << "the same seed gives the same values";
  const auto* x = reinterpret_cast<const float*>(a.buffers[0].data.data());
  const auto* y = reinterpret_cast<const float*>(a.buffers[1].data.data());
  for (int i = 0; i < 1000; ++i) ASSERT_NE(x[i], 0.f);
  k.run(tawa::Backend::Exec, a.args, a.grid);
  const auto* out = reinterpret_cast<const float*>(a.buffers[2].data.data());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], x[i] + y[i]);
  // A signature without shapes or values cannot make inputs: located at the entry.
  auto sig = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                                "x_ptr:*fp32, y_ptr:*fp32[8], out_ptr:*fp32[8], n_elements:i32, BLOCK_SIZE=8");
  try {
    (void)sig.inputs("1", 1);
    FAIL() << "no error";
  } catch (const tawa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 'x_ptr' has no shape"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostic().col, 1);
  }
  auto noValue = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                                    "x_ptr:*fp32[8], y_ptr:*fp32[8], out_ptr:*fp32[8], n_elements:i32, BLOCK_SIZE=8");
  EXPECT_THROW((void)noValue.inputs("1", 1), tawa::Error);
}

}  // namespace

TEST(Api, ArraysOfPointersNameTheCallersArrays) {
  // address_arithmetic reads ptrs[i] (the address of array i), the element after it (an address
  // computed as an integer) and whether the array is 16-byte aligned. The pointees are copied in and
  // back like arguments; the caller's array of addresses is never written.
  auto k = tawa::Kernel::load(kSrc + "/tests/lit/frontend/Inputs/pointer_arrays.py", "address_arithmetic",
                              "ptrs:*i64, out:*fp32, BLOCK=4");
  for (auto backend : {tawa::Backend::Exec, tawa::Backend::Emu}) {
    std::vector<std::vector<float>> xs;
    for (int i = 0; i < 3; ++i) xs.push_back(randomFloats(8 + 4 * static_cast<size_t>(rng()() % 5)));
    std::vector<int64_t> ptrs;
    tawa::Array p{ptrs.data(), "i64", 3};
    for (auto& x : xs) {
      ptrs.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(x.data())));
      p.pointees.push_back(tawa::Array{x.data(), "fp32", static_cast<int64_t>(x.size())});
    }
    p.data = ptrs.data();
    const std::vector<int64_t> before = ptrs;
    std::vector<float> out(15, 7.f);
    k.run(backend, {p, tawa::Array{out.data(), "fp32", 15}}, {3, 1, 1});
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) EXPECT_EQ(out[5 * i + j], xs[i][1 + j]) << "array " << i;
      EXPECT_EQ(out[5 * i + 4], 1.f) << "array " << i << " is 16-byte aligned on the backend";
    }
    EXPECT_EQ(ptrs, before);
    // The emulator's check compares its run with the executor's on the same bytes (the arrays of
    // pointers hold the executor's addresses in both), and leaves the caller's addresses alone.
    if (backend == tawa::Backend::Emu) {
      const tawa::CheckReport rep = k.check(backend, {p, tawa::Array{out.data(), "fp32", 15}}, {3, 1, 1}, 2);
      EXPECT_EQ(rep.seeds, 2);
      EXPECT_EQ(ptrs, before);
    }
    // As many pointees as elements; a pointee of a dtype tawa does not know.
    tawa::Array short1 = p;
    short1.pointees.pop_back();
    try {
      k.run(backend, {short1, tawa::Array{out.data(), "fp32", 15}}, {3, 1, 1});
      ADD_FAILURE() << "no error for too few pointees";
    } catch (const tawa::Error& e) {
      EXPECT_NE(std::string(e.what()).find("holds 3 addresses but names 2 arrays they point to"), std::string::npos) << e.what();
    }
  }
  // Pointees given for an array that is not of 64-bit integers: a located error.
  auto add = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                                "x_ptr:*fp32, y_ptr:*fp32, out_ptr:*fp32, n_elements:i32, BLOCK_SIZE=256");
  std::vector<float> x(4, 1.f), y(4, 2.f), out(4, 0.f);
  tawa::Array px{x.data(), "fp32", 4};
  px.pointees.assign(4, tawa::Array{y.data(), "fp32", 4});
  try {
    add.run(tawa::Backend::Exec, {px, tawa::Array{y.data(), "fp32", 4}, tawa::Array{out.data(), "fp32", 4}, int64_t{4}}, {1, 1, 1});
    ADD_FAILURE() << "no error for pointees of an f32 array";
  } catch (const tawa::Error& e) {
    EXPECT_GT(e.diagnostic().line, 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("names arrays it points to, so it must hold 64-bit integers, not f32"), std::string::npos) << e.what();
  }
}

// run() on the emulator with check: the kernel as written runs on the executor beside it, and each
// array's comparison is a line; a profiled kernel's records become a trace file and a note.
TEST(Api, EmulatorRunChecksAgainstTheExecutorAndWritesItsProfile) {
  const std::string spec = "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=128, N:i32=192, K:i32=96, stride_am:i32=96, stride_ak:i32=1, "
                           "stride_bk:i32=192, stride_bn:i32=1, stride_cm:i32=192, stride_cn:i32=1";
  tawa::Options profiled;
  profiled.profile = true;
  for (bool profile : {false, true}) {
    auto k = tawa::Kernel::load(kSrc + "/examples/matmul_desc.tir", "", spec, profile ? profiled : tawa::Options{});
    tawa::Inputs in = k.inputs("cdiv(M, 64), cdiv(N, 64)", rng()());
    std::vector<uint16_t> before(in.buffers[2].data.size() / 2);
    std::memcpy(before.data(), in.buffers[2].data.data(), in.buffers[2].data.size());
    tawa::RunOptions ro;
    ro.check = true;
    ro.profileTrace = (tawa::test::tempDir() / "emu_run.trace.json").string();
    const tawa::RunStats st = k.run(tawa::Backend::Emu, in.args, in.grid, ro);
    EXPECT_NE(st.comparisons.find("check c: matches the CPU executor"), std::string::npos) << st.comparisons;
    EXPECT_GT(st.tmaOps, 0u);
    EXPECT_GT(st.mmaOps, 0u);
    EXPECT_EQ(st.blocks, 2 * 3);
    EXPECT_NE(std::memcmp(before.data(), in.buffers[2].data.data(), in.buffers[2].data.size()), 0) << "the result is written back";
    EXPECT_EQ(st.notes.find("profile (modelled clock): ") == 0, profile) << st.notes;
    const tawa::Pipeline p = k.pipeline(true);
    EXPECT_EQ(p.threads, 256);
    EXPECT_GT(p.smemBytes, 0);
    EXPECT_FALSE(p.persistent);
  }
}

// The GPU backend's errors that come before the driver is asked anything (the launch itself is
// tested over a recording driver in python/tests/test_cuda_launch.py).
TEST(Api, CudaBackendTakesDeviceArraysOnly) {
  auto k = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                              "x_ptr:*fp32, y_ptr:*fp32, out_ptr:*fp32, n_elements:i32, BLOCK_SIZE=256");
  std::vector<float> x = randomFloats(64);
  const tawa::Array a{x.data(), "fp32", 64};
  const std::vector<tawa::Arg> args{a, a, a, int64_t{64}};
  auto expectError = [](auto&& call, const std::string& message) {
    try {
      call();
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const tawa::Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expectError([&] { k.check(tawa::Backend::Cuda, args, {1, 1, 1}); }, "check runs the pipeline on the CPU");
  expectError([&] { k.profile(tawa::Backend::Cuda, args, {1, 1, 1}); }, "has no warp groups to profile");
  tawa::Array withPointees = a;
  withPointees.pointees = std::vector<tawa::Array>(64, a);
  expectError([&] { k.run(tawa::Backend::Cuda, {withPointees, a, a, int64_t{64}}, {1, 1, 1}); }, "so it must hold 64-bit integers, not f32");
  withPointees.pointees.pop_back();
  expectError([&] { k.run(tawa::Backend::Cuda, {withPointees, a, a, int64_t{64}}, {1, 1, 1}); }, "holds 64 addresses but names 63 arrays");
  expectError([&] { k.bench(args, {1, 1, 1}, 0, 0); }, "bench needs at least one timed launch");
  expectError([&] { k.run(tawa::Backend::Cuda, {tawa::Array{x.data(), "fp16", 64}, a, a, int64_t{64}}, {1, 1, 1}); },
              "is fp16 but the kernel was specialized for f32");
  expectError([&] { k.run(tawa::Backend::Cuda, {a, a, a}, {1, 1, 1}); }, "takes 4 argument(s), got 3");
  expectError([&] { k.run(tawa::Backend::Cuda, {a, a, a, 1.5}, {1, 1, 1}); }, "needs an integer");
}
