// The searches: MaSiF (features -> neighbours -> PCA -> reduced search), and the baselines
// exhaustive, random and greedy local search. Each spends an Evaluator's budget; none measures
// anything itself, so the same code runs on synthetic objectives in tests and on real programs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tune/Space.h"

namespace tawa::tune {

struct Evaluation {
  Config config;
  double seconds = 0;  // +inf when the configuration failed
  bool cached = false; // the value came from the record, nothing was run
};

// Counts distinct configurations against the budget; a configuration asked for twice costs once.
class Evaluator {
 public:
  // Returns the figure of a configuration (+inf when it fails) and sets `cached` when no run was needed.
  using Objective = std::function<double(const Config&, bool& cached)>;
  using Progress = std::function<void(const Evaluation& now, int index, int budget, const Evaluation& best)>;

  Evaluator(const Space& s, Objective f, int budget) : space_(s), f_(std::move(f)), budget_(budget) {}
  // nullopt once the budget is spent (and c is new).
  std::optional<double> operator()(const Config& c);
  bool done() const { return used() >= budget_; }
  int used() const { return static_cast<int>(history_.size()); }
  int budget() const { return budget_; }
  bool seen(const Config& c) const;
  const std::vector<Evaluation>& history() const { return history_; }
  std::optional<Evaluation> best() const;
  const Space& space() const { return space_; }
  Progress progress;

 private:
  const Space& space_;
  Objective f_;
  int budget_;
  std::vector<Evaluation> history_;
  std::map<Config, size_t> index_;  // configuration -> its place in history_
};

void exhaustiveSearch(Evaluator& ev);
void randomSearch(Evaluator& ev, std::mt19937_64& rng);
// First-improvement hill climbing over single-parameter moves from `start` (the space's fallback when
// absent); at a local optimum it restarts from a random legal configuration.
void greedySearch(Evaluator& ev, std::mt19937_64& rng, std::optional<Config> start = std::nullopt);

// A good configuration of a neighbouring program, in the target space's normalized coordinates.
struct Guide {
  std::vector<double> point;
  std::string from;  // which program and configuration, for --dry-run and reports
};

struct MasifPlan {
  bool fallback = false;       // no guides: the documented default search ran instead
  size_t components = 0;       // PCA components kept
  double explained = 0;        // their share of the variance
  std::vector<double> mean;    // the guides' mean, normalized
  std::vector<Config> first;   // the first candidates in evaluation order (up to 20), for --dry-run
};

// The MaSiF search. With guides (in order of their neighbour's distance, nearest first): PCA of the
// guides keeping >= 90% of the variance; candidates are the guides themselves, their mean, then a lattice along the kept components (steps of half a
// standard deviation up to three, on at most four components) ordered by Mahalanobis distance from
// the mean, each mapped to the nearest legal configuration; about 60% of the budget goes to these,
// most promising first, the rest to first-improvement refinement from the best so far (going back
// to the candidates if refinement reaches a local optimum).
// Without guides (the documented default): the space's fallback configuration, random legal
// configurations for half the budget, then the same refinement.
// With `dryRun` nothing is evaluated; the plan says what would run.
MasifPlan masifSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Guide>& guides, bool dryRun = false);

}  // namespace tawa::tune
