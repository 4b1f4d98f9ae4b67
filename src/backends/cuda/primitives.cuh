// The device primitives of tawa's CUDA backend: every device-specific construct that emitted
// kernels use goes through this header, one small wrapper per PTX instruction, named after it.
// Emitted code never touches threadIdx, __shared__ arrays or inline assembly itself, so the same
// text compiles unchanged as host C++ against a host implementation of these functions (the CPU
// emulator). Under nvcc/NVRTC (__CUDACC__) the wrappers are inline PTX for sm_90a; otherwise this
// header includes the emulator's host definitions (../emu/EmuRuntime.h).
//
// Conventions: shared-memory operands are generic pointers into the block's dynamic buffer;
// wrappers convert them to shared-window addresses. Arguments that PTX needs as immediates are
// template parameters. Facts are from the PTX ISA 8.7 (mbarrier, cp.async.bulk.tensor, wgmma,
// setmaxnreg, bar, elect) and the CUDA driver API (CUtensorMap).
#pragma once

#if defined(__CUDACC__)

#if defined(__CUDACC_RTC__)
// NVRTC has no C library headers: the fixed-width integers and the driver API's 128-byte tensor map
// (passed by value as a __grid_constant__ parameter, read only by TMA) are declared here.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};
#else
#include <cuda.h>        // CUtensorMap
#include <stdint.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#define TAWA_DEVICE __device__ __forceinline__
// Full unrolling of the loops over accumulator registers: they must be indexed by constants.
#define TAWA_UNROLL _Pragma("unroll")
// Partial unrolling of a loop whose body indexes no register array (an operand staged element by
// element): its live values stay a few iterations' worth.
#define TAWA_UNROLL_4 _Pragma("unroll 4")
#define TAWA_LAYOUT __device__ __forceinline__

#else  // host C++ (the emulator, and tests of the layouts below)

#include <cstdint>
#define TAWA_LAYOUT inline

#endif

// ---- layouts: one definition for the device and the CPU emulator, pinned by unit tests to the PTX
// ISA 8.7's figures (tests/unit/layout_test.cpp)
namespace tawa::layout {

// The accumulator fragment of wgmma .m64nNk16 / .m64nNk32 with f32 D (PTX ISA, "Register fragments
// and shared memory matrix layouts", the D figure): register i of warp-group thread t holds row
// 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2 * (t % 4) + i % 2. The A
// fragment of an f16/bf16 .m64nNk16 from registers has the same layout over its 64x16 tile.
TAWA_LAYOUT int acc_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
TAWA_LAYOUT int acc_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }

// The 64-bit shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the
// start address, 16-29 the leading and 32-45 the stride byte offset (each encoded as
// (x & 0x3FFFF) >> 4), base offset 0 in bits 49-51 (patterns start on their repeat boundary), the
// swizzle mode in bits 62-63 (0 none, 1 128B, 2 64B, 3 32B).
TAWA_LAYOUT uint64_t smem_desc(uint32_t start, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle_mode) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((start & 0x3FFFFu) >> 4);
  d |= static_cast<uint64_t>((lbo_bytes & 0x3FFFFu) >> 4) << 16;
  d |= static_cast<uint64_t>((sbo_bytes & 0x3FFFFu) >> 4) << 32;
  d |= static_cast<uint64_t>(swizzle_mode & 3u) << 62;
  return d;
}

// Byte offset `o` from a 1024-byte-aligned base with the TMA / wgmma shared-memory swizzle of SWZ
// bytes applied (the 16-byte unit index XOR the row within the pattern, emu::swizzle's): where a
// swizzled TMA box keeps the bytes a row-major box keeps at `o`. For the threads that write what a
// TMA store then reads (the epilogue's staging).
template <int SWZ>
TAWA_LAYOUT uint32_t swizzle_offset(uint32_t o) {
  return o ^ (((o >> 7) & (SWZ == 128 ? 7u : SWZ == 64 ? 3u : SWZ == 32 ? 1u : 0u)) << 4);
}

}  // namespace tawa::layout

// ---- numerics shared by the device and the CPU emulator
namespace tawa::numerics {

// The bits of an f32 rounded to tf32 (10 mantissa bits), to nearest, ties away from zero, as
// cvt.rna.tf32.f32 and the executor's ir::roundTf32 do; infinities and NaN unchanged.
TAWA_LAYOUT uint32_t round_tf32_bits(uint32_t u) {
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  return (u + 0x1000u) & ~0x1fffu;  // half of the dropped bits' unit added to the magnitude, then cut
}

}  // namespace tawa::numerics

#if defined(__CUDACC__)

namespace tawa {

using f16 = __half;
using bf16 = __nv_bfloat16;
// fp8 elements (loads, stores and conversions on the SIMT path; no arithmetic): their bits.
struct fp8e4m3 {
  uint8_t bits;
};
struct fp8e5m2 {
  uint8_t bits;
};

// ---- thread, warp and block indices

TAWA_DEVICE int thread_idx() { return static_cast<int>(threadIdx.x); }  // kernels are 1-D blocks
TAWA_DEVICE int block_idx_x() { return static_cast<int>(blockIdx.x); }
TAWA_DEVICE int block_idx_y() { return static_cast<int>(blockIdx.y); }
TAWA_DEVICE int block_idx_z() { return static_cast<int>(blockIdx.z); }
TAWA_DEVICE int grid_dim_x() { return static_cast<int>(gridDim.x); }
TAWA_DEVICE int grid_dim_y() { return static_cast<int>(gridDim.y); }
TAWA_DEVICE int grid_dim_z() { return static_cast<int>(gridDim.z); }
TAWA_DEVICE int lane_idx() { return static_cast<int>(threadIdx.x) & 31; }
// tile.assume: x, where the compiler assumed x >= lo to emit the kernel; a launch where it is not
// stops with a trap (an error the launch reports) rather than computing something else.
template <class T>
TAWA_DEVICE T assume_at_least(T x, long long lo) {
  const bool is_unsigned = static_cast<T>(-1) > static_cast<T>(0);
  if (!is_unsigned && static_cast<long long>(x) < lo) __trap();
  return x;
}
// A warp group is 4 consecutive warps (128 threads); role branches switch on its index.
TAWA_DEVICE int warpgroup_idx() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0); }
TAWA_DEVICE int warpgroup_thread_idx() { return static_cast<int>(threadIdx.x) & 127; }
TAWA_DEVICE int warp_idx_in_warpgroup() { return __shfl_sync(0xffffffffu, (static_cast<int>(threadIdx.x) / 32) & 3, 0); }

// ---- dynamic shared memory: one buffer per block, carved by the emitter

// The block's dynamic shared memory, rounded up to a 1024-byte shared-window boundary (the
// repeating unit of the 128B swizzle); the launch reserves 1024 extra bytes for the rounding.
TAWA_DEVICE uint8_t* dynamic_smem_1024() {
  extern __shared__ __align__(1024) uint8_t tawa_dynamic_smem[];
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(tawa_dynamic_smem));
  return tawa_dynamic_smem + ((1024u - (addr & 1023u)) & 1023u);
}
// The shared-window address of a generic pointer into shared memory.
TAWA_DEVICE uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// ---- f16 / bf16 conversions and stores of converted pairs

