#include "tune/Tuner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ir/Diagnostic.h"
#include "tune/AskTell.h"
#include "tune/SpaceJson.h"
#include "tune/Stats.h"
#include "tune/Workers.h"

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

// Whether a --neighbours-from / --exclude entry names this program on this machine: "NAME" (on any
// machine), "NAME@DEVICE", or "@DEVICE" (every program measured there).
bool names(const std::string& entry, const std::string& program, const std::string& machine) {
  auto at = entry.find('@');
  if (at == std::string::npos) return entry == program;
  return (at == 0 || entry.substr(0, at) == program) && entry.substr(at + 1) == machine;
}

// The features MaSiF compares: the program's static features and, prefixed "device.", the facts of
// the machine or device its measurements are of.
Features withDeviceFacts(Features f, Record& rec, int64_t machine) {
  for (auto& [k, v] : rec.machineFacts(machine)) f["device." + k] = v;
  return f;
}

struct Neighbourhood {
  std::vector<Guide> guides;
  std::vector<Landscape> landscapes;
};

// The tuned (program, machine) pairs that guide: the target program on other machines or devices, and
// the k nearest other programs, all ordered by z-scored program features and device facts; the
// guides their best configurations give, and their landscapes over the target's space. Guides are
// points of the target's Embedding: parameters matched by name, integers carried over by value,
// categoricals by identity. A parameter the neighbour lacks (or a category the target lacks) takes
// the other guides' mean there, or stays NaN when no guide has it (masifSearch then explores it).
// Guides come rank by rank: every neighbour's best (nearest neighbour first), then every
// neighbour's second best, and so on. A neighbour has a landscape when its space has every parameter
// of the target's (by name and kind): each configuration it measured whose values the target's space
// has, at the best figure of those that map onto one target configuration.
Neighbourhood findNeighbours(Record& rec, int64_t self, const TuneTarget& t, const TuneOptions& o, std::vector<std::string>& out) {
  std::vector<TunedPair> cands;
  std::vector<Features> feats;
  for (auto& p : rec.tunedPairs(o.minMeasured)) {
    if (p.program.id == self && p.machine == rec.machine()) continue;
    if ((p.program.kind == "kernel") != (t.kind == "kernel")) continue;  // kernels resemble kernels, programs programs
    if (o.pool && !o.pool->count(p.program.name)) continue;
    if (!o.neighboursFrom.empty() &&
        std::none_of(o.neighboursFrom.begin(), o.neighboursFrom.end(), [&](auto& e) { return names(e, p.program.name, p.machineName); }))
      continue;
    if (std::any_of(o.exclude.begin(), o.exclude.end(), [&](auto& e) { return names(e, p.program.name, p.machineName); })) continue;
    Features f = rec.features(p.program.id);
    if (f.empty()) continue;  // no static features: nothing to compare
    cands.push_back(p);
    feats.push_back(withDeviceFacts(std::move(f), rec, p.machine));
  }
  if (cands.empty() || t.features.empty()) return {};
  const Features target = withDeviceFacts(t.features, rec, rec.machine());
  std::vector<std::string> keys;
  for (auto& [k, v] : target) keys.push_back(k);
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(cands.size()), static_cast<Eigen::Index>(keys.size()));
  Eigen::VectorXd tv(static_cast<Eigen::Index>(keys.size()));
  for (size_t j = 0; j < keys.size(); ++j) {
    tv(static_cast<Eigen::Index>(j)) = target.at(keys[j]);
    for (size_t i = 0; i < cands.size(); ++i) {
      auto it = feats[i].find(keys[j]);
      rows(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = it == feats[i].end() ? 0.0 : it->second;
    }
  }
  // The program itself on other machines or devices always guides; of the others, the k nearest.
  std::vector<Neighbour> near;
  size_t others = 0;
  for (auto& n : nearestByZScore(rows, tv, cands.size()))
    if (cands[n.index].program.id == self || others++ < o.neighbours) near.push_back(n);
  const Embedding em(t.space);
  const size_t d = em.dims();
  Neighbourhood nb;
  std::vector<std::vector<Guide>> byNeighbour;
  for (auto& n : near) {
    const TunedPair& p = cands[n.index];
    const std::string who = p.machine == rec.machine() ? p.program.name : p.program.name + "@" + p.machineName;
    std::ostringstream nm;
    nm << who << " (distance " << std::setprecision(3) << n.distance << ")";
    out.push_back(nm.str());
    Space ns;
    try {
      ns = parseSpace(p.program.space, p.program.name);
    } catch (...) {
      continue;  // a neighbour whose recorded space no longer parses guides nothing
    }
    // Where each target parameter sits in the neighbour's space (-1: it lacks it).
    std::vector<int> where(t.space.dims());
    bool covers = true;
    for (size_t i = 0; i < t.space.dims(); ++i) {
      const Param& tp = t.space.params[i];
      int ni = ns.paramIndex(tp.name);
      where[i] = ni >= 0 && tp.kind == ns.params[static_cast<size_t>(ni)].kind ? ni : -1;
      covers = covers && where[i] >= 0;
    }
    auto parse = [](const std::string& key) {
      try {
        return nlohmann::json::parse(key);
      } catch (...) {
        return nlohmann::json();
      }
    };
    byNeighbour.emplace_back();
    for (auto& [key, secs] : rec.best(p.program.id, o.bestPerNeighbour, p.machine)) {
      nlohmann::json nc = parse(key);
      if (!nc.is_object()) continue;
      Guide g;
      g.point.assign(d, std::numeric_limits<double>::quiet_NaN());
      g.from = who + " " + key;
      for (size_t i = 0; i < t.space.dims(); ++i) {
        const std::string& name = t.space.params[i].name;
        if (where[i] < 0 || !nc.contains(name)) continue;
        if (auto x = em.encodeValue(i, nc[name]))
          for (size_t k = 0; k < x->size(); ++k) g.point[em.offset(i) + k] = (*x)[k];
      }
      byNeighbour.back().push_back(std::move(g));
    }
    if (!covers) continue;
    Landscape l;
    l.from = who;
    for (auto& [key, secs] : rec.landscape(p.program.id, p.machine)) {
      nlohmann::json nc = parse(key);
      if (!nc.is_object()) continue;
      Config c(t.space.dims());
      bool in = true;
      for (size_t i = 0; i < t.space.dims() && in; ++i) {
        auto v = nc.find(t.space.params[i].name);
        auto idx = v == nc.end() ? std::nullopt : t.space.params[i].indexOf(*v);
        in = idx.has_value();
        if (in) c[i] = *idx;
      }
      if (!in) continue;
      auto [it, fresh] = l.seconds.emplace(c, secs);
      if (!fresh) it->second = std::min(it->second, secs);
    }
    if (!l.seconds.empty()) nb.landscapes.push_back(std::move(l));
  }
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (auto& gs : byNeighbour)
      if (rank < gs.size()) {
        nb.guides.push_back(gs[rank]);
        any = true;
      }
    if (!any) break;
  }
  // A coordinate no guide has stays NaN: masifSearch explores that parameter (it is uninformed).
  for (size_t j = 0; j < d; ++j) {
    double sum = 0;
    int n = 0;
    for (auto& g : nb.guides)
      if (!std::isnan(g.point[j])) {
        sum += g.point[j];
        ++n;
      }
    if (!n) continue;
    double fill = sum / n;
    for (auto& g : nb.guides)
      if (std::isnan(g.point[j])) g.point[j] = fill;
  }
  return nb;
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

