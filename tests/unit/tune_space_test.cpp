// Parameter spaces: SPACE.json parsing and its located errors, constraints, the nearest legal
// configuration (checked against brute force on fresh random points), enumeration, substitution.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/Diagnostic.h"
#include "tune/SpaceJson.h"

using namespace tawa;
using namespace tawa::tune;

namespace {

std::string errorOf(const std::string& json) {
  try {
    parseSpace(json, "s.json");
  } catch (const UserError& e) {
    return e.format();
  }
  return "(no error)";
}

const char* kSpace = R"({
  "tile": {"pow2": [4, 64]},
  "grain": {"min": 8, "max": 64, "step": 8},
  "part": ["auto", "simple", "static"],
  "constraints": ["tile <= grain", "part != \"simple\" || grain >= 16"],
  "default": {"tile": 8, "grain": 16, "part": "auto"}
})";

}  // namespace

TEST(TuneSpace, ParsesValuesRangesAndDefault) {
  Space s = parseSpace(kSpace, "s.json");
  ASSERT_EQ(s.dims(), 3u);
  // nlohmann keeps object keys sorted: grain, part, tile.
  EXPECT_EQ(s.params[0].name, "grain");
  EXPECT_EQ(s.params[0].ints, (std::vector<int64_t>{8, 16, 24, 32, 40, 48, 56, 64}));
  EXPECT_EQ(s.params[2].ints, (std::vector<int64_t>{4, 8, 16, 32, 64}));
  EXPECT_EQ(s.params[1].cats, (std::vector<std::string>{"auto", "simple", "static"}));
  EXPECT_DOUBLE_EQ(s.cardinality(), 8 * 3 * 5);
  ASSERT_TRUE(s.defaults);
  EXPECT_EQ(s.key(*s.defaults), R"({"grain":16,"part":"auto","tile":8})");
}

TEST(TuneSpace, ConstraintsMatchTheirMeaning) {
  Space s = parseSpace(kSpace, "s.json");
  size_t legal = 0;
  for (int g = 0; g < 8; ++g)
    for (int p = 0; p < 3; ++p)
      for (int t = 0; t < 5; ++t) {
        Config c = {g, p, t};
        int64_t grain = s.params[0].ints[g], tile = s.params[2].ints[t];
        bool expect = tile <= grain && (p != 1 || grain >= 16);
        EXPECT_EQ(s.legal(c), expect) << s.key(c);
        legal += expect;
      }
  size_t counted = 0;
  s.forEachLegal([&](const Config&) {
    ++counted;
    return true;
  });
  EXPECT_EQ(counted, legal);
}

TEST(TuneSpace, ConstraintArithmeticAndPrecedence) {
  Space s = parseSpace(R"({"a": {"min": 0, "max": 10}, "b": {"min": 0, "max": 10}})", "s.json");
  auto holds = [&](const char* text, int a, int b) { return Constraint(text, s.params).holds({a, b}, s.params); };
  EXPECT_TRUE(holds("a + b * 2 == 7", 1, 3));
  EXPECT_FALSE(holds("(a + b) * 2 == 7", 1, 3));
  EXPECT_TRUE(holds("a % 3 == 1 && !(b < 2)", 4, 2));
  EXPECT_TRUE(holds("min(a, b) == 2 || max(a, b) > 100", 2, 9));
  EXPECT_FALSE(holds("a / b >= 0", 3, 0));  // division by zero: illegal, not a crash
  EXPECT_TRUE(holds("-a < 1", 0, 0));
}

