#include "tune/Workers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "tune/Measure.h"
#include "tune/Record.h"
#include "tune/Replay.h"
#include "tune/SpaceJson.h"

namespace tawa::tune {

namespace {

// The first line a command prints (nvidia-smi), or "" when it fails.
std::string firstLine(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(command.c_str(), "r"), pclose);
  if (!p) return "";
  char buf[1024];
  std::string line = fgets(buf, sizeof buf, p.get()) ? buf : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    std::string f = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!f.empty() && f.front() == ' ') f.erase(f.begin());
    out.push_back(f);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Writes `text` and a newline to fd whole (across partial writes); false when the reader is gone.
bool writeLine(int fd, const std::string& text) {
  const std::string line = text + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The next complete line of a child's output buffer, taken from it.
std::optional<std::string> takeLine(std::string& buffer) {
  const size_t nl = buffer.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buffer.substr(0, nl);
  buffer.erase(0, nl + 1);
  return line;
}

nlohmann::json toJson(const Measurement& m) {
  return {{"seconds", m.seconds}, {"spread", m.spread}, {"repetitions", m.repetitions}, {"warmups", m.warmups},
          {"status", m.status}, {"detail", m.detail}};
}

MeasureOptions measureOptions(const nlohmann::json& j) {
  MeasureOptions o;
  o.warmups = j.value("warmups", o.warmups);
  o.repetitions = j.value("reps", o.repetitions);
  o.maxRepetitions = j.value("max_reps", o.maxRepetitions);
  o.noiseLimit = j.value("noise", o.noiseLimit);
  o.timeoutSeconds = j.value("timeout", o.timeoutSeconds);
  return o;
}

// A replayed landscape, loaded once per worker process for each (file, space, noise, seed).
struct LoadedReplay {
  Space space;
  std::function<Measurement(const Config&, int)> figure;
};

const LoadedReplay& replayFor(const nlohmann::json& r) {
  static std::mutex m;
  static std::map<std::string, std::unique_ptr<LoadedReplay>> cache;
  const std::string key = r.dump();
  std::lock_guard lock(m);
  auto& slot = cache[key];
  if (!slot) {
    auto l = std::make_unique<LoadedReplay>();
    const std::string spacePath = r.at("space").get<std::string>();
    l->space = loadSpace(spacePath);
    l->figure = loadReplay(r.at("csv").get<std::string>(), l->space, r.value("noise", false), r.value("seed", uint64_t{1}));
    slot = std::move(l);
  }
  return *slot;
}

}  // namespace

Measurement measurementFromJson(const nlohmann::json& j) {
  Measurement m;
  m.seconds = j.value("seconds", 0.0);
  m.spread = j.value("spread", 0.0);
  m.repetitions = j.value("repetitions", std::vector<double>{});
  m.warmups = j.value("warmups", 0);
  m.status = j.value("status", std::string("failed"));
  m.detail = j.value("detail", std::string());
  return m;
}

nlohmann::json workerIdentity(const std::string& name) {
  const MachineIdentity host = hostIdentity();
  char hostname[256] = {0};
  gethostname(hostname, sizeof hostname - 1);
  nlohmann::json details = {{"host", hostname}, {"pid", static_cast<int64_t>(getpid())}};
  std::string fingerprint = host.fingerprint, description = host.description;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible && *visible) details["cuda_visible_devices"] = visible;
  // The GPU this worker measures on: the first CUDA_VISIBLE_DEVICES entry (an index or a UUID), or
  // GPU 0, as nvidia-smi describes it (nvidia-smi itself ignores CUDA_VISIBLE_DEVICES).
  std::string device = visible && *visible ? std::string(visible).substr(0, std::string(visible).find(',')) : "0";
  bool safe = !device.empty();
  for (char c : device) safe = safe && (std::isalnum(static_cast<unsigned char>(c)) || c == '-');
  if (safe) {
    auto f = splitCsv(firstLine("nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,uuid --format=csv,noheader,nounits -i " +
                                device + " 2>/dev/null"));
    if (f.size() == 5 && !f[0].empty()) {
      fingerprint = "gpu: " + f[0] + " | driver " + f[1] + " | sm " + f[2] + " MHz | memory " + f[3] + " MHz";
      description = f[0] + " (driver " + f[1] + ")";
      details["gpu"] = f[0];
      details["gpu_uuid"] = f[4];
    }
  }
  return {{"name", name}, {"fingerprint", fingerprint}, {"description", description}, {"details", details}};
}

