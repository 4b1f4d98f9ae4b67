// The block-access pass must not change what a kernel computes: each kernel runs on the CPU
// executor as written and after `canonicalize,block-access`, on the same fresh random inputs, and
// the outputs must be identical bit for bit. Bitwise equality is the right bar even for f16
// attention: the rewritten loads read exactly the same elements (and exact zeros where the masks
// were off), so every later op sees identical operands and rounds identically. Outputs are
// prefilled with NaN, so an element one version writes and the other does not also shows up.
//
// The seed of each test is drawn from std::random_device and printed on failure; set
// TAWA_TEST_SEED=<n> in the environment to replay one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"

namespace {

using tawa::exec::Arg;
using tawa::exec::Buffer;
using tawa::ir::Module;
using tawa::ir::OpKind;
using tawa::ir::Scalar;

std::string source(const std::string& rel) { return std::string(TAWA_SOURCE_DIR) + "/" + rel; }

uint32_t freshSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}

void fillRandom(Buffer& b, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int64_t i = 0; i < b.numel(); ++i) b.setFloat(i, d(rng));
}
void fillNaN(Buffer& b) {
  for (int64_t i = 0; i < b.numel(); ++i) b.setFloat(i, std::numeric_limits<double>::quiet_NaN());
}

void runPasses(Module& m, const std::string& passes) {
  tawa::transforms::PassManager pm;
  pm.verifyEach = true;
  pm.addPipeline(passes);
  pm.run(m);
  tawa::ir::verify(m);
}

int count(const Module& m, OpKind k, bool tilesOnly = false) {
  int n = 0;
  for (auto& f : m.funcs)
    tawa::ir::walk(static_cast<const tawa::ir::Block&>(f->body), [&](const tawa::ir::Op* op) {
      if (op->kind() == k && (!tilesOnly || op->operand(0)->type().isTile())) ++n;
    });
  return n;
}

// Runs `before` and `after` (the same kernel before and after the pass) on copies of `bufs` and
// expects identical bytes in every buffer.
void expectSameResults(const Module& before, const Module& after, const std::string& kernel, const std::vector<Arg>& args,
                       const std::vector<Buffer>& bufs, std::array<int64_t, 3> grid) {
  tawa::exec::LaunchOptions opt;
  opt.grid = grid;
  std::vector<Buffer> a = bufs, b = bufs;
  try {
    tawa::exec::launch(before, *before.lookup(kernel), args, a, opt);
    tawa::exec::launch(after, *after.lookup(kernel), args, b, opt);
  } catch (const tawa::UserError& e) {
    FAIL() << e.format();
  }
  for (size_t k = 0; k < a.size(); ++k) {
    int bad = 0;
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      size_t w = static_cast<size_t>(tawa::ir::byteWidth(a[k].dtype));
      bool same = std::equal(a[k].data.begin() + static_cast<std::ptrdiff_t>(i * static_cast<int64_t>(w)),
                             a[k].data.begin() + static_cast<std::ptrdiff_t>((i + 1) * static_cast<int64_t>(w)),
                             b[k].data.begin() + static_cast<std::ptrdiff_t>(i * static_cast<int64_t>(w)));
      if (!same && ++bad <= 5)
        ADD_FAILURE() << a[k].name << "[" << i << "]: " << a[k].getFloat(i) << " as written, " << b[k].getFloat(i)
                      << " after block-access";
    }
    EXPECT_EQ(bad, 0) << a[k].name << ": " << bad << " of " << a[k].numel() << " elements differ";
  }
}

struct Pair {
  std::unique_ptr<Module> before, after;
};
Pair parsePair(const std::string& rel) {
  Pair p{tawa::ir::parseFile(source(rel)), tawa::ir::parseFile(source(rel))};
  tawa::ir::verify(*p.before);
  runPasses(*p.after, "canonicalize,block-access");
  return p;
}

void matmulPtr(int64_t M, int64_t N, int64_t K, bool bColumnMajor) {
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Pair p = parsePair("examples/matmul_ptr.tir");
  EXPECT_EQ(count(*p.after, OpKind::Load, true), 0);
  EXPECT_EQ(count(*p.after, OpKind::Store, true), 0);
  EXPECT_EQ(count(*p.after, OpKind::DescLoad), 2);
  EXPECT_EQ(count(*p.after, OpKind::DescStore), 1);
  std::vector<Buffer> bufs = {Buffer("a", Scalar::F16, {M, K}), Buffer("b", Scalar::F16, {K, N}),
                              Buffer("c", Scalar::F16, {M, N})};
  fillRandom(bufs[0], rng);
  fillRandom(bufs[1], rng);
  fillNaN(bufs[2]);
  int64_t sbk = bColumnMajor ? 1 : N, sbn = bColumnMajor ? K : 1;
  std::vector<Arg> args = {Arg::buf(0),       Arg::buf(1),       Arg::buf(2),       Arg::integer(M),
                           Arg::integer(N),   Arg::integer(K),   Arg::integer(K),   Arg::integer(1),
                           Arg::integer(sbk), Arg::integer(sbn), Arg::integer(N),   Arg::integer(1)};
  expectSameResults(*p.before, *p.after, "matmul_ptr", args, bufs, {((M + 63) / 64) * ((N + 63) / 64), 1, 1});
}

}  // namespace

TEST(BlockAccess, MatmulPtrSameResultsRaggedBounds) { matmulPtr(100, 72, 90, false); }

TEST(BlockAccess, MatmulPtrSameResultsColumnMajorB) { matmulPtr(130, 64, 64, true); }

