// Ask/tell over the searches of Search.h: the search proposes measurements in batches and is told
// their results as they arrive, in any order, so that an engine with several workers (local
// processes, Ray actors) keeps them all busy.
//
// The searches stay written as plain sequential code over an Evaluator. An AskTellSearch runs one on
// a thread of its own, strictly in turn with the caller (never both at once, so neither locks the
// Evaluator): ask() lets the search run until it needs a figure that has not been told yet, and
// returns that measurement (the *demand*) together with those the search announced it would ask for
// next (Evaluator::hint), as many as keep `lookahead` announced measurements under way, within the
// budget. Measurements started ahead of the search count against the budget from the start; when
// the search later asks for one, it waits for that result instead of starting it again; when it
// never does, the result joins the history once the search has ended (so that nothing measured is
// lost, and best() sees it).
//
// Determinism: what is proposed depends only on the figures the search has taken and on
// `lookahead`, never on when results arrive or how many workers run them (the search takes only the
// figures it asked for, and the measurements ahead are counted when proposed). So the same search
// over the same figures proposes the same measurements: a rerun over the record measures nothing
// new, whatever the order results came back in the first time. With lookahead 0 the search runs
// exactly as it does synchronously (the demand is the only proposal).
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tune/Search.h"

namespace tawa::tune {

class AskTellSearch {
 public:
  // `run` is the search (e.g. [&](Evaluator& ev) { masifSearch(ev, rng, guides); }); `lookahead` is
  // how many announced measurements may be under way beside the demand (workers - 1 keeps every
  // worker busy while the search waits).
  AskTellSearch(const Space& space, int budget, std::function<void(Evaluator&)> run, int lookahead);
  // Stops a search still running (its thread unwinds from the measurement it waits for).
  ~AskTellSearch();
  AskTellSearch(const AskTellSearch&) = delete;
  AskTellSearch& operator=(const AskTellSearch&) = delete;

  // The measurements to start now, each proposed once: when the search has taken every result it
  // waited for, it runs on until it needs another, and that one (unless already under way) comes
  // first, then what it announced. Empty while the search waits for a result not yet told.
  // Rethrows what the search threw.
  std::vector<Proposal> ask();
  // The measurement the search waits for (start it before the others), if any.
  std::optional<Proposal> waitingFor();
  // The result of a proposal (cached: it came from the record, nothing ran). Any order.
  void tell(const Proposal& p, const Sample& s, bool cached = false);
  // Proposed and not told yet.
  size_t outstanding() const { return dispatched_.size() - answered_.size(); }
  // The search has returned and every proposal has been told (and taken into the history).
  bool finished();
  // The search's evaluator: its history and best. Read it between calls, never during one.
  Evaluator& evaluator() { return ev_; }

 private:
  struct Told {
    Sample sample;
    bool cached = false;
  };
  struct Cancelled {};

  Sample wait(const Config& c, int nth, bool& cached);  // the search thread's objective
  void resume(std::unique_lock<std::mutex>& lock);      // runs the search until it blocks or ends
  void absorbLeftovers();

  Evaluator ev_;
  std::function<void(Evaluator&)> run_;
  std::mutex m_;
  std::condition_variable cv_;
  bool searchTurn_ = false;  // the baton: the search thread runs only while this is true
  bool started_ = false, ended_ = false, cancel_ = false;
  std::exception_ptr error_;
  std::optional<Proposal> demand_;       // what the blocked search waits for
  std::vector<Proposal> hints_;          // what it announced next
  std::set<Proposal> dispatched_;        // every proposal handed out
  std::set<Proposal> ahead_;             // handed out and not yet taken by the search (Evaluator::runAhead)
  std::map<Proposal, Told> told_;        // results not yet taken by the search
  std::set<Proposal> answered_;          // every proposal told so far
  int lookahead_ = 0;
  std::thread thread_;
};

}  // namespace tawa::tune
