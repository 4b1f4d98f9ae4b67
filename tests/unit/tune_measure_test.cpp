// Measurement of commands (the `tawa-time:` figure, wall time, failures, timeouts, the noise check)
// and features of LLVM IR.
#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "tune/Features.h"
#include "tune/Measure.h"
#include "TempDir.h"

using namespace tawa::tune;

namespace {

// The start of a shell command that knows which run of it this is: $n is 0 the first time, then 1,
// 2, ... (counted in the file `counter`, which the caller removes first).
std::string numberedRun(const std::string& counter) {
  return "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " + counter + "; ";
}

}  // namespace

TEST(TuneMeasure, ReadsTheTawaTimeLine) {
  RunResult r = runOnce("echo warming; echo 'tawa-time: 0.25'", 10);
  ASSERT_TRUE(r.ok) << r.detail;
  EXPECT_DOUBLE_EQ(r.seconds, 0.25);
  RunResult w = runOnce("sleep 0.05", 10);
  ASSERT_TRUE(w.ok);
  EXPECT_GE(w.seconds, 0.04);
  EXPECT_LT(w.seconds, 2.0);
}

// The last line of `tawa run --backend cuda`, what kernel tuning measures.
TEST(TuneMeasure, ReadsTheKernelMedianOfTawaRun) {
  RunResult r = runOnce("echo 'time: median 2.5000 ms'; echo 'result: kernel=k backend=cuda check=none median_ms=2.500000 tflops=n/a gbps=1.0'", 10);
  ASSERT_TRUE(r.ok) << r.detail;
  EXPECT_DOUBLE_EQ(r.seconds, 0.0025);
  RunResult g = runOnce("echo 'result: kernel=k median_ms=soon'", 10);
  EXPECT_FALSE(g.ok);
}

TEST(TuneMeasure, FailuresAndTimeouts) {
  RunResult f = runOnce("echo oops >&2; exit 3", 10);
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.detail, "exit status 3: oops");
  RunResult t = runOnce("sleep 5", 0.2);
  EXPECT_FALSE(t.ok);
  EXPECT_TRUE(t.timedOut);
  RunResult g = runOnce("echo 'tawa-time: soon'", 10);
  EXPECT_FALSE(g.ok);
  Measurement m = measure("exit 1", MeasureOptions{});
  EXPECT_EQ(m.status, "failed");
}

// A long stderr is kept by its end, cut at the start of a line: 40 numbered lines of 12 characters.
TEST(TuneMeasure, LongStderrKeepsWholeLastLines) {
  RunResult f = runOnce("for i in $(seq 10 49); do echo \"line $i said\" >&2; done; exit 2", 10);
  EXPECT_FALSE(f.ok);
  ASSERT_EQ(f.detail.rfind("exit status 2: ...line ", 0), 0u) << f.detail;
  EXPECT_EQ(f.detail.substr(f.detail.size() - 12), "line 49 said") << f.detail;
  EXPECT_LE(f.detail.size(), std::string("exit status 2: ...").size() + 300) << f.detail;
  EXPECT_NE(f.detail.find("line 48 said\nline 49 said"), std::string::npos) << f.detail;
}

TEST(TuneMeasure, NoiseCheckAddsRepetitions) {
  // A figure that alternates 1, 2, 1, 2 ... (a counter file): spread 100%, so the check repeats up
  // to the maximum; a steady figure stops at the requested repetitions.
  std::string f = (tawa::test::tempDir() / "tune-noise").string();
  std::remove(f.c_str());
  std::string cmd = numberedRun(f) + "echo tawa-time: $((n % 2 + 1))";
  MeasureOptions o;
  o.warmups = 1;
  o.repetitions = 3;
  o.maxRepetitions = 7;
  Measurement noisy = measure(cmd, o);
  ASSERT_TRUE(noisy.ok());
  EXPECT_EQ(noisy.repetitions.size(), 7u);
  EXPECT_EQ(noisy.warmups, 1);
  EXPECT_GE(noisy.spread, 0.5);
  std::remove(f.c_str());
  // Steady (0.50, 0.51 in turn: a 2% spread), so no runs beyond the three requested.
  Measurement steady = measure(numberedRun(f) + "echo tawa-time: 0.5$((n % 2))", o);
  EXPECT_EQ(steady.repetitions.size(), 3u);
  EXPECT_DOUBLE_EQ(steady.seconds, 0.51);
  std::remove(f.c_str());
}

// Figures that repeat only later (1, 3, then 2, 2, 2, ...) are noise, not determinism: the noise check
// goes on to its maximum (an earlier version took the repeat for determinism inside the noise check,
// added no runs, and looped for ever).
TEST(TuneMeasure, ALaterRepeatIsNotDeterminism) {
  std::string f = (tawa::test::tempDir() / "tune-later-repeat").string();
  std::remove(f.c_str());
  std::string cmd = numberedRun(f) + "case $n in 0) v=1;; 1) v=3;; *) v=2;; esac; echo tawa-time: $v";
  MeasureOptions o;
  o.warmups = 0;
  o.repetitions = 3;
  o.maxRepetitions = 7;
  Measurement m = measure(cmd, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.repetitions, (std::vector<double>{1, 3, 2, 2, 2, 2, 2}));
  EXPECT_EQ(m.detail.find("deterministic"), std::string::npos);
  std::remove(f.c_str());
}

