// The searches on synthetic objectives with known optima (fresh seeds, printed on failure): MaSiF
// guided by good configurations near the optimum, its documented no-neighbour fallback, and the
// baselines; the budget is counted in measurements (a configuration asked for again is free, a
// deliberate re-measurement is not), and MaSiF's confirmations measure its fastest ones again.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "tune/Record.h"
#include "tune/Search.h"
#include "tune/SpaceJson.h"
#include "tune/Stats.h"
#include "tune/Tuner.h"
#include "TempDir.h"
#include "TuneSpace.h"

using namespace tawa::tune;

namespace {

const char* const kSpace = tawa::test::kTuneSpace;

// A smooth bowl in normalized coordinates with its minimum (1.0) at `opt`, plus a penalty per
// categorical mismatch, so the optimum is unique and known.
struct Bowl {
  const Space& s;
  Config opt;
  double operator()(const Config& c) const {
    auto x = s.normalize(c), o = s.normalize(opt);
    double v = 1.0;
    for (size_t i = 0; i < c.size(); ++i) {
      if (s.params[i].kind == Param::Kind::Categorical) v += c[i] == opt[i] ? 0 : 0.5;
      else v += 4 * (x[i] - o[i]) * (x[i] - o[i]);
    }
    return v;
  }
};

Evaluator::Objective counted(const Bowl& f, int& calls) {
  return [&f, &calls](const Config& c, int, bool& cached) {
    cached = false;
    ++calls;
    return f(c);
  };
}

// kSpace with a fresh seed (printed on failure) and a bowl whose optimum is a random legal
// configuration. Not copyable: the bowl refers to the space.
struct BowlCase {
  Space s = parseSpace(kSpace, "s.json");
  uint64_t seed = std::random_device{}();
  testing::ScopedTrace trace{__FILE__, __LINE__, "seed " + std::to_string(seed)};
  std::mt19937_64 rng{seed};
  Config opt = *s.randomLegal(rng);
  Bowl f{s, opt};
  int calls = 0;
  BowlCase() = default;
  BowlCase(const BowlCase&) = delete;
  BowlCase& operator=(const BowlCase&) = delete;
};

}  // namespace

TEST(TuneSearch, EvaluatorCountsDistinctConfigurations) {
  Space s = parseSpace(kSpace, "s.json");
  Config c = *s.fallback();
  Bowl f{s, c};
  int calls = 0;
  Evaluator ev(s, counted(f, calls), 2);
  EXPECT_EQ(ev(c), 1.0);
  EXPECT_EQ(ev(c), 1.0);
  EXPECT_EQ(ev.used(), 1);
  Config d = c;
  d[4] = (d[4] + 1) % 4;
  EXPECT_TRUE(ev(d));
  EXPECT_TRUE(ev.done());
  d[4] = (d[4] + 1) % 4;
  EXPECT_FALSE(ev(d));
  EXPECT_EQ(calls, 2);
}

TEST(TuneSearch, MasifFindsTheOptimumNearItsGuides) {
  Space s = parseSpace(kSpace, "s.json");
  for (int round = 0; round < 5; ++round) {
    uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Config opt = *s.randomLegal(rng);
    Bowl f{s, opt};
    // Guides: the optimum of "similar programs", i.e. the optimum moved a little, as Embedding points.
    Embedding em(s);
    std::vector<Guide> guides;
    std::normal_distribution<double> g(0, 0.06);
    for (int k = 0; k < 9; ++k) {
      Guide gd;
      gd.point = em.encode(opt);
      for (size_t i = 0; i < s.dims(); ++i)
        if (s.params[i].kind == Param::Kind::Int) gd.point[em.offset(i)] = std::clamp(gd.point[em.offset(i)] + g(rng), 0.0, 1.0);
      guides.push_back(gd);
    }
    int calls = 0;
    Evaluator ev(s, counted(f, calls), 45);
    MasifPlan plan = masifSearch(ev, rng, guides);
    EXPECT_FALSE(plan.fallback);
    EXPECT_GE(plan.components, 1u);
    EXPECT_GE(plan.explained, 0.90);
    EXPECT_LE(ev.used(), 45);
    ASSERT_TRUE(ev.best());
    // The optimum, or within the refinement's finest step (4% of an integer's range, 2-3 values of
    // the 63 tiles) of it: the bowl's 4 * 0.06^2 = 1.4% (a run of 300 seeds saw up to 1.6%).
    EXPECT_LE(ev.best()->seconds, 1.02) << s.key(ev.best()->config) << " vs " << s.key(opt);
  }
}

