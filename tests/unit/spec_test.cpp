#include "driver/Spec.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

using tawa::UserError;
using tawa::driver::ConstValue;
using tawa::driver::DtypeValue;
using tawa::driver::parseDtypeName;
using tawa::driver::parseSpec;
using tawa::driver::Spec;
using tawa::driver::SpecEntry;
using tawa::ir::Scalar;

namespace {

// A fresh seed per run, or TAWA_TEST_SEED to replay a failure.
unsigned testSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}

UserError specError(const std::string& text) {
  try {
    parseSpec(text);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for spec: " << text;
  return UserError({}, "");
}

#define EXPECT_SPEC_ERROR(text, col_, substr_)                                         \
  do {                                                                                 \
    UserError e_ = specError(text);                                                    \
    EXPECT_EQ(e_.loc.col, col_) << e_.format();                                        \
    EXPECT_EQ(e_.loc.line, 1);                                                         \
    EXPECT_NE(std::string(e_.what()).find(substr_), std::string::npos) << e_.format(); \
    if (e_.loc.file) {                                                                 \
      EXPECT_EQ(*e_.loc.file, "<spec>");                                               \
    }                                                                                  \
  } while (0)

}  // namespace

TEST(SpecParse, FullExample) {
  Spec s = parseSpec("a:*fp16[M,K], b:*fp16[K,N], M:i32=512, K:i32=512, N:i32=256, BLOCK_M=64, num_warps=4");
  ASSERT_EQ(s.entries.size(), 7u);
  const SpecEntry& a = s.entries[0];
  EXPECT_EQ(a.kind, SpecEntry::Kind::Buffer);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, Scalar::F16);
  ASSERT_EQ(a.dims.size(), 2u);
  EXPECT_EQ(std::get<std::string>(a.dims[0]), "M");
  EXPECT_EQ(std::get<std::string>(a.dims[1]), "K");
  EXPECT_EQ(a.divisibility, 0);
  EXPECT_EQ(a.loc.str(), "<spec>:1:1");
  EXPECT_EQ(s.entries[1].loc.col, 15);
  const SpecEntry& m = s.entries[2];
  EXPECT_EQ(m.kind, SpecEntry::Kind::Scalar);
  EXPECT_EQ(m.dtype, Scalar::I32);
  EXPECT_EQ(std::get<int64_t>(m.value), 512);
  const SpecEntry* bm = s.find("BLOCK_M");
  ASSERT_NE(bm, nullptr);
  EXPECT_EQ(bm->kind, SpecEntry::Kind::Constexpr);
  EXPECT_EQ(std::get<int64_t>(bm->value), 64);
  EXPECT_EQ(std::get<int64_t>(s.find("num_warps")->value), 4);
  EXPECT_EQ(s.find("missing"), nullptr);

  auto iv = s.intValues();
  EXPECT_EQ(iv.size(), 5u);
  EXPECT_EQ(iv.at("M"), 512);
  EXPECT_EQ(iv.at("N"), 256);
  EXPECT_EQ(iv.at("num_warps"), 4);
  EXPECT_EQ(iv.count("a"), 0u);
  EXPECT_EQ(s.shapeOf(a), (std::vector<int64_t>{512, 512}));
  EXPECT_EQ(s.shapeOf(s.entries[1]), (std::vector<int64_t>{512, 256}));
}

