# Kernels whose K loop needs values read from memory, or sits under the program's own test.
import triton
import triton.language as tl


@triton.jit
def block_product(a, b, m, n, k, pid_m, pid_n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Block (pid_m, pid_n) of A (M x K) @ B (K x N), f16 row-major, accumulated in f32.
    a_desc = tl.make_tensor_descriptor(a, [m, k], [k, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b, [k, n], [n, 1], [BK, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k0]), b_desc.load([k0, pid_n * BN]), acc)
    return acc


@triton.jit
def sized_gemm(a, b, c, sizes, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C (M x N, f32) = A (M x K) @ B (K x N) with M, N and K read from `sizes`; a program whose rows
    # start past M does nothing.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    m = tl.load(sizes)
    n = tl.load(sizes + 1)
    k = tl.load(sizes + 2)
    if pid_m * BM < m:
        acc = block_product(a, b, m, n, k, pid_m, pid_n, BM, BN, BK)
        c_desc = tl.make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN])
        c_desc.store([pid_m * BM, pid_n * BN], acc)


@triton.jit
def written_first(a, b, c, sizes, seen, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # The same with a store before the sizes are read: a read after a write, repeated by the producer
    # only because the kernel writes nothing through sizes.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tl.store(seen + pid_m, 1)
    m = tl.load(sizes)
    n = tl.load(sizes + 1)
    k = tl.load(sizes + 2)
    acc = block_product(a, b, m, n, k, pid_m, pid_n, BM, BN, BK)
    c_desc = tl.make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN])
    c_desc.store([pid_m * BM, pid_n * BN], acc)


@triton.jit
def written_sizes(a, b, c, sizes, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # The same with the store into the sizes' own buffer (past the three sizes): a read after a write
    # through the argument it reads is not repeated.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tl.store(sizes + 3 + pid_m, 1)
    m = tl.load(sizes)
    n = tl.load(sizes + 1)
    k = tl.load(sizes + 2)
    acc = block_product(a, b, m, n, k, pid_m, pid_n, BM, BN, BK)
    c_desc = tl.make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN])
    c_desc.store([pid_m * BM, pid_n * BN], acc)


@triton.jit
def guard_with_else(a, b, c, sizes, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A test with an else branch (zeros stored where rows start past M): not a guard.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    m = tl.load(sizes)
    n = tl.load(sizes + 1)
    k = tl.load(sizes + 2)
    c_desc = tl.make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN])
    if pid_m * BM < m:
        c_desc.store([pid_m * BM, pid_n * BN], block_product(a, b, m, n, k, pid_m, pid_n, BM, BN, BK))
    else:
        c_desc.store([pid_m * BM, pid_n * BN], tl.zeros((BM, BN), dtype=tl.float32))