// 64-bit overflow in a constraint makes it false (the configuration illegal), like a division by
// zero: not a wrapped value, and not the trap x86 raises for INT64_MIN / -1 (which killed tawa).
TEST(TuneSpace, ConstraintOverflowIsIllegalNotATrap) {
  // Parameters in name order: a (index 0: INT64_MIN, 1: INT64_MAX), then b (0: -1, 1: 2).
  Space s = parseSpace(R"({"a": [-9223372036854775808, 9223372036854775807], "b": [-1, 2]})", "s.json");
  auto holds = [&](const char* text, int a, int b) { return Constraint(text, s.params).holds({a, b}, s.params); };
  EXPECT_FALSE(holds("a / b != 0", 0, 0));  // INT64_MIN / -1
  EXPECT_FALSE(holds("a % b == 0", 0, 0));  // INT64_MIN % -1
  EXPECT_FALSE(holds("-a != 0", 0, 0));
  EXPECT_FALSE(holds("a + b > 0", 1, 1));   // INT64_MAX + 2
  EXPECT_FALSE(holds("a - b < 0", 0, 1));   // INT64_MIN - 2
  EXPECT_FALSE(holds("a * b != 0", 1, 1));
  EXPECT_TRUE(holds("a / b < 0", 0, 1));    // INT64_MIN / 2: fine
  EXPECT_TRUE(holds("a + b < 0", 0, 1));
  EXPECT_TRUE(holds("a + b > 0", 1, 0));    // INT64_MAX - 1
}

// Kernel Tuner's restrictions are Python expressions: and, or, not, //, chained comparisons, and then
// Python's rounding-down % (checked against Python's own results on negative operands).
TEST(TuneSpace, ConstraintsInPythonSyntax) {
  Space s = parseSpace(R"({"a": {"min": -7, "max": 7}, "b": [-3, -2, 2, 3], "part": ["x", "y"]})", "s.json");
  auto idx = [&](const char* name, int64_t v) { return *s.params[static_cast<size_t>(s.paramIndex(name))].indexOf(v); };
  auto holds = [&](const std::string& text, int64_t a, int64_t b, const char* part = "x") {
    Config c(3);
    c[static_cast<size_t>(s.paramIndex("a"))] = idx("a", a);
    c[static_cast<size_t>(s.paramIndex("b"))] = idx("b", b);
    c[static_cast<size_t>(s.paramIndex("part"))] = *s.params[static_cast<size_t>(s.paramIndex("part"))].indexOf(part);
    return Constraint(text, s.params).holds(c, s.params);
  };
  for (int64_t a = -7; a <= 7; ++a)
    for (int64_t b : {-3, -2, 2, 3}) {
      SCOPED_TRACE(std::to_string(a) + ", " + std::to_string(b));
      // Python: a // b == floor(a / b), a % b == a - b * (a // b) (the sign of b).
      const int64_t fd = static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
      const int64_t fm = a - b * fd;
      EXPECT_TRUE(holds("a // b == " + std::to_string(fd), a, b));
      EXPECT_TRUE(holds("a % b == " + std::to_string(fm) + " and a // b == " + std::to_string(fd), a, b));
      EXPECT_TRUE(holds("a % b == " + std::to_string(a % b), a, b));  // C's % without Python's keywords
      EXPECT_EQ(holds("-3 < a <= b < 4", a, b), -3 < a && a <= b && b < 4);
      EXPECT_EQ(holds("not a > b or part == \"y\"", a, b), !(a > b));
      EXPECT_EQ(holds("not (a > b) and not part == \"y\"", a, b, "y"), false);
    }
}

