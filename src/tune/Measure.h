// Robust measurement of a command line: warm-up runs, repetitions, the median, and a noise check
// that adds repetitions while the spread is high.
//
// The figure of one run is the command's wall time (fork to exit, through /bin/sh -c), or, when the
// last non-empty line of its standard output is `tawa-time: SECONDS`, that figure (or, for a line
// `result: ... median_ms=MS ...` as `tawa run --backend cuda` ends, MS / 1000). A run that exits
// non-zero, is killed, or outlives the timeout makes the measurement "failed" / "timeout".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tune/Record.h"

namespace tawa::tune {

struct MeasureOptions {
  int warmups = 1;
  int repetitions = 3;
  int maxRepetitions = 9;   // the noise check stops here
  double noiseLimit = 0.10; // repeat (two runs at a time) while (max - min) / median is above this
  double timeoutSeconds = 60;
};

struct RunResult {
  bool ok = false;
  bool timedOut = false;
  double seconds = 0;
  bool printed = false;  // the figure is the program's own (tawa-time: or a result line), not the wall time
  std::string detail;    // why it failed: exit status and the end of stderr
};

RunResult runOnce(const std::string& command, double timeoutSeconds);
// The median of a non-empty list (the mean of the middle two for an even count).
double median(std::vector<double> v);
// A program that prints its own figure and prints the same one twice in a row (its warm-up and its
// first timed run, or its first two timed runs) is deterministic (a simulator, a replay, a cost
// model): measuring stops there, so it costs two runs instead of warm-ups + repetitions. The
// measurement's detail says so.
Measurement measure(const std::string& command, const MeasureOptions& opts);

// Runs a configuration's prepare command once (tawa tune --prepare, a kernel's compile): failed
// ("the prepare command failed: ...", or a timeout) when the command failed, else ok with its time.
Measurement runPrepare(const std::string& command, double timeoutSeconds);

// A timed-out measurement's detail names its limit ("killed after the timeout of 2.5 s"), so that a
// later tuning with a longer --timeout can tell that the record's verdict does not bind it.
std::string timeoutDetail(double timeoutSeconds);
// The limit a "timeout" measurement ran under; nothing for other statuses (or an unreadable detail).
std::optional<double> timeoutLimit(const Measurement& m);

}  // namespace tawa::tune
