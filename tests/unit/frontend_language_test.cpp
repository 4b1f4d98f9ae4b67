// Language features met in real Triton kernels (outside this repository) that the front end must
// read: each test is a small kernel of our own that uses one feature, checked on the printed IR or
// run through the CPU executor against values computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "backends/exec/Executor.h"
#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostic.h"
#include "ir/Printer.h"
#include "TempDir.h"

using tawa::exec::Arg;
using tawa::exec::Buffer;
using tawa::ir::Scalar;

namespace {

std::string writeKernel(const std::string& body) {
  static std::atomic<int> counter{0};
  auto dir = tawa::test::tempDir() / "fe_language";
  std::filesystem::create_directories(dir);
  auto path = dir / ("k" + std::to_string(counter++) + ".py");
  std::ofstream(path) << "import triton\nimport triton.language as tl\n\n" << body;
  return path.string();
}

std::unique_ptr<tawa::ir::Module> compile(const std::string& body, const std::string& kernel, const std::string& spec) {
  return tawa::frontend::compileTriton(writeKernel(body), kernel, tawa::driver::parseSpec(spec));
}

std::string lower(const std::string& body, const std::string& kernel, const std::string& spec) {
  return tawa::ir::print(*compile(body, kernel, spec), {false});
}

// The formatted UserError that compiling raises, "file:line:col: error: ..." ("" when it compiles).
std::string errorOf(const std::string& body, const std::string& kernel, const std::string& spec) {
  try {
    compile(body, kernel, spec);
  } catch (const tawa::UserError& e) {
    return e.format();
  }
  return "";
}

void run(tawa::ir::Module& m, const std::string& kernel, std::vector<Arg> args, std::vector<Buffer>& bufs,
         int64_t programs) {
  tawa::exec::LaunchOptions opt;
  opt.grid = {programs, 1, 1};
  const tawa::ir::Func* f = m.lookup(kernel);
  ASSERT_NE(f, nullptr);
  tawa::exec::launch(m, *f, args, bufs, opt);
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing: " << (part) << "\nin:\n" << (text)

}  // namespace

TEST(FrontendLanguage, KeywordOnlyParameters) {
  const char* src = R"(
@triton.jit
def scale(x, *, factor: tl.constexpr = 2, shift=0):
    return x * factor + shift

@triton.jit
def k(p, n, *, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(p + offs, mask=offs < n)
    tl.store(p + offs, scale(x, factor=3, shift=1), mask=offs < n)
)";
  auto m = compile(src, "k", "p:*fp32[16], n:i32=16, B=16");
  std::vector<Buffer> bufs{Buffer("p", Scalar::F32, {16})};
  for (int i = 0; i < 16; ++i) bufs[0].setFloat(i, i);
  run(*m, "k", {Arg::buf(0), Arg::integer(16)}, bufs, 1);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bufs[0].getFloat(i), 3.0 * i + 1) << i;

  // A keyword-only parameter cannot be passed by position.
  std::string err = errorOf(R"(
@triton.jit
def h(x, *, f):
    return x * f

@triton.jit
def k(p):
    tl.store(p, h(1.0, 2.0))
)",
                            "k", "p:*fp32[1]");
  EXPECT_HAS(err, "takes 1 positional argument(s) but 2 were given");
  EXPECT_HAS(err, ":11:24");
  // Variadic parameters remain outside the subset, with a located error.
  err = errorOf("@triton.jit\ndef k(p, *rest):\n    pass\n", "k", "p:*fp32[1]");
  EXPECT_HAS(err, "variadic arguments): not supported yet");
  EXPECT_HAS(err, ":5:10");
}

