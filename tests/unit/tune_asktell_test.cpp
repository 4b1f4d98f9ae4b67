// Ask/tell: every search run through AskTellSearch with one worker evaluates exactly what it
// evaluates synchronously; with several workers and results told in a random order (fresh seeds,
// printed on failure), each measurement is proposed once, the budget holds, nothing told is lost
// from the history, and the best is the best of what was measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>

#include <fstream>

#include "TempDir.h"
#include "TuneSpace.h"
#include "tune/AskTell.h"
#include "tune/Replay.h"
#include "tune/Search.h"
#include "tune/SpaceJson.h"

using namespace tawa::tune;

namespace {

const char* const kSpace = tawa::test::kTuneSpace;

// A bowl with its minimum at `opt` and a little deterministic roughness, plus a spread on every
// figure so that MaSiF reserves confirmations (re-measurements: nth = 1).
struct Rough {
  const Space& s;
  Config opt;
  Sample operator()(const Config& c, int nth) const {
    auto x = s.normalize(c), o = s.normalize(opt);
    double v = 1.0;
    for (size_t i = 0; i < c.size(); ++i) {
      if (s.params[i].kind == Param::Kind::Categorical) v += c[i] == opt[i] ? 0 : 0.5;
      else v += 4 * (x[i] - o[i]) * (x[i] - o[i]) + 0.01 * std::sin(37.0 * x[i] + nth);
    }
    return Sample(v, 0.02);
  }
};

// kSpace, a fresh seed (printed on failure) and a rough bowl whose optimum is a random legal
// configuration. Not copyable: the bowl refers to the space.
struct RoughCase {
  Space s = parseSpace(kSpace, "s.json");
  uint64_t seed = std::random_device{}();
  testing::ScopedTrace trace{__FILE__, __LINE__, "seed " + std::to_string(seed)};
  std::mt19937_64 rng{seed};
  Rough f{s, *s.randomLegal(rng)};
  RoughCase() = default;
  RoughCase(const RoughCase&) = delete;
  RoughCase& operator=(const RoughCase&) = delete;
};

// The tests over every method start from one such case.
struct TuneAskTellMethods : testing::Test, RoughCase {};

using SearchFn = std::function<void(Evaluator&)>;

// The searches as each method runs them, with their own generator seeded by `seed`.
std::vector<std::pair<std::string, std::function<SearchFn(uint64_t)>>> methods(const Space& s, const Config& opt) {
  Embedding em(s);
  std::vector<Guide> guides = {{em.encode(opt), "near"}};
  std::mt19937_64 gr(opt[0] + 7);
  guides.push_back({em.encode(*s.randomLegal(gr)), "other"});
  Landscape l;
  l.from = "neighbour";
  std::mt19937_64 lr(5);
  for (int i = 0; i < 300; ++i)
    if (auto c = s.randomLegal(lr)) l.seconds[*c] = Rough{s, opt}(*c, 0).seconds * (1.0 + 0.05 * (i % 7));
  auto with = [](auto f) { return [f](uint64_t seed) -> SearchFn { return [f, seed](Evaluator& ev) { std::mt19937_64 rng(seed); f(ev, rng); }; }; };
  return {
      {"masif", with([guides](Evaluator& ev, std::mt19937_64& rng) { masifSearch(ev, rng, guides); })},
      {"masif-default", with([](Evaluator& ev, std::mt19937_64& rng) { masifSearch(ev, rng, {}); })},
      {"masif-transfer", with([l](Evaluator& ev, std::mt19937_64& rng) { masifSearch(ev, rng, {}, false, {l}); })},
      {"copy", with([guides, l](Evaluator& ev, std::mt19937_64&) { copySearch(ev, guides, {l}); })},
      {"random", with([](Evaluator& ev, std::mt19937_64& rng) { randomSearch(ev, rng); })},
      {"greedy", with([](Evaluator& ev, std::mt19937_64& rng) { greedySearch(ev, rng); })},
      {"exhaustive", with([](Evaluator& ev, std::mt19937_64&) { exhaustiveSearch(ev); })},
  };
}

// An engine of `workers` workers over an ask/tell search: what ask() proposes waits in a queue; an
// idle worker takes the measurement the search waits for first, else the oldest. `finishNext` picks
// which running measurement ends next (its index among them). Returns every proposal in order.
// With `clock`, every measurement takes one unit from its start and finishNext must pick the one
// that started first: *clock ends as the time the last one finished.
std::vector<Proposal> engine(AskTellSearch& at, size_t workers, const Rough& f, const std::function<size_t(size_t)>& finishNext,
                             int* clock = nullptr) {
  std::vector<Proposal> all, queue, running;
  std::vector<int> started;  // when each running measurement started (with `clock`)
  int now = 0;
  for (int guard = 0; guard < 100000; ++guard) {
    for (auto got = at.ask(); !got.empty(); got = at.ask()) {
      all.insert(all.end(), got.begin(), got.end());
      queue.insert(queue.end(), got.begin(), got.end());
      break;
    }
    while (running.size() < workers && !queue.empty()) {
      auto w = at.waitingFor();
      auto it = w ? std::find(queue.begin(), queue.end(), *w) : queue.end();
      if (it == queue.end()) it = queue.begin();
      running.push_back(*it);
      started.push_back(now);
      queue.erase(it);
    }
    if (running.empty()) {
      EXPECT_TRUE(at.finished()) << "nothing under way and nothing proposed, but the search has not finished";
      if (clock) *clock = now;
      return all;
    }
    size_t pick = finishNext(running.size());
    Proposal p = running[pick];
    now = std::max(now, started[pick] + 1);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    started.erase(started.begin() + static_cast<std::ptrdiff_t>(pick));
    at.tell(p, f(p.config, p.nth));
  }
  ADD_FAILURE() << "the search did not end";
  return all;
}

std::vector<Proposal> drive(AskTellSearch& at, size_t workers, const Rough& f, std::mt19937_64& rng, bool inOrder = false) {
  return engine(at, workers, f, [&](size_t n) { return inOrder ? size_t{0} : std::uniform_int_distribution<size_t>(0, n - 1)(rng); });
}

}  // namespace

