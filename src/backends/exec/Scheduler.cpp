#include "backends/exec/Scheduler.h"

#include <thread>

namespace tawa::exec {

void Scheduler::abort(std::exception_ptr e) {
  if (!error_) error_ = e;
  aborted_ = true;
  cv_.notify_all();
}

void Scheduler::pick(std::unique_lock<std::mutex>&) {
  while (true) {
    std::vector<int> runnable;
    bool anyLeft = false;
    for (size_t t = 0; t < threads_.size(); ++t) {
      auto& th = threads_[t];
      if (th.done) continue;
      anyLeft = true;
      if (!th.ready || th.ready()) runnable.push_back(static_cast<int>(t));
    }
    if (!anyLeft) {
      current_ = -1;
      cv_.notify_all();
      return;
    }
    size_t options = runnable.size() + (pending_.empty() ? 0 : 1);
    if (options == 0) {
      std::string msg = "deadlock: no warp group can proceed and nothing is in flight";
      Location loc;
      for (auto& th : threads_) {
        if (th.done) continue;
        msg += "\n  " + th.describe();
        if (!loc.known()) loc = th.where;
      }
      abort(std::make_exception_ptr(UserError(loc, msg)));
      return;
    }
    size_t choice = std::uniform_int_distribution<size_t>(0, options - 1)(rng_);
    if (choice < runnable.size()) {
      current_ = runnable[choice];
      threads_[static_cast<size_t>(current_)].ready = nullptr;
      cv_.notify_all();
      return;
    }
    size_t k = std::uniform_int_distribution<size_t>(0, pending_.size() - 1)(rng_);
    auto completion = std::move(pending_[k]);
    pending_.erase(pending_.begin() + static_cast<long>(k));
    try {
      completion();
    } catch (...) {
      abort(std::current_exception());
      return;
    }
  }
}

void Scheduler::wait(int self, std::function<bool()> ready, std::function<std::string()> describe, Location where) {
  std::unique_lock<std::mutex> lock(mu_);
  auto& th = threads_[static_cast<size_t>(self)];
  th.ready = std::move(ready);
  th.describe = std::move(describe);
  th.where = std::move(where);
  pick(lock);
  cv_.wait(lock, [&] { return current_ == self || aborted_; });
  if (aborted_) throw Aborted{};
}

void Scheduler::post(std::function<void()> completion) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.push_back(std::move(completion));
}

void Scheduler::run(const std::vector<std::function<void(int)>>& bodies) {
  threads_.assign(bodies.size(), Thread{});
  std::vector<std::thread> workers;
  for (size_t t = 0; t < bodies.size(); ++t) {
    workers.emplace_back([&, t] {
      int self = static_cast<int>(t);
      try {
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return current_ == self || aborted_; });
          if (aborted_) return;
        }
        bodies[t](self);
        std::unique_lock<std::mutex> lock(mu_);
        threads_[t].done = true;
        pick(lock);
      } catch (const Aborted&) {
      } catch (...) {
        std::unique_lock<std::mutex> lock(mu_);
        threads_[t].done = true;
        abort(std::current_exception());
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    pick(lock);
  }
  for (auto& w : workers) w.join();
  if (error_) std::rethrow_exception(error_);
  // Completions still queued when every thread finished (a TMA whose data nobody waited for) fire
  // now, so their effects and errors are not lost.
  while (!pending_.empty()) {
    auto c = std::move(pending_.back());
    pending_.pop_back();
    c();
  }
}

}  // namespace tawa::exec
