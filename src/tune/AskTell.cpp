#include "tune/AskTell.h"

#include <stdexcept>

namespace tawa::tune {

AskTellSearch::AskTellSearch(const Space& space, int budget, std::function<void(Evaluator&)> run, int lookahead)
    : ev_(space, [this](const Config& c, int nth, bool& cached) { return wait(c, nth, cached); }, budget), run_(std::move(run)) {
  ev_.announceTo(lookahead, [this](std::vector<Proposal> next) { hints_ = std::move(next); });
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
  for (;;) {
    if (cancel_) throw Cancelled{};
    if (auto it = told_.find(p); it != told_.end()) {
      Told t = it->second;
      told_.erase(it);
      ++consumed_;
      if (ahead_.erase(p)) ev_.runAhead(-1);  // the search's own from now on: measure() counts it
      cached = t.cached;
      demand_.reset();
      return t.sample;
    }
    // Not told yet: hand the baton back with this as the demand (ask() proposes it unless it is
    // already under way) and sleep until the caller resumes the search.
    demand_ = p;
    searchTurn_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return searchTurn_; });
  }
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

std::vector<Proposal> AskTellSearch::ask(size_t k) {
  std::unique_lock lock(m_);
  // The search runs when it has not started, or when what it waits for has been told.
  if (!ended_ && (!started_ || (demand_ && told_.count(*demand_)))) resume(lock);
  std::vector<Proposal> out;
  if (ended_) {
    absorbLeftovers();
    return out;
  }
  if (k == 0) return out;
  // A measurement under way counts against the budget from its start, the demand's as well.
  if (demand_ && dispatched_.insert(*demand_).second) {
    ahead_.insert(*demand_);
    ev_.runAhead(+1);
    out.push_back(*demand_);
  }
  for (auto& h : hints_) {
    if (out.size() >= k || ev_.used() >= ev_.limit()) break;
    // Only the measurement the search would make next of a configuration, and only once.
    if (h.nth != ev_.measurements(h.config) || dispatched_.count(h) || !ev_.space().legal(h.config)) continue;
    dispatched_.insert(h);
    ahead_.insert(h);
    ev_.runAhead(+1);
    out.push_back(h);
  }
  return out;
}

void AskTellSearch::tell(const Proposal& p, const Sample& s, bool cached) {
  std::lock_guard lock(m_);
  if (!dispatched_.count(p)) throw std::logic_error("tell: a result for a measurement that was not proposed");
  if (!told_.emplace(p, Told{s, cached}).second) throw std::logic_error("tell: a measurement told twice");
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
    ++consumed_;
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
