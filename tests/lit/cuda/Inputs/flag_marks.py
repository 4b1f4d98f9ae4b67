import triton
import triton.language as tl


# Programs that overwrite the flag that chose their branch. Every thread of a program reads the flag;
# the one that stores it must wait until all have read it, or some would see the new value, take the
# other branch and wait for the rest forever.
@triton.jit
def scale_once(x, out, flags, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    flag = tl.load(flags + pid)
    if flag != 0:
        tl.store(out + offs, tl.load(x + offs) * 2.0)
        tl.store(flags + pid, 0)
    else:
        tl.store(out + offs, tl.load(x + offs))


@triton.jit
def gemm_once(a, b, c, flags, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    flag = tl.load(flags + pid)
    if flag == 0:
        return
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(flags + pid, 0)
