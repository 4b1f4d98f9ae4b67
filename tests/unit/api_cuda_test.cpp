// The library API's GPU paths (toDevice, run with RunOptions::check, bench, DeviceInputs::download)
// over the recording driver of tests/lit/cuda_runtime/Inputs/fake_libcuda.c: its memory is host
// memory and its copies are real, but it runs no kernel, so a GPU "result" is the inputs left as they
// were. The driver is opened once per process, so each test body runs in a fresh process (a death
// test in the threadsafe style re-executes this binary) with $TAWA_LIBCUDA pointing at the driver
// built there; a failed expectation there exits 1 with the reason on stderr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "TempDir.h"
#include "tawa/tawa.h"

namespace {

const std::string kSrc = TAWA_SOURCE_DIR;

const char* kGemmSpec =
    "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=96, N:i32=80, K:i32=40, stride_am:i32=40, stride_ak:i32=1, stride_bk:i32=80, "
    "stride_bn:i32=1, stride_cm:i32=80, stride_cn:i32=1";

const char* kGroupedSpec =
    "a_ptrs:*i64 = addresses(a0, a1), b_ptrs:*i64 = addresses(b0, b1), c_ptrs:*i64 = addresses(c0, c1), a0:*fp16[37,40], "
    "b0:*fp16[40,70], c0:*fp32[37,70], a1:*fp16[33,96], b1:*fp16[96,50], c1:*fp32[33,50], dims:*i32[2, 3] = values(37,70,40, "
    "33,50,96), BM=32, BN=32, BK=16";

void require(bool ok, const std::string& why) {
  if (ok) return;
  std::cerr << "FAILED: " << why << "\n";
  std::exit(1);
}

// The message of the tawa::Error `f` throws ("" when it throws none).
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tawa::Error& e) {
    return e.what();
  }
  return "";
}

// Builds the recording driver, points the process at it, and runs `body`; exits 0 when it returns.
void onRecordingDriver(const std::function<void()>& body) {
  const std::string lib = (tawa::test::tempDir() / "libcuda.so.1").string();
  const std::string cc = "cc -shared -fPIC -o " + lib + " " + kSrc + "/tests/lit/cuda_runtime/Inputs/fake_libcuda.c";
  require(std::system(cc.c_str()) == 0, "building the recording driver: " + cc);
  setenv("TAWA_LIBCUDA", lib.c_str(), 1);
  setenv("TAWA_FAKE_CUDA_RUN", "1", 1);
  try {
    body();
  } catch (const std::exception& e) {
    require(false, std::string("unexpected exception: ") + e.what());
  }
  std::exit(0);
}

#define ON_RECORDING_DRIVER(...)                                                  \
  do {                                                                             \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                                \
    EXPECT_EXIT(onRecordingDriver(__VA_ARGS__), ::testing::ExitedWithCode(0), ""); \
  } while (0)

uint64_t seed() {
  static const uint64_t s = std::random_device{}();
  return s;
}

}  // namespace

// toDevice copies every buffer once; a launch leaves them as the driver left them; the unchecked
// launch reports the grid it launched; bench times each launch; download brings the buffers back.
TEST(ApiCuda, ToDeviceRunBenchAndDownload) {
  ON_RECORDING_DRIVER([] {
    const tawa::GpuInfo g = tawa::gpu();
    require(g.ccMajor == 9 && g.ccMinor == 0 && g.multiprocessors == 132, "the recording driver's device: " + g.name);
    const tawa::Kernel k = tawa::Kernel::load(kSrc + "/examples/matmul_desc.tir", "", kGemmSpec);
    tawa::Inputs in = k.inputs("cdiv(M, 64), cdiv(N, 64)", seed());
    const std::vector<std::vector<uint8_t>> before = {in.buffers[0].data, in.buffers[1].data, in.buffers[2].data};
    const tawa::DeviceInputs dev = tawa::toDevice(in);
    require(dev.arrays.size() == 3 && dev.args.size() == in.args.size(), "a device array per buffer, an argument per parameter");
    const tawa::Array& da = std::get<tawa::Array>(dev.args[0]);
    require(da.data == dev.arrays[0].data() && da.data != in.buffers[0].data.data(), "the device argument is the device array");
    const tawa::RunStats st = k.run(tawa::Backend::Cuda, dev.args, dev.grid);
    require(st.launched == std::array<int64_t, 3>{2, 2, 1}, "the grid launched");
    require(st.comparisons.empty(), "an unchecked launch compares nothing");
    const std::vector<double> ms = k.bench(dev.args, dev.grid, 1, 4);
    require(ms.size() == 4 && ms[0] == 1.0, "bench: a time per timed launch (this driver says 1 ms)");
    for (auto& b : in.buffers) std::fill(b.data.begin(), b.data.end(), uint8_t{0});
    dev.download(in);
    for (size_t i = 0; i < 3; ++i) require(in.buffers[i].data == before[i], "buffer " + in.buffers[i].name + " read back as it was copied in");
    require(k.flops() == 2.0 * 96 * 80 * 40, "2*M*N*K");
  });
}

