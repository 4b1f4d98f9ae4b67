// The CUDA runtime side of the Hopper backend: tensor-map arguments derived from the emitter's
// descriptions, the comparison against the executor, the FLOP count, and the driver's behaviour
// where there is no driver or device (the CI machines: a clear UserError, never a crash). The one
// test that needs an H200 runs the descriptor GEMM end to end, and skips cleanly elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <sstream>

#include "backends/cuda/Driver.h"
#include "backends/cuda/Emitter.h"
#include "driver/Compare.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "TensorMapSpec2d.h"
#include "tawa/tawa.h"

using namespace tawa;

namespace {

const char* kGemmSpec =
    "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=256, N:i32=192, K:i32=320, stride_am:i32=320, stride_ak:i32=1, "
    "stride_bk:i32=192, stride_bn:i32=1, stride_cm:i32=192, stride_cn:i32=1";

std::string example(const std::string& name) { return std::string(TAWA_SOURCE_DIR) + "/examples/" + name; }

constexpr std::array<int64_t, 3> kGrid = {2, 3, 1};  // the launch's logical grid (slice dimensions take their extent from it)

cuda::TensorMapSpec spec2d(int64_t rows, int64_t cols, int64_t stride, int64_t boxRows, int64_t boxCols, int swizzle) {
  return test::tensorMap2d("x_desc", ir::Scalar::F16, 0, rows, cols, stride, boxRows, boxCols, swizzle);
}

std::string userError(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(CudaRuntime, TensorMapArgsFromEmitterDescriptions) {
  driver::Spec spec = driver::parseSpec(kGemmSpec);
  auto lk = driver::specialize(example("matmul_desc.tir"), "", spec, transforms::PassOptions{}, "nv");
  cuda::EmitResult er = cuda::emitCudaKernel(*lk.module, *lk.kernel);
  ASSERT_EQ(er.tensorMaps.size(), 3u);
  // Argument values as the launch binds them: a, b, c, M, N, K, then the strides.
  std::vector<int64_t> args = {0, 0, 0, 256, 192, 320, 320, 1, 192, 1, 192, 1};
  auto a = cuda::tensorMapArgs(er.tensorMaps[0], args, 0x10000, kGrid);
  EXPECT_EQ(a.dataType, cuda::drv::kTmaFloat16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.base, 0x10000u);
  EXPECT_EQ(a.globalDim[0], 320u);  // inner dimension first: K columns of A
  EXPECT_EQ(a.globalDim[1], 256u);
  EXPECT_EQ(a.globalStrides[0], 640u);  // bytes
  EXPECT_EQ(a.boxDim[0], static_cast<uint32_t>(er.tensorMaps[0].boxCols));
  EXPECT_EQ(a.boxDim[1], static_cast<uint32_t>(er.tensorMaps[0].boxRows));
  EXPECT_EQ(a.elementStrides[0], 1u);
  EXPECT_EQ(a.interleave, cuda::drv::kTmaInterleaveNone);
  EXPECT_EQ(a.oobFill, cuda::drv::kTmaOobFillNone);
  auto c = cuda::tensorMapArgs(er.tensorMaps[2], args, 0x20000, kGrid);
  EXPECT_EQ(c.globalDim[0], 192u);
  EXPECT_EQ(c.globalDim[1], 256u);
  EXPECT_EQ(c.swizzle, cuda::drv::kTmaSwizzle128B);  // the epilogue staging is TMA's swizzled layout, one 64-column chunk per copy
  EXPECT_EQ(c.boxDim[0], 64u);
  for (const auto& s : er.tensorMaps) {
    auto t = cuda::tensorMapArgs(s, args, 0x30000, kGrid);
    EXPECT_LE(t.boxDim[0] * 2u, s.swizzleBytes ? static_cast<uint32_t>(s.swizzleBytes) : 512u) << s.param;
  }
}

TEST(CudaRuntime, TensorMapSwizzleEnums) {
  EXPECT_EQ(cuda::tensorMapArgs(spec2d(64, 64, 64, 64, 64, 128), {}, 0, kGrid).swizzle, cuda::drv::kTmaSwizzle128B);
  EXPECT_EQ(cuda::tensorMapArgs(spec2d(64, 64, 64, 64, 32, 64), {}, 0, kGrid).swizzle, cuda::drv::kTmaSwizzle64B);
  EXPECT_EQ(cuda::tensorMapArgs(spec2d(64, 64, 64, 64, 16, 32), {}, 0, kGrid).swizzle, cuda::drv::kTmaSwizzle32B);
  EXPECT_EQ(cuda::tensorMapDataType(ir::Scalar::BF16), cuda::drv::kTmaBfloat16);
  EXPECT_EQ(cuda::tensorMapDataType(ir::Scalar::F8E4M3), cuda::drv::kTmaUint8);
  EXPECT_EQ(cuda::tensorMapDataType(ir::Scalar::F32), cuda::drv::kTmaFloat32);
}

TEST(CudaRuntime, TensorMapRejectsWhatTheDriverWould) {
  EXPECT_NE(userError([] { cuda::tensorMapArgs(spec2d(64, 60, 60, 64, 32, 64), {}, 0, kGrid); }).find("multiple of 16"),
            std::string::npos);
  EXPECT_NE(userError([] { cuda::tensorMapArgs(spec2d(64, 64, 64, 64, 64, 64), {}, 0, kGrid); }).find("exceeds the 64-byte swizzle"),
            std::string::npos);
  EXPECT_NE(userError([] { cuda::tensorMapArgs(spec2d(64, 64, 64, 64, 64, 128), {}, 8, kGrid); }).find("16-byte aligned"),
            std::string::npos);
  auto s = spec2d(64, 64, 64, 64, 64, 128);
  s.colStride.constant = 2;
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(s, {}, 0, kGrid); }).find("inner (column) stride"), std::string::npos);
  auto t = spec2d(64, 64, 64, 300, 64, 128);
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(t, {}, 0, kGrid); }).find("1..256"), std::string::npos);
  auto u = spec2d(64, 64, 64, 64, 64, 128);
  u.rows.arg = 5;  // an argument the launch does not have
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(u, {1, 2}, 0, kGrid); }).find("argument #5"), std::string::npos);
}