TEST(SpecParse, ConstexprForms) {
  Spec s = parseSpec(
      "BLOCK_M=64, EPS=1e-5, CAUSAL=True, OFF=False, ACT=\"relu\", ACT2='gelu', DTYPE=tl.float16, NEG=-3, "
      "POS=+2.5, HALF=.5, WHOLE=2., ESC='a\\'b,c', BF=bf16, BIG=-9223372036854775808");
  auto v = [&](const char* n) { return s.find(n)->value; };
  EXPECT_EQ(std::get<int64_t>(v("BLOCK_M")), 64);
  EXPECT_DOUBLE_EQ(std::get<double>(v("EPS")), 1e-5);
  EXPECT_EQ(std::get<bool>(v("CAUSAL")), true);
  EXPECT_EQ(std::get<bool>(v("OFF")), false);
  EXPECT_EQ(std::get<std::string>(v("ACT")), "relu");
  EXPECT_EQ(std::get<std::string>(v("ACT2")), "gelu");
  EXPECT_EQ(std::get<DtypeValue>(v("DTYPE")).scalar, Scalar::F16);
  EXPECT_EQ(std::get<int64_t>(v("NEG")), -3);
  EXPECT_DOUBLE_EQ(std::get<double>(v("POS")), 2.5);
  EXPECT_DOUBLE_EQ(std::get<double>(v("HALF")), 0.5);
  EXPECT_DOUBLE_EQ(std::get<double>(v("WHOLE")), 2.0);
  EXPECT_EQ(std::get<std::string>(v("ESC")), "a'b,c");  // a comma inside quotes does not split entries
  EXPECT_EQ(std::get<DtypeValue>(v("BF")).scalar, Scalar::BF16);
  EXPECT_EQ(std::get<int64_t>(v("BIG")), INT64_MIN);
  for (const auto& e : s.entries) EXPECT_EQ(e.kind, SpecEntry::Kind::Constexpr) << e.name;
  auto iv = s.intValues();
  EXPECT_EQ(iv.at("CAUSAL"), 1);
  EXPECT_EQ(iv.at("OFF"), 0);
  EXPECT_EQ(iv.count("EPS"), 0u);
  EXPECT_EQ(iv.count("ACT"), 0u);
  EXPECT_EQ(iv.count("DTYPE"), 0u);
}

TEST(SpecParse, ScalarTypes) {
  Spec s = parseSpec("x:fp32=1.5, h:fp16=2, c:i1=True, d:i1=0, b:i8=-128, w:i64=-9223372036854775807, f:f64=-1e300");
  EXPECT_DOUBLE_EQ(std::get<double>(s.find("x")->value), 1.5);
  EXPECT_DOUBLE_EQ(std::get<double>(s.find("h")->value), 2.0);  // floats take integers, stored as double
  EXPECT_EQ(std::get<int64_t>(s.find("c")->value), 1);
  EXPECT_EQ(std::get<int64_t>(s.find("d")->value), 0);
  EXPECT_EQ(std::get<int64_t>(s.find("b")->value), -128);
  EXPECT_EQ(std::get<int64_t>(s.find("w")->value), -9223372036854775807LL);
  EXPECT_DOUBLE_EQ(std::get<double>(s.find("f")->value), -1e300);
  EXPECT_EQ(s.find("x")->dtype, Scalar::F32);
  EXPECT_EQ(s.find("h")->dtype, Scalar::F16);
  EXPECT_EQ(s.find("c")->dtype, Scalar::I1);
  EXPECT_EQ(s.find("b")->dtype, Scalar::I8);
  EXPECT_EQ(s.find("w")->dtype, Scalar::I64);
  EXPECT_EQ(s.find("f")->dtype, Scalar::F64);
  EXPECT_EQ(s.find("w")->kind, SpecEntry::Kind::Scalar);
  EXPECT_EQ(s.find("f")->kind, SpecEntry::Kind::Scalar);
  auto iv = s.intValues();
  EXPECT_EQ(iv.count("x"), 0u);
  EXPECT_EQ(iv.at("b"), -128);
  EXPECT_EQ(iv.at("c"), 1);
}

TEST(SpecParse, DivisibilityAndLiteralDims) {
  Spec s = parseSpec("a:*fp16:16[M,K], o:*f32 : 8 [ 128 , K , ], M=64, K:i64=32");
  EXPECT_EQ(s.entries[0].divisibility, 16);
  EXPECT_EQ(s.entries[1].divisibility, 8);
  EXPECT_EQ(s.entries[1].dtype, Scalar::F32);
  EXPECT_EQ(std::get<int64_t>(s.entries[1].dims[0]), 128);
  EXPECT_EQ(s.shapeOf(s.entries[1]), (std::vector<int64_t>{128, 32}));
  EXPECT_EQ(s.shapeOf(s.entries[0]), (std::vector<int64_t>{64, 32}));
}

