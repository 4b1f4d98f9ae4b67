// Lowering of Triton kernels to tile IR: small kernels compiled from text, checked on the printed IR.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Printer.h"
#include "TempDir.h"

namespace {

std::string writeTemp(const std::string& text) {
  static std::atomic<int> counter{0};
  auto dir = tawa::test::tempDir() / "fe_lower";
  std::filesystem::create_directories(dir);
  auto path = dir / ("k" + std::to_string(counter++) + ".py");
  std::ofstream(path) << text;
  return path.string();
}

std::string lower(const std::string& body, const std::string& kernel, const std::string& spec) {
  auto path = writeTemp("import triton\nimport triton.language as tl\n\n" + body);
  auto m = tawa::frontend::compileTriton(path, kernel, tawa::driver::parseSpec(spec));
  return tawa::ir::print(*m, {false});
}

#define EXPECT_HAS(ir, text) EXPECT_NE((ir).find(text), std::string::npos) << "missing: " << (text) << "\nin:\n" << (ir)
#define EXPECT_LACKS(ir, text) EXPECT_EQ((ir).find(text), std::string::npos) << "unexpected: " << (text) << "\nin:\n" << (ir)

}  // namespace

TEST(FrontendLower, ScalarParamsAndConstexprSpecialization) {
  auto ir = lower(R"(
@triton.jit
def k(p, n, s, B: tl.constexpr, D: tl.constexpr = 2):
    offs = tl.arange(0, B * D)
    tl.store(p + offs, s, mask=offs < n)
)",
                  "k", "p:*fp16[64], n:i32=10, s:fp32=1.5, B=16, num_warps=8");
  EXPECT_HAS(ir, "tile.func @k(%p: ptr<f16>, %n: i32, %s: f32) attributes {num_warps = 8}");
  EXPECT_HAS(ir, "tile.arange {end = 32, start = 0} : tile<32xi32>");
  // The stored scalar is cast to the pointee type and splatted.
  EXPECT_HAS(ir, "tile.cast %s : f16");
  EXPECT_HAS(ir, "tile.splat");
}

TEST(FrontendLower, TypePromotion) {
  auto ir = lower(R"(
@triton.jit
def k(a, b, o, i):
    offs = tl.arange(0, 16)
    x = tl.load(a + offs)
    y = tl.load(b + offs)
    z = x * 2.0 + y
    w = offs / 2
    v = offs // 3 + offs % 3
    u = i * 2 + 1
    tl.store(o + offs, z + w + v + u)
)",
                  "k", "a:*fp16[16], b:*fp32[16], o:*fp32[16], i:i32=1");
  EXPECT_HAS(ir, "tile.constant {value = 2.0} : tile<16xf16>");  // a float literal adopts the tile's type
  EXPECT_HAS(ir, "tile.cast %5 : tile<16xf32>");  // f16 + f32 -> f32
  EXPECT_HAS(ir, "tile.cast %offs : tile<16xf32>");                 // int / int -> f32
  EXPECT_HAS(ir, "tile.div %offs");                                 // int // int truncates
  EXPECT_HAS(ir, "tile.rem %offs");
  EXPECT_HAS(ir, "tile.constant {value = 2} : i32");
}

TEST(FrontendLower, BroadcastingAndSubscripts) {
  auto ir = lower(R"(
@triton.jit
def k(p, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    ptrs = p + rm[:, None] * N + rn[None, :]
    x = tl.load(ptrs)
    s = tl.sum(x, axis=1)
    m = tl.max(x, 0, keep_dims=True)
    tl.store(ptrs, x - s[:, None] + m + x.T.T)
)",
                  "k", "p:*fp32[64], M=8, N=8");
  EXPECT_HAS(ir, "tile.expand_dims %rm {axis = 1} : tile<8x1xi32>");
  EXPECT_HAS(ir, "tile.expand_dims %rn {axis = 0} : tile<1x8xi32>");
  EXPECT_HAS(ir, "tile.broadcast");
  EXPECT_HAS(ir, "tile.reduce %x {axis = 1, kind = \"sum\"} : tile<8xf32>");
  EXPECT_HAS(ir, "tile.reduce %x {axis = 0, kind = \"max\"} : tile<8xf32>");
  EXPECT_HAS(ir, "tile.permute %x {order = [1, 0]} : tile<8x8xf32>");
}

TEST(FrontendLower, RuntimeForCarriesReassignedLiveValues) {
  auto ir = lower(R"(
@triton.jit
def k(p, n):
    acc = 0.0
    cnt = 0
    unused = 1
    offs = tl.arange(0, 16)
    for i in range(0, n, 2):
        x = tl.load(p + offs)
        acc += tl.sum(x, axis=0)
        cnt += 1
        unused = 5
    tl.store(p + offs, acc + cnt)
)",
                  "k", "p:*fp32[16], n:i32=4");
  EXPECT_HAS(ir, "%acc_1, %cnt_1 = tile.for %0, %n, %1, %acc, %cnt : f32, i32");
  EXPECT_HAS(ir, "tile.yield %acc_3, %cnt_3");
}