TEST_F(TuneAskTellMethods, OneWorkerEvaluatesWhatTheSynchronousSearchDoes) {
  for (auto& [name, make] : methods(s, f.opt)) {
    SCOPED_TRACE(name);
    Evaluator sync(s, [&](const Config& c, int nth, bool& cached) { cached = false; return f(c, nth); }, 40);
    make(seed)(sync);
    AskTellSearch at(s, 40, make(seed), 0);
    auto proposals = drive(at, 1, f, rng, true);
    const Evaluator& ev = at.evaluator();
    ASSERT_EQ(ev.history().size(), sync.history().size());
    for (size_t i = 0; i < ev.history().size(); ++i) {
      EXPECT_EQ(ev.history()[i].config, sync.history()[i].config) << "evaluation " << i;
      EXPECT_EQ(ev.history()[i].measurements, sync.history()[i].measurements) << "evaluation " << i;
    }
    EXPECT_EQ(ev.used(), sync.used());
    EXPECT_EQ(static_cast<int>(proposals.size()), sync.used());
  }
}

TEST(TuneAskTell, SeveralWorkersAnyOrderLoseNothingAndKeepTheBudget) {
  Space s = parseSpace(kSpace, "s.json");
  for (int round = 0; round < 6; ++round) {
    const uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Rough f{s, *s.randomLegal(rng)};
    for (auto& [name, make] : methods(s, f.opt)) {
      SCOPED_TRACE(name);
      const size_t workers = 2 + round % 3;
      const int budget = 30 + round;
      AskTellSearch at(s, budget, make(seed), static_cast<int>(workers) - 1);
      auto proposals = drive(at, workers, f, rng);
      const Evaluator& ev = at.evaluator();
      std::set<Proposal> unique(proposals.begin(), proposals.end());
      EXPECT_EQ(unique.size(), proposals.size()) << "a measurement was proposed twice";
      EXPECT_LE(static_cast<int>(proposals.size()), budget);
      EXPECT_EQ(ev.used(), static_cast<int>(proposals.size())) << "every measurement made counts once";
      // Every told measurement is in the history, and nothing else.
      size_t measurements = 0;
      for (auto& e : ev.history()) {
        measurements += e.measurements.size();
        for (size_t n = 0; n < e.measurements.size(); ++n)
          EXPECT_TRUE(unique.count({e.config, static_cast<int>(n)})) << s.key(e.config) << " measurement " << n;
      }
      EXPECT_EQ(measurements, proposals.size());
      double best = INFINITY;
      for (auto& p : proposals)
        if (p.nth == 0) best = std::min(best, f(p.config, 0).seconds);
      ASSERT_TRUE(ev.best());
      // The best's figure is the mean of its measurements; its first one is no worse than the best first figure
      // by more than the roughness of a second measurement.
      EXPECT_LE(ev.best()->seconds, best + 0.03);
      for (auto& p : proposals) EXPECT_TRUE(s.legal(p.config));
    }
  }
}