TAWA_DEVICE f16 to_f16(float x) { return __float2half_rn(x); }
TAWA_DEVICE bf16 to_bf16(float x) { return __float2bfloat16_rn(x); }
TAWA_DEVICE float to_f32(float x) { return x; }
TAWA_DEVICE float to_f32(f16 x) { return __half2float(x); }
TAWA_DEVICE float to_f32(bf16 x) { return __bfloat162float(x); }
// fp8 (e4m3, e5m2) to and from f32 and from f64, as the executor: cvt.rn.satfinite (nearest; past the
// largest finite value, infinities included, to it; NaN to NaN).
TAWA_DEVICE float to_f32(fp8e4m3 x) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.bits, __NV_E4M3))); }
TAWA_DEVICE float to_f32(fp8e5m2 x) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.bits, __NV_E5M2))); }
TAWA_DEVICE fp8e4m3 to_fp8e4m3(float x) { return fp8e4m3{__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)}; }
TAWA_DEVICE fp8e5m2 to_fp8e5m2(float x) { return fp8e5m2{__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)}; }
TAWA_DEVICE fp8e4m3 f64_to_fp8e4m3(double x) { return fp8e4m3{__nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3)}; }
TAWA_DEVICE fp8e5m2 f64_to_fp8e5m2(double x) { return fp8e5m2{__nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E5M2)}; }
// An f64 to f16 / bf16 with one rounding (cvt.rn.f16.f64, cvt.rn.bf16.f64), as the executor: through
// f32 it would round twice.
TAWA_DEVICE f16 f64_to_f16(double x) { return __double2half(x); }
TAWA_DEVICE bf16 f64_to_bf16(double x) { return __double2bfloat16(x); }
// An integer to bf16 with one rounding (cvt.rn.bf16 from s64 / u64), as the executor converts: wider
// than 16 bits, a conversion through f32 would round twice.
template <class I>
TAWA_DEVICE bf16 int_to_bf16(I x) {
  if (sizeof(I) <= 4)  // the 32-bit conversions: cheaper than the 64-bit ones, the same rounding
    return I(-1) > I(0) ? __uint2bfloat16_rn(static_cast<unsigned int>(x)) : __int2bfloat16_rn(static_cast<int>(x));
  return I(-1) > I(0) ? __ull2bfloat16_rn(static_cast<unsigned long long>(x)) : __ll2bfloat16_rn(static_cast<long long>(x));
}
// A float (f32 or f64) to integer type I as cvt.rzi does, and as the executor: toward zero, NaN to 0,
// values past I's range to its bound.
template <class I, class F>
TAWA_DEVICE I float_to_int(F x) {
  constexpr bool is_unsigned = I(-1) > I(0);
  constexpr int bits = 8 * static_cast<int>(sizeof(I));
  const F hi = is_unsigned ? F(2) * F(1ull << (bits - 1)) : F(1ull << (bits - 1));
  const F lo = is_unsigned ? F(0) : -hi;
  if (!(x == x)) return I(0);
  if (x <= lo) return is_unsigned ? I(0) : I(-static_cast<long long>((1ull << (bits - 1)) - 1) - 1);
  if (x >= hi) return I(is_unsigned ? ~0ull >> (64 - bits) : (1ull << (bits - 1)) - 1);
  return static_cast<I>(x);
}
// st.shared of two adjacent elements (one 32-bit store for f16/bf16, 64-bit for f32).
TAWA_DEVICE void st_shared_pair(void* p, f16 a, f16 b) { *static_cast<__half2*>(p) = __halves2half2(a, b); }
TAWA_DEVICE void st_shared_pair(void* p, bf16 a, bf16 b) { *static_cast<__nv_bfloat162*>(p) = __halves2bfloat162(a, b); }
TAWA_DEVICE void st_shared_pair(void* p, float a, float b) { *static_cast<float2*>(p) = make_float2(a, b); }
TAWA_DEVICE void st_shared_pair(void* p, int32_t a, int32_t b) { *static_cast<int2*>(p) = make_int2(a, b); }
// Any other element type (8-, 16- or 64-bit integers): one store of the pair, 2 * sizeof(T) bytes.
template <class T>
TAWA_DEVICE void st_shared_pair(void* p, T a, T b) {
  struct alignas(2 * sizeof(T)) Pair {
    T x, y;
  };
  *static_cast<Pair*>(p) = Pair{a, b};
}
// One 8-bit integer (an s8 wgmma operand staged K-major by the thread that computed it).
TAWA_DEVICE void st_shared_byte(void* p, int8_t v) { *static_cast<int8_t*>(p) = v; }
// One element of a shared-memory tile read into a register (a consumer's own tile used elementwise).
template <class T>
TAWA_DEVICE T ld_shared(const void* p) { return *static_cast<const T*>(p); }

// ---- mbarrier (shared::cta, 64-bit)

// mbarrier.init: the barrier completes a phase after `count` arrivals (and all expected tx bytes).
TAWA_DEVICE void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// fence.mbarrier_init.release.cluster: makes initialized barriers visible to the async proxy (TMA).
TAWA_DEVICE void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// mbarrier.arrive: one arrival on the current phase.
TAWA_DEVICE void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// mbarrier.arrive.expect_tx: expect `bytes` more transaction bytes, then arrive once.
TAWA_DEVICE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// mbarrier.try_wait.parity: true once the phase with this parity has completed (may time out: retry).
TAWA_DEVICE bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}
// Blocks until the phase with this parity has completed (a try_wait.parity loop).
TAWA_DEVICE void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// ---- TMA (cp.async.bulk.tensor), 2-D to 5-D tiles

// cp.async.bulk.tensor.2d global -> shared::cluster, completing `box bytes` of tx on `bar`.
// c0 is the innermost (contiguous) coordinate, in elements.
TAWA_DEVICE void cp_async_bulk_tensor_2d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}
// cp.async.bulk.tensor.2d shared::cta -> global (bulk-group completion); out-of-bounds parts are skipped.
TAWA_DEVICE void cp_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map, int c0, int c1, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}
// The same for maps of rank 3 to 5 (coordinates inner first; tawa's outer dimensions pick a slice,
// such as one attention head).
TAWA_DEVICE void cp_async_bulk_tensor_3d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}
TAWA_DEVICE void cp_async_bulk_tensor_4d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3,
                                                          uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(bar))
      : "memory");
}
TAWA_DEVICE void cp_async_bulk_tensor_5d_global_to_shared(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                                          uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(smem_addr(bar))
      : "memory");
}
TAWA_DEVICE void cp_async_bulk_tensor_3d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, const void* src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(src))
               : "memory");
}
TAWA_DEVICE void cp_async_bulk_tensor_4d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, const void* src) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(src))
               : "memory");
}
TAWA_DEVICE void cp_async_bulk_tensor_5d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                                          const void* src) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(smem_addr(src))
               : "memory");
}
// The unsigned word of an element of `Bytes` bytes (its bits, for copies and bit casts).
template <int Bytes>
struct bits_word;
template <>
struct bits_word<1> { using type = uint8_t; };
template <>
struct bits_word<2> { using type = uint16_t; };
template <>
struct bits_word<4> { using type = uint32_t; };
template <>
struct bits_word<8> { using type = uint64_t; };

// ---- tiles TMA cannot take (a row stride or base not 16-byte aligned, a column stride other than 1):
// the same box, moved by threads with ordinary loads and stores. A "tile map" is its tensor map's
// facts as kernel parameters: base, extents and strides in elements (cols inner), and for a rank-3
// map one slice dimension (extent, stride; coordinate c2). Box, element size and swizzle are
// template parameters.

