#include "tune/Search.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <queue>
#include <map>
#include <set>
#include <tuple>

#include "tune/Measure.h"
#include "tune/Stats.h"

namespace tawa::tune {

namespace {

Sample normalized(Sample v) {
  if (!(v.seconds >= 0)) v.seconds = std::numeric_limits<double>::infinity();
  if (!(v.spread >= 0) || !std::isfinite(v.spread)) v.spread = 0;
  return v;
}

// A further measurement of e: its figure becomes the mean of its measurements.
void addMeasurement(Evaluation& e, const Sample& v) {
  e.measurements.push_back(v.seconds);
  e.spread = std::max(e.spread, v.spread);
  e.failure = v.failure;
  double sum = 0;
  for (double m : e.measurements) sum += m;  // +inf when one failed
  e.seconds = sum / static_cast<double>(e.measurements.size());
}

}  // namespace

Sample Evaluator::measure(const Config& c, int nth, bool& cached) {
  Sample v = f_(c, nth, cached);
  ++spent_;
  return normalized(v);
}

Evaluation& Evaluator::addNew(const Config& c, const Sample& v, bool cached) {
  Evaluation e;
  e.config = c;
  e.cached = cached;
  e.seconds = v.seconds;
  e.spread = v.spread;
  e.failure = v.failure;
  e.measurements = {e.seconds};
  index_.emplace(c, history_.size());
  history_.push_back(e);
  return history_.back();
}

std::optional<double> Evaluator::operator()(const Config& c) {
  if (auto it = index_.find(c); it != index_.end()) return history_[it->second].seconds;
  if (done()) return std::nullopt;
  bool cached = false;
  Sample v = measure(c, 0, cached);
  const Evaluation& e = addNew(c, v, cached);
  if (progress) progress(e, used(), budget_, *best());
  return e.seconds;
}

std::optional<double> Evaluator::remeasure(const Config& c) {
  auto it = index_.find(c);
  if (it == index_.end()) return (*this)(c);
  if (done()) return std::nullopt;
  Evaluation& e = history_[it->second];
  Sample v = measure(c, static_cast<int>(e.measurements.size()), e.cached);
  addMeasurement(e, v);
  if (progress) progress(e, used(), budget_, *best());
  return e.seconds;
}

void Evaluator::absorb(const Proposal& p, Sample s, bool cached) {
  s = normalized(s);
  --ahead_;
  ++spent_;
  auto it = index_.find(p.config);
  Evaluation* e = nullptr;
  if (it == index_.end()) {
    e = &addNew(p.config, s, cached);
  } else {
    e = &history_[it->second];
    addMeasurement(*e, s);
    e->cached = cached;
  }
  if (progress) progress(*e, used(), budget_, *best());
}

bool Evaluator::seen(const Config& c) const { return index_.count(c) > 0; }

int Evaluator::measurements(const Config& c) const {
  auto it = index_.find(c);
  return it == index_.end() ? 0 : static_cast<int>(history_[it->second].measurements.size());
}

double Evaluator::spread(const Config& c) const {
  auto it = index_.find(c);
  return it == index_.end() ? 0.0 : history_[it->second].spread;
}

std::optional<Evaluation> Evaluator::best() const {
  if (history_.empty()) return std::nullopt;
  return *std::min_element(history_.begin(), history_.end(),
                           [](const Evaluation& a, const Evaluation& b) { return a.seconds < b.seconds; });
}

namespace {

// Announces (Evaluator::hint) the configurations of next[from..] the search has not evaluated, up to
// its lookahead: what an ask/tell engine may measure ahead of the search.
void announce(const Evaluator& ev, const std::vector<Config>& next, size_t from = 0) {
  if (ev.lookahead() <= 0) return;
  std::vector<Proposal> ps;
  for (size_t i = from; i < next.size() && static_cast<int>(ps.size()) < ev.lookahead(); ++i)
    if (!ev.seen(next[i]) && ev.space().legal(next[i])) ps.push_back({next[i], 0});
  ev.hint(std::move(ps));
}

}  // namespace

void exhaustiveSearch(Evaluator& ev) {
  std::vector<Config> all;  // the legal configurations the budget reaches, in the space's order
  ev.space().forEachLegal([&](const Config& c) {
    if (!ev.seen(c)) all.push_back(c);
    return static_cast<int>(all.size()) < ev.limit() - ev.used();
  });
  for (size_t i = 0; i < all.size(); ++i) {
    announce(ev, all, i + 1);
    if (!ev(all[i])) return;
  }
}

void randomSearch(Evaluator& ev, std::mt19937_64& rng) {
  int misses = 0;
  bool none = false;  // the space has no legal configuration randomLegal finds
  std::vector<Config> planned;  // drawn, not yet evaluated: the next, then what is announced
  auto draw = [&] {
    while (misses < 1000) {
      auto c = ev.space().randomLegal(rng);
      if (!c) {
        none = true;
        return false;
      }
      if (ev.seen(*c) || std::find(planned.begin(), planned.end(), *c) != planned.end()) {
        ++misses;
        continue;
      }
      planned.push_back(*c);
      return true;
    }
    return false;
  };
  while (!ev.done()) {
    while (static_cast<int>(planned.size()) < 1 + std::max(0, ev.lookahead()) && draw()) {
    }
    if (planned.empty()) break;
    announce(ev, planned, 1);
    Config c = planned.front();
    planned.erase(planned.begin());
    ev(c);
  }
  if (none) return;
  if (!ev.done()) exhaustiveSearch(ev);  // a small space: whatever random sampling missed
}

namespace {

// One first-improvement climb from the best configuration so far. Returns false when it stopped at
// a local optimum (every neighbour evaluated, none better) rather than on the budget.
bool refine(Evaluator& ev, std::mt19937_64& rng, Config cur) {
  auto start = ev(cur);
  if (!start) return true;
  double curV = *start;
  for (;;) {
    auto ns = ev.space().neighbours(cur);
    std::shuffle(ns.begin(), ns.end(), rng);
    bool moved = false;
    for (size_t j = 0; j < ns.size(); ++j) {
      const Config& n = ns[j];
      if (!ev.space().legal(n)) continue;
      announce(ev, ns, j + 1);
      auto v = ev(n);
      if (!v) return true;
      if (*v < curV) {
        cur = n;
        curV = *v;
        moved = true;
        break;
      }
    }
    if (!moved) return false;
  }
}

}  // namespace

void greedySearch(Evaluator& ev, std::mt19937_64& rng, std::optional<Config> start) {
  if (!start) start = ev.space().fallback();
  if (!start) start = ev.space().randomLegal(rng);
  int restarts = 0;
  while (start && !ev.done() && restarts < 1000) {
    if (refine(ev, rng, *start)) return;
    start = ev.space().randomLegal(rng);
    ++restarts;
  }
}

Embedding::Embedding(const Space& s) : space_(s) {
  for (auto& p : s.params) {
    offset_.push_back(dims_);
    bool isLog = false;
    if (p.kind == Param::Kind::Int && p.size() > 1)
      isLog = p.ints.front() > 0 && static_cast<double>(p.ints.back()) >= 8.0 * static_cast<double>(p.ints.front());
    log_.push_back(isLog);
    dims_ += p.kind == Param::Kind::Categorical ? p.size() : 1;
  }
}

namespace {

double scaled(const Param& p, bool isLog, double v) {
  if (p.size() < 2) return 0.0;
  double lo = static_cast<double>(p.ints.front()), hi = static_cast<double>(p.ints.back());
  double x = isLog ? (v > 0 ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0.0) : (v - lo) / (hi - lo);
  return std::clamp(x, 0.0, 1.0);
}

}  // namespace

double Embedding::coord(size_t i, int index) const {
  const Param& p = space_.params[i];
  return scaled(p, log_[i], static_cast<double>(p.ints[static_cast<size_t>(index)]));
}

std::vector<double> Embedding::encode(const Config& c) const {
  std::vector<double> x(dims_, 0.0);
  for (size_t i = 0; i < space_.dims(); ++i) {
    if (space_.params[i].kind == Param::Kind::Categorical) x[offset_[i] + static_cast<size_t>(c[i])] = 1.0;
    else x[offset_[i]] = coord(i, c[i]);
  }
  return x;
}

std::optional<std::vector<double>> Embedding::encodeValue(size_t i, const nlohmann::json& v) const {
  const Param& p = space_.params[i];
  if (p.kind == Param::Kind::Categorical) {
    auto idx = p.indexOf(v);
    if (!idx) return std::nullopt;
    std::vector<double> x(p.size(), 0.0);
    x[static_cast<size_t>(*idx)] = 1.0;
    return x;
  }
  if (!v.is_number()) return std::nullopt;
  return std::vector<double>{scaled(p, log_[i], v.get<double>())};
}

std::optional<Config> Embedding::nearestLegal(const std::vector<double>& point, const std::function<bool(const Config&)>& skip,
                                              size_t maxVisits) const {
  const size_t d = space_.dims();
  // The squared distance is a sum of one term per parameter, so ranking each parameter's values by
  // their own term and walking rank vectors best-first visits configurations in distance order.
  std::vector<std::vector<std::pair<double, int>>> ranked(d);
  for (size_t i = 0; i < d; ++i) {
    const Param& p = space_.params[i];
    for (int v = 0; v < static_cast<int>(p.size()); ++v) {
      double cost = 0;
      if (p.kind == Param::Kind::Categorical) {
        for (size_t k = 0; k < p.size(); ++k) {
          double t = offset_[i] + k < point.size() ? point[offset_[i] + k] : 0.0;
          double e = (static_cast<int>(k) == v ? 1.0 : 0.0) - t;
          cost += e * e;
        }
      } else {
        double t = std::clamp(offset_[i] < point.size() ? point[offset_[i]] : 0.0, 0.0, 1.0);
        cost = (coord(i, v) - t) * (coord(i, v) - t);
      }
      ranked[i].push_back({cost, v});
    }
    std::stable_sort(ranked[i].begin(), ranked[i].end(), [](auto& a, auto& b) { return a.first < b.first; });
    if (ranked[i].empty()) return std::nullopt;
  }
  auto costOf = [&](const std::vector<int>& r) {
    double c = 0;
    for (size_t i = 0; i < d; ++i) c += ranked[i][static_cast<size_t>(r[i])].first;
    return c;
  };
  using Item = std::pair<double, std::vector<int>>;
  auto cmp = [](const Item& a, const Item& b) { return a.first > b.first; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> open(cmp);
  std::set<std::vector<int>> seen;
  std::vector<int> r0(d, 0);
  open.push({costOf(r0), r0});
  seen.insert(r0);
  while (!open.empty() && seen.size() <= maxVisits) {
    std::vector<int> r = open.top().second;
    open.pop();
    Config c(d);
    for (size_t i = 0; i < d; ++i) c[i] = ranked[i][static_cast<size_t>(r[i])].second;
    if (space_.legal(c) && !(skip && skip(c))) return c;
    for (size_t i = 0; i < d; ++i) {
      if (static_cast<size_t>(r[i]) + 1 >= ranked[i].size()) continue;
      auto n = r;
      ++n[i];
      if (seen.insert(n).second) open.push({costOf(n), n});
    }
  }
  return std::nullopt;
}

namespace {

// The local refinement of MaSiF: a pattern search over single-parameter moves from `start`. Returns
// false when it stopped at a local optimum (no move at the finest step improves), true when the
// budget ran out.
class PatternSearch {
 public:
  PatternSearch(Evaluator& ev, const Embedding& em, std::mt19937_64& rng, std::vector<std::vector<int>> catOrder)
      : ev_(ev), em_(em), s_(ev.space()), rng_(rng), catOrder_(std::move(catOrder)) {}

  bool run(Config cur) {
    auto v0 = ev_(cur);
    if (!v0) return true;
    double curV = *v0;
    for (double step : {0.25, 0.1, 0.04}) {
      for (bool improved = true; improved;) {
        improved = false;
        std::vector<size_t> order(s_.dims());
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng_);
        order_ = order;
        step_ = step;
        for (size_t k = 0; k < order.size(); ++k) {
          const size_t i = order[k];
          pos_ = k;
          auto r = moveParam(cur, curV, i, step);
          if (r == Outcome::Spent) return true;
          if (r == Outcome::Improved) improved = true;
        }
      }
    }
    return false;
  }

 private:
  enum class Outcome { Same, Improved, Spent };

  // Evaluates `m` (moved to the nearest legal configuration other than `cur` when it breaks a
  // constraint); adopts it when better by more than the two measurements' noise.
  Outcome tryMove(Config& cur, double& curV, Config m) {
    if (!s_.legal(m)) {
      auto l = em_.nearestLegal(em_.encode(m), [&](const Config& c) { return c == cur; }, 20000);
      if (!l) return Outcome::Same;
      m = *l;
    }
    announceMoves(cur, m);
    auto v = ev_(m);
    if (!v) return Outcome::Spent;
    if (*v < curV * (1.0 - masifMoveMargin(ev_.spread(cur), ev_.spread(m)))) {
      cur = m;
      curV = *v;
      return Outcome::Improved;
    }
    return Outcome::Same;
  }

  // For an ask/tell engine: the moves this climb would try after `m` from `cur` (the first moves of
  // the parameters at and after the current one in this round's order: categoricals to their other
  // values, integers one step either way at the current step size).
  void announceMoves(const Config& cur, const Config& m) {
    if (ev_.lookahead() <= 0) return;
    std::vector<Config> next;
    for (size_t k = pos_; k < order_.size() && static_cast<int>(next.size()) <= ev_.lookahead(); ++k) {
      const size_t i = order_[k];
      const Param& p = s_.params[i];
      if (p.size() < 2) continue;
      auto add = [&](int v) {
        if (v < 0 || v >= static_cast<int>(p.size()) || v == cur[i]) return;
        Config c = cur;
        c[i] = v;
        if (c != m) next.push_back(c);
      };
      if (p.kind == Param::Kind::Categorical) {
        for (int v : catOrder_[i]) add(v);
      } else {
        for (int dir : {1, -1}) add(stepIndex(i, cur[i], em_.coord(i, cur[i]) + dir * step_, dir));
      }
    }
    announce(ev_, next);
  }

  // The value index of integer parameter i nearest to coordinate x; one index further in direction
  // `dir` when that is the current one.
  int stepIndex(size_t i, int cur, double x, int dir) const {
    const int n = static_cast<int>(s_.params[i].size());
    int best = cur;
    double bestE = std::numeric_limits<double>::infinity();
    for (int v = 0; v < n; ++v) {
      double e = std::abs(em_.coord(i, v) - x);
      if (e < bestE) {
        bestE = e;
        best = v;
      }
    }
    if (best == cur) best = cur + dir;
    return best;
  }

  Outcome moveParam(Config& cur, double& curV, size_t i, double step) {
    const Param& p = s_.params[i];
    if (p.size() < 2) return Outcome::Same;
    if (p.kind == Param::Kind::Categorical) {
      int was = cur[i];
      for (int v : catOrder_[i]) {
        if (v == was) continue;
        Config m = cur;
        m[i] = v;
        auto r = tryMove(cur, curV, m);
        if (r != Outcome::Same) return r;
      }
      return Outcome::Same;
    }
    int first = std::uniform_int_distribution<int>(0, 1)(rng_) ? 1 : -1;
    for (int dir : {first, -first}) {
      bool moved = false;
      // Keep going while it pays: a far optimum (a grain size off by 100x) is reached in a few moves.
      for (;;) {
        int idx = stepIndex(i, cur[i], em_.coord(i, cur[i]) + dir * step, dir);
        if (idx < 0 || idx >= static_cast<int>(p.size())) break;
        Config m = cur;
        m[i] = idx;
        auto r = tryMove(cur, curV, m);
        if (r == Outcome::Spent) return r;
        if (r == Outcome::Same) break;
        moved = true;
      }
      if (moved) return Outcome::Improved;
    }
    return Outcome::Same;
  }

  Evaluator& ev_;
  const Embedding& em_;
  const Space& s_;
  std::mt19937_64& rng_;
  std::vector<std::vector<int>> catOrder_;
  std::vector<size_t> order_;  // this round's parameter order, and where the climb is in it
  size_t pos_ = 0;
  double step_ = 0.25;
};

}  // namespace

namespace {

// A landscape's legal configurations that have a figure, fastest first (ties in the landscape's order).
std::vector<Config> fastestFirst(const Space& s, const Landscape& l) {
  std::vector<std::pair<double, Config>> v;
  for (auto& [c, t] : l.seconds)
    if (std::isfinite(t) && s.legal(c)) v.push_back({t, c});
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<Config> out;
  for (auto& [t, c] : v) out.push_back(c);
  return out;
}

// The transfer search of masifSearch (its comment says what it does).
class TransferSearch {
 public:
  TransferSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Landscape>& ls) : ev_(ev), s_(ev.space()), rng_(rng), ls_(ls) {
    const size_t n = ls_.size();
    failZ_.assign(n, 0);
    unknownZ_.assign(n, 0);
    best_.assign(n, 1);
    informative_.assign(n, false);
    for (size_t k = 0; k < n; ++k) {
      double lo = std::numeric_limits<double>::infinity(), hi = 0;
      for (auto& [c, t] : ls_[k].seconds)
        if (std::isfinite(t)) lo = std::min(lo, t), hi = std::max(hi, t);
      if (!std::isfinite(lo)) continue;  // only failures: it ranks nothing (weight 0, scores 0)
      informative_[k] = true;
      best_[k] = lo;
      failZ_[k] = std::log(hi / lo) + 1.0;
      std::vector<double> zs;
      for (auto& [c, t] : ls_[k].seconds) zs.push_back(score(k, t));
      unknownZ_[k] = median(zs);
    }
    w_.assign(informative_.begin(), informative_.end());  // 1 until the figures speak; 0 for failures only
    enumerated_ = s_.cardinality() <= kTransferEnumerate;
    if (enumerated_) {
      s_.forEachLegal([&](const Config& c) {
        add(c);
        return true;
      });
    } else {
      for (auto& l : ls_)
        for (auto& [c, t] : l.seconds)
          if (s_.legal(c)) add(c);
    }
    // A random order of the candidates breaks ties between equal scores differently for each seed.
    std::shuffle(order_.begin(), order_.end(), rng_);
  }