TEST(TuneAskTell, WorkersMeasureAhead) {
  // With three measurements ahead the first ask of an exhaustive search proposes four at once.
  Space s = parseSpace(kSpace, "s.json");
  AskTellSearch at(s, 20, [](Evaluator& ev) { exhaustiveSearch(ev); }, 3);
  auto first = at.ask();
  EXPECT_EQ(first.size(), 4u);
  std::set<Proposal> u(first.begin(), first.end());
  EXPECT_EQ(u.size(), 4u);
  ASSERT_TRUE(at.waitingFor());
  EXPECT_EQ(*at.waitingFor(), first[0]);
  EXPECT_TRUE(at.ask().empty()) << "nothing new while the search waits";
  // Told out of order (the demand last), the search still ends with all twenty.
  for (auto it = first.rbegin(); it != first.rend(); ++it) at.tell(*it, Sample(1.0 + it->config[0]));
  std::mt19937_64 rng(1);
  Rough f{s, *s.fallback()};
  drive(at, 4, f, rng);
  EXPECT_EQ(at.evaluator().history().size(), 20u);
}

// What is proposed does not depend on when results arrive: the same search with the same lookahead
// proposes the same measurements whether two workers or five run them, in order or not.
TEST_F(TuneAskTellMethods, ProposalsDoNotDependOnArrivalOrder) {
  for (auto& [name, make] : methods(s, f.opt)) {
    SCOPED_TRACE(name);
    AskTellSearch a(s, 35, make(seed), 2), b(s, 35, make(seed), 2);
    auto pa = drive(a, 2, f, rng, true);
    auto pb = drive(b, 5, f, rng);
    auto keys = [&](std::vector<Proposal> ps) {
      std::sort(ps.begin(), ps.end());
      std::vector<std::string> k;
      for (auto& p : ps) k.push_back(s.key(p.config) + "#" + std::to_string(p.nth));
      return k;
    };
    EXPECT_EQ(keys(pa), keys(pb));
    ASSERT_TRUE(a.evaluator().best() && b.evaluator().best());
    EXPECT_EQ(a.evaluator().best()->config, b.evaluator().best()->config);
  }
}

TEST(TuneAskTell, ASearchErrorReachesTheCaller) {
  Space s = parseSpace(kSpace, "s.json");
  AskTellSearch at(s, 10, [](Evaluator& ev) {
    ev(*ev.space().fallback());
    throw std::runtime_error("the search failed");
  }, 2);
  auto p = at.ask();
  ASSERT_EQ(p.size(), 1u);
  at.tell(p[0], Sample(1.0));
  EXPECT_THROW(at.ask(), std::runtime_error);
}

