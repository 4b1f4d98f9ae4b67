// Replay (simulation) of a recorded tuning landscape: `tawa tune --replay DATA.csv --space SPACE.json`
// searches a brute-force landscape measured elsewhere (Kernel Tuner's simulation mode) without
// running anything, so that search strategies can be compared without a GPU.
//
// DATA.csv: a header naming every parameter of the space and `time_ms` (the mean), optionally
// `std_ms` (its standard deviation), then one row per configuration that ran. An evaluation returns
// the row's time (with `noise`, a draw from a normal distribution of the row's mean and standard
// deviation, at least 0); a configuration with no row fails as a compile failure would. Rows whose
// values are not in the space, repeated configurations, and malformed numbers are errors at the row
// and column of the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tune/Record.h"
#include "tune/Space.h"

namespace tawa::tune {

struct ReplayStats {
  size_t rows = 0;
  double best = 0, median = 0;  // seconds, over the rows
};

// The measurements of a landscape file (tawa tune --import): with time_ms, one ok measurement per row
// (time_ms / 1000 seconds; std_ms noted in its detail); a file of failures (a status column, no
// time_ms: a landscape's failures.csv) gives one failed measurement per row, its detail the status.
// Errors as for loadReplay.
std::vector<std::pair<Config, Measurement>> readMeasurements(const std::string& csvPath, const Space& space);

// The landscape in `csvPath` over `space`, as an evaluation function of a configuration and which
// measurement of it this is (0: the first), which with `noise` seeds the draw (it keeps its own
// table: the space may move, as a TuneTarget in a vector does); `stats` (when given) says what was read.
std::function<Measurement(const Config&, int nth)> loadReplay(const std::string& csvPath, const Space& space, bool noise, uint64_t seed,
                                                     ReplayStats* stats = nullptr);

}  // namespace tawa::tune
