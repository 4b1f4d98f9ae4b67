// The cost model that times the CPU executor's events: what each op of a warp-specialized kernel
// costs on an H100/H200-class SM, in SM clock cycles. Every figure that comes out of it is
// *modelled*, never measured, and is labelled so wherever it is shown. The same figures drive the
// CPU emulator's clock64 for kernels emitted with --profile (TawaEmuCostModel in
// src/backends/emu/EmuAbi.h; how each primitive advances it: src/backends/emu/EmuRuntime.h).
//
// The numbers (approximate; the defaults are an H200 SXM):
//
//   quantity                          value              source / reasoning
//   --------------------------------  -----------------  ---------------------------------------------
//   SM clock                          1.98 GHz           H100/H200 SXM max boost clock (NVIDIA H100
//                                                        datasheet; H200 product brief)
//   SMs                               132                H100/H200 SXM (NVIDIA Hopper whitepaper)
//   HBM bandwidth                     4.8 TB/s           H200 SXM HBM3e (NVIDIA H200 product brief);
//                                                        shared evenly: 4.8e12 / 132 / 1.98e9
//                                                        = 18.4 B/clk per SM
//   TMA load latency                  700 cycles         global -> shared round trip, 600-800 cycles
//                                                        measured for Hopper (Luo et al., "Benchmarking
//                                                        and Dissecting the Nvidia Hopper GPU
//                                                        Architecture", IPDPS 2024)
//   TMA transfer                      bytes / 18.4 clk   after the latency; the SM's copies share its
//                                                        bandwidth, one after another (a per-SM pipe)
//   TMA issue                         40 cycles          one elected thread builds and issues the
//                                                        cp.async.bulk.tensor (approximate)
//   wgmma f16/bf16 dense              2*M*N*K/4096 clk   2048 FMA = 4096 flop per clock per SM: 989
//                                                        TFLOP/s dense f16 = 132 SMs x 1.83 GHz x 4096
//                                                        (Hopper whitepaper). (A100 was 1024 FMA/clk.)
//                                                        fp8 runs twice as fast, tf32 half as fast.
//   wgmma issue                       20 cycles          per nv.wgmma (fence + descriptor setup)
//   wgmma wait                        10 cycles          wgmma.wait_group when already complete
//   tensor core                       one per SM         the four sub-cores act together for a warp
//                                                        group's wgmma, so two consumer warp groups'
//                                                        MMAs take turns
//   mbarrier arrive / expect_tx       20 cycles          shared-memory atomic (Luo et al. 2024: tens
//                                                        of cycles)
//   mbarrier wait                     30 cycles          try_wait.parity poll and wake-up, added after
//                                                        the awaited phase completed
//   fp32 elementwise                  1 clk / 128 elem   128 FP32 lanes per SM (4 x 32), one warp group
//                                                        spans all four sub-partitions (CUDA C
//                                                        Programming Guide, arithmetic throughput,
//                                                        cc 9.0: 128 results/clk/SM)
//   exp2, exp, log, sqrt, rsqrt, div  8 clk / 128 elem   MUFU: 16 results/clk/SM (same table)
//   conversions (cast)                2 clk / 128 elem   64 results/clk/SM for 32-bit -> 16-bit (same
//                                                        table, approximate)
//   reduce                            n/128 + 32 clk     lane work plus warp shuffles and a cross-warp
//                                                        exchange through shared memory (approximate)
//   scalar (address, loop) op         1 cycle            one integer instruction, uniform datapath
//   shared -> registers               bytes / 128 + 30   128 B/clk shared-memory bandwidth per SM
//   TMA store                         bytes/128 + 40 +   registers -> shared staging, issue, then the
//                                     700 + bytes/18.4   copy completes before the block retires
//
// Blocks: one block per SM at a time (warp-specialized kernels fill shared memory); program p runs
// on SM p % 132, and an SM's programs run one after another in program order.
#pragma once

#include <cstdint>
#include <string>

#include "ir/IR.h"

namespace tawa::profile {

struct CostModel {
  std::string device = "H200 SXM (modelled)";
  double clockGHz = 1.98;
  int sms = 132;
  double hbmBytesPerSec = 4.8e12;
  double tmaLatency = 700;
  double tmaIssue = 40;
  double flopsPerClkPerSM = 4096;  // f16/bf16 dense; fp8 x2, tf32 / f32 x0.5
  double mmaIssue = 20;
  double mmaWait = 10;
  double arrive = 20;
  double waitWake = 30;
  double aluPerClk = 128;   // fp32 / int elementwise results per clock per SM
  double mufuPerClk = 16;   // exp2, log2, rsqrt, ... per clock per SM
  double cvtPerClk = 64;    // conversions per clock per SM
  double reduceExtra = 32;  // shuffles and cross-warp exchange of a reduction
  double scalarOp = 1;
  double smemBytesPerClk = 128;
  double smemLatency = 30;

  static CostModel h200() { return CostModel{}; }

  // Per-SM share of the memory bandwidth, bytes per cycle.
  double bytesPerClkPerSM() const { return hbmBytesPerSec / sms / (clockGHz * 1e9); }
  double cyclesPerUs() const { return clockGHz * 1e3; }
  // Device ceilings.
  double peakFlops() const { return flopsPerClkPerSM * sms * clockGHz * 1e9; }
  double peakBytes() const { return hbmBytesPerSec; }

  // Cycles of a wgmma of an MxK by KxN product with `in` the input element type.
  double mmaCycles(int64_t m, int64_t n, int64_t k, ir::Scalar in) const;
  // Cycles one warp group spends on an ordinary (non-synchronizing) op; `numel` elements of the
  // result (or of the operand for reductions and stores).
  double opCycles(const ir::Op& op) const;
  // Cycles of moving `bytes` through this SM's share of the memory bandwidth.
  double transferCycles(double bytes) const { return bytes / bytesPerClkPerSM(); }
};

}  // namespace tawa::profile