nlohmann::json runJob(const nlohmann::json& job, const nlohmann::json& identity) {
  nlohmann::json out = {{"id", job.value("id", uint64_t{0})}, {"worker", identity}};
  Measurement m;
  try {
    const MeasureOptions o = measureOptions(job.value("measure", nlohmann::json::object()));
    std::optional<Measurement> prepared;
    if (job.contains("prepare")) prepared = runPrepare(job.at("prepare").get<std::string>(), o.timeoutSeconds);
    if (prepared && (!prepared->ok() || !job.contains("command"))) {
      m = *prepared;  // its failure is the measurement's; a prepare job alone is done
    } else if (job.contains("command")) {
      m = measure(job.at("command").get<std::string>(), o);
    } else if (job.contains("replay")) {
      const LoadedReplay& r = replayFor(job.at("replay"));
      m = r.figure(r.space.fromJson(job.at("config")), job.value("nth", 0));
    } else {
      throw std::invalid_argument("a job has \"command\" or \"replay\"");
    }
  } catch (const std::exception& e) {
    // A job this worker cannot run (a file it cannot read, a malformed job) fails like a run would.
    m = Measurement{};
    m.status = "failed";
    m.detail = std::string("the worker could not run the job: ") + e.what();
  }
  out["measurement"] = toJson(m);
  return out;
}

int serveWorker(std::istream& in, std::ostream& out, const std::string& name) {
  const nlohmann::json me = workerIdentity(name);
  out << nlohmann::json{{"hello", me}, {"slots", 1}}.dump() << "\n" << std::flush;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json job;
    try {
      job = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      out << nlohmann::json{{"message", std::string("not a job (invalid JSON): ") + e.what()}}.dump() << "\n" << std::flush;
      continue;
    }
    out << runJob(job, me).dump() << "\n" << std::flush;
  }
  return 0;
}

std::string exitWords(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

WorkerPool::WorkerPool(std::vector<Child> children, double helloTimeout) {
  signal(SIGPIPE, SIG_IGN);  // a child that dies mid-write is seen at its end of file, not as a signal here
  procs_.reserve(children.size());
  std::string why;
  for (auto& c : children) {
    procs_.push_back(Proc{});
    Proc& p = procs_.back();
    p.spec = std::move(c);
    start(p);
    if (!readHello(p, helloTimeout)) {
      p.dropped = true;
      std::string w = p.spec.name + ": " + (!p.said.empty()       ? p.said
                                            : p.buffer.empty() ? "no hello line"
                                                               : "said \"" + p.buffer.substr(0, 200) + "\"");
      why += (why.empty() ? "" : "; ") + w;
      events_.push_back({Event::Message, 0, {{"text", "worker " + w + "; not used"}}});
      reap(p);
    }
  }
  if (slots() == 0) throw std::runtime_error("no worker started (" + why + ")");
}

WorkerPool::~WorkerPool() {
  for (auto& p : procs_)
    if (p.in >= 0) close(p.in), p.in = -1;  // a worker ends at the end of its input
  for (auto& p : procs_) {
    for (int i = 0; i < 100 && p.pid > 0 && waitpid(p.pid, &p.status, WNOHANG) == 0; ++i) usleep(20000);
    reap(p);
  }
}

void WorkerPool::reap(Proc& p) {
  if (p.pid > 0) {
    int status = 0;
    pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == 0) {  // still running
      kill(p.pid, SIGKILL);
      r = waitpid(p.pid, &status, 0);
    }
    if (r == p.pid) p.status = status;
  }
  if (p.in >= 0) close(p.in);
  if (p.out >= 0) close(p.out);
  p.in = p.out = p.pid = -1;
}

