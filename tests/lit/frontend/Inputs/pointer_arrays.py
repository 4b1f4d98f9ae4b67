# Kernels that read their buffers' addresses from arrays of pointers (int64), as grouped GEMMs do.
import triton
import triton.language as tl


@triton.jit
def problem(dims, g, BN: tl.constexpr):
    # Problem g's M, N, K (row g of dims) and its number of BN-column tiles.
    m = tl.load(dims + 3 * g)
    n = tl.load(dims + 3 * g + 1)
    return m, n, tl.load(dims + 3 * g + 2), tl.cdiv(n, BN)


@triton.jit
def grouped_gemm(a_ptrs, b_ptrs, c_ptrs, dims, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Program (t, g) computes tile t of problem g: C_g (M x N, f32) = A_g (M x K) @ B_g (K x N), f16
    # row-major operands whose addresses the arrays hold; dims holds each problem's M, N, K.
    t = tl.program_id(0)
    g = tl.program_id(1)
    m, n, k, tiles_n = problem(dims, g, BN)
    if t < tl.cdiv(m, BM) * tiles_n:
        a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
        b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
        c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
        rows = (t // tiles_n) * BM + tl.arange(0, BM)
        cols = (t % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, k, BK):
            ks = k0 + tl.arange(0, BK)
            x = tl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
            y = tl.load(b + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


@triton.jit
def address_arithmetic(ptrs, out, BLOCK: tl.constexpr):
    # Row i of out: the second element of the buffer ptrs[i] points to (an address computed as an
    # integer and made a pointer again) and whether that buffer is 16-byte aligned.
    i = tl.program_id(0)
    base = tl.load(ptrs + i)
    second = (base + 4).to(tl.pointer_type(tl.float32))
    p = base.to(tl.pointer_type(tl.float32))
    aligned = (p.to(tl.int64) % 16) == 0
    offs = tl.arange(0, BLOCK)
    x = tl.load(second + offs)
    tl.store(out + i * (BLOCK + 1) + offs, x)
    tl.store(out + i * (BLOCK + 1) + BLOCK, aligned.to(tl.float32))


@triton.jit
def grouped_gemm_desc(a_ptrs, b_ptrs, c_ptrs, dims, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # grouped_gemm through tensor descriptors made in the kernel, B given as N x K (used transposed):
    # blocks past a problem's edges read zeros and store nothing. The K loop sits under a branch on
    # run-time sizes, which the warp-specialized path does not take.
    t = tl.program_id(0)
    g = tl.program_id(1)
    m, n, k, tiles_n = problem(dims, g, BN)
    if t < tl.cdiv(m, BM) * tiles_n:
        a = tl.make_tensor_descriptor(tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16)), [m, k], [k, 1], [BM, BK])
        b = tl.make_tensor_descriptor(tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16)), [n, k], [k, 1], [BN, BK])
        c = tl.make_tensor_descriptor(tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32)), [m, n], [n, 1], [BM, BN])
        row = (t // tiles_n) * BM
        col = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, k, BK):
            acc = tl.dot(a.load([row, k0]), b.load([col, k0]).T, acc)
        c.store([row, col], acc)
