// tawa's library API: what the command line, the Python module and the tests build on.
//
//   tawa::Kernel k = tawa::Kernel::load("add.py", "add_kernel", "x:*fp32, y:*fp32, out:*fp32, n:i32, BLOCK=256");
//   std::string cuda = k.cuda();                       // each stage's artifact, made on first use
//   k.run(tawa::Backend::Exec, {tawa::Array{x, "fp32", n}, ...}, {grid, 1, 1});
//
// A Kernel is one kernel of a source file (.py Triton, or .tir) specialized by a launch spec: the
// spec fixes the pointer and scalar dtypes and the constexpr values (its buffer shapes matter only for
// tensor descriptors). Stages are computed lazily and kept: the tile IR as written (canonicalized),
// the warp-specialized IR ("ws") and the lowered IR ("nv"), the CUDA C++ the backend emits, its PTX
// and cubin (nvcc/NVRTC + ptxas, cached on disk), the resource report, and the explanation of what
// the passes chose. run() launches on buffers the caller owns: the CPU executor ("exec") and the CPU
// emulator of the CUDA kernel ("emu") read and write host memory in place of the caller's arrays;
// the GPU ("cuda") reads and writes the caller's device memory on the caller's stream.
//
// Every user mistake (a malformed kernel, a wrong spec, a bad argument, an out-of-bounds access while
// running) is a tawa::Error carrying the file:line:col it is located at and the reason.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tawa {

// A located diagnostic. file is "" when the error has no source location.
struct Diagnostic {
  std::string file;
  int line = 0, col = 0;
  std::string message;
  std::string hint;  // how to fix it, when known
};

class Error : public std::runtime_error {
 public:
  // `text` is the whole message ("file:line:col: error: message\n  hint: ..."); empty: made from d.
  explicit Error(Diagnostic d, std::string text = {});
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

// An array the caller owns: `elements` elements of `dtype` ("fp16", "bf16", "fp32", "i32", ... in
// Triton's or the IR's spelling) from `data`. A strided view passes its base pointer and the extent
// its strides reach (the kernel receives the strides as scalars, as in Triton).
struct Array {
  void* data = nullptr;
  std::string dtype;
  int64_t elements = 0;
  std::vector<int64_t> shape;  // optional: the shape errors and traces name it by (its product is elements)
  std::string name;             // optional, for an array of pointers' pointee: the name comparisons call it by (else PARAM[k])
  // An array of pointers (i64 or u64 elements; Triton's grouped GEMM reads its matrices so): element k
  // is the address of pointees[k]. On the host backends the launch gives the kernel each backend's own
  // addresses of them and copies the pointees in and back like arguments; it never writes this array
  // itself. On Cuda the array already holds the pointees' device addresses; naming the pointees
  // (device arrays) is needed only for RunOptions::check, which reads them and checks the addresses.
  std::vector<Array> pointees;