namespace {

// The record's measurement `nth` of configuration c (among those with an id above `after`), if it
// holds that many. A timeout under a shorter limit than this tuning's does not count: with more
// time the configuration might finish.
std::optional<Evaluation> recorded(Record& rec, int64_t id, const TuneTarget& t, const Config& c, const MeasureOptions& m, int nth,
                                   int64_t after) {
  const std::string key = t.space.key(c);
  int usable = 0;
  for (int k = 0;; ++k) {
    auto old = rec.lookup(id, key, k, after);
    if (!old) return std::nullopt;
    if (auto limit = timeoutLimit(*old); limit && *limit < m.timeoutSeconds) continue;
    if (usable++ < nth) continue;
    Evaluation e;
    e.config = c;
    e.cached = true;
    e.seconds = old->ok() ? old->seconds : std::numeric_limits<double>::infinity();
    e.spread = old->spread;
    e.failure = failureWords(*old);
    return e;
  }
}

// Records a new measurement of c and returns it as an evaluation.
Evaluation recordNew(Record& rec, int64_t id, const TuneTarget& t, const Config& c, Measurement r, const std::string& origin) {
  r.origin = origin;
  rec.add(id, t.space.key(c), r);
  Evaluation e;
  e.config = c;
  e.seconds = r.ok() ? r.seconds : std::numeric_limits<double>::infinity();
  e.spread = r.spread;
  e.failure = failureWords(r);
  e.measurements = {e.seconds};
  return e;
}

}  // namespace