TEST(TuneSpace, ConstraintErrorsHaveColumns) {
  Space s = parseSpace(R"({"tile": [1, 2], "part": ["auto", "static"]})", "s.json");
  auto err = [&](const char* text) {
    try {
      Constraint c(text, s.params);
    } catch (const ConstraintError& e) {
      return std::to_string(e.column) + ": " + e.reason;
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err("tile <= grian"), "9: unknown parameter 'grian' (parameters: part, tile)");
  EXPECT_EQ(err("part == \"dynamic\""), "9: \"dynamic\" is not a value of 'part' (auto, static)");
  EXPECT_EQ(err("part < \"auto\""), "6: '<' compares integers; categorical values only support == and !=");
  EXPECT_EQ(err("tile + 1"), "0: a constraint must be a comparison or a logical expression");
  EXPECT_EQ(err("tile <= (2"), "11: expected ')'");
  EXPECT_EQ(err("tile and 2"), "1: '&&' needs comparisons as operands");
  EXPECT_EQ(err("tile < 2 andnot tile > 0"), "10: unexpected 'a'");
}

TEST(TuneSpace, JsonErrorsAreLocated) {
  EXPECT_EQ(errorOf("{\n  \"a\": [1, 2,]\n}"), "s.json:2:14: error: invalid JSON: syntax error while parsing value - unexpected ']'; expected '[', '{', or a literal");
  EXPECT_EQ(errorOf("{\n  \"a\": {\"min\": 1, \"max\": 9, \"step\": 0}\n}"), "s.json:2:37: error: /a/step: \"step\" must be positive");
  EXPECT_EQ(errorOf("{\"a\": {\"pow2\": [1, 100]}}"), "s.json:1:20: error: /a/pow2/1: 100 is not a power of two");
  EXPECT_EQ(errorOf("{\"a\": [1, \"x\"]}"), "s.json:1:7: error: /a: a list of values must be all integers or all strings");
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"constraints\": [\"a <= b\"]}"),
            "s.json:1:37: error: /constraints/0: unknown parameter 'b' (parameters: a)");
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"default\": {\"a\": 3}}"), "s.json:1:26: error: /default: 3 is not a value of parameter 'a'");
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"constraints\": [\"a > 5\"]}"),
            "s.json:1:30: error: /constraints: no configuration satisfies every constraint");
  EXPECT_EQ(errorOf("{\"a\": {\"min\": 1, \"max\": 5, \"stpe\": 2}}"),
            "s.json:1:36: error: /a/stpe: unexpected key \"stpe\" (a range has \"min\", \"max\" and optional \"step\")");
  EXPECT_EQ(errorOf("[1, 2]"), "s.json:1:1: error: the space: a space is a JSON object mapping parameter names to their values");
  EXPECT_EQ(errorOf("{\"a b\": [1]}"), "s.json:1:9: error: /a b: parameter name 'a b' must be an identifier (letters, digits, _)");
}

// Keys given twice (nlohmann::json would keep the last silently), integers beyond int64_t, and ranges
// near the ends of int64_t, where naive arithmetic overflows: errors, or exactly the values asked for.
TEST(TuneSpace, DuplicateKeysHugeIntegersAndRangesAtTheEdges) {
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"a\": [3]}"), "s.json:1:20: error: /a: given twice in one object (JSON would keep only the last)");
  EXPECT_EQ(errorOf("{\"a\": {\"min\": 1, \"max\": 5, \"min\": 2}}"),
            "s.json:1:35: error: /a/min: given twice in one object (JSON would keep only the last)");
  EXPECT_EQ(errorOf("{\"a\": [1, 9223372036854775808]}"),
            "s.json:1:11: error: /a/1: 9223372036854775808 is too large (integers are 64-bit signed)");
  EXPECT_EQ(errorOf("{\"a\": {\"min\": -9223372036854775808, \"max\": 9223372036854775807}}"),
            "s.json:1:7: error: /a: the range has more than 1000000 values\n  hint: use a larger \"step\" or \"pow2\"");
  Space top = parseSpace(R"({"a": {"min": 9223372036854775800, "max": 9223372036854775807, "step": 3}})", "s.json");
  EXPECT_EQ(top.params[0].ints, (std::vector<int64_t>{9223372036854775800, 9223372036854775803, 9223372036854775806}));
  Space wide = parseSpace(R"({"a": {"min": -9223372036854775807, "max": 9223372036854775807, "step": 9223372036854775807}})", "s.json");
  EXPECT_EQ(wide.params[0].ints, (std::vector<int64_t>{-9223372036854775807, 0, 9223372036854775807}));
  Space p2 = parseSpace(R"({"a": {"pow2": [1073741824, 4611686018427387904]}})", "s.json");
  ASSERT_EQ(p2.params[0].ints.size(), 33u);
  EXPECT_EQ(p2.params[0].ints.back(), int64_t{1} << 62);
}

