#include "tune/Tuner.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

#include "tune/SpaceJson.h"
#include "tune/Stats.h"

namespace tawa::tune {

namespace {

// A failed measurement in a few words for the progress line: its status and the head of its detail
// ("exit status 3", "killed by signal 11"; a timeout's limit).
std::string failureWords(const Measurement& m) {
  if (m.ok()) return "";
  if (auto limit = timeoutLimit(m)) {
    std::ostringstream o;
    o << "timed out (" << *limit << " s)";
    return o.str();
  }
  std::string head = m.detail.substr(0, m.detail.find(':'));
  return head.empty() ? m.status : m.status + " (" + head + ")";
}

std::string fmtSeconds(double s) {
  if (!std::isfinite(s)) return "failed";
  std::ostringstream o;
  o << std::setprecision(4) << s << " s";
  return o.str();
}

// The k nearest tuned programs and the guides their best configurations give, as points of the
// target's Embedding: parameters matched by name, integers carried over by value, categoricals by
// identity. A parameter the neighbour lacks (or a category the target lacks) takes the other guides'
// mean there, or stays NaN when no guide has it (masifSearch then explores it). Guides come rank by rank: every
// neighbour's best (nearest neighbour first), then every neighbour's second best, and so on.
std::vector<Guide> findGuides(Record& rec, int64_t self, const TuneTarget& t, const TuneOptions& o, std::vector<std::string>& names) {
  std::vector<ProgramInfo> cands;
  std::vector<Features> feats;
  for (auto& p : rec.programs()) {
    if (p.id == self || p.measured < o.minMeasured) continue;
    if ((p.kind == "kernel") != (t.kind == "kernel")) continue;  // kernels resemble kernels, programs programs
    if (o.pool && !o.pool->count(p.name)) continue;
    Features f = rec.features(p.id);
    if (f.empty()) continue;
    cands.push_back(p);
    feats.push_back(std::move(f));
  }
  if (cands.empty() || t.features.empty()) return {};
  std::vector<std::string> keys;
  for (auto& [k, v] : t.features) keys.push_back(k);
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(cands.size()), static_cast<Eigen::Index>(keys.size()));
  Eigen::VectorXd target(static_cast<Eigen::Index>(keys.size()));
  for (size_t j = 0; j < keys.size(); ++j) {
    target(static_cast<Eigen::Index>(j)) = t.features.at(keys[j]);
    for (size_t i = 0; i < cands.size(); ++i) {
      auto it = feats[i].find(keys[j]);
      rows(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = it == feats[i].end() ? 0.0 : it->second;
    }
  }
  auto near = nearestByZScore(rows, target, o.neighbours);
  const Embedding em(t.space);
  const size_t d = em.dims();
  std::vector<std::vector<Guide>> byNeighbour;
  for (auto& n : near) {
    const ProgramInfo& p = cands[n.index];
    std::ostringstream nm;
    nm << p.name << " (distance " << std::setprecision(3) << n.distance << ")";
    names.push_back(nm.str());
    Space ns;
    try {
      ns = parseSpace(p.space, p.name);
    } catch (...) {
      continue;  // a neighbour whose recorded space no longer parses guides nothing
    }
    byNeighbour.emplace_back();
    for (auto& [key, secs] : rec.best(p.id, o.bestPerNeighbour)) {
      nlohmann::json nc;
      try {
        nc = nlohmann::json::parse(key);
      } catch (...) {
        continue;
      }
      Guide g;
      g.point.assign(d, std::numeric_limits<double>::quiet_NaN());
      g.from = p.name + " " + key;
      for (size_t i = 0; i < t.space.dims(); ++i) {
        const Param& tp = t.space.params[i];
        int ni = ns.paramIndex(tp.name);
        if (ni < 0 || !nc.contains(tp.name)) continue;
        if (tp.kind != ns.params[static_cast<size_t>(ni)].kind) continue;
        if (auto x = em.encodeValue(i, nc[tp.name]))
          for (size_t k = 0; k < x->size(); ++k) g.point[em.offset(i) + k] = (*x)[k];
      }
      byNeighbour.back().push_back(std::move(g));
    }
  }
  std::vector<Guide> guides;
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (auto& gs : byNeighbour)
      if (rank < gs.size()) {
        guides.push_back(gs[rank]);
        any = true;
      }
    if (!any) break;
  }
  // A coordinate no guide has stays NaN: masifSearch explores that parameter (it is uninformed).
  for (size_t j = 0; j < d; ++j) {
    double sum = 0;
    int n = 0;
    for (auto& g : guides)
      if (!std::isnan(g.point[j])) {
        sum += g.point[j];
        ++n;
      }
    if (!n) continue;
    double fill = sum / n;
    for (auto& g : guides)
      if (std::isnan(g.point[j])) g.point[j] = fill;
  }
  return guides;
}

}  // namespace

int64_t registerTarget(Record& rec, const TuneTarget& t) {
  int64_t id = rec.program(t.name, t.kind, t.command, t.spaceText);
  if (!t.features.empty() && rec.features(id) != t.features) rec.setFeatures(id, t.features);
  return id;
}

