#include "tune/Record.h"

#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <thread>

#include "ir/Diagnostic.h"

namespace tawa::tune {

namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines(
  id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machine_facts(
  machine_id INTEGER NOT NULL REFERENCES machines(id), name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(machine_id, name));
CREATE TABLE IF NOT EXISTS programs(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, command TEXT NOT NULL,
  space TEXT NOT NULL, created TEXT NOT NULL DEFAULT (datetime('now')));
CREATE TABLE IF NOT EXISTS features(
  program_id INTEGER NOT NULL REFERENCES programs(id), name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(program_id, name));
CREATE TABLE IF NOT EXISTS configurations(
  id INTEGER PRIMARY KEY, program_id INTEGER NOT NULL REFERENCES programs(id), config TEXT NOT NULL,
  UNIQUE(program_id, config));
CREATE TABLE IF NOT EXISTS measurements(
  id INTEGER PRIMARY KEY, configuration_id INTEGER NOT NULL REFERENCES configurations(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id), seconds REAL, spread REAL, warmups INTEGER NOT NULL,
  status TEXT NOT NULL, detail TEXT NOT NULL, origin TEXT NOT NULL, created TEXT NOT NULL DEFAULT (datetime('now')),
  worker TEXT);
CREATE INDEX IF NOT EXISTS measurements_by_configuration ON measurements(configuration_id, machine_id);
CREATE TABLE IF NOT EXISTS repetitions(
  measurement_id INTEGER NOT NULL REFERENCES measurements(id), idx INTEGER NOT NULL, seconds REAL NOT NULL,
  PRIMARY KEY(measurement_id, idx));
CREATE TABLE IF NOT EXISTS searches(
  id INTEGER PRIMARY KEY, program_id INTEGER NOT NULL REFERENCES programs(id), machine_id INTEGER NOT NULL,
  method TEXT NOT NULL, budget INTEGER NOT NULL, seed INTEGER NOT NULL, evaluations INTEGER NOT NULL,
  best_config TEXT, best_seconds REAL, neighbours TEXT NOT NULL, created TEXT NOT NULL DEFAULT (datetime('now')));
CREATE VIEW IF NOT EXISTS results AS
  SELECT p.name AS program, c.config AS config, m.seconds AS seconds, m.spread AS spread, m.status AS status,
         m.origin AS origin, m.machine_id AS machine, m.created AS created
  FROM measurements m JOIN configurations c ON c.id = m.configuration_id JOIN programs p ON p.id = c.program_id;
)sql";

// A statement the record's file cannot answer: a damaged file (not a database, a table missing or
// broken by hand), a lock held by another process past the busy timeout, a full disk. All of these
// are the file's state, not tawa's, so they are user errors at the file, with what to do.
[[noreturn]] void recordError(sqlite3* db, const std::string& what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_ERROR;
  std::string hint =
      code == SQLITE_BUSY || code == SQLITE_LOCKED ? "another process holds the record; wait for it, or give another --db"
      : code == SQLITE_FULL || code == SQLITE_IOERR ? "the disk is full or failing; free space, or give another --db"
      : "the file is not a tuning record, or it was damaged: `sqlite3 FILE 'PRAGMA integrity_check'` checks it; "
        "--db NEW.db starts a new record";
  throw UserError(Location::at(std::make_shared<const std::string>(file && *file ? file : "<record>"), 0, 0),
                  "cannot use the tuning record: " + what, hint);
}

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      recordError(db, std::string(sqlite3_errmsg(db)) + " (preparing: " + std::string(sql).substr(0, 60) + ")");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& null(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    recordError(db_, sqlite3_errmsg(db_));
  }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  double dbl(int c) { return sqlite3_column_double(s_, c); }
  bool isNull(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string str(int c) {
    auto p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      return p == std::string::npos ? line : line.substr(p + 2);
    }
  return "unknown cpu";
}

bool hasColumn(sqlite3* db, const char* table, const char* column) {
  sqlite3_stmt* st = nullptr;
  std::string sql = std::string("PRAGMA table_info(") + table + ")";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return false;
  bool found = false;
  while (sqlite3_step(st) == SQLITE_ROW)
    if (auto* name = sqlite3_column_text(st, 1); name && std::string(reinterpret_cast<const char*>(name)) == column) found = true;
  sqlite3_finalize(st);
  return found;
}

}  // namespace

