// The Hopper backend without a GPU: the warp-specialized GEMM, emitted as CUDA C++ and compiled for
// sm_90a by the toolkit's nvcc and ptxas, over f16 and bf16 (and fp8 e4m3/e5m2 inputs, B K-major), aref depth D in {2, 3, 4}, MMA depth
// P in {0, 1}, and the blocks 64x64x32, 128x128x64 (one consumer and two cooperative ones) and
// 128x256x64 (two cooperative consumers). Every kernel must compile with no spills and no local
// memory, and its PTX must hold the instructions of the pipeline. The same for fused attention
// (examples/attention.py: head dims 64 and 128, causal or not, D 2 or 3; and attention.tir, the
// pointer form with per-head 3-D tensor maps), whose PTX must also hold
// the quad shuffles and exp2 of the softmax. The toolkit is required: without it these tests fail,
// they do not skip. All kernels go into two translation units compiled side by
// side (and cached by content), so the whole suite costs two nvcc runs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "backends/cuda/Compiler.h"
#include "backends/cuda/Emitter.h"
#include "driver/Check.h"
#include "driver/Spec.h"
#include "ir/MathFns.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "TempDir.h"

using namespace tawa;

namespace {

// A descriptor-form GEMM C = A @ B with BMxBN blocks stepping K by BK, in the given element type
// (fp8 inputs: C is f16).
std::string gemmTir(int bm, int bn, int bk, const std::string& ty) {
  std::string cty = ty.rfind("f8", 0) == 0 ? "f16" : ty;
  std::ostringstream s;
  s << "tile.func @gemm(%a: ptr<" << ty << ">, %b: ptr<" << ty << ">, %c: ptr<" << cty << ">, %M: i32, %N: i32, %K: i32,\n"
    << "                %sam: i32, %sak: i32, %sbk: i32, %sbn: i32, %scm: i32, %scn: i32) {\n"
    << "  %zero = tile.constant {value = 0} : i32\n"
    << "  %bk = tile.constant {value = " << bk << "} : i32\n"
    << "  %bm = tile.constant {value = " << bm << "} : i32\n"
    << "  %bn = tile.constant {value = " << bn << "} : i32\n"
    << "  %pid_m = tile.program_id {axis = 0} : i32\n"
    << "  %pid_n = tile.program_id {axis = 1} : i32\n"
    << "  %off_m = tile.mul %pid_m, %bm : i32\n"
    << "  %off_n = tile.mul %pid_n, %bn : i32\n"
    << "  %a_desc = tile.make_desc %a, %M, %K, %sam, %sak : tdesc<" << bm << "x" << bk << "x" << ty << ">\n"
    << "  %b_desc = tile.make_desc %b, %K, %N, %sbk, %sbn : tdesc<" << bk << "x" << bn << "x" << ty << ">\n"
    << "  %c_desc = tile.make_desc %c, %M, %N, %scm, %scn : tdesc<" << bm << "x" << bn << "x" << cty << ">\n"
    << "  %init = tile.constant {value = 0.0} : tile<" << bm << "x" << bn << "xf32>\n"
    << "  %acc = tile.for %zero, %K, %bk, %init : tile<" << bm << "x" << bn << "xf32> {\n"
    << "  ^bb0(%k: i32, %acc_in: tile<" << bm << "x" << bn << "xf32>):\n"
    << "    %x = tile.desc_load %a_desc, %off_m, %k : tile<" << bm << "x" << bk << "x" << ty << ">\n"
    << "    %y = tile.desc_load %b_desc, %k, %off_n : tile<" << bk << "x" << bn << "x" << ty << ">\n"
    << "    %acc_next = tile.dot %x, %y, %acc_in : tile<" << bm << "x" << bn << "xf32>\n"
    << "    tile.yield %acc_next\n"
    << "  }\n"
    << "  %out = tile.cast %acc : tile<" << bm << "x" << bn << "x" << cty << ">\n"
    << "  tile.desc_store %c_desc, %out, %off_m, %off_n\n"
    << "  tile.return\n"
    << "}\n";
  return s.str();
}

struct Config {
  int bm, bn, bk, consumers, depth, mmaDepth;
  std::string ty;
  int persistent = 0;  // warp-specialize --persistent N (--group-m 8)
  std::string name() const {
    return "gemm_" + ty + "_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "_c" +
           std::to_string(consumers) + "_d" + std::to_string(depth) + "_p" + std::to_string(mmaDepth) +
           (persistent ? "_pers" + std::to_string(persistent) : "");
  }
};

std::unique_ptr<ir::Module> lowered(const Config& c) {
  auto m = ir::parseModule(gemmTir(c.bm, c.bn, c.bk, c.ty), c.name() + ".tir");
  ir::verify(*m);
  transforms::PassManager pm;
  pm.options.depth = c.depth;
  pm.options.mmaDepth = c.mmaDepth;
  pm.options.consumers = c.consumers;
  pm.options.persistent = c.persistent;
  pm.options.groupM = c.persistent ? 8 : 0;
  pm.addPipeline("canonicalize,warp-specialize,pipeline,lower-aref");
  pm.run(*m);
  return m;
}

cuda::EmitResult emit(const Config& c, bool header = true) {
  auto m = lowered(c);
  cuda::EmitOptions o;
  o.kernelName = c.name();
  o.includeHeader = header;
  return cuda::emitCudaKernel(*m, *m->funcs.front(), o);
}

// The compiled configurations: 64x64x32 and 128x128x64 with one consumer, 128x128x64 and
// 128x256x64 with two (128x256 at D = 4 needs more than 227 KB of shared memory).
std::vector<Config> configs() {
  std::vector<Config> out;
  for (const char* ty : {"f16", "bf16"})
    for (int d : {2, 3, 4})
      for (int p : {0, 1}) {
        out.push_back({64, 64, 32, 1, d, p, ty});
        out.push_back({128, 128, 64, 1, d, p, ty});
        out.push_back({128, 128, 64, 2, d, p, ty});
        if (d < 4) out.push_back({128, 256, 64, 2, d, p, ty});
      }
  // fp8 inputs (k32 wgmma, B K-major through a transposed tensor map): 64x64x64 (64B swizzle),
  // 128x128x128 and 128x256x128 cooperative (128B swizzle), e4m3 and one e5m2.
  for (int d : {2, 3}) {
    out.push_back({64, 64, 64, 1, d, 1, "f8e4m3"});
    out.push_back({128, 128, 128, 1, d, d - 2, "f8e4m3"});
    out.push_back({128, 256, 128, 2, d, 1, "f8e4m3"});
  }
  out.push_back({128, 128, 128, 2, 3, 1, "f8e5m2"});
  // Made persistent on the H200's 132 SMs (grouped tile order), with one consumer group or two
  // cooperative ones.
  out.push_back({128, 128, 64, 1, 3, 1, "f16", 132});
  out.push_back({128, 128, 64, 1, 2, 0, "bf16", 132});
  out.push_back({128, 128, 128, 1, 3, 1, "f8e4m3", 132});
  out.push_back({128, 256, 64, 2, 3, 1, "f16", 132});
  out.push_back({128, 256, 128, 2, 2, 1, "f8e4m3", 132});
  return out;
}

// The PTX of one kernel: from its .entry to the next one.
std::string entryPtx(const std::string& ptx, const std::string& kernel) {
  size_t b = ptx.find(".entry " + kernel + "(");
  if (b == std::string::npos) return "";
  size_t e = ptx.find(".entry ", b + 1);
  return ptx.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

}  // namespace

TEST(CudaToolkit, IsInstalled) {
  // Fails loudly (a UserError naming the missing tool) where the CUDA toolkit is absent.
  const auto& tk = cuda::findToolkit();
  EXPECT_NE(tk.version.find("release"), std::string::npos) << tk.version;
  // The tools it found are executables under its root, and ptxas assembles a PTX module.
  for (const std::string& tool : {tk.nvcc, tk.ptxas}) {
    EXPECT_EQ(tool.rfind(tk.root, 0), 0u) << tool << " is not under " << tk.root;
    EXPECT_TRUE(std::filesystem::is_regular_file(tool)) << tool;
  }
  auto dir = tawa::test::tempDir() / "ptxas";
  std::filesystem::create_directories(dir);
  {
    std::ofstream ptx(dir / "k.ptx");
    ptx << ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p) {\n"
           "  .reg .u64 %rd<2>;\n  .reg .u32 %r<2>;\n  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, 7;\n"
           "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
  }
  std::string cmd = tk.ptxas + " -arch=sm_90a " + (dir / "k.ptx").string() + " -o " + (dir / "k.cubin").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_GT(std::filesystem::file_size(dir / "k.cubin"), 0u);
}

TEST(CudaEmit, GemmKernelShape) {
  auto r = emit({128, 128, 64, 1, 3, 1, "f16"});
  EXPECT_EQ(r.threads, 256);
  ASSERT_EQ(r.tensorMaps.size(), 3u);
  // A: 128x64 boxes, one 128-byte swizzle span per row; B: 64x128 as two 64-column chunks.
  EXPECT_EQ(r.tensorMaps[0].boxRows, 128);
  EXPECT_EQ(r.tensorMaps[0].boxCols, 64);
  EXPECT_EQ(r.tensorMaps[0].swizzleBytes, 128);
  EXPECT_EQ(r.tensorMaps[1].boxRows, 64);
  EXPECT_EQ(r.tensorMaps[1].boxCols, 64);
  EXPECT_EQ(r.tensorMaps[2].swizzleBytes, 128);  // the staging: 128x128 in two swizzled 64-column chunks, a copy each
  EXPECT_EQ(r.tensorMaps[2].boxCols, 64);
  // Rings (3 x 16 KB + 3 x 16 KB), staging (32 KB), 6 mbarriers, alignment slack.
  EXPECT_EQ(r.smemBytes, 3 * 16384 + 3 * 16384 + 32768 + 48 + 1024);
  ASSERT_EQ(r.params.size(), 3u + 9u);
  EXPECT_EQ(r.params[0].cType, "CUtensorMap");
  EXPECT_EQ(r.params[3].name, "M");
  EXPECT_NE(r.source.find("__launch_bounds__(256, 1)"), std::string::npos);
  EXPECT_NE(r.source.find("if (wg == 0) {  // producer"), std::string::npos);
  EXPECT_NE(r.source.find("wgmma_mma_async_m64n128k16_f32_f16<1>(acc[1]"), std::string::npos);
  EXPECT_NE(r.source.find("#line "), std::string::npos);
  EXPECT_EQ(r.source.find("threadIdx"), std::string::npos);  // all through primitives.cuh
  EXPECT_EQ(r.source.find("__shared__"), std::string::npos);
  EXPECT_EQ(r.source.find("asm"), std::string::npos);
}

TEST(CudaEmit, CooperativeUsesOneBarrierPerConsumer) {
  auto r = emit({128, 256, 64, 2, 2, 1, "bf16"});
  EXPECT_EQ(r.threads, 384);
  EXPECT_NE(r.source.find("} else if (wg == 1) {  // consumer 0"), std::string::npos);
  EXPECT_NE(r.source.find("tawa::bar_sync(1, 128);"), std::string::npos);
  EXPECT_NE(r.source.find("tawa::bar_sync(2, 128);"), std::string::npos);
  EXPECT_NE(r.source.find("wgmma_mma_async_m64n256k16_f32_bf16<1>"), std::string::npos);
}

TEST(CudaEmit, Fp8GemmLoadsBKMajor) {
  auto r = emit({128, 128, 128, 1, 2, 1, "f8e4m3"});
  // k32 steps, no transpose template argument (fp8 wgmma is K-major only); 128 / 32 x 2 M-blocks.
  EXPECT_NE(r.source.find("tawa::wgmma_mma_async_m64n128k32_f32_e4m3(acc"), std::string::npos) << r.source;
  EXPECT_EQ(r.source.find("k16"), std::string::npos);
  EXPECT_NE(r.source.find("8 x wgmma m64n128k32 (A K-major, B K-major)"), std::string::npos);
  // B's tensor map walks N as rows and K innermost: extent (N, K), strides (stride_bn, stride_bk).
  ASSERT_EQ(r.tensorMaps.size(), 3u);
  const cuda::TensorMapSpec &a = r.tensorMaps[0], &b = r.tensorMaps[1], &c = r.tensorMaps[2];
  // Arguments: a 0, b 1, c 2, M 3, N 4, K 5, sam 6, sak 7, sbk 8, sbn 9.
  EXPECT_EQ(a.rows.arg, 3);
  EXPECT_EQ(a.cols.arg, 5);
  EXPECT_EQ(b.rows.arg, 4);
  EXPECT_EQ(b.cols.arg, 5);
  EXPECT_EQ(b.rowStride.arg, 9);
  EXPECT_EQ(b.colStride.arg, 8);
  EXPECT_EQ(b.boxRows, 128);
  EXPECT_EQ(b.boxCols, 128);
  EXPECT_EQ(b.swizzleBytes, 128);
  EXPECT_EQ(b.elem, ir::Scalar::F8E4M3);
  EXPECT_EQ(c.elem, ir::Scalar::F16);
  // The load of B swaps its coordinates: K first (innermost), then N.
  EXPECT_NE(r.source.find("&b_desc, k, off_n"), std::string::npos) << r.source;
}

TEST(CudaEmit, AccumulatorTooLargeIsALocatedError) {
  try {
    emit({128, 256, 64, 1, 2, 1, "f16"});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 256 registers per thread"), std::string::npos) << e.what();
    EXPECT_NE(e.hint.find("--consumers 2"), std::string::npos);
    EXPECT_EQ(*e.loc.file, "gemm_f16_128x256x64_c1_d2_p1.tir");
    EXPECT_GT(e.loc.line, 0);
  }
}

TEST(CudaEmit, SharedMemoryBudgetIsALocatedError) {
  try {
    emit({128, 256, 64, 2, 4, 1, "f16"});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory; sm_90a allows 232448"), std::string::npos) << e.what();
    EXPECT_NE(e.hint.find("--depth"), std::string::npos);
  }
}

TEST(CudaEmit, UnsupportedOpIsALocatedError) {
  // A 3-D load through pointers in the consumer's epilogue: not emitted (2-D and 1-D ones are, since 2026-12-07).
  std::string tir = gemmTir(64, 64, 32, "f16");
  tir.replace(tir.find("  %out = tile.cast"), 0, "  %p = tile.splat %c : tile<4x4x4xptr<f16>>\n  %l = tile.load %p : tile<4x4x4xf16>\n");
  auto m = ir::parseModule(tir, "bad.tir");
  ir::verify(*m);
  transforms::PassManager pm;
  pm.addPipeline("canonicalize,warp-specialize,pipeline,lower-aref");
  pm.run(*m);
  try {
    cuda::emitCudaKernel(*m, *m->funcs.front());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the CUDA backend cannot emit this"), std::string::npos) << e.what();
    EXPECT_EQ(*e.loc.file, "bad.tir");
  }
}

TEST(CudaCompile, ParsesPtxasVerbose) {
  auto u = cuda::parsePtxasVerbose(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n"
      "ptxas info    : Function properties for k1\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 2 barriers, 16 bytes smem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
      "ptxas info    : Function properties for k2\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers\n");
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].kernel, "k1");
  EXPECT_EQ(u[0].registers, 168);
  EXPECT_EQ(u[0].barriers, 2);
  EXPECT_EQ(u[0].staticSmem, 16);
  EXPECT_EQ(u[0].stack, 8);
  EXPECT_EQ(u[0].spillStores, 4);
  EXPECT_EQ(u[0].spillLoads, 12);
  EXPECT_EQ(u[1].registers, 40);
  EXPECT_EQ(u[1].stack, 0);
}