// Thread `t` of `n` loads its share of the box at (c0, c1, c2) into shared memory at `dst`, laid out
// as TMA would write it (row-major box, 16-byte chunks swizzled on the shared-window address):
// zeros outside the tensor. The writes are generic-proxy ones: the thread fences them
// (fence.proxy.async) before a wgmma may read them. TF32: the f32 elements are written rounded to
// tf32 (numerics::round_tf32_bits), the operands of a tf32 wgmma: what the tensor cores read is
// then exactly what the executor's tf32 dot multiplies, whatever they do with an f32's low bits.
// tile_gather_generic: the same, box row i read from tensor row row_of(i) (a mixture-of-experts
// projection's gathered tokens; a row outside [0, rows), such as -1 for a masked-off one, reads zeros);
// tile_load_generic reads rows c1, c1 + 1, ...
template <int EB, int BOX_C, int BOX_R, int SWZ, bool TF32 = false, class RowOf>
TAWA_DEVICE void tile_gather_generic(void* dst, const void* base, long long cols, long long rows, long long col_stride,
                                     long long row_stride, long long slices, long long slice_stride, int c0, RowOf row_of, int c2,
                                     int t, int n) {
  static_assert((BOX_C * EB) % 16 == 0, "a box row is whole 16-byte chunks");
  using W = typename bits_word<EB>::type;
  constexpr int kPer = 16 / EB, kChunksPerRow = BOX_C / kPer;
  constexpr uint32_t kBits = SWZ == 128 ? 7u : SWZ == 64 ? 3u : SWZ == 32 ? 1u : 0u;
  const uint32_t s0 = smem_addr(dst);
  const W* g = static_cast<const W*>(base) + static_cast<long long>(c2) * slice_stride;
  const bool slice_in = c2 >= 0 && c2 < slices;
  // Not unrolled: copies of this loop for each tile map a producer fills made ptxas spill the
  // producer at its 32 registers beside two consumers (Triton's attention backward at head dim 128:
  // 136 B at its default, 0 with `unroll 1`, 136 B with `unroll 2`); each chunk's loads still issue together.
#pragma unroll 1
  for (int q = t; q < BOX_R * kChunksPerRow; q += n) {
    const long long r = row_of(q / kChunksPerRow);
    const long long c = static_cast<long long>(c0) + (q % kChunksPerRow) * kPer;
    const bool row_in = slice_in && r >= 0 && r < rows;
    union {
      W e[kPer];
      uint4 v;
    } chunk;
    // A chunk of consecutive elements wholly inside its row at a 16-byte aligned address (a row-major
    // map whose row stride or base TMA cannot take, or a column window): one 16-byte load, of the same
    // elements the loop below reads one by one (the emulator's tile_load_generic reads them so).
    // Only a GPU runs this branch.
    const W* whole = row_in && col_stride == 1 && c >= 0 && c + kPer <= cols ? g + r * row_stride + c : nullptr;
    if (whole && (reinterpret_cast<unsigned long long>(whole) & 15u) == 0) {
      chunk.v = *reinterpret_cast<const uint4*>(whole);
    } else {
      TAWA_UNROLL
      for (int e = 0; e < kPer; ++e)
        chunk.e[e] = row_in && c + e >= 0 && c + e < cols ? g[r * row_stride + (c + e) * col_stride] : W(0);
    }
    if constexpr (TF32) {
      static_assert(EB == 4, "tf32 rounding of f32 elements");
      TAWA_UNROLL
      for (int e = 0; e < kPer; ++e) chunk.e[e] = numerics::round_tf32_bits(chunk.e[e]);
    }
    const uint32_t a = s0 + static_cast<uint32_t>(q) * 16u;
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a ^ (((a >> 7) & kBits) << 4)), "r"(chunk.v.x), "r"(chunk.v.y),
                 "r"(chunk.v.z), "r"(chunk.v.w)
                 : "memory");
  }
}
template <int EB, int BOX_C, int BOX_R, int SWZ, bool TF32 = false>
TAWA_DEVICE void tile_load_generic(void* dst, const void* base, long long cols, long long rows, long long col_stride,
                                   long long row_stride, long long slices, long long slice_stride, int c0, int c1, int c2, int t,
                                   int n) {
  tile_gather_generic<EB, BOX_C, BOX_R, SWZ, TF32>(dst, base, cols, rows, col_stride, row_stride, slices, slice_stride, c0,
                                                   [c1](int i) { return static_cast<long long>(c1) + i; }, c2, t, n);
}
// Thread `t` of `n` stores its share of a row-major, unswizzled box in shared memory at `src` to
// (c0, c1, c2), skipping what lies outside the tensor.
template <int EB, int BOX_C, int BOX_R>
TAWA_DEVICE void tile_store_generic(void* base, long long cols, long long rows, long long col_stride, long long row_stride,
                                    long long slices, long long slice_stride, int c0, int c1, int c2, const void* src, int t, int n) {
  using W = typename bits_word<EB>::type;
  if (c2 < 0 || c2 >= slices) return;
  W* g = static_cast<W*>(base) + static_cast<long long>(c2) * slice_stride;
  const W* s = static_cast<const W*>(src);
  for (int i = t; i < BOX_R * BOX_C; i += n) {
    const long long r = static_cast<long long>(c1) + i / BOX_C, c = static_cast<long long>(c0) + i % BOX_C;
    if (r >= 0 && r < rows && c >= 0 && c < cols) g[r * row_stride + c * col_stride] = s[i];
  }
}

// cp.reduce.async.bulk.tensor .add: like the stores above, but the box in shared memory is added into
// global memory, element by element and atomically (the element type is the map's: T, f32 or s32,
// says it for the emulator); bulk-group completion, out-of-bounds parts skipped.
template <class T>
TAWA_DEVICE void cp_reduce_add_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map, int c0, int c1, const void* src) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}
template <class T>
TAWA_DEVICE void cp_reduce_add_async_bulk_tensor_3d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, const void* src) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(src))
               : "memory");
}
template <class T>
TAWA_DEVICE void cp_reduce_add_async_bulk_tensor_4d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3,
                                                                     const void* src) {
  asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(src))
               : "memory");
}
template <class T>
TAWA_DEVICE void cp_reduce_add_async_bulk_tensor_5d_shared_to_global(const CUtensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                                                     const void* src) {
  asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(smem_addr(src))
               : "memory");
}
// tile_store_generic's reduce-add: thread `t` of `n` adds its share of the box into memory with
// atomicAdd (T: float or int32_t).
template <class T, int BOX_C, int BOX_R>
TAWA_DEVICE void tile_reduce_add_generic(void* base, long long cols, long long rows, long long col_stride, long long row_stride,
                                         long long slices, long long slice_stride, int c0, int c1, int c2, const void* src, int t, int n) {
  if (c2 < 0 || c2 >= slices) return;
  T* g = static_cast<T*>(base) + static_cast<long long>(c2) * slice_stride;
  const T* s = static_cast<const T*>(src);
  for (int i = t; i < BOX_R * BOX_C; i += n) {
    const long long r = static_cast<long long>(c1) + i / BOX_C, c = static_cast<long long>(c0) + i % BOX_C;
    if (r >= 0 && r < rows && c >= 0 && c < cols) atomicAdd(&g[r * row_stride + c * col_stride], s[i]);
  }
}