MachineIdentity hostIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const unsigned cores = std::thread::hardware_concurrency();
  return {cpuModel() + " | " + std::to_string(cores) + " cores | " + host, cpuModel() + ", " + std::to_string(cores) + " hardware threads"};
}

Record::Record(const std::string& path) : path_(path) {
  auto where = Location::at(std::make_shared<const std::string>(path), 0, 0);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw UserError(where, "cannot open the tuning record: " + why);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    exec("PRAGMA journal_mode=WAL");
    // In WAL mode NORMAL keeps every committed transaction across a killed process (only a power
    // loss can drop the last ones), which is what a tuner needs.
    exec("PRAGMA synchronous=NORMAL");
    exec("PRAGMA foreign_keys=ON");
    exec("BEGIN IMMEDIATE");
    exec(kSchema);
    int version = 0;
    {
      Stmt s(db_, "SELECT value FROM meta WHERE key='schema_version'");
      if (s.step()) version = std::stoi(s.str(0));
    }
    if (version == 0) {
      Stmt s(db_, "INSERT INTO meta(key, value) VALUES('schema_version', ?)");
      s.bind(1, std::to_string(kRecordSchemaVersion)).step();
    } else if (version < kRecordSchemaVersion) {
      // Version 1 lacked machine_facts, which the schema above has just created; version 2 lacked
      // measurements.worker.
      if (!hasColumn(db_, "measurements", "worker")) exec("ALTER TABLE measurements ADD COLUMN worker TEXT");
      Stmt s(db_, "UPDATE meta SET value=? WHERE key='schema_version'");
      s.bind(1, std::to_string(kRecordSchemaVersion)).step();
    } else if (version > kRecordSchemaVersion) {
      exec("ROLLBACK");
      throw UserError(where, "the tuning record has schema version " + std::to_string(version) + ", newer than this tawa's " +
                                 std::to_string(kRecordSchemaVersion));
    }
    const MachineIdentity me = hostIdentity();
    {
      Stmt s(db_, "INSERT OR IGNORE INTO machines(fingerprint, description) VALUES(?, ?)");
      s.bind(1, me.fingerprint).bind(2, me.description).step();
    }
    Stmt q(db_, "SELECT id FROM machines WHERE fingerprint=?");
    q.bind(1, me.fingerprint);
    q.step();
    machine_ = q.i64(0);
    exec("COMMIT");
  } catch (const UserError& e) {  // at the path as given, not sqlite's absolute one
    sqlite3_close(db_);
    db_ = nullptr;
    throw UserError(where, e.what(), e.hint);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Record::~Record() {
  if (db_) sqlite3_close(db_);
}

void Record::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "unknown error";
    sqlite3_free(err);
    recordError(db_, why + " (in: " + sql.substr(0, 60) + ")");
  }
}

std::string Record::machineDescription() const {
  Stmt s(db_, "SELECT description FROM machines WHERE id=?");
  s.bind(1, machine_);
  return s.step() ? s.str(0) : "";
}

int64_t Record::program(const std::string& name, const std::string& kind, const std::string& command, const std::string& space) {
  Stmt up(db_,
          "INSERT INTO programs(name, kind, command, space) VALUES(?, ?, ?, ?) "
          "ON CONFLICT(name) DO UPDATE SET kind=excluded.kind, command=excluded.command, space=excluded.space");
  up.bind(1, name).bind(2, kind).bind(3, command).bind(4, space).step();
  return *findProgram(name);
}