TEST(CudaCompile, GemmConfigurationsForSm90a) {
  auto all = configs();
  // Two translation units, compiled side by side (two cores).
  std::string tu[2];
  std::map<std::string, cuda::EmitResult> emitted;
  for (size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(all[i].name());
    auto r = emit(all[i], false);
    tu[i % 2] += r.source + "\n";
    emitted[r.kernelName] = r;
  }
  std::future<cuda::CompiledModule> jobs[2];
  for (int t = 0; t < 2; ++t)
    jobs[t] = std::async(std::launch::async, [src = "#include \"primitives.cuh\"\n\n" + tu[t]] { return cuda::compile(src); });
  std::map<std::string, cuda::ResourceUsage> usage;
  std::string ptx;
  for (auto& j : jobs) {
    cuda::CompiledModule cm = j.get();
    for (const auto& u : cm.usage) usage[u.kernel] = u;
    ptx += cm.ptx;
    EXPECT_EQ(cm.ptxasLog.find("arning"), std::string::npos) << cm.ptxasLog;  // e.g. serialized wgmma
  }
  for (const auto& c : all) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(usage.count(c.name()));
    const auto& u = usage.at(c.name());
    EXPECT_EQ(u.spillStores, 0);
    EXPECT_EQ(u.spillLoads, 0);
    EXPECT_EQ(u.stack, 0);
    EXPECT_GT(u.registers, 0);
    std::string k = entryPtx(ptx, c.name());
    ASSERT_FALSE(k.empty());
    for (const char* insn : {"wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier.try_wait.parity", "setmaxnreg"})
      EXPECT_NE(k.find(insn), std::string::npos) << insn;
    EXPECT_EQ(k.find(".local"), std::string::npos);  // accumulators stay in registers
    EXPECT_LE(emitted.at(c.name()).smemBytes, 232448);
  }
}