TEST(TuneSearch, MasifBeatsRandomWhenGuidesAreGood) {
  Space s = parseSpace(kSpace, "s.json");
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  double masifSum = 0, randomSum = 0;
  for (int round = 0; round < 10; ++round) {
    Config opt = *s.randomLegal(rng);
    Bowl f{s, opt};
    std::vector<Guide> guides;
    for (int k = 0; k < 3; ++k) guides.push_back({Embedding(s).encode(opt), "planted"});
    int calls = 0;
    Evaluator a(s, counted(f, calls), 20), b(s, counted(f, calls), 20);
    masifSearch(a, rng, guides);
    randomSearch(b, rng);
    masifSum += a.best()->seconds;
    randomSum += b.best()->seconds;
  }
  EXPECT_LT(masifSum, randomSum);
}

// A larger budget runs the smaller budget's search first: with the same seed, the budget-45 search
// evaluates the budget-20 search's configurations in the same order up to where the budget-20 one
// starts confirming, so on a noise-free objective it never ends worse. Checked with guides and
// without (the fallback), on a bowl that rewards moving.
TEST(TuneSearch, MasifLargerBudgetExtendsTheSmallerOne) {
  Space s = parseSpace(kSpace, "s.json");
  Embedding em(s);
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 pick(seed);
  const size_t shared = static_cast<size_t>(20 - masifConfirmations(20));
  for (bool withGuides : {true, false}) {
    Config opt = *s.randomLegal(pick);
    Bowl f{s, opt};
    std::vector<Guide> guides;
    if (withGuides)
      for (int k = 0; k < 4; ++k) guides.push_back({em.encode(*s.randomLegal(pick)), "guide"});
    int calls = 0;
    Evaluator small(s, counted(f, calls), 20), large(s, counted(f, calls), 45);
    std::mt19937_64 r1(seed), r2(seed);
    masifSearch(small, r1, guides);
    masifSearch(large, r2, guides);
    ASSERT_EQ(small.used(), 20);
    ASSERT_EQ(large.used(), 45);
    ASSERT_GE(small.history().size(), shared);
    ASSERT_GE(large.history().size(), shared);
    for (size_t i = 0; i < shared; ++i) ASSERT_EQ(small.history()[i].config, large.history()[i].config) << "evaluation " << i;
    EXPECT_LE(large.best()->seconds, small.best()->seconds);
  }
}