TEST(SpecParse, DtypeSpellings) {
  const std::pair<const char*, Scalar> cases[] = {
      {"fp16", Scalar::F16},
      {"f16", Scalar::F16},
      {"float16", Scalar::F16},
      {"tl.float16", Scalar::F16},
      {"bf16", Scalar::BF16},
      {"bfloat16", Scalar::BF16},
      {"tl.bfloat16", Scalar::BF16},
      {"fp32", Scalar::F32},
      {"f32", Scalar::F32},
      {"float32", Scalar::F32},
      {"tl.float32", Scalar::F32},
      {"fp64", Scalar::F64},
      {"f64", Scalar::F64},
      {"tl.float64", Scalar::F64},
      {"fp8e4nv", Scalar::F8E4M3},
      {"f8e4m3", Scalar::F8E4M3},
      {"tl.float8e4nv", Scalar::F8E4M3},
      {"fp8e5", Scalar::F8E5M2},
      {"f8e5m2", Scalar::F8E5M2},
      {"tl.float8e5", Scalar::F8E5M2},
      {"i1", Scalar::I1},
      {"int1", Scalar::I1},
      {"tl.int1", Scalar::I1},
      {"i8", Scalar::I8},
      {"tl.int8", Scalar::I8},
      {"i16", Scalar::I16},
      {"int16", Scalar::I16},
      {"i32", Scalar::I32},
      {"tl.int32", Scalar::I32},
      {"i64", Scalar::I64},
      {"int64", Scalar::I64},
      {"tl.int64", Scalar::I64},
      {"tl.fp16", Scalar::F16},
      {"u8", Scalar::U8},
      {"tl.uint8", Scalar::U8},
      {"u16", Scalar::U16},
      {"uint16", Scalar::U16},
      {"u32", Scalar::U32},
      {"tl.uint32", Scalar::U32},
      {"u64", Scalar::U64},
      {"uint64", Scalar::U64},
  };
  for (const auto& [name, want] : cases) {
    auto got = parseDtypeName(name);
    ASSERT_TRUE(got.has_value()) << name;
    EXPECT_EQ(*got, want) << name;
    // The same spelling works as a buffer element, a scalar type and a constexpr value.
    Spec s = parseSpec(std::string("p:*") + name + "[4], D=" + name);
    EXPECT_EQ(s.entries[0].dtype, want) << name;
    EXPECT_EQ(std::get<DtypeValue>(s.entries[1].value).scalar, want) << name;
  }
  for (const char* bad : {"fp17", "", "tl.", "float", "u7", "uint", "FP16", "tl.tl.float16", "int"})
    EXPECT_FALSE(parseDtypeName(bad).has_value()) << bad;
}

TEST(SpecParse, EmptyAndTrailingComma) {
  EXPECT_TRUE(parseSpec("").entries.empty());
  EXPECT_TRUE(parseSpec("  \t ").entries.empty());
  EXPECT_EQ(parseSpec("M=1, N=2,").entries.size(), 2u);
}

// Random values and random whitespace between every token parse to the same spec.
TEST(SpecParse, RandomWhitespaceAndValues) {
  unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with TAWA_TEST_SEED)");
  std::mt19937 rng(seed);
  auto ws = [&] {
    static const char kWs[] = {' ', '\t', '\n'};
    std::string s;
    for (int n = std::uniform_int_distribution<int>(0, 2)(rng); n > 0; --n) s += kWs[rng() % 3];
    return s;
  };
  for (int iter = 0; iter < 200; ++iter) {
    int64_t m = std::uniform_int_distribution<int64_t>(1, 1 << 20)(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(1, 1 << 20)(rng);
    int64_t blk = std::uniform_int_distribution<int64_t>(-1000, 1000)(rng);
    double eps = std::uniform_real_distribution<double>(-10, 10)(rng);
    int div = 1 << (rng() % 6);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", eps);
    std::string text = ws() + "a" + ws() + ":" + ws() + "*" + ws() + "bf16" + ws() + ":" + ws() + std::to_string(div) +
                       ws() + "[" + ws() + "M" + ws() + "," + ws() + "K" + ws() + "]" + ws() + "," + ws() + "M" + ws() +
                       ":" + ws() + "i32" + ws() + "=" + ws() + std::to_string(m) + ws() + "," + ws() + "K" + ws() +
                       "=" + ws() + std::to_string(k) + ws() + "," + ws() + "B" + ws() + "=" + ws() +
                       std::to_string(blk) + ws() + "," + ws() + "E" + ws() + "=" + ws() + buf + ws();
    SCOPED_TRACE(text);
    Spec s = parseSpec(text);
    ASSERT_EQ(s.entries.size(), 5u);
    EXPECT_EQ(s.entries[0].divisibility, div);
    EXPECT_EQ(s.entries[0].dtype, Scalar::BF16);
    EXPECT_EQ(s.shapeOf(s.entries[0]), (std::vector<int64_t>{m, k}));
    EXPECT_EQ(std::get<int64_t>(s.find("B")->value), blk);
    EXPECT_EQ(std::get<double>(s.find("E")->value), eps);  // %.17g round-trips exactly
    EXPECT_EQ(s.entries[3].loc.col, static_cast<int>(text.find('B')) + 1);
  }
}