  // Each neighbour's best legal configuration, in the neighbours' order, without repeats.
  std::vector<Config> firsts() const {
    std::vector<Config> out;
    for (auto& l : ls_) {
      auto ranked = fastestFirst(s_, l);
      if (!ranked.empty() && std::find(out.begin(), out.end(), ranked[0]) == out.end()) out.push_back(ranked[0]);
    }
    return out;
  }

  // The next configuration: the unevaluated candidate of the lowest weighted score, among those one
  // parameter away from the best so far when `local` (and any are left there); then, up to `n` in
  // all, the ones that would follow it (for an ask/tell engine to measure ahead).
  std::vector<Config> next(bool local, size_t n = 1) {
    updateWeights();
    std::optional<Config> inc;
    if (auto b = ev_.best(); b && std::isfinite(b->seconds)) inc = b->config;
    if (inc && !enumerated_)
      for (auto& m : oneAway(*inc)) add(m);
    std::vector<Config> out;
    std::set<size_t> taken;
    const double wsum = std::accumulate(w_.begin(), w_.end(), 0.0);
    for (int pass = local && inc ? 0 : 1; pass < 2 && out.size() < n; ++pass) {
      // (score, place in order_, candidate): ties go to the earlier place in order_.
      std::vector<std::tuple<double, size_t, size_t>> ranked;
      for (size_t i : order_) {
        if (ev_.seen(cands_[i]) || taken.count(i)) continue;
        if (pass == 0 && !oneParamAway(cands_[i], *inc)) continue;
        double sc = 0;
        for (size_t k = 0; k < ls_.size(); ++k) sc += w_[k] * z_[k][i];
        ranked.emplace_back(sc / wsum, ranked.size(), i);
      }
      const size_t want = std::min(ranked.size(), n - out.size());
      std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(want), ranked.end());
      for (size_t j = 0; j < want; ++j) {
        taken.insert(std::get<2>(ranked[j]));
        out.push_back(cands_[std::get<2>(ranked[j])]);
      }
    }
    return out;
  }