TEST(TuneAskTell, MisuseIsAnErrorAndAnAbandonedSearchStops) {
  Space s = parseSpace(kSpace, "s.json");
  {
    AskTellSearch at(s, 10, [](Evaluator& ev) { exhaustiveSearch(ev); }, 1);
    auto p = at.ask();
    ASSERT_EQ(p.size(), 2u);
    at.tell(p[0], Sample(1.0));
    EXPECT_THROW(at.tell(p[0], Sample(1.0)), std::logic_error);  // told twice
    at.ask();  // the search takes p[0]
    EXPECT_THROW(at.tell(p[0], Sample(1.0)), std::logic_error);  // told again after the search took it
    Config other = *s.fallback();
    other[0] = (other[0] + 1) % static_cast<int>(s.params[0].size());
    EXPECT_THROW(at.tell({other, 3}, Sample(1.0)), std::logic_error);  // never proposed
    EXPECT_FALSE(at.finished());
  }  // destroyed while the search waits: its thread unwinds (a hang here fails the test by timeout)
  SUCCEED();
}

// Measurement ahead pays: on a simulated clock where every measurement takes one unit, four workers
// finish each method's 40 measurements in under 80% of the time one worker takes (MaSiF, whose
// refinement climbs from the best so far, 40-65%; random, exhaustive and copy a quarter).
TEST_F(TuneAskTellMethods, FourWorkersFinishSooner) {
  for (auto& [name, make] : methods(s, f.opt)) {
    SCOPED_TRACE(name);
    auto makespan = [&](size_t workers) {
      AskTellSearch at(s, 40, make(seed), static_cast<int>(workers) - 1);
      int now = 0;
      const int measured = static_cast<int>(engine(at, workers, f, [](size_t) { return size_t{0}; }, &now).size());
      std::printf("  %-15s %zu worker(s): %d measurements in %d units\n", name.c_str(), workers, measured, now);
      return std::pair{now, measured};
    };
    auto [one, n1] = makespan(1);
    auto [four, n4] = makespan(4);
    EXPECT_EQ(one, n1);
    EXPECT_LT(four, one * 8 / 10);
  }
}

// A replayed landscape's noise is a function of the seed, the configuration and which measurement
// of it this is, whatever order the calls come in (workers measure in any order).
TEST(TuneReplay, NoiseDependsOnTheConfigurationAndMeasurementNotTheOrder) {
  Space s = parseSpace(R"({"x": [1, 2, 3, 4]})", "s.json");
  const auto csv = tawa::test::tempDir() / "noisy.csv";
  std::ofstream(csv) << "x,time_ms,std_ms\n1,1.0,0.1\n2,2.0,0.2\n3,3.0,0.3\n4,4.0,0.4\n";
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto a = loadReplay(csv.string(), s, true, seed), b = loadReplay(csv.string(), s, true, seed);
  std::vector<double> forward, backward(4);
  for (int x = 0; x < 4; ++x) forward.push_back(a({x}, 0).seconds);
  for (int x = 3; x >= 0; --x) backward[static_cast<size_t>(x)] = b({x}, 0).seconds;
  EXPECT_EQ(forward, backward);
  for (int x = 0; x < 4; ++x) {
    EXPECT_EQ(a({x}, 1).seconds, b({x}, 1).seconds);
    EXPECT_NE(a({x}, 0).seconds, a({x}, 1).seconds) << "a second measurement draws again";
    EXPECT_NEAR(forward[static_cast<size_t>(x)], (x + 1) * 1e-3, 0.5e-3 * (x + 1)) << "a draw 5 standard deviations from the row's mean";
  }
  auto other = loadReplay(csv.string(), s, true, seed + 1);
  EXPECT_NE(other({0}, 0).seconds, forward[0]) << "another seed draws other figures";
}
