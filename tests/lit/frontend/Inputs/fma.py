# tl.fma rounds once (frontend/fma.test): x * y + z in f32 and f64, and the rounding error of an f32
# product, fma(a, b, -(a * b)), which an unfused multiply-add makes zero.
import triton
import triton.language as tl


@triton.jit
def fma_k(x, y, z, u, v, w, o32, err, o64, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1.0)
    b = tl.load(y + offs, mask=m, other=1.0)
    c = tl.load(z + offs, mask=m, other=1.0)
    tl.store(o32 + offs, tl.fma(a, b, c), mask=m)
    tl.store(err + offs, tl.fma(a, b, -(a * b)), mask=m)
    d = tl.load(u + offs, mask=m, other=1.0)
    tl.store(o64 + offs, tl.fma(d, tl.load(v + offs, mask=m, other=1.0), tl.load(w + offs, mask=m, other=1.0)), mask=m)