// A slice dimension (one attention head per program id along grid axis 1): rank 3, its extent from
// the grid, its stride in bytes, a box of 1 along it; overlapping or misaligned slices are rejected.
TEST(CudaRuntime, TensorMapSliceDimensions) {
  auto s = spec2d(100, 64, 64, 64, 64, 128);
  cuda::SliceDim d;
  d.gridAxis = 1;
  d.stride.constant = 100 * 64;
  s.slices.push_back(d);
  auto a = cuda::tensorMapArgs(s, {}, 0, kGrid);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.globalDim[1], 100u);
  EXPECT_EQ(a.globalDim[2], 3u);  // kGrid[1]
  EXPECT_EQ(a.globalStrides[0], 128u);
  EXPECT_EQ(a.globalStrides[1], 12800u);
  EXPECT_EQ(a.boxDim[2], 1u);
  auto overlap = s;
  overlap.slices[0].stride.constant = 99 * 64;
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(overlap, {}, 0, kGrid); }).find("slices would overlap"), std::string::npos);
  auto odd = spec2d(100, 8, 8, 64, 8, 0);
  odd.slices.push_back(d);
  odd.slices[0].stride.constant = 801;  // 1602 bytes
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(odd, {}, 0, kGrid); }).find("multiple of 16 below 2^40"), std::string::npos);
  auto many = s;
  for (int i = 0; i < 3; ++i) many.slices.push_back(many.slices.back());
  EXPECT_NE(userError([&] { cuda::tensorMapArgs(many, {}, 0, kGrid); }).find("at most 5 dimensions"), std::string::npos);
}

