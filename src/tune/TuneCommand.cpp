#include "tune/TuneCommand.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "frontend/Frontend.h"
#include "ir/Diagnostic.h"
#include "tune/KernelTune.h"
#include "tune/Replay.h"
#include "tune/SpaceJson.h"
#include "tune/Tuner.h"
#include "tune/Workers.h"

namespace tawa::tune {

namespace {

const char* kTuneHelp = R"(
Modes:
  --program 'CMD {param} ...' --space SPACE.json   tune any command line; {name} is replaced by the value
  --suite DIR                                      tune every program of a suite: DIR/suite.json lists
                                                   {"name", "kind", "command" or "replay" (a landscape CSV),
                                                   "space", "features"}; paths relative to DIR, defaults
                                                   NAME/SPACE.json and NAME/NAME.cpp
  FILE.py --kernel K --spec ... --grid G           tune a tawa kernel on the GPU: its tile sizes (the spec's BLOCK*
                                                   and TILE* constexprs) and D, P, consumers, persistent, group_m,
                                                   within 227 KB of shared memory and the accumulator registers;
                                                   each configuration timed by `tawa run --backend cuda`
  FILE.py --kernel K --spec ... --dry-run          no GPU needed: the kernel's features, space, neighbours (kernels
                                                   tuned earlier) or that there are none, and the search it would run
  FILE.py --kernel K --spec ... --import R.json    record results measured elsewhere: {"results": [{"config": {...},
                                                   "ms": 0.12}, ...]}; later kernels find this one as a neighbour
  --import DATA.csv [--import FAILURES.csv] --space SPACE.json --name NAME [--device D --device-facts F.json]
                                                   record measurements made elsewhere (a landscape's rows) for
                                                   program NAME on device D, and stop

What is measured: the command's wall time, or the figure of its last output line `tawa-time: SECONDS`
(for kernels: the median_ms of `tawa run --backend cuda --check none`'s result line); after a warm-up
run, the median of --reps runs, repeated while the spread exceeds 10%. A program that prints the same
figure in its first two runs is deterministic and measured in those two (--reps 1 --warmups 0: one).
Every measurement goes to the record (--db, SQLite); a configuration already there is not run again
(MaSiF's confirmations measure a configuration a second time, and the record keeps both; one that
timed out is run again under a longer --timeout), so re-running a tuning measures nothing new.
--fresh makes a search measure everything it asks for itself (the record's earlier measurements of
the program answer nothing; other programs still guide MaSiF): a search repeated with another seed
is then an independent one, not a replay of the first.
The last line printed is the best configuration as JSON.

Workers: --workers N runs N local worker processes (--gpus 0,1: each its own CUDA_VISIBLE_DEVICES);
--compile-workers M (--ray-compile-workers M) run the prepare step (a kernel's compile, --prepare) on M
more while the others measure;
--ray ADDRESS runs Ray actors (--ray-gpus 1: one per GPU; --ray-cpus; python -m tawa.tune_workers in
--python's environment, with tawa and Ray installed). The search proposes ahead of itself (ask/tell) so
that every worker is busy; the tuner alone writes the record, each measurement with its worker. A
worker whose fingerprint (GPU model, driver, clocks; or CPU host) differs from the first worker's is
dropped; a measurement lost with its worker runs again elsewhere; a tuner killed mid-run resumes from
the record. With several workers the --finalists fastest (3) are measured again one at a time on one
worker, and the best is the fastest of those.

Methods: masif (default: the k nearest tuned programs of the record by z-scored static features, each
neighbour's best configurations carried over by value, PCA over them keeping 90% of the variance,
candidates along the leading components most promising first for 8 evaluations (parameters no
neighbour has are varied across the candidates, every value of a categorical early), then a pattern
search from the best that takes a move only when it is more than 3% faster, with exploration at local
optima, and at the end one evaluation in ten measures the fastest configurations again, the best
being the lowest mean; with no tuned neighbours it says so and runs its default: the space's default
configuration, random sampling up to the 6th evaluation, the same refinement and confirmation),
random, greedy (local search from the default), exhaustive, copy (the neighbours' best configurations,
rank by rank: what transfer alone gives, no search).
Neighbours are (program, device) pairs: the same program measured on other devices always counts, and
the k nearest other programs; the distance is over static features and, prefixed device., the facts of
the devices (--device-facts). When a neighbour's landscape holds 100 or more configurations of the
target's space (an import, a brute-force run), MaSiF runs its transfer search instead of the PCA: each
neighbour's best first, then the configuration the neighbours rank best, each neighbour weighted by how
well its ranking has matched the figures measured so far (Spearman), every other step among the moves
of one parameter from the best so far; after 8 evaluations without improvement every other one is a
random configuration, until one improves. Constraints may be written in Python's syntax (and, or, not,
//, chained comparisons).

Examples:
  tawa tune --program 'build/bench/skeletons/skel_matmul --ti {ti} --tj {tj} --tk {tk} --grain {grain} --part {part}
            --threads {threads}' --space bench/skeletons/matmul/SPACE.json \
            --features bench/skeletons/matmul/matmul.cpp --budget 45
  tawa tune --suite bench/skeletons --budget 45 --leave-one-out
  tawa tune --suite bench/skeletons --only matmul --method exhaustive --budget 100000 --reps 1 --warmups 0
  tawa tune --suite bench/skeletons --only julia --leave-one-out --budget 45 --seed 2 --fresh
  tawa tune --program './app --grain {grain}' --space space.json --evaluate '{"grain": 64}'
  tawa tune --replay landscape/data.csv --space landscape/SPACE.json --budget 45   # a recorded landscape, nothing run
  tawa tune --import A4000/data.csv --import A4000/failures.csv --space A4000/SPACE.json --name conv --device A4000 \
            --device-facts a4000.json --features conv.json                        # measurements made on another GPU
  tawa tune --replay A100/data.csv --space A100/SPACE.json --name conv --device A100 --device-facts a100.json \
            --features conv.json --budget 25 --exclude @W6600                      # tuned from the other devices
  tawa tune examples/matmul_desc.py --kernel matmul_desc_kernel --spec 'a_ptr:*fp16[M,K], b_ptr:*fp16[K,N],
            c_ptr:*fp16[M,N], M:i32=4096, N:i32=4096, K:i32=4096, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64'
            --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)' --budget 30 --dry-run
  tawa tune --replay landscape/data.csv --space landscape/SPACE.json --workers 2     # two local worker processes
  tawa tune --program './app --grain {grain}' --space space.json --ray auto --ray-cpus 2   # Ray actors, 2 CPUs each
  sqlite3 tawa-tune.db 'select program, config, seconds from results order by seconds limit 5'
)";

struct Args {
  std::vector<std::string> importDirs;
  std::string file, kernel, spec, grid, program, space, features, name, db = "tawa-tune.db", method = "masif", suite, bin,
      evaluate, replay, device, deviceFacts, kind;
  std::vector<std::string> imports, neighboursFrom, exclude;
  bool replayNoise = false, printFeatures = false;
  std::vector<std::string> only;
  int budget = 45;
  uint64_t seed = 1;
  int reps = 3, warmups = 1;
  double timeout = 60;
  size_t neighbours = TuneOptions{}.neighbours;  // one default: the library's
  bool leaveOneOut = false, dryRun = false, fresh = false;
  // Workers: local processes (--workers, --gpus) or Ray (--ray and its sizes), and the pool made of them.
  int workers = 0, rayWorkers = 0, finalists = TuneOptions{}.finalists, compileWorkers = 0, rayCompileWorkers = 0;
  std::string prepare;
  std::vector<std::string> gpus;
  std::string ray, python, serveWorker;
  double rayGpus = 0, rayCpus = 1;
  std::shared_ptr<WorkerPool> pool;
};

Location where(const std::string& what) { return Location::at(std::make_shared<const std::string>(what), 0, 0); }

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UserError(where(path), "cannot read the file");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string selfDir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

TuneOptions options(const Args& a) {
  TuneOptions o;
  o.method = a.method;
  o.budget = a.budget;
  o.seed = a.seed;
  o.neighbours = a.neighbours;
  o.measure.repetitions = a.reps;
  o.measure.warmups = a.warmups;
  o.measure.timeoutSeconds = a.timeout;
  o.dryRun = a.dryRun;
  o.fresh = a.fresh;
  o.neighboursFrom = a.neighboursFrom;
  o.exclude = a.exclude;
  o.log = &std::cout;
  o.workers = a.pool.get();
  o.finalists = a.finalists;
  return o;
}

// The workers the options ask for: `--workers N` local processes (this tawa, --serve-worker), each
// with its own CUDA_VISIBLE_DEVICES under --gpus; or, with --ray, one child process
// (python -m tawa.tune_workers) that runs the jobs on Ray actors.
std::shared_ptr<WorkerPool> makePool(const Args& a) {
  std::vector<WorkerPool::Child> children;
  if (!a.ray.empty()) {
    const char* py = std::getenv("TAWA_PYTHON");
    std::string python = !a.python.empty() ? a.python : py && *py ? py : "python3";
    std::ostringstream gpus, cpus;
    gpus << a.rayGpus;
    cpus << a.rayCpus;
    children.push_back({"ray",
                        {python, "-m", "tawa.tune_workers", "--address", a.ray, "--workers", std::to_string(a.rayWorkers), "--gpus-per-worker",
                         gpus.str(), "--cpus-per-worker", cpus.str()},
                        {}});
    if (a.rayCompileWorkers > 0) {
      WorkerPool::Child c;
      c.name = "ray compile";
      c.argv = {python, "-m", "tawa.tune_workers", "--address", a.ray, "--workers", std::to_string(a.rayCompileWorkers), "--gpus-per-worker", "0",
                "--cpus-per-worker", "1", "--name", "ray compile"};
      c.role = "prepare";
      children.push_back(std::move(c));
    }
  } else {
    for (int i = 0; i < a.compileWorkers; ++i) {
      WorkerPool::Child c;
      c.name = "compile " + std::to_string(i);
      c.argv = {selfDir() + "/tawa", "tune", "--serve-worker", c.name};
      c.role = "prepare";
      children.push_back(std::move(c));
    }
    const int n = a.workers > 0 ? a.workers : static_cast<int>(a.gpus.size());
    for (int i = 0; i < n; ++i) {
      WorkerPool::Child c{"local " + std::to_string(i), {selfDir() + "/tawa", "tune", "--serve-worker", "local " + std::to_string(i)}, {}};
      if (!a.gpus.empty()) c.env["CUDA_VISIBLE_DEVICES"] = a.gpus[static_cast<size_t>(i) % a.gpus.size()];
      children.push_back(std::move(c));
    }
  }
  try {
    auto pool = std::make_shared<WorkerPool>(std::move(children));
    std::cout << "workers: " << pool->describe() << "\n";
    return pool;
  } catch (const std::runtime_error& e) {
    throw UserError(where(a.ray.empty() ? "--workers" : "--ray"), e.what(),
                    a.ray.empty() ? "" : "--ray needs Python with the tawa package and Ray installed (pip install tawa ray); "
                                         "--python PATH or TAWA_PYTHON picks the interpreter");
  }
}

void checkCommand(const Space& space, const std::string& command, const std::string& what) {
  auto bad = space.unknownPlaceholders(command);
  if (!bad.empty()) {
    size_t col = command.find("{" + bad[0] + "}");
    std::string known;
    for (auto& p : space.params) known += (known.empty() ? "" : ", ") + p.name;
    throw UserError(Location::at(std::make_shared<const std::string>(what), 1, static_cast<int>(col) + 1),
                    "{" + bad[0] + "} is not a parameter of the space (parameters: " + known + ")");
  }
}

int printEvaluation(Record& rec, const TuneTarget& t, const Args& a) {
  Config c;
  try {
    c = t.space.fromJson(nlohmann::json::parse(a.evaluate));
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(where("--evaluate"), std::string("invalid JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw UserError(where("--evaluate"), e.what());
  }
  if (!t.space.legal(c)) throw UserError(where("--evaluate"), "the configuration violates a constraint of the space");
  Evaluation e = evaluateOne(rec, t, c, options(a).measure, "evaluate", 0, a.fresh ? rec.lastMeasurementId() : 0);
  nlohmann::json j = {{"config", t.space.toJson(c)}, {"recorded", e.cached}};
  if (std::isfinite(e.seconds)) j["seconds"] = e.seconds;
  else j["seconds"] = nullptr;
  std::cout << j.dump() << "\n";
  return 0;
}

// A kernel's source is compiled at the space's default: its integer parameters as -DNAME=VALUE.
std::string defaultDefines(const Space& s) {
  std::string defines;
  if (s.defaults)
    for (size_t i = 0; i < s.dims(); ++i)
      if (s.params[i].kind == Param::Kind::Int) defines += " -D" + s.params[i].name + "=" + s.params[i].text((*s.defaults)[i]);
  return defines;
}

// Device facts (--device-facts): a JSON object of numbers ({"sms": 108, "bandwidth_gbs": 1555, ...}).
// Keys starting with '_' are notes ("_source").
std::map<std::string, double> readDeviceFacts(const std::string& path) {
  const std::string text = readFile(path);
  nlohmann::json j = parseJsonText(text, path);
  if (!j.is_object())
    throw UserError(Location::at(std::make_shared<const std::string>(path), 1, 1),
                    "device facts are a JSON object of numbers, e.g. {\"sms\": 108, \"l2_mb\": 40}");
  std::map<std::string, double> f;
  for (auto& [k, v] : j.items()) {
    if (k.rfind('_', 0) == 0) continue;
    if (!v.is_number()) {
      throw UserError(jsonLocation(path, text, "/" + k), "device fact '" + k + "' is " + v.dump() + ", not a number",
                      "keys starting with _ hold notes");
    }
    f[k] = v.get<double>();
  }
  return f;
}

// The record, on the device --device names (with its --device-facts) when given, else on this host.
void selectDevice(Record& rec, const Args& a) {
  if (!a.deviceFacts.empty() && a.device.empty()) throw UserError(where("--device-facts"), "--device-facts needs --device NAME");
  if (!a.device.empty()) rec.selectDevice(a.device, a.deviceFacts.empty() ? std::map<std::string, double>{} : readDeviceFacts(a.deviceFacts));
}

// The default name of a --program target: the space file's stem, or its folder's name when the file
// is SPACE.json (bench/skeletons/matmul/SPACE.json: "matmul"), so that the program keeps its identity
// when its command or files move.
std::string defaultName(const std::string& spacePath) {
  std::filesystem::path p(spacePath);
  std::string stem = p.stem().string();
  std::string lower = stem;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "space" || lower.rfind("space.", 0) == 0) {
    std::error_code ec;
    std::string folder = std::filesystem::absolute(p, ec).parent_path().filename().string();
    if (!folder.empty()) return folder;
  }
  return stem.empty() ? "program" : stem;
}

// --import CSV... in the program modes: measurements made elsewhere (a landscape's data.csv, its
// failures.csv) recorded for the program on --device, in one transaction; nothing is run.
int importMeasurements(Record& rec, const TuneTarget& t, const Args& a) {
  registerTarget(rec, t);
  int64_t id = *rec.findProgram(t.name);
  size_t ok = 0, failed = 0;
  std::vector<std::pair<std::string, Measurement>> all;
  for (auto& path : a.imports) {
    for (auto& [c, m] : readMeasurements(path, t.space)) {
      (m.ok() ? ok : failed)++;
      m.origin = "import";
      all.emplace_back(t.space.key(c), m);
    }
  }
  rec.addMany(id, all);
  std::cout << "import: " << t.name << " on " << (a.device.empty() ? "this host" : a.device) << ": " << ok << " measurement(s), "
            << failed << " failure(s) recorded in " << a.db << "\n";
  return 0;
}

int tuneProgram(const Args& a) {
  const bool importing = !a.imports.empty();
  const char* mode = !a.replay.empty() ? "--replay" : !a.program.empty() ? "--program" : importing ? "--import" : "--print-features";
  if (a.space.empty()) throw UserError(where(mode), std::string(mode) + " needs --space SPACE.json");
  if (importing && a.name.empty())
    throw UserError(where("--import"), "--import needs --name NAME: the program the measurements are of",
                    "measurements of one kernel on several devices share its name: --name convolution --device A100");
  TuneTarget t;
  t.spaceText = readFile(a.space);
  t.space = parseSpace(t.spaceText, a.space);
  t.kind = "program";
  if (importing) {
    t.command = "imported";
  } else if (a.replay.empty()) {
    t.command = a.program;
    checkCommand(t.space, t.command, "--program");
    t.prepare = a.prepare;
    if (!t.prepare.empty()) checkCommand(t.space, t.prepare, "--prepare");
  } else {
    ReplayStats st;
    t.replay = loadReplay(a.replay, t.space, a.replayNoise, a.seed, &st);
    t.replaySource = TuneTarget::ReplaySource{std::filesystem::absolute(a.replay).string(), std::filesystem::absolute(a.space).string(),
                                              a.replayNoise, a.seed};
    t.command = "replay " + a.replay + (a.replayNoise ? " with noise" : "");
    std::cout << "replay: " << a.replay << ", " << st.rows << " recorded configurations, best " << std::setprecision(4)
              << st.best << " s, median " << st.median << " s" << (a.replayNoise ? "; each evaluation draws from the recorded noise" : "")
              << "\n";
  }
  if (!a.features.empty()) {
    t.features = featuresFromFile(a.features, a.kind, defaultDefines(t.space));
    t.kind = kindOf(t.features) == "unknown" ? "program" : kindOf(t.features);
  }
  if (!a.kind.empty()) {
    // The kind is a one-hot part of the features (kind.NAME): --kind sets it.
    if (!t.features.empty())
      for (auto& k : skeletonKinds()) t.features["kind." + k] = k == a.kind ? 1.0 : 0.0;
    t.kind = a.kind;
  }
  if (a.printFeatures) {
    if (a.features.empty()) throw UserError(where("--print-features"), "--print-features needs --features FILE");
    std::cout << nlohmann::json(t.features).dump(1) << "\n";
    return 0;
  }
  // A replayed landscape is named after its folder (the landscapes are <name>/data.csv).
  std::error_code ec;
  std::string folder = a.replay.empty() ? "" : std::filesystem::absolute(a.replay, ec).parent_path().filename().string();
  t.name = !a.name.empty()        ? a.name
           : !a.replay.empty()   ? "replay-" + (folder.empty() ? std::string("landscape") : folder)
                                 : defaultName(a.space);
  Record rec(a.db);
  selectDevice(rec, a);
  if (importing) return importMeasurements(rec, t, a);
  if (!a.evaluate.empty()) return printEvaluation(rec, t, a);
  std::cout << "tune: " << t.name << ", " << t.space.dims() << " parameters, " << t.space.cardinality()
            << " configurations before constraints; method " << a.method << ", budget " << a.budget << "; record " << a.db
            << "\n";
  TuneResult r = tune(rec, t, options(a));
  if (a.dryRun) return 0;
  if (!r.best || !std::isfinite(r.best->seconds)) {
    std::string eg = failureExample(rec, t, r);
    throw UserError(where(t.name), "every configuration tried failed" + (eg.empty() ? "" : "; " + eg),
                    "the record's measurements.detail has each failure; run one configuration by hand to see all of its output");
  }
  std::cout << "best " << std::setprecision(4) << r.best->seconds << " s";
  if (r.best->measurements.size() > 1) std::cout << " (mean of " << r.best->measurements.size() << " measurements)";
  std::cout << " after " << r.evaluations << " evaluations (" << r.measured << " measured, " << r.evaluations - r.measured
            << " from the record)\n";
  std::cout << t.space.toJson(r.best->config).dump() << "\n";
  return 0;
}

struct SuiteEntry {
  TuneTarget target;
  std::string source;
};

// The selected programs of the suite (--only), registered with their features; `all` receives the
// names of every program the suite lists, the pool leave-one-out draws neighbours from.
std::vector<SuiteEntry> loadSuite(const Args& a, Record& rec, std::set<std::string>& all) {
  namespace fs = std::filesystem;
  std::string path = (fs::path(a.suite) / "suite.json").string();
  std::string text = readFile(path);
  nlohmann::json j = parseJsonText(text, path);
  if (!j.is_object() || !j.contains("programs") || !j["programs"].is_array())
    throw UserError(where(path), "a suite file is {\"programs\": [{\"name\", \"kind\", \"command\"}, ...]}");
  std::string bin = a.bin.empty() ? selfDir() + "/bench/skeletons" : a.bin;
  std::vector<SuiteEntry> out;
  auto at = [&](size_t i, const std::string& key) {
    return jsonLocation(path, text, "/programs/" + std::to_string(i) + (key.empty() ? "" : "/" + key));
  };
  // A path of the manifest, relative to the suite's folder unless absolute.
  auto relative = [&](const std::string& p) { return fs::path(p).is_absolute() ? p : (fs::path(a.suite) / p).string(); };
  for (size_t i = 0; i < j["programs"].size(); ++i) {
    auto& p = j["programs"][i];
    if (!p.is_object() || !p.contains("name") || !(p.contains("command") || p.contains("replay")))
      throw UserError(at(i, ""), "each program needs \"name\" and \"command\" (or \"replay\"): " + p.dump());
    for (auto& [key, v] : p.items()) {
      static const std::set<std::string> known = {"name", "kind", "command", "space", "features", "replay", "description"};
      if (!known.count(key))
        throw UserError(at(i, key), "unknown key '" + key + "'", "a program takes name, kind, command or replay, space, features, description");
      if (!v.is_string()) throw UserError(at(i, key), "'" + key + "' must be a string");
    }
    std::string name = p["name"].get<std::string>();
    all.insert(name);
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), name) == a.only.end()) continue;
    SuiteEntry e;
    TuneTarget& t = e.target;
    t.name = name;
    t.kind = p.value("kind", "other");
    std::string spacePath = relative(p.value("space", (fs::path(name) / "SPACE.json").string()));
    t.spaceText = readFile(spacePath);
    t.space = parseSpace(t.spaceText, spacePath);
    if (p.contains("replay")) {
      std::string csv = relative(p["replay"].get<std::string>());
      t.replay = loadReplay(csv, t.space, a.replayNoise, a.seed);
      t.replaySource = TuneTarget::ReplaySource{fs::absolute(csv).string(), fs::absolute(spacePath).string(), a.replayNoise, a.seed};
      t.command = "replay " + csv;
    } else {
      t.command = p["command"].get<std::string>();
      bool built = t.command.rfind("{bin}", 0) == 0;  // the suite's own executable, not a shell line
      size_t b;
      while ((b = t.command.find("{bin}")) != std::string::npos) t.command.replace(b, 5, bin);
      checkCommand(t.space, t.command, path + " (" + name + ")");
      std::string exe = t.command.substr(0, t.command.find(' '));
      if (built && access(exe.c_str(), X_OK) != 0)
        throw UserError(where(exe), "the skeleton program is not built", "build tawa with cmake (bench/skeletons), or pass --bin DIR");
    }
    e.source = p.contains("features") ? relative(p["features"].get<std::string>()) : (fs::path(a.suite) / name / (name + ".cpp")).string();
    // Features are static: computed once and kept in the record.
    auto id = rec.findProgram(name);
    if (id) t.features = rec.features(*id);
    if (t.features.empty() || (kindOf(t.features) != t.kind && !p.contains("features"))) {
      if (!p.contains("features")) {
        std::cout << "features: " << name << " (clang++ -O1 -emit-llvm " << e.source << ")\n" << std::flush;
        t.features = featuresFromSource(e.source, t.kind, "-I'" + a.suite + "'");
      } else {
        t.features = featuresFromFile(e.source, t.kind == "other" ? "" : t.kind, defaultDefines(t.space));
      }
    }
    registerTarget(rec, t);
    out.push_back(std::move(e));
  }
  if (out.empty()) throw UserError(where(path), "no program of the suite selected");
  return out;
}

int tuneSuite(const Args& a) {
  Record rec(a.db);
  std::set<std::string> names;
  auto suite = loadSuite(a, rec, names);
  if (!a.evaluate.empty()) {
    if (suite.size() != 1) throw UserError(where("--evaluate"), "--evaluate with --suite needs --only NAME");
    return printEvaluation(rec, suite[0].target, a);
  }
  nlohmann::json summary = nlohmann::json::object();
  std::vector<std::string> rows;
  double sumPct = 0;
  int nPct = 0;
  for (auto& e : suite) {
    TuneOptions o = options(a);
    if (a.leaveOneOut) {
      std::set<std::string> pool = names;
      pool.erase(e.target.name);
      o.pool = pool;
    }
    std::cout << "tune: " << e.target.name << " (" << e.target.kind << "), " << e.target.space.cardinality()
              << " configurations before constraints; method " << a.method << ", budget " << a.budget << "\n";
    TuneResult r = tune(rec, e.target, o);
    if (a.dryRun) continue;
    nlohmann::json js;
    int64_t id = *rec.findProgram(e.target.name);
    auto bestKnown = rec.best(id, 1);
    std::ostringstream row;
    row << std::left << std::setw(14) << e.target.name;
    if (r.best && std::isfinite(r.best->seconds)) {
      js["config"] = e.target.space.toJson(r.best->config);
      js["seconds"] = r.best->seconds;
      row << std::setw(12) << std::setprecision(4) << r.best->seconds;
      if (!bestKnown.empty()) {
        double pct = 100.0 * bestKnown[0].second / r.best->seconds;
        js["percent_of_best_recorded"] = pct;
        row << std::setw(10) << std::setprecision(4) << bestKnown[0].second << std::setw(8) << std::setprecision(3) << pct;
        sumPct += pct;
        ++nPct;
      }
    } else {
      js["config"] = nullptr;
      row << "failed";
    }
    js["evaluations"] = r.evaluations;
    js["measured"] = r.measured;
    row << "  " << r.evaluations << " evaluations, " << r.measured << " measured";
    summary[e.target.name] = js;
    rows.push_back(row.str());
  }
  if (a.dryRun) return 0;
  std::cout << "\nprogram       found (s)   best recorded (s)  %   \n";
  for (auto& r : rows) std::cout << r << "\n";
  if (nPct) std::cout << "mean " << std::setprecision(3) << sumPct / nPct << "% of the best recorded configuration\n";
  std::cout << summary.dump() << "\n";
  return 0;
}

}  // namespace