TEST(TuneSearch, RemeasureCountsAgainstTheBudgetAndAverages) {
  Space s = parseSpace(kSpace, "s.json");
  Config c = *s.fallback();
  std::vector<int> nths;
  // The nth measurement of anything reads 1 + nth: the first 1, the second 2.
  Evaluator ev(s, [&](const Config&, int nth, bool& cached) {
    cached = false;
    nths.push_back(nth);
    return 1.0 + nth;
  }, 3);
  int reported = 0;
  ev.progress = [&](const Evaluation& now, int index, int, const Evaluation&) {
    ++reported;
    EXPECT_EQ(index, ev.used());
    EXPECT_EQ(now.measurements.size(), static_cast<size_t>(ev.measurements(now.config)));
  };
  EXPECT_EQ(ev.measurements(c), 0);
  EXPECT_EQ(ev.remeasure(c), 1.0);  // new: measured for the first time
  EXPECT_EQ(ev.remeasure(c), 1.5);  // (1 + 2) / 2
  EXPECT_EQ(ev(c), 1.5);            // asked again: the figure, free
  EXPECT_EQ(ev.used(), 2);
  EXPECT_EQ(ev.measurements(c), 2);
  EXPECT_EQ(ev.remeasure(c), 2.0);  // (1 + 2 + 3) / 3
  EXPECT_TRUE(ev.done());
  EXPECT_FALSE(ev.remeasure(c));
  EXPECT_EQ(nths, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(reported, 3);
  ASSERT_EQ(ev.history().size(), 1u);
  EXPECT_EQ(ev.history()[0].measurements, (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_EQ(ev.best()->seconds, 2.0);
}

TEST(TuneSearch, CapHoldsBackTheBudget) {
  Space s = parseSpace(kSpace, "s.json");
  Bowl f{s, *s.fallback()};
  int calls = 0;
  Evaluator ev(s, counted(f, calls), 4);
  std::mt19937_64 rng(3);
  ev.cap(2);
  randomSearch(ev, rng);
  EXPECT_EQ(ev.used(), 2);
  ev.cap(100);  // above the budget: the budget rules
  randomSearch(ev, rng);
  EXPECT_EQ(ev.used(), 4);
}

// A measurement that caught a lucky moment: the fourth configuration the search measures reads 5%
// faster than the optimum on its first measurement, its true figure on any later one. MaSiF's last
// evaluations measure it again, its figure becomes the mean of the two, and the search ends on a
// configuration measured twice; not on the lucky one when the mean shows it slower than the optimum
// (which the guides point to, so the search measures it first).
TEST(TuneSearch, MasifConfirmsItsFastestConfigurations) {
  Space s = parseSpace(kSpace, "s.json");
  Embedding em(s);
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double kLucky = 0.95;
  for (int budget : {20, 45}) {
    Config opt = *s.randomLegal(rng);
    Bowl f{s, opt};
    std::optional<Config> lucky;
    int firstMeasurements = 0;
    // Noisy figures (a spread of 1%): the search reserves its confirmations.
    Evaluator ev(s, [&](const Config& c, int nth, bool& cached) {
      cached = false;
      if (nth == 0 && ++firstMeasurements == 4 && c != opt) {
        lucky = c;
        return Sample(kLucky, 0.01);
      }
      return Sample(f(c), 0.01);
    }, budget);
    std::vector<Guide> guides;
    for (int k = 0; k < 3; ++k) guides.push_back({em.encode(opt), "planted"});
    masifSearch(ev, rng, guides);
    EXPECT_EQ(ev.used(), budget);
    ASSERT_TRUE(lucky) << "the fourth configuration was the optimum itself";
    EXPECT_EQ(ev.measurements(*lucky), 2) << "the lucky configuration was not measured again";
    ASSERT_TRUE(ev.best());
    EXPECT_EQ(ev.measurements(opt), 2) << "the optimum was not confirmed";
    if ((kLucky + f(*lucky)) / 2 > f(opt)) {
      EXPECT_NE(ev.best()->config, *lucky);
    }
    EXPECT_EQ(ev.best()->measurements.size(), 2u);
    int confirmed = 0;
    for (auto& e : ev.history()) confirmed += e.measurements.size() == 2;
    EXPECT_LE(confirmed, masifConfirmations(budget));
  }
}

// Exact figures (no spread): nothing is measured twice, and refinement moves need only be faster.
TEST(TuneSearch, MasifSpendsNothingOnConfirmingExactFigures) {
  BowlCase t;
  Evaluator ev(t.s, counted(t.f, t.calls), 45);
  masifSearch(ev, t.rng, {{Embedding(t.s).encode(t.opt), "planted"}});
  EXPECT_EQ(ev.used(), 45);
  EXPECT_EQ(static_cast<int>(ev.history().size()), 45);
  for (auto& e : ev.history()) EXPECT_EQ(e.measurements.size(), 1u);
  EXPECT_EQ(masifMoveMargin(0, 0), 0.0);
  EXPECT_NEAR(masifMoveMargin(0.045, 0.01), 0.027, 1e-12);  // the larger spread counts
  EXPECT_NEAR(masifMoveMargin(0.01, 0.045), 0.027, 1e-12);
  EXPECT_EQ(masifMoveMargin(0.5, 0), 0.1);                   // at most 10%
}

// With noisy figures a refinement move must beat the current one by more than the noise. On a
// gentle ramp (2% from end to end, the optimum at x = 200) with figures that spread by 5% (a margin
// of 3%), the refinement from x = 100 takes no move in its 7 evaluations; with exact figures it
// climbs to the end in two.
TEST(TuneSearch, MasifRefinementIgnoresGainsWithinTheNoise) {
  Space s = parseSpace(R"({"x": {"min": 0, "max": 200}})", "ramp.json");
  Embedding em(s);
  for (double spread : {0.0, 0.05}) {
    SCOPED_TRACE("spread " + std::to_string(spread));
    std::mt19937_64 rng(11);
    Evaluator ev(s, [&](const Config& c, int, bool& cached) {
      cached = false;
      return Sample(1.0 - 1e-4 * c[0], spread);
    }, 7);
    masifSearch(ev, rng, {{em.encode({100}), "middle"}});  // the guide: the refinement starts at x = 100
    ASSERT_TRUE(ev.best());
    ASSERT_EQ(ev.history()[0].config[0], 100);
    if (spread == 0) {
      EXPECT_EQ(ev.best()->config[0], 200) << "exact figures: the climb walks the ramp";
    } else {
      EXPECT_LT(ev.best()->config[0], 190) << "noisy figures: gains of 1% or less are within the noise";
    }
  }
}

TEST(TuneSearch, MasifWithoutGuidesFallsBackAndSaysSo) {
  BowlCase t;
  Evaluator ev(t.s, counted(t.f, t.calls), 30);
  MasifPlan plan = masifSearch(ev, t.rng, {});
  EXPECT_TRUE(plan.fallback);
  EXPECT_EQ(ev.used(), 30);
  EXPECT_EQ(ev.history()[0].config, *t.s.fallback());  // the documented default comes first
  for (auto& e : ev.history()) EXPECT_TRUE(t.s.legal(e.config));
}

TEST(TuneSearch, DryRunEvaluatesNothing) {
  Space s = parseSpace(kSpace, "s.json");
  std::mt19937_64 rng(1);
  Config opt = *s.fallback();
  Bowl f{s, opt};
  int calls = 0;
  Evaluator ev(s, counted(f, calls), 30);
  Embedding em(s);
  MasifPlan plan = masifSearch(ev, rng, {{em.encode(opt), "a"}, {std::vector<double>(em.dims(), 0.2), "b"}}, true);
  EXPECT_EQ(calls, 0);
  ASSERT_GE(plan.first.size(), 2u);
  EXPECT_EQ(plan.first[0], *em.nearestLegal(plan.mean));  // the guides' mean first,
  EXPECT_EQ(plan.first[1], opt);                           // then the nearest neighbour's best
}

// Guides that point away from the optimum (a neighbour unlike the program after all): the search
// still ends near the optimum, through its refinement and exploration.
TEST(TuneSearch, MasifRecoversFromMisleadingGuides) {
  Space s = parseSpace(kSpace, "s.json");
  Embedding em(s);
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  double sum = 0;
  const int rounds = 10;
  for (int round = 0; round < rounds; ++round) {
    Config opt = *s.randomLegal(rng);
    Bowl f{s, opt};
    std::vector<Guide> guides;
    for (int k = 0; k < 6; ++k) {
      auto x = em.encode(opt);
      for (size_t i = 0; i < s.dims(); ++i) {
        if (s.params[i].kind == Param::Kind::Int) x[em.offset(i)] = 1.0 - x[em.offset(i)];  // the far side
        else
          for (size_t v = 0; v < s.params[i].size(); ++v) x[em.offset(i) + v] = 1.0 - x[em.offset(i) + v];  // any value but the right one
      }
      guides.push_back({x, "misleading"});
    }
    int calls = 0;
    Evaluator ev(s, counted(f, calls), 45);
    masifSearch(ev, rng, guides);
    ASSERT_TRUE(ev.best());
    EXPECT_EQ(ev.used(), 45);
    sum += ev.best()->seconds;
  }
  // The bowl's minimum is 1; a wrong categorical costs 0.5, a quarter of a range off 0.25.
  EXPECT_LE(sum / rounds, 1.1);
}

// A parameter none of the neighbours has (NaN in every guide) gets no help from them: the
// candidates cycle through its values, so the first few try each one, and the search finds the
// optimum even when the fallback's value is the wrong one.
TEST(TuneSearch, MasifExploresParametersNoNeighbourHas) {
  Space s = parseSpace(R"({
    "grain": {"pow2": [1, 4096]},
    "tile": {"min": 8, "max": 512, "step": 8},
    "method": ["atomic", "reduce", "combinable"],
    "ways": {"min": 1, "max": 16},
    "threads": [1, 2, 3, 4]
  })", "s.json");
  Embedding em(s);
  const size_t method = static_cast<size_t>(s.paramIndex("method")), ways = static_cast<size_t>(s.paramIndex("ways"));
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 5; ++round) {
    Config opt = *s.randomLegal(rng);
    opt[method] = 1 + static_cast<int>(rng() % 2);  // never the fallback's "atomic"
    Bowl f{s, opt};
    std::vector<Guide> guides;
    for (int k = 0; k < 4; ++k) {
      Guide g{em.encode(opt), "neighbour without method and ways"};
      for (size_t c = 0; c < 3; ++c) g.point[em.offset(method) + c] = std::nan("");
      g.point[em.offset(ways)] = std::nan("");
      guides.push_back(g);
    }
    int calls = 0;
    Evaluator ev(s, counted(f, calls), 45);
    MasifPlan plan = masifSearch(ev, rng, guides);
    EXPECT_EQ(plan.uninformed, 2u);
    ASSERT_GE(ev.history().size(), 3u);
    std::set<int> methods;
    for (size_t i = 0; i < 3; ++i) methods.insert(ev.history()[i].config[method]);
    EXPECT_EQ(methods.size(), 3u) << "the first three candidates should try every method";
    ASSERT_TRUE(ev.best());
    EXPECT_EQ(ev.best()->config[method], opt[method]);
    EXPECT_LE(ev.best()->seconds, 1.02) << s.key(ev.best()->config) << " vs " << s.key(opt);
  }
}

TEST(TuneSearch, EmbeddingPlacesValuesByValue) {
  Space s = parseSpace(R"({"grain": {"pow2": [1, 4096]}, "tile": {"min": 8, "max": 512, "step": 8}, "threads": [1, 2, 3, 4],
                           "part": ["auto", "simple", "static"]})", "s.json");
  Embedding em(s);
  ASSERT_EQ(em.dims(), 6u);  // three integers, three one-hot coordinates for part
  const size_t grain = static_cast<size_t>(s.paramIndex("grain")), tile = static_cast<size_t>(s.paramIndex("tile")),
               threads = static_cast<size_t>(s.paramIndex("threads")), part = static_cast<size_t>(s.paramIndex("part"));
  // pow2 and wide ranges on a log scale, narrow ones linear.
  EXPECT_NEAR((*em.encodeValue(grain, 64))[0], 0.5, 1e-12);
  EXPECT_NEAR((*em.encodeValue(tile, 64))[0], 0.5, 1e-12);  // 8 * 8 of 8 .. 512
  EXPECT_NEAR((*em.encodeValue(threads, 2))[0], 1.0 / 3, 1e-12);
  // Another program's values: clamped to the range; categoricals by identity.
  EXPECT_EQ((*em.encodeValue(grain, 1 << 20))[0], 1.0);
  EXPECT_EQ((*em.encodeValue(tile, 3))[0], 0.0);
  EXPECT_EQ(*em.encodeValue(part, "static"), (std::vector<double>{0, 0, 1}));
  EXPECT_FALSE(em.encodeValue(part, "affinity"));
  EXPECT_FALSE(em.encodeValue(grain, "auto"));
  Config c = s.fromJson(nlohmann::json::parse(R"({"grain": 64, "tile": 64, "threads": 2, "part": "simple"})"));
  auto x = em.encode(c);
  EXPECT_NEAR(x[em.offset(grain)], 0.5, 1e-12);
  EXPECT_EQ(std::vector<double>(x.begin() + static_cast<long>(em.offset(part)), x.begin() + static_cast<long>(em.offset(part)) + 3),
            (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(*em.nearestLegal(x), c);
}

TEST(TuneSearch, EmbeddingNearestLegalIsExact) {
  Space s = parseSpace(R"({"a": {"min": 0, "max": 15}, "b": {"pow2": [1, 64]}, "m": ["x", "y", "z"],
                           "constraints": ["a < b + 4", "m != \"z\" || a > 6"]})", "s.json");
  Embedding em(s);
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.2, 1.2);
  for (int round = 0; round < 50; ++round) {
    std::vector<double> p(em.dims());
    for (auto& v : p) v = u(rng);
    auto dist = [&](const Config& c) {
      auto x = em.encode(c);
      double d = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        double t = p[i];
        if (i == em.offset(0) || i == em.offset(1)) t = std::clamp(t, 0.0, 1.0);  // as nearestLegal does for integers
        d += (x[i] - t) * (x[i] - t);
      }
      return d;
    };
    double best = 1e300;
    s.forEachLegal([&](const Config& c) {
      best = std::min(best, dist(c));
      return true;
    });
    auto n = em.nearestLegal(p);
    ASSERT_TRUE(n);
    EXPECT_TRUE(s.legal(*n));
    EXPECT_NEAR(dist(*n), best, 1e-9);
    // With the nearest excluded, the next nearest is no closer.
    auto n2 = em.nearestLegal(p, [&](const Config& c) { return c == *n; });
    ASSERT_TRUE(n2);
    EXPECT_NE(*n2, *n);
    EXPECT_GE(dist(*n2), dist(*n) - 1e-12);
  }
}

