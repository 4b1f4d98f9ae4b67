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

#include <nlohmann/json.hpp>

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

// Where MaSiF places configurations: every parameter normalized to [0, 1] by its *value*, so that a
// neighbour's setting carries over whatever the two spaces' ranges and steps are. An integer whose
// values are positive and span a factor of 8 or more (grain sizes, tiles, cut-offs) sits on a log
// scale, other integers on a linear one; a value outside the range is clamped to its end. A
// categorical is one coordinate per value (one-hot), so a mean of guides is a vote and the nearest
// configuration to it takes the value most of them chose.
class Embedding {
 public:
  explicit Embedding(const Space& s);
  size_t dims() const { return dims_; }
  size_t offset(size_t param) const { return offset_[param]; }
  std::vector<double> encode(const Config& c) const;
  // The coordinates parameter `param` takes for `value` (a number, or a category name, possibly from
  // another program's space); nullopt for a category the parameter lacks, or a value of the wrong type.
  std::optional<std::vector<double>> encodeValue(size_t param, const nlohmann::json& value) const;
  // The coordinate of integer parameter `param`'s value index `index`.
  double coord(size_t param, int index) const;
  // The legal configuration nearest to `point` (Euclidean) that `skip` does not reject; exact (a
  // best-first walk over each parameter's values in order of their own distance). nullopt when none
  // is found within `maxVisits`.
  std::optional<Config> nearestLegal(const std::vector<double>& point, const std::function<bool(const Config&)>& skip = {},
                                     size_t maxVisits = 200000) const;

 private:
  const Space& space_;
  size_t dims_ = 0;
  std::vector<size_t> offset_;
  std::vector<bool> log_;
};

// A good configuration of a neighbouring program, as a point of the target space's Embedding.
struct Guide {
  std::vector<double> point;
  std::string from;  // which program and configuration, for --dry-run and reports
};

struct MasifPlan {
  bool fallback = false;       // no guides: the documented default search ran instead
  size_t components = 0;       // PCA components kept
  double explained = 0;        // their share of the variance
  size_t uninformed = 0;       // parameters no guide has a value for, explored by the candidates
  std::vector<double> mean;    // the guides' mean, in Embedding coordinates
  std::vector<Config> first;   // the first candidates in evaluation order (up to 20), for --dry-run
};

// The MaSiF search. `guides` come in the order they should be tried (the caller puts every
// neighbour's best before any neighbour's second best, nearest neighbour first).
//
// With guides: PCA of the guide points keeping >= 90% of the variance. Candidates, most promising
// first: the nearest legal configuration to the guides' mean, the guides themselves, then a lattice
// along the kept components (steps of half a standard deviation up to three, on at most four
// components) ordered by Mahalanobis distance from the mean. Candidates get 40% of the budget; the
// rest goes to local refinement from the best so far: a pattern search that moves one parameter at
// a time, integers by a step in Embedding coordinates (a quarter of the range, halved down to one
// value whenever a sweep over all parameters finds nothing better), categoricals to each other value
// (the guides' most frequent first). At a local optimum it explores: the next unevaluated candidate,
// or a random legal configuration when those are spent, and refines from there if that is better.
// A guide coordinate may be NaN: the neighbour lacks that parameter. A parameter NaN in every guide
// is uninformed: the guides take the fallback's value there (no variance for the PCA), and the
// candidates explore it instead, candidate j setting it by a low-discrepancy sequence that starts at
// the fallback's value (categoricals cycle through their values, integers step by the golden ratio),
// so that the first few candidates try every value of a categorical no neighbour could speak for.
// Without guides (the documented default): the space's fallback configuration, random legal
// configurations up to a third of the budget, then the same refinement and exploration.
// With `dryRun` nothing is evaluated; the plan says what would run.
MasifPlan masifSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Guide>& guides, bool dryRun = false);

}  // namespace tawa::tune