TEST(CudaEmit, CompilesAsHostCxx) {
  // The CPU emulator will compile the very same text as host C++ against its definitions of the
  // primitives: every device construct must go through primitives.cuh.
  auto r = emit({128, 128, 64, 2, 3, 1, "bf16"});
  auto dir = tawa::test::tempDir() / "host";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernel.cpp") << r.source;
  std::string cmd = "c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-parameter -I" + cuda::primitivesDir() + " " +
                    (dir / "kernel.cpp").string() + " > " + (dir / "log").string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream log(dir / "log");
  std::stringstream msg;
  msg << log.rdbuf();
  std::filesystem::remove_all(dir);
  EXPECT_EQ(rc, 0) << msg.str();
}

TEST(CudaCompile, AttentionConfigurationsForSm90a) {
  struct A {
    int dim, blockM, blockN, depth;
    bool causal;
    int consumers = 1;
  };
  const A all[] = {{64, 64, 64, 2, false},        {64, 64, 64, 3, true},           {128, 64, 64, 2, true},
                   {128, 64, 128, 2, false},      {128, 128, 128, 2, false, 2},    {128, 128, 64, 2, true, 2}};
  std::string tu = "#include \"primitives.cuh\"\n\n";
  std::vector<std::string> names;
  for (const A& a : all) {
    std::string spec = "Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=4, H:i32=16, R=262144, D=" +
                       std::to_string(a.dim) + ", N_CTX=4096, HEAD_DIM=" + std::to_string(a.dim) + ", BLOCK_M=" + std::to_string(a.blockM) +
                       ", BLOCK_N=" + std::to_string(a.blockN) + ", CAUSAL=" + (a.causal ? "True" : "False");
    transforms::PassOptions ws;
    ws.depth = a.depth;
    ws.consumers = a.consumers;
    auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/attention.py", "attn_fwd", driver::parseSpec(spec), ws, "nv");
    cuda::EmitOptions o;
    o.includeHeader = false;
    o.kernelName = "attn_d" + std::to_string(a.dim) + "_m" + std::to_string(a.blockM) + "_n" + std::to_string(a.blockN) + "_D" +
                   std::to_string(a.depth) + (a.causal ? "_causal" : "") + (a.consumers == 2 ? "_coop" : "");
    auto r = cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
    EXPECT_LE(r.smemBytes, 232448);
    tu += r.source + "\n";
    names.push_back(o.kernelName);
  }
  // The pointer form (examples/attention.tir: per-head bases, 3-D tensor maps; causal is an argument).
  for (int depth : {2, 3}) {
    const std::string t = "*fp16[64,4096,64]";
    std::string spec = "q:" + t + ", k:" + t + ", v:" + t + ", o:" + t + ", sm_scale:fp32=0.125, n_ctx:i32=4096, causal:i32=1";
    transforms::PassOptions ws;
    ws.depth = depth;
    auto nv = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/attention.tir", "", driver::parseSpec(spec), ws, "nv");
    cuda::EmitOptions o;
    o.includeHeader = false;
    o.kernelName = "attn_ptr_D" + std::to_string(depth);
    auto r = cuda::emitCudaKernel(*nv.module, *nv.kernel, o);
    EXPECT_EQ(r.tensorMaps.at(0).rank(), 3);
    tu += r.source + "\n";
    names.push_back(o.kernelName);
  }
  cuda::CompiledModule cm = cuda::compile(tu);
  EXPECT_EQ(cm.ptxasLog.find("arning"), std::string::npos) << cm.ptxasLog;
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    auto u = std::find_if(cm.usage.begin(), cm.usage.end(), [&](const cuda::ResourceUsage& x) { return x.kernel == n; });
    ASSERT_NE(u, cm.usage.end());
    EXPECT_EQ(u->spillStores, 0);
    EXPECT_EQ(u->spillLoads, 0);
    EXPECT_EQ(u->stack, 0);
    std::string k = entryPtx(cm.ptx, n);
    ASSERT_FALSE(k.empty());
    for (const char* insn : {"wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier.try_wait.parity", "setmaxnreg", "shfl.sync.bfly",
                             "ex2.approx", "max.f32"})  // the row max: tl.max ignores NaN (max.f32), as Triton's
      EXPECT_NE(k.find(insn), std::string::npos) << insn;
    EXPECT_EQ(k.find(".local"), std::string::npos);
  }
}

