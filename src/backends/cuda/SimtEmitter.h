// emit-cuda-simt: prints a CUDA C++ kernel for sm_90a from a tile program that has no
// warp-specialized form (row-wise and element-wise kernels: softmax, layer-norm, vector add; and the
// pointer tl.dot kernels the warp-specialized path stops at), written only against primitives.cuh
// like the warp-specialized emitter, so the CPU emulator runs the same text.
//   requires: verified, canonicalized tile IR; tiles
//     of any rank (pointers, integers, floats, i1); ops: program_id, num_programs, constant, arange,
//     splat, expand_dims, reshape, broadcast, permute, slice, element-wise arithmetic, comparisons, select,
//     casts, math, addptr, masked load and store of pointer tiles and of scalars, atomics, barriers,
//     tensor descriptors made in the kernel (tile.make_desc; desc_load reads each element in the
//     descriptor's shape, zero outside it, and desc_store writes only those, as TMA does),
//     tile.reduce and tile.scan of f32/i32 tiles along any axis, 2-D tile.dot, tile.assume,
//     tile.for with carried values, tile.if, tile.while (a scalar condition), tile.return.
//   guarantees: one `extern "C" __global__ __launch_bounds__(128, 1)` kernel, one block of 128
//     threads (one warp group) per program of the grid, whose parameters are the IR function's
//     arguments in order (pointers as raw device pointers, scalars by value). The block has T
//     threads, 128 to 1024, enough that the largest tile is about 32 entries per thread. A tile of N
//     elements is spread over the threads cyclically: thread t holds elements t, t + T, ... as a
//     register array of ceil(N / T) entries indexed by unrolled constants (lanes past N, when N < T,
//     hold nothing and never load, store or reduce). A tile of higher rank is spread the same way by its
//     row-major element index, so expand_dims and reshape move nothing. A reduction of a 1-D tile
//     combines each thread's entries, the warp through shuffles, and the T / 32 warps (pairwise, in
//     one order) through a word per warp (at least 16 bytes) of the dynamic shared-memory buffer. Broadcast, permute, and reductions and scans along an axis
//     of a tile of rank >= 2 read the source from shared memory (1-D scans use shuffles): every
//     thread writes its entries to the staging area after those words, the block waits, each
//     result element is read (or combined along the axis, in order, so every schedule gives the
//     same bits) at its index, and the block waits again before the area is reused; the dynamic
//     shared memory grows by the largest staged tile (at most 200 KiB: a larger one is a located
//     error).
//     tile.dot stages both operands (B after A). f16 and bf16 operands with an f32 result, 8-bit
//     integers with an i32 result, and f32 operands of a tf32 dot (M a multiple of
//     16, N of 8, K of 16, 8 for tf32: every Triton dot of them) run on the tensor cores: the
//     accumulator goes to an array of sums after B, each warp takes its 16x8 tiles in turn through
//     mma.sync (m16n8k16; m16n8k8 for tf32), and every thread reads its elements back. Other
//     operands (ieee f32, f8, f64) sum each result element's products in f32 (i32 for integers),
//     k in order, from the accumulator operand, rounding once: FMA units.
//     A scalar store is made by thread 0 only. tile.for's num_stages is ignored (no software
//     pipelining on this path). `#line` directives go back to the kernel source. Anything else is
//     a UserError located at the op.
//   runs: in `tawa compile --target sm_90a` and `tawa run --backend cuda|emu` for kernels that
//     driver::simtOnly picks (no tile.dot, no tensor descriptor), and for tl.dot and descriptor kernels
//     the warp-specialized path cannot take (with a warning), through driver::emitForTarget.
#pragma once

#include "backends/cuda/Emitter.h"
#include "ir/IR.h"

namespace tawa::cuda {

EmitResult emitSimtKernel(const ir::Module& m, const ir::Func& kernel, const EmitOptions& opt = {});

}  // namespace tawa::cuda
