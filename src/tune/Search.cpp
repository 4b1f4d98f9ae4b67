#include "tune/Search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tune/Stats.h"

namespace tawa::tune {

std::optional<double> Evaluator::operator()(const Config& c) {
  if (auto it = index_.find(c); it != index_.end()) return history_[it->second].seconds;
  if (done()) return std::nullopt;
  Evaluation e;
  e.config = c;
  e.seconds = f_(c, e.cached);
  if (!(e.seconds >= 0)) e.seconds = std::numeric_limits<double>::infinity();
  index_.emplace(c, history_.size());
  history_.push_back(e);
  if (progress) progress(e, used(), budget_, *best());
  return e.seconds;
}

bool Evaluator::seen(const Config& c) const { return index_.count(c) > 0; }

std::optional<Evaluation> Evaluator::best() const {
  if (history_.empty()) return std::nullopt;
  return *std::min_element(history_.begin(), history_.end(),
                           [](const Evaluation& a, const Evaluation& b) { return a.seconds < b.seconds; });
}

void exhaustiveSearch(Evaluator& ev) {
  ev.space().forEachLegal([&](const Config& c) { return ev(c).has_value(); });
}

void randomSearch(Evaluator& ev, std::mt19937_64& rng) {
  int misses = 0;
  while (!ev.done() && misses < 1000) {
    auto c = ev.space().randomLegal(rng);
    if (!c) return;
    if (ev.seen(*c)) {
      ++misses;
      continue;
    }
    ev(*c);
  }
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
    for (auto& n : ns) {
      if (!ev.space().legal(n)) continue;
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

MasifPlan masifSearch(Evaluator& ev, std::mt19937_64& rng, const std::vector<Guide>& guides, bool dryRun) {
  const Space& s = ev.space();
  const size_t d = s.dims();
  MasifPlan plan;
  if (guides.empty()) {
    plan.fallback = true;
    if (auto f = s.fallback()) plan.first.push_back(*f);
    if (dryRun) return plan;
    if (!plan.first.empty()) ev(plan.first[0]);
    int randomUntil = std::max(1, ev.budget() / 2);
    int misses = 0;
    while (ev.used() < randomUntil && !ev.done() && misses < 1000) {
      auto c = s.randomLegal(rng);
      if (!c) break;
      if (ev.seen(*c)) ++misses;
      else ev(*c);
    }
    while (!ev.done()) {
      if (!refine(ev, rng, ev.best()->config)) {
        auto c = s.randomLegal(rng);  // at a local optimum: restart elsewhere
        if (!c || ev.seen(*c)) {
          if (++misses > 1000) break;
          continue;
        }
        ev(*c);
      }
    }
    return plan;
  }

  Eigen::MatrixXd X(static_cast<Eigen::Index>(guides.size()), static_cast<Eigen::Index>(d));
  for (size_t i = 0; i < guides.size(); ++i)
    for (size_t j = 0; j < d; ++j) X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = guides[i].point[j];
  Pca pca = fitPca(X, 0.90);
  plan.components = static_cast<size_t>(pca.components.cols());
  plan.explained = pca.explained;
  plan.mean.assign(pca.mean.data(), pca.mean.data() + d);

  // The candidate points, in order: the guides (the nearest neighbour's best first), their mean,
  // then the lattice by Mahalanobis radius.
  std::vector<std::vector<double>> points;
  for (auto& g : guides) points.push_back(g.point);
  points.push_back(plan.mean);
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

  size_t next = 0;
  std::vector<Config> planned;
  auto nextCandidate = [&]() -> std::optional<Config> {
    while (next < points.size()) {
      auto c = s.nearestLegal(points[next++]);
      if (!c) continue;
      if (std::find(planned.begin(), planned.end(), *c) != planned.end()) continue;
      planned.push_back(*c);
      return c;
    }
    return std::nullopt;
  };
  if (dryRun) {
    while (plan.first.size() < 20) {
      auto c = nextCandidate();
      if (!c) break;
      plan.first.push_back(*c);
    }
    return plan;
  }
  const int candidateBudget = std::max(1, static_cast<int>(std::ceil(0.6 * ev.budget())));
  bool candidatesLeft = true;
  while (!ev.done() && ev.used() < candidateBudget) {
    auto c = nextCandidate();
    if (!c) {
      candidatesLeft = false;
      break;
    }
    if (plan.first.size() < 20) plan.first.push_back(*c);
    ev(*c);
  }
  int stalls = 0;
  while (!ev.done() && ev.best()) {
    if (refine(ev, rng, ev.best()->config)) break;
    // A local optimum with budget left: the next candidate along the components, else a random one.
    std::optional<Config> c = candidatesLeft ? nextCandidate() : std::nullopt;
    if (!c) {
      candidatesLeft = false;
      c = s.randomLegal(rng);
    }
    if (!c || ev.seen(*c)) {
      if (++stalls > 1000) break;
      continue;
    }
    ev(*c);
  }
  return plan;
}

}  // namespace tawa::tune