TEST(CudaCompile, NvrtcAndNvccBothBuildTheKernel) {
  // The in-process NVRTC path (to PTX, then ptxas) and the nvcc fallback build the same kernel with
  // the same resources; each names itself in the result. NVRTC is part of the toolkit: it must load.
  std::string why;
  ASSERT_FALSE(cuda::nvrtcVersion(&why).empty()) << why;
  auto r = emit({128, 128, 64, 1, 3, 1, "f16"});
  auto dir = tawa::test::tempDir() / "frontends";
  cuda::CompiledModule m[2];
  const char* fe[] = {"nvrtc", "nvcc"};
  for (int i = 0; i < 2; ++i) {
    cuda::CompileOptions o;
    o.frontend = fe[i];
    o.cacheDir = dir.string();
    m[i] = cuda::compile(r.source, o);
    EXPECT_EQ(m[i].frontend, fe[i]);
    EXPECT_NE(m[i].ptx.find("wgmma.mma_async"), std::string::npos);
    ASSERT_EQ(m[i].usage.size(), 1u);
    EXPECT_EQ(m[i].usage[0].spillStores, 0);
  }
  EXPECT_NE(m[0].key, m[1].key);  // the front end is part of the cache key
  EXPECT_EQ(m[0].usage[0].registers, m[1].usage[0].registers);
  cuda::CompileOptions bad;
  bad.frontend = "clang";
  EXPECT_THROW(cuda::compile(r.source, bad), UserError);
  std::filesystem::remove_all(dir);
}