  Array() = default;
  Array(void* d, std::string dt, int64_t n, std::vector<int64_t> s = {})
      : data(d), dtype(std::move(dt)), elements(n), shape(std::move(s)) {}
};
// One argument of a launch, for each parameter of the specialized kernel (Kernel::params()) in order.
using Arg = std::variant<Array, int64_t, double>;

// Exec and Emu run on host arrays; Cuda launches on GPU 0, where every Array's `data` is a device
// address (a torch CUDA tensor's data_ptr(), a DeviceArray's data()) and an array of pointers
// already holds device addresses.
enum class Backend { Exec, Emu, Cuda };

// The warp-specialization knobs (0 = let the passes choose) and how the CUDA kernel is emitted.
struct Options {
  int depth = 0;      // aref ring depth D
  int mmaDepth = 1;   // MMA depth P
  int consumers = 0;  // consumer warp groups (1 or 2)
  int persistent = 0; // persistent programs
  int groupM = 0;     // persistent tile order: groups of this many rows of tiles (0: row-major)
  // setmaxnreg budgets; 0: chosen (producer 40 beside one consumer, 32 beside two; consumers 256 for one, 240 for two)
  int producerRegs = 0, consumerRegs = 0;
  bool pingPong = true;     // two consumers take turns issuing their MMAs
  // Launch programs in their order as written; false lets the passes launch those whose work grows
  // with program_id(0) longest first (causal attention; transforms/ProgramOrder.h)
  bool keepProgramOrder = false;
  // One aref (ring) for all of a loop's loads, instead of one per value read apart (attention's K and
  // V): to measure what the split is worth
  bool sharedRing = false;
  bool profile = false;     // instrument the CUDA kernel (tawa's scopes recorded with clock64)
  int profileCapacity = 256;  // with profile: events per warp group
  int profileEvents = 4096;   // profile() on exec: events each block's recorder keeps (lost ones are counted)
  // Where the front end and the passes say what they decide, as they decide it; null: kept for
  // explanation() instead.
  std::ostream* explain = nullptr;
  // Breaks the lowering on purpose, to see check() catch it (tawa check --inject): skip-release,
  // wrong-phase, depth-off-by-one, missing-expect-tx or early-release; or the emitted CUDA kernel,
  // which only check(Backend::Emu) runs (release-before-wait, ...); "" for none.
  std::string inject;
};

// What the passes chose for a warp-specialized kernel (all zero and false for a SIMT one).
struct Pipeline {
  bool simt = false;       // no warp-specialized form
  int depth = 0;           // slots per aref ring (D)
  int mmaDepth = 0;        // MMA groups in flight before a slot is released (P)
  int consumers = 0;       // consumer warp groups
  bool pvOverlap = false;  // attention: the PV MMA overlapped with the next block's QK^T and softmax
  // Emitted kernels only (Kernel::pipeline(true)):
  bool pingPong = false;   // the CUDA kernel's consumers take turns issuing their MMAs
  int threads = 0;         // threads per block
  int64_t smemBytes = 0;   // dynamic shared memory per block
  bool persistent = false; // a persistent kernel: its blocks walk the grid's tiles
};

struct Param {
  std::string name;
  bool pointer = false;
  std::string dtype;  // element type of a pointer, or the scalar's type (IR spelling: f16, i32, ...)
};

struct RunOptions {
  int threads = 0;    // executor threads (0: all cores)
  uint64_t seed = 0;  // interleaving of warp groups (executor) or of the emulator's threads
  // Cuda: the CUstream to launch on (a torch stream's cuda_stream); nullptr: the legacy default stream.
  void* stream = nullptr;
  // Emu, Cuda: also run the kernel as written on the executor, on copies of the same inputs, and
  // compare every array within its dtype's tolerance (RunStats::comparisons); a difference is an
  // Error. Cuda: the arrays (and the pointees of arrays of pointers) are copied to the host before
  // the launch and after it, and the launch is waited for: a checked launch is a synchronous one.
  bool check = false;
  // Emu, Cuda, a kernel loaded with Options::profile: the file to write the Chrome trace of its own
  // records to ("": KERNEL.trace.json); RunStats::notes says what it holds. Cuda: the event buffer is
  // allocated, read back and freed around the launch, which is waited for.
  std::string profileTrace;
};

struct RunStats {
  double seconds = 0;         // the launch itself (0 for Cuda: the launch is only enqueued)
  std::array<int64_t, 3> launched{0, 0, 0};  // Cuda: the grid launched (a persistent kernel's blocks, not its tiles)
  double compileSeconds = 0;  // the emulator's host compile (0 on a cache hit or for the executor)
  // Emu: the emulator's account of the launch.
  bool cacheHit = false;       // the host compile came from the cache
  int64_t blocks = 0;          // blocks run (a persistent kernel's, not its grid's)
  uint64_t switches = 0, mmaOps = 0, tmaOps = 0;  // fiber switches, wgmma and TMA operations
  std::string comparisons;     // RunOptions::check: a line per array
  std::string notes;           // a profiled kernel: its events, lost events and trace file (one line)
};

struct CheckReport {
  int seeds = 0;
  int64_t programs = 0;  // programs per run (the grid's size)
  std::string summary;   // one line: what ran and what agreed
  Pipeline pipeline;     // the pipeline checked
  std::string comparisons;  // emu: a line per buffer, how the first schedule compared with the executor
};

// A buffer Kernel::inputs made (dtype in the IR's spelling: f16, i32, ...), its elements in their
// storage format.
struct HostBuffer {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  std::vector<int> addressesOf;  // an array of pointers (`= addresses(...)`): the buffers it points to
};
// A launch's inputs as `tawa run` makes them: the buffers, the arguments (arrays pointing into the
// buffers: move an Inputs, never copy it) and the grid.
struct Inputs {
  std::vector<HostBuffer> buffers;
  std::vector<Arg> args;
  std::array<int64_t, 3> grid{1, 1, 1};
  Inputs() = default;
  Inputs(Inputs&&) = default;
  Inputs& operator=(Inputs&&) = default;
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;
};

struct ProfileReport {
  std::string summary;  // per warp-group role: busy, waiting, issuing; the roofline position; advice
  std::string json;     // the same summary and advice as JSON
  std::string trace;    // the Chrome trace (open in https://ui.perfetto.dev)
};

class Kernel {
 public:
  // Loads kernel `name` from `path` (.py or .tir; "" picks the file's only kernel) specialized by
  // `spec` (the grammar of `tawa run --spec`; buffer shapes and scalar values may be left out:
  // "x:*fp32:16, n:i32, BLOCK=256").
  static Kernel load(const std::string& path, const std::string& name, const std::string& spec, const Options& opt = {});
  // A kernel from the tile IR text a previous Kernel printed (ir("tile")): what a disk cache keeps.
  // `spec` is the one it was made with (its constexprs, for the warp-specialization hints).
  static Kernel fromIR(const std::string& irText, const std::string& spec, const Options& opt = {});

