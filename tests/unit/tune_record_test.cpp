// The tuning record: round trips, ordering, schema version, and kill-safety (a measurement whose
// transaction committed is readable after the writing process dies by SIGKILL).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "ir/Diagnostic.h"
#include "tune/Record.h"
#include "TempDir.h"

using namespace tawa;
using namespace tawa::tune;

namespace {

std::string freshPath(const char* tag) {
  auto p = tawa::test::tempDir() / ("tune-" + std::string(tag) + "-" + std::to_string(std::random_device{}()) + ".db");
  return p.string();
}

void removeDb(const std::string& p) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p + suffix);
}

Measurement ok(double s) {
  Measurement m;
  m.seconds = s;
  m.repetitions = {s * 1.01, s, s * 0.99};
  m.spread = 0.02;
  m.warmups = 1;
  m.origin = "test";
  return m;
}

}  // namespace

TEST(TuneRecord, RoundTripAndBestOrder) {
  std::string path = freshPath("rt");
  {
    Record r(path);
    int64_t p = r.program("prog", "parallel_for", "./a {x}", "{\"x\": [1, 2, 3]}");
    EXPECT_EQ(r.program("prog", "parallel_for", "./a {x}", "{\"x\": [1, 2, 3]}"), p);
    r.setFeatures(p, {{"ir.log_load", 2.5}, {"kind.parallel_for", 1}});
    r.add(p, "{\"x\":1}", ok(0.3));
    r.add(p, "{\"x\":2}", ok(0.1));
    Measurement bad;
    bad.status = "failed";
    bad.detail = "exit status 3";
    r.add(p, "{\"x\":3}", bad);
  }
  Record r(path);
  int64_t p = *r.findProgram("prog");
  EXPECT_EQ(r.features(p).at("ir.log_load"), 2.5);
  auto m = r.lookup(p, "{\"x\":1}");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->seconds, 0.3);
  EXPECT_EQ(m->repetitions.size(), 3u);
  EXPECT_EQ(m->warmups, 1);
  auto f = r.lookup(p, "{\"x\":3}");
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->ok());
  EXPECT_EQ(f->detail, "exit status 3");
  EXPECT_FALSE(r.lookup(p, "{\"x\":4}"));
  auto best = r.best(p, 5);
  ASSERT_EQ(best.size(), 2u);  // the failed configuration is not among the best
  EXPECT_EQ(best[0].first, "{\"x\":2}");
  auto progs = r.programs();
  ASSERT_EQ(progs.size(), 1u);
  EXPECT_EQ(progs[0].measured, 2);
  removeDb(path);
}

// A configuration measured more than once (MaSiF's confirmations): lookup reads the measurements
// oldest first, so a repeated search sees them in the order it made them; best() ranks by their mean
// and leaves out a configuration with any failed measurement.
TEST(TuneRecord, RepeatedMeasurementsOldestFirstAndRankedByMean) {
  std::string path = freshPath("repeat");
  Record r(path);
  int64_t p = r.program("prog", "parallel_for", "./a {x}", "{\"x\": [1, 2, 3]}");
  r.add(p, "{\"x\":1}", ok(0.10));  // lucky first figure
  r.add(p, "{\"x\":2}", ok(0.14));
  r.add(p, "{\"x\":1}", ok(0.30));  // mean 0.20: now slower than x=2
  r.add(p, "{\"x\":3}", ok(0.01));
  Measurement bad;
  bad.status = "failed";
  bad.detail = "exit status 1";
  r.add(p, "{\"x\":3}", bad);
  ASSERT_TRUE(r.lookup(p, "{\"x\":1}", 0));
  EXPECT_DOUBLE_EQ(r.lookup(p, "{\"x\":1}", 0)->seconds, 0.10);
  ASSERT_TRUE(r.lookup(p, "{\"x\":1}", 1));
  EXPECT_DOUBLE_EQ(r.lookup(p, "{\"x\":1}", 1)->seconds, 0.30);
  EXPECT_FALSE(r.lookup(p, "{\"x\":1}", 2));
  EXPECT_FALSE(r.lookup(p, "{\"x\":2}", 1));
  auto best = r.best(p, 5);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].first, "{\"x\":2}");
  EXPECT_DOUBLE_EQ(best[0].second, 0.14);
  EXPECT_EQ(best[1].first, "{\"x\":1}");
  EXPECT_NEAR(best[1].second, 0.20, 1e-12);
  removeDb(path);
}

TEST(TuneRecord, CommittedMeasurementSurvivesSigkill) {
  std::string path = freshPath("kill");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Record r(path);
    int64_t p = r.program("victim", "other", "./v", "{}");
    r.add(p, "{\"x\":7}", ok(0.7));
    raise(SIGKILL);  // no destructor, no close, no checkpoint
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  Record r(path);
  auto p = r.findProgram("victim");
  ASSERT_TRUE(p);
  auto m = r.lookup(*p, "{\"x\":7}");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->seconds, 0.7);
  removeDb(path);
}