TEST(FrontendLanguage, CallingADtypeConvertsTheValue) {
  // Online softmax with running scalars initialised by calling a dtype.
  const char* src = R"(
@triton.jit
def k(x, out, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = tl.float32(-float("inf"))
    d = tl.float32(0.0)
    i = tl.int64(0)
    for start in tl.range(0, n, B):
        v = tl.load(x + start + offs, mask=start + offs < n, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(v, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new), axis=0)
        m = m_new
        i += 1
    tl.store(out, m + tl.log(d))
    tl.store(out + 1, i.to(tl.float32))
)";
  std::string ir = lower(src, "k", "x:*fp32[40], out:*fp32[2], n:i32=40, B=16");
  EXPECT_HAS(ir, ": i64");
  auto m = compile(src, "k", "x:*fp32[40], out:*fp32[2], n:i32=40, B=16");
  std::vector<Buffer> bufs{Buffer("x", Scalar::F32, {40}), Buffer("out", Scalar::F32, {2})};
  double mx = -1e30, sum = 0;
  for (int i = 0; i < 40; ++i) {
    bufs[0].setFloat(i, 0.1 * (i % 7) - 0.2);
    mx = std::max(mx, bufs[0].getFloat(i));
  }
  for (int i = 0; i < 40; ++i) sum += std::exp(bufs[0].getFloat(i) - mx);
  run(*m, "k", {Arg::buf(0), Arg::buf(1), Arg::integer(40)}, bufs, 1);
  EXPECT_NEAR(bufs[1].getFloat(0), mx + std::log(sum), 1e-5);
  EXPECT_EQ(bufs[1].getFloat(1), 3.0);
  EXPECT_HAS(errorOf("@triton.jit\ndef k(p):\n    tl.store(p, tl.float32(1.0, 2.0))\n", "k", "p:*fp32[1]"),
             "takes exactly one value");
}

TEST(FrontendLanguage, EarlyReturnInsideAFoldedIf) {
  // `if FLAG:` folds; the runtime `if ...: return` inside it must still skip the rest of the kernel.
  const char* src = R"(
@triton.jit
def k(flags, out, B: tl.constexpr, CHECK: tl.constexpr):
    pid = tl.program_id(0)
    if CHECK:
        f = tl.load(flags + pid)
        if f == 0:
            return
    offs = tl.arange(0, B)
    tl.store(out + pid * B + offs, offs + pid * 100)
)";
  for (bool check : {true, false}) {
    auto m = compile(src, "k", std::string("flags:*i32[4], out:*i32[16], B=4, CHECK=") + (check ? "True" : "False"));
    std::vector<Buffer> bufs{Buffer("flags", Scalar::I32, {4}), Buffer("out", Scalar::I32, {16})};
    for (int i = 0; i < 4; ++i) bufs[0].setInt(i, i % 2);
    for (int i = 0; i < 16; ++i) bufs[1].setInt(i, -1);
    run(*m, "k", {Arg::buf(0), Arg::buf(1)}, bufs, 4);
    for (int p = 0; p < 4; ++p)
      for (int j = 0; j < 4; ++j) {
        int64_t want = (check && p % 2 == 0) ? -1 : j + p * 100;
        EXPECT_EQ(bufs[1].getInt(p * 4 + j), want) << "CHECK=" << check << " program " << p << " element " << j;
      }
  }
}

TEST(FrontendLanguage, EarlyReturnWithAnElseBranch) {
  // The rest of the kernel runs after the else branch, seeing what it assigned.
  const char* src = R"(
@triton.jit
def k(out, n, B: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n:
        return
    else:
        base = pid * 10
    offs = tl.arange(0, B)
    tl.store(out + pid * B + offs, offs + base)
)";
  auto m = compile(src, "k", "out:*i32[16], n:i32=2, B=4");
  std::vector<Buffer> bufs{Buffer("out", Scalar::I32, {16})};
  for (int i = 0; i < 16; ++i) bufs[0].setInt(i, -1);
  run(*m, "k", {Arg::buf(0), Arg::integer(2)}, bufs, 4);
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(bufs[0].getInt(p * 4 + j), p < 2 ? j + p * 10 : -1) << p << " " << j;
  // An early exit followed by a valued return is still outside the subset.
  std::string err = errorOf(R"(
@triton.jit
def h(x, c):
    if c > 0:
        return
    return x

@triton.jit
def k(p, c):
    y = h(1.0, c)
)",
                            "k", "p:*fp32[1], c:i32=1");
  EXPECT_HAS(err, "must not return a value: not supported yet");
}