// cp.async.bulk.commit_group: closes the bulk group of this thread's issued stores.
TAWA_DEVICE void cp_async_bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// cp.async.bulk.wait_group.read N: the stores' shared-memory sources may be reused (at most N groups pending).
template <int N>
TAWA_DEVICE void cp_async_bulk_wait_group_read() { asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory"); }
// fence.proxy.async.shared::cta: orders this thread's generic shared-memory writes before async-proxy reads (TMA, wgmma).
TAWA_DEVICE void fence_proxy_async_shared_cta() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- wgmma

// The shared-memory matrix descriptor of a generic pointer (layout::smem_desc).
TAWA_DEVICE uint64_t wgmma_smem_desc(const void* start, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle_mode) {
  return layout::smem_desc(smem_addr(start), lbo_bytes, sbo_bytes, swizzle_mode);
}
// wgmma.fence: orders prior register and shared-memory accesses before the following wgmma.mma_async.
TAWA_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// wgmma.commit_group: closes the group of this warp group's issued wgmma.mma_async ops.
TAWA_DEVICE void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// wgmma.wait_group N: waits until at most N committed groups are pending; their accumulators are then valid.
template <int N>
TAWA_DEVICE void wgmma_wait_group() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// Keeps the compiler from moving accesses of an accumulator register across wgmma issue and wait.
TAWA_DEVICE void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
template <int N>
TAWA_DEVICE void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_operand(d[i]);
}
TAWA_DEVICE void fence_operand(int32_t& r) { asm volatile("" : "+r"(r)::"memory"); }
template <int N>
TAWA_DEVICE void fence_operands(int32_t (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_operand(d[i]);
}
// Row and column of this thread's accumulator register i (layout::acc_row / acc_col).
TAWA_DEVICE int wgmma_acc_row(int i) { return layout::acc_row(warpgroup_thread_idx(), i); }
TAWA_DEVICE int wgmma_acc_col(int i) { return layout::acc_col(warpgroup_thread_idx(), i); }

// The wrappers below are one macro per instruction form. Each passes the N/2 accumulator registers
// of an m64nN shape as "+f" operands %0..%(N/2 - 1) (TAWA_D*, TAWA_REGS_*), then its own operands
// numbered from N/2: the literal operand numbers are macro arguments.
#define TAWA_D8(o) "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define TAWA_D16(o) TAWA_D8(o), TAWA_D8(o + 8)
#define TAWA_I8(o) "+r"(d[o]), "+r"(d[o + 1]), "+r"(d[o + 2]), "+r"(d[o + 3]), "+r"(d[o + 4]), "+r"(d[o + 5]), "+r"(d[o + 6]), "+r"(d[o + 7])
#define TAWA_I16(o) TAWA_I8(o), TAWA_I8(o + 8)
#define TAWA_I32(o) TAWA_I16(o), TAWA_I16(o + 16)
#define TAWA_I64(o) TAWA_I32(o), TAWA_I32(o + 32)
#define TAWA_I128(o) TAWA_I64(o), TAWA_I64(o + 64)
#define TAWA_D32(o) TAWA_D16(o), TAWA_D16(o + 16)
#define TAWA_D64(o) TAWA_D32(o), TAWA_D32(o + 32)
#define TAWA_D128(o) TAWA_D64(o), TAWA_D64(o + 64)
#define TAWA_REGS_8 "%0, %1, %2, %3, %4, %5, %6, %7"
#define TAWA_REGS_16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define TAWA_REGS_32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TAWA_REGS_64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TAWA_REGS_128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// wgmma.mma_async m64nNk16, f16/bf16: D[64xN] (f32, N/2 registers per thread) += A (smem desc;
// TransA 1: M-major) * B (smem desc; TransB 1: N-major).  A_, B_, S_, T_, U_: operand numbers of
// desc_a, desc_b, scale_d, TransB and TransA.
#define TAWA_WGMMA_SS(N, R, TY, A_, B_, S_, T_, U_)                                                                  \
  template <int TransB, int TransA = 0>                                                                            \
  TAWA_DEVICE void wgmma_mma_async_m64n##N##k16_f32_##TY(float(&d)[R], uint64_t desc_a, uint64_t desc_b, int scale_d) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" S_ ", 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY "\n"                                 \
                 "{" TAWA_REGS_##R "}, %" A_ ", %" B_ ", p, 1, 1, %" U_ ", %" T_ ";\n}\n"                             \
                 : TAWA_D##R(0)                                                                                    \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransB), "n"(TransA));                              \
  }
// wgmma.mma_async m64nNkK, e4m3/e5m2 (k32) and tf32 (k8): both operands K-major (neither type has
// a transpose); 32 bytes of K per instruction either way.
#define TAWA_WGMMA_SS_KMAJOR(N, R, K, TY, A_, B_, S_)                                                                \
  TAWA_DEVICE void wgmma_mma_async_m64n##N##k##K##_f32_##TY(float(&d)[R], uint64_t desc_a, uint64_t desc_b, int scale_d) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" S_ ", 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k" #K ".f32." #TY "." #TY "\n"                            \
                 "{" TAWA_REGS_##R "}, %" A_ ", %" B_ ", p, 1, 1;\n}\n"                                              \
                 : TAWA_D##R(0)                                                                                    \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                                        \
  }
// wgmma.mma_async m64nNk32, s8/u8: s32 D (N/2 int32 registers), both operands K-major, no scale
// or transpose immediates (integer wgmma has neither).
#define TAWA_WGMMA_SS_INT8(N, R, TY, A_, B_, S_)                                                                     \
  TAWA_DEVICE void wgmma_mma_async_m64n##N##k32_s32_##TY(int32_t(&d)[R], uint64_t desc_a, uint64_t desc_b, int scale_d) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" S_ ", 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32." #TY "." #TY "\n"                                 \
                 "{" TAWA_REGS_##R "}, %" A_ ", %" B_ ", p;\n}\n"                                                    \
                 : TAWA_I##R(0)                                                                                    \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                                        \
  }
// wgmma.mma_async m64nNk16 with A from registers (RS): four 32-bit registers per thread, two f16/bf16
// each (low half first), in the accumulator-fragment layout of a 64x16 tile; B from shared memory.
#define TAWA_WGMMA_RS(N, R, TY, A0, A1, A2, A3, B_, S_, T_)                                                          \
  template <int TransB>                                                                                            \
  TAWA_DEVICE void wgmma_mma_async_rs_m64n##N##k16_f32_##TY(float(&d)[R], uint32_t a0, uint32_t a1, uint32_t a2,       \
                                                            uint32_t a3, uint64_t desc_b, int scale_d) {            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" S_ ", 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY "\n"                                 \
                 "{" TAWA_REGS_##R "}, {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B_ ", p, 1, 1, %" T_ ";\n}\n"         \
                 : TAWA_D##R(0)                                                                                    \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc_b), "r"(scale_d), "n"(TransB));                    \
  }