TEST(TuneSearch, ExhaustiveGreedyAndRandomBaselines) {
  Space s = parseSpace(R"({"a": {"min": 0, "max": 15}, "b": {"pow2": [1, 64]}, "m": ["x", "y"], "constraints": ["a < b + 4"]})", "s.json");
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Config opt = *s.randomLegal(rng);
  Bowl f{s, opt};
  size_t legal = 0;
  s.forEachLegal([&](const Config&) {
    ++legal;
    return true;
  });
  int calls = 0;
  Evaluator all(s, counted(f, calls), 1000000);
  exhaustiveSearch(all);
  EXPECT_EQ(static_cast<size_t>(all.used()), legal);
  EXPECT_EQ(all.best()->config, opt);

  Evaluator greedy(s, counted(f, calls), 60);
  greedySearch(greedy, rng);
  EXPECT_EQ(greedy.best()->config, opt);  // a convex bowl: hill climbing reaches the bottom

  Evaluator rnd(s, counted(f, calls), 25);
  randomSearch(rnd, rng);
  EXPECT_EQ(rnd.used(), 25);
  for (auto& e : rnd.history()) EXPECT_TRUE(s.legal(e.config));
}

// A neighbour's good settings reach the target by value, whatever the two spaces' ranges and steps:
// grain 64 of a pow2 [1, 1024] space is grain 64 of a step-16 range (index-normalized it would be
// 0.6 of the way, about 2,450), and "static" is "static" though the lists differ.
TEST(TuneMasif, GuidesCarryOverByValue) {
  auto path = (tawa::test::tempDir() / "tune-guides.db").string();
  {
    Record rec(path);
    TuneTarget nb;
    nb.name = "neighbour";
    nb.kind = "parallel_for";
    nb.command = "true {grain} {part}";
    nb.spaceText = R"({"grain": {"pow2": [1, 1024]}, "part": ["auto", "static"]})";
    nb.space = parseSpace(nb.spaceText, "nb.json");
    nb.features = {{"loads", 3.0}, {"stores", 1.0}};
    int64_t id = registerTarget(rec, nb);
    for (int g = 1; g <= 1024; g *= 2)
      for (const char* part : {"auto", "static"}) {
        Measurement m;
        m.seconds = 1.0 + std::abs(std::log2(g) - 6.0) + (std::string(part) == "static" ? 0.0 : 0.5);
        m.repetitions = {m.seconds};
        rec.add(id, nlohmann::json{{"grain", g}, {"part", part}}.dump(), m);
      }
    TuneTarget t;
    t.name = "target";
    t.kind = "parallel_for";
    t.command = "true {grain} {part}";
    t.spaceText = R"({"grain": {"min": 16, "max": 4096, "step": 16}, "part": ["auto", "simple", "static"]})";
    t.space = parseSpace(t.spaceText, "t.json");
    t.features = {{"loads", 3.0}, {"stores", 1.0}};
    TuneOptions o;
    o.dryRun = true;
    TuneResult r = tune(rec, t, o);
    ASSERT_EQ(r.neighbours.size(), 1u);
    ASSERT_FALSE(r.plan.fallback);
    ASSERT_FALSE(r.plan.first.empty());
    // Guides: grain 64 (static), then 32/128 static, 64 auto; their mean, first, is about grain 64.
    auto first = t.space.toJson(r.plan.first[0]);
    EXPECT_EQ(first["part"], "static");
    EXPECT_GE(first["grain"].get<int>(), 48);
    EXPECT_LE(first["grain"].get<int>(), 80);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// The PCA keeps the fewest components that explain at least 90% of the guides' variance: exactly. The
// guides spread symmetrically along three integer parameters with standard deviations 0.30, 0.12 and
// 0.08 of the embedding, so one component explains 81.2%, two 94.2% (kept) and three 100%: a
// threshold of 80% or 99% instead of 90% keeps one or three.
TEST(TuneSearch, MasifKeepsTheComponentsThatExplainNinetyPercent) {
  Space s = parseSpace(kSpace, "s.json");
  Embedding em(s);
  std::mt19937_64 rng(3);
  Config centre = *s.randomLegal(rng);
  std::vector<double> mean = em.encode(centre);
  const size_t grain = em.offset(0), tile = em.offset(1), unroll = em.offset(2);
  mean[grain] = mean[tile] = mean[unroll] = 0.5;
  std::vector<Guide> guides;
  for (auto [coord, sd] : {std::pair{grain, 0.30}, std::pair{tile, 0.12}, std::pair{unroll, 0.08}})
    for (double sign : {-1.0, 1.0}) {
      Guide g{mean, "axis"};
      g.point[coord] += sign * sd;
      guides.push_back(g);
    }
  Bowl f{s, centre};
  int calls = 0;
  Evaluator ev(s, counted(f, calls), 20);
  MasifPlan plan = masifSearch(ev, rng, guides, true);
  EXPECT_EQ(calls, 0);  // a dry run measures nothing
  EXPECT_FALSE(plan.fallback);
  EXPECT_EQ(plan.components, 2u);
  const double v1 = 0.30 * 0.30, v2 = 0.12 * 0.12, v3 = 0.08 * 0.08;
  EXPECT_NEAR(plan.explained, (v1 + v2) / (v1 + v2 + v3), 1e-9);
  for (size_t j = 0; j < mean.size(); ++j) EXPECT_NEAR(plan.mean[j], mean[j], 1e-12) << "coordinate " << j;
}

namespace {

// A landscape over a small space: `f` at every legal configuration (a failure where f is +inf).
Landscape landscapeOf(const Space& s, const std::string& from, const std::function<double(const Config&)>& f) {
  Landscape l;
  l.from = from;
  s.forEachLegal([&](const Config& c) {
    l.seconds[c] = f(c);
    return true;
  });
  return l;
}

// Parameters sort by name, so a Config is {a, b, c}; the functions below read value indices (a = 1 is
// index 0).
const char* kGrid = R"({"a": {"min": 1, "max": 30}, "b": {"min": 1, "max": 30}, "c": ["p", "q"]})";

}  // namespace

TEST(TuneStats, SpearmanRanksWithTiesAtTheirMean) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Monotone but not linear: still 1.
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {1, 8, 27, 1000}), 1.0);
  // Ties: x ranks (0, 1.5, 1.5, 3), y ranks (0, 1, 2, 3): r = 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(4.5 * 5.0), 1e-12);
  EXPECT_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0.0);
  EXPECT_EQ(spearman({1}, {1}), 0.0);
}

