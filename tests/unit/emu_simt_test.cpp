// The SIMT path of the CUDA backend (kernels without a warp-specialized form): the example
// softmax, layer-norm and vector-add kernels, Triton and tile IR, emitted by driver::emitForTarget,
// run on the CPU emulator on fresh random data and compared with naive double-precision references
// (not with the executor); sizes that need masks, loops over chunks, several entries per thread,
// tiles smaller than the block, and fewer programs than rows. Each also compiles for sm_90a
// without spills or local memory, its reductions as warp shuffles.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/SimtEmitter.h"
#include "driver/Target.h"
#include "backends/emu/Emulator.h"
#include "driver/Launch.h"
#include "driver/Spec.h"

using namespace tawa;

namespace {

std::string example(const std::string& f) { return std::string(TAWA_SOURCE_DIR) + "/examples/" + f; }

uint64_t freshSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

struct SimtRun {
  cuda::EmitResult er;
  driver::Bound input;               // the buffers before the launch
  std::vector<exec::Buffer> output;  // after it, on the emulator
};

SimtRun run(const std::string& file, const std::string& kernel, const std::string& spec, const std::string& grid, uint64_t seed) {
  SimtRun r;
  driver::Spec s = driver::parseSpec(spec);
  driver::LoadedKernel lk;
  bool simt = false;
  r.er = driver::emitForTarget(example(file), kernel, s, {}, {}, lk, &simt);
  EXPECT_TRUE(simt) << file << " took the warp-specialized path";
  r.input = driver::bind(*lk.kernel, s, grid, seed);
  r.output = r.input.buffers;
  emu::launch(r.er, r.input.args, r.output, r.input.grid);
  return r;
}

double in(const SimtRun& r, size_t buf, int64_t i) { return r.input.buffers[buf].getFloat(i); }
double out(const SimtRun& r, size_t buf, int64_t i) { return r.output[buf].getFloat(i); }

// Every element of buffer `buf` within rel * |want| + abs of the reference.
void expectClose(const SimtRun& r, size_t buf, const std::vector<double>& want, double rel, double abs) {
  ASSERT_EQ(static_cast<int64_t>(want.size()), r.output[buf].numel());
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double got = out(r, buf, static_cast<int64_t>(i));
    if (!(std::abs(got - want[i]) <= rel * std::abs(want[i]) + abs) && ++bad <= 5)
      ADD_FAILURE() << r.output[buf].name << "[" << i << "] = " << got << ", want " << want[i];
  }
  EXPECT_EQ(bad, 0);
}

// Row softmax of an R x C f32 matrix (row stride C), in double.
std::vector<double> softmaxRef(const SimtRun& r, size_t x, int64_t R, int64_t C) {
  std::vector<double> want(static_cast<size_t>(R * C));
  for (int64_t i = 0; i < R; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < C; ++j) mx = std::max(mx, in(r, x, i * C + j));
    for (int64_t j = 0; j < C; ++j) sum += std::exp(in(r, x, i * C + j) - mx);
    for (int64_t j = 0; j < C; ++j) want[static_cast<size_t>(i * C + j)] = std::exp(in(r, x, i * C + j) - mx) / sum;
  }
  return want;
}

// Layer norm of the R x C matrix in buffer 0 (row stride C) with weights in buffer 2 and biases in
// buffer 3, in double, two passes: y = (x - mean) * rstd * w + b, rstd = 1 / sqrt(var + eps). Checks
// y (buffer 1, within yRel * |want| + yAbs), mean (buffer 4) and rstd (buffer 5).
void expectLayerNorm(const SimtRun& r, int64_t R, int64_t C, double eps, double yRel, double yAbs) {
  std::vector<double> y(static_cast<size_t>(R * C)), mean(static_cast<size_t>(R)), rstd(static_cast<size_t>(R));
  for (int64_t i = 0; i < R; ++i) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < C; ++j) m += in(r, 0, i * C + j);
    m /= static_cast<double>(C);
    for (int64_t j = 0; j < C; ++j) v += (in(r, 0, i * C + j) - m) * (in(r, 0, i * C + j) - m);
    v /= static_cast<double>(C);
    double rs = 1 / std::sqrt(v + eps);
    mean[static_cast<size_t>(i)] = m;
    rstd[static_cast<size_t>(i)] = rs;
    for (int64_t j = 0; j < C; ++j) y[static_cast<size_t>(i * C + j)] = (in(r, 0, i * C + j) - m) * rs * in(r, 2, j) + in(r, 3, j);
  }
  expectClose(r, 1, y, yRel, yAbs);
  expectClose(r, 4, mean, 1e-5, 1e-6);
  expectClose(r, 5, rstd, 1e-4, 1e-6);
}

}  // namespace

// tile IR, one program per row, a 128-wide tile with 100 valid columns.
TEST(EmuSimt, SoftmaxTir) {
  uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto r = run("softmax.tir", "softmax", "out:*fp32[37,100], x:*fp32[37,100], in_stride:i32=100, out_stride:i32=100, n_cols:i32=100",
               "37", seed);
  expectClose(r, 0, softmaxRef(r, 1, 37, 100), 1e-5, 1e-7);
}

