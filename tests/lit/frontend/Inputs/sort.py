# tl.sort (tests/lit/frontend/sort.test): rows of a 2-D tile sorted ascending (dim None: the last),
# columns descending, and a 1-D integer tile with repeated values.
import triton
import triton.language as tl


@triton.jit
def sorts(x, y, z, q, qs, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(x + r * C + c)
    tl.store(y + r * C + c, tl.sort(v))
    tl.store(z + r * C + c, tl.sort(v, 0, descending=True))
    tl.store(qs + tl.arange(0, C), tl.load(q + tl.arange(0, C)).sort())