// The transfer search: each neighbour's best first, then the neighbour that ranks the target alike
// takes over (few evaluations go to the other's region), and the target's optimum, which is neither
// neighbour's best, is reached. Fresh random optima each round.
TEST(TuneSearch, TransferFollowsTheNeighbourThatRanksLikeTheTarget) {
  Space s = parseSpace(kGrid, "g.json");
  for (int round = 0; round < 100; ++round) {
    uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> at(3, 10), shift(-2, 2);  // the unlike best, at 29 - o, is far
    const int ox = at(rng), oy = at(rng), dx = shift(rng) | 1, dy = shift(rng);
    auto bowl = [](int x0, int y0, int m0) {
      return [=](const Config& c) { return 1.0 + (c[0] - x0) * (c[0] - x0) + (c[1] - y0) * (c[1] - y0) + (c[2] == m0 ? 0 : 40); };
    };
    auto target = bowl(ox, oy, 1);
    Landscape alike = landscapeOf(s, "alike", bowl(ox + dx, oy + dy, 1));
    Landscape unlike = landscapeOf(s, "unlike", bowl(29 - ox, 29 - oy, 0));
    int calls = 0;
    Evaluator ev(
        s,
        [&](const Config& c, int, bool& cached) {
          cached = false;
          ++calls;
          return Sample(target(c));
        },
        40);
    MasifPlan plan = masifSearch(ev, rng, {}, false, {unlike, alike});
    ASSERT_TRUE(plan.transfer);
    ASSERT_GE(ev.history().size(), 2u);
    // The unlike neighbour comes first in the order given, and its best is evaluated first.
    EXPECT_EQ(ev.history()[0].config, (Config{29 - ox, 29 - oy, 0}));
    EXPECT_EQ(ev.history()[1].config, (Config{ox + dx, oy + dy, 1}));
    ASSERT_EQ(plan.weights.size(), 2u);
    // Once the figures speak, the unlike neighbour's region is left: few evaluations go near its best.
    int nearUnlike = 0;
    for (auto& e : ev.history())
      nearUnlike += std::abs(e.config[0] - (29 - ox)) + std::abs(e.config[1] - (29 - oy)) <= 3;
    EXPECT_LE(nearUnlike, 10);
    ASSERT_TRUE(ev.best());
    // The optimum, or (about once in a thousand rounds) one value beside it: the one-away moves are
    // ordered by the neighbours' scores, which put the alike neighbour's optimum first.
    EXPECT_LE(ev.best()->seconds, 2.0) << s.key(ev.best()->config);
    EXPECT_EQ(ev.used(), 40);
    EXPECT_EQ(calls, 40);
  }
}