  // A uniformly random unevaluated candidate (exploration), or nullopt when every one is evaluated.
  std::optional<Config> random() {
    std::vector<size_t> left;
    for (size_t i = 0; i < cands_.size(); ++i)
      if (!ev_.seen(cands_[i])) left.push_back(i);
    if (left.empty()) return std::nullopt;
    return cands_[left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(rng_)]];
  }

  const std::vector<double>& weights() const { return w_; }

 private:
  double score(size_t k, double t) const { return std::isfinite(t) ? std::log(t / best_[k]) : failZ_[k]; }

  void add(const Config& c) {
    if (!at_.emplace(c, cands_.size()).second) return;
    cands_.push_back(c);
    z_.resize(ls_.size());
    known_.resize(ls_.size());
    for (size_t k = 0; k < ls_.size(); ++k) {
      auto it = ls_[k].seconds.find(c);
      known_[k].push_back(it != ls_[k].seconds.end());
      z_[k].push_back(it == ls_[k].seconds.end() ? unknownZ_[k] : score(k, it->second));
    }
    order_.push_back(cands_.size() - 1);
  }

  bool oneParamAway(const Config& a, const Config& b) const {
    int diff = 0;
    for (size_t i = 0; i < a.size() && diff < 2; ++i) diff += a[i] != b[i];
    return diff == 1;
  }

  std::vector<Config> oneAway(const Config& c) const {
    std::vector<Config> out;
    for (size_t i = 0; i < s_.dims(); ++i)
      for (int v = 0; v < static_cast<int>(s_.params[i].size()); ++v) {
        if (v == c[i]) continue;
        Config m = c;
        m[i] = v;
        if (s_.legal(m)) out.push_back(m);
      }
    return out;
  }

  // Each neighbour's weight: how well its scores rank the target's figures so far.
  void updateWeights() {
    w_.assign(ls_.size(), 1.0);
    for (size_t k = 0; k < ls_.size(); ++k) {
      if (!informative_[k]) {
        w_[k] = 0;
        continue;
      }
      std::vector<double> mine, theirs;
      for (auto& e : ev_.history()) {
        if (!std::isfinite(e.seconds)) continue;
        auto it = at_.find(e.config);
        if (it == at_.end() || !known_[k][it->second]) continue;
        mine.push_back(std::log(e.seconds));
        theirs.push_back(z_[k][it->second]);
      }
      if (mine.size() < 4) continue;
      double rho = std::max(0.0, spearman(theirs, mine));
      w_[k] = rho * rho + 1e-3;
    }
  }

  Evaluator& ev_;
  const Space& s_;
  std::mt19937_64& rng_;
  const std::vector<Landscape>& ls_;
  std::vector<double> best_, failZ_, unknownZ_, w_;
  std::vector<bool> informative_;  // the landscape has a figure, not only failures
  bool enumerated_ = false;
  std::vector<Config> cands_;
  std::map<Config, size_t> at_;
  std::vector<std::vector<double>> z_;
  std::vector<std::vector<char>> known_;
  std::vector<size_t> order_;
};

