# A persistent GEMM in pointer form whose offsets are clamped with tl.where (as Triton's
# persistent-matmul tutorial clamps them) and whose epilogue finds its tile again: recomputed from the
# loop's tile index (SAME_COUNTER), or from a counter of its own that starts BEHIND steps behind the
# loop and is advanced by one step before use (BEHIND = 1: the tutorial's tile_id_c, always the loop's
# tile; 2: the previous tile). For tests/lit/ws/persistent_counter.test.
import triton
import triton.language as tl


@triton.jit
def gemm_clamped(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 PROGRAMS: tl.constexpr, SAME_COUNTER: tl.constexpr, BEHIND: tl.constexpr):
    first = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    out_tile = first - BEHIND * PROGRAMS
    for tile in tl.range(first, tiles, PROGRAMS, flatten=True):
        rm = (tile // tiles_n) * BM + tl.arange(0, BM)
        rn = (tile % tiles_n) * BN + tl.arange(0, BN)
        rm = tl.where(rm < M, rm, 0)
        rn = tl.where(rn < N, rn, 0)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=rk[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        out_tile += PROGRAMS
        t = tile if SAME_COUNTER else out_tile
        cm = (t // tiles_n) * BM + tl.arange(0, BM)
        cn = (t % tiles_n) * BN + tl.arange(0, BN)
        tl.store(c_ptr + cm[:, None] * N + cn[None, :], acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))