void WorkerPool::start(Proc& p) {
  int toChild[2], fromChild[2];
  if (pipe(toChild) != 0 || pipe(fromChild) != 0) throw std::runtime_error("cannot create a pipe for a worker");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start a worker (fork failed)");
  if (pid == 0) {
    dup2(toChild[0], 0);
    dup2(fromChild[1], 1);
    close(toChild[0]), close(toChild[1]), close(fromChild[0]), close(fromChild[1]);
    for (auto& [k, v] : p.spec.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : p.spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "tawa: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  close(toChild[0]);
  close(fromChild[1]);
  fcntl(toChild[1], F_SETFD, FD_CLOEXEC);
  fcntl(fromChild[0], F_SETFD, FD_CLOEXEC);
  p.pid = pid;
  p.in = toChild[1];
  p.out = fromChild[0];
  p.buffer.clear();
  p.slots = 0;
}

bool WorkerPool::readHello(Proc& p, double timeout) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (std::chrono::steady_clock::now() < until) {
    while (auto next = takeLine(p.buffer)) {
      const std::string& line = *next;
      try {
        auto j = nlohmann::json::parse(line);
        if (j.contains("hello")) {
          auto& h = j["hello"];
          p.identities = h.is_array() ? h.get<std::vector<nlohmann::json>>() : std::vector<nlohmann::json>{h};
          p.slots = j.value("slots", size_t{1});
          return p.slots > 0;
        }
        if (j.contains("message")) {
          p.said = j["message"].get<std::string>();
          events_.push_back({Event::Message, 0, {{"text", p.spec.name + ": " + p.said}}});
        }
      } catch (const nlohmann::json::exception&) {
        p.buffer = line;  // what it said instead, for the message
        return false;
      }
    }
    pollfd f{p.out, POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count());
    if (poll(&f, 1, std::max(1, left)) <= 0) continue;
    char buf[4096];
    ssize_t n = read(p.out, buf, sizeof buf);
    if (n <= 0) return false;
    p.buffer.append(buf, static_cast<size_t>(n));
  }
  return false;
}

size_t WorkerPool::slots(const std::string& role) const {
  size_t n = 0;
  for (auto& p : procs_)
    if (!p.dropped && p.pid > 0 && p.spec.role == role) n += p.slots;
  return n;
}

size_t WorkerPool::free(const std::string& role) const {
  size_t n = 0;
  for (auto& p : procs_)
    if (!p.dropped && p.pid > 0 && p.spec.role == role && p.jobs.size() < p.slots) n += p.slots - p.jobs.size();
  return n;
}

std::vector<nlohmann::json> WorkerPool::identities(const std::string& role) const {
  std::vector<nlohmann::json> out;
  for (auto& p : procs_)
    if (!p.dropped && p.pid > 0 && p.spec.role == role) out.insert(out.end(), p.identities.begin(), p.identities.end());
  return out;
}

std::string WorkerPool::describe() const {
  size_t alive = 0;
  for (auto& p : procs_) alive += !p.dropped && p.pid > 0 && p.spec.role == "measure";
  std::string d = std::to_string(alive) + " worker process(es), " + std::to_string(slots()) + " slot(s)";
  if (slots("prepare")) d += ", and " + std::to_string(slots("prepare")) + " compile slot(s)";
  return d;
}

void WorkerPool::submit(const nlohmann::json& job) {
  const std::string on = job.value("on", std::string()), role = job.value("role", std::string("measure"));
  Proc* pick = nullptr;
  for (auto& p : procs_) {
    if (p.dropped || p.pid <= 0 || p.jobs.size() >= p.slots || p.spec.role != role) continue;
    bool holds = false;
    for (auto& id : p.identities) holds = holds || id.value("name", std::string()) == on;
    if (!on.empty() && holds) {
      pick = &p;
      break;
    }
    if (!pick || p.jobs.size() < pick->jobs.size()) pick = &p;  // the least busy
  }
  if (!pick) throw std::logic_error("submit: no worker has a free slot");
  const uint64_t id = job.at("id").get<uint64_t>();
  pick->jobs.insert(id);
  if (!writeLine(pick->in, job.dump())) died(*pick, "its input closed");
}

void WorkerPool::died(Proc& p, const std::string& how) {
  const bool alive = p.pid > 0;
  reap(p);
  const std::string why = !how.empty() || !alive ? how : exitWords(p.status);
  for (uint64_t id : p.jobs) events_.push_back({Event::Lost, id, {{"why", p.spec.name + " " + why}}});
  p.jobs.clear();
  if (p.dropped) return;
  if (++p.deaths > kMaxRestarts) {
    p.dropped = true;
    events_.push_back({Event::Message, 0,
                       {{"text", "worker " + p.spec.name + " ended " + std::to_string(p.deaths) + " times (last: " + why + "); dropped"}}});
    return;
  }
  events_.push_back({Event::Message, 0, {{"text", "worker " + p.spec.name + " ended (" + why + "); started again"}}});
  start(p);
  if (!readHello(p, 120)) {
    p.dropped = true;
    events_.push_back({Event::Message, 0, {{"text", "worker " + p.spec.name + " did not start again; dropped"}}});
    reap(p);
  }
}

void WorkerPool::drop(const std::string& worker, const std::string& why) {
  for (auto& p : procs_) {
    if (p.dropped || p.pid <= 0) continue;
    auto it = std::find_if(p.identities.begin(), p.identities.end(), [&](auto& id) { return id.value("name", std::string()) == worker; });
    if (p.spec.name != worker && it == p.identities.end()) continue;
    events_.push_back({Event::Message, 0, {{"text", "worker " + worker + " dropped: " + why}}});
    if (p.spec.name != worker && p.identities.size() > 1) {
      // One of several workers behind this child (a Ray bridge's actors): the child gives it up.
      p.identities.erase(it);
      p.slots = p.slots > 0 ? p.slots - 1 : 0;
      if (!writeLine(p.in, nlohmann::json{{"drop", worker}}.dump())) died(p, "its input closed");
      return;
    }
    p.dropped = true;
    died(p, "dropped");
    return;
  }
}

void WorkerPool::handleLine(Proc& p, const std::string& line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    events_.push_back({Event::Message, 0, {{"text", p.spec.name + " printed: " + line.substr(0, 300)}}});
    return;
  }
  if (j.contains("id") && (j.contains("measurement") || j.contains("lost"))) {
    const uint64_t id = j["id"].get<uint64_t>();
    if (!p.jobs.erase(id)) return;  // not (or no longer) this worker's: never told twice
    if (j.contains("lost")) events_.push_back({Event::Lost, id, {{"why", j["lost"]}}});
    else events_.push_back({Event::Reply, id, j});
  } else if (j.contains("slots")) {
    p.slots = j["slots"].get<size_t>();
    if (j.contains("hello")) p.identities.push_back(j["hello"]);
  } else if (j.contains("hello")) {
    p.identities.push_back(j["hello"]);
  } else if (j.contains("message")) {
    events_.push_back({Event::Message, 0, {{"text", p.spec.name + ": " + j["message"].get<std::string>()}}});
  }
}

