// What every skeleton program shares: `--name value` arguments, the partitioner and arena choices,
// and the report: a checksum line, then `tawa-time: SECONDS` of the parallel region as the last line
// (what `tawa tune` measures). Inputs are generated from a fixed seed before the clock starts.
#pragma once

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace skel {

class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string k = argv[i];
      if (k.rfind("--", 0) != 0) usage("expected --name value, got '" + k + "'");
      values_[k.substr(2)] = argv[i + 1];
    }
    if (argc % 2 == 0) usage(std::string("missing value after ") + argv[argc - 1]);
  }
  long integer(const std::string& k, long dflt) {
    used_[k] = true;
    auto it = values_.find(k);
    if (it == values_.end()) return dflt;
    char* end = nullptr;
    long v = std::strtol(it->second.c_str(), &end, 10);
    if (*end || v <= 0) usage("--" + k + " needs a positive integer, got '" + it->second + "'");
    return v;
  }
  std::string text(const std::string& k, const std::string& dflt) {
    used_[k] = true;
    auto it = values_.find(k);
    return it == values_.end() ? dflt : it->second;
  }
  // Call after reading every parameter: an unknown one is a mistake in SPACE.json or suite.json.
  void done() {
    for (auto& [k, v] : values_)
      if (!used_.count(k)) usage("unknown parameter --" + k);
  }
  [[noreturn]] static void usage(const std::string& why) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    std::exit(2);
  }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> used_;
};

// Runs f(partitioner) with the partitioner named by `part`: auto, simple, static or affinity.
// oneTBB's default is auto. The affinity partitioner object lives across calls, as its docs advise.
template <class F>
void withPartitioner(const std::string& part, F&& f) {
  static tbb::affinity_partitioner affinity;
  if (part == "auto") f(tbb::auto_partitioner());
  else if (part == "simple") f(tbb::simple_partitioner());
  else if (part == "static") f(tbb::static_partitioner());
  else if (part == "affinity") f(affinity);
  else Args::usage("unknown partitioner '" + part + "' (auto, simple, static, affinity)");
}

// Times body() inside an arena of `threads` threads and prints the checksum and the figure.
template <class F>
void timed(int threads, F&& body) {
  tbb::task_arena arena(threads);
  double checksum = 0;
  auto t0 = std::chrono::steady_clock::now();
  arena.execute([&] { checksum = body(); });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("checksum: %.6g\n", checksum);
  std::printf("tawa-time: %.6f\n", s);
}

// A small fast generator, so input generation costs little next to the kernel.
struct Rng {
  unsigned long long s;
  explicit Rng(unsigned long long seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  unsigned long long next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

}  // namespace skel