// Confirmation: each of the last `checks` evaluations measures again the fastest configuration
// measured only once, as long as it is among the `checks` fastest. A configuration whose first figure
// was a lucky moment falls back (its figure becomes the mean of its two), and the next fastest is
// confirmed in its turn.
void confirm(Evaluator& ev, int checks) {
  while (!ev.done() && checks > 0) {
    std::vector<const Evaluation*> byFigure;
    for (auto& e : ev.history())
      if (std::isfinite(e.seconds)) byFigure.push_back(&e);
    std::stable_sort(byFigure.begin(), byFigure.end(), [](auto* a, auto* b) { return a->seconds < b->seconds; });
    std::vector<Proposal> picks;  // the first is measured now; the others are announced
    for (size_t i = 0; i < byFigure.size() && i < static_cast<size_t>(checks); ++i)
      if (byFigure[i]->measurements.size() < 2) picks.push_back({byFigure[i]->config, 1});
    if (picks.empty()) break;
    Config c = picks.front().config;
    if (ev.lookahead() > 0) {
      picks.erase(picks.begin());
      if (static_cast<int>(picks.size()) > ev.lookahead()) picks.resize(static_cast<size_t>(ev.lookahead()));
      ev.hint(std::move(picks));
    }
    ev.remeasure(c);
  }
}