TEST(FrontendLower, StaticRangeUnrollsAndConstexprIfFolds) {
  auto ir = lower(R"(
@triton.jit
def k(p, FLAG: tl.constexpr):
    offs = tl.arange(0, 16)
    acc = tl.zeros([16], dtype=tl.float32)
    for i in tl.static_range(3):
        if i == 1:
            acc += 10.0
        else:
            acc += 1.0
    if FLAG:
        acc = acc * 2
    tl.store(p + offs, acc)
)",
                  "k", "p:*fp32[16], FLAG=False");
  EXPECT_LACKS(ir, "tile.for");
  EXPECT_LACKS(ir, "tile.if");
  EXPECT_LACKS(ir, "tile.mul");
  EXPECT_HAS(ir, "value = 10.0");
}

TEST(FrontendLower, RuntimeIfYieldsAssignedValues) {
  auto ir = lower(R"(
@triton.jit
def k(p, n):
    offs = tl.arange(0, 16)
    x = tl.load(p + offs)
    if n > 3:
        x = x * 2
        y = 1.0
    else:
        y = 2.0
    tl.store(p + offs, x + y)
)",
                  "k", "p:*fp32[16], n:i32=4");
  EXPECT_HAS(ir, "%x_1, %y = tile.if");
  EXPECT_HAS(ir, ": tile<16xf32>, f32");
}

TEST(FrontendLower, WhileLoop) {
  auto ir = lower(R"(
@triton.jit
def k(p, n):
    i = 0
    s = 0.0
    while i < n:
        s += tl.load(p + i)
        i += 1
    tl.store(p, s)
)",
                  "k", "p:*fp32[16], n:i32=4");
  EXPECT_HAS(ir, "tile.while");
  EXPECT_HAS(ir, "tile.condition");
}

TEST(FrontendLower, InlinedCallsWithTupleReturnsAndKeywords) {
  auto ir = lower(R"(
@triton.jit
def k(p, B: tl.constexpr):
    offs = tl.arange(0, B)
    a, b = helper(tl.load(p + offs), scale=3)
    tl.store(p + offs, a + b)

@triton.jit
def helper(x, scale, SHIFT: tl.constexpr = 1):
    if scale == 3:
        y = x * scale
    else:
        y = x
    return y, x + SHIFT
)",
                  "k", "p:*fp32[16], B=16");
  EXPECT_LACKS(ir, "tile.if");
  EXPECT_LACKS(ir, "tile.call");
  EXPECT_HAS(ir, "value = 3.0");
  EXPECT_HAS(ir, "value = 1.0");
}

TEST(FrontendLower, DotLoadOtherAndWhere) {
  auto ir = lower(R"(
@triton.jit
def k(a, b, c, n):
    r = tl.arange(0, 16)
    x = tl.load(a + r[:, None] * 16 + r[None, :], mask=r[:, None] < n, other=0)
    y = tl.load(b + r[:, None] * 16 + r[None, :])
    acc = tl.dot(x, y)
    acc = tl.dot(x.to(tl.float32), y.to(tl.float32), acc, input_precision="ieee")
    acc = tl.where(acc > 0, acc, 0.0)
    tl.store(c + r[:, None] * 16 + r[None, :], acc)
)",
                  "k", "a:*fp16[256], b:*fp16[256], c:*fp32[256], n:i32=9");
  EXPECT_HAS(ir, "tile.constant {value = 0.0} : tile<16x16xf16>");
  EXPECT_HAS(ir, "tile.dot %x, %y : tile<16x16xf32>");
  EXPECT_HAS(ir, "{input_precision = \"ieee\"} : tile<16x16xf32>");
  EXPECT_HAS(ir, "tile.select");
}

TEST(FrontendLower, MathInF32ForHalfInputs) {
  auto ir = lower(R"(
@triton.jit
def k(p):
    r = tl.arange(0, 16)
    x = tl.load(p + r)
    tl.store(p + r, tl.exp(x) + tl.math.sqrt(x) + tl.abs(x))
)",
                  "k", "p:*fp16[16]");
  EXPECT_HAS(ir, "tile.cast %x : tile<16xf32>");
  EXPECT_HAS(ir, "tile.exp %4 : tile<16xf32>");
  EXPECT_HAS(ir, "tile.cast %5 : tile<16xf16>");
  EXPECT_HAS(ir, "tile.abs %x : tile<16xf16>");
}

