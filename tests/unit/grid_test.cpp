#include "driver/Grid.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "ir/Diagnostic.h"

using tawa::UserError;
using tawa::driver::evalGrid;
using Grid = std::array<int64_t, 3>;
using Vars = std::map<std::string, int64_t>;

namespace {

unsigned testSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}

UserError gridError(const std::string& text, const Vars& vars = {}) {
  try {
    evalGrid(text, vars);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for grid: " << text;
  return UserError({}, "");
}

#define EXPECT_GRID_ERROR(text, vars, col_, substr_)                                   \
  do {                                                                                 \
    UserError e_ = gridError(text, vars);                                              \
    EXPECT_EQ(e_.loc.col, col_) << e_.format();                                        \
    EXPECT_EQ(e_.loc.line, 1);                                                         \
    EXPECT_NE(std::string(e_.what()).find(substr_), std::string::npos) << e_.format(); \
    if (e_.loc.file) {                                                                 \
      EXPECT_EQ(*e_.loc.file, "<grid>");                                               \
    }                                                                                  \
  } while (0)

const Vars kNone;

}  // namespace

TEST(GridEval, TiledMatmul) {
  unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with TAWA_TEST_SEED)");
  std::mt19937 rng(seed);
  for (int i = 0; i < 100; ++i) {
    int64_t m = std::uniform_int_distribution<int64_t>(1, 1 << 16)(rng);
    int64_t n = std::uniform_int_distribution<int64_t>(1, 1 << 16)(rng);
    int64_t bm = int64_t{16} << (rng() % 4);
    Vars v{{"M", m}, {"N", n}, {"BLOCK_M", bm}};
    EXPECT_EQ(evalGrid("cdiv(M, 64) * cdiv(N, 64)", v), (Grid{((m + 63) / 64) * ((n + 63) / 64), 1, 1}));
    EXPECT_EQ(evalGrid("cdiv(M, BLOCK_M), cdiv(N,64), 2", v), (Grid{(m + bm - 1) / bm, (n + 63) / 64, 2}));
  }
}

TEST(GridEval, DimsAndTuples) {
  EXPECT_EQ(evalGrid("4, 2", kNone), (Grid{4, 2, 1}));
  EXPECT_EQ(evalGrid("7", kNone), (Grid{7, 1, 1}));
  EXPECT_EQ(evalGrid("  8 ,\t2 , 3 ", kNone), (Grid{8, 2, 3}));
  EXPECT_EQ(evalGrid("(4, 2)", kNone), (Grid{4, 2, 1}));
  EXPECT_EQ(evalGrid(" (4,) ", kNone), (Grid{4, 1, 1}));
  EXPECT_EQ(evalGrid("4,", kNone), (Grid{4, 1, 1}));
  EXPECT_EQ(evalGrid("(2 + 1) * 2, (1)", kNone), (Grid{6, 1, 1}));
}

TEST(GridEval, PrecedenceAndPythonSemantics) {
  const std::pair<const char*, int64_t> cases[] = {
      {"2 + 3 * 4", 14},
      {"(2 + 3) * 4", 20},
      {"20 - 5 - 3", 12},
      {"100 // 7 // 2", 7},
      {"2 * 3 % 4", 2},
      {"-7 // 2 + 10", 6},
      {"7 // -2 + 10", 6},
      {"-7 % 2", 1},
      {"7 % -3 + 5", 3},
      {"-(3 - 10)", 7},
      {"- -3", 3},
      {"+5", 5},
      {"2 * -3 + 7", 1},
      {"min(4, 9, 2) + max(1, 5)", 7},
      {"max(-1, 0, 3)", 3},
      {"cdiv(-7, 2) + 10", 7},
      {"cdiv(7, 2)", 4},
      {"cdiv(8, 2)", 4},
      {"cdiv(1, 64)", 1},
      {"10 - 2 * 3 // 4", 9},
      // At the ends of int64 (the result itself must keep CUDA's grid limit, x < 2^31):
      {"9223372036854775807 // 4294967296", 2147483647},
      {"cdiv(9223372036854775807, 2) // 4294967296", int64_t{1} << 30},
      {"((((3))))", 3},
      {"M%BLOCK+M//BLOCK", 3 + 2},
  };
  Vars v{{"M", 19}, {"BLOCK", 8}};
  for (const auto& [text, want] : cases) EXPECT_EQ(evalGrid(text, v)[0], want) << text;
}