bool noisyHistory(const Evaluator& ev) {
  for (auto& e : ev.history())
    if (e.spread > 0) return true;
  return false;
}

MasifPlan transferSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Landscape>& ls, bool dryRun) {
  MasifPlan plan;
  plan.transfer = true;
  TransferSearch ts(ev, rng, ls);
  auto first = ts.firsts();
  if (dryRun) {
    plan.first = first;
    plan.weights = ts.weights();
    return plan;
  }
  for (size_t i = 0; i < first.size(); ++i) {
    if (plan.first.size() < 20) plan.first.push_back(first[i]);
    announce(ev, first, i + 1);
    if (!ev(first[i])) break;
  }
  const int checks = noisyHistory(ev) ? masifConfirmations(ev.budget()) : 0;
  ev.cap(ev.budget() - checks);
  std::bernoulli_distribution coin(0.5);
  double best = ev.best() ? ev.best()->seconds : std::numeric_limits<double>::infinity();
  int stall = 0;
  for (int step = 1; !ev.done(); ++step) {
    const bool explore = stall >= kTransferStall && step % 2 == 0;
    std::optional<Config> c;
    std::vector<Config> ranked;
    if (explore) {
      c = ts.random();
      if (ev.lookahead() > 0) ranked = ts.next(false, static_cast<size_t>(ev.lookahead()));
    } else {
      ranked = ts.next(coin(rng), 1 + static_cast<size_t>(std::max(0, ev.lookahead())));
      if (!ranked.empty()) c = ranked.front();
    }
    if (!c) break;  // every legal configuration evaluated
    announce(ev, ranked, explore ? 0 : 1);
    if (plan.first.size() < 20) plan.first.push_back(*c);
    auto v = ev(*c);
    if (v && *v < best) best = *v, stall = 0;
    else ++stall;
  }
  ev.cap(ev.budget());
  confirm(ev, checks);
  plan.weights = ts.weights();
  return plan;
}

}  // namespace

