// driver::bind's buffers: seeded random values, never zero, the same on any number of threads, and
// buffers that --load replaces left unfilled.
#include "driver/Launch.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

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
