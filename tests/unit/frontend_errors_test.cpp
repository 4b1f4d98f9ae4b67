// Diagnostics of the Triton front end: each malformed kernel must fail with a UserError that names
// the construct, at the file:line:col of the offending source (never a crash, never wrong code).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "TempDir.h"

namespace {

struct ErrorCase {
  const char* name;
  const char* src;     // the kernel `k`, after "import triton / import triton.language as tl"
  const char* spec;
  const char* message;  // a substring of the error message
  const char* at;       // the error is at the first occurrence of this text in the file
};

const ErrorCase kCases[] = {
    {"AtomicAndOnFloats", "@triton.jit\ndef k(p):\n    tl.atomic_and(p, 1)\n", "p:*fp32[4]",
     "tl.atomic_and needs integer elements, the pointer is to float32", "p, 1"},
    {"AtomicBadSem", "@triton.jit\ndef k(p):\n    tl.atomic_add(p, 1, sem='seq_cst')\n", "p:*fp32[4]",
     "tl.atomic_add's sem must be one of acq_rel, acquire, relaxed, release, got the string \"seq_cst\"", "'seq_cst'"},
    {"AtomicBadScope", "@triton.jit\ndef k(p):\n    tl.atomic_max(p, 1, scope='grid')\n", "p:*i32[4]",
     "tl.atomic_max's scope must be one of cta, gpu, sys", "'grid'"},
    {"AtomicOnFp8", "@triton.jit\ndef k(p):\n    tl.atomic_xchg(p, 1.0)\n", "p:*fp8e4nv[4]",
     "tl.atomic_xchg on f8e4m3 elements: Triton has no such atomic", "p, 1.0"},
    {"AtomicUnknown", "@triton.jit\ndef k(p):\n    tl.atomic_nand(p, 1)\n", "p:*i32[4]",
     "tl.atomic_nand is not a Triton atomic", "tl.atomic_nand"},
    {"AtomicValueIsPointer", "@triton.jit\ndef k(p):\n    tl.atomic_add(p, val=p + 1)\n", "p:*i32[4]",
     "tl.atomic_add's val must be numbers", "+ 1"},
    {"SplitNeedsPairs", "@triton.jit\ndef k(p):\n    a, b = tl.split(tl.load(p + tl.arange(0, 4)))\n", "p:*fp32[4]",
     "tl.split needs a tensor of numbers whose last dimension is 2", "tl.load(p"},
    {"UnknownTlFunction", "@triton.jit\ndef k(p):\n    x = tl.frobnicate(p)\n", "p:*fp32[4]",
     "tl.frobnicate: not supported yet", "tl.frobnicate"},
    {"PointerPlusFloat", "@triton.jit\ndef k(p):\n    q = p + 1.5\n", "p:*fp32[4]", "pointer + float", "+ 1.5"},
    {"DotShapes",
     "@triton.jit\ndef k(p):\n    a = tl.zeros([16, 32], dtype=tl.float16)\n    b = tl.zeros([16, 32], dtype=tl.float16)\n"
     "    c = tl.dot(a, b)\n",
     "p:*fp32[4]", "tl.dot of mismatched shapes [16, 32] and [16, 32]", "tl.dot"},
    {"DotTooSmall",
     "@triton.jit\ndef k(p):\n    a = tl.zeros([8, 8], dtype=tl.float16)\n    c = tl.dot(a, a)\n", "p:*fp32[4]",
     "tl.dot needs K >= 16, got [8, 8] x [8, 8]", "tl.dot"},
    {"DotInt8K",
     "@triton.jit\ndef k(p):\n    a = tl.zeros([16, 16], dtype=tl.int8)\n    c = tl.dot(a, a)\n", "p:*fp32[4]",
     "tl.dot needs K >= 32 for 8-bit operands", "tl.dot"},
    {"DotDtypes",
     "@triton.jit\ndef k(p):\n    a = tl.zeros([16, 16], dtype=tl.float16)\n    b = tl.zeros([16, 16], dtype=tl.float32)\n"
     "    c = tl.dot(a, b)\n",
     "p:*fp32[4]", "tl.dot operands must have the same dtype", "tl.dot"},
    {"RuntimeArange", "@triton.jit\ndef k(p, n):\n    r = tl.arange(0, n)\n", "p:*fp32[4], n:i32=4",
     "tl.arange's end must be a compile-time constant", "n)\n"},
    {"ArangeNotPowerOfTwo", "@triton.jit\ndef k(p):\n    r = tl.arange(0, 10)\n", "p:*fp32[4]",
     "tl.arange's range must be a power of 2", "tl.arange"},
    {"MissingSpecEntry", "@triton.jit\ndef k(p, count):\n    pass\n", "p:*fp32[4]",
     "the spec has no entry for parameter 'count' of kernel 'k'", "count"},
    {"StaticAssert", "@triton.jit\ndef k(p, B: tl.constexpr):\n    tl.static_assert(B % 16 == 0, \"B must be a multiple of 16\")\n",
     "p:*fp32[4], B=24", "static_assert failed: B must be a multiple of 16", "tl.static_assert"},
    {"OneBranchOnly",
     "@triton.jit\ndef k(p, n):\n    if n > 0:\n        y = 1.0\n    tl.store(p, y)\n", "p:*fp32[4], n:i32=1",
     "'y' is defined in only one branch of the 'if' at line 5", "y)"},
    {"LoopCarriedTypeChange",
     "@triton.jit\ndef k(p, n):\n    x = tl.zeros([16], dtype=tl.float32)\n    for i in range(n):\n"
     "        x = x.to(tl.float16)\n    tl.store(p + tl.arange(0, 16), x)\n",
     "p:*fp32[16], n:i32=1", "'x' has type tile<16xf32> before the loop but tile<16xf16> after it", "for i"},
    {"UndefinedName", "@triton.jit\ndef k(p):\n    tl.store(p, foo)\n", "p:*fp32[4]", "name 'foo' is not defined", "foo"},
    {"With", "@triton.jit\ndef k(p):\n    with p:\n        pass\n", "p:*fp32[4]",
     "'with' statement inside a jit function: not supported yet", "with"},
    {"Lambda", "@triton.jit\ndef k(p):\n    f = lambda x: x\n", "p:*fp32[4]", "'lambda' inside a jit function: not supported yet",
     "lambda"},
    {"ListComprehension", "@triton.jit\ndef k(p):\n    xs = [i for i in range(3)]\n", "p:*fp32[4]",
     "list comprehensions inside a jit function: not supported yet", "for i"},
    {"Class", "@triton.jit\ndef k(p):\n    class A:\n        pass\n", "p:*fp32[4]",
     "'class' statement inside a jit function: not supported yet", "class"},
    {"Try", "@triton.jit\ndef k(p):\n    try:\n        pass\n    except:\n        pass\n", "p:*fp32[4]",
     "'try' statement inside a jit function: not supported yet", "try"},
    {"Break", "@triton.jit\ndef k(p, n):\n    for i in range(n):\n        break\n", "p:*fp32[4], n:i32=2",
     "'break' statement inside a jit function: not supported yet", "break"},
    {"ReturnInRuntimeLoop", "@triton.jit\ndef h(n):\n    for i in range(n):\n        return i\n    return 0\n\n"
     "@triton.jit\ndef k(p, n):\n    x = h(n)\n",
     "p:*fp32[4], n:i32=2", "'return' inside a runtime loop or a runtime 'if': not supported yet", "return i"},
    {"OtherWithoutMask", "@triton.jit\ndef k(p):\n    x = tl.load(p, other=0.0)\n", "p:*fp32[4]",
     "tl.load: 'other' cannot be given without 'mask'", "0.0"},
    {"LoadNonPointer", "@triton.jit\ndef k(p, n):\n    x = tl.load(n)\n", "p:*fp32[4], n:i32=2",
     "tl.load needs a pointer or a tensor of pointers, got i32", "n)\n"},
    {"IncompatibleShapes", "@triton.jit\ndef k(p):\n    x = tl.arange(0, 16) + tl.arange(0, 32)\n", "p:*fp32[4]",
     "incompatible shapes [16] and [32]", "+ tl"},
    {"ExpOfInt", "@triton.jit\ndef k(p):\n    x = tl.exp(tl.arange(0, 16))\n", "p:*fp32[4]",
     "tl.exp needs a floating-point argument", "tl.exp"},
    {"UnknownKernel", "@triton.jit\ndef other(p):\n    pass\n", "p:*fp32[4]", "no @triton.jit function named 'k'",
     "import"},
    {"PointerToConstexpr", "@triton.jit\ndef k(p: tl.constexpr):\n    pass\n", "p:*fp32[4]",
     "parameter 'p' is tl.constexpr but the spec passes a pointer", "p: tl"},
    {"BadKeyword", "@triton.jit\ndef k(p):\n    x = tl.load(p, maks=p)\n", "p:*fp32[4]",
     "tl.load() got an unexpected keyword argument 'maks'", "p)\n"},
    {"PointerFromInteger",
     "@triton.jit\ndef k(p, q):\n    a = tl.load(p).to(tl.pointer_type(tl.float16))\n", "p:*i32[4], q:*fp16[4]",
     "casting a value of type i32 to a pointer type: only pointers and 64-bit integers (addresses) convert to pointers", "tl.load"},
    {"PowerOnTensor", "@triton.jit\ndef k(p):\n    x = tl.arange(0, 16) ** 2\n", "p:*fp32[4]",
     "'**' on tensors: not supported yet", "**"},
    {"TileCondition", "@triton.jit\ndef k(p):\n    if tl.arange(0, 16) > 3:\n        pass\n", "p:*fp32[4]",
     "the condition of 'if' must be a scalar", "> 3"},
    {"FString", "@triton.jit\ndef k(p):\n    tl.static_assert(True, f\"x\")\n", "p:*fp32[4]",
     "f-strings inside a jit function: not supported yet", "f\"x"},
    {"UnpackMismatch", "@triton.jit\ndef k(p):\n    a, b = (1, 2, 3)\n", "p:*fp32[4]",
     "cannot unpack a tuple of 3 values into 2 names", "a, b"},
    {"StrayCharacter", "@triton.jit\ndef k(p):\n    x = 1 $ 2\n", "p:*fp32[4]", "unexpected character '$'", "$"},
    {"FloatFloorDiv", "@triton.jit\ndef k(p):\n    x = tl.load(p) // 2.0\n", "p:*fp32[4]",
     "'//' on floating-point tensors: not supported yet", "//"},
    {"StoreTileToScalarPointer", "@triton.jit\ndef k(p):\n    tl.store(p, tl.zeros([16], dtype=tl.float32))\n",
     "p:*fp32[4]", "the value is a tensor of shape [16] but the pointer is a scalar", "tl.zeros"},
    {"ConstexprAnnotationRuntime", "@triton.jit\ndef k(p, n):\n    B: tl.constexpr = n * 2\n", "p:*fp32[4], n:i32=2",
     "'B' is annotated tl.constexpr but its value is not a compile-time constant", "* 2"},
    {"SubscriptWithValue", "@triton.jit\ndef k(p):\n    x = tl.arange(0, 16)[3]\n", "p:*fp32[4]",
     "indexing a tensor with values or partial slices: not supported yet", "3]"},
    {"RangeOverTile", "@triton.jit\ndef k(p):\n    for x in tl.arange(0, 4):\n        pass\n", "p:*fp32[4]",
     "for loops over the function 'tl.arange': not supported yet", "tl.arange"},
    {"BitwiseOnFloat", "@triton.jit\ndef k(p):\n    x = tl.load(p) & 1\n", "p:*fp32[4]",
     "operator '&' needs integer operands, got float32", "& 1"},
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class FrontendErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(FrontendErrors, ReportsLocatedUserError) {
  const ErrorCase& c = GetParam();
  std::string text = std::string("import triton\nimport triton.language as tl\n") + c.src;
  static std::atomic<int> counter{0};
  auto dir = tawa::test::tempDir() / "fe_err";
  std::filesystem::create_directories(dir);
  std::string path = (dir / (std::string(c.name) + std::to_string(counter++) + ".py")).string();
  std::ofstream(path) << text;
  // Where the error must point.
  size_t off = text.find(c.at);
  ASSERT_NE(off, std::string::npos) << "bad test: '" << c.at << "' not in the source";
  int line = 1, col = 1;
  for (size_t i = 0; i < off; ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  try {
    tawa::frontend::compileTriton(path, "k", tawa::driver::parseSpec(c.spec));
    FAIL() << "no error; expected: " << c.message;
  } catch (const tawa::UserError& e) {
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << "got: " << e.format();
    ASSERT_TRUE(e.loc.known());
    EXPECT_EQ(*e.loc.file, path);
    EXPECT_EQ(e.loc.line, line) << e.format();
    EXPECT_EQ(e.loc.col, col) << e.format();
  }
}

INSTANTIATE_TEST_SUITE_P(Frontend, FrontendErrors, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& i) { return std::string(i.param.name); });

}  // namespace