TEST(CudaCompile, EveryWgmmaWrapperAssembles) {
  // Each wrapper of primitives.cuh (m64nNk16 f16/bf16 from shared memory or registers, m64nNk32
  // e4m3/e5m2; N in 16..256) in one kernel: ptxas must accept every one, and the PTX must hold each.
  std::ostringstream k;
  k << "#include \"primitives.cuh\"\nextern \"C\" __global__ void __launch_bounds__(128, 1) all_wgmma(const uint64_t da, const uint64_t db) {\n";
  int count = 0;
  for (int n : {16, 32, 64, 128, 256}) {
    k << "  { float d[" << n / 2 << "] = {};\n    tawa::wgmma_fence();\n";
    for (const char* ty : {"f16", "bf16"}) {
      k << "    tawa::wgmma_mma_async_m64n" << n << "k16_f32_" << ty << "<1>(d, da, db, 1);\n";
      k << "    tawa::wgmma_mma_async_rs_m64n" << n << "k16_f32_" << ty << "<0>(d, 1u, 2u, 3u, 4u, db, 1);\n";
      count += 2;
    }
    for (const char* ty : {"e4m3", "e5m2"}) {
      k << "    tawa::wgmma_mma_async_m64n" << n << "k32_f32_" << ty << "(d, da, db, 0);\n";
      ++count;
    }
    k << "    tawa::wgmma_commit_group();\n    tawa::wgmma_wait_group<0>();\n    if (d[0] == 1.5f) tawa::bar_sync(1, 128); }\n";
  }
  k << "}\n";
  cuda::CompiledModule cm = cuda::compile(k.str());
  size_t found = 0;
  for (size_t p = 0; (p = cm.ptx.find("wgmma.mma_async.sync.aligned", p)) != std::string::npos; ++p) ++found;
  EXPECT_EQ(found, static_cast<size_t>(count));
  for (int n : {16, 32, 64, 128, 256})
    for (const char* shape : {"k16.f32.f16.f16", "k16.f32.bf16.bf16", "k32.f32.e4m3.e4m3", "k32.f32.e5m2.e5m2"})
      EXPECT_NE(cm.ptx.find("m64n" + std::to_string(n) + shape), std::string::npos) << n << shape;
}

