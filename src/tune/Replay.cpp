#include "tune/Replay.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "ir/Diagnostic.h"
#include "tune/Measure.h"

namespace tawa::tune {

namespace {

Location at(const std::string& path, int line, int col) { return Location::at(std::make_shared<const std::string>(path), line, col); }

// One CSV line split at commas (the landscapes hold numbers and plain names: no quoting), with the
// 1-based column where each cell starts.
std::vector<std::pair<std::string, int>> cells(const std::string& line) {
  std::vector<std::pair<std::string, int>> out;
  size_t b = 0;
  for (;;) {
    size_t e = line.find(',', b);
    std::string c = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    while (!c.empty() && (c.back() == '\r' || c.back() == ' ')) c.pop_back();
    size_t lead = c.find_first_not_of(' ');
    out.emplace_back(lead == std::string::npos ? "" : c.substr(lead), static_cast<int>(b) + 1);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

// A cell as JSON: an integer, a number, or a name.
nlohmann::json value(const std::string& s) {
  char* end = nullptr;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == 0) return i;
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == 0) return d;
  return s;
}

}  // namespace

namespace {

struct Row {
  Config config;
  double mean = 0, sd = 0;  // seconds
  std::string status;       // a failures file: the status cell ("RuntimeFailedConfig"); else empty
};

// The rows of a landscape file over `space`. With a time_ms column: one row per configuration that
// ran (time_ms, optionally std_ms). Without one, when `failures` allows it: a status column, one row
// per configuration that failed.
std::vector<Row> readRows(const std::string& csvPath, const Space& space, bool failures) {
  std::ifstream f(csvPath);
  if (!f) throw UserError(at(csvPath, 0, 0), "cannot read the recorded landscape");
  std::string line;
  if (!std::getline(f, line)) throw UserError(at(csvPath, 1, 1), "empty file: expected a header naming the parameters and time_ms");
  auto header = cells(line);
  std::map<std::string, size_t> column;
  for (size_t k = 0; k < header.size(); ++k)
    if (!column.emplace(header[k].first, k).second)
      throw UserError(at(csvPath, 1, header[k].second), "column '" + header[k].first + "' is named twice");
  const bool timed = column.count("time_ms") != 0;
  if (!timed && !(failures && column.count("status")))
    throw UserError(at(csvPath, 1, 1), failures ? "no time_ms column (and no status column of failures)" : "no time_ms column",
                    "the header names the parameters, time_ms and optionally std_ms" +
                        std::string(failures ? "; a file of failures names the parameters and status" : ""));
  for (const auto& p : space.params)
    if (!column.count(p.name)) throw UserError(at(csvPath, 1, 1), "no column for parameter '" + p.name + "' of the space");
  const bool hasStd = column.count("std_ms") != 0;
  std::vector<Row> rows;
  std::set<Config> seen;
  for (int n = 2; std::getline(f, line); ++n) {
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    auto c = cells(line);
    if (c.size() != header.size())
      throw UserError(at(csvPath, n, 1), "the row has " + std::to_string(c.size()) + " cells, the header " + std::to_string(header.size()));
    nlohmann::json j = nlohmann::json::object();
    for (const auto& p : space.params) j[p.name] = value(c[column.at(p.name)].first);
    Row r;
    try {
      r.config = space.fromJson(j);
    } catch (const std::invalid_argument& e) {
      throw UserError(at(csvPath, n, 1), std::string("the configuration is not in the space: ") + e.what());
    }
    auto number = [&](const std::string& name) {
      const auto& [s, col] = c[column.at(name)];
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != 0 || !std::isfinite(v) || v < 0)
        throw UserError(at(csvPath, n, col), name + " '" + s + "' is not a non-negative number");
      return v;
    };
    if (timed) {
      r.mean = number("time_ms") / 1000;
      r.sd = hasStd ? number("std_ms") / 1000 : 0.0;
    } else {
      r.status = c[column.at("status")].first;
      if (r.status.empty()) throw UserError(at(csvPath, n, c[column.at("status")].second), "empty status");
    }
    if (!seen.insert(r.config).second) throw UserError(at(csvPath, n, 1), "this configuration has an earlier row");
    rows.push_back(std::move(r));
  }
  if (rows.empty() && timed) throw UserError(at(csvPath, 2, 1), "no configurations: the landscape has a header only");
  return rows;  // a file of failures may have none
}

}  // namespace

std::vector<std::pair<Config, Measurement>> readMeasurements(const std::string& csvPath, const Space& space) {
  std::vector<std::pair<Config, Measurement>> out;
  for (auto& r : readRows(csvPath, space, true)) {
    Measurement m;
    if (r.status.empty()) {
      m.seconds = r.mean;
      m.repetitions = {r.mean};
      m.detail = r.sd > 0 ? "std_ms " + std::to_string(r.sd * 1000) : "";
    } else {
      m.status = "failed";
      m.detail = r.status + " (" + csvPath + ")";
    }
    out.emplace_back(r.config, std::move(m));
  }
  return out;
}

std::function<Measurement(const Config&, int)> loadReplay(const std::string& csvPath, const Space& space, bool noise, uint64_t seed,
                                                     ReplayStats* stats) {
  struct Figure {
    double mean, sd;
  };
  auto rows = std::make_shared<std::map<Config, Figure>>();
  std::vector<double> times;
  for (auto& r : readRows(csvPath, space, false)) {
    rows->emplace(r.config, Figure{r.mean, r.sd});
    times.push_back(r.mean);
  }

  if (stats) {
    stats->rows = times.size();
    stats->best = *std::min_element(times.begin(), times.end());
    stats->median = median(times);
  }
  return [rows, seed, noise, csvPath](const Config& c, int nth) {
    Measurement m;
    auto it = rows->find(c);
    if (it == rows->end()) {
      m.status = "failed";
      m.detail = "not in the recorded landscape: " + csvPath + " has no row for it (it failed to compile or run there)";
      return m;
    }
    double s = it->second.mean;
    if (noise && it->second.sd > 0) {
      // The draw depends on the seed, the configuration and which measurement of it this is, not
      // on the order of the calls: any worker, in any order, gives the same figure.
      uint64_t h = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(nth) + 1;
      for (int v : c) h = (h ^ static_cast<uint64_t>(v + 1)) * 0x100000001B3ull;
      std::mt19937_64 rng(h);
      s = std::max(0.0, std::normal_distribution<double>(it->second.mean, it->second.sd)(rng));
    }
    m.seconds = s;
    m.repetitions = {s};
    return m;
  };
}

}  // namespace tawa::tune
