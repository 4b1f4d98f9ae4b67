// canonicalize: local simplifications that every later pass may assume have run.
//   requires: verified tile IR.
//   guarantees: elementwise ops, splats, casts and comparisons whose operands are all constants are
//     folded into tile.constant (with exactly the executor's per-element semantics, ir/Elementwise.h);
//     x+0, x-0, x*1, x/1 (and 0+x, 1*x) are forwarded; a tile.if on a constant condition is replaced
//     by the taken region; `if c {} else {rest}` (an early return, as the front end writes it) becomes
//     `if !c {rest} else {}` (c xor true), and so does one whose else branch alone holds a loop (the
//     branch with the K loop first: `if e == -1 {store zeros} else {loop}` for MoE's empty experts); a tile.for whose constant trip count is zero is replaced by its initial
//     values, and a value a tile.for carries unchanged (its yield passes the block argument back) is
//     dropped from it (its uses read the initial value); pure ops whose results are unused are removed; a column half (or P-th) of a 2-D tile
//     written as Triton's epilogue subtiling writes it (reshape to M x P x H, permute (0, 2, 1),
//     tl.split) becomes one tile.slice of the tile along axis 1; `acc + tl.dot(a, b)` becomes
//     tl.dot(a, b, acc) when the dot has no accumulator of its own and nothing else uses it (Triton
//     combines them so; the sum is rounded in the MMA's order). An N x 1 tile reshaped or transposed
//     to 1 x N (or back) whose DAG reaches 1-D roots through elementwise ops and loads is computed in
//     the new shape from those roots (`scale_b.T`), and a tile.load of a 1-element tile becomes a
//     scalar load, splat (the copies are made right after the ops they copy; originals nothing else
//     reads go); a one-element arange is its start, a mask and'ed with true is the mask, an integer
//     x * 0 is 0, a shape op of a splat is a splat, and a select of two equal constants (floats bit
//     for bit) is the constant. A tile.if whose regions each hold pure, non-trapping ops and one
//     tile.load of an address computed alike, and yield it, is one load (mask `c ? m1 : m2`, `other`
//     `c ? o1 : o2`, true and zero where absent) after the regions' ops. A 2-D transpose moves toward
//     its sources: T(T(x)) = x, through elementwise ops, broadcasts and tile.dot ((x y + a)^T =
//     y^T x^T + a^T) whose results nothing else uses, and into a tile.for whose result it transposes
//     (the loop carries the transpose). A tile.dot with an f16 or bf16 result is an f32 one (its
//     accumulator cast to f32) cast to that type. Integer division by a constant zero is
//     left alone (the executor reports it where it happens). The result verifies.
//   runs: first, and after any pass that exposes constants.
#pragma once

#include "ir/IR.h"

namespace tawa::transforms {

void canonicalize(ir::Module& m);

}  // namespace tawa::transforms