void copySearch(Evaluator& ev, const std::vector<Guide>& guides, const std::vector<Landscape>& landscapes) {
  const Space& s = ev.space();
  if (landscapes.empty()) {
    const Embedding em(s);
    std::vector<Config> cs;
    for (auto& g : guides)
      if (auto c = em.nearestLegal(g.point)) cs.push_back(*c);
    for (size_t i = 0; i < cs.size(); ++i) {
      announce(ev, cs, i + 1);
      if (!ev.seen(cs[i]) && !ev(cs[i])) return;
    }
    return;
  }
  std::vector<std::vector<Config>> byFigure;
  for (auto& l : landscapes) byFigure.push_back(fastestFirst(s, l));
  std::vector<Config> order;  // rank by rank: every landscape's best, then every second best, ...
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (auto& cs : byFigure) {
      if (rank >= cs.size()) continue;
      any = true;
      order.push_back(cs[rank]);
    }
    if (!any) break;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    announce(ev, order, i + 1);
    if (!ev.seen(order[i]) && !ev(order[i])) return;
  }
}

bool masifTransfers(const std::vector<Landscape>& landscapes) {
  return std::any_of(landscapes.begin(), landscapes.end(), [](const Landscape& l) {
    return l.seconds.size() >= kDenseLandscape &&
           std::any_of(l.seconds.begin(), l.seconds.end(), [](auto& e) { return std::isfinite(e.second); });
  });
}

int masifConfirmations(int budget) { return budget >= 10 ? budget / 10 : 0; }

double masifMoveMargin(double spreadA, double spreadB) { return std::min(0.1, 0.6 * std::max(spreadA, spreadB)); }