// tile.math's functions: the primitives header lists, for the device and the emulator alike, exactly
// the functions of ir/MathFns.h, each with its number of operands.
TEST(CudaPrimitives, MathFunctionsMatchTheTable) {
  std::ifstream in(std::filesystem::path(cuda::primitivesDir()) / "primitives.cuh");
  ASSERT_TRUE(in) << "cannot read primitives.cuh in " << cuda::primitivesDir();
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto listed = [&](const std::string& macro) {
    std::set<std::string> names;
    size_t at = text.find("#define " + macro + "(X)");
    EXPECT_NE(at, std::string::npos) << macro;
    if (at == std::string::npos) return names;
    size_t end = text.find('\n', at);  // the macro's last line is the first not ending in a backslash
    while (end != std::string::npos && text[end - 1] == '\\') end = text.find('\n', end + 1);
    std::string body = text.substr(at, end - at);
    std::regex x(R"(X\(([a-z0-9]+)\))");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), x); it != std::sregex_iterator(); ++it) names.insert((*it)[1]);
    return names;
  };
  std::set<std::string> unary, binary, ternary;
  for (const auto& f : tawa::ir::mathFns()) (f.arity == 1 ? unary : f.arity == 2 ? binary : ternary).insert(std::string(f.name));
  EXPECT_EQ(listed("TAWA_MATH_UNARY"), unary);
  EXPECT_EQ(listed("TAWA_MATH_BINARY"), binary);
  EXPECT_EQ(listed("TAWA_MATH_TERNARY"), ternary);
}