// A checked launch reads the inputs back first and compares the GPU's buffers with the executor's
// run on them: here the GPU computed nothing, so C differs, located at the kernel.
TEST(ApiCuda, CheckedLaunchComparesWithTheExecutor) {
  ON_RECORDING_DRIVER([] {
    const tawa::Kernel k = tawa::Kernel::load(kSrc + "/examples/matmul_desc.tir", "", kGemmSpec);
    tawa::Inputs in = k.inputs("cdiv(M, 64), cdiv(N, 64)", seed());
    const tawa::DeviceInputs dev = tawa::toDevice(in);
    tawa::RunOptions ro;
    ro.check = true;
    const std::string e = errorOf([&] { k.run(tawa::Backend::Cuda, dev.args, dev.grid, ro); });
    require(e.find("matmul_desc.tir:5:1: error: the GPU's result differs from the CPU executor's: buffer c,") != std::string::npos, e);
    // A kernel that writes nothing (no element in range) agrees: the comparison's lines, one per array.
    const tawa::Kernel add = tawa::Kernel::load(kSrc + "/examples/vector_add.py", "add_kernel",
                                                "x_ptr:*fp32[64], y_ptr:*fp32[64], out_ptr:*fp32[64], n_elements:i32=0, BLOCK_SIZE=64");
    tawa::Inputs ain = add.inputs("1", seed());
    const tawa::DeviceInputs adev = tawa::toDevice(ain);
    const tawa::RunStats st = add.run(tawa::Backend::Cuda, adev.args, adev.grid, ro);
    require(st.comparisons.find("check out_ptr: matches the CPU executor (f32") != std::string::npos, st.comparisons);
    require(st.comparisons.find("check x_ptr: matches") != std::string::npos, st.comparisons);
  });
}

// Arrays of pointers: toDevice writes the pointees' device addresses; the checked launch reads the
// pointees too (c0 differs), and an array that holds another address than its pointee's is an
// error naming the element and both addresses.
TEST(ApiCuda, ArraysOfPointersOnTheGpu) {
  ON_RECORDING_DRIVER([] {
    const tawa::Kernel k = tawa::Kernel::load(kSrc + "/tests/lit/frontend/Inputs/pointer_arrays.py", "grouped_gemm", kGroupedSpec);
    tawa::Inputs in = k.inputs("4, 2", seed());
    tawa::DeviceInputs dev = tawa::toDevice(in);
    uint64_t held[2];
    dev.arrays[0].download(held);
    const tawa::Array& ptrs = std::get<tawa::Array>(dev.args[0]);
    require(ptrs.pointees.size() == 2 && held[0] == reinterpret_cast<uint64_t>(ptrs.pointees[0].data) &&
                held[1] == reinterpret_cast<uint64_t>(ptrs.pointees[1].data),
            "a_ptrs holds its pointees' device addresses");
    tawa::RunOptions ro;
    ro.check = true;
    std::string e = errorOf([&] { k.run(tawa::Backend::Cuda, dev.args, dev.grid, ro); });
    require(e.find("error: the GPU's result differs from the CPU executor's: buffer c0,") != std::string::npos, e);
    held[1] += 256;
    dev.arrays[0].upload(held);
    e = errorOf([&] { k.run(tawa::Backend::Cuda, dev.args, dev.grid, ro); });
    require(e.find("argument 0 ('a_ptrs'), an array of pointers on the GPU: element 1 holds 0x") != std::string::npos, e);
    require(e.find("but the array it names is at 0x") != std::string::npos, e);
  });
}
