// block-access: recognizes pointer-arithmetic loads and stores that touch one rectangular block of a
// strided tensor, `base + offs_m[:, None] * s0 + offs_n[None, :] * s1` with masks on the bounds,
// and rewrites them into tile.make_desc + tile.desc_load / tile.desc_store, so that warp-specialize
// (which seeds the producer with tile.desc_load) treats pointer-form kernels like descriptor-form ones.
//   requires: verified, canonicalized tile IR.
//   how: a small symbolic analysis, not op-sequence matching. Every i32 index tile is a polynomial
//     over scalar atoms (kernel arguments, program ids, results of ops it does not expand) and one
//     index variable per tile dimension; a pointer tile is a scalar base plus such a polynomial (in
//     elements); a mask is a conjunction of `poly < 0`. A pointer tile carried by a tile.for whose
//     yield is `addptr(p, step)` (step free of the position and loop-invariant) is `init + t * step`
//     with t the trip index, and such a loop's result (carried on by an outer loop, when the loop's
//     trip count T is a constant) is `init + T * step`; the induction variable of a loop with a
//     constant step is `lb + step*t`;
//     so is a scalar counter the loop advances by a constant or a value from outside it (`init + t *
//     step`: Triton's persistent tutorial keeps its epilogue's tile index so), and so is an index tile
//     the loop advances by a loop-invariant step equal in every lane (vLLM's `offsets_k += BK`).
//     64-bit index arithmetic is analyzed when its leaves are i32 values widened, constants, i64
//     values bounded to 32 bits, or i64 kernel arguments; a start coordinate or a bound (32-bit in
//     the descriptor) never rests on an i64 value not bounded to 32 bits, a stride may (it stays
//     64-bit); a loop whose index is 64-bit is not analyzed. Atoms are value-
//     numbered: a pure op whose operands have the same symbolic values as an earlier atom's op of
//     the same kind is that atom, when one of the two values dominates the other (it then stands
//     for both), so `tile // n` written for the loads and again for the store is one atom.
//   recognized: the address is affine in the position, `C + sum_d i_d * S_d` (S_d the stride of
//     dimension d, non-zero); every mask conjunct is `i_d < R_d` for one d (from `<`, `<=`, `>`, `>=`
//     comparisons of index tiles, combined with `&`); `other` is absent or zero; the start coordinate
//     start_d collects the terms of C that are a provably non-negative multiple of S_d, the rest of C
//     moves into the base. The descriptor is (base + rest, shape_d = start_d + R_d for masked
//     dimensions (the least of them, tile.min, for a dimension bounded more than once), 2^31 - 1
//     otherwise, strides S_d), its block is loaded at (start_d): the same
//     elements, and zero exactly where the mask was false.
//   gathered: a 2-D load in a loop whose rows are `G[:, None] * S0 + ...` for an index tile G the
//     analysis does not expand (MoE tokens) becomes a tile.desc_load whose row operand is G (-1 where
//     the row conjuncts of the mask fail); with G along the columns (SWAP_AB's A^T), the load's
//     transpose is loaded so and permuted back.
//   clamps: `x % M`, `tl.where(x < M, x, _)` and `min(x, M - 1)` on an offset `start + i_d` change
//     only the lanes with i_d >= R (R = M - start, the wrapped or clamped rows). When the access's
//     mask already excludes those lanes, the clamp is dropped. Otherwise, for a load, the descriptor
//     bound of that dimension becomes the clamp's bound (those lanes read zero instead of wrapped
//     data), and the rewrite is done only when a forward walk proves that these lanes only reach
//     stores (or atomics other than cas, such as split-K adds) whose mask excludes the same lanes:
//     through elementwise ops, casts, tile.dot (rows of
//     A and columns of B; never the contracted dimension), reductions along other dimensions,
//     shape ops, and loop-carried values (with a loop-invariant bound), into inner loops too.
//   assumptions (stated, not checked): index arithmetic does not overflow i32; i32 kernel arguments
//     are non-negative (sizes and strides), which with program ids, aranges, non-negative constants
//     and trip indices makes the start coordinates provably non-negative. The proof is a lower-bound
//     analysis (sums, differences with a constant such as tl.cdiv's `(x + d) - 1`, products, quotients
//     and remainders of non-negative values, min, max, select), and it takes the bound `assume_min`
//     that the front end leaves on a value for `tl.assume(x >= c)`, trusted as Triton trusts it.
//     Where the start of a wrapped offset `(start + arange) % M` rests on scalars the analysis cannot
//     bound (a program id remapped by grouped ordering or tl.swizzle2d, which only the launch's grid
//     bounds), those scalars are assumed non-negative and checked: each gets a tile.assume {min = 0}
//     right after its definition, and the rewritten accesses read the checked value (a negative one
//     stops the program: an error on the executor, a trap on the device). `explain` names them.
//   guarantees: each recognized access becomes tile.desc_load / tile.desc_store at the same place;
//     its tile.make_desc is hoisted before the top-level op that contains the access when all its
//     operands are defined there, else placed right before the access; pointer arithmetic left
//     unused is removed, and so are loop-carried pointer tiles that nothing uses any more (also when a
//     nest of loops carries them from one to the other). Accesses
//     not recognized are left unchanged and `explain` says which part of the pattern failed. A
//     function where nothing is recognized comes back unchanged. The result verifies.
//   runs: after canonicalize; before warp-specialize.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void blockAccess(ir::Module& m, const PassOptions& opt);

}  // namespace tawa::transforms