std::string failureExample(Record& rec, const TuneTarget& t, const TuneResult& r) {
  if (!r.best) return "";
  auto id = rec.findProgram(t.name);
  std::string key = t.space.key(r.best->config);
  auto m = id ? rec.lookup(*id, key) : std::nullopt;
  if (!m || m->ok() || m->detail.empty()) return "";
  std::string why = m->detail;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  for (char& c : why)
    if (c == '\n') c = ' ';
  if (why.size() > 400) why = "..." + why.substr(why.size() - 400);
  return key + ": " + why;
}

Evaluation evaluateOne(Record& rec, const TuneTarget& t, const Config& c, const MeasureOptions& m, const std::string& origin,
                       int nth, int64_t after) {
  int64_t id = registerTarget(rec, t);
  Evaluation e;
  e.config = c;
  std::string key = t.space.key(c);
  // The record's measurements of this configuration answer in order, but a timeout under a shorter
  // limit than this tuning's does not count: with more time the configuration might finish.
  int usable = 0;
  for (int k = 0;; ++k) {
    auto old = rec.lookup(id, key, k, after);
    if (!old) break;
    if (auto limit = timeoutLimit(*old); limit && *limit < m.timeoutSeconds) continue;
    if (usable++ < nth) continue;
    e.cached = true;
    e.seconds = old->ok() ? old->seconds : std::numeric_limits<double>::infinity();
    e.spread = old->spread;
    e.failure = failureWords(*old);
    return e;
  }
  Measurement r = t.replay ? t.replay(c) : measure(t.space.substitute(t.command, c), m);
  r.origin = origin;
  rec.add(id, key, r);
  e.seconds = r.ok() ? r.seconds : std::numeric_limits<double>::infinity();
  e.spread = r.spread;
  e.failure = failureWords(r);
  return e;
}

TuneResult tune(Record& rec, const TuneTarget& t, const TuneOptions& o) {
  TuneResult res;
  int64_t id = registerTarget(rec, t);
  std::ostream* log = o.log;
  int measured = 0;
  const int64_t after = o.fresh ? rec.lastMeasurementId() : 0;
  auto objective = [&](const Config& c, int nth, bool& cached) {
    Evaluation e = evaluateOne(rec, t, c, o.measure, o.method, nth, after);
    cached = e.cached;
    if (!cached) ++measured;
    return Sample(e.seconds, e.spread, e.failure);
  };
  Evaluator ev(t.space, objective, o.budget);
  if (log) {
    ev.progress = [&](const Evaluation& now, int i, int budget, const Evaluation& best) {
      bool failed = !std::isfinite(now.measurements.back()) && !now.failure.empty();
      *log << "[" << t.name << " " << o.method << " " << i << "/" << budget << "] " << t.space.key(now.config) << " "
           << (failed ? now.failure : fmtSeconds(now.measurements.back())) << (now.cached ? " (recorded)" : "");
      if (now.measurements.size() > 1)
        *log << " (measured again; mean of " << now.measurements.size() << ": " << fmtSeconds(now.seconds) << ")";
      *log << "   best " << fmtSeconds(best.seconds) << "\n" << std::flush;
    };
  }
  std::mt19937_64 rng(o.seed);
  if (o.method == "masif") {
    auto guides = findGuides(rec, id, t, o, res.neighbours);
    if (log) {
      if (t.features.empty())
        *log << "masif: '" << t.name << "' has no static features (give --features FILE), so no neighbours; "
             << "using the default search (fallback configuration, random sampling, local refinement)\n";
      else if (guides.empty())
        *log << "masif: no tuned neighbours in the record for '" << t.name
             << "'; using the default search (fallback configuration, random sampling, local refinement)\n";
      else {
        *log << "masif: neighbours:";
        for (auto& n : res.neighbours) *log << " " << n;
        *log << "\n";
      }
    }
    if (log && !guides.empty()) {
      Evaluator none(t.space, objective, 0);
      std::mt19937_64 planRng(o.seed);
      MasifPlan p = masifSearch(none, planRng, guides, true);
      *log << "masif: " << guides.size() << " guide configurations, " << p.components << " principal component(s) keep "
           << std::setprecision(3) << 100 * p.explained << "% of their variance";
      if (p.uninformed) *log << "; " << p.uninformed << " parameter(s) no neighbour has, explored by the candidates";
      *log << "\n";
    }
    res.plan = masifSearch(ev, rng, guides, o.dryRun);
    if (o.dryRun && log) {
      *log << "masif: the search would evaluate first:\n";
      for (auto& c : res.plan.first) *log << "  " << t.space.key(c) << "\n";
    }
  } else if (o.method == "random") {
    randomSearch(ev, rng);
  } else if (o.method == "greedy") {
    greedySearch(ev, rng);
  } else if (o.method == "exhaustive") {
    exhaustiveSearch(ev);
  }
  res.best = ev.best();
  res.evaluations = ev.used();
  res.measured = measured;
  if (!o.dryRun) {
    std::string nb;
    for (auto& n : res.neighbours) nb += (nb.empty() ? "" : "; ") + n;
    rec.addSearch(id, o.method, o.budget, o.seed, res.evaluations, res.best ? t.space.key(res.best->config) : "",
                  res.best ? res.best->seconds : std::numeric_limits<double>::infinity(), nb);
  }
  return res;
}

}  // namespace tawa::tune