TEST(CudaRuntime, CompareBuffersByDtype) {
  exec::Buffer ref("c", ir::Scalar::F16, {4, 8});
  for (int64_t i = 0; i < ref.numel(); ++i) ref.setFloat(i, 0.25 + 0.125 * static_cast<double>(i % 7) - 0.5 * (i % 3));
  exec::Buffer gpu = ref;
  auto same = driver::compareBuffers(gpu, ref);
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.maxAbsErr, 0);
  // One unit in the last place of f16 passes; a wrong element fails and is located.
  gpu.setFloat(5, ref.getFloat(5) * (1 + 1.0 / 1024));
  EXPECT_TRUE(driver::compareBuffers(gpu, ref).ok);
  gpu.setFloat(9, ref.getFloat(9) + 1.0);
  auto bad = driver::compareBuffers(gpu, ref);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_EQ(bad.firstBad, 9);
  EXPECT_GT(bad.relL2, 0);
  // A NaN where the reference has a number fails.
  exec::Buffer f32("o", ir::Scalar::F32, {3});
  f32.setFloat(0, 1);
  f32.setFloat(1, 2);
  f32.setFloat(2, 3);
  exec::Buffer nan = f32;
  nan.setFloat(1, std::nan(""));
  EXPECT_FALSE(driver::compareBuffers(nan, f32).ok);
  // A NaN or an infinity in the reference (and the result) leaves the tolerance finite: another
  // element's error is still caught (the tolerance came out NaN before 2026-12-07, which accepted it).
  for (double special : {std::nan(""), static_cast<double>(INFINITY)}) {
    exec::Buffer withSpecial = f32;
    withSpecial.setFloat(2, special);
    exec::Buffer off = withSpecial;
    off.setFloat(0, 1.5);
    auto c = driver::compareBuffers(off, withSpecial);
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.firstBad, 0);
    EXPECT_TRUE(std::isfinite(c.atol));
    EXPECT_TRUE(driver::compareBuffers(withSpecial, withSpecial).ok);
  }
  // Integers compare exactly.
  exec::Buffer iref("n", ir::Scalar::I32, {2});
  iref.setInt(0, 3);
  iref.setInt(1, 4);
  exec::Buffer ig = iref;
  ig.setInt(1, 5);
  EXPECT_FALSE(driver::compareBuffers(ig, iref).ok);
  EXPECT_LT(driver::relativeTolerance(ir::Scalar::F32), driver::relativeTolerance(ir::Scalar::F16));
  EXPECT_LT(driver::relativeTolerance(ir::Scalar::F16), driver::relativeTolerance(ir::Scalar::BF16));
  EXPECT_LT(driver::relativeTolerance(ir::Scalar::BF16), driver::relativeTolerance(ir::Scalar::F8E4M3));
}

TEST(CudaRuntime, DotFlopsFromSpec) {
  driver::Spec spec = driver::parseSpec(kGemmSpec);
  auto lk = driver::loadKernel(example("matmul_desc.tir"), "", spec);
  auto f = driver::dotFlops(*lk.module, spec);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(*f, 2.0 * 256 * 192 * 320);
  driver::Spec sm = driver::parseSpec("out:*fp32[37,100], x:*fp32[37,100], in_stride:i32=100, out_stride:i32=100, n_cols:i32=100");
  auto soft = driver::loadKernel(example("softmax.tir"), "", sm);
  EXPECT_FALSE(driver::dotFlops(*soft.module, sm).has_value());
}

// The check every backend's run shares: a result equal to the executor's passes with a line per
// buffer; one element moved far off is a UserError naming the buffer, the element's index, both
// values and who produced it.
TEST(CudaRuntime, CheckBuffersNamesTheFirstBadElement) {
  driver::Spec spec = driver::parseSpec(kGemmSpec);
  auto lk = driver::loadKernel(example("matmul_desc.tir"), "", spec);
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto bound = driver::bind(*lk.kernel, spec, "cdiv(M, 64), cdiv(N, 64)", seed);
  std::vector<exec::Buffer> got = bound.buffers;
  exec::LaunchOptions lo;
  lo.grid = bound.grid;
  exec::launch(*lk.module, *lk.kernel, bound.args, got, lo);
  std::vector<exec::Buffer> want = got;  // the executor's result stands in for a device's (it is checked against double loops elsewhere)
  std::ostringstream out;
  driver::checkBuffers(got, want, "GPU", Location{}, "", out);
  EXPECT_NE(out.str().find("check c: matches the CPU executor (f16, max |err| 0,"), std::string::npos) << out.str();
  exec::Buffer& c = got[2];
  ASSERT_EQ(c.name, "c");
  const int64_t bad = 5 * 192 + 7;
  c.setFloat(bad, c.getFloat(bad) + 100.0);
  std::string msg = userError([&] { driver::checkBuffers(got, want, "emulated CUDA kernel", Location{}, "", out); });
  EXPECT_NE(msg.find("the emulated CUDA kernel's result differs from the CPU executor's: buffer c, 1 of 49152 element(s) out of "
                     "tolerance; first at [5, 7]: emulated CUDA kernel "),
            std::string::npos)
      << msg;
}

