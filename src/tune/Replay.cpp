#include "tune/Replay.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
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

std::function<Measurement(const Config&)> loadReplay(const std::string& csvPath, const Space& space, bool noise, uint64_t seed,
                                                     ReplayStats* stats) {
  std::ifstream f(csvPath);
  if (!f) throw UserError(at(csvPath, 0, 0), "cannot read the recorded landscape");
  std::string line;
  if (!std::getline(f, line)) throw UserError(at(csvPath, 1, 1), "empty file: expected a header naming the parameters and time_ms");
  auto header = cells(line);
  std::map<std::string, size_t> column;
  for (size_t k = 0; k < header.size(); ++k)
    if (!column.emplace(header[k].first, k).second)
      throw UserError(at(csvPath, 1, header[k].second), "column '" + header[k].first + "' is named twice");
  if (!column.count("time_ms")) throw UserError(at(csvPath, 1, 1), "no time_ms column", "the header names the parameters, time_ms and optionally std_ms");
  for (const auto& p : space.params)
    if (!column.count(p.name)) throw UserError(at(csvPath, 1, 1), "no column for parameter '" + p.name + "' of the space");
  const bool hasStd = column.count("std_ms") != 0;
  struct Row {
    double mean, sd;
  };
  auto rows = std::make_shared<std::map<std::string, Row>>();
  std::vector<double> times;
  for (int n = 2; std::getline(f, line); ++n) {
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    auto c = cells(line);
    if (c.size() != header.size())
      throw UserError(at(csvPath, n, 1), "the row has " + std::to_string(c.size()) + " cells, the header " + std::to_string(header.size()));
    nlohmann::json j = nlohmann::json::object();
    for (const auto& p : space.params) j[p.name] = value(c[column.at(p.name)].first);
    Config cfg;
    try {
      cfg = space.fromJson(j);
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
    Row r{number("time_ms") / 1000, hasStd ? number("std_ms") / 1000 : 0.0};
    if (!rows->emplace(space.key(cfg), r).second) throw UserError(at(csvPath, n, 1), "this configuration has an earlier row");
    times.push_back(r.mean);
  }
  if (rows->empty()) throw UserError(at(csvPath, 2, 1), "no configurations: the landscape has a header only");
  if (stats) {
    stats->rows = times.size();
    stats->best = *std::min_element(times.begin(), times.end());
    stats->median = median(times);
  }
  auto rng = std::make_shared<std::mt19937_64>(seed);
  const Space* sp = &space;
  return [rows, rng, noise, sp, csvPath](const Config& c) {
    Measurement m;
    auto it = rows->find(sp->key(c));
    if (it == rows->end()) {
      m.status = "failed";
      m.detail = "not in the recorded landscape: " + csvPath + " has no row for it (it failed to compile or run there)";
      return m;
    }
    double s = it->second.mean;
    if (noise && it->second.sd > 0) s = std::max(0.0, std::normal_distribution<double>(it->second.mean, it->second.sd)(*rng));
    m.seconds = s;
    m.repetitions = {s};
    return m;
  };
}

}  // namespace tawa::tune