TEST(FrontendLanguage, AssertStatementsAndDeviceAsserts) {
  const char* src = R"(
@triton.jit
def k(p, n, B: tl.constexpr):
    assert B % 16 == 0, "B must be a multiple of 16"
    assert n > 0
    tl.device_assert(n > 0, "n positive")
    offs = tl.arange(0, B)
    tl.store(p + offs, offs, mask=offs < n)
)";
  std::string ir = lower(src, "k", "p:*i32[16], n:i32=4, B=16");
  EXPECT_HAS(ir, "tile.store");
  std::string err = errorOf(src, "k", "p:*i32[16], n:i32=4, B=8");
  EXPECT_HAS(err, "assertion failed: B must be a multiple of 16");
  EXPECT_HAS(err, ":7:5");
  err = errorOf("@triton.jit\ndef k(p):\n    tl.device_assert(1 == 2, \"never\")\n", "k", "p:*i32[1]");
  EXPECT_HAS(err, "device_assert failed: never");
  // Device printing is not compiled: a located error, not a silently dropped call.
  err = errorOf("@triton.jit\ndef k(p, n):\n    tl.device_print(\"n\", n)\n", "k", "p:*i32[1], n:i32=4");
  EXPECT_HAS(err, "tl.device_print is not supported");
  EXPECT_HAS(err, ":6:5");
}

TEST(FrontendLanguage, TypeAttributesOfPointersAndTensors) {
  const char* src = R"(
@triton.jit
def k(x_ptr, o_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    y = x.to(o_ptr.type.element_ty)
    tl.static_assert(x.type.element_ty == tl.float32)
    tl.static_assert(x.type.scalar == x.dtype)
    tl.static_assert(x.type.shape[0] == B)
    tl.static_assert((x_ptr + offs).type.element_ty == x_ptr.type)
    tl.static_assert(x_ptr.type.element_ty == tl.float32)
    tl.static_assert(x.type != tl.float32)
    tl.store(o_ptr + offs, y + pow(2, 3))
)";
  std::string ir = lower(src, "k", "x_ptr:*fp32[16], o_ptr:*fp16[16], B=16");
  EXPECT_HAS(ir, "tile.cast %x : tile<16xf16>");
  EXPECT_HAS(ir, "value = 8.0");
  std::string err = errorOf("@triton.jit\ndef k(p):\n    x = tl.load(p + tl.arange(0, 4))\n    y = x.type.bogus\n", "k",
                            "p:*fp32[4]");
  EXPECT_HAS(err, "no attribute 'bogus'");
}

TEST(FrontendLanguage, DowncastRoundingKeyword) {
  const char* src = R"(
@triton.jit
def k(x_ptr, o_ptr, B: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to(tl.float16, fp_downcast_rounding=MODE))
)";
  std::string ir = lower(src, "k", "x_ptr:*fp32[16], o_ptr:*fp16[16], B=16, MODE='rtne'");
  EXPECT_HAS(ir, "tile.cast");
  EXPECT_HAS(errorOf(src, "k", "x_ptr:*fp32[16], o_ptr:*fp16[16], B=16, MODE='rtz'"),
             "fp_downcast_rounding other than \"rtne\": not supported yet");
}

TEST(FrontendLanguage, ConstexprAnnotatedParameterTakesATensor) {
  // Triton specializes a call on its constant arguments; a tl.constexpr annotation on the callee's
  // parameter does not reject a tensor, which is then an ordinary runtime value.
  const char* src = R"(
@triton.jit
def add_rows(acc, offs: tl.constexpr, SCALE: tl.constexpr):
    return acc + offs * SCALE

@triton.jit
def k(out, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros([B], dtype=tl.int32)
    tl.store(out + offs, add_rows(acc, offs, 3))
)";
  auto m = compile(src, "k", "out:*i32[8], B=4");
  std::vector<Buffer> bufs{Buffer("out", Scalar::I32, {8})};
  run(*m, "k", {Arg::buf(0)}, bufs, 2);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(bufs[0].getInt(i), 3 * i) << i;
}

