// The tuner's persistent record: one SQLite file holding programs, their static features, the
// machines they ran on, the configurations tried and every measurement with its repetitions.
//
// Durability: WAL journal, and each measurement is one transaction (configuration row, measurement
// row, repetition rows), so a tuner killed mid-search loses at most the run in flight. The schema is
// versioned in meta.schema_version; the `results` view reads well in the plain sqlite3 shell:
//   sqlite3 tune.db 'select program, config, seconds from results order by seconds limit 5'
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace tawa::tune {

// 2: machine_facts; 3: measurements.worker (an older record is upgraded on open).
inline constexpr int kRecordSchemaVersion = 3;

struct Measurement {
  double seconds = 0;               // the median of the repetitions (status "ok")
  double spread = 0;                // (max - min) / median over the repetitions
  std::vector<double> repetitions;  // timed runs, warm-up excluded
  int warmups = 0;
  std::string status = "ok";  // ok | failed | timeout
  std::string detail;         // for failures: the exit status and the end of stderr
  std::string origin;         // which search asked for it (masif, random, oracle, ...)
  std::string worker;         // who measured it, as JSON (tawa tune --workers/--ray: host, pid, GPU), or empty
  bool ok() const { return status == "ok"; }
};

// What the record keys a machine by (measurements are ranked only against others of the same
// fingerprint) and how it reads.
struct MachineIdentity {
  std::string fingerprint, description;
};
// This host: "CPU model | N cores | hostname".
MachineIdentity hostIdentity();

struct ProgramInfo {
  int64_t id = 0;
  std::string name, kind, space;  // space: the SPACE.json text it was tuned with
  int64_t measured = 0;  // configurations with an ok measurement on this machine
};

// A program with enough measurements on one machine or device to guide a search.
struct TunedPair {
  ProgramInfo program;      // program.measured: its ok configurations on `machine`
  int64_t machine = 0;
  std::string machineName;  // the machine's description, or the device's name
};

class Record {
 public:
  // Opens or creates the record; throws tawa::UserError when the file cannot be opened or was
  // written by a newer schema.
  explicit Record(const std::string& path);
  ~Record();
  Record(const Record&) = delete;
  Record& operator=(const Record&) = delete;

  // The machine (or device) whose measurements this record reads and writes: this host, unless
  // selectDevice chose a named device.
  int64_t machine() const { return machine_; }
  std::string machineDescription() const;

  // Measurements from now on are of the device `name` (created when new: a machine whose fingerprint is
  // "device: NAME"), not of this host: results measured elsewhere (imported, or a replayed landscape).
  // Non-empty `facts` replace the device's recorded facts (vendor, SMs, bandwidth, ...: numbers).
  int64_t selectDevice(const std::string& name, const std::map<std::string, double>& facts = {});
  // Measurements from now on are of the machine `m` (created when new): the workers' (tawa tune --ray).
  int64_t useMachine(const MachineIdentity& m, const std::map<std::string, double>& facts = {});
  std::map<std::string, double> machineFacts(int64_t machine);
  // Every (program, machine) pair with at least `minMeasured` configurations measured ok there.
  std::vector<TunedPair> tunedPairs(int64_t minMeasured);
  // Every configuration of `program` measured on `machine`: the mean of its measurements, or +inf when
  // any of them failed.
  std::vector<std::pair<std::string, double>> landscape(int64_t program, int64_t machine);

  // Finds the program by name, creating it (or updating its command and space text) as needed.
  int64_t program(const std::string& name, const std::string& kind, const std::string& command, const std::string& space);
  std::optional<int64_t> findProgram(const std::string& name);
  std::vector<ProgramInfo> programs();

  void setFeatures(int64_t program, const std::map<std::string, double>& f);
  std::map<std::string, double> features(int64_t program);

  // The nth measurement (0: the oldest) of this configuration on this machine, if there are that many.
  // Oldest first, so that a search asking again for the measurements it made reads them in the order
  // it made them, and a repeated tuning takes the same path. Only measurements with an id above
  // `after` count (0: all; a search that must measure for itself passes lastMeasurementId() from its
  // start).
  std::optional<Measurement> lookup(int64_t program, const std::string& config, int nth = 0, int64_t after = 0);
  // The id of the newest measurement in the record (0 when it has none).
  int64_t lastMeasurementId();
  void add(int64_t program, const std::string& config, const Measurement& m);
  // Many measurements in one transaction (an import): all of them, or none when one fails.
  void addMany(int64_t program, const std::vector<std::pair<std::string, Measurement>>& ms);
  // Configurations by the mean of their measurements on this machine, fastest first; a configuration
  // with any failed measurement is left out.
  // On `machine` when given, else the record's.
  std::vector<std::pair<std::string, double>> best(int64_t program, size_t top, std::optional<int64_t> machine = std::nullopt);

  // One row per finished search, for the evaluation: what it found after how many evaluations.
  void addSearch(int64_t program, const std::string& method, int budget, uint64_t seed, int evaluations,
                 const std::string& bestConfig, double bestSeconds, const std::string& neighbours);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  int64_t machine_ = 0;
  void exec(const std::string& sql);
  void insert(int64_t program, const std::string& config, const Measurement& m);  // inside a transaction
  // Replaces the (name, value) rows of `table` owned by `id` (inside a transaction): features, facts.
  void replaceNamedValues(const char* table, const char* owner, int64_t id, const std::map<std::string, double>& values);
};

}  // namespace tawa::tune
