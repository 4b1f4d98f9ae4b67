// derive-pointers: a tile of pointers (or one pointer: SageAttention's `K_scale_ptr += 1`) that a
// tile.for carries and advances by the same loop-invariant offsets every trip (torchao's blockwise
// fp8 GEMM: `b_s_ptrs += 1`; `scale_ptrs += stride_k`) is
// computed from the trip number instead: init + t * step, t = (iv - lb) / loop step, the offsets
// widened to 64 bits (the address the carried form reaches, each trip's offsets summed without
// overflow). The CUDA backend's consumer warp groups compute a tile of pointers element by element
// from a base pointer and index tiles; a carried tile of pointers has no such form, and a kernel
// loading through one (a load block-access could not make a block load: `(offs_n // BK) * k`)
// fell back to its SIMT form.
//   requires: tile IR after block-access (the carried pointers of the loads it rewrote are gone).
//   guarantees: each tile.for slot whose block argument is a tile of pointers or a pointer, yielded
//     as addptr(argument, s) with s the same every trip (defined before the loop, or computed in the
//     body by pure ops from such values), and whose result nothing after the loop uses, is no longer
//     carried: inside, the argument's uses read addptr(init, splat(i64 t) * i64 s) (a pointer:
//     addptr(init, t * i64 s)), made at the top of the body (s's widening before the loop, or at the
//     top of the body where s divides). Other slots and loops are left as they were; `explain` says which slots were derived
//     and why a carried tile of pointers was not. The result verifies and computes the same addresses.
//   runs: after block-access, before one-shot-loop and warp-specialize.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void derivePointers(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
