// driver::bind's buffers: seeded random values, never zero, the same on any number of threads, and
// buffers that --load replaces left unfilled.
#include "driver/Launch.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

using namespace tawa;

namespace {

unsigned testSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}

// Odd sizes: buffers of several fill chunks (65536 elements) and a partial last one.
const char* kSpec =
    "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=333, N:i32=517, K:i32=401, stride_am:i32=401, stride_ak:i32=1, "
    "stride_bk:i32=517, stride_bn:i32=1, stride_cm:i32=517, stride_cn:i32=1";

driver::Bound bindGemm(uint64_t seed, const std::vector<std::string>& loaded = {}) {
  driver::Spec spec = driver::parseSpec(kSpec);
  static auto lk = driver::loadKernel(std::string(TAWA_SOURCE_DIR) + "/examples/matmul_ptr.tir", "", spec);
  return driver::bind(*lk.kernel, spec, "cdiv(M, 64) * cdiv(N, 64)", seed, loaded);
}

}  // namespace

TEST(LaunchBind, SameValuesOnOneThreadAsOnMany) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED to replay)");
  driver::Bound one;
  {
    tbb::global_control only(tbb::global_control::max_allowed_parallelism, 1);
    one = bindGemm(seed);
  }
  driver::Bound many = bindGemm(seed);
  ASSERT_EQ(one.buffers.size(), 3u);
  for (size_t i = 0; i < one.buffers.size(); ++i) {
    EXPECT_EQ(one.buffers[i].data, many.buffers[i].data) << one.buffers[i].name;
    for (int64_t e = 0; e < one.buffers[i].numel(); ++e) {
      double v = one.buffers[i].getFloat(e);
      ASSERT_TRUE(v != 0 && v >= -1 && v <= 1) << one.buffers[i].name << "[" << e << "] = " << v;
    }
  }
  // Another seed gives other values; two buffers of one launch differ from each other.
  driver::Bound other = bindGemm(seed + 1);
  EXPECT_NE(one.buffers[0].data, other.buffers[0].data);
  EXPECT_NE(std::vector<uint8_t>(one.buffers[0].data.begin(), one.buffers[0].data.begin() + 2000),
            std::vector<uint8_t>(one.buffers[1].data.begin(), one.buffers[1].data.begin() + 2000));
}

TEST(LaunchBind, LoadedBuffersAreNotFilledAndTheOthersKeepTheirValues) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED to replay)");
  driver::Bound all = bindGemm(seed);
  driver::Bound some = bindGemm(seed, {"a", "c"});
  for (uint8_t byte : some.buffers[0].data) ASSERT_EQ(byte, 0);
  for (uint8_t byte : some.buffers[2].data) ASSERT_EQ(byte, 0);
  EXPECT_EQ(all.buffers[1].data, some.buffers[1].data);  // b's values do not depend on what else is loaded
  EXPECT_EQ(driver::loadedNames({"a=x.npy", "c=/tmp/c.npy", "=bad", "nobuffer"}), (std::vector<std::string>{"a", "c"}));
}

namespace {

const std::string kPointerArrays = std::string(TAWA_SOURCE_DIR) + "/tests/lit/frontend/Inputs/pointer_arrays.py";

// Three GEMM problems of different sizes (none a multiple of the blocks) whose matrices an array of
// pointers per operand names; dims holds M, N, K of each.
const char* kGrouped =
    "a_ptrs:*i64 = addresses(a0, a1, a2), b_ptrs:*i64 = addresses(b0, b1, b2), c_ptrs:*i64 = addresses(c0, c1, c2), "
    "a0:*fp16[37,40], b0:*fp16[40,70], c0:*fp32[37,70], a1:*fp16[33,96], b1:*fp16[96,50], c1:*fp32[33,50], "
    "a2:*fp16[64,19], b2:*fp16[19,20], c2:*fp32[64,20], dims:*i32[3, 3] = values(37,70,40, 33,50,96, 64,20,19), "
    "BM=32, BN=32, BK=16";

std::string bindError(const std::string& spec, const std::string& kernel = "grouped_gemm") {
  try {
    driver::Spec s = driver::parseSpec(spec);
    auto lk = driver::loadKernel(kPointerArrays, kernel, s);
    driver::bind(*lk.kernel, s, "1", 1);
  } catch (const UserError& e) {
    return e.format();
  }
  return "no error";
}

}  // namespace