// Hostile nesting is a located error, not a stack overflow: in the JSON (whose error positions come
// from a recursive walk), and in a constraint (parsed and evaluated recursively).
TEST(TuneSpace, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "{\"a\": [1, 2], \"description\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(errorOf(deep), "s.json:1:93: error: JSON nested more than 64 levels deep");
  std::string parens = std::string(101, '(') + "a" + std::string(101, ')') + " > 0";
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"constraints\": [\"" + parens + "\"]}"),
            "s.json:1:132: error: /constraints/0: nested more than 100 levels deep");
  std::string shallower = std::string(100, '(') + "a" + std::string(100, ')') + " > 0";
  EXPECT_EQ(errorOf("{\"a\": [1, 2], \"constraints\": [\"" + shallower + "\"]}"), "(no error)");
  std::string longSum = "a" + [] { std::string t; for (int i = 0; i < 1400; ++i) t += " + a"; return t; }() + " > 0";
  EXPECT_NE(errorOf("{\"a\": [1, 2], \"constraints\": [\"" + longSum + "\"]}").find("longer than 4096 characters"), std::string::npos);
}

TEST(TuneSpace, NearestLegalIsTheBruteForceNearest) {
  Space s = parseSpace(R"({"x": {"min": 0, "max": 30}, "y": {"pow2": [1, 256]}, "m": ["p", "q", "r"],
                           "constraints": ["x * 8 <= y || m == \"q\"", "x + y != 17"]})",
                       "s.json");
  std::vector<Config> all;
  s.forEachLegal([&](const Config& c) {
    all.push_back(c);
    return true;
  });
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> p(3);
    for (auto& v : p) v = std::uniform_real_distribution<double>(-0.1, 1.1)(rng);
    auto got = s.nearestLegal(p);
    ASSERT_TRUE(got);
    ASSERT_TRUE(s.legal(*got));
    auto dist = [&](const Config& c) {
      auto x = s.normalize(c);
      double d = 0;
      for (size_t i = 0; i < 3; ++i) d += std::pow(x[i] - std::clamp(p[i], 0.0, 1.0), 2);
      return d;
    };
    double best = 1e9;
    for (auto& c : all) best = std::min(best, dist(c));
    EXPECT_NEAR(dist(*got), best, 1e-12);
  }
}

TEST(TuneSpace, SubstitutionAndPlaceholders) {
  Space s = parseSpace(kSpace, "s.json");
  Config c = s.fromJson(nlohmann::json::parse(R"({"tile": 16, "grain": 32, "part": "static"})"));
  EXPECT_EQ(s.substitute("./app --tile {tile} --g={grain} {part} {other} ${tile} {", c), "./app --tile 16 --g=32 static {other} ${tile} {");
  EXPECT_EQ(s.unknownPlaceholders("./app {tile} {other} ${HOME} {a-b}"), (std::vector<std::string>{"other"}));
  EXPECT_THROW(s.fromJson(nlohmann::json::parse(R"({"tile": 16})")), std::invalid_argument);
  EXPECT_THROW(s.fromJson(nlohmann::json::parse(R"({"tile": 16, "grain": 32, "part": "static", "x": 1})")), std::invalid_argument);
}

TEST(TuneSpace, FallbackIsTheDefaultOrTheLegalCentre) {
  Space s = parseSpace(kSpace, "s.json");
  EXPECT_EQ(*s.fallback(), *s.defaults);
  Space t = parseSpace(R"({"a": {"min": 0, "max": 10}, "b": {"min": 0, "max": 10}, "constraints": ["a + b <= 6"]})", "s.json");
  auto f = t.fallback();
  ASSERT_TRUE(f);
  EXPECT_EQ(t.key(*f), R"({"a":3,"b":3})");
}