// The Triton kernel: 8 programs walk 37 rows; BLOCK_SIZE 256 puts two entries in each thread.
TEST(EmuSimt, SoftmaxTritonPersistentRows) {
  uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto r = run("softmax.py", "softmax_kernel",
               "out_ptr:*fp32[R,C], in_ptr:*fp32[R,C], in_row_stride:i32=200, out_row_stride:i32=200, n_rows:i32=37, "
               "n_cols:i32=200, R=37, C=200, BLOCK_SIZE=256, NUM_STAGES=2",
               "8", seed);
  expectClose(r, 0, softmaxRef(r, 1, 37, 200), 1e-5, 1e-7);
}

// The Triton layer norm: chunks of 128 (three over 300 columns) and of 64 (half the block holds no
// element: were those lanes to load, they would add columns of the next chunk to the sums), mean
// and rstd stored by one thread.
class EmuSimtLayerNorm : public ::testing::TestWithParam<int> {};

TEST_P(EmuSimtLayerNorm, Triton) {
  uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t R = 7, C = 300;
  const double eps = static_cast<float>(1e-5);
  auto r = run("layer_norm.py", "layer_norm_fwd",
               "X:*fp32[R,C], Y:*fp32[R,C], W:*fp32[C], B:*fp32[C], Mean:*fp32[R], Rstd:*fp32[R], row_stride:i32=300, N:i32=300, "
               "eps:fp32=1e-5, R=7, C=300, BLOCK_SIZE=" + std::to_string(GetParam()),
               "7", seed);
  expectLayerNorm(r, R, C, eps, 1e-4, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Blocks, EmuSimtLayerNorm, ::testing::Values(128, 64));

// The tile IR layer norm: f16 in and out (arithmetic in f32), sum and sum of squares in one pass.
TEST(EmuSimt, LayernormTirF16) {
  uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t M = 19, N = 300;
  const double eps = static_cast<float>(1e-5);
  auto r = run("layernorm.tir", "layernorm",
               "x:*fp16[19,300], y:*fp16[19,300], w:*fp32[300], b:*fp32[300], mean:*fp32[19], rstd:*fp32[19], stride:i32=300, "
               "N:i32=300, eps:fp32=1e-5",
               "19", seed);
  expectLayerNorm(r, M, N, eps, 4e-3, 4e-3);  // f16 output: one rounding of a value of a few units
}

// Blocks of 256 (two entries per thread) and of 64 (half the block holds no element), over 1000
// elements: the last block is partial.
TEST(EmuSimt, VectorAddBlocksLargerAndSmallerThanTheBlock) {
  for (int block : {256, 64}) {
    uint64_t seed = freshSeed();
    SCOPED_TRACE("block " + std::to_string(block) + ", seed " + std::to_string(seed));
    auto r = run("vector_add.py", "add_kernel",
                 "x_ptr:*fp32[n_elements], y_ptr:*fp32[n_elements], out_ptr:*fp32[n_elements], n_elements:i32=1000, BLOCK_SIZE=" +
                     std::to_string(block),
                 "cdiv(n_elements, BLOCK_SIZE)", seed);
    std::vector<double> want(1000);
    for (int64_t i = 0; i < 1000; ++i) want[static_cast<size_t>(i)] = static_cast<float>(in(r, 0, i) + in(r, 1, i));
    expectClose(r, 2, want, 0, 0);
  }
}

// Every example SIMT kernel compiles for sm_90a with no spills and no local memory, and its
// reductions are warp shuffles.
TEST(CudaSimt, ExamplesCompileForSm90aWithoutSpills) {
  struct Case {
    const char *file, *kernel, *spec;
    bool reduces;
  };
  const Case cases[] = {
      {"softmax.tir", "softmax", "out:*fp32[4,128], x:*fp32[4,128], in_stride:i32=128, out_stride:i32=128, n_cols:i32=100", true},
      {"softmax.py", "softmax_kernel",
       "out_ptr:*fp32[R,C], in_ptr:*fp32[R,C], in_row_stride:i32=1024, out_row_stride:i32=1024, n_rows:i32=4, n_cols:i32=1000, "
       "R=4, C=1024, BLOCK_SIZE=1024, NUM_STAGES=2",
       true},
      {"layer_norm.py", "layer_norm_fwd",
       "X:*fp32[R,C], Y:*fp32[R,C], W:*fp32[C], B:*fp32[C], Mean:*fp32[R], Rstd:*fp32[R], row_stride:i32=300, N:i32=300, "
       "eps:fp32=1e-5, R=7, C=300, BLOCK_SIZE=512",
       true},
      {"layernorm.tir", "layernorm",
       "x:*fp16[4,300], y:*fp16[4,300], w:*fp32[300], b:*fp32[300], mean:*fp32[4], rstd:*fp32[4], stride:i32=300, N:i32=300, "
       "eps:fp32=1e-5",
       true},
      {"vector_add.py", "add_kernel",
       "x_ptr:*fp32[n_elements], y_ptr:*fp32[n_elements], out_ptr:*fp32[n_elements], n_elements:i32=1000, BLOCK_SIZE=1024", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    driver::LoadedKernel lk;
    auto er = driver::emitForTarget(example(c.file), c.kernel, driver::parseSpec(c.spec), {}, {}, lk);
    auto cm = cuda::compile(er.source);
    ASSERT_EQ(cm.usage.size(), 1u);
    EXPECT_EQ(cm.usage[0].spillStores, 0);
    EXPECT_EQ(cm.usage[0].spillLoads, 0);
    EXPECT_EQ(cm.usage[0].stack, 0);
    EXPECT_EQ(cm.ptx.find(".local"), std::string::npos);
    if (c.reduces) {
      EXPECT_NE(cm.ptx.find("shfl.sync.bfly"), std::string::npos);
    }
  }
}