// A program that prints the same figure twice in a row is deterministic: measured in two runs (the
// warm-up and one timed run, or two timed runs without a warm-up), and said so. A figure that is
// the wall time never counts as deterministic.
TEST(TuneMeasure, DeterministicProgramsStopAfterTwoRuns) {
  std::string f = (tawa::test::tempDir() / "tune-deterministic").string();
  std::remove(f.c_str());
  const std::string cmd = "echo x >> " + f + "; echo tawa-time: 0.25";
  auto runs = [&] {
    std::ifstream in(f);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    std::remove(f.c_str());
    return n;
  };
  MeasureOptions o;  // one warm-up, three repetitions
  Measurement m = measure(cmd, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(m.warmups, 1);
  EXPECT_EQ(m.repetitions.size(), 1u);
  EXPECT_DOUBLE_EQ(m.seconds, 0.25);
  EXPECT_EQ(m.spread, 0.0);
  EXPECT_NE(m.detail.find("deterministic"), std::string::npos) << m.detail;
  o.warmups = 0;
  m = measure(cmd, o);
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(m.repetitions.size(), 2u);
  o.warmups = 1;
  m = measure("echo x >> " + f, o);  // its wall time: never twice the same, never "deterministic"
  EXPECT_GE(runs(), 4);  // and more while its spread is high
  EXPECT_EQ(m.detail.find("deterministic"), std::string::npos);
}

// The figure is the median of the repetitions in sorted order (not the middle one in run order):
// a command that reports 5, 1, 3 (and 4, 1, 3, 2) in turn.
TEST(TuneMeasure, MedianOfTheSortedRepetitions) {
  for (const std::vector<int>& times : {std::vector<int>{5, 1, 3}, std::vector<int>{4, 1, 3, 2}}) {
    std::string f = (tawa::test::tempDir() / "tune-median").string();
    std::remove(f.c_str());
    std::string list;
    for (int t : times) list += " " + std::to_string(t);
    std::string cmd = numberedRun(f) + "set --" + list + "; shift $n; echo tawa-time: $1";
    MeasureOptions o;
    o.warmups = 0;
    o.repetitions = static_cast<int>(times.size());
    o.maxRepetitions = o.repetitions;
    o.noiseLimit = 1e9;
    Measurement m = measure(cmd, o);
    ASSERT_TRUE(m.ok());
    ASSERT_EQ(m.repetitions.size(), times.size());
    EXPECT_DOUBLE_EQ(m.seconds, times.size() == 3 ? 3.0 : 2.5);
    std::remove(f.c_str());
  }
}

TEST(TuneFeatures, CountsInstructionClassesInLambdaFunctions) {
  const char* ir = R"(
define dso_local void @_Z6helperv() {
entry:
  %x = load i32, ptr @g, align 4
  ret void
}
define internal void @"_ZZ4mainENKUlRKN3tbb6detail2d114blocked_rangeIlEEE_clES5_"(ptr %this, ptr %r) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %n, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %w = fmul float %v, 2.0
  %s = call float @llvm.sqrt.f32(float %w)
  store float %s, ptr %p, align 4
  %n = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %n, 100
  br i1 %c, label %done, label %loop, !llvm.loop !7
done:
  tail call void @_ZN3tbb6detail2r14start_for_runEv()
  ret void
}
)";
  Features f = featuresFromLlvmIr(ir);
  // Only the lambda's function counts: one load (the helper's is excluded), one store, one loop.
  EXPECT_DOUBLE_EQ(f.at("ir.log_load"), std::log1p(1.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_store"), std::log1p(1.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_fp_arith"), std::log1p(1.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_math"), std::log1p(1.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_loops"), std::log1p(1.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_branch"), std::log1p(2.0));
  EXPECT_DOUBLE_EQ(f.at("ir.log_instructions"), std::log1p(12.0));
  EXPECT_EQ(kindOf(f), "parallel_for");  // guessed from start_for
  EXPECT_EQ(kindOf(featuresFromLlvmIr(ir, "parallel_pipeline")), "parallel_pipeline");
}

// A timeout's detail names its limit, which the tuner reads back to decide whether the record's
// verdict binds a tuning with another --timeout.
TEST(TuneMeasure, TimeoutDetailNamesItsLimit) {
  RunResult t = runOnce("sleep 5", 0.25);
  ASSERT_TRUE(t.timedOut);
  EXPECT_EQ(t.detail, "killed after the timeout of 0.25 s");
  Measurement m;
  m.status = "timeout";
  m.detail = t.detail;
  ASSERT_TRUE(timeoutLimit(m));
  EXPECT_DOUBLE_EQ(*timeoutLimit(m), 0.25);
  m.status = "failed";  // a failure is a verdict at any limit
  EXPECT_FALSE(timeoutLimit(m));
  m.status = "timeout";
  m.detail = "killed after the timeout of soon";
  EXPECT_FALSE(timeoutLimit(m));
}