TEST(SpecErrors, UnknownDtype) {
  EXPECT_SPEC_ERROR("a:*fp17[4]", 4,
                    "unknown dtype 'fp17' (expected fp16, bf16, fp32, fp64, fp8e4nv, fp8e5, i1, i8, i16, i32, i64, u8, u16, u32, u64)");
  EXPECT_SPEC_ERROR("M:u24=4", 3, "unknown dtype 'u24'");
  EXPECT_SPEC_ERROR("a:*[4]", 4, "expected a dtype after '*'");
}

TEST(SpecErrors, UnknownDimName) {
  EXPECT_SPEC_ERROR("a:*fp16[M, Q], M=4", 12, "dimension 'Q' of buffer 'a' names no scalar or constexpr in the spec");
  EXPECT_SPEC_ERROR("a:*fp16[E], E=1.5", 9, "dimension 'E' of buffer 'a' names a float constexpr, not an integer");
  EXPECT_SPEC_ERROR("a:*fp16[4], b:*fp16[a]", 21, "names a buffer");
  EXPECT_SPEC_ERROR("a:*fp16[M], M:i32=-4", 9, "dimension 'M' of buffer 'a' is -4; dimensions must be positive");
  EXPECT_SPEC_ERROR("a:*fp16[S], S='x'", 9, "names a string constexpr");
}

TEST(SpecErrors, BadDims) {
  EXPECT_SPEC_ERROR("a:*fp16", 8, "buffer 'a' has no shape");
  EXPECT_SPEC_ERROR("a:*fp16, M=1", 8, "buffer 'a' has no shape");
  EXPECT_SPEC_ERROR("a:*fp16[]", 8, "empty shape");
  EXPECT_SPEC_ERROR("a:*fp16[4, 0]", 12, "is 0; dimensions must be positive");
  EXPECT_SPEC_ERROR("a:*fp16[4, -2]", 12, "unexpected '-' in the shape of buffer 'a'");
  EXPECT_SPEC_ERROR("a:*fp16[4, 16x]", 12, "dimension '16x' of buffer 'a' is neither an integer nor a name");
  EXPECT_SPEC_ERROR("a:*fp16[4, 8", 8, "unclosed '['");
  EXPECT_SPEC_ERROR("a:*fp16[M*2], M=4", 10, "unexpected '*' in the shape");
  EXPECT_SPEC_ERROR("a:*fp16:0[4]", 9, "divisibility hint of buffer 'a' must be a positive integer");
  EXPECT_SPEC_ERROR("a:fp16[4]", 7, "'a' has a shape but no '*'");
}

TEST(SpecErrors, DuplicateAndNames) {
  UserError e = specError("M=1, N:i32=2, M:i32=3");
  EXPECT_EQ(e.loc.col, 15);
  EXPECT_STREQ(e.what(), "duplicate spec entry 'M'");
  EXPECT_NE(e.hint.find("column 1"), std::string::npos) << e.hint;
  EXPECT_SPEC_ERROR("1a=3", 1, "'1a' is not a valid name");
  EXPECT_SPEC_ERROR("M=1,, N=2", 5, "empty entry");
  EXPECT_SPEC_ERROR("for=1", 1, "'for' is a Python keyword");
  EXPECT_SPEC_ERROR("M=1, -N=2", 6, "expected an entry name, found '-'");
  EXPECT_SPEC_ERROR("M", 1, "entry 'M' has neither a type nor a value");
  EXPECT_SPEC_ERROR("M 5", 3, "unexpected '5' after name 'M'; expected ':' or '='");
}