// A configuration that failed on a neighbour scores below its worst figure, one it never measured at
// its median. One neighbour measured x = 0..149 (better at small x) and saw x = 199 fail; the rest it
// never ran. The target's figure improves along the neighbour's ranking (1000 - x), so the search
// does not stall into exploration: it takes the better half of the measured ones in order, then the
// unknown ones (tied with the median: the next eight, before any stall could begin exploring), and
// never the failed one.
TEST(TuneSearch, TransferScoresFailuresBelowEverythingAndUnknownsAtTheMedian) {
  Space s = parseSpace(R"({"x": {"min": 1, "max": 200}})", "l.json");
  Landscape l;
  l.from = "n";
  for (int x = 0; x < 150; ++x) l.seconds[Config{x}] = 1.0 + x;
  l.seconds[Config{199}] = std::numeric_limits<double>::infinity();
  std::mt19937_64 rng(std::random_device{}());
  Evaluator ev(s, [](const Config& c, int, bool& cached) { cached = false; return Sample(1000.0 - c[0]); }, 83);
  masifSearch(ev, rng, {}, false, {l});
  ASSERT_EQ(ev.history().size(), 83u);
  for (int x = 0; x < 75; ++x) EXPECT_EQ(ev.history()[static_cast<size_t>(x)].config, Config{x}) << x;
  for (size_t i = 75; i < 83; ++i) {
    const int x = ev.history()[i].config[0];
    EXPECT_TRUE(x == 75 || (x >= 150 && x < 199)) << i << ": " << x;
  }
}