  const std::string& name() const;
  std::vector<Param> params() const;
  // True when the kernel has no warp-specialized form (no tile.dot, no tensor descriptor): the CUDA
  // backend emits it as a SIMT kernel and the "ws"/"nv" stages do not exist.
  bool simt() const;

  // What the passes chose (the "nv" stage); `emitted`: also what emitting the CUDA kernel chose
  // (pingPong), emitting it.
  Pipeline pipeline(bool emitted = false) const;

  // "tile" (as written, canonicalized), "ws" (warp-specialized) or "nv" (arefs lowered to mbarriers).
  std::string ir(const std::string& stage = "tile") const;
  std::string cuda() const;       // the CUDA C++ for sm_90a
  std::string ptx() const;        // compiled by NVRTC or nvcc
  std::string cubin() const;      // assembled by ptxas (bytes)
  std::string resources() const;  // registers, stack, spills, shared memory, threads per kernel
  std::string compileReport() const;  // how the PTX and cubin were made: the time taken, or the cache
  std::string explanation() const;  // what the front end and the passes decided, and why

  // Fresh inputs from the spec the kernel was loaded with, which must give every buffer's shape and
  // every scalar's value: buffers of seeded random values (floats in [-1, 1], integers in [-64, 64],
  // never zero; `in LO..HI` ranges honoured), or read from .npy files (`loads`: NAME=FILE.npy), and
  // `grid` (an expression over the spec's names, as `tawa run --grid`) evaluated.
  Inputs inputs(const std::string& grid, uint64_t seed, const std::vector<std::string>& loads = {}) const;

  // Launches over `grid` on caller-owned arrays (read and written in place). Throws Error for a
  // wrong argument list and for any fault the backend detects. Cuda: the kernel is compiled and
  // loaded on first use (once per choice of tile maps the arguments' alignment makes), then each
  // launch only encodes its tensor maps on the host and enqueues the kernel on opt.stream -- no
  // allocation, copy or synchronization; a fault of the kernel itself shows on the stream later.
  RunStats run(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, const RunOptions& opt = {}) const;

  // Checks the pipeline on these inputs without touching the caller's arrays: the warp-specialized
  // kernel (exec: the lowered IR on the executor, every warp group a thread; emu: the emitted CUDA
  // kernel on the emulator) runs under `seeds` scheduler seeds (interleavings of its warp groups and
  // TMA completions, or of its threads), each compared with the kernel as written on the executor:
  // bit for bit on exec; on emu the first schedule within the dtype's tolerance (the GPU sums in
  // another order) and every later one bit for bit with the first. A deadlock, race, out-of-bounds
  // access or difference is an Error naming the seed. On host arrays only (exec, emu).
  CheckReport check(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, int seeds = 8) const;

  // Runs the warp-specialized kernel once, profiled per warp group, on the caller's arrays (written as
  // run() writes them): exec times each warp group's ops with tawa's cost model of an H200-class SM;
  // emu runs the CUDA kernel emitted with its own clock64 records on the emulator (the same model
  // advances its clock): every figure modelled, and said so. cuda launches that instrumented kernel on
  // the caller's device arrays and opt.stream, with an event buffer it allocates, zeroes, reads back
  // and frees, and waits for it (a profile is one synchronous launch): the clock is GPU 0's. A kernel
  // without warp groups (simt()) is an Error.
  ProfileReport profile(Backend backend, const std::vector<Arg>& args, std::array<int64_t, 3> grid, const RunOptions& opt = {}) const;

  // Times the kernel on GPU 0 as run(Backend::Cuda) launches it (the arrays are written by every
  // launch): `warmup` launches, then `reps` launches each between two CUDA events on opt.stream, the
  // parameters packed once for all of them; waits for the stream and returns each timed launch's
  // milliseconds, in launch order. A kernel loaded with Options::profile records into one event buffer
  // for all launches (allocated and freed here, never read).
  std::vector<double> bench(const std::vector<Arg>& args, std::array<int64_t, 3> grid, int warmup, int reps, const RunOptions& opt = {}) const;