TEST(SpecErrors, BadValues) {
  EXPECT_SPEC_ERROR("M:i32", 6, "scalar 'M' has no value");
  EXPECT_SPEC_ERROR("M:i32=", 7, "entry 'M' has '=' but no value");
  EXPECT_SPEC_ERROR("M:i8=300", 6, "value 300 of scalar 'M' does not fit in i8 (range -128..127)");
  EXPECT_SPEC_ERROR("M:i32=2147483648", 7, "does not fit in i32");
  EXPECT_SPEC_ERROR("M:i1=2", 6, "does not fit in i1");
  EXPECT_SPEC_ERROR("M:u8=-1", 6, "value -1 of scalar 'M' does not fit in u8 (range 0..255)");
  EXPECT_SPEC_ERROR("M:u32=4294967296", 7, "does not fit in u32 (range 0..4294967295)");
  EXPECT_EQ(std::get<int64_t>(parseSpec("M:u32=4294967295").entries[0].value), 4294967295);
  EXPECT_SPEC_ERROR("M:i32=1.5", 7, "scalar 'M' of type i32 takes an integer, not a float");
  EXPECT_SPEC_ERROR("x:fp32=True", 8, "takes a number, not a bool");
  EXPECT_SPEC_ERROR("M:i32:16=4", 6, "divisibility hints apply to buffers only");
  EXPECT_SPEC_ERROR("ACT='relu", 5, "unterminated string in the value of 'ACT'");
  EXPECT_SPEC_ERROR("X=foo", 3, "cannot read 'foo' as the value of 'X'");
  EXPECT_NE(specError("X=foo").hint.find("quote it: X='foo'"), std::string::npos);
  EXPECT_SPEC_ERROR("X=9223372036854775808", 3, "out of the int64 range");
  EXPECT_SPEC_ERROR("X=1e999", 3, "out of the double range");
  EXPECT_SPEC_ERROR("M=1 2", 5, "unexpected '2' after entry 'M'; entries are separated by ','");
  EXPECT_SPEC_ERROR("X=-tl.float16", 3, "cannot read");
}

TEST(SpecErrors, ShapeOfChecksAtTheEntry) {
  Spec s = parseSpec("x:*f32[N], N=8");
  s.entries[1].value = int64_t{0};  // a caller may override values after parsing
  try {
    s.shapeOf(s.entries[0]);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc.col, 1);
    EXPECT_NE(std::string(e.what()).find("dimension 'N' of buffer 'x' is 0"), std::string::npos) << e.what();
  }
  s.entries.pop_back();
  try {
    s.shapeOf(s.entries[0]);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("names no scalar or constexpr"), std::string::npos) << e.what();
  }
}