TEST(FrontendLower, DescriptorsAndIsinstance) {
  auto ir = lower(R"(
@triton.jit
def k(p, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(p, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    if isinstance(d, tl.tensor_descriptor):
        x = d.load([0, BN])
        d.store([BM, 0], x * 2)
)",
                  "k", "p:*bf16[64,64], M:i32=64, N:i32=64, BM=32, BN=32");
  EXPECT_HAS(ir, "tile.make_desc %p, %M, %N, %N, %0 : tdesc<32x32xbf16>");
  EXPECT_HAS(ir, "tile.desc_load %d");
  EXPECT_HAS(ir, "tile.desc_store %d");
}

TEST(FrontendLower, ConstexprPythonSemantics) {
  auto ir = lower(R"(
G = tl.constexpr(7)

@triton.jit
def k(p):
    A: tl.constexpr = -7 // 2
    B: tl.constexpr = -7 % 3
    C: tl.constexpr = (2 ** 10) >> 2
    D: tl.constexpr = max(3, 5) + min(1, 2) + len((1, 2, 3))
    E: tl.constexpr = tl.cdiv(10, 4) + triton.cdiv(9, 3) + G
    tl.static_assert(A == -4 and B == 2 and C == 256 and D == 9 and E == 13)
    tl.store(p, A + B + C + D + E)
)",
                  "k", "p:*i32[1]");
  EXPECT_HAS(ir, "tile.constant {value = 276} : i32");
}

TEST(FrontendLower, LaunchAndRangeOptionsRecorded) {
  auto ir = lower(R"(
@triton.jit
def k(p, n):
    for i in tl.range(0, n, 1, num_stages=3, warp_specialize=True, flatten=True):
        tl.store(p + i, 1.0)
)",
                  "k", "p:*fp32[16], n:i32=4, num_warps=4, num_stages=2");
  EXPECT_HAS(ir, "attributes {num_stages = 2, num_warps = 4}");
  EXPECT_HAS(ir, "{flatten = true, num_stages = 3, warp_specialize = true}");
}

TEST(FrontendLower, EveryOpIsLocated) {
  auto path = writeTemp("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p):\n    x = tl.load(p + tl.arange(0, 16))\n    tl.store(p + tl.arange(0, 16), x * 2)\n");
  auto m = tawa::frontend::compileTriton(path, "k", tawa::driver::parseSpec("p:*fp32[16]"));
  int n = 0;
  tawa::ir::walk(static_cast<const tawa::ir::Block&>(m->funcs[0]->body), [&](const tawa::ir::Op* op) {
    EXPECT_TRUE(op->loc().known());
    EXPECT_EQ(*op->loc().file, path);
    EXPECT_GE(op->loc().line, 4);
    ++n;
  });
  EXPECT_GT(n, 5);
  std::string text = tawa::ir::print(*m);
  EXPECT_NE(text.find(":6:"), std::string::npos);
}

TEST(FrontendLower, ListKernels) {
  auto path = writeTemp("import triton\n@triton.jit\ndef a(x):\n    pass\ndef host():\n    pass\n@triton.jit()\ndef b(y):\n    pass\n");
  auto names = tawa::frontend::listKernels(path);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "a");
  EXPECT_EQ(names[1], "b");
}

TEST(FrontendLower, EarlyExitOnRuntimeCondition) {
  auto ir = lower(R"(
@triton.jit
def k(p, n, B: tl.constexpr):
    pid = tl.program_id(0)
    if pid * B >= n:
        return
    offs = pid * B + tl.arange(0, B)
    x = tl.load(p + offs)
    if B > 1024:
        return
    tl.store(p + offs, tl.clamp(x, 0.0, 1.0) + tl.zeros_like(x))
    return
)",
                  "k", "p:*fp32[64], n:i32=64, B=16");
  EXPECT_HAS(ir, "tile.if");
  EXPECT_HAS(ir, "tile.store");
  // The store sits in the else region, after the then region's empty yield.
  EXPECT_LT(ir.find("tile.yield"), ir.find("tile.store"));
}

TEST(FrontendLower, MiscLanguageFeatures) {
  auto ir = lower(R"(
@triton.jit
def act(x, KIND: tl.constexpr):
    if KIND == "relu":
        return tl.maximum(x, 0.0)
    return x

@triton.jit
def k(p, n, OPT: tl.constexpr = None, DT: tl.constexpr = tl.float16):
    r = tl.arange(0, 16)
    x = tl.load(p + r, mask=r < n, other=0.0)
    y = x if OPT is None else x * 2
    m = max(n, 3)
    s = 1.5 if n > 2 else 2.5
    z = tl.reshape(tl.expand_dims(y, 0), (4, 4))
    z = tl.trans(z)
    z = tl.full((4, 4), n, tl.int32).to(tl.float32) + z
    tl.static_assert(x.dtype == tl.float32 and p.dtype.element_ty == tl.float32)
    tl.static_assert(z.shape == (4, 4) and z.shape[0] == 4)
    f = act
    w = f(tl.reshape(z, [16]), "relu").to(DT).to(tl.float32)
    tl.store(p + r, w * s + m)
)",
                  "k", "p:*fp32[16], n:i32=5");
  EXPECT_HAS(ir, "tile.reshape");
  EXPECT_HAS(ir, "tile.permute");
  EXPECT_HAS(ir, "tile.max %n");
  EXPECT_HAS(ir, "tile.select");
  EXPECT_HAS(ir, ": tile<16xf16>");
  EXPECT_LACKS(ir, "tile.if");
}