// "Copy the neighbours' best": rank by rank across the landscapes, nothing else, whatever the budget.
TEST(TuneSearch, CopySearchTakesTheNeighboursBestRankByRank) {
  Space s = parseSpace(kGrid, "g.json");
  Landscape a = landscapeOf(s, "a", [](const Config& c) { return 1.0 + c[0] + 100 * c[1] + 10000 * c[2]; });
  Landscape b = landscapeOf(s, "b", [](const Config& c) { return 1.0 + (29 - c[0]) + 100 * (29 - c[1]) + 10000 * c[2]; });
  int calls = 0;
  Evaluator ev(s, [&](const Config&, int, bool& cached) { cached = false; ++calls; return Sample(1.0); }, 5);
  copySearch(ev, {}, {a, b});
  ASSERT_EQ(ev.history().size(), 5u);
  EXPECT_EQ(ev.history()[0].config, (Config{0, 0, 0}));
  EXPECT_EQ(ev.history()[1].config, (Config{29, 29, 0}));
  EXPECT_EQ(ev.history()[2].config, (Config{1, 0, 0}));
  EXPECT_EQ(ev.history()[3].config, (Config{28, 29, 0}));
  EXPECT_EQ(ev.history()[4].config, (Config{2, 0, 0}));
}

// A target that agrees with its neighbour everywhere but in a region the neighbour ranks last and
// no single-parameter move from the neighbour's optimum reaches (a, b >= 15: both must change). The
// ranking and the refinement stop at 500, the neighbour's optimum; once 8 evaluations in a row have
// not improved, every other one is random, and some 45 random configurations miss a quarter of the
// space with a chance of 0.75^45 (about 2e-6).
TEST(TuneSearch, TransferExploresWhenTheRankingStopsHelping) {
  Space s = parseSpace(R"({"a": {"min": 1, "max": 30}, "b": {"min": 1, "max": 30}})", "g.json");
  auto outside = [](const Config& c) { return 500.0 + c[0] * c[0] + c[1] * c[1]; };
  Landscape neighbour = landscapeOf(s, "n", outside);
  for (int round = 0; round < 10; ++round) {
    uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Evaluator ev(
        s,
        [&](const Config& c, int, bool& cached) {
          cached = false;
          return Sample(c[0] >= 14 && c[1] >= 14 ? 100.0 + (29 - c[0]) + (29 - c[1]) : outside(c));
        },
        100);
    masifSearch(ev, rng, {}, false, {neighbour});
    ASSERT_TRUE(ev.best());
    EXPECT_LT(ev.best()->seconds, 500.0) << s.key(ev.best()->config);
  }
}