TEST(SpecParse, HostTensorDescriptors) {
  Spec s = parseSpec("a:tensordesc<fp16[BM, 64]>[M, K], b : tensordesc < bf16 [ 32 , 32 ] > [ 128 , 96 ], M:i32=200, K=96, BM=128");
  const SpecEntry& a = s.entries[0];
  EXPECT_EQ(a.kind, SpecEntry::Kind::Buffer);
  EXPECT_TRUE(a.descriptor);
  EXPECT_EQ(a.dtype, Scalar::F16);
  EXPECT_EQ(s.shapeOf(a), (std::vector<int64_t>{200, 96}));
  EXPECT_EQ(s.blockOf(a), (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(s.entries[1].dtype, Scalar::BF16);
  EXPECT_EQ(s.blockOf(s.entries[1]), (std::vector<int64_t>{32, 32}));
  EXPECT_FALSE(parseSpec("p:*fp16[4]").entries[0].descriptor);
}

TEST(SpecParse, HostTensorDescriptorErrors) {
  EXPECT_SPEC_ERROR("a:tensordesc[M, K]", 13, "expected '<' after 'tensordesc'");
  EXPECT_SPEC_ERROR("a:tensordesc<fp16>[M, K]", 18, "has no block shape");
  EXPECT_SPEC_ERROR("a:tensordesc<fp16[64, 64]", 26, "expected '>' after the block");
  EXPECT_SPEC_ERROR("a:tensordesc<fp16[64, 64]>", 27, "has no tensor shape");
  EXPECT_SPEC_ERROR("a:tensordesc<fp16[64]>[M, K], M=4, K=4", 28, "a block of rank 1 over a tensor of rank 2");
  EXPECT_SPEC_ERROR("a:tensordesc<fp16[64, 0]>[M, K]", 23, "is 0");
  EXPECT_SPEC_ERROR("a:tensordesc<fp99[64, 64]>[M, K]", 14, "unknown dtype 'fp99'");
  // A block name that is not in the spec, and a block over TMA's 256 limit, once the spec is whole.
  EXPECT_SPEC_ERROR("a:tensordesc<fp16[BM, 64]>[8, 8]", 19, "BM");
  Spec big = parseSpec("a:tensordesc<fp16[512, 64]>[1024, 64]");
  try {
    big.blockOf(big.entries[0]);
    ADD_FAILURE() << "a 512-row block was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("block dimensions are 1 to 256"), std::string::npos) << e.what();
  }
}

// dim(a, i) and stride(a, i): shapes and row-major strides of buffers, for entries given before or
// after the buffer, with negative axes as Python counts them; floats take them too.
TEST(SpecParse, DimAndStrideOfBuffers) {
  std::mt19937 rng(testSeed());
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_int_distribution<int64_t> d(1, 500);
    const int64_t a = d(rng), b = d(rng), c = d(rng);
    const std::string dims = std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c);
    Spec s = parseSpec("s0:i32=stride(x, 0), x:*fp16[" + dims + "], s1:i64 = stride( x , 1 ), s2=stride(x,-1), n:i32=dim(x, 0), "
                       "last=dim(x, -1), f:fp32=dim(x,1)");
    EXPECT_EQ(std::get<int64_t>(s.find("s0")->value), b * c);
    EXPECT_EQ(std::get<int64_t>(s.find("s1")->value), c);
    EXPECT_EQ(std::get<int64_t>(s.find("s2")->value), 1);
    EXPECT_EQ(std::get<int64_t>(s.find("n")->value), a);
    EXPECT_EQ(std::get<int64_t>(s.find("last")->value), c);
    EXPECT_EQ(std::get<double>(s.find("f")->value), static_cast<double>(b));
    EXPECT_EQ(s.find("s0")->kind, SpecEntry::Kind::Scalar);
    EXPECT_EQ(s.find("s2")->kind, SpecEntry::Kind::Constexpr);
  }
  // A buffer whose dims name scalars: dim() reads their values.
  Spec s = parseSpec("a:*fp32[M, K], M:i32=7, K:i32=33, lda:i32=stride(a, 0)");
  EXPECT_EQ(std::get<int64_t>(s.find("lda")->value), 33);
}

TEST(SpecErrors, DimAndStride) {
  EXPECT_SPEC_ERROR("n:i32=dim(y, 0)", 11, "'y' in dim(y, 0) names no buffer in the spec");
  EXPECT_SPEC_ERROR("N=4, n:i32=stride(N, 0)", 19, "'N' in stride(N, 0) is not a buffer");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x, 2)", 27, "axis 2 is out of range for buffer 'x' of rank 2");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x, -3)", 27, "axis -3 is out of range");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x)", 25, "expected ',' and an axis after 'x' in dim()");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x, a)", 27, "the axis in dim() for 'n' must be an integer");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x, 1", 28, "expected ')' to close dim(");
  EXPECT_SPEC_ERROR("x:*f32[4,5], n:i32=dim(x, 1) + 1", 30, "unexpected '+' after dim(...) in entry 'n'");
  EXPECT_SPEC_ERROR("x:*f32[300,5], n:i8=dim(x, 0)", 21, "value 300 of scalar 'n' does not fit in i8");
  EXPECT_SPEC_ERROR("x:*f32[M], M:i32=dim(x, 0)", 18, "the shape of 'x' names 'M', itself given by dim() or stride()");
  // A word that is not dim or stride is still read as a value (and refused as one).
  EXPECT_SPEC_ERROR("n=size(x, 0)", 3, "cannot read");
}

