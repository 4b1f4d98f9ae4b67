import triton
import triton.language as tl


# A 4-bit weight GEMM packed as AWQ packs it: word j of a row of W holds columns 8j..8j+7, column
# 8j + i in bits 4 * order[i] of it, order = [0, 4, 1, 5, 2, 6, 3, 7] (made as AWQ makes it: a 4x2 index
# tile reshaped to 8). The words are spread over their eight columns with three tl.interleave's;
# B = (nibble - zero) * scale, the zeros packed the same way, one row of them, the scales per column.
@triton.jit
def packed4_gemm(a_ptr, w_ptr, z_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    order = ((tl.arange(0, 2) * 4)[None, :] + tl.arange(0, 4)[:, None]).reshape(8)
    shifts = tl.reshape(tl.broadcast_to((order * 4)[None, :], (BK * (BN // 8), 8)), (BK, BN))
    rm = pid_m * BM + tl.arange(0, BM)
    rw = pid_n * (BN // 8) + tl.arange(0, BN // 8)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    zw = tl.load(z_ptr + rw)[None, :]
    zw = tl.interleave(zw, zw)
    zw = tl.interleave(zw, zw)
    zw = tl.interleave(zw, zw)
    zeros = (tl.broadcast_to(zw, (BK, BN)) >> shifts) & 0xF
    scale = tl.load(s_ptr + rn)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        wv = tl.load(w_ptr + (k + rk)[:, None] * (N // 8) + rw[None, :])
        wv = tl.interleave(wv, wv)
        wv = tl.interleave(wv, wv)
        wv = tl.interleave(wv, wv)
        b = (((wv >> shifts) & 0xF) - zeros).to(tl.float16) * scale
        acc = tl.dot(x, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