// A landscape of failures only ranks nothing: it weighs 0 and keeps its place among the weights
// (reports name the landscapes by position), and alone it does not start the transfer search (the
// search runs, rather than finding nothing to rank).
TEST(TuneSearch, TransferIgnoresLandscapesOfFailuresOnly) {
  Space s = parseSpace(kGrid, "g.json");
  Landscape failed = landscapeOf(s, "failed", [](const Config&) { return std::numeric_limits<double>::infinity(); });
  Landscape good = landscapeOf(s, "good", [](const Config& c) { return 1.0 + c[0] + c[1] + c[2]; });
  EXPECT_FALSE(masifTransfers({failed}));
  EXPECT_TRUE(masifTransfers({failed, good}));
  std::mt19937_64 rng(std::random_device{}());
  auto target = [](const Config& c, int, bool& cached) { cached = false; return Sample(1.0 + c[0] + c[1] + c[2]); };
  Evaluator ev(s, target, 12);
  MasifPlan plan = masifSearch(ev, rng, {}, false, {failed, good});
  ASSERT_TRUE(plan.transfer);
  ASSERT_EQ(plan.weights.size(), 2u);
  EXPECT_EQ(plan.weights[0], 0.0);
  EXPECT_GT(plan.weights[1], 0.9);
  EXPECT_EQ(ev.history()[0].config, (Config{0, 0, 0}));
  EXPECT_EQ(ev.used(), 12);
  Evaluator alone(s, target, 12);
  EXPECT_FALSE(masifSearch(alone, rng, {}, false, {failed}).transfer);
  EXPECT_EQ(alone.used(), 12);
}
