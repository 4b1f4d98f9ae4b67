import triton
import triton.language as tl


# A histogram: every program adds its block's counts into shared bins (tile atomic_add with a mask,
# a tile of pointers with repeats), and counts its programs in a scalar (the old value numbers them).
@triton.jit
def histogram(x_ptr, bins_ptr, count_ptr, order_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(bins_ptr + x % NBINS, 1, mask=m)
    old = tl.atomic_add(count_ptr, 1)
    tl.store(order_ptr + pid, old)


# Every atomic kind, tile and scalar, f32 and i32: the returned old values are stored too.
@triton.jit
def every_atomic(f_ptr, i_ptr, v_ptr, w_ptr, old_f, old_i, cas_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + pid * BLOCK + offs, mask=m)
    w = tl.load(w_ptr + pid * BLOCK + offs, mask=m)
    a = tl.atomic_add(f_ptr + offs, v, mask=m)
    b = tl.atomic_max(f_ptr + BLOCK + offs, v, mask=m)
    c = tl.atomic_min(f_ptr + 2 * BLOCK + offs, v, mask=m, sem="relaxed")
    tl.store(old_f + pid * 3 * BLOCK + offs, a + b + c, mask=m)
    d = tl.atomic_and(i_ptr + offs, w, mask=m)
    e = tl.atomic_or(i_ptr + BLOCK + offs, w, mask=m, scope="cta")
    f = tl.atomic_xor(i_ptr + 2 * BLOCK + offs, w, mask=m, sem="release")
    g = tl.atomic_max(i_ptr + 3 * BLOCK + offs, w, mask=m, sem="acquire")
    h = tl.atomic_min(i_ptr + 4 * BLOCK + offs, w, mask=m)
    tl.store(old_i + pid * 3 * BLOCK + offs, d + e + f + g + h, mask=m)
    # A spin-free lock-step: each program swaps its id into a slot and takes the previous one.
    prev = tl.atomic_xchg(cas_ptr, pid)
    tl.atomic_cas(cas_ptr + 1, pid, pid + 100)
    tl.atomic_add(cas_ptr + 2, prev * 0 + 1)