// Constant expressions follow Python: `//` floors and `%` takes the divisor's sign (7 // -2 == -4,
// 7 % -2 == -1), for ints and floats. Random operands of every sign, against Python's definition
// computed here (the operands keep every intermediate exact in double).
TEST(FrontendLanguage, ConstexprFloorDivisionAndModuloFollowPython) {
  const std::string body = R"(@triton.jit
def fold(i_ptr, f_ptr, A: tl.constexpr, B: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr):
    tl.store(i_ptr + 0, A // B)
    tl.store(i_ptr + 1, A % B)
    tl.store(f_ptr + 0, FA // FB)
    tl.store(f_ptr + 1, FA % FB)
)";
  uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> num(-1000, 1000), den(-40, 40);
  for (int trial = 0; trial < 60; ++trial) {
    int a = num(rng), b = den(rng);
    if (b == 0) b = trial % 2 ? 7 : -7;
    if (trial < 4) a = (trial % 2 ? -7 : 7), b = (trial < 2 ? 2 : -2);  // the cases of Python's documentation
    double fa = num(rng) / 4.0, fb = den(rng) / 4.0;
    if (fb == 0) fb = -1.25;
    const int64_t q = static_cast<int64_t>(std::floor(static_cast<double>(a) / b)), m = a - b * q;
    const double fq = std::floor(fa / fb), fm = fa - fb * fq;
    auto m1 = compile(body, "fold",
                      "i_ptr:*i64[2], f_ptr:*fp64[2], A=" + std::to_string(a) + ", B=" + std::to_string(b) + ", FA=" + std::to_string(fa) +
                          ", FB=" + std::to_string(fb));
    std::vector<Buffer> bufs = {Buffer("i_ptr", Scalar::I64, {2}), Buffer("f_ptr", Scalar::F64, {2})};
    run(*m1, "fold", {Arg::buf(0), Arg::buf(1)}, bufs, 1);
    EXPECT_EQ(bufs[0].getInt(0), q) << a << " // " << b;
    EXPECT_EQ(bufs[0].getInt(1), m) << a << " % " << b;
    EXPECT_EQ(bufs[1].getFloat(0), fq) << fa << " // " << fb;
    EXPECT_EQ(bufs[1].getFloat(1), fm) << fa << " % " << fb;
    if (trial < 4) {
      const int64_t python[] = {3, -4, -4, 3};  // 7 // 2, -7 // 2, 7 // -2, -7 // -2
      EXPECT_EQ(q, python[trial]);
    }
  }
}

// Masked loads fill the masked-off lanes with `other` (any value, not only 0), 1-D and 2-D, in f32
// and f16: random bounds, random `other`, random inputs, against the definition computed here.
TEST(FrontendLanguage, MaskedLoadsTakeOtherWhereTheMaskIsOff) {
  const std::string body = R"(@triton.jit
def masked(x_ptr, y_ptr, out_ptr, out2_ptr, n, rows, cols, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=OTHER)
    tl.store(out_ptr + offs, v * 2.0 + 1.0)
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, 32)[None, :]
    t = tl.load(y_ptr + r * 32 + c, mask=(r < rows) & (c < cols), other=OTHER)
    tl.store(out2_ptr + r * 32 + c, t)
)";
  uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 12; ++trial) {
    const bool half = trial % 2;
    const Scalar ty = half ? Scalar::F16 : Scalar::F32;
    const std::string dt = half ? "fp16" : "fp32";
    const int block = 64, programs = 3, total = block * programs;
    const int n = static_cast<int>(rng() % (total + 1)), rows = static_cast<int>(rng() % 17), cols = static_cast<int>(rng() % 33);
    double other = std::ldexp(static_cast<double>(static_cast<int>(rng() % 2001) - 1000), -3);
    if (other == 0) other = -3.5;
    auto m1 = compile(body, "masked",
                      "x_ptr:*" + dt + "[T], y_ptr:*" + dt + "[512], out_ptr:*" + dt + "[T], out2_ptr:*" + dt + "[512], n:i32=" +
                          std::to_string(n) + ", rows:i32=" + std::to_string(rows) + ", cols:i32=" + std::to_string(cols) +
                          ", T=" + std::to_string(total) + ", OTHER=" + std::to_string(other) + ", BLOCK=" + std::to_string(block));
    std::vector<Buffer> bufs = {Buffer("x_ptr", ty, {total}), Buffer("y_ptr", ty, {512}), Buffer("out_ptr", ty, {total}),
                                Buffer("out2_ptr", ty, {512})};
    std::uniform_real_distribution<double> val(-4, 4);
    for (int i = 0; i < total; ++i) bufs[0].setFloat(i, val(rng));
    for (int i = 0; i < 512; ++i) bufs[1].setFloat(i, val(rng));
    run(*m1, "masked",
        {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::buf(3), Arg::integer(n), Arg::integer(rows), Arg::integer(cols)}, bufs, programs);
    // `other` is converted to the element type, then the arithmetic runs in it (f16: rounded per op).
    auto round = [&](double v) { return half ? static_cast<double>(static_cast<_Float16>(v)) : static_cast<double>(static_cast<float>(v)); };
    for (int i = 0; i < total; ++i) {
      double v = i < n ? bufs[0].getFloat(i) : round(other);
      ASSERT_EQ(bufs[2].getFloat(i), round(round(v * 2.0) + 1.0)) << "element " << i << ", n " << n << ", other " << other;
    }
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 32; ++c) {
        double want = r < rows && c < cols ? bufs[1].getFloat(r * 32 + c) : round(other);
        ASSERT_EQ(bufs[3].getFloat(r * 32 + c), want) << "(" << r << ", " << c << "), rows " << rows << ", cols " << cols;
      }
  }
}