void WorkerPool::pump(int timeoutMs) {
  std::vector<pollfd> fds;
  std::vector<Proc*> who;
  for (auto& p : procs_)
    if (p.pid > 0 && p.out >= 0) fds.push_back({p.out, POLLIN, 0}), who.push_back(&p);
  if (fds.empty()) return;
  if (poll(fds.data(), fds.size(), timeoutMs) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    Proc& p = *who[i];
    char buf[65536];
    ssize_t n = read(p.out, buf, sizeof buf);
    if (n <= 0) {
      died(p, "");
      continue;
    }
    p.buffer.append(buf, static_cast<size_t>(n));
    while (auto line = takeLine(p.buffer))
      if (!line->empty()) handleLine(p, *line);
  }
}

std::vector<std::string> WorkerPool::messages() {
  std::vector<std::string> out;
  for (auto it = events_.begin(); it != events_.end();) {
    if (it->kind != Event::Message) {
      ++it;
      continue;
    }
    out.push_back(it->body.value("text", it->body.dump()));
    it = events_.erase(it);
  }
  return out;
}

std::optional<WorkerPool::Event> WorkerPool::next() {
  for (;;) {
    if (!events_.empty()) {
      Event e = events_.front();
      events_.pop_front();
      return e;
    }
    bool busy = false;
    for (auto& p : procs_) busy = busy || !p.jobs.empty();
    if (!busy) return std::nullopt;
    pump(1000);
  }
}

}  // namespace tawa::tune
