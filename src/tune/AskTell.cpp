#include "tune/AskTell.h"

#include <algorithm>
#include <stdexcept>

namespace tawa::tune {

AskTellSearch::AskTellSearch(const Space& space, int budget, std::function<void(Evaluator&)> run, int lookahead)
    : ev_(space, [this](const Config& c, int nth, bool& cached) { return wait(c, nth, cached); }, budget),
      run_(std::move(run)),
      lookahead_(std::max(0, lookahead)) {
  // Announcements reach further than the measurements ahead, past those already under way.
  ev_.announceTo(2 * lookahead_, [this](std::vector<Proposal> next) { hints_ = std::move(next); });
}

AskTellSearch::~AskTellSearch() {
  if (!thread_.joinable()) return;
  {
    std::unique_lock lock(m_);
    cancel_ = true;
    searchTurn_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Sample AskTellSearch::wait(const Config& c, int nth, bool& cached) {
  std::unique_lock lock(m_);
  const Proposal p{c, nth};
  // Every measurement the search takes is a turn of the caller's, even one already told: ask()
  // proposes at each turn, so what it proposes does not depend on when results arrived.
  demand_ = p;
  do {
    searchTurn_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return searchTurn_; });
    if (cancel_) throw Cancelled{};
  } while (!told_.count(p));
  Told t = told_.at(p);
  told_.erase(p);
  if (ahead_.erase(p)) ev_.runAhead(-1);  // the search's own from now on: measure() counts it
  cached = t.cached;
  demand_.reset();
  return t.sample;
}

void AskTellSearch::resume(std::unique_lock<std::mutex>& lock) {
  searchTurn_ = true;
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] {
      bool cancelled = false;
      {
        std::unique_lock l(m_);
        cv_.wait(l, [&] { return searchTurn_; });
        cancelled = cancel_;
      }
      try {
        if (!cancelled) run_(ev_);
      } catch (const Cancelled&) {
      } catch (...) {
        std::lock_guard l(m_);
        error_ = std::current_exception();
      }
      std::lock_guard l(m_);
      ended_ = true;
      demand_.reset();
      hints_.clear();
      searchTurn_ = false;
      cv_.notify_all();
    });
  }
  cv_.notify_all();
  cv_.wait(lock, [&] { return !searchTurn_; });
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

std::vector<Proposal> AskTellSearch::ask() {
  std::unique_lock lock(m_);
  std::vector<Proposal> out;
  // A measurement under way counts against the budget from its start, the demand's as well.
  auto start = [&](const Proposal& p) {
    dispatched_.insert(p);
    ahead_.insert(p);
    ev_.runAhead(+1);
    out.push_back(p);
  };
  // The search runs when it has not started, or when what it waits for has been told; at each
  // measurement it takes it stops, and the demand and what it announced are proposed then.
  while (!ended_ && (!started_ || (demand_ && told_.count(*demand_)))) {
    resume(lock);
    if (ended_) break;
    if (demand_ && !dispatched_.count(*demand_)) start(*demand_);
    // Announced measurements under way and not yet taken, among those announced now: one announced
    // earlier and no longer announced (the search moved on) does not hold a place.
    int underWay = 0;
    for (auto& h : hints_) underWay += ahead_.count(h) && !(demand_ && h == *demand_);
    for (auto& h : hints_) {
      if (underWay >= lookahead_ || ev_.used() >= ev_.limit()) break;
      // Only the measurement the search would make next of a configuration, and only once.
      if (h.nth != ev_.measurements(h.config) || dispatched_.count(h) || !ev_.space().legal(h.config)) continue;
      start(h);
      ++underWay;
    }
  }
  if (ended_) absorbLeftovers();
  return out;
}

std::optional<Proposal> AskTellSearch::waitingFor() {
  std::lock_guard lock(m_);
  return ended_ ? std::nullopt : demand_;
}

void AskTellSearch::tell(const Proposal& p, const Sample& s, bool cached) {
  std::lock_guard lock(m_);
  if (!dispatched_.count(p)) throw std::logic_error("tell: a result for a measurement that was not proposed");
  if (!answered_.insert(p).second) throw std::logic_error("tell: a measurement told twice");
  told_.emplace(p, Told{s, cached});
  if (ended_) absorbLeftovers();
}

void AskTellSearch::absorbLeftovers() {
  // The search has ended: what was run ahead of it and has come back joins the history, first
  // measurements before re-measurements of the same configuration.
  for (auto it = told_.begin(); it != told_.end();) {
    if (it->first.nth > ev_.measurements(it->first.config)) {
      ++it;
      continue;
    }
    ahead_.erase(it->first);
    ev_.absorb(it->first, it->second.sample, it->second.cached);
    it = told_.erase(it);
  }
}

bool AskTellSearch::finished() {
  std::unique_lock lock(m_);
  if (!ended_) return false;
  absorbLeftovers();
  return outstanding() == 0 && told_.empty();
}

}  // namespace tawa::tune
