// Workers for `tawa tune`: measurements run elsewhere than in the tuner, several at once.
//
// One protocol, two engines. A worker reads jobs, one JSON object per line, and answers each with
// one line; it begins with a hello line saying who it is and how many jobs it takes at once:
//   worker -> tuner  {"hello": IDENTITY, "slots": N}
//   tuner -> worker  {"id": 7, "command": "./app --grain 64", "measure": {"warmups": 1, "reps": 3, ...}}
//                    (with "prepare": "make GRAIN=64", run once first: its failure is the measurement's)
//                    {"id": 8, "replay": {"csv": "data.csv", "space": "SPACE.json", "noise": false, "seed": 1},
//                     "config": {"grain": 64}, "nth": 0}
//                    (either may carry "on": NAME, the worker that must run it)
//   worker -> tuner  {"id": 7, "measurement": {...}, "worker": IDENTITY}
//                    {"id": 7, "lost": "the actor died: ..."}       the job must run elsewhere
//                    {"message": "..."}, {"slots": N}               news of the engine
// IDENTITY is {"name", "fingerprint", "description", "details": {host, pid, GPU, ...}}: measurements
// are ranked only among workers of one fingerprint (a GPU model with its driver and clocks, or a
// CPU host), and each is recorded with its worker's details.
//
// Engines: local processes (`tawa tune --workers N`: N children `tawa tune --serve-worker`, each
// with its own CUDA_VISIBLE_DEVICES under --gpus) and Ray (`tawa tune --ray ADDRESS`: one child
// `python -m tawa.tune_workers` that runs the jobs on Ray actors, one per GPU or per CPU share).
// Both are child processes speaking this protocol, so the tuner (the only writer of the record)
// drives them the same way. A child that dies loses its jobs (they are run again elsewhere); it is
// started again, and dropped with a message after kMaxRestarts deaths.
#pragma once

#include <cstdint>
#include <deque>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tawa::tune {

// Who this process measures as: this host, and the GPU CUDA_VISIBLE_DEVICES selects when
// nvidia-smi can describe it (then the fingerprint is the GPU's model, driver and clocks, not the
// host's: GPUs of one kind on several machines rank together).
nlohmann::json workerIdentity(const std::string& name);

// Runs one job here (a measurement of a command, or a replayed landscape's figure) and returns the
// answer line. A malformed job gets {"id", "error": why}.
nlohmann::json runJob(const nlohmann::json& job, const nlohmann::json& identity);

// A measurement as a worker's answer carries it.
struct Measurement;
Measurement measurementFromJson(const nlohmann::json& j);

// tawa tune --serve-worker: the hello line, then one answer per job line until the input ends.
int serveWorker(std::istream& in, std::ostream& out, const std::string& name);

// The tuner's side: child processes speaking the protocol.
class WorkerPool {
 public:
  struct Child {
    std::string name;                          // for messages: "local 1", "ray"
    std::vector<std::string> argv;             // argv[0] is the program
    std::map<std::string, std::string> env;    // set in the child
    std::string role = "measure";              // measure, or prepare (compile workers: jobs with "role": "prepare")
  };
  struct Event {
    enum Kind { Reply, Lost, Message } kind = Message;
    uint64_t id = 0;
    nlohmann::json body;  // Reply: the answer; Lost / Message: {"why"} / {"text"}
  };
  static constexpr int kMaxRestarts = 2;

  // Starts the children and waits (up to `helloTimeout` seconds each) for their hello lines.
  // Throws std::runtime_error when none starts.
  WorkerPool(std::vector<Child> children, double helloTimeout = 120);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Jobs of a role that can run at once now.
  size_t slots(const std::string& role = "measure") const;
  size_t free(const std::string& role = "measure") const;
  // Starts a job (its "id" set by the caller) on a child of the job's "role" (default measure) with
  // a free slot: the one named by the job's "on" when that one is alive, else any. Throws when no
  // slot is free.
  void submit(const nlohmann::json& job);
  // The next event, waiting for it; nullopt when no job is under way and nothing is pending.
  std::optional<Event> next();
  // Every identity of a role that said hello (a local child's, or each of a Ray engine's actors).
  std::vector<nlohmann::json> identities(const std::string& role = "measure") const;
  // Stops a child (the one holding the worker `name`, or that child itself); its jobs are lost.
  void drop(const std::string& worker, const std::string& why);
  std::string describe() const;  // "2 worker process(es), 2 slot(s)"
  // The messages (Event::Message) not yet taken by next(), taken now.
  std::vector<std::string> messages();

 private:
  struct Proc {
    Child spec;
    int pid = -1, in = -1, out = -1;
    std::string buffer;
    std::string said;  // its last message before its hello (why it did not start)
    size_t slots = 0;
    std::set<uint64_t> jobs;
    std::vector<nlohmann::json> identities;
    int deaths = 0;
    int status = 0;  // its wait status, once reaped
    bool dropped = false;
  };
  // Ends a child: kills it when it still runs, waits for it (its status), closes its pipes.
  void reap(Proc& p);
  void start(Proc& p);
  bool readHello(Proc& p, double timeout);
  void died(Proc& p, const std::string& why);
  void handleLine(Proc& p, const std::string& line);
  void pump(int timeoutMs);

  std::vector<Proc> procs_;
  std::deque<Event> events_;
};

// A child's exit status in words: "exit status 3", "killed by signal 9".
std::string exitWords(int status);

}  // namespace tawa::tune
