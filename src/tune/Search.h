// The searches: MaSiF (features -> neighbours -> PCA -> reduced search), and the baselines
// exhaustive, random and greedy local search. Each spends an Evaluator's budget; none measures
// anything itself, so the same code runs on synthetic objectives in tests and on real programs.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/Space.h"

namespace tawa::tune {

// One measurement's figure and how far its repetitions spread: (max - min) / median, 0 when it had
// one repetition or is exact (a synthetic objective).
struct Sample {
  double seconds = 0;
  double spread = 0;
  std::string failure;  // when the measurement failed (seconds +inf): "timed out (60 s)", "failed (exit status 3)"
  Sample(double s = 0, double sp = 0, std::string why = {}) : seconds(s), spread(sp), failure(std::move(why)) {}  // NOLINT: a plain figure is a Sample
};

// One measurement a search asks for: a configuration and which of its measurements (0: the first;
// 1: the first re-measurement of a confirmation).
struct Proposal {
  Config config;
  int nth = 0;
  auto operator<=>(const Proposal&) const = default;
};

struct Evaluation {
  Config config;
  double seconds = 0;                 // the figure: the mean of its measurements; +inf when one failed
  double spread = 0;                  // the largest spread among its measurements
  std::vector<double> measurements;   // each measurement's figure, in the order they were made
  bool cached = false;                // the latest measurement came from the record, nothing was run
  std::string failure;                // the latest measurement's Sample::failure
};

// Counts measurements against the budget: a configuration asked for again costs nothing (its figure
// is kept), a deliberate re-measurement (remeasure) costs one.
class Evaluator {
 public:
  // Returns measurement `nth` (0: the first) of a configuration (a figure of +inf when it fails)
  // and sets `cached` when no run was needed.
  using Objective = std::function<Sample(const Config&, int nth, bool& cached)>;
  using Progress = std::function<void(const Evaluation& now, int index, int budget, const Evaluation& best)>;

  Evaluator(const Space& s, Objective f, int budget) : space_(s), f_(std::move(f)), budget_(budget) {}
  // The figure of c, measuring it when new; nullopt once the budget is spent (and c is new).
  std::optional<double> operator()(const Config& c);
  // Measures c once more (once, when it is new) and returns its new figure, the mean of its
  // measurements; nullopt once the budget is spent.
  std::optional<double> remeasure(const Config& c);
  bool done() const { return used() >= limit(); }
  // Holds back the budget beyond `n` measurements (done() turns true there) until the cap is raised.
  void cap(int n) { cap_ = n; }
  int limit() const { return std::min(budget_, cap_); }
  // Measurements made or under way: the search's own and those run ahead of it (AskTellSearch).
  int used() const { return spent_ + ahead_; }
  int budget() const { return budget_; }
  bool seen(const Config& c) const;
  // How many times c has been measured (0 when never).
  int measurements(const Config& c) const;
  // The largest spread among c's measurements (0 when never measured).
  double spread(const Config& c) const;
  const std::vector<Evaluation>& history() const { return history_; }
  std::optional<Evaluation> best() const;
  const Space& space() const { return space_; }
  Progress progress;

  // Ask/tell (AskTellSearch runs a search on its own thread and measures ahead of it): a search
  // announces the measurements it expects to ask for next, in order, with hint(); a later call
  // replaces the list. lookahead() is how many are worth announcing: 0 for a synchronous
  // evaluator, where nothing reads them (and a search computes none).
  int lookahead() const { return lookahead_; }
  void hint(std::vector<Proposal> next) const {
    if (lookahead_ > 0 && onHint_) onHint_(std::move(next));
  }
  void announceTo(int lookahead, std::function<void(std::vector<Proposal>)> onHint) {
    lookahead_ = lookahead;
    onHint_ = std::move(onHint);
  }
  // A measurement started ahead of the search counts against the budget from its start (+1), and
  // becomes the search's own when it asks for it or absorb() takes it (-1 here, +1 there).
  void runAhead(int delta) { ahead_ += delta; }
  // A measurement run ahead that the search never asked for, taken into the history once the
  // search has ended (so that best() sees it).
  void absorb(const Proposal& p, Sample s, bool cached);

 private:
  Sample measure(const Config& c, int nth, bool& cached);
  // A configuration's first evaluation, added to the history.
  Evaluation& addNew(const Config& c, const Sample& v, bool cached);