MasifPlan masifSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Guide>& given, bool dryRun,
                      const std::vector<Landscape>& landscapes) {
  if (masifTransfers(landscapes)) return transferSearch(ev, rng, landscapes, dryRun);
  const Space& s = ev.space();
  const Embedding em(s);
  const size_t d = em.dims();
  MasifPlan plan;

  // A parameter no guide has a value for (NaN in every guide: none of the neighbours has it) is
  // uninformed. The guides take the fallback's coordinates there, so the PCA sees no variance in
  // it, and the candidates explore it instead (below).
  auto fb = s.fallback();
  const std::vector<double> fbx = fb ? em.encode(*fb) : std::vector<double>(d, 0.5);
  std::vector<Guide> guides = given;
  std::vector<size_t> uninformed;
  for (size_t i = 0; i < s.dims() && !guides.empty(); ++i) {
    const size_t width = s.params[i].kind == Param::Kind::Categorical ? s.params[i].size() : 1;
    bool any = false;
    for (auto& g : guides)
      for (size_t k = 0; k < width; ++k) any |= !std::isnan(g.point[em.offset(i) + k]);
    if (!any && s.params[i].size() > 1) uninformed.push_back(i);
    for (auto& g : guides)
      for (size_t k = 0; k < width; ++k)
        if (std::isnan(g.point[em.offset(i) + k])) g.point[em.offset(i) + k] = fbx[em.offset(i) + k];
  }
  plan.uninformed = uninformed.size();
  // Candidate j sets each uninformed parameter by a low-discrepancy sequence that starts at the
  // fallback's value: categoricals cycle through their values (the fallback's first, the others in
  // a random order), integers step through [0, 1] by the golden ratio.
  std::vector<std::vector<int>> cycle(s.dims());
  for (size_t i : uninformed) {
    if (s.params[i].kind != Param::Kind::Categorical) continue;
    const int first = fb ? (*fb)[i] : 0;
    for (int v = 0; v < static_cast<int>(s.params[i].size()); ++v)
      if (v != first) cycle[i].push_back(v);
    std::shuffle(cycle[i].begin(), cycle[i].end(), rng);
    cycle[i].insert(cycle[i].begin(), first);
  }
  auto explore = [&](std::vector<double> x, size_t j) {
    for (size_t i : uninformed) {
      const size_t o = em.offset(i);
      if (s.params[i].kind == Param::Kind::Categorical) {
        for (size_t k = 0; k < s.params[i].size(); ++k) x[o + k] = 0.0;
        x[o + static_cast<size_t>(cycle[i][j % cycle[i].size()])] = 1.0;
      } else {
        double u = fbx[o] + 0.6180339887498949 * static_cast<double>(j);
        x[o] = u - std::floor(u);
      }
    }
    return x;
  };

  // Categorical moves of the refinement try the values the guides chose most often first.
  std::vector<std::vector<int>> catOrder(s.dims());
  for (size_t i = 0; i < s.dims(); ++i) {
    const Param& p = s.params[i];
    if (p.kind != Param::Kind::Categorical) continue;
    std::vector<std::pair<double, int>> votes;
    for (int v = 0; v < static_cast<int>(p.size()); ++v) {
      double w = 0;
      for (auto& g : guides) w += g.point[em.offset(i) + static_cast<size_t>(v)];
      votes.push_back({-w, v});
    }
    std::stable_sort(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [w, v] : votes) catOrder[i].push_back(v);
  }
  PatternSearch refine(ev, em, rng, catOrder);

  // The candidate points, most promising first.
  std::vector<std::vector<double>> points;
  if (guides.empty()) {
    plan.fallback = true;
  } else {
    Eigen::MatrixXd X(static_cast<Eigen::Index>(guides.size()), static_cast<Eigen::Index>(d));
    for (size_t i = 0; i < guides.size(); ++i)
      for (size_t j = 0; j < d; ++j) X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = guides[i].point[j];
    Pca pca = fitPca(X, 0.90);
    plan.components = static_cast<size_t>(pca.components.cols());
    plan.explained = pca.explained;
    plan.mean.assign(pca.mean.data(), pca.mean.data() + d);
    points.push_back(plan.mean);
    for (auto& g : guides) points.push_back(g.point);
    const int p = static_cast<int>(std::min<size_t>(plan.components, 4));
    const int levels = 13;  // -3σ .. +3σ in steps of σ/2
    if (p > 0) {
      std::vector<std::pair<double, std::vector<int>>> lattice;
      std::vector<int> idx(static_cast<size_t>(p), 0);
      for (;;) {
        double r = 0;
        for (int j = 0; j < p; ++j) {
          double z = 0.5 * (idx[static_cast<size_t>(j)] - levels / 2);
          r += z * z;
        }
        if (r > 0) lattice.push_back({r, idx});
        int j = p - 1;
        while (j >= 0 && ++idx[static_cast<size_t>(j)] == levels) idx[static_cast<size_t>(j--)] = 0;
        if (j < 0) break;
      }
      std::stable_sort(lattice.begin(), lattice.end(), [](auto& a, auto& b) { return a.first < b.first; });
      for (auto& [r, li] : lattice) {
        Eigen::VectorXd x = pca.mean;
        for (int j = 0; j < p; ++j) {
          double z = 0.5 * (li[static_cast<size_t>(j)] - levels / 2);
          x += z * std::sqrt(pca.variances(j)) * pca.components.col(j);
        }
        points.emplace_back(x.data(), x.data() + d);
      }
    }
  }

  size_t next = 0, made = 0;
  std::set<Config> planned;
  auto nextCandidate = [&]() -> std::optional<Config> {
    while (next < points.size()) {
      auto c = em.nearestLegal(explore(points[next++], made));
      if (!c || !planned.insert(*c).second || ev.seen(*c)) continue;
      ++made;
      return c;
    }
    return std::nullopt;
  };
  // Candidates drawn ahead of their evaluation, so that an ask/tell engine can measure them ahead
  // (announced); drawn one at a time for a synchronous evaluator, in the same order either way.
  std::deque<Config> upcoming;
  auto fill = [&](size_t n) {
    while (upcoming.size() < n) {
      auto c = nextCandidate();
      if (!c) break;
      upcoming.push_back(*c);
    }
  };
  auto takeCandidate = [&]() -> std::optional<Config> {
    for (;;) {
      fill(1);
      if (upcoming.empty()) return std::nullopt;
      Config c = upcoming.front();
      upcoming.pop_front();
      if (!ev.seen(c)) return c;
    }
  };
  if (plan.fallback && fb) plan.first.push_back(*fb);
  if (dryRun) {
    while (!plan.fallback && plan.first.size() < 20) {
      auto c = nextCandidate();
      if (!c) break;
      plan.first.push_back(*c);
    }
    return plan;
  }

  std::vector<Config> drawn;  // random configurations drawn ahead (announced), not yet evaluated
  auto randomNew = [&]() -> std::optional<Config> {
    for (int miss = 0; miss < 1000; ++miss) {
      auto c = s.randomLegal(rng);
      if (!c) return std::nullopt;
      if (!ev.seen(*c) && std::find(drawn.begin(), drawn.end(), *c) == drawn.end()) return c;
    }
    return std::nullopt;
  };
  // How many measurements of a phase that ends at `until` are worth announcing beyond the next.
  auto ahead = [&](int until) { return static_cast<size_t>(std::clamp(until - ev.used() - 1, 0, std::max(0, ev.lookahead()))); };
  // The first phase (candidates, or random samples without guides) is sized for the first
  // kNestedBudget evaluations whatever the budget, and the refinement after it does not look at the
  // budget: a larger budget runs the smaller one's search first, then goes on. So with the same seed
  // and record a budget-45 search never ends worse than the budget-20 one (it evaluates the same 20
  // configurations first), which a phase sized by the whole budget did not ensure.
  constexpr int kNestedBudget = 20;
  const int firstPhase = std::min(ev.budget(), kNestedBudget);
  if (plan.fallback) {
    const int randomUntil = std::max(1, firstPhase / 3);
    auto drawTo = [&](size_t n) {  // random configurations drawn ahead, as fill() draws candidates
      while (drawn.size() < n) {
        auto c = randomNew();
        if (!c) break;
        drawn.push_back(*c);
      }
    };
    if (fb) {
      drawTo(ahead(randomUntil + 1));
      announce(ev, drawn);
      ev(*fb);
    }
    while (ev.used() < randomUntil && !ev.done()) {
      drawTo(1 + ahead(randomUntil));
      if (drawn.empty()) break;
      Config c = drawn.front();
      drawn.erase(drawn.begin());
      announce(ev, drawn);
      ev(c);
    }
  } else {
    const int candidateBudget = std::max(1, static_cast<int>(std::ceil(0.4 * firstPhase)));
    while (!ev.done() && ev.used() < candidateBudget) {
      auto c = takeCandidate();
      if (!c) break;
      if (plan.first.size() < 20) plan.first.push_back(*c);
      fill(ahead(candidateBudget));
      announce(ev, std::vector<Config>(upcoming.begin(), upcoming.end()));
      ev(*c);
    }
  }
  // Refinement from the best so far; at a local optimum, one exploratory evaluation (the next
  // candidate, else a random configuration) and refinement again from whatever is best then (a
  // climb from a point already refined costs nothing: its moves are all in the evaluator).
  // Confirmations pay only where figures are noisy: they are reserved when a measurement of the
  // first phase showed a spread (its repetitions disagreed), and not for exact figures.
  const int checks = noisyHistory(ev) ? masifConfirmations(ev.budget()) : 0;
  ev.cap(ev.budget() - checks);
  int stalls = 0;
  while (!ev.done() && ev.best()) {
    if (refine.run(ev.best()->config)) break;
    auto c = takeCandidate();
    if (!c) c = randomNew();
    if (!c) {
      if (++stalls > 100) break;
      continue;
    }
    ev(*c);
  }
  ev.cap(ev.budget());
  confirm(ev, checks);
  return plan;
}

}  // namespace tawa::tune