// tl.dot of f32 tiles rounds both inputs to tf32 by default (input_precision "tf32": 10 mantissa
// bits, ties away from zero, as the tensor cores take them) and neither with "ieee": random inputs
// against double references that round here (by integer arithmetic on the f32 bits) or do not.
TEST(FrontendLanguage, DotOfF32TilesRoundsBothInputsToTf32) {
  auto tf32 = [](float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    b = (b + 0x1000u) & ~0x1fffu;  // the 13 dropped bits: add half, truncate (ties away from zero)
    float r;
    std::memcpy(&r, &b, 4);
    return r;
  };
  uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-2, 2);
  for (const std::string prec : {"tf32", "ieee"}) {
    const std::string body = R"(@triton.jit
def dot32(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 32 + tl.arange(0, 32)[None, :])
    b = tl.load(b_ptr + tl.arange(0, 32)[:, None] * 16 + r[None, :])
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, input_precision=")" + prec + R"("))
)";
    auto m1 = compile(body, "dot32", "a_ptr:*fp32[512], b_ptr:*fp32[512], c_ptr:*fp32[256]");
    std::vector<Buffer> bufs = {Buffer("a_ptr", Scalar::F32, {512}), Buffer("b_ptr", Scalar::F32, {512}),
                                Buffer("c_ptr", Scalar::F32, {256})};
    for (int i = 0; i < 512; ++i) bufs[0].setFloat(i, val(rng)), bufs[1].setFloat(i, val(rng));
    run(*m1, "dot32", {Arg::buf(0), Arg::buf(1), Arg::buf(2)}, bufs, 1);
    double worst = 0, worstOther = 0;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        double want = 0, other = 0;
        for (int k = 0; k < 32; ++k) {
          float a = static_cast<float>(bufs[0].getFloat(i * 32 + k)), b = static_cast<float>(bufs[1].getFloat(k * 16 + j));
          double rounded = static_cast<double>(tf32(a)) * tf32(b), exact = static_cast<double>(a) * b;
          want += prec == "tf32" ? rounded : exact;
          other += prec == "tf32" ? static_cast<double>(a) * tf32(b) : rounded;  // only B rounded / both rounded
        }
        double got = bufs[2].getFloat(i * 16 + j);
        worst = std::max(worst, std::fabs(got - want));
        worstOther = std::max(worstOther, std::fabs(got - other));
      }
    // f32 accumulation of 32 products of magnitude <= 4: a few ulp of 128. Rounding one input or not
    // moves a sum by about 2^-11 of a product: far more.
    EXPECT_LE(worst, 2e-5) << prec;
    EXPECT_GE(worstOther, 1e-4) << prec;
  }
}

// tl.sigmoid is 1 / (1 + exp(-x)): random inputs of both signs against the double definition.
TEST(FrontendLanguage, SigmoidMatchesItsDefinition) {
  const std::string body = R"(@triton.jit
def sig(x_ptr, y_ptr):
    r = tl.arange(0, 256)
    tl.store(y_ptr + r, tl.sigmoid(tl.load(x_ptr + r)))
)";
  uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> val(-12, 12);
  auto m1 = compile(body, "sig", "x_ptr:*fp32[256], y_ptr:*fp32[256]");
  std::vector<Buffer> bufs = {Buffer("x_ptr", Scalar::F32, {256}), Buffer("y_ptr", Scalar::F32, {256})};
  for (int i = 0; i < 256; ++i) bufs[0].setFloat(i, val(rng));
  run(*m1, "sig", {Arg::buf(0), Arg::buf(1)}, bufs, 1);
  for (int i = 0; i < 256; ++i) {
    double x = bufs[0].getFloat(i), want = 1.0 / (1.0 + std::exp(-x));
    EXPECT_NEAR(bufs[1].getFloat(i), want, 1e-6 * want + 1e-7) << "x = " << x;
  }
}