// Random expressions against an independent evaluator in 128-bit arithmetic.
TEST(GridEval, RandomExpressions) {
  unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with TAWA_TEST_SEED)");
  std::mt19937 rng(seed);
  __extension__ typedef __int128 I;  // 128 bits so the reference never overflows
  Vars vars{{"M", 0}, {"N", 0}, {"K", 0}};
  // Python's modulo written differently from the implementation, to cross-check it.
  auto pymod = [](I a, I b) { return ((a % b) + b) % b; };
  struct Expr {
    std::string text;
    I value;
    bool additive = false;  // an unparenthesized "a - b", which needs parentheses as a right operand
  };
  struct Gen {
    std::mt19937& rng;
    const Vars& vars;
    std::function<I(I, I)> mod;
    bool zeroDiv = false;
    bool overflow = false;
    Expr operator()(int depth) {
      Expr e = make(depth);
      if (e.value > INT64_MAX || e.value < INT64_MIN) {
        overflow = true;
        e.value = 0;  // keeps later arithmetic inside 128 bits; the result is an error anyway
      }
      return e;
    }
    Expr make(int depth) {
      int pick = static_cast<int>(rng() % (depth > 0 ? 10 : 2));
      if (pick == 0) {
        int64_t lit = std::uniform_int_distribution<int64_t>(0, 40)(rng);
        return {std::to_string(lit), lit};
      }
      if (pick == 1) {
        auto it = std::next(vars.begin(), static_cast<long>(rng() % vars.size()));
        return {it->first, it->second};
      }
      Expr a = (*this)(depth - 1);
      if (pick == 7) return {"-(" + a.text + ")", -a.value};
      Expr b = (*this)(depth - 1);  // only now: a discarded operand's flags would be wrong
      I av = a.value, bv = b.value;
      switch (pick) {
        case 2: return {"(" + a.text + " + " + b.text + ")", av + bv};
        case 3:  // unparenthesized, to exercise precedence and left associativity
          return {a.text + " - " + (b.additive ? "(" + b.text + ")" : b.text), av - bv, true};
        case 4: return {"(" + a.text + ")*(" + b.text + ")", av * bv};
        case 5:
        case 6: {
          bool div = pick == 5;
          if (bv == 0) zeroDiv = true;
          I r = bv == 0 ? 0 : mod(av, bv);
          return {"(" + a.text + (div ? ") // (" : ") % (") + b.text + ")", bv == 0 ? 0 : div ? (av - r) / bv : r};
        }
        case 8: {
          Expr c = (*this)(depth - 1);
          return {"min(" + a.text + ", " + b.text + ", " + c.text + ")", std::min({av, bv, c.value})};
        }
        default:
          if (bv <= 0) return {"max(" + a.text + ", " + b.text + ")", std::max(av, bv)};
          return {"cdiv(" + a.text + ", " + b.text + ")", (av - mod(av, bv)) / bv + (mod(av, bv) != 0 ? 1 : 0)};
      }
    }
  };
  int checkedValues = 0, checkedErrors = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    for (auto& [k, v] : vars) v = std::uniform_int_distribution<int64_t>(-100, 1000)(rng);
    Gen gen{rng, vars, pymod};
    Expr ex = gen(static_cast<int>(rng() % 5));
    const std::string& text = ex.text;
    I want = ex.value;
    SCOPED_TRACE(text);
    if (gen.zeroDiv || gen.overflow) {
      UserError e = gridError(text, vars);
      std::string msg = e.what();
      EXPECT_TRUE(msg.find("by zero") != std::string::npos || msg.find("overflow") != std::string::npos) << msg;
      ++checkedErrors;
    } else if (want > 2147483647) {  // past CUDA's limit for grid x
      UserError e = gridError(text, vars);
      EXPECT_NE(std::string(e.what()).find("CUDA allows at most 2147483647"), std::string::npos) << e.what();
      ++checkedErrors;
    } else if (want >= 1) {
      EXPECT_EQ(evalGrid(text, vars)[0], static_cast<int64_t>(want));
      ++checkedValues;
    } else {
      UserError e = gridError(text, vars);
      EXPECT_EQ(e.loc.col, 1);
      EXPECT_NE(std::string(e.what()).find("grid dimension 0 (x) is " + std::to_string(static_cast<int64_t>(want))),
                std::string::npos)
          << e.what();
      ++checkedErrors;
    }
  }
  EXPECT_GT(checkedValues, 100);
  EXPECT_GT(checkedErrors, 100);
}

