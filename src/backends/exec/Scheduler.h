// The warp-group scheduler of the executor: a program's warp groups run as threads of which exactly
// one runs at a time. At each synchronization point the running thread hands control back, and the
// scheduler picks, with a seeded RNG, either a thread whose wait condition holds or a pending
// asynchronous completion (a TMA copy landing). Different seeds explore different interleavings;
// the same seed replays the same one. When nothing can run and nothing is in flight while some
// thread still waits, that is a deadlock, reported with every waiting thread's description.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"

namespace tawa::exec {

class Scheduler {
 public:
  explicit Scheduler(uint64_t seed) : rng_(seed) {}

  // Runs one thread per body to completion. Rethrows the first error any thread raised; a deadlock
  // is a UserError at `deadlockLoc()` of the first waiting thread.
  void run(const std::vector<std::function<void(int self)>>& bodies);

  // Called by the running thread `self`: blocks until `ready()` holds and the scheduler picks it.
  // `describe` explains the wait for a deadlock report; `where` locates it.
  void wait(int self, std::function<bool()> ready, std::function<std::string()> describe, Location where);
  // A scheduling point with no condition: lets another thread or a completion go first.
  void yield(int self) { wait(self, [] { return true; }, [] { return std::string(); }, Location{}); }
  // Queues an asynchronous completion; the scheduler fires it at a point of its choosing, always
  // before it would declare a deadlock.
  void post(std::function<void()> completion);

 private:
  struct Thread {
    bool started = false, done = false;
    std::function<bool()> ready;
    std::function<std::string()> describe;
    Location where;
  };
  struct Aborted {};
  // Chooses what runs next; called with the lock held by the thread giving up control.
  void pick(std::unique_lock<std::mutex>& lock);
  void abort(std::exception_ptr e);

  std::mt19937_64 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Thread> threads_;
  std::vector<std::function<void()>> pending_;
  int current_ = -1;
  bool aborted_ = false;
  std::exception_ptr error_;
};

}  // namespace tawa::exec