TAWA_WGMMA_SS(16, 8, f16, "8", "9", "10", "11", "12")
TAWA_WGMMA_SS(32, 16, f16, "16", "17", "18", "19", "20")
TAWA_WGMMA_SS(64, 32, f16, "32", "33", "34", "35", "36")
TAWA_WGMMA_SS(128, 64, f16, "64", "65", "66", "67", "68")
TAWA_WGMMA_SS(256, 128, f16, "128", "129", "130", "131", "132")
TAWA_WGMMA_SS(16, 8, bf16, "8", "9", "10", "11", "12")
TAWA_WGMMA_SS(32, 16, bf16, "16", "17", "18", "19", "20")
TAWA_WGMMA_SS(64, 32, bf16, "32", "33", "34", "35", "36")
TAWA_WGMMA_SS(128, 64, bf16, "64", "65", "66", "67", "68")
TAWA_WGMMA_SS(256, 128, bf16, "128", "129", "130", "131", "132")
TAWA_WGMMA_SS_KMAJOR(16, 8, 32, e4m3, "8", "9", "10")
TAWA_WGMMA_SS_KMAJOR(32, 16, 32, e4m3, "16", "17", "18")
TAWA_WGMMA_SS_KMAJOR(64, 32, 32, e4m3, "32", "33", "34")
TAWA_WGMMA_SS_KMAJOR(128, 64, 32, e4m3, "64", "65", "66")
TAWA_WGMMA_SS_KMAJOR(256, 128, 32, e4m3, "128", "129", "130")
TAWA_WGMMA_SS_KMAJOR(16, 8, 32, e5m2, "8", "9", "10")
TAWA_WGMMA_SS_KMAJOR(32, 16, 32, e5m2, "16", "17", "18")
TAWA_WGMMA_SS_KMAJOR(64, 32, 32, e5m2, "32", "33", "34")
TAWA_WGMMA_SS_KMAJOR(128, 64, 32, e5m2, "64", "65", "66")
TAWA_WGMMA_SS_KMAJOR(256, 128, 32, e5m2, "128", "129", "130")
TAWA_WGMMA_SS_KMAJOR(16, 8, 8, tf32, "8", "9", "10")
TAWA_WGMMA_SS_KMAJOR(32, 16, 8, tf32, "16", "17", "18")
TAWA_WGMMA_SS_KMAJOR(64, 32, 8, tf32, "32", "33", "34")
TAWA_WGMMA_SS_KMAJOR(128, 64, 8, tf32, "64", "65", "66")
TAWA_WGMMA_SS_KMAJOR(256, 128, 8, tf32, "128", "129", "130")
TAWA_WGMMA_SS_INT8(16, 8, s8, "8", "9", "10")
TAWA_WGMMA_SS_INT8(32, 16, s8, "16", "17", "18")
TAWA_WGMMA_SS_INT8(64, 32, s8, "32", "33", "34")
TAWA_WGMMA_SS_INT8(128, 64, s8, "64", "65", "66")
TAWA_WGMMA_SS_INT8(256, 128, s8, "128", "129", "130")
TAWA_WGMMA_SS_INT8(16, 8, u8, "8", "9", "10")
TAWA_WGMMA_SS_INT8(32, 16, u8, "16", "17", "18")
TAWA_WGMMA_SS_INT8(64, 32, u8, "32", "33", "34")
TAWA_WGMMA_SS_INT8(128, 64, u8, "64", "65", "66")
TAWA_WGMMA_SS_INT8(256, 128, u8, "128", "129", "130")
TAWA_WGMMA_RS(16, 8, f16, "8", "9", "10", "11", "12", "13", "14")
TAWA_WGMMA_RS(32, 16, f16, "16", "17", "18", "19", "20", "21", "22")
TAWA_WGMMA_RS(64, 32, f16, "32", "33", "34", "35", "36", "37", "38")
TAWA_WGMMA_RS(128, 64, f16, "64", "65", "66", "67", "68", "69", "70")
TAWA_WGMMA_RS(256, 128, f16, "128", "129", "130", "131", "132", "133", "134")
TAWA_WGMMA_RS(16, 8, bf16, "8", "9", "10", "11", "12", "13", "14")
TAWA_WGMMA_RS(32, 16, bf16, "16", "17", "18", "19", "20", "21", "22")
TAWA_WGMMA_RS(64, 32, bf16, "32", "33", "34", "35", "36", "37", "38")
TAWA_WGMMA_RS(128, 64, bf16, "64", "65", "66", "67", "68", "69", "70")
TAWA_WGMMA_RS(256, 128, bf16, "128", "129", "130", "131", "132", "133", "134")
#undef TAWA_WGMMA_SS
#undef TAWA_WGMMA_SS_KMAJOR
#undef TAWA_WGMMA_RS

// ---- register-fragment arithmetic (the softmax of fused attention)

// One f32 register in, one out: a wrapper per instruction, named after it.
#define TAWA_UNARY_F32(NAME, INSTR)                          \
  TAWA_DEVICE float NAME(float x) {                          \
    float y;                                                 \
    asm(INSTR " %0, %1;" : "=f"(y) : "f"(x));                \
    return y;                                                \
  }