  const Space& space_;
  Objective f_;
  int budget_;
  int spent_ = 0;
  int cap_ = std::numeric_limits<int>::max();
  int ahead_ = 0;
  int lookahead_ = 0;
  std::function<void(std::vector<Proposal>)> onHint_;
  std::vector<Evaluation> history_;  // one entry per configuration
  std::map<Config, size_t> index_;   // configuration -> its place in history_
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

// A neighbour's recorded landscape over the target's space: each configuration it measured, mapped
// into the target space by parameter name and value, with its figure (+inf: it failed there).
struct Landscape {
  std::string from;  // "program@device", for reports
  std::map<Config, double> seconds;
};

// A landscape dense enough to rank the target's space (an import or a brute-force run, not a
// 45-evaluation tuning): MaSiF then searches by transfer (masifSearch).
inline constexpr size_t kDenseLandscape = 100;

// Whether masifSearch runs its transfer search on these landscapes: one of them holds
// kDenseLandscape configurations or more, and a figure (not only failures).
bool masifTransfers(const std::vector<Landscape>& landscapes);

struct MasifPlan {
  bool fallback = false;       // no guides: the documented default search ran instead
  bool transfer = false;       // dense landscapes: the transfer search ran (below)
  std::vector<double> weights; // transfer: each landscape's final weight, in the order given (all of them)
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
// components) ordered by Mahalanobis distance from the mean. Candidates get 40% of the first 20
// evaluations (8); the rest goes to local refinement from the best so far: a pattern search that
// moves one parameter at a time, integers by a step in Embedding coordinates (a quarter of the range,
// then a tenth, then 4%), categoricals to each other value (the guides' most frequent first). A move
// is taken only when its figure beats the current one by more than the noise of the two
// measurements (masifMoveMargin), so that the search does not wander after differences that are
// noise. At a local optimum it
// explores: the next unevaluated candidate, or a random legal configuration when those are spent,
// and refines from there if that is better. When the figures are noisy (a measurement of the first
// phase showed a spread), the last masifConfirmations(budget) evaluations measure the fastest
// configurations again (below), and the best is the one with the lowest mean.
// A guide coordinate may be NaN: the neighbour lacks that parameter. A parameter NaN in every guide
// is uninformed: the guides take the fallback's value there (no variance for the PCA), and the
// candidates explore it instead, candidate j setting it by a low-discrepancy sequence that starts at
// the fallback's value (categoricals cycle through their values, integers step by the golden ratio),
// so that the first few candidates try every value of a categorical no neighbour could speak for.
// Without guides (the documented default): the space's fallback configuration, random legal
// configurations up to a third of the first 20 evaluations, then the same refinement, exploration
// and confirmation.
// The first phase is sized for 20 evaluations whatever the budget, so with the same seed and record a
// larger budget evaluates the same configurations first, up to the smaller budget's confirmations.
// With `dryRun` nothing is evaluated; the plan says what would run.
//
// Confirmation: each confirming evaluation measures again the fastest configuration measured only
// once, as long as it ranks among the masifConfirmations(budget) fastest; its figure becomes the mean
// of its two measurements. A measurement that caught a lucky moment (a 3-run median on a shared
// machine strays by several percent, and the best of many near-equal figures is the luckiest)
// thereby loses its place to one that holds up.
//
// Transfer (when masifTransfers(landscapes)): the neighbours' landscapes rank the target's legal
// configurations; one with no figure at all (only failures) says nothing and weighs 0. Neighbour n scores configuration c
// by z_n(c) = log(t_n(c) / best_n); a configuration that failed there scores log(worst_n / best_n) + 1,
// one it never measured the median of its scores (it says nothing). The search evaluates each
// neighbour's best first (nearest neighbour first), then, one evaluation at a time, the unevaluated
// configuration with the lowest weighted mean score, where neighbour n's weight is
// max(0, rho_n)^2 + 0.001 and rho_n the Spearman correlation between its scores and the target's
// figures over the configurations evaluated so far that it measured (weight 1 until four have
// figures): the neighbours whose landscape resembles the target's take over, whatever the features
// said. Every other evaluation on average (a coin of the seed) looks only at the configurations one
// parameter away from the best so far, so that the search also refines where the neighbours
// disagree with the target. When kTransferStall evaluations in a row have not improved on the best,
// every other evaluation is a random unevaluated configuration instead, until one improves: where
// no neighbour resembles the target (a GPU unlike all the record's), the ranking stops helping, and
// the search must look elsewhere (the refinement then climbs from what exploration found).
// Confirmations as below when the figures are noisy. With larger spaces
// than kTransferEnumerate legal configurations, the candidates are the configurations the
// landscapes hold and those one parameter away from the best so far.
MasifPlan masifSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Guide>& guides, bool dryRun = false,
                      const std::vector<Landscape>& landscapes = {});
inline constexpr double kTransferEnumerate = 2e6;
inline constexpr int kTransferStall = 8;

// "Copy the neighbours' best", the baseline of transfer without search: every landscape's best
// configuration (nearest neighbour first), then every landscape's second best, and so on; without
// landscapes the guides (their nearest legal configurations) in their order. Stops when those are
// spent, whatever the budget.
void copySearch(Evaluator& ev, const std::vector<Guide>& guides, const std::vector<Landscape>& landscapes);

// The share by which a refinement move must beat the current figure: 0.6 x the larger spread of the
// two measurements, at most 10%. For a median of 3 runs, 0.6 x their range is about one standard
// deviation of the difference of two such medians: 2.7% at this machine's median spread of 4.5%,
// and 0 for exact figures (a synthetic objective, or a program that prints a deterministic figure).
double masifMoveMargin(double spreadA, double spreadB);

// One confirming evaluation per 10 of the budget (none below 10): 2 at 20, 4 at 45. (masifSearch
// reserves them only when a measurement of its first phase showed a spread.)
int masifConfirmations(int budget);

}  // namespace tawa::tune
