# K loops nested in a persistent walk over the tiles of several problems: a tile.for over the problems
# around a tile.while over one problem's tiles (Triton's grouped-GEMM tutorial's control flow).
import triton
import triton.language as tl


@triton.jit
def walk_problems(a_ptrs, b_ptrs, c_ptrs, dims, groups, SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, VOLATILE: tl.constexpr = False):
    # Program p computes tiles p, p + SMS, ... of the problems' tiles laid end to end: C_g (f32) =
    # A_g @ B_g, f16 row-major operands at addresses the arrays hold; dims holds each M, N, K
    # (M read as volatile with VOLATILE: no warp group may read it on another's behalf).
    t = tl.program_id(0)
    first = 0
    for g in range(groups):
        m = tl.load(dims + 3 * g, volatile=VOLATILE)
        n = tl.load(dims + 3 * g + 1)
        k = tl.load(dims + 3 * g + 2)
        across = tl.cdiv(n, BN)
        count = tl.cdiv(m, BM) * across
        while t >= first and t < first + count:
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
            rows = ((t - first) // across) * BM + tl.arange(0, BM)
            cols = ((t - first) % across) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, k, BK):
                ks = k0 + tl.arange(0, BK)
                x = tl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
                y = tl.load(b + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
                acc = tl.dot(x, y, acc)
            tl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))
            t += SMS
        first += count


@triton.jit
def walk_strided(a_ptrs, b_ptrs, c_ptrs, dims, strides, groups, SMS: tl.constexpr, BM: tl.constexpr,
                 BN: tl.constexpr, BK: tl.constexpr):
    # The same walk with the tutorial's unmasked blocks (every size a multiple of the block), row
    # strides read from their own array, pointers advanced by the K loop, and an f16 result.
    t = tl.program_id(0)
    first = 0
    for g in range(groups):
        across = tl.cdiv(tl.load(dims + 3 * g + 1), BN)
        count = tl.cdiv(tl.load(dims + 3 * g), BM) * across
        while t >= first and t < first + count:
            k = tl.load(dims + 3 * g + 2)
            lda = tl.load(strides + 3 * g)
            ldb = tl.load(strides + 3 * g + 1)
            ldc = tl.load(strides + 3 * g + 2)
            rows = ((t - first) // across) * BM + tl.arange(0, BM)
            cols = ((t - first) % across) * BN + tl.arange(0, BN)
            ks = tl.arange(0, BK)
            pa = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16)) + rows[:, None] * lda + ks[None, :]
            pb = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16)) + ks[:, None] * ldb + cols[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for _ in range(0, tl.cdiv(k, BK)):
                acc += tl.dot(tl.load(pa), tl.load(pb))
                pa += BK
                pb += BK * ldb
            pc = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16)) + rows[:, None] * ldc + cols[None, :]
            tl.store(pc, acc.to(tl.float16))
            t += SMS
        first += count


@triton.jit
def walk_counted(a_ptrs, b_ptrs, c_ptrs, dims, groups, SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    # walk_problems that also counts, in dims' fourth column, the tiles done: dims is written, so
    # its reads in the loops are not repeated by the producer, and the kernel is not specialized.
    t = tl.program_id(0)
    first = 0
    for g in range(groups):
        m = tl.load(dims + 4 * g)
        n = tl.load(dims + 4 * g + 1)
        across = tl.cdiv(n, BN)
        count = tl.cdiv(m, BM) * across
        while t >= first and t < first + count:
            k = tl.load(dims + 4 * g + 2)
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
            rows = ((t - first) // across) * BM + tl.arange(0, BM)
            cols = ((t - first) % across) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, k, BK):
                ks = k0 + tl.arange(0, BK)
                x = tl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
                y = tl.load(b + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
                acc = tl.dot(x, y, acc)
            tl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))
            tl.atomic_add(dims + 4 * g + 3, 1)
            t += SMS
        first += count


@triton.jit
def persistent_skip(a, b, c, skip, M, N, K, SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A persistent GEMM that leaves alone the tiles whose flag in skip is set: the K loop under a
    # guard inside the tile loop (the guard passes the aref count on in both branches).
    across = tl.cdiv(N, BN)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM) * across, SMS):
        if tl.load(skip + tile) == 0:
            rows = (tile // across) * BM + tl.arange(0, BM)
            cols = (tile % across) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, K, BK):
                ks = k0 + tl.arange(0, BK)
                x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
                y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
                acc = tl.dot(x, y, acc)
            tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def walk_descriptors(a_ptrs, b_ptrs, c_ptrs, dims, done, groups, SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    # The walk through tensor descriptors made in the kernel once per problem, under the test that
    # the program has a tile in it (a guard whose else branch passes the tile index on); B is N x K,
    # used transposed; C is f16. done[g] counts problem g's tiles (an atomic before the K loop: with
    # two cooperative consumers, one of them makes it).
    t = tl.program_id(0)
    first = 0
    for g in range(groups):
        m = tl.load(dims + 3 * g)
        n = tl.load(dims + 3 * g + 1)
        k = tl.load(dims + 3 * g + 2)
        across = tl.cdiv(n, BN)
        count = tl.cdiv(m, BM) * across
        if t >= first and t < first + count:
            da = tl.make_tensor_descriptor(tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16)), [m, k], [k, 1], [BM, BK])
            db = tl.make_tensor_descriptor(tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16)), [n, k], [k, 1], [BN, BK])
            dc = tl.make_tensor_descriptor(tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16)), [m, n], [n, 1], [BM, BN])
            while t >= first and t < first + count:
                tl.atomic_add(done + g, 1)
                row = ((t - first) // across) * BM
                col = ((t - first) % across) * BN
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for k0 in range(0, k, BK):
                    acc = tl.dot(da.load([row, k0]), db.load([col, k0]).T, acc)
                dc.store([row, col], acc.to(tl.float16))
                t += SMS
        first += count
