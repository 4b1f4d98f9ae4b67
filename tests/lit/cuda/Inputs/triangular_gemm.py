# A GEMM over the lower-triangular tiles of C (a SYRK-style launch: program t covers tile (i, j), j <= i,
# with i = floor((sqrt(8t + 1) - 1) / 2) computed from the program id in scalar f32 arithmetic).
# Each tile is scaled by the previous program's entry of S (a masked scalar load). cuda/scalar_math.test.
import triton
import triton.language as tl


@triton.jit
def lower_gemm(A, B, C, S, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    t = tl.program_id(0)
    i = tl.floor((tl.sqrt(8.0 * t.to(tl.float32) + 1.0) - 1.0) / 2.0).to(tl.int32)
    j = t - i * (i + 1) // 2
    rm = i * BM + tl.arange(0, BM)
    rn = j * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    # the previous program's scale, a masked scalar load (the first program has none: 1.0)
    s = tl.load(S + t - 1, mask=t > 0, other=1.0)
    tl.store(C + rm[:, None] * N + rn[None, :], (acc * s).to(tl.float16))
