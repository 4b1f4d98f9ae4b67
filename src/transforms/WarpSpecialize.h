// warp-specialize: splits a kernel's main loop into a producer warp group that issues the block
// loads and consumer warp groups that compute, joined by an asynchronous reference (aref).
//   requires: verified, canonicalized tile IR. The main loop is the first top-level tile.for whose
//     body holds tile.desc_load ops (block accesses), or such a loop in a top-level tile loop, or
//     under a top-level guard (a tile.if without results or else branch: each role tests it and
//     runs its part of the branch under it); the loads' operands may depend on the induction
//     variable and on pure address arithmetic, including values carried by the loop. Scalar loads
//     before the kernel's first write (in program order, up to the main loop) count as pure: both
//     roles may read them again (a problem's sizes, an address from an array of pointers).
//   guarantees: the function body becomes [pure prologue] aref.create(s), a wg.region {role =
//     "producer"} and a wg.region {role = "consumer"}, then tile.return. The producer runs a copy of
//     the loop control and of the address arithmetic its loads need (loop-carried addresses too),
//     and puts one iteration's loaded tiles into the arefs at iteration index (k - lb) / step: one
//     aref per group of loads that some op reads together (a GEMM's A and B, read by one MMA, share
//     one; attention's K and V, read by different MMAs, get one each), in the order of their loads.
//     The consumer runs the rest of the loop on the tiles it gets, getting each aref's slot right
//     before the first op that reads it (directly or through a transpose) and releasing it right
//     after the last, and then the epilogue. A block load before the loop whose operands are arguments
//     or pure top-level values (attention's Q) is issued once by the producer, before its loop, and
//     handed over through an aref of its own of depth 1, index 0: the consumer gets it where the
//     load stood and releases it after its last use. Other side effects before the loop, the pure ops
//     computed from them (a bias row scaled before the loop: never ones the producer needs; a
//     located reason then), loads in
//     a persistent kernel's tile loop and everything after the loop (stores) go to the consumer,
//     except later top-level loops that load tiles of the main loop's types (attention's causal
//     diagonal stage; not in persistent or GEMM-cooperative kernels): the producer streams their
//     tiles through the same arefs (their loads grouped alike), every loop then numbering its slots with one counter carried
//     from loop to loop (the producer also copies the pure ops between the loops that it needs).
//     Every op keeps the location of the op it came from. A function without a suitable loop is
//     left unchanged, and `explain` says why.
//   options: depth == 0 chooses D: the spec's num_stages hint (a function attribute), lowered until
//     the rings, the tiles loaded once and the epilogue's stored tiles fit sm_90a's 227 KB of shared
//     memory, else 2; `explain` says which.
//     consumers == 0 chooses 1 or 2 by consumerGroupsFor (below); consumers == 2 (not under a guard: one consumer there) first splits a GEMM-like main loop into two row halves (each with its
//     own A load, accumulator and store; in a persistent kernel, inside the tile loop), one per
//     consumer. A's row offset may be written inside the loop when it does not depend on it (pure
//     scalar ops, no division by a non-constant): it is computed once before the loop; A's rows may
//     instead be gathered through an index tile computed from the block's rows (MoE token ids: each
//     half gathers through its half). A dot without an accumulator whose product reaches a carried
//     tile through elementwise ops (`acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]`) splits with
//     those ops. The epilogue's stores (block stores at any row offset, pointer stores of addresses
//     computed from the block's rows), its row-indexed loads (at any offset: half h at the offset plus
//     h * BM / 2) and a tl.dot after the loop into the result (a peeled K block) are split per half.
//     A's and C's descriptors may be made at the top, in a persistent kernel's tile loop, or (A's)
//     in the loop itself, as block-access makes them for pointer-form kernels; each half descriptor
//     is made next to its original. Pure epilogue ops that use none of the loop's results are
//     computed by both consumers;
//     persistent > 0 first wraps the kernel in a tile loop over min(persistent, grid)
//     programs (grouped by groupM rows when > 0).
//   runs: after canonicalize; before pipeline and lower-aref.
#pragma once

#include "ir/IR.h"
#include "transforms/PassOptions.h"

namespace tawa::transforms {

void warpSpecialize(ir::Module& m, const PassOptions& opt);

// The consumer warp groups for `f`: opt.consumers when given (1 or 2), else chosen: two cooperative
// ones (each half of the rows) when the largest f32 or s32 MMA accumulator of 128 or more rows (a
// multiple of 128) needs more registers per thread than one consumer's setmaxnreg budget leaves (40
// for addresses and descriptors), or when the spec's num_warps hint asks for 8 warps (two warp groups
// of consumers, as Triton runs such a kernel); else one, and always one when a scalar atomic's old
// value is read (it runs once, in the first consumer). `why` says which.
int consumerGroupsFor(const ir::Func& f, const PassOptions& opt, std::string* why = nullptr);
// The first scalar or tile atomic of `f` whose old value (its result) is read, or null.
const ir::Op* atomicWithOldValue(const ir::Func& f);
// The consumer wg.regions of a warp-specialized `f` (0 when it is not specialized).
int consumerRegions(const ir::Func& f);
// The deepest ring of a warp-specialized `f`: its aref.create or nv.smem_alloc depth (0 when none).
int ringDepth(const ir::Func& f);

}  // namespace tawa::transforms
