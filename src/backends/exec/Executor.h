// The CPU executor: runs a tile-level kernel over its whole grid on host buffers, with the GPU's
// semantics (see Numerics.h). Programs run in parallel over the available cores with oneTBB; each
// program interprets the kernel on whole tiles; tile.dot runs on Eigen's float GEMM (f32
// accumulation). Pointers are virtual addresses ((buffer + 1) << 40 | byte offset), so an unmasked
// access outside every buffer is a UserError at the op's source location, never undefined behaviour.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tawa::profile {
class Recorder;
}

namespace tawa::exec {

struct Buffer {
  std::string name;
  ir::Scalar dtype = ir::Scalar::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // elements in their storage format (f16 as its 16 bits, ...)
  // An array of pointers (64-bit integers): element k is the address of buffer addressesOf[k]'s first
  // byte (indices into the launch's buffers), e.g. the matrices of Triton's grouped GEMM. `data` holds
  // the executor's addresses (writeVirtualAddresses, by whoever sets addressesOf: driver::bind, the
  // library API); the emulator and the GPU write their own into their copies and never hand them back.
  std::vector<int> addressesOf;

  Buffer() = default;
  Buffer(std::string n, ir::Scalar t, std::vector<int64_t> s);
  int64_t numel() const;
  double getFloat(int64_t i) const;  // decoded value of element i (floats)
  int64_t getInt(int64_t i) const;   // (integers)
  void setFloat(int64_t i, double v);  // rounds to the format
  void setInt(int64_t i, int64_t v);
  double get(int64_t i) const;  // either kind, as double
};

// The executor's address of buffer `index`'s first byte (what a pointer argument to it holds).
int64_t virtualAddress(int index);
// The contents of an array of pointers (a buffer with addressesOf) when buffer i lies at `base(i)`;
// a UserError naming the buffer when an index is out of range or its elements are not 64-bit.
std::vector<uint8_t> addressBytes(const Buffer& pointers, size_t numBuffers, const std::function<uint64_t(int)>& base);
// Writes the executor's addresses into every array of pointers among `buffers`.
void writeVirtualAddresses(std::vector<Buffer>& buffers);

// One kernel argument: a pointer to a buffer, or a scalar.
struct Arg {
  enum class Kind { Buffer, Int, Float } kind = Kind::Int;
  int buffer = -1;
  int64_t i = 0;
  double f = 0;
  static Arg buf(int b) { return Arg{Kind::Buffer, b, 0, 0}; }
  static Arg integer(int64_t v) { return Arg{Kind::Int, -1, v, 0}; }
  static Arg real(double v) { return Arg{Kind::Float, -1, 0, v}; }
};

struct LaunchOptions {
  std::array<int64_t, 3> grid{1, 1, 1};
  int threads = 0;  // 0: all cores
  uint64_t seed = 0;  // warp-specialized kernels: chooses the interleaving of warp groups
  // When set, every program's warp groups are timed by the recorder's cost model (profile/); each
  // program records into its own buffer. Null: no profiling, no cost.
  profile::Recorder* recorder = nullptr;
};

// Runs `kernel` (a function of `m`, verified) over the grid. Throws UserError for out-of-bounds
// accesses, integer division by zero and argument mismatches. Kernels of every IR level run: after
// warp specialization each wg.region of a program is a thread, arefs and mbarriers keep their exact
// semantics, TMA copies land asynchronously and async MMA results are visible only after their
// wait; deadlocks and slot races are UserErrors naming the warp group, barrier, slot, phase,
// iteration and source line.
void launch(const ir::Module& m, const ir::Func& kernel, const std::vector<Arg>& args, std::vector<Buffer>& buffers,
            const LaunchOptions& opt);

}  // namespace tawa::exec
