import triton
import triton.language as tl


# Weights packed along K as GPTQ packs them, `bits` a kernel argument: row k of B is in word k // per of
# its column (per = 32 // bits values a word), at bit bits * (k % per); B = q * scale per column. The
# words' pointers advance by (BK // per) * N a trip: a step the loop computes with a division.
@triton.jit
def packed_rows(a_ptr, w_ptr, s_ptr, c_ptr, M, N, K, bits, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    per = 32 // bits
    maxq = (1 << bits) - 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + (rk[:, None] // per) * N + rn[None, :]
    shift = (rk % per) * bits
    scale = tl.load(s_ptr + rn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        w = tl.load(w_ptrs)
        b = ((w >> shift[:, None]) & maxq).to(tl.float16) * scale[None, :]
        acc += tl.dot(a, b)
        a_ptrs += BK
        w_ptrs += (BK // per) * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