TEST(LaunchBind, ArraysOfPointersHoldTheBuffersAddressesAndTheExecutorFollowsThem) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (TAWA_TEST_SEED to replay)");
  driver::Spec spec = driver::parseSpec(kGrouped);
  auto lk = driver::loadKernel(kPointerArrays, "grouped_gemm", spec);
  driver::Bound b = driver::bind(*lk.kernel, spec, "cdiv(64, 32) * cdiv(70, 32), 3", seed);
  // The parameters' buffers first, then the ones only an array of pointers names, in spec order.
  std::vector<std::string> names;
  for (const auto& buf : b.buffers) names.push_back(buf.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a_ptrs", "b_ptrs", "c_ptrs", "dims", "a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"}));
  EXPECT_EQ(b.buffers[0].addressesOf, (std::vector<int>{4, 7, 10}));
  EXPECT_EQ(b.buffers[2].addressesOf, (std::vector<int>{6, 9, 12}));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b.buffers[1].getInt(k), exec::virtualAddress(5 + 3 * k));
  EXPECT_EQ(b.buffers[3].getInt(4), 50);
  EXPECT_EQ(b.buffers[3].shape, (std::vector<int64_t>{3, 3}));
  const std::vector<exec::Buffer> in = b.buffers;
  exec::LaunchOptions lo;
  lo.grid = b.grid;
  exec::launch(*lk.module, *lk.kernel, b.args, b.buffers, lo);
  const int64_t dims[3][3] = {{37, 70, 40}, {33, 50, 96}, {64, 20, 19}};
  for (int g = 0; g < 3; ++g) {
    const exec::Buffer &A = in[4 + 3 * g], &B = in[5 + 3 * g], &C = b.buffers[6 + 3 * g];
    const int64_t M = dims[g][0], N = dims[g][1], K = dims[g][2];
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          ref += A.getFloat(i * K + k) * B.getFloat(k * N + j);
          mag += std::abs(A.getFloat(i * K + k) * B.getFloat(k * N + j));
        }
        ASSERT_NEAR(C.getFloat(i * N + j), ref, 1e-5 * mag + 1e-6) << "problem " << g << " C[" << i << "," << j << "]";
      }
  }
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b.buffers[k].data, in[k].data);  // the arrays of pointers are read, not written
}

TEST(LaunchBind, ArraysOfPointersErrors) {
  // A buffer that is neither a parameter nor pointed to; a name no buffer has; counts that disagree.
  EXPECT_NE(bindError(std::string(kGrouped) + ", extra:*fp16[4]").find("<spec>:1:"), std::string::npos);
  EXPECT_NE(bindError(std::string(kGrouped) + ", extra:*fp16[4]").find("spec entry 'extra' names no parameter of '@grouped_gemm'\n  hint: a buffer that is no parameter is given only for an array of pointers"),
            std::string::npos);
  std::string unknown = kGrouped;
  unknown.replace(unknown.find("addresses(b0"), 12, "addresses(bx");
  EXPECT_NE(bindError(unknown).find("<spec>:1:62: error: 'bx' in the addresses of 'b_ptrs' is no buffer of the spec"), std::string::npos)
      << bindError(unknown);
  std::string count = kGrouped;
  count.replace(0, 11, "a_ptrs:*i64[4]");
  EXPECT_NE(bindError(count).find("buffer 'a_ptrs' has 4 elements but addresses() names 3 buffers"), std::string::npos) << bindError(count);
  std::string values = kGrouped;
  values.replace(values.find("dims:*i32[3, 3]"), 15, "dims:*i32[3, 4]");
  EXPECT_NE(bindError(values).find("buffer 'dims' has 12 elements but values() gives 9"), std::string::npos) << bindError(values);
}