// `strides(...)` after a buffer's shape binds one scalar per dimension to its row-major stride.
TEST(SpecParse, StridesShorthand) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t a = 1 + rng() % 50, b = 1 + rng() % 50, c = 1 + rng() % 50;
    const std::string text = "x:*fp16[" + std::to_string(a) + ", B, " + std::to_string(c) + "] strides(sx0, _, sx2) in -2..2, B:i32=" +
                             std::to_string(b) + ", y:*i8[4] strides(sy)";
    Spec s = parseSpec(text);
    ASSERT_EQ(s.entries.size(), 6u);  // x, sx0, sx2, B, y, sy: in the order written
    EXPECT_EQ(s.entries[1].name, "sx0");
    EXPECT_EQ(s.find("sx0")->kind, SpecEntry::Kind::Scalar);
    EXPECT_EQ(s.find("sx0")->dtype, Scalar::I32);
    EXPECT_EQ(std::get<int64_t>(s.find("sx0")->value), b * c);
    EXPECT_EQ(std::get<int64_t>(s.find("sx2")->value), 1);
    EXPECT_EQ(s.find("sx2")->loc.col, static_cast<int>(text.find("sx2")) + 1);
    EXPECT_EQ(s.find("_"), nullptr);
    ASSERT_TRUE(s.find("x")->fill.has_value());
    EXPECT_EQ(std::get<int64_t>(parseSpec("y:*i8[4] strides(sy)").find("sy")->value), 1);
  }
  // A stride past i32's range is an i64 scalar.
  Spec big = parseSpec("x:*i8[3, 70000, 70000] strides(s0, s1, s2)");
  EXPECT_EQ(big.find("s0")->dtype, Scalar::I64);
  EXPECT_EQ(std::get<int64_t>(big.find("s0")->value), int64_t{70000} * 70000);
  EXPECT_EQ(big.find("s1")->dtype, Scalar::I32);
}

TEST(SpecErrors, StridesShorthand) {
  EXPECT_SPEC_ERROR("x:*f32[4,5] strides(a)", 20, "buffer 'x' has 2 dimension(s) but strides() names 1");
  EXPECT_SPEC_ERROR("x:*f32[4,5] strides a, b", 21, "expected '(' after 'strides' of buffer 'x'");
  EXPECT_SPEC_ERROR("x:*f32[4,5] strides(a b)", 23, "unexpected 'b' in the strides of buffer 'x'");
  EXPECT_SPEC_ERROR("a:i32=3, x:*f32[4,5] strides(a, b)", 30, "duplicate spec entry 'a'");
  EXPECT_SPEC_ERROR("x:*f32[4,5] strides(a, 1b)", 24, "'1b' is not a valid name");
  EXPECT_SPEC_ERROR("x:*f32[4,5] strides(x, b)", 21, "duplicate spec entry 'x'");
}

// None is a constexpr value (Triton specializes a None argument); it has no type.
TEST(SpecParse, NoneConstexpr) {
  Spec s = parseSpec("bias=None, HAS_BIAS=False");
  EXPECT_TRUE(std::holds_alternative<tawa::driver::NoneValue>(s.entries[0].value));
  EXPECT_EQ(s.entries[0].kind, SpecEntry::Kind::Constexpr);
  EXPECT_SPEC_ERROR("bias:None", 6, "'bias:None' gives None a type; None is a constexpr");
  EXPECT_SPEC_ERROR("n:i32=None", 7, "scalar 'n' of type i32 takes an integer, not None");
}

// `in LO..HI` after a buffer's shape: the range its random values are drawn from.
TEST(SpecParse, FillRanges) {
  Spec s = parseSpec("y:*i32[8] in 0..300, x:*fp16[4, 4] in -2.5..2.5, m:*i1[3] in 0..2, z:*f32[2]");
  ASSERT_TRUE(s.entries[0].fill.has_value());
  EXPECT_EQ(s.entries[0].fill->lo, 0);
  EXPECT_EQ(s.entries[0].fill->hi, 300);
  EXPECT_EQ(s.entries[1].fill->lo, -2.5);
  EXPECT_EQ(s.entries[1].fill->hi, 2.5);
  EXPECT_EQ(parseSpec("x:*f32[2] in 1e-3..1e2").entries[0].fill->hi, 100.0);
  EXPECT_FALSE(s.entries[3].fill.has_value());
  EXPECT_SPEC_ERROR("y:*i32[8] in 5..5", 11, "the range of buffer 'y' is empty");
  EXPECT_SPEC_ERROR("y:*i32[8] in 0.5..3", 14, "the lower bound of integer buffer 'y's range must be an integer");
  EXPECT_SPEC_ERROR("y:*i32[8] in 0-3", 15, "expected '..' in the range of buffer 'y'");
  EXPECT_SPEC_ERROR("y:*i32[8] in ..3", 14, "the lower bound of buffer 'y's range is not a number");
  EXPECT_SPEC_ERROR("y:*i8[8] in 0..300", 10, "does not fit in i8");
  EXPECT_SPEC_ERROR("y:*u8[8] in -1..3", 10, "does not fit in u8");
  EXPECT_NO_THROW(parseSpec("y:*u8[8] in 0..256"));
  EXPECT_SPEC_ERROR("m:*i1[8] in 0..3", 10, "within 0..2");
}

