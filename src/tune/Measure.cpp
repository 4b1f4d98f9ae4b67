#include "tune/Measure.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tawa::tune {

namespace {

std::string lastLine(const std::string& out) {
  size_t end = out.size();
  while (end > 0 && (out[end - 1] == '\n' || out[end - 1] == '\r' || out[end - 1] == ' ')) --end;
  size_t start = out.rfind('\n', end == 0 ? 0 : end - 1);
  start = start == std::string::npos ? 0 : start + 1;
  return out.substr(start, end - start);
}

const char kTimeoutPrefix[] = "killed after the timeout of ";

}  // namespace

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string timeoutDetail(double timeoutSeconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", timeoutSeconds);
  return kTimeoutPrefix + std::string(buf) + " s";
}

std::optional<double> timeoutLimit(const Measurement& m) {
  if (m.status != "timeout" || m.detail.rfind(kTimeoutPrefix, 0) != 0) return std::nullopt;
  const char* num = m.detail.c_str() + sizeof kTimeoutPrefix - 1;
  char* end = nullptr;
  double v = std::strtod(num, &end);
  if (end == num || !std::isfinite(v)) return std::nullopt;
  return v;
}

RunResult runOnce(const std::string& command, double timeoutSeconds) {
  RunResult r;
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    r.detail = "cannot create a pipe";
    return r;
  }
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.detail = "cannot fork";
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills everything it started
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    close(out[1]);
    close(err[1]);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  close(out[1]);
  close(err[1]);
  std::string so, se;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  bool open[2] = {true, true};
  char buf[4096];
  while (open[0] || open[1]) {
    double left = timeoutSeconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) {
      r.timedOut = true;
      kill(-pid, SIGKILL);
      break;
    }
    for (int i = 0; i < 2; ++i) fds[i].fd = open[i] ? (i ? err[0] : out[0]) : -1;
    int n = poll(fds, 2, static_cast<int>(std::min(left * 1000.0, 1000.0)) + 1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t k = read(fds[i].fd, buf, sizeof buf);
      if (k <= 0) {
        open[i] = false;
        continue;
      }
      std::string& dst = i ? se : so;
      dst.append(buf, static_cast<size_t>(k));
      if (dst.size() > (1u << 16)) dst.erase(0, dst.size() - (1u << 15));  // keep the tail
    }
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto tail = [&] {  // the last 300 characters of stderr, from the start of a line ("..." when cut)
    std::string t = se;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    if (t.size() > 300) {
      size_t from = t.size() - 300, nl = t.find('\n', from);
      t = "..." + t.substr(nl != std::string::npos && nl + 1 < t.size() ? nl + 1 : from);
    }
    return t;
  };
  if (r.timedOut) {
    r.detail = timeoutDetail(timeoutSeconds);
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.detail = "killed by signal " + std::to_string(WTERMSIG(status)) + (se.empty() ? "" : ": " + tail());
    return r;
  }
  if (WEXITSTATUS(status) != 0) {
    r.detail = "exit status " + std::to_string(WEXITSTATUS(status)) + (se.empty() ? "" : ": " + tail());
    return r;
  }
  r.seconds = wall;
  std::string last = lastLine(so);
  const std::string tag = "tawa-time:";
  if (last.rfind(tag, 0) == 0) {
    char* end = nullptr;
    std::string num = last.substr(tag.size());
    double v = std::strtod(num.c_str(), &end);
    if (end == num.c_str() || !(v >= 0)) {
      r.detail = "cannot read the figure in '" + last + "'";
      return r;
    }
    r.seconds = v;
    r.printed = true;
  }
  // `tawa run --backend cuda` ends with "result: kernel=... median_ms=X ...": the kernel's time.
  if (last.rfind("result: ", 0) == 0 && last.find(" median_ms=") != std::string::npos) {
    std::string num = last.substr(last.find(" median_ms=") + 11);
    char* end = nullptr;
    double v = std::strtod(num.c_str(), &end);
    if (end == num.c_str() || !(v >= 0)) {
      r.detail = "cannot read the figure in '" + last + "'";
      return r;
    }
    r.seconds = v / 1000.0;
    r.printed = true;
  }
  r.ok = true;
  return r;
}

Measurement runPrepare(const std::string& command, double timeoutSeconds) {
  RunResult r = runOnce(command, timeoutSeconds);
  Measurement m;
  if (!r.ok) {
    m.status = r.timedOut ? "timeout" : "failed";
    m.detail = "the prepare command failed: " + r.detail;
    return m;
  }
  m.seconds = r.seconds;
  m.repetitions = {r.seconds};
  return m;
}

Measurement measure(const std::string& command, const MeasureOptions& o) {
  Measurement m;
  auto fail = [&](const RunResult& r) {
    m.status = r.timedOut ? "timeout" : "failed";
    m.detail = r.detail;
    return m;
  };
  // Deterministic: the first two runs (warm-up or timed) printed the same figure. Decided there and
  // only there, so that the noise check below never meets it.
  std::optional<double> first;
  int seen = 0;
  bool deterministic = false;
  auto note = [&](const RunResult& r) {
    if (++seen == 1 && r.printed) first = r.seconds;
    if (seen == 2) deterministic = r.printed && first && *first == r.seconds;
  };
  for (int i = 0; i < o.warmups && !deterministic; ++i) {
    RunResult r = runOnce(command, o.timeoutSeconds);
    if (!r.ok) return fail(r);
    ++m.warmups;
    note(r);
  }
  auto runs = [&](int n) -> bool {
    for (int i = 0; i < n && !(deterministic && !m.repetitions.empty()); ++i) {
      RunResult r = runOnce(command, o.timeoutSeconds);
      if (!r.ok) {
        fail(r);
        return false;
      }
      m.repetitions.push_back(r.seconds);
      note(r);
    }
    return true;
  };
  if (!runs(std::max(1, o.repetitions))) return m;
  if (deterministic) {
    m.seconds = median(m.repetitions);
    m.spread = 0;
    m.detail = "deterministic: the program printed the same figure twice in a row";
    return m;
  }
  for (;;) {
    m.seconds = median(m.repetitions);
    auto [lo, hi] = std::minmax_element(m.repetitions.begin(), m.repetitions.end());
    m.spread = m.seconds > 0 ? (*hi - *lo) / m.seconds : 0;
    if (m.spread <= o.noiseLimit || static_cast<int>(m.repetitions.size()) + 2 > o.maxRepetitions || m.repetitions.size() < 2) break;
    if (!runs(2)) return m;
  }
  return m;
}

}  // namespace tawa::tune