TEST(GridErrors, UnknownName) {
  Vars v{{"BLOCK_M", 64}, {"M", 512}, {"N", 256}};
  UserError e = gridError("cdiv(M, BLOCK)", v);
  EXPECT_EQ(e.loc.col, 9);
  EXPECT_STREQ(e.what(), "unknown name 'BLOCK' in grid expression (known: BLOCK_M, M, N)");
  EXPECT_EQ(e.hint, "did you mean 'BLOCK_M'?");
  EXPECT_GRID_ERROR("X", kNone, 1, "unknown name 'X' in grid expression (the spec defines no integers)");
  Vars many;
  for (int i = 0; i < 20; ++i) many["V" + std::to_string(i + 10)] = i;
  EXPECT_GRID_ERROR("1, zzz", many, 4, "V17, ...)");
  EXPECT_GRID_ERROR("foo(1)", kNone, 1, "unknown function 'foo' in grid expression (expected cdiv, min or max)");
}

TEST(GridErrors, DivisionByZero) {
  Vars v{{"M", 5}, {"Z", 0}};
  EXPECT_GRID_ERROR("M // 0", v, 3, "division by zero in grid expression");
  EXPECT_GRID_ERROR("4, M % (Z * 3)", v, 6, "modulo by zero in grid expression");
  EXPECT_GRID_ERROR("cdiv(M,  Z)", v, 10, "division by zero in grid expression");
}

TEST(GridErrors, DimensionCountAndSize) {
  EXPECT_GRID_ERROR("1, 2, 3, 4", kNone, 10, "grid has 4 dimensions; at most 3 are allowed");
  EXPECT_GRID_ERROR("4,  0", kNone, 5, "grid dimension 1 (y) is 0; every grid size must be at least 1");
  EXPECT_GRID_ERROR("1, 1, 2 - 5", kNone, 7, "grid dimension 2 (z) is -3");
  EXPECT_GRID_ERROR("", kNone, 1, "empty grid expression");
  EXPECT_GRID_ERROR("  ", kNone, 3, "empty grid expression");
}

TEST(GridErrors, Overflow) {
  EXPECT_GRID_ERROR("9223372036854775807 + 1", kNone, 21, "integer overflow in grid expression");
  EXPECT_GRID_ERROR("99999999999999999999", kNone, 1, "integer overflow");
  EXPECT_GRID_ERROR("-(-9223372036854775807 - 1)", kNone, 1, "integer overflow");
  EXPECT_GRID_ERROR("4294967296 * 4294967296", kNone, 12, "integer overflow");
  EXPECT_GRID_ERROR("(-9223372036854775807 - 1) // -1", kNone, 28, "integer overflow");
}

TEST(GridErrors, Syntax) {
  EXPECT_GRID_ERROR("4 +", kNone, 4, "unexpected end of grid expression");
  EXPECT_GRID_ERROR("(4", kNone, 1, "unclosed '('");
  EXPECT_GRID_ERROR("M / 2", (Vars{{"M", 4}}), 3, "'/' is true division");
  EXPECT_GRID_ERROR("cdiv(1)", kNone, 1, "cdiv takes 2 arguments, got 1");
  EXPECT_GRID_ERROR("min(3)", kNone, 1, "min takes at least 2 arguments, got 1");
  EXPECT_GRID_ERROR("2 ** 3", kNone, 3, "'**' (power) is not supported");
  EXPECT_GRID_ERROR("4 4", kNone, 3, "unexpected '4' in grid expression");
  EXPECT_GRID_ERROR("1.5", kNone, 1, "grid sizes are integers");
  EXPECT_GRID_ERROR(")", kNone, 1, "unexpected ')'");
  EXPECT_GRID_ERROR("max(1 2)", kNone, 7, "expected ',' or ')' in the call to max()");
  EXPECT_GRID_ERROR("max(1, 2", kNone, 4, "unclosed '(' in the call to max()");
  EXPECT_GRID_ERROR("(1, 2) * 2", kNone, 3, "unexpected ',' inside parentheses");
  EXPECT_GRID_ERROR("(1, 2) 3", kNone, 3, "unexpected ',' inside parentheses");
}