std::function<int()> addTuneCommand(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* c = app.add_subcommand("tune", "tune a program's parameters (MaSiF-style: static features, neighbours, PCA)");
  c->add_option("FILE", a->file, "a tawa kernel (.py/.tir) to tune (needs the GPU backend)");
  c->add_option("--program", a->program, "command line to tune; {name} placeholders take the parameters' values");
  c->add_option("--space", a->space, "SPACE.json: parameters, ranges, constraints");
  c->add_option("--replay", a->replay,
                "DATA.csv: search a recorded landscape instead of running anything (columns: the parameters, time_ms, "
                "optionally std_ms; a configuration with no row fails as a compile failure would)");
  c->add_flag("--replay-noise", a->replayNoise, "with --replay: each evaluation draws from the row's recorded mean and std_ms");
  c->add_option("--features", a->features,
                "static features: a C++ source (clang++ -O1 -emit-llvm), CUDA (.cu) or OpenCL (.cl) device code (compiled at "
                "the space's default, -DNAME=VALUE), .ll, or .json");
  c->add_option("--kind", a->kind,
                "what the program is, for its features (a one-hot kind.NAME): a oneTBB skeleton (parallel_for, "
                "parallel_reduce, parallel_scan, parallel_pipeline, flow_graph, parallel_sort) or other; default: guessed "
                "from a C++ source's TBB calls, read from a .json's kind.* entries, other for GPU kernels")
      ->check(CLI::IsMember(skeletonKinds()));
  c->add_option("--name", a->name, "the program's name in the record (default: the space file's folder when it is SPACE.json, else its stem; replay-FOLDER for --replay)");
  c->add_option("--suite", a->suite, "a skeleton suite directory (with suite.json) to tune program by program");
  c->add_option("--only", a->only, "with --suite: only these programs (comma separated)")->delimiter(',');
  c->add_flag("--leave-one-out", a->leaveOneOut, "with --suite: neighbours come only from the suite's other programs");
  c->add_option("--bin", a->bin, "with --suite: where the skeleton executables are (default: next to tawa)");
  c->add_option("--budget", a->budget, "evaluations to spend: one measurement each (a configuration asked for again costs nothing; MaSiF's confirmations measure one again)")->default_val(45)->check(CLI::PositiveNumber);
  c->add_option("--db", a->db, "the SQLite record")->default_val("tawa-tune.db");
  c->add_option("--method", a->method, "masif, copy (the neighbours' best configurations, no search), random, greedy or exhaustive")
      ->default_val("masif")
      ->check(CLI::IsMember({"masif", "copy", "random", "greedy", "exhaustive"}));
  c->add_option("--seed", a->seed, "seed of the search's random choices")->default_val(1);
  c->add_option("--reps", a->reps, "timed repetitions per measurement")->default_val(3)->check(CLI::Range(1, 100));
  c->add_option("--warmups", a->warmups, "untimed warm-up runs per measurement")->default_val(1)->check(CLI::Range(0, 100));
  c->add_option("--timeout", a->timeout,
                 "seconds before a run counts as failed (a configuration that timed out is measured again under a longer --timeout)")
      ->default_val(60)
      ->check(CLI::Validator(
          [](std::string& s) {
            char* end = nullptr;
            double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == 0 && std::isfinite(v) && v > 0 ? std::string() : "must be a positive number of seconds";
          },
          "SECONDS > 0"));
  c->add_option("--neighbours", a->neighbours, "k, the tuned programs that guide MaSiF")
      ->default_val(TuneOptions{}.neighbours)
      ->check(CLI::PositiveNumber);
  c->add_option("--evaluate", a->evaluate, "measure one configuration (JSON) and print its figure as JSON");
  c->add_flag("--fresh", a->fresh,
              "measure every configuration the search (or --evaluate) asks for, even one the record has measured before "
              "(for independent repeated searches; the record still guides MaSiF and is still written)");
  c->add_flag("--dry-run", a->dryRun, "show the neighbours and the candidates MaSiF would evaluate; run nothing");
  c->add_option("--kernel,-k", a->kernel, "kernel name (kernel mode)");
  c->add_option("--spec", a->spec, "launch spec (kernel mode): arguments, shapes, tile sizes, as for tawa run");
  c->add_option("-I", a->importDirs, frontend::kImportDirHelp)->each([](const std::string& d) { frontend::addImportDir(d); })->check(CLI::ExistingDirectory);
  c->add_option("--grid", a->grid, "launch grid (kernel mode), as for tawa run");
  c->add_option("--import", a->imports,
                "record results measured elsewhere and stop: kernel mode, one JSON file; with --space and --name, CSV files "
                "(the parameters and time_ms as for --replay; a file with a status column and no time_ms holds failures)");
  c->add_option("--device", a->device,
                "the device the measurements are of (--import, --replay): a name such as A100; neighbours on other devices are "
                "compared by their facts (default: this host)");
  c->add_option("--device-facts", a->deviceFacts, "JSON object of the --device's facts (numbers: sms, bandwidth_gbs, l2_mb, ...)")
      ->check(CLI::ExistingFile);
  c->add_option("--neighbours-from", a->neighboursFrom, "MaSiF's neighbours only from these: NAME, NAME@DEVICE or @DEVICE (comma separated)")
      ->delimiter(',');
  c->add_option("--exclude", a->exclude, "never these as neighbours: NAME, NAME@DEVICE or @DEVICE (comma separated)")->delimiter(',');
  c->add_flag("--print-features", a->printFeatures, "print the static features --features computes (JSON) and stop");
  c->add_option("--workers", a->workers,
                "measure on N local worker processes at once (the search proposes ahead of itself; the fastest configurations are "
                "measured again one at a time at the end)")
      ->check(CLI::Range(1, 1024));
  c->add_option("--gpus", a->gpus, "with --workers: each worker's CUDA_VISIBLE_DEVICES in turn (comma separated; --workers defaults to their count)")
      ->delimiter(',');
  c->add_option("--ray", a->ray, "measure on Ray actors of the cluster at ADDRESS (auto: the running cluster; local: start one here)");
  c->add_option("--ray-workers", a->rayWorkers, "with --ray: actors to start (default: one per GPU the cluster has with --ray-gpus, else per CPU)")
      ->check(CLI::Range(0, 4096));
  c->add_option("--ray-gpus", a->rayGpus, "with --ray: GPUs each actor holds (default 0: CPU workers; 1: one actor per GPU)")->check(CLI::Range(0.0, 64.0));
  c->add_option("--ray-cpus", a->rayCpus, "with --ray: CPUs each actor holds")->default_val(1)->check(CLI::Range(0.0, 1024.0));
  c->add_option("--python", a->python, "with --ray: the Python that has tawa and Ray (default: $TAWA_PYTHON, else python3)");
  c->add_option("--prepare", a->prepare,
                "with --program: a command run once before each configuration's measurement (a build step; {name} placeholders "
                "as for --program); its failure is the configuration's");
  c->add_option("--compile-workers", a->compileWorkers,
                "local processes that run the prepare step (a kernel's compile, --prepare) while the --workers measure")
      ->check(CLI::Range(1, 1024));
  c->add_option("--ray-compile-workers", a->rayCompileWorkers, "with --ray: CPU actors that run the prepare step while the others measure")
      ->check(CLI::Range(1, 4096));
  c->add_option("--finalists", a->finalists, "with workers: the fastest configurations measured again on one worker at the end")
      ->default_val(TuneOptions{}.finalists)
      ->check(CLI::Range(0, 100));
  c->add_option("--serve-worker", a->serveWorker, "run as a worker named NAME: jobs on standard input, answers on standard output")
      ->group("");  // internal: the tuner starts these
  c->footer(kTuneHelp);
  return [a]() -> int {
    if (!a->serveWorker.empty()) return serveWorker(std::cin, std::cout, a->serveWorker);
    if (!a->ray.empty() && (a->workers || !a->gpus.empty()))
      throw UserError(where("--ray"), "--ray and --workers/--gpus exclude each other: Ray's actors are the workers");
    if ((a->rayWorkers || a->rayGpus > 0 || !a->python.empty() || a->rayCompileWorkers) && a->ray.empty())
      throw UserError(where(a->rayWorkers ? "--ray-workers" : a->rayGpus > 0 ? "--ray-gpus" : a->rayCompileWorkers ? "--ray-compile-workers" : "--python"),
                      "this option needs --ray ADDRESS");
    if (a->compileWorkers && !a->workers && a->gpus.empty())
      throw UserError(where("--compile-workers"), "--compile-workers prepares for measuring workers: add --workers N (or --gpus)",
                      "with --ray: --ray-compile-workers");
    if (!a->prepare.empty() && a->program.empty()) throw UserError(where("--prepare"), "--prepare goes with --program (a kernel's compile is its own)");
    const bool parallel = a->workers || !a->gpus.empty() || !a->ray.empty();
    if (parallel && !a->evaluate.empty()) throw UserError(where("--evaluate"), "--evaluate measures one configuration here; leave out --workers and --ray");
    if (parallel && !a->imports.empty()) throw UserError(where("--import"), "--import runs nothing; leave out --workers and --ray");
    if (parallel && !a->dryRun && !a->printFeatures) a->pool = makePool(*a);
    if (!a->file.empty() || !a->kernel.empty()) {
      if (a->file.empty()) throw UserError(where("--kernel"), "--kernel needs the kernel's file: tawa tune FILE.py --kernel K --spec ...");
      if (!a->program.empty() || !a->suite.empty() || !a->replay.empty())
        throw UserError(where(a->file), "a kernel file excludes --program, --replay and --suite");
      KernelTuneArgs k;
      if (a->imports.size() > 1) throw UserError(where("--import"), "kernel mode imports one JSON file");
      if (!a->device.empty()) throw UserError(where("--device"), "--device is for --import CSV and --replay; kernel mode measures this machine's GPU");
      if (!a->kind.empty()) throw UserError(where("--kind"), "a tawa kernel's kind is kernel; --kind is for programs");
      if (!a->features.empty()) throw UserError(where("--features"), "a tawa kernel's features come from its IR; --features is for programs");
      k.printFeatures = a->printFeatures;
      k.file = a->file, k.kernel = a->kernel, k.spec = a->spec, k.grid = a->grid, k.db = a->db;
      k.importPath = a->imports.empty() ? "" : a->imports[0];
      k.search = options(*a);
      return tuneKernel(k, std::cout);
    }
    int modes = !a->program.empty() + !a->suite.empty() + !a->replay.empty();
    if (modes == 0 && a->imports.empty() && !a->printFeatures)
      throw UserError(where("tawa tune"),
                      "nothing to tune: give --program CMD --space SPACE.json, --replay DATA.csv --space SPACE.json, or --suite DIR "
                      "(or --import DATA.csv --space SPACE.json --name NAME to record measurements made elsewhere)");
    if (modes >= 2) throw UserError(where("tawa tune"), "--program, --replay and --suite exclude each other");
    if (!a->imports.empty() && modes) throw UserError(where("--import"), "--import records measurements and runs nothing: leave out --program, --replay and --suite");
    if (a->replayNoise && a->replay.empty()) throw UserError(where("--replay-noise"), "--replay-noise needs --replay DATA.csv");
    if (!a->suite.empty() && !a->device.empty()) throw UserError(where("--device"), "--device is for --import and --replay, not --suite");
    if (a->printFeatures && !a->suite.empty()) throw UserError(where("--print-features"), "--print-features takes --features FILE, not --suite");
    if (!a->suite.empty() && (!a->features.empty() || !a->kind.empty() || !a->name.empty() || !a->space.empty()))
      throw UserError(where(!a->features.empty() ? "--features" : !a->kind.empty() ? "--kind" : !a->name.empty() ? "--name" : "--space"),
                      "with --suite, each program's space, features, kind and name come from the suite's manifest (suite.json)");
    if (a->suite.empty()) return tuneProgram(*a);
    return tuneSuite(*a);
  };
}

}  // namespace tawa::tune