// Later schedules of `tawa check --backend emu` against the first: bit for bit, except buffers float
// atomics add into, within their type's tolerance (the adds' order is the schedule's).
TEST(CudaRuntime, ScheduleDifferenceAllowsOnlyAtomicOrder) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-1, 1);
  exec::Buffer a;
  a.name = "acc", a.dtype = ir::Scalar::F32, a.shape = {64};
  a.data.resize(64 * 4);
  for (int64_t i = 0; i < 64; ++i) a.setFloat(i, u(rng));
  exec::Buffer b = a;
  b.name = "out";
  std::vector<exec::Buffer> first{a, b}, got = first;
  const double x = got[0].getFloat(9);
  got[0].setFloat(9, std::nextafter(static_cast<float>(x), 2.0f));  // one f32 unit: another order of the adds
  EXPECT_FALSE(driver::scheduleDifference(got, first, {"acc"}));
  auto d = driver::scheduleDifference(got, first, {"out"});  // not a buffer atomics add into: bit for bit
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("acc[9] is"), std::string::npos) << *d;
  got[0].setFloat(9, x + 0.5);  // far beyond what an order moves
  d = driver::scheduleDifference(got, first, {"acc"});
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("acc[9] is"), std::string::npos) << *d;
  EXPECT_NE(d->find("float atomics add into it: beyond the tolerance"), std::string::npos) << *d;
}

// Where there is no driver or no device, the library says so before doing any work.
TEST(CudaRuntime, NoGpuIsAClearError) {
  auto av = cuda::probeGpu();
  if (av.ok) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_TRUE(av.reason.find("no CUDA driver") != std::string::npos || av.reason.find("no CUDA device") != std::string::npos)
      << av.reason;
  try {
    tawa::gpu();
    ADD_FAILURE() << "tawa::gpu() found a GPU that probeGpu did not";
  } catch (const tawa::Error& e) {
    EXPECT_EQ(e.diagnostic().message, av.reason);
  }
}

// On a Hopper GPU: the descriptor GEMM (with a partial K block and partial N blocks) compiled,
// launched and checked against the executor, for one and two consumer groups.
TEST(CudaRuntime, GemmOnHopper) {
  auto av = cuda::probeGpu();
  if (!av.ok) GTEST_SKIP() << av.reason;
  if (cuda::Driver::get().device().ccMajor != 9) GTEST_SKIP() << "not a Hopper GPU";
  for (int consumers : {1, 2}) {
    tawa::Options ko;
    ko.depth = 3;
    ko.consumers = consumers;
    const tawa::Kernel k = tawa::Kernel::load(
        example(consumers == 1 ? "matmul_desc.tir" : "matmul_desc_128.tir"), "",
        "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=384, N:i32=200, K:i32=328, stride_am:i32=328, stride_ak:i32=1, "
        "stride_bk:i32=200, stride_bn:i32=1, stride_cm:i32=200, stride_cn:i32=1",
        ko);
    tawa::Inputs in = k.inputs(consumers == 1 ? "cdiv(M, 64), cdiv(N, 64)" : "cdiv(M, 128), cdiv(N, 128)", 11);
    const tawa::DeviceInputs dev = tawa::toDevice(in);
    tawa::RunOptions ro;
    ro.check = true;
    const tawa::RunStats st = k.run(tawa::Backend::Cuda, dev.args, dev.grid, ro);
    EXPECT_NE(st.comparisons.find("matches the CPU executor"), std::string::npos) << st.comparisons;
    EXPECT_EQ(k.bench(dev.args, dev.grid, 1, 3).size(), 3u);
  }
}