TEST(BlockAccess, MatmulPtrDescriptorsHoisted) {
  Pair p = parsePair("examples/matmul_ptr.tir");
  // Both input descriptors sit before the K loop, at the top level: warp-specialize's producer then
  // only computes the block offsets.
  int top = 0;
  for (auto& op : p.after->funcs[0]->body.ops()) top += op->kind() == OpKind::MakeDesc;
  EXPECT_EQ(top, 3);
}

class BlockAccessAttention : public ::testing::TestWithParam<bool> {};

TEST_P(BlockAccessAttention, SameResults) {
  const bool causal = GetParam();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t ZH = 2, nCtx = 100, D = 64;  // 100: the last key and query blocks are partial
  Pair p = parsePair("examples/attention.tir");
  EXPECT_EQ(count(*p.after, OpKind::Load, true), 0);
  EXPECT_EQ(count(*p.after, OpKind::DescLoad), 3);
  std::vector<Buffer> bufs;
  for (const char* name : {"Q", "K", "V", "O"}) bufs.emplace_back(name, Scalar::F16, std::vector<int64_t>{ZH, nCtx, D});
  for (int b = 0; b < 3; ++b) fillRandom(bufs[static_cast<size_t>(b)], rng);
  fillNaN(bufs[3]);
  std::vector<Arg> args = {Arg::buf(0),     Arg::buf(1),         Arg::buf(2), Arg::buf(3), Arg::real(0.25),
                           Arg::integer(nCtx), Arg::integer(causal)};
  expectSameResults(*p.before, *p.after, "attention", args, bufs, {(nCtx + 63) / 64, ZH, 1});
}

INSTANTIATE_TEST_SUITE_P(BlockAccess, BlockAccessAttention, ::testing::Values(false, true));

TEST(BlockAccess, TritonMatmulSameResults) {
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 100, N = 72, K = 90;
  auto spec = tawa::driver::parseSpec(
      "a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=100, N:i32=72, K:i32=90, stride_am:i32=90, "
      "stride_ak:i32=1, stride_bk:i32=72, stride_bn:i32=1, stride_cm:i32=72, stride_cn:i32=1, BLOCK_M=32, "
      "BLOCK_N=32, BLOCK_K=32, GROUP_M=2");
  auto before = tawa::frontend::compileTriton(source("examples/matmul.py"), "matmul_kernel", spec);
  auto after = tawa::frontend::compileTriton(source("examples/matmul.py"), "matmul_kernel", spec);
  runPasses(*after, "canonicalize,block-access");
  EXPECT_EQ(count(*after, OpKind::Load, true), 0);
  EXPECT_EQ(count(*after, OpKind::Store, true), 0);
  std::vector<Buffer> bufs = {Buffer("a", Scalar::F16, {M, K}), Buffer("b", Scalar::F16, {K, N}),
                              Buffer("c", Scalar::F16, {M, N})};
  fillRandom(bufs[0], rng);
  fillRandom(bufs[1], rng);
  fillNaN(bufs[2]);
  std::vector<Arg> args = {Arg::buf(0),     Arg::buf(1),     Arg::buf(2),     Arg::integer(M), Arg::integer(N), Arg::integer(K),
                           Arg::integer(K), Arg::integer(1), Arg::integer(N), Arg::integer(1), Arg::integer(N), Arg::integer(1)};
  expectSameResults(*before, *after, "matmul_kernel", args, bufs, {4 * 3, 1, 1});
}

// `% M` on the rows of A: the wrapped rows (40..47 of the last block) read real data as written and
// zeros after the pass, but they only reach rows of C that the store masks out.
TEST(BlockAccess, ClampedRowsSameResults) {
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int64_t M = 40;
  Pair p = parsePair("tests/lit/block_access/clamp.tir");
  ASSERT_NE(p.after->lookup("clamped_rows"), nullptr);
  std::vector<Buffer> bufs = {Buffer("a", Scalar::F16, {M, 16}), Buffer("b", Scalar::F16, {16, 16}),
                              Buffer("c", Scalar::F32, {M, 16})};
  fillRandom(bufs[0], rng);
  fillRandom(bufs[1], rng);
  fillNaN(bufs[2]);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::integer(M)};
  expectSameResults(*p.before, *p.after, "clamped_rows", args, bufs, {(M + 15) / 16, 1, 1});
}

// A gather through loaded indices and a non-affine store stay pointer accesses; only the load of
// the index block itself becomes a block load.
TEST(BlockAccess, GatherAndNonAffineStoreStayPointerAccesses) {
  auto m = tawa::ir::parseModule(
      "tile.func @f(%x: ptr<f32>, %i: ptr<i32>) {\n"
      "  %r = tile.arange {start = 0, end = 16} : tile<16xi32>\n"
      "  %ib = tile.splat %i : tile<16xptr<i32>>\n"
      "  %ip = tile.addptr %ib, %r : tile<16xptr<i32>>\n"
      "  %g = tile.load %ip : tile<16xi32>\n"
      "  %xb = tile.splat %x : tile<16xptr<f32>>\n"
      "  %xp = tile.addptr %xb, %g : tile<16xptr<f32>>\n"
      "  %v = tile.load %xp : tile<16xf32>\n"
      "  %r2 = tile.mul %r, %r : tile<16xi32>\n"
      "  %yp = tile.addptr %xb, %r2 : tile<16xptr<f32>>\n"
      "  tile.store %yp, %v\n"
      "  tile.return\n"
      "}\n",
      "unchanged.tir");
  tawa::ir::verify(*m);
  int loads = count(*m, OpKind::Load), stores = count(*m, OpKind::Store);
  runPasses(*m, "block-access");
  EXPECT_EQ(count(*m, OpKind::Load), loads - 1);
  EXPECT_EQ(count(*m, OpKind::Store), stores);
  EXPECT_EQ(count(*m, OpKind::DescLoad), 1);
}
