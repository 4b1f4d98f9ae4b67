#include "profile/Events.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace tawa::profile {

const char* scopeName(Scope s) {
  switch (s) {
    case Scope::WaitEmpty: return "wait empty";
    case Scope::TmaIssue: return "TMA issue";
    case Scope::WaitFull: return "wait full";
    case Scope::MmaIssue: return "MMA issue";
    case Scope::MmaWait: return "MMA wait";
    case Scope::Softmax: return "softmax";
    case Scope::Epilogue: return "epilogue";
    case Scope::TmaStore: return "TMA store";
    case Scope::Release: return "release";
    case Scope::Compute: return "compute";
    case Scope::Count: break;
  }
  return "?";
}

void writeChromeTrace(std::ostream& os, const std::vector<BlockTrace>& blocks, const TraceMeta& meta) {
  using nlohmann::json;
  json events = json::array();
  const double us = meta.cyclesPerUs;
  for (const auto& b : blocks) {
    const int64_t pid = b.block;
    std::string pname = "block (" + std::to_string(b.pid[0]) + ", " + std::to_string(b.pid[1]) + ", " +
                        std::to_string(b.pid[2]) + ") on SM " + std::to_string(b.sm);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", pname}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
    if (b.lost > 0)
      events.push_back({{"ph", "M"}, {"name", "process_labels"}, {"pid", pid}, {"tid", 0},
                        {"args", {{"labels", std::to_string(b.lost) + " events lost (buffer full)"}}}});
    for (size_t g = 0; g < b.roles.size(); ++g) {
      std::string tname = b.roles[g] + " (warp group " + std::to_string(g) + ")";
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", g}, {"args", {{"name", tname}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", g}, {"args", {{"sort_index", g}}}});
    }
    for (const auto& e : b.events) {
      json args = {{"iteration", e.iteration}, {"slot", e.slot}, {"modelled", meta.modelled},
                   {"start_cycles", e.start}, {"end_cycles", e.end}};
      if (!e.file.empty()) args["source"] = e.file + ":" + std::to_string(e.line);
      std::string role = static_cast<size_t>(e.wg) < b.roles.size() ? b.roles[static_cast<size_t>(e.wg)] : "?";
      events.push_back({{"ph", "X"}, {"name", scopeName(e.scope)}, {"cat", role}, {"pid", pid}, {"tid", e.wg},
                        {"ts", (b.offset + e.start) / us}, {"dur", (e.end - e.start) / us}, {"args", args}});
    }
  }
  int64_t lost = 0;
  for (const auto& b : blocks) lost += b.lost;
  json doc = {{"traceEvents", events},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"kernel", meta.kernel}, {"device", meta.device}, {"timing", meta.note}, {"lost_events", lost}}}};
  os << doc.dump() << "\n";
}

}  // namespace tawa::profile
