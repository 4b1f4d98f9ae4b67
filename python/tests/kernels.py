"""Kernels the Python tests launch, written for tawa (no Triton import)."""
import tawa
import tawa.language as tl


@tawa.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@tawa.jit(do_not_specialize=["n"])
def scale(x, out, n, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) * alpha, mask=m)


@tawa.jit
def softmax(out, inp, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(inp + row * in_stride + cols, mask=m, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out + row * out_stride + cols, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=m)


@tawa.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ka = k * BK + rk
        x = tl.load(a + rm[:, None] * sam + ka[None, :] * sak, mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        y = tl.load(b + ka[:, None] * sbk + rn[None, :] * sbn, mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@tawa.jit
def pick(x, out, n, BIAS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m)
    if BIAS is not None:
        v = v + BIAS
    tl.store(out + i, v, mask=m)


@tawa.jit
def out_of_bounds(x, y):
    i = tl.arange(0, 64)
    tl.store(y + i, tl.load(x + i))


@tawa.jit
def mix32(x, out, n, salt, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    h = (tl.load(x + i, mask=m) ^ salt) * 0x85EBCA6B
    h = h ^ (h >> 13)
    tl.store(out + i, h % 1000003, mask=m)


@tawa.jit
def scale_each(ptrs, sizes, factor, BLOCK: tl.constexpr):
    # Multiplies array g (at the address ptrs[g], sizes[g] elements) by factor, in place.
    g = tl.program_id(0)
    x_ptr = tl.load(ptrs + g).to(tl.pointer_type(tl.float32))
    n = tl.load(sizes + g)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * factor, mask=offs < n)