TEST(SpecSignature, ShapesAndScalarValuesMayBeLeftOutButNotElsewhere) {
  auto s = tawa::driver::parseSignature("x:*fp32:16, n:i32, alpha:fp32=0.5, BLOCK=256");
  ASSERT_EQ(s.entries.size(), 4u);
  EXPECT_TRUE(s.entries[0].dims.empty());
  EXPECT_EQ(s.entries[0].divisibility, 16);
  EXPECT_EQ(std::get<int64_t>(s.entries[1].value), 0);
  EXPECT_EQ(std::get<double>(s.entries[2].value), 0.5);
  EXPECT_THROW(tawa::driver::parseSpec("x:*fp32, n:i32=3"), tawa::UserError);
  EXPECT_THROW(tawa::driver::parseSpec("x:*fp32[4], n:i32"), tawa::UserError);
  EXPECT_THROW(tawa::driver::parseSignature("x:*fp32["), tawa::UserError);
}

TEST(SpecParse, ValuesAndAddresses) {
  Spec s = parseSpec("sizes:*i32 = values(128, -7, 0), w:*fp32[2, 2]=values(0.5, -1e3, +2, 3.25), "
                     "p:*i64 = addresses(a, b, a), a:*fp16[4], b:*fp16[8], q:*u64[2] = addresses( b , a )");
  const SpecEntry* sizes = s.find("sizes");
  ASSERT_TRUE(sizes && sizes->values);
  EXPECT_EQ(*sizes->values, (std::vector<double>{128, -7, 0}));
  EXPECT_EQ(s.shapeOf(*sizes), (std::vector<int64_t>{3}));
  const SpecEntry* w = s.find("w");
  ASSERT_TRUE(w && w->values);
  EXPECT_EQ(*w->values, (std::vector<double>{0.5, -1e3, 2, 3.25}));
  EXPECT_EQ(s.shapeOf(*w), (std::vector<int64_t>{2, 2}));
  const SpecEntry* p = s.find("p");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->addresses, (std::vector<std::string>{"a", "b", "a"}));
  EXPECT_EQ(s.shapeOf(*p), (std::vector<int64_t>{3}));
  ASSERT_EQ(p->addressLocs.size(), 3u);
  EXPECT_EQ(p->addressLocs[1].col, 99);  // where 'b' is written, for errors
  EXPECT_EQ(s.find("q")->addresses, (std::vector<std::string>{"b", "a"}));
  EXPECT_FALSE(s.find("a")->values);
  EXPECT_TRUE(s.find("a")->addresses.empty());
}

TEST(SpecErrors, ValuesAndAddresses) {
  EXPECT_SPEC_ERROR("p:*i32 = addresses(a)", 10, "holds addresses, so its dtype must be i64 or u64, not i32");
  EXPECT_SPEC_ERROR("p:*i64 = pointers(a)", 10, "expected values(...) or addresses(...)");
  EXPECT_SPEC_ERROR("p:*i64 = addresses(a b)", 22, "items are separated by ','");
  EXPECT_SPEC_ERROR("p:*i64 = addresses(a,)", 22, "expected an entry name");
  EXPECT_SPEC_ERROR("s:*i32 = values(1, 2.5)", 20, "value 2.5 of integer buffer 's' is not an integer");
  EXPECT_SPEC_ERROR("s:*i8[2] = values(1, 200)", 22, "value 200 does not fit in buffer 's' (i8)");
  EXPECT_SPEC_ERROR("s:*u8 = values(-1)", 16, "value -1 does not fit in buffer 's' (u8)");
  EXPECT_SPEC_ERROR("s:*fp32 = values(1, x)", 21, "'x' in the values of buffer 's' is not a number");
  EXPECT_SPEC_ERROR("s:*fp32 = values(1, 2", 22, "items are separated by ','");
  EXPECT_SPEC_ERROR("s:*i64 = values(9007199254740993)", 17, "beyond 2^53");
}
