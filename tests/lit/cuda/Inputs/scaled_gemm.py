import triton
import triton.language as tl


# C = sa[:, None] * sb[None, :] * (A @ B) (+ bias[None, :]): scales per row and per column (SA == BM,
# SB == BN) or per tensor (SA == SB == 1), read as SA x 1 and SB x 1 tiles, the column scales turned
# over with `.T`; the K offsets a 64-bit tile the loop advances; `if bias_ptr:` for an optional bias.
# (The forms vLLM's compressed-tensors scaled_mm is written in.)
@triton.jit
def scaled_gemm(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SA: tl.constexpr, SB: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM).to(tl.int64)
    rn = pid_n * BN + tl.arange(0, BN).to(tl.int64)
    rk = tl.arange(0, BK).to(tl.int64)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        rk += BK
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    sa_offs = tl.arange(0, SA) + (SA > 1) * pid_m * BM
    sa = tl.load(sa_ptr + sa_offs[:, None], mask=(sa_offs < M)[:, None] & (tl.arange(0, 1) < 1)[None, :])
    acc = sa.broadcast_to((BM, 1)) * acc
    sb_offs = tl.arange(0, SB) + (SB > 1) * pid_n * BN
    sb = tl.load(sb_ptr + sb_offs[:, None], mask=(sb_offs < N)[:, None] & (tl.arange(0, 1) < 1)[None, :])
    acc = sb.broadcast_to((BN, 1)).T * acc
    if bias_ptr:
        acc += tl.load(bias_ptr + rn, mask=rn < N).to(tl.float32)[None, :]
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))
