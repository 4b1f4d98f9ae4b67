# Block-sparse GEMM: each row block of C sums A @ B over the K blocks its row of `blocks` lists (an
# index table read in the K loop, as block-sparse attention and MoE kernels do). `blocks` is only
# read, so the producer reads it as it runs ahead. block_sparse_marked keeps a done flag in a last
# column of the table and sets it after its loop: the kernel writes the table, so the producer could
# read a changed entry (tawa does not tell the columns apart), and the kernel is not specialized.
import triton
import triton.language as tl


@triton.jit
def block_sparse(a, b, blocks, c, M, N, K, NB, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(NB):
        kb = tl.load(blocks + pm * NB + i)
        ks = kb * BK + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def block_sparse_marked(a, b, blocks, c, M, N, K, NB, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(NB):
        kb = tl.load(blocks + pm * (NB + 1) + i)
        ks = kb * BK + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
    if tl.program_id(1) == 0:
        tl.store(blocks + pm * (NB + 1) + NB, 1)