std::optional<int64_t> Record::findProgram(const std::string& name) {
  Stmt s(db_, "SELECT id FROM programs WHERE name=?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return s.i64(0);
}

std::vector<ProgramInfo> Record::programs() {
  Stmt s(db_,
         "SELECT p.id, p.name, p.kind, p.space, (SELECT COUNT(DISTINCT c.id) FROM configurations c JOIN measurements m "
         "ON m.configuration_id=c.id WHERE c.program_id=p.id AND m.machine_id=? AND m.status='ok') FROM programs p ORDER BY p.id");
  s.bind(1, machine_);
  std::vector<ProgramInfo> out;
  while (s.step()) out.push_back({s.i64(0), s.str(1), s.str(2), s.str(3), s.i64(4)});
  return out;
}

void Record::replaceNamedValues(const char* table, const char* owner, int64_t id, const std::map<std::string, double>& values) {
  Stmt del(db_, (std::string("DELETE FROM ") + table + " WHERE " + owner + "=?").c_str());
  del.bind(1, id).step();
  const std::string insert = std::string("INSERT INTO ") + table + "(" + owner + ", name, value) VALUES(?, ?, ?)";
  for (auto& [k, v] : values) {
    Stmt one(db_, insert.c_str());
    one.bind(1, id).bind(2, k).bind(3, v).step();
  }
}

void Record::setFeatures(int64_t program, const std::map<std::string, double>& f) {
  exec("BEGIN IMMEDIATE");
  try {
    replaceNamedValues("features", "program_id", program, f);
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

std::map<std::string, double> Record::features(int64_t program) {
  Stmt s(db_, "SELECT name, value FROM features WHERE program_id=?");
  s.bind(1, program);
  std::map<std::string, double> f;
  while (s.step()) f[s.str(0)] = s.dbl(1);
  return f;
}

std::optional<Measurement> Record::lookup(int64_t program, const std::string& config, int nth, int64_t after) {
  Stmt s(db_,
         "SELECT m.id, m.seconds, m.spread, m.warmups, m.status, m.detail, m.origin FROM measurements m "
         "JOIN configurations c ON c.id=m.configuration_id WHERE c.program_id=? AND c.config=? AND m.machine_id=? "
         "AND m.id>? ORDER BY m.id ASC LIMIT 1 OFFSET ?");
  s.bind(1, program).bind(2, config).bind(3, machine_).bind(4, after).bind(5, static_cast<int64_t>(nth));
  if (!s.step()) return std::nullopt;
  Measurement m;
  int64_t id = s.i64(0);
  m.seconds = s.isNull(1) ? 0 : s.dbl(1);
  m.spread = s.isNull(2) ? 0 : s.dbl(2);
  m.warmups = static_cast<int>(s.i64(3));
  m.status = s.str(4);
  m.detail = s.str(5);
  m.origin = s.str(6);
  Stmt r(db_, "SELECT seconds FROM repetitions WHERE measurement_id=? ORDER BY idx");
  r.bind(1, id);
  while (r.step()) m.repetitions.push_back(r.dbl(0));
  return m;
}

int64_t Record::lastMeasurementId() {
  Stmt s(db_, "SELECT COALESCE(MAX(id), 0) FROM measurements");
  return s.step() ? s.i64(0) : 0;
}

void Record::add(int64_t program, const std::string& config, const Measurement& m) {
  exec("BEGIN IMMEDIATE");
  try {
    insert(program, config, m);
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

void Record::insert(int64_t program, const std::string& config, const Measurement& m) {
  {
    Stmt s(db_, "INSERT OR IGNORE INTO configurations(program_id, config) VALUES(?, ?)");
    s.bind(1, program).bind(2, config).step();
  }
  int64_t cid;
  {
    Stmt s(db_, "SELECT id FROM configurations WHERE program_id=? AND config=?");
    s.bind(1, program).bind(2, config).step();
    cid = s.i64(0);
  }
  Stmt s(db_,
         "INSERT INTO measurements(configuration_id, machine_id, seconds, spread, warmups, status, detail, origin, worker) "
         "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, cid).bind(2, machine_);
  if (m.ok()) s.bind(3, m.seconds).bind(4, m.spread);
  else s.null(3).null(4);
  s.bind(5, static_cast<int64_t>(m.warmups)).bind(6, m.status).bind(7, m.detail).bind(8, m.origin);
  if (m.worker.empty()) s.null(9);
  else s.bind(9, m.worker);
  s.step();
  int64_t mid = sqlite3_last_insert_rowid(db_);
  for (size_t i = 0; i < m.repetitions.size(); ++i) {
    Stmt r(db_, "INSERT INTO repetitions(measurement_id, idx, seconds) VALUES(?, ?, ?)");
    r.bind(1, mid).bind(2, static_cast<int64_t>(i)).bind(3, m.repetitions[i]).step();
  }
}

std::vector<std::pair<std::string, double>> Record::best(int64_t program, size_t top, std::optional<int64_t> machine) {
  Stmt s(db_,
         "SELECT c.config, AVG(m.seconds) FROM configurations c JOIN measurements m ON m.configuration_id=c.id "
         "WHERE c.program_id=? AND m.machine_id=? GROUP BY c.id HAVING SUM(m.status<>'ok')=0 "
         "ORDER BY AVG(m.seconds) ASC, c.id ASC LIMIT ?");
  s.bind(1, program).bind(2, machine.value_or(machine_)).bind(3, static_cast<int64_t>(top));
  std::vector<std::pair<std::string, double>> out;
  while (s.step()) out.emplace_back(s.str(0), s.dbl(1));
  return out;
}

int64_t Record::selectDevice(const std::string& name, const std::map<std::string, double>& facts) {
  return useMachine({"device: " + name, name}, facts);
}

int64_t Record::useMachine(const MachineIdentity& m, const std::map<std::string, double>& facts) {
  exec("BEGIN IMMEDIATE");
  try {
    {
      Stmt s(db_, "INSERT OR IGNORE INTO machines(fingerprint, description) VALUES(?, ?)");
      s.bind(1, m.fingerprint).bind(2, m.description).step();
    }
    Stmt q(db_, "SELECT id FROM machines WHERE fingerprint=?");
    q.bind(1, m.fingerprint).step();
    machine_ = q.i64(0);
    if (!facts.empty()) replaceNamedValues("machine_facts", "machine_id", machine_, facts);
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
  return machine_;
}

std::map<std::string, double> Record::machineFacts(int64_t machine) {
  Stmt s(db_, "SELECT name, value FROM machine_facts WHERE machine_id=?");
  s.bind(1, machine);
  std::map<std::string, double> f;
  while (s.step()) f[s.str(0)] = s.dbl(1);
  return f;
}

std::vector<TunedPair> Record::tunedPairs(int64_t minMeasured) {
  Stmt s(db_,
         "SELECT p.id, p.name, p.kind, p.space, m.machine_id, mc.description, COUNT(DISTINCT c.id) FROM programs p "
         "JOIN configurations c ON c.program_id=p.id JOIN measurements m ON m.configuration_id=c.id "
         "JOIN machines mc ON mc.id=m.machine_id WHERE m.status='ok' GROUP BY p.id, m.machine_id "
         "HAVING COUNT(DISTINCT c.id) >= ? ORDER BY p.id, m.machine_id");
  s.bind(1, minMeasured);
  std::vector<TunedPair> out;
  while (s.step()) out.push_back({{s.i64(0), s.str(1), s.str(2), s.str(3), s.i64(6)}, s.i64(4), s.str(5)});
  return out;
}

std::vector<std::pair<std::string, double>> Record::landscape(int64_t program, int64_t machine) {
  Stmt s(db_,
         "SELECT c.config, CASE WHEN SUM(m.status<>'ok')>0 THEN NULL ELSE AVG(m.seconds) END FROM configurations c "
         "JOIN measurements m ON m.configuration_id=c.id WHERE c.program_id=? AND m.machine_id=? GROUP BY c.id ORDER BY c.id");
  s.bind(1, program).bind(2, machine);
  std::vector<std::pair<std::string, double>> out;
  while (s.step()) out.emplace_back(s.str(0), s.isNull(1) ? std::numeric_limits<double>::infinity() : s.dbl(1));
  return out;
}

void Record::addMany(int64_t program, const std::vector<std::pair<std::string, Measurement>>& ms) {
  exec("BEGIN IMMEDIATE");
  try {
    for (auto& [config, m] : ms) insert(program, config, m);
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

void Record::addSearch(int64_t program, const std::string& method, int budget, uint64_t seed, int evaluations,
                       const std::string& bestConfig, double bestSeconds, const std::string& neighbours) {
  Stmt s(db_,
         "INSERT INTO searches(program_id, machine_id, method, budget, seed, evaluations, best_config, best_seconds, neighbours) "
         "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, program).bind(2, machine_).bind(3, method).bind(4, static_cast<int64_t>(budget)).bind(5, static_cast<int64_t>(seed));
  s.bind(6, static_cast<int64_t>(evaluations)).bind(7, bestConfig).bind(8, bestSeconds).bind(9, neighbours).step();
}

}  // namespace tawa::tune