  // The floating-point operations of one launch of a kernel with a dot: 2*M*N*K from the spec's
  // integer entries named M, N and K (any case); nothing when the kernel has no dot or the spec lacks one.
  std::optional<double> flops() const;

  struct Impl;

 private:
  explicit Kernel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// GPU 0 as the driver reports it.
struct GpuInfo {
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int multiprocessors = 0;
  int driverVersion = 0;  // e.g. 13000
};
// Opens the driver and GPU 0: an Error saying what is missing without a driver or a device, or
// when GPU 0 is not a Hopper GPU (sm_90), which is all tawa emits for.
GpuInfo gpu();

// Memory on GPU 0 for callers that own none (tawa run --backend cuda makes its buffers so; Python
// callers pass torch tensors instead): `bytes` bytes, uninitialized, freed with the object.
class DeviceArray {
 public:
  explicit DeviceArray(size_t bytes);
  ~DeviceArray();
  DeviceArray(DeviceArray&& o) noexcept;
  DeviceArray& operator=(DeviceArray&& o) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  void* data() const { return reinterpret_cast<void*>(address_); }  // the device address
  size_t bytes() const { return bytes_; }
  // The whole array from or to host memory, synchronously (cuMemcpyHtoD / cuMemcpyDtoH: on the legacy
  // default stream, which waits for work on blocking streams; synchronize a non-blocking one first).
  void upload(const void* host);
  void download(void* host) const;

 private:
  uint64_t address_ = 0;
  size_t bytes_ = 0;
};

// A launch's inputs (Kernel::inputs) copied to GPU 0: a DeviceArray per buffer (an array of pointers
// holding its pointees' device addresses) and the launch's arguments over them, for run, bench and
// profile on Backend::Cuda.
struct DeviceInputs {
  std::vector<DeviceArray> arrays;  // per buffer of the Inputs, in order
  std::vector<Arg> args;
  std::array<int64_t, 3> grid{1, 1, 1};
  // Every buffer copied back into `in`, the Inputs it was made from (an array of pointers keeps its
  // host addresses there).
  void download(Inputs& in) const;
};
DeviceInputs toDevice(const Inputs& in);

// The tuner's SQLite record (the file `tawa tune --record` reads and writes), for launchers that tune
// a kernel's configurations themselves (tawa.autotune): a restarted process finds what was measured.
// Measurements go to `device` (created when new) when one is named: results that are not this
// host's, such as figures of tawa's cost model, are never ranked with the host's own.
class TuneRecord {
 public:
  explicit TuneRecord(const std::string& path, const std::string& device = "");
  ~TuneRecord();
  TuneRecord(TuneRecord&&) noexcept;
  // The program `name` (created when new), tuned over the configurations `space` describes.
  int64_t program(const std::string& name, const std::string& kind, const std::string& space);
  // The first measurement of `config`: seconds, or +inf when it failed; nothing when never measured.
  std::optional<double> lookup(int64_t program, const std::string& config);
  // A measurement (failed when `detail` is not empty); one transaction.
  void add(int64_t program, const std::string& config, double seconds, const std::string& origin, const std::string& detail = "");
  // The fastest configurations (mean seconds), failed ones left out.
  std::vector<std::pair<std::string, double>> best(int64_t program, size_t top);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A tuning worker's side of `tawa tune --ray` (the protocol is src/tune/Workers.h): who this process
// measures as (JSON: name, fingerprint, description, details), and one job run here, its answer a
// JSON line. The Ray actors of python/tawa/tune_workers.py call these.
std::string tuneWorkerIdentity(const std::string& name);
std::string runTuneJob(const std::string& job, const std::string& identity);

// The @triton.jit (or @tawa.jit) functions of a Python file, with their parameters as written: what a
// Python launcher binds arguments to before any spec exists.
struct SourceParam {
  std::string name;
  bool constexpr_ = false;    // annotated tl.constexpr
  bool hasDefault = false;
};
std::vector<SourceParam> signature(const std::string& path, const std::string& kernel);
std::vector<std::string> kernels(const std::string& path);

// Where the emulator and the CUDA compiler read primitives.cuh (the emu/ headers beside it): set by
// an installed package to the copy it ships. Empty: $TAWA_CUDA_INCLUDE, else the source tree's.
void setPrimitivesDir(const std::string& dir);

std::string version();

}  // namespace tawa