Evaluation evaluateOne(Record& rec, const TuneTarget& t, const Config& c, const MeasureOptions& m, const std::string& origin,
                       int nth, int64_t after) {
  int64_t id = registerTarget(rec, t);
  if (auto e = recorded(rec, id, t, c, m, nth, after)) return *e;
  if (!t.prepare.empty() && t.prepareRequired && nth == 0)
    if (Measurement p = runPrepare(t.space.substitute(t.prepare, c), m.timeoutSeconds); !p.ok()) return recordNew(rec, id, t, c, p, origin);
  return recordNew(rec, id, t, c, t.replay ? t.replay(c, nth) : measure(t.space.substitute(t.command, c), m), origin);
}

namespace {

// What a worker runs for measurement p of target t (Workers.h has the protocol); its prepare command
// first when `prepare` (no compile worker ran it, and this is the configuration's first measurement).
nlohmann::json jobFor(const TuneTarget& t, const Proposal& p, const MeasureOptions& m, bool prepare) {
  if (t.replaySource) {
    return {{"replay", {{"csv", t.replaySource->csv}, {"space", t.replaySource->space}, {"noise", t.replaySource->noise},
                        {"seed", t.replaySource->seed}}},
            {"config", t.space.toJson(p.config)},
            {"nth", p.nth}};
  }
  if (t.replay) throw std::logic_error("a replayed target without its source cannot run on workers");
  nlohmann::json job = {{"command", t.space.substitute(t.command, p.config)},
                        {"measure", {{"warmups", m.warmups}, {"reps", m.repetitions}, {"max_reps", m.maxRepetitions}, {"noise", m.noiseLimit},
                                     {"timeout", m.timeoutSeconds}}}};
  if (prepare && !t.prepare.empty() && t.prepareRequired && p.nth == 0) job["prepare"] = t.space.substitute(t.prepare, p.config);
  return job;
}

// The prepare command of a configuration alone, for a compile worker.
nlohmann::json prepareJobFor(const TuneTarget& t, const Proposal& p, const MeasureOptions& m) {
  return {{"role", "prepare"}, {"prepare", t.space.substitute(t.prepare, p.config)}, {"measure", {{"timeout", m.timeoutSeconds}}}};
}

// The search on workers: ask/tell, every proposal looked up in the record first, the rest measured
// as workers free up (what the search waits for first), each result recorded as it arrives. Workers
// whose fingerprint differs from the first one's are dropped: their figures never share a ranking.
// A measurement lost with its worker runs again elsewhere (given up as failed after three losses).
// Then the finalists, measured again one at a time on one worker.
void tuneOnWorkers(Record& rec, int64_t id, const TuneTarget& t, const TuneOptions& o, const std::function<void(Evaluator&)>& search,
                   const Evaluator::Progress& progress, int64_t after, TuneResult& res, int& measured) {
  WorkerPool& pool = *o.workers;
  std::ostream* log = o.log;
  auto ids = pool.identities();
  if (ids.empty()) throw UserError(Location::at(std::make_shared<const std::string>(t.name), 0, 0), "no workers");
  const nlohmann::json reference = ids.front();
  auto allDropped = [&] {
    return UserError(Location::at(std::make_shared<const std::string>(t.name), 0, 0), "every worker was dropped (see the messages above)");
  };
  const std::string refFingerprint = reference.value("fingerprint", std::string());
  for (auto& w : ids)
    if (w.value("fingerprint", std::string()) != refFingerprint)
      pool.drop(w.value("name", std::string()), "it measures on " + w.value("description", std::string("?")) + ", not on " +
                                                    reference.value("description", std::string("?")) +
                                                    " like the first worker; figures of different machines are never ranked together");
  for (auto& text : pool.messages())
    if (log) *log << "workers: " << text << "\n";
  // Measurements are the workers' machine's; a replayed landscape's figures stay those of the device
  // it was recorded on (--device), whichever worker looks them up.
  if (!t.replaySource) rec.useMachine({refFingerprint, reference.value("description", std::string())});
  const size_t slots = pool.slots();
  // Prepare commands (a kernel's compile) run on compile workers when there are any, while the
  // measuring workers measure; otherwise before the measurement, on its worker.
  const bool staged = !t.prepare.empty() && pool.slots("prepare") > 0;
  const int finalists = slots > 1 && o.budget > 2 * o.finalists ? o.finalists : 0;
  if (log)
    *log << "workers: " << pool.describe() << ", measuring on "
         << (t.replaySource ? rec.machineDescription() + " (replayed)" : reference.value("description", std::string("?")))
         << (finalists ? "; the " + std::to_string(finalists) + " fastest measured again on one worker at the end" : std::string()) << "\n";

  // Enough measurements ahead to keep every slot busy, compile slots included.
  const int lookahead = static_cast<int>(slots + (staged ? pool.slots("prepare") : 0)) - 1;
  AskTellSearch at(t.space, o.budget - finalists, search, lookahead);
  at.evaluator().progress = progress;
  std::deque<Proposal> queue, toPrepare;   // waiting for a measuring worker, for a compile worker
  struct Running {
    Proposal p;
    bool prepare = false;
  };
  std::map<uint64_t, Running> running;
  std::map<Proposal, int> losses;
  uint64_t nextId = 1;
  auto message = [&](const WorkerPool::Event& e) {
    if (log) *log << "workers: " << e.body.value("text", e.body.dump()) << "\n" << std::flush;
  };
  // Handles one worker event; returns the reply's measurement for `running` proposal, if any.
  auto handle = [&](const WorkerPool::Event& e, const std::function<void(const Proposal&, const Evaluation&)>& done) {
    if (e.kind == WorkerPool::Event::Message) return message(e);
    auto it = running.find(e.id);
    if (it == running.end()) return;  // not ours (any more): never recorded twice
    const Proposal p = it->second.p;
    const bool prepared = it->second.prepare;
    running.erase(it);
    if (prepared) {
      // A compile worker's answer: on to a measuring worker, or the configuration failed there.
      if (e.kind == WorkerPool::Event::Lost) {
        if (log) *log << "workers: " << t.space.key(p.config) << " lost while preparing (" << e.body.value("why", std::string()) << "); again\n";
        toPrepare.push_front(p);
        return;
      }
      Measurement m = measurementFromJson(e.body["measurement"]);
      if (m.ok()) {
        queue.push_back(p);
        return;
      }
      ++measured;
      return done(p, recordNew(rec, id, t, p.config, m, o.method));
    }
    if (e.kind == WorkerPool::Event::Lost) {
      const std::string why = e.body.value("why", std::string("lost"));
      if (++losses[p] >= 3) {
        Measurement m;
        m.status = "failed";
        m.detail = "lost with its worker 3 times; the last time " + why;
        ++measured;
        return done(p, recordNew(rec, id, t, p.config, m, o.method));
      }
      if (log) *log << "workers: " << t.space.key(p.config) << " lost (" << why << "); run again\n" << std::flush;
      queue.push_front(p);
      return;
    }
    const nlohmann::json& w = e.body["worker"];
    if (w.value("fingerprint", std::string()) != refFingerprint) {
      pool.drop(w.value("name", std::string()), "it measured on " + w.value("description", std::string("?")) + ", not on the reference machine");
      queue.push_front(p);
      return;
    }
    Measurement m = measurementFromJson(e.body["measurement"]);
    m.worker = nlohmann::json{{"name", w.value("name", std::string())}, {"details", w.value("details", nlohmann::json::object())}}.dump();
    ++measured;
    done(p, recordNew(rec, id, t, p.config, m, o.method));
  };
  // Starts what waits on free workers, `first` (what the search waits for) before the others.
  auto startJobs = [&](const std::optional<Proposal>& first, const std::string& on) {
    for (bool prep : {true, false}) {
      std::deque<Proposal>& waiting = prep ? toPrepare : queue;
      while (pool.free(prep ? "prepare" : "measure") > 0 && !waiting.empty()) {
        auto q = first ? std::find(waiting.begin(), waiting.end(), *first) : waiting.end();
        if (q == waiting.end()) q = waiting.begin();
        nlohmann::json job = prep ? prepareJobFor(t, *q, o.measure) : jobFor(t, *q, o.measure, !staged);
        job["id"] = nextId;
        if (!on.empty() && !prep) job["on"] = on;
        running[nextId++] = Running{*q, prep};
        waiting.erase(q);
        pool.submit(job);
      }
    }
  };
  auto told = [&](const Proposal& p, const Evaluation& e) { at.tell(p, Sample(e.seconds, e.spread, e.failure), e.cached); };
  for (;;) {
    bool answered = false;
    for (auto& p : at.ask()) {
      if (auto e = recorded(rec, id, t, p.config, o.measure, p.nth, after)) {
        told(p, *e);  // from the record (cached)
        answered = true;
      } else {
        (staged && p.nth == 0 ? toPrepare : queue).push_back(p);
      }
    }
    if (answered) continue;  // figures from the record: the search may go on at once
    startJobs(at.waitingFor(), "");
    if (running.empty()) {
      if (at.finished()) break;
      if (pool.slots() == 0 || (!toPrepare.empty() && pool.slots("prepare") == 0))
        throw allDropped();
      if (queue.empty() && toPrepare.empty()) throw std::logic_error("the search waits for nothing under way");
      continue;
    }
    auto e = pool.next();
    if (!e) continue;
    handle(*e, told);
  }
  for (auto& text : pool.messages())
    if (log) *log << "workers: " << text << "\n";
  const Evaluator& ev = at.evaluator();
  res.best = ev.best();
  res.evaluations = ev.used();
  if (!finalists) return;

  // The finalists: the fastest configurations, each measured once more (its next measurement, so
  // that a rerun finds it in the record), one at a time on the first worker, nothing else running.
  std::vector<Evaluation> byFigure;
  for (auto& e : ev.history())
    if (std::isfinite(e.seconds)) byFigure.push_back(e);
  std::stable_sort(byFigure.begin(), byFigure.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
  if (byFigure.size() > static_cast<size_t>(finalists)) byFigure.resize(static_cast<size_t>(finalists));
  const std::string on = pool.identities().empty() ? "" : pool.identities().front().value("name", std::string());
  for (auto& f : byFigure) {
    const Proposal p{f.config, static_cast<int>(f.measurements.size())};
    std::optional<Evaluation> got = recorded(rec, id, t, p.config, o.measure, p.nth, after);
    if (!got) {
      queue.push_back(p);
      while (!got) {
        if (pool.slots() == 0) throw allDropped();
        startJobs(std::nullopt, on);
        auto e = pool.next();
        if (!e) continue;
        handle(*e, [&](const Proposal&, const Evaluation& r) { got = r; });
      }
    }
    ++res.evaluations;
    Evaluation r = *got;
    r.config = f.config;
    res.finalists.push_back(r);
    if (log)
      *log << "[" << t.name << " finalist] " << t.space.key(f.config) << " " << fmtSeconds(r.seconds) << (r.cached ? " (recorded)" : "")
           << " on " << (on.empty() ? "a worker" : on) << " (during the search " << fmtSeconds(f.seconds) << ")\n" << std::flush;
  }
  std::stable_sort(res.finalists.begin(), res.finalists.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
  if (!res.finalists.empty() && std::isfinite(res.finalists.front().seconds)) res.best = res.finalists.front();
}

}  // namespace

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
  Evaluator::Progress progress;
  if (log) {
    progress = [&](const Evaluation& now, int i, int budget, const Evaluation& best) {
      bool failed = !std::isfinite(now.measurements.back()) && !now.failure.empty();
      *log << "[" << t.name << " " << o.method << " " << i << "/" << budget << "] " << t.space.key(now.config) << " "
           << (failed ? now.failure : fmtSeconds(now.measurements.back())) << (now.cached ? " (recorded)" : "");
      if (now.measurements.size() > 1)
        *log << " (measured again; mean of " << now.measurements.size() << ": " << fmtSeconds(now.seconds) << ")";
      *log << "   best " << fmtSeconds(best.seconds) << "\n" << std::flush;
    };
  }
  // The search, on whichever evaluator runs it.
  std::function<void(Evaluator&)> search;
  if (o.method == "masif" || o.method == "copy") {
    auto nb = std::make_shared<Neighbourhood>(findNeighbours(rec, id, t, o, res.neighbours));
    const auto& guides = nb->guides;
    if (log) {
      if (t.features.empty())
        *log << o.method << ": '" << t.name << "' has no static features (give --features FILE), so no neighbours"
             << (o.method == "masif" ? "; using the default search (fallback configuration, random sampling, local refinement)\n" : "\n");
      else if (guides.empty())
        *log << o.method << ": no tuned neighbours in the record for '" << t.name << "'"
             << (o.method == "masif" ? "; using the default search (fallback configuration, random sampling, local refinement)\n" : "\n");
      else {
        *log << o.method << ": neighbours:";
        for (auto& n : res.neighbours) *log << " " << n;
        *log << "\n";
      }
    }
    if (o.method == "copy") {
      search = [nb](Evaluator& ev) { copySearch(ev, nb->guides, nb->landscapes); };
    } else {
      if (log && !guides.empty() && masifTransfers(nb->landscapes)) {
        *log << "masif: transfer from " << nb->landscapes.size() << " neighbour landscape(s) (";
        for (size_t k = 0; k < nb->landscapes.size(); ++k)
          *log << (k ? ", " : "") << nb->landscapes[k].from << ": " << nb->landscapes[k].seconds.size();
        *log << " configurations)\n";
      } else if (log && !guides.empty()) {
        // The PCA of the guides, as the search will compute it (a dry run evaluates nothing).
        Evaluator none(t.space, objective, 0);
        std::mt19937_64 planRng(o.seed);
        MasifPlan p = masifSearch(none, planRng, guides, true);
        *log << "masif: " << guides.size() << " guide configurations, " << p.components << " principal component(s) keep "
             << std::setprecision(3) << 100 * p.explained << "% of their variance";
        if (p.uninformed) *log << "; " << p.uninformed << " parameter(s) no neighbour has, explored by the candidates";
        *log << "\n";
      }
      search = [nb, &res, &o](Evaluator& ev) {
        std::mt19937_64 rng(o.seed);
        res.plan = masifSearch(ev, rng, nb->guides, o.dryRun, nb->landscapes);
      };
      auto report = [nb, &res, &o, &t, log] {
        if (log && res.plan.transfer && !o.dryRun) {
          *log << "masif: final neighbour weights (how well each ranked this program's figures):";
          for (size_t k = 0; k < nb->landscapes.size(); ++k)
            *log << " " << nb->landscapes[k].from << " " << std::setprecision(2) << res.plan.weights[k];
          *log << "\n";
        }
        if (o.dryRun && log) {
          *log << "masif: the search would evaluate first:\n";
          for (auto& c : res.plan.first) *log << "  " << t.space.key(c) << "\n";
        }
      };
      search = [inner = search, report](Evaluator& ev) {
        inner(ev);
        report();
      };
    }
  } else if (o.method == "random") {
    search = [&o](Evaluator& ev) {
      std::mt19937_64 rng(o.seed);
      randomSearch(ev, rng);
    };
  } else if (o.method == "greedy") {
    search = [&o](Evaluator& ev) {
      std::mt19937_64 rng(o.seed);
      greedySearch(ev, rng);
    };
  } else if (o.method == "exhaustive") {
    search = [](Evaluator& ev) { exhaustiveSearch(ev); };
  } else {
    search = [](Evaluator&) {};
  }
  if (o.workers && !o.dryRun) {
    tuneOnWorkers(rec, id, t, o, search, progress, after, res, measured);
  } else {
    Evaluator ev(t.space, objective, o.budget);
    ev.progress = progress;
    search(ev);
    res.best = ev.best();
    res.evaluations = ev.used();
  }
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