TEST(TuneRecord, RefusesANewerSchema) {
  std::string path = freshPath("schema");
  { Record r(path); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Record r(path);
    FAIL() << "a newer schema was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos) << e.what();
  }
  removeDb(path);
}

TEST(TuneRecord, UnopenablePathIsAUserError) {
  EXPECT_THROW(Record("/nonexistent-dir/for/sure/x.db"), UserError);
}

TEST(TuneRecord, AFileThatIsNotADatabaseIsAUserErrorAtThePath) {
  std::string path = freshPath("garbage");
  {
    std::ofstream f(path, std::ios::binary);
    std::mt19937 rng(7);
    for (int i = 0; i < 8192; ++i) f.put(static_cast<char>(rng()));
  }
  try {
    Record r(path);
    FAIL() << "a file of random bytes was taken for a record";
  } catch (const UserError& e) {
    EXPECT_NE(e.format().find(path + ": error: cannot use the tuning record: file is not a database"), std::string::npos)
        << e.format();
    EXPECT_NE(e.hint.find("integrity_check"), std::string::npos) << e.hint;
  }
  removeDb(path);
}

// A record damaged after it was opened fine (here: a table dropped and recreated empty by hand, so that
// new measurement ids collide with the old repetitions) fails the write as a user error naming the
// file, not as an internal error.
TEST(TuneRecord, ADamagedRecordFailsAWriteAsAUserError) {
  std::string path = freshPath("damaged");
  {
    Record r(path);
    int64_t p = r.program("prog", "test", "true {x}", "{}");
    r.add(p, "{\"x\":1}", ok(0.5));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE measurements", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Record r(path);  // opens: the schema recreates the table
  int64_t p = r.program("prog", "test", "true {x}", "{}");
  try {
    r.add(p, "{\"x\":2}", ok(0.25));
    FAIL() << "a write into a damaged record succeeded";
  } catch (const UserError& e) {
    EXPECT_NE(e.format().find("cannot use the tuning record: UNIQUE constraint failed: repetitions"), std::string::npos)
        << e.format();
    EXPECT_NE(e.format().find("damaged"), std::string::npos) << e.format();
  }
  EXPECT_FALSE(r.lookup(p, "{\"x\":2}")) << "the failed write left a measurement behind";
  removeDb(path);
}

// Measurements of other devices: a device is a machine of its own with facts; measurements made
// after selectDevice are of it; tunedPairs and landscape read every machine's; addMany is one
// transaction.
TEST(TuneRecord, DevicesKeepTheirMeasurementsAndFacts) {
  std::string path = freshPath("devices");
  {
    Record r(path);
    const int64_t host = r.machine();
    int64_t p = r.program("k", "program", "imported", "{}");
    Measurement ok;
    ok.seconds = 0.5;
    r.add(p, "{\"x\":1}", ok);
    const int64_t a100 = r.selectDevice("A100", {{"sms", 108}, {"nvidia", 1}});
    EXPECT_NE(a100, host);
    EXPECT_EQ(r.machine(), a100);
    std::vector<std::pair<std::string, Measurement>> many;
    for (int x = 1; x <= 3; ++x) {
      Measurement m;
      m.seconds = 0.1 * x;
      many.emplace_back("{\"x\":" + std::to_string(x) + "}", m);
    }
    Measurement bad;
    bad.status = "failed";
    many.emplace_back("{\"x\":4}", bad);
    r.addMany(p, many);
    EXPECT_EQ(r.machineFacts(a100), (std::map<std::string, double>{{"nvidia", 1}, {"sms", 108}}));
    EXPECT_TRUE(r.machineFacts(host).empty());
    // Selecting the device again without facts keeps them; with facts replaces them.
    EXPECT_EQ(r.selectDevice("A100"), a100);
    EXPECT_EQ(r.machineFacts(a100).size(), 2u);
    r.selectDevice("A100", {{"sms", 100}});
    EXPECT_EQ(r.machineFacts(a100), (std::map<std::string, double>{{"sms", 100}}));
    auto pairs = r.tunedPairs(1);
    ASSERT_EQ(pairs.size(), 2u);
    EXPECT_EQ(pairs[0].machine, host);
    EXPECT_EQ(pairs[0].program.measured, 1);
    EXPECT_EQ(pairs[1].machine, a100);
    EXPECT_EQ(pairs[1].machineName, "A100");
    EXPECT_EQ(pairs[1].program.measured, 3);
    EXPECT_EQ(r.tunedPairs(2).size(), 1u);
    auto l = r.landscape(p, a100);
    ASSERT_EQ(l.size(), 4u);
    EXPECT_DOUBLE_EQ(l[0].second, 0.1);
    EXPECT_TRUE(std::isinf(l[3].second));
    EXPECT_EQ(r.landscape(p, host).size(), 1u);
    // best() reads the record's machine unless told another.
    EXPECT_EQ(r.best(p, 1)[0].first, "{\"x\":1}");
    EXPECT_DOUBLE_EQ(r.best(p, 1, host)[0].second, 0.5);
  }
  removeDb(path);
}