// ex2.approx.ftz.f32: 2^x, about 2 ulp (what exp2f becomes under fast math); the emulator uses exp2.
TAWA_UNARY_F32(exp2_approx, "ex2.approx.ftz.f32")
// lg2.approx.ftz.f32: log2(x), absolute error about 2^-22 (log2f under fast math); the emulator: log2.
TAWA_UNARY_F32(lg2_approx, "lg2.approx.ftz.f32")
// sqrt.rn.f32: the correctly rounded square root.
TAWA_UNARY_F32(sqrt_rn, "sqrt.rn.f32")
// rsqrt.approx.ftz.f32: 1/sqrt(x), relative error about 2^-22.
TAWA_UNARY_F32(rsqrt_approx, "rsqrt.approx.ftz.f32")
// abs.f32: |x|.
TAWA_UNARY_F32(abs_f32, "abs.f32")
#undef TAWA_UNARY_F32
// sin and cos of any argument: CUDA's sinf / cosf (range reduction, then polynomials; within 2 ulp).
TAWA_DEVICE float sin_f32(float x) { return sinf(x); }
TAWA_DEVICE float cos_f32(float x) { return cosf(x); }
// div.full.f32: a / b within 2 ulp over the full range, what Triton's `/` on f32 becomes (IEEE
// division, div.rn.f32, costs a checked fast path and a called slow path per element).
TAWA_DEVICE float div_full(float a, float b) {
  float y;
  asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
// max.NaN.f32 / min.NaN.f32: NaN-propagating, as tl.maximum(..., propagate_nan=tl.PropagateNan.ALL).
TAWA_DEVICE float max_nan(float a, float b) {
  float y;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
TAWA_DEVICE float min_nan(float a, float b) {
  float y;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
TAWA_DEVICE float inf_f32() { return __int_as_float(0x7f800000); }
TAWA_DEVICE float nan_f32() { return __int_as_float(0x7fc00000); }
// max.f32 / min.f32: a NaN operand yields the other (IEEE maxNum, tl.maximum's default).
TAWA_DEVICE float max_num(float a, float b) { return fmaxf(a, b); }
TAWA_DEVICE float min_num(float a, float b) { return fminf(a, b); }
TAWA_DEVICE double max_num(double a, double b) { return fmax(a, b); }
TAWA_DEVICE double min_num(double a, double b) { return fmin(a, b); }
// f64 has no max.NaN: NaN if either is, else the larger with -0 below +0 (llvm.maximum's rule).
TAWA_DEVICE double max_nan(double a, double b) {
  return a != a || b != b ? __longlong_as_double(0x7ff8000000000000ll) : a == b ? (signbit(a) ? b : a) : fmax(a, b);
}
TAWA_DEVICE double min_nan(double a, double b) {
  return a != a || b != b ? __longlong_as_double(0x7ff8000000000000ll) : a == b ? (signbit(a) ? a : b) : fmin(a, b);
}
// shfl.sync.bfly.b32 over the full warp: the value held by lane (lane ^ mask).
TAWA_DEVICE float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
TAWA_DEVICE int32_t shfl_xor(int32_t v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
// shfl.sync.up: lane l gets lane l - delta's value (its own where l < delta).
TAWA_DEVICE float shfl_up(float v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
TAWA_DEVICE int32_t shfl_up(int32_t v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
// shfl.sync.down: lane l gets lane l + delta's value (its own where l + delta > 31).
TAWA_DEVICE float shfl_down(float v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
TAWA_DEVICE int32_t shfl_down(int32_t v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
TAWA_DEVICE uint32_t shfl_xor(uint32_t v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
TAWA_DEVICE uint32_t shfl_up(uint32_t v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
TAWA_DEVICE uint32_t shfl_down(uint32_t v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
// 64-bit values (i64, u64 and f64 reductions and scans): the hardware moves them as two words.
TAWA_DEVICE int64_t shfl_xor(int64_t v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
TAWA_DEVICE int64_t shfl_up(int64_t v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
TAWA_DEVICE int64_t shfl_down(int64_t v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
TAWA_DEVICE uint64_t shfl_xor(uint64_t v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
TAWA_DEVICE uint64_t shfl_up(uint64_t v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
TAWA_DEVICE uint64_t shfl_down(uint64_t v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
TAWA_DEVICE double shfl_xor(double v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
TAWA_DEVICE double shfl_up(double v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
TAWA_DEVICE double shfl_down(double v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
// vote.sync over the full warp: the predicates of all 32 lanes (bit l: lane l), all of them, any.
TAWA_DEVICE uint32_t ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
TAWA_DEVICE bool vote_all(bool p) { return __all_sync(0xffffffffu, p) != 0; }
TAWA_DEVICE bool vote_any(bool p) { return __any_sync(0xffffffffu, p) != 0; }
// Two 16-bit values as one 32-bit register, the first in the low half (a wgmma A-fragment register).
TAWA_DEVICE uint32_t pack_pair(f16 lo, f16 hi) {
  __half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
TAWA_DEVICE uint32_t pack_pair(bf16 lo, bf16 hi) {
  __nv_bfloat162 h = __halves2bfloat162(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32: the warp's 16x8 f32 tile d += A (16x16) *
// B (16x8), every lane of the warp taking part. Fragments (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"), with g = lane / 4 and q = lane % 4, low half first:
// a[0] = A[g][2q, 2q+1], a[1] = A[g+8][2q, 2q+1], a[2] = A[g][2q+8, 2q+9], a[3] = A[g+8][2q+8, 2q+9];
// b[0] = B[2q, 2q+1][g], b[1] = B[2q+8, 2q+9][g]; d = D[g][2q], D[g][2q+1], D[g+8][2q], D[g+8][2q+1].
TAWA_DEVICE void mma_16816_f16(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
TAWA_DEVICE void mma_16816_bf16(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: d += A (16x8) * B (8x8), operands tf32 words
// (tf32_word). Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32): a[0] = A[g][q],
// a[1] = A[g+8][q], a[2] = A[g][q+4], a[3] = A[g+8][q+4]; b[0] = B[q][g], b[1] = B[q+4][g]; d as above.
TAWA_DEVICE void mma_1688_tf32(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32: i32 d += A (16x16) * B (16x8), wrapping modulo
// 2^32. Fragments ("Matrix Fragments for mma.m16n8k16 with integer type"), four elements to a word,
// low byte first: a[0] = A[g][4q..4q+3], a[1] = A[g+8][4q..4q+3]; b[0] = B[4q..4q+3][g]; d as above.
TAWA_DEVICE void mma_16816_s8(int* d, const uint32_t* a, const uint32_t* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

// ---- clocks and the profile's event records (emitted only with --profile)

// %clock64: the SM's cycle counter (comparable between the warp groups of one block).
TAWA_DEVICE uint64_t clock64() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
// %globaltimer: nanoseconds on a clock shared by all SMs (places blocks on one time axis).
TAWA_DEVICE uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
// %smid: the SM this block runs on.
TAWA_DEVICE uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
// A warp group's profile ring in shared memory: a 32-byte header (u32 events recorded, u32 unused,
// u64 clock64 and u64 %globaltimer at the warp group's start), then `cap` events of 16 bytes. The
// counter and the start times live there, not in registers, so profiling holds one register (the
// open scope's start) across the kernel.
TAWA_DEVICE void prof_begin(uint8_t* ring) {
  uint64_t c = clock64(), g = globaltimer();
  reinterpret_cast<uint4*>(ring)[0] = make_uint4(0u, 0u, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32));
  reinterpret_cast<uint4*>(ring)[1] = make_uint4(static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), 0u, 0u);
}
// One event (start and end: the low 32 bits of clock64 minus the start's; iteration; line | scope
// << 16 | slot << 24) into ring slot n % cap; the end is now. n counts every event, so the host knows
// exactly how many the ring lost (n - cap when n > cap).
TAWA_DEVICE void prof_record(uint8_t* ring, uint32_t cap, uint32_t start, uint32_t scope, int32_t iter, int32_t slot, uint32_t line) {
  uint32_t end = static_cast<uint32_t>(clock64());
  uint32_t n = *reinterpret_cast<uint32_t*>(ring);
  uint32_t c0 = *reinterpret_cast<uint32_t*>(ring + 8);
  uint4 e = make_uint4(start - c0, end - c0, static_cast<uint32_t>(iter),
                       (line & 0xffffu) | ((scope & 0xffu) << 16) | ((static_cast<uint32_t>(slot) & 0xffu) << 24));
  *reinterpret_cast<uint4*>(ring + 32u + 16u * (n % cap)) = e;
  *reinterpret_cast<uint32_t*>(ring) = n + 1;
}
// Copies a warp group's ring to global memory (block b, linear in the launched grid, warp group wg
// of nwg: 32 + 16 * cap bytes each): the header (events, %smid, clk0, globaltimer at start and now),
// then the kept events.
TAWA_DEVICE void prof_flush(uint8_t* out, int wg, int nwg, const uint8_t* ring, uint32_t cap) {
  uint64_t b = blockIdx.x + static_cast<uint64_t>(gridDim.x) * (blockIdx.y + static_cast<uint64_t>(gridDim.y) * blockIdx.z);
  uint8_t* dst = out + (b * static_cast<uint64_t>(nwg) + static_cast<uint64_t>(wg)) * (32u + 16u * cap);
  uint32_t n = *reinterpret_cast<const uint32_t*>(ring);
  uint32_t kept = n < cap ? n : cap;
  for (uint32_t i = 0; i < kept; ++i) reinterpret_cast<uint4*>(dst + 32)[i] = reinterpret_cast<const uint4*>(ring + 32)[i];
  uint64_t gt1 = globaltimer();
  uint4 h0 = reinterpret_cast<const uint4*>(ring)[0], h1 = reinterpret_cast<const uint4*>(ring)[1];
  reinterpret_cast<uint4*>(dst)[0] = make_uint4(n, smid(), h0.z, h0.w);
  reinterpret_cast<uint4*>(dst)[1] = make_uint4(h1.x, h1.y, static_cast<uint32_t>(gt1), static_cast<uint32_t>(gt1 >> 32));
}

// ---- register reallocation, barriers, election

// setmaxnreg.inc: raises this warp group's per-thread register budget to N (blocks until available).
template <int N>
TAWA_DEVICE void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N)); }
// setmaxnreg.dec: lowers this warp group's per-thread register budget to N, returning the rest.
template <int N>
TAWA_DEVICE void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N)); }
// bar.sync id, count: named barrier over `count` threads (a multiple of 32); id 0 is __syncthreads.
TAWA_DEVICE void bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory"); }
// bar.arrive id, count: counts the calling threads towards named barrier `id` of `count` threads
// without waiting for it (the producer side of a bar.sync elsewhere).
TAWA_DEVICE void bar_arrive(int id, int count) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory"); }
// The block-wide barrier (bar.sync 0).
TAWA_DEVICE void syncthreads() { __syncthreads(); }
// elect.sync: true in exactly one active lane of the warp (all lanes must execute it).
TAWA_DEVICE bool elect_one_sync() {
  uint32_t pred = 0;
  asm volatile(
      "{\n.reg .b32 lane;\n.reg .pred p;\nelect.sync lane|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

}  // namespace tawa

#else  // host C++: the CPU emulator's implementation of every primitive (src/backends/emu/EmuRuntime.h).

#define __global__
#define __launch_bounds__(threads, blocks)
#define __grid_constant__
#define TAWA_DEVICE
#define TAWA_UNROLL
#define TAWA_UNROLL_4

// The driver API's opaque 128-byte tensor map, as the host sees it (the emulator keeps its
// TawaEmuTensorMap in these bytes).
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};

namespace tawa {

struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
// fp8 elements (loads, stores and conversions on the SIMT path; no arithmetic): their bits.
struct fp8e4m3 {
  uint8_t bits;
};
struct fp8e5m2 {
  uint8_t bits;
};

}  // namespace tawa

#include "../emu/EmuRuntime.h"

#endif

// ---- bit casts (tile.bitcast, Triton's x.to(T, bitcast=True)): an element's bits read as another
// element type of the same width. On the device through the reinterpreting intrinsics (NVRTC has no
// memcpy), on the emulator through memcpy.
namespace tawa {
#if defined(__CUDACC__)
template <class A, class B>
struct same_type {
  static constexpr bool value = false;
};
template <class A>
struct same_type<A, A> {
  static constexpr bool value = true;
};
template <class To, class From>
TAWA_DEVICE To bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the width");
  using W = typename bits_word<sizeof(From)>::type;
  W b;
  if constexpr (same_type<From, f16>::value) b = __half_as_ushort(x);
  else if constexpr (same_type<From, bf16>::value) b = __bfloat16_as_ushort(x);
  else if constexpr (same_type<From, float>::value) b = __float_as_uint(x);
  else if constexpr (same_type<From, double>::value) b = static_cast<W>(__double_as_longlong(x));
  else b = static_cast<W>(x);
  if constexpr (same_type<To, f16>::value) return __ushort_as_half(b);
  else if constexpr (same_type<To, bf16>::value) return __ushort_as_bfloat16(b);
  else if constexpr (same_type<To, float>::value) return __uint_as_float(b);
  else if constexpr (same_type<To, double>::value) return __longlong_as_double(static_cast<long long>(b));
  else return static_cast<To>(b);
}
#else
template <class To, class From>
inline To bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the width");
  To r;
  std::memcpy(&r, &x, sizeof(To));
  return r;
}
#endif

// An f32 operand as a tf32 dot reads it (Triton's default input_precision for f32 dots): rounded to 10
// mantissa bits, to nearest, ties away from zero (cvt.rna.tf32.f32; the executor's ir::roundTf32);
// infinities and NaN unchanged. For the SIMT path's FMA dot, which has no tf32 instruction to do it.
TAWA_DEVICE float round_tf32(float x) { return bitcast<float>(numerics::round_tf32_bits(bitcast<uint32_t>(x))); }
// The same rounding as an mma.sync tf32 operand register (the SIMT path's tf32 dot).
TAWA_DEVICE uint32_t tf32_word(float x) { return numerics::round_tf32_bits(bitcast<uint32_t>(x)); }
// Four 8-bit integers as one 32-bit register, the first in the low byte (an mma.sync s8/u8 operand).
template <class T>
TAWA_DEVICE uint32_t pack_quad(T x0, T x1, T x2, T x3) {
  static_assert(sizeof(T) == 1, "pack_quad packs 8-bit integers");
  return static_cast<uint32_t>(static_cast<uint8_t>(x0)) | static_cast<uint32_t>(static_cast<uint8_t>(x1)) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(x2)) << 16 | static_cast<uint32_t>(static_cast<uint8_t>(x3)) << 24;
}
}  // namespace tawa

// ---- libdevice's functions (tile.math {fn}; the one list of them is src/ir/MathFns.cpp, and a unit
// test checks that every name there has its primitive here): math_<name> for float and double. On the
// device they are CUDA's math library (asinf, ...: within a few ulp); on the emulator the host's
// <cmath> in double, rounded, through the emulator's checked reads.
#define TAWA_MATH_UNARY(X)                                                                                 \
  X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(cbrt) X(ceil) X(cosh) X(erf) X(erfc) X(exp10)      \
  X(expm1) X(floor) X(lgamma) X(log10) X(log1p) X(rint) X(round) X(sinh) X(tan) X(tanh) X(tgamma) X(trunc)
#define TAWA_MATH_BINARY(X) X(atan2) X(copysign) X(hypot) X(pow)
#define TAWA_MATH_TERNARY(X) X(fma)

namespace tawa {
#if defined(__CUDACC__)
#define TAWA_MATH1(F)                                               \
  TAWA_DEVICE float math_##F(float x) { return F##f(x); }           \
  TAWA_DEVICE double math_##F(double x) { return ::F(x); }
#define TAWA_MATH2(F)                                                       \
  TAWA_DEVICE float math_##F(float x, float y) { return F##f(x, y); }       \
  TAWA_DEVICE double math_##F(double x, double y) { return ::F(x, y); }
#define TAWA_MATH3(F)                                                                         \
  TAWA_DEVICE float math_##F(float x, float y, float z) { return F##f(x, y, z); }             \
  TAWA_DEVICE double math_##F(double x, double y, double z) { return ::F(x, y, z); }
#else
#define TAWA_MATH1(F)                                                                                    \
  inline float math_##F(float x, TAWA_EMU_LOC) {                                                         \
    return emu::unary(x, #F, emu::model().mufuPerClk,                                                    \
                      [](float v) { return static_cast<float>(emu::libm::F(static_cast<double>(v))); }, \
                      TAWA_EMU_AT);                                                                      \
  }                                                                                                      \
  inline double math_##F(double x) { return emu::libm::F(x); }
#define TAWA_MATH2(F)                                                                                           \
  inline float math_##F(float x, float y, TAWA_EMU_LOC) {                                                       \
    emu::checkRead(y, #F, TAWA_EMU_AT);                                                                         \
    return emu::unary(x, #F, emu::model().mufuPerClk,                                                           \
                      [y](float v) { return static_cast<float>(emu::libm::F(static_cast<double>(v), y)); }, \
                      TAWA_EMU_AT);                                                                             \
  }                                                                                                             \
  inline double math_##F(double x, double y) { return emu::libm::F(x, y); }
#define TAWA_MATH3(F)                                                                            \
  inline float math_##F(float x, float y, float z, TAWA_EMU_LOC) {                               \
    emu::checkRead(y, #F, TAWA_EMU_AT);                                                          \
    emu::checkRead(z, #F, TAWA_EMU_AT);                                                          \
    return emu::unary(x, #F, emu::model().aluPerClk, [y, z](float v) { return std::F(v, y, z); }, \
                      TAWA_EMU_AT);                                                              \
  }                                                                                              \
  inline double math_##F(double x, double y, double z) { return std::F(x, y, z); }
#endif
TAWA_MATH_UNARY(TAWA_MATH1)
TAWA_MATH_BINARY(TAWA_MATH2)
TAWA_MATH_TERNARY(TAWA_MATH3)
#undef TAWA_MATH1
#undef TAWA_MATH2
#undef TAWA_MATH3
}  // namespace tawa

// ---- atomics (tile.atomic): one read-modify-write of a 2-, 4- or 8-byte global element, returning
// the old value (2-byte ones, f16, bf16, i16 and u16, have no compare-and-swap of their own). Scope 0
// is the block (cta), 1 the GPU, 2 the system. The RMW itself is relaxed; the
// emitted code orders it with fences for Triton's sem (release: fence before, acquire: after, acq_rel:
// both), the fence pattern of the PTX memory model. Floats: add rounds once; max and min propagate
// NaN (Triton's float atomic_max has no NaN rule of its own: it works on the bits). The combining
// rule is shared by the device and the emulator.
#if defined(__CUDACC__)
#define TAWA_ATOMIC_FN TAWA_DEVICE
#else
#define TAWA_ATOMIC_FN inline
#endif
namespace tawa {
enum class AtomicOp { Add, Max, Min, And, Or, Xor, Xchg };

template <AtomicOp Op, class T>
TAWA_ATOMIC_FN T atomic_combine(T old, T v) {
  constexpr bool isFloat = static_cast<T>(0.5) != static_cast<T>(0);
  if constexpr (Op == AtomicOp::Xchg) {
    return v;
  } else if constexpr (Op == AtomicOp::Add) {
    if constexpr (isFloat) return old + v;
    else return static_cast<T>(static_cast<unsigned long long>(old) + static_cast<unsigned long long>(v));  // wraps
  } else if constexpr (Op == AtomicOp::Max || Op == AtomicOp::Min) {
    if constexpr (isFloat)
      if (old != old || v != v) return old != old ? old : v;
    return (Op == AtomicOp::Max) == (v > old) ? v : old;
  } else if constexpr (Op == AtomicOp::And) {
    return old & v;
  } else if constexpr (Op == AtomicOp::Or) {
    return old | v;
  } else {
    return old ^ v;
  }
}

// 2-byte elements: floats combine in f32 and round once (the sum of two f16 is exact in f32).
template <AtomicOp Op>
TAWA_ATOMIC_FN f16 atomic_combine16(f16 old, f16 v) {
  return to_f16(atomic_combine<Op>(to_f32(old), to_f32(v)));
}
template <AtomicOp Op>
TAWA_ATOMIC_FN bf16 atomic_combine16(bf16 old, bf16 v) {
  return to_bf16(atomic_combine<Op>(to_f32(old), to_f32(v)));
}
template <AtomicOp Op>
TAWA_ATOMIC_FN int16_t atomic_combine16(int16_t old, int16_t v) {
  return atomic_combine<Op>(old, v);
}
template <AtomicOp Op>
TAWA_ATOMIC_FN uint16_t atomic_combine16(uint16_t old, uint16_t v) {
  return atomic_combine<Op>(old, v);
}

#if defined(__CUDACC__)
template <int Scope>
TAWA_DEVICE void fence_acq_rel() {
  if constexpr (Scope == 0) __threadfence_block();
  else if constexpr (Scope == 1) __threadfence();
  else __threadfence_system();
}
template <int Scope, class W>
TAWA_DEVICE W atomic_cas_word(W* p, W cmp, W v) {
  if constexpr (Scope == 0) return atomicCAS_block(p, cmp, v);
  else if constexpr (Scope == 1) return atomicCAS(p, cmp, v);
  else return atomicCAS_system(p, cmp, v);
}
template <bool Wide>
struct atomic_word {
  using type = unsigned int;
};
template <>
struct atomic_word<true> {
  using type = unsigned long long;
};
template <class T>
using atomic_word_t = typename atomic_word<sizeof(T) == 8>::type;
// An element's bits as the CAS word, and back (NVRTC has no memcpy: the reinterpreting intrinsics).
template <class T>
TAWA_DEVICE atomic_word_t<T> atomic_to_word(T x) {
  if constexpr (static_cast<T>(0.5) == static_cast<T>(0)) return static_cast<atomic_word_t<T>>(x);
  else if constexpr (sizeof(T) == 4) return __float_as_uint(x);
  else return static_cast<unsigned long long>(__double_as_longlong(x));
}
template <class T>
TAWA_DEVICE T atomic_from_word(atomic_word_t<T> w) {
  if constexpr (static_cast<T>(0.5) == static_cast<T>(0)) return static_cast<T>(w);
  else if constexpr (sizeof(T) == 4) return __uint_as_float(w);
  else return __longlong_as_double(static_cast<long long>(w));
}
// Compare-and-swap of the element's bits: the old value, written v where it equalled cmp.
template <int Scope, class T>
TAWA_DEVICE T atomic_cas(T* p, T cmp, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomics take 4- or 8-byte elements");
  using W = atomic_word_t<T>;
  return atomic_from_word<T>(atomic_cas_word<Scope>(reinterpret_cast<W*>(p), atomic_to_word(cmp), atomic_to_word(v)));
}
// A 2-byte element's bits, and back.
TAWA_DEVICE unsigned short bits16(f16 x) { return __half_as_ushort(x); }
TAWA_DEVICE unsigned short bits16(bf16 x) { return __bfloat16_as_ushort(x); }
TAWA_DEVICE unsigned short bits16(int16_t x) { return static_cast<unsigned short>(x); }
TAWA_DEVICE f16 from_bits16(unsigned short b, f16) { return __ushort_as_half(b); }
TAWA_DEVICE bf16 from_bits16(unsigned short b, bf16) { return __ushort_as_bfloat16(b); }
TAWA_DEVICE int16_t from_bits16(unsigned short b, int16_t) { return static_cast<int16_t>(b); }
TAWA_DEVICE unsigned short bits16(uint16_t x) { return x; }
TAWA_DEVICE uint16_t from_bits16(unsigned short b, uint16_t) { return b; }
// A 2-byte element: a compare-and-swap loop on the aligned 32-bit word that holds it, the word's
// other half written back as it was.
template <AtomicOp Op, int Scope, class T>
TAWA_DEVICE T atomic16(T* p, T v) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  unsigned int* w = reinterpret_cast<unsigned int*>(a & ~3ull);
  const unsigned int shift = (a & 2u) ? 16u : 0u;
  unsigned int old = *reinterpret_cast<volatile unsigned int*>(w);
  while (true) {
    const T o = from_bits16(static_cast<unsigned short>(old >> shift), T{});
    const unsigned int n = bits16(atomic_combine16<Op>(o, v));
    const unsigned int want = (old & ~(0xffffu << shift)) | (n << shift);
    const unsigned int seen = atomic_cas_word<Scope>(w, old, want);
    if (seen == old) return o;
    old = seen;
  }
}
template <AtomicOp Op, int Scope, class T>
TAWA_DEVICE T atomic(T* p, T v) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomics take 2-, 4- or 8-byte elements");
  if constexpr (sizeof(T) == 2) {
    return atomic16<Op, Scope>(p, v);
  } else if constexpr (Op == AtomicOp::Add && Scope == 1 && (sizeof(T) == 4 || static_cast<T>(0.5) != static_cast<T>(0))) {
    return atomicAdd(p, v);  // red/atom.add: int32, f32, f64
  } else {
    using W = atomic_word_t<T>;
    W* w = reinterpret_cast<W*>(p);
    W old = *reinterpret_cast<volatile W*>(w);
    while (true) {
      const W want = atomic_to_word(atomic_combine<Op>(atomic_from_word<T>(old), v));
      const W seen = atomic_cas_word<Scope>(w, old, want);
      if (seen == old) return atomic_from_word<T>(old);
      old = seen;
    }
  }
}
#else
// The emulator runs one block at a time on one OS thread and switches fibers only inside primitives:
// a plain read-modify-write is atomic there, and a fence orders nothing further.
template <int Scope>
inline void fence_acq_rel() {}
template <int Scope, class T>
inline T atomic_cas(T* p, T cmp, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomics take 4- or 8-byte elements");
  T old = *p;
  if (std::memcmp(&old, &cmp, sizeof(T)) == 0) *p = v;
  return old;
}
template <AtomicOp Op, int Scope, class T>
inline T atomic(T* p, T v) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomics take 2-, 4- or 8-byte elements");
  T old = *p;
  if constexpr (sizeof(T) == 2) *p = atomic_combine16<Op>(old, v);
  else *p = atomic_combine<Op>(old, v);
  return old;
}
#endif
}  // namespace tawa
#undef TAWA_ATOMIC_FN
