// Executor benchmarks: f16 GEMM 1024^3 through the CPU executor, in the pointer-arithmetic and the
// tensor-descriptor forms of examples/, reported as GFLOP/s (2*M*N*K per run). Figures go into
// BENCHMARKS.md; nothing here passes or fails on time.
#include <benchmark/benchmark.h>

#include "backends/cuda/Emitter.h"
#include "driver/Check.h"
#include "driver/Launch.h"
#include "driver/Spec.h"
#include "frontend/Frontend.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"

namespace {

using namespace tawa;

void runGemm(benchmark::State& state, const std::string& file, const char* grid, int block) {
  const int64_t n = state.range(0);
  std::string s = std::to_string(n);
  auto spec = driver::parseSpec("a:*fp16[" + s + "," + s + "], b:*fp16[" + s + "," + s + "], c:*fp16[" + s + "," + s +
                                "], M:i32=" + s + ", N:i32=" + s + ", K:i32=" + s + ", stride_am:i32=" + s +
                                ", stride_ak:i32=1, stride_bk:i32=" + s + ", stride_bn:i32=1, stride_cm:i32=" + s +
                                ", stride_cn:i32=1, BLOCK_M=" + std::to_string(block) + ", BLOCK_N=" + std::to_string(block));
  auto lk = driver::loadKernel(std::string(TAWA_SOURCE_DIR) + "/" + file, "", spec);
  transforms::PassManager pm;
  pm.add("canonicalize");
  pm.run(*lk.module);
  auto bound = driver::bind(*lk.kernel, spec, grid, 42);
  exec::LaunchOptions opt;
  opt.grid = bound.grid;
  for (auto _ : state) exec::launch(*lk.module, *lk.kernel, bound.args, bound.buffers, opt);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// 64x64x32 blocks, as in examples/.
void BM_ExecGemmF16_Ptr64(benchmark::State& state) {
  runGemm(state, "examples/matmul_ptr.tir", "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)", 64);
}
void BM_ExecGemmF16_Desc64(benchmark::State& state) {
  runGemm(state, "examples/matmul_desc.tir", "cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)", 64);
}
// 128x128x64 blocks.
void BM_ExecGemmF16_Desc128(benchmark::State& state) {
  runGemm(state, "examples/matmul_desc_128.tir", "cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)", 128);
}

BENCHMARK(BM_ExecGemmF16_Ptr64)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);
BENCHMARK(BM_ExecGemmF16_Desc64)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);
BENCHMARK(BM_ExecGemmF16_Desc128)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

// The same descriptor-form GEMM after warp-specialize + pipeline + lower-aref (D = 3, P = 1): its
// producer and consumer run as threads under the seeded scheduler, with TMA and async MMA modelled.
void BM_ExecWsGemmF16_Desc64(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::string s = std::to_string(n);
  auto spec = driver::parseSpec("a:*fp16[" + s + "," + s + "], b:*fp16[" + s + "," + s + "], c:*fp16[" + s + "," + s +
                                "], M:i32=" + s + ", N:i32=" + s + ", K:i32=" + s + ", stride_am:i32=" + s +
                                ", stride_ak:i32=1, stride_bk:i32=" + s + ", stride_bn:i32=1, stride_cm:i32=" + s +
                                ", stride_cn:i32=1");
  transforms::PassOptions opt;
  opt.depth = 3;
  opt.mmaDepth = 1;
  auto lk = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/matmul_desc.tir", "", spec, opt, "nv");
  auto bound = driver::bind(*lk.kernel, spec, "cdiv(M, 64), cdiv(N, 64)", 42);
  exec::LaunchOptions lo;
  lo.grid = bound.grid;
  lo.seed = 1;
  for (auto _ : state) exec::launch(*lk.module, *lk.kernel, bound.args, bound.buffers, lo);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_ExecWsGemmF16_Desc64)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

// The warp-specialization pipeline's own cost (block-access, warp-specialize, pipeline, lower-aref),
// from parsed and canonicalized tile IR: arg 0 is the descriptor GEMM, arg 1 the attention forward.
void BM_WarpSpecializePipeline(benchmark::State& state) {
  const char* file = state.range(0) == 0 ? "/examples/matmul_desc.tir" : "/examples/attention.tir";
  for (auto _ : state) {
    state.PauseTiming();
    auto m = ir::parseFile(std::string(TAWA_SOURCE_DIR) + file);
    ir::verify(*m);
    transforms::PassManager canon;
    canon.add("canonicalize");
    canon.run(*m);
    state.ResumeTiming();
    transforms::PassManager pm;
    pm.addPipeline("block-access,warp-specialize,pipeline,lower-aref");
    pm.run(*m);  // includes the verifier after every pass (TAWA_VERIFY_EACH)
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_WarpSpecializePipeline)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Everything tawa itself does to turn a kernel into CUDA C++ for sm_90a (front end excluded):
// canonicalize, block-access, warp-specialize, pipeline, lower-aref and emission, for the
// 128x128x64 cooperative GEMM. nvcc/ptxas are not included: their time is reported by
// `tawa compile --target sm_90a --resource-usage`.
void BM_PassesAndEmitGemm128(benchmark::State& state) {
  auto spec = driver::parseSpec("");
  transforms::PassOptions opt;
  opt.depth = 3;
  opt.consumers = 2;
  for (auto _ : state) {
    auto lk = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/matmul_desc_128.tir", "", spec, opt, "nv");
    auto r = cuda::emitCudaKernel(*lk.module, *lk.kernel);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PassesAndEmitGemm128)->Unit(benchmark::kMicrosecond);

// The same for fused attention (examples/attention.py: head dim 128, causal, 64-row query blocks,
// 64-key blocks, D = 2), front end included since the kernel is Python: read, lower, specialize, emit.
void BM_FrontendPassesAndEmitAttention(benchmark::State& state) {
  auto spec = driver::parseSpec("Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=4, "
                                "H:i32=16, R=262144, D=128, N_CTX=4096, HEAD_DIM=128, BLOCK_M=64, BLOCK_N=64, CAUSAL=True");
  transforms::PassOptions opt;
  opt.depth = 2;
  for (auto _ : state) {
    auto lk = driver::specialize(std::string(TAWA_SOURCE_DIR) + "/examples/attention.py", "attn_fwd", spec, opt, "nv");
    auto r = cuda::emitCudaKernel(*lk.module, *lk.kernel);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FrontendPassesAndEmitAttention)->Unit(benchmark::kMicrosecond);

// The Triton front end: read examples/attention.py and lower attn_fwd (causal) to verified tile IR.
void BM_FrontendAttention(benchmark::State& state) {
  auto spec = driver::parseSpec("Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=1, "
                                "H:i32=2, R=256, D=64, N_CTX=128, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=32, CAUSAL=True");
  for (auto _ : state) {
    auto m = frontend::compileTriton(std::string(TAWA_SOURCE_DIR) + "/examples/attention.py", "attn_fwd", spec);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_FrontendAttention)->Unit(benchmark::kMicrosecond);

// Parsing, verifying and canonicalizing the attention example (the text front end's cost).
void BM_ParseVerifyCanonicalizeAttention(benchmark::State& state) {
  for (auto _ : state) {
    auto m = ir::parseFile(std::string(TAWA_SOURCE_DIR) + "/examples/attention.tir");
    ir::verify(*m);
    transforms::PassManager pm;
    pm.add("canonicalize");
    pm.run(*m);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ParseVerifyCanonicalizeAttention)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
