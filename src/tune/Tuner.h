// Tuning one program against the record: every configuration a search asks for is looked up in the
// record first and measured (then recorded, one transaction each) only when absent, so running the
// same tuning again measures nothing new. Neighbours for MaSiF are the tuned programs of the record.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tune/Features.h"
#include "tune/Measure.h"
#include "tune/Record.h"
#include "tune/Search.h"
#include "tune/Space.h"

namespace tawa::tune {

struct TuneTarget {
  std::string name;       // the program's name in the record
  std::string kind;       // skeleton kind, or "program"
  std::string command;    // a template with {param} placeholders
  // A template run once before a configuration's measurement (a build step; tawa tune --prepare, or
  // a kernel's compile): its failure is the measurement's. With compile workers it runs on one of
  // them while the measuring workers measure other configurations.
  std::string prepare;
  // The measurement needs the prepare step (--prepare); false when it only saves the measuring
  // worker time (a kernel's run compiles it anyway): then it runs on compile workers only.
  bool prepareRequired = true;
  std::string spaceText;  // the SPACE.json text (recorded with the program)
  Space space;
  Features features;      // empty: the program has no features (MaSiF then has no neighbours)
  // Set: an evaluation is this function's answer instead of a run of the command (tawa tune --replay).
  std::function<Measurement(const Config&, int nth)> replay;
  // Where the replayed landscape comes from, for workers that load it themselves (tawa tune --workers).
  struct ReplaySource {
    std::string csv, space;  // paths the workers can read
    bool noise = false;
    uint64_t seed = 1;
  };
  std::optional<ReplaySource> replaySource;
};

class WorkerPool;

struct TuneOptions {
  std::string method = "masif";  // masif | copy | random | greedy | exhaustive
  int budget = 45;
  uint64_t seed = 1;
  size_t neighbours = 3;          // k: nearest other programs (the same program on other devices always counts)
  size_t bestPerNeighbour = 4;    // each neighbour's best configurations that guide the search
  int64_t minMeasured = 20;       // a program counts as tuned with this many measured configurations
  std::optional<std::set<std::string>> pool;  // names allowed as neighbours (leave-one-out)
  // Entries "NAME", "NAME@DEVICE" or "@DEVICE": neighbours only from these (when any), never from those.
  std::vector<std::string> neighboursFrom, exclude;
  MeasureOptions measure;
  // Measure every configuration this search evaluates itself: the record's earlier measurements of the
  // target answer nothing (its other programs still guide MaSiF). For an evaluation whose seeds must be
  // independent searches; without it a second seed of a deterministic search replays the first.
  bool fresh = false;
  bool dryRun = false;
  std::ostream* log = nullptr;    // progress lines
  // Set: measurements run on these workers, as many at once as they have slots (the search is then
  // ask/tell, measuring ahead of itself). With more than one slot the `finalists` fastest
  // configurations are measured again at the end, one at a time on one worker, and the best is the
  // fastest of those figures; the search's budget leaves room for them.
  WorkerPool* workers = nullptr;
  int finalists = 3;
};

struct TuneResult {
  std::optional<Evaluation> best;
  int evaluations = 0;
  int measured = 0;  // runs this call made (the rest came from the record)
  std::vector<std::string> neighbours;
  MasifPlan plan;
  std::vector<Evaluation> finalists;  // with workers: the finalists' figures measured on one worker, fastest first
};

int64_t registerTarget(Record& rec, const TuneTarget& t);
// When every configuration a search tried failed: one of them and why it failed, from the record
// ("{...}: exit status 1: <end of its stderr>", on one line), or "" when the record says nothing.
std::string failureExample(Record& rec, const TuneTarget& t, const TuneResult& r);
TuneResult tune(Record& rec, const TuneTarget& t, const TuneOptions& o);
// Measurement `nth` (0: the first) of one configuration: the record's (among those with an id above
// `after`), when it holds that many, else a new one, added to the record.
Evaluation evaluateOne(Record& rec, const TuneTarget& t, const Config& c, const MeasureOptions& m, const std::string& origin,
                       int nth = 0, int64_t after = 0);

}  // namespace tawa::tune
